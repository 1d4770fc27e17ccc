// The service kernel's histogram (kernels/framework/histogram.hpp) against HdrHistogram's
// semantics, with oracles computed here: every value kept within its relative precision, the
// value at a percentile the highest equivalent of the value of that rank, the exact max, and
// values past the range counted at its top; and the service's rule for which percentiles a run
// reports.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "../kernels/framework/histogram.hpp"
#include "../kernels/service/service.hpp"
#include "harness.hpp"

namespace {

using labctl::kernels::Histogram;

TEST(a_histogram_keeps_every_value_within_its_relative_precision, 10) {
    const Histogram h(2);
    // Below 256 every value is its own bucket; above, a bucket is under 1/128 of its values wide.
    for (std::int64_t v = 0; v < 256; ++v) CHECK(h.lowest_equivalent(v) == v && h.highest_equivalent(v) == v);
    for (std::int64_t v = 256; v < 50'000'000; v = v * 3 / 2 + 7) {
        const std::int64_t low = h.lowest_equivalent(v), high = h.highest_equivalent(v);
        CHECK(low <= v && v <= high);
        CHECK(double(high - low + 1) <= double(v) / 128.0);
    }
}

TEST(a_histogram_gives_the_value_of_each_percentiles_rank, 10) {
    Histogram h(2);
    // 1..1000 us: the 500th is 500 us, the 990th 990 us, the 1000th 1 ms (exact as the max).
    for (std::int64_t i = 1; i <= 1000; ++i) h.record(i * 1000);
    CHECK_EQ(h.count(), std::uint64_t{1000});
    CHECK_EQ(h.value_at_percentile(50), h.highest_equivalent(500'000));
    CHECK_EQ(h.value_at_percentile(99), h.highest_equivalent(990'000));
    CHECK_EQ(h.value_at_percentile(100), std::int64_t{1'000'000});
    CHECK_EQ(h.max(), std::int64_t{1'000'000});
    // Within 1% of the true value, never below it.
    CHECK(h.value_at_percentile(50) >= 500'000 && h.value_at_percentile(50) < 505'000);
}

TEST(an_empty_histogram_has_no_value_and_a_value_past_its_range_counts_at_its_top, 10) {
    Histogram h(2, 1'000'000);
    CHECK_EQ(h.value_at_percentile(50), std::int64_t{0});
    h.record(5'000'000);
    h.record(-3);
    CHECK_EQ(h.count(), std::uint64_t{2});
    CHECK_EQ(h.max(), std::int64_t{5'000'000});  // exact, past the range
    CHECK_EQ(h.value_at_percentile(50), std::int64_t{0});  // the negative one, at 0
    CHECK(h.value_at_percentile(100) >= 1'000'000);
}


TEST(a_histograms_buckets_give_back_every_count_at_its_lowest_equivalent_value, 10) {
    Histogram h(2);
    const std::vector<std::int64_t> values = {0, 5, 5, 255, 256, 257, 1'000, 1'003, 123'456'789};
    for (const std::int64_t v : values) h.record(v);
    std::vector<std::pair<std::int64_t, std::uint64_t>> buckets;
    h.for_each_bucket([&](std::int64_t lowest, std::uint64_t count) { buckets.emplace_back(lowest, count); });
    // 256 and 257 share a bucket (2 wide there), 1,000 and 1,003 too (8 wide); the rest stand alone.
    const std::vector<std::pair<std::int64_t, std::uint64_t>> expected = {
        {0, 1}, {5, 2}, {255, 1}, {256, 2}, {1'000, 2}, {h.lowest_equivalent(123'456'789), 1}};
    CHECK(buckets == expected);
}

// The service kernel's rule for its latency percentiles (service.hpp, kPercentiles): each stands
// where the generator's late sends are at most the share of the sends above it.
namespace service = labctl::kernels::service;

// The percentiles metrics() reports of 1,000 sends, `late` of them later than the bound.
std::vector<std::string> standing(std::uint64_t late) {
    service::Lateness lateness(std::chrono::microseconds(100));
    Histogram latency(2);
    for (std::uint64_t i = 0; i < 1000; ++i) {
        lateness.record(i < late ? 5'000'000 : 1'000);
        latency.record(std::int64_t(i + 1) * 1000);
    }
    std::vector<std::string> names;
    for (const auto& metric : service::metrics(latency, lateness, 1000, 1'000'000, 1'000'000, 1.0)) {
        if (metric.name.starts_with("latency_")) names.push_back(metric.name);
    }
    return names;
}

TEST(a_percentile_of_the_service_stands_only_where_few_enough_sends_were_late, 10) {
    using Names = std::vector<std::string>;
    const Names all = {"latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns"};
    CHECK(standing(0) == all);
    // One late send of 1,000 (0.1%): the max is the generator's, p99.9 still stands.
    CHECK(standing(1) == Names(all.begin(), all.end() - 1));
    // 10 late (1%): p99 stands, p99.9 not; 11 (1.1%): p99 falls too; 100 (10%) p90 stands, 101 not.
    CHECK(standing(10) == Names(all.begin(), all.begin() + 3));
    CHECK(standing(11) == Names(all.begin(), all.begin() + 2));
    CHECK(standing(100) == Names(all.begin(), all.begin() + 2));
    CHECK(standing(101) == Names(all.begin(), all.begin() + 1));
    // Half late: the median still stands; past half the generator fell behind and none does.
    CHECK(standing(500) == Names(all.begin(), all.begin() + 1));
    CHECK(standing(501).empty());
}

}  // namespace
