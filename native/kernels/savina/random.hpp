// The seeded generators of the savina_ kernels, one home for each, so that a kernel and its
// oracle in tests/oracles.py replay the same numbers:
// - PseudoRandom, Savina's own 16-bit LCG (its PseudoRandom.java), where a kernel draws what
//   Savina draws in the order Savina draws it;
// - SplitMix64, where Savina draws from java.util.Random or Math.random() (whose streams we do
//   not replay): a 64-bit stream per (seed, stream), stated in the kernel's differences;
// - busy_work, the synthetic work in place of Savina's busy-waits;
// - fnv_fold, the hash kernels fold their answers into.
#pragma once

#include <cstdint>

namespace labctl::kernels::savina {

// Savina's PseudoRandom: value = (value * 1309 + 13849) & 65535. A step depends only on the low
// 16 bits of the value before it, so 64-bit arithmetic gives Java's sequence for any seed.
class PseudoRandom {
public:
    explicit PseudoRandom(std::uint64_t seed) noexcept : value_(seed) {}
    std::uint64_t next() noexcept {
        value_ = (value_ * 1309 + 13849) & 65535;
        return value_;
    }
    // nextInt(bound), as Savina's: the next value modulo `bound`.
    std::uint32_t next(std::uint32_t bound) noexcept { return std::uint32_t(next() % bound); }
    // nextDouble(), as Savina's: 1 / (value + 1).
    double next_double() noexcept { return 1.0 / double(next() + 1); }

private:
    std::uint64_t value_;
};

inline constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// SplitMix64's finalizer.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// SplitMix64, its state started at mix64(seed * 65536 + stream): stream is a worker's index (each
// its own), 0 for a kernel's one stream. tests/oracles.py's SplitMix64 replays it.
class SplitMix64 {
public:
    SplitMix64(std::uint64_t seed, std::uint32_t stream) noexcept : state_(mix64(seed * 65536 + stream)) {}
    std::uint64_t next() noexcept {
        state_ += kGolden;
        return mix64(state_);
    }
    // A value in [0, bound): the next value modulo `bound` (its bias, under 2^-40 for the bounds
    // the kernels use, is the oracle's too).
    std::uint64_t below(std::uint64_t bound) noexcept { return next() % bound; }
    // A double in [0, 1): the next value's top 53 bits.
    double unit() noexcept { return double(next() >> 11) * 0x1.0p-53; }

private:
    std::uint64_t state_;
};

// The synthetic work in place of Savina's busy-waits (`steps` calls of Math.random()): `steps`
// steps of a 64-bit LCG from `steps`, whose last state the caller keeps, so none is skipped.
// Each step's state passes through an empty asm statement, which the compiler must take as
// changing it, so that no compiler folds steps together: LLVM folds each 8 into one multiply and
// add (the tokio peer's busy_work says so, and holds its steps the same way); g++ 12 does not, and
// the statement emits no instruction.
inline std::uint64_t busy_work(std::uint32_t steps) noexcept {
    std::uint64_t x = steps;
    for (std::uint32_t k = 0; k < steps; ++k) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm("" : "+r"(x));
    }
    return x;
}

// FNV-1a over 64-bit words.
inline constexpr std::uint64_t kFnvBasis = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;
constexpr std::uint64_t fnv_fold(std::uint64_t hash, std::uint64_t word) noexcept { return (hash ^ word) * kFnvPrime; }

}  // namespace labctl::kernels::savina
