// savina_bndbuffer: Savina's Producer-Consumer with Bounded Buffer. A manager agent mediates
// between producers and consumers through a buffer of bounded size: producers are told when to
// produce, consumers say when they are free. Measures a mediating agent's request-driven flow
// control under synthetic work on both sides.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_bndbuffer {
namespace {

// Savina's PseudoRandom: 0..65535, and 1/(n+1) as its double.
using savina::PseudoRandom;

// Savina's processItem, the synthetic cost of producing or consuming an item: `cost` x 100
// logarithms of its pseudo-random numbers (one with cost 0), the generator seeded with the cost.
double process_item(double current, std::int64_t cost) noexcept {
    double result = current;
    PseudoRandom random{std::uint64_t(cost)};
    if (cost > 0) {
        for (std::int64_t i = 0; i < cost; ++i)
            for (int j = 0; j < 100; ++j) result += std::log(std::abs(random.next_double()) + 0.01);
    } else {
        result += std::log(std::abs(random.next_double()) + 0.01);
    }
    return result;
}

struct Produce {};
struct Data {
    std::uint32_t producer;
    std::uint64_t seq;
    double value;
};
struct ConsumerAvailable {
    std::uint32_t consumer;
};
struct ProducerExit {};
struct ConsumerExit {};

struct Setup {
    std::uint32_t buffer_size;
    std::uint32_t producers;
    std::uint32_t consumers;
    std::uint64_t items;  // per producer
    std::int64_t produce_cost;
    std::int64_t consume_cost;
    DispatcherChoice& dispatchers;
    rt::Completion<bool>& done;
    // Times each item (producer * items + seq) was consumed, counted by the consumers.
    std::unique_ptr<std::atomic<std::uint32_t>[]> consumed;
    std::atomic<std::uint32_t> consumers_left;  // the last to exit ends the phase
};

class Manager;

class Producer final : public rt::Agent {
public:
    Producer(const Setup& setup, std::uint32_t id, Manager& manager)
        : setup_(setup), id_(id), manager_(manager) {
        subscribe<&Producer::on_produce>();
    }
    // Read after the run: each is written before the producer's exit message, which the manager
    // handles before it tells the consumers to exit, the last of which ends the phase.
    std::uint64_t produced() const noexcept { return produced_; }
    std::uint64_t handled() const noexcept { return handled_; }
    double sink() const noexcept { return item_; }

private:
    void on_produce(const Produce&);

    const Setup& setup_;
    const std::uint32_t id_;
    Manager& manager_;
    double item_ = 0.0;
    std::uint64_t produced_ = 0;
    std::uint64_t handled_ = 0;
};

class Consumer final : public rt::Agent {
public:
    Consumer(Setup& setup, std::uint32_t id, Manager& manager) : setup_(setup), id_(id), manager_(manager) {
        subscribe<&Consumer::on_data>();
        subscribe<&Consumer::on_exit>();
    }
    // Read after the run: written before the consumer's count-down, which ends the phase.
    std::uint64_t handled() const noexcept { return handled_; }
    double sink() const noexcept { return item_; }

private:
    void on_data(const Data& data);
    void on_exit(const ConsumerExit&) {
        ++handled_;
        // acq_rel: the last consumer acquires every other's writes before it ends the phase.
        if (setup_.consumers_left.fetch_sub(1, std::memory_order_acq_rel) == 1) setup_.done.set(true);
    }

    Setup& setup_;
    const std::uint32_t id_;
    Manager& manager_;
    double item_ = 0.0;
    std::uint64_t handled_ = 0;
};

// Savina's manager: it creates the producers and consumers when it starts, every consumer
// available, and tells every producer to produce.
class Manager final : public rt::Agent {
public:
    explicit Manager(Setup& setup)
        : setup_(setup), adjusted_(setup.buffer_size - setup.producers),
          producers_(setup.producers, nullptr), consumers_(setup.consumers, nullptr) {
        subscribe<&Manager::on_data>();
        subscribe<&Manager::on_available>();
        subscribe<&Manager::on_producer_exit>();
    }

    // Read after the run (see Producer).
    std::uint64_t handled() const noexcept { return handled_; }
    std::uint64_t over_buffer() const noexcept { return over_buffer_; }
    const std::vector<Producer*>& producers() const noexcept { return producers_; }
    const std::vector<Consumer*>& consumers() const noexcept { return consumers_; }

private:
    void on_start() override {
        environment().introduce_coop(setup_.dispatchers.binder(), [&](rt::Coop& coop) {
            for (std::uint32_t i = 0; i < setup_.consumers; ++i) {
                consumers_[i] = &coop.make_agent_with_binder<Consumer>(setup_.dispatchers.binder(i + 1), setup_, i, *this);
                available_.push_back(i);
            }
            for (std::uint32_t i = 0; i < setup_.producers; ++i)
                producers_[i] = &coop.make_agent_with_binder<Producer>(
                    setup_.dispatchers.binder(setup_.consumers + i + 1), setup_, i, *this);
        });
        for (Producer* producer : producers_) rt::send<Produce>(*producer);
    }

