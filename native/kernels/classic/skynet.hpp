// What every skynet kernel (ours, caf_skynet) shares: how a node splits its leaves, the size of
// the tree, a node's subtotals, the answer and its format, so that they are verified the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::skynet {

// How a node covering `leaves` leaves splits them, so any leaf count makes a tree (a power of
// the branching factor makes the classic one): into min(branching, leaves) children of
// near-equal size, the first leaves % children one larger.
struct Split {
    Split(std::uint64_t leaves_, std::uint64_t branching) : leaves(leaves_), children(std::min(branching, leaves_)) {}

    // The leaves of child i.
    std::uint64_t size(std::uint64_t i) const noexcept { return leaves / children + (i < leaves % children ? 1 : 0); }

    std::uint64_t leaves;
    std::uint64_t children;
};

// Agents in a tree over `leaves` leaves split as Split says (memoised: a level has at most two
// distinct subtree sizes).
inline std::uint64_t tree_agents(std::uint64_t leaves, std::uint64_t branching,
                                 std::map<std::uint64_t, std::uint64_t>& memo) {
    if (leaves == 1) return 1;
    if (auto found = memo.find(leaves); found != memo.end()) return found->second;
    const Split split(leaves, branching);
    std::uint64_t agents = 1;
    for (std::uint64_t i = 0; i < split.children; ++i) agents += tree_agents(split.size(i), branching, memo);
    return memo[leaves] = agents;
}

inline std::uint64_t tree_agents(std::uint64_t leaves, std::uint64_t branching) {
    std::map<std::uint64_t, std::uint64_t> memo;
    return tree_agents(leaves, branching, memo);
}

// The answer: the root's sum of leaf ordinals and the number of agents that reported.
inline std::string describe(std::uint64_t sum, std::uint64_t agents) {
    return "sum=" + std::to_string(sum) + " agents=" + std::to_string(agents);
}

// What the answer must be: the sum of 0..leaves-1 and every agent of the tree.
inline std::string expected(std::uint64_t leaves, std::uint64_t branching) {
    return describe(leaves * (leaves - 1) / 2, tree_agents(leaves, branching));
}

// What a subtree sends to its parent: the sum of its leaves' ordinals and how many agents it
// had, so the root can verify both without any counter shared between threads.
struct Subtotal {
    std::uint64_t sum;
    std::uint64_t agents;
};

// A node's side, on any runtime: its children's subtotals added up.
class Subtotals {
public:
    void expect(std::uint64_t children) noexcept { waiting_ = std::uint32_t(children); }

    // A child reported; true once every child has, when the node reports total().
    bool add(const Subtotal& subtotal) noexcept {
        sum_ += subtotal.sum;
        agents_ += subtotal.agents;
        return --waiting_ == 0;
    }

    // The node's subtree: its children's and itself.
    Subtotal total() const noexcept { return {sum_, agents_ + 1}; }

private:
    std::uint64_t sum_ = 0;
    std::uint64_t agents_ = 0;
    std::uint32_t waiting_ = 0;
};

// A run's total, once its phase is in `result`: what it processed (every agent but the root
// reports once), its answer and what that must be, and its metrics.
inline void report(Result& result, const Subtotal& total, std::uint64_t leaves, std::uint64_t branching) {
    result.messages_processed = total.agents - 1;
    result.answer = describe(total.sum, total.agents);
    result.expected = expected(leaves, branching);
    result.metrics = {{"agents", double(total.agents)},
                      {"ns_per_agent", double(result.elapsed_ns) / double(total.agents)}};
}

// What report() records, as every skynet kernel declares it (Kernel::metrics).
inline std::vector<MetricSpec> own_metrics() {
    return {{.name = "agents"}, {.name = "ns_per_agent"}};
}

// The kernel's own parameters (the work it does), one schema for every runtime that runs it;
// each kernel adds its clock and runtime parameters with schema() (framework/schema.hpp).
inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("leaves", 1'000'000, {1, 100'000'000},
                      "leaf agents (the tree has about leaves*branching/(branching-1) agents)"),
        integer_param("branching", 10, {2, 1'000'000}, "children per node"),
        {.name = "deregister",
         .type = ParamType::boolean,
         .default_value = false,
         .help = "deregister each coop of children once they reported, inside the measured phase"},
    };
}

}  // namespace labctl::kernels::skynet
