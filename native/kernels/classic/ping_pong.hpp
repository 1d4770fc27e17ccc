// What every ping_pong kernel (ours, caf_ping_pong) shares: the messages and their payload sizes,
// how each side counts what it receives, the checks, the answer and its format and the
// round-trip metrics, so that they are verified and reported the same way. A run has two phases:
// the throughput phase (messages/2 round trips, timed as a whole, no clock read inside), then
// the latency phase (latency_samples round trips, each timed on its own), so that the timing of
// one never perturbs the other.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../runtime/completion.hpp"
#include "../framework/counters.hpp"
#include "../framework/kernel.hpp"

namespace labctl::kernels::ping_pong {

// What one side received: a lost, duplicated or reordered message shows as out of order (or as
// a short count), a damaged payload as corrupt.
struct Tally {
    std::uint64_t received = 0;
    std::uint64_t out_of_order = 0;
    std::uint64_t corrupt = 0;

    void count(std::uint64_t seq, bool intact) {
        if (seq != received) ++out_of_order;
        if (!intact) ++corrupt;
        ++received;
    }
};

// The payload is written by the sender and checked by the receiver, so its bytes really travel
// (bytes as std::uint8_t: CAF copies a message's values into the message through its inspector).
template <std::size_t N>
struct Ping {
    explicit Ping(std::uint64_t sequence) : seq(sequence) { payload.fill(std::uint8_t(sequence)); }
    bool intact() const noexcept {
        if constexpr (N == 0) return true;
        else return payload.front() == std::uint8_t(seq) && payload.back() == std::uint8_t(seq);
    }
    std::uint64_t seq;
    std::array<std::uint8_t, N> payload;
};

template <std::size_t N>
struct Pong {
    explicit Pong(const Ping<N>& ping) : seq(ping.seq), payload(ping.payload) {}
    bool intact() const noexcept {
        if constexpr (N == 0) return true;
        else return payload.front() == std::uint8_t(seq) && payload.back() == std::uint8_t(seq);
    }
    std::uint64_t seq;
    std::array<std::uint8_t, N> payload;
};

// What the pinger hands to the kernel when both phases are over.
struct Outcome {
    Tally pongs;         // the throughput phase's
    Tally probe_pongs;   // the latency phase's
    std::chrono::steady_clock::time_point start;  // the throughput phase, no clock read inside
    std::chrono::steady_clock::time_point end;
    std::vector<std::int64_t> round_trips_ns;  // the latency phase's, one per probe
    double clock_read_ns = 0;                  // what one clock read costs, measured in the run
};

inline std::string describe(const Tally& pings, const Tally& pongs) {
    return "pings=" + std::to_string(pings.received) + " pongs=" + std::to_string(pongs.received) +
           " out_of_order=" + std::to_string(pings.out_of_order + pongs.out_of_order) +
           " corrupt=" + std::to_string(pings.corrupt + pongs.corrupt);
}

// What the answer must be after `round_trips` round trips.
inline std::string expected(std::uint64_t round_trips) {
    return describe(Tally{round_trips, 0, 0}, Tally{round_trips, 0, 0});
}

// The answer covers the throughput phase (what an external runtime is held to); the latency
// phase's probes are checked here: a lost, repeated or damaged probe is a wrong answer too.
inline void check_probes(const std::string& kernel, const Tally& pings, const Tally& pongs, std::uint64_t probes) {
    if (pings.received != probes || pongs.received != probes || pings.out_of_order + pongs.out_of_order != 0 ||
        pings.corrupt + pongs.corrupt != 0)
        throw VerificationError(kernel + ": wrong answer in the latency phase: got '" + describe(pings, pongs) +
                                "', expected '" + expected(probes) + "'");
}

// The mean cost of one steady_clock read on this thread (a vDSO call of tens of nanoseconds):
// a timed round trip of the latency phase includes about one (the end of the read that starts
// it and the start of the read that ends it), so it is reported beside them.
inline double clock_read_ns() {
    using Clock = std::chrono::steady_clock;
    constexpr int kReads = 1000;
    const Clock::time_point first = Clock::now();
    Clock::time_point last = first;
    for (int i = 0; i < kReads; ++i) last = Clock::now();
    return double(std::chrono::duration_cast<std::chrono::nanoseconds>(last - first).count()) / kReads;
}

// `sorted` is not empty: with no sample there is no percentile (round_trip_metrics leaves it out).
inline double percentile(const std::vector<std::int64_t>& sorted, double p) {
    const auto rank = std::size_t(p * double(sorted.size() - 1) + 0.5);
    return double(sorted[std::min(rank, sorted.size() - 1)]);
}

// The round-trip metrics: the mean over the throughput phase (its elapsed time over its round
// trips: Theron's "200 ns round trip" is 5 s over 25M cycles), and percentiles of the latency
// phase's probes (sorts them). A figure that was not measured is left out, never 0 (a stored 0
// reads as a measured 0 ns and compares as one): with latency_samples = 0 there are no
// percentiles and no clock read, and with no round trip no mean. round_trip_samples, a count,
// is there always.
inline std::vector<Metric> round_trip_metrics(Outcome& outcome, std::uint64_t round_trips) {
    std::vector<std::int64_t>& samples = outcome.round_trips_ns;
    std::sort(samples.begin(), samples.end());
    const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.end - outcome.start).count();
    std::vector<Metric> metrics;
    if (round_trips != 0) metrics.push_back({"round_trip_mean_ns", double(elapsed) / double(round_trips)});
    if (!samples.empty()) {
        metrics.push_back({"round_trip_p50_ns", percentile(samples, 0.50)});
        metrics.push_back({"round_trip_p99_ns", percentile(samples, 0.99)});
        metrics.push_back({"round_trip_max_ns", double(samples.back())});
    }
    metrics.push_back({"round_trip_samples", double(samples.size())});
    if (!samples.empty()) metrics.push_back({"clock_read_ns", outcome.clock_read_ns});
    return metrics;
}

