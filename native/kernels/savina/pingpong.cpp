// savina_pingpong: Savina's benchmark 1, Ping Pong: two actors exchanging N pings and pongs,
// with Savina's Start / Ping / SendPing / SendPong / Stop messages.
#include <cstdint>
#include <string>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "pingpong.hpp"

namespace labctl::kernels::savina_pingpong {
namespace {

class Ping;
class Pong;

using SendPing = savina_pingpong::SendPing<Ping*>;
using SendPong = savina_pingpong::SendPong<Pong*>;

class Pong final : public rt::Agent {
public:
    Pong(Tally& tally, rt::Completion<bool>& done) : tally_(tally), done_(done) {
        subscribe<&Pong::on_send_ping>();
        subscribe<&Pong::on_stop>();
    }

private:
    inline void on_send_ping(const SendPing& message);
    // Savina's pong exits here, the last of the two: the benchmark's end.
    void on_stop(const Stop&) {
        ++tally_.stop;
        done_.set(true);
    }

    Tally& tally_;
    rt::Completion<bool>& done_;
};

class Ping final : public rt::Agent {
public:
    Ping(std::uint64_t pings, Pong& pong, Tally& tally)
        : pong_(pong), tally_(tally), pings_left_(std::int64_t(pings)) {
        subscribe<&Ping::on_start>();
        subscribe<&Ping::on_ping>();
        subscribe<&Ping::on_send_pong>();
    }

private:
    void on_start(const Start&) {
        ++tally_.start;
        send_ping();
    }
    void on_ping(const PingMsg&) {
        ++tally_.ping;
        send_ping();
    }
    void send_ping() {
        rt::send<SendPing>(pong_, this);
        --pings_left_;
    }
    void on_send_pong(const SendPong&) {
        ++tally_.send_pong;
        if (pings_left_ > 0) {
            rt::send<PingMsg>(*this);
        } else {
            tally_.pings_left = pings_left_;
            rt::send<Stop>(pong_);
        }
    }

    Pong& pong_;
    Tally& tally_;
    std::int64_t pings_left_;
};

void Pong::on_send_ping(const SendPing& message) {
    ++tally_.send_ping;
    rt::send<SendPong>(*message.sender, this);
}

Result run(const Params& params) {
    const auto pings = std::uint64_t(params.integer("pings"));

    // Ping and pong each write their own fields; every write happens before the Stop that ends
    // the run, so the kernel reads them all once it has the answer.
    Tally tally;
    MeasuredRun<bool> run(params);
    Result result;

    // The phase covers what Savina's runIteration does once the actor system exists: the two
    // actors made (pong, then ping with pong's handle) and started, the Start, every message,
    // until pong has handled the Stop.
    run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        Ping* ping = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            Pong& pong = coop.make_agent_with_binder<Pong>(dispatchers.binder(1), tally, run.done());
            ping = &coop.make_agent_with_binder<Ping>(dispatchers.binder(0), pings, pong, tally);
        });
        rt::send<Start>(*ping);
    });

    report(result, tally, pings);
    return result;
}

const Registration registration(Kernel{
    .name = "savina_pingpong",
    .summary = "Savina's Ping Pong: two agents exchanging `pings` pings and pongs with Savina's messages",
    .description =
        "Savina's benchmark 1, Ping Pong (pingpong), at its default N = 40,000 (`pings`). The kernel's "
        "thread sends Start to the ping agent; ping sends SendPing (carrying its own handle) to pong "
        "and counts a ping down; pong answers each SendPing with SendPong to the handle it carries; "
        "on each SendPong ping, while it has pings left, sends itself a Ping message, whose "
        "handler sends the next SendPing; after the last pong it sends Stop to pong. 3N+1 messages: "
        "1 Start, N SendPing, N SendPong, N-1 Ping, 1 Stop. Unlike ping_pong (messages/2 direct "
        "round trips, payloads, latency probes, named mboxes), every ping but the first goes "
        "through ping's own mailbox first, as Savina's does. The phase covers the two agents' "
        "creation (pong, then ping with pong's handle) and start, and every message, until pong "
        "has handled the Stop. Differences from Savina: the environment (Savina's actor system) "
        "and its threads exist before the phase and are stopped after it, where Savina's "
        "runIteration creates the actor system and awaits its termination inside its clock; the "
        "agents do not exit one by one (they are finished with the environment, after the "
        "phase); Savina's Start, Ping and Stop are one shared object each, sent again and again, "
        "where each send here makes its message; Savina reports its statistics (the median among "
        "them) over 12 iterations in one JVM, where each run here is one sample.",
    .sources = {{"savina", "1. Ping Pong (pingpong)"}},
    .verifies = "ping and pong handled 1 Start, pings-1 Ping, pings SendPing, pings SendPong and 1 "
                "Stop, with no ping left",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_pingpong
