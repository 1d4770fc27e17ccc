// ping_pong: two agents pass a message back and forth. On one thread it measures the cost of a
// send and a dispatch; on two it measures the round trip between threads.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "ping_pong.hpp"

namespace labctl::kernels::ping_pong {
namespace {

// Answers every ping.
template <std::size_t N>
class Ponger final : public rt::Agent {
public:
    Ponger(rt::NamedMbox* listen, std::uint64_t round_trips) : tallies_(round_trips) {
        if (listen != nullptr) subscribe<&Ponger::on_ping>(*listen);
        else subscribe<&Ponger::on_ping>();
    }
    void reply_to(rt::Mbox pinger) { pinger_ = pinger; }
    const PingTallies& tallies() const noexcept { return tallies_; }

private:
    void on_ping(const Ping<N>& ping) {
        tallies_.count(ping);
        rt::send<Pong<N>>(*pinger_, ping);
    }

    std::optional<rt::Mbox> pinger_;
    PingTallies tallies_;
};

// Sends the pings PingerPhases asks for.
template <std::size_t N>
class Pinger final : public rt::Agent {
public:
    Pinger(rt::NamedMbox* listen, std::uint64_t round_trips, std::uint64_t probes, rt::Completion<Outcome>& done)
        : phases_(round_trips, probes, done) {
        if (listen != nullptr) subscribe<&Pinger::on_pong>(*listen);
        else subscribe<&Pinger::on_pong>();
    }
    void send_to(rt::Mbox ponger) { ponger_ = ponger; }

private:
    void on_start() override { phases_.start(sender()); }
    void on_pong(const Pong<N>& pong) { phases_.on_pong(pong, sender()); }
    auto sender() {
        return [this](std::uint64_t seq) { rt::send<Ping<N>>(*ponger_, seq); };
    }

    std::optional<rt::Mbox> ponger_;
    PingerPhases phases_;
};

template <std::size_t N>
Result run_with_payload(const Params& params) {
    const auto round_trips = std::uint64_t(params.integer("messages")) / 2;
    const auto probes = std::uint64_t(params.integer("latency_samples"));
    const bool named = params.text("mbox") == "named";

    MeasuredRun<Outcome> run(params);
    rt::Environment& env = run.environment();
    rt::NamedMbox* to_ponger = named ? &env.named_mbox("ping_pong.ping") : nullptr;
    rt::NamedMbox* to_pinger = named ? &env.named_mbox("ping_pong.pong") : nullptr;
    Ponger<N>* ponger = nullptr;
    Result result;
    std::optional<PingTallies> tallies;

    Outcome outcome = run.measure(
        result,
        [&] {
            DispatcherChoice& dispatchers = run.dispatchers();
            // One coop: with a cooperation FIFO pool they share a queue, as in the study.
            env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
                auto& pinger = coop.make_agent_with_binder<Pinger<N>>(dispatchers.binder(0), to_pinger,
                                                                         round_trips, probes, run.done());
                ponger = &coop.make_agent_with_binder<Ponger<N>>(dispatchers.binder(1), to_ponger, round_trips);
                pinger.send_to(named ? rt::Mbox(*to_ponger) : rt::Mbox(*ponger));
                ponger->reply_to(named ? rt::Mbox(*to_pinger) : rt::Mbox(pinger));
            });
        },
        // The ponger's last write happened before its last pong, which the pinger received before
        // done.set(): reading its tallies here is ordered after it.
        [&](Outcome&) { tallies.emplace(ponger->tallies()); });
    // The throughput phase alone: from the first ping to the last pong before the probes.
    result.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.end - outcome.start).count();

    check_probes("ping_pong", tallies->probes(), outcome.probe_pongs, probes);
    report(result, tallies->pings(), outcome, round_trips);
    return result;
}

Result run(const Params& params) {
    return with_payload(params, [&params](auto bytes) {
        return run_with_payload<decltype(bytes)::value>(params);
    });
}

Expectation expect(const Params& params) {
    const auto round_trips = std::uint64_t(params.integer("messages")) / 2;
    return {expected(round_trips), 2 * round_trips};
}

const Registration registration(Kernel{
    .name = "ping_pong",
    .summary = "two agents exchanging a message: send+dispatch cost, or the cross-thread round trip",
    .description =
        "A pinger sends a ping, the ponger answers with a pong carrying the same sequence "
        "number and payload, `messages`/2 times. On one_thread (or one group, or a "
        "cooperation-FIFO pool) both agents share a thread; on active_obj or two groups they run "
        "on two. On an individual-FIFO thread_pool or adv_thread_pool, `wake` decides: with "
        "wake=fifo (SObjectizer's scheduling, which its study measured) the queue a send wakes "
        "goes to the shared FIFO for whichever thread looks first, so messages cross threads "
        "when another thread wins (the sending thread, still running, often takes it back); "
        "with wake=lifo (ours, the default) it runs next on the sending thread, so both agents stay "
        "on one thread, as on work_stealing. The measured phase (elapsed_ns, msgs/s, and "
        "what the instructions and counters measures count) is that exchange, from the first "
        "ping to the last pong, with no clock read inside; "
        "round_trip_mean_ns is its elapsed time over its round trips (as Theron's 200 ns). "
        "Then, outside the phase, the latency phase times latency_samples more round trips one "
        "by one, for round_trip_p50_ns, _p99_ns and _max_ns; each includes about one clock "
        "read, whose cost this run measured is clock_read_ns. thread_cpu_ns is read after "
        "both phases.",
    .sources = {{"sobjectizer_tales22", "Ping pong: performance of 1:1 messaging"}, {"theron_303", "PingPong"}},
    .verifies = "both sides counted every message (messages/2 pings and pongs), in order, "
                "with intact payloads; the latency phase's latency_samples pings and pongs too",
    .params = schema(own_params(), Timed::phase, dispatcher_params()),
    .metrics = metric_schema(round_trip_metric_specs(), Timed::phase),
    .check = [](const Params& params) { check_messages("ping_pong", params); },
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::ping_pong
