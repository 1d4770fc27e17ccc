// caf_service: service on CAF 0.17. The same open-loop load (service.hpp: the schedule, the
// generator's loop, the collector's count, the histogram, the refusal of a generator that fell
// behind, the metrics) on CAF's actors: `servers` server actors and one collector actor on CAF's
// scheduler, the generator in the kernel's own thread, outside it, as ours.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/service/service.hpp"
#include "../run.hpp"

// CAF finds a message type's inspect by argument-dependent lookup: in the type's own namespace.
namespace labctl::kernels::service {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Request& x) {
    return f(caf::meta::type_name("Request"), x.id, x.due_ns);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Reply& x) {
    return f(caf::meta::type_name("Reply"), x.id, x.due_ns);
}

}  // namespace labctl::kernels::service

namespace labctl::kernels::caf_service {
namespace {

using service::Answers;
using service::Done;
using service::Reply;
using service::Request;
using service::Sent;
using service::Setup;

// Counts every answer by id and records its latency; sets `done` with the last.
class Collector final : public caf::event_based_actor {
public:
    Collector(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t requests, rt::Completion<Done>& done)
        : caf::event_based_actor(config), answers_(requests), done_(done) {
        run.watch(*this);
    }
    const Answers& answers() const noexcept { return answers_; }

    caf::behavior make_behavior() override {
        return {[this](const Reply& reply) {
            if (const std::optional<Done> last = service::collect(answers_, reply)) done_.set(*last);
        }};
    }

private:
    Answers answers_;
    rt::Completion<Done>& done_;
};

// Does a request's work and answers it to the collector.
class Server final : public caf::event_based_actor {
public:
    Server(caf::actor_config& config, caf_support::CafRun& run, const Setup& setup, caf::actor collector)
        : caf::event_based_actor(config), setup_(setup), collector_(std::move(collector)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Request& request) {
            service::serve(setup_);
            send(collector_, Reply(request));
        }};
    }

    void on_exit() override { collector_ = nullptr; }

private:
    const Setup& setup_;
    caf::actor collector_;
};

Result run(const Params& params) {
    const Setup setup = service::make_setup(params);
    const service::Schedule schedule = service::make_schedule(setup);

    // What the actors refer to, then the completion, then the actor system (see CafRun).
    service::Lateness lateness(setup.late_bound);
    rt::Completion<Done> done;
    caf_support::CafRun caf(params, done);
    caf.reserve(setup.servers + 1);

    // The phase covers the actors' creation (the collector, then the servers), the generator's
    // loop in this thread (CAF's anon_send from outside its scheduler), and every answer, until
    // the collector has the last one.
    caf_support::CafPhase phase(caf);
    const caf::actor collector_handle =
        caf.system().spawn<Collector>(std::ref(caf), setup.requests, std::ref(done));
    const Collector& collector = caf.keep<Collector>(collector_handle);
    std::vector<caf::actor> servers;
    servers.reserve(setup.servers);
    for (std::uint32_t i = 0; i < setup.servers; ++i) {
        servers.push_back(caf.system().spawn<Server>(std::ref(caf), std::cref(setup), collector_handle));
        caf.keep<Server>(servers.back());
    }
    const Sent sent = service::generate(schedule, lateness, [&](std::uint32_t server, std::uint64_t id, std::int64_t due_ns) {
        caf::anon_send(servers[server], Request(id, due_ns));
    });
    const Done last = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    // The collector's last write happened before it set the completion: reading it here is
    // ordered after it. Here, before the stop, which ends the actors.
    std::string answer = collector.answers().describe();
    const Histogram latency = collector.answers().latency();
    caf.stop();

    service::report(result, setup.requests, std::move(answer), latency, lateness, sent, last);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_service",
    .summary = "service on CAF 0.17: latency percentiles at a fixed offered load, from when each request was due",
    .description =
        "As service, on CAF 0.17, with the same code for what is not the runtime's (service.hpp): "
        "the schedule of due times (rate, arrivals, seed: our mt19937_64, so the same sequence as "
        "ours), the routing, the generator's wait (asleep until 2 ms before a send is due, then "
        "spinning and yielding its CPU at each turn), the collector's count of every id, the histogram (2 significant digits, our "
        "buckets) and the refusal of a point whose generator fell behind (generator_behind: no "
        "latency percentiles). The generator runs where ours does, in the kernel's own thread "
        "outside the runtime, and sends each request with CAF's anon_send from there; the "
        "`servers` server actors and the one collector actor are event-based actors on CAF's "
        "scheduler, whose `threads` worker threads (scheduler.max-threads) and `policy` stand for "
        "our dispatcher and threads: CAF decides where each actor runs, where ours binds each "
        "agent through the dispatcher. The generator's thread comes besides the `threads` "
        "scheduler threads, as with ours. CAF's mailboxes are unbounded, as ours. work=sleep "
        "blocks the CAF worker thread its server runs on, as a sleep blocks a thread of our "
        "pools. The phase covers spawning the actors, every send, and every answer until the "
        "collector has the last; the actor system is started before it and shut down after it.",
    .sources = {{"wrk2", "a constant offered rate, latency from each request's intended send time (coordinated omission "
                         "corrected), recorded in an HdrHistogram"}},
    .verifies = "the collector counted an answer for every request id exactly once (a byte per id: "
                "none missing, none repeated, no unknown id) and the ids' sum is requests*(requests-1)/2",
    .params = schema(service::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = metric_schema(service::metric_specs(), Timed::phase),
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_service
