// skynet: a tree of agents, each node spawning `branching` children in a coop of their own,
// down to `leaves` leaves; each leaf sends its ordinal up and each node sends the sum of its
// children. Measures the cost of creating (and deregistering) agents.
#include <cstdint>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "skynet.hpp"

namespace labctl::kernels::skynet {
namespace {

struct Tree {
    DispatcherChoice& dispatchers;
    std::uint64_t branching;
    bool deregister;
    rt::Completion<Subtotal>& answer;
};

// A node covering the leaves [first, first + count).
class Node final : public rt::Agent {
public:
    Node(const Tree& tree, Node* parent, std::uint64_t first, std::uint64_t count)
        : tree_(tree), parent_(parent), first_(first), count_(count) {
        if (count_ > 1) subscribe<&Node::on_subtotal>();
    }

private:
    void on_start() override {
        if (count_ == 1) {
            report({first_, 1});
            return;
        }
        const Split split(count_, tree_.branching);
        children_ = &environment().introduce_coop(tree_.dispatchers.binder(), [&](rt::Coop& coop) {
            std::uint64_t first = first_;
            for (std::uint64_t i = 0; i < split.children; ++i) {
                const std::uint64_t size = split.size(i);
                coop.make_agent_with_binder<Node>(tree_.dispatchers.binder(unsigned(i)), tree_, this,
                                                  first, size);
                first += size;
            }
        });
        subtotals_.expect(split.children);
    }

    void on_subtotal(const Subtotal& subtotal) {
        if (!subtotals_.add(subtotal)) return;
        if (tree_.deregister) environment().deregister_coop(*children_);
        report(subtotals_.total());
    }

    void report(Subtotal subtotal) {
        if (parent_ != nullptr) rt::send<Subtotal>(*parent_, subtotal);
        else tree_.answer.set(subtotal);
    }

    const Tree& tree_;
    Node* const parent_;
    const std::uint64_t first_;
    const std::uint64_t count_;
    rt::Coop* children_ = nullptr;
    Subtotals subtotals_;
};

Result run(const Params& params) {
    const auto leaves = std::uint64_t(params.integer("leaves"));
    const auto branching = std::uint64_t(params.integer("branching"));
    const bool deregister = params.boolean("deregister");

    MeasuredRun<Subtotal> run(params, Timed::phase_or_lifetime);
    const Tree tree{run.dispatchers(), branching, deregister, run.done()};
    Result result;
    rt::Coop* root = nullptr;

    // The stop destroys every agent: outside the phase unless deregister, inside a lifetime clock.
    const Subtotal total = run.measure_through(
        result, deregister,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            root = &env.introduce_coop(dispatchers.binder(),
                                       [&](rt::Coop& coop) { coop.make_agent<Node>(tree, nullptr, 0, leaves); });
        },
        [&](rt::Environment& env) {
            env.deregister_coop(*root);
            env.wait_for_no_coops();
        });

    report(result, total, leaves, branching);
    run.add_phase_metric(result);
    return result;
}

void check(const Params& params) {
    const auto leaves = std::uint64_t(params.integer("leaves"));
    check_thread_per_agent("skynet", params, tree_agents(leaves, std::uint64_t(params.integer("branching"))),
                           "leaves=" + std::to_string(leaves));
}

Expectation expect(const Params& params) {
    const auto leaves = std::uint64_t(params.integer("leaves"));
    const auto branching = std::uint64_t(params.integer("branching"));
    return {expected(leaves, branching), tree_agents(leaves, branching) - 1};
}

const Registration registration(Kernel{
    .name = "skynet",
    .summary = "a tree of `leaves` leaf agents summing their ordinals: the cost of agent creation",
    .description =
        "The root agent spawns `branching` children in a new coop, each child does the same, "
        "down to `leaves` leaves. Each leaf sends its ordinal (0..leaves-1) to its parent; each "
        "node sends the sum of its children up. With deregister=true each node deregisters its "
        "children's coop once they have reported, and the phase ends when every coop is "
        "destroyed; otherwise it ends when the root has the sum (agents are destroyed after). "
        "The phase starts when the root's coop is introduced, the dispatcher's threads already "
        "running. With clock=lifetime elapsed_ns runs from before the environment and its "
        "dispatcher (and their threads) are made to after they are gone: every coop "
        "deregistered, every agent destroyed, every thread joined (SObjectizer's "
        "skynet_with_deregistration and skynet_thread_pool stop their clock after the "
        "environment is destroyed).",
    .sources = {{"sobjectizer_tales22", "Skynet: performance of managing agents"}, {"boost_fiber", "the skynet tables"}},
    .verifies = "the root's sum is leaves*(leaves-1)/2 and the number of agents that reported "
                "equals the size of the tree (499999500000 and 1111111 at the study's 1M leaves)",
    .params = schema(own_params(), Timed::phase_or_lifetime, dispatcher_params()),
    .metrics = metric_schema(own_metrics(), Timed::phase_or_lifetime),
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::skynet
