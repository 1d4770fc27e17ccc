// caf_ping_pong: ping_pong on CAF 0.17. Two actors pass a message back and forth: on one
// scheduler thread the cost of a send and a dispatch, on two the round trip between threads.
#include <cstddef>
#include <cstdint>

#include "../../kernels/classic/ping_pong.hpp"
#include "../../kernels/framework/schema.hpp"
#include "../run.hpp"

// CAF finds a message type's inspect by argument-dependent lookup: in the type's own namespace.
namespace labctl::kernels::ping_pong {

template <class Inspector, std::size_t N>
typename Inspector::result_type inspect(Inspector& f, Ping<N>& x) {
    return f(caf::meta::type_name("Ping"), x.seq, x.payload);
}

template <class Inspector, std::size_t N>
typename Inspector::result_type inspect(Inspector& f, Pong<N>& x) {
    return f(caf::meta::type_name("Pong"), x.seq, x.payload);
}

}  // namespace labctl::kernels::ping_pong

namespace labctl::kernels::caf_ping_pong {
namespace {

using ping_pong::Outcome;
using ping_pong::Ping;
using ping_pong::Pong;

// The kernel's signal to the pinger that the phase has begun (our pinger starts in on_start).
struct Start {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Start&) {
    return f(caf::meta::type_name("Start"));
}

template <std::size_t N>
class Ponger final : public caf::event_based_actor {
public:
    Ponger(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t round_trips)
        : caf::event_based_actor(config), tallies_(round_trips) {
        run.watch(*this);
    }
    void reply_to(caf::actor pinger) { pinger_ = std::move(pinger); }
    const ping_pong::PingTallies& tallies() const noexcept { return tallies_; }

    caf::behavior make_behavior() override {
        return {[this](const Ping<N>& ping) {
            tallies_.count(ping);
            send(pinger_, Pong<N>(ping));
        }};
    }

    // The two actors hold handles to each other: let go of it, or neither is ever freed.
    void on_exit() override { pinger_ = nullptr; }

private:
    caf::actor pinger_;
    ping_pong::PingTallies tallies_;
};

// Sends the pings ping_pong::PingerPhases asks for, as ours does.
template <std::size_t N>
class Pinger final : public caf::event_based_actor {
public:
    Pinger(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t round_trips, std::uint64_t probes,
           rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), phases_(round_trips, probes, done) {
        run.watch(*this);
    }
    void send_to(caf::actor ponger) { ponger_ = std::move(ponger); }

    caf::behavior make_behavior() override {
        return {
            [this](const Start&) { phases_.start(sender()); },
            [this](const Pong<N>& pong) { phases_.on_pong(pong, sender()); },
        };
    }

    void on_exit() override { ponger_ = nullptr; }

private:
    auto sender() {
        return [this](std::uint64_t seq) { send(ponger_, Ping<N>(seq)); };
    }

    caf::actor ponger_;
    ping_pong::PingerPhases phases_;
};

template <std::size_t N>
Result run_with_payload(const Params& params) {
    const auto round_trips = std::uint64_t(params.integer("messages")) / 2;
    const auto probes = std::uint64_t(params.integer("latency_samples"));

    rt::Completion<Outcome> done;
    caf_support::CafRun caf(params, done);
    const caf::actor ponger_handle = caf.system().spawn<Ponger<N>>(std::ref(caf), round_trips);
    const caf::actor pinger_handle =
        caf.system().spawn<Pinger<N>>(std::ref(caf), round_trips, probes, std::ref(done));
    Ponger<N>& ponger = caf.keep<Ponger<N>>(ponger_handle);
    Pinger<N>& pinger = caf.keep<Pinger<N>>(pinger_handle);
    // Written here, read in handlers: the Start sent below orders these writes before them.
    pinger.send_to(ponger_handle);
    ponger.reply_to(pinger_handle);

    caf_support::CafPhase phase(caf);
    caf::anon_send(pinger_handle, Start{});
    Outcome outcome = caf.await(done);
    Result result;
    phase.finish(result);
    result.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.end - outcome.start).count();
    // The ponger's last write happened before its last pong, which the pinger received before
    // done.set(): reading its tallies here is ordered after it.
    const ping_pong::PingTallies tallies = ponger.tallies();
    caf.stop();

    ping_pong::check_probes("caf_ping_pong", tallies.probes(), outcome.probe_pongs, probes);
    ping_pong::report(result, tallies.pings(), outcome, round_trips);
    return result;
}

Result run(const Params& params) {
    return ping_pong::with_payload(params, [&params](auto bytes) {
        return run_with_payload<decltype(bytes)::value>(params);
    });
}

// ping_pong's own parameters but `mbox`: CAF sends to an actor's own mailbox (the direct
// case); a named multi-consumer mbox would be a CAF group.
std::vector<ParamSpec> own_params() {
    std::vector<ParamSpec> params = ping_pong::own_params();
    std::erase_if(params, [](const ParamSpec& spec) { return spec.name == "mbox"; });
    return params;
}

const Registration registration(Kernel{
    .name = "caf_ping_pong",
    .summary = "ping_pong on CAF 0.17: two actors exchanging a message, send+dispatch or round trip",
    .description =
        "As ping_pong, on CAF 0.17: a pinger actor sends a ping, a ponger actor answers with a "
        "pong carrying the same sequence number and payload, `messages`/2 times; both are "
        "spawned before the phase and each sends to the other's handle. The exchange is timed, "
        "and counted by the instructions and counters measures, inside the pinger, from the "
        "kernel's Start message to the last pong, as ours from on_start (the same code: "
        "ping_pong::PingerPhases), with no clock read inside; then latency_samples more round "
        "trips are timed one by one for the percentiles, as ours. With "
        "threads=1 both actors share CAF's one scheduler thread; with more, CAF's scheduler "
        "decides where each runs. Our `mbox` parameter is left out: CAF sends to an actor's "
        "own mailbox (the direct case); a named multi-consumer mbox would be a CAF group.",
    .sources = {{"sobjectizer_tales22", "Ping pong: performance of 1:1 messaging"}, {"theron_303", "PingPong"}},
    .verifies = "both sides counted every message (messages/2 pings and pongs), in order, "
                "with intact payloads; the latency phase's latency_samples pings and pongs too",
    .params = schema(own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = metric_schema(ping_pong::round_trip_metric_specs(), Timed::phase),
    .check = [](const Params& params) { ping_pong::check_messages("caf_ping_pong", params); },
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_ping_pong
