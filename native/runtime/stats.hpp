// What each runtime thread counts of its own work, cheaply, for the fingerprint of a run (what the
// workload is, beside how fast it ran): the messages it collected from inboxes (sent to its queue
// by another thread, or from another queue of its pool), in how many takes and the largest one,
// and the time it spent idle (spinning or parked, waiting for work).
//
// Nothing is counted per message on the path a message takes within a queue: a take is
// counted where the consumer already walks the inbox's chain (EventQueue::take_inbox), idle time
// where a thread already waits (IdleScope: no clock read of its own where a wait found work at its
// first look or within its first round of pauses, but for one such wait in 16 timed at random; the
// spin's read of its budget's start is the wait's start; one more at the end of a wait that spun past
// its first round or parked, and one when a wait parks without having spun). Each field has one writer, the thread
// itself, which updates it with a relaxed load and store (no read-modify-write, no fence); any
// thread may read it with a relaxed load (the environment's snapshot at a phase's boundaries).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "tls.hpp"
#include "wait.hpp"

namespace labctl::rt {

inline std::int64_t ns_since_epoch(std::chrono::steady_clock::time_point at) noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

inline std::int64_t steady_now_ns() noexcept { return ns_since_epoch(std::chrono::steady_clock::now()); }

namespace detail {
// Bumped at the start of each measured phase (begin_stats_epoch): a thread's largest take
// counts from the epoch its last take saw, so the largest is the phase's own.
inline std::atomic<std::uint32_t> stats_epoch{1};
}  // namespace detail

// Starts a new epoch for the largest take: the phase that follows reports its own largest.
inline void begin_stats_epoch() noexcept {
    // relaxed: a take that races with the bump may count in either epoch (the phase's
    // boundary is not a synchronisation point of the runtime's threads anyway).
    detail::stats_epoch.fetch_add(1, std::memory_order_relaxed);
}

// The idle time of one thread: the intervals it has ended, and the start of the one it is in, if
// any, under a sequence lock so that a reader gets the pair consistent (the completed total with
// or without the current interval, never both or neither: a thread parked through the whole of a
// kernel's set-up would otherwise land its wait in the phase that wakes it). The writer is the
// thread; readers retry while a write is under way (a few stores long).
class IdleClock {
public:
    void begin(std::int64_t now) noexcept {
        write([&] { since_.store(now, std::memory_order_relaxed); });
    }
    void end(std::int64_t now) noexcept {
        write([&] {
            const std::int64_t since = since_.load(std::memory_order_relaxed);
            total_.store(total_.load(std::memory_order_relaxed) + (now - since), std::memory_order_relaxed);
            since_.store(0, std::memory_order_relaxed);
        });
    }
    // An interval that was never open: a wait that did not park.
    void add(std::int64_t ns) noexcept {
        write([&] { total_.store(total_.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed); });
    }
    // Idle time up to `now`, the current interval's share included.
    std::int64_t read(std::int64_t now) const noexcept {
        for (;;) {
            // acquire: pairs with the writer's final release store; what it wrote before is seen.
            const std::uint32_t before = seq_.load(std::memory_order_acquire);
            const std::int64_t total = total_.load(std::memory_order_relaxed);
            const std::int64_t since = since_.load(std::memory_order_relaxed);
            // acquire fence: the loads above are ordered before the second look at seq_; if a
            // write began meanwhile, its first store (odd) is seen there and the read retries.
            std::atomic_thread_fence(std::memory_order_acquire);
            if ((before & 1) == 0 && seq_.load(std::memory_order_relaxed) == before)
                return total + (since != 0 && now > since ? now - since : 0);
            cpu_relax();
        }
    }

private:
    template <class Update>
    void write(Update&& update) noexcept {
        const std::uint32_t seq = seq_.load(std::memory_order_relaxed);
        seq_.store(seq + 1, std::memory_order_relaxed);
        // release fence: the odd count is ordered before the data stores, so a reader that sees
        // any of them sees the count changed.
        std::atomic_thread_fence(std::memory_order_release);
        update();
        // release: the data stores are ordered before the even count a reader starts from.
        seq_.store(seq + 2, std::memory_order_release);
    }

    std::atomic<std::uint32_t> seq_{0};
    std::atomic<std::int64_t> total_{0};
    std::atomic<std::int64_t> since_{0};  // 0: not idle
};

struct ThreadStats {
    std::atomic<std::uint64_t> inbox_messages{0};  // messages taken from inboxes
    std::atomic<std::uint64_t> inbox_takes{0};     // takes that found at least one
    std::atomic<std::uint64_t> inbox_largest{0};   // the most one take found, this epoch
    std::atomic<std::uint32_t> epoch{0};           // the epoch `inbox_largest` belongs to
    IdleClock idle;

