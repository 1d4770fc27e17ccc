// skynet on Boost.Fiber: a tree of fibers over the leaves [0, leaves), each node with
// min(branching, leaves) children split as our kernel splits them (native/kernels/skynet.hpp);
// every fiber but the root pushes one report (sum, fibers) into its parent's buffered_channel.
// As the Boost.Fiber performance page's skynet: fibers launched with launch::dispatch (the child
// runs at once, the parent waits in the ready queue) and detached, stacks from fixedsize_stack,
// a buffered_channel per parent. Ours differs in three ways: the root is a fiber too (every node
// of the tree is one, as every node is an agent in ours); a report carries the subtree's fiber
// count beside its sum, so the answer is verified as ours verifies it; and a stack is two pages,
// not the page's one: on Boost 1.74 a node overflows one page (with protected_fixedsize_stack of
// one page every run faults on its guard page; two pages pass at 20000 leaves, round_robin and
// shared_work and work_stealing on 1 to 4 threads).
//
// Measured phase (elapsed_ns), as ours: from launching the root, the scheduler's threads already
// registered, to the main fiber holding the root's report; the scheduler's start and its
// threads' end are outside it.

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "peer.hpp"

namespace peer {
namespace {

struct Report {
    std::uint64_t sum = 0;
    std::uint64_t fibers = 0;
};

using Channel = boost::fibers::buffered_channel<Report>;
using Stack = boost::fibers::fixedsize_stack;

// A buffered_channel's capacity is a power of two and holds one value fewer: room for every
// child's report, so no child waits to push (10 children: 16, the page's channel size).
std::size_t capacity_for(std::uint64_t children) {
    std::size_t capacity = 2;
    while (capacity <= children) capacity *= 2;
    return capacity;
}

struct Tree {
    std::uint64_t branching;
    Stack stack;
    bool wrong_leaf;  // Fault::compute: leaf 0 reports 1
};

void node(Tree& tree, Channel& parent, std::uint64_t first, std::uint64_t leaves) {
    if (leaves == 1) {
        parent.push(Report{first + (tree.wrong_leaf && first == 0 ? 1 : 0), 1});
        return;
    }
    const std::uint64_t children = std::min(tree.branching, leaves);
    Channel reports{capacity_for(children)};
    std::uint64_t start = first;
    for (std::uint64_t i = 0; i < children; ++i) {
        const std::uint64_t size = leaves / children + (i < leaves % children ? 1 : 0);
        boost::fibers::fiber{boost::fibers::launch::dispatch, std::allocator_arg, tree.stack, node, std::ref(tree),
                             std::ref(reports), start, size}
            .detach();
        start += size;
    }
    Report total{0, 1};
    for (std::uint64_t i = 0; i < children; ++i) {
        const Report report = reports.value_pop();
        total.sum += report.sum;
        total.fibers += report.fibers;
    }
    parent.push(total);
}

// The fibers of the tree (our kernel's tree_agents, computed apart from the run), memoised: a
// level has at most two distinct subtree sizes.
std::uint64_t tree_fibers(std::uint64_t leaves, std::uint64_t branching, std::map<std::uint64_t, std::uint64_t>& memo) {
    if (leaves == 1) return 1;
    if (const auto found = memo.find(leaves); found != memo.end()) return found->second;
    const std::uint64_t children = std::min(branching, leaves);
    std::uint64_t fibers = 1;
    for (std::uint64_t i = 0; i < children; ++i)
        fibers += tree_fibers(leaves / children + (i < leaves % children ? 1 : 0), branching, memo);
    return memo[leaves] = fibers;
}

std::string describe(std::uint64_t sum, std::uint64_t fibers) {
    return "sum=" + std::to_string(sum) + " agents=" + std::to_string(fibers);
}

}  // namespace

Reply skynet(const Params& params) {
    const auto leaves = std::uint64_t(params.at("leaves"));
    const auto branching = std::uint64_t(params.at("branching"));
    const Fault injected = fault();
    std::map<std::uint64_t, std::uint64_t> memo;
    const std::string expected = describe(leaves * (leaves - 1) / 2, tree_fibers(leaves, branching, memo));

    Tree tree{branching, Stack{2 * Stack::traits_type::page_size()}, injected == Fault::compute};
    Report root;
    Clock::duration elapsed{};
    {
        Scheduler scheduler(params);
        Channel out{2};
        const Clock::time_point start = Clock::now();
        boost::fibers::fiber{boost::fibers::launch::dispatch, std::allocator_arg, tree.stack, node, std::ref(tree),
                             std::ref(out), std::uint64_t{0}, leaves}
            .detach();
        root = out.value_pop();
        elapsed = Clock::now() - start;
    }

    const std::string answer = describe(root.sum, root.fibers);
    if (answer != expected) wrong_answer("skynet", answer, expected);
    Reply reply;
    reply.elapsed_ns = std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
    reply.messages = root.fibers - 1;
    reply.answer = injected == Fault::reply ? describe(root.sum + 1, root.fibers) : answer;
    reply.agents_created = root.fibers;
    reply.metrics = {{"agents", double(root.fibers)},
                     {"ns_per_agent", double(reply.elapsed_ns) / double(root.fibers)}};
    return reply;
}

}  // namespace peer
