// What every skynet kernel (ours, caf_skynet) shares: the size of the tree and the answer's
// format, so that they are verified the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernel.hpp"

namespace labctl::kernels::skynet {

// Agents in a tree over `leaves` leaves when each node splits its leaves into min(branching,
// count) children of near-equal size, the first count % children one larger (memoised: a level
// has at most two distinct subtree sizes).
inline std::uint64_t tree_agents(std::uint64_t leaves, std::uint64_t branching,
                                 std::map<std::uint64_t, std::uint64_t>& memo) {
    if (leaves == 1) return 1;
    if (auto found = memo.find(leaves); found != memo.end()) return found->second;
    const std::uint64_t children = std::min(branching, leaves);
    std::uint64_t agents = 1;
    for (std::uint64_t i = 0; i < children; ++i)
        agents += tree_agents(leaves / children + (i < leaves % children ? 1 : 0), branching, memo);
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

// The kernel's own parameters (the work it does), one schema for every runtime that runs it;
// each kernel adds its runtime's (dispatcher_params(), caf_support::scheduler_params()).
inline std::vector<ParamSpec> own_params() {
    return {
        {.name = "leaves",
         .type = ParamType::integer,
         .default_value = std::int64_t{1'000'000},
         .help = "leaf agents (the tree has about leaves*branching/(branching-1) agents)",
         .minimum = 1,
         .maximum = 100'000'000},
        {.name = "branching",
         .type = ParamType::integer,
         .default_value = std::int64_t{10},
         .help = "children per node",
         .minimum = 2,
         .maximum = 1'000'000},
        {.name = "deregister",
         .type = ParamType::boolean,
         .default_value = false,
         .help = "deregister each coop of children once they reported, inside the measured phase"},
    };
}

}  // namespace labctl::kernels::skynet
