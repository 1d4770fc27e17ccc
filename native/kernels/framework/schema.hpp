// A kernel's parameter schema in the one order every kernel lists it (`labctl kernels`): what it
// does, what its clock covers, how it runs. A kernel file declares its own parameters only.
#pragma once

#include <utility>
#include <vector>

#include "kernel.hpp"
#include "phase.hpp"

namespace labctl::kernels {

// What a kernel's elapsed_ns may cover: its measured phase alone, or, with the `clock` parameter
// (clock_param()), also its environment's life, where one of its studies times that too.
enum class Timed { phase, phase_or_lifetime };

// `own` (the work the kernel does), then `clock` where it is Timed::phase_or_lifetime, then
// `runtime`, the parameters of how it runs: our dispatcher parameters (dispatcher_params(), with
// the kernel's own defaults where its study has them), or a peer runtime's
// (caf_support::scheduler_params()).
inline std::vector<ParamSpec> schema(std::vector<ParamSpec> own, Timed timed, std::vector<ParamSpec> runtime) {
    std::vector<ParamSpec> params = std::move(own);
    if (timed == Timed::phase_or_lifetime) params.push_back(clock_param());
    for (ParamSpec& spec : runtime) params.push_back(std::move(spec));
    return params;
}

// The metrics a kernel declares (Kernel::metrics): `own`, the figures its run records, then
// phase_ns where it is Timed::phase_or_lifetime (Lifetime::add_phase_metric records it).
inline std::vector<MetricSpec> metric_schema(std::vector<MetricSpec> own, Timed timed) {
    std::vector<MetricSpec> metrics = std::move(own);
    if (timed == Timed::phase_or_lifetime) metrics.push_back(phase_metric());
    return metrics;
}

}  // namespace labctl::kernels
