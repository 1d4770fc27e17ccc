// caf_savina_big: savina_big on CAF 0.17. `actors` actors each make `pings` pings, one at a time,
// each to a neighbour drawn by a seeded generator and answered by a pong; a sink counts the
// actors that finished.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/big.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_big {

// CAF's inspector for the shared report, where argument-dependent lookup finds it.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Finished& x) {
    return f(caf::meta::type_name("Finished"), x.actor, x.pings, x.pongs, x.wrong);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Ping& x) {
    return f(caf::meta::type_name("Ping"), x.from);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Pong& x) {
    return f(caf::meta::type_name("Pong"), x.from);
}

}  // namespace labctl::kernels::savina_big

namespace labctl::kernels::caf_savina_big {
namespace {

using savina_big::Ping;
using savina_big::Pong;
using savina_big::Finished;
using savina_big::kNobody;
using savina_big::Outcome;

class SinkActor final : public caf::event_based_actor {
public:
    SinkActor(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t actors, rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), sink_(actors), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Finished& finished) {
            if (sink_.add(finished)) done_.set(sink_.outcome());
        }};
    }

private:
    savina_big::Sink sink_;
    rt::Completion<Outcome>& done_;
};

class BigActor final : public caf::event_based_actor {
public:
    // `neighbours`: every actor's handle, the kernel's, filled in before the starts are sent.
    BigActor(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t index, std::uint32_t actors,
             std::uint64_t pings, std::uint64_t seed, const std::vector<caf::actor>& neighbours, caf::actor sink)
        : caf::event_based_actor(config), index_(index), pinger_(index, actors, pings, seed),
          neighbours_(neighbours), sink_(std::move(sink)) {
        run.watch(*this);
    }

    // Read once the actors are done.
    std::uint64_t pinged() const noexcept { return pinger_.pinged_count(); }

    caf::behavior make_behavior() override {
        return {
            [this](const Ping& ping) {
                pinger_.pinged();
                send(neighbours_[ping.from], Pong{index_});
            },
            [this](const Pong& pong) {
                const std::uint32_t next = pinger_.ponged(pong.from);
                if (next == kNobody) send(sink_, pinger_.finished());
                else send(neighbours_[next], Ping{index_});
            },
        };
    }

    void on_exit() override { sink_ = nullptr; }

private:
    const std::uint32_t index_;
    savina_big::Pinger pinger_;
    const std::vector<caf::actor>& neighbours_;
    caf::actor sink_;
};

Result run(const Params& params) {
    const auto actors = std::uint32_t(params.integer("actors"));
    const auto pings = std::uint64_t(params.integer("pings"));
    const auto seed = std::uint64_t(params.integer("seed"));

    rt::Completion<Outcome> done;
    std::vector<caf::actor> neighbours;  // outlives the actor system, as the actors read it
    neighbours.reserve(actors);
    std::vector<BigActor*> bigs;
    bigs.reserve(actors);
    caf_support::CafRun caf(params, done);
    caf.reserve(actors + 1);

    // As Savina's clock: the actors' creation, every ping and pong, until the sink has counted
    // every actor finished.
    caf_support::CafPhase phase(caf);
    const caf::actor sink = caf.system().spawn<SinkActor>(std::ref(caf), actors, std::ref(done));
    caf.keep<SinkActor>(sink);
    for (std::uint32_t i = 0; i < actors; ++i) {
        neighbours.push_back(caf.system().spawn<BigActor>(std::ref(caf), i, actors, pings, seed,
                                                          std::cref(neighbours), sink));
        bigs.push_back(&caf.keep<BigActor>(neighbours.back()));
    }
    // Every actor's start, Savina's PongMessage(-1): the handles are all written by now, and these
    // sends order those writes before any handler reads them.
    for (const caf::actor& actor : neighbours) caf::anon_send(actor, Pong{kNobody});
    const Outcome outcome = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    caf.stop();

    savina_big::report(result, outcome, actors, pings, seed, [&bigs](std::uint32_t i) { return bigs[i]->pinged(); });
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_big",
    .summary = "savina_big on CAF 0.17: `actors` actors each make `pings` pings to neighbours drawn "
               "by a seeded generator, each answered by a pong",
    .description =
        "As savina_big (Savina's 7, Big), on CAF 0.17: the kernel's thread spawns a sink and "
        "`actors` actors, then anon_sends each a start (Savina's PongMessage(-1)); on each pong an "
        "actor pings the neighbour its generator (Savina's PseudoRandom, actor i's at seed + i) "
        "draws, which answers with a pong; after `pings` pings an actor reports to the sink. The "
        "actors read the neighbours' handles from a list the kernel owns. The phase runs from the "
        "first spawn to the sink's last report (the actor system is started before it). The "
        "differences from Savina are savina_big's.",
    .sources = {{"savina", "7. Big (big)"}},
    .verifies = "every actor finished once after `pings` pings, every pong came from the actor "
                "pinged, and each actor was pinged as often as replaying the generators says",
    .params = schema(savina_big::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_big
