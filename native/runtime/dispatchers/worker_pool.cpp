// The worker loop of a pool, its binding of agents to queues, and how idle workers park.
#include "worker_pool.hpp"

#include <climits>
#include <mutex>
#include <stdexcept>

#include "../coop.hpp"
#include "../environment.hpp"

namespace labctl::rt {

void ReadyList::push(EventQueue& queue) noexcept {
    std::lock_guard lock(lock_);
    queue.next_ready = nullptr;
    if (tail_ != nullptr) tail_->next_ready = &queue;
    else head_ = &queue;
    tail_ = &queue;
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

EventQueue* ReadyList::take() noexcept {
    // try_lock: when a queue shows up, every idle worker sees it at once; queuing them all on
    // the lock made each message pay a lock-line transfer per idle worker (ping_pong over 16
    // individual-FIFO thread_pool threads: 17 s instead of 0.4 s on one). A worker that finds
    // the lock taken looks again later; a list that is not empty keeps it from parking.
    if (empty() || !lock_.try_lock()) return nullptr;
    std::lock_guard lock(lock_, std::adopt_lock);
    EventQueue* queue = head_;
    if (queue == nullptr) return nullptr;
    head_ = queue->next_ready;
    if (head_ == nullptr) tail_ = nullptr;
    queue->next_ready = nullptr;
    count_.store(count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return queue;
}

WorkerPool::WorkerPool(Environment& environment, DispatcherParams params, std::unique_ptr<ReadyQueues> ready)
    : Dispatcher(environment), params_(params), ready_(std::move(ready)) {
    if (params_.threads == 0) throw std::invalid_argument("pool: threads must be at least 1");
    if (params_.max_demands_at_once == 0)
        throw std::invalid_argument("pool: max_demands_at_once must be at least 1");
}

void WorkerPool::start() {
    threads_.reserve(params_.threads);
    try {
        for (unsigned i = 0; i < params_.threads; ++i)
            threads_.push_back(environment_.spawn([this, i] { run(int(i)); }));
    } catch (...) {
        shutdown();
        throw;
    }
}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::bind(Agent& agent, unsigned) {
    if (params_.fifo == Fifo::cooperation) {
        set_queue(agent, agent.coop().shared_queue(*this, *this));
    } else {
        auto* queue = pool::make<EventQueue>(scheduler());
        binding(agent) = queue;
        set_queue(agent, *queue);
    }
}

void WorkerPool::unbind(Agent& agent) noexcept {
    if (void* queue = binding(agent)) pool::destroy(static_cast<EventQueue*>(queue));
}

void WorkerPool::shutdown() noexcept {
    // seq_cst: a worker about to park either sees stop_ or is woken below.
    stop_.store(true, std::memory_order_seq_cst);
    wake_seq_.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(wake_seq_, INT_MAX);
    for (Thread& thread : threads_)
        if (thread.joinable()) thread.join();
}

int WorkerPool::calling_worker() const noexcept {
    return detail::t_pool == this ? detail::t_worker : ReadyQueues::kNotAWorker;
}

void WorkerPool::schedule(EventQueue& queue) noexcept {
    if (ready_->push(queue, calling_worker(), true)) notify();
}

void WorkerPool::notify() noexcept {
    // seq_cst fence: the push is ordered before the load of sleepers_; wait_for_work says with
    // which fence it pairs and why neither side can miss the other.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_relaxed) > 0) wake_one();
}

void WorkerPool::wake_one() noexcept {
    // release: pairs with the acquire load of wake_seq_ in wait_for_work.
    wake_seq_.fetch_add(1, std::memory_order_release);
    futex_wake(wake_seq_, 1);
}

EventQueue* WorkerPool::wait_for_work(int index) noexcept {
    IdleScope idle;
    const auto spin = environment_.spin();
    for (;;) {
        // Poll without locks (relaxed: a stale answer only spins on, or goes on to the careful
        // check below); take only once something shows up (a lost race spins on).
        if (spin_until([&] { return ready_->maybe_ready() || stop_.load(std::memory_order_relaxed); }, spin,
                       idle.start())) {
            if (EventQueue* found = ready_->pop(index)) return found;
            if (!stop_.load(std::memory_order_relaxed)) continue;
        }
        // stop_ is set only after every agent has finished: nothing new arrives, and a queue
        // still in line was put there by a worker that looks for work again after it, so a
        // worker that sees stop_ and no queue may leave. (acquire is more than that needs; a
        // load is acquire on x86 anyway.)
        if (stop_.load(std::memory_order_acquire) && !ready_->maybe_ready()) return nullptr;
        // Parking, a Dekker handshake with notify(). The futex word is read before this worker
        // counts itself asleep: a wake_one after that count changes it, and futex_wait then
        // returns at once instead of sleeping through it. acquire: pairs with wake_one's (and
        // shutdown's) increment; a worker that reads a waker's value here also sees what the
        // waker published before it (its push, or stop_), so the check below finds it rather
        // than waiting on a word that will not change again.
        const std::uint32_t seq = wake_seq_.load(std::memory_order_acquire);
        // relaxed: the fence below orders it.
        sleepers_.fetch_add(1, std::memory_order_relaxed);
        // seq_cst fence, paired with the one in notify(): in the single order of seq_cst fences
        // either this one comes first, and the pusher's load of sleepers_ after its fence sees
        // our count and wakes us, or the pusher's comes first, and our look at the queues after
        // this fence sees its push. (Release/acquire alone cannot give this: each side stores,
        // then loads what the other stores, and both loads could read the old values.)
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (ready_->maybe_ready() || stop_.load(std::memory_order_relaxed)) {
            // relaxed: a pusher that still counts us only makes a futex_wake that finds no one.
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
            continue;
        }
        idle.parking();
        futex_wait(wake_seq_, seq);
        sleepers_.fetch_sub(1, std::memory_order_relaxed);  // as above
    }
}

void WorkerPool::run(int index) {
    detail::t_pool = this;
    detail::t_worker = index;
    serve_queues(index);
    detail::t_pool = nullptr;
    detail::t_worker = ReadyQueues::kNotAWorker;
}

void WorkerPool::serve_queues(int index) {
    // A local, not a parameter: a pointer to it would take a register the loop needs, 7
    // instructions more per queue visit (callgrind, ping_pong messages=1000000
    // dispatcher=work_stealing threads=1 fifo=individual spin_us=0: 117.0M in this loop, not
    // 110.0M).
    ExecutionContext context;
    const std::uint32_t budget = params_.max_demands_at_once;
    for (;;) {
        EventQueue* queue = take(index);
        if (queue == nullptr) break;
        {
            ConsumeScope consuming(*queue);
            for (;;) {
                queue->take_inbox();
                for (std::uint32_t n = 0; n < budget; ++n) {
                    Envelope* e = queue->pop();
                    if (e == nullptr) break;
                    execute(*e, context);
                }
                if (ends_turn(*queue, index, context)) break;
            }
        }
        let_go(*queue, index);
        reap_finished(context);
    }
    environment_.leave_thread(context);
}

}  // namespace labctl::rt
