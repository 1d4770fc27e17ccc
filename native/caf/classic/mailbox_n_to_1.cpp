// caf_mailbox_n_to_1: mailbox_n_to_1 on CAF 0.17. Many senders flood one actor's mailbox: how
// a single mailbox holds up when every sender pushes onto it at once.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../kernels/classic/mailbox_n_to_1.hpp"
#include "../../kernels/framework/phase.hpp"
#include "../../kernels/framework/schema.hpp"
#include "../run.hpp"

namespace labctl::kernels::mailbox_n_to_1 {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Msg& x) {
    return f(caf::meta::type_name("Msg"), x.sender, x.seq);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Continue&) {
    return f(caf::meta::type_name("Continue"));
}

}  // namespace labctl::kernels::mailbox_n_to_1

namespace labctl::kernels::caf_mailbox_n_to_1 {
namespace {

using mailbox_n_to_1::Msg;
using mailbox_n_to_1::Continue;
using mailbox_n_to_1::Outcome;

class Receiver final : public caf::event_based_actor {
public:
    Receiver(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t senders,
             std::uint64_t messages_per_sender, rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), tally_(senders, messages_per_sender), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Msg& msg) { on_msg(msg); }};
    }

private:
    void on_msg(const Msg& msg) {
        if (tally_.count(msg.sender, msg.seq)) done_.set(tally_.outcome());
    }

    mailbox_n_to_1::Tally tally_;
    rt::Completion<Outcome>& done_;
};

class Sender final : public caf::event_based_actor {
public:
    Sender(caf::actor_config& config, caf_support::CafRun& run, caf::actor receiver, std::uint32_t index,
           std::uint64_t messages)
        : caf::event_based_actor(config), receiver_(std::move(receiver)), index_(index), bursts_(messages) {
        run.watch(*this);
    }
    std::uint64_t continues() const noexcept { return bursts_.continues(); }

    caf::behavior make_behavior() override {
        return {[this](const Continue&) { on_continue(); }};
    }

    void on_exit() override { receiver_ = nullptr; }

private:
    void on_continue() {
        if (bursts_.next([this](std::uint64_t seq) { send(receiver_, Msg{index_, seq}); }))
            send(caf::actor(this), Continue{});
    }

    caf::actor receiver_;
    const std::uint32_t index_;
    mailbox_n_to_1::Bursts bursts_;
};

Result run(const Params& params) {
    const auto senders = std::uint32_t(params.integer("senders"));
    const auto messages_per_sender = std::uint64_t(params.integer("messages_per_sender"));
    const bool sender_actors = params.text("sender") == "agent";

    Lifetime lifetime(params);
    std::vector<std::int64_t> thread_lives;
    Result result;
    Outcome outcome;
    std::uint64_t continues = 0;
    {
        rt::Completion<Outcome> done;
        caf_support::CafRun caf(params, done);
        caf.report_thread_lives(thread_lives);
        caf.reserve(senders + 1);
        const caf::actor receiver =
            caf.system().spawn<Receiver>(std::ref(caf), senders, messages_per_sender, std::ref(done));
        caf.keep<Receiver>(receiver);
        // Senders are made before the phase (actors and threads alike) and wait for their start.
        std::vector<caf::actor> sender_handles;
        std::vector<Sender*> agents;
        // Each thread sends to the receiver; declared after the actor system: joined before it stops.
        auto send = [&receiver](std::uint32_t sender, std::uint64_t seq) {
            caf::anon_send(receiver, Msg{sender, seq});
        };
        std::optional<SenderThreads<decltype(send)>> threads;
        if (sender_actors) {
            for (std::uint32_t i = 0; i < senders; ++i) {
                sender_handles.push_back(caf.system().spawn<Sender>(std::ref(caf), receiver, i, messages_per_sender));
                agents.push_back(&caf.keep<Sender>(sender_handles.back()));
            }
        } else {
            threads.emplace(senders, messages_per_sender, send);
        }

        caf_support::CafPhase phase(caf);
        if (sender_actors) {
            for (const caf::actor& sender : sender_handles) caf::anon_send(sender, Continue{});
        } else {
            threads->release();
        }
        outcome = caf.await(done);
        phase.finish(result, done.completed_at());
        if (threads) threads->join();
        // Each sender counted its last Continue before sending its last message, which the receiver
        // handled before done.set(): reading the counts here is ordered after those writes.
        for (const Sender* sender : agents) continues += sender->continues();
        caf.stop();
    }  // the actor system goes with `caf`, after the handles made since
    lifetime.end(result, std::move(thread_lives));

    mailbox_n_to_1::report(result, outcome, continues, senders, messages_per_sender);
    lifetime.add_phase_metric(result);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_mailbox_n_to_1",
    .summary = "mailbox_n_to_1 on CAF 0.17: `senders` senders x `messages_per_sender` messages into "
               "one actor's mailbox",
    .description =
        "As mailbox_n_to_1, on CAF 0.17: `senders` senders each send `messages_per_sender` "
        "messages {sender, seq} to one receiver actor, which counts them per sender and checks "
        "each sender's order. sender=thread (the study's setup, which measured libcppa, CAF's "
        "predecessor): plain threads outside the actor system that anon_send, started before "
        "the phase and released together at its start (their CPU time is not in "
        "thread_cpu_ns). sender=agent: sender actors on CAF's scheduler, sending bursts of "
        "1000 and self-sending a Continue message between bursts; the kernel sends each its "
        "first Continue when the phase begins. The phase ends when the receiver has every "
        "message; the actor system's start and shutdown are outside it; with clock=lifetime "
        "elapsed_ns runs from before the actor system is made to after it is destroyed (its "
        "threads started, every actor terminated, every thread joined), the phase then "
        "reported as the metric phase_ns. messages_processed counts the receiver's messages "
        "plus, with sender=agent, every Continue.",
    .sources = {{"libcppa_mailbox", "20 threads x 1,000,000 messages to one actor"}},
    .verifies = "the receiver got senders*messages_per_sender messages, each sender's exactly "
                "messages_per_sender, every one in its sender's order",
    .params = schema(mailbox_n_to_1::own_params(), Timed::phase_or_lifetime, caf_support::scheduler_params()),
    .metrics = metric_schema({}, Timed::phase_or_lifetime),
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_mailbox_n_to_1
