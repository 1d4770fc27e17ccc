// savina_threadring: Savina's benchmark 5, Thread Ring: a ping counted down around a ring of N
// agents, then an exit token once around it.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "threadring.hpp"

namespace labctl::kernels::savina_threadring {
namespace {

class Member;

using Data = savina_threadring::Data<Member*>;

class Member final : public rt::Agent {
public:
    Member(std::uint64_t actors, rt::Completion<bool>& done) : actors_(actors), done_(done) {
        subscribe<&Member::on_data>();
        subscribe<&Member::on_ping>();
        subscribe<&Member::on_exit>();
    }
    // Read after the run: each member's last message handled alive is its Exit, whose chain of
    // Exits ends in the dead letter that sets done, so every write here happened before.
    const Counts& counts() const noexcept { return counts_; }

private:
    void on_data(const Data& data) {
        ++counts_.data;
        next_ = data.next;
    }

    void on_ping(const Ping& ping) {
        ++counts_.pings;
        if (ping.pings_left > 0) {
            rt::send<Ping>(next(), ping.pings_left - 1);
        } else {
            ++counts_.last_ping;
            rt::send<Exit>(next(), actors_);
        }
    }

    // Savina's actor exits on its Exit; the Exit(0) that comes back to the first to have exited
    // is Savina's dead letter, and the end of the run here.
    void on_exit(const Exit& exit) {
        if (exited_) {
            ++counts_.dead_letters;
            done_.set(true);
            return;
        }
        exited_ = true;
        ++counts_.exits;
        if (exit.exits_left > 0) rt::send<Exit>(next(), exit.exits_left - 1);
    }

    Member& next() const {
        if (next_ == nullptr) throw std::logic_error("savina_threadring: a member was pinged before its Data");
        return *next_;
    }

    const std::uint64_t actors_;
    rt::Completion<bool>& done_;
    Member* next_ = nullptr;
    bool exited_ = false;
    Counts counts_;
};

Result run(const Params& params) {
    const Ring ring = ring_of(params);

    std::vector<Member*> members;
    MeasuredRun<bool> run(params);
    Result result;
    Outcome outcome;

    // The phase covers what Savina's runIteration does once the actor system exists: the members
    // made and started, each sent its next member's handle (Data), the Ping, the Exits, until
    // the last Exit has come back to the first member to have exited.
    run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            members.reserve(ring.actors);
            env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
                for (std::uint64_t i = 0; i < ring.actors; ++i)
                    members.push_back(&coop.make_agent_with_binder<Member>(dispatchers.binder(unsigned(i)),
                                                                           ring.actors, run.done()));
            });
            for (std::uint64_t i = 0; i < ring.actors; ++i) rt::send<Data>(*members[i], members[(i + 1) % ring.actors]);
            rt::send<Ping>(*members[0], ring.pings);
        },
        [&](bool) { outcome = collect(ring, [&members](std::uint64_t i) { return members[i]->counts(); }); });

    report(result, outcome, ring);
    return result;
}

void check(const Params& params) {
    const auto actors = params.integer("actors");
    check_thread_per_agent("savina_threadring", params, std::uint64_t(actors), "actors=" + std::to_string(actors));
}

const Registration registration(Kernel{
    .name = "savina_threadring",
    .summary = "Savina's Thread Ring: a ping counted down from `pings` around a ring of `actors` agents, then an exit token once around",
    .description =
        "Savina's benchmark 5, Thread Ring (threadring), at its defaults N = 100 actors (`actors`) and "
        "R = 100,000 (`pings`). The kernel's thread sends each member a Data message with its next "
        "member's handle, then Ping(R) to member 0; a member receiving Ping(p) sends Ping(p-1) to "
        "its next while p > 0, and at Ping(0) sends Exit(N) instead; a member receiving Exit(k) "
        "exits and sends Exit(k-1) on while k > 0. Exit(N)..Exit(1) reach every member once and "
        "Exit(0) comes back to the first to have exited: Savina's Akka drops it as a dead letter, "
        "we count it there and end the run. 2N+R+2 messages: N Data, R+1 Ping, N Exit and the dead "
        "letter. Unlike thread_ring (Theron's: a hop countdown, agents linked before the phase, "
        "an end report to a collector on its own thread), the phase covers the members' creation "
        "and start, the Data that link them, the pings and the exit token, as Savina's clock "
        "does. Differences from Savina: the environment (Savina's actor system) and its threads "
        "exist before the phase and are stopped after it, where Savina's runIteration creates the "
        "actor system and awaits its termination inside its clock; Savina's clock stops when the "
        "last member exits (its latch), ours one hop later, when the dead letter is handled; a "
        "member that has exited "
        "stays registered until the environment stops, after the phase; the countdown is 64-bit "
        "(Savina's an Int); Savina reports its statistics over 12 iterations in one JVM, where "
        "each run here is one sample.",
    .sources = {{"savina", "5. Thread Ring (threadring)"}},
    .verifies = "pings+1 Pings, Ping(0) at member pings % actors, every member one Data and one Exit, and "
                "the one dead letter where the arithmetic puts it; each member's counts as predicted",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_threadring
