// savina_apsp: Savina's 25. All-Pairs Shortest Path (apsp). Floyd-Warshall over a complete graph
// of `nodes` nodes, its distance matrix cut into blocks of block_size x block_size, an agent per
// block: in each of the `nodes` iterations a block sends its new values to every block of its row
// and of its column, and computes the next iteration once it has theirs. Measures many agents in
// lock step, each iteration's work a block's worth of min-plus updates.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <memory>
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

namespace labctl::kernels::savina_apsp {
namespace {

constexpr const char* kKernel = "savina_apsp";

struct Setup {
    std::uint32_t nodes;       // Savina's N
    std::uint32_t block_size;  // Savina's B
    std::uint32_t max_weight;  // Savina's W
    std::uint32_t per_dim() const noexcept { return nodes / block_size; }
};

Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("nodes")), std::uint32_t(params.integer("block_size")),
            std::uint32_t(params.integer("max_weight"))};
}

using Matrix = std::vector<std::int64_t>;  // row-major, nodes x nodes

// Savina's ApspUtils.generateGraph: a complete graph, the weight of edge {i, j} (i < j) drawn
// from Savina's PseudoRandom seeded with the node count, in row order: nextInt(W) + 1.
Matrix graph(const Setup& s) {
    Matrix m(std::size_t(s.nodes) * s.nodes, 0);
    savina::PseudoRandom random(s.nodes);
    for (std::uint32_t i = 0; i < s.nodes; ++i)
        for (std::uint32_t j = i + 1; j < s.nodes; ++j) {
            const std::int64_t w = std::int64_t(random.next(s.max_weight)) + 1;
            m[std::size_t(i) * s.nodes + j] = w;
            m[std::size_t(j) * s.nodes + i] = w;
        }
    return m;
}

// The sequential program: Floyd-Warshall in place, one thread.
Matrix floyd_warshall(Matrix d, std::uint32_t n) {
    for (std::uint32_t k = 0; k < n; ++k) {
        const std::int64_t* row_k = d.data() + std::size_t(k) * n;
        for (std::uint32_t i = 0; i < n; ++i) {
            std::int64_t* row_i = d.data() + std::size_t(i) * n;
            const std::int64_t ik = row_i[k];
            for (std::uint32_t j = 0; j < n; ++j) {
                const std::int64_t through = ik + row_k[j];
                if (through < row_i[j]) row_i[j] = through;
            }
        }
    }
    return d;
}

std::string describe(const Matrix& d, std::uint32_t n) {
    std::uint64_t hash = savina::kFnvBasis;
    std::int64_t sum = 0, max = 0;
    for (std::int64_t v : d) {
        hash = savina::fnv_fold(hash, std::uint64_t(v));
        sum += v;
        if (v > max) max = v;
    }
    char text[160];
    std::snprintf(text, sizeof text, "nodes=%u dist_hash=%016llx dist_sum=%lld dist_max=%lld", n,
                  static_cast<unsigned long long>(hash), static_cast<long long>(sum), static_cast<long long>(max));
    return text;
}

// The slot of block (r, c), of block (bi, bj)'s row or column, in (bi, bj)'s list of neighbours:
// the column's other blocks first (r = 0.. less bi), then the row's (c = 0.. less bj).
std::uint32_t slot_in(std::uint32_t per_dim, std::uint32_t bi, std::uint32_t bj, std::uint32_t r,
                      std::uint32_t c) noexcept {
    if (c == bj) return r < bi ? r : r - 1;
    return (per_dim - 1) + (c < bj ? c : c - 1);
}

// A block's values after an iteration, shared by the blocks it is sent to (never changed once
// sent: each iteration makes a fresh one, as Savina's).
using Block = std::shared_ptr<const std::vector<std::int64_t>>;

// Start (kernel -> each block); Values (a block's values after iteration k, k = -1 for the
// graph's, to each block of its row and column); Final (each block's last values -> collector).
struct Start {};
struct Values {
    std::int32_t k;
    std::uint32_t from;  // the sender's slot among the receiver's neighbours
    Block block;
};
struct Final {
    std::uint32_t id;
    Block block;
};

struct Outcome {
    std::vector<Block> blocks;  // by block id
    std::uint64_t finals = 0;
};

