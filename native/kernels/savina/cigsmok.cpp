// savina_cigsmok: Savina's 13. Cigarette Smokers (cigsmok). An arbiter picks a smoker at random
// each round; the smoker acknowledges at once, then smokes (a spell of work), and the arbiter's
// next round starts on the acknowledgement. Measures a central agent driving many others one at
// a time, with work overlapping the next round.
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "cigsmok.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_cigsmok {
namespace {

class SmokerAgent final : public rt::Agent {
public:
    SmokerAgent(std::uint32_t index, rt::Agent& arbiter) : smoker_(index), arbiter_(arbiter) {
        subscribe<&SmokerAgent::on_start_smoking>();
        subscribe<&SmokerAgent::on_exit>();
    }

private:
    void on_start_smoking(const StartSmoking& start) {
        rt::send<StartedSmoking>(arbiter_);  // the ingredients are off the table
        smoker_.smoke(start);
    }

    void on_exit(const Exit&) { rt::send<Tally>(arbiter_, smoker_.tally()); }

    Smoker smoker_;
    rt::Agent& arbiter_;
};

class ArbiterAgent final : public rt::Agent {
public:
    ArbiterAgent(const Setup& s, rt::Completion<bool>& done) : arbiter_(s), done_(done) {
        subscribe<&ArbiterAgent::on_start_message>();
        subscribe<&ArbiterAgent::on_started>();
        subscribe<&ArbiterAgent::on_tally>();
    }
    void link(std::vector<SmokerAgent*> smokers) { smokers_ = std::move(smokers); }
    // Read after the run (the completion's set follows every write).
    const Arbiter& arbiter() const noexcept { return arbiter_; }

private:
    void on_start_message(const Start&) { notify(arbiter_.start()); }

    void on_started(const StartedSmoking&) {
        Pick pick{};
        if (!arbiter_.started(pick)) notify(pick);
        else
            for (SmokerAgent* smoker : smokers_) rt::send<Exit>(*smoker);
    }

    void on_tally(const Tally& t) {
        if (arbiter_.tally(t)) done_.set(true);
    }

    void notify(const Pick& pick) { rt::send<StartSmoking>(*smokers_[pick.smoker], pick.work); }

    Arbiter arbiter_;
    rt::Completion<bool>& done_;
    std::vector<SmokerAgent*> smokers_;
};

Result run(const Params& params) {
    const Setup s = setup(params);

    MeasuredRun<bool> run(params);
    ArbiterAgent* arbiter = nullptr;
    Result result;

    // As Savina's runIteration: the agents are made inside the phase.
    run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
                arbiter = &coop.make_agent_with_binder<ArbiterAgent>(dispatchers.binder(0), s, run.done());
                std::vector<SmokerAgent*> smokers;
                for (std::uint32_t i = 0; i < s.smokers; ++i)
                    smokers.push_back(
                        &coop.make_agent_with_binder<SmokerAgent>(dispatchers.binder(1 + i), i, *arbiter));
                arbiter->link(std::move(smokers));
            });
            rt::send<Start>(*arbiter);
        },
        [&](bool) { report(result, arbiter->arbiter(), s); });
    return result;
}

void check(const Params& params) {
    const auto smokers = std::uint64_t(params.integer("smokers"));
    check_thread_per_agent("savina_cigsmok", params, smokers + 1, "smokers=" + std::to_string(smokers));
}

const Registration registration(Kernel{
    .name = "savina_cigsmok",
    .summary = "an arbiter picks one of `smokers` smokers at random for each of `rounds` rounds; the "
               "smoker acknowledges, then works: one agent driving many in turn",
    .description =
        "Savina's 13. Cigarette Smokers (cigsmok). On Start the arbiter draws a smoker and a spell "
        "of work from Savina's PseudoRandom (a 16-bit LCG, seeded with `seed`, or with rounds*smokers "
        "where seed = 0, as Savina does) and sends it StartSmoking; the smoker sends StartedSmoking back at "
        "once, then works; each StartedSmoking starts the next round, until `rounds` rounds; then "
        "the arbiter sends every smoker Exit, and each smoker answers with its tally (smokes, "
        "work done). The phase covers what Savina's clock covers: from before the arbiter and "
        "the smokers are made (one coop, the dispatcher's threads already running) and Start "
        "sent, to the arbiter's having every tally. Messages: Start, rounds StartSmoking and "
        "StartedSmoking, smokers Exit and Tally. Differences from Savina: a spell of work is "
        "that many steps of a 64-bit LCG (Savina's busy-wait calls Math.random() that many "
        "times), whose results are summed and checked: about 1.2 ns a unit here, where each "
        "call of Math.random() is two compare-and-swaps on the one seed every thread shares (a "
        "C++ stand-in: 9.6 ns a call on one thread, 18 ns with two threads calling at once, on "
        "a busy 2-vCPU machine), so Savina's spell costs about 8 times ours, 15 or more while "
        "smokers work at once, as they do (the arbiter starts the next round on "
        "StartedSmoking, before the spell); smokers answer Exit with a tally, which "
        "the arbiter waits for (Savina's arbiter exits after sending Exit).",
    .sources = {{"savina", "13. Cigarette Smokers (cigsmok)"}},
    .verifies = "every round ran, each smoker smoked as often as the seeded picks say, the work "
                "done and the messages of each kind are as the picks predict",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_cigsmok
