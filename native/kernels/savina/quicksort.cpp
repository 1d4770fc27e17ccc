// savina_quicksort: Savina's 24. Quicksort (quicksort). An agent per partition: an agent given
// `threshold` values or more splits them around a pivot, hands the values below and above it to
// two child agents and joins their sorted halves around the values equal to it; below the
// threshold it sorts them sequentially. Measures a divide-and-conquer tree whose messages carry
// the data.
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_quicksort {
namespace {

using Values = std::vector<std::uint64_t>;

// Savina's QuickSortConfig.randomlyInitArray: `count` draws of Savina's PseudoRandom seeded with
// `seed`, each |value % max_value| (the values are never negative).
Values input(std::uint64_t count, std::uint64_t max_value, std::uint64_t seed) {
    Values data;
    data.reserve(count);
    savina::PseudoRandom random(seed);
    for (std::uint64_t i = 0; i < count; ++i) data.push_back(random.next() % max_value);
    return data;
}

// Savina's filters: the values below, equal to and above the pivot, in their order.
template <class Keep>
Values filter(const Values& data, Keep keep) {
    Values out;
    out.reserve(data.size());
    for (std::uint64_t v : data)
        if (keep(v)) out.push_back(v);
    return out;
}
Values below(const Values& data, std::uint64_t pivot) {
    return filter(data, [pivot](std::uint64_t v) { return v < pivot; });
}
Values equal(const Values& data, std::uint64_t pivot) {
    return filter(data, [pivot](std::uint64_t v) { return v == pivot; });
}
Values above(const Values& data, std::uint64_t pivot) {
    return filter(data, [pivot](std::uint64_t v) { return v > pivot; });
}

// Savina's QuickSortConfig.quicksortSeq: the pivot is the middle value; the values below it
// sorted, then those equal to it, then those above it sorted. The agents' sort below the
// threshold, and the sequential program on the whole input.
Values quicksort_seq(const Values& data) {
    if (data.size() < 2) return data;
    const std::uint64_t pivot = data[data.size() / 2];
    const Values left = quicksort_seq(below(data, pivot));
    const Values middle = equal(data, pivot);
    const Values right = quicksort_seq(above(data, pivot));
    Values sorted;
    sorted.reserve(data.size());
    sorted.insert(sorted.end(), left.begin(), left.end());
    sorted.insert(sorted.end(), middle.begin(), middle.end());
    sorted.insert(sorted.end(), right.begin(), right.end());
    return sorted;
}

// The agents the tree of partitions has for `data`: one per partition, two children for each of
// `threshold` values or more (the same split as the agents'), found without sorting.
std::uint64_t tree_agents(const Values& data, std::uint64_t threshold) {
    if (data.size() < threshold) return 1;
    const std::uint64_t pivot = data[data.size() / 2];
    return 1 + tree_agents(below(data, pivot), threshold) + tree_agents(above(data, pivot), threshold);
}

// A Sort per agent, a Sorted per agent but the root.
std::uint64_t messages(std::uint64_t agents) { return 2 * agents - 1; }

struct Answer {
    std::uint64_t values = 0;
    bool sorted = false;
    bool permutation = false;  // the same values as the input, as many times each
    std::uint64_t agents = 0;
    std::uint64_t hash = savina::kFnvBasis;  // FNV-1a over the sorted values, in order
};

std::string describe(const Answer& a) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(a.hash));
    return "values=" + std::to_string(a.values) + " sorted=" + std::to_string(int(a.sorted)) +
           " permutation=" + std::to_string(int(a.permutation)) + " agents=" + std::to_string(a.agents) +
           " sorted_hash=" + hash;
}

// An order-free fingerprint of a multiset of values: the sum of their mixes.
std::uint64_t multiset(const Values& data) {
    std::uint64_t sum = 0;
    for (std::uint64_t v : data) sum += savina::mix64(v);
    return sum;
}

// The answer of `sorted`, the result for `in`, whose tree had `agents` agents.
Answer summarize(const Values& in, const Values& sorted, std::uint64_t agents) {
    Answer a;
    a.values = sorted.size();
    a.sorted = true;
    for (std::size_t i = 1; i < sorted.size(); ++i)
        if (sorted[i] < sorted[i - 1]) a.sorted = false;
    a.permutation = sorted.size() == in.size() && multiset(sorted) == multiset(in);
    a.agents = agents;
    for (std::uint64_t v : sorted) a.hash = savina::fnv_fold(a.hash, v);
    return a;
}

