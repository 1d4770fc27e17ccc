// self_send: each worker agent sends messages to itself until it has handled its count, then
// tells a master. The queues are independent, so this measures what a pool pays to serve many
// hot queues, and the bulk effect of max_demands_at_once (staying on a queue instead of moving).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../../runtime/dispatchers/one_thread.hpp"
#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"

namespace labctl::kernels::self_send {
namespace {

struct Tick {};

struct WorkerDone {
    std::uint32_t worker;
    std::uint64_t handled;
};

struct Tally {
    std::uint64_t handled = 0;
    std::uint64_t reports = 0;
    std::uint64_t repeated = 0;       // a worker that reported twice
    std::uint64_t short_workers = 0;  // reported another count than messages_per_worker
};

class Master final : public rt::Agent {
public:
    Master(std::uint32_t workers, std::uint64_t per_worker, rt::Completion<Tally>& done)
        : reported_(workers, false), per_worker_(per_worker), done_(done) {
        subscribe<&Master::on_done>();
    }

private:
    void on_done(const WorkerDone& report) {
        ++tally_.reports;
        if (reported_[report.worker]) ++tally_.repeated;
        reported_[report.worker] = true;
        tally_.handled += report.handled;
        if (report.handled != per_worker_) ++tally_.short_workers;
        if (tally_.reports == reported_.size()) done_.set(tally_);
    }

    std::vector<bool> reported_;
    const std::uint64_t per_worker_;
    rt::Completion<Tally>& done_;
    Tally tally_;
};

// Keeps at most start_batch ticks in flight and reports once it has handled messages_per_worker.
// after_report=stop (ours): it sends exactly messages_per_worker ticks, so none is left once it
// reported. after_report=circulate (the study's): it counts down on every tick and sends another
// unless the count just reached zero, so with start_batch > 1 the countdown wraps and
// start_batch - 1 ticks keep circulating after it reported, until the environment stops (they
// take threads from the workers still counting, and are handled but not counted).
class Worker final : public rt::Agent {
public:
    Worker(std::uint32_t id, std::uint64_t per_worker, std::uint64_t start_batch, bool circulate, Master& master)
        : id_(id), per_worker_(per_worker), start_batch_(start_batch), circulate_(circulate), master_(master) {
        subscribe<&Worker::on_tick>();
    }

private:
    void on_start() override {
        const std::uint64_t first = circulate_ ? start_batch_ : std::min(start_batch_, per_worker_);
        for (; sent_ < first; ++sent_) rt::send<Tick>(*this);
    }

    void on_tick(const Tick&) {
        ++handled_;
        if (circulate_) {
            if (handled_ != per_worker_) rt::send<Tick>(*this);
            else rt::send<WorkerDone>(master_, id_, handled_);
        } else if (sent_ < per_worker_) {
            rt::send<Tick>(*this);
            ++sent_;
        } else if (handled_ == per_worker_) {
            rt::send<WorkerDone>(master_, id_, handled_);
        }
    }

    const std::uint32_t id_;
    const std::uint64_t per_worker_;
    const std::uint64_t start_batch_;
    const bool circulate_;
    Master& master_;
    std::uint64_t sent_ = 0;
    std::uint64_t handled_ = 0;
};

std::string describe(const Tally& t) {
    return "handled=" + std::to_string(t.handled) + " reports=" + std::to_string(t.reports) +
           " repeated=" + std::to_string(t.repeated) + " short_workers=" + std::to_string(t.short_workers);
}

Result run(const Params& params) {
    const auto workers = std::uint32_t(params.integer("workers"));
    const auto per_worker = std::uint64_t(params.integer("messages_per_worker"));
    const auto start_batch = std::uint64_t(params.integer("start_batch"));
    const bool circulate = params.text("after_report") == "circulate";

    MeasuredRun<Tally> run(params, Timed::phase_or_lifetime);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    // The master has a thread of its own, as in the study; the workers are what is measured.
    rt::Dispatcher& master_thread = env.make_dispatcher<rt::OneThread>();
    Result result;

    // The phase: registration, the ticks, the reports; with clock=lifetime also the
    // environment's set-up and teardown, as the study times it (around so_5::launch).
    const Tally tally = run.measure(result, [&] {
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            auto& master = coop.make_agent_with_binder<Master>(master_thread.binder(), workers, per_worker, run.done());
            for (std::uint32_t i = 0; i < workers; ++i)
                coop.make_agent_with_binder<Worker>(dispatchers.binder(i), i, per_worker, start_batch, circulate,
                                                   master);
        });
    });

    Tally expected;
    expected.handled = std::uint64_t(workers) * per_worker;
    expected.reports = workers;
    result.messages_processed = tally.handled + tally.reports;
    result.answer = describe(tally);
    result.expected = describe(expected);
    run.add_phase_metric(result);
    return result;
}

// For time estimates (Kernel::work).
double work(const Params& params) {
    return double(params.integer("workers")) * double(params.integer("messages_per_worker"));
}

// The kernel's own parameters: the work it does.
std::vector<ParamSpec> own_params() {
    return {
        integer_param("workers", 50, {1, 1'000'000}, "worker agents, each with its own stream of messages"),
        integer_param("messages_per_worker", 1'000'000, {1, 10'000'000'000}, "messages each worker handles"),
        integer_param("start_batch", 1, {1, 1'000'000},
                      "messages a worker sends itself at start: how many it keeps in flight"),
        {.name = "after_report",
         .type = ParamType::choice,
         .default_value = std::string("stop"),
         .help = "what a worker's messages still in flight do once it reported: stop (it sends "
                 "exactly its count) or circulate (the study's: its countdown wraps, so "
                 "start_batch - 1 keep circulating until the environment stops)",
         .choices = {std::string("stop"), std::string("circulate")}},
    };
}

const Registration registration(Kernel{
    .name = "self_send",
    .summary = "`workers` workers, each sending itself `messages_per_worker` messages: many hot queues, "
               "the bulk effect",
    .description =
        "Each of `workers` agents sends `start_batch` messages to itself when it starts and "
        "one more per message it handles, until it has handled messages_per_worker; it then "
        "reports to a master on a thread of its own. The phase covers registration, the "
        "messages and the reports; with clock=lifetime elapsed_ns also covers the "
        "environment's set-up and teardown (every agent deregistered and destroyed, every "
        "thread joined), as the study times it, around so_5::launch. after_report=stop: a "
        "worker stops sending once it has sent its count; after_report=circulate: as the "
        "study's worker, which counts down on every message, so with start_batch > 1 its "
        "countdown wraps and start_batch - 1 messages keep circulating after it reported, "
        "until the environment stops. On a pool with individual FIFO "
        "(the study's setting and the default) every worker has its own queue, and "
        "max_demands_at_once decides how long a thread stays on one before it moves on.",
    .sources = {{"sobjectizer_tales22", "Observing the bulk effect"}},
    .verifies = "every worker reported once, having handled exactly messages_per_worker messages",
    // The study's setting: an individual-FIFO pool.
    .params = schema(own_params(), Timed::phase_or_lifetime,
                     dispatcher_params({.dispatcher = "thread_pool", .defaults = {.fifo = rt::Fifo::individual}})),
    .metrics = metric_schema({}, Timed::phase_or_lifetime),
    .check =
        [](const Params& params) {
            const auto workers = params.integer("workers");
            check_thread_per_agent("self_send", params, std::uint64_t(workers),
                                   "workers=" + std::to_string(workers));
        },
    .run = run,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::self_send
