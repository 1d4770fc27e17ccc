// A pool of worker threads serving many event queues, with a policy for where ready queues wait:
// thread_pool (one shared FIFO, before it per worker a LIFO stack unless wake=fifo) and
// work_stealing (per worker a LIFO
// stack and a bounded stealable FIFO, plus a shared injector) are two policies behind this one
// coordinator; adv_thread_pool runs its own loop on it. With cooperation FIFO a coop's agents
// share a queue (their demands never run in parallel); with individual FIFO each agent has its
// own. A worker runs at most max_demands_at_once demands of a queue before it moves on.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "../thread.hpp"
#include "../tls.hpp"
#include "../wait.hpp"
#include "dispatcher.hpp"

namespace labctl::rt {

// Where queues with demands and no worker wait for one: the policy of a pool.
class ReadyQueues {
public:
    static constexpr int kNotAWorker = -1;

    virtual ~ReadyQueues() = default;
    // `worker` is the pushing worker's index, or kNotAWorker for any other thread. `woken` says
    // the queue just got its first demand (a send woke it); otherwise a worker that used up its
    // budget on it puts it back. Returns whether other workers can take it (then they are told).
    virtual bool push(EventQueue& queue, int worker, bool woken) noexcept = 0;
    virtual EventQueue* pop(int worker) noexcept = 0;
    // Whether a queue may be waiting anywhere: polled by idle workers, so it takes no lock. The
    // caller orders it after its own announcements with a fence.
    virtual bool maybe_ready() const noexcept = 0;
    // Whether a queue that `worker` could run may be waiting, besides the one it holds: the
    // worker then lets that one go when its budget is spent. Takes no lock.
    virtual bool maybe_ready_for(int) const noexcept { return maybe_ready(); }
};

// A FIFO of ready queues behind a spin lock: thread_pool's one list, work_stealing's injector.
class alignas(64) ReadyList {
public:
    void push(EventQueue& queue) noexcept;
    // The oldest queue; nullptr if there is none, or if another thread holds the list.
    EventQueue* take() noexcept;
    // Without the lock: for idle workers to poll.
    bool empty() const noexcept { return count_.load(std::memory_order_relaxed) == 0; }

private:
    SpinLock lock_;
    EventQueue* head_ = nullptr;
    EventQueue* tail_ = nullptr;
    std::atomic<std::uint32_t> count_{0};  // written under the lock
};

// A worker's LIFO stack: the queues that worker's own sends woke, newest on top, run next on it
// while what the send touched (the queue, the envelope, the receiver) is still in its cache,
// rather than handed to an idle worker on another core. Owner only: no other worker sees it, so
// its owner never parks while it holds a queue.
//
// Deeper than one slot so that a tree of agents is walked depth first: a skynet coop's run wakes
// its ten children's queues, and with a single slot nine of them went to the FIFO at once, so
// the walk went breadth first through 10^5 queues, each cold by its turn, and two workers dealt
// the tree out between them queue by queue. When the stack is full a push displaces its oldest
// queue, the one highest in such a tree: it goes where any worker can take it, the largest piece
// of work a thief can get (the order Cilk's deques give).
class LifoStack {
public:
    static constexpr unsigned kDepth = 16;

    // Pushes `queue`; returns the queue it displaced (the oldest), if the stack was full.
    EventQueue* put(EventQueue& queue) noexcept {
        EventQueue* displaced = nullptr;
        if (size_ == kDepth) {
            displaced = queues_[bottom_];
            bottom_ = (bottom_ + 1) % kDepth;
            --size_;
        }
        queues_[(bottom_ + size_) % kDepth] = &queue;
        ++size_;
        return displaced;
    }
    // The newest queue, unless the stack has won kStreak pops in a row: then nullptr, once, and
    // the caller moves the oldest (take_oldest) behind its other queues and looks at those first,
    // so no queue waits in the stack for ever behind agents that keep waking each other.
    EventQueue* take_in_turn() noexcept {
        if (size_ != 0 && streak_ < kStreak) {
            ++streak_;
            return take();
        }
        streak_ = 0;
        return nullptr;
    }
    EventQueue* take() noexcept {
        if (size_ == 0) return nullptr;
        --size_;
        return queues_[(bottom_ + size_) % kDepth];
    }
    // The oldest queue, if a newer one sits above it (a lone queue waits behind nothing in the
    // stack; moving it out would only offer it to a thief on another core, every kStreak pops).
    EventQueue* take_oldest() noexcept {
        if (size_ < 2) return nullptr;
        EventQueue* oldest = queues_[bottom_];
        bottom_ = (bottom_ + 1) % kDepth;
        --size_;
        return oldest;
    }
    bool empty() const noexcept { return size_ == 0; }
    unsigned size() const noexcept { return size_; }

