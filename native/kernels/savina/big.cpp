// savina_big: Savina's Big. `actors` actors each make `pings` pings, one at a time, each to a
// neighbour drawn by a seeded generator and answered by a pong; a sink counts the actors that
// finished. Measures many-to-many messaging among busy actors.
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "big.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_big {
namespace {

using SinkAgent = CollectorAgent<Sink, Finished>;

class BigActor final : public rt::Agent {
public:
    BigActor(std::uint32_t index, std::uint32_t actors, std::uint64_t pings, std::uint64_t seed,
             const std::vector<BigActor*>& neighbours, SinkAgent& sink)
        : index_(index), pinger_(index, actors, pings, seed), neighbours_(neighbours), sink_(sink) {
        subscribe<&BigActor::on_ping>();
        subscribe<&BigActor::on_pong>();
    }

    // Read once the environment has stopped.
    std::uint64_t pinged() const noexcept { return pinger_.pinged_count(); }

private:
    void on_ping(const Ping& ping) {
        pinger_.pinged();
        rt::send<Pong>(*neighbours_[ping.from], index_);
    }

    void on_pong(const Pong& pong) {
        const std::uint32_t next = pinger_.ponged(pong.from);
        if (next == kNobody) rt::send<Finished>(sink_, pinger_.finished());
        else rt::send<Ping>(*neighbours_[next], index_);
    }

    const std::uint32_t index_;
    Pinger pinger_;
    const std::vector<BigActor*>& neighbours_;
    SinkAgent& sink_;
};

Result run(const Params& params) {
    const auto actors = std::uint32_t(params.integer("actors"));
    const auto pings = std::uint64_t(params.integer("pings"));
    const auto seed = std::uint64_t(params.integer("seed"));

    std::vector<BigActor*> neighbours;
    neighbours.reserve(actors);
    MeasuredRun<Outcome> run(params);
    Result result;

    // As Savina's clock: the actors' creation, every ping and pong, until the sink has counted
    // every actor finished.
    const Outcome outcome = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            SinkAgent& sink = coop.make_agent_with_binder<SinkAgent>(dispatchers.binder(actors), Sink(actors), run.done());
            for (std::uint32_t i = 0; i < actors; ++i)
                neighbours.push_back(&coop.make_agent_with_binder<BigActor>(dispatchers.binder(i), i, actors, pings,
                                                                            seed, neighbours, sink));
        });
        // Every actor's start, Savina's PongMessage(-1); the neighbours are all made by now, and
        // these sends order their making before any handler reads them.
        for (BigActor* actor : neighbours) rt::send<Pong>(*actor, kNobody);
    });

    report(result, outcome, actors, pings, seed, [&neighbours](std::uint32_t i) { return neighbours[i]->pinged(); });
    return result;
}

Expectation expect(const Params& params) {
    const auto actors = std::uint32_t(params.integer("actors"));
    const auto pings = std::uint64_t(params.integer("pings"));
    return {expected(actors, pings, std::uint64_t(params.integer("seed"))), actors * (2 * pings + 2)};
}

void check(const Params& params) {
    const auto actors = params.integer("actors");
    check_thread_per_agent("savina_big", params, std::uint64_t(actors) + 1, "actors=" + std::to_string(actors));
}

const Registration registration(Kernel{
    .name = "savina_big",
    .summary = "`actors` actors each make `pings` pings to neighbours drawn by a seeded generator, "
               "each answered by a pong: many-to-many messaging",
    .description =
        "Savina's benchmark 7, Big. `actors` actors and a sink agent are created; the kernel's "
        "thread sends each actor a start (Savina's PongMessage(-1)). On each pong an actor sends "
        "its next ping to a neighbour drawn by its own generator (Savina's 16-bit PseudoRandom, "
        "actor i's starting at seed + i; seed 0 is Savina's), which may be itself; the neighbour "
        "answers with a pong; after `pings` pings, on the last pong, the actor reports to the sink. "
        "Each pong must come from the actor last pinged (Savina prints an error otherwise; we "
        "count it). The phase runs from the actors' creation (the dispatcher's threads already "
        "running) to the sink's last report, as Savina's clock covers runIteration. Differences "
        "from Savina: its clock also covers making the actor system, ours does not; Savina hands "
        "each actor and the sink the neighbours' list in a message (W+1 messages), ours get it at "
        "creation; Savina's sink, once every actor reported, sends each an exit (W messages) and "
        "the run ends when the actor system terminates, ours ends at the sink's last report and "
        "the actors are stopped after the phase; each Savina actor sends one Ping and one Pong object "
        "of its own again and again, where each send here makes its message. The answer holds only what every schedule gives: "
        "the counts, and how often each actor was pinged (the generators fix it).",
    .sources = {{"savina", "7. Big (big)"}},
    .verifies = "every actor finished once after `pings` pings, every pong came from the actor "
                "pinged, and each actor was pinged as often as replaying the generators says",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_big
