// savina_concdict: Savina's Concurrent Dictionary (8, concdict). Workers each send a seeded
// series of reads and writes to one dictionary agent, one request outstanding at a time (the
// next goes when the reply comes): one mailbox under many clients in request-reply.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_concdict {
namespace {

// SplitMix64: each worker's own stream, seeded from (seed, worker); tests/oracles.py replays it.
using Random = savina::SplitMix64;
using savina::mix64;

// One entry's share of the dictionary's digest (a sum over entries: the order does not count).
constexpr std::uint64_t entry_digest(std::uint32_t key, std::uint32_t value) {
    return mix64((std::uint64_t(key) << 32) | value);
}

struct Sizes {
    std::uint32_t workers;
    std::uint64_t messages_per_worker;
    std::uint32_t write_percent;
    std::uint32_t keys;
    std::uint64_t seed;

    explicit Sizes(const Params& params)
        : workers(std::uint32_t(params.integer("workers"))),
          messages_per_worker(std::uint64_t(params.integer("messages_per_worker"))),
          write_percent(std::uint32_t(params.integer("write_percent"))),
          keys(std::uint32_t(params.integer("keys"))), seed(std::uint64_t(params.integer("seed"))) {}
};

// A worker's next operation. Writes of worker i go only to keys k with k % workers == i, so no two
// workers write one key; each worker's requests reach the dictionary in its order (one at a time),
// so the final contents are the same whatever the interleaving. Reads go to any key.
struct Operation {
    bool write;
    std::uint32_t key;
    std::uint32_t value;
};

class Generator {
public:
    Generator(const Sizes& sizes, std::uint32_t worker)
        : random_(sizes.seed, worker), sizes_(sizes), worker_(worker),
          own_keys_((sizes.keys - worker + sizes.workers - 1) / sizes.workers) {}

    Operation next() {
        if (random_.next() % 100 < sizes_.write_percent) {
            const auto key = std::uint32_t(worker_ + sizes_.workers * (random_.next() % own_keys_));
            return {true, key, std::uint32_t(random_.next() >> 32)};
        }
        return {false, std::uint32_t(random_.next() % sizes_.keys), 0};
    }

private:
    Random random_;
    const Sizes& sizes_;
    std::uint32_t worker_;
    std::uint64_t own_keys_;
};

struct Outcome {
    std::uint64_t reads = 0;
    std::uint64_t writes = 0;
    std::uint64_t replies = 0;
    std::uint64_t size = 0;
    std::uint64_t digest = 0;
};

std::string describe(const Outcome& o) {
    return "reads=" + std::to_string(o.reads) + " writes=" + std::to_string(o.writes) +
           " replies=" + std::to_string(o.replies) + " size=" + std::to_string(o.size) +
           " digest=" + std::to_string(o.digest);
}

// The sequential replay: every worker's operations in turn, on the initial map {k: k}.
Outcome replay(const Sizes& sizes) {
    Outcome outcome;
    std::unordered_map<std::uint32_t, std::uint32_t> written;
    for (std::uint32_t w = 0; w < sizes.workers; ++w) {
        Generator generator(sizes, w);
        for (std::uint64_t m = 0; m < sizes.messages_per_worker; ++m) {
            const Operation op = generator.next();
            if (op.write) {
                written[op.key] = op.value;
                ++outcome.writes;
            } else {
                ++outcome.reads;
            }
        }
    }
    outcome.replies = outcome.reads + outcome.writes;
    outcome.size = sizes.keys;
    for (std::uint32_t k = 0; k < sizes.keys; ++k) outcome.digest += entry_digest(k, k);
    for (const auto& [key, value] : written) outcome.digest += entry_digest(key, value) - entry_digest(key, key);
    return outcome;
}

struct DoWork {};
struct Reply {
    std::uint32_t value;
};
struct EndWork {
    std::uint64_t replies;
};
struct End {
    std::uint64_t replies;
};

class Worker;

struct Write {
    Worker* sender;
    std::uint32_t key;
    std::uint32_t value;
};
struct Read {
    Worker* sender;
    std::uint32_t key;
};

class Dictionary final : public rt::Agent {
public:
    Dictionary(const std::unordered_map<std::uint32_t, std::uint32_t>& initial, rt::Completion<Outcome>& done)
        : data_(initial), done_(done) {
        subscribe<&Dictionary::on_write>();
        subscribe<&Dictionary::on_read>();
        subscribe<&Dictionary::on_end>();
    }

private:
    void on_write(const Write& write);
    void on_read(const Read& read);

    void on_end(const End& end) {
        outcome_.replies = end.replies;
        outcome_.size = data_.size();
        for (const auto& [key, value] : data_) outcome_.digest += entry_digest(key, value);
        done_.set(outcome_);
    }

