// savina_barber: Savina's 12. Sleeping Barber (barber). A factory makes a customer agent per
// haircut and sends it into a waiting room; a full room turns the customer away and it asks the
// factory to send it again; the room wakes the barber or queues the customer; the barber cuts
// hair (a spell of work) and asks the room for the next. Measures agent creation under load and
// a bounded queue kept by an agent.
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "barber.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_barber {
namespace {

class CustomerAgent;

struct Enter {
    CustomerAgent* customer;
};
struct Returned {
    CustomerAgent* customer;
};
struct CustomerDone {
    Tally tally;
    rt::Coop* coop;
};

class CustomerAgent final : public rt::Agent {
public:
    CustomerAgent(std::uint64_t id, rt::Agent& factory) : visit_(id), factory_(factory) {
        subscribe<&CustomerAgent::on_full>();
        subscribe<&CustomerAgent::on_wait>();
        subscribe<&CustomerAgent::on_start_cut>();
        subscribe<&CustomerAgent::on_done_cut>();
    }

private:
    void on_full(const Full&) {
        visit_.full();
        rt::send<Returned>(factory_, this);
    }
    void on_wait(const Wait&) { visit_.wait(); }
    void on_start_cut(const StartCut&) { visit_.start_cut(); }
    void on_done_cut(const DoneCut&) { rt::send<CustomerDone>(factory_, visit_.done_cut(), &coop()); }

    Visit visit_;
    rt::Agent& factory_;
};

class BarberAgent final : public rt::Agent {
public:
    BarberAgent(const Setup& s, rt::Completion<Counts>& done) : chair_(s), done_(done) {
        subscribe<&BarberAgent::on_enter>();
        subscribe<&BarberAgent::on_exit>();
    }
    void link(rt::Agent& room) { room_ = &room; }

private:
    void on_enter(const Enter& enter) {
        rt::send<StartCut>(*enter.customer);
        chair_.cut();
        rt::send<DoneCut>(*enter.customer);
        rt::send<Next>(*room_);
    }

    void on_exit(const ExitBarber& exit) { done_.set(chair_.counts(exit.counts)); }

    Chair chair_;
    rt::Completion<Counts>& done_;
    rt::Agent* room_ = nullptr;
};

class RoomAgent final : public rt::Agent {
public:
    RoomAgent(std::uint64_t seats, BarberAgent& barber) : room_(seats), barber_(barber) {
        subscribe<&RoomAgent::on_enter>();
        subscribe<&RoomAgent::on_next>();
        subscribe<&RoomAgent::on_exit>();
    }

private:
    void on_enter(const Enter& enter) {
        switch (room_.enter(enter.customer)) {
        case Room<CustomerAgent*>::Seated::full:
            rt::send<Full>(*enter.customer);
            break;
        case Room<CustomerAgent*>::Seated::wake:
            rt::send<Next>(*this);
            break;
        case Room<CustomerAgent*>::Seated::wait:
            rt::send<Wait>(*enter.customer);
            break;
        }
    }

    void on_next(const Next&) {
        bool hand_over = false;
        if (const std::optional<CustomerAgent*> customer = room_.next(hand_over)) rt::send<Enter>(barber_, *customer);
        else if (hand_over) rt::send<ExitBarber>(barber_, room_.counts());
    }

    void on_exit(const ExitRoom& exit) {
        if (room_.exit(exit.counts)) rt::send<ExitBarber>(barber_, room_.counts());
    }

    Room<CustomerAgent*> room_;
    BarberAgent& barber_;
};

class FactoryAgent final : public rt::Agent {
public:
    FactoryAgent(const Setup& s, DispatcherChoice& dispatchers, RoomAgent& room)
        : factory_(s), dispatchers_(dispatchers), room_(room) {
        subscribe<&FactoryAgent::on_start_message>();
        subscribe<&FactoryAgent::on_returned>();
        subscribe<&FactoryAgent::on_done>();
    }

private:
    void on_start_message(const Start&) {
        for (std::uint64_t i = 0; i < factory_.haircuts(); ++i) {
            CustomerAgent* customer = nullptr;
            environment().introduce_coop(dispatchers_.binder(unsigned(3 + i)), [&](rt::Coop& coop) {
                customer = &coop.make_agent<CustomerAgent>(i, *this);
            });
            rt::send<Enter>(room_, customer);
            factory_.made();
        }
    }

    void on_returned(const Returned& returned) {
        factory_.returned();
        rt::send<Enter>(room_, returned.customer);
    }

    void on_done(const CustomerDone& d) {
        const bool last = factory_.done(d.tally);
        // The customer is done (Savina's exit()): its coop goes.
        environment().deregister_coop(*d.coop);
        if (last) rt::send<ExitRoom>(room_, factory_.counts());
    }

    Factory factory_;
    DispatcherChoice& dispatchers_;
    RoomAgent& room_;
};

Result run(const Params& params) {
    const Setup s = setup(params);

    MeasuredRun<Counts> run(params);
    Result result;

    // As Savina's runIteration: the barber, the room and the factory are made inside the phase,
    // and the factory makes each customer.
    const Counts counts = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        FactoryAgent* factory = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            auto& barber = coop.make_agent_with_binder<BarberAgent>(dispatchers.binder(0), s, run.done());
            auto& room = coop.make_agent_with_binder<RoomAgent>(dispatchers.binder(1), s.seats, barber);
            barber.link(room);
            factory = &coop.make_agent_with_binder<FactoryAgent>(dispatchers.binder(2), s, dispatchers, room);
        });
        rt::send<Start>(*factory);
    });

    report(result, counts, s);
    return result;
}

void check(const Params& params) {
    const auto haircuts = std::uint64_t(params.integer("haircuts"));
    check_thread_per_agent("savina_barber", params, haircuts + 3, "haircuts=" + std::to_string(haircuts));
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
