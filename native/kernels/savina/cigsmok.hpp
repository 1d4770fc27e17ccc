// What every savina_cigsmok kernel (ours, caf_savina_cigsmok) shares: the arbiter's seeded
// picks, a smoker's tally and the arbiter's, the sequential model, the answer and its format, so
// that both runtimes are verified the same way.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_cigsmok {

inline constexpr std::uint64_t kHashBasis = savina::kFnvBasis;
using savina::fnv_fold;

using savina::PseudoRandom;

// A round's pick: the smoker (Math.abs(nextInt()) % smokers) and its spell of work
// (nextInt(1000) + 10), drawn in that order as Savina's arbiter draws them.
struct Pick {
    std::uint32_t smoker;
    std::uint32_t work;
};

inline Pick draw(PseudoRandom& random, std::uint32_t smokers) noexcept {
    const auto smoker = std::uint32_t(random.next() % smokers);
    const auto work = std::uint32_t(random.next() % 1000 + 10);
    return {smoker, work};
}

// The synthetic work in place of Savina's busy-wait, whose last state the smoker keeps.
using savina::busy_work;

struct Setup {
    std::uint64_t rounds;
    std::uint32_t smokers;
    std::uint64_t seed;  // the PRNG's: Savina's rounds*smokers where the parameter is 0
};

struct Answer {
    std::uint64_t smokers_reported = 0;
    std::uint64_t smokes = 0;
    std::uint64_t uneven_smokers = 0;  // smoked another number of times than the picks say
    std::uint64_t smokes_hash = kHashBasis;  // each smoker's count, in smoker order
    std::uint64_t work_units = 0;
    std::uint64_t work_sum = 0;  // the smokes' last LCG states, summed (mod 2^64)
    // Messages by kind, as their receivers counted them.
    std::uint64_t start = 0, start_smoking = 0, started_smoking = 0, exit = 0, tally = 0;
};

inline std::string describe(const Answer& a) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(a.smokes_hash));
    return "smokers_reported=" + std::to_string(a.smokers_reported) + " smokes=" + std::to_string(a.smokes) +
           " uneven_smokers=" + std::to_string(a.uneven_smokers) + " smokes_hash=" + hash +
           " work_units=" + std::to_string(a.work_units) + " work_sum=" + std::to_string(a.work_sum) +
           " start=" + std::to_string(a.start) + " start_smoking=" + std::to_string(a.start_smoking) +
           " started_smoking=" + std::to_string(a.started_smoking) + " exit=" + std::to_string(a.exit) +
           " tally=" + std::to_string(a.tally);
}

// The sequential model: the arbiter's picks replayed, each smoker's smokes counted.
struct Model {
    std::vector<std::uint64_t> smokes;
    Answer answer;
};

inline Model model(const Setup& s) {
    Model m;
    m.smokes.assign(s.smokers, 0);
    PseudoRandom random(s.seed);
    Answer& a = m.answer;
    for (std::uint64_t r = 0; r < s.rounds; ++r) {
        const Pick pick = draw(random, s.smokers);
        ++m.smokes[pick.smoker];
        a.work_units += pick.work;
        a.work_sum += busy_work(pick.work);
    }
    for (std::uint64_t count : m.smokes) a.smokes_hash = fnv_fold(a.smokes_hash, count);
    a.smokers_reported = s.smokers;
    a.smokes = s.rounds;
    a.start = 1;
    a.start_smoking = a.started_smoking = s.rounds;
    a.exit = a.tally = s.smokers;
    return m;
}

inline Setup setup(const Params& params) {
    const auto rounds = std::uint64_t(params.integer("rounds"));
    const auto smokers = std::uint32_t(params.integer("smokers"));
    const auto seed = std::uint64_t(params.integer("seed"));
    return {rounds, smokers, seed == 0 ? rounds * smokers : seed};
}

inline std::uint64_t messages(const Setup& s) { return 1 + 2 * s.rounds + 2 * std::uint64_t(s.smokers); }

