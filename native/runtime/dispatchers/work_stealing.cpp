// The ready queues of work_stealing: per worker a LIFO stack and a bounded stealable FIFO, plus a
// shared injector; an idle worker steals from the others.
#include "work_stealing.hpp"

#include <array>
#include <utility>

namespace labctl::rt {
namespace {

// A bounded FIFO that one thread (its owner) pushes onto and any thread takes from. The owner
// publishes a slot with a release store of tail; takers claim it with a CAS on head. A taker's
// CAS fails if the slot it read was reused meanwhile: reuse needs head to move past it first.
class StealableFifo {
public:
    static constexpr std::uint32_t kCapacity = 256;

    // Owner only; false when full.
    bool push(EventQueue* queue) noexcept {
        const std::uint32_t tail = tail_.load(std::memory_order_relaxed);
        // acquire: a slot freed by a taker is not read by it any more once head moved.
        if (tail - head_.load(std::memory_order_acquire) >= kCapacity) return false;
        slots_[tail % kCapacity].store(queue, std::memory_order_relaxed);
        // release: the slot, and the queue's state, are visible to whoever reads this tail.
        tail_.store(tail + 1, std::memory_order_release);
        return true;
    }

    // Any thread: the oldest queue, or nullptr.
    EventQueue* take() noexcept {
        std::uint32_t head = head_.load(std::memory_order_acquire);
        for (;;) {
            // acquire: pairs with push's release; the slot below is published.
            if (head == tail_.load(std::memory_order_acquire)) return nullptr;
            EventQueue* queue = slots_[head % kCapacity].load(std::memory_order_relaxed);
            if (head_.compare_exchange_weak(head, head + 1, std::memory_order_acq_rel,
                                            std::memory_order_acquire))
                return queue;
        }
    }

    bool empty() const noexcept {
        return head_.load(std::memory_order_relaxed) == tail_.load(std::memory_order_relaxed);
    }

private:
    alignas(64) std::atomic<std::uint32_t> head_{0};  // takers
    alignas(64) std::atomic<std::uint32_t> tail_{0};  // the owner
    std::array<std::atomic<EventQueue*>, kCapacity> slots_{};
};

class StealingQueues final : public ReadyQueues {
public:
    explicit StealingQueues(unsigned workers) : workers_(workers), locals_(new Local[workers]) {
        for (unsigned i = 0; i < workers; ++i) locals_[i].victim = i + 1;
    }

    bool push(EventQueue& queue, int worker, bool woken) noexcept override {
        if (worker == kNotAWorker) {
            injector_.push(queue);
            return true;
        }
        Local& local = locals_[worker];
        EventQueue* stealable = &queue;
        if (woken) {
            // The one the LIFO stack displaces becomes stealable.
            stealable = local.lifo.put(queue);
            if (stealable == nullptr) return false;
        }
        make_stealable(local, *stealable);
        return true;
    }

    EventQueue* pop(int worker) noexcept override {
        Local& local = locals_[worker];
        if (EventQueue* queue = local.lifo.take_in_turn()) return queue;
        // The stack's streak is over: its oldest goes behind the others (see LifoStack).
        if (EventQueue* oldest = local.lifo.take_oldest()) make_stealable(local, *oldest);
        if (EventQueue* queue = local.fifo.take()) return queue;
        if (EventQueue* queue = local.lifo.take()) return queue;
        if (EventQueue* queue = injector_.take()) return queue;
        // Steal: the others' FIFOs in turn, starting at a different victim each time.
        for (unsigned tries = 0; tries + 1 < workers_; ++tries) {
            local.victim = (local.victim + 1) % workers_;
            if (local.victim == unsigned(worker)) local.victim = (local.victim + 1) % workers_;
            if (EventQueue* queue = locals_[local.victim].fifo.take()) return queue;
        }
        return nullptr;
    }

    // LIFO stacks are left out: only their owner can run them, and it looks there first.
    bool maybe_ready() const noexcept override {
        if (!injector_.empty()) return true;
        for (unsigned i = 0; i < workers_; ++i)
            if (!locals_[i].fifo.empty()) return true;
        return false;
    }

    // The worker's own LIFO stack counts: a queue its handlers woke waits there for it alone.
    bool maybe_ready_for(int worker) const noexcept override {
        return !locals_[worker].lifo.empty() || maybe_ready();
    }

private:
    struct alignas(64) Local {
        StealableFifo fifo;
        LifoStack lifo;       // owner only
        unsigned victim = 0;  // owner only: where stealing starts next
    };

    // Owner only: into its FIFO, or the injector when that is full.
    void make_stealable(Local& local, EventQueue& queue) noexcept {
        if (!local.fifo.push(&queue)) injector_.push(queue);
    }

    const unsigned workers_;
    const std::unique_ptr<Local[]> locals_;
    ReadyList injector_;  // queues pushed from outside the pool, or that a full FIFO refused
};

}  // namespace

WorkStealing::WorkStealing(Environment& environment, DispatcherParams params)
    : WorkerPool(environment, params, std::make_unique<StealingQueues>(params.threads)) {
    start();
}

}  // namespace labctl::rt