class Collector final : public rt::Agent {
public:
    Collector(std::uint32_t blocks, rt::Completion<Outcome>& done, StartLatch& started)
        : done_(done), started_(started) {
        outcome_.blocks.resize(blocks);
        subscribe<&Collector::on_final>();
    }

private:
    void on_start() override { started_.count_down(); }
    void on_final(const Final& f) {
        ++outcome_.finals;
        if (f.id < outcome_.blocks.size() && !outcome_.blocks[f.id]) outcome_.blocks[f.id] = f.block;
        if (outcome_.finals == outcome_.blocks.size()) done_.set(std::move(outcome_));
    }

    rt::Completion<Outcome>& done_;
    StartLatch& started_;
    Outcome outcome_;
};

class BlockAgent final : public rt::Agent {
public:
    BlockAgent(const Setup& s, std::uint32_t id, const Matrix& g, Collector& collector, StartLatch& started)
        : s_(s), id_(id), bi_(id / s.per_dim()), bj_(id % s.per_dim()), collector_(collector), started_(started) {
        // Savina's ApspUtils.getBlock: this block's part of the graph.
        auto block = std::make_shared<std::vector<std::int64_t>>(std::size_t(s.block_size) * s.block_size);
        for (std::uint32_t i = 0; i < s.block_size; ++i)
            for (std::uint32_t j = 0; j < s.block_size; ++j)
                (*block)[std::size_t(i) * s.block_size + j] =
                    g[std::size_t(bi_ * s.block_size + i) * s.nodes + bj_ * s.block_size + j];
        current_ = std::move(block);
        subscribe<&BlockAgent::on_start_message>();
        subscribe<&BlockAgent::on_values>();
    }

    // Savina's neighbours: the other blocks of this block's column, then of its row. `slots` are
    // this block's slot in each neighbour's list (where its values go there).
    void link(std::vector<BlockAgent*> neighbours, std::vector<std::uint32_t> slots) {
        neighbours_ = std::move(neighbours);
        slots_ = std::move(slots);
        for (auto& held : held_) held.assign(neighbours_.size(), nullptr);
    }

private:
    void on_start() override { started_.count_down(); }

    void on_start_message(const Start&) {
        started_now_ = true;
        notify();
        advance();
    }

    void on_values(const Values& v) {
        // A block is at most one iteration ahead of its neighbours: it needs this block's values
        // of iteration k to compute k + 1. (Savina keeps one map by sender, which an early
        // neighbour's next values can overwrite; ours keeps the two iterations apart.)
        if (v.k != k_ && v.k != k_ + 1)
            throw std::logic_error("savina_apsp: block " + std::to_string(id_) + " at iteration " + std::to_string(k_) +
                                   " got the values of iteration " + std::to_string(v.k));
        auto& held = held_[parity(v.k)];
        if (v.from >= held.size() || held[v.from])
            throw std::logic_error("savina_apsp: a neighbour's values came twice for one iteration");
        held[v.from] = v.block;
        ++count_[parity(v.k)];
        if (started_now_) advance();
    }

    static std::size_t parity(std::int32_t k) noexcept { return std::size_t(k + 1) & 1; }

    // Computes the next iterations while every neighbour's values of the last one are here.
    void advance() {
        const std::int32_t last = std::int32_t(s_.nodes) - 1;
        while (k_ < last && count_[parity(k_)] == neighbours_.size()) {
            compute(k_ + 1);
            auto& held = held_[parity(k_)];
            for (auto& b : held) b.reset();
            count_[parity(k_)] = 0;
            ++k_;
            if (k_ < last) notify();  // the last values no neighbour needs: to the collector
            else rt::send<Final>(collector_, id_, current_);
        }
    }

    // The values of iteration k from those of k - 1: d[i][j] = min(d[i][j], d[i][k] + d[k][j]).
    void compute(std::int32_t k) {
        const std::uint32_t b = s_.block_size;
        const std::uint32_t kb = std::uint32_t(k) / b, kk = std::uint32_t(k) % b;
        const std::vector<std::int64_t>& prev = *current_;
        // d[i][k] lies in block (bi, kb) of this row; d[k][j] in block (kb, bj) of this column.
        const std::uint32_t per_dim = s_.per_dim();
        const auto& held = held_[parity(k - 1)];
        const std::vector<std::int64_t>& col_k = kb == bj_ ? prev : *held[slot_in(per_dim, bi_, bj_, bi_, kb)];
        const std::vector<std::int64_t>& row_k = kb == bi_ ? prev : *held[slot_in(per_dim, bi_, bj_, kb, bj_)];
        auto next = std::make_shared<std::vector<std::int64_t>>(std::size_t(b) * b);
        const std::int64_t* krow = row_k.data() + std::size_t(kk) * b;
        for (std::uint32_t i = 0; i < b; ++i) {
            const std::int64_t ik = col_k[std::size_t(i) * b + kk];
            const std::int64_t* from = prev.data() + std::size_t(i) * b;
            std::int64_t* to = next->data() + std::size_t(i) * b;
            for (std::uint32_t j = 0; j < b; ++j) {
                const std::int64_t through = ik + krow[j];
                to[j] = through < from[j] ? through : from[j];
            }
        }
        current_ = std::move(next);
    }

