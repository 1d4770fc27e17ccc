// What every ping_pong kernel (ours, caf_ping_pong) shares: the messages, how each side counts
// what it receives, the answer's format and the latency percentiles, so that they are verified
// and reported the same way.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel.hpp"

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

// What the pinger hands to the kernel when the exchange is over.
struct Outcome {
    Tally pongs;
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point end;
    std::vector<std::int64_t> round_trips_ns;  // sampled
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

// Every how many round trips the pinger samples one: at most ~100k samples, since a clock read
// costs about as much as a message on one thread.
inline std::uint64_t sample_stride(std::uint64_t round_trips) {
    return std::max<std::uint64_t>(1, round_trips / 100'000);
}

inline double percentile(const std::vector<std::int64_t>& sorted, double p) {
    if (sorted.empty()) return 0;
    const auto rank = std::size_t(p * double(sorted.size() - 1) + 0.5);
    return double(sorted[std::min(rank, sorted.size() - 1)]);
}

// The metrics of the sampled round trips (sorts them).
inline std::vector<Metric> round_trip_metrics(std::vector<std::int64_t>& samples) {
    std::sort(samples.begin(), samples.end());
    return {{"round_trip_p50_ns", percentile(samples, 0.50)},
            {"round_trip_p99_ns", percentile(samples, 0.99)},
            {"round_trip_max_ns", samples.empty() ? 0.0 : double(samples.back())},
            {"round_trip_samples", double(samples.size())}};
}

// The kernel's own parameters (the work it does), one schema for every runtime that runs it;
// each kernel adds its runtime's (dispatcher_params(), caf_support::scheduler_params()).
inline std::vector<ParamSpec> own_params() {
    return {
        {.name = "messages",
         .type = ParamType::integer,
         .default_value = std::int64_t{10'000'000},
         .help = "messages in total, pings plus pongs (even)",
         .minimum = 2,
         .maximum = 10'000'000'000},
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
    };
}

}  // namespace labctl::kernels::ping_pong
