// savina_fjthrput: Savina's Fork-Join throughput. The kernel's own thread sends `messages`
// rounds of one message to each of `actors` workers, round robin; each message is a small float
// job. Measures the throughput of many mailboxes fed by one sender.
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "fjthrput.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_fjthrput {
namespace {

using Sink = CollectorAgent<Tallies, Tally>;

class Thrower final : public rt::Agent {
public:
    Thrower(std::uint32_t index, std::uint64_t messages, Sink& sink)
        : index_(index), worker_(messages), sink_(sink) {
        subscribe<&Thrower::on_job>();
    }

private:
    void on_job(const Job& job) {
        if (worker_.work(job.theta)) rt::send<Tally>(sink_, worker_.tally(index_));
    }

    const std::uint32_t index_;
    Worker worker_;
    Sink& sink_;
};

Result run(const Params& params) {
    const auto messages = std::uint64_t(params.integer("messages"));
    const auto actors = std::uint32_t(params.integer("actors"));

    MeasuredRun<Outcome> run(params);
    Result result;

    // As Savina's clock: the workers' creation, every message, until the last worker is done.
    const Outcome outcome = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        std::vector<Thrower*> workers;
        workers.reserve(actors);
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            Sink& sink = coop.make_agent_with_binder<Sink>(dispatchers.binder(actors), Tallies(actors), run.done());
            for (std::uint32_t i = 0; i < actors; ++i)
                workers.push_back(&coop.make_agent_with_binder<Thrower>(dispatchers.binder(i), i, messages, sink));
        });
        for (std::uint64_t m = 0; m < messages; ++m)
            for (Thrower* worker : workers) rt::send<Job>(*worker, kTheta);
    });

    report(result, outcome, actors, messages);
    return result;
}

Expectation expect(const Params& params) {
    const auto messages = std::uint64_t(params.integer("messages"));
    const auto actors = std::uint64_t(params.integer("actors"));
    return {expected(actors, messages), actors * (messages + 1)};
}

void check(const Params& params) {
    const auto actors = params.integer("actors");
    check_thread_per_agent("savina_fjthrput", params, std::uint64_t(actors) + 1, "actors=" + std::to_string(actors));
}

const Registration registration(Kernel{
    .name = "savina_fjthrput",
    .summary = "one thread sends `messages` small float jobs to each of `actors` workers, round "
               "robin: the throughput of many mailboxes fed by one sender",
    .description =
        "Savina's benchmark 3, Fork-Join throughput (fjthrput). The kernel's own thread (outside "
        "the runtime, as Savina's main thread) creates `actors` workers, then sends `messages` "
        "rounds of one message to each worker in turn (round robin). Each message is Savina's job: "
        "the square of sin(37.2), the angle carried by the message; each worker counts its jobs, "
        "checks each result is positive (as Savina does) and adds the results up. Once it has done "
        "`messages` jobs a worker reports its tally to a sink agent (on the same dispatcher), which "
        "adds the workers' sums in the workers' order. The phase runs from the workers' creation "
        "(their coop introduced, the dispatcher's threads already running) to the sink's last "
        "tally, as Savina's clock covers runIteration. Differences from Savina: its clock also "
        "covers making the actor system, ours does not; Savina's workers exit and the run ends "
        "when the actor system terminates, ours report their tallies to a sink (`actors` messages "
        "more) and are stopped after the phase; Savina discards the results (only refusing one "
        "<= 0), ours sum them into the answer; Savina's messages carry nothing, ours the angle; "
        "its usePriorities and channels settings (C) are not used by its actor versions and are "
        "left out.",
    .sources = {{"savina", "3. Fork Join throughput (fjthrput)"}},
    .verifies = "every worker did exactly `messages` jobs, every result positive, and the sum of "
                "the results equals the sequential sum of actors x messages squared sines",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_fjthrput
