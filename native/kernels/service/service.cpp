// service: a service under an open-loop load. A generator (the kernel's own thread, outside the
// runtime, as wrk2's) sends `requests` requests on a fixed schedule of `rate` per second to
// `servers` agents, each request costing its server `work_ns`; every answer goes to a collector,
// which records its latency from when the request was DUE, not when it was sent, into a
// high-dynamic-range histogram: a late generator cannot hide the queueing its lateness would
// have caused (coordinated omission). The generator's own lateness is measured too, and a run
// whose generator fell behind is refused as a latency figure.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "service.hpp"

namespace labctl::kernels::service {
namespace {

// Counts every answer by id and records its latency; sets `done` with the last.
class Collector final : public rt::Agent {
public:
    Collector(std::uint64_t requests, rt::Completion<Done>& done) : answers_(requests), done_(done) {
        subscribe<&Collector::on_reply>();
    }
    const Answers& answers() const noexcept { return answers_; }

private:
    void on_reply(const Reply& reply) {
        if (const std::optional<Done> last = collect(answers_, reply)) done_.set(*last);
    }

    Answers answers_;
    rt::Completion<Done>& done_;
};

// Does a request's work and answers it to the collector.
class Server final : public rt::Agent {
public:
    Server(const Setup& setup, Collector& collector) : setup_(setup), collector_(collector) {
        subscribe<&Server::on_request>();
    }

private:
    void on_request(const Request& request) {
        serve(setup_);
        rt::send<Reply>(collector_, request);
    }

    const Setup& setup_;
    Collector& collector_;
};

Result run(const Params& params) {
    const Setup setup = make_setup(params);
    const Schedule schedule = make_schedule(setup);

    MeasuredRun<Done> run(params);
    std::vector<Server*> servers;
    Collector* collector = nullptr;
    Lateness lateness(setup.late_bound);
    Sent sent;
    std::optional<std::string> answer;
    std::optional<Histogram> latency;
    Result result;

    // Agents first (the servers and the collector), then the generator's loop, in this thread
    // inside the phase; the phase ends when the collector has the last answer.
    const Done done = run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
                collector = &coop.make_agent_with_binder<Collector>(dispatchers.binder(setup.servers),
                                                                    setup.requests, run.done());
                for (std::uint32_t i = 0; i < setup.servers; ++i)
                    servers.push_back(&coop.make_agent_with_binder<Server>(dispatchers.binder(i), setup, *collector));
            });
            sent = generate(schedule, lateness, [&](std::uint32_t server, std::uint64_t id, std::int64_t due_ns) {
                rt::send<Request>(*servers[server], id, due_ns);
            });
        },
        // The collector's last write happened before it set the completion: reading it here is
        // ordered after it. Here, before the stop, which destroys the agents.
        [&](Done&) {
            answer = collector->answers().describe();
            latency = collector->answers().latency();
        });

    report(result, setup.requests, *answer, *latency, lateness, sent, done);
    return result;
}

void check(const Params& params) {
    const auto servers = std::uint64_t(params.integer("servers"));
    check_thread_per_agent("service", params, servers + 1, "servers=" + std::to_string(servers));
}

Expectation expect(const Params& params) {
    const auto requests = std::uint64_t(params.integer("requests"));
    return {expected(requests), 2 * requests};
}

// The schedule (12 bytes a request) and the collector's byte per id.
double memory(const Params& params) { return 13.0 * double(params.integer("requests")); }

const Registration registration(Kernel{
    .name = "service",
    .summary = "an open-loop service: latency percentiles at a fixed offered load, from when each request was due",
    .description =
        "A generator in the kernel's thread, outside the runtime, sends `requests` requests at "
        "`rate` per second (arrivals=constant: 1/rate apart; poisson: exponential gaps, seeded) "
        "to `servers` agents (routing: round_robin, random, or hot: all to the first), whatever "
        "the service does (open loop, wrk2's rule); each request costs its server work_ns "
        "(work=spin on the CPU, or sleep), then its answer goes to one collector agent. Each "
        "latency runs from when the request was due to when the collector took its answer, so a "
        "late send counts against the service, never for it (no coordinated omission), and is "
        "recorded in a high-dynamic-range histogram (HdrHistogram's semantics: 2 significant "
        "digits, power-of-two buckets of 128 linear sub-buckets, no allocation per record) for "
        "latency_p50_ns, _p90_ns, _p99_ns, _p999_ns (p99.9) and _max_ns (exact); "
        "histogram_record_ns is what one record cost in this run. The generator sleeps until "
        "2 ms before a send is due, then spins on the clock, yielding its CPU at each turn (so "
        "that a server's thread woken onto that CPU runs at once); how late it sent is generator_lag_p99_ns and "
        "_max_ns, and generator_late_share the share of sends later than late_bound_us. When "
        "more than 1% were, the generator fell behind: generator_behind is 1 and the latency "
        "percentiles are left out, the point being no figure of the service at that load. "
        "sent_per_s is the rate the generator kept, answered_per_s the requests over the time "
        "from the first due to the last answer (past saturation, the service's throughput). The "
        "phase runs from the agents' creation to the last answer.",
    .sources = {{"wrk2", "a constant offered rate, latency from each request's intended send time (coordinated omission "
                         "corrected), recorded in an HdrHistogram"}},
    .verifies = "the collector counted an answer for every request id exactly once (a byte per id: "
                "none missing, none repeated, no unknown id) and the ids' sum is requests*(requests-1)/2",
    .params = schema(own_params(), Timed::phase, dispatcher_params()),
    .metrics = metric_schema(metric_specs(), Timed::phase),
    .check = check,
    .run = run,
    .expect = expect,
    .memory = memory,
});

}  // namespace
}  // namespace labctl::kernels::service
