// savina_barber: Savina's 12. Sleeping Barber (barber). A factory makes a customer agent per
// haircut and sends it into a waiting room; a full room turns the customer away and it asks the
// factory to send it again; the room wakes the barber or queues the customer; the barber cuts
// hair (a spell of work) and asks the room for the next. Measures agent creation under load and
// a bounded queue kept by an agent.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_barber {
namespace {

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
std::uint64_t accounting_errors(const Counts& c) {
    std::uint64_t errors = 0;
    errors += c.enters != c.customers + c.returned;
    errors += c.full != c.returned || c.customer_fulls != c.returned;
    errors += c.enters - c.full != c.wakes + c.waits;
    errors += c.customer_waits != c.waits;
    errors += c.to_barber != c.haircuts || c.nexts != c.wakes + c.haircuts;
    errors += c.customer_starts != c.haircuts || c.customer_dones != c.haircuts;
    return errors;
}

std::string describe(const Counts& c, std::uint64_t errors) {
    return "customers=" + std::to_string(c.customers) + " haircuts=" + std::to_string(c.haircuts) +
           " served=" + std::to_string(c.served) + " served_wrong=" + std::to_string(c.served_wrong) +
           " repeated=" + std::to_string(c.repeated) + " accounting_errors=" + std::to_string(errors) +
           " factory_work_units=" + std::to_string(c.factory_work.units) +
           " factory_work_sum=" + std::to_string(c.factory_work.sum) +
           " barber_work_units=" + std::to_string(c.barber_work.units) +
           " barber_work_sum=" + std::to_string(c.barber_work.sum);
}

std::string expected(const Setup& s) {
    Counts c;
    c.customers = c.haircuts = c.served = s.haircuts;
    c.factory_work = model_work(s.haircuts, s.production_rate, s.seed);
    c.barber_work = model_work(s.haircuts, s.haircut_rate, s.seed);
    return describe(c, 0);
}

class Customer;
class Room;
class Barber;

struct Start {};
struct Enter {
    Customer* customer;
};
struct Full {};
struct Wait {};
struct Next {};
struct Returned {
    Customer* customer;
};
struct StartCut {};
struct DoneCut {};
struct CustomerDone {
    std::uint64_t id;
    rt::Coop* coop;
    std::uint64_t starts, dones, fulls, waits;
};
struct ExitRoom {
    Counts counts;
};
struct ExitBarber {
    Counts counts;
};

class Customer final : public rt::Agent {
public:
    Customer(std::uint64_t id, rt::Agent& factory) : id_(id), factory_(factory) {
        subscribe<&Customer::on_full>();
        subscribe<&Customer::on_wait>();
        subscribe<&Customer::on_start_cut>();
        subscribe<&Customer::on_done_cut>();
    }

private:
    void on_full(const Full&) {
        ++fulls_;
        rt::send<Returned>(factory_, this);
    }
    void on_wait(const Wait&) { ++waits_; }
    void on_start_cut(const StartCut&) { ++starts_; }
    void on_done_cut(const DoneCut&) {
        ++dones_;
        rt::send<CustomerDone>(factory_, id_, &coop(), starts_, dones_, fulls_, waits_);
    }

    const std::uint64_t id_;
    rt::Agent& factory_;
    std::uint64_t starts_ = 0, dones_ = 0, fulls_ = 0, waits_ = 0;
};

class Barber final : public rt::Agent {
public:
    Barber(const Setup& s, rt::Completion<Counts>& done) : random_(s.seed), rate_(s.haircut_rate), done_(done) {
        subscribe<&Barber::on_enter>();
        subscribe<&Barber::on_exit>();
    }
    void link(rt::Agent& room) { room_ = &room; }

private:
    void on_enter(const Enter& enter) {
        rt::send<StartCut>(*enter.customer);
        work_.add(draw(random_, rate_));
        ++haircuts_;
        rt::send<DoneCut>(*enter.customer);
        rt::send<Next>(*room_);
    }

    void on_exit(const ExitBarber& exit) {
        Counts counts = exit.counts;
        counts.haircuts = haircuts_;
        counts.barber_work = work_;
        done_.set(counts);
    }

    PseudoRandom random_;
    const std::uint32_t rate_;
    rt::Completion<Counts>& done_;
    rt::Agent* room_ = nullptr;
    std::uint64_t haircuts_ = 0;
    Work work_;
};

class Room final : public rt::Agent {
public:
    Room(std::uint64_t seats, Barber& barber) : seats_(seats), barber_(barber) {
        subscribe<&Room::on_enter>();
        subscribe<&Room::on_next>();
        subscribe<&Room::on_exit>();
    }

private:
    void on_enter(const Enter& enter) {
        ++counts_.enters;
        if (waiting_.size() == seats_) {
            ++counts_.full;
            rt::send<Full>(agent(enter.customer));
            return;
        }
        waiting_.push_back(enter.customer);
        if (barber_asleep_) {
            barber_asleep_ = false;
            ++counts_.wakes;
            rt::send<Next>(*this);
        } else {
            ++counts_.waits;
            rt::send<Wait>(agent(enter.customer));
        }
    }

