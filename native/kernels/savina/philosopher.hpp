// What every savina_philosopher kernel (ours, caf_savina_philosopher) shares: the messages, the
// arbitrator's forks and the checks beside its rule, a philosopher's tally, the answer, its
// expectation and its format, so that both runtimes are verified the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::savina_philosopher {

// The messages, one protocol for ours and caf_savina_philosopher (its CAF port).
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

// The arbitrator's side, on any runtime (Savina's ArbitratorActor): who holds each fork, its
// grants and denials, and the checks beside its rule.
class Forks {
public:
    explicit Forks(std::uint32_t philosophers)
        : n_(philosophers), holder_(philosophers, kFree), meals_(philosophers, 0) {}

    // Hungry: true if philosopher `id` may eat (both its forks taken for it), false if denied.
    bool hungry(std::uint32_t id) {
        ++outcome_.handled;
        const std::uint32_t left = id, right = (id + 1) % n_;
        if (holder_[left] != kFree || holder_[right] != kFree) {
            ++outcome_.denials;
            return false;
        }
        // Checked beside the rule that ensures it: neither neighbour eats.
        const std::uint32_t before = (id + n_ - 1) % n_;
        if (n_ > 1 && (holder_[before] == before || holder_[right] == right)) ++outcome_.fork_conflicts;
        holder_[left] = id;
        holder_[right] = id;
        ++meals_[id];
        ++outcome_.meals;
        return true;
    }

    // Done: philosopher `id` puts its forks down.
    void done(std::uint32_t id) {
        ++outcome_.handled;
        const std::uint32_t left = id, right = (id + 1) % n_;
        if (holder_[left] != id || holder_[right] != id) ++outcome_.wrong_releases;
        holder_[left] = kFree;
        holder_[right] = kFree;
    }

    // Exit: true once every philosopher has exited (then the run is over).
    bool exit() {
        ++outcome_.handled;
        if (++outcome_.exits < n_) return false;
        for (std::uint32_t holder : holder_) outcome_.forks_left_held += holder != kFree ? 1 : 0;
        return true;
    }

    const Outcome& outcome() const noexcept { return outcome_; }
    std::uint64_t meals(std::uint32_t id) const noexcept { return meals_[id]; }

private:
    static constexpr std::uint32_t kFree = ~std::uint32_t{0};

    const std::uint32_t n_;
    std::vector<std::uint32_t> holder_;  // fork i: the philosopher holding it, or kFree
    std::vector<std::uint64_t> meals_;   // granted, per philosopher
    Outcome outcome_;
};

// A philosopher's side, on any runtime: its meals and denials, and the messages it handled.
class Diner {
public:
    explicit Diner(std::uint64_t rounds) noexcept : rounds_(rounds) {}

    void start() noexcept { ++handled_; }
    void denied() noexcept {
        ++handled_;
        ++denied_;
    }
    // Eat: true while it has rounds left (it starts again), false once it has eaten them all
    // (it exits).
    bool eat() noexcept {
        ++handled_;
        return ++eaten_ < rounds_;
    }

    std::uint64_t eaten() const noexcept { return eaten_; }
    std::uint64_t denied_count() const noexcept { return denied_; }
    std::uint64_t handled() const noexcept { return handled_; }

private:
    const std::uint64_t rounds_;
    std::uint64_t eaten_ = 0;
    std::uint64_t denied_ = 0;
    std::uint64_t handled_ = 0;
};

inline std::string describe(std::uint64_t philosophers, std::uint64_t meals, std::uint64_t uneven,
                            std::uint64_t lost_denials, const Outcome& o) {
    return "philosophers=" + std::to_string(philosophers) + " meals=" + std::to_string(meals) +
           " uneven_philosophers=" + std::to_string(uneven) + " fork_conflicts=" + std::to_string(o.fork_conflicts) +
           " wrong_releases=" + std::to_string(o.wrong_releases) + " forks_left_held=" +
           std::to_string(o.forks_left_held) + " lost_denials=" + std::to_string(lost_denials);
}

// The answer of every correct run, on every schedule.
inline std::string expected(std::uint64_t philosophers, std::uint64_t rounds) {
    return describe(philosophers, philosophers * rounds, 0, 0, Outcome{});
}

// Without denials: per round of each philosopher a start, a granted hungry, an eat and a done,
// and each philosopher's exit. Each denial adds a denied and a hungry.
inline std::uint64_t fewest_messages(std::uint64_t philosophers, std::uint64_t rounds) {
    return 4 * philosophers * rounds + philosophers;
}

// What a correct run on any runtime reports: the answer, and the messages without denials, the
// fewest. The denials have no upper bound: a philosopher is denied again as long as a neighbour
// holds a fork, and the schedule may leave that neighbour's done unhandled for as many of its
// retries as it likes. One philosopher, whose two forks are one, is never denied (its done reaches
// the arbitrator before its next hungry): the count is exact.
inline Expectation expect(const Params& params) {
    const auto n = std::uint64_t(params.integer("philosophers"));
    const auto rounds = std::uint64_t(params.integer("rounds"));
    return {.answer = expected(n, rounds),
            .messages = fewest_messages(n, rounds),
            .messages_most = n == 1 ? std::optional<std::uint64_t>(0) : std::nullopt};
}

// A run's figures, once the arbitrator has had every exit: `diners` each philosopher's.
inline void report(Result& result, const Forks& forks, const std::vector<Diner>& diners, std::uint64_t rounds) {
    const Outcome& outcome = forks.outcome();
    const auto n = std::uint32_t(diners.size());
    std::uint64_t handled = outcome.handled, eaten = 0, denied = 0, uneven = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        handled += diners[i].handled();
        eaten += diners[i].eaten();
        denied += diners[i].denied_count();
        if (diners[i].eaten() != rounds || forks.meals(i) != rounds) ++uneven;
    }
    const std::uint64_t lost = denied > outcome.denials ? denied - outcome.denials : outcome.denials - denied;
    result.messages_processed = handled;
    result.answer = describe(n, eaten == outcome.meals ? eaten : 0, uneven, lost, outcome);
    result.expected = expected(n, rounds);
    result.metrics = {{"denials", double(outcome.denials)}};
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("philosophers", 20, {1, 1'000'000},
                      "philosophers around the table, as many forks (Savina's N); philosopher i eats with "
                      "forks i and (i + 1) % philosophers"),
        integer_param("rounds", 10'000, {1, 1'000'000'000}, "times each philosopher eats (Savina's M)"),
    };
}

}  // namespace labctl::kernels::savina_philosopher
