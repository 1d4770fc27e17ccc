// savina_sor: Savina's 26. Successive Over-Relaxation (sor). Red-black over-relaxation on a
// size x size grid with an agent per grid element: each round an element sends its value to its
// 2 to 4 neighbours and updates once it has all of theirs, the two colours in turn. Measures
// hundreds of agents exchanging tiny messages, each carrying one double and causing one addition.
#include <bit>
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

namespace labctl::kernels::savina_sor {
namespace {

constexpr const char* kKernel = "savina_sor";
// Savina's SucOverRelaxConfig.RANDOM_SEED.
constexpr std::uint64_t kRandomSeed = 10'101'010;

struct Setup {
    std::uint32_t size;        // Savina's DATA_SIZES[N]
    std::uint32_t iterations;  // Savina's JACOBI_NUM_ITER
    double omega;              // Savina's OMEGA
    std::uint32_t part() const noexcept { return size / 2; }  // the runner's columns; the peer has the rest
};

Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("size")), std::uint32_t(params.integer("iterations")), params.real("omega")};
}

using Grid = std::vector<double>;  // row-major, size x size

// Savina's randomMatrix: PseudoRandom(RANDOM_SEED).nextDouble() * 1e-6, row by row.
Grid initial(const Setup& s) {
    savina::PseudoRandom random(kRandomSeed);
    Grid g(std::size_t(s.size) * s.size);
    for (double& v : g) v = random.next_double() * 1e-6;
    return g;
}

// An element's colour as Savina's: 1 where row + column is even (it sends first), 0 elsewhere.
inline int colour(std::uint32_t x, std::uint32_t y) noexcept { return (x + y) % 2 == 0 ? 1 : 0; }

// Element (x, y)'s neighbours in Savina's SorActor order: inside, right, down, left, up; in a
// corner, the vertical one then the horizontal one; on the top or bottom edge, the vertical one,
// right, left; on the left or right edge, the horizontal one, down, up.
std::vector<std::uint32_t> neighbours(std::uint32_t x, std::uint32_t y, std::uint32_t n) {
    auto at = [n](std::uint32_t r, std::uint32_t c) { return r * n + c; };
    const bool x_edge = x == 0 || x == n - 1, y_edge = y == 0 || y == n - 1;
    const std::uint32_t vertical = x == 0 ? at(x + 1, y) : at(x - 1, y);
    const std::uint32_t horizontal = y == 0 ? at(x, y + 1) : at(x, y - 1);
    if (!x_edge && !y_edge) return {at(x, y + 1), at(x + 1, y), at(x, y - 1), at(x - 1, y)};
    if (x_edge && y_edge) return {vertical, horizontal};
    if (x_edge) return {vertical, at(x, y + 1), at(x, y - 1)};
    return {horizontal, at(x + 1, y), at(x - 1, y)};
}

// An element's update, as Savina's: the neighbours' values added from 0 in neighbour order, then
// omega/4 of that plus (1 - omega) of its own value.
struct Relax {
    double omega_over_four, one_minus_omega;
    explicit Relax(double omega) : omega_over_four(0.25 * omega), one_minus_omega(1.0 - omega) {}
    double operator()(double sum, double value) const noexcept { return (omega_over_four * sum) + (one_minus_omega * value); }
};

// The sequential program: the same red-black rounds on the grid in one thread. Colour 0 updates
// `iterations` times from colour 1's values, colour 1 `iterations` - 1 times from colour 0's, in
// turn (what the agents do, in the order their values allow).
Grid sweep(const Setup& s) {
    Grid g = initial(s);
    const Relax relax(s.omega);
    const std::uint32_t n = s.size;
    std::vector<std::vector<std::uint32_t>> around(std::size_t(n) * n);
    for (std::uint32_t x = 0; x < n; ++x)
        for (std::uint32_t y = 0; y < n; ++y) around[x * n + y] = neighbours(x, y, n);
    for (std::uint32_t t = 1; t <= s.iterations; ++t)
        for (int c = 0; c < 2; ++c) {
            if (c == 1 && t == s.iterations) break;
            for (std::uint32_t x = 0; x < n; ++x)
                for (std::uint32_t y = 0; y < n; ++y) {
                    if (colour(x, y) != c) continue;
                    double sum = 0.0;
                    for (std::uint32_t i : around[x * n + y]) sum += g[i];
                    g[x * n + y] = relax(sum, g[x * n + y]);
                }
        }
    return g;
}

