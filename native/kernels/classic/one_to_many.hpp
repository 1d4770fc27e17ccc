// What every one_to_many kernel (ours, caf_one_to_many) shares: the setup from the parameters,
// the producer's send loop and checks, a worker's count and work, the outcome and the answer,
// and the limit on sleeping, so that they work and are verified the same way.
#pragma once

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::one_to_many {

// The CPU work of one message, as in the study (std::sph_neumann of the message), with the
// order kept small so each call costs the same (the study's order grows with the message
// number, which makes later messages cost more and overflows to -inf).
inline double compute(std::uint32_t value, std::int64_t iterations) {
    double sum = 0;
    for (std::int64_t i = 0; i < iterations; ++i) sum += std::sph_neumann(value % 16, 1.2345 + double(i));
    return sum;
}

// The study's handler (SObjectizer Tales 22, "series += sph_neumann(msg, 1.2345)"): the order
// is the message number itself, so a message costs more the later it comes (libstdc++'s
// recurrences run about `value` steps) and past order ~155 the value overflows to -inf (or NaN
// where infinities meet), which the series then stays. Kept verbatim for work=sph_neumann.
inline double study_compute(std::uint32_t value) { return std::sph_neumann(value, 1.2345); }

enum class Work { noop, sleep, cpu, sph_neumann };

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
        .work = params.text("work") == "sleep"         ? Work::sleep
                : params.text("work") == "cpu"         ? Work::cpu
                : params.text("work") == "sph_neumann" ? Work::sph_neumann
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
    if (setup.work == Work::sph_neumann)
        for (std::uint32_t i = 0; i < setup.messages_per_worker; ++i) setup.expected_series += study_compute(i);
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

// The producer's side, on any runtime: its send loop, timed, and the workers' reports, each
// checked against the setup.
class ProducerSide {
public:
    using Clock = std::chrono::steady_clock;

    explicit ProducerSide(const Setup& setup) : setup_(setup) {}

    // Sends 0..messages_per_worker-1, `send(number)` each.
    template <class Send>
    void produce(Send&& send) {
        const Clock::time_point start = Clock::now();
        for (std::uint32_t i = 0; i < setup_.messages_per_worker; ++i) send(i);
        outcome_.send_ns = (Clock::now() - start).count();
    }

    // A worker reported its counts and series; true once every worker has, and outcome() is
    // then final.
    bool on_report(std::uint64_t received, std::uint64_t out_of_order, double series) {
        outcome_.received += received;
        outcome_.out_of_order += out_of_order;
        if (received != setup_.messages_per_worker) ++outcome_.short_workers;
        // Bit-exact: the worker summed the same values in the same order (a NaN the same NaN).
        if ((setup_.work == Work::cpu || setup_.work == Work::sph_neumann) &&
            std::bit_cast<std::uint64_t>(series) != std::bit_cast<std::uint64_t>(setup_.expected_series))
            ++outcome_.wrong_series;
        return ++reported_ == setup_.workers;
    }

    const Outcome& outcome() const noexcept { return outcome_; }

private:
    const Setup& setup_;
    std::uint32_t reported_ = 0;
    Outcome outcome_;
};

// A worker's side, on any runtime: each number's order checked, and the work done.
class WorkerSide {
public:
    explicit WorkerSide(const Setup& setup) : setup_(setup) {}

    // Number `value` arrived; true if it was the last, when the worker reports received(),
    // out_of_order() and series() to the producer. A lost number shows as a short count (or, if
    // it is the last, as a run that never ends, which the run's timeout reports); a duplicate as
    // a long count or out of order.
    bool on_number(std::uint32_t value) {
        if (value != next_) ++out_of_order_;
        next_ = value + 1;
        ++received_;
        switch (setup_.work) {
        case Work::noop: break;
        case Work::sleep: std::this_thread::sleep_for(setup_.sleep); break;
        case Work::cpu: series_ += compute(value, setup_.cpu_iters); break;
        case Work::sph_neumann: series_ += study_compute(value); break;
        }
        return value + 1 == setup_.messages_per_worker;
    }

    std::uint64_t received() const noexcept { return received_; }
    std::uint64_t out_of_order() const noexcept { return out_of_order_; }
    double series() const noexcept { return series_; }

private:
    const Setup& setup_;
    std::uint32_t next_ = 0;
    std::uint64_t received_ = 0;
    std::uint64_t out_of_order_ = 0;
    double series_ = 0;
};

// A run's outcome, once its phase is in `result`: what it processed (deliveries and reports),
// its answer and what that must be, and its metrics.
inline void report(Result& result, const Outcome& outcome, const Setup& setup) {
    result.messages_processed = outcome.received + setup.workers;
    result.answer = describe(outcome);
    result.expected = expected(setup.workers, setup.messages_per_worker);
    result.metrics = {{"send_ns", double(outcome.send_ns)}, {"deliveries", double(outcome.received)}};
    // Every worker's series, checked equal to this bit for bit: where it is finite (the study's
    // overflows to -inf past order ~155), a figure another implementation can be held to.
    if ((setup.work == Work::cpu || setup.work == Work::sph_neumann) && std::isfinite(setup.expected_series))
        result.metrics.push_back({"series", setup.expected_series});
}

// What report() records, as every one_to_many kernel declares it (Kernel::metrics).
inline std::vector<MetricSpec> own_metrics() {
    return {{.name = "send_ns"},
            {.name = "deliveries"},
            {.name = "series",
             .absent_when = "work = noop or sleep, or the series is not finite (work = sph_neumann "
                            "overflows past about 155 messages_per_worker)"}};
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

// work=sph_neumann costs a worker about 5 n^2 ns for n numbers here (each call runs about its
// order's steps): refuse more than the study's 100,000 (about 50 s of CPU a worker) rather than
// a run of hours.
inline void check_study_work(const std::string& kernel, const Params& params) {
    if (params.text("work") != "sph_neumann" || params.integer("messages_per_worker") <= 100'000) return;
    throw ParamError(kernel, "messages_per_worker",
                     "work=sph_neumann: messages_per_worker must be at most 100000 (the study's; a "
                     "worker's cost grows as its square), got " +
                         std::to_string(params.integer("messages_per_worker")));
}

// The kernel's own parameters (the work it does), one schema for every runtime that runs it;
// each kernel adds its clock and runtime parameters with schema() (framework/schema.hpp).
inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("workers", 100, {1, 1'000'000}, "worker agents subscribed to the named mbox"),
        integer_param("messages_per_worker", 100'000, {1, 1'000'000'000},
                      "numbers the producer sends; each worker receives all of them"),
        {.name = "work",
         .type = ParamType::choice,
         .default_value = std::string("noop"),
         .help = "what a worker does per number: noop, sleep (sleep_ms), cpu (cpu_iters calls "
                 "of std::sph_neumann(number % 16, ...), the same cost each) or sph_neumann (the "
                 "study's handler, std::sph_neumann(number, 1.2345): later numbers cost more)",
         .choices = {std::string("noop"), std::string("sleep"), std::string("cpu"), std::string("sph_neumann")}},
        real_param("sleep_ms", 5.0, {0, 10'000}, "work=sleep: milliseconds a worker sleeps per number"),
        integer_param("cpu_iters", 1, {1, 1'000'000}, "work=cpu: std::sph_neumann calls per number"),
    };
}

// The messages, one protocol for ours and caf_one_to_many (its CAF port).

struct Number {
    std::uint32_t value;
};

// What a worker reports once it has its last number.
struct WorkerDone {
    std::uint32_t worker;
    std::uint64_t received;
    std::uint64_t out_of_order;
    double series;
};

}  // namespace labctl::kernels::one_to_many
