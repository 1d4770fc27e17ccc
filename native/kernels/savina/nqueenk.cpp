// savina_nqueenk: Savina's 28. N-Queens first K solutions (nqueenk), its version without
// priorities. A master hands partial boards out to `workers` workers in turn; a worker extends a
// board shallower than `threshold` by one row and sends the valid children back to the master as
// new work, and searches a deeper board to the end itself, sending each solution to the master.
// Measures a master-worker search whose work items are uneven.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_nqueenk {
namespace {

// A board's rows fit 4 bits each in a 64-bit word.
constexpr std::uint32_t kMaxSize = 16;
using Rows = std::array<std::int32_t, kMaxSize>;

// Savina's NQueensConfig.SOLUTIONS: the solutions of each size (its check, and our estimate of
// a run's work).
constexpr std::array<std::uint64_t, kMaxSize> kSolutions = {
    1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};

// Savina's NQueensConfig.boardValid: no two of the first n queens share a row or a diagonal.
bool board_valid(std::uint32_t n, const Rows& a) noexcept {
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::int32_t p = a[i];
        for (std::uint32_t j = i + 1; j < n; ++j) {
            const std::int32_t q = a[j];
            const auto d = std::int32_t(j - i);
            if (q == p || q == p - d || q == p + d) return false;
        }
    }
    return true;
}

std::uint64_t pack(const Rows& a, std::uint32_t depth) noexcept {
    std::uint64_t code = 0;
    for (std::uint32_t i = 0; i < depth; ++i) code |= std::uint64_t(a[i]) << (4 * i);
    return code;
}

Rows unpack(std::uint64_t code, std::uint32_t depth) noexcept {
    Rows a{};
    for (std::uint32_t i = 0; i < depth; ++i) a[i] = std::int32_t((code >> (4 * i)) & 15);
    return a;
}

// Savina's nqueensKernelSeq: every valid completion of the board's first `depth` rows, each
// solution handed to `on_solution` (Savina's copies the board per row; this one writes row
// `depth` in place, the rows below it unread).
template <class OnSolution>
void solve(std::uint32_t size, Rows& a, std::uint32_t depth, OnSolution& on_solution) {
    if (depth == size) {
        on_solution(a);
        return;
    }
    for (std::uint32_t i = 0; i < size; ++i) {
        a[depth] = std::int32_t(i);
        if (board_valid(depth + 1, a)) solve(size, a, depth + 1, on_solution);
    }
}

// Solutions, and an order-free fingerprint of them (the sum of their packed boards' mixes).
struct Tally {
    std::uint64_t solutions = 0;
    std::uint64_t hash = 0;
    void add(std::uint64_t board) noexcept {
        ++solutions;
        hash += savina::mix64(board);
    }
};

// The sequential program: the same search from the empty board in one thread.
Tally sequential(std::uint32_t size) {
    Tally tally;
    Rows a{};
    auto on_solution = [&](const Rows& board) { tally.add(pack(board, size)); };
    solve(size, a, 0, on_solution);
    return tally;
}

struct Outcome {
    Tally tally;
    std::uint64_t invalid = 0;  // reported boards that are no solution
    std::uint64_t messages = 0;
};

// With fewer solutions than the limit every solution is found, and the answer says which; at
// the limit the run stops handing out work and how many are found beyond it depends on the
// schedule: the answer then says the limit was reached and no more than all were reported.
std::string describe(const Tally& found, std::uint64_t invalid, std::uint64_t limit, std::uint64_t all) {
    if (found.solutions < limit) {
        char hash[17];
        std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(found.hash));
        return "solutions=" + std::to_string(found.solutions) + " solutions_hash=" + hash +
               " invalid=" + std::to_string(invalid);
    }
    return "limit_reached=1 at_most_all=" + std::to_string(int(found.solutions <= all)) +
           " invalid=" + std::to_string(invalid);
}

struct Setup {
    std::uint32_t size;
    std::uint32_t threshold;
    std::uint32_t workers;
    std::uint64_t limit;
};

Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("size")), std::uint32_t(params.integer("threshold")),
            std::uint32_t(params.integer("workers")), std::uint64_t(params.integer("solutions_limit"))};
}

