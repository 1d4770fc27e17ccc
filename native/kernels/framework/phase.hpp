// The measured phase of a kernel: wall time on the steady clock and CPU time per runtime thread,
// taken inside the kernel around the phase only, and the marks where counting tools start and
// stop (counters.hpp: callgrind's instructions, perf_event counters); and waiting for the
// kernel's answer.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../runtime/runtime.hpp"
#include "counters.hpp"
#include "dispatcher_params.hpp"
#include "kernel.hpp"

namespace labctl::kernels {

// Every kernel's phase starts and ends here, so the clock and the counters cover the same work.
class MeasuredPhase {
public:
    using Clock = std::chrono::steady_clock;

    // A phase that ends when finish() is called.
    explicit MeasuredPhase(rt::Environment& environment)
        : environment_(environment), cpu_at_start_(environment.thread_cpu_ns()),
          stats_at_start_(start_stats(environment)) {
        counters::begin();
        start_ = Clock::now();
    }

    // A phase that ends when `ends_at` is set, in the thread that sets it: its counters stop
    // there, and finish(result) takes the completion's time, so neither counts the waiting
    // thread's wake-up. `ends_at` must outlive the phase.
    template <class T>
    MeasuredPhase(rt::Environment& environment, rt::Completion<T>& ends_at)
        : environment_(environment), cpu_at_start_(environment.thread_cpu_ns()),
          stats_at_start_(start_stats(environment)),
          ended_at_([&ends_at] { return ends_at.completed_at(); }) {
        ends_at.call_on_set(&counters::end);
        counters::begin();
        start_ = Clock::now();
    }

    Clock::time_point start() const noexcept { return start_; }

    // Ends the phase (now, or when the completion it ends at was set) and records it in `result`.
    void finish(Result& result) const { finish(result, ended_at_ ? ended_at_() : Clock::now()); }

    // Ends the phase at `end` and records it in `result`.
    void finish(Result& result, Clock::time_point end) const {
        counters::end();
        result.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start_).count();
        result.thread_cpu_ns = environment_.thread_cpu_ns();
        // Threads started during the phase were at zero when it began.
        for (std::size_t i = 0; i < cpu_at_start_.size() && i < result.thread_cpu_ns.size(); ++i)
            result.thread_cpu_ns[i] -= cpu_at_start_[i];
        result.process_cpu_ns = counters::process_cpu_ns();
        counters::record();
        // From the phase's start to now, which may be later than `end` (the completion's wake-up,
        // a kernel's own span inside its phase): every count covers the same span, span_ns.
        const rt::RunStats stats = environment_.stats();
        result.runtime_counts = RuntimeCounts{
            .agents_created = stats.agents_created - stats_at_start_.agents_created,
            .inbox_messages = stats.inbox_messages - stats_at_start_.inbox_messages,
            .inbox_takes = stats.inbox_takes - stats_at_start_.inbox_takes,
            .inbox_largest = stats.inbox_largest,
            // Short waits count as the mean of those timed (stats.hpp): an estimate, which can
            // never be more than the time the threads existed.
            .idle_ns = std::min(stats.idle_ns - stats_at_start_.idle_ns,
                                stats.thread_ns - stats_at_start_.thread_ns),
            .thread_ns = stats.thread_ns - stats_at_start_.thread_ns,
            .span_ns = stats.at_ns - stats_at_start_.at_ns,
        };
    }

private:
    static rt::RunStats start_stats(rt::Environment& environment) {
        rt::begin_stats_epoch();
        return environment.stats();
    }

    rt::Environment& environment_;
    std::vector<std::int64_t> cpu_at_start_;
    rt::RunStats stats_at_start_;
    std::function<Clock::time_point()> ended_at_;  // empty: the phase ends at finish()
    Clock::time_point start_;
};

