// What every one_to_many kernel (ours, caf_one_to_many) shares: the setup from the parameters,
// a worker's CPU work, the outcome and the answer's format, and the limit on sleeping, so that
// they work and are verified the same way.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel.hpp"

namespace labctl::kernels::one_to_many {

// The CPU work of one message, as in the study (std::sph_neumann of the message), with the
// order kept small so each call costs the same (the study's order grows with the message
// number, which makes later messages cost more and overflows to -inf).
inline double compute(std::uint32_t value, std::int64_t iterations) {
    double sum = 0;
    for (std::int64_t i = 0; i < iterations; ++i) sum += std::sph_neumann(value % 16, 1.2345 + double(i));
    return sum;
}

enum class Work { noop, sleep, cpu };

// What the producer and every worker need from the parameters.
struct Setup {
    std::uint32_t workers;
    std::uint32_t messages_per_worker;
    Work work;
    std::chrono::nanoseconds sleep;
    std::int64_t cpu_iters;
    double expected_series;  // work=cpu
};

inline Setup make_setup(const Params& params) {
    Setup setup{
        .workers = std::uint32_t(params.integer("workers")),
        .messages_per_worker = std::uint32_t(params.integer("messages_per_worker")),
        .work = params.text("work") == "sleep" ? Work::sleep
                : params.text("work") == "cpu" ? Work::cpu
                                                : Work::noop,
        .sleep = std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double, std::milli>(params.real("sleep_ms"))),
        .cpu_iters = params.integer("cpu_iters"),
        .expected_series = 0,
    };
    // Computed here, sequentially, before the run: what every worker's series must be.
    if (setup.work == Work::cpu)
        for (std::uint32_t i = 0; i < setup.messages_per_worker; ++i)
            setup.expected_series += compute(i, setup.cpu_iters);
    return setup;
}

struct Outcome {
    std::uint64_t received = 0;
    std::uint64_t out_of_order = 0;
    std::uint64_t short_workers = 0;  // workers whose count is not messages_per_worker
    std::uint64_t wrong_series = 0;   // work=cpu: workers whose series differs from the expected
    std::int64_t send_ns = 0;
};

inline std::string describe(const Outcome& o) {
    return "received=" + std::to_string(o.received) + " out_of_order=" + std::to_string(o.out_of_order) +
           " short_workers=" + std::to_string(o.short_workers) +
           " wrong_series=" + std::to_string(o.wrong_series);
}

// What the answer must be: every worker received every number, in order.
inline std::string expected(std::uint64_t workers, std::uint64_t messages_per_worker) {
    Outcome outcome;
    outcome.received = workers * messages_per_worker;
    return describe(outcome);
}

// On a runtime that runs the workers on one thread the sleeps add up: refuse a run that cannot
// end in reasonable time rather than hang.
inline void check_sleep(const std::string& kernel, const Params& params) {
    if (params.text("work") != "sleep") return;
    const double total_ms = double(params.integer("workers")) *
                            double(params.integer("messages_per_worker")) * params.real("sleep_ms");
    if (total_ms > 600'000)
        throw ParamError(kernel, "messages_per_worker",
                         "work=sleep: workers*messages_per_worker*sleep_ms must be at most 600000 "
                         "(ten minutes of sleep in all, which a one-thread dispatcher serves one "
                         "after another), got " +
                             std::to_string(std::int64_t(total_ms)) +
                             "; the study slept 5 ms on 100 messages x 100 workers");
}

// The kernel's own parameters (the work it does), one schema for every runtime that runs it;
// each kernel adds its runtime's (dispatcher_params(), caf_support::scheduler_params()).
inline std::vector<ParamSpec> own_params() {
    return {
        {.name = "workers",
         .type = ParamType::integer,
         .default_value = std::int64_t{100},
         .help = "worker agents subscribed to the named mbox",
         .minimum = 1,
         .maximum = 1'000'000},
        {.name = "messages_per_worker",
         .type = ParamType::integer,
         .default_value = std::int64_t{100'000},
         .help = "numbers the producer sends; each worker receives all of them",
         .minimum = 1,
         .maximum = 1'000'000'000},
        {.name = "work",
         .type = ParamType::choice,
         .default_value = std::string("noop"),
         .help = "what a worker does per number: noop, sleep (sleep_ms) or cpu (cpu_iters)",
         .choices = {std::string("noop"), std::string("sleep"), std::string("cpu")}},
        {.name = "sleep_ms",
         .type = ParamType::real,
         .default_value = 5.0,
         .help = "work=sleep: milliseconds a worker sleeps per number",
         .minimum = 0,
         .maximum = 10'000},
        {.name = "cpu_iters",
         .type = ParamType::integer,
         .default_value = std::int64_t{1},
         .help = "work=cpu: std::sph_neumann calls per number",
         .minimum = 1,
         .maximum = 1'000'000},
    };
}

}  // namespace labctl::kernels::one_to_many
