// fan: the machinate shootout's fan problem. A master writes `fan_out` messages to a channel that
// `fan_out` workers all read from, each message taken by exactly one of them (channel=shared, the
// study's); each worker writes what it took to the master, which reads the fan_out replies and
// loops. Measures fan-out through a contended multi-consumer channel and fan-in into one agent.
// channel=direct sends one message straight to each worker instead (no competition).
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"

namespace labctl::kernels::fan {
namespace {

using Clock = std::chrono::steady_clock;

// The index-th of an iteration's fan_out messages.
struct Work {
    std::uint64_t iteration;
    std::uint64_t index;
};

struct Done {
    std::uint64_t iteration;
    std::uint64_t index;
    std::uint64_t worker_id;
};

// What the master saw, handed to the waiting thread through done.set().
struct Outcome {
    std::uint64_t iterations = 0;      // whole iterations completed
    std::uint64_t replies = 0;         // Done messages received
    std::uint64_t stray = 0;           // replies not of the current iteration
    std::uint64_t bad_iterations = 0;  // iterations whose replies did not carry each index once
    Clock::time_point start;
    Clock::time_point end;
};

class Master;

class Worker final : public rt::Agent {
public:
    // `input` null: channel=direct (the master sends to this worker itself).
    Worker(Master& master, std::uint64_t id, rt::Channel<Work>* input)
        : master_(master), id_(id), input_(input) {
        subscribe<&Worker::on_work>();
    }

    std::uint64_t received() const noexcept { return received_; }
    std::uint64_t out_of_sequence() const noexcept { return out_of_sequence_; }

private:
    void on_start() override {
        if (input_ != nullptr) input_->request(request_);
    }
    // Nothing is sent to the channel once the run is over; withdrawing the request keeps the
    // channel from holding a pointer to an agent that is gone.
    void on_finish() override {
        if (input_ != nullptr) input_->cancel(request_);
    }
    void on_work(const Work& work);

    Master& master_;
    const std::uint64_t id_;
    rt::Channel<Work>* const input_;
    rt::ChannelRequest request_{*this};
    // direct: iteration k is this worker's (k+1)-th Work, so a duplicated or lost one shows as a
    // gap; shared: the iterations it takes never go back.
    std::uint64_t received_ = 0;
    std::uint64_t last_iteration_ = 0;
    std::uint64_t out_of_sequence_ = 0;
};

class Master final : public rt::Agent {
public:
    // iterations == 0: run whole iterations until `duration` has elapsed.
    Master(std::uint64_t fan_out, std::uint64_t iterations, Clock::duration duration, rt::Channel<Work>* input,
           rt::Completion<Outcome>& done)
        : fan_out_(fan_out), iterations_(iterations), duration_(duration), input_(input), done_(done),
          seen_(fan_out, false) {
        subscribe<&Master::on_done>();
    }
    void send_to(std::vector<Worker*> workers) { workers_ = std::move(workers); }

private:
    void on_start() override {
        // The phase starts here, once every agent exists: creating 100k workers is not fanning.
        outcome_.start = Clock::now();
        fan_out();
    }

    void fan_out() {
        if (input_ != nullptr) {
            for (std::uint64_t i = 0; i < fan_out_; ++i) input_->send(outcome_.iterations, i);
        } else {
            for (std::uint64_t i = 0; i < fan_out_; ++i) rt::send<Work>(*workers_[i], outcome_.iterations, i);
        }
    }

