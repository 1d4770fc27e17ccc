// caf_savina_cigsmok: savina_cigsmok on CAF 0.17. An arbiter picks a smoker at random each
// round; the smoker acknowledges at once, then smokes (a spell of work), and the arbiter's next
// round starts on the acknowledgement.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/cigsmok.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_cigsmok {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Start&) {
    return f(caf::meta::type_name("Start"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StartSmoking& x) {
    return f(caf::meta::type_name("StartSmoking"), x.work);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StartedSmoking&) {
    return f(caf::meta::type_name("StartedSmoking"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Exit&) {
    return f(caf::meta::type_name("Exit"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Tally& x) {
    return f(caf::meta::type_name("Tally"), x.smoker, x.smokes, x.exits, x.work_units, x.work_sum);
}

}  // namespace labctl::kernels::savina_cigsmok

namespace labctl::kernels::caf_savina_cigsmok {
namespace {

using savina_cigsmok::Arbiter;
using savina_cigsmok::Exit;
using savina_cigsmok::Pick;
using savina_cigsmok::Setup;
using savina_cigsmok::Start;
using savina_cigsmok::StartedSmoking;
using savina_cigsmok::StartSmoking;
using savina_cigsmok::Tally;

class SmokerActor final : public caf::event_based_actor {
public:
    SmokerActor(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t index, caf::actor arbiter)
        : caf::event_based_actor(config), smoker_(index), arbiter_(std::move(arbiter)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const StartSmoking& start) {
                send(arbiter_, StartedSmoking{});  // the ingredients are off the table
                smoker_.smoke(start);
            },
            [this](const Exit&) {
                send(arbiter_, smoker_.tally());
                quit();
            },
        };
    }

    // The arbiter and its smokers hold handles to each other: let go, or none is ever freed.
    void on_exit() override { arbiter_ = nullptr; }

private:
    savina_cigsmok::Smoker smoker_;
    caf::actor arbiter_;
};

class ArbiterActor final : public caf::event_based_actor {
public:
    ArbiterActor(caf::actor_config& config, caf_support::CafRun& run, const Setup& setup, rt::Completion<bool>& done)
        : caf::event_based_actor(config), run_(run), smokers_count_(setup.smokers), arbiter_(setup), done_(done) {
        run.watch(*this);
    }

    // Read after the run: the last tally sets the kernel's completion.
    const Arbiter& arbiter() const noexcept { return arbiter_; }

    caf::behavior make_behavior() override {
        // As Savina's arbiter, it spawns the smokers.
        smokers_.reserve(smokers_count_);
        for (std::uint32_t i = 0; i < smokers_count_; ++i)
            smokers_.push_back(spawn<SmokerActor>(std::ref(run_), i, caf::actor(this)));
        return {
            [this](const Start&) { notify(arbiter_.start()); },
            [this](const StartedSmoking&) {
                Pick pick{};
                if (!arbiter_.started(pick)) notify(pick);
                else
                    for (const caf::actor& smoker : smokers_) send(smoker, Exit{});
            },
            [this](const Tally& tally) {
                if (arbiter_.tally(tally)) done_.set(true);
            },
        };
    }

    void on_exit() override { smokers_.clear(); }

private:
    void notify(const Pick& pick) { send(smokers_[pick.smoker], StartSmoking{pick.work}); }

    caf_support::CafRun& run_;
    const std::uint32_t smokers_count_;
    Arbiter arbiter_;
    rt::Completion<bool>& done_;
    std::vector<caf::actor> smokers_;
};

Result run(const Params& params) {
    const Setup s = savina_cigsmok::setup(params);

    rt::Completion<bool> done;
    caf_support::CafRun caf(params, done);

    // As Savina's runIteration: the actors are spawned inside the phase (the actor system exists
    // before it), until the arbiter has every smoker's tally.
    caf_support::CafPhase phase(caf);
    const caf::actor handle = caf.system().spawn<ArbiterActor>(std::ref(caf), std::cref(s), std::ref(done));
    ArbiterActor& arbiter = caf.keep<ArbiterActor>(handle);
    caf::anon_send(handle, Start{});
    caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    savina_cigsmok::report(result, arbiter.arbiter(), s);
    caf.stop();
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_cigsmok",
    .summary = "savina_cigsmok on CAF 0.17: an arbiter picks one of `smokers` smokers at random for "
               "each of `rounds` rounds; the smoker acknowledges, then works",
    .description =
        "As savina_cigsmok (Savina's 13, Cigarette Smokers), on CAF 0.17: the kernel spawns the "
        "arbiter, which spawns `smokers` smokers; on Start the arbiter draws a smoker and a spell "
        "of work from Savina's PseudoRandom (the same draws as ours) and sends it StartSmoking; "
        "the smoker sends StartedSmoking back at once, then works; each StartedSmoking starts "
        "the next round, until `rounds` rounds; then the arbiter sends every smoker Exit, and "
        "each answers with its tally and quits. The phase runs from spawning the arbiter to its "
        "having every tally (the actor system is started before it). Differences from Savina "
        "as savina_cigsmok's (the spell of work, the tallies), and: the arbiter spawns the "
        "smokers in its make_behavior (Savina's in its constructor).",
    .sources = {{"savina", "13. Cigarette Smokers (cigsmok)"}},
    .verifies = "every round ran, each smoker smoked as often as the seeded picks say, the work "
                "done and the messages of each kind are as the picks predict",
    .params = schema(savina_cigsmok::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_cigsmok
