// floor_futex_wake: the machine's floor for waking a thread. Two pinned threads take turns through
// one futex word, each sleeping in futex_wait until the other's futex_wake: every round trip is two
// wake-ups of a sleeping thread, the calls the runtime's parked threads make (wait.hpp).
#include <atomic>
#include <cstdint>

#include "floors.hpp"

namespace labctl::kernels::floor_futex_wake {
namespace {

// A value in a futex word, and the sleeping that waits for it to change.
class FutexWord {
public:
    void post(std::uint64_t value) noexcept {
        // release, and acquire below: the word publishes the turn, as a runtime's parker does.
        word_.store(std::uint32_t(value), std::memory_order_release);
        rt::futex_wake(word_, 1);
    }

    std::uint64_t await_change(std::uint64_t current) noexcept {
        for (;;) {
            const std::uint32_t seen = word_.load(std::memory_order_acquire);
            if (seen != std::uint32_t(current)) return seen;
            // No spinning: straight to sleep. A wait that finds the word changed already (the
            // other side was quicker than this one's way to the kernel) did not sleep: counted
            // apart, so the report says how many of the round trip's two wake-ups were real.
            if (rt::futex_wait(word_, std::uint32_t(current))) sleeps_.fetch_add(1, std::memory_order_relaxed);
        }
    }

    std::uint64_t sleeps() const noexcept { return sleeps_.load(std::memory_order_relaxed); }

private:
    alignas(64) std::atomic<std::uint32_t> word_{0};
    alignas(64) std::atomic<std::uint64_t> sleeps_{0};  // both threads count: relaxed, read after join
};

Result run(const Params& params) {
    FutexWord word;
    Result result = floors::measure_round_trips(word, params);
    // One wake-up: half a round trip.
    result.metrics.push_back({"wake_up_ns", ping_pong::metric(result.metrics, "round_trip_mean_ns") / 2});
    const auto total = params.integer("round_trips") + params.integer("latency_samples");
    result.metrics.push_back({"sleeps_per_round_trip", double(word.sleeps()) / double(total)});
    return result;
}

const Registration registration(Kernel{
    .name = "floor_futex_wake",
    .summary = "the machine's floor for waking a thread: two pinned threads taking turns through "
               "futex_wait and futex_wake",
    .description =
        "Two threads pinned as `pin` says share one futex word. The initiator writes 2k+1, "
        "calls futex_wake and sleeps in futex_wait until the word reads 2k+2; the responder "
        "sleeps until it reads 2k+1, writes 2k+2 and wakes the initiator. Neither spins: each "
        "round trip is two wake-ups of a sleeping thread, through the calls the runtime's "
        "parked threads make. Timed as ping_pong (a throughput phase with no clock read "
        "inside, then latency_samples round trips one by one); wake_up_ns is half the mean "
        "round trip, sleeps_per_round_trip how many of the two waits really slept (below 2: "
        "a reply came before its waiter reached the kernel). The floor of a hop of "
        "thread_ring on a thread per agent, and of ping_pong's round trip on active_obj "
        "without spinning: a report gives those as multiples of it.",
    .sources = {{"theron_303", "ThreadRing: a hop between threads that sleep, a thread wake-up"}},
    .verifies = "the initiator saw each reply once and in order (2k+2 after 2k+1) for every round trip of "
                "both phases, and the responder answered each one once, in order",
    .params = floors::round_trip_params(20'000, 2'000),
    .metrics = floors::round_trip_metrics_and({{.name = "wake_up_ns"}, {.name = "sleeps_per_round_trip"}}),
    .check = {},
    .run = run,
    .expect = floors::expect_round_trips,
    .floor_of = {{.kernel = "thread_ring", .metric = "ns_per_hop", .floor_metric = "wake_up_ns",
                  .name = "a futex wake-up", .where = {{"dispatcher", std::string("active_obj")}}},
                 {.kernel = "ping_pong", .metric = "round_trip_mean_ns", .floor_metric = "round_trip_mean_ns",
                  .name = "a futex round trip",
                  .where = {{"dispatcher", std::string("active_obj")}, {"spin_us", 0.0}}}},
});

}  // namespace
}  // namespace labctl::kernels::floor_futex_wake