    std::unordered_map<std::uint32_t, std::uint32_t> data_;
    rt::Completion<Outcome>& done_;
    Outcome outcome_;
};

class Master;

class Worker final : public rt::Agent {
public:
    Worker(const Sizes& sizes, std::uint32_t id, Dictionary& dictionary, Master*& master)
        : generator_(sizes, id), messages_(sizes.messages_per_worker), dictionary_(dictionary), master_(master) {
        subscribe<&Worker::on_do_work>();
        subscribe<&Worker::on_reply>();
    }

private:
    void on_do_work(const DoWork&) { step(); }
    void on_reply(const Reply&) {
        ++replies_;
        step();
    }

    void step();

    Generator generator_;
    const std::uint64_t messages_;
    std::uint64_t sent_ = 0;
    std::uint64_t replies_ = 0;
    Dictionary& dictionary_;
    Master*& master_;
};

class Master final : public rt::Agent {
public:
    Master(std::vector<Worker*>& workers, Dictionary& dictionary)
        : workers_(workers), dictionary_(dictionary) {
        subscribe<&Master::on_end_work>();
    }

private:
    // Savina's master starts its workers in onPostStart: one DoWork each.
    void on_start() override {
        for (Worker* worker : workers_) rt::send<DoWork>(*worker);
    }

    void on_end_work(const EndWork& end) {
        replies_ += end.replies;
        if (++ended_ == workers_.size()) rt::send<End>(dictionary_, replies_);
    }

    std::vector<Worker*>& workers_;
    Dictionary& dictionary_;
    std::uint64_t ended_ = 0;
    std::uint64_t replies_ = 0;
};

void Dictionary::on_write(const Write& write) {
    ++outcome_.writes;
    data_[write.key] = write.value;
    rt::send<Reply>(*write.sender, write.value);
}

void Dictionary::on_read(const Read& read) {
    ++outcome_.reads;
    const auto found = data_.find(read.key);
    rt::send<Reply>(*read.sender, found == data_.end() ? 0u : found->second);
}

void Worker::step() {
    if (sent_ == messages_) {
        rt::send<EndWork>(*master_, replies_);
        return;
    }
    ++sent_;
    const Operation op = generator_.next();
    if (op.write) rt::send<Write>(dictionary_, this, op.key, op.value);
    else rt::send<Read>(dictionary_, this, op.key);
}

// DoWork per worker, a request and a reply per operation, EndWork per worker, End.
std::uint64_t messages(const Sizes& sizes) {
    return 2 * std::uint64_t(sizes.workers) * (sizes.messages_per_worker + 1) + 1;
}

Result run(const Params& params) {
    const Sizes sizes(params);
    // Savina fills its initial map {k: k} while parsing its arguments, before its clock; its
    // dictionary copies it when made, under the clock. So here.
    std::unordered_map<std::uint32_t, std::uint32_t> initial;
    initial.reserve(sizes.keys);
    for (std::uint32_t k = 0; k < sizes.keys; ++k) initial.emplace(k, k);

    MeasuredRun<Outcome> run(params);
    std::vector<Worker*> workers;
    Master* master = nullptr;

    Result result;
    const Outcome outcome = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            auto& dictionary = coop.make_agent_with_binder<Dictionary>(dispatchers.binder(0), initial, run.done());
            for (std::uint32_t i = 0; i < sizes.workers; ++i)
                workers.push_back(&coop.make_agent_with_binder<Worker>(dispatchers.binder(i + 1), sizes, i, dictionary, master));
            // Last in the coop: every worker's start is queued before the master's sends DoWork.
            master = &coop.make_agent_with_binder<Master>(dispatchers.binder(sizes.workers + 1), workers, dictionary);
        });
    });

    result.messages_processed = messages(sizes);
    result.answer = describe(outcome);
    result.expected = describe(replay(sizes));
    return result;
}

Expectation expect(const Params& params) {
    const Sizes sizes(params);
    return {describe(replay(sizes)), messages(sizes)};
}

void check(const Params& params) {
    const auto workers = params.integer("workers");
    const auto keys = params.integer("keys");
    if (keys < workers)
        throw ParamError("savina_concdict", "keys",
                         "parameter 'keys' (" + std::to_string(keys) + ") must be at least 'workers' (" +
                             std::to_string(workers) + "): each worker writes its own keys");
    check_thread_per_agent("savina_concdict", params, std::uint64_t(workers) + 2,
                           "workers=" + std::to_string(workers));
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("workers", 20, {1, 10'000},
                      "worker agents sending requests to the dictionary (Savina's NUM_ENTITIES)"),
        integer_param("messages_per_worker", 10'000, {0, 1'000'000'000},
                      "requests each worker sends, one at a time (Savina's NUM_MSGS_PER_WORKER)"),
        integer_param("write_percent", 10, {0, 100},
                      "percent of the requests that are writes, the rest reads (Savina's WRITE_PERCENTAGE)"),
        integer_param("keys", 524'287, {1, 100'000'000},
                      "entries of the initial dictionary {k: k}, and the keys requests use (Savina's "
                      "DATA_LIMIT, Integer.MAX_VALUE / 4096)"),
        integer_param("seed", 1, {0, 4'294'967'295},
                      "seed of the workers' operations (worker i's stream from seed and i)"),
    };
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
