// A high-dynamic-range histogram with HdrHistogram's semantics (Gil Tene's HdrHistogram, the
// layout of its C port): values from 0 to `highest` kept to a fixed relative precision of
// `significant_digits` decimal digits, in buckets a power of two wide, each split into linear
// sub-buckets. A latency kernel records one value per request on its hot path: record() is a
// count-leading-zeros, a shift and an increment, with no allocation (the counts are sized once).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace labctl::kernels {

class Histogram {
public:
    // 2 digits: every recorded value is told apart from its neighbours within 1% (a bucket's
    // sub-buckets are 1/128 to 1/256 of its values wide); 2^40 ns is about 18 minutes.
    explicit Histogram(int significant_digits = 2, std::int64_t highest = std::int64_t{1} << 40)
        : highest_(highest) {
        if (significant_digits < 1 || significant_digits > 5)
            throw std::invalid_argument("histogram: significant digits must be 1 to 5");
        if (highest < 2) throw std::invalid_argument("histogram: highest trackable value must be >= 2");
        // The sub-buckets of one bucket must resolve 1 part in 10^digits at its lowest value: a
        // bucket's upper half spans [count/2, count) units, so count >= 2 * 10^digits.
        const auto largest_single_unit = std::uint64_t(2 * std::pow(10.0, significant_digits));
        sub_bucket_count_magnitude_ = int(std::bit_width(largest_single_unit - 1));
        sub_bucket_half_count_magnitude_ = sub_bucket_count_magnitude_ - 1;
        sub_bucket_count_ = std::int64_t{1} << sub_bucket_count_magnitude_;
        sub_bucket_half_count_ = sub_bucket_count_ / 2;
        sub_bucket_mask_ = std::uint64_t(sub_bucket_count_ - 1);
        // Buckets until the last one covers `highest`: bucket b spans values below
        // sub_bucket_count << b.
        int buckets = 1;
        for (std::int64_t smallest_untrackable = sub_bucket_count_; smallest_untrackable <= highest;
             smallest_untrackable <<= 1)
            ++buckets;
        counts_.assign(std::size_t(buckets + 1) * std::size_t(sub_bucket_half_count_), 0);
    }

    // Records `value` (clamped to [0, highest]: a negative time is a clock's error, and a larger
    // one is counted at the top; max() keeps it exact).
    void record(std::int64_t value) noexcept {
        max_ = std::max(max_, value);
        ++counts_[index_of(std::clamp<std::int64_t>(value, 0, highest_))];
        ++total_;
    }

    std::uint64_t count() const noexcept { return total_; }
    // The largest value recorded, exactly (not its bucket's): 0 when empty.
    std::int64_t max() const noexcept { return max_; }

    // The value at `percentile` (0 to 100) as HdrHistogram gives it: the highest value equivalent
    // to the recorded value with that rank (the ceil(p/100 * count)-th smallest, at least the
    // first), so the figure is never below the value it stands for. 0 when empty.
    std::int64_t value_at_percentile(double percentile) const noexcept {
        if (total_ == 0) return 0;
        const double p = std::clamp(percentile, 0.0, 100.0);
        const auto rank = std::max<std::uint64_t>(1, std::uint64_t(std::ceil(p / 100.0 * double(total_))));
        std::uint64_t seen = 0;
        for (std::size_t i = 0; i < counts_.size(); ++i) {
            seen += counts_[i];
            if (seen >= rank) return std::min(highest_equivalent(value_of(i)), max_);
        }
        return max_;
    }

    // The range of values counted as `value`: its bucket's lowest and highest.
    std::int64_t lowest_equivalent(std::int64_t value) const noexcept {
        return value_of(index_of(std::clamp<std::int64_t>(value, 0, highest_)));
    }
    std::int64_t highest_equivalent(std::int64_t value) const noexcept {
        const std::int64_t lowest = lowest_equivalent(value);
        return lowest + (std::int64_t{1} << bucket_of(std::uint64_t(lowest))) - 1;
    }

    // Calls visit(lowest, count) for each bucket that counted a value, lowest value first: its
    // lowest equivalent value and its count (what a sample keeps of the histogram).
    template <class Visit>
    void for_each_bucket(Visit&& visit) const {
        for (std::size_t i = 0; i < counts_.size(); ++i) {
            if (counts_[i] != 0) visit(value_of(i), counts_[i]);
        }
    }

    // How many counters it holds (its memory is this many 8-byte words).
    std::size_t counters() const noexcept { return counts_.size(); }

private:
    // The bucket of v: 0 for values below sub_bucket_count, then one more per doubling.
    int bucket_of(std::uint64_t v) const noexcept {
        return 64 - sub_bucket_half_count_magnitude_ - 1 - std::countl_zero(v | sub_bucket_mask_);
    }
    std::size_t index_of(std::int64_t value) const noexcept {
        const auto v = std::uint64_t(value);
        const int bucket = bucket_of(v);
        const auto sub_bucket = std::int64_t(v >> bucket);  // in [half, count) past bucket 0
        return std::size_t(((std::int64_t(bucket) + 1) << sub_bucket_half_count_magnitude_) + sub_bucket -
                           sub_bucket_half_count_);
    }
    std::int64_t value_of(std::size_t index) const noexcept {
        auto bucket = std::int64_t(index >> sub_bucket_half_count_magnitude_) - 1;
        std::int64_t sub_bucket = std::int64_t(index & std::size_t(sub_bucket_half_count_ - 1)) + sub_bucket_half_count_;
        if (bucket < 0) {  // bucket 0's lower half
            sub_bucket -= sub_bucket_half_count_;
            bucket = 0;
        }
        return sub_bucket << bucket;
    }

    std::int64_t highest_;
    int sub_bucket_count_magnitude_ = 0;
    int sub_bucket_half_count_magnitude_ = 0;
    std::int64_t sub_bucket_count_ = 0;
    std::int64_t sub_bucket_half_count_ = 0;
    std::uint64_t sub_bucket_mask_ = 0;
    std::vector<std::uint64_t> counts_;
    std::uint64_t total_ = 0;
    std::int64_t max_ = 0;
};

}  // namespace labctl::kernels
