// floor_cache_line: the machine's floor for a round trip between two threads. One cache line
// bounced between two pinned threads that spin on it: no queue, no envelope, no runtime. A
// message between two runtime threads moves at least this line there and back.
#include <atomic>
#include <cstdint>
#include <thread>

#include "floors.hpp"

namespace labctl::kernels::floor_cache_line {
namespace {

// A value on a line of its own, and the spinning that waits for it to change.
class SpunLine {
public:
    void post(std::uint64_t value) noexcept {
        // release, and acquire below: what a runtime's message needs (the line publishes it); on
        // x86 both are plain moves, so the floor is what relaxed accesses would give.
        value_.store(value, std::memory_order_release);
    }

    std::uint64_t await_change(std::uint64_t current) noexcept {
        for (unsigned spins = 0;; ++spins) {
            const std::uint64_t seen = value_.load(std::memory_order_acquire);
            if (seen != current) return seen;
            // pause, as every spinner of the runtime does (wait.hpp); past a few hundred
            // thousand spins the other thread is not running (both pinned to one CPU, or
            // preempted): yield, so the run still ends.
            if (spins < (1u << 18)) rt::cpu_relax();
            else std::this_thread::yield();
        }
    }

private:
    alignas(64) std::atomic<std::uint64_t> value_{0};  // the line to itself
};

Result run(const Params& params) {
    SpunLine line;
    Result result = floors::measure_round_trips(line, params);
    // A hop from one thread to the next (a ring across threads) moves the line one way.
    result.metrics.push_back({"one_way_ns", ping_pong::metric(result.metrics, "round_trip_mean_ns") / 2});
    return result;
}

const Registration registration(Kernel{
    .name = "floor_cache_line",
    .summary = "the machine's floor for a round trip between threads: one cache line bounced "
               "between two pinned, spinning threads",
    .description =
        "Two threads pinned as `pin` says share one 64-byte line. The initiator writes 2k+1 "
        "and spins (pause) until it reads 2k+2; the responder spins until it reads 2k+1 and "
        "writes 2k+2. Nothing else: no queue, no envelope, no runtime. As ping_pong, the "
        "throughput phase (round_trips, elapsed_ns, round_trip_mean_ns) has no clock read "
        "inside, then latency_samples round trips are timed one by one (round_trip_p50_ns, "
        "_p99_ns, _max_ns; clock_read_ns is what one clock read costs). one_way_ns is half "
        "the mean: a hop to the next thread. The floor of ping_pong's round trips across "
        "threads, and of a hop of thread_ring on two alternating groups: a report gives those "
        "as multiples of it.",
    .sources = {{"theron_303", "PingPong: the hardware's share of a round trip across threads"},
                {"sobjectizer_tales22", "Ping pong: the hardware's share of a round trip across threads"}},
    .verifies = "the initiator saw each reply once and in order (2k+2 after 2k+1) for every round trip of "
                "both phases, and the responder answered each one once, in order",
    .params = floors::round_trip_params(1'000'000, 10'000),
    .metrics = floors::round_trip_metrics_and({{.name = "one_way_ns"}}),
    .check = {},
    .run = run,
    .expect = floors::expect_round_trips,
    .floor_of = {{.kernel = "ping_pong", .metric = "round_trip_p50_ns", .floor_metric = "round_trip_p50_ns",
                  .name = "the cache line"},
                 {.kernel = "ping_pong", .metric = "round_trip_mean_ns", .floor_metric = "round_trip_mean_ns",
                  .name = "the cache line"},
                 {.kernel = "thread_ring", .metric = "ns_per_hop", .floor_metric = "one_way_ns",
                  .name = "a cache line's one-way trip", .where = {{"dispatcher", std::string("active_group")}}}},
});

}  // namespace
}  // namespace labctl::kernels::floor_cache_line
