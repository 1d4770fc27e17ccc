// savina_trapezoid: Savina's 21. Trapezoidal Approximation (trapezoid). A master splits [left,
// right] into `workers` equal ranges; each worker integrates Savina's function over its range
// with the trapezoid rule and sends its area back; the master adds the areas. Embarrassingly
// parallel: one message each way per worker, each worker's work a long floating-point loop.
#include <bit>
#include <cmath>
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

namespace labctl::kernels::savina_trapezoid {
namespace {

// Savina's TrapezoidalConfig.fx, in its order of operations (pow, sin, exp and sqrt are the C
// library's, as Python's math module's: the oracle replays them bit for bit).
inline double fx(double x) noexcept {
    const double a = std::sin(std::pow(x, 3.0) - 1);
    const double b = x + 1;
    const double c = a / b;
    const double d = std::sqrt(1 + std::exp(std::sqrt(2 * x)));
    return c * d;
}

// One worker's range [l, r) at step h, as Savina's Worker: its piece count truncated from
// (r - l) / h, each piece's area 0.5 * (f(lx) + f(rx)) * h added in turn.
struct Area {
    double area = 0;
    std::uint64_t pieces = 0;
};

inline Area integrate(double l, double r, double h) noexcept {
    const auto n = std::int64_t((r - l) / h);
    double accum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double lx = (double(i) * h) + l;
        const double rx = lx + h;
        const double ly = fx(lx);
        const double ry = fx(rx);
        accum += 0.5 * (ly + ry) * h;
    }
    return {accum, std::uint64_t(n > 0 ? n : 0)};
}

struct Setup {
    std::uint64_t pieces;
    std::uint32_t workers;
    double left;
    double right;
    double h() const noexcept { return (right - left) / double(pieces); }
    double range() const noexcept { return (right - left) / double(workers); }
    // Worker i's range, as Savina's Master computes it.
    double worker_left(std::uint32_t i) const noexcept { return (range() * double(i)) + left; }
};

Setup setup(const Params& params) {
    return {std::uint64_t(params.integer("pieces")), std::uint32_t(params.integer("workers")),
            params.real("left"), params.real("right")};
}

struct Answer {
    std::uint64_t reported = 0;
    std::uint64_t pieces = 0;
    std::uint64_t areas_hash = savina::kFnvBasis;  // each worker's area's bits, in worker order
    double area = 0;                               // the areas added in worker order
};

std::string describe(const Answer& a) {
    char text[160];
    std::snprintf(text, sizeof text, "workers_reported=%llu pieces=%llu areas_hash=%016llx area=%.17g",
                  static_cast<unsigned long long>(a.reported), static_cast<unsigned long long>(a.pieces),
                  static_cast<unsigned long long>(a.areas_hash), a.area);
    return text;
}

// Adds the workers' areas (index order) into the answer.
Answer combine(const std::vector<Area>& areas) {
    Answer a;
    for (const Area& w : areas) {
        ++a.reported;
        a.pieces += w.pieces;
        a.areas_hash = savina::fnv_fold(a.areas_hash, std::bit_cast<std::uint64_t>(w.area));
        a.area += w.area;
    }
    return a;
}

// The sequential program: the workers' loops one after another, added in worker order.
Answer sequential(const Setup& s) {
    std::vector<Area> areas(s.workers);
    const double h = s.h(), range = s.range();
    for (std::uint32_t i = 0; i < s.workers; ++i) {
        const double wl = s.worker_left(i);
        areas[i] = integrate(wl, wl + range, h);
    }
    return combine(areas);
}

// Work (master -> worker, and kernel -> master as Savina's first WorkMessage), Result (worker ->
// master).
struct Work {
    double l;
    double r;
    double h;
};
struct AreaReport {
    std::uint32_t id;
    Area area;
};

class Worker;

class Master final : public rt::Agent {
public:
    Master(std::uint32_t workers, rt::Completion<Answer>& done, StartLatch& started)
        : areas_(workers), seen_(workers, false), done_(done), started_(started) {
        subscribe<&Master::on_work>();
        subscribe<&Master::on_result>();
    }
    void link(std::vector<Worker*> workers) { workers_ = std::move(workers); }

private:
    void on_start() override { started_.count_down(); }
    void on_work(const Work& work);

    void on_result(const AreaReport& result) {
        // Kept by index, added in index order once all are in: the sum does not depend on the
        // order the results arrive in.
        if (result.id < areas_.size() && !seen_[result.id]) {
            seen_[result.id] = true;
            areas_[result.id] = result.area;
        }
        if (++received_ == areas_.size()) done_.set(combine(areas_));
    }

    std::vector<Area> areas_;
    std::vector<bool> seen_;
    std::uint64_t received_ = 0;
    std::vector<Worker*> workers_;
    rt::Completion<Answer>& done_;
    StartLatch& started_;
};

class Worker final : public rt::Agent {
public:
    Worker(std::uint32_t id, Master& master, StartLatch& started) : id_(id), master_(master), started_(started) {
        subscribe<&Worker::on_work>();
    }

private:
    void on_start() override { started_.count_down(); }
    void on_work(const Work& work) { rt::send<AreaReport>(master_, id_, integrate(work.l, work.r, work.h)); }