struct Start {};
struct Work {
    std::uint64_t rows;
    std::uint32_t depth;
};
struct Solution {
    std::uint64_t rows;
};
struct Done {};

class Worker;

class Master final : public rt::Agent {
public:
    Master(const Setup& s, rt::Completion<Outcome>& done) : s_(s), done_(done) {
        subscribe<&Master::on_start_message>();
        subscribe<&Master::on_work>();
        subscribe<&Master::on_solution>();
        subscribe<&Master::on_done>();
    }
    void link(std::vector<Worker*> workers) { workers_ = std::move(workers); }

private:
    void on_start_message(const Start&) {
        ++messages_;
        send_work({0, 0});
    }

    // As Savina's: to the workers in turn.
    void send_work(const Work& work);

    void on_work(const Work& work) {
        ++messages_;
        if (!limit_reached_) send_work(work);
    }

    void on_solution(const Solution& solution) {
        ++messages_;
        outcome_.tally.add(solution.rows);
        if (!board_valid(s_.size, unpack(solution.rows, s_.size))) ++outcome_.invalid;
        if (outcome_.tally.solutions == s_.limit) limit_reached_ = true;
    }

    void on_done(const Done&) {
        ++messages_;
        if (++completed_ != sent_) return;
        outcome_.messages = messages_ + sent_;  // the workers handled each piece of work sent
        done_.set(outcome_);
    }

    const Setup s_;
    rt::Completion<Outcome>& done_;
    std::vector<Worker*> workers_;
    std::size_t next_ = 0;
    std::uint64_t sent_ = 0;
    std::uint64_t completed_ = 0;
    std::uint64_t messages_ = 0;
    bool limit_reached_ = false;
    Outcome outcome_;
};

class Worker final : public rt::Agent {
public:
    Worker(const Setup& s, Master& master) : s_(s), master_(master) { subscribe<&Worker::on_work>(); }

private:
    // Savina's nqueensKernelPar, then Done.
    void on_work(const Work& work) {
        if (work.depth == s_.size) {
            rt::send<Solution>(master_, work.rows);
        } else if (work.depth >= s_.threshold) {
            Rows a = unpack(work.rows, work.depth);
            auto on_solution = [this](const Rows& board) { rt::send<Solution>(master_, pack(board, s_.size)); };
            solve(s_.size, a, work.depth, on_solution);
        } else {
            Rows a = unpack(work.rows, work.depth);
            for (std::uint32_t i = 0; i < s_.size; ++i) {
                a[work.depth] = std::int32_t(i);
                if (board_valid(work.depth + 1, a)) rt::send<Work>(master_, pack(a, work.depth + 1), work.depth + 1);
            }
        }
        rt::send<Done>(master_);
    }

    const Setup s_;
    Master& master_;
};

void Master::send_work(const Work& work) {
    rt::send<Work>(*workers_[next_], work);
    next_ = (next_ + 1) % workers_.size();
    ++sent_;
}

Result run(const Params& params) {
    const Setup s = setup(params);

    MeasuredRun<Outcome> run(params);
    Result result;

    // As Savina's clock: the master and its workers made (in one coop, the dispatcher's threads
    // already running), the first board handed out, until every piece of work handed out is done.
    const Outcome outcome = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        Master* master = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            master = &coop.make_agent_with_binder<Master>(dispatchers.binder(0), s, run.done());
            std::vector<Worker*> workers;
            for (std::uint32_t i = 0; i < s.workers; ++i)
                workers.push_back(&coop.make_agent_with_binder<Worker>(dispatchers.binder(1 + i), s, *master));
            master->link(std::move(workers));
        });
        rt::send<Start>(*master);
    });

    const Tally all = savina::timed_sequential(result, [&] { return sequential(s.size); });
    result.messages_processed = outcome.messages;
    result.answer = describe(outcome.tally, outcome.invalid, s.limit, all.solutions);
    result.expected = describe(all, 0, s.limit, all.solutions);
    result.metrics.push_back({"solutions", double(outcome.tally.solutions)});
    return result;
}

void check(const Params& params) {
    const Setup s = setup(params);
    check_thread_per_agent("savina_nqueenk", params, std::uint64_t(s.workers) + 1,
                           "workers=" + std::to_string(s.workers));
}

