// What every savina_barber kernel (ours, caf_savina_barber) shares: the seeded spells of work, the
// factory's, the room's, the barber's and a customer's sides, the accounting of every message,
// the answer, its expectation and its format, so that both runtimes are verified the same way.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_barber {

// Savina's PseudoRandom (its default seed is 74755).
using savina::PseudoRandom;

// A spell of work, drawn as Savina draws its busy-wait (nextInt(rate) + 10).
inline std::uint32_t draw(PseudoRandom& random, std::uint32_t rate) noexcept {
    return std::uint32_t(random.next() % rate + 10);
}

// The synthetic work in place of Savina's busy-wait, whose last states are summed.
using savina::busy_work;

struct Setup {
    std::uint64_t haircuts;
    std::uint64_t seats;
    std::uint32_t production_rate;
    std::uint32_t haircut_rate;
    std::uint64_t seed;
};

inline Setup setup(const Params& params) {
    return {std::uint64_t(params.integer("haircuts")), std::uint64_t(params.integer("seats")),
            std::uint32_t(params.integer("production_rate")), std::uint32_t(params.integer("haircut_rate")),
            std::uint64_t(params.integer("seed"))};
}

// A sequence of `n` spells drawn from a PRNG seeded with `seed`: their units and results summed.
struct Work {
    std::uint64_t units = 0;
    std::uint64_t sum = 0;
    void add(std::uint32_t work) noexcept {
        units += work;
        sum += busy_work(work);
    }
};

inline Work model_work(std::uint64_t n, std::uint32_t rate, std::uint64_t seed) {
    PseudoRandom random(seed);
    Work w;
    for (std::uint64_t i = 0; i < n; ++i) w.add(draw(random, rate));
    return w;
}

// What the agents counted. The schedule decides how many customers were turned away and how
// often the barber slept; everything in the answer is the same on every schedule.
struct Counts {
    // factory
    std::uint64_t customers = 0;      // made
    std::uint64_t returned = 0;       // Returned received (turned away, sent again)
    std::uint64_t served = 0;         // Done received from customers
    std::uint64_t served_wrong = 0;   // customers that were not started and done exactly once
    std::uint64_t repeated = 0;       // a customer's Done received twice
    Work factory_work;
    // room
    std::uint64_t enters = 0;         // Enter received
    std::uint64_t full = 0;           // Full sent
    std::uint64_t wakes = 0;          // Next sent to itself, waking the barber
    std::uint64_t waits = 0;          // Wait sent to customers
    std::uint64_t nexts = 0;          // Next received (its own and the barber's)
    std::uint64_t to_barber = 0;      // Enter sent to the barber
    // barber
    std::uint64_t haircuts = 0;
    Work barber_work;
    // customers, summed at their Done
    std::uint64_t customer_starts = 0, customer_dones = 0, customer_fulls = 0, customer_waits = 0;
};

// Every schedule's invariants: each Enter turned away, woke the barber or waited; every
// turned-away customer came back; every accepted customer was cut; each Next either sent a
// customer to the barber or found the room empty after a wake.
inline std::uint64_t accounting_errors(const Counts& c) {
    std::uint64_t errors = 0;
    errors += c.enters != c.customers + c.returned;
    errors += c.full != c.returned || c.customer_fulls != c.returned;
    errors += c.enters - c.full != c.wakes + c.waits;
    errors += c.customer_waits != c.waits;
    errors += c.to_barber != c.haircuts || c.nexts != c.wakes + c.haircuts;
    errors += c.customer_starts != c.haircuts || c.customer_dones != c.haircuts;
    return errors;
}

inline std::string describe(const Counts& c, std::uint64_t errors) {
    return "customers=" + std::to_string(c.customers) + " haircuts=" + std::to_string(c.haircuts) +
           " served=" + std::to_string(c.served) + " served_wrong=" + std::to_string(c.served_wrong) +
           " repeated=" + std::to_string(c.repeated) + " accounting_errors=" + std::to_string(errors) +
           " factory_work_units=" + std::to_string(c.factory_work.units) +
           " factory_work_sum=" + std::to_string(c.factory_work.sum) +
           " barber_work_units=" + std::to_string(c.barber_work.units) +
           " barber_work_sum=" + std::to_string(c.barber_work.sum);
}

