// savina_uct: Savina's 19. Unbalanced Cobwebbed Tree (uct). A root grows a tree of node agents,
// each node asking the root whether it may have `binomial` children, until the node budget is
// spent; then the tree is traversed from the root down, each node doing its computation, and
// the traversal's tallies come back up. Measures agent creation and a central decider during
// the growth, and a parallel tree walk with uneven work.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_uct {
namespace {

using savina::SplitMix64;

constexpr const char* kName = "savina_uct";
// Savina's tryGenerateChildren busy loop: loop(100, dummy).
constexpr std::uint32_t kTryBusyWait = 100;

struct Setup {
    std::uint32_t nodes;           // the node budget (Savina's MAX_NODES)
    std::uint32_t avg_comp;        // Savina's AVG_COMP_SIZE
    std::uint32_t stdev_comp;      // Savina's STDEV_COMP_SIZE
    std::uint32_t binomial;        // Savina's BINOMIAL_PARAM
    std::uint32_t urgent_percent;  // Savina's URGENT_NODE_PERCENT
    std::uint32_t work_scale;      // LCG steps per unit of Savina's busy loops
    std::uint64_t seed;
};

Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("nodes")),         std::uint32_t(params.integer("avg_comp")),
            std::uint32_t(params.integer("stdev_comp")),    std::uint32_t(params.integer("binomial")),
            std::uint32_t(params.integer("urgent_percent")), std::uint32_t(params.integer("work_scale")),
            std::uint64_t(params.integer("seed"))};
}

// Savina's getNextNormal: java.util.Random's nextGaussian (Marsaglia's polar method, without
// keeping the pair's second value) from `random`, times the deviation plus the mean, rounded as
// Java's Math.round (floor of x + 0.5), drawn again until positive.
std::uint32_t next_normal(SplitMix64& random, std::uint32_t mean, std::uint32_t deviation) {
    std::int64_t result = 0;
    while (result <= 0) {
        double v1 = 0, v2 = 0, s = 0;
        do {
            v1 = 2 * random.unit() - 1;
            v2 = 2 * random.unit() - 1;
            s = v1 * v1 + v2 * v2;
        } while (s >= 1 || s == 0);
        const double gaussian = v1 * std::sqrt(-2 * std::log(s) / s);
        result = std::int64_t(std::floor(gaussian * double(deviation) + double(mean) + 0.5));
    }
    return std::uint32_t(result);
}

// The computation size of the root's own children: the root's draw, from stream 0 (its id).
std::uint32_t root_children_comp(const Setup& s) {
    SplitMix64 random(s.seed, 0);
    return next_normal(random, s.avg_comp, s.stdev_comp);
}

// The root's answer to node `id`'s request, drawn from the node's own stream (seed, id) as
// Savina's root draws from its one generator: a coin (moreChildren), then the children's
// computation size, then a percentage: above urgent_percent the children are plain, otherwise
// one of them, drawn, is urgent. Asked only while the budget holds `binomial` more nodes.
struct Grant {
    bool granted = false;
    std::uint32_t comp = 0;
    bool urgent = false;
    std::uint32_t urgent_child = 0;
};

Grant decide(const Setup& s, std::uint32_t id) {
    SplitMix64 random(s.seed, id);
    Grant g;
    if (random.below(2) == 0) return g;
    g.granted = true;
    g.comp = next_normal(random, s.avg_comp, s.stdev_comp);
    if (random.below(100) > s.urgent_percent) return g;
    g.urgent = true;
    g.urgent_child = std::uint32_t(random.below(s.binomial));
    return g;
}

// A node's computation: Savina's loop(busywait, dummy) as busywait * work_scale LCG steps.
std::uint64_t work(const Setup& s, std::uint32_t busywait) { return savina::busy_work(busywait * s.work_scale); }

// A node's identity folded into one word, summed over the nodes (in any order).
std::uint64_t shape_word(std::uint32_t id, std::uint32_t parent, std::uint32_t depth, std::uint32_t comp,
                         bool urgent) {
    std::uint64_t h = savina::kFnvBasis;
    for (std::uint64_t w : {std::uint64_t(id), std::uint64_t(parent), std::uint64_t(depth), std::uint64_t(comp),
                            std::uint64_t(urgent)})
        h = savina::fnv_fold(h, w);
    return h;
}

