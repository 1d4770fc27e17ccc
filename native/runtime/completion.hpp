// A value that a thread outside the runtime waits for (a kernel's answer): set once from a
// handler, or abandoned when the environment fails.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace labctl::rt {

template <class T>
class Completion {
public:
    using Clock = std::chrono::steady_clock;

    void set(T value) {
        const Clock::time_point now = Clock::now();
        if (on_set_ != nullptr) on_set_();
        {
            std::lock_guard lock(mutex_);
            value_ = std::move(value);
            completed_at_ = now;
        }
        changed_.notify_all();
    }

    // A function set() calls in the setting thread right after it reads the clock: where a
    // measured phase that ends at this completion stops its counters (kernels/framework/counters.hpp), as
    // its clock stops there, not when the waiting thread wakes up. Give it before any thread can
    // call set().
    void call_on_set(void (*hook)() noexcept) noexcept { on_set_ = hook; }

    void abandon() {
        {
            std::lock_guard lock(mutex_);
            abandoned_ = true;
        }
        changed_.notify_all();
    }

    // The value, or nothing if abandoned first.
    std::optional<T> wait() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return value_.has_value() || abandoned_; });
        return value_;
    }

    // When set() ran: the end of a measured phase, free of the waiter's wake-up latency.
    Clock::time_point completed_at() const {
        std::lock_guard lock(mutex_);
        return completed_at_;
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::optional<T> value_;
    bool abandoned_ = false;
    Clock::time_point completed_at_{};
    void (*on_set_)() noexcept = nullptr;
};

}  // namespace labctl::rt
