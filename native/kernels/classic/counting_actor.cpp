// counting_actor: one thread floods one agent with numbers, which it counts and sums. Measures
// the mailbox of a single receiver under a sender that runs ahead of it (the queue grows).
#include <cstdint>
#include <string>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "counting_actor.hpp"

namespace labctl::kernels::counting_actor {
namespace {

class Counter final : public rt::Agent {
public:
    Counter(std::uint64_t messages, rt::Completion<Count>& done, StartLatch& started)
        : counting_(messages), done_(done), started_(started) {
        subscribe<&Counter::on_add>();
    }

private:
    void on_start() override { started_.count_down(); }

    void on_add(const Add& add) {
        if (counting_.add(add.value)) done_.set(counting_.count());
    }

    Counting counting_;
    rt::Completion<Count>& done_;
    StartLatch& started_;
};

Result run(const Params& params) {
    const auto messages = std::uint64_t(params.integer("messages"));

    StartLatch started(1);
    MeasuredRun<Count> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    Counter* counter = nullptr;
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        counter = &coop.make_agent_with_binder<Counter>(dispatchers.binder(0), messages, run.done(), started);
    });

    // The sender is the kernel's own thread, outside the runtime. The study's page does not say
    // who sends in its CountingActor (only that "the writing threads ... are able to flood the
    // unbounded message queues of the reader"): a thread outside the runtime floods it hardest.
    started.wait(env);

    Result result;
    const Count count = run.measure(result, [&] {
        for (std::uint64_t n = 1; n <= messages; ++n) rt::send<Add>(*counter, n);
    });

    report(result, count, messages);
    return result;
}

Expectation expect(const Params& params) {
    const auto messages = std::uint64_t(params.integer("messages"));
    return {expected(messages), messages};
}

const Registration registration(Kernel{
    .name = "counting_actor",
    .summary = "one thread sends `messages` numbers to one counting agent: a single mailbox flooded",
    .description =
        "The kernel's own thread (outside the runtime) sends 1..messages to a counter agent, "
        "which counts and sums them; the phase ends when it has counted the last. The sender "
        "is usually faster than the receiver, so the queue, and memory, grows during the run, "
        "as the study describes its writers flooding the reader's unbounded queue (its page "
        "does not say which thread sends).",
    .sources = {{"theron_303", "CountingActor"}},
    .verifies = "the counter received `messages` numbers summing to messages*(messages+1)/2",
    .params = schema(own_params(), Timed::phase, dispatcher_params()),
    .metrics = {},  // the sample's own figures say it all
    .check = {},
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::counting_actor