// What the traversal gathers from a subtree (the root's own figures added at the top).
struct Totals {
    std::uint64_t nodes = 0;     // non-root nodes traversed
    std::uint64_t leaves = 0;    // of them without children
    std::uint64_t internal = 0;  // of them with children
    std::uint64_t urgent = 0;
    std::uint64_t grants = 0;    // UpdateGrant messages received (the root's included)
    std::uint64_t max_depth = 0;
    std::uint64_t comp_sum = 0;
    std::uint64_t work_sum = 0;    // every busy loop's last LCG state, summed mod 2^64
    std::uint64_t shape_sum = 0;   // shape_word of every node, summed mod 2^64
    std::uint64_t handled = 0;     // messages handled (not part of the answer)

    void add(const Totals& t) {
        nodes += t.nodes;
        leaves += t.leaves;
        internal += t.internal;
        urgent += t.urgent;
        grants += t.grants;
        if (t.max_depth > max_depth) max_depth = t.max_depth;
        comp_sum += t.comp_sum;
        work_sum += t.work_sum;
        shape_sum += t.shape_sum;
        handled += t.handled;
    }
};

std::string describe(const Totals& t, const std::vector<std::uint64_t>& levels) {
    std::string level_nodes;
    for (std::uint64_t n : levels) {
        if (!level_nodes.empty()) level_nodes += ',';
        level_nodes += std::to_string(n);
    }
    char shape[17];
    std::snprintf(shape, sizeof shape, "%016llx", static_cast<unsigned long long>(t.shape_sum));
    return "nodes=" + std::to_string(t.nodes + 1) + " leaves=" + std::to_string(t.leaves) +
           " internal=" + std::to_string(t.internal) + " urgent=" + std::to_string(t.urgent) +
           " grants=" + std::to_string(t.grants) + " height=" + std::to_string(t.max_depth) +
           " level_nodes=" + level_nodes + " comp_sum=" + std::to_string(t.comp_sum) +
           " work_sum=" + std::to_string(t.work_sum) + " shape=" + shape;
}

struct Outcome {
    Totals totals;
    std::vector<std::uint64_t> levels;  // nodes per depth, the root's depth 0 first
};

// The sequential program: the same tree grown breadth-first in one thread (each node's try
// loop, then the root's decision, in id order level by level), then every node's computation in
// id order, with no agents and no messages.
Outcome sequential(const Setup& s) {
    struct Node {
        std::uint32_t parent, depth, comp;
        bool urgent;
        bool has_children = false;
    };
    const std::uint32_t b = s.binomial;
    std::vector<Node> nodes;
    nodes.reserve(s.nodes);
    nodes.push_back({0, 0, 0, false, true});
    const std::uint32_t comp0 = root_children_comp(s);
    for (std::uint32_t i = 0; i < b; ++i) nodes.push_back({0, 1, comp0, false});
    Outcome o;
    Totals& t = o.totals;
    o.levels = {1, b};
    std::uint64_t size = 1 + b, first = 1, count = b;
    while (true) {
        const std::uint64_t next_first = size;
        std::uint64_t granted = 0;
        for (std::uint64_t id = first; id < first + count; ++id) {
            t.work_sum += work(s, kTryBusyWait);
            if (size + b > s.nodes) continue;
            const Grant g = decide(s, std::uint32_t(id));
            if (!g.granted) continue;
            nodes[id].has_children = true;
            for (std::uint32_t i = 0; i < b; ++i)
                nodes.push_back({std::uint32_t(id), nodes[id].depth + 1, g.comp, g.urgent && i == g.urgent_child});
            size += b;
            ++granted;
        }
        if (granted == 0) break;
        first = next_first;
        count = granted * b;
        o.levels.push_back(count);
    }
    for (std::uint32_t id = 1; id < nodes.size(); ++id) {
        const Node& n = nodes[id];
        t.work_sum += work(s, n.comp);
        ++t.nodes;
        if (n.has_children) ++t.internal, ++t.grants;
        else ++t.leaves;
        t.urgent += n.urgent;
        if (n.depth > t.max_depth) t.max_depth = n.depth;
        t.comp_sum += n.comp;
        t.shape_sum += shape_word(id, n.parent, n.depth, n.comp, n.urgent);
    }
    return o;
}

// GenerateTree (kernel -> root); TryGenerateChildren (parent -> new child); ShouldGenerate
// (node -> root); GenerateChildren / UrgentGenerateChildren (root -> node); UpdateGrant (node ->
// parent); Traverse (parent -> child); Tally (child -> parent, the traversal's way back).
class Node;
struct GenerateTree {};
struct TryGenerateChildren {};
struct ShouldGenerate {
    Node* sender;
    std::uint32_t id;
};
struct GenerateChildren {
    std::uint32_t first_id;
    std::uint32_t comp;
};
struct UrgentGenerateChildren {
    std::uint32_t urgent_child;
    std::uint32_t first_id;
    std::uint32_t comp;
};
struct UpdateGrant {
    std::uint32_t child;
};
struct Traverse {};
struct Tally {
    Totals totals;
};