// Value messages: colour 1 sends its start value and each of its iterations - 1 updates, colour
// 0 its first iterations - 1 updates (its last one no neighbour waits for), to each neighbour.
std::uint64_t value_messages(const Setup& s) {
    std::uint64_t count = 0;
    for (std::uint32_t x = 0; x < s.size; ++x)
        for (std::uint32_t y = 0; y < s.size; ++y)
            count += neighbours(x, y, s.size).size() * (colour(x, y) == 1 ? s.iterations : s.iterations - 1);
    return count;
}

struct Answer {
    std::uint64_t cells = 0;          // elements that reported
    std::uint64_t values_received = 0;
    Grid grid;
    std::uint64_t handled = 0;        // messages, as each agent counted those it handled
};

// Savina's total: the runner's half (columns below part) and the peer's half, each summed in
// row order (Savina's in order of arrival), the runner's first.
double total(const Grid& g, const Setup& s) {
    double runner = 0.0, peer = 0.0;
    for (std::uint32_t x = 0; x < s.size; ++x)
        for (std::uint32_t y = 0; y < s.size; ++y) (y < s.part() ? runner : peer) += g[x * s.size + y];
    return runner + peer;
}

std::string describe(const Answer& a, const Setup& s) {
    std::uint64_t hash = savina::kFnvBasis;
    for (double v : a.grid) hash = savina::fnv_fold(hash, std::bit_cast<std::uint64_t>(v));
    char text[200];
    std::snprintf(text, sizeof text, "cells=%llu values_received=%llu grid_hash=%016llx total=%.17g",
                  static_cast<unsigned long long>(a.cells), static_cast<unsigned long long>(a.values_received),
                  static_cast<unsigned long long>(hash), total(a.grid, s));
    return text;
}

std::string expected(const Setup& s, Grid grid) {
    return describe({std::uint64_t(s.size) * s.size, value_messages(s), std::move(grid)}, s);
}

// Boot (kernel -> runner, runner -> peer); Border (peer -> runner: its first column is made);
// StartSor (runner or peer -> each of its elements); Value (element -> neighbour, its slot in
// the neighbour's list); Report (element -> its runner or peer, with the values it received and
// the messages it handled); PeerTotal (peer -> runner, with its half's counts).
struct Boot {};
struct Border {};
struct StartSor {};
struct Value {
    std::uint32_t slot;
    double v;
};
struct Report {
    std::uint32_t cell;
    double value;
    std::uint64_t received;
    std::uint64_t handled;
};
struct PeerTotal {
    std::uint64_t cells;
    std::uint64_t received;
    std::uint64_t handled;
};

class Element final : public rt::Agent {
public:
    Element(std::uint32_t cell, double value, int colour, std::uint32_t iterations, double omega, rt::Agent& source)
        : cell_(cell), value_(value), colour_(colour), iterations_(iterations), relax_(omega), source_(source) {
        subscribe<&Element::on_start_sor>();
        subscribe<&Element::on_value>();
    }

    // Its neighbours in Savina's order, and its slot in each one's list.
    void link(std::vector<Element*> around, std::vector<std::uint32_t> slots) {
        around_ = std::move(around);
        slots_ = std::move(slots);
    }
    std::uint32_t cell() const noexcept { return cell_; }

private:
    void on_start_sor(const StartSor&) {
        ++handled_;
        started_ = true;
        if (colour_ == 1) {
            send_value();
            iter_ = 1;
        }
        // The values that came before the start (Savina re-sends them to itself).
        update();
    }