inline std::string expected(const Setup& s) {
    Counts c;
    c.customers = c.haircuts = c.served = s.haircuts;
    c.factory_work = model_work(s.haircuts, s.production_rate, s.seed);
    c.barber_work = model_work(s.haircuts, s.haircut_rate, s.seed);
    return describe(c, 0);
}

// Start; per attempt an Enter to the room and per turned-away attempt a Full and a Returned; per
// haircut: a Next to itself or a Wait (the customer's acceptance), the barber's Next, the
// room's Enter to the barber, StartCut and DoneCut, the customer's Done; two Exits.
inline std::uint64_t messages(std::uint64_t haircuts, std::uint64_t turned_away) {
    return 3 + 7 * haircuts + 3 * turned_away;
}

// What a correct run on any runtime reports: the answer, and the messages with no customer turned
// away, the fewest. The turned-away customers have no upper bound: while the seats are taken a
// customer is turned away again each time it comes back, and the schedule may leave the barber's
// next Next unhandled for as many of its returns as it likes. Where the seats hold every customer
// (seats >= haircuts) none is turned away: the count is exact.
inline Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {.answer = expected(s),
            .messages = messages(s.haircuts, 0),
            .messages_most = s.seats >= s.haircuts ? std::optional<std::uint64_t>(0) : std::nullopt};
}

// The messages without an agent in them, one protocol for ours and caf_savina_barber (its CAF
// port); Enter and Returned name a customer in each runtime's own way.
struct Start {};
struct Full {};
struct Wait {};
struct Next {};
struct StartCut {};
struct DoneCut {};
// A customer's Done: its ordinal and what it was sent.
struct Tally {
    std::uint64_t id;
    std::uint64_t starts, dones, fulls, waits;
};
struct ExitRoom {
    Counts counts;
};
struct ExitBarber {
    Counts counts;
};

// A customer's side, on any runtime: what it was sent.
class Visit {
public:
    explicit Visit(std::uint64_t id) noexcept : id_(id) {}
    void full() noexcept { ++fulls_; }
    void wait() noexcept { ++waits_; }
    void start_cut() noexcept { ++starts_; }
    Tally done_cut() noexcept { return {id_, starts_, ++dones_, fulls_, waits_}; }

private:
    const std::uint64_t id_;
    std::uint64_t starts_ = 0, dones_ = 0, fulls_ = 0, waits_ = 0;
};

// The factory's side, on any runtime (Savina's CustomerFactoryActor): the customers it made,
// the work after each, the returns and the Dones, each customer's checked.
class Factory {
public:
    explicit Factory(const Setup& s) : setup_(s), random_(s.seed), seen_(s.haircuts, false) {}

    std::uint64_t haircuts() const noexcept { return setup_.haircuts; }
    // After each new customer: its spell of work.
    void made() noexcept {
        ++counts_.customers;
        counts_.factory_work.add(draw(random_, setup_.production_rate));
    }
    void returned() noexcept { ++counts_.returned; }
    // A customer's Done: true once every customer is served (then the room is told to exit).
    bool done(const Tally& t) {
        ++counts_.served;
        if (t.id >= seen_.size() || seen_[t.id]) ++counts_.repeated;
        else seen_[t.id] = true;
        if (t.starts != 1 || t.dones != 1) ++counts_.served_wrong;
        counts_.customer_starts += t.starts;
        counts_.customer_dones += t.dones;
        counts_.customer_fulls += t.fulls;
        counts_.customer_waits += t.waits;
        return counts_.served == setup_.haircuts;
    }
    const Counts& counts() const noexcept { return counts_; }

private:
    const Setup setup_;
    PseudoRandom random_;
    std::vector<bool> seen_;
    Counts counts_;
};

// The waiting room's side, on any runtime (Savina's WaitingRoomActor), `Customer` naming a
// customer as the runtime does: its seats, the customers waiting, whether the barber sleeps.
template <class Customer>
class Room {
public:
    explicit Room(std::uint64_t seats) : seats_(seats) {}

