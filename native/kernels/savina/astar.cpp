// savina_astar: Savina's 27. A* / Guided Search (astar). A master hands out work items (a grid
// node and its distance from the origin) round robin to `workers` workers; a worker searches
// breadth-first from its node, up to `threshold` nodes, and sends what is left of its queue back
// to the master as new work items, until no work is left. The grid's nodes are shared: a worker
// lowers a node's distance with an atomic compare-and-swap, so the search finds a shortest path
// from the origin to the target whatever the schedule. Measures a master handing out fine
// irregular work to many workers, and the workers' sharing of one data structure.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_astar {
namespace {

constexpr std::uint32_t kNoNode = ~std::uint32_t{0};
// A distance (or a bound) that no path has: a node not reached, a target out of reach.
constexpr std::uint64_t kFar = ~std::uint32_t{0};
// A node's label packs its distance from the origin (high 32 bits) and the node it was reached
// from (low 32 bits): one word, so that both change together.
constexpr std::uint64_t kUnreached = ~std::uint64_t{0};

constexpr std::uint64_t pack(std::uint64_t dist, std::uint32_t parent) noexcept { return (dist << 32) | parent; }
constexpr std::uint64_t dist_of(std::uint64_t label) noexcept { return label >> 32; }
constexpr std::uint32_t parent_of(std::uint64_t label) noexcept { return std::uint32_t(label); }

// The candidate neighbours of node (i, j, k), in Savina's order (its loops over i, j, k in {0, 1}
// less (0, 0, 0) and (1, 1, 1)): each is (i + di, j + dj, k + dk) clamped to the grid.
constexpr int kSteps[6][3] = {{0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {1, 0, 1}, {1, 1, 0}};

// Savina's grid: size^3 nodes, node (i, j, k) numbered size*size*i + size*j + k, each with its
// directed edges to its neighbours (a compressed adjacency list, in the order they were added).
struct Grid {
    std::uint32_t size = 0;
    std::uint32_t nodes = 0;
    std::uint32_t axis = 0;  // the target is (axis, axis, axis)
    std::uint32_t origin = 0;
    std::uint32_t target = 0;
    std::vector<std::uint32_t> first;  // node u's neighbours: next[first[u] .. first[u + 1])
    std::vector<std::uint32_t> next;
    std::uint64_t edge_hash = savina::kFnvBasis;

    // A lower bound on the hops from u to the target (kFar if none can reach it): an edge adds
    // at most 1 to each coordinate and at most 2 to their sum, and none ever lowers one.
    std::uint64_t bound(std::uint32_t u) const noexcept {
        const std::uint32_t i = u / (size * size), j = u / size % size, k = u % size;
        if (i > axis || j > axis || k > axis) return kFar;
        const std::uint32_t di = axis - i, dj = axis - j, dk = axis - k;
        return std::max({di, dj, dk, (di + dj + dk + 1) / 2});
    }

    bool has_edge(std::uint32_t u, std::uint32_t v) const noexcept {
        return std::find(next.begin() + first[u], next.begin() + first[u + 1], v) != next.begin() + first[u + 1];
    }
};

// Savina's GuidedSearchConfig.initializeData: for each node in order of number, each candidate
// neighbour is added if a coin says so (the sixth also when none was added before it, without a
// coin), unless the clamp made it the node itself or it is already there. Savina's coins come
// from java.util.Random(123456); ours are the top bits of SplitMix64(seed, 0)'s values.
Grid make_grid(std::uint32_t size, std::uint64_t seed) {
    Grid g;
    g.size = size;
    g.nodes = size * size * size;
    g.axis = std::uint32_t(0.80 * double(size));  // Savina's (int) (0.80 * GRID_SIZE)
    g.target = (g.axis * size + g.axis) * size + g.axis;
    g.first.assign(g.nodes + 1, 0);
    g.next.reserve(std::size_t(g.nodes) * 3);
    savina::SplitMix64 random(seed, 0);
    for (std::uint32_t u = 0; u < g.nodes; ++u) {
        const std::uint32_t i = u / (size * size), j = u / size % size, k = u % size;
        std::uint32_t added = 0;
        for (int s = 0; s < 6; ++s) {
            const bool add = (s == 5 && added == 0) || (random.next() >> 63) != 0;
            if (!add) continue;
            const std::uint32_t ni = std::min(size - 1, i + kSteps[s][0]);
            const std::uint32_t nj = std::min(size - 1, j + kSteps[s][1]);
            const std::uint32_t nk = std::min(size - 1, k + kSteps[s][2]);
            const std::uint32_t v = (ni * size + nj) * size + nk;
            if (v == u || std::find(g.next.begin() + g.first[u], g.next.end(), v) != g.next.end()) continue;
            g.next.push_back(v);
            g.edge_hash = savina::fnv_fold(g.edge_hash, (std::uint64_t(u) << 32) | v);
            ++added;
        }
        g.first[u + 1] = std::uint32_t(g.next.size());
    }
    return g;
}

// The workers' labels: one atomic word per node. Relaxed throughout: a label publishes nothing
// but itself (the grid is built before the phase and never changes), each decision reads and
// swaps one word, and the kernel reads them after the phase, which the completion orders after
// every handler.
class SharedLabels {
public:
    SharedLabels(std::uint32_t nodes, std::uint32_t origin) : labels_(nodes) {
        for (auto& label : labels_) label.store(kUnreached, std::memory_order_relaxed);
        labels_[origin].store(pack(0, kNoNode), std::memory_order_relaxed);
    }
    std::uint64_t label(std::uint32_t u) const noexcept { return labels_[u].load(std::memory_order_relaxed); }
    std::uint64_t dist(std::uint32_t u) const noexcept { return dist_of(label(u)); }
    // Lowers v's distance to `dist`, reached from u, if that is shorter than its own.
    bool lower(std::uint32_t v, std::uint64_t dist, std::uint32_t u) noexcept {
        std::uint64_t seen = labels_[v].load(std::memory_order_relaxed);
        while (dist_of(seen) > dist)
            if (labels_[v].compare_exchange_weak(seen, pack(dist, u), std::memory_order_relaxed,
                                                 std::memory_order_relaxed))
                return true;
        return false;
    }

private:
    std::vector<std::atomic<std::uint64_t>> labels_;
};

// The sequential program's labels: plain words.
class PlainLabels {
public:
    PlainLabels(std::uint32_t nodes, std::uint32_t origin) : labels_(nodes, kUnreached) {
        labels_[origin] = pack(0, kNoNode);
    }
    std::uint64_t label(std::uint32_t u) const noexcept { return labels_[u]; }
    std::uint64_t dist(std::uint32_t u) const noexcept { return dist_of(labels_[u]); }
    bool lower(std::uint32_t v, std::uint64_t dist, std::uint32_t u) noexcept {
        if (dist_of(labels_[v]) <= dist) return false;
        labels_[v] = pack(dist, u);
        return true;
    }

private:
    std::vector<std::uint64_t> labels_;
};

struct Item {
    std::uint32_t node;
    std::uint32_t dist;
};

// The synthetic work per expanded node, in place of Savina's busy-wait (100 calls of
// Math.random()); the empty asm hides `steps` from the optimizer, so that the loop is neither
// folded nor hoisted out of the search.
inline std::uint64_t busy(std::uint32_t steps) noexcept {
    asm volatile("" : "+r"(steps));
    return savina::busy_work(steps);
}

struct Searcher {
    const Grid& grid;
    std::uint32_t threshold;
    std::uint32_t work;
    std::deque<Item> queue = {};
    std::uint64_t expanded = 0;
    std::uint64_t sink = 0;

    // Savina's Worker.search with distances: breadth-first from the item, expanding at most
    // `threshold` nodes, each neighbour queued when its distance was lowered; a queued node
    // whose distance was lowered since (by another search) is skipped, and so is one whose
    // distance plus its bound cannot beat the target's distance so far. The queue's rest, less
    // those, goes to `emit` as new work items.
    template <class Labels, class Emit>
    void search(Labels& labels, Item item, Emit&& emit) {
        queue.clear();
        queue.push_back(item);
        std::uint32_t done = 0;
        while (!queue.empty() && done < threshold) {
            const Item at = queue.front();
            queue.pop_front();
            if (!live(labels, at)) continue;
            ++done;
            sink += busy(work);
            for (std::uint32_t e = grid.first[at.node]; e < grid.first[at.node + 1]; ++e) {
                const std::uint32_t v = grid.next[e];
                const std::uint64_t dist = std::uint64_t(at.dist) + 1;
                if (dist + grid.bound(v) >= labels.dist(grid.target)) continue;
                if (labels.lower(v, dist, at.node) && v != grid.target) queue.push_back({v, std::uint32_t(dist)});
            }
        }
        expanded += done;
        for (const Item& rest : queue)
            if (live(labels, rest)) emit(rest);
    }

    template <class Labels>
    bool live(const Labels& labels, Item at) const noexcept {
        return labels.dist(at.node) == at.dist && at.dist + grid.bound(at.node) < labels.dist(grid.target);
    }
};

struct Answer {
    bool reachable = false;
    std::uint64_t length = 0;
    bool valid = false;
};

// The path the labels hold, walked back from the target: valid if each step is an edge of the
// grid, it ends at the origin and it has as many steps as the target's distance.
template <class Labels>
Answer walk(const Grid& g, const Labels& labels) {
    Answer a;
    const std::uint64_t dist = labels.dist(g.target);
    if (dist == kFar) return a;
    a.reachable = true;
    a.valid = true;
    std::uint32_t v = g.target;
    while (v != g.origin && a.valid) {
        const std::uint32_t u = parent_of(labels.label(v));
        a.valid = u < g.nodes && g.has_edge(u, v) && a.length < dist;
        ++a.length;
        v = u;
    }
    a.valid = a.valid && a.length == dist;
    return a;
}

std::string describe(const Grid& g, const Answer& a) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(g.edge_hash));
    return "edges=" + std::to_string(g.next.size()) + " edge_hash=" + hash + " reachable=" +
           std::to_string(a.reachable ? 1 : 0) + " path_length=" + std::to_string(a.length) +
           " path_valid=" + std::to_string(a.valid ? 1 : 0);
}

