// caf_savina_logmap: savina_logmap on CAF 0.17. A master asks `series` series workers for `terms`
// terms each; a worker gets each term from its rate computer by request and reply, and while it
// waits for the reply it becomes a behavior that skips every other message (CAF's selective
// receive: they stay in its mailbox until it unbecomes).
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/logmap.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_logmap {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Start&) {
    return f(caf::meta::type_name("Start"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NextTerm&) {
    return f(caf::meta::type_name("NextTerm"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, GetTerm&) {
    return f(caf::meta::type_name("GetTerm"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Compute<caf::actor>& x) {
    return f(caf::meta::type_name("Compute"), x.sender, x.term);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TermResult& x) {
    return f(caf::meta::type_name("TermResult"), x.term);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SeriesDone& x) {
    return f(caf::meta::type_name("SeriesDone"), x.id, x.computed, x.hash, x.last);
}

}  // namespace labctl::kernels::savina_logmap

namespace labctl::kernels::caf_savina_logmap {
namespace {

using savina_logmap::Answer;
using savina_logmap::GetTerm;
using savina_logmap::NextTerm;
using savina_logmap::SeriesDone;
using savina_logmap::Setup;
using savina_logmap::Start;
using savina_logmap::TermResult;
using Compute = savina_logmap::Compute<caf::actor>;

class RateComputer final : public caf::event_based_actor {
public:
    RateComputer(caf::actor_config& config, caf_support::CafRun& run, double rate)
        : caf::event_based_actor(config), rate_(rate) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const Compute& compute) {
            send(compute.sender, TermResult{savina_logmap::next_term(compute.term, rate_)});
        }};
    }

private:
    const double rate_;
};

class SeriesWorker final : public caf::event_based_actor {
public:
    SeriesWorker(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t id, caf::actor master,
                 caf::actor computer, double start_term)
        : caf::event_based_actor(config), id_(id), master_(std::move(master)), computer_(std::move(computer)),
          series_(start_term) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        // Savina's become variant: on NextTerm, ask the computer and become a behavior that takes
        // only the reply, over the one kept beneath it; every other message is skipped, left in
        // the mailbox in its order, and handled after the reply unbecomes (Akka's stash and
        // unstashAll). Made once: a behavior is a handle, so each become shares it.
        waiting_ = caf::behavior{
            [this](const TermResult& result) {
                series_.computed(result.term);
                unbecome();
            },
            [](const NextTerm&) { return caf::skip; },
            [](const GetTerm&) { return caf::skip; },
        };
        return {
            [this](const NextTerm&) {
                send(computer_, Compute{caf::actor(this), series_.term()});
                become(caf::keep_behavior, waiting_);
            },
            [this](const GetTerm&) { send(master_, series_.done(id_)); },
        };
    }

    // The handles to the master and computer, and the waiting behavior (which captures this),
    // let go, or none of them is ever freed.
    void on_exit() override {
        master_ = nullptr;
        computer_ = nullptr;
        waiting_ = caf::behavior{};
    }

private:
    const std::uint32_t id_;
    caf::actor master_;
    caf::actor computer_;
    savina_logmap::Series series_;
    caf::behavior waiting_;
};

class Master final : public caf::event_based_actor {
public:
    Master(caf::actor_config& config, caf_support::CafRun& run, const Setup& setup, rt::Completion<Answer>& done)
        : caf::event_based_actor(config), run_(run), setup_(setup), tally_(setup.series), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        // As Savina's master, it spawns the rate computers and the series workers, linked to it,
        // so that they end when the run's stop ends it.
        workers_.reserve(setup_.series);
        for (std::uint32_t i = 0; i < setup_.series; ++i) {
            const caf::actor computer = spawn<RateComputer, caf::linked>(
                std::ref(run_), savina_logmap::rate_of(setup_.start_rate, setup_.increment, i));
            workers_.push_back(spawn<SeriesWorker, caf::linked>(std::ref(run_), i, caf::actor(this), computer,
                                                   savina_logmap::start_of(setup_.increment, i)));
        }
        return {
            [this](const Start&) {
                for (std::uint64_t t = 0; t < setup_.terms; ++t)
                    for (const caf::actor& worker : workers_) send(worker, NextTerm{});
                for (const caf::actor& worker : workers_) send(worker, GetTerm{});
            },
            [this](const SeriesDone& done) {
                if (!tally_.add(done)) return;
                done_.set(tally_.answer());
                // No Stop messages (the run's stop ends every actor), but the workers hold a
                // handle to this master: let go of theirs, so that each can be freed.
                workers_.clear();
            },
        };
    }

    void on_exit() override { workers_.clear(); }

private:
    caf_support::CafRun& run_;
    const Setup setup_;
    savina_logmap::Tally tally_;
    rt::Completion<Answer>& done_;
    std::vector<caf::actor> workers_;
};

Result run(const Params& params) {
    const Setup s = savina_logmap::setup(params);

    rt::Completion<Answer> done;
    caf_support::CafRun caf(params, done);

    // As Savina's runIteration: the actors are spawned inside the phase (the actor system exists
    // before it), until the master has every series' report.
    caf_support::CafPhase phase(caf);
    const caf::actor master = caf.system().spawn<Master>(std::ref(caf), std::cref(s), std::ref(done));
    caf.keep<Master>(master);
    caf::anon_send(master, Start{});
    const Answer answer = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    caf.stop();

    savina_logmap::report(result, answer, s);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_logmap",
    .summary = "savina_logmap on CAF 0.17: `series` workers each get `terms` logistic-map terms from a "
               "rate computer by request and reply, skipping other messages while they wait",
    .description =
        "As savina_logmap (Savina's 14, Logistic Map), on CAF 0.17: the kernel spawns the master, "
        "which spawns `series` rate computers and series workers and, on Start, sends each worker "
        "`terms` NextTerm requests and a GetTerm. On NextTerm a worker sends its term to its rate "
        "computer (Compute, with its own handle, as Savina's ComputeMessage carries its sender) "
        "and becomes, over the behavior kept beneath, one that takes only the reply (TermResult) "
        "and skips NextTerm and GetTerm, which stay in its mailbox in their order; on the reply it "
        "unbecomes, and CAF hands it the skipped messages again. That is Savina's become variant "
        "(LogisticMapAkkaBecomeActorBenchmark: context.become, stash, unstashAll) in CAF's idiom; "
        "ours follows its manual-stash variant. The phase runs from spawning the master to its "
        "having every series' report (the actor system is started before it). Differences from "
        "Savina as savina_logmap's, and: a skipped message is looked at again after every message "
        "the worker handles (CAF 0.17's mailbox puts its cache of skipped messages back in front "
        "after each one, as Akka's unstashAll puts the stash back), so a worker flooded with n "
        "NextTerms looks at about n*n/2 of them in all where ours holds each once (callgrind, one "
        "thread, 2 series: 39M, 147M and 569M instructions at 250, 500 and 1,000 terms; ours "
        "0.16M, 0.31M and 0.62M); the master "
        "spawns the actors in its make_behavior (Savina's in its constructor).",
    .sources = {{"savina", "14. Logistic Map (logmap)"}},
    .verifies = "every series computed `terms` terms, each bit for bit as a sequential "
                "computation (a hash of them all) and the sum of the last terms",
    .params = schema(savina_logmap::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = [](const Params& params) { savina_logmap::check_series("caf_savina_logmap", params); },
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_logmap