    enum class Seated { full, wake, wait };
    // Enter: turned away (Full to the customer), seated and the barber woken (Next to itself), or
    // seated to wait (Wait to the customer).
    Seated enter(Customer customer) {
        ++counts_.enters;
        if (waiting_.size() == seats_) {
            ++counts_.full;
            return Seated::full;
        }
        waiting_.push_back(std::move(customer));
        if (barber_asleep_) {
            barber_asleep_ = false;
            ++counts_.wakes;
            return Seated::wake;
        }
        ++counts_.waits;
        return Seated::wait;
    }

    // Next: the first waiting customer, sent to the barber, or none: the barber sleeps (Savina
    // also sends it a Wait, which it ignores), and if `hand_over` comes back true the room's
    // counts are final and go to the barber in its Exit.
    std::optional<Customer> next(bool& hand_over) {
        ++counts_.nexts;
        hand_over = false;
        if (!waiting_.empty()) {
            std::optional<Customer> customer(std::move(waiting_.front()));
            waiting_.pop_front();
            ++counts_.to_barber;
            return customer;
        }
        barber_asleep_ = true;
        hand_over = exiting_;
        return std::nullopt;
    }

    // Exit, with the factory's counts: every customer is served, but the barber's last Next may
    // still be on its way: true if the barber sleeps, so that the counts are final now.
    bool exit(const Counts& factory) {
        const Counts room = counts_;
        counts_ = factory;
        counts_.enters = room.enters;
        counts_.full = room.full;
        counts_.wakes = room.wakes;
        counts_.waits = room.waits;
        counts_.nexts = room.nexts;
        counts_.to_barber = room.to_barber;
        exiting_ = true;
        return barber_asleep_;
    }

    // The factory's and the room's counts (the factory's once it has told the room to exit).
    const Counts& counts() const noexcept { return counts_; }

private:
    const std::uint64_t seats_;
    std::deque<Customer> waiting_;
    bool barber_asleep_ = true;
    bool exiting_ = false;
    Counts counts_;
};

// The barber's side, on any runtime (Savina's BarberActor): its haircuts and their work.
class Chair {
public:
    explicit Chair(const Setup& s) noexcept : random_(s.seed), rate_(s.haircut_rate) {}
    // Between the customer's StartCut and DoneCut.
    void cut() noexcept {
        work_.add(draw(random_, rate_));
        ++haircuts_;
    }
    // On Exit: every count of the run.
    Counts counts(const Counts& room) const noexcept {
        Counts counts = room;
        counts.haircuts = haircuts_;
        counts.barber_work = work_;
        return counts;
    }

private:
    PseudoRandom random_;
    const std::uint32_t rate_;
    std::uint64_t haircuts_ = 0;
    Work work_;
};

// A run's figures, from every count.
inline void report(Result& result, const Counts& counts, const Setup& s) {
    // Every message, as its receiver counted it.
    result.messages_processed = 1 + counts.enters + counts.customer_fulls + counts.returned + counts.nexts +
                                counts.customer_waits + counts.haircuts + counts.customer_starts +
                                counts.customer_dones + counts.served + 2;
    result.answer = describe(counts, accounting_errors(counts));
    result.expected = expected(s);
    result.metrics.push_back({"attempts", double(counts.enters)});
    result.metrics.push_back({"turned_away", double(counts.full)});
    result.metrics.push_back({"barber_wakes", double(counts.wakes)});
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("haircuts", 5'000, {1, 10'000'000},
                      "customers, each made by the factory and cut once (Savina's N)"),
        integer_param("seats", 1'000, {1, 10'000'000},
                      "waiting-room seats; a customer finding them all taken is turned away and sent "
                      "again (Savina's W)"),
        integer_param("production_rate", 1'000, {1, 65'536},
                      "the factory works next % production_rate + 10 units after each new customer "
                      "(Savina's APR, average production rate)"),
        integer_param("haircut_rate", 1'000, {1, 65'536},
                      "the barber works next % haircut_rate + 10 units per haircut (Savina's AHR, "
                      "average haircut rate)"),
        integer_param("seed", 74'755, {0, 4'294'967'295},
                      "seed of the factory's and the barber's PRNGs (Savina's PseudoRandom, whose default "
                      "seed is 74755)"),
    };
}

}  // namespace labctl::kernels::savina_barber