struct Setup {
    std::uint32_t workers;
    std::uint32_t size;
    std::uint32_t threshold;
    std::uint32_t work;
    std::uint64_t seed;
};

Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("workers")), std::uint32_t(params.integer("grid_size")),
            std::uint32_t(params.integer("threshold")), std::uint32_t(params.integer("work")),
            std::uint64_t(params.integer("seed"))};
}

// The sequential program: the same search with one searcher and a plain queue of work items in
// place of the master and its messages.
struct Sequential {
    std::string answer;
    std::uint64_t sink;
};

Sequential sequential(const Grid& g, const Setup& s) {
    PlainLabels labels(g.nodes, g.origin);
    Searcher searcher{g, s.threshold, s.work};
    std::deque<Item> items{{g.origin, 0}};
    while (!items.empty()) {
        const Item item = items.front();
        items.pop_front();
        searcher.search(labels, item, [&items](Item rest) { items.push_back(rest); });
    }
    return {describe(g, walk(g, labels)), searcher.sink};
}

// Start (kernel -> master), Work (master -> worker), Found (worker -> master: a new work item),
// Searched (worker -> master: an item done, with the count of items it sent).
struct Start {};
struct Work {
    Item item;
};
struct Found {
    Item item;
};
struct Searched {
    std::uint64_t found;
    std::uint64_t expanded;
};

