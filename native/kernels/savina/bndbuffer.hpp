// What every savina_bndbuffer kernel (ours, caf_savina_bndbuffer) shares: Savina's synthetic
// work, the manager's buffer and its decisions, the count of each item consumed, the checks, the
// answer and its format, so that both runtimes are verified the same way.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_bndbuffer {

// Savina's PseudoRandom: 0..65535, and 1/(n+1) as its double.
using savina::PseudoRandom;

// Savina's processItem, the synthetic cost of producing or consuming an item: `cost` x 100
// logarithms of its pseudo-random numbers (one with cost 0), the generator seeded with the cost.
inline double process_item(double current, std::int64_t cost) noexcept {
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

// The messages, one protocol for ours and caf_savina_bndbuffer (its CAF port).
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

inline constexpr std::uint32_t kNobody = ~std::uint32_t{0};

// The manager's side, on any runtime (Savina's ManagerActor): its buffer, the consumers free and
// the producers waiting for room, and what to send on each message.
class Buffer {
public:
    Buffer(std::uint32_t buffer_size, std::uint32_t producers, std::uint32_t consumers)
        : buffer_size_(buffer_size), adjusted_(buffer_size - producers), producers_(producers),
          consumers_(consumers) {
        for (std::uint32_t i = 0; i < consumers; ++i) available_.push_back(i);
    }

    // An item came: the consumer to hand it to now (kNobody: it is buffered), and the producer
    // to tell to produce again (kNobody: parked until a consumer takes an item).
    struct OnData {
        std::uint32_t consumer;
        std::uint32_t producer;
    };
    OnData data(const Data& data) {
        ++handled_;
        OnData action{kNobody, kNobody};
        if (available_.empty()) {
            pending_.push_back(data);
            if (pending_.size() > buffer_size_) ++over_buffer_;
        } else {
            action.consumer = available_.front();
            available_.pop_front();
        }
        // Savina's adjusted size leaves room for an item from each producer in flight.
        if (pending_.size() >= adjusted_) parked_.push_back(data.producer);
        else action.producer = data.producer;
        return action;
    }

    // A consumer is free: with `give`, the oldest buffered item goes to it and the producer
    // (kNobody: none) is told to produce again; with `exit`, every consumer is told to exit.
    struct OnAvailable {
        bool give;
        Data item;
        std::uint32_t producer;
        bool exit;
    };
    OnAvailable available(std::uint32_t consumer) {
        ++handled_;
        if (pending_.empty()) {
            available_.push_back(consumer);
            return {false, {}, kNobody, ready_to_exit()};
        }
        OnAvailable action{true, pending_.front(), kNobody, false};
        pending_.pop_front();
        if (!parked_.empty()) {
            action.producer = parked_.front();
            parked_.pop_front();
        }
        return action;
    }

    // A producer made all its items: true where every consumer is now told to exit.
    bool producer_exited() {
        ++handled_;
        ++exited_;
        return ready_to_exit();
    }

    std::uint64_t handled() const noexcept { return handled_; }
    std::uint64_t over_buffer() const noexcept { return over_buffer_; }

private:
    // Savina's manager exits once every producer has and every consumer is free.
    bool ready_to_exit() const noexcept { return exited_ == producers_ && available_.size() == consumers_; }

    const std::uint64_t buffer_size_;
    const std::uint64_t adjusted_;
    const std::uint32_t producers_;
    const std::uint32_t consumers_;
    std::deque<std::uint32_t> available_;  // consumers, in the order they became free
    std::deque<std::uint32_t> parked_;     // producers waiting for room
    std::deque<Data> pending_;             // the buffer
    std::uint32_t exited_ = 0;
    std::uint64_t handled_ = 0;
    std::uint64_t over_buffer_ = 0;  // items that found the buffer full
};

// A producer's side, on any runtime: the next item, or none once all are made.
class Producer {
public:
    Producer(std::uint32_t id, std::uint64_t items, std::int64_t cost) noexcept : id_(id), items_(items), cost_(cost) {}
    // Told to produce: true with the next item in `item`, false once all are made (then it exits).
    bool produce(Data& item) {
        ++handled_;
        if (produced_ == items_) return false;
        value_ = process_item(value_, cost_);
        item = {id_, produced_, value_};
        ++produced_;
        return true;
    }
    std::uint64_t produced() const noexcept { return produced_; }
    std::uint64_t handled() const noexcept { return handled_; }
    double sink() const noexcept { return value_; }

private:
    const std::uint32_t id_;
    const std::uint64_t items_;
    const std::int64_t cost_;
    double value_ = 0.0;
    std::uint64_t produced_ = 0;
    std::uint64_t handled_ = 0;
};

// Times each item (producer * items + seq) was consumed, counted by the consumers, and the
// consumers' ends: the last to exit ends the phase.
class Consumed {
public:
    Consumed(std::uint32_t producers, std::uint64_t items, std::uint32_t consumers)
        : producers_(producers), items_(items), counts_(std::make_unique<std::atomic<std::uint32_t>[]>(producers * items)),
          consumers_left_(consumers) {
        for (std::uint64_t i = 0; i < producers * items; ++i) counts_[i].store(0, std::memory_order_relaxed);
    }
    void consumed(const Data& data) {
        // Relaxed: the counts are read once the last consumer has exited (below).
        if (data.producer < producers_ && data.seq < items_)
            counts_[data.producer * items_ + data.seq].fetch_add(1, std::memory_order_relaxed);
    }
    // A consumer exited: true for the last.
    bool exited() {
        // acq_rel: the last consumer acquires every other's writes before it ends the phase.
        return consumers_left_.fetch_sub(1, std::memory_order_acq_rel) == 1;
    }
    // The items consumed and those consumed exactly once, read once every consumer has exited.
    void count(std::uint64_t& consumed, std::uint64_t& once) const {
        consumed = once = 0;
        for (std::uint64_t i = 0; i < producers_ * items_; ++i) {
            const std::uint32_t times = counts_[i].load(std::memory_order_relaxed);
            consumed += times;
            if (times == 1) ++once;
        }
    }

private:
    const std::uint64_t producers_;
    const std::uint64_t items_;
    std::unique_ptr<std::atomic<std::uint32_t>[]> counts_;
    std::atomic<std::uint32_t> consumers_left_;
};

inline std::string describe(std::uint64_t produced, std::uint64_t consumed, std::uint64_t once,
                     std::uint64_t short_producers, std::uint64_t over_buffer) {
    return "produced=" + std::to_string(produced) + " consumed=" + std::to_string(consumed) +
           " consumed_once=" + std::to_string(once) + " short_producers=" + std::to_string(short_producers) +
           " over_buffer=" + std::to_string(over_buffer);
}

inline std::uint64_t total_messages(std::uint64_t producers, std::uint64_t consumers, std::uint64_t items) {
    // Produce (items + 1 per producer, the last answered by its exit), each item to the manager,
    // on to a consumer, and its consumer's availability, the producers' and consumers' exits.
    return producers * (items + 1) + 3 * producers * items + producers + consumers;
}

inline volatile double g_sink;  // the synthetic work's results, so that no compiler drops it

// A run's figures, once every consumer has exited: `handled` the messages every actor handled,
// `sink` their synthetic work's results.
inline void report(Result& result, const Consumed& consumed, const Buffer& buffer, std::uint64_t handled,
                   std::uint64_t produced, std::uint64_t short_producers, double sink, std::uint64_t items) {
    std::uint64_t total = 0, once = 0;
    consumed.count(total, once);
    g_sink = sink;
    result.messages_processed = handled;
    result.answer = describe(produced, total, once, short_producers, buffer.over_buffer());
    result.expected = describe(items, items, items, 0, 0);
}

inline Expectation expect(const Params& params) {
    const auto producers = std::uint64_t(params.integer("producers"));
    const auto consumers = std::uint64_t(params.integer("consumers"));
    const auto items = std::uint64_t(params.integer("items_per_producer"));
    return {describe(producers * items, producers * items, producers * items, 0, 0),
            total_messages(producers, consumers, items)};
}

// What the parameters must satisfy together, on any runtime.
inline void check_sizes(const std::string& kernel, const Params& params) {
    const auto buffer = params.integer("buffer_size");
    const auto producers = params.integer("producers");
    // With no room beyond an item in flight from each producer, Savina's manager parks a producer
    // with the buffer empty, and nothing ever wakes it.
    if (buffer <= producers)
        throw ParamError(kernel, "buffer_size",
                         "parameter 'buffer_size' (" + std::to_string(buffer) + ") must exceed 'producers' (" +
                             std::to_string(producers) + "): the manager keeps room for an item from each "
                             "producer in flight");
    if (std::uint64_t(producers) * std::uint64_t(params.integer("items_per_producer")) > 1'000'000'000)
        throw ParamError(kernel, "items_per_producer",
                         "producers * items_per_producer must be at most 1000000000 (each item is tracked)");
}

inline std::vector<ParamSpec> own_params() {
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

}  // namespace labctl::kernels::savina_bndbuffer
