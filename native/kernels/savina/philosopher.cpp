// savina_philosopher: Savina's Dining Philosophers. An arbitrator holds the forks; a hungry
// philosopher asks it for its two, eats if both are free or is denied and asks again. Measures
// a central agent under contention, with retries whose number the schedule decides.
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "philosopher.hpp"

namespace labctl::kernels::savina_philosopher {
namespace {

class Philosopher;

class Arbitrator final : public rt::Agent {
public:
    Arbitrator(Forks& forks, const std::vector<Philosopher*>& all, rt::Completion<bool>& done)
        : forks_(forks), all_(all), done_(done) {
        subscribe<&Arbitrator::on_hungry>();
        subscribe<&Arbitrator::on_done>();
        subscribe<&Arbitrator::on_exit>();
    }

private:
    void on_hungry(const Hungry& hungry);
    void on_done(const Done& done) { forks_.done(done.id); }
    void on_exit(const Exit&) {
        if (forks_.exit()) done_.set(true);
    }

    Forks& forks_;
    const std::vector<Philosopher*>& all_;
    rt::Completion<bool>& done_;
};

class Philosopher final : public rt::Agent {
public:
    Philosopher(std::uint32_t id, Diner& diner, Arbitrator& arbitrator)
        : id_(id), diner_(diner), arbitrator_(arbitrator) {
        subscribe<&Philosopher::on_start>();
        subscribe<&Philosopher::on_eat>();
        subscribe<&Philosopher::on_denied>();
    }

private:
    void on_start(const Start&) {
        diner_.start();
        rt::send<Hungry>(arbitrator_, id_);
    }

    void on_denied(const Denied&) {
        diner_.denied();
        rt::send<Hungry>(arbitrator_, id_);
    }

    void on_eat(const Eat&) {
        const bool again = diner_.eat();
        rt::send<Done>(arbitrator_, id_);
        if (again) rt::send<Start>(*this);
        else rt::send<Exit>(arbitrator_, id_);
    }

    const std::uint32_t id_;
    Diner& diner_;  // read after the run: written before the philosopher's exit, whose handling ends the phase
    Arbitrator& arbitrator_;
};

void Arbitrator::on_hungry(const Hungry& hungry) {
    if (forks_.hungry(hungry.id)) rt::send<Eat>(*all_[hungry.id]);
    else rt::send<Denied>(*all_[hungry.id]);
}

Result run(const Params& params) {
    const auto n = std::uint32_t(params.integer("philosophers"));
    const auto rounds = std::uint64_t(params.integer("rounds"));

    Forks forks(n);  // read after the run: the last exit sets the kernel's completion
    std::vector<Diner> diners(n, Diner(rounds));
    std::vector<Philosopher*> all(n, nullptr);
    MeasuredRun<bool> run(params);
    Result result;

    // The phase covers what Savina's clock does but the actor system's start and end: the
    // arbitrator and the philosophers created and started, each told to start, every round,
    // until the arbitrator has every philosopher's exit.
    run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
                auto& arbitrator = coop.make_agent_with_binder<Arbitrator>(dispatchers.binder(0), forks, all, run.done());
                for (std::uint32_t i = 0; i < n; ++i)
                    all[i] = &coop.make_agent_with_binder<Philosopher>(dispatchers.binder(i + 1), i, diners[i],
                                                                       arbitrator);
            });
            for (Philosopher* philosopher : all) rt::send<Start>(*philosopher);
        },
        [&](bool) { report(result, forks, diners, rounds); });
    return result;
}

const Registration registration(Kernel{
    .name = "savina_philosopher",
    .summary = "`philosophers` philosophers each eat `rounds` times, asking an arbitrator for their "
               "forks and retrying when denied: a central agent under contention",
    .description =
        "Savina's benchmark 11, Dining Philosophers (a concurrency benchmark). An arbitrator agent "
        "holds the forks, `philosophers` philosopher agents sit around the table, philosopher i "
        "between forks i and (i + 1) % philosophers. Each is sent a start message; a started "
        "philosopher sends the arbitrator a hungry message; the arbitrator answers eat, taking "
        "both forks, if both are free, or denied, and a denied philosopher asks again. A "
        "philosopher that ate releases its forks (a done message) and starts again by a message "
        "to itself, until it has eaten `rounds` times, when it tells the arbitrator it exits. "
        "4*philosophers*rounds + philosophers + 2*denials messages: the denials depend on the "
        "schedule, with no upper bound (a philosopher is denied again for as long as a neighbour's "
        "done waits; one philosopher is never denied), and are reported as the metric denials, not "
        "in the answer, which is the same on every schedule (Savina's printed "
        "retry count is another number: after every meal a philosopher adds its running count "
        "of denials, never reset, to one AtomicLong all share, so a denial counts once per "
        "later meal, and every meal is an atomic add on a shared word, which ours do not do). The phase covers creating and starting the arbitrator and the philosophers, "
        "every round, until the arbitrator has every philosopher's exit. Differences from Savina: "
        "its clock also covers creating and shutting down the actor system (ours exists before "
        "the phase and stops after it); the arbitrator records which philosopher holds each fork "
        "rather than whether it is taken, and philosophers are named by index; Savina's number of "
        "channels (C), which its Akka version ignores, is not a parameter.",
    .sources = {{"savina", "11. Dining Philosophers (philosopher)"}},
    .verifies = "every philosopher ate exactly `rounds` times, as the arbitrator granted; no fork was "
                "granted while held or released by another than its holder, none is held at the end; "
                "every denial reached its philosopher",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {{.name = "denials"}},
    .check = [](const Params& params) {
        const auto n = params.integer("philosophers");
        check_thread_per_agent("savina_philosopher", params, std::uint64_t(n) + 1,
                               "philosophers=" + std::to_string(n));
    },
    .run = run,
    .expect = expect,  // its work: the fewest messages, without denials
});

}  // namespace
}  // namespace labctl::kernels::savina_philosopher
