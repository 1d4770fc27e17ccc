// What Savina's parallelism benchmarks (16-30) share: the sequential program, timed. Each such
// kernel computes its expected answer without actors (the same algorithm, one thread, no
// messages), after its phase, with the environment stopped; its time is recorded as the metric
// sequential_ns, the baseline a reader compares a pool's time with (a speed-up over the
// sequential program, beside the speed-up over the same pool at one thread).
#pragma once

#include <chrono>
#include <utility>

#include "../framework/kernel.hpp"

namespace labctl::kernels::savina {

inline constexpr const char* kSequentialMetric = "sequential_ns";

// The metric's declaration, for a kernel's `.metrics`.
inline MetricSpec sequential_metric() { return {.name = kSequentialMetric}; }

// Runs `program` (the sequential computation of the answer), records its wall time in `result`
// as sequential_ns, and returns what it computed.
template <class Program>
auto timed_sequential(Result& result, Program&& program) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    auto answer = std::forward<Program>(program)();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    result.metrics.push_back({kSequentialMetric, double(ns)});
    return answer;
}

}  // namespace labctl::kernels::savina