    // The owner, at the end of a wait that began at `wait.at` (IdleScope; `wait.read`: a wait that
    // found work at its first look has no start and counts nothing); `parked`: the wait's
    // interval was opened (idle.begin) when it parked.
    void end_wait(const WaitStart& wait, bool parked) noexcept {
        if (parked) {
            idle.end(steady_now_ns());
            return;
        }
        const std::int64_t began = ns_since_epoch(wait.at);
        if (wait.read_again) {
            idle.add(steady_now_ns() - began);
            return;
        }
        // A short wait: it found work within its first round of pauses (a few hundred ns: the
        // reply of a ping-pong across threads). One in 16 on average, at random, is timed; the
        // others count as the mean of those timed so far. The end's clock read was most of what
        // idle accounting cost (+20% on active_obj ping-pong for two reads per wait besides the
        // spin's); the estimate errs by less than a round a wait and by nothing on average.
        if (--short_countdown_ != 0) {
            idle.add(short_mean_ns_);
            return;
        }
        const std::int64_t took = steady_now_ns() - began;
        idle.add(took);
        // A timed short wait much longer than its round was preempted (its thread descheduled
        // mid-wait): its own length counts, but it speaks for no other wait. Into the mean, one
        // preemption of milliseconds made every later short wait count as milliseconds, and a
        // phase's idle time 24 times its threads' (a loaded machine, tests/test_fingerprint.py).
        if (took <= kShortWaitBoundNs) {
            short_timed_ns_ += took;
            ++short_timed_;
            short_mean_ns_ = short_timed_ns_ / std::int64_t(short_timed_);
        }
        // xorshift32 (Marsaglia): the next timed wait is 1 to 31 short waits on.
        rng_ ^= rng_ << 13;
        rng_ ^= rng_ >> 17;
        rng_ ^= rng_ << 5;
        short_countdown_ = 1 + rng_ % 31;
    }

    // The owner, after taking `n` (>= 1) messages from an inbox.
    void collect(std::uint64_t n) noexcept {
        inbox_messages.store(inbox_messages.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
        inbox_takes.store(inbox_takes.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        const std::uint32_t now = detail::stats_epoch.load(std::memory_order_relaxed);
        if (epoch.load(std::memory_order_relaxed) != now) {
            epoch.store(now, std::memory_order_relaxed);
            inbox_largest.store(n, std::memory_order_relaxed);
        } else if (n > inbox_largest.load(std::memory_order_relaxed)) {
            inbox_largest.store(n, std::memory_order_relaxed);
        }
    }

private:
    // A first round of pauses lasts about a microsecond; a short wait timed past this was preempted.
    static constexpr std::int64_t kShortWaitBoundNs = 20'000;
    // The owner's alone (end_wait), never read by another thread: plain fields.
    std::uint32_t short_countdown_ = 1;  // short waits until the next timed one; the first is
    std::uint32_t rng_ = 0x9e3779b9;
    std::uint64_t short_timed_ = 0;
    std::int64_t short_timed_ns_ = 0;
    std::int64_t short_mean_ns_ = 0;
};

namespace detail {
inline constinit thread_local ThreadStats t_stats LABCTL_FAST_TLS;
}  // namespace detail

// Marks the calling thread idle for its lifetime (a wait for work). Its start is the spin's
// (`spin_until(ready, budget, idle.start())` reads it once its first look has failed), or, where
// it did not spin (spin_us 0), the moment it parks. A wait that found work at its first look
// counts nothing: it lasted a look (a few ns), and reading the clock for it was most of what
// accounting cost where work is usually there (a pool's worker between queues). A reader of the
// thread's idle time (a phase's boundary) sees a wait that parked as open from its start; one
// that did not park counts when it ends: a reader during it misses at most its spin (spin_us).
class IdleScope {
public:
    IdleScope() noexcept = default;
    ~IdleScope() {
        if (start_.read) detail::t_stats.end_wait(start_, parked_);
    }
    IdleScope(const IdleScope&) = delete;
    IdleScope& operator=(const IdleScope&) = delete;

    WaitStart& start() noexcept { return start_; }
    // Before the thread parks (again): the wait's interval opens at its start, its end is timed.
    void parking() noexcept {
        if (parked_) return;
        if (!start_.read) {
            start_.at = std::chrono::steady_clock::now();
            start_.read = true;
        }
        detail::t_stats.idle.begin(ns_since_epoch(start_.at));
        parked_ = true;
    }

private:
    WaitStart start_;
    bool parked_ = false;
};

// The runtime's counts of a phase, summed over its threads (Environment::stats at the phase's
// start and end, subtracted).
struct RunStats {
    std::uint64_t agents_created = 0;  // agents registered (in coops)
    std::uint64_t inbox_messages = 0;  // messages taken from inboxes
    std::uint64_t inbox_takes = 0;     // takes that found at least one
    std::uint64_t inbox_largest = 0;   // the most one take found (this epoch: not subtracted)
    std::int64_t idle_ns = 0;          // time the runtime's threads spent waiting for work
    std::int64_t thread_ns = 0;        // time the runtime's threads existed
    std::int64_t at_ns = 0;            // when these were read (steady_now_ns)
};

}  // namespace labctl::rt
