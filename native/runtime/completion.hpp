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
        {
            std::lock_guard lock(mutex_);
            value_ = std::move(value);
            completed_at_ = now;
        }
        changed_.notify_all();
    }

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
};

}  // namespace labctl::rt
