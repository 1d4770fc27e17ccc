// mailbox_n_to_1: many senders flood one receiver's mailbox. Measures how a single event queue
// holds up when every sender pushes onto it at once (the queue is the shared resource).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailbox_n_to_1.hpp"

namespace labctl::kernels::mailbox_n_to_1 {
namespace {

class Receiver final : public rt::Agent {
public:
    Receiver(std::uint32_t senders, std::uint64_t messages_per_sender, rt::Completion<Outcome>& done,
             StartLatch& started)
        : tally_(senders, messages_per_sender), done_(done), started_(started) {
        subscribe<&Receiver::on_msg>();
    }

private:
    void on_start() override { started_.count_down(); }

    void on_msg(const Msg& msg) {
        if (tally_.count(msg.sender, msg.seq)) done_.set(tally_.outcome());
    }

    Tally tally_;
    rt::Completion<Outcome>& done_;
    StartLatch& started_;
};

class Sender final : public rt::Agent {
public:
    Sender(Receiver& receiver, std::uint32_t index, std::uint64_t messages, StartLatch& started)
        : receiver_(receiver), index_(index), bursts_(messages), started_(started) {
        subscribe<&Sender::on_continue>();
    }
    std::uint64_t continues() const noexcept { return bursts_.continues(); }

private:
    void on_start() override { started_.count_down(); }

    void on_continue(const Continue&) {
        if (bursts_.next([this](std::uint64_t seq) { rt::send<Msg>(receiver_, index_, seq); }))
            rt::send<Continue>(*this);
    }

    Receiver& receiver_;
    const std::uint32_t index_;
    Bursts bursts_;
    StartLatch& started_;
};

Result run(const Params& params) {
    const auto senders = std::uint32_t(params.integer("senders"));
    const auto messages_per_sender = std::uint64_t(params.integer("messages_per_sender"));
    const bool sender_agents = params.text("sender") == "agent";

    StartLatch started(sender_agents ? senders + 1 : 1);  // the receiver and the sender agents
    MeasuredRun<Outcome> run(params, Timed::phase_or_lifetime, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();

    Receiver* receiver = nullptr;
    env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
        receiver = &coop.make_agent_with_binder<Receiver>(dispatchers.binder(0), senders,
                                                          messages_per_sender, run.done(), started);
    });
    // Senders are made before the phase (agents and threads alike), and every agent has started
    // before it begins.
    // An agent each in a coop of its own: with a cooperation FIFO they still run in parallel.
    std::vector<Sender*> agents;
    // Each thread sends to the receiver; declared after the environment: joined before it stops.
    auto send = [receiver](std::uint32_t sender, std::uint64_t seq) { rt::send<Msg>(*receiver, sender, seq); };
    std::optional<SenderThreads<decltype(send)>> threads;
    std::vector<int> sender_cpus;  // where the sender threads may run; empty: anywhere
    if (sender_agents) {
        agents.reserve(senders);
        for (std::uint32_t i = 0; i < senders; ++i) {
            env.introduce_coop(dispatchers.binder(i + 1), [&](rt::Coop& coop) {
                agents.push_back(&coop.make_agent_with_binder<Sender>(dispatchers.binder(i + 1), *receiver,
                                                                      i, messages_per_sender, started));
            });
        }
    } else {
        // On the runtime's cores (pin): the study's variable is the cores that senders and
        // receiver share (a VM of 2..12 cores), so with a pinned pool of N threads the senders
        // run on its N CPUs too, not on idle ones beside it.
        sender_cpus = dispatchers.runtime_cpus();
        threads.emplace(senders, messages_per_sender, send, sender_cpus);
    }

    started.wait(env);
    Result result;
    std::uint64_t continues = 0;
    const Outcome outcome = run.measure(
        result,
        [&] {
            if (sender_agents) {
                for (Sender* sender : agents) rt::send<Continue>(*sender);
            } else {
                threads->release();
            }
        },
        [&](Outcome&) {
            if (threads) threads->join();
            // Each sender counted its last Continue before sending its last message, which the
            // receiver handled before done.set(): reading the counts here is ordered after those.
            for (const Sender* sender : agents) continues += sender->continues();
        });

    report(result, outcome, continues, senders, messages_per_sender);
    if (!sender_cpus.empty()) result.metrics.push_back({"sender_cpus", double(sender_cpus.size())});
    run.add_phase_metric(result);
    return result;
}

void check(const Params& params) {
    if (params.text("sender") == "agent") {
        const auto senders = std::uint64_t(params.integer("senders"));
        check_thread_per_agent("mailbox_n_to_1", params, senders + 1,
                               "sender=agent senders=" + std::to_string(senders));
    }
}

// For time estimates (Kernel::work).
double work(const Params& params) {
    return double(params.integer("senders")) * double(params.integer("messages_per_sender"));
}

// What an external runtime is held to: every message, in order; with sender agents, also each
// sender's Continues, one per burst of kBurst (ceil(messages_per_sender / kBurst)).
Expectation expect(const Params& params) {
    const auto senders = std::uint64_t(params.integer("senders"));
    const auto messages_per_sender = std::uint64_t(params.integer("messages_per_sender"));
    const std::uint64_t continues =
        params.text("sender") == "agent" ? senders * ((messages_per_sender + kBurst - 1) / kBurst) : 0;
    return {expected(senders, messages_per_sender), senders * messages_per_sender + continues};
}

const Registration registration(Kernel{
    .name = "mailbox_n_to_1",
    .summary = "`senders` senders x `messages_per_sender` messages into one receiver's mailbox: the "
               "contended queue",
    .description =
        "`senders` senders each send `messages_per_sender` messages {sender, seq} to one "
        "receiver agent, which counts them per sender and checks each sender's order. "
        "sender=thread (the study's setup): plain threads outside the runtime, started before "
        "the measured phase and released together at its start (their CPU time is not in "
        "thread_cpu_ns); with pin set they run on the CPUs the runtime's threads are pinned to "
        "and no others (pin=compact, threads=N: senders and receiver share N cores, the "
        "study's variable; sender_cpus says on how many), with pin=none anywhere. sender=agent: sender agents on the chosen dispatcher, each in a coop "
        "of its own, sending bursts of 1000 and self-sending a Continue message between bursts "
        "so that no pool thread is held by one sender; the kernel sends each its first "
        "Continue when the phase begins. The phase ends when the receiver has every message. "
        "With clock=lifetime elapsed_ns runs from before the environment and the sender "
        "threads exist to after every thread is joined and the environment is gone, as the "
        "study timed its whole program. "
        "messages_processed counts the receiver's messages plus, with sender=agent, every "
        "Continue the senders handled.",
    .sources = {{"libcppa_mailbox", "20 threads x 1,000,000 messages to one actor"}},
    .verifies = "the receiver got senders*messages_per_sender messages, each sender's exactly "
                "messages_per_sender, every one in its sender's order",
    .params = schema(own_params(), Timed::phase_or_lifetime, dispatcher_params()),
    .metrics = metric_schema({{.name = "sender_cpus", .absent_when = "sender = agent, or pin = none"}},
                             Timed::phase_or_lifetime),
    .check = check,
    .run = run,
    .expect = expect,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::mailbox_n_to_1
