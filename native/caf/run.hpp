// What every kernel written on CAF 0.17 shares: its scheduler parameters (threads, policy), the
// actor system of one run, failures of its actors turned into the kernel's error, and the
// measured phase with the CPU time of CAF's threads. The CAF counterpart of
// kernels/framework/dispatcher_params.hpp and phase.hpp.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../kernels/framework/counters.hpp"
#include "../kernels/framework/kernel.hpp"
#include "../runtime/completion.hpp"

namespace labctl::kernels::caf_support {

// The parameters that stand for our dispatcher parameters: threads (CAF's
// scheduler.max-threads) and policy (scheduler.policy: stealing or sharing).
std::vector<ParamSpec> scheduler_params();

// The CPU clock of every thread the actor system starts (workers, its clock, the private thread
// of each detached actor), registered by a thread hook when the thread starts; a thread that
// ends leaves its last reading.
class ThreadClocks {
public:
    void started();
    void terminates();
    std::vector<std::int64_t> cpu_ns() const;

private:
    struct Thread {
        std::thread::id id;
        clockid_t clock;
        bool running;
        std::int64_t last_ns;  // when it ended
    };
    mutable std::mutex mutex_;
    std::vector<Thread> threads_;  // in the order they started
};

// One run's actor system, started with the scheduler the parameters ask for. Declare it right
// after the kernel's Completion (which it abandons when an actor fails) and after what the
// actors refer to: on a failure it is destroyed, and its actors with it, first.
class CafRun {
public:
    template <class T>
    CafRun(const Params& params, rt::Completion<T>& done)
        : CafRun(params, std::function<void()>([&done] { done.abandon(); })) {}
    ~CafRun();

    CafRun(const CafRun&) = delete;
    CafRun& operator=(const CafRun&) = delete;

    caf::actor_system& system() noexcept { return *system_; }

    // Keeps a handle to an actor the kernel spawned and returns the actor itself, whose fields
    // the kernel may read once a message chain from their last write has reached it. Kept
    // actors are told to exit when the run stops (they hold no behavior that ends by itself).
    template <class T>
    T& keep(caf::actor handle) {
        // How CAF's own spawn gets from the handle to the object: T derives, without virtual
        // bases, from abstract_actor.
        T& actor = *static_cast<T*>(caf::actor_cast<caf::abstract_actor*>(handle));
        kept_.push_back(std::move(handle));
        return actor;
    }
    void reserve(std::size_t actors) { kept_.reserve(kept_.size() + actors); }

    // Makes an exception in the actor's handlers, or a message it has no handler for, fail the
    // run: recorded, the kernel's Completion abandoned. Call from each actor's constructor.
    void watch(caf::scheduled_actor& actor);

    // The kernel's answer, or the first failure.
    template <class T>
    T await(rt::Completion<T>& done) {
        auto value = done.wait();
        if (!value) {
            rethrow_failure();
            throw std::runtime_error("the kernel's answer never came");
        }
        return *value;
    }

    // Tells the kept actors to exit, waits until every actor has terminated, and rethrows the
    // first failure, if any, teardown included.
    void stop();

    // Asks for each of the actor system's threads' CPU time over its whole life, written to
    // `out` when this object destroys the system (every thread joined): for Lifetime::end, once
    // the kernel's scope with this object and its actor handles is left. (The system cannot go
    // earlier: a detached actor's thread waits for the last handle to it.)
    void report_thread_lives(std::vector<std::int64_t>& out) noexcept { thread_lives_ = &out; }

    // Waits until every actor has terminated (an actor that quits by itself counts).
    void await_all_actors_done() { system_->await_all_actors_done(); }

    std::vector<std::int64_t> thread_cpu_ns() const { return clocks_->cpu_ns(); }

private:
    CafRun(const Params& params, std::function<void()> abandon);
    void fail(std::exception_ptr error);
    void rethrow_failure();
    void exit_kept();

    std::function<void()> abandon_;
    std::mutex failure_mutex_;
    std::exception_ptr failure_;  // the first
    std::unique_ptr<ThreadClocks> clocks_;  // outlives the system, whose hook writes it
    caf::actor_system_config config_;       // outlives the system, which refers to it
    std::unique_ptr<caf::actor_system> system_;
    std::vector<caf::actor> kept_;
    std::vector<std::int64_t>* thread_lives_ = nullptr;
};

// The measured phase, as MeasuredPhase: wall time on the steady clock and CPU time per thread of
// the actor system, taken around the phase only.
class CafPhase {
public:
    using Clock = std::chrono::steady_clock;

    // Marks the phase for counting tools as MeasuredPhase does (kernels/framework/counters.hpp); the counts of a
    // phase that ends at a completion include the waiting thread's wake-up here.
    explicit CafPhase(const CafRun& run)
        : run_(run), cpu_at_start_(run.thread_cpu_ns()) {
        counters::begin();
        start_ = Clock::now();
    }

    Clock::time_point start() const noexcept { return start_; }

    // Ends the phase at `end` and records it in `result`.
    void finish(Result& result, Clock::time_point end = Clock::now()) const;

private:
    const CafRun& run_;
    std::vector<std::int64_t> cpu_at_start_;
    Clock::time_point start_;
};

}  // namespace labctl::kernels::caf_support
