// caf_savina_bndbuffer: savina_bndbuffer on CAF 0.17. A manager actor mediates between producers
// and consumers through a buffer of bounded size: producers are told when to produce, consumers
// say when they are free.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/bndbuffer.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_bndbuffer {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Produce&) {
    return f(caf::meta::type_name("Produce"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Data& x) {
    return f(caf::meta::type_name("Data"), x.producer, x.seq, x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ConsumerAvailable& x) {
    return f(caf::meta::type_name("ConsumerAvailable"), x.consumer);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ProducerExit&) {
    return f(caf::meta::type_name("ProducerExit"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ConsumerExit&) {
    return f(caf::meta::type_name("ConsumerExit"));
}

}  // namespace labctl::kernels::savina_bndbuffer

namespace labctl::kernels::caf_savina_bndbuffer {
namespace {

using savina_bndbuffer::Buffer;
using savina_bndbuffer::Consumed;
using savina_bndbuffer::ConsumerAvailable;
using savina_bndbuffer::ConsumerExit;
using savina_bndbuffer::Data;
using savina_bndbuffer::kNobody;
using savina_bndbuffer::Produce;
using savina_bndbuffer::Producer;
using savina_bndbuffer::ProducerExit;

// What a consumer leaves for the kernel to read.
struct ConsumerFigures {
    std::uint64_t handled = 0;
    double sink = 0.0;
};

// The kernel's, read once the last consumer has exited: every producer's and consumer's figures
// are written before its last message, which the manager or the last consumer's count-down
// (Consumed::exited, acq_rel) orders before the completion.
struct Figures {
    std::vector<Producer> producers;
    std::vector<ConsumerFigures> consumers;
};

class ProducerActor final : public caf::event_based_actor {
public:
    ProducerActor(caf::actor_config& config, caf_support::CafRun& run, Producer& producer, caf::actor manager)
        : caf::event_based_actor(config), producer_(producer), manager_(std::move(manager)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Produce&) {
            Data item{};
            if (producer_.produce(item)) {
                send(manager_, item);
                return;
            }
            send(manager_, ProducerExit{});
            quit();
        }};
    }

    // The manager and its producers hold handles to each other: let go, or none is ever freed.
    void on_exit() override { manager_ = nullptr; }

private:
    Producer& producer_;
    caf::actor manager_;
};

class ConsumerActor final : public caf::event_based_actor {
public:
    ConsumerActor(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t id, std::int64_t cost,
                  ConsumerFigures& figures, Consumed& consumed, rt::Completion<bool>& done, caf::actor manager)
        : caf::event_based_actor(config), id_(id), cost_(cost), figures_(figures), consumed_(consumed), done_(done),
          manager_(std::move(manager)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Data& data) {
                ++figures_.handled;
                figures_.sink = savina_bndbuffer::process_item(figures_.sink + data.value, cost_);
                consumed_.consumed(data);
                send(manager_, ConsumerAvailable{id_});
            },
            [this](const ConsumerExit&) {
                ++figures_.handled;
                quit();
                if (consumed_.exited()) done_.set(true);
            },
        };
    }

    void on_exit() override { manager_ = nullptr; }

private:
    const std::uint32_t id_;
    const std::int64_t cost_;
    ConsumerFigures& figures_;
    Consumed& consumed_;
    rt::Completion<bool>& done_;
    caf::actor manager_;
};

// Savina's manager: it spawns the producers and consumers when it starts, every consumer
// available, and tells every producer to produce.
class Manager final : public caf::event_based_actor {
public:
    Manager(caf::actor_config& config, caf_support::CafRun& run, const Params& params, Figures& figures,
            Consumed& consumed, rt::Completion<bool>& done)
        : caf::event_based_actor(config), run_(run), figures_(figures), consumed_(consumed), done_(done),
          consume_cost_(params.integer("consume_cost")),
          buffer_(std::uint32_t(params.integer("buffer_size")), std::uint32_t(figures.producers.size()),
                  std::uint32_t(figures.consumers.size())) {
        run.watch(*this);
    }

    // Read after the run (see Figures).
    const Buffer& buffer() const noexcept { return buffer_; }

    caf::behavior make_behavior() override {
        const caf::actor self(this);
        consumers_.reserve(figures_.consumers.size());
        for (std::uint32_t i = 0; i < figures_.consumers.size(); ++i)
            consumers_.push_back(spawn<ConsumerActor>(std::ref(run_), i, consume_cost_, std::ref(figures_.consumers[i]),
                                                      std::ref(consumed_), std::ref(done_), self));
        producers_.reserve(figures_.producers.size());
        for (Producer& producer : figures_.producers)
            producers_.push_back(spawn<ProducerActor>(std::ref(run_), std::ref(producer), self));
        for (const caf::actor& producer : producers_) send(producer, Produce{});
        return {
            [this](const Data& data) {
                const Buffer::OnData action = buffer_.data(data);
                if (action.consumer != kNobody) send(consumers_[action.consumer], data);
                if (action.producer != kNobody) send(producers_[action.producer], Produce{});
            },
            [this](const ConsumerAvailable& available) {
                const Buffer::OnAvailable action = buffer_.available(available.consumer);
                if (action.give) send(consumers_[available.consumer], action.item);
                if (action.producer != kNobody) send(producers_[action.producer], Produce{});
                if (action.exit) exit_all();
            },
            [this](const ProducerExit&) {
                if (buffer_.producer_exited()) exit_all();
            },
        };
    }

    void on_exit() override {
        producers_.clear();
        consumers_.clear();
    }

private:
    void exit_all() {
        for (const caf::actor& consumer : consumers_) send(consumer, ConsumerExit{});
    }

    caf_support::CafRun& run_;
    Figures& figures_;
    Consumed& consumed_;
    rt::Completion<bool>& done_;
    const std::int64_t consume_cost_;
    Buffer buffer_;
    std::vector<caf::actor> producers_;
    std::vector<caf::actor> consumers_;
};

Result run(const Params& params) {
    const auto producers = std::uint32_t(params.integer("producers"));
    const auto consumers = std::uint32_t(params.integer("consumers"));
    const auto items = std::uint64_t(params.integer("items_per_producer"));
    const auto produce_cost = params.integer("produce_cost");

    rt::Completion<bool> done;
    Consumed consumed(producers, items, consumers);
    Figures figures;
    figures.producers.reserve(producers);
    for (std::uint32_t i = 0; i < producers; ++i) figures.producers.emplace_back(i, items, produce_cost);
    figures.consumers.resize(consumers);
    caf_support::CafRun caf(params, done);

    // As savina_bndbuffer's phase: the manager spawned, its producers and consumers spawned and
    // started, every item produced and consumed, until the last consumer has exited (the actor
    // system is started before it).
    caf_support::CafPhase phase(caf);
    const caf::actor handle = caf.system().spawn<Manager>(std::ref(caf), std::cref(params), std::ref(figures),
                                                          std::ref(consumed), std::ref(done));
    const Manager& manager = caf.keep<Manager>(handle);
    caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());

    std::uint64_t handled = manager.buffer().handled(), produced = 0, short_producers = 0;
    double sink = 0.0;
    for (const Producer& producer : figures.producers) {
        handled += producer.handled();
        produced += producer.produced();
        if (producer.produced() != items) ++short_producers;
        sink += producer.sink();
    }
    for (const ConsumerFigures& consumer : figures.consumers) {
        handled += consumer.handled;
        sink += consumer.sink;
    }
    savina_bndbuffer::report(result, consumed, manager.buffer(), handled, produced, short_producers, sink,
                             std::uint64_t(producers) * items);
    caf.stop();
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_bndbuffer",
    .summary = "savina_bndbuffer on CAF 0.17: `producers` producers and `consumers` consumers, "
               "`items_per_producer` items each, through a manager's bounded buffer",
    .description =
        "As savina_bndbuffer (Savina's 10, Producer-Consumer with Bounded Buffer), on CAF 0.17: "
        "the kernel spawns the manager, which spawns `consumers` consumers and `producers` "
        "producers when it starts, every consumer available, and tells each producer to produce. "
        "A producer told to produce does Savina's synthetic work and sends the item to the "
        "manager, which hands it to the first free consumer or buffers it, and tells the producer "
        "to produce again unless the buffer holds buffer_size - producers items or more; a "
        "consumer does its work on each item and tells the manager it is free, which gives it the "
        "oldest buffered item; a producer with all its items made tells the manager it has "
        "exited and quits; once every producer has and every consumer is free the manager tells "
        "the consumers to exit, and each quits. The manager's decisions are ours, in one class "
        "both share. The phase runs from spawning the manager until the last consumer has "
        "handled its exit (the actor system is started before it). Differences from Savina as "
        "savina_bndbuffer's, and: the manager spawns the others in its make_behavior (Savina's "
        "in its constructor) and does not exit itself (the run's stop ends it).",
    .sources = {{"savina", "10. Producer-Consumer with Bounded Buffer (bndbuffer)"}},
    .verifies = "every producer produced its items and every item was consumed exactly once, the "
                "buffer never holding more than buffer_size items",
    .params = schema(savina_bndbuffer::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = [](const Params& params) { savina_bndbuffer::check_sizes("caf_savina_bndbuffer", params); },
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_bndbuffer