// What round_trip_metrics records, as its kernels declare it (Kernel::metrics). The mean is
// always there: every kernel that reports it makes at least one round trip (its schema's minimum).
inline std::vector<MetricSpec> round_trip_metric_specs() {
    return {{.name = "round_trip_mean_ns"},
            {.name = "round_trip_p50_ns", .absent_when = "latency_samples = 0"},
            {.name = "round_trip_p99_ns", .absent_when = "latency_samples = 0"},
            {.name = "round_trip_max_ns", .absent_when = "latency_samples = 0"},
            {.name = "round_trip_samples"},
            {.name = "clock_read_ns", .absent_when = "latency_samples = 0"}};
}

// The value of metric `name` in `metrics`; the caller knows it is there.
inline double metric(const std::vector<Metric>& metrics, std::string_view name) {
    for (const Metric& m : metrics)
        if (m.name == name) return m.value;
    throw std::logic_error("no metric '" + std::string(name) + "'");
}

// The ponger's side, on any runtime: the first round_trips pings are the throughput phase's, the
// rest the latency phase's probes, each phase tallied on its own.
class PingTallies {
public:
    explicit PingTallies(std::uint64_t round_trips) : round_trips_(round_trips) {}

    template <std::size_t N>
    void count(const Ping<N>& ping) {
        const bool probe = ping.seq >= round_trips_;
        tallies_[probe].count(ping.seq - (probe ? round_trips_ : 0), ping.intact());
    }
    const Tally& pings() const noexcept { return tallies_[0]; }
    const Tally& probes() const noexcept { return tallies_[1]; }

private:
    const std::uint64_t round_trips_;
    Tally tallies_[2];
};

// The pinger's side, on any runtime: it starts the throughput phase, counts each pong, times
// the phases and picks each ping's sequence number; `send(seq)` sends the ping (a callable, so
// the throughput phase's path inlines into the pinger's handler). The throughput phase is also
// where the counting measures start and stop (framework/counters.hpp): its clock reads are there, not
// around the actors' creation before it or the latency phase after it.
class PingerPhases {
public:
    using Clock = std::chrono::steady_clock;

    PingerPhases(std::uint64_t round_trips, std::uint64_t probes, rt::Completion<Outcome>& done)
        : round_trips_(round_trips), probes_(probes), done_(done) {
        outcome_.round_trips_ns.reserve(probes);
    }

    // The throughput phase starts with the first ping.
    template <class Send>
    void start(Send&& send) {
        counters::begin();
        outcome_.start = Clock::now();
        send(std::uint64_t{0});
    }

