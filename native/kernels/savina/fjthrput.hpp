// What every savina_fjthrput kernel (ours, caf_savina_fjthrput) shares: Savina's job, its
// parameters, the workers' tallies, the answer and its format, so that they are verified the
// same way. Also the job savina_fjcreate's workers do (Savina's two fork-join benchmarks share it).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::savina_fjthrput {

// Savina's performComputation(37.2): the square of a sine. The angle travels in each message, so
// the work is done at run time; out of line (noipa: never inlined nor specialised), so the square is never fused into a caller's sum
// (the answer's sum stays the same in every build, and in the oracle's Python).
inline constexpr double kTheta = 37.2;
[[gnu::noipa]] inline double job(double theta) {
    const double sine = std::sin(theta);
    return sine * sine;
}

// What a worker reports once it has done its `messages` jobs.
struct Tally {
    std::uint32_t worker;
    std::uint64_t jobs;
    std::uint64_t bad;  // results Savina would refuse (<= 0)
    double sum;         // of its results, in the order it did them
};

// A worker's side, on any runtime: one job per message; true once it has done `messages`.
class Worker {
public:
    explicit Worker(std::uint64_t messages) : messages_(messages) {}
    bool work(double theta) {
        const double result = job(theta);
        if (!(result > 0)) ++bad_;
        sum_ += result;
        return ++jobs_ == messages_;
    }
    Tally tally(std::uint32_t worker) const { return {worker, jobs_, bad_, sum_}; }

private:
    const std::uint64_t messages_;
    std::uint64_t jobs_ = 0;
    std::uint64_t bad_ = 0;
    double sum_ = 0;
};

struct Outcome {
    std::uint64_t jobs = 0;
    std::uint64_t workers_done = 0;
    std::uint64_t bad = 0;
    double sum = 0;  // the workers' sums, added in the workers' order
};

inline std::string describe(const Outcome& o) {
    char sum[40];
    std::snprintf(sum, sizeof sum, "%.17g", o.sum);
    return "jobs=" + std::to_string(o.jobs) + " workers_done=" + std::to_string(o.workers_done) +
           " bad_results=" + std::to_string(o.bad) + " result_sum=" + sum;
}

// The sum of `count` results added one after another from zero, as a worker adds them.
inline double repeated_sum(double value, std::uint64_t count) {
    double sum = 0;
    for (std::uint64_t i = 0; i < count; ++i) sum += value;
    return sum;
}

// What the answer must be: every worker did its `messages` jobs, each result positive, and the
// sum of the workers' sums (each `messages` results added in turn) added in the workers' order.
inline std::string expected(std::uint64_t actors, std::uint64_t messages) {
    Outcome o;
    o.jobs = actors * messages;
    o.workers_done = actors;
    o.sum = repeated_sum(repeated_sum(job(kTheta), messages), actors);
    return describe(o);
}

// The sink's side, on any runtime: the workers' tallies, kept by worker and added up in the
// workers' order once all have reported (whatever order they reported in).
class Tallies {
public:
    explicit Tallies(std::uint32_t actors) : sums_(actors, 0.0) {}
    bool add(const Tally& t) {
        ++outcome_.workers_done;
        outcome_.jobs += t.jobs;
        outcome_.bad += t.bad;
        if (t.worker < sums_.size()) sums_[t.worker] = t.sum;
        if (outcome_.workers_done != sums_.size()) return false;
        for (double sum : sums_) outcome_.sum += sum;
        return true;
    }
    const Outcome& outcome() const noexcept { return outcome_; }

private:
    std::vector<double> sums_;
    Outcome outcome_;
};

// A run's outcome, once its phase is in `result`: every job and every tally were a message.
inline void report(Result& result, const Outcome& outcome, std::uint64_t actors, std::uint64_t messages) {
    result.messages_processed = outcome.jobs + outcome.workers_done;
    result.answer = describe(outcome);
    result.expected = expected(actors, messages);
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("messages", 10'000, {1, 1'000'000'000}, "messages (jobs) each actor receives (Savina's N)"),
        integer_param("actors", 60, {1, 1'000'000}, "actors, sent the messages round robin (Savina's A)"),
    };
}

// The messages, one protocol for ours and caf_savina_fjthrput (its CAF port).

struct Job {
    double theta;
};

}  // namespace labctl::kernels::savina_fjthrput
