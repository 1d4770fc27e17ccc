// caf_savina_fjcreate: savina_fjcreate on CAF 0.17. The kernel's own thread spawns `workers`
// actors one after another and sends each one small float job; each reports to a sink and quits.
#include <cstdint>
#include <string>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/fjcreate.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_fjcreate {

// CAF's inspector for the shared report, where argument-dependent lookup finds it.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Done& x) {
    return f(caf::meta::type_name("Done"), x.worker, x.result);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Job& x) {
    return f(caf::meta::type_name("Job"), x.theta);
}

}  // namespace labctl::kernels::savina_fjcreate

namespace labctl::kernels::caf_savina_fjcreate {
namespace {

using savina_fjcreate::Job;
using savina_fjcreate::Done;
using savina_fjcreate::Outcome;

class Sink final : public caf::event_based_actor {
public:
    Sink(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t workers, rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), reports_(workers), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Done& report) {
            if (reports_.add(report)) done_.set(reports_.outcome());
        }};
    }

private:
    savina_fjcreate::Reports reports_;
    rt::Completion<Outcome>& done_;
};

// Does its one job, reports and quits, as Savina's worker exits.
class Forked final : public caf::event_based_actor {
public:
    Forked(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t index, caf::actor sink)
        : caf::event_based_actor(config), index_(index), sink_(std::move(sink)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Job& job) {
            send(sink_, Done{index_, savina_fjthrput::job(job.theta)});
            quit();
        }};
    }

    void on_exit() override { sink_ = nullptr; }

private:
    const std::uint32_t index_;
    caf::actor sink_;
};

Result run(const Params& params) {
    const auto workers = std::uint32_t(params.integer("workers"));

    rt::Completion<Outcome> done;
    caf_support::CafRun caf(params, done);
    // The sink is ours, not Savina's: spawned before the phase.
    const caf::actor sink = caf.system().spawn<Sink>(std::ref(caf), workers, std::ref(done));
    caf.keep<Sink>(sink);

    // As Savina's clock: each actor's spawn and its message, until the last has reported.
    caf_support::CafPhase phase(caf);
    for (std::uint32_t i = 0; i < workers; ++i)
        caf::anon_send(caf.system().spawn<Forked>(std::ref(caf), i, sink), Job{savina_fjcreate::kTheta});
    const Outcome outcome = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    caf.stop();

    savina_fjcreate::report(result, outcome, workers);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_fjcreate",
    .summary = "savina_fjcreate on CAF 0.17: one thread spawns `workers` actors one by one and "
               "sends each one small float job",
    .description =
        "As savina_fjcreate (Savina's 4, Fork-Join creation), on CAF 0.17: the kernel's own thread "
        "spawns `workers` actors one after another, anon_sending each its one job (the square of "
        "sin(37.2), the angle in the message) right after spawning it; each actor reports its "
        "result to a sink and quits, as Savina's worker exits. The phase runs from the first "
        "spawn to the sink's last report (the actor system and the sink are started before it). "
        "The differences from Savina are savina_fjcreate's, except that here the actors quit "
        "(their end may fall inside the phase) where ours stay registered until after it.",
    .sources = {{"savina", "4. Fork Join actor creation (fjcreate)"}},
    .verifies = "every actor reported once, every result positive, and the results add up to "
                "`workers` squared sines added in turn",
    .params = schema(savina_fjcreate::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_fjcreate
