// savina_philosopher: Savina's Dining Philosophers. An arbitrator holds the forks; a hungry
// philosopher asks it for its two, eats if both are free or is denied and asks again. Measures
// a central agent under contention, with retries whose number the schedule decides.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_philosopher {
namespace {

struct Start {};
struct Hungry {
    std::uint32_t id;
};
struct Done {
    std::uint32_t id;
};
struct Exit {
    std::uint32_t id;
};
struct Eat {};
struct Denied {};

struct Outcome {
    std::uint64_t meals = 0;          // grants, over all philosophers
    std::uint64_t denials = 0;
    std::uint64_t fork_conflicts = 0;  // a grant of a fork someone held
    std::uint64_t wrong_releases = 0;  // a release of forks the philosopher did not hold
    std::uint64_t forks_left_held = 0;
    std::uint64_t exits = 0;
    std::uint64_t handled = 0;
};

class Philosopher;

class Arbitrator final : public rt::Agent {
public:
    Arbitrator(std::uint32_t philosophers, const std::vector<Philosopher*>& all, rt::Completion<bool>& done)
        : n_(philosophers), holder_(philosophers, kFree), meals_(philosophers, 0), all_(all), done_(done) {
        subscribe<&Arbitrator::on_hungry>();
        subscribe<&Arbitrator::on_done>();
        subscribe<&Arbitrator::on_exit>();
    }
    // Read after the run: the last exit sets the kernel's completion.
    const Outcome& outcome() const noexcept { return outcome_; }
    std::uint64_t meals(std::uint32_t id) const noexcept { return meals_[id]; }

private:
    static constexpr std::uint32_t kFree = ~std::uint32_t{0};

    void on_hungry(const Hungry& hungry);

    void on_done(const Done& done) {
        ++outcome_.handled;
        const std::uint32_t left = done.id, right = (done.id + 1) % n_;
        if (holder_[left] != done.id || holder_[right] != done.id) ++outcome_.wrong_releases;
        holder_[left] = kFree;
        holder_[right] = kFree;
    }

    void on_exit(const Exit&) {
        ++outcome_.handled;
        if (++outcome_.exits < n_) return;
        for (std::uint32_t holder : holder_) outcome_.forks_left_held += holder != kFree ? 1 : 0;
        done_.set(true);
    }

    const std::uint32_t n_;
    std::vector<std::uint32_t> holder_;  // fork i: the philosopher holding it, or kFree
    std::vector<std::uint64_t> meals_;   // granted, per philosopher
    const std::vector<Philosopher*>& all_;
    rt::Completion<bool>& done_;
    Outcome outcome_;
};

class Philosopher final : public rt::Agent {
public:
    Philosopher(std::uint32_t id, std::uint64_t rounds, Arbitrator& arbitrator)
        : id_(id), rounds_(rounds), arbitrator_(arbitrator) {
        subscribe<&Philosopher::on_start>();
        subscribe<&Philosopher::on_eat>();
        subscribe<&Philosopher::on_denied>();
    }
    // Read after the run: written before the philosopher's exit, whose handling ends the phase.
    std::uint64_t eaten() const noexcept { return eaten_; }
    std::uint64_t denied() const noexcept { return denied_; }
    std::uint64_t handled() const noexcept { return handled_; }

private:
    void on_start(const Start&) {
        ++handled_;
        rt::send<Hungry>(arbitrator_, id_);
    }

    void on_denied(const Denied&) {
        ++handled_;
        ++denied_;
        rt::send<Hungry>(arbitrator_, id_);
    }

    void on_eat(const Eat&) {
        ++handled_;
        ++eaten_;
        rt::send<Done>(arbitrator_, id_);
        if (eaten_ < rounds_) rt::send<Start>(*this);
        else rt::send<Exit>(arbitrator_, id_);
    }