    void on_done(const Done& done) {
        ++outcome_.replies;
        if (done.iteration != outcome_.iterations) ++outcome_.stray;
        // Each index once per iteration; with channel=direct, from the worker it was sent to.
        if (done.index >= fan_out_ || seen_[done.index] || (input_ == nullptr && done.worker_id != done.index))
            wrong_ = true;
        else
            seen_[done.index] = true;
        if (++replies_now_ != fan_out_) return;

        // All fan_out replies are in: the iteration is over.
        if (wrong_) ++outcome_.bad_iterations;
        replies_now_ = 0;
        wrong_ = false;
        seen_.assign(fan_out_, false);
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

    const std::uint64_t fan_out_;
    const std::uint64_t iterations_;
    const Clock::duration duration_;
    rt::Channel<Work>* const input_;
    rt::Completion<Outcome>& done_;
    std::vector<Worker*> workers_;
    std::vector<bool> seen_;         // the indices of the iteration in progress replied so far
    bool wrong_ = false;             // a reply of this iteration repeated an index or came from elsewhere
    std::uint64_t replies_now_ = 0;  // replies of the iteration in progress
    Outcome outcome_;
};

void Worker::on_work(const Work& work) {
    if (input_ == nullptr ? work.iteration != received_ : work.iteration < last_iteration_) ++out_of_sequence_;
    last_iteration_ = work.iteration;
    ++received_;
    rt::send<Done>(master_, work.iteration, work.index, id_);
    // Read the next message only once this one is written on: as the study's worker loops.
    if (input_ != nullptr) input_->request(request_);
}

// direct: every worker must have received exactly one Work per iteration (uneven_workers);
// shared: they compete, so only the total is fixed.
std::string describe(bool shared, std::uint64_t iterations, std::uint64_t replies, std::uint64_t stray,
                     std::uint64_t bad_iterations, std::uint64_t worker_total, std::uint64_t uneven_workers) {
    std::string text = "iterations=" + std::to_string(iterations) + " replies=" + std::to_string(replies) +
                       " stray=" + std::to_string(stray) + " bad_iterations=" + std::to_string(bad_iterations) +
                       " worker_total=" + std::to_string(worker_total);
    if (!shared) text += " uneven_workers=" + std::to_string(uneven_workers);
    return text;
}

Result run(const Params& params) {
    const auto fan_out = std::uint64_t(params.integer("fan_out"));
    const auto iterations = std::uint64_t(params.integer("iterations"));
    const Clock::duration duration = run_duration(params);
    const bool shared = params.text("channel") == "shared";

    // Declared before the environment: it outlives every agent that holds a request on it.
    rt::Channel<Work> input;
    std::vector<Worker*> workers;
    MeasuredRun<Outcome> run(params);
    Result result;
    std::uint64_t worker_total = 0;
    std::uint64_t uneven_workers = 0;
    std::uint64_t out_of_sequence = 0;

    const Outcome outcome = run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            workers.reserve(fan_out);
            // One coop: with a cooperation FIFO pool master and workers share one queue, so the
            // pool runs them one at a time; individual FIFO lets the workers run in parallel.
            env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
                auto& master = coop.make_agent_with_binder<Master>(dispatchers.binder(0), fan_out, iterations,
                                                                   duration, shared ? &input : nullptr, run.done());
                for (std::uint64_t i = 0; i < fan_out; ++i)
                    workers.push_back(&coop.make_agent_with_binder<Worker>(dispatchers.binder(unsigned(i + 1)), master,
                                                                           i, shared ? &input : nullptr));
                master.send_to(workers);
            });
        },
        // Each worker's last write happened before its last Done, which the master received
        // before done.set(): reading the workers' counts here is ordered after them.
        [&](const Outcome& outcome) {
            for (const Worker* worker : workers) {
                worker_total += worker->received();
                out_of_sequence += worker->out_of_sequence();
                if (worker->received() != outcome.iterations) ++uneven_workers;
            }
        });
    // From the master's first fan-out to its last reply: agent creation is not part of it.
    result.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.end - outcome.start).count();

    // Duration mode: the iteration count is the run's; every other field must agree with it.
    const std::uint64_t n = iterations != 0 ? iterations : outcome.iterations;
    result.messages_processed = outcome.replies + worker_total;
    result.answer = describe(shared, outcome.iterations, outcome.replies, outcome.stray + out_of_sequence,
                             outcome.bad_iterations, worker_total, uneven_workers);
    result.expected = describe(shared, n, fan_out * n, 0, 0, fan_out * n, 0);
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

// The kernel's own parameters: the work it does.
std::vector<ParamSpec> own_params() {
    std::vector<ParamSpec> params = {
        integer_param("fan_out", 100, {1, 100'000}, "workers, and messages the master writes each iteration"),
        {.name = "channel",
         .type = ParamType::choice,
         .default_value = std::string("shared"),
         .help = "shared: one multi-consumer channel all workers compete to read (the study's); "
                 "direct: one message to each worker's own mbox",
         .choices = {std::string("shared"), std::string("direct")}},
    };
    for (ParamSpec& spec : rounds_or_duration_params("iterations")) params.push_back(std::move(spec));
    return params;
}

const Registration registration(Kernel{
    .name = "fan",
    .summary = "a master writes `fan_out` messages to a channel as many workers compete to read, and reads "
               "their replies, in a loop",
    .description =
        "Each iteration the master writes Work{iteration, index} for index 0..fan_out-1. With "
        "channel=shared (the study's fan: 'A thread writes N messages to a channel, and N "
        "threads read a message each from that output') the Work goes to one channel that all "
        "`fan_out` workers read from, each asking for one message at a time, so they compete "
        "and each message is taken by exactly one (a worker may take two in an iteration and "
        "another none); with channel=direct the master sends the index-th Work to the index-th "
        "worker's own mbox. A worker replies Done{iteration, index, worker_id} to the master's "
        "own mbox (the study's single channel that only the original thread reads) and, when "
        "shared, asks for its next message; when all fan_out replies are in, the next "
        "iteration starts. With iterations=0 the master runs whole iterations until duration_s "
        "has elapsed, reading the clock once per iteration; iterations>0 runs exactly that many "
        "and overrides duration_s. The phase runs from the master's start to its last reply; "
        "the figure of merit is iterations (or messages) per second.",
    .sources = {{"machinate_shootout", "the fan problem"}},
    .verifies = "every reply is of the current iteration and no worker took an older iteration "
                "after a newer one (stray=0); each iteration's replies carry every index "
                "0..fan_out-1 exactly once (with channel=direct, each from the worker it was sent "
                "to); replies and the workers' own counts both total fan_out*iterations; with "
                "channel=direct every worker received exactly `iterations`; with iterations>0 the "
                "run did exactly that many",
    .params = schema(own_params(), Timed::phase, dispatcher_params()),
    .metrics = metric_schema({{.name = "iterations_done"}, {.name = "ns_per_iteration"}}, Timed::phase),
    .check = check,
    .run = run,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::fan
