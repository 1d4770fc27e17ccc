// caf_ping_pong: ping_pong on CAF 0.17. Two actors pass a message back and forth: on one
// scheduler thread the cost of a send and a dispatch, on two the round trip between threads.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../kernels/ping_pong.hpp"
#include "caf_run.hpp"

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

using Clock = std::chrono::steady_clock;
using ping_pong::Outcome;
using ping_pong::Ping;
using ping_pong::Pong;
using ping_pong::Tally;

// The kernel's signal to the pinger that the phase has begun (our pinger starts in on_start).
struct Start {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Start&) {
    return f(caf::meta::type_name("Start"));
}

template <std::size_t N>
class Ponger final : public caf::event_based_actor {
public:
    Ponger(caf::actor_config& config, caf_support::CafRun& run) : caf::event_based_actor(config) {
        run.watch(*this);
    }
    void reply_to(caf::actor pinger) { pinger_ = std::move(pinger); }
    const Tally& pings() const noexcept { return pings_; }

    caf::behavior make_behavior() override {
        return {[this](const Ping<N>& ping) { on_ping(ping); }};
    }

    // The two actors hold handles to each other: let go of it, or neither is ever freed.
    void on_exit() override { pinger_ = nullptr; }

private:
    void on_ping(const Ping<N>& ping) {
        pings_.count(ping.seq, ping.intact());
        send(pinger_, Pong<N>(ping));
    }

    caf::actor pinger_;
    Tally pings_;
};

template <std::size_t N>
class Pinger final : public caf::event_based_actor {
public:
    Pinger(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t round_trips,
           rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), round_trips_(round_trips),
          stride_(ping_pong::sample_stride(round_trips)), done_(done) {
        run.watch(*this);
        outcome_.round_trips_ns.reserve(round_trips / stride_ + 1);
    }
    void send_to(caf::actor ponger) { ponger_ = std::move(ponger); }

    caf::behavior make_behavior() override {
        return {
            [this](const Start&) {
                outcome_.start = Clock::now();
                ping(0);
            },
            [this](const Pong<N>& pong) { on_pong(pong); },
        };
    }

    void on_exit() override { ponger_ = nullptr; }

private:
    void on_pong(const Pong<N>& pong) {
        outcome_.pongs.count(pong.seq, pong.intact());
        if (sampling_) {
            outcome_.round_trips_ns.push_back((Clock::now() - sampled_at_).count());
            sampling_ = false;
        }
        if (outcome_.pongs.received < round_trips_) {
            ping(pong.seq + 1);
        } else {
            outcome_.end = Clock::now();
            done_.set(std::move(outcome_));
        }
    }

    void ping(std::uint64_t seq) {
        // A countdown, not seq % stride: a division per message would cost more than the rest.
        if (--until_sample_ == 0) {
            until_sample_ = stride_;
            sampling_ = true;
            sampled_at_ = Clock::now();
        }
        send(ponger_, Ping<N>(seq));
    }

    const std::uint64_t round_trips_;
    const std::uint64_t stride_;
    rt::Completion<Outcome>& done_;
    caf::actor ponger_;
    std::uint64_t until_sample_ = 1;
    bool sampling_ = false;
    Clock::time_point sampled_at_;
    Outcome outcome_;
};

template <std::size_t N>
Result run_with_payload(const Params& params) {
    const auto round_trips = std::uint64_t(params.integer("messages")) / 2;

    rt::Completion<Outcome> done;
    caf_support::CafRun caf(params, done);
    const caf::actor ponger_handle = caf.system().spawn<Ponger<N>>(std::ref(caf));
    const caf::actor pinger_handle = caf.system().spawn<Pinger<N>>(std::ref(caf), round_trips, std::ref(done));
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
    // done.set(): reading its tally here is ordered after it.
    const Tally pings = ponger.pings();
    caf.stop();

    result.messages_processed = pings.received + outcome.pongs.received;
    result.answer = ping_pong::describe(pings, outcome.pongs);
    result.expected = ping_pong::expected(round_trips);
    result.metrics = ping_pong::round_trip_metrics(outcome.round_trips_ns);
    return result;
}

Result run(const Params& params) {
    switch (params.integer("payload_bytes")) {
    case 0: return run_with_payload<0>(params);
    case 16: return run_with_payload<16>(params);
    case 64: return run_with_payload<64>(params);
    case 256: return run_with_payload<256>(params);
    case 1024: return run_with_payload<1024>(params);
    case 4096: return run_with_payload<4096>(params);
    }
    throw std::logic_error("payload_bytes outside its schema");
}

void check(const Params& params) {
    if (params.integer("messages") % 2 != 0)
        throw ParamError("caf_ping_pong", "messages",
                         "parameter 'messages' must be even (pings plus pongs), got " +
                             std::to_string(params.integer("messages")));
}

Kernel make_kernel() {
    Kernel kernel{
        .name = "caf_ping_pong",
        .summary = "ping_pong on CAF 0.17: two actors exchanging a message, send+dispatch or round trip",
        .description =
            "As ping_pong, on CAF 0.17: a pinger actor sends a ping, a ponger actor answers with a "
            "pong carrying the same sequence number and payload, `messages`/2 times; both are "
            "spawned before the phase and each sends to the other's handle. The exchange is timed "
            "inside the pinger, from the kernel's Start message to the last pong, as ours times it "
            "from on_start; round-trip latency percentiles come from sampled timestamps. With "
            "threads=1 both actors share CAF's one scheduler thread; with more, CAF's scheduler "
            "decides where each runs. Our `mbox` parameter is left out: CAF sends to an actor's "
            "own mailbox (the direct case); a named multi-consumer mbox would be a CAF group.",
        .sources = {{"sobjectizer_tales22", "Ping pong: performance of 1:1 messaging"}, {"theron_303", "PingPong"}},
        .verifies = "both sides counted every message (messages/2 pings and pongs), in order, "
                    "with intact payloads",
        .params = {},
        .check = check,
        .run = run,
        .runtime = "caf",
    };
    kernel.params = ping_pong::own_params();
    std::erase_if(kernel.params, [](const ParamSpec& spec) { return spec.name == "mbox"; });  // no named mboxes
    for (ParamSpec& spec : caf_support::scheduler_params()) kernel.params.push_back(std::move(spec));
    return kernel;
}

const Registration registration(make_kernel());

}  // namespace
}  // namespace labctl::kernels::caf_ping_pong
