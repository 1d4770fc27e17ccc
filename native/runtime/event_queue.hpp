// The event queue: an intrusive multi-producer, single-consumer FIFO of envelopes.
// Every dispatcher is built from it: a worker thread owns one, a thread pool schedules many.
#pragma once

#include <atomic>

#include "message.hpp"
#include "stats.hpp"
#include "tls.hpp"

namespace labctl::rt {

class EventQueue;

// Whoever must be told that a sleeping queue has work: a worker thread to wake, or a pool
// that puts the queue on its ready list.
class Scheduler {
public:
    virtual void schedule(EventQueue& queue) noexcept = 0;

protected:
    ~Scheduler() = default;
};

namespace detail {
// The queue whose demands the calling thread is executing right now, if any.
inline constinit thread_local EventQueue* t_consuming LABCTL_FAST_TLS = nullptr;
}  // namespace detail

// Two parts. The inbox is a Treiber stack that other threads push onto with one CAS and the
// consumer empties with one exchange (reversing it into FIFO order). The local FIFO belongs to
// whoever consumes the queue; a thread that pushes onto the queue it is consuming (one_thread,
// a self-send, siblings in a cooperation FIFO) appends there with plain stores, no atomic.
//
// The inbox word also carries the queue's state. nullptr: empty, and a consumer is active and
// will look again. kSleeping: empty, and no consumer will look until told. A push that
// replaces kSleeping calls the scheduler, exactly once per sleep; one that replaces anything
// else does nothing more. Sleep and wake-up are decided on the same atomic word as the data,
// so there is no window in which a push can be missed (no store-load fence needed).
class EventQueue {
public:
    explicit EventQueue(Scheduler& scheduler) noexcept : scheduler_(&scheduler) {}
    EventQueue(const EventQueue&) = delete;
    EventQueue& operator=(const EventQueue&) = delete;

    // Any thread. Pushes `first`..`last`, linked through `next` with `last->next` null. The
    // chain may hold several envelopes only if they go to different agents (a multicast):
    // their order relative to each other is not kept.
    [[gnu::always_inline]] void push_chain(Envelope* first, Envelope* last) noexcept {
        if (detail::t_consuming == this) {
            if (tail_ != nullptr) tail_->next = first;
            else head_ = first;
            tail_ = last;
            return;
        }
        push_remote(first, last);
    }

    [[gnu::always_inline]] void push(Envelope* e) noexcept { push_chain(e, e); }

    // Consumer only: the next demand, or nullptr if there is none right now.
    Envelope* pop() noexcept {
        if (head_ == nullptr && !take_inbox()) return nullptr;
        Envelope* e = head_;
        head_ = e->next;
        if (head_ == nullptr) tail_ = nullptr;
        return e;
    }

    // Consumer only: moves what other threads pushed behind the local FIFO, so that a queue
    // fed by its own consumer (a self-send loop) cannot starve its other senders.
    bool take_inbox() noexcept {
        Envelope* top = inbox_.load(std::memory_order_relaxed);
        if (top == nullptr || top == sleeping()) return false;
        // acquire: pairs with the pushers' release; the stack is ours from here.
        top = inbox_.exchange(nullptr, std::memory_order_acquire);
        Envelope* newest = top;
        Envelope* reversed = nullptr;
        std::uint64_t taken = 0;
        while (top != nullptr) {
            Envelope* next = top->next;
            top->next = reversed;
            reversed = top;
            top = next;
            ++taken;
        }
        detail::t_stats.collect(taken);
        if (tail_ != nullptr) tail_->next = reversed;
        else head_ = reversed;
        tail_ = newest;
        return true;
    }

    // Consumer only.
    bool has_work() const noexcept {
        if (head_ != nullptr) return true;
        Envelope* top = inbox_.load(std::memory_order_relaxed);
        return top != nullptr && top != sleeping();
    }

    // Whether a push has arrived since the consumer went to sleep (any thread may ask).
    bool awake() const noexcept { return inbox_.load(std::memory_order_acquire) != sleeping(); }

    // Consumer only, with an empty local FIFO: declares the queue asleep, or finds it so (a
    // worker thread starts on a queue that is asleep until its first push; it has consumed
    // nothing, so there is nothing to publish). Returns false if a push got in first; the
    // caller then still owns the queue and must go on consuming.
    bool try_sleep() noexcept {
        Envelope* expected = nullptr;
        // release: the local FIFO's state travels to whoever consumes the queue next.
        return inbox_.compare_exchange_strong(expected, sleeping(), std::memory_order_release,
                                              std::memory_order_relaxed) ||
               expected == sleeping();
    }

    // Intrusive link for a thread pool's ready list; owned by that pool.
    EventQueue* next_ready = nullptr;

private:
    // Out of line: the cross-thread path is dominated by cache-line transfers anyway, and the
    // local path above then inlines into every send.
    [[gnu::noinline]] void push_remote(Envelope* first, Envelope* last) noexcept {
        Envelope* top = inbox_.load(std::memory_order_relaxed);
        do {
            last->next = top == sleeping() ? nullptr : top;
            // release: publishes the envelopes; acquire: when this push wakes the queue, the
            // scheduler and the next consumer see everything the last consumer wrote before
            // it went to sleep (its release CAS in try_sleep).
        } while (!inbox_.compare_exchange_weak(top, first, std::memory_order_acq_rel,
                                               std::memory_order_relaxed));
        if (top == sleeping()) scheduler_->schedule(*this);
    }

    static Envelope* sleeping() noexcept { return &sleeping_tag_; }
    static inline Envelope sleeping_tag_{};

    // Kept compact (a thread pool with individual FIFO has one queue per agent); the owner of a
    // long-lived queue (a worker thread) aligns it to its own cache line.
    std::atomic<Envelope*> inbox_{sleeping()};
    Envelope* head_ = nullptr;
    Envelope* tail_ = nullptr;
    Scheduler* scheduler_;
};

// Marks the calling thread as the consumer of `queue` for its lifetime.
class ConsumeScope {
public:
    explicit ConsumeScope(EventQueue& queue) noexcept : saved_(detail::t_consuming) {
        detail::t_consuming = &queue;
    }
    ~ConsumeScope() { detail::t_consuming = saved_; }
    ConsumeScope(const ConsumeScope&) = delete;
    ConsumeScope& operator=(const ConsumeScope&) = delete;

private:
    EventQueue* saved_;
};

}  // namespace labctl::rt
