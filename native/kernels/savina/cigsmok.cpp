// savina_cigsmok: Savina's 13. Cigarette Smokers (cigsmok). An arbiter picks a smoker at random
// each round; the smoker acknowledges at once, then smokes (a spell of work), and the arbiter's
// next round starts on the acknowledgement. Measures a central agent driving many others one at
// a time, with work overlapping the next round.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_cigsmok {
namespace {

constexpr std::uint64_t kHashBasis = savina::kFnvBasis;
using savina::fnv_fold;

using savina::PseudoRandom;

// A round's pick: the smoker (Math.abs(nextInt()) % smokers) and its spell of work
// (nextInt(1000) + 10), drawn in that order as Savina's arbiter draws them.
struct Pick {
    std::uint32_t smoker;
    std::uint32_t work;
};

inline Pick draw(PseudoRandom& random, std::uint32_t smokers) noexcept {
    const auto smoker = std::uint32_t(random.next() % smokers);
    const auto work = std::uint32_t(random.next() % 1000 + 10);
    return {smoker, work};
}

// The synthetic work in place of Savina's busy-wait, whose last state the smoker keeps.
using savina::busy_work;

struct Setup {
    std::uint64_t rounds;
    std::uint32_t smokers;
    std::uint64_t seed;  // the PRNG's: Savina's rounds*smokers where the parameter is 0
};

struct Answer {
    std::uint64_t smokers_reported = 0;
    std::uint64_t smokes = 0;
    std::uint64_t uneven_smokers = 0;  // smoked another number of times than the picks say
    std::uint64_t smokes_hash = kHashBasis;  // each smoker's count, in smoker order
    std::uint64_t work_units = 0;
    std::uint64_t work_sum = 0;  // the smokes' last LCG states, summed (mod 2^64)
    // Messages by kind, as their receivers counted them.
    std::uint64_t start = 0, start_smoking = 0, started_smoking = 0, exit = 0, tally = 0;
};

std::string describe(const Answer& a) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(a.smokes_hash));
    return "smokers_reported=" + std::to_string(a.smokers_reported) + " smokes=" + std::to_string(a.smokes) +
           " uneven_smokers=" + std::to_string(a.uneven_smokers) + " smokes_hash=" + hash +
           " work_units=" + std::to_string(a.work_units) + " work_sum=" + std::to_string(a.work_sum) +
           " start=" + std::to_string(a.start) + " start_smoking=" + std::to_string(a.start_smoking) +
           " started_smoking=" + std::to_string(a.started_smoking) + " exit=" + std::to_string(a.exit) +
           " tally=" + std::to_string(a.tally);
}

// The sequential model: the arbiter's picks replayed, each smoker's smokes counted.
struct Model {
    std::vector<std::uint64_t> smokes;
    Answer answer;
};

Model model(const Setup& s) {
    Model m;
    m.smokes.assign(s.smokers, 0);
    PseudoRandom random(s.seed);
    Answer& a = m.answer;
    for (std::uint64_t r = 0; r < s.rounds; ++r) {
        const Pick pick = draw(random, s.smokers);
        ++m.smokes[pick.smoker];
        a.work_units += pick.work;
        a.work_sum += busy_work(pick.work);
    }
    for (std::uint64_t count : m.smokes) a.smokes_hash = fnv_fold(a.smokes_hash, count);
    a.smokers_reported = s.smokers;
    a.smokes = s.rounds;
    a.start = 1;
    a.start_smoking = a.started_smoking = s.rounds;
    a.exit = a.tally = s.smokers;
    return m;
}

struct Start {};
struct StartSmoking {
    std::uint32_t work;
};
struct StartedSmoking {};
struct Exit {};
struct Tally {
    std::uint32_t smoker;
    std::uint64_t smokes;
    std::uint64_t exits;
    std::uint64_t work_units;
    std::uint64_t work_sum;
};

class Smoker final : public rt::Agent {
public:
    Smoker(std::uint32_t index, rt::Agent& arbiter) : index_(index), arbiter_(arbiter) {
        subscribe<&Smoker::on_start_smoking>();
        subscribe<&Smoker::on_exit>();
    }

private:
    void on_start_smoking(const StartSmoking& start) {
        rt::send<StartedSmoking>(arbiter_);  // the ingredients are off the table
        ++smokes_;
        work_units_ += start.work;
        work_sum_ += busy_work(start.work);
    }

    void on_exit(const Exit&) { rt::send<Tally>(arbiter_, index_, smokes_, std::uint64_t{1}, work_units_, work_sum_); }

