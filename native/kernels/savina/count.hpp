// What savina_count and caf_savina_count share: Savina's parameter, what the producer and the
// counter count of the messages they handle, the answer, its format and what it must be.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::savina_count {

// The producer counts the Increment that starts it and the Result; the counter the Increments
// and the Retrieve; `result` is the count the Result carried to the producer.
struct Tally {
    std::uint64_t start = 0;
    std::uint64_t increments = 0;
    std::uint64_t retrieves = 0;
    std::uint64_t results = 0;
    std::uint64_t result = 0;

    std::uint64_t messages() const noexcept { return start + increments + retrieves + results; }
};

inline std::string describe(const Tally& t) {
    return "start=" + std::to_string(t.start) + " increments=" + std::to_string(t.increments) +
           " retrieves=" + std::to_string(t.retrieves) + " results=" + std::to_string(t.results) +
           " result=" + std::to_string(t.result);
}

// N increments: the producer's start, N Increments, one Retrieve, one Result carrying N: N+3.
inline Tally expected_tally(std::uint64_t increments) {
    return {.start = 1, .increments = increments, .retrieves = 1, .results = 1, .result = increments};
}

inline std::string expected(std::uint64_t increments) { return describe(expected_tally(increments)); }

inline Expectation expect(const Params& params) {
    const auto increments = std::uint64_t(params.integer("increments"));
    return {expected(increments), expected_tally(increments).messages()};
}

inline void report(Result& result, const Tally& tally, std::uint64_t increments) {
    result.messages_processed = tally.messages();
    result.answer = describe(tally);
    result.expected = expected(increments);
}

// Savina's CountingConfig: N (num messages), 1,000,000.
inline std::vector<ParamSpec> own_params() {
    return {integer_param("increments", 1'000'000, {0, 10'000'000'000},
                          "Savina's N: the Increment messages the producer sends the counter")};
}

// The messages, one protocol for ours and caf_savina_count (its CAF port); `Handle` is how the
// runtime addresses the producer (ours: a pointer to its agent; CAF's: caf::actor).

template <class Handle>
struct Retrieve {
    Handle sender;
};

struct Increment {};

struct ResultMsg {
    std::uint64_t result;
};

}  // namespace labctl::kernels::savina_count
