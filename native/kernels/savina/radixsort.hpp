// What Savina's two sorting kernels (savina_radixsort, savina_bitonicsort) share: the sink's
// check of the stream of values it receives, and its answer's format, so that both verify a sort
// the same way: its length, whether each value is at least the one before, the sum, a hash of
// the multiset (whatever the order) and a hash of the sequence (in order).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_radixsort {

struct SortedStream {
    std::uint64_t count = 0;
    std::uint64_t out_of_place = 0;              // values smaller than the one before them
    std::uint64_t sum = 0;                       // modulo 2^64
    std::uint64_t multiset = 0;                  // sum of mix64(value) modulo 2^64: order-free
    std::uint64_t sequence = savina::kFnvBasis;  // FNV-1a over the values in order
    std::uint64_t previous = 0;

    void add(std::uint64_t value) noexcept {
        if (count > 0 && value < previous) ++out_of_place;
        previous = value;
        ++count;
        sum += value;
        multiset += savina::mix64(value);
        sequence = savina::fnv_fold(sequence, value);
    }
};

inline SortedStream stream_of(const std::vector<std::uint64_t>& values) {
    SortedStream stream;
    for (std::uint64_t value : values) stream.add(value);
    return stream;
}

inline std::string describe(const SortedStream& s) {
    char hashes[64];
    std::snprintf(hashes, sizeof hashes, "multiset_hash=%016llx sequence_hash=%016llx",
                  static_cast<unsigned long long>(s.multiset), static_cast<unsigned long long>(s.sequence));
    return "values=" + std::to_string(s.count) + " sorted=" + (s.out_of_place == 0 ? "1" : "0") +
           " out_of_place=" + std::to_string(s.out_of_place) + " sum=" + std::to_string(s.sum) + " " + hashes;
}

// The inputs: `values` draws of SplitMix64(seed, 0) below `max_value`.
inline std::vector<std::uint64_t> inputs(std::uint64_t values, std::uint64_t max_value, std::uint64_t seed) {
    savina::SplitMix64 generator(seed, 0);
    std::vector<std::uint64_t> drawn(values);
    for (std::uint64_t& value : drawn) value = generator.below(max_value);
    return drawn;
}

// The parameter that seeds inputs().
inline ParamSpec seed_param() {
    return integer_param("seed", 2'048, {0, 1'000'000'000},
                         "the values are SplitMix64(seed) draws below max_value (Savina's S, for its own generator)");
}

}  // namespace labctl::kernels::savina_radixsort