    void on_next(const Next&) {
        ++counts_.nexts;
        if (!waiting_.empty()) {
            Customer* customer = waiting_.front();
            waiting_.pop_front();
            ++counts_.to_barber;
            rt::send<Enter>(barber_, customer);
            return;
        }
        barber_asleep_ = true;  // Savina also sends the barber a Wait, which it ignores
        if (exiting_) hand_over();
    }

    void on_exit(const ExitRoom& exit_room) {
        // Every customer is served, but the barber's last Next may still be on its way: the
        // room's counts are final once the barber sleeps.
        counts_.customers = exit_room.counts.customers;
        counts_.returned = exit_room.counts.returned;
        counts_.served = exit_room.counts.served;
        counts_.served_wrong = exit_room.counts.served_wrong;
        counts_.repeated = exit_room.counts.repeated;
        counts_.factory_work = exit_room.counts.factory_work;
        counts_.customer_starts = exit_room.counts.customer_starts;
        counts_.customer_dones = exit_room.counts.customer_dones;
        counts_.customer_fulls = exit_room.counts.customer_fulls;
        counts_.customer_waits = exit_room.counts.customer_waits;
        exiting_ = true;
        if (barber_asleep_) hand_over();
    }

    void hand_over() { rt::send<ExitBarber>(barber_, counts_); }

    static rt::Agent& agent(Customer* customer) noexcept { return *customer; }

    const std::uint64_t seats_;
    Barber& barber_;
    std::deque<Customer*> waiting_;
    bool barber_asleep_ = true;
    bool exiting_ = false;
    Counts counts_;
};

class Factory final : public rt::Agent {
public:
    Factory(const Setup& s, DispatcherChoice& dispatchers, Room& room)
        : setup_(s), dispatchers_(dispatchers), room_(room), random_(s.seed), seen_(s.haircuts, false) {
        subscribe<&Factory::on_start_message>();
        subscribe<&Factory::on_returned>();
        subscribe<&Factory::on_done>();
    }

private:
    void on_start_message(const Start&) {
        for (std::uint64_t i = 0; i < setup_.haircuts; ++i) {
            Customer* customer = nullptr;
            environment().introduce_coop(dispatchers_.binder(unsigned(3 + i)), [&](rt::Coop& coop) {
                customer = &coop.make_agent<Customer>(i, *this);
            });
            ++counts_.customers;
            rt::send<Enter>(room_, customer);
            counts_.factory_work.add(draw(random_, setup_.production_rate));
        }
    }

    void on_returned(const Returned& returned) {
        ++counts_.returned;
        rt::send<Enter>(room_, returned.customer);
    }

    void on_done(const CustomerDone& d) {
        ++counts_.served;
        if (d.id >= seen_.size() || seen_[d.id]) ++counts_.repeated;
        else seen_[d.id] = true;
        if (d.starts != 1 || d.dones != 1) ++counts_.served_wrong;
        counts_.customer_starts += d.starts;
        counts_.customer_dones += d.dones;
        counts_.customer_fulls += d.fulls;
        counts_.customer_waits += d.waits;
        // The customer is done (Savina's exit()): its coop goes.
        environment().deregister_coop(*d.coop);
        if (counts_.served == setup_.haircuts) rt::send<ExitRoom>(room_, counts_);
    }

    const Setup setup_;
    DispatcherChoice& dispatchers_;
    Room& room_;
    PseudoRandom random_;
    std::vector<bool> seen_;
    Counts counts_;
};

Setup setup(const Params& params) {
    return {std::uint64_t(params.integer("haircuts")), std::uint64_t(params.integer("seats")),
            std::uint32_t(params.integer("production_rate")), std::uint32_t(params.integer("haircut_rate")),
            std::uint64_t(params.integer("seed"))};
}

// Start; per attempt an Enter to the room and per turned-away attempt a Full and a Returned; per
// haircut: a Next to itself or a Wait (the customer's acceptance), the barber's Next, the
// room's Enter to the barber, StartCut and DoneCut, the customer's Done; two Exits.
std::uint64_t messages(std::uint64_t haircuts, std::uint64_t turned_away) {
    return 3 + 7 * haircuts + 3 * turned_away;
}

Result run(const Params& params) {
    const Setup s = setup(params);

    MeasuredRun<Counts> run(params);
    Result result;

    // As Savina's runIteration: the barber, the room and the factory are made inside the phase,
    // and the factory makes each customer.
    const Counts counts = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        Factory* factory = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            auto& barber = coop.make_agent_with_binder<Barber>(dispatchers.binder(0), s, run.done());
            auto& room = coop.make_agent_with_binder<Room>(dispatchers.binder(1), s.seats, barber);
            barber.link(room);
            factory = &coop.make_agent_with_binder<Factory>(dispatchers.binder(2), s, dispatchers, room);
        });
        rt::send<Start>(*factory);
    });

    // Every message, as its receiver counted it.
    result.messages_processed = 1 + counts.enters + counts.customer_fulls + counts.returned + counts.nexts +
                                counts.customer_waits + counts.haircuts + counts.customer_starts +
                                counts.customer_dones + counts.served + 2;
    result.answer = describe(counts, accounting_errors(counts));
    result.expected = expected(s);
    result.metrics.push_back({"attempts", double(counts.enters)});
    result.metrics.push_back({"turned_away", double(counts.full)});
    result.metrics.push_back({"barber_wakes", double(counts.wakes)});
    return result;
}

