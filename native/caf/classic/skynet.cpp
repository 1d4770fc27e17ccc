// caf_skynet: skynet on CAF 0.17. A tree of actors, each node spawning `branching` children
// down to `leaves` leaves; each leaf sends its ordinal up and each node the sum of its
// children. Measures the cost of spawning (and, with deregister, terminating) actors.
#include <cstdint>
#include <vector>

#include "../../kernels/classic/skynet.hpp"
#include "../../kernels/framework/phase.hpp"
#include "../../kernels/framework/schema.hpp"
#include "../run.hpp"

// CAF finds a message type's inspect by argument-dependent lookup: in the type's own namespace.
namespace labctl::kernels::skynet {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Subtotal& x) {
    return f(caf::meta::type_name("Subtotal"), x.sum, x.agents);
}

}  // namespace labctl::kernels::skynet

namespace labctl::kernels::caf_skynet {
namespace {

using skynet::Split;
using skynet::Subtotal;

// After the phase: a node passes it to its children and quits, so that the whole tree ends.
struct Stop {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Stop&) {
    return f(caf::meta::type_name("Stop"));
}

struct Tree {
    caf_support::CafRun& run;
    std::uint64_t branching;
    bool deregister;
    rt::Completion<Subtotal>& answer;
};

// A node covering the leaves [first, first + count).
class Node final : public caf::event_based_actor {
public:
    Node(caf::actor_config& config, const Tree& tree, caf::actor parent, std::uint64_t first, std::uint64_t count)
        : caf::event_based_actor(config), tree_(tree), parent_(std::move(parent)), first_(first), count_(count) {
        tree_.run.watch(*this);
    }

    caf::behavior make_behavior() override {
        if (count_ == 1) {
            report({first_, 1});
            // A behavior set after quit() would keep the actor alive: none, if it has quit.
            if (tree_.deregister) return {};
            return {[this](const Stop&) { stop(); }};
        }
        const Split split(count_, tree_.branching);
        // Without deregister the tree outlives the phase, and a node keeps its children's
        // handles to stop them after it; with it, each child quits once it has reported.
        if (!tree_.deregister) children_.reserve(split.children);
        std::uint64_t first = first_;
        for (std::uint64_t i = 0; i < split.children; ++i) {
            const std::uint64_t size = split.size(i);
            caf::actor child = spawn<Node>(std::cref(tree_), caf::actor(this), first, size);
            if (!tree_.deregister) children_.push_back(std::move(child));
            first += size;
        }
        subtotals_.expect(split.children);
        return {
            [this](const Subtotal& subtotal) { on_subtotal(subtotal); },
            [this](const Stop&) { stop(); },
        };
    }

    // Parent and children hold handles to each other: let go of them, or none is ever freed.
    void on_exit() override {
        parent_ = nullptr;
        children_.clear();
    }

private:
    void on_subtotal(const Subtotal& subtotal) {
        if (subtotals_.add(subtotal)) report(subtotals_.total());
    }

    void report(Subtotal subtotal) {
        if (parent_ != nullptr) send(parent_, subtotal);
        else tree_.answer.set(subtotal);
        if (tree_.deregister) quit();
    }

    void stop() {
        for (const caf::actor& child : children_) send(child, Stop{});
        quit();
    }

    const Tree& tree_;
    caf::actor parent_;  // none for the root
    const std::uint64_t first_;
    const std::uint64_t count_;
    std::vector<caf::actor> children_;
    skynet::Subtotals subtotals_;
};

Result run(const Params& params) {
    const auto leaves = std::uint64_t(params.integer("leaves"));
    const auto branching = std::uint64_t(params.integer("branching"));
    const bool deregister = params.boolean("deregister");

    Lifetime lifetime(params);
    std::vector<std::int64_t> thread_lives;
    Result result;
    Subtotal total{};
    {
        rt::Completion<Subtotal> answer;
        caf_support::CafRun caf(params, answer);
        caf.report_thread_lives(thread_lives);
        const Tree tree{caf, branching, deregister, answer};

        caf_support::CafPhase phase(caf);
        const caf::actor root = caf.system().spawn<Node>(std::cref(tree), caf::actor(), std::uint64_t{0}, leaves);
        total = caf.await(answer);
        if (deregister) {
            // Every actor has quit after reporting: the phase ends when CAF has terminated them all.
            caf.await_all_actors_done();
            phase.finish(result);
        } else {
            phase.finish(result, answer.completed_at());
            caf::anon_send(root, Stop{});  // outside the phase: ends the tree
        }
        caf.stop();
    }  // the actor system goes with `caf`, after the handles made since
    lifetime.end(result, std::move(thread_lives));

    skynet::report(result, total, leaves, branching);
    lifetime.add_phase_metric(result);
    return result;
}

const Registration registration(Kernel{
    .name = "caf_skynet",
    .summary = "skynet on CAF 0.17: a tree of `leaves` leaf actors summing their ordinals",
    .description =
        "As skynet, on CAF 0.17: the root actor spawns `branching` children (CAF's spawn from "
        "inside the actor), each child does the same, down to `leaves` leaves; each leaf sends "
        "its ordinal (0..leaves-1) to its parent, each node sends the sum of its children up. "
        "The phase starts before the root is spawned. With deregister=true each actor quits "
        "once it has reported (CAF has no coops: an actor ends itself), and the phase ends "
        "when CAF has terminated every actor; otherwise it ends when the root has the sum, and "
        "the tree is stopped after it (each node then passes a Stop message to its children). "
        "The actor system's start and shutdown are outside the phase; with clock=lifetime "
        "elapsed_ns runs from before the actor system is made to after it is destroyed (its "
        "threads started, every actor terminated, every thread joined), the phase then "
        "reported as the metric phase_ns.",
    .sources = {{"sobjectizer_tales22", "Skynet: performance of managing agents"}, {"boost_fiber", "the skynet tables"}},
    .verifies = "the root's sum is leaves*(leaves-1)/2 and the number of actors that reported "
                "equals the size of the tree (499999500000 and 1111111 at the study's 1M leaves)",
    .params = schema(skynet::own_params(), Timed::phase_or_lifetime, caf_support::scheduler_params()),
    .metrics = metric_schema(skynet::own_metrics(), Timed::phase_or_lifetime),
    .check = {},
    .run = run,
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_skynet
