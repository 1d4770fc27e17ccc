// The thread pool's ready list and worker loop.
#include "thread_pool.hpp"

#include <climits>
#include <mutex>
#include <stdexcept>

#include "../coop.hpp"
#include "../environment.hpp"

namespace labctl::rt {

ThreadPool::ThreadPool(Environment& environment, ThreadPoolParams params)
    : Dispatcher(environment), params_(params) {
    if (params_.threads == 0) throw std::invalid_argument("thread_pool: threads must be at least 1");
    if (params_.max_demands_at_once == 0)
        throw std::invalid_argument("thread_pool: max_demands_at_once must be at least 1");
    threads_.reserve(params_.threads);
    try {
        for (unsigned i = 0; i < params_.threads; ++i) threads_.push_back(environment_.spawn([this] { run(); }));
    } catch (...) {
        shutdown();
        throw;
    }
}

ThreadPool::~ThreadPool() { shutdown(); }

void ThreadPool::bind(Agent& agent, unsigned) {
    if (params_.fifo == Fifo::cooperation) {
        set_queue(agent, agent.coop().shared_queue(*this, *this));
    } else {
        auto* queue = pool::make<EventQueue>(static_cast<Scheduler&>(*this));
        binding(agent) = queue;
        set_queue(agent, *queue);
    }
}

void ThreadPool::unbind(Agent& agent) noexcept {
    if (void* queue = binding(agent)) pool::destroy(static_cast<EventQueue*>(queue));
}

void ThreadPool::shutdown() noexcept {
    // seq_cst: a worker about to park either sees stop_ or is woken below.
    stop_.store(true, std::memory_order_seq_cst);
    wake_seq_.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(wake_seq_, INT_MAX);
    for (std::thread& thread : threads_)
        if (thread.joinable()) thread.join();
}

void ThreadPool::push_ready(EventQueue& queue) noexcept {
    {
        std::lock_guard lock(ready_lock_);
        queue.next_ready = nullptr;
        if (ready_tail_ != nullptr) ready_tail_->next_ready = &queue;
        else ready_head_ = &queue;
        ready_tail_ = &queue;
        // seq_cst, with the sleepers_ load below: either a parking worker sees this count, or
        // we see it in sleepers_ and wake it (the parking side does the mirror image).
        ready_count_.fetch_add(1, std::memory_order_seq_cst);
    }
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
        wake_seq_.fetch_add(1, std::memory_order_release);
        futex_wake(wake_seq_, 1);
    }
}

EventQueue* ThreadPool::pop_ready() noexcept {
    if (ready_count_.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard lock(ready_lock_);
    EventQueue* queue = ready_head_;
    if (queue == nullptr) return nullptr;
    ready_head_ = queue->next_ready;
    if (ready_head_ == nullptr) ready_tail_ = nullptr;
    queue->next_ready = nullptr;
    ready_count_.fetch_sub(1, std::memory_order_relaxed);
    return queue;
}

bool ThreadPool::wait_for_work() noexcept {
    const auto spin = environment_.spin();
    for (;;) {
        if (spin_until([this] { return ready_count_.load(std::memory_order_relaxed) > 0 ||
                                       stop_.load(std::memory_order_relaxed); },
                       spin)) {
            if (ready_count_.load(std::memory_order_relaxed) > 0) return true;
            return false;  // stopping, and nothing left
        }
        const std::uint32_t seq = wake_seq_.load(std::memory_order_acquire);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        if (ready_count_.load(std::memory_order_seq_cst) > 0 || stop_.load(std::memory_order_seq_cst)) {
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
            continue;
        }
        futex_wait(wake_seq_, seq);
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
}

void ThreadPool::run() {
    ExecutionContext context;
    const std::uint32_t budget = params_.max_demands_at_once;
    for (;;) {
        EventQueue* queue = pop_ready();
        if (queue == nullptr) {
            if (!wait_for_work()) break;
            continue;
        }
        {
            ConsumeScope consuming(*queue);
            queue->take_inbox();
            for (std::uint32_t n = 0; n < budget; ++n) {
                Envelope* e = queue->pop();
                if (e == nullptr) break;
                execute(*e, context);
            }
        }
        // Still has work, or work arrived before it could sleep: back of the line. After a
        // successful try_sleep the queue belongs to whoever wakes it; we do not touch it again.
        if (queue->has_work() || !queue->try_sleep()) push_ready(*queue);
        reap_finished(context);
    }
    environment_.leave_thread(context);
}

}  // namespace labctl::rt
