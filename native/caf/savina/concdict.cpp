// caf_savina_concdict: savina_concdict on CAF 0.17. Workers each send a seeded series of reads
// and writes to one dictionary actor, one request outstanding at a time (the next goes when the
// reply comes): one mailbox under many clients in request-reply. The master is served.hpp's.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/concdict.hpp"
#include "../run.hpp"
#include "served.hpp"

namespace labctl::kernels::savina_concdict {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Reply& x) {
    return f(caf::meta::type_name("Reply"), x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Write<caf::actor>& x) {
    return f(caf::meta::type_name("Write"), x.sender, x.key, x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Read<caf::actor>& x) {
    return f(caf::meta::type_name("Read"), x.sender, x.key);
}

}  // namespace labctl::kernels::savina_concdict

namespace labctl::kernels::caf_savina_concdict {
namespace {

using savina_concdict::Dictionary;
using savina_concdict::End;
using savina_concdict::Outcome;
using savina_concdict::Reply;
using savina_concdict::Sizes;
using Write = savina_concdict::Write<caf::actor>;
using Read = savina_concdict::Read<caf::actor>;

class DictionaryActor final : public caf::event_based_actor {
public:
    DictionaryActor(caf::actor_config& config, caf_support::CafRun& run,
                    const std::unordered_map<std::uint32_t, std::uint32_t>& initial, rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), dictionary_(initial), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Write& write) { send(write.sender, dictionary_.write(write.key, write.value)); },
            [this](const Read& read) { send(read.sender, dictionary_.read(read.key)); },
            [this](const End& end) { done_.set(dictionary_.end(end)); },
        };
    }

private:
    Dictionary dictionary_;
    rt::Completion<Outcome>& done_;
};

// A worker's requests, for served.hpp's worker.
struct Protocol {
    using Sizes = savina_concdict::Sizes;
    using Client = savina_concdict::Client;
    using Operation = savina_concdict::Operation;
    using Reply = savina_concdict::Reply;
    static void ask(caf::event_based_actor& self, const caf::actor& dictionary, const Operation& op) {
        if (op.write) self.send(dictionary, Write{caf::actor(&self), op.key, op.value});
        else self.send(dictionary, Read{caf::actor(&self), op.key});
    }
};

Result run(const Params& params) {
    const Sizes sizes(params);
    // Filled before the phase; the dictionary copies it under the clock, as Savina's.
    const std::unordered_map<std::uint32_t, std::uint32_t> initial = savina_concdict::initial_map(sizes);
    Result result;
    const Outcome outcome = caf_support::run_served<DictionaryActor, Protocol, Outcome>(params, result, sizes,
                                                                                      std::cref(initial));
    savina_concdict::report(result, outcome, sizes);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_concdict",
    .summary = "savina_concdict on CAF 0.17: `workers` workers x `messages_per_worker` requests (reads "
               "and writes) to one dictionary actor, one outstanding each",
    .description =
        "As savina_concdict (Savina's 8, Concurrent Dictionary), on CAF 0.17: the kernel spawns "
        "the dictionary and the master, which spawns `workers` workers and sends each a DoWork; "
        "each worker sends `messages_per_worker` requests (the same seeded reads and writes as "
        "ours), each carrying its handle, to the dictionary, the next when the reply to the last "
        "comes, then tells the master it is done, and the master, once all are, tells the "
        "dictionary to end. The dictionary starts as {k: k} for k < keys (filled before the "
        "phase, copied by the dictionary inside it, as ours). The phase runs from spawning the "
        "master until the dictionary has handled the end and digested its contents (the actor "
        "system is started before it). Differences from Savina as savina_concdict's, and: the "
        "master spawns the workers in its make_behavior, linked to it (Savina's master makes the "
        "dictionary too, in its constructor); no one exits by itself (the run's stop ends the "
        "dictionary, the master and, by the links, the workers).",
    .sources = {{"savina", "8. Concurrent Dictionary (concdict)"}},
    .verifies = "the counts of reads, writes and replies, and the dictionary's final size and "
                "contents (a digest), equal a sequential replay of the seeded operations",
    .params = schema(savina_concdict::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = {},
    .check = [](const Params& params) { savina_concdict::check_keys("caf_savina_concdict", params); },
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_savina_concdict
