// caf_savina_philosopher: savina_philosopher on CAF 0.17. An arbitrator holds the forks; a hungry
// philosopher asks it for its two, eats if both are free or is denied and asks again.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/philosopher.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_philosopher {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Start&) {
    return f(caf::meta::type_name("Start"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Hungry& x) {
    return f(caf::meta::type_name("Hungry"), x.id);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Done& x) {
    return f(caf::meta::type_name("Done"), x.id);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Exit& x) {
    return f(caf::meta::type_name("Exit"), x.id);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Eat&) {
    return f(caf::meta::type_name("Eat"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Denied&) {
    return f(caf::meta::type_name("Denied"));
}

}  // namespace labctl::kernels::savina_philosopher

namespace labctl::kernels::caf_savina_philosopher {
namespace {

using savina_philosopher::Denied;
using savina_philosopher::Diner;
using savina_philosopher::Done;
using savina_philosopher::Eat;
using savina_philosopher::Exit;
using savina_philosopher::Forks;
using savina_philosopher::Hungry;
using savina_philosopher::Start;

class ArbitratorActor final : public caf::event_based_actor {
public:
    ArbitratorActor(caf::actor_config& config, caf_support::CafRun& run, Forks& forks,
                    const std::vector<caf::actor>& philosophers, rt::Completion<bool>& done)
        : caf::event_based_actor(config), forks_(forks), philosophers_(philosophers), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Hungry& hungry) {
                if (forks_.hungry(hungry.id)) send(philosophers_[hungry.id], Eat{});
                else send(philosophers_[hungry.id], Denied{});
            },
            [this](const Done& done) { forks_.done(done.id); },
            [this](const Exit&) {
                if (!forks_.exit()) return;
                done_.set(true);
                quit();  // as Savina's arbitrator, once every philosopher has exited
            },
        };
    }

private:
    Forks& forks_;
    // The kernel's handles, all written before the first Start is sent: read only after a Hungry.
    const std::vector<caf::actor>& philosophers_;
    rt::Completion<bool>& done_;
};

class PhilosopherActor final : public caf::event_based_actor {
public:
    PhilosopherActor(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t id, Diner& diner,
                     caf::actor arbitrator)
        : caf::event_based_actor(config), id_(id), diner_(diner), arbitrator_(std::move(arbitrator)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Start&) {
                diner_.start();
                send(arbitrator_, Hungry{id_});
            },
            [this](const Denied&) {
                diner_.denied();
                send(arbitrator_, Hungry{id_});
            },
            [this](const Eat&) {
                const bool again = diner_.eat();
                send(arbitrator_, Done{id_});
                if (again) {
                    send(this, Start{});
                    return;
                }
                send(arbitrator_, Exit{id_});
                quit();  // as Savina's philosopher, after its last round
            },
        };
    }

    void on_exit() override { arbitrator_ = nullptr; }

private:
    const std::uint32_t id_;
    Diner& diner_;
    caf::actor arbitrator_;
};

Result run(const Params& params) {
    const auto n = std::uint32_t(params.integer("philosophers"));
    const auto rounds = std::uint64_t(params.integer("rounds"));

    rt::Completion<bool> done;
    Forks forks(n);
    std::vector<Diner> diners(n, Diner(rounds));
    std::vector<caf::actor> philosophers;  // outlives the actor system, as the arbitrator reads it
    philosophers.reserve(n);
    caf_support::CafRun caf(params, done);

    // As Savina's runIteration: the arbitrator and the philosophers spawned inside the phase (the
    // actor system exists before it), each philosopher sent Start, until the arbitrator has every
    // philosopher's exit.
    caf_support::CafPhase phase(caf);
    const caf::actor arbitrator = caf.system().spawn<ArbitratorActor>(std::ref(caf), std::ref(forks),
                                                                      std::cref(philosophers), std::ref(done));
    for (std::uint32_t i = 0; i < n; ++i)
        philosophers.push_back(
            caf.system().spawn<PhilosopherActor>(std::ref(caf), i, std::ref(diners[i]), arbitrator));
    // The handles are all written by now, and these sends order those writes before the arbitrator
    // reads them (on a Hungry, which a Start comes before).
    for (const caf::actor& philosopher : philosophers) caf::anon_send(philosopher, Start{});
    caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    // Every philosopher's tally is written before its Exit, whose handling precedes the completion.
    savina_philosopher::report(result, forks, diners, rounds);
    caf.stop();
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_philosopher",
    .summary = "savina_philosopher on CAF 0.17: `philosophers` philosophers each eat `rounds` times, "
               "asking an arbitrator for their forks and retrying when denied",
    .description =
        "As savina_philosopher (Savina's 11, Dining Philosophers), on CAF 0.17: the kernel spawns "
        "the arbitrator and `philosophers` philosophers and sends each philosopher Start; a "
        "started or denied philosopher sends the arbitrator Hungry, which answers Eat, taking both "
        "forks, if both are free, else Denied; a philosopher that ate sends Done, then Start to "
        "itself until it has eaten `rounds` times, when it sends the arbitrator Exit and quits; "
        "the arbitrator quits on the last Exit. The arbitrator's forks and checks are ours, in one "
        "class both share. The phase runs from spawning the arbitrator to its last Exit (the "
        "actor system is started before it). Differences from Savina as savina_philosopher's, and: "
        "the arbitrator answers a philosopher by its index in the kernel's list of handles "
        "(Savina's Hungry carries the philosopher's ActorRef).",
    .sources = {{"savina", "11. Dining Philosophers (philosopher)"}},
    .verifies = "every philosopher ate exactly `rounds` times, as the arbitrator granted; no fork was "
                "granted while held or released by another than its holder, none is held at the end; "
                "every denial reached its philosopher",
    .params = schema(savina_philosopher::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {{.name = "denials"}},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_philosopher