struct Outcome {
    std::uint64_t items = 0;     // work items handed out (the origin's and every Found)
    std::uint64_t expanded = 0;  // nodes expanded, over all searches
    std::uint64_t handled = 0;   // by the master
};

class Worker;

class Master final : public rt::Agent {
public:
    Master(std::uint32_t origin, rt::Completion<Outcome>& done) : origin_(origin), done_(done) {
        subscribe<&Master::on_start_message>();
        subscribe<&Master::on_found>();
        subscribe<&Master::on_searched>();
    }
    void link(std::vector<Worker*> workers) { workers_ = std::move(workers); }

private:
    void on_start_message(const Start&) {
        ++outcome_.handled;
        hand_out({origin_, 0});
    }

    void on_found(const Found& found) {
        ++outcome_.handled;
        ++arrived_;
        hand_out(found.item);
    }

    // Every item handed out was searched, and every item those searches found has arrived and
    // was handed out (which does not rest on the order in which two agents' messages arrive).
    void on_searched(const Searched& searched) {
        ++outcome_.handled;
        ++searched_;
        announced_ += searched.found;
        outcome_.expanded += searched.expanded;
        if (searched_ == outcome_.items && arrived_ == announced_) done_.set(outcome_);
    }

    // Savina's Master.sendWork: round robin over the workers.
    void hand_out(Item item);

