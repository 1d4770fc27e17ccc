// actor_creation: a binary tree of agents, each spawning its two children in coops of their
// own and sending each {spread, levels below}, down to 2^depth leaves; counts come back up.
// Measures the cost of creating agents (and, with deregister, of destroying them).
#include <array>
#include <cstdint>
#include <string>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"

namespace labctl::kernels::actor_creation {
namespace {

// What a subtree sends to its parent: its leaves and its agents, so the root can verify both
// without any counter shared between threads; and which child it is, so the parent can let that
// child's coop go.
struct Count {
    std::uint64_t leaves;
    std::uint64_t agents;
    std::uint32_t child;
};

// What an agent is told to do, as libcppa's testee is sent {spread, N}: spawn two children
// and send each {spread, N-1}, or, at 0, report a leaf.
struct Spread {
    unsigned levels_below;
};

struct Tree {
    DispatcherChoice& dispatchers;
    bool deregister;
    rt::Completion<Count>& answer;
};

class Node final : public rt::Agent {
public:
    // `index` numbers the tree as a heap (root 1, children 2i and 2i+1): the binder index, so
    // active_group spreads the nodes of every level over its groups. What the node does comes
    // in its Spread message, not here: the study's testee learns its depth from a message.
    Node(const Tree& tree, Node* parent, std::uint32_t child, std::uint64_t index)
        : tree_(tree), parent_(parent), child_(child), index_(index) {
        subscribe<&Node::on_spread>();
        subscribe<&Node::on_count>();
    }

private:
    void on_spread(const Spread& spread) {
        if (spread.levels_below == 0) {
            report({1, 1, child_});
            return;
        }
        // Two spawns, each child in a new coop, as the study spawns each actor on its own, and
        // to each its {spread, N-1} ("spawn<testee>(this) << msg", twice).
        for (std::uint32_t k = 0; k < 2; ++k) {
            const auto binder = tree_.dispatchers.binder(unsigned(2 * index_ + k));
            Node* child = nullptr;
            children_[k] = &environment().introduce_coop(binder, [&](rt::Coop& coop) {
                child = &coop.make_agent_with_binder<Node>(binder, tree_, this, k, 2 * index_ + k);
            });
            rt::send<Spread>(*child, spread.levels_below - 1);
        }
    }

    void on_count(const Count& count) {
        leaves_ += count.leaves;
        agents_ += count.agents;
        // The child has reported and has nothing more to do: the study's actor quits here.
        if (tree_.deregister) environment().deregister_coop(*children_[count.child]);
        if (++reported_ != 2) return;
        report({leaves_, agents_ + 1, child_});
    }

    void report(Count count) {
        if (parent_ != nullptr) rt::send<Count>(*parent_, count);
        else tree_.answer.set(count);
    }

    const Tree& tree_;
    Node* const parent_;
    const std::uint32_t child_;
    const std::uint64_t index_;
    std::array<rt::Coop*, 2> children_{};
    std::uint64_t leaves_ = 0;
    std::uint64_t agents_ = 0;
    std::uint32_t reported_ = 0;
};

std::uint64_t tree_agents(std::int64_t depth) { return (std::uint64_t{2} << depth) - 1; }

// Every agent handles its Spread, and every agent but the root reports its Count to its parent
// (the root hands its count to the kernel): the study's testees exchange the same messages.
std::uint64_t tree_messages(std::int64_t depth) { return 2 * tree_agents(depth) - 1; }

Result run(const Params& params) {
    const auto depth = unsigned(params.integer("depth"));
    const bool deregister = params.boolean("deregister");

    MeasuredRun<Count> run(params, Timed::phase_or_lifetime);
    const Tree tree{run.dispatchers(), deregister, run.done()};
    Result result;
    rt::Coop* root = nullptr;

    // The stop destroys every agent: outside the phase unless deregister, inside a lifetime clock.
    const Count total = run.measure_through(
        result, deregister,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            Node* root_node = nullptr;
            root = &env.introduce_coop(dispatchers.binder(1), [&](rt::Coop& coop) {
                root_node = &coop.make_agent_with_binder<Node>(dispatchers.binder(1), tree, nullptr, 0, 1);
            });
            // As the study's main: send(spawn<testee>(self), atom("spread"), num).
            rt::send<Spread>(*root_node, depth);
        },
        [&](rt::Environment& env) {
            env.deregister_coop(*root);
            env.wait_for_no_coops();
        });

