// savina_chameneos: Savina's Chameneos. A mall pairs the meeting requests of creatures of three
// colours; the two creatures of a meeting both take the complement of their colours. Measures
// a hub agent serving many clients that keep asking again (a request, a forward, a change).
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "chameneos.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_chameneos {
namespace {

struct Setup {
    std::uint32_t creatures;
    std::uint64_t meetings;
    DispatcherChoice& dispatchers;
    rt::Completion<bool>& done;
};

class Creature;

// As Savina's mall, it creates the creatures when it starts.
class MallAgent final : public rt::Agent {
public:
    explicit MallAgent(const Setup& setup)
        : setup_(setup), mall_(setup.creatures, setup.meetings), all_(setup.creatures, nullptr) {
        subscribe<&MallAgent::on_meet>();
        subscribe<&MallAgent::on_count>();
    }
    // Read after the run: the last report sets the kernel's completion.
    const Mall& mall() const noexcept { return mall_; }

private:
    void on_start() override;
    void on_meet(const Meet& meet);

    void on_count(const Count& count) {
        if (mall_.report(count.id, count.meetings, count.colour, count.wrong_changes, count.handled))
            setup_.done.set(true);
    }

    const Setup& setup_;
    Mall mall_;
    // Written before the creatures' coop is registered, read by the creatures in their handlers.
    std::vector<Creature*> all_;
};

class Creature final : public rt::Agent {
public:
    Creature(std::uint32_t id, MallAgent& mall, const std::vector<Creature*>& all)
        : id_(id), creature_(id), mall_(mall), all_(all) {
        subscribe<&Creature::on_meet>();
        subscribe<&Creature::on_change>();
        subscribe<&Creature::on_exit>();
    }

private:
    // As Savina's creatures, each asks for its first meeting when it starts.
    void on_start() override { rt::send<Meet>(mall_, id_, creature_.colour()); }

    // The mall's forward of the request of the one it meets.
    void on_meet(const Meet& other) {
        ++handled_;
        const Colour was = creature_.colour();
        const Colour now = creature_.meet(other.colour);
        rt::send<Change>(*all_[other.id], now, was);
        rt::send<Meet>(mall_, id_, now);
    }

    void on_change(const Change& change) {
        ++handled_;
        creature_.change(change.colour, change.partner_was);
        rt::send<Meet>(mall_, id_, creature_.colour());
    }

    void on_exit(const Exit&) {
        ++handled_;
        rt::send<Count>(mall_, id_, creature_.meetings(), creature_.colour(), creature_.wrong_changes(), handled_);
    }

    const std::uint32_t id_;
    savina_chameneos::Creature creature_;
    MallAgent& mall_;
    const std::vector<Creature*>& all_;
    std::uint64_t handled_ = 0;
};

void MallAgent::on_start() {
    environment().introduce_coop(setup_.dispatchers.binder(), [&](rt::Coop& coop) {
        for (std::uint32_t i = 0; i < setup_.creatures; ++i)
            all_[i] = &coop.make_agent_with_binder<Creature>(setup_.dispatchers.binder(i + 1), i, *this, all_);
    });
}

void MallAgent::on_meet(const Meet& meet) {
    std::uint32_t partner = 0;
    switch (mall_.request(meet.id, partner)) {
    case Mall::Action::wait:
        break;
    case Mall::Action::pair:
        rt::send<Meet>(*all_[partner], meet.id, meet.colour);
        break;
    case Mall::Action::exit:
        rt::send<Exit>(*all_[meet.id]);
        break;
    }
}

Result run(const Params& params) {
    const auto creatures = std::uint32_t(params.integer("creatures"));
    const auto meetings = std::uint64_t(params.integer("meetings"));

    MeasuredRun<bool> run(params);
    const Setup setup{creatures, meetings, run.dispatchers(), run.done()};
    MallAgent* mall = nullptr;
    Result result;

    // The phase covers what Savina's clock does but the actor system's start and end: the mall
    // created, its creatures created and started, every meeting, every report.
    run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
                mall = &coop.make_agent_with_binder<MallAgent>(dispatchers.binder(0), setup);
            });
        },
        [&](bool) { report(result, mall->mall(), creatures, meetings); });
    return result;
}

Expectation expect(const Params& params) {
    const auto creatures = std::uint64_t(params.integer("creatures"));
    const auto meetings = std::uint64_t(params.integer("meetings"));
    return {expected(creatures, meetings), messages(creatures, meetings)};
}

const Registration registration(Kernel{
    .name = "savina_chameneos",
    .summary = "`creatures` creatures of three colours ask a mall to meet until it has made `meetings` "
               "meetings: a hub agent under many clients",
    .description =
        "Savina's benchmark 6, Chameneos (a concurrency benchmark). A mall agent and `creatures` "
        "creature agents, creature i of colour i % 3 (red, yellow, blue). Each creature sends the "
        "mall a meeting request when it starts; the mall keeps the first of a pair waiting and "
        "forwards the second to it; that creature takes the complement of the two colours (one "
        "colour: it stays; two: the third), tells the other in a change message, and both ask "
        "again. Once `meetings` meetings are made the mall answers each request with an exit, and "
        "each creature reports its count of meetings and its colour. 3*creatures + 4*meetings "
        "messages. The mall creates the creatures when it starts, as Savina's does. The phase "
        "covers creating and starting the mall and the creatures, every meeting and every report, "
        "ending when the mall has the last report. Differences from Savina: its clock also covers creating and shutting down the actor "
        "system (ours exists before the phase and stops after it); messages name creatures by "
        "index, not by a sender reference; each creature's report also carries its colour, the "
        "changes it found wrong and the messages it handled; the mall's sum of counts is checked, not only printed; "
        "Savina's numMailboxes and usePriorities settings, which its Akka version ignores, are "
        "not parameters.",
    .sources = {{"savina", "6. Chameneos (chameneos)"}},
    .verifies = "the mall made `meetings` meetings and each creature reported once, their counts "
                "summing to twice the meetings; each change follows the complement rule and the "
                "colours' counts keep their differences modulo 3",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = [](const Params& params) {
        const auto creatures = params.integer("creatures");
        check_thread_per_agent("savina_chameneos", params, std::uint64_t(creatures) + 1,
                               "creatures=" + std::to_string(creatures));
    },
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_chameneos