    void on_value(const Value& v) {
        ++handled_;
        ++received_;
        // A neighbour's next value needs this element's, which it sends after updating: two
        // values from one neighbour before an update break the protocol.
        const std::uint32_t bit = 1u << v.slot;
        if (v.slot >= around_.size() || (have_ & bit) != 0)
            throw std::logic_error("savina_sor: element " + std::to_string(cell_) + " got two values from one neighbour");
        have_ |= bit;
        values_[v.slot] = v.v;
        if (started_) update();
    }

    void update() {
        if (iter_ >= iterations_ || have_ != (1u << around_.size()) - 1) return;
        double sum = 0.0;
        for (std::size_t i = 0; i < around_.size(); ++i) sum += values_[i];
        value_ = relax_(sum, value_);
        have_ = 0;
        ++iter_;
        // Colour 0's last value no neighbour waits for: Savina sends it to exited actors.
        if (!(colour_ == 0 && iter_ == iterations_)) send_value();
        // Its last message: colour 1 gets no value after its last update, colour 0 none after
        // its last (the values its neighbours send number its updates).
        if (iter_ == iterations_) rt::send<Report>(source_, cell_, value_, received_, handled_);
    }

    void send_value() {
        for (std::size_t i = 0; i < around_.size(); ++i) rt::send<Value>(*around_[i], slots_[i], value_);
    }

    const std::uint32_t cell_;
    double value_;
    const int colour_;
    const std::uint32_t iterations_;
    const Relax relax_;
    rt::Agent& source_;
    std::vector<Element*> around_;
    std::vector<std::uint32_t> slots_;
    double values_[4] = {0, 0, 0, 0};
    std::uint32_t have_ = 0;  // a bit per neighbour whose value of this round is here
    std::uint32_t iter_ = 0;
    bool started_ = false;
    std::uint64_t received_ = 0;
    std::uint64_t handled_ = 0;  // StartSor and the values
};

// What the runner and the peer share: their elements and the final values they report.
class Half {
public:
    void set_elements(std::vector<Element*> elements) { elements_ = std::move(elements); }

protected:
    void start_elements() {
        for (Element* e : elements_) rt::send<StartSor>(*e);
    }
    // True once every element of this half has reported.
    bool take(const Report& r) {
        ++handled_;
        ++cells_;
        received_ += r.received;
        elements_handled_ += r.handled;
        if (r.cell < grid_.size()) grid_[r.cell] = r.value;
        return cells_ == elements_.size();
    }

    explicit Half(Grid& grid) : grid_(grid) {}
    Grid& grid_;  // the halves write disjoint cells
    std::vector<Element*> elements_;
    std::uint64_t cells_ = 0, received_ = 0;
    std::uint64_t handled_ = 0;           // the messages this agent handled
    std::uint64_t elements_handled_ = 0;  // those its elements handled, from their reports
};

class Runner;

class Peer final : public rt::Agent, public Half {
public:
    Peer(Grid& grid, StartLatch& started) : Half(grid), started_(started) {
        subscribe<&Peer::on_boot>();
        subscribe<&Peer::on_report>();
    }
    void link(Runner& runner) { runner_ = &runner; }

private:
    void on_start() override { started_.count_down(); }
    void on_boot(const Boot&);
    void on_report(const Report& r);

    StartLatch& started_;
    Runner* runner_ = nullptr;
};

class Runner final : public rt::Agent, public Half {
public:
    Runner(Grid& grid, rt::Completion<Answer>& done, StartLatch& started)
        : Half(grid), done_(done), started_(started) {
        subscribe<&Runner::on_boot>();
        subscribe<&Runner::on_border>();
        subscribe<&Runner::on_report>();
        subscribe<&Runner::on_peer_total>();
    }
    void link(Peer& peer) { peer_ = &peer; }

private:
    void on_start() override { started_.count_down(); }
    void on_boot(const Boot&) {
        ++handled_;
        rt::send<Boot>(*peer_);
    }
    void on_border(const Border&) {
        ++handled_;
        start_elements();
    }
    void on_report(const Report& r) {
        take(r);
        finish_if_done();
    }
    void on_peer_total(const PeerTotal& t) {
        ++handled_;
        peer_cells_ += t.cells;
        peer_received_ += t.received;
        peer_handled_ += t.handled;
        ++peer_totals_;
        finish_if_done();
    }
    // As Savina's runner: done with every element of its half and the peer's total.
    void finish_if_done() {
        if (cells_ != elements_.size() || peer_totals_ != 1) return;
        Answer a;
        a.cells = cells_ + peer_cells_;
        a.values_received = received_ + peer_received_;
        a.handled = handled_ + elements_handled_ + peer_handled_;
        done_.set(std::move(a));
    }

