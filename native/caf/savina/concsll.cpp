// caf_savina_concsll: savina_concsll on CAF 0.17. Workers each send a seeded series of inserts,
// membership tests and size queries to one actor holding a sorted linked list, one request
// outstanding at a time: one mailbox under many clients, each request a list walk.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/concsll.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_concsll {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DoWork&) {
    return f(caf::meta::type_name("DoWork"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Reply& x) {
    return f(caf::meta::type_name("Reply"), x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, EndWork& x) {
    return f(caf::meta::type_name("EndWork"), x.replies);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, End& x) {
    return f(caf::meta::type_name("End"), x.replies);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Write<caf::actor>& x) {
    return f(caf::meta::type_name("Write"), x.sender, x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Contains<caf::actor>& x) {
    return f(caf::meta::type_name("Contains"), x.sender, x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Size<caf::actor>& x) {
    return f(caf::meta::type_name("Size"), x.sender);
}

}  // namespace labctl::kernels::savina_concsll

namespace labctl::kernels::caf_savina_concsll {
namespace {

using savina_concsll::Client;
using savina_concsll::DoWork;
using savina_concsll::End;
using savina_concsll::Ends;
using savina_concsll::EndWork;
using savina_concsll::Kind;
using savina_concsll::ListState;
using savina_concsll::Operation;
using savina_concsll::Outcome;
using savina_concsll::Reply;
using savina_concsll::Sizes;
using Write = savina_concsll::Write<caf::actor>;
using Contains = savina_concsll::Contains<caf::actor>;
using Size = savina_concsll::Size<caf::actor>;

class ListActor final : public caf::event_based_actor {
public:
    ListActor(caf::actor_config& config, caf_support::CafRun& run, rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Write& write) { send(write.sender, list_.write(write.value)); },
            [this](const Contains& contains) { send(contains.sender, list_.contains(contains.value)); },
            [this](const Size& size) { send(size.sender, list_.size()); },
            [this](const End& end) { done_.set(list_.end(end)); },
        };
    }

private:
    ListState list_;
    rt::Completion<Outcome>& done_;
};

class Worker final : public caf::event_based_actor {
public:
    Worker(caf::actor_config& config, caf_support::CafRun& run, const Sizes& sizes, std::uint32_t id,
           caf::actor list, caf::actor master)
        : caf::event_based_actor(config), client_(sizes, id), list_(std::move(list)), master_(std::move(master)) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const DoWork&) { step(); },
            [this](const Reply&) {
                client_.replied();
                step();
            },
        };
    }

    // The master and its workers hold handles to each other: let go, or none is ever freed.
    void on_exit() override {
        list_ = nullptr;
        master_ = nullptr;
    }

private:
    void step() {
        Operation op{};
        if (!client_.next(op)) {
            send(master_, client_.end());
            return;
        }
        switch (op.kind) {
        case Kind::size: send(list_, Size{caf::actor(this)}); break;
        case Kind::write: send(list_, Write{caf::actor(this), op.value}); break;
        case Kind::contains: send(list_, Contains{caf::actor(this), op.value}); break;
        }
    }

    Client client_;
    caf::actor list_;
    caf::actor master_;
};

// As Savina's master: it spawns the list and the workers, linked to it so that they end when
// the run's stop ends it, and starts each worker with a DoWork.
class Master final : public caf::event_based_actor {
public:
    Master(caf::actor_config& config, caf_support::CafRun& run, const Sizes& sizes,
           rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), run_(run), sizes_(sizes), done_(done), ends_(sizes.workers) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        server_ = spawn<ListActor, caf::linked>(std::ref(run_), std::ref(done_));
        workers_.reserve(sizes_.workers);
        for (std::uint32_t i = 0; i < sizes_.workers; ++i)
            workers_.push_back(spawn<Worker, caf::linked>(std::ref(run_), std::cref(sizes_), i, server_, caf::actor(this)));
        for (const caf::actor& worker : workers_) send(worker, DoWork{});
        return {[this](const EndWork& end) {
            if (ends_.ended(end)) send(server_, ends_.end());
        }};
    }

    void on_exit() override {
        server_ = nullptr;
        workers_.clear();
    }

private:
    caf_support::CafRun& run_;
    const Sizes& sizes_;
    rt::Completion<Outcome>& done_;
    Ends ends_;
    caf::actor server_;
    std::vector<caf::actor> workers_;
};

Result run(const Params& params) {
    const Sizes sizes(params);
    rt::Completion<Outcome> done;
    caf_support::CafRun caf(params, done);

    // As savina_concsll's phase: the actors spawned, every message, and the list's final summary,
    // until it has handled the end (the actor system is started before it).
    caf_support::CafPhase phase(caf);
    const caf::actor master = caf.system().spawn<Master>(std::ref(caf), std::cref(sizes), std::ref(done));
    caf.keep<Master>(master);
    const Outcome outcome = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    caf.stop();

    savina_concsll::report(result, outcome, sizes);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_concsll",
    .summary = "savina_concsll on CAF 0.17: `workers` workers x `messages_per_worker` requests "
               "(inserts, membership tests, sizes) to one actor holding a sorted linked list",
    .description =
        "As savina_concsll (Savina's 9, Concurrent Sorted Linked List), on CAF 0.17: the kernel "
        "spawns the master, which spawns the list actor and `workers` workers and sends each a "
        "DoWork; each worker sends `messages_per_worker` requests (the same seeded inserts, "
        "membership tests and size queries as ours, on the same list), each carrying its handle, "
        "to the list, the next when the reply to the last comes, then tells the master it is "
        "done, and the master, once all are, tells the list to end. The phase runs from spawning "
        "the master until the list has handled the end and walked itself for the answer (the "
        "actor system is started before it). Differences from Savina as savina_concsll's, and: "
        "the master spawns the others in its make_behavior, linked to it (Savina's in its "
        "constructor); no one exits by itself (the run's stop ends the master and, by the links, "
        "the others).",
    .sources = {{"savina", "9. Concurrent Sorted Linked List (concsll)"}},
    .verifies = "the counts of inserts, membership tests, size queries and replies, and the final "
                "list sorted and equal (length and digest) to a sequential replay's sorted values",
    .params = schema(savina_concsll::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = [](const Params& params) { savina_concsll::check_percents("caf_savina_concsll", params); },
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_concsll
