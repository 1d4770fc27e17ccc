// What every savina_concdict kernel (ours, caf_savina_concdict) shares: the workers' seeded
// operations, the dictionary's side, a worker's and the master's counts, the checks, the answer
// and its format, so that both runtimes are verified the same way.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "../framework/kernel.hpp"
#include "random.hpp"
#include "served.hpp"

namespace labctl::kernels::savina_concdict {

using savina::DoWork;
using savina::End;
using savina::Ends;
using savina::EndWork;

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

inline std::string describe(const Outcome& o) {
    return "reads=" + std::to_string(o.reads) + " writes=" + std::to_string(o.writes) +
           " replies=" + std::to_string(o.replies) + " size=" + std::to_string(o.size) +
           " digest=" + std::to_string(o.digest);
}

// The sequential replay: every worker's operations in turn, on the initial map {k: k}.
inline Outcome replay(const Sizes& sizes) {
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

// A run's figures, once the dictionary has handled the end, and what a run must answer (served.hpp's).
inline void report(Result& result, const Outcome& outcome, const Sizes& sizes) {
    savina::served_report(result, outcome, sizes);
}
inline Expectation expect(const Params& params) { return savina::served_expect<Sizes>(params); }

// What the parameters must satisfy together, on any runtime.
inline void check_keys(const std::string& kernel, const Params& params) {
    const auto workers = params.integer("workers");
    const auto keys = params.integer("keys");
    if (keys < workers)
        throw ParamError(kernel, "keys",
                         "parameter 'keys' (" + std::to_string(keys) + ") must be at least 'workers' (" +
                             std::to_string(workers) + "): each worker writes its own keys");
}

inline std::vector<ParamSpec> own_params() {
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

// Savina fills its initial map {k: k} while parsing its arguments, before its clock; its
// dictionary copies it when made, under the clock.
inline std::unordered_map<std::uint32_t, std::uint32_t> initial_map(const Sizes& sizes) {
    std::unordered_map<std::uint32_t, std::uint32_t> initial;
    initial.reserve(sizes.keys);
    for (std::uint32_t k = 0; k < sizes.keys; ++k) initial.emplace(k, k);
    return initial;
}

// The messages, one protocol for ours and caf_savina_concdict (its CAF port); `Handle` is how the
// runtime addresses a worker (ours: a pointer to its agent; CAF's: caf::actor); the master's are
// served.hpp's.
struct Reply {
    std::uint32_t value;
};
template <class Handle>
struct Write {
    Handle sender;
    std::uint32_t key;
    std::uint32_t value;
};
template <class Handle>
struct Read {
    Handle sender;
    std::uint32_t key;
};

// The dictionary's side, on any runtime: its map, the requests it served, and its digest.
class Dictionary {
public:
    explicit Dictionary(const std::unordered_map<std::uint32_t, std::uint32_t>& initial) : data_(initial) {}
    Reply write(std::uint32_t key, std::uint32_t value) {
        ++outcome_.writes;
        data_[key] = value;
        return {value};
    }
    Reply read(std::uint32_t key) {
        ++outcome_.reads;
        const auto found = data_.find(key);
        return {found == data_.end() ? 0u : found->second};
    }
    // The end: the outcome, with its final size and contents.
    Outcome end(const End& end) {
        outcome_.replies = end.replies;
        outcome_.size = data_.size();
        for (const auto& [key, value] : data_) outcome_.digest += entry_digest(key, value);
        return outcome_;
    }

private:
    std::unordered_map<std::uint32_t, std::uint32_t> data_;
    Outcome outcome_;
};

// A worker's side, on any runtime: its next request, one at a time.
class Client {
public:
    Client(const Sizes& sizes, std::uint32_t id) : generator_(sizes, id), messages_(sizes.messages_per_worker) {}
    void replied() noexcept { ++replies_; }
    // True with the next operation in `op`; false once every request is made (then EndWork).
    bool next(Operation& op) {
        if (sent_ == messages_) return false;
        ++sent_;
        op = generator_.next();
        return true;
    }
    EndWork end() const noexcept { return {replies_}; }

private:
    Generator generator_;
    const std::uint64_t messages_;
    std::uint64_t sent_ = 0;
    std::uint64_t replies_ = 0;
};

}  // namespace labctl::kernels::savina_concdict
