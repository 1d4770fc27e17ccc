// Futex calls, the parker and the slow paths of the spin locks.
#include "wait.hpp"

#include <thread>

#ifdef __linux__
#include <cerrno>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace labctl::rt {

bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
#ifdef __linux__
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
    const long done = syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE,
                              expected, nullptr, nullptr, 0);
    return done == 0 || errno != EAGAIN;
#else
    if (word.load(std::memory_order_acquire) != expected) return false;
    word.wait(expected, std::memory_order_acquire);
    return true;
#endif
}

void futex_wake(std::atomic<std::uint32_t>& word, int waiters) noexcept {
#ifdef __linux__
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, waiters,
            nullptr, nullptr, 0);
#else
    if (waiters == 1) word.notify_one();
    else word.notify_all();
#endif
}

// Only the parking thread writes kEmpty and kParked; unpark only ever writes kNotified.
void Parker::park() noexcept {
    std::uint32_t previous = state_.load(std::memory_order_relaxed);
    if (previous == kNotified) {
        // acquire: what the unparker wrote before its release exchange is visible now.
        if (state_.compare_exchange_strong(previous, kEmpty, std::memory_order_acquire)) return;
    }
    // Empty → Parked. A racing unpark turns it into Notified and wakes us.
    previous = kEmpty;
    if (!state_.compare_exchange_strong(previous, kParked, std::memory_order_acquire)) {
        // It became Notified meanwhile: consume it.
        state_.store(kEmpty, std::memory_order_relaxed);
        return;
    }
    for (;;) {
        futex_wait(state_, kParked);
        std::uint32_t notified = kNotified;
        if (state_.compare_exchange_strong(notified, kEmpty, std::memory_order_acquire)) return;
        // Spurious wake-up: still parked.
    }
}

void Parker::unpark() noexcept {
    // release: pairs with park's acquire.
    if (state_.exchange(kNotified, std::memory_order_release) == kParked) futex_wake(state_, 1);
}

void yield_thread() noexcept { std::this_thread::yield(); }

namespace {
void backoff(unsigned& spins) noexcept {
    if (++spins < 64) cpu_relax();
    else std::this_thread::yield();
}
}  // namespace

void SpinLock::backoff(unsigned& spins) noexcept { labctl::rt::backoff(spins); }

void RwSpinLock::lock_shared() noexcept {
    for (unsigned spins = 0;;) {
        if ((state_.load(std::memory_order_relaxed) & kWriter) == 0) {
            // acquire: our reads come after the last writer's unlock.
            if ((state_.fetch_add(kReader, std::memory_order_acquire) & kWriter) == 0) return;
            state_.fetch_sub(kReader, std::memory_order_relaxed);
        }
        backoff(spins);
    }
}

void RwSpinLock::lock() noexcept {
    unsigned spins = 0;
    while (state_.fetch_or(kWriter, std::memory_order_acquire) & kWriter) backoff(spins);
    // acquire: pairs with the release of the last reader to leave.
    while (state_.load(std::memory_order_acquire) != kWriter) backoff(spins);
}

}  // namespace labctl::rt