    const std::uint32_t origin_;
    rt::Completion<Outcome>& done_;
    std::vector<Worker*> workers_;
    std::uint64_t arrived_ = 0;    // Found messages
    std::uint64_t announced_ = 0;  // Found messages the Searched ones counted
    std::uint64_t searched_ = 0;
    Outcome outcome_;
};

class Worker final : public rt::Agent {
public:
    Worker(Master& master, const Grid& grid, SharedLabels& labels, std::uint32_t threshold, std::uint32_t work)
        : master_(master), labels_(labels), searcher_{grid, threshold, work} {
        subscribe<&Worker::on_work>();
    }
    // Read after the run.
    std::uint64_t handled() const noexcept { return handled_; }
    std::uint64_t sink() const noexcept { return searcher_.sink; }

private:
    void on_work(const Work& work) {
        ++handled_;
        std::uint64_t found = 0;
        const std::uint64_t before = searcher_.expanded;
        searcher_.search(labels_, work.item, [this, &found](Item rest) {
            rt::send<Found>(master_, rest);
            ++found;
        });
        rt::send<Searched>(master_, found, searcher_.expanded - before);
    }

    Master& master_;
    SharedLabels& labels_;
    Searcher searcher_;
    std::uint64_t handled_ = 0;
};

void Master::hand_out(Item item) {
    rt::send<Work>(*workers_[outcome_.items % workers_.size()], item);
    ++outcome_.items;
}

volatile std::uint64_t g_sink;  // the synthetic work's results, so that no compiler drops it

Result run(const Params& params) {
    const Setup s = setup(params);
    const Grid grid = make_grid(s.size, s.seed);
    SharedLabels labels(grid.nodes, grid.origin);

    std::vector<Worker*> workers;
    MeasuredRun<Outcome> run(params);
    Result result;

    // As Savina's runIteration: the master and the workers are made inside the phase, each in a
    // coop of its own (a coop's agents may share one queue), then the master is started.
    const Outcome outcome = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        Master* master = nullptr;
        env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
            master = &coop.make_agent<Master>(grid.origin, run.done());
        });
        workers.resize(s.workers, nullptr);
        for (std::uint32_t i = 0; i < s.workers; ++i)
            env.introduce_coop(dispatchers.binder(1 + i), [&](rt::Coop& coop) {
                workers[i] = &coop.make_agent<Worker>(*master, grid, labels, s.threshold, s.work);
            });
        master->link(workers);
        rt::send<Start>(*master);
    });

    std::uint64_t handled = outcome.handled, sink = 0;
    for (const Worker* worker : workers) {
        handled += worker->handled();
        sink += worker->sink();
    }
    result.messages_processed = handled;
    result.answer = describe(grid, walk(grid, labels));
    const Sequential expected = savina::timed_sequential(result, [&] { return sequential(grid, s); });
    result.expected = expected.answer;
    g_sink = sink + expected.sink;
    result.metrics.push_back({"work_items", double(outcome.items)});
    result.metrics.push_back({"nodes_expanded", double(outcome.expanded)});
    return result;
}

void check(const Params& params) {
    const auto workers = params.integer("workers");
    check_thread_per_agent("savina_astar", params, std::uint64_t(workers) + 1, "workers=" + std::to_string(workers));
}

// Start, then per work item a Work and a Searched, and per item but the origin's a Found: 3 per
// item. The items depend on the schedule: one where a search covers the grid, else about one per
// 8 nodes of the part of the grid that can reach the target (7.5 at Savina's sizes).
double work(const Params& params) {
    const double size = double(params.integer("grid_size"));
    if (double(params.integer("threshold")) >= size * size * size) return 3;
    const double side = double(std::uint32_t(0.80 * size)) + 1;
    return 3 * std::max(1.0, side * side * side / 8);
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("workers", 20, {1, 100'000}, "workers the master hands work items to, round robin (Savina's W)"),
        integer_param("grid_size", 30, {2, 248},
                      "the grid's side: grid_size^3 nodes, the origin (0, 0, 0), the target at "
                      "(int) (0.8 * grid_size) on each axis (Savina's G, at most its 248)"),
        integer_param("threshold", 1'024, {1, 1'000'000'000},
                      "nodes a worker expands from one work item before it sends the rest of its queue "
                      "back as new work items (Savina's T)"),
        integer_param("work", 100, {0, 1'000'000},
                      "steps of synthetic work per expanded node, in place of Savina's busy-wait of 100 "
                      "calls of Math.random()"),
        integer_param("seed", 123'456, {0, 4'294'967'295},
                      "the grid's generator, SplitMix64 (Savina draws the grid from java.util.Random(123456))"),
    };
}