struct Tree {
    const Setup& setup;
    DispatcherChoice& dispatchers;
    rt::Agent* root;
    rt::Completion<Outcome>& done;
};

class Node final : public rt::Agent {
public:
    Node(const Tree& tree, rt::Agent& parent, std::uint32_t parent_id, std::uint32_t id, std::uint32_t depth,
         std::uint32_t comp, bool urgent)
        : tree_(tree), parent_(parent), parent_id_(parent_id), id_(id), depth_(depth), comp_(comp), urgent_(urgent) {
        subscribe<&Node::on_try>();
        subscribe<&Node::on_generate>();
        subscribe<&Node::on_urgent_generate>();
        subscribe<&Node::on_update_grant>();
        subscribe<&Node::on_traverse>();
        subscribe<&Node::on_tally>();
    }

private:
    void on_try(const TryGenerateChildren&) {
        ++totals_.handled;
        totals_.work_sum += work(tree_.setup, kTryBusyWait);
        rt::send<ShouldGenerate>(*tree_.root, this, id_);
    }

    void on_generate(const GenerateChildren& g) {
        ++totals_.handled;
        generate(g.first_id, g.comp, tree_.setup.binomial);
    }

    void on_urgent_generate(const UrgentGenerateChildren& g) {
        ++totals_.handled;
        generate(g.first_id, g.comp, g.urgent_child);
    }

    // Savina's generate(Urgent)Children: tell the parent, make the children (child
    // `urgent_child` urgent; none when it is `binomial`), ask each to try for children.
    void generate(std::uint32_t first_id, std::uint32_t comp, std::uint32_t urgent_child) {
        const std::uint32_t b = tree_.setup.binomial;
        rt::send<UpdateGrant>(parent_, id_ % b);
        children_.reserve(b);
        environment().introduce_coop(tree_.dispatchers.binder(), [&](rt::Coop& coop) {
            for (std::uint32_t i = 0; i < b; ++i)
                children_.push_back(&coop.make_agent_with_binder<Node>(tree_.dispatchers.binder(first_id + i), tree_,
                                                                       *this, id_, first_id + i, depth_ + 1, comp,
                                                                       i == urgent_child));
        });
        for (Node* child : children_) rt::send<TryGenerateChildren>(*child);
    }

    void on_update_grant(const UpdateGrant&) {
        ++totals_.handled;
        ++totals_.grants;
    }

    void on_traverse(const Traverse&) {
        ++totals_.handled;
        totals_.work_sum += work(tree_.setup, comp_);
        ++totals_.nodes;
        if (children_.empty()) ++totals_.leaves;
        else ++totals_.internal;
        totals_.urgent += urgent_;
        if (depth_ > totals_.max_depth) totals_.max_depth = depth_;
        totals_.comp_sum += comp_;
        totals_.shape_sum += shape_word(id_, parent_id_, depth_, comp_, urgent_);
        if (children_.empty()) {
            rt::send<Tally>(parent_, totals_);
            return;
        }
        for (Node* child : children_) rt::send<Traverse>(*child);
    }

    void on_tally(const Tally& tally) {
        ++totals_.handled;
        totals_.add(tally.totals);
        if (++tallies_ == children_.size()) rt::send<Tally>(parent_, totals_);
    }

    const Tree& tree_;
    rt::Agent& parent_;
    const std::uint32_t parent_id_, id_, depth_, comp_;
    const bool urgent_;
    std::vector<Node*> children_;
    std::size_t tallies_ = 0;
    Totals totals_;
};

// The root: makes its children, then answers the nodes' requests breadth-first (a level's
// requests held until the whole level has asked, then answered in id order), then starts the
// traversal when a level has no grant, and sets the answer when its children have tallied.
class Root final : public rt::Agent {
public:
    explicit Root(const Tree& tree) : tree_(tree) {
        subscribe<&Root::on_generate_tree>();
        subscribe<&Root::on_should_generate>();
        subscribe<&Root::on_update_grant>();
        subscribe<&Root::on_tally>();
    }

private:
    void on_generate_tree(const GenerateTree&) {
        ++totals_.handled;
        const Setup& s = tree_.setup;
        const std::uint32_t comp = root_children_comp(s);
        children_.reserve(s.binomial);
        environment().introduce_coop(tree_.dispatchers.binder(), [&](rt::Coop& coop) {
            for (std::uint32_t i = 0; i < s.binomial; ++i)
                children_.push_back(&coop.make_agent_with_binder<Node>(tree_.dispatchers.binder(1 + i), tree_, *this,
                                                                       0u, 1 + i, 1u, comp, false));
        });
        size_ = 1 + s.binomial;
        levels_ = {1, s.binomial};
        open_level(1, s.binomial);
        for (Node* child : children_) rt::send<TryGenerateChildren>(*child);
    }

