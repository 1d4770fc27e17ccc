// What every savina_fjcreate kernel (ours, caf_savina_fjcreate) shares: its parameters, the
// sink's count of the workers' results, the answer and its format, so that they are verified the
// same way. The job is savina_fjthrput's (Savina's two fork-join benchmarks share it).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "fjthrput.hpp"

namespace labctl::kernels::savina_fjcreate {

using savina_fjthrput::job;
using savina_fjthrput::kTheta;

// What a worker reports once it has done its one job.
struct Done {
    std::uint32_t worker;
    double result;
};

struct Outcome {
    std::uint64_t done = 0;      // reports
    std::uint64_t repeated = 0;  // from a worker that had reported already
    std::uint64_t bad = 0;       // results Savina would refuse (<= 0)
    double sum = 0;              // of the results, as they came (all equal, so in any order)
};

inline std::string describe(const Outcome& o) {
    char sum[40];
    std::snprintf(sum, sizeof sum, "%.17g", o.sum);
    return "workers_done=" + std::to_string(o.done) + " repeated=" + std::to_string(o.repeated) +
           " bad_results=" + std::to_string(o.bad) + " result_sum=" + sum;
}

// What the answer must be: every worker reported once, its result positive, and the results
// (all the same job's) add up to `workers` of them added one after another.
inline std::string expected(std::uint64_t workers) {
    Outcome o;
    o.done = workers;
    o.sum = savina_fjthrput::repeated_sum(job(kTheta), workers);
    return describe(o);
}

// The sink's side, on any runtime: true once every worker has reported.
class Reports {
public:
    explicit Reports(std::uint32_t workers) : seen_(workers, false) {}
    bool add(const Done& d) {
        ++outcome_.done;
        if (d.worker >= seen_.size() || seen_[d.worker]) ++outcome_.repeated;
        else seen_[d.worker] = true;
        if (!(d.result > 0)) ++outcome_.bad;
        outcome_.sum += d.result;
        return outcome_.done == seen_.size();
    }
    const Outcome& outcome() const noexcept { return outcome_; }

private:
    std::vector<bool> seen_;
    Outcome outcome_;
};

// A run's outcome, once its phase is in `result`: each worker's one message and its report.
inline void report(Result& result, const Outcome& outcome, std::uint64_t workers) {
    result.messages_processed = 2 * outcome.done;
    result.answer = describe(outcome);
    result.expected = expected(workers);
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("workers", 40'000, {1, 100'000'000},
                      "workers created, each sent one message (a job) (Savina's N)"),
    };
}

// The messages, one protocol for ours and caf_savina_fjcreate (its CAF port).

struct Job {
    double theta;
};

}  // namespace labctl::kernels::savina_fjcreate
