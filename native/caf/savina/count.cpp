// caf_savina_count: savina_count on CAF 0.17, Savina's benchmark 2, Counting Actor: a producer
// actor sends N increments to a counter actor, then asks it for its count.
#include <cstdint>
#include <string>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/count.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_count {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Retrieve<caf::actor>& x) {
    return f(caf::meta::type_name("Retrieve"), x.sender);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Increment&) {
    return f(caf::meta::type_name("Increment"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ResultMsg& x) {
    return f(caf::meta::type_name("ResultMsg"), x.result);
}

}  // namespace labctl::kernels::savina_count

namespace labctl::kernels::caf_savina_count {
namespace {

using savina_count::Increment;
using savina_count::ResultMsg;
using savina_count::Tally;

using Retrieve = savina_count::Retrieve<caf::actor>;

class Counter final : public caf::event_based_actor {
public:
    Counter(caf::actor_config& config, caf_support::CafRun& run, Tally& tally)
        : caf::event_based_actor(config), tally_(tally) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Increment&) { ++count_; },
            [this](const Retrieve& retrieve) {
                tally_.increments = count_;
                ++tally_.retrieves;
                send(retrieve.sender, ResultMsg{count_});
            },
        };
    }

private:
    Tally& tally_;
    std::uint64_t count_ = 0;  // Savina's count
};

class Producer final : public caf::event_based_actor {
public:
    Producer(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t increments, caf::actor counter,
             Tally& tally, rt::Completion<bool>& done)
        : caf::event_based_actor(config), increments_(increments), counter_(std::move(counter)), tally_(tally),
          done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Increment&) {
                ++tally_.start;
                for (std::uint64_t i = 0; i < increments_; ++i) send(counter_, Increment{});
                send(counter_, Retrieve{caf::actor_cast<caf::actor>(this)});
            },
            // Savina's producer checks the result and exits, the last actor: the benchmark's end.
            [this](const ResultMsg& message) {
                ++tally_.results;
                tally_.result = message.result;
                done_.set(true);
            },
        };
    }

    void on_exit() override { counter_ = nullptr; }

private:
    const std::uint64_t increments_;
    caf::actor counter_;
    Tally& tally_;
    rt::Completion<bool>& done_;
};

Result run(const Params& params) {
    const auto increments = std::uint64_t(params.integer("increments"));

    // Each actor writes its own fields of the tally; the counter's happen before its Result.
    Tally tally;
    rt::Completion<bool> done;
    caf_support::CafRun caf(params, done);
    caf.reserve(2);

    // The phase covers the counter and then the producer spawned, the producer's start, every
    // message, until the producer has the Result.
    caf_support::CafPhase phase(caf);
    const caf::actor counter = caf.system().spawn<Counter>(std::ref(caf), std::ref(tally));
    const caf::actor producer =
        caf.system().spawn<Producer>(std::ref(caf), increments, counter, std::ref(tally), std::ref(done));
    caf.keep<Counter>(counter);  // told to exit when the run stops, or fails
    caf.keep<Producer>(producer);
    caf::anon_send(producer, Increment{});
    caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    caf.stop();

    savina_count::report(result, tally, increments);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_count",
    .summary = "savina_count on CAF 0.17: a producer actor sends `increments` increments to a counter, then retrieves the count",
    .description =
        "As savina_count, on CAF 0.17, as Savina's CAF port (caf_02_count) has it: the kernel's "
        "thread anon_sends an Increment to the producer, which sends N Increments to the counter in "
        "that one handler and then a Retrieve with its own handle; the counter answers with a "
        "Result carrying its count. N+3 messages. The phase covers spawning the counter and the "
        "producer, and every message until the producer has the Result; the actor system is "
        "started before it and shut down after it (Savina's port makes and destroys it inside its "
        "clock). threads and policy set CAF's scheduler.",
    .sources = {{"savina", "2. Counting Actor (count)"}},
    .verifies = "the counter counted `increments` Increments and one Retrieve, and the producer got one "
                "Result carrying that count",
    .params = schema(savina_count::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_count
