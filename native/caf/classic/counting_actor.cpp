// caf_counting_actor: counting_actor on CAF 0.17. One thread floods one actor with numbers,
// which it counts and sums: the mailbox of a single receiver under a sender that runs ahead.
#include <cstdint>
#include <string>

#include "../../kernels/classic/counting_actor.hpp"
#include "../../kernels/framework/schema.hpp"
#include "../run.hpp"

namespace labctl::kernels::counting_actor {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Add& x) {
    return f(caf::meta::type_name("Add"), x.value);
}

}  // namespace labctl::kernels::counting_actor

namespace labctl::kernels::caf_counting_actor {
namespace {

using counting_actor::Add;
using counting_actor::Count;

class Counter final : public caf::event_based_actor {
public:
    Counter(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t messages,
            rt::Completion<Count>& done)
        : caf::event_based_actor(config), counting_(messages), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Add& add) { on_add(add); }};
    }

private:
    void on_add(const Add& add) {
        if (counting_.add(add.value)) done_.set(counting_.count());
    }

    counting_actor::Counting counting_;
    rt::Completion<Count>& done_;
};

Result run(const Params& params) {
    const auto messages = std::uint64_t(params.integer("messages"));

    rt::Completion<Count> done;
    caf_support::CafRun caf(params, done);
    const caf::actor counter = caf.system().spawn<Counter>(std::ref(caf), messages, std::ref(done));
    caf.keep<Counter>(counter);

    // The sender is the kernel's own thread, outside the actor system, as ours (the study's page
    // does not say which thread sends).
    caf_support::CafPhase phase(caf);
    for (std::uint64_t n = 1; n <= messages; ++n) caf::anon_send(counter, Add{n});
    const Count count = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    caf.stop();

    counting_actor::report(result, count, messages);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_counting_actor",
    .summary = "counting_actor on CAF 0.17: one thread sends `messages` numbers to one counting actor",
    .description =
        "As counting_actor, on CAF 0.17: the kernel's own thread (outside the actor system) "
        "anon_sends 1..messages to a counter actor spawned before the phase, which counts and "
        "sums them; the phase ends when it has counted the last. The actor system's start "
        "and shutdown are outside the phase. threads and policy set CAF's scheduler "
        "(scheduler.max-threads, scheduler.policy) in place of our dispatcher parameters.",
    .sources = {{"theron_303", "CountingActor"}},
    .verifies = "the counter received `messages` numbers summing to messages*(messages+1)/2",
    .params = schema(counting_actor::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},  // the sample's own figures say it all
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_counting_actor
