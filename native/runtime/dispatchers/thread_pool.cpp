// thread_pool's policies (adv_thread_pool's too): every ready queue in one shared FIFO, but, with
// wake=lifo, for those in each worker's LIFO stack.
#include "thread_pool.hpp"

namespace labctl::rt {
namespace {

// wake=fifo, SObjectizer's: one FIFO of ready queues and nothing else; a queue a worker's send
// wakes waits behind every queue already there, and whichever idle worker looks first takes it.
class OneFifo final : public ReadyQueues {
public:
    bool push(EventQueue& queue, int, bool) noexcept override {
        list_.push(queue);
        return true;
    }
    EventQueue* pop(int) noexcept override { return list_.take(); }
    bool maybe_ready() const noexcept override { return !list_.empty(); }

private:
    ReadyList list_;
};

class SharedFifo final : public ReadyQueues {
public:
    explicit SharedFifo(unsigned workers) : stacks_(new Stack[workers]) {}

    // A queue woken by a worker's send goes to that worker's stack. Without it, it went to
    // the shared list, where the other worker, spinning idle, took it at once: with individual
    // FIFO every message then crossed cores (thread_ring actors=503 on 2 threads: 250 ns a hop,
    // 30x one_thread).
    bool push(EventQueue& queue, int worker, bool woken) noexcept override {
        EventQueue* shared = &queue;
        if (woken && worker != kNotAWorker) {
            shared = stacks_[worker].put(queue);
            if (shared == nullptr) return false;
        }
        list_.push(*shared);
        return true;
    }

    EventQueue* pop(int worker) noexcept override {
        LifoStack& stack = stacks_[worker];
        if (EventQueue* queue = stack.take_in_turn()) return queue;
        // The stack's streak is over: its oldest goes behind the others (see LifoStack).
        if (EventQueue* oldest = stack.take_oldest()) list_.push(*oldest);
        if (EventQueue* queue = list_.take()) return queue;
        return stack.take();
    }

    // The stacks are left out: only their owner can run them, and it looks there first.
    bool maybe_ready() const noexcept override { return !list_.empty(); }
    bool maybe_ready_for(int worker) const noexcept override {
        return !stacks_[worker].empty() || maybe_ready();
    }

private:
    // Lines of their own: a stack is written by its worker on nearly every send that wakes a queue.
    struct alignas(64) Stack : LifoStack {};

    const std::unique_ptr<Stack[]> stacks_;
    ReadyList list_;
};

}  // namespace

std::unique_ptr<ReadyQueues> make_shared_fifo(unsigned workers, Wake wake) {
    if (wake == Wake::fifo) return std::make_unique<OneFifo>();
    return std::make_unique<SharedFifo>(workers);
}

ThreadPool::ThreadPool(Environment& environment, DispatcherParams params)
    : WorkerPool(environment, params, make_shared_fifo(params.threads, params.wake)) {
    start();
}

}  // namespace labctl::rt