struct Setup {
    std::uint64_t values;
    std::uint64_t max_value;
    std::uint64_t threshold;
    std::uint64_t seed;
};

Setup setup(const Params& params) {
    return {std::uint64_t(params.integer("values")), std::uint64_t(params.integer("max_value")),
            std::uint64_t(params.integer("threshold")), std::uint64_t(params.integer("seed"))};
}

enum class Side : std::uint8_t { left, right };

struct Sort {
    Values data;
};

struct SortedPart {
    Values data;
    Side side;
    std::uint64_t agents;  // of the subtree that sorted it
};

struct Tree {
    DispatcherChoice& dispatchers;
    std::uint64_t threshold;
    Values& sorted;  // the root's result, written before `done` is set
    rt::Completion<std::uint64_t>& done;  // the tree's agents
};

class Sorter final : public rt::Agent {
public:
    Sorter(const Tree& tree, Sorter* parent, Side side, unsigned index)
        : tree_(tree), parent_(parent), side_(side), index_(index) {
        subscribe<&Sorter::on_sort>();
        subscribe<&Sorter::on_part>();
    }

private:
    void on_sort(Sort& sort) {
        const Values& data = sort.data;
        if (data.size() < tree_.threshold) {
            result_ = quicksort_seq(data);
            report();
            return;
        }
        // As Savina's: the left child made and given its values, then the right one; the
        // values equal to the pivot kept.
        const std::uint64_t pivot = data[data.size() / 2];
        spawn(Side::left, below(data, pivot));
        spawn(Side::right, above(data, pivot));
        result_ = equal(data, pivot);
        parts_ = 1;
    }

    void spawn(Side side, Values part) {
        const unsigned index = 2 * index_ + (side == Side::left ? 1 : 2);
        Sorter* child = nullptr;
        environment().introduce_coop(tree_.dispatchers.binder(index), [&](rt::Coop& coop) {
            child = &coop.make_agent<Sorter>(tree_, this, side, index);
        });
        rt::send<Sort>(*child, std::move(part));
    }

    void on_part(SortedPart& part) {
        agents_ += part.agents;
        if (!part.data.empty()) {
            if (part.side == Side::left) {
                part.data.insert(part.data.end(), result_.begin(), result_.end());
                result_ = std::move(part.data);
            } else {
                result_.insert(result_.end(), part.data.begin(), part.data.end());
            }
        }
        if (++parts_ == 3) report();
    }

    void report() {
        if (parent_ != nullptr) {
            rt::send<SortedPart>(*parent_, std::move(result_), side_, agents_);
        } else {
            tree_.sorted = std::move(result_);
            tree_.done.set(agents_);
        }
    }

    const Tree& tree_;
    Sorter* const parent_;
    const Side side_;
    const unsigned index_;
    Values result_;
    unsigned parts_ = 0;
    std::uint64_t agents_ = 1;  // itself
};

Result run(const Params& params) {
    const Setup s = setup(params);
    const Values data = input(s.values, s.max_value, s.seed);
    Values message = data;  // the root's copy, made outside the phase
    Values sorted;

    MeasuredRun<std::uint64_t> run(params);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    const Tree tree{dispatchers, s.threshold, sorted, run.done()};
    Result result;

    // As Savina's clock, less making the input: from the root's creation and its Sort to the
    // root's having the whole sorted sequence.
    const std::uint64_t agents = run.measure(result, [&] {
        Sorter* root = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            root = &coop.make_agent<Sorter>(tree, nullptr, Side::left, 0u);
        });
        rt::send<Sort>(*root, std::move(message));
    });

    const Values expected = savina::timed_sequential(result, [&] { return quicksort_seq(data); });
    result.messages_processed = messages(agents);
    result.answer = describe(summarize(data, sorted, agents));
    result.expected = describe(summarize(data, expected, tree_agents(data, s.threshold)));
    return result;
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    const Values data = input(s.values, s.max_value, s.seed);
    const std::uint64_t agents = tree_agents(data, s.threshold);
    return {describe(summarize(data, quicksort_seq(data), agents)), messages(agents)};
}