    void open_level(std::uint64_t first, std::uint64_t count) {
        first_ = first;
        waiting_.assign(count, nullptr);
        asked_ = 0;
    }

    void on_should_generate(const ShouldGenerate& request) {
        ++totals_.handled;
        const std::uint64_t index = std::uint64_t(request.id) - first_;
        if (request.id < first_ || index >= waiting_.size() || waiting_[index] != nullptr)
            throw std::logic_error("savina_uct: a request from node " + std::to_string(request.id) +
                                   " outside the level being grown, or a second one");
        waiting_[index] = request.sender;
        if (++asked_ == waiting_.size()) answer_level();
    }

    void answer_level() {
        const Setup& s = tree_.setup;
        const std::uint64_t next_first = size_;
        std::uint64_t granted = 0;
        for (std::uint64_t index = 0; index < waiting_.size(); ++index) {
            if (size_ + s.binomial > s.nodes) break;  // the budget is spent: no more grants
            const auto id = std::uint32_t(first_ + index);
            const Grant g = decide(s, id);
            if (!g.granted) continue;
            if (g.urgent)
                rt::send<UrgentGenerateChildren>(*waiting_[index], g.urgent_child, std::uint32_t(size_), g.comp);
            else
                rt::send<GenerateChildren>(*waiting_[index], std::uint32_t(size_), g.comp);
            size_ += s.binomial;
            ++granted;
        }
        if (granted == 0) {
            for (Node* child : children_) rt::send<Traverse>(*child);
            return;
        }
        levels_.push_back(granted * s.binomial);
        open_level(next_first, granted * s.binomial);
    }

    void on_update_grant(const UpdateGrant&) {
        ++totals_.handled;
        ++totals_.grants;
    }

    void on_tally(const Tally& tally) {
        ++totals_.handled;
        totals_.add(tally.totals);
        if (++tallies_ == children_.size()) tree_.done.set(Outcome{totals_, levels_});
    }

    const Tree& tree_;
    std::vector<Node*> children_;
    std::uint64_t size_ = 0;
    std::uint64_t first_ = 0;
    std::vector<Node*> waiting_;  // the level's requests by id - first_
    std::uint64_t asked_ = 0;
    std::vector<std::uint64_t> levels_;
    std::size_t tallies_ = 0;
    Totals totals_;
};

// GenerateTree; per non-root node TryGenerateChildren, ShouldGenerate, Traverse and Tally; per
// node granted children a Generate(Urgent)Children and an UpdateGrant.
std::uint64_t messages(const Totals& t) { return 1 + 4 * t.nodes + 2 * t.internal; }

Result run(const Params& params) {
    const Setup s = setup(params);

    MeasuredRun<Outcome> run(params);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    Tree tree{s, dispatchers, nullptr, run.done()};
    Result result;

    // As Savina's runIteration: the root is made inside the phase.
    const Outcome outcome = run.measure(result, [&] {
        Root* root = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            root = &coop.make_agent_with_binder<Root>(dispatchers.binder(0), tree);
        });
        tree.root = root;
        rt::send<GenerateTree>(*root);
    });

    result.messages_processed = outcome.totals.handled;
    result.answer = describe(outcome.totals, outcome.levels);
    const Outcome expected = savina::timed_sequential(result, [&] { return sequential(s); });
    result.expected = describe(expected.totals, expected.levels);
    return result;
}

// At least an agent per node of the tree (their children's lists and the check's tree hold more).
double memory(const Params& params) {
    return double(setup(params).nodes) * sizeof(Node);
}

Expectation expect(const Params& params) {
    const Outcome o = sequential(setup(params));
    return {describe(o.totals, o.levels), messages(o.totals)};
}

