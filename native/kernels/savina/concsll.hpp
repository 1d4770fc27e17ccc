// What every savina_concsll kernel (ours, caf_savina_concsll) shares: the workers' seeded
// operations, Savina's sorted linked list, a worker's and the master's counts, the checks, the
// answer and its format, so that both runtimes are verified the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "random.hpp"
#include "served.hpp"

namespace labctl::kernels::savina_concsll {

using savina::DoWork;
using savina::End;
using savina::Ends;
using savina::EndWork;

// SplitMix64: each worker's own stream, seeded from (seed, worker); tests/oracles.py replays it.
using Random = savina::SplitMix64;
using savina::mix64;

struct Sizes {
    std::uint32_t workers;
    std::uint64_t messages_per_worker;
    std::uint32_t write_percent;
    std::uint32_t size_percent;
    std::uint64_t seed;

    explicit Sizes(const Params& params)
        : workers(std::uint32_t(params.integer("workers"))),
          messages_per_worker(std::uint64_t(params.integer("messages_per_worker"))),
          write_percent(std::uint32_t(params.integer("write_percent"))),
          size_percent(std::uint32_t(params.integer("size_percent"))),
          seed(std::uint64_t(params.integer("seed"))) {}
};

// A worker's next operation, as Savina draws it: a number below 100; under size_percent a size
// query, under size_percent + write_percent an insert of a value, else a membership test.
enum class Kind : std::uint8_t { size, write, contains };
struct Operation {
    Kind kind;
    std::uint32_t value;
};

inline Operation next_operation(Random& random, const Sizes& sizes) {
    const std::uint64_t draw = random.next() % 100;
    if (draw < sizes.size_percent) return {Kind::size, 0};
    if (draw < sizes.size_percent + sizes.write_percent) return {Kind::write, std::uint32_t(random.next() >> 32)};
    return {Kind::contains, std::uint32_t(random.next() >> 32)};
}

struct Outcome {
    std::uint64_t contains = 0;
    std::uint64_t writes = 0;
    std::uint64_t sizes = 0;
    std::uint64_t replies = 0;
    std::uint64_t length = 0;
    std::uint64_t unsorted = 0;  // adjacent pairs out of order in the final list
    std::uint64_t digest = 0;    // sum of mix64(position << 32 | value) over the final list
};

inline std::string describe(const Outcome& o) {
    return "contains=" + std::to_string(o.contains) + " writes=" + std::to_string(o.writes) +
           " sizes=" + std::to_string(o.sizes) + " replies=" + std::to_string(o.replies) +
           " length=" + std::to_string(o.length) + " unsorted=" + std::to_string(o.unsorted) +
           " digest=" + std::to_string(o.digest);
}

// The sequential replay: every value inserted, in any order, sorted. Inserts commute, so the
// final list is the same whatever the interleaving.
inline Outcome replay(const Sizes& sizes) {
    Outcome outcome;
    std::vector<std::uint32_t> values;
    for (std::uint32_t w = 0; w < sizes.workers; ++w) {
        Random random(sizes.seed, w);
        for (std::uint64_t m = 0; m < sizes.messages_per_worker; ++m) {
            const Operation op = next_operation(random, sizes);
            if (op.kind == Kind::write) {
                values.push_back(op.value);
                ++outcome.writes;
            } else if (op.kind == Kind::size) {
                ++outcome.sizes;
            } else {
                ++outcome.contains;
            }
        }
    }
    std::sort(values.begin(), values.end());
    outcome.replies = outcome.contains + outcome.writes + outcome.sizes;
    outcome.length = values.size();
    for (std::uint64_t i = 0; i < values.size(); ++i) outcome.digest += mix64((i << 32) | values[i]);
    return outcome;
}

// Savina's SortedLinkedList: an insert after the last element not greater than it, a membership
// test walking until it finds the value (to the end when it is absent), a size that walks it all.
class SortedList {
public:
    SortedList() = default;
    SortedList(const SortedList&) = delete;
    SortedList& operator=(const SortedList&) = delete;
    ~SortedList() {
        while (head_ != nullptr) {
            Node* next = head_->next;
            delete head_;
            head_ = next;
        }
    }

    void add(std::uint32_t value) {
        Node* node = new Node{value, nullptr};
        if (head_ == nullptr || value < head_->value) {
            node->next = head_;
            head_ = node;
            return;
        }
        Node* before = head_;
        while (before->next != nullptr && !(value < before->next->value)) before = before->next;
        node->next = before->next;
        before->next = node;
    }

