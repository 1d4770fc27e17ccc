// caf_savina_pingpong: savina_pingpong on CAF 0.17, Savina's benchmark 1, Ping Pong: two actors
// exchanging N pings and pongs with Savina's Start / Ping / SendPing / SendPong / Stop messages.
#include <cstdint>
#include <string>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/pingpong.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_pingpong {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Start&) {
    return f(caf::meta::type_name("Start"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PingMsg&) {
    return f(caf::meta::type_name("PingMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Stop&) {
    return f(caf::meta::type_name("Stop"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SendPing<caf::actor>& x) {
    return f(caf::meta::type_name("SendPing"), x.sender);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SendPong<caf::actor>& x) {
    return f(caf::meta::type_name("SendPong"), x.sender);
}

}  // namespace labctl::kernels::savina_pingpong

namespace labctl::kernels::caf_savina_pingpong {
namespace {

using savina_pingpong::Start;
using savina_pingpong::PingMsg;
using savina_pingpong::Stop;
using savina_pingpong::Tally;

using SendPing = savina_pingpong::SendPing<caf::actor>;
using SendPong = savina_pingpong::SendPong<caf::actor>;

class Pong final : public caf::event_based_actor {
public:
    Pong(caf::actor_config& config, caf_support::CafRun& run, Tally& tally, rt::Completion<bool>& done)
        : caf::event_based_actor(config), tally_(tally), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const SendPing& message) {
                ++tally_.send_ping;
                send(message.sender, SendPong{caf::actor_cast<caf::actor>(this)});
            },
            // Savina's pong quits here, the last of the two: the benchmark's end.
            [this](const Stop&) {
                ++tally_.stop;
                done_.set(true);
            },
        };
    }

private:
    Tally& tally_;
    rt::Completion<bool>& done_;
};

class Ping final : public caf::event_based_actor {
public:
    Ping(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t pings, caf::actor pong, Tally& tally)
        : caf::event_based_actor(config), pong_(std::move(pong)), tally_(tally), pings_left_(std::int64_t(pings)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Start&) {
                ++tally_.start;
                send_ping();
            },
            [this](const PingMsg&) {
                ++tally_.ping;
                send_ping();
            },
            [this](const SendPong&) {
                ++tally_.send_pong;
                if (pings_left_ > 0) {
                    send(caf::actor_cast<caf::actor>(this), PingMsg{});
                } else {
                    tally_.pings_left = pings_left_;
                    send(pong_, Stop{});
                }
            },
        };
    }

    void on_exit() override { pong_ = nullptr; }

private:
    void send_ping() {
        send(pong_, SendPing{caf::actor_cast<caf::actor>(this)});
        --pings_left_;
    }

    caf::actor pong_;
    Tally& tally_;
    std::int64_t pings_left_;
};

Result run(const Params& params) {
    const auto pings = std::uint64_t(params.integer("pings"));

    // Each actor writes its own fields; every write happens before the Stop that ends the run.
    Tally tally;
    rt::Completion<bool> done;
    caf_support::CafRun caf(params, done);
    caf.reserve(2);

    // The phase covers the two actors spawned (pong, then ping with pong's handle), the Start,
    // every message, until pong has handled the Stop.
    caf_support::CafPhase phase(caf);
    const caf::actor pong = caf.system().spawn<Pong>(std::ref(caf), std::ref(tally), std::ref(done));
    const caf::actor ping = caf.system().spawn<Ping>(std::ref(caf), pings, pong, std::ref(tally));
    caf.keep<Pong>(pong);  // told to exit when the run stops, or fails
    caf.keep<Ping>(ping);
    caf::anon_send(ping, Start{});
    caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    caf.stop();

    savina_pingpong::report(result, tally, pings);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_pingpong",
    .summary = "savina_pingpong on CAF 0.17: two actors exchanging `pings` pings and pongs with Savina's messages",
    .description =
        "As savina_pingpong, on CAF 0.17, as Savina's CAF port (caf_01_pingpong) has it: the kernel's "
        "thread anon_sends Start to ping; ping sends SendPing (with its own handle) to pong, pong "
        "answers SendPong to that handle, and ping, while it has pings left, sends itself Ping, whose "
        "handler sends the next SendPing; after the last pong it sends Stop. 3N+1 messages. The phase "
        "covers spawning pong and ping, and every message until pong has handled the Stop; the "
        "actor system is started before it and shut down after it (Savina's port makes and "
        "destroys it inside its clock, spawning the two from a starter actor, and its actors quit "
        "where ours are told to exit after the phase). threads and policy set CAF's scheduler.",
    .sources = {{"savina", "1. Ping Pong (pingpong)"}},
    .verifies = "ping and pong handled 1 Start, pings-1 Ping, pings SendPing, pings SendPong and 1 "
                "Stop, with no ping left",
    .params = schema(savina_pingpong::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_pingpong
