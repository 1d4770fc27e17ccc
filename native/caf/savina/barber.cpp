// caf_savina_barber: savina_barber on CAF 0.17. A factory spawns a customer actor per haircut and
// sends it into a waiting room; a full room turns the customer away and it asks the factory to
// send it again; the room wakes the barber or queues the customer; the barber cuts hair (a spell
// of work) and asks the room for the next.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/barber.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_barber {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Start&) {
    return f(caf::meta::type_name("Start"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Full&) {
    return f(caf::meta::type_name("Full"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Wait&) {
    return f(caf::meta::type_name("Wait"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Next&) {
    return f(caf::meta::type_name("Next"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StartCut&) {
    return f(caf::meta::type_name("StartCut"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DoneCut&) {
    return f(caf::meta::type_name("DoneCut"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Tally& x) {
    return f(caf::meta::type_name("Tally"), x.id, x.starts, x.dones, x.fulls, x.waits);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Work& x) {
    return f(caf::meta::type_name("Work"), x.units, x.sum);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Counts& x) {
    return f(caf::meta::type_name("Counts"), x.customers, x.returned, x.served, x.served_wrong, x.repeated,
             x.factory_work, x.enters, x.full, x.wakes, x.waits, x.nexts, x.to_barber, x.haircuts, x.barber_work,
             x.customer_starts, x.customer_dones, x.customer_fulls, x.customer_waits);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ExitRoom& x) {
    return f(caf::meta::type_name("ExitRoom"), x.counts);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ExitBarber& x) {
    return f(caf::meta::type_name("ExitBarber"), x.counts);
}

}  // namespace labctl::kernels::savina_barber

namespace labctl::kernels::caf_savina_barber {

// The messages that name an actor, as Savina's: Enter(customer, room), to the room and from it
// to the barber, and Returned(customer).
struct Enter {
    caf::actor customer;
    caf::actor room;
};
struct Returned {
    caf::actor customer;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Enter& x) {
    return f(caf::meta::type_name("Enter"), x.customer, x.room);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Returned& x) {
    return f(caf::meta::type_name("Returned"), x.customer);
}

namespace {

using savina_barber::Chair;
using savina_barber::Counts;
using savina_barber::DoneCut;
using savina_barber::ExitBarber;
using savina_barber::ExitRoom;
using savina_barber::Full;
using savina_barber::Next;
using savina_barber::Setup;
using savina_barber::Start;
using savina_barber::StartCut;
using savina_barber::Tally;
using savina_barber::Visit;
using savina_barber::Wait;

class CustomerActor final : public caf::event_based_actor {
public:
    CustomerActor(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t id, caf::actor factory)
        : caf::event_based_actor(config), visit_(id), factory_(std::move(factory)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Full&) {
                visit_.full();
                send(factory_, Returned{caf::actor(this)});
            },
            [this](const Wait&) { visit_.wait(); },
            [this](const StartCut&) { visit_.start_cut(); },
            [this](const DoneCut&) {
                send(factory_, visit_.done_cut());
                quit();  // as Savina's customer, once served
            },
        };
    }

    void on_exit() override { factory_ = nullptr; }

private:
    Visit visit_;
    caf::actor factory_;
};

class BarberActor final : public caf::event_based_actor {
public:
    BarberActor(caf::actor_config& config, caf_support::CafRun& run, const Setup& setup, rt::Completion<Counts>& done)
        : caf::event_based_actor(config), chair_(setup), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Enter& enter) {
                send(enter.customer, StartCut{});
                chair_.cut();
                send(enter.customer, DoneCut{});
                send(enter.room, Next{});
            },
            [this](const ExitBarber& exit) {
                done_.set(chair_.counts(exit.counts));
                quit();
            },
        };
    }

private:
    Chair chair_;
    rt::Completion<Counts>& done_;
};

class RoomActor final : public caf::event_based_actor {
public:
    RoomActor(caf::actor_config& config, caf_support::CafRun& run, std::uint64_t seats, caf::actor barber)
        : caf::event_based_actor(config), room_(seats), barber_(std::move(barber)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Enter& enter) {
                switch (room_.enter(enter.customer)) {
                case Room::Seated::full:
                    send(enter.customer, Full{});
                    break;
                case Room::Seated::wake:
                    send(this, Next{});
                    break;
                case Room::Seated::wait:
                    send(enter.customer, Wait{});
                    break;
                }
            },
            [this](const Next&) {
                bool hand_over = false;
                if (std::optional<caf::actor> customer = room_.next(hand_over)) {
                    send(barber_, Enter{std::move(*customer), caf::actor(this)});
                    return;
                }
                if (hand_over) exit_barber();
            },
            [this](const ExitRoom& exit) {
                if (room_.exit(exit.counts)) exit_barber();
            },
        };
    }

    void on_exit() override { barber_ = nullptr; }

private:
    using Room = savina_barber::Room<caf::actor>;

    void exit_barber() {
        send(barber_, ExitBarber{room_.counts()});
        quit();  // as Savina's room, once it has passed Exit on
    }

    Room room_;
    caf::actor barber_;
};

class FactoryActor final : public caf::event_based_actor {
public:
    FactoryActor(caf::actor_config& config, caf_support::CafRun& run, const Setup& setup, caf::actor room)
        : caf::event_based_actor(config), run_(run), factory_(setup), room_(std::move(room)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Start&) {
                for (std::uint64_t i = 0; i < factory_.haircuts(); ++i) {
                    send(room_, Enter{spawn<CustomerActor>(std::ref(run_), i, caf::actor(this)), room_});
                    factory_.made();
                }
            },
            [this](const Returned& returned) {
                factory_.returned();
                send(room_, Enter{returned.customer, room_});
            },
            [this](const Tally& tally) {
                if (!factory_.done(tally)) return;
                send(room_, ExitRoom{factory_.counts()});
                quit();  // as Savina's factory, once every customer is served
            },
        };
    }

    void on_exit() override { room_ = nullptr; }

private:
    caf_support::CafRun& run_;
    savina_barber::Factory factory_;
    caf::actor room_;
};

Result run(const Params& params) {
    const Setup s = savina_barber::setup(params);

    rt::Completion<Counts> done;
    caf_support::CafRun caf(params, done);

    // As Savina's runIteration: the barber, the room and the factory spawned inside the phase (the
    // actor system exists before it), and the factory spawns each customer, until the barber's Exit.
    caf_support::CafPhase phase(caf);
    const caf::actor barber = caf.system().spawn<BarberActor>(std::ref(caf), std::cref(s), std::ref(done));
    const caf::actor room = caf.system().spawn<RoomActor>(std::ref(caf), s.seats, barber);
    const caf::actor factory = caf.system().spawn<FactoryActor>(std::ref(caf), std::cref(s), room);
    caf::anon_send(factory, Start{});
    const Counts counts = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    savina_barber::report(result, counts, s);
    caf.stop();
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_barber",
    .summary = "savina_barber on CAF 0.17: a factory spawns `haircuts` customer actors for a barber "
               "behind a waiting room of `seats` seats",
    .description =
        "As savina_barber (Savina's 12, Sleeping Barber), on CAF 0.17: the kernel spawns the "
        "barber, the waiting room and the factory and sends the factory Start; the factory spawns "
        "`haircuts` customer actors, sending each into the room (Enter) and working next % "
        "production_rate + 10 units after each; the room turns a customer away (Full) when its "
        "`seats` seats are taken, and the customer asks the factory to send it again (Returned); "
        "otherwise it seats it and wakes a sleeping barber (a Next to itself) or tells the "
        "customer to wait (Wait); on Next it sends the first waiting customer to the barber "
        "(Enter, with the room, as Savina's) or lets the barber sleep. The barber sends the "
        "customer StartCut, works next % haircut_rate + 10 units, sends DoneCut and Next to the "
        "room; the customer answers DoneCut with its Done to the factory and quits. After the last "
        "Done the factory sends the room Exit and quits; the room, once the barber sleeps, sends "
        "the barber Exit and quits; the barber's Exit ends the run and it quits. The factory's, "
        "the room's and the barber's decisions and counts are ours, in classes both share. The "
        "phase runs from spawning the barber to its Exit (the actor system is started before "
        "it). Differences from Savina as savina_barber's (the work, no Wait to a sleeping "
        "barber, Exit passed on once the barber sleeps, the customers' counts in their Done, ids "
        "as ordinals).",
    .sources = {{"savina", "12. Sleeping Barber (barber)"}},
    .verifies = "every customer was cut exactly once, attempts = haircuts + turned-away "
                "customers sent again, every message accounted for by kind, and the seeded work done",
    .params = schema(savina_barber::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {{.name = "attempts"}, {.name = "turned_away"}, {.name = "barber_wakes"}},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_barber
