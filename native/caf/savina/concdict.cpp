// caf_savina_concdict: savina_concdict on CAF 0.17. Workers each send a seeded series of reads
// and writes to one dictionary actor, one request outstanding at a time (the next goes when the
// reply comes): one mailbox under many clients in request-reply.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../kernels/framework/schema.hpp"
#include "../../kernels/savina/concdict.hpp"
#include "../run.hpp"

namespace labctl::kernels::savina_concdict {

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
    return f(caf::meta::type_name("Write"), x.sender, x.key, x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Read<caf::actor>& x) {
    return f(caf::meta::type_name("Read"), x.sender, x.key);
}

}  // namespace labctl::kernels::savina_concdict

namespace labctl::kernels::caf_savina_concdict {
namespace {

using savina_concdict::Client;
using savina_concdict::Dictionary;
using savina_concdict::DoWork;
using savina_concdict::End;
using savina_concdict::Ends;
using savina_concdict::EndWork;
using savina_concdict::Operation;
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

class Worker final : public caf::event_based_actor {
public:
    Worker(caf::actor_config& config, caf_support::CafRun& run, const Sizes& sizes, std::uint32_t id,
           caf::actor dictionary, caf::actor master)
        : caf::event_based_actor(config), client_(sizes, id), dictionary_(std::move(dictionary)),
          master_(std::move(master)) {
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
        dictionary_ = nullptr;
        master_ = nullptr;
    }

private:
    void step() {
        Operation op{};
        if (!client_.next(op)) send(master_, client_.end());
        else if (op.write) send(dictionary_, Write{caf::actor(this), op.key, op.value});
        else send(dictionary_, Read{caf::actor(this), op.key});
    }

    Client client_;
    caf::actor dictionary_;
    caf::actor master_;
};

// As Savina's master: it spawns the dictionary and the workers, linked to it so that they end when
// the run's stop ends it, and starts each worker with a DoWork.
class Master final : public caf::event_based_actor {
public:
    Master(caf::actor_config& config, caf_support::CafRun& run, const Sizes& sizes,
           const std::unordered_map<std::uint32_t, std::uint32_t>& initial, rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), run_(run), sizes_(sizes), initial_(initial), done_(done),
          ends_(sizes.workers) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        server_ = spawn<DictionaryActor, caf::linked>(std::ref(run_), std::cref(initial_), std::ref(done_));
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
    const std::unordered_map<std::uint32_t, std::uint32_t>& initial_;
    rt::Completion<Outcome>& done_;
    Ends ends_;
    caf::actor server_;
    std::vector<caf::actor> workers_;
};

Result run(const Params& params) {
    const Sizes sizes(params);
    // Filled before the phase; the dictionary copies it under the clock, as Savina's.
    const std::unordered_map<std::uint32_t, std::uint32_t> initial = savina_concdict::initial_map(sizes);
    rt::Completion<Outcome> done;
    caf_support::CafRun caf(params, done);

    // As savina_concdict's phase: the actors spawned, every message, and the dictionary's final summary,
    // until it has handled the end (the actor system is started before it).
    caf_support::CafPhase phase(caf);
    const caf::actor master = caf.system().spawn<Master>(std::ref(caf), std::cref(sizes), std::cref(initial), std::ref(done));
    caf.keep<Master>(master);
    const Outcome outcome = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());
    caf.stop();

    savina_concdict::report(result, outcome, sizes);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_savina_concdict",
    .summary = "savina_concdict on CAF 0.17: `workers` workers x `messages_per_worker` requests (reads "
               "and writes) to one dictionary actor, one outstanding each",
    .description =
        "As savina_concdict (Savina's 8, Concurrent Dictionary), on CAF 0.17: the kernel spawns "
        "the master, which spawns the dictionary and `workers` workers and sends each a DoWork; "
        "each worker sends `messages_per_worker` requests (the same seeded reads and writes as "
        "ours), each carrying its handle, to the dictionary, the next when the reply to the last "
        "comes, then tells the master it is done, and the master, once all are, tells the "
        "dictionary to end. The dictionary starts as {k: k} for k < keys (filled before the "
        "phase, copied by the dictionary inside it, as ours). The phase runs from spawning the "
        "master until the dictionary has handled the end and digested its contents (the actor "
        "system is started before it). Differences from Savina as savina_concdict's, and: the "
        "master spawns the others in its make_behavior, linked to it (Savina's in its "
        "constructor); no one exits by itself (the run's stop ends the master and, by the links, "
        "the others).",
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
