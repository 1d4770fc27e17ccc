// caf_one_to_many: one_to_many on CAF 0.17. A producer sends numbers to a CAF local group that
// `workers` actors have joined, so every number is delivered to every worker (1:N): a multicast
// send and the delivery to many mailboxes; with work=sleep or cpu, how CAF's scheduler overlaps
// the workers' handlers.
#include <cstdint>
#include <vector>

#include "../../kernels/classic/one_to_many.hpp"
#include "../../kernels/framework/phase.hpp"
#include "../../kernels/framework/schema.hpp"
#include "../run.hpp"

namespace labctl::kernels::one_to_many {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Number& x) {
    return f(caf::meta::type_name("Number"), x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, WorkerDone& x) {
    return f(caf::meta::type_name("WorkerDone"), x.worker, x.received, x.out_of_order, x.series);
}

}  // namespace labctl::kernels::one_to_many

namespace labctl::kernels::caf_one_to_many {
namespace {

using one_to_many::Number;
using one_to_many::WorkerDone;
using one_to_many::Outcome;
using one_to_many::Setup;

// The kernel's signal to the producer, once the workers have joined the group.
struct Go {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Go&) {
    return f(caf::meta::type_name("Go"));
}

class Producer final : public caf::event_based_actor {
public:
    Producer(caf::actor_config& config, caf_support::CafRun& run, const Setup& setup, caf::group input,
             rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), side_(setup), input_(std::move(input)), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Go&) { side_.produce([this](std::uint32_t number) { send(input_, Number{number}); }); },
            [this](const WorkerDone& done) { on_done(done); },
        };
    }

private:
    void on_done(const WorkerDone& done) {
        if (side_.on_report(done.received, done.out_of_order, done.series)) done_.set(side_.outcome());
    }

    one_to_many::ProducerSide side_;
    const caf::group input_;
    rt::Completion<Outcome>& done_;
};

class Worker final : public caf::event_based_actor {
public:
    Worker(caf::actor_config& config, caf_support::CafRun& run, const Setup& setup, std::uint32_t id,
           caf::actor producer)
        : caf::event_based_actor(config), side_(setup), id_(id), producer_(std::move(producer)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Number& number) { on_number(number); }};
    }

    void on_exit() override { producer_ = nullptr; }

private:
    void on_number(const Number& number) {
        if (side_.on_number(number.value))
            send(producer_, WorkerDone{id_, side_.received(), side_.out_of_order(), side_.series()});
    }

    one_to_many::WorkerSide side_;
    const std::uint32_t id_;
    caf::actor producer_;
};

Result run(const Params& params) {
    const Setup setup = one_to_many::make_setup(params);

    Lifetime lifetime(params);
    std::vector<std::int64_t> thread_lives;
    Result result;
    Outcome outcome;
    {
        rt::Completion<Outcome> done;
        caf_support::CafRun caf(params, done);
        caf.report_thread_lives(thread_lives);
        caf.reserve(setup.workers + 1);
        // CAF's counterpart of our named mbox: a local group, which every worker joins by name and
        // the producer sends to; each message is enqueued in every member's mailbox.
        const caf::group input = caf.system().groups().get_local("one_to_many.input");
        // The producer has a thread of its own (a detached actor), as in the study, started before
        // the phase as ours is; the workers are what is measured.
        const caf::actor producer =
            caf.system().spawn<Producer, caf::detached>(std::ref(caf), std::cref(setup), input, std::ref(done));
        caf.keep<Producer>(producer);

        // The whole experiment, as the study times it: spawning the workers (each joins the group
        // as it is spawned), sending, handling.
        caf_support::CafPhase phase(caf);
        for (std::uint32_t i = 0; i < setup.workers; ++i)
            caf.keep<Worker>(caf.system().spawn_in_group<Worker>(input, std::ref(caf), std::cref(setup), i, producer));
        caf::anon_send(producer, Go{});
        outcome = caf.await(done);
        phase.finish(result, done.completed_at());
        caf.stop();
    }  // the actor system goes with `caf`, after the handles made since
    lifetime.end(result, std::move(thread_lives));

    one_to_many::report(result, outcome, setup);
    lifetime.add_phase_metric(result);
    return result;
}

void check(const Params& params) {
    one_to_many::check_sleep("caf_one_to_many", params);
    one_to_many::check_study_work("caf_one_to_many", params);
}

const Registration registration(Kernel{
    .name = "caf_one_to_many",
    .summary = "one_to_many on CAF 0.17: a producer multicasting to `workers` workers through a group",
    .description =
        "As one_to_many, on CAF 0.17. The 1:N channel is a CAF local group (CAF's counterpart "
        "of our named mbox: subscribers join it by name and a send to it is enqueued in every "
        "member's mailbox), not a loop over worker handles, so that the producer makes one "
        "send per number as ours does. A producer, a detached actor with a thread of its own "
        "spawned before the phase, sends 0..messages_per_worker-1 to the group on the kernel's "
        "Go; `workers` actors, spawned inside the phase with spawn_in_group (joined before "
        "the first number), receive each number. A worker does nothing (noop), sleeps "
        "sleep_ms (sleep) or sums std::sph_neumann(number % 16, 1.2345 + i) for i < cpu_iters "
        "(cpu) or std::sph_neumann(number, 1.2345) (sph_neumann, the study's), and after its last number reports to the producer. The phase covers spawning "
        "the workers, sending and handling; the metric send_ns is the producer's send loop "
        "alone. The actor system's start and shutdown are outside the phase; with "
        "clock=lifetime elapsed_ns runs from before the actor system is made to after it is "
        "destroyed (its threads started, every actor terminated, every thread joined), the "
        "phase then reported as the metric phase_ns.",
    .sources = {{"sobjectizer_tales22", "Performance of 1:N messaging"}},
    .verifies = "every worker received exactly messages_per_worker numbers, in order; for "
                "work=cpu and work=sph_neumann, each worker's series equals a sequential "
                "recomputation, bit for bit",
    .params = schema(one_to_many::own_params(), Timed::phase_or_lifetime, caf_support::scheduler_params()),
    .metrics = metric_schema(one_to_many::own_metrics(), Timed::phase_or_lifetime),
    .check = check,
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_one_to_many