    const std::uint32_t index_;
    rt::Agent& arbiter_;
    std::uint64_t smokes_ = 0;
    std::uint64_t work_units_ = 0;
    std::uint64_t work_sum_ = 0;
};

class Arbiter final : public rt::Agent {
public:
    Arbiter(const Setup& s, rt::Completion<Answer>& done)
        : setup_(s), random_(s.seed), done_(done), smokes_(s.smokers, 0) {
        subscribe<&Arbiter::on_start_message>();
        subscribe<&Arbiter::on_started>();
        subscribe<&Arbiter::on_tally>();
    }
    void link(std::vector<Smoker*> smokers) { smokers_ = std::move(smokers); }
    // Read after the run (the completion's set follows every write).
    const std::vector<std::uint64_t>& smokes() const noexcept { return smokes_; }

private:
    void on_start_message(const Start&) {
        ++answer_.start;
        notify_random_smoker();
    }

    void on_started(const StartedSmoking&) {
        ++answer_.started_smoking;
        if (++rounds_ >= setup_.rounds) {
            for (Smoker* smoker : smokers_) rt::send<Exit>(*smoker);
        } else {
            notify_random_smoker();
        }
    }

    void on_tally(const Tally& t) {
        ++answer_.tally;
        ++answer_.smokers_reported;
        answer_.smokes += t.smokes;
        answer_.start_smoking += t.smokes;
        answer_.exit += t.exits;
        answer_.work_units += t.work_units;
        answer_.work_sum += t.work_sum;
        if (t.smoker < smokes_.size()) smokes_[t.smoker] = t.smokes;
        if (answer_.tally != smokers_.size()) return;
        for (std::uint64_t count : smokes_) answer_.smokes_hash = fnv_fold(answer_.smokes_hash, count);
        done_.set(answer_);
    }

    void notify_random_smoker() {
        const Pick pick = draw(random_, setup_.smokers);
        rt::send<StartSmoking>(*smokers_[pick.smoker], pick.work);
    }

    const Setup setup_;
    PseudoRandom random_;
    rt::Completion<Answer>& done_;
    std::vector<Smoker*> smokers_;
    std::vector<std::uint64_t> smokes_;
    std::uint64_t rounds_ = 0;
    Answer answer_;
};

Setup setup(const Params& params) {
    const auto rounds = std::uint64_t(params.integer("rounds"));
    const auto smokers = std::uint32_t(params.integer("smokers"));
    const auto seed = std::uint64_t(params.integer("seed"));
    return {rounds, smokers, seed == 0 ? rounds * smokers : seed};
}

std::uint64_t messages(const Setup& s) { return 1 + 2 * s.rounds + 2 * std::uint64_t(s.smokers); }

Result run(const Params& params) {
    const Setup s = setup(params);
    const Model m = model(s);

    MeasuredRun<Answer> run(params);
    Arbiter* arbiter = nullptr;
    Result result;

    // As Savina's runIteration: the agents are made inside the phase.
    const Answer answer = run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
                arbiter = &coop.make_agent_with_binder<Arbiter>(dispatchers.binder(0), s, run.done());
                std::vector<Smoker*> smokers;
                for (std::uint32_t i = 0; i < s.smokers; ++i)
                    smokers.push_back(&coop.make_agent_with_binder<Smoker>(dispatchers.binder(1 + i), i, *arbiter));
                arbiter->link(std::move(smokers));
            });
            rt::send<Start>(*arbiter);
        },
        [&](Answer& answer) {
            for (std::uint32_t i = 0; i < s.smokers; ++i)
                if (arbiter->smokes()[i] != m.smokes[i]) ++answer.uneven_smokers;
        });

    result.messages_processed =
        answer.start + answer.start_smoking + answer.started_smoking + answer.exit + answer.tally;
    result.answer = describe(answer);
    result.expected = describe(m.answer);
    return result;
}

void check(const Params& params) {
    const auto smokers = std::uint64_t(params.integer("smokers"));
    check_thread_per_agent("savina_cigsmok", params, smokers + 1, "smokers=" + std::to_string(smokers));
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {describe(model(s).answer), messages(s)};
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("rounds", 1'000, {1, 100'000'000},
                      "rounds: the arbiter picks a smoker this many times (Savina's R)"),
        integer_param("smokers", 200, {1, 1'000'000}, "smoker agents (Savina's S)"),
        integer_param("seed", 0, {0, 4'294'967'295},
                      "seed of the arbiter's PRNG (Savina's PseudoRandom); 0: rounds*smokers, Savina's own seed"),
    };
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
