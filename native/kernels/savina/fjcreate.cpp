// savina_fjcreate: Savina's Fork-Join creation. The kernel's own thread creates `workers`
// workers one after another, each in a coop of its own, and sends each one message, a small
// float job. Measures the cost of creating an agent and delivering its first message.
#include <cstdint>
#include <string>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "fjcreate.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_fjcreate {
namespace {

using Sink = CollectorAgent<Reports, Done>;

class Forked final : public rt::Agent {
public:
    Forked(std::uint32_t index, Sink& sink) : index_(index), sink_(sink) { subscribe<&Forked::on_job>(); }

private:
    void on_job(const Job& job) { rt::send<Done>(sink_, index_, savina_fjthrput::job(job.theta)); }

    const std::uint32_t index_;
    Sink& sink_;
};

Result run(const Params& params) {
    const auto workers = std::uint32_t(params.integer("workers"));

    StartLatch started(1);  // the sink
    MeasuredRun<Outcome> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    Sink* sink = nullptr;
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        sink = &coop.make_agent_with_binder<Sink>(dispatchers.binder(workers), Reports(workers), run.done(), &started);
    });
    started.wait(env);
    Result result;

    // As Savina's clock: each worker's creation and its message, until the last has reported.
    const Outcome outcome = run.measure(result, [&] {
        for (std::uint32_t i = 0; i < workers; ++i) {
            Forked* worker = nullptr;
            env.introduce_coop(dispatchers.binder(i), [&](rt::Coop& coop) {
                worker = &coop.make_agent<Forked>(i, *sink);
            });
            rt::send<Job>(*worker, kTheta);
        }
    });

    report(result, outcome, workers);
    return result;
}

Expectation expect(const Params& params) {
    const auto workers = std::uint64_t(params.integer("workers"));
    return {expected(workers), 2 * workers};
}

void check(const Params& params) {
    const auto workers = params.integer("workers");
    check_thread_per_agent("savina_fjcreate", params, std::uint64_t(workers) + 1, "workers=" + std::to_string(workers));
}

const Registration registration(Kernel{
    .name = "savina_fjcreate",
    .summary = "one thread creates `workers` workers one by one and sends each one small float "
               "job: the cost of creating an agent and its first message",
    .description =
        "Savina's benchmark 4, Fork-Join creation (fjcreate). The kernel's own thread (outside "
        "the runtime, as Savina's main thread) creates `workers` workers one after another, each "
        "in a coop of its own, sending each its one message right after creating it. Each worker "
        "does Savina's job (the square of sin(37.2), the angle carried by the message) and "
        "reports the result to a sink agent, which counts the workers that reported, refuses a "
        "result <= 0 (as Savina does) and adds the results up. The phase runs from the first "
        "worker's creation to the sink's last report, as Savina's clock covers runIteration; the "
        "sink is made and started before it, the dispatcher's threads already running. "
        "Differences from Savina: its clock also covers making the actor system, ours does not; "
        "Savina's workers exit after their job and the run ends when the actor system has "
        "terminated, ours report to the sink (`workers` messages more, and the sink is ours) and "
        "stay registered until the environment stops, after the phase (their deregistration and "
        "destruction are not timed); Savina's worker refuses a result <= 0 itself and discards it, "
        "ours sends it to the sink, which refuses it and sums the results into the answer; "
        "Savina's message is one shared object carrying nothing, ours a new one carrying the angle; "
        "its channels setting (C) is not used by its actor versions and is left out.",
    .sources = {{"savina", "4. Fork Join actor creation (fjcreate)"}},
    .verifies = "every worker reported once, every result positive, and the results add up to "
                "`workers` squared sines added in turn",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_fjcreate