    const std::uint32_t id_;
    const std::uint64_t rounds_;
    Arbitrator& arbitrator_;
    std::uint64_t eaten_ = 0;
    std::uint64_t denied_ = 0;
    std::uint64_t handled_ = 0;
};

void Arbitrator::on_hungry(const Hungry& hungry) {
    ++outcome_.handled;
    const std::uint32_t left = hungry.id, right = (hungry.id + 1) % n_;
    if (holder_[left] != kFree || holder_[right] != kFree) {
        ++outcome_.denials;
        rt::send<Denied>(*all_[hungry.id]);
        return;
    }
    // Checked beside the rule that ensures it: neither neighbour eats.
    const std::uint32_t before = (hungry.id + n_ - 1) % n_;
    if (n_ > 1 && (holder_[before] == before || holder_[right] == right)) ++outcome_.fork_conflicts;
    holder_[left] = hungry.id;
    holder_[right] = hungry.id;
    ++meals_[hungry.id];
    ++outcome_.meals;
    rt::send<Eat>(*all_[hungry.id]);
}

std::string describe(std::uint64_t philosophers, std::uint64_t meals, std::uint64_t uneven,
                     std::uint64_t lost_denials, const Outcome& o) {
    return "philosophers=" + std::to_string(philosophers) + " meals=" + std::to_string(meals) +
           " uneven_philosophers=" + std::to_string(uneven) + " fork_conflicts=" + std::to_string(o.fork_conflicts) +
           " wrong_releases=" + std::to_string(o.wrong_releases) + " forks_left_held=" +
           std::to_string(o.forks_left_held) + " lost_denials=" + std::to_string(lost_denials);
}

// The answer of every correct run, on every schedule.
std::string expected(std::uint64_t philosophers, std::uint64_t rounds) {
    return describe(philosophers, philosophers * rounds, 0, 0, Outcome{});
}

// Without denials: per round of each philosopher a start, a granted hungry, an eat and a done,
// and each philosopher's exit. Each denial adds a denied and a hungry.
std::uint64_t fewest_messages(std::uint64_t philosophers, std::uint64_t rounds) {
    return 4 * philosophers * rounds + philosophers;
}

// What a correct run on any runtime reports: the answer, and the messages without denials, the
// fewest. The denials have no upper bound: a philosopher is denied again as long as a neighbour
// holds a fork, and the schedule may leave that neighbour's done unhandled for as many of its
// retries as it likes. One philosopher, whose two forks are one, is never denied (its done reaches
// the arbitrator before its next hungry): the count is exact.
Expectation expect(const Params& params) {
    const auto n = std::uint64_t(params.integer("philosophers"));
    const auto rounds = std::uint64_t(params.integer("rounds"));
    return {.answer = expected(n, rounds),
            .messages = fewest_messages(n, rounds),
            .messages_most = n == 1 ? std::optional<std::uint64_t>(0) : std::nullopt};
}

Result run(const Params& params) {
    const auto n = std::uint32_t(params.integer("philosophers"));
    const auto rounds = std::uint64_t(params.integer("rounds"));

    std::vector<Philosopher*> all(n, nullptr);
    Arbitrator* arbitrator = nullptr;
    MeasuredRun<bool> run(params);
    Result result;

    // The phase covers what Savina's clock does but the actor system's start and end: the
    // arbitrator and the philosophers created and started, each told to start, every round,
    // until the arbitrator has every philosopher's exit.
    run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
                arbitrator = &coop.make_agent_with_binder<Arbitrator>(dispatchers.binder(0), n, all, run.done());
                for (std::uint32_t i = 0; i < n; ++i)
                    all[i] = &coop.make_agent_with_binder<Philosopher>(dispatchers.binder(i + 1), i, rounds,
                                                                       *arbitrator);
            });
            for (Philosopher* philosopher : all) rt::send<Start>(*philosopher);
        },
        [&](bool) {
            const Outcome& outcome = arbitrator->outcome();
            std::uint64_t handled = outcome.handled, eaten = 0, denied = 0, uneven = 0;
            for (std::uint32_t i = 0; i < n; ++i) {
                handled += all[i]->handled();
                eaten += all[i]->eaten();
                denied += all[i]->denied();
                if (all[i]->eaten() != rounds || arbitrator->meals(i) != rounds) ++uneven;
            }
            const std::uint64_t lost = denied > outcome.denials ? denied - outcome.denials : outcome.denials - denied;
            result.messages_processed = handled;
            result.answer = describe(n, eaten == outcome.meals ? eaten : 0, uneven, lost, outcome);
            result.expected = expected(n, rounds);
            result.metrics = {{"denials", double(outcome.denials)}};
        });
    return result;
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("philosophers", 20, {1, 1'000'000},
                      "philosophers around the table, as many forks (Savina's N); philosopher i eats with "
                      "forks i and (i + 1) % philosophers"),
        integer_param("rounds", 10'000, {1, 1'000'000'000}, "times each philosopher eats (Savina's M)"),
    };
}

const Registration registration(Kernel{
    .name = "savina_philosopher",
    .summary = "`philosophers` philosophers each eat `rounds` times, asking an arbitrator for their "
               "forks and retrying when denied: a central agent under contention",
    .description =
        "Savina's benchmark 11, Dining Philosophers (a concurrency benchmark). An arbitrator agent "
        "holds the forks, `philosophers` philosopher agents sit around the table, philosopher i "
        "between forks i and (i + 1) % philosophers. Each is sent a start message; a started "
        "philosopher sends the arbitrator a hungry message; the arbitrator answers eat, taking "
        "both forks, if both are free, or denied, and a denied philosopher asks again. A "
        "philosopher that ate releases its forks (a done message) and starts again by a message "
        "to itself, until it has eaten `rounds` times, when it tells the arbitrator it exits. "
        "4*philosophers*rounds + philosophers + 2*denials messages: the denials depend on the "
        "schedule, with no upper bound (a philosopher is denied again for as long as a neighbour's "
        "done waits; one philosopher is never denied), and are reported as the metric denials, not "
        "in the answer, which is the same on every schedule (Savina's printed "
        "retry count is another number: after every meal a philosopher adds its running count "
        "of denials, never reset, to one AtomicLong all share, so a denial counts once per "
        "later meal, and every meal is an atomic add on a shared word, which ours do not do). The phase covers creating and starting the arbitrator and the philosophers, "
        "every round, until the arbitrator has every philosopher's exit. Differences from Savina: "
        "its clock also covers creating and shutting down the actor system (ours exists before "
        "the phase and stops after it); the arbitrator records which philosopher holds each fork "
        "rather than whether it is taken, and philosophers are named by index; Savina's number of "
        "channels (C), which its Akka version ignores, is not a parameter.",
    .sources = {{"savina", "11. Dining Philosophers (philosopher)"}},
    .verifies = "every philosopher ate exactly `rounds` times, as the arbitrator granted; no fork was "
                "granted while held or released by another than its holder, none is held at the end; "
                "every denial reached its philosopher",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {{.name = "denials"}},
    .check = [](const Params& params) {
        const auto n = params.integer("philosophers");
        check_thread_per_agent("savina_philosopher", params, std::uint64_t(n) + 1,
                               "philosophers=" + std::to_string(n));
    },
    .run = run,
    .expect = expect,  // its work: the fewest messages, without denials
});

}  // namespace
}  // namespace labctl::kernels::savina_philosopher