    void on_data(const Data& data) {
        ++handled_;
        if (available_.empty()) {
            pending_.push_back(data);
            if (pending_.size() > setup_.buffer_size) ++over_buffer_;
        } else {
            rt::send<Data>(*consumers_[available_.front()], data);
            available_.pop_front();
        }
        // Savina's adjusted size leaves room for an item from each producer in flight.
        if (pending_.size() >= adjusted_) parked_.push_back(data.producer);
        else rt::send<Produce>(*producers_[data.producer]);
    }

    void on_available(const ConsumerAvailable& available) {
        ++handled_;
        if (pending_.empty()) {
            available_.push_back(available.consumer);
            try_exit();
        } else {
            rt::send<Data>(*consumers_[available.consumer], pending_.front());
            pending_.pop_front();
            if (!parked_.empty()) {
                rt::send<Produce>(*producers_[parked_.front()]);
                parked_.pop_front();
            }
        }
    }

    void on_producer_exit(const ProducerExit&) {
        ++handled_;
        ++exited_;
        try_exit();
    }

    // Savina's manager exits once every producer has and every consumer is free, telling the
    // consumers to exit.
    void try_exit() {
        if (exited_ != setup_.producers || available_.size() != setup_.consumers) return;
        for (Consumer* consumer : consumers_) rt::send<ConsumerExit>(*consumer);
    }

    Setup& setup_;
    const std::uint64_t adjusted_;
    std::vector<Producer*> producers_;
    std::vector<Consumer*> consumers_;
    std::deque<std::uint32_t> available_;  // consumers, in the order they became free
    std::deque<std::uint32_t> parked_;     // producers waiting for room
    std::deque<Data> pending_;             // the buffer
    std::uint32_t exited_ = 0;
    std::uint64_t handled_ = 0;
    std::uint64_t over_buffer_ = 0;  // items that found the buffer full
};

void Producer::on_produce(const Produce&) {
    ++handled_;
    if (produced_ == setup_.items) {
        rt::send<ProducerExit>(manager_);
        return;
    }
    item_ = process_item(item_, setup_.produce_cost);
    rt::send<Data>(manager_, id_, produced_, item_);
    ++produced_;
}

void Consumer::on_data(const Data& data) {
    ++handled_;
    item_ = process_item(item_ + data.value, setup_.consume_cost);
    if (data.producer < setup_.producers && data.seq < setup_.items)
        setup_.consumed[data.producer * setup_.items + data.seq].fetch_add(1, std::memory_order_relaxed);
    rt::send<ConsumerAvailable>(manager_, id_);
}

std::string describe(std::uint64_t produced, std::uint64_t consumed, std::uint64_t once,
                     std::uint64_t short_producers, std::uint64_t over_buffer) {
    return "produced=" + std::to_string(produced) + " consumed=" + std::to_string(consumed) +
           " consumed_once=" + std::to_string(once) + " short_producers=" + std::to_string(short_producers) +
           " over_buffer=" + std::to_string(over_buffer);
}

std::uint64_t total_messages(std::uint64_t producers, std::uint64_t consumers, std::uint64_t items) {
    // Produce (items + 1 per producer, the last answered by its exit), each item to the manager,
    // on to a consumer, and its consumer's availability, the producers' and consumers' exits.
    return producers * (items + 1) + 3 * producers * items + producers + consumers;
}

volatile double g_sink;  // the synthetic work's results, so that no compiler drops it

Result run(const Params& params) {
    MeasuredRun<bool> run(params);
    Setup setup{.buffer_size = std::uint32_t(params.integer("buffer_size")),
                .producers = std::uint32_t(params.integer("producers")),
                .consumers = std::uint32_t(params.integer("consumers")),
                .items = std::uint64_t(params.integer("items_per_producer")),
                .produce_cost = params.integer("produce_cost"),
                .consume_cost = params.integer("consume_cost"),
                .dispatchers = run.dispatchers(),
                .done = run.done(),
                .consumed = {},
                .consumers_left = {}};
    const std::uint64_t items = std::uint64_t(setup.producers) * setup.items;
    setup.consumed = std::make_unique<std::atomic<std::uint32_t>[]>(items);
    for (std::uint64_t i = 0; i < items; ++i) setup.consumed[i].store(0, std::memory_order_relaxed);
    setup.consumers_left.store(setup.consumers, std::memory_order_relaxed);
    Manager* manager = nullptr;
    Result result;

    // The phase covers what Savina's clock does but the actor system's start and end: the manager
    // created, its producers and consumers created and started, every item produced and
    // consumed, until the last consumer has exited.
    run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
                manager = &coop.make_agent_with_binder<Manager>(dispatchers.binder(0), setup);
            });
        },
        [&](bool) {
            std::uint64_t handled = manager->handled(), produced = 0, short_producers = 0, once = 0, consumed = 0;
            double sink = 0.0;
            for (const Producer* producer : manager->producers()) {
                handled += producer->handled();
                produced += producer->produced();
                if (producer->produced() != setup.items) ++short_producers;
                sink += producer->sink();
            }
            for (const Consumer* consumer : manager->consumers()) {
                handled += consumer->handled();
                sink += consumer->sink();
            }
            for (std::uint64_t i = 0; i < items; ++i) {
                const std::uint32_t times = setup.consumed[i].load(std::memory_order_relaxed);
                consumed += times;
                if (times == 1) ++once;
            }
            g_sink = sink;
            result.messages_processed = handled;
            result.answer = describe(produced, consumed, once, short_producers, manager->over_buffer());
            result.expected = describe(items, items, items, 0, 0);
        });
    return result;
}