    // A pong came back: sends the next ping, or hands the outcome to `done` once both phases
    // are over.
    template <std::size_t N, class Send>
    void on_pong(const Pong<N>& pong, Send&& send) {
        if (outcome_.pongs.received < round_trips_) [[likely]] {
            // The throughput phase: no clock read until its last pong.
            outcome_.pongs.count(pong.seq, pong.intact());
            if (outcome_.pongs.received < round_trips_) [[likely]] send(pong.seq + 1);
            else throughput_over(send);
            return;
        }
        on_probe_pong(pong.seq, pong.intact(), send);
    }

private:
    template <class Send>
    [[gnu::noinline]] void throughput_over(Send& send) {
        outcome_.end = Clock::now();
        counters::end();
        if (probes_ == 0) {
            done_.set(std::move(outcome_));
            return;
        }
        outcome_.clock_read_ns = clock_read_ns();
        probe(0, send);
    }

    // The latency phase: each round trip timed on its own, from just before its ping is sent.
    template <class Send>
    [[gnu::noinline]] void on_probe_pong(std::uint64_t seq, bool intact, Send& send) {
        const Clock::time_point now = Clock::now();
        outcome_.round_trips_ns.push_back((now - sampled_at_).count());
        outcome_.probe_pongs.count(seq - round_trips_, intact);
        if (outcome_.probe_pongs.received < probes_) probe(outcome_.probe_pongs.received, send);
        else done_.set(std::move(outcome_));
    }

    template <class Send>
    void probe(std::uint64_t index, Send& send) {
        sampled_at_ = Clock::now();
        send(round_trips_ + index);
    }

    const std::uint64_t round_trips_;
    const std::uint64_t probes_;
    rt::Completion<Outcome>& done_;
    Clock::time_point sampled_at_;
    Outcome outcome_;
};

// Runs `run(std::integral_constant<std::size_t, N>{})` with N the run's payload_bytes (one of
// own_params()'s choices): each payload size is a message type of its own.
template <class Run>
Result with_payload(const Params& params, Run&& run) {
    switch (params.integer("payload_bytes")) {
    case 0: return run(std::integral_constant<std::size_t, 0>{});
    case 16: return run(std::integral_constant<std::size_t, 16>{});
    case 64: return run(std::integral_constant<std::size_t, 64>{});
    case 256: return run(std::integral_constant<std::size_t, 256>{});
    case 1024: return run(std::integral_constant<std::size_t, 1024>{});
    case 4096: return run(std::integral_constant<std::size_t, 4096>{});
    }
    throw std::logic_error("payload_bytes outside its schema");
}

// `messages` counts pings plus pongs: it must be even.
inline void check_messages(const std::string& kernel, const Params& params) {
    if (params.integer("messages") % 2 != 0)
        throw ParamError(kernel, "messages",
                         "parameter 'messages' must be even (pings plus pongs), got " +
                             std::to_string(params.integer("messages")));
}

// A run's outcome, once its phase is in `result`: what it processed (the throughput phase's pings
// and pongs), its answer and what that must be after `round_trips` round trips, and the
// round-trip metrics (sorts the outcome's probes).
inline void report(Result& result, const Tally& pings, Outcome& outcome, std::uint64_t round_trips) {
    result.messages_processed = pings.received + outcome.pongs.received;
    result.answer = describe(pings, outcome.pongs);
    result.expected = expected(round_trips);
    result.metrics = round_trip_metrics(outcome, round_trips);
}

// The kernel's own parameters (the work it does), one schema for every runtime that runs it;
// each kernel adds its clock and runtime parameters with schema() (framework/schema.hpp).
inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("messages", 10'000'000, {2, 10'000'000'000}, "messages in total, pings plus pongs (even)"),
        {.name = "mbox",
         .type = ParamType::choice,
         .default_value = std::string("direct"),
         .help = "direct: each agent's own mbox; named: two named mboxes (multi-consumer)",
         .choices = {std::string("direct"), std::string("named")}},
        {.name = "payload_bytes",
         .type = ParamType::integer,
         .default_value = std::int64_t{0},
         .help = "bytes carried by each message besides its sequence number",
         .choices = {std::int64_t{0}, std::int64_t{16}, std::int64_t{64}, std::int64_t{256},
                     std::int64_t{1024}, std::int64_t{4096}}},
        integer_param("latency_samples", 10'000, {0, 10'000'000},
                      "round trips timed one by one after the throughput phase, for the latency "
                      "percentiles (each includes about one clock read, reported as clock_read_ns); "
                      "0: none, and then no percentile and no clock_read_ns is reported"),
    };
}

}  // namespace labctl::kernels::ping_pong