void check(const Params& params) {
    const Setup s = setup(params);
    if (std::uint64_t(s.nodes) < 1 + std::uint64_t(s.binomial))
        throw ParamError(kName, "nodes",
                         "parameter 'nodes' must be at least 1 + binomial (the root and its first children, "
                         "which Savina's root always makes); got nodes=" + std::to_string(s.nodes) +
                             ", binomial=" + std::to_string(s.binomial));
    check_thread_per_agent(kName, params, s.nodes, "nodes=" + std::to_string(s.nodes));
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("nodes", 200'000, {2, 2'000'000},
                      "the node budget: the tree grows while it holds `binomial` more nodes (Savina's MAX_NODES)"),
        integer_param("binomial", 10, {1, 1000}, "children of a node granted children (Savina's BINOMIAL_PARAM)"),
        integer_param("avg_comp", 500, {1, 100'000},
                      "mean computation size of a node, drawn per family (Savina's AVG_COMP_SIZE)"),
        integer_param("stdev_comp", 100, {0, 100'000},
                      "standard deviation of the computation size (Savina's STDEV_COMP_SIZE)"),
        integer_param("urgent_percent", 50, {0, 100},
                      "a grant's draw in [0, 100) at most this makes one of the children urgent (Savina's "
                      "URGENT_NODE_PERCENT)"),
        integer_param("work_scale", 1, {1, 1000},
                      "LCG steps per unit of Savina's busy loops: a node's traversal does comp * work_scale "
                      "steps, its try for children 100 * work_scale (Savina: 40,000 loop increments per unit)"),
        integer_param("seed", 2, {0, 4'294'967'295},
                      "seed of the root's draws, node i's from its own stream (seed, i) (Savina's root uses "
                      "java.util.Random(2))"),
    };
}

const Registration registration(Kernel{
    .name = kName,
    .summary = "a root grows a random tree of up to `nodes` node agents, each node asking it for "
               "children, then the tree is traversed with each node's computation: creation, a "
               "central decider and an uneven parallel walk",
    .description =
        "Savina's benchmark 19, Unbalanced Cobwebbed Tree (uct). The root makes `binomial` "
        "children and sends each TryGenerateChildren; a node does its try loop (100 units of "
        "busy work) and asks the root (ShouldGenerate). While the budget holds `binomial` more "
        "nodes, the root draws a coin: on heads it grants the node children (GenerateChildren, or "
        "UrgentGenerateChildren naming one urgent child when a draw in [0, 100) is at most "
        "urgent_percent) with the ids next in line and a computation size drawn from a normal "
        "distribution (avg_comp, stdev_comp, rounded, positive); the node tells its parent "
        "(UpdateGrant), makes its `binomial` children in a coop of their own and sends each "
        "TryGenerateChildren. When the growth is over the root sends Traverse to its children; "
        "each node does its computation (comp units of busy work, each unit work_scale steps of "
        "savina::busy_work) and sends Traverse on to its children; a node's tally (counts and "
        "sums of its subtree) goes back to its parent once its children's have come, and the "
        "phase ends when the root has its children's. The phase covers what Savina's clock "
        "covers less making the actor system: from before the root is made and GenerateTree sent "
        "to the last tally. Messages: GenerateTree, then per non-root node TryGenerateChildren, "
        "ShouldGenerate, Traverse and Tally, and per node granted children a grant and an "
        "UpdateGrant. The parallelism is in the try loops of a level and in the traversal; the "
        "root answers every request alone, as in Savina. Differences from Savina: Savina's root "
        "answers requests as they come, drawing from its one java.util.Random(2), so which nodes "
        "get the budget is decided by the schedule; here the root holds a level's requests until "
        "the whole level has asked and answers them in id order (breadth-first), each node's "
        "draws (coin, size, urgency, urgent child) from its own SplitMix64 stream (seed, id) and "
        "the root's children's size from stream (seed, 0), so the tree's shape is fixed by the "
        "parameters; nextGaussian's polar method is kept but its second value is not reused; "
        "Savina starts the traversal at the first request past the budget while the tree still "
        "grows and ends with Terminate messages and the actor system's shutdown, here the tree "
        "is complete before the traversal (every node traversed once) and the tallies back up "
        "the tree (ours) end it; Savina's GenerateTree, TryGenerateChildren, Traverse and "
        "Terminate are one shared object each (their .ONLY), sent again and again, where each "
        "send here makes its message; Savina's busy loops (busywait x 40,000 empty increments, which "
        "the JIT may remove) are busywait x work_scale LCG steps; urgency only marks nodes, as in "
        "Savina's Akka version, which never sends UrgentTraverse (no priorities here either).",
    .sources = {{"savina", "19. Unbalanced Cobwebbed Tree (uct)"}},
    .verifies = "the number of nodes, leaves, nodes with children, urgent nodes and UpdateGrants, "
                "the height, the nodes per level, the sum of the computation sizes, the sum of every "
                "busy loop's result and a sum of each node's (id, parent, depth, size, urgency), "
                "equal to the sequential program's (the same tree grown and traversed in one thread)",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
    .memory = memory,
});

}  // namespace
}  // namespace labctl::kernels::savina_uct
