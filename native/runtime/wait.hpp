// How an idle runtime thread waits: spin for a budget (spin_us, a dimension to sweep), then
// park on a futex. Also the small locks the dispatchers use around rare or tiny sections.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace labctl::rt {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// sched_yield: lets another runnable thread have this core.
void yield_thread() noexcept;

// Futex-style wait on a 32-bit word: blocks while *word == expected (or returns spuriously).
// Returns false when the word no longer held `expected` and the call did not block; true when it
// blocked and was woken (or woke spuriously).
bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept;
void futex_wake(std::atomic<std::uint32_t>& word, int waiters) noexcept;

// The start of a wait, read by its first spin where that spin goes past its first look (the
// start of its budget) or, where it did not spin, when it parks (IdleScope::parking); a wait that
// found work at its first look reads no clock at all, as a spin did before waits were timed.
// `read_again`: the clock was read again since (the spin went past its first round, or another
// spin of the same wait began); its end is then timed, where a short wait's may be estimated.
struct WaitStart {
    std::chrono::steady_clock::time_point at;  // valid where `read`
    bool read = false;        // `at` holds the wait's start
    bool read_again = false;
};

// Spins until `ready()` holds or `budget` has passed; returns whether it holds.
// The clock is read every 32 pauses (a pause is tens of cycles), so the budget is honoured to
// well under a microsecond without a clock read per iteration. After the first few rounds
// (a couple of microseconds, where a cross-thread reply lands) it yields between rounds: with
// more runtime threads than cores (active_obj with 100 agents on 2) a thread that only paused
// would hold its core for the whole budget while the thread that feeds it waits for a core.
// The first spin of a wait reads the clock after its first look fails: that read is the wait's
// start and the start of the budget. A later spin of the same wait (after a race for the work it
// saw was lost) reads the clock for a budget of its own.
template <class Ready>
bool spin_until(Ready&& ready, std::chrono::nanoseconds budget, WaitStart& wait) {
    if (ready()) return true;
    if (budget.count() <= 0) return false;
    constexpr unsigned kPauseRounds = 4;
    const auto now = std::chrono::steady_clock::now();
    if (wait.read) {
        wait.read_again = true;
    } else {
        wait.at = now;
        wait.read = true;
    }
    const auto deadline = now + budget;
    for (unsigned round = 0;; ++round) {
        for (int i = 0; i < 32; ++i) {
            cpu_relax();
            if (ready()) return true;
        }
        wait.read_again = true;
        if (std::chrono::steady_clock::now() >= deadline) return ready();
        if (round >= kPauseRounds) yield_thread();
    }
}

// One thread parks, any thread unparks it. A permit given while the thread is not parked is
// kept, so an unpark that races ahead of park is never lost. Only unparking a parked thread
// costs a system call.
class Parker {
public:
    void park() noexcept;
    void unpark() noexcept;

private:
    static constexpr std::uint32_t kEmpty = 0, kNotified = 1, kParked = 2;
    std::atomic<std::uint32_t> state_{kEmpty};
};

// Test-and-test-and-set lock for sections of a few instructions (a ready list push or pop).
// Yields after a while so a preempted holder on an oversubscribed machine gets the CPU back.
class SpinLock {
public:
    void lock() noexcept {
        for (unsigned spins = 0;; ) {
            // acquire: the section's reads happen after we own the lock.
            if (!locked_.exchange(true, std::memory_order_acquire)) return;
            while (locked_.load(std::memory_order_relaxed)) backoff(spins);
        }
    }
    bool try_lock() noexcept {
        return !locked_.load(std::memory_order_relaxed) &&
               !locked_.exchange(true, std::memory_order_acquire);
    }
    // release: the section's writes are visible to the next owner.
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

private:
    static void backoff(unsigned& spins) noexcept;
    std::atomic<bool> locked_{false};
};

// Readers-writer spin lock for a named mbox: every send takes it shared (one RMW), a
// subscription change takes it exclusively. Writers announce themselves first so a steady
// stream of senders cannot starve them.
class RwSpinLock {
public:
    void lock_shared() noexcept;
    // release: the section's reads are done before a writer can take over.
    void unlock_shared() noexcept { state_.fetch_sub(kReader, std::memory_order_release); }
    void lock() noexcept;
    void unlock() noexcept { state_.fetch_and(~kWriter, std::memory_order_release); }

private:
    static constexpr std::uint32_t kWriter = 1, kReader = 2;
    std::atomic<std::uint32_t> state_{0};
};

}  // namespace labctl::rt