    rt::Completion<Answer>& done_;
    StartLatch& started_;
    Peer* peer_ = nullptr;
    std::uint64_t peer_cells_ = 0, peer_received_ = 0, peer_handled_ = 0, peer_totals_ = 0;
};

void Peer::on_boot(const Boot&) {
    ++handled_;
    rt::send<Border>(*runner_);
    start_elements();
}

void Peer::on_report(const Report& r) {
    if (take(r)) rt::send<PeerTotal>(*runner_, cells_, received_, handled_ + elements_handled_);
}

// Per element its StartSor and its Report; the values; Boot twice, Border and PeerTotal.
std::uint64_t messages(const Setup& s) { return 4 + 2 * std::uint64_t(s.size) * s.size + value_messages(s); }

Result run(const Params& params) {
    const Setup s = setup(params);
    const std::uint32_t n = s.size;
    const Grid start = initial(s);  // before the phase, as Savina's initialize

    Grid grid(start.size(), 0.0);
    StartLatch started(2);
    MeasuredRun<Answer> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();

    // The runner and the peer before the phase; the elements in it, as Savina's runner and peer
    // make theirs in their boot.
    Runner* runner = nullptr;
    Peer* peer = nullptr;
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        runner = &coop.make_agent_with_binder<Runner>(dispatchers.binder(0), grid, run.done(), started);
        peer = &coop.make_agent_with_binder<Peer>(dispatchers.binder(1), grid, started);
        runner->link(*peer);
        peer->link(*runner);
    });
    started.wait(env);

    Result result;
    Answer answer = run.measure(result, [&] {
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            std::vector<Element*> cells(std::size_t(n) * n);
            std::vector<Element*> left, right;
            for (std::uint32_t x = 0; x < n; ++x)
                for (std::uint32_t y = 0; y < n; ++y) {
                    const std::uint32_t cell = x * n + y;
                    rt::Agent& source = y < s.part() ? static_cast<rt::Agent&>(*runner) : static_cast<rt::Agent&>(*peer);
                    cells[cell] = &coop.make_agent_with_binder<Element>(dispatchers.binder(2 + cell), cell, start[cell],
                                                                        colour(x, y), s.iterations, s.omega, source);
                    (y < s.part() ? left : right).push_back(cells[cell]);
                }
            for (std::uint32_t cell = 0; cell < n * n; ++cell) {
                std::vector<Element*> around;
                std::vector<std::uint32_t> slots;
                for (std::uint32_t other : neighbours(cell / n, cell % n, n)) {
                    around.push_back(cells[other]);
                    const std::vector<std::uint32_t> theirs = neighbours(other / n, other % n, n);
                    std::uint32_t slot = 0;
                    while (theirs[slot] != cell) ++slot;
                    slots.push_back(slot);
                }
                cells[cell]->link(std::move(around), std::move(slots));
            }
            runner->set_elements(std::move(left));
            peer->set_elements(std::move(right));
        });
        rt::send<Boot>(*runner);
    });

    answer.grid = grid;
    result.messages_processed = answer.handled;
    result.answer = describe(answer, s);
    result.expected = savina::timed_sequential(result, [&] { return expected(s, sweep(s)); });
    return result;
}

