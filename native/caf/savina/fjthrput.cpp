// caf_savina_fjthrput: savina_fjthrput on CAF 0.17. The kernel's own thread sends `messages`
// rounds of one small float job to each of `actors` actors, round robin.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/fjthrput.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_fjthrput {

// CAF's inspector for the shared tally, where argument-dependent lookup finds it.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Tally& x) {
    return f(caf::meta::type_name("Tally"), x.worker, x.jobs, x.bad, x.sum);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Job& x) {
    return f(caf::meta::type_name("Job"), x.theta);
}

}  // namespace labctl::kernels::savina_fjthrput

namespace labctl::kernels::caf_savina_fjthrput {
namespace {

using savina_fjthrput::Job;
using savina_fjthrput::Outcome;
using savina_fjthrput::Tally;

class Sink final : public caf::event_based_actor {
public:
    Sink(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t actors, rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), tallies_(actors), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Tally& tally) {
            if (tallies_.add(tally)) done_.set(tallies_.outcome());
        }};
    }

private:
    savina_fjthrput::Tallies tallies_;
    rt::Completion<Outcome>& done_;
};

class Thrower final : public caf::event_based_actor {
public:
    Thrower(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t index, std::uint64_t messages,
            caf::actor sink)
        : caf::event_based_actor(config), index_(index), worker_(messages), sink_(std::move(sink)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Job& job) {
            if (worker_.work(job.theta)) send(sink_, worker_.tally(index_));
        }};
    }

    void on_exit() override { sink_ = nullptr; }

private:
    const std::uint32_t index_;
    savina_fjthrput::Worker worker_;
    caf::actor sink_;
};

Result run(const Params& params) {
    const auto messages = std::uint64_t(params.integer("messages"));
    const auto actors = std::uint32_t(params.integer("actors"));

    rt::Completion<Outcome> done;
    caf_support::CafRun caf(params, done);
    caf.reserve(actors + 1);

    // As Savina's clock: the actors' creation, every message, until the last actor is done.
    caf_support::CafPhase phase(caf);
    const caf::actor sink = caf.system().spawn<Sink>(std::ref(caf), actors, std::ref(done));
    caf.keep<Sink>(sink);
    std::vector<caf::actor> workers;
    workers.reserve(actors);
    for (std::uint32_t i = 0; i < actors; ++i) {
        workers.push_back(caf.system().spawn<Thrower>(std::ref(caf), i, messages, sink));
        caf.keep<Thrower>(workers.back());
    }
    for (std::uint64_t m = 0; m < messages; ++m)
        for (const caf::actor& worker : workers) caf::anon_send(worker, Job{savina_fjthrput::kTheta});
    const Outcome outcome = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    caf.stop();

    savina_fjthrput::report(result, outcome, actors, messages);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_fjthrput",
    .summary = "savina_fjthrput on CAF 0.17: one thread sends `messages` small float jobs to each "
               "of `actors` actors, round robin",
    .description =
        "As savina_fjthrput (Savina's 3, Fork-Join throughput), on CAF 0.17: the kernel's own "
        "thread spawns `actors` actors and a sink, then anon_sends `messages` rounds of one job "
        "(the square of sin(37.2), the angle in the message) to each actor in turn; each actor "
        "reports its tally to the sink once it has done its `messages` jobs. The phase runs from "
        "the first spawn to the sink's last tally (the actor system is started before it). The "
        "differences from Savina are savina_fjthrput's.",
    .sources = {{"savina", "3. Fork Join throughput (fjthrput)"}},
    .verifies = "every actor did exactly `messages` jobs, every result positive, and the sum of "
                "the results equals the sequential sum of actors x messages squared sines",
    .params = schema(savina_fjthrput::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_fjthrput
