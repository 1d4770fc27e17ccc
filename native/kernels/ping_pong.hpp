// What every ping_pong kernel (ours, caf_ping_pong) shares: how each side counts what it
// receives, the answer's format and the latency percentiles, so that they are verified and
// reported the same way.
#pragma once

#include <algorithm>
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

}  // namespace labctl::kernels::ping_pong