void check(const Params& params) {
    const Setup s = setup(params);
    check_thread_per_agent(kKernel, params, std::uint64_t(s.size) * s.size + 2, "size=" + std::to_string(s.size));
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {expected(s, sweep(s)), messages(s)};
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("size", 20, {2, 400},
                      "rows and columns of the grid, an agent per element (Savina's DATA_SIZES[N]: 20 at "
                      "its default N = 0; its others are 80, 100, 120, 150, 200, 250, 300, 350, 400)"),
        integer_param("iterations", 100, {2, 1'000'000},
                      "updates of each element of colour 0 (colour 1's: one fewer, its start value sent "
                      "first) (Savina's JACOBI_NUM_ITER)"),
        real_param("omega", 1.25, {0, 2},
                   "the over-relaxation factor: an update is omega/4 x the neighbours' sum + (1 - omega) "
                   "x the value (Savina's OMEGA)"),
    };
}

const Registration registration(Kernel{
    .name = kKernel,
    .summary = "red-black over-relaxation with an agent per grid element, each message one "
               "neighbour's value: hundreds of agents exchanging tiny messages",
    .description =
        "Savina's benchmark 26, Successive Over-Relaxation (sor). A size x size grid (Savina's "
        "default N = 0 picks its DATA_SIZES[0] = 20) whose start values come from Savina's own "
        "generator as Savina draws them (its PseudoRandom seeded with its RANDOM_SEED 10101010, "
        "nextDouble() * 1e-6 row by row; made before the phase), an agent per element, as "
        "Savina's grain. Elements where row + column is even (colour 1) send their value to their "
        "2 to 4 neighbours on StartSor; an element that has one value from each neighbour updates "
        "to omega/4 x their sum (added from 0 in Savina's neighbour order) + (1 - omega) x its "
        "value and sends the new value to each neighbour, until colour 0 has updated `iterations` "
        "times and colour 1 `iterations` - 1 times (Savina's counts); each then reports its value "
        "to its half's owner. As Savina, a runner owns the left size/2 columns and a peer the "
        "rest: the kernel Boots the runner, which Boots the peer, which sends the runner a Border "
        "and starts its elements; the runner then starts its own; the peer sends the runner its "
        "half's total, and the run ends when the runner has its half's reports and the peer's "
        "total. Messages: Boot x 2, Border, a StartSor and a Report per element, PeerTotal and "
        "the values (151,240 at the defaults; 152,044 in all), each counted by the agent that "
        "handles it (an element's count rides on its Report, the peer's on its PeerTotal). The "
        "phase runs from the elements' making and the Boot to the runner's having everything; "
        "the runner and the peer are made before it. The sequential "
        "program is the same red-black rounds on the grid in one thread, colour 0 then colour 1 "
        "(its time is sequential_ns): the same operations in the same order, so the grid is bit "
        "for bit the same (a hash of every value's bits); `total` is Savina's printed figure, the "
        "runner's half then the peer's. Differences from Savina: its clock also covers making the "
        "actor system, the runner and the peer, ours not; the kernel's thread makes every "
        "element in one coop before the Boot, each linked to its neighbours then, where Savina's "
        "runner makes its half in its Boot handler and the peer its own in its Boot, the Border "
        "carrying the peer's first column and each StartSor the array of actors; Savina's "
        "actors exit after their report, ours stay until the environment stops after the phase; "
        "an element adds its neighbours' "
        "values in neighbour order, not in order of arrival (so the answer does not depend on "
        "the schedule); it keeps the values that come before its start and uses them then, "
        "where Savina's re-sends them to itself (a number of messages the schedule decides); "
        "colour 0's last values, which Savina sends to elements that have exited (dead letters), "
        "are not sent; the halves' totals are summed in row order, not in order of arrival; "
        "Savina compares its total with a table of reference values (within 1e-12), which its "
        "own actor version does not reproduce at size 20 (ours is 4.2e-10, its table says "
        "3.2e-6), and we check the grid against the sequential program instead.",
    .sources = {{"savina", "26. Successive Over-Relaxation (sor)"}},
    .verifies = "every element's final value bit for bit the sequential red-black program's (a hash "
                "of the grid and Savina's total), every element reported, every value received",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_sor
