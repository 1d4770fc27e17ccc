// fan: a master sends one message to each of `fan_out` workers and waits for all their replies
// before the next iteration. Measures fan-out followed by fan-in: a burst of sends from one
// agent, and one agent absorbing the burst of answers.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "dispatcher_params.hpp"
#include "phase.hpp"

namespace labctl::kernels::fan {
namespace {

using Clock = std::chrono::steady_clock;

struct Work {
    std::uint64_t iteration;
};

struct Done {
    std::uint64_t iteration;
    std::uint64_t worker_id;
};

// What the master saw, handed to the waiting thread through done.set().
struct Outcome {
    std::uint64_t iterations = 0;      // whole iterations completed
    std::uint64_t replies = 0;         // Done messages received
    std::uint64_t stray = 0;           // replies not of the current iteration
    std::uint64_t bad_iterations = 0;  // iterations whose worker ids did not sum as they must
    Clock::time_point start;
    Clock::time_point end;
};

class Master;

class Worker final : public rt::Agent {
public:
    Worker(Master& master, std::uint64_t id) : master_(master), id_(id) { subscribe<&Worker::on_work>(); }

    std::uint64_t received() const noexcept { return received_; }
    std::uint64_t out_of_sequence() const noexcept { return out_of_sequence_; }

private:
    void on_work(const Work& work);

    Master& master_;
    const std::uint64_t id_;
    // Iteration k is this worker's (k+1)-th Work: a duplicated or lost one shows as a gap.
    std::uint64_t received_ = 0;
    std::uint64_t out_of_sequence_ = 0;
};

class Master final : public rt::Agent {
public:
    // iterations == 0: run whole iterations until `duration` has elapsed.
    Master(std::uint64_t iterations, Clock::duration duration, rt::Completion<Outcome>& done)
        : iterations_(iterations), duration_(duration), done_(done) {
        subscribe<&Master::on_done>();
    }
    void send_to(std::vector<Worker*> workers) {
        workers_ = std::move(workers);
        const auto n = std::uint64_t(workers_.size());
        expected_id_sum_ = n * (n - 1) / 2;
    }

private:
    void on_start() override {
        // The phase starts here, once every agent exists: creating 100k workers is not fanning.
        outcome_.start = Clock::now();
        fan_out();
    }

    void fan_out() {
        for (Worker* worker : workers_) rt::send<Work>(*worker, outcome_.iterations);
    }

    void on_done(const Done& done) {
        ++outcome_.replies;
        if (done.iteration != outcome_.iterations) ++outcome_.stray;
        id_sum_ += done.worker_id;
        if (++replies_now_ != workers_.size()) return;

        // All fan_out replies are in: the iteration is over.
        if (id_sum_ != expected_id_sum_) ++outcome_.bad_iterations;
        replies_now_ = 0;
        id_sum_ = 0;
        ++outcome_.iterations;
        // One clock read per iteration, and only in duration mode.
        const bool finished = iterations_ != 0 ? outcome_.iterations == iterations_
                                               : Clock::now() - outcome_.start >= duration_;
        if (!finished) {
            fan_out();
            return;
        }
        outcome_.end = Clock::now();
        done_.set(outcome_);
    }

