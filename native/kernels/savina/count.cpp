// savina_count: Savina's benchmark 2, Counting Actor: a producer agent sends N increments to a
// counter agent, then asks it for its count.
#include <cstdint>
#include <string>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "count.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_count {
namespace {

class Producer;

using Retrieve = savina_count::Retrieve<Producer*>;

class Counter final : public rt::Agent {
public:
    explicit Counter(Tally& tally) : tally_(tally) {
        subscribe<&Counter::on_increment>();
        subscribe<&Counter::on_retrieve>();
    }

private:
    void on_increment(const Increment&) { ++count_; }
    inline void on_retrieve(const Retrieve& retrieve);

    Tally& tally_;
    std::uint64_t count_ = 0;  // Savina's count
};

class Producer final : public rt::Agent {
public:
    Producer(std::uint64_t increments, Counter& counter, Tally& tally, rt::Completion<bool>& done)
        : increments_(increments), counter_(counter), tally_(tally), done_(done) {
        subscribe<&Producer::on_increment>();
        subscribe<&Producer::on_result>();
    }

private:
    void on_increment(const Increment&) {
        ++tally_.start;
        for (std::uint64_t i = 0; i < increments_; ++i) rt::send<Increment>(counter_);
        rt::send<Retrieve>(counter_, this);
    }
    // Savina's producer checks the result and exits, the last actor: the benchmark's end.
    void on_result(const ResultMsg& message) {
        ++tally_.results;
        tally_.result = message.result;
        done_.set(true);
    }

    const std::uint64_t increments_;
    Counter& counter_;
    Tally& tally_;
    rt::Completion<bool>& done_;
};

void Counter::on_retrieve(const Retrieve& retrieve) {
    tally_.increments = count_;
    ++tally_.retrieves;
    rt::send<ResultMsg>(*retrieve.sender, count_);
}

Result run(const Params& params) {
    const auto increments = std::uint64_t(params.integer("increments"));

    // Each agent writes its own fields of the tally; the counter's happen before its Result.
    Tally tally;
    MeasuredRun<bool> run(params);
    Result result;

    // The phase covers what Savina's runIteration does once the actor system exists: the counter
    // and then the producer made and started, the producer's start, every message, until the
    // producer has the count.
    run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        Producer* producer = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            Counter& counter = coop.make_agent_with_binder<Counter>(dispatchers.binder(1), tally);
            producer = &coop.make_agent_with_binder<Producer>(dispatchers.binder(0), increments, counter, tally, run.done());
        });
        rt::send<Increment>(*producer);
    });

    report(result, tally, increments);
    return result;
}

const Registration registration(Kernel{
    .name = "savina_count",
    .summary = "Savina's Counting Actor: a producer agent sends `increments` increments to a counter, then retrieves the count",
    .description =
        "Savina's benchmark 2, Counting Actor (count), at its default N = 1,000,000 (`increments`). "
        "The kernel's thread sends an Increment to the producer agent, which in that one handler "
        "sends N Increment messages (no payload) to the counter agent and then a Retrieve carrying "
        "its own handle; the counter adds one per Increment and answers the Retrieve with a Result "
        "carrying its count. N+3 messages. Unlike counting_actor (the kernel's own thread, outside "
        "the runtime, sends 1..messages, summed, and the phase ends at the last), the sender is an "
        "agent and the count comes back in a request-reply, as Savina's does. The phase covers the "
        "two agents' creation (counter, then producer with the counter's handle) and start, and "
        "every message, until the producer has the Result. Differences from Savina: the "
        "environment (Savina's actor system) and its threads exist before the phase and are "
        "stopped after it, where Savina's runIteration creates the actor system and awaits its "
        "termination inside its clock; Savina's counter and producer exit (the counter after "
        "answering, the producer after printing whether the count is right, inside Savina's clock), "
        "ours are finished with the environment after the phase and print nothing; Savina's "
        "producer sends one shared Increment object N times, where each send here makes its "
        "message; the count is 64-bit (Savina's an Int); Savina "
        "reports its statistics over 12 iterations in one JVM, where each run here is one sample.",
    .sources = {{"savina", "2. Counting Actor (count)"}},
    .verifies = "the counter counted `increments` Increments and one Retrieve, and the producer got one "
                "Result carrying that count",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_count
