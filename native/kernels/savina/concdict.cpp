// savina_concdict: Savina's Concurrent Dictionary (8, concdict). Workers each send a seeded
// series of reads and writes to one dictionary agent, one request outstanding at a time (the
// next goes when the reply comes): one mailbox under many clients in request-reply.
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "concdict.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_concdict {
namespace {

class Worker;
using Write = savina_concdict::Write<Worker*>;
using Read = savina_concdict::Read<Worker*>;

class DictionaryAgent final : public rt::Agent {
public:
    DictionaryAgent(const std::unordered_map<std::uint32_t, std::uint32_t>& initial, rt::Completion<Outcome>& done)
        : dictionary_(initial), done_(done) {
        subscribe<&DictionaryAgent::on_write>();
        subscribe<&DictionaryAgent::on_read>();
        subscribe<&DictionaryAgent::on_end>();
    }

private:
    void on_write(const Write& write);
    void on_read(const Read& read);
    void on_end(const End& end) { done_.set(dictionary_.end(end)); }

    Dictionary dictionary_;
    rt::Completion<Outcome>& done_;
};

class Master;

class Worker final : public rt::Agent {
public:
    Worker(const Sizes& sizes, std::uint32_t id, DictionaryAgent& dictionary, Master*& master)
        : client_(sizes, id), dictionary_(dictionary), master_(master) {
        subscribe<&Worker::on_do_work>();
        subscribe<&Worker::on_reply>();
    }

private:
    void on_do_work(const DoWork&) { step(); }
    void on_reply(const Reply&) {
        client_.replied();
        step();
    }

    void step();

    Client client_;
    DictionaryAgent& dictionary_;
    Master*& master_;
};

class Master final : public rt::Agent {
public:
    Master(std::vector<Worker*>& workers, DictionaryAgent& dictionary)
        : workers_(workers), dictionary_(dictionary), ends_(workers.size()) {
        subscribe<&Master::on_end_work>();
    }

private:
    // Savina's master starts its workers in onPostStart: one DoWork each.
    void on_start() override {
        for (Worker* worker : workers_) rt::send<DoWork>(*worker);
    }

    void on_end_work(const EndWork& end) {
        if (ends_.ended(end)) rt::send<End>(dictionary_, ends_.end());
    }

    std::vector<Worker*>& workers_;
    DictionaryAgent& dictionary_;
    Ends ends_;
};

void DictionaryAgent::on_write(const Write& write) {
    rt::send<Reply>(*write.sender, dictionary_.write(write.key, write.value));
}

void DictionaryAgent::on_read(const Read& read) { rt::send<Reply>(*read.sender, dictionary_.read(read.key)); }

void Worker::step() {
    Operation op{};
    if (!client_.next(op)) {
        rt::send<EndWork>(*master_, client_.end());
        return;
    }
    if (op.write) rt::send<Write>(dictionary_, this, op.key, op.value);
    else rt::send<Read>(dictionary_, this, op.key);
}

Result run(const Params& params) {
    const Sizes sizes(params);
    // Filled before the phase; the dictionary copies it under the clock, as Savina's.
    const std::unordered_map<std::uint32_t, std::uint32_t> initial = initial_map(sizes);

    MeasuredRun<Outcome> run(params);
    std::vector<Worker*> workers;
    Master* master = nullptr;

    Result result;
    const Outcome outcome = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            auto& dictionary = coop.make_agent_with_binder<DictionaryAgent>(dispatchers.binder(0), initial, run.done());
            for (std::uint32_t i = 0; i < sizes.workers; ++i)
                workers.push_back(&coop.make_agent_with_binder<Worker>(dispatchers.binder(i + 1), sizes, i, dictionary, master));
            // Last in the coop: every worker's start is queued before the master's sends DoWork.
            master = &coop.make_agent_with_binder<Master>(dispatchers.binder(sizes.workers + 1), workers, dictionary);
        });
    });

    report(result, outcome, sizes);
    return result;
}

void check(const Params& params) {
    check_keys("savina_concdict", params);
    const auto workers = params.integer("workers");
    check_thread_per_agent("savina_concdict", params, std::uint64_t(workers) + 2,
                           "workers=" + std::to_string(workers));
}

const Registration registration(Kernel{
    .name = "savina_concdict",
    .summary = "`workers` workers x `messages_per_worker` requests (reads and writes) to one "
               "dictionary agent, one outstanding each",
    .description =
        "Savina's benchmark 8, Concurrent Dictionary (concdict). A master starts `workers` "
        "workers; each sends `messages_per_worker` requests to one dictionary agent, the next "
        "when the reply to the last comes, `write_percent` percent of them writes (key, value), "
        "the rest reads of a key, then tells the master it is done, and the master, once all "
        "are, tells the dictionary to end. The dictionary starts as {k: k} for k < keys. "
        "The phase covers the agents' creation (the dictionary copying the initial map, as "
        "Savina's constructor does; the map itself is filled before, as Savina fills it while "
        "parsing its arguments), every message, and the dictionary's digest of its final "
        "contents, ending when the dictionary has handled the end. Differences from Savina: "
        "each worker's operations come from its own SplitMix64 stream seeded from `seed` and "
        "its index (Savina: java.util.Random(id + messages + write percent)); worker i writes "
        "only keys k with k % workers == i, so no two workers write one key and the final "
        "contents do not depend on the interleaving (Savina's writes go to any key, and its "
        "final contents depend on the schedule); keys and values are 32-bit unsigned, in a "
        "std::unordered_map (Savina: a java.util.HashMap of boxed Integers); the "
        "master and workers are made in one coop with the dictionary (Savina's master makes "
        "the others in its onPostStart); the phase does not cover making the runtime nor the "
        "agents' ends and destruction (Savina's clock runs until its actor system has terminated).",
    .sources = {{"savina", "8. Concurrent Dictionary (concdict)"}},
    .verifies = "the counts of reads, writes and replies, and the dictionary's final size and "
                "contents (a digest), equal a sequential replay of the seeded operations",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_concdict
