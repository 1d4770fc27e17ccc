// thread_pool's policy: every ready queue in one shared FIFO, but for the one in each worker's
// LIFO slot (adv_thread_pool's too).
#include "thread_pool.hpp"

namespace labctl::rt {
namespace {

class SharedFifo final : public ReadyQueues {
public:
    explicit SharedFifo(unsigned workers) : slots_(new Slot[workers]) {}

    // A queue woken by a worker's send goes to that worker's slot. Without the slot it went to
    // the shared list, where the other worker, spinning idle, took it at once: with individual
    // FIFO every message then crossed cores (thread_ring actors=503 on 2 threads: 250 ns a hop,
    // 30x one_thread).
    bool push(EventQueue& queue, int worker, bool woken) noexcept override {
        EventQueue* shared = &queue;
        if (woken && worker != kNotAWorker) {
            shared = slots_[worker].put(queue);
            if (shared == nullptr) return false;
        }
        list_.push(*shared);
        return true;
    }

    EventQueue* pop(int worker) noexcept override {
        LifoSlot& slot = slots_[worker];
        if (EventQueue* queue = slot.take_in_turn()) return queue;
        if (EventQueue* queue = list_.take()) return queue;
        return slot.take();
    }

    // The slots are left out: only their owner can run them, and it looks there first.
    bool maybe_ready() const noexcept override { return !list_.empty(); }
    bool maybe_ready_for(int worker) const noexcept override {
        return !slots_[worker].empty() || maybe_ready();
    }

private:
    // A cache line each: a slot is written by its worker on nearly every send that wakes a queue.
    struct alignas(64) Slot : LifoSlot {};

    const std::unique_ptr<Slot[]> slots_;
    ReadyList list_;
};

}  // namespace

std::unique_ptr<ReadyQueues> make_shared_fifo(unsigned workers) { return std::make_unique<SharedFifo>(workers); }

ThreadPool::ThreadPool(Environment& environment, DispatcherParams params)
    : WorkerPool(environment, params, make_shared_fifo(params.threads)) {
    start();
}

}  // namespace labctl::rt