Expectation expect(const Params& params) {
    const auto producers = std::uint64_t(params.integer("producers"));
    const auto consumers = std::uint64_t(params.integer("consumers"));
    const auto items = std::uint64_t(params.integer("items_per_producer"));
    return {describe(producers * items, producers * items, producers * items, 0, 0),
            total_messages(producers, consumers, items)};
}

void check(const Params& params) {
    const auto buffer = params.integer("buffer_size");
    const auto producers = params.integer("producers");
    const auto consumers = params.integer("consumers");
    // With no room beyond an item in flight from each producer, Savina's manager parks a producer
    // with the buffer empty, and nothing ever wakes it.
    if (buffer <= producers)
        throw ParamError("savina_bndbuffer", "buffer_size",
                         "parameter 'buffer_size' (" + std::to_string(buffer) + ") must exceed 'producers' (" +
                             std::to_string(producers) + "): the manager keeps room for an item from each "
                             "producer in flight");
    if (std::uint64_t(producers) * std::uint64_t(params.integer("items_per_producer")) > 1'000'000'000)
        throw ParamError("savina_bndbuffer", "items_per_producer",
                         "producers * items_per_producer must be at most 1000000000 (each item is tracked)");
    check_thread_per_agent("savina_bndbuffer", params, std::uint64_t(producers + consumers + 1),
                           "producers=" + std::to_string(producers) + " consumers=" + std::to_string(consumers));
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("buffer_size", 50, {2, 10'000'000},
                      "items the manager's buffer holds (Savina's bufferSize); must exceed producers"),
        integer_param("producers", 40, {1, 100'000}, "producer agents (Savina's numProducers)"),
        integer_param("consumers", 40, {1, 100'000}, "consumer agents (Savina's numConsumers)"),
        integer_param("items_per_producer", 1'000, {0, 100'000'000},
                      "items each producer produces (Savina's numItemsPerProducer)"),
        integer_param("produce_cost", 25, {0, 100'000},
                      "synthetic work per item produced: cost x 100 logarithms (Savina's prodCost, its "
                      "processItem; 0: one)"),
        integer_param("consume_cost", 25, {0, 100'000},
                      "synthetic work per item consumed, as produce_cost (Savina's consCost)"),
    };
}

const Registration registration(Kernel{
    .name = "savina_bndbuffer",
    .summary = "`producers` producers and `consumers` consumers, `items_per_producer` items each, "
               "through a manager's bounded buffer: mediated flow control under synthetic work",
    .description =
        "Savina's benchmark 10, Producer-Consumer with Bounded Buffer (a concurrency benchmark). A "
        "manager agent creates `producers` producers and `consumers` consumers when it starts, "
        "every consumer available, and tells each producer to produce. A producer told to produce "
        "does Savina's synthetic work (produce_cost x 100 logarithms) and sends the item to the "
        "manager, which hands it to the first free consumer or keeps it in its buffer, and tells "
        "the producer to produce again unless the buffer holds buffer_size - producers items or "
        "more (then the producer waits until a consumer takes an item). A consumer does its "
        "synthetic work (consume_cost) on each item and tells the manager it is free, which gives "
        "it the oldest buffered item. A producer told to produce with all its items made tells "
        "the manager it has exited; once every producer has and every consumer is free the "
        "manager tells the consumers to exit. 4*producers*items_per_producer + 2*producers + "
        "consumers messages. Unlike producer_consumer, where producers send straight into one "
        "consumer's unbounded mailbox with no flow control, here a manager mediates between many "
        "producers and many consumers, each item is requested and handed on, and the buffer is "
        "bounded. The phase covers creating and starting the manager, the producers and the "
        "consumers, every item, until the last consumer has handled its exit. Differences from "
        "Savina: its clock also covers creating and shutting down the actor system (ours exists "
        "before the phase and stops after it); messages name producers and consumers by index and "
        "items carry their producer's sequence number; Savina's numMailboxes setting, which its "
        "Akka version ignores, is not a parameter.",
    .sources = {{"savina", "10. Producer-Consumer with Bounded Buffer (bndbuffer)"}},
    .verifies = "every producer produced its items and every item was consumed exactly once, the "
                "buffer never holding more than buffer_size items",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_bndbuffer