void check(const Params& params) {
    // How many agents the tree has depends on the values: drawn and split only where a thread
    // per agent is at stake.
    if (!rt::find_dispatcher(params.text("dispatcher")).thread_per_agent) return;
    const Setup s = setup(params);
    const std::uint64_t agents = tree_agents(input(s.values, s.max_value, s.seed), s.threshold);
    check_thread_per_agent("savina_quicksort", params, agents,
                           "values=" + std::to_string(s.values) + " with threshold=" + std::to_string(s.threshold));
}

// At least the values themselves (the agents' parts and the sequential check hold more).
double memory(const Params& params) {
    return double(setup(params).values) * sizeof(std::uint64_t);
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("values", 1'000'000, {1, 100'000'000}, "values to sort (Savina's N)"),
        {.name = "max_value",
         .type = ParamType::integer,
         .default_value = std::int64_t{1} << 60,
         .help = "each value is the generator's draw modulo max_value (Savina's M; its generator "
                 "draws below 65,536, so only a max_value below that changes the values)",
         .minimum = 1,
         .maximum = double(std::int64_t{1} << 62)},
        integer_param("threshold", 2'048, {1, 100'000'000},
                      "a partition of fewer values is sorted sequentially by its agent, one of more is "
                      "split between two child agents (Savina's T)"),
        integer_param("seed", 1'024, {0, 65'535},
                      "the start value of Savina's PseudoRandom, which draws the values (Savina's S)"),
    };
}

const Registration registration(Kernel{
    .name = "savina_quicksort",
    .summary = "an agent per partition sorts `values` values: partitions of `threshold` or more "
               "are split around a pivot between two child agents, smaller ones sorted in place",
    .description =
        "Savina's benchmark 24, Quicksort (quicksort). The input is Savina's: `values` draws of "
        "its PseudoRandom (value = (value*1309 + 13849) & 65535) started at `seed`, each modulo "
        "max_value, so at Savina's defaults (N = 1,000,000, S = 1,024) the values lie below "
        "65,536 and repeat. The root agent is sent the whole input (Sort). An agent given fewer "
        "than `threshold` values sorts them with Savina's sequential quicksort (the middle value "
        "as pivot; the values below it sorted, those equal to it, those above it sorted) and "
        "sends them to its parent; an agent given more splits them around their middle value: it "
        "creates a left child (a coop of its own) and sends it the values below the pivot, then a "
        "right child with those above, keeps those equal, and once both children have sent their "
        "sorted parts joins them around its own and sends the whole to its parent. Messages: a "
        "Sort per agent and a sorted part per agent but the root; how many agents the tree has "
        "follows from the values (a partition's size alone decides). The phase runs from the "
        "root's creation and its Sort to the root's having the whole sorted sequence, the "
        "dispatcher's threads already running. Verifies the length, that the result is sorted, "
        "that it holds the input's values as many times each (an order-free fingerprint of "
        "both), that it equals the sequential program's result (the same recursive quicksort on "
        "the whole input in one thread, timed as sequential_ns) by a hash of the sorted "
        "sequence, and the number of agents against the same split done without agents. "
        "Differences from Savina: its clock also covers making the input and the actor system, "
        "ours covers neither; Savina's root checks the order inside its clock, ours is checked "
        "after the phase; the values are 64-bit integers in contiguous vectors where Savina's "
        "are boxed java.lang.Long objects in ArrayLists (each split's three filtered copies and "
        "each join copy pointers to them); each sorted part also carries the number of agents "
        "of its subtree; "
        "Savina's actors exit once they have reported and the run ends when the actor system has "
        "terminated, ours stay registered until the environment stops, after the phase (their "
        "deregistration and destruction are not timed).",
    .sources = {{"savina", "24. Quicksort (quicksort)"}},
    .verifies = "the result has `values` values, is sorted, holds the input's values, equals the "
                "sequential quicksort's result (a hash of the sorted sequence), and the tree had "
                "as many agents as the same split done sequentially",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
    .memory = memory,
});

}  // namespace
}  // namespace labctl::kernels::savina_quicksort
