// The ready queues of work_stealing: per worker a LIFO stack, a held queue and a bounded
// stealable FIFO, plus a shared injector; an idle worker steals from the others.
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
            if (stealable == nullptr) return share_on_request(local);
        } else {
            // Put back after its turn: held by this worker, out of thieves' reach (see Local);
            // the queue held before goes where they can take it.
            stealable = std::exchange(local.held, &queue);
            local.held_passed = 0;
            if (stealable == nullptr) return false;
        }
        make_stealable(local, *stealable);
        return true;
    }

    EventQueue* pop(int worker) noexcept override {
        Local& local = locals_[worker];
        share_on_request(local);
        // The held queue waits behind the others, but no longer than a LIFO streak.
        if (local.held != nullptr && ++local.held_passed > LifoStack::kStreak) return take_held(local);
        if (EventQueue* queue = local.lifo.take_in_turn()) return queue;
        // The stack's streak is over: its oldest goes behind the others (see LifoStack).
        if (EventQueue* oldest = local.lifo.take_oldest()) make_stealable(local, *oldest);
        if (EventQueue* queue = local.fifo.take()) return queue;
        if (local.held != nullptr) return take_held(local);
        if (EventQueue* queue = local.lifo.take()) return queue;
        if (EventQueue* queue = injector_.take()) return queue;
        // Steal: the others' FIFOs in turn, starting at a different victim each time.
        for (unsigned tries = 0; tries + 1 < workers_; ++tries) {
            local.victim = (local.victim + 1) % workers_;
            if (local.victim == unsigned(worker)) local.victim = (local.victim + 1) % workers_;
            Local& victim = locals_[local.victim];
            if (EventQueue* queue = victim.fifo.take()) return queue;
            // Nothing to take: ask the victim to share (see share_on_request). relaxed: a hint
            // only, that nothing depends on; what it shares is published by its FIFO's release.
            // Read first, so that an idle worker asking again does not take the line from the
            // victim each time.
            if (!victim.wanted.load(std::memory_order_relaxed)) victim.wanted.store(true, std::memory_order_relaxed);
        }
        return nullptr;
    }

    // LIFO stacks and held queues are left out: only their owner can run them, and it looks
    // there first.
    bool maybe_ready() const noexcept override {
        if (!injector_.empty()) return true;
        for (unsigned i = 0; i < workers_; ++i)
            if (!locals_[i].fifo.empty()) return true;
        return false;
    }

    // The worker's own LIFO stack and held queue count: they wait there for it alone.
    bool maybe_ready_for(int worker) const noexcept override {
        return !locals_[worker].lifo.empty() || locals_[worker].held != nullptr || maybe_ready();
    }

private:
    // A worker's queues. The held queue is the last one it put back after its turn (its budget
    // spent, or others waiting): the worker runs it again once the others had theirs, and no
    // thief takes it. An agent that stays busy while others come and go (a list every request
    // goes to, the arbitrator of a table) then stays on one core with its working set; when it
    // went to the stealable FIFO, the other worker took it whenever it was idle, and the agent
    // and its data crossed between the cores again and again (Savina's concsll at 2 threads 1.24x
    // slower than at 1, philosopher 3.5x; held, 1.06x and 2.0x: savina.toml's sizes, run_kernel,
    // medians of 15-30 interleaved runs). What a thief gets instead is the older half of the
    // LIFO stack, on request.
    struct alignas(64) Local {
        StealableFifo fifo;
        LifoStack lifo;             // owner only
        EventQueue* held = nullptr; // owner only
        unsigned held_passed = 0;   // owner only: pops that passed the held queue over
        unsigned victim = 0;        // owner only: where stealing starts next
        alignas(64) std::atomic<bool> wanted{false};  // a thief found nothing here
    };

    static EventQueue* take_held(Local& local) noexcept {
        local.held_passed = 0;
        return std::exchange(local.held, nullptr);
    }

    // Owner only, at each push of a woken queue and each pop: when a thief found nothing to take
    // here, the older half of the LIFO stack becomes stealable (the newest stays, with what its
    // waker left in this core's cache; a lone queue is not given away, so two agents passing
    // messages stay together). Without it the stack, the held queue and the worker's own turn
    // kept the work a single agent generates on one worker (Savina's bndbuffer, a manager waking
    // 80 producers and consumers, lost its gain from a second thread). Returns whether it shared.
    bool share_on_request(Local& local) noexcept {
        // The request stays until there is something to share: a thief waiting for work asks once.
        return local.wanted.load(std::memory_order_relaxed) && local.lifo.size() >= 2 && share(local);
    }
    // Out of line: the checks above are what every push and pop pays.
    [[gnu::noinline]] bool share(Local& local) noexcept {
        local.wanted.store(false, std::memory_order_relaxed);
        unsigned n = local.lifo.size() / 2;
        while (n-- > 0) make_stealable(local, *local.lifo.take_oldest());
        return true;
    }

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
