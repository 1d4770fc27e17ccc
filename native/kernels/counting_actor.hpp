// What every counting_actor kernel (ours, caf_counting_actor) shares: the count and the
// answer's format, so that they are verified the same way.
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace labctl::kernels::counting_actor
