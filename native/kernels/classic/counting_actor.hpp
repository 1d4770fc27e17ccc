// What every counting_actor kernel (ours, caf_counting_actor) shares: the counter's count, the
// answer and its format, so that they are verified the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::counting_actor {

struct Count {
    std::uint64_t received = 0;
    std::uint64_t sum = 0;
};

inline std::string describe(const Count& c) {
    return "received=" + std::to_string(c.received) + " sum=" + std::to_string(c.sum);
}

// What the counter must have after 1..messages: 1 + 2 + ... + n, with unsigned wrap-around as
// the counter's sum wraps (n > 6e9).
inline std::string expected(std::uint64_t messages) {
    const std::uint64_t half = messages % 2 == 0 ? messages / 2 : (messages + 1) / 2;
    const std::uint64_t other = messages % 2 == 0 ? messages + 1 : messages;
    return describe({messages, half * other});
}

// The counter's side, on any runtime: each number counted and summed.
class Counting {
public:
    explicit Counting(std::uint64_t messages) : messages_(messages) {}

    // True once the last number has come, and count() is then final.
    bool add(std::uint64_t value) noexcept {
        ++count_.received;
        count_.sum += value;
        return count_.received == messages_;
    }

    const Count& count() const noexcept { return count_; }

private:
    const std::uint64_t messages_;
    Count count_;
};

// A run's count, once its phase is in `result`: what it processed, its answer and what that
// must be after `messages` numbers.
inline void report(Result& result, const Count& count, std::uint64_t messages) {
    result.messages_processed = count.received;
    result.answer = describe(count);
    result.expected = expected(messages);
}

// The kernel's own parameters (the work it does), one schema for every runtime that runs it;
// each kernel adds its clock and runtime parameters with schema() (framework/schema.hpp).
inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("messages", 50'000'000, {1, 10'000'000'000}, "numbers sent to the counter"),
    };
}

// The messages, one protocol for ours and caf_counting_actor (its CAF port).

struct Add {
    std::uint64_t value;
};

}  // namespace labctl::kernels::counting_actor