// The boards handed out when no limit stops the run: the valid boards of depth 0 to
// min(threshold, size), counted to depth 6 at most (an estimate beyond).
double work(const Params& params) {
    const Setup s = setup(params);
    const std::uint32_t deepest = std::min({s.threshold, s.size, 6u});
    std::uint64_t boards = 0;
    Rows a{};
    auto count = [&](auto& self, std::uint32_t depth) -> void {
        ++boards;
        if (depth == deepest) return;
        for (std::uint32_t i = 0; i < s.size; ++i) {
            a[depth] = std::int32_t(i);
            if (board_valid(depth + 1, a)) self(self, depth + 1);
        }
    };
    count(count, 0);
    // Each board handed out, sent back by a worker (all but the first) and done; each solution.
    return 3.0 * double(boards) + double(std::min(s.limit, kSolutions[s.size - 1]));
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("size", 12, {1, kMaxSize}, "queens, on a size x size board (Savina's N)"),
        integer_param("threshold", 4, {1, kMaxSize},
                      "a board with fewer rows placed is extended by one row and its children handed "
                      "back as work; one with this many or more is searched to the end by its worker "
                      "(Savina's threshold)"),
        integer_param("workers", 20, {1, 100'000}, "worker agents, handed work in turn (Savina's W)"),
        integer_param("solutions_limit", 1'500'000, {1, 1e15},
                      "once the master has this many solutions it hands out no more work (Savina's "
                      "solutions limit; its default is above the 14,200 solutions of size 12, so "
                      "every solution is found)"),
    };
}

const Registration registration(Kernel{
    .name = "savina_nqueenk",
    .summary = "a master hands partial N-Queens boards to `workers` workers in turn; shallow "
               "boards come back extended as new work, deep ones are searched to the end",
    .description =
        "Savina's benchmark 28, N-Queens first K solutions (nqueenk), its Akka version without "
        "priorities (our runtime has no priority mailboxes; Savina's priorities setting is not a "
        "parameter). A master hands the empty board to a worker; the master hands each board it "
        "is sent to the next of `workers` workers in turn. A worker given a board with fewer "
        "than `threshold` rows placed tries each row of the next column and sends the master "
        "each valid child (Savina's boardValid: no two queens on a row or a diagonal); given a "
        "deeper board it searches it to the end itself (Savina's sequential kernel), sending "
        "the master each solution; either way it then tells the master it is done. Once the "
        "master has solutions_limit solutions it hands out no more work. The phase runs from "
        "the master's and workers' creation (one coop, the dispatcher's threads already "
        "running) and the first board to the master's having every board it handed out done. "
        "Messages: the Start, each board handed out, each child board sent back, each done and "
        "each solution; at Savina's defaults (size 12, threshold 4, 20 workers, limit "
        "1,500,000) every solution of the 14,200 is found and the count is fixed; with a limit "
        "at or below the solutions there are, how many solutions and messages come depends on "
        "the schedule. Verifies, with fewer solutions than the limit, their number and an "
        "order-free fingerprint of the boards against the sequential program (the same search "
        "from the empty board in one thread, timed as sequential_ns); at the limit, that the "
        "limit was reached and no more solutions than there are were reported (Savina's own "
        "check); always that every reported board is a solution. The solutions found are the "
        "metric solutions. Differences from Savina: its clock also covers making the actor "
        "system, ours does not; a solution message carries its board (Savina's carries nothing) "
        "and the master checks it; at the limit Savina's master sends its workers Stop and "
        "forwards later boards to the stopped workers, ours stops handing boards out and waits "
        "for the work already handed out; no Stop messages (the environment stops the agents "
        "after the phase); sizes above 16 are refused (a board is packed 4 bits a row).",
    .sources = {{"savina", "28. N-Queens first K solutions (nqueenk)"}},
    .verifies = "below the limit: the solutions and a fingerprint of their boards as the sequential "
                "search finds them; at the limit: the limit reached and no more than all; every "
                "reported board a solution",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric(), {.name = "solutions"}},
    .check = check,
    .run = run,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::savina_nqueenk
