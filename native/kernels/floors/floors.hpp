// What the floor kernels share. A floor measures a limit of the machine, not of the runtime (a
// cache line bounced between two threads, a futex wake-up, an actor loop with nothing around it),
// and declares which figures of other kernels it bounds (Kernel::floor_of), so a report states
// those as multiples of it. The two-thread floors time a round trip as ping_pong times its own: a
// throughput phase with no clock read inside, then latency samples timed one by one, with the same
// metrics (ping_pong::round_trip_metrics), so the two compare figure for figure.
#pragma once

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "../../runtime/affinity.hpp"
#include "../../runtime/wait.hpp"
#include "../classic/ping_pong.hpp"
#include "../framework/counters.hpp"
#include "../framework/kernel.hpp"

namespace labctl::kernels::floors {

inline std::vector<ParamSpec> round_trip_params(std::int64_t round_trips, std::int64_t samples) {
    return {
        {.name = "round_trips",
         .type = ParamType::integer,
         .default_value = round_trips,
         .help = "round trips of the throughput phase, timed as a whole (no clock read inside)",
         .minimum = 1,
         .maximum = 1'000'000'000},
        {.name = "latency_samples",
         .type = ParamType::integer,
         .default_value = samples,
         .help = "round trips timed one by one after it, for the percentiles (each includes about "
                 "one clock read, reported as clock_read_ns); 0: none, and then no percentile "
                 "and no clock_read_ns is reported",
         .minimum = 0,
         .maximum = 10'000'000},
        {.name = "pin",
         .type = ParamType::text,
         .default_value = std::string("compact"),
         .help = "where the two threads run: compact (the closest two CPUs: SMT siblings or "
                 "neighbouring cores, the machine's best case), spread, none, or two cores of the "
                 "inherited CPU set (0,1)",
         .validate = [](const Value& value) { rt::Placement::parse(std::get<std::string>(value)); },
         .configuration = true},
    };
}

// The metrics of a round-trip floor: ping_pong's (measure_round_trips records them), then `own`.
inline std::vector<MetricSpec> round_trip_metrics_and(std::vector<MetricSpec> own) {
    std::vector<MetricSpec> metrics = ping_pong::round_trip_metric_specs();
    for (MetricSpec& spec : own) metrics.push_back(std::move(spec));
    return metrics;
}

inline std::int64_t thread_cpu_now() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// What each side counted: a value it saw that was not the one the protocol says comes next.
struct Tally {
    std::uint64_t round_trips = 0;  // the initiator's, both phases
    std::uint64_t answered = 0;     // the responder's
    std::uint64_t out_of_order = 0;
};

inline std::string describe(const Tally& tally) {
    return "round_trips=" + std::to_string(tally.round_trips) + " answered=" + std::to_string(tally.answered) +
           " out_of_order=" + std::to_string(tally.out_of_order);
}

inline std::string expected(std::uint64_t round_trips, std::uint64_t probes) {
    return describe({round_trips + probes, round_trips + probes, 0});
}

// The outcome of a round-trip floor: what ping_pong reports, and each thread's CPU time.
struct RoundTrips {
    Tally tally;
    ping_pong::Outcome outcome;
    std::vector<std::int64_t> thread_cpu_ns;
};

// Runs `round_trips` then `probes` round trips between two threads pinned as `pin` says, over a
// Wire: post(value) makes a value visible to the other side (and wakes it, if the wire sleeps),
// await_change(current) returns the first value that differs from `current`. The initiator posts
// 2k+1 and waits for 2k+2; the responder waits for 2k+1 and posts 2k+2.
template <class Wire>
RoundTrips run_round_trips(Wire& wire, std::uint64_t round_trips, std::uint64_t probes, const std::string& pin) {
    using Clock = std::chrono::steady_clock;
    const rt::Placement placement = rt::Placement::parse(pin);
    const std::uint64_t total = round_trips + probes;
    RoundTrips result;
    result.thread_cpu_ns.assign(2, 0);
    // The initiator starts the clock once the responder is running, not while it is being made.
    std::atomic<bool> ready{false};
    std::uint64_t responder_out_of_order = 0;

    std::thread responder([&] {
        if (const int cpu = placement.cpu_for(1); cpu >= 0) rt::pin_current_thread(cpu);
        const std::int64_t cpu_start = thread_cpu_now();
        // release: nothing to publish but the flag; the values travel on the wire.
        ready.store(true, std::memory_order_release);
        std::uint64_t current = 0;
        for (std::uint64_t k = 0; k < total; ++k) {
            const std::uint64_t seen = wire.await_change(current);
            if (seen != 2 * k + 1) ++responder_out_of_order;
            current = 2 * k + 2;
            wire.post(current);
            ++result.tally.answered;
        }
        result.thread_cpu_ns[1] = thread_cpu_now() - cpu_start;
    });

    // The initiator has a thread of its own too, so the caller's affinity is left alone.
    std::thread initiator([&] {
        if (const int cpu = placement.cpu_for(0); cpu >= 0) rt::pin_current_thread(cpu);
        const std::int64_t cpu_start = thread_cpu_now();
        while (!ready.load(std::memory_order_acquire)) std::this_thread::yield();
        ping_pong::Outcome& outcome = result.outcome;
        Tally& tally = result.tally;
        // The throughput phase: counted under the instructions measure as a kernel's phase is.
        counters::begin();
        outcome.start = Clock::now();
        for (std::uint64_t k = 0; k < round_trips; ++k) {
            wire.post(2 * k + 1);
            if (wire.await_change(2 * k + 1) != 2 * k + 2) ++tally.out_of_order;
            ++tally.round_trips;
        }
        outcome.end = Clock::now();
        counters::end();
        if (probes > 0) outcome.clock_read_ns = ping_pong::clock_read_ns();
        outcome.round_trips_ns.reserve(probes);
        for (std::uint64_t k = round_trips; k < total; ++k) {
            const Clock::time_point sent = Clock::now();
            wire.post(2 * k + 1);
            const std::uint64_t seen = wire.await_change(2 * k + 1);
            outcome.round_trips_ns.push_back((Clock::now() - sent).count());
            if (seen != 2 * k + 2) ++tally.out_of_order;
            ++tally.round_trips;
        }
        result.thread_cpu_ns[0] = thread_cpu_now() - cpu_start;
    });
    initiator.join();
    responder.join();
    counters::record();
    result.tally.out_of_order += responder_out_of_order;
    return result;
}

// A round-trip floor's run as ping_pong reports one: `round_trips` then `latency_samples` round
// trips over `wire` (run_round_trips), the throughput phase timed without a clock read inside.
template <class Wire>
Result measure_round_trips(Wire& wire, const Params& params) {
    const auto round_trips = std::uint64_t(params.integer("round_trips"));
    const auto probes = std::uint64_t(params.integer("latency_samples"));
    RoundTrips trips = run_round_trips(wire, round_trips, probes, params.text("pin"));
    Result result;
    result.elapsed_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(trips.outcome.end - trips.outcome.start).count();
    result.messages_processed = 2 * round_trips;  // as ping_pong's pings and pongs
    result.answer = describe(trips.tally);
    result.expected = expected(round_trips, probes);
    result.metrics = ping_pong::round_trip_metrics(trips.outcome, round_trips);
    result.thread_cpu_ns = std::move(trips.thread_cpu_ns);
    return result;
}

inline Expectation expect_round_trips(const Params& params) {
    const auto round_trips = std::uint64_t(params.integer("round_trips"));
    return {expected(round_trips, std::uint64_t(params.integer("latency_samples"))), 2 * round_trips};
}

}  // namespace labctl::kernels::floors
