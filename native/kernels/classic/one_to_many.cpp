// one_to_many: a producer sends numbers to a named mbox that `workers` agents subscribe to, so
// every number is delivered to every worker (1:N). Measures a multicast send and the delivery to
// many queues; with work=sleep or work=cpu, how a dispatcher overlaps the workers' handlers.
#include <cstdint>

#include "../../runtime/dispatchers/one_thread.hpp"
#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "one_to_many.hpp"

namespace labctl::kernels::one_to_many {
namespace {

class Producer final : public rt::Agent {
public:
    Producer(const Setup& setup, rt::NamedMbox& input, rt::Completion<Outcome>& done)
        : side_(setup), input_(input), done_(done) {
        subscribe<&Producer::on_done>();
    }

private:
    void on_start() override {
        side_.produce([this](std::uint32_t number) { rt::send<Number>(input_, number); });
    }

    void on_done(const WorkerDone& done) {
        if (side_.on_report(done.received, done.out_of_order, done.series)) done_.set(side_.outcome());
    }

    ProducerSide side_;
    rt::NamedMbox& input_;
    rt::Completion<Outcome>& done_;
};

class Worker final : public rt::Agent {
public:
    Worker(const Setup& setup, std::uint32_t id, rt::NamedMbox& input, Producer& producer)
        : side_(setup), id_(id), producer_(producer) {
        subscribe<&Worker::on_number>(input);
    }

private:
    void on_number(const Number& number) {
        if (side_.on_number(number.value))
            rt::send<WorkerDone>(producer_, id_, side_.received(), side_.out_of_order(), side_.series());
    }

    WorkerSide side_;
    const std::uint32_t id_;
    Producer& producer_;
};

Result run(const Params& params) {
    const Setup setup = make_setup(params);

    MeasuredRun<Outcome> run(params, Timed::phase_or_lifetime);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    rt::NamedMbox& input = env.named_mbox("one_to_many.input");
    // The producer has a thread of its own, as in the study; the workers are what is measured.
    rt::Dispatcher& producer_thread = env.make_dispatcher<rt::OneThread>();
    Result result;

    // The phase: registration, sending, handling; with clock=lifetime also the environment's
    // set-up before it and its teardown after, as the study times it (around so_5::launch).
    const Outcome outcome = run.measure(result, [&] {
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            auto& producer = coop.make_agent_with_binder<Producer>(producer_thread.binder(), setup, input, run.done());
            for (std::uint32_t i = 0; i < setup.workers; ++i)
                coop.make_agent_with_binder<Worker>(dispatchers.binder(i), setup, i, input, producer);
        });
    });

    report(result, outcome, setup);
    run.add_phase_metric(result);
    return result;
}

void check(const Params& params) {
    check_thread_per_agent("one_to_many", params, std::uint64_t(params.integer("workers")),
                           "workers=" + std::to_string(params.integer("workers")));
    check_sleep("one_to_many", params);
    check_study_work("one_to_many", params);
}

// For time estimates (Kernel::work).
double work(const Params& params) {
    return double(params.integer("workers")) * double(params.integer("messages_per_worker"));
}

const Registration registration(Kernel{
    .name = "one_to_many",
    .summary = "a producer multicasting numbers to `workers` workers through a named mbox (1:N)",
    .description =
        "A producer on a thread of its own sends 0..messages_per_worker-1 to a named mbox; "
        "`workers` agents, one coop with the producer, subscribe to it, so each number is "
        "delivered to every worker. A worker does nothing (noop), sleeps sleep_ms (sleep) or "
        "sums std::sph_neumann(number % 16, 1.2345 + i) for i < cpu_iters (cpu) or, as the "
        "study's handler, std::sph_neumann(number, 1.2345) (sph_neumann), and after "
        "its last number reports to the producer. The phase covers registration, sending "
        "and handling, up to the producer's last report; with clock=lifetime elapsed_ns "
        "also covers the environment's set-up (its dispatchers and their threads started) "
        "and teardown (every agent deregistered and destroyed, every thread joined), as the "
        "study times it, from before so_5::launch to after it returns. The metric send_ns "
        "is the producer's send loop alone.",
    .sources = {{"sobjectizer_tales22", "Performance of 1:N messaging"}},
    .verifies = "every worker received exactly messages_per_worker numbers, in order; for "
                "work=cpu and work=sph_neumann, each worker's series equals a sequential "
                "recomputation, bit for bit",
    .params = schema(own_params(), Timed::phase_or_lifetime, dispatcher_params()),
    .metrics = metric_schema(own_metrics(), Timed::phase_or_lifetime),
    .check = check,
    .run = run,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::one_to_many