    bool contains(std::uint32_t value) const {
        for (const Node* n = head_; n != nullptr; n = n->next)
            if (n->value == value) return true;
        return false;
    }

    std::uint64_t size() const {
        std::uint64_t count = 0;
        for (const Node* n = head_; n != nullptr; n = n->next) ++count;
        return count;
    }

    // The final list's length, order and digest, into `outcome`.
    void summarise(Outcome& outcome) const {
        std::uint64_t i = 0;
        for (const Node* n = head_; n != nullptr; n = n->next, ++i) {
            if (n->next != nullptr && n->next->value < n->value) ++outcome.unsorted;
            outcome.digest += mix64((i << 32) | n->value);
        }
        outcome.length = i;
    }

private:
    struct Node {
        std::uint32_t value;
        Node* next;
    };
    Node* head_ = nullptr;
};

// A run's figures, once the list has handled the end, and what a run must answer (served.hpp's).
inline void report(Result& result, const Outcome& outcome, const Sizes& sizes) {
    savina::served_report(result, outcome, sizes);
}
inline Expectation expect(const Params& params) { return savina::served_expect<Sizes>(params); }

// What the parameters must satisfy together, on any runtime.
inline void check_percents(const std::string& kernel, const Params& params) {
    const auto write = params.integer("write_percent");
    const auto size = params.integer("size_percent");
    if (write + size > 100)
        throw ParamError(kernel, "write_percent",
                         "parameter 'write_percent' (" + std::to_string(write) + ") plus 'size_percent' (" +
                             std::to_string(size) + ") must be at most 100");
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("workers", 20, {1, 10'000},
                      "worker agents sending requests to the list (Savina's NUM_ENTITIES)"),
        integer_param("messages_per_worker", 8'000, {0, 100'000'000},
                      "requests each worker sends, one at a time (Savina's NUM_MSGS_PER_WORKER)"),
        integer_param("write_percent", 10, {0, 100},
                      "percent of the requests that insert a value (Savina's WRITE_PERCENTAGE)"),
        integer_param("size_percent", 1, {0, 100},
                      "percent of the requests that ask the list's size (Savina's SIZE_PERCENTAGE); the "
                      "rest test whether a value is in it"),
        integer_param("seed", 1, {0, 4'294'967'295},
                      "seed of the workers' operations (worker i's stream from seed and i)"),
    };
}

// The messages, one protocol for ours and caf_savina_concsll (its CAF port); `Handle` is how the
// runtime addresses a worker (ours: a pointer to its agent; CAF's: caf::actor); the master's are
// served.hpp's.
struct Reply {
    std::uint64_t value;
};
template <class Handle>
struct Write {
    Handle sender;
    std::uint32_t value;
};
template <class Handle>
struct Contains {
    Handle sender;
    std::uint32_t value;
};
template <class Handle>
struct Size {
    Handle sender;
};

// The list's side, on any runtime: Savina's list, the requests it served, and its summary.
class ListState {
public:
    Reply write(std::uint32_t value) {
        ++outcome_.writes;
        list_.add(value);
        return {value};
    }
    Reply contains(std::uint32_t value) {
        ++outcome_.contains;
        return {list_.contains(value) ? 1u : 0u};
    }
    Reply size() {
        ++outcome_.sizes;
        return {list_.size()};
    }
    Outcome end(const End& end) {
        outcome_.replies = end.replies;
        list_.summarise(outcome_);
        return outcome_;
    }

private:
    SortedList list_;
    Outcome outcome_;
};

// A worker's side, on any runtime: its next request, one at a time.
class Client {
public:
    Client(const Sizes& sizes, std::uint32_t id) : random_(sizes.seed, id), sizes_(sizes) {}
    void replied() noexcept { ++replies_; }
    // True with the next operation in `op`; false once every request is made (then EndWork).
    bool next(Operation& op) {
        if (sent_ == sizes_.messages_per_worker) return false;
        ++sent_;
        op = next_operation(random_, sizes_);
        return true;
    }
    EndWork end() const noexcept { return {replies_}; }

private:
    Random random_;
    const Sizes& sizes_;
    std::uint64_t sent_ = 0;
    std::uint64_t replies_ = 0;
};

}  // namespace labctl::kernels::savina_concsll
