// caf_savina_threadring: savina_threadring on CAF 0.17, Savina's benchmark 5, Thread Ring: a ping
// counted down around a ring of N actors, then an exit token once around it.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/threadring.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_threadring {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Data<caf::actor>& x) {
    return f(caf::meta::type_name("Data"), x.next);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Ping& x) {
    return f(caf::meta::type_name("Ping"), x.pings_left);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Exit& x) {
    return f(caf::meta::type_name("Exit"), x.exits_left);
}

}  // namespace labctl::kernels::savina_threadring

namespace labctl::kernels::caf_savina_threadring {
namespace {

using savina_threadring::Ping;
using savina_threadring::Exit;
using savina_threadring::Counts;
using savina_threadring::Outcome;
using savina_threadring::Ring;

using Data = savina_threadring::Data<caf::actor>;

class Member final : public caf::event_based_actor {
public:
    Member(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t actors, rt::Completion<bool>& done)
        : caf::event_based_actor(config), actors_(actors), done_(done) {
        run.watch(*this);
    }
    // Read after the run: each member's last message handled alive is its Exit, whose chain of
    // Exits ends in the dead letter that sets done, so every write here happened before.
    const Counts& counts() const noexcept { return counts_; }

    caf::behavior make_behavior() override {
        return {
            [this](const Data& data) {
                ++counts_.data;
                next_ = data.next;
            },
            [this](const Ping& ping) {
                ++counts_.pings;
                if (ping.pings_left > 0) {
                    send(next(), Ping{ping.pings_left - 1});
                } else {
                    ++counts_.last_ping;
                    send(next(), Exit{actors_});
                }
            },
            // Savina's actor quits on its Exit; the Exit(0) that comes back to the first to have
            // exited is Savina's dead letter, and the end of the run here.
            [this](const Exit& exit) {
                if (exited_) {
                    ++counts_.dead_letters;
                    done_.set(true);
                    return;
                }
                exited_ = true;
                ++counts_.exits;
                if (exit.exits_left > 0) send(next(), Exit{exit.exits_left - 1});
            },
        };
    }

    // The ring's handles form a cycle: let go of them, or no member is ever freed.
    void on_exit() override { next_ = nullptr; }

private:
    const caf::actor& next() const {
        if (!next_) throw std::logic_error("caf_savina_threadring: a member was pinged before its Data");
        return next_;
    }

    const std::uint64_t actors_;
    rt::Completion<bool>& done_;
    caf::actor next_;
    bool exited_ = false;
    Counts counts_;
};

Result run(const Params& params) {
    const Ring ring = savina_threadring::ring_of(params);

    rt::Completion<bool> done;
    caf_support::CafRun caf(params, done);
    caf.reserve(ring.actors);

    // The phase covers the members spawned, each sent its next member's handle (Data), the Ping,
    // the Exits, until the last Exit has come back to the first member to have exited.
    caf_support::CafPhase phase(caf);
    std::vector<caf::actor> handles;
    std::vector<Member*> members;
    handles.reserve(ring.actors);
    members.reserve(ring.actors);
    for (std::uint64_t i = 0; i < ring.actors; ++i) {
        handles.push_back(caf.system().spawn<Member>(std::ref(caf), ring.actors, std::ref(done)));
        members.push_back(&caf.keep<Member>(handles.back()));
    }
    for (std::uint64_t i = 0; i < ring.actors; ++i) caf::anon_send(handles[i], Data{handles[(i + 1) % ring.actors]});
    caf::anon_send(handles[0], Ping{ring.pings});
    caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    const Outcome outcome =
        savina_threadring::collect(ring, [&members](std::uint64_t i) { return members[i]->counts(); });
    caf.stop();

    savina_threadring::report(result, outcome, ring);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_threadring",
    .summary = "savina_threadring on CAF 0.17: a ping counted down from `pings` around a ring of `actors` actors, then an exit token once around",
    .description =
        "As savina_threadring, on CAF 0.17, as Savina's CAF port (caf_05_threadring) has it: the "
        "kernel's thread (the port's: a starter actor) spawns the members, anon_sends each a Data with its next member's handle, "
        "then Ping(R) to member 0; Ping(p) goes on as Ping(p-1) while p > 0, Ping(0) starts Exit(N), "
        "and each member handles one Exit, passing on Exit(k-1) while k > 0; Exit(0) comes back to "
        "the first to have exited, counted there as the dead letter that ends the run. 2N+R+2 "
        "messages. The phase covers spawning the members and every message; the actor system is "
        "started before it and shut down after it (Savina's port makes and destroys it inside its "
        "clock), and the members are told to exit after it. threads and policy set CAF's scheduler.",
    .sources = {{"savina", "5. Thread Ring (threadring)"}},
    .verifies = "pings+1 Pings, Ping(0) at member pings % actors, every member one Data and one Exit, and "
                "the one dead letter where the arithmetic puts it; each member's counts as predicted",
    .params = schema(savina_threadring::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_threadring