    const std::uint64_t iterations_;
    const Clock::duration duration_;
    rt::Completion<Outcome>& done_;
    std::vector<Worker*> workers_;
    std::uint64_t expected_id_sum_ = 0;
    std::uint64_t replies_now_ = 0;  // replies of the iteration in progress
    std::uint64_t id_sum_ = 0;       // their worker ids, summed
    Outcome outcome_;
};

void Worker::on_work(const Work& work) {
    if (work.iteration != received_) ++out_of_sequence_;
    ++received_;
    rt::send<Done>(master_, work.iteration, id_);
}

std::string describe(std::uint64_t iterations, std::uint64_t replies, std::uint64_t stray,
                     std::uint64_t bad_iterations, std::uint64_t worker_total, std::uint64_t uneven_workers) {
    return "iterations=" + std::to_string(iterations) + " replies=" + std::to_string(replies) +
           " stray=" + std::to_string(stray) + " bad_iterations=" + std::to_string(bad_iterations) +
           " worker_total=" + std::to_string(worker_total) +
           " uneven_workers=" + std::to_string(uneven_workers);
}

Result run(const Params& params) {
    const auto fan_out = std::uint64_t(params.integer("fan_out"));
    const auto iterations = std::uint64_t(params.integer("iterations"));
    const Clock::duration duration = run_duration(params);

    rt::Completion<Outcome> done;
    DispatcherChoice dispatchers(params);
    rt::Environment& env = dispatchers.environment();
    abandon_on_failure(env, done);

    MeasuredPhase phase(env, done);
    std::vector<Worker*> workers;
    workers.reserve(fan_out);
    // One coop: with a cooperation FIFO pool master and workers share one queue, so the pool
    // runs them one at a time; individual FIFO lets the workers run in parallel.
    env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
        auto& master = coop.make_agent_with_binder<Master>(dispatchers.binder(0), iterations, duration, done);
        for (std::uint64_t i = 0; i < fan_out; ++i)
            workers.push_back(&coop.make_agent_with_binder<Worker>(dispatchers.binder(unsigned(i + 1)), master, i));
        master.send_to(workers);
    });
    const Outcome outcome = await(env, done);
    Result result;
    phase.finish(result, done.completed_at());
    // From the master's first fan-out to its last reply: agent creation is not part of it.
    result.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.end - outcome.start).count();
    // Each worker's last write happened before its last Done, which the master received before
    // done.set(): reading the workers' counts here is ordered after them.
    std::uint64_t worker_total = 0;
    std::uint64_t uneven_workers = 0;
    std::uint64_t out_of_sequence = 0;
    for (const Worker* worker : workers) {
        worker_total += worker->received();
        out_of_sequence += worker->out_of_sequence();
        if (worker->received() != outcome.iterations) ++uneven_workers;
    }
    stop_and_check(env);

    // Duration mode: the iteration count is the run's; every other field must agree with it.
    const std::uint64_t n = iterations != 0 ? iterations : outcome.iterations;
    result.messages_processed = outcome.replies + worker_total;
    result.answer = describe(outcome.iterations, outcome.replies, outcome.stray + out_of_sequence,
                             outcome.bad_iterations, worker_total, uneven_workers);
    result.expected = describe(n, fan_out * n, 0, 0, fan_out * n, 0);
    result.metrics = {{"iterations_done", double(outcome.iterations)},
                      {"ns_per_iteration",
                       outcome.iterations == 0 ? 0.0 : double(result.elapsed_ns) / double(outcome.iterations)}};
    return result;
}

void check(const Params& params) {
    const auto fan_out = std::uint64_t(params.integer("fan_out"));
    check_thread_per_agent("fan", params, fan_out + 1, "fan_out=" + std::to_string(fan_out));
}

// For time estimates (Kernel::work).
double work(const Params& params) {
    return params.integer("iterations") > 0 ? 2.0 * double(params.integer("iterations")) * double(params.integer("fan_out")) : 0.0;
}

Kernel make_kernel() {
    Kernel kernel{
        .name = "fan",
        .summary = "a master fans a message out to N workers and waits for all N replies, in a loop",
        .description =
            "Each iteration the master sends Work{iteration} to each of `fan_out` workers (direct "
            "sends); each worker replies Done{iteration, worker_id}; when all fan_out replies are "
            "in, the next iteration starts. With iterations=0 the master runs whole iterations "
            "until duration_s has elapsed, reading the clock once per iteration; iterations>0 "
            "runs exactly that many and overrides duration_s. The phase runs from the master's "
            "start to its last reply; the figure of merit is iterations (or messages) per second.",
        .sources = {{"machinate_shootout", "the fan problem"}},
        .verifies = "every reply is of the current iteration and every worker saw its Work in "
                    "sequence (stray=0), each iteration's worker ids sum to "
                    "fan_out*(fan_out-1)/2, replies and the workers' own counts both total "
                    "fan_out*iterations, every worker received exactly `iterations`; with "
                    "iterations>0 the run did exactly that many",
        .params = {},
        .check = check,
        .run = run,
        .work = work,
    };
    kernel.params = {
        {.name = "fan_out",
         .type = ParamType::integer,
         .default_value = std::int64_t{100},
         .help = "worker agents the master sends to each iteration",
         .minimum = 1,
         .maximum = 100'000},
    };
    for (ParamSpec& spec : rounds_or_duration_params("iterations")) kernel.params.push_back(std::move(spec));
    for (ParamSpec& spec : dispatcher_params())
        kernel.params.push_back(std::move(spec));
    return kernel;
}

const Registration registration(make_kernel());

}  // namespace
}  // namespace labctl::kernels::fan
