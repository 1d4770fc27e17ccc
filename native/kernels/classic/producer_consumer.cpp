// producer_consumer: producers send numbers to one consumer agent at once: writing threads
// outside the runtime, as Theron's were (producer=thread), or agents of the runtime
// (producer=agent). Measures a many-to-one mailbox.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "../framework/sender_threads.hpp"

namespace labctl::kernels::producer_consumer {
namespace {

struct Item {
    std::uint32_t producer;
    std::uint64_t seq;
};

// A producer's next burst, sent to itself so that on a shared thread the consumer gets its
// turn between bursts (a producer that sent all its items in one handler would hold the thread
// and grow the consumer's queue to the whole run).
struct Continue {};

struct Tally {
    std::uint64_t received = 0;
    std::uint64_t sum = 0;
    std::uint64_t out_of_order = 0;
    std::uint64_t short_producers = 0;
};

class Consumer final : public rt::Agent {
public:
    Consumer(std::vector<std::uint64_t> quota, rt::Completion<Tally>& done)
        : quota_(std::move(quota)), next_(quota_.size(), 0), done_(done) {
        for (std::uint64_t q : quota_) expected_ += q;
        subscribe<&Consumer::on_item>();
    }

private:
    void on_item(const Item& item) {
        if (item.seq != next_[item.producer]) ++tally_.out_of_order;
        next_[item.producer] = item.seq + 1;
        ++tally_.received;
        tally_.sum += item.seq;
        if (tally_.received != expected_) return;
        for (std::size_t p = 0; p < quota_.size(); ++p)
            if (next_[p] != quota_[p]) ++tally_.short_producers;
        done_.set(tally_);
    }

    const std::vector<std::uint64_t> quota_;
    std::vector<std::uint64_t> next_;
    std::uint64_t expected_ = 0;
    rt::Completion<Tally>& done_;
    Tally tally_;
};

class Producer final : public rt::Agent {
public:
    Producer(std::uint32_t id, std::uint64_t quota, std::uint64_t burst, Consumer& consumer)
        : id_(id), quota_(quota), burst_(burst), consumer_(consumer) {
        subscribe<&Producer::on_continue>();
    }
    // Read after the run: written before this producer's last item, which the consumer
    // received before done.set().
    std::uint64_t bursts() const noexcept { return bursts_; }

private:
    void on_start() override { on_continue({}); }

    void on_continue(const Continue&) {
        ++bursts_;
        const std::uint64_t end = std::min(quota_, sent_ + burst_);
        for (; sent_ < end; ++sent_) rt::send<Item>(consumer_, id_, sent_);
        if (sent_ < quota_) rt::send<Continue>(*this);
    }

    const std::uint32_t id_;
    const std::uint64_t quota_;
    const std::uint64_t burst_;
    Consumer& consumer_;
    std::uint64_t sent_ = 0;
    std::uint64_t bursts_ = 0;
};

std::string describe(const Tally& t) {
    return "received=" + std::to_string(t.received) + " sum=" + std::to_string(t.sum) +
           " out_of_order=" + std::to_string(t.out_of_order) +
           " short_producers=" + std::to_string(t.short_producers);
}

Result run(const Params& params) {
    const auto producers = std::uint32_t(params.integer("producers"));
    const auto messages = std::uint64_t(params.integer("messages"));
    const auto burst = std::uint64_t(params.integer("burst"));
    const bool producer_agents = params.text("producer") == "agent";
    std::vector<std::uint64_t> quota;
    for (std::uint32_t p = 0; p < producers; ++p)
        quota.push_back(messages / producers + (p < messages % producers ? 1 : 0));

    std::vector<Producer*> senders;
    std::vector<int> producer_cpus;  // where producer threads may run; empty: anywhere
    MeasuredRun<Tally> run(params);
    DispatcherChoice& dispatchers = run.dispatchers();
    Result result;
    Tally tally;
    std::uint64_t bursts = 0;
    if (producer_agents) {
        // The phase covers registration: the producers start sending as soon as they start.
        tally = run.measure(
            result,
            [&] {
                run.environment().introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
                    auto& consumer = coop.make_agent_with_binder<Consumer>(dispatchers.binder(0), quota, run.done());
                    for (std::uint32_t p = 0; p < producers; ++p)
                        senders.push_back(&coop.make_agent_with_binder<Producer>(dispatchers.binder(p + 1), p,
                                                                                 quota[p], burst, consumer));
                });
            },
            [&](Tally&) {
                for (Producer* p : senders) bursts += p->bursts();
            });
    } else {
        Consumer* consumer = nullptr;
        run.environment().introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            consumer = &coop.make_agent_with_binder<Consumer>(dispatchers.binder(0), quota, run.done());
        });
        // Theron's writing threads: started before the phase and released at its start, each
        // sending its quota in one loop, on the runtime's CPUs when it is pinned. Declared after
        // the environment: joined before it stops.
        auto send = [consumer](std::uint32_t producer, std::uint64_t seq) {
            rt::send<Item>(*consumer, producer, seq);
        };
        producer_cpus = dispatchers.runtime_cpus();
        SenderThreads<decltype(send)> threads(quota, send, producer_cpus);
        tally = run.measure(result, [&] { threads.release(); }, [&](Tally&) { threads.join(); });
    }

    Tally expected;
    for (std::uint64_t q : quota) {
        expected.received += q;
        expected.sum += q * (q - 1) / 2;  // seq 0..q-1 (q <= 1e10: the product fits)
    }
    // The items alone: the kernel's work is what the consumer takes in. The producer agents'
    // Continue messages (one per burst but the first) are the agents' way of sharing a thread,
    // which the study's writing threads did not need: reported beside it, not in it.
    result.messages_processed = tally.received;
    result.answer = describe(tally);
    result.expected = describe(expected);
    if (producer_agents) result.metrics.push_back({"continue_messages", double(bursts - producers)});
    if (!producer_cpus.empty()) result.metrics.push_back({"producer_cpus", double(producer_cpus.size())});
    return result;
}