    void notify() {
        for (std::size_t n = 0; n < neighbours_.size(); ++n) rt::send<Values>(*neighbours_[n], k_, slots_[n], current_);
    }

    const Setup s_;
    const std::uint32_t id_, bi_, bj_;
    Collector& collector_;
    StartLatch& started_;
    std::vector<BlockAgent*> neighbours_;
    std::vector<std::uint32_t> slots_;
    Block current_;
    std::int32_t k_ = -1;  // the last iteration computed (-1: the graph's values)
    bool started_now_ = false;
    std::vector<Block> held_[2];     // neighbours' values of iterations k_ and k_ + 1, by parity
    std::size_t count_[2] = {0, 0};  // how many of each are here
};

// Per block: its Start, its values to 2 (per_dim - 1) neighbours in each of `nodes` iterations
// (the graph's and the first nodes - 1 computed), its Final.
std::uint64_t messages(const Setup& s) {
    const std::uint64_t blocks = std::uint64_t(s.per_dim()) * s.per_dim();
    return blocks * (2 + std::uint64_t(s.nodes) * 2 * (s.per_dim() - 1));
}

Result run(const Params& params) {
    const Setup s = setup(params);
    const Matrix g = graph(s);  // before the phase, as Savina's initialize
    const std::uint32_t per_dim = s.per_dim(), blocks = per_dim * per_dim;

    StartLatch started(blocks + 1);
    MeasuredRun<Outcome> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();

    // As Savina's runIteration, the block agents made and linked to their row and column; ours
    // before the phase.
    std::vector<BlockAgent*> agents;
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        Collector& collector = coop.make_agent_with_binder<Collector>(dispatchers.binder(blocks), blocks, run.done(), started);
        for (std::uint32_t id = 0; id < blocks; ++id)
            agents.push_back(&coop.make_agent_with_binder<BlockAgent>(dispatchers.binder(id), s, id, g, collector, started));
        // Each block's neighbours, and its slot in each neighbour's list.
        for (std::uint32_t bi = 0; bi < per_dim; ++bi)
            for (std::uint32_t bj = 0; bj < per_dim; ++bj) {
                std::vector<BlockAgent*> neighbours;
                std::vector<std::uint32_t> slots;
                for (std::uint32_t r = 0; r < per_dim; ++r)
                    if (r != bi) {
                        neighbours.push_back(agents[r * per_dim + bj]);
                        slots.push_back(slot_in(per_dim, r, bj, bi, bj));
                    }
                for (std::uint32_t c = 0; c < per_dim; ++c)
                    if (c != bj) {
                        neighbours.push_back(agents[bi * per_dim + c]);
                        slots.push_back(slot_in(per_dim, bi, c, bi, bj));
                    }
                agents[bi * per_dim + bj]->link(std::move(neighbours), std::move(slots));
            }
    });
    started.wait(env);

    Result result;
    const Outcome outcome = run.measure(result, [&] { for (BlockAgent* agent : agents) rt::send<Start>(*agent); });

    // The distance matrix from the blocks (a block missing leaves its part at -1).
    Matrix d(std::size_t(s.nodes) * s.nodes, -1);
    for (std::uint32_t id = 0; id < blocks; ++id) {
        if (!outcome.blocks[id]) continue;
        const std::uint32_t bi = id / per_dim, bj = id % per_dim;
        for (std::uint32_t i = 0; i < s.block_size; ++i)
            for (std::uint32_t j = 0; j < s.block_size; ++j)
                d[std::size_t(bi * s.block_size + i) * s.nodes + bj * s.block_size + j] =
                    (*outcome.blocks[id])[std::size_t(i) * s.block_size + j];
    }
    result.messages_processed = messages(s) - blocks + outcome.finals;
    result.answer = describe(d, s.nodes);
    result.expected = savina::timed_sequential(result, [&] { return describe(floyd_warshall(g, s.nodes), s.nodes); });
    return result;
}