const Registration registration(Kernel{
    .name = "savina_astar",
    .summary = "a master hands grid nodes round robin to `workers` workers, each searching up to "
               "`threshold` nodes breadth-first and sending its queue's rest back as work, until a "
               "shortest path to the target is known: irregular parallel work from one master",
    .description =
        "Savina's benchmark 27, A* / Guided Search (astar), its non-priority Akka version. The "
        "grid: grid_size^3 nodes; node (i, j, k) has directed edges to some of (i, j, k+1), "
        "(i, j+1, k), (i, j+1, k+1), (i+1, j, k), (i+1, j, k+1) and (i+1, j+1, k), each clamped "
        "to the grid, as Savina draws them: in node order a coin per candidate, the last one "
        "added without a coin where no other was, a candidate equal to the node or already "
        "added left out. The origin is (0, 0, 0), the target (a, a, a) with a = (int) (0.8 * "
        "grid_size). A master hands out work items (a node and its distance from the origin) "
        "round robin to `workers` workers (Work); a worker searches breadth-first from the item's "
        "node, expanding up to `threshold` nodes (each with `work` steps of synthetic work), "
        "then sends each node still queued back to the master as a new work item (Found), and "
        "says it is done with the count it sent (Searched); the master hands each new item out. "
        "Each node holds its distance and the node it was reached from in one word, shared by "
        "the workers and lowered by compare-and-swap; a neighbour is queued when its distance "
        "was lowered, a queued node is skipped when its distance was lowered since, and a node "
        "whose distance plus a lower bound on its hops to the target (an edge raises each "
        "coordinate by at most 1 and their sum by at most 2) cannot beat the target's distance "
        "so far is pruned. The run ends when every item was searched and every item found was "
        "handed out: the target's distance is then the shortest. Messages: Start, and per work "
        "item a Work and a Searched, per item but the first a Found (3 per item); the items, and "
        "the nodes expanded, depend on the schedule and are the metrics work_items and "
        "nodes_expanded. The phase covers making the master and the workers (a coop each) and "
        "the whole search; the grid is built before it. The sequential program (sequential_ns): "
        "the same search with one searcher and a plain queue of work items, no messages. "
        "Scaling: every item goes through the one master, and most items are small (the region "
        "around them already searched), so the master's forwarding bounds the speed-up. "
        "Differences from Savina: the grid's coins come from SplitMix64 (`seed`), not "
        "java.util.Random(123456); Savina's non-priority version (our runtime has no priority "
        "mailboxes, so its priorities P and granularity are not used); Savina's search stops at "
        "the first path found, which the schedule decides and need not be shortest (each node "
        "keeps the first parent set), ours lowers distances until no work is left and prunes "
        "by the bound, so it finds a shortest path, and a work item carries its node's distance; "
        "a skipped node does not count toward `threshold`; a Searched message carries the count "
        "of items found, so the end does not rest on message order; a node's busy-wait is "
        "less work here: `work` = 100 steps of a 64-bit LCG (about 1 ns a step) where Savina "
        "calls Math.random() 100 times, each two compare-and-swaps on the one seed every "
        "thread shares (a C++ stand-in took 9.6 ns a call on one thread, 18 ns with two "
        "threads calling at once, on a busy 2-vCPU machine), so Savina's node costs about 9 "
        "times ours uncontended and 17 or more with workers contending, which ours never do "
        "(work = 900 gives a node Savina's uncontended cost); no Stop messages (the "
        "environment stops the agents after the phase); Savina's clock also covers making the "
        "actor system.",
    .sources = {{"savina", "27. A* / Guided Search (astar)"}},
    .verifies = "the path found, walked back from the target, is made of the grid's edges and "
                "reaches the origin in as many steps as the target's distance, which equals the "
                "sequential search's; the grid's edge count and hash",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric(), {.name = "work_items"}, {.name = "nodes_expanded"}},
    .check = check,
    .run = run,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::savina_astar