    // Pops in a row the stack may win before the other queues get a look: the most turns a
    // waiting queue spends behind agents that keep waking each other on one worker. Measured on
    // work_stealing's one worker with a single slot (callgrind; threads=1 fifo=individual
    // spin_us=0; at 1 / 4 / 16 / 64): ping_pong messages=1000000, 310.3 / 308.9 / 308.3 / 308.2 M
    // instructions (the look costs nothing past 16); skynet leaves=1000000 (--cache-sim=yes),
    // last-level read misses 2.64 / - / 2.15 / 1.71 M for 1669 / - / 1696 / 1701 M instructions
    // (the walk stays depth first longer); parallel_thread_ring actors=100 tokens=10 hops=500000,
    // 82.5 / 82.3 / 82.2 / 77.5 M. 16 takes most of the gain and keeps that wait short.
    static constexpr unsigned kStreak = 16;

private:
    EventQueue* queues_[kDepth];
    unsigned bottom_ = 0;  // index of the oldest
    unsigned size_ = 0;
    unsigned streak_ = 0;
};

// thread_pool's policy, and adv_thread_pool's: every ready queue in one shared FIFO, but, with
// Wake::lifo, for the queues in each worker's LIFO stack. Defined in thread_pool.cpp, out of the
// worker loop's sight:
// where GCC sees the class it guesses that every policy call in the loop goes to it (speculative
// devirtualization), and work_stealing pays for the guess, 15 instructions a message (callgrind,
// ping_pong messages=1000000 dispatcher=work_stealing threads=1 fifo=individual spin_us=0:
// 308.2M in sight, 293.1M not).
std::unique_ptr<ReadyQueues> make_shared_fifo(unsigned workers, Wake wake);

class WorkerPool : public Dispatcher, private Scheduler {
public:
    WorkerPool(Environment& environment, DispatcherParams params, std::unique_ptr<ReadyQueues> ready);
    ~WorkerPool() override;

protected:
    // Starts the threads: the last step of a derived constructor, once the policy is in place.
    void start();
    const DispatcherParams& params() const noexcept { return params_; }
    Scheduler& scheduler() noexcept { return *this; }

    // Worker `index`'s loop: takes ready queues and runs their demands until the pool stops,
    // then leaves the environment (Environment::leave_thread). Virtual for a pool that serves
    // its queues its own way (adv_thread_pool): it is called once per thread, so thread_pool and
    // work_stealing pay nothing more per message for it.
    virtual void serve_queues(int index);
    // The next ready queue for worker `index`, after spinning and parking if there is none yet;
    // nullptr once the pool stops with none left.
    EventQueue* take(int index) noexcept {
        if (EventQueue* queue = ready_->pop(index)) return queue;
        return wait_for_work(index);
    }
    // Worker `index` lets go of a queue it consumed: back in line if it still has work or work
    // arrived before it could sleep. After a successful try_sleep the queue belongs to whoever
    // wakes it; the worker does not touch it again.
    void let_go(EventQueue& queue, int index) noexcept {
        if (queue.has_work() || !queue.try_sleep()) put_back(queue, index);
    }
    // Puts a queue with work back in line, from worker `index`.
    void put_back(EventQueue& queue, int index) noexcept {
        if (ready_->push(queue, index, false)) notify();
    }
    // Whether worker `index`, its budget on `queue` spent, lets go of it. The budget is
    // fairness between queues: while no other queue waits, a busy queue stays with this worker
    // rather than going round the ready list to the next idle one, cache lines and all (a coop's
    // shared queue hopped between two workers every 4 demands: thread_ring on a cooperation pool
    // ran 4x slower than on one thread). Finished agents are reaped first.
    bool ends_turn(const EventQueue& queue, int index, const ExecutionContext& context) const noexcept {
        return !context.finished.empty() || !queue.has_work() || ready_->maybe_ready_for(index);
    }

private:
    void bind(Agent& agent, unsigned group) override;
    void unbind(Agent& agent) noexcept override;
    void shutdown() noexcept override;
    void schedule(EventQueue& queue) noexcept override;

    // A worker thread's body.
    void run(int index);
    // Looks for work, spinning then parking; nullptr once the pool stops with none left.
    EventQueue* wait_for_work(int index) noexcept;
    void notify() noexcept;
    void wake_one() noexcept;
    int calling_worker() const noexcept;

    const DispatcherParams params_;
    const std::unique_ptr<ReadyQueues> ready_;

    // Parking: a push wakes a worker only if one sleeps. (Counting searching workers too, as
    // tokio does, put two shared RMWs on every idle transition: ping_pong across two
    // individual-FIFO pool threads fell from ~200 ns to ~850 ns a round trip.)
    alignas(64) std::atomic<std::uint32_t> sleepers_{0};
    std::atomic<std::uint32_t> wake_seq_{0};  // futex word of parked workers
    std::atomic<bool> stop_{false};

    std::vector<Thread> threads_;
};

namespace detail {
// The pool and index of the worker running on this thread.
inline constinit thread_local const WorkerPool* t_pool LABCTL_FAST_TLS = nullptr;
inline constinit thread_local int t_worker LABCTL_FAST_TLS = ReadyQueues::kNotAWorker;
}  // namespace detail

}  // namespace labctl::rt