inline Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {describe(model(s).answer), messages(s)};
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("rounds", 1'000, {1, 100'000'000},
                      "rounds: the arbiter picks a smoker this many times (Savina's R)"),
        integer_param("smokers", 200, {1, 1'000'000}, "smoker agents (Savina's S)"),
        integer_param("seed", 0, {0, 4'294'967'295},
                      "seed of the arbiter's PRNG (Savina's PseudoRandom); 0: rounds*smokers, Savina's own seed"),
    };
}

// The messages, one protocol for ours and caf_savina_cigsmok (its CAF port).
struct Start {};
struct StartSmoking {
    std::uint32_t work;
};
struct StartedSmoking {};
struct Exit {};
struct Tally {
    std::uint32_t smoker;
    std::uint64_t smokes;
    std::uint64_t exits;
    std::uint64_t work_units;
    std::uint64_t work_sum;
};

// A smoker's side, on any runtime: its smokes and the work they did.
class Smoker {
public:
    explicit Smoker(std::uint32_t index) noexcept : index_(index) {}
    // Savina's smoker has acknowledged (StartedSmoking) before it smokes.
    void smoke(const StartSmoking& start) noexcept {
        ++smokes_;
        work_units_ += start.work;
        work_sum_ += busy_work(start.work);
    }
    Tally tally() const noexcept { return {index_, smokes_, std::uint64_t{1}, work_units_, work_sum_}; }

private:
    const std::uint32_t index_;
    std::uint64_t smokes_ = 0;
    std::uint64_t work_units_ = 0;
    std::uint64_t work_sum_ = 0;
};

// The arbiter's side, on any runtime: its picks, its rounds and the tallies.
class Arbiter {
public:
    explicit Arbiter(const Setup& s) : setup_(s), random_(s.seed), smokes_(s.smokers, 0) {}

    // Start: the first round's pick.
    Pick start() {
        ++answer_.start;
        return draw(random_, setup_.smokers);
    }
    // A smoker started: true once every round has run (then every smoker is told to exit), else
    // the next round's pick is in `pick`.
    bool started(Pick& pick) {
        ++answer_.started_smoking;
        if (++rounds_ >= setup_.rounds) return true;
        pick = draw(random_, setup_.smokers);
        return false;
    }
    // True once every smoker's tally has come: then answer() is the run's.
    bool tally(const Tally& t) {
        ++answer_.tally;
        ++answer_.smokers_reported;
        answer_.smokes += t.smokes;
        answer_.start_smoking += t.smokes;
        answer_.exit += t.exits;
        answer_.work_units += t.work_units;
        answer_.work_sum += t.work_sum;
        if (t.smoker < smokes_.size()) smokes_[t.smoker] = t.smokes;
        if (answer_.tally != smokes_.size()) return false;
        for (std::uint64_t count : smokes_) answer_.smokes_hash = fnv_fold(answer_.smokes_hash, count);
        return true;
    }

    // The run's answer, the smokers whose smokes the model does not predict counted.
    Answer answer(const Model& m) const {
        Answer a = answer_;
        for (std::size_t i = 0; i < smokes_.size(); ++i)
            if (smokes_[i] != m.smokes[i]) ++a.uneven_smokers;
        return a;
    }

private:
    const Setup setup_;
    PseudoRandom random_;
    std::vector<std::uint64_t> smokes_;
    std::uint64_t rounds_ = 0;
    Answer answer_;
};

// A run's figures, once the arbiter has every tally.
inline void report(Result& result, const Arbiter& arbiter, const Setup& s) {
    const Model m = model(s);
    const Answer answer = arbiter.answer(m);
    result.messages_processed =
        answer.start + answer.start_smoking + answer.started_smoking + answer.exit + answer.tally;
    result.answer = describe(answer);
    result.expected = describe(m.answer);
}

}  // namespace labctl::kernels::savina_cigsmok