void check(const Params& params) {
    const auto haircuts = std::uint64_t(params.integer("haircuts"));
    check_thread_per_agent("savina_barber", params, haircuts + 3, "haircuts=" + std::to_string(haircuts));
}

// What a correct run on any runtime reports: the answer, and the messages with no customer turned
// away, the fewest. The turned-away customers have no upper bound: while the seats are taken a
// customer is turned away again each time it comes back, and the schedule may leave the barber's
// next Next unhandled for as many of its returns as it likes. Where the seats hold every customer
// (seats >= haircuts) none is turned away: the count is exact.
Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {.answer = expected(s),
            .messages = messages(s.haircuts, 0),
            .messages_most = s.seats >= s.haircuts ? std::optional<std::uint64_t>(0) : std::nullopt};
}

std::vector<ParamSpec> own_params() {
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

const Registration registration(Kernel{
    .name = "savina_barber",
    .summary = "a factory makes `haircuts` customer agents for a barber behind a waiting room of "
               "`seats` seats: agent creation and a bounded queue",
    .description =
        "Savina's 12. Sleeping Barber (barber). On Start the factory makes `haircuts` customer "
        "agents, each in a coop of its own, sending each into the waiting room (Enter) and "
        "working next % production_rate + 10 units after each. The room turns a customer away "
        "(Full) when its `seats` seats are taken, and the customer asks the factory to send it "
        "again (Returned); otherwise it seats it and wakes a sleeping barber (a Next to itself) "
        "or tells the customer to wait (Wait). On Next the room sends the first waiting "
        "customer to the barber (Enter), or lets the barber sleep. The barber sends the "
        "customer StartCut, works next % haircut_rate + 10 units, sends DoneCut and asks the "
        "room for the next (Next). A customer answers DoneCut with its Done to the factory, "
        "which deregisters its coop; after the last, Exit goes to the room and, once the barber "
        "sleeps, from the room to the barber, who sets the answer. The phase covers what "
        "Savina's clock covers: from before the barber, the room and the factory are made (the "
        "dispatcher's threads already running) and Start sent, to the barber's Exit. How many "
        "customers are turned away, and how often the barber sleeps, depend on the schedule: "
        "they are the metrics turned_away, attempts (Savina's CustomerAttempts: haircuts + "
        "turned_away) and barber_wakes, not in the answer, which is the same on every schedule; "
        "messages are 3 + 7*haircuts + 3*turned_away, with no upper bound (a customer is turned "
        "away again for as long as the seats stay taken; none is where seats >= haircuts). "
        "Differences from Savina: the busy-waits are that many steps of a 64-bit LCG, seeded "
        "with `seed` (Savina's PseudoRandom's default seed) and checked, about 1.2 ns a unit, "
        "where a unit of Savina's is a call of Math.random(), two compare-and-swaps on the one "
        "seed every thread shares (a C++ stand-in: 9.6 ns a call on one thread, 18 ns with "
        "two threads calling at once, on a busy 2-vCPU machine), so its factory's and barber's "
        "spells cost about 8 times ours, 15 or more while the two work at once, which slows "
        "them together in Savina and not here; the room sends the "
        "barber no Wait when it lets it sleep (Savina's barber ignores it; its count would "
        "depend on the schedule); the room forwards Exit only once the barber sleeps and the "
        "customers report their counts with their Done; a customer's id is its ordinal, "
        "attempts are counted by the room.",
    .sources = {{"savina", "12. Sleeping Barber (barber)"}},
    .verifies = "every customer was cut exactly once, attempts = haircuts + turned-away "
                "customers sent again, every message accounted for by kind, and the seeded work done",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {{.name = "attempts"}, {.name = "turned_away"}, {.name = "barber_wakes"}},
    .check = check,
    .run = run,
    .expect = expect,  // its work: the fewest messages, none turned away
});

}  // namespace
}  // namespace labctl::kernels::savina_barber
