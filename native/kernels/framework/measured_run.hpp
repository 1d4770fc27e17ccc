// The skeleton of a kernel's run on our runtime, in one place: the environment its parameters ask
// for, the completion its agents set with the answer, the measured phase around the work, and the
// stop that rethrows a handler's failure. A kernel fills in the parts that differ: its set-up,
// the start of its work, and what it makes of the answer.
#pragma once

#include <optional>
#include <type_traits>
#include <utility>

#include "../../runtime/runtime.hpp"
#include "dispatcher_params.hpp"
#include "kernel.hpp"
#include "phase.hpp"
#include "schema.hpp"

namespace labctl::kernels {

// A kernel's run() writes
//
//     ... what the agents hold a reference to (declared first, it outlives the environment) ...
//     MeasuredRun<Outcome> run(params);       // the environment; done() abandoned on a failure
//     ... set-up: agents made before the phase, a StartLatch waited for ...
//     Result result;
//     const Outcome outcome = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
//         ... the start: agents made inside the phase, the first message sent ...
//     });
//     ... the answer: result.messages_processed, answer, expected, metrics ...
//     return result;
//
// The phase begins before start() and ends in the agent's thread that sets done() with the answer
// (its counters stop there, and the phase's time is the completion's), so neither counts the
// kernel's thread waking up.
template <class Answer>
class MeasuredRun {
public:
    // `also`: other completions a failing handler must abandon (a StartLatch's all_started).
    template <class... T>
    explicit MeasuredRun(const Params& params, rt::Completion<T>&... also)
        : MeasuredRun(params, Timed::phase, also...) {}

    // A kernel Timed::phase_or_lifetime (its `clock` parameter): its Lifetime starts here,
    // before the environment exists, and ends at the stop.
    template <class... T>
    MeasuredRun(const Params& params, Timed timed, rt::Completion<T>&... also)
        : lifetime_(timed == Timed::phase_or_lifetime ? std::optional<Lifetime>(std::in_place, params)
                                                      : std::nullopt),
          dispatchers_(params) {
        abandon_on_failure(environment(), done_, also...);
    }

    rt::Environment& environment() noexcept { return dispatchers_.environment(); }
    DispatcherChoice& dispatchers() noexcept { return dispatchers_; }
    // What an agent sets with the answer, ending the phase.
    rt::Completion<Answer>& done() noexcept { return done_; }

    // The phase: start(environment, dispatchers), or start() where the set-up holds them, begins
    // the work; waits for the answer and records the phase in `result`; then stops the
    // environment (every agent finishes, every runtime thread ends; with a Lifetime, ends it:
    // Lifetime::end), rethrowing a handler's failure, and returns the answer.
    template <class Start>
    Answer measure(Result& result, Start&& start) {
        return measure(result, std::forward<Start>(start), [](Answer&) {});
    }

    // The same, with read(answer) called once the phase is recorded and before the stop, while
    // the agents still exist: where the answer is completed from their state.
    template <class Start, class Read>
    Answer measure(Result& result, Start&& start, Read&& read) {
        return run_phase(result, false, start, [](rt::Environment&) {}, read);
    }

    // A phase that may cover the agents' teardown (skynet's deregister): with `through` it goes
    // on past the answer until teardown(environment) returns (the agents deregistered and
    // destroyed) and ends in the kernel's thread; without, it is measure()'s.
    template <class Start, class Teardown>
    Answer measure_through(Result& result, bool through, Start&& start, Teardown&& teardown) {
        return run_phase(result, through, start, teardown, [](Answer&) {});
    }

    // Once the answer is in `result`: with clock=lifetime, the phase's time as the metric phase_ns.
    void add_phase_metric(Result& result) const {
        if (lifetime_) lifetime_->add_phase_metric(result);
    }

private:
    template <class Start, class Teardown, class Read>
    Answer run_phase(Result& result, bool through, Start&& start, Teardown&& teardown, Read&& read) {
        rt::Environment& env = environment();
        MeasuredPhase phase = through ? MeasuredPhase(env) : MeasuredPhase(env, done_);
        if constexpr (std::is_invocable_v<Start>) start();
        else start(env, dispatchers_);
        Answer answer = await(env, done_);
        if (through) {
            teardown(env);
            phase.finish(result);
        } else {
            phase.finish(result, done_.completed_at());
        }
        read(answer);
        if (lifetime_) lifetime_->end(result, dispatchers_);
        else stop_and_check(env);
        return answer;
    }

    std::optional<Lifetime> lifetime_;  // first: its clock starts before the environment's
    rt::Completion<Answer> done_;       // before the environment, whose agents set it
    DispatcherChoice dispatchers_;
};

}  // namespace labctl::kernels
