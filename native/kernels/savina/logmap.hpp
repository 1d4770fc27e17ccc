// What every savina_logmap kernel (ours, caf_savina_logmap) shares: Savina's terms and rates, a
// series worker's count and hash of its terms, the master's tally, the checks, the answer and its
// format, so that both runtimes are verified the same way.
#pragma once

#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_logmap {

inline constexpr std::uint64_t kHashBasis = savina::kFnvBasis;

// FNV-1a over 64-bit words: each term's bit pattern, then each series' hash in series order.
inline constexpr auto fold = savina::fnv_fold;

inline std::uint64_t bits(double value) noexcept { return std::bit_cast<std::uint64_t>(value); }

// Savina's LogisticMapConfig.computeNextTerm, in the same order of operations.
inline double next_term(double term, double rate) noexcept { return rate * term * (1 - term); }

// Series i: its rate computer's rate and its start term, as Savina's Master computes them.
inline double rate_of(double start_rate, double increment, std::uint32_t i) noexcept {
    return start_rate + (double(i) * increment);
}
inline double start_of(double increment, std::uint32_t i) noexcept { return double(i) * increment; }

struct Answer {
    std::uint64_t series_reported = 0;
    std::uint64_t terms_computed = 0;
    std::uint64_t terms_hash = kHashBasis;
    double final_sum = 0;  // the series' last terms, summed in series order
};

inline std::string describe(const Answer& a) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(a.terms_hash));
    char sum[40];
    std::snprintf(sum, sizeof sum, "%.17g", a.final_sum);
    return "series_reported=" + std::to_string(a.series_reported) +
           " terms_computed=" + std::to_string(a.terms_computed) + " terms_hash=" + hash +
           " final_sum=" + sum;
}

struct Setup {
    std::uint32_t series;
    std::uint64_t terms;
    double start_rate;
    double increment;
};

inline Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("series")), std::uint64_t(params.integer("terms")),
            params.real("start_rate"), params.real("increment")};
}

// The sequential model: every series computed in one loop, with the operations in the actors'
// order, so that its hash matches bit for bit.
inline std::string expected(const Setup& s) {
    Answer a;
    std::vector<double> last(s.series);
    for (std::uint32_t i = 0; i < s.series; ++i) {
        const double rate = rate_of(s.start_rate, s.increment, i);
        double term = start_of(s.increment, i);
        std::uint64_t hash = kHashBasis;
        for (std::uint64_t t = 0; t < s.terms; ++t) {
            term = next_term(term, rate);
            hash = fold(hash, bits(term));
        }
        a.terms_hash = fold(a.terms_hash, hash);
        last[i] = term;
    }
    for (double term : last) a.final_sum += term;
    a.series_reported = s.series;
    a.terms_computed = std::uint64_t(s.series) * s.terms;
    return describe(a);
}

// Start, then per series: terms x (NextTerm, Compute, Result), GetTerm and SeriesDone.
inline std::uint64_t messages(const Setup& s) { return 1 + s.series * (3 * s.terms + 2); }

// A run's figures, once the master has every series' report.
inline void report(Result& result, const Answer& answer, const Setup& s) {
    result.messages_processed = 1 + answer.series_reported + answer.terms_computed * 3 + s.series;
    result.answer = describe(answer);
    result.expected = expected(s);
}

inline Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {expected(s), messages(s)};
}

// What the parameters must satisfy together, on any runtime: every term and rate in the map's range.
inline void check_series(const std::string& kernel, const Params& params) {
    const Setup s = setup(params);
    const double last = double(s.series - 1) * s.increment;
    if (last > 1)
        throw ParamError(kernel, "increment",
                         "parameter 'increment' times (series - 1) must be at most 1 (series i starts at "
                         "term i*increment, which must lie in [0, 1]); got " + std::to_string(last));
    if (s.start_rate + last > 4)
        throw ParamError(kernel, "start_rate",
                         "parameter 'start_rate' + (series - 1) * increment must be at most 4 (the "
                         "logistic map leaves [0, 1] above rate 4); got " + std::to_string(s.start_rate + last));
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("terms", 25'000, {1, 100'000'000}, "terms each series worker computes (Savina's numTerms)"),
        integer_param("series", 10, {1, 100'000}, "series workers, each with its rate computer (Savina's numSeries)"),
        real_param("start_rate", 3.46, {0, 4},
                   "the rate of series 0; series i's is start_rate + i*increment (Savina's startRate)"),
        real_param("increment", 0.0025, {0, 1},
                   "step of the rates and of the start terms: series i starts at term i*increment"),
    };
}

// The messages, one protocol for ours and caf_savina_logmap (its CAF port): Start (kernel ->
// master), NextTerm and GetTerm (master -> worker), Compute (worker -> computer), TermResult
// (computer -> worker), SeriesDone (worker -> master). `Handle` is how the runtime addresses the
// worker (ours: a pointer to its agent; CAF's: caf::actor).
struct Start {};
struct NextTerm {};
struct GetTerm {};
template <class Handle>
struct Compute {
    Handle sender;
    double term;
};
struct TermResult {
    double term;
};
struct SeriesDone {
    std::uint32_t id;
    std::uint64_t computed;
    std::uint64_t hash;
    double last;
};

// A series worker's side, on any runtime: its current term, the terms computed and their hash.
class Series {
public:
    explicit Series(double start_term) noexcept : term_(start_term) {}
    double term() const noexcept { return term_; }
    void computed(double term) noexcept {
        term_ = term;
        ++computed_;
        hash_ = fold(hash_, bits(term_));
    }
    SeriesDone done(std::uint32_t id) const noexcept { return {id, computed_, hash_, term_}; }

private:
    double term_;
    std::uint64_t computed_ = 0;
    std::uint64_t hash_ = kHashBasis;
};

// The master's side, on any runtime: the series' reports, folded in series order once all came,
// whatever order they came in (the sum is then schedule-independent).
class Tally {
public:
    explicit Tally(std::uint32_t series) : hashes_(series, 0), last_(series, 0), seen_(series, false) {}

    // True once every series has reported: then answer() is the run's.
    bool add(const SeriesDone& d) {
        ++answer_.series_reported;
        answer_.terms_computed += d.computed;
        if (d.id < seen_.size() && !seen_[d.id]) {
            seen_[d.id] = true;
            hashes_[d.id] = d.hash;
            last_[d.id] = d.last;
        }
        if (answer_.series_reported != seen_.size()) return false;
        for (std::size_t i = 0; i < seen_.size(); ++i) {
            answer_.terms_hash = fold(answer_.terms_hash, hashes_[i]);
            answer_.final_sum += last_[i];
        }
        return true;
    }
    const Answer& answer() const noexcept { return answer_; }

private:
    std::vector<std::uint64_t> hashes_;
    std::vector<double> last_;
    std::vector<bool> seen_;
    Answer answer_;
};

}  // namespace labctl::kernels::savina_logmap