void check(const Params& params) {
    const auto producers = params.integer("producers");
    if (params.text("producer") == "agent")
        check_thread_per_agent("producer_consumer", params, std::uint64_t(producers) + 1,
                               "producer=agent producers=" + std::to_string(producers));
    if (params.integer("messages") < producers)
        throw ParamError("producer_consumer", "messages",
                         "parameter 'messages' (" + std::to_string(params.integer("messages")) +
                             ") must be at least 'producers' (" + std::to_string(producers) +
                             "): every producer sends at least one item");
}

// For time estimates (Kernel::work).
double work(const Params& params) {
    return double(params.integer("messages"));
}

// The kernel's own parameters: the work it does.
std::vector<ParamSpec> own_params() {
    return {
        integer_param("producers", 2, {1, 100'000}, "producers (threads or agents, see `producer`)"),
        {.name = "producer",
         .type = ParamType::choice,
         .default_value = std::string("agent"),
         .help = "agent: producer agents on the dispatcher, sending `burst` items per handler; "
                 "thread: plain writing threads outside the runtime, each sending its items in "
                 "one loop (Theron's ProducerConsumer), on the runtime's CPUs when pin is set",
         .choices = {std::string("agent"), std::string("thread")}},
        integer_param("messages", 50'000'000, {1, 10'000'000'000}, "items in total, split between the producers"),
        integer_param("burst", 1000, {1, 1'000'000'000},
                      "producer=agent: items a producer sends per handler before it continues with a self-send"),
    };
}

const Registration registration(Kernel{
    .name = "producer_consumer",
    .summary = "producers (agents, or Theron's writing threads) sending items to one consumer agent",
    .description =
        "`producers` producers split `messages` items between them (the first ones take the "
        "remainder) and send them to one consumer agent, which checks each producer's order. "
        "producer=thread (Theron's form): plain threads outside the runtime, started before the "
        "measured phase and released together at its start, each sending its items in one "
        "loop; with pin set they run on the runtime's CPUs only (producer_cpus says how "
        "many). The phase runs from their "
        "release to the last item. producer=agent: agents on the dispatcher, sending `burst` "
        "items per handler, each burst ending with a Continue message to itself for the next, "
        "so a producer sharing a thread with the consumer lets it run; the phase runs from "
        "registration to the last item. messages_processed counts the items alone; the "
        "agents' Continue messages are reported as continue_messages.",
    .sources = {{"theron_303", "ProducerConsumer"}},
    .verifies = "the consumer received every item once, in order per producer, and their "
                "sequence numbers sum to what the split predicts",
    .params = schema(own_params(), Timed::phase, dispatcher_params()),
    .metrics = metric_schema({{.name = "continue_messages", .absent_when = "producer = thread"},
                              {.name = "producer_cpus", .absent_when = "producer = agent, or pin = none"}},
                             Timed::phase),
    .check = check,
    .run = run,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::producer_consumer
