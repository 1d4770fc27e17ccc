// caf_savina_chameneos: savina_chameneos on CAF 0.17. A mall pairs the meeting requests of
// creatures of three colours; the two creatures of a meeting both take the complement of their
// colours. A hub actor serving many clients that keep asking again.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/chameneos.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_chameneos {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Meet& x) {
    return f(caf::meta::type_name("Meet"), x.id, x.colour);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Change& x) {
    return f(caf::meta::type_name("Change"), x.colour, x.partner_was);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Exit&) {
    return f(caf::meta::type_name("Exit"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Count& x) {
    return f(caf::meta::type_name("Count"), x.id, x.meetings, x.colour, x.wrong_changes, x.handled);
}

}  // namespace labctl::kernels::savina_chameneos

namespace labctl::kernels::caf_savina_chameneos {
namespace {

using savina_chameneos::Meet;
using savina_chameneos::Change;
using savina_chameneos::Exit;
using savina_chameneos::Count;
using savina_chameneos::Colour;
using savina_chameneos::Mall;

class Creature final : public caf::event_based_actor {
public:
    Creature(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t id, caf::actor mall,
             const std::vector<caf::actor>& all)
        : caf::event_based_actor(config), id_(id), creature_(id), mall_(std::move(mall)), all_(all) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        // As Savina's creatures, each asks for its first meeting when it starts.
        send(mall_, Meet{id_, creature_.colour()});
        return {
            [this](const Meet& other) { on_meet(other); },
            [this](const Change& change) { on_change(change); },
            [this](const Exit&) { on_exit_message(); },
        };
    }

    // The mall and its creatures hold handles to each other: let go, or none is ever freed.
    void on_exit() override { mall_ = nullptr; }

private:
    void on_meet(const Meet& other) {
        ++handled_;
        const Colour was = creature_.colour();
        const Colour now = creature_.meet(other.colour);
        send(all_[other.id], Change{now, was});
        send(mall_, Meet{id_, now});
    }

    void on_change(const Change& change) {
        ++handled_;
        creature_.change(change.colour, change.partner_was);
        send(mall_, Meet{id_, creature_.colour()});
    }

    void on_exit_message() {
        ++handled_;
        send(mall_, Count{id_, creature_.meetings(), creature_.colour(), creature_.wrong_changes(), handled_});
        quit();
    }

    const std::uint32_t id_;
    savina_chameneos::Creature creature_;
    caf::actor mall_;
    // The mall's handles, all written before it handles a message: read only after one from it.
    const std::vector<caf::actor>& all_;
    std::uint64_t handled_ = 0;
};

// As Savina's mall, it spawns the creatures when it starts.
class MallActor final : public caf::event_based_actor {
public:
    MallActor(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t creatures,
              std::uint64_t meetings, rt::Completion<bool>& done)
        : caf::event_based_actor(config), run_(run), mall_(creatures, meetings), creatures_(creatures),
          done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        // The vector never grows after this: the creatures keep a reference to it.
        all_.reserve(creatures_);
        for (std::uint32_t i = 0; i < creatures_; ++i)
            all_.push_back(spawn<Creature>(std::ref(run_), i, caf::actor(this), std::cref(all_)));
        return {
            [this](const Meet& meet) { on_meet(meet); },
            [this](const Count& count) { on_count(count); },
        };
    }

    void on_exit() override { all_.clear(); }

    // Read after the run: the last report sets the kernel's completion.
    const Mall& mall() const noexcept { return mall_; }

private:
    void on_meet(const Meet& meet) {
        std::uint32_t partner = 0;
        switch (mall_.request(meet.id, partner)) {
        case Mall::Action::wait:
            break;
        case Mall::Action::pair:
            send(all_[partner], meet);
            break;
        case Mall::Action::exit:
            send(all_[meet.id], Exit{});
            break;
        }
    }

    void on_count(const Count& count) {
        if (mall_.report(count.id, count.meetings, count.colour, count.wrong_changes, count.handled)) done_.set(true);
    }

    caf_support::CafRun& run_;
    Mall mall_;
    const std::uint32_t creatures_;
    rt::Completion<bool>& done_;
    std::vector<caf::actor> all_;
};

Result run(const Params& params) {
    const auto creatures = std::uint32_t(params.integer("creatures"));
    const auto meetings = std::uint64_t(params.integer("meetings"));

    rt::Completion<bool> done;
    caf_support::CafRun caf(params, done);

    // The phase covers what Savina's clock does but the actor system's start and end: the mall
    // spawned, its creatures spawned, every meeting, every report.
    caf_support::CafPhase phase(caf);
    const caf::actor handle = caf.system().spawn<MallActor>(std::ref(caf), creatures, meetings, std::ref(done));
    MallActor& mall = caf.keep<MallActor>(handle);
    caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());

    savina_chameneos::report(result, mall.mall(), creatures, meetings);
    caf.stop();
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_chameneos",
    .summary = "savina_chameneos on CAF 0.17: `creatures` creatures of three colours ask a mall to meet "
               "until it has made `meetings` meetings",
    .description =
        "As savina_chameneos (Savina's benchmark 6, Chameneos), on CAF 0.17: the mall actor, "
        "spawned by the kernel, spawns `creatures` creature actors when it starts (creature i of "
        "colour i % 3); each asks the mall to meet when it starts, the mall forwards the second "
        "request of a pair to the creature that waited, which takes the complement of the two "
        "colours, tells the other in a change message, and both ask again; once `meetings` "
        "meetings are made each request is answered with an exit, and each creature reports and "
        "quits. 3*creatures + 4*meetings messages. The phase runs from spawning the mall to its "
        "last report; the actor system exists before it. Differences from Savina as ours.",
    .sources = {{"savina", "6. Chameneos (chameneos)"}},
    .verifies = "the mall made `meetings` meetings and each creature reported once, their counts "
                "summing to twice the meetings; each change follows the complement rule and the "
                "colours' counts keep their differences modulo 3",
    .params = schema(savina_chameneos::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_chameneos