    const std::uint32_t id_;
    Master& master_;
    StartLatch& started_;
};

void Master::on_work(const Work& work) {
    const double range = (work.r - work.l) / double(workers_.size());
    for (std::uint32_t i = 0; i < workers_.size(); ++i) {
        const double wl = (range * double(i)) + work.l;
        rt::send<Work>(*workers_[i], wl, wl + range, work.h);
    }
}

// The first Work, then a Work and a Result per worker.
std::uint64_t messages(const Setup& s) { return 1 + 2 * std::uint64_t(s.workers); }

Result run(const Params& params) {
    const Setup s = setup(params);

    StartLatch started(s.workers + 1);
    MeasuredRun<Answer> run(params, started.all_started);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    Master* master = nullptr;
    env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
        master = &coop.make_agent_with_binder<Master>(dispatchers.binder(0), s.workers, run.done(), started);
        std::vector<Worker*> workers;
        for (std::uint32_t i = 0; i < s.workers; ++i)
            workers.push_back(&coop.make_agent_with_binder<Worker>(dispatchers.binder(1 + i), i, *master, started));
        master->link(std::move(workers));
    });
    started.wait(env);
    Result result;

    // From the master's first message to its having every area.
    const Answer answer = run.measure(result, [&] { rt::send<Work>(*master, s.left, s.right, s.h()); });

    result.messages_processed = 1 + answer.reported * 2;
    result.answer = describe(answer);
    result.expected = describe(savina::timed_sequential(result, [&] { return sequential(s); }));
    return result;
}

void check(const Params& params) {
    const Setup s = setup(params);
    check_thread_per_agent("savina_trapezoid", params, std::uint64_t(s.workers) + 1,
                           "workers=" + std::to_string(s.workers));
    if (!(s.right > s.left))
        throw ParamError("savina_trapezoid", "right",
                         "parameter 'right' must be greater than parameter 'left'; got left=" +
                             std::to_string(s.left) + " right=" + std::to_string(s.right));
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {describe(sequential(s)), messages(s)};
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("pieces", 10'000'000, {1, 10'000'000'000},
                      "trapezoids in all, of width (right - left) / pieces (Savina's N)"),
        integer_param("workers", 100, {1, 100'000},
                      "workers, each integrating an equal share of [left, right] (Savina's W)"),
        real_param("left", 1.0, {0, 1000}, "left end of the interval (Savina's L)"),
        real_param("right", 5.0, {0, 1000}, "right end of the interval, greater than left (Savina's R)"),
    };
}

const Registration registration(Kernel{
    .name = "savina_trapezoid",
    .summary = "a master splits [left, right] among `workers` workers, each integrates Savina's "
               "function over its share with the trapezoid rule: embarrassingly parallel",
    .description =
        "Savina's benchmark 21, Trapezoidal Approximation (trapezoid). A master is sent the "
        "interval [left, right] and the step h = (right - left) / pieces; it splits the interval "
        "into `workers` equal ranges (worker i's from range*i + left, range = (right - left) / "
        "workers) and sends each worker its range. A worker takes (r - l) / h pieces (truncated, "
        "as Savina's int conversion), adds each piece's area 0.5 * (f(lx) + f(rx)) * h with "
        "Savina's f(x) = sin(x^3 - 1) / (x + 1) * sqrt(1 + exp(sqrt(2x))), and sends the master "
        "its area. Messages: the first Work, then a Work and a Result per worker, 1 + 2*workers. "
        "It scales with the threads: each worker's one message carries pieces/workers pieces, two "
        "function evaluations each (f(lx) and f(rx), as Savina's), and the master's part is tiny. The phase runs from the master's first "
        "message to its having every worker's area; the master and the workers are made and "
        "started before it (the dispatcher's threads already running). The answer is checked "
        "against the sequential program, the workers' loops run one after another in one thread "
        "with no messages and their areas added in worker order (its time is the metric "
        "sequential_ns). Differences from Savina: the master keeps each area by worker index and "
        "adds them in index order once all are in, where Savina adds them in order of arrival, "
        "so the sum, bit for bit, does not depend on the schedule; its clock also covers making "
        "the actor system and the actors, ours neither; no exit messages (the environment stops "
        "the agents after the phase); the answer holds every area's bits (a hash) and the piece "
        "count, not only the printed area; f's sin, pow, exp and sqrt are the C library's "
        "(glibc's), Savina's java.lang.Math's (HotSpot's intrinsics): the same formula, whose "
        "last bits and cost per evaluation may differ.",
    .sources = {{"savina", "21. Trapezoidal Approximation (trapezoid)"}},
    .verifies = "every worker reported once; the piece count, each worker's area (a hash of their "
                "bits) and their sum in worker order equal the sequential program's, bit for bit",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_trapezoid