// Kernels that run `rounds` rounds (fan's iterations, ring_laps' laps) or, with rounds=0, as many
// whole rounds as fit in duration_s: the two parameters, and the duration they ask for.
inline std::vector<ParamSpec> rounds_or_duration_params(const std::string& rounds) {
    return {
        integer_param(rounds, 0, {0, 1'000'000'000},
                      rounds + " to run; 0: as many whole " + rounds + " as fit in duration_s (>0 overrides duration_s)"),
        {.name = "duration_s",
         .type = ParamType::real,
         .default_value = 1.0,
         .help = "seconds to run " + rounds + " for, when " + rounds + "=0",
         .minimum = 0.001,
         .maximum = 3600},
    };
}

inline MeasuredPhase::Clock::duration run_duration(const Params& params) {
    return std::chrono::duration_cast<MeasuredPhase::Clock::duration>(
        std::chrono::duration<double>(params.real("duration_s")));
}

// Makes each completion give up when a handler fails, so that a kernel never waits forever for an
// answer that will not come. Call before registering the kernel's agents; `completion` must
// outlive the environment (declare it first).
template <class... T>
void abandon_on_failure(rt::Environment& environment, rt::Completion<T>&... completions) {
    environment.set_failure_listener([&completions...] { (completions.abandon(), ...); });
}

// Stops the environment (every agent finishes, every thread ends) and rethrows the first
// handler failure, if any, teardown included: a kernel whose agents failed reports no result.
inline void stop_and_check(rt::Environment& environment) {
    environment.stop();
    if (std::exception_ptr error = environment.error()) std::rethrow_exception(error);
}

// What a kernel's clock covers, where its studies differ: `clock` = phase (the measured phase
// alone: what the kernel's description calls its phase) or lifetime (from before the environment,
// its dispatcher and their threads exist to after they are gone: every coop deregistered, every
// agent finished and destroyed, every runtime thread joined, the environment destroyed), as a
// study that starts its clock before so_5::launch and stops it after, or times the process.
inline ParamSpec clock_param() {
    return {.name = "clock",
            .type = ParamType::choice,
            .default_value = std::string("phase"),
            .help = "what elapsed_ns covers: phase (the measured phase alone) or lifetime (also the "
                    "environment's set-up and teardown: its threads started, every agent "
                    "deregistered and destroyed, every thread joined), the phase then reported as "
                    "the metric phase_ns",
            .choices = {std::string("phase"), std::string("lifetime")}};
}

// The metric clock=lifetime adds (Lifetime::add_phase_metric), declared with clock_param().
inline MetricSpec phase_metric() {
    return {.name = "phase_ns", .absent_when = "clock = phase"};
}

// The clock of a kernel with a `clock` parameter: made first thing in run(), before the
// environment (or CAF's actor system), and ended where the kernel is done with it.
class Lifetime {
public:
    using Clock = std::chrono::steady_clock;

    explicit Lifetime(const Params& params)
        : whole_(params.text("clock") == "lifetime"), start_(Clock::now()) {}

    // Once the phase is recorded in `result`: stops the environment (rethrowing a handler's
    // failure, teardown included) and destroys it. With clock=lifetime, elapsed_ns then runs from
    // this object's construction to here and thread_cpu_ns is each runtime thread's whole life;
    // add_phase_metric() keeps the phase's time beside it.
    void end(Result& result, DispatcherChoice& dispatchers) {
        rt::Environment& environment = dispatchers.environment();
        stop_and_check(environment);
        // Every runtime thread has exited: these are their final figures.
        std::vector<std::int64_t> cpu = environment.thread_cpu_ns();
        dispatchers.destroy();
        end(result, std::move(cpu));
    }

    // The same for a runtime the kernel has already stopped and destroyed (CAF's actor system),
    // given the CPU time of each of its threads over its whole life.
    void end(Result& result, std::vector<std::int64_t> thread_lives) {
        const Clock::time_point end = Clock::now();
        phase_ns_ = result.elapsed_ns;
        if (!whole_) return;
        result.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start_).count();
        result.thread_cpu_ns = std::move(thread_lives);
    }

    // With clock=lifetime, adds the metric phase_ns: the phase's time beside the lifetime's.
    void add_phase_metric(Result& result) const {
        if (whole_) result.metrics.push_back({"phase_ns", double(phase_ns_)});
    }

private:
    const bool whole_;
    const Clock::time_point start_;
    std::int64_t phase_ns_ = 0;
};

// The kernel's answer, or the handler's exception.
template <class T>
T await(rt::Environment& environment, rt::Completion<T>& completion) {
    auto value = completion.wait();
    if (!value) {
        if (std::exception_ptr error = environment.error()) std::rethrow_exception(error);
        throw std::runtime_error("the kernel's answer never came");
    }
    return *value;
}

// Agents made before a phase start on their threads once their coop is registered, which may
// be after the phase has begun. A kernel whose study creates its actors first and then times the
// work has each of them count down here in on_start, and waits for all of them before the phase
// begins: their starts then fall outside the clock and the counters, whatever the schedule.
// Declare it before the environment and give all_started to abandon_on_failure.
class StartLatch {
public:
    explicit StartLatch(std::uint32_t agents) : remaining_(agents) {
        if (agents == 0) all_started.set(true);
    }

    // From an agent's on_start. acq_rel: each count-down releases its agent's start, and the
    // last one acquires them all before it sets the completion, whose mutex hands them on to
    // the waiting kernel.
    void count_down() {
        if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) all_started.set(true);
    }

    void wait(rt::Environment& environment) { await(environment, all_started); }

    rt::Completion<bool> all_started;

private:
    std::atomic<std::uint32_t> remaining_;
};

// An agent that hands each Report it receives to its Collector (whose add(report) returns true
// at the last one, and outcome() is the answer) and then sets `done` with that outcome: the sink
// the kernels that gather their workers' reports share (Savina's fork-join and Big). With
// `started`, it counts down there from on_start.
template <class Collector, class Report>
class CollectorAgent final : public rt::Agent {
public:
    using Outcome = std::decay_t<decltype(std::declval<const Collector&>().outcome())>;

    CollectorAgent(Collector collector, rt::Completion<Outcome>& done, StartLatch* started = nullptr)
        : collector_(std::move(collector)), done_(done), started_(started) {
        subscribe<&CollectorAgent::on_report>();
    }

private:
    void on_start() override {
        if (started_ != nullptr) started_->count_down();
    }

    void on_report(const Report& report) {
        if (collector_.add(report)) done_.set(collector_.outcome());
    }

    Collector collector_;
    rt::Completion<Outcome>& done_;
    StartLatch* started_;
};

}  // namespace labctl::kernels
