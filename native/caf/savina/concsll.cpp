// caf_savina_concsll: savina_concsll on CAF 0.17. Workers each send a seeded series of inserts,
// membership tests and size queries to one actor holding a sorted linked list, one request
// outstanding at a time: one mailbox under many clients, each request a list walk. The master is
// served.hpp's.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/concsll.hpp"
#include "../run.hpp"
#include "served.hpp"

namespace labctl::kernels::savina_concsll {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Reply& x) {
    return f(caf::meta::type_name("Reply"), x.value);
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

using savina_concsll::End;
using savina_concsll::Kind;
using savina_concsll::ListState;
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

// A worker's requests, for served.hpp's worker.
struct Protocol {
    using Sizes = savina_concsll::Sizes;
    using Client = savina_concsll::Client;
    using Operation = savina_concsll::Operation;
    using Reply = savina_concsll::Reply;
    static void ask(caf::event_based_actor& self, const caf::actor& list, const Operation& op) {
        switch (op.kind) {
        case Kind::size: self.send(list, Size{caf::actor(&self)}); break;
        case Kind::write: self.send(list, Write{caf::actor(&self), op.value}); break;
        case Kind::contains: self.send(list, Contains{caf::actor(&self), op.value}); break;
        }
    }
};

Result run(const Params& params) {
    const Sizes sizes(params);
    Result result;
    const Outcome outcome = caf_support::run_served<ListActor, Protocol, Outcome>(params, result, sizes);
    savina_concsll::report(result, outcome, sizes);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_concsll",
    .summary = "savina_concsll on CAF 0.17: `workers` workers x `messages_per_worker` requests "
               "(inserts, membership tests, sizes) to one actor holding a sorted linked list",
    .description =
        "As savina_concsll (Savina's 9, Concurrent Sorted Linked List), on CAF 0.17: the kernel "
        "spawns the list actor and the master, which spawns `workers` workers and sends each a "
        "DoWork; each worker sends `messages_per_worker` requests (the same seeded inserts, "
        "membership tests and size queries as ours, on the same list), each carrying its handle, "
        "to the list, the next when the reply to the last comes, then tells the master it is "
        "done, and the master, once all are, tells the list to end. The phase runs from spawning "
        "the master until the list has handled the end and walked itself for the answer (the "
        "actor system is started before it). Differences from Savina as savina_concsll's, and: "
        "the master spawns the workers in its make_behavior, linked to it (Savina's master makes "
        "the list too, in its constructor); no one exits by itself (the run's stop ends the list, "
        "the master and, by the links, the workers).",
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