    // Each agent counted handled its Spread, and each but the root sent a Count its parent
    // handled: 2 * agents - 1 (tree_messages(depth) in a correct run).
    result.messages_processed = 2 * total.agents - 1;
    result.answer = "leaves=" + std::to_string(total.leaves) + " agents=" + std::to_string(total.agents);
    result.expected = "leaves=" + std::to_string(std::uint64_t{1} << depth) +
                      " agents=" + std::to_string(tree_agents(depth));
    result.metrics = {{"agents", double(total.agents)},
                      {"ns_per_agent", double(result.elapsed_ns) / double(total.agents)}};
    run.add_phase_metric(result);
    return result;
}

void check(const Params& params) {
    const std::int64_t depth = params.integer("depth");
    check_thread_per_agent("actor_creation", params, tree_agents(depth), "depth=" + std::to_string(depth));
}

double work(const Params& params) { return double(tree_messages(params.integer("depth"))); }

// What an external runtime is held to: 2^depth leaves and the whole tree counted, every Spread and
// every Count handled.
Expectation expect(const Params& params) {
    const std::int64_t depth = params.integer("depth");
    return {"leaves=" + std::to_string(std::uint64_t{1} << depth) + " agents=" + std::to_string(tree_agents(depth)),
            tree_messages(depth)};
}

// The kernel's own parameters: the work it does.
std::vector<ParamSpec> own_params() {
    return {
        integer_param("depth", 19, {0, 24},
                      "levels below the root: 2^depth leaves (the study's 2^19 = 524,288, {spread, "
                      "19}; depth 20 peaks near 700 MB on one thread, so the limit, 24, needs about 11 GB)"),
        {.name = "deregister",
         .type = ParamType::boolean,
         .default_value = true,
         .help = "deregister each child's coop once it reported, inside the measured phase (the "
                 "study's actors quit)"},
    };
}

const Registration registration(Kernel{
    .name = "actor_creation",
    .summary = "a binary tree of 2^depth leaf agents, each spawned in its own coop and sent "
               "{spread, N}: the cost of creation",
    .description =
        "The kernel sends the root agent Spread{depth}. An agent sent Spread{N} with N > 0 spawns "
        "two children, each in a new coop, and sends each Spread{N-1}, as libcppa's testee is "
        "sent {spread, N-1}; down to `depth` levels (2^depth leaves, 2^(depth+1)-1 agents). A "
        "leaf (Spread{0}) sends 1 to its parent; each inner agent sums its children's counts "
        "(and their agents) and sends the sum up. messages_processed counts every Spread and "
        "every Count, 2^(depth+2)-3 (the root hands its count to the kernel, not in a message). "
        "With deregister=true (the study's actors quit once done) each agent "
        "deregisters a child's coop when that child has reported, and the phase ends when "
        "every coop is destroyed; otherwise it ends when the root has the count (agents are "
        "destroyed after). With clock=lifetime elapsed_ns runs from before the environment "
        "exists to after it is gone (every agent destroyed, every thread joined), as the study "
        "timed its whole program.",
    .sources = {{"libcppa_actor_creation", "the spreading actors, {spread, N}"}},
    .verifies = "the root counts 2^depth leaves and 2^(depth+1)-1 agents (524288 and 1048575 "
                "at the study's depth, 19); each leaf reports only once it is sent its Spread{0}",
    .params = schema(own_params(), Timed::phase_or_lifetime, dispatcher_params()),
    .metrics = metric_schema({{.name = "agents"}, {.name = "ns_per_agent"}}, Timed::phase_or_lifetime),
    .check = check,
    .run = run,
    .expect = expect,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::actor_creation
