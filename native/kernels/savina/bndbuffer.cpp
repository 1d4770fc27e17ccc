// savina_bndbuffer: Savina's Producer-Consumer with Bounded Buffer. A manager agent mediates
// between producers and consumers through a buffer of bounded size: producers are told when to
// produce, consumers say when they are free. Measures a mediating agent's request-driven flow
// control under synthetic work on both sides.
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "bndbuffer.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_bndbuffer {
namespace {

struct Setup {
    std::uint32_t buffer_size;
    std::uint32_t producers;
    std::uint32_t consumers;
    std::uint64_t items;  // per producer
    std::int64_t produce_cost;
    std::int64_t consume_cost;
    DispatcherChoice& dispatchers;
    rt::Completion<bool>& done;
    Consumed& consumed;
};

class Manager;

class ProducerAgent final : public rt::Agent {
public:
    ProducerAgent(const Setup& setup, std::uint32_t id, Manager& manager)
        : producer_(id, setup.items, setup.produce_cost), manager_(manager) {
        subscribe<&ProducerAgent::on_produce>();
    }
    // Read after the run: written before the producer's exit message, which the manager handles
    // before it tells the consumers to exit, the last of which ends the phase.
    const Producer& producer() const noexcept { return producer_; }

private:
    void on_produce(const Produce&);

    Producer producer_;
    Manager& manager_;
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
        if (setup_.consumed.exited()) setup_.done.set(true);
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
        : setup_(setup), buffer_(setup.buffer_size, setup.producers, setup.consumers),
          producers_(setup.producers, nullptr), consumers_(setup.consumers, nullptr) {
        subscribe<&Manager::on_data>();
        subscribe<&Manager::on_available>();
        subscribe<&Manager::on_producer_exit>();
    }

    // Read after the run (see ProducerAgent).
    const Buffer& buffer() const noexcept { return buffer_; }
    const std::vector<ProducerAgent*>& producers() const noexcept { return producers_; }
    const std::vector<Consumer*>& consumers() const noexcept { return consumers_; }

private:
    void on_start() override {
        environment().introduce_coop(setup_.dispatchers.binder(), [&](rt::Coop& coop) {
            for (std::uint32_t i = 0; i < setup_.consumers; ++i)
                consumers_[i] = &coop.make_agent_with_binder<Consumer>(setup_.dispatchers.binder(i + 1), setup_, i, *this);
            for (std::uint32_t i = 0; i < setup_.producers; ++i)
                producers_[i] = &coop.make_agent_with_binder<ProducerAgent>(
                    setup_.dispatchers.binder(setup_.consumers + i + 1), setup_, i, *this);
        });
        for (ProducerAgent* producer : producers_) rt::send<Produce>(*producer);
    }

    void on_data(const Data& data) {
        const Buffer::OnData action = buffer_.data(data);
        if (action.consumer != kNobody) rt::send<Data>(*consumers_[action.consumer], data);
        if (action.producer != kNobody) rt::send<Produce>(*producers_[action.producer]);
    }

    void on_available(const ConsumerAvailable& available) {
        const Buffer::OnAvailable action = buffer_.available(available.consumer);
        if (action.give) rt::send<Data>(*consumers_[available.consumer], action.item);
        if (action.producer != kNobody) rt::send<Produce>(*producers_[action.producer]);
        if (action.exit) exit_all();
    }

    void on_producer_exit(const ProducerExit&) {
        if (buffer_.producer_exited()) exit_all();
    }

    void exit_all() {
        for (Consumer* consumer : consumers_) rt::send<ConsumerExit>(*consumer);
    }

    Setup& setup_;
    Buffer buffer_;
    std::vector<ProducerAgent*> producers_;
    std::vector<Consumer*> consumers_;
};

void ProducerAgent::on_produce(const Produce&) {
    Data item{};
    if (producer_.produce(item)) rt::send<Data>(manager_, item);
    else rt::send<ProducerExit>(manager_);
}

void Consumer::on_data(const Data& data) {
    ++handled_;
    item_ = process_item(item_ + data.value, setup_.consume_cost);
    setup_.consumed.consumed(data);
    rt::send<ConsumerAvailable>(manager_, id_);
}

Result run(const Params& params) {
    MeasuredRun<bool> run(params);
    const auto producers = std::uint32_t(params.integer("producers"));
    const auto consumers = std::uint32_t(params.integer("consumers"));
    const auto items = std::uint64_t(params.integer("items_per_producer"));
    Consumed consumed(producers, items, consumers);
    Setup setup{.buffer_size = std::uint32_t(params.integer("buffer_size")),
                .producers = producers,
                .consumers = consumers,
                .items = items,
                .produce_cost = params.integer("produce_cost"),
                .consume_cost = params.integer("consume_cost"),
                .dispatchers = run.dispatchers(),
                .done = run.done(),
                .consumed = consumed};
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
            std::uint64_t handled = manager->buffer().handled(), produced = 0, short_producers = 0;
            double sink = 0.0;
            for (const ProducerAgent* agent : manager->producers()) {
                const Producer& producer = agent->producer();
                handled += producer.handled();
                produced += producer.produced();
                if (producer.produced() != items) ++short_producers;
                sink += producer.sink();
            }
            for (const Consumer* consumer : manager->consumers()) {
                handled += consumer->handled();
                sink += consumer->sink();
            }
            report(result, consumed, manager->buffer(), handled, produced, short_producers, sink,
                   std::uint64_t(producers) * items);
        });
    return result;
}

void check(const Params& params) {
    check_sizes("savina_bndbuffer", params);
    const auto producers = params.integer("producers");
    const auto consumers = params.integer("consumers");
    check_thread_per_agent("savina_bndbuffer", params, std::uint64_t(producers + consumers + 1),
                           "producers=" + std::to_string(producers) + " consumers=" + std::to_string(consumers));
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