void check(const Params& params) {
    const Setup s = setup(params);
    if (s.nodes % s.block_size != 0)
        throw ParamError(kKernel, "block_size",
                         "parameter 'nodes' (" + std::to_string(s.nodes) + ") must be a multiple of parameter "
                         "'block_size' (" + std::to_string(s.block_size) + "): the matrix is cut into whole blocks");
    const std::uint64_t blocks = std::uint64_t(s.per_dim()) * s.per_dim();
    check_thread_per_agent(kKernel, params, blocks + 1,
                           "nodes=" + std::to_string(s.nodes) + " block_size=" + std::to_string(s.block_size));
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {describe(floyd_warshall(graph(s), s.nodes), s.nodes), messages(s)};
}

// At least: each of the (nodes / block_size)^2 agents' list of the 2 (per_dim - 1) blocks of its
// row and column (a pointer and a slot each), and the distance matrix. 4,000 nodes in blocks of
// 1 would need 1.5 TB for the lists alone.
double memory(const Params& params) {
    const Setup s = setup(params);
    const double per_dim = s.per_dim(), agents = per_dim * per_dim;
    const double lists = agents * 2 * (per_dim - 1) * (sizeof(BlockAgent*) + sizeof(std::uint32_t));
    return lists + double(s.nodes) * s.nodes * sizeof(std::int64_t);
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("nodes", 300, {1, 4000},
                      "nodes of the complete graph, the distance matrix nodes x nodes (Savina's N)"),
        integer_param("block_size", 50, {1, 4000},
                      "rows and columns of each agent's block of the matrix; must divide nodes (Savina's B)"),
        integer_param("max_weight", 100, {1, 65'536}, "edge weights are drawn from 1..max_weight (Savina's W)"),
    };
}

const Registration registration(Kernel{
    .name = kKernel,
    .summary = "blocked Floyd-Warshall, an agent per block exchanging its values with its row and "
               "column every iteration: many agents in lock step",
    .description =
        "Savina's benchmark 25, All-Pairs Shortest Path (apsp). Floyd-Warshall over a complete "
        "graph of `nodes` nodes whose edge weights come from Savina's own generator as Savina "
        "draws them (its PseudoRandom seeded with the node count, nextInt(max_weight) + 1 per edge "
        "in row order; made before the phase). The distance matrix is cut into blocks of "
        "block_size x block_size, an agent per block ((nodes / block_size)^2, 36 at the defaults "
        "300 and 50), each linked to the other blocks of its row and of its column. On Start a "
        "block sends its values to each of them; once it has all of theirs for iteration k - 1 it "
        "computes iteration k (d[i][j] = min(d[i][j], d[i][k] + d[k][j]), into a fresh block, as "
        "Savina) and sends the result to each of them, `nodes` iterations in all; it then sends "
        "its last values to a collector. As Savina (its 'inefficient version'), every neighbour "
        "gets every iteration's values, though a block needs only two of them (the blocks holding "
        "row k and column k). Messages: per block its Start, 2 (nodes / block_size - 1) x nodes "
        "Values and a Final: 108,072 at the defaults. The phase runs from the first Start to the "
        "collector's last Final, the agents made and started before it. The sequential program "
        "is plain Floyd-Warshall in place on the whole matrix in one thread (its time is "
        "sequential_ns); integer distances, so the answer (a hash of every distance, their sum "
        "and their maximum) is exact. Differences from Savina: Savina makes the actors and sends "
        "their links (a message each) inside its clock, ours are made and linked before the "
        "phase; Savina's block keeps its neighbours' values in one map by sender, which a "
        "neighbour already one iteration ahead overwrites (Floyd-Warshall's values only "
        "decrease, so its answer survives), and may start computing before its own Initial "
        "message; ours keeps the two iterations apart and computes only once started; Savina "
        "sends the last iteration's values to blocks that have exited (dead letters), ours sends "
        "them to the collector instead; Savina does not check its answer, ours is checked "
        "against the sequential program.",
    .sources = {{"savina", "25. All-Pairs Shortest Path (apsp)"}},
    .verifies = "every distance equal to plain Floyd-Warshall's in one thread (a hash of the matrix, "
                "its sum and its maximum)",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
    .memory = memory,
});

}  // namespace
}  // namespace labctl::kernels::savina_apsp
