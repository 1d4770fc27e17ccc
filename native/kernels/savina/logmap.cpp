// savina_logmap: Savina's 14. Logistic Map (logmap). A master asks `series` series workers for
// `terms` terms each; a worker gets each term from its rate computer by request and reply,
// holding back (stashing) the requests that come while it waits for a reply. Measures
// request/reply between pairs of agents under a flood of requests from one sender.
#include <cstdint>
#include <bit>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_logmap {
namespace {

constexpr std::uint64_t kHashBasis = savina::kFnvBasis;

// FNV-1a over 64-bit words: each term's bit pattern, then each series' hash in series order.
constexpr auto fold = savina::fnv_fold;

inline std::uint64_t bits(double value) noexcept { return std::bit_cast<std::uint64_t>(value); }

// Savina's LogisticMapConfig.computeNextTerm, in the same order of operations.
inline double next_term(double term, double rate) noexcept { return rate * term * (1 - term); }

// Series i: its rate computer's rate and its start term, as Savina's Master computes them.
inline double rate_of(double start_rate, double increment, std::uint32_t i) noexcept {
    return start_rate + (double(i) * increment);
}
inline double start_of(double increment, std::uint32_t i) noexcept { return double(i) * increment; }

struct Answer {
    std::uint64_t series_reported = 0;
    std::uint64_t terms_computed = 0;
    std::uint64_t terms_hash = kHashBasis;
    double final_sum = 0;  // the series' last terms, summed in series order
};

std::string describe(const Answer& a) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(a.terms_hash));
    char sum[40];
    std::snprintf(sum, sizeof sum, "%.17g", a.final_sum);
    return "series_reported=" + std::to_string(a.series_reported) +
           " terms_computed=" + std::to_string(a.terms_computed) + " terms_hash=" + hash +
           " final_sum=" + sum;
}

struct Setup {
    std::uint32_t series;
    std::uint64_t terms;
    double start_rate;
    double increment;
};

// The sequential model: every series computed in one loop, with the operations in the agents'
// order, so that its hash matches bit for bit.
std::string expected(const Setup& s) {
    Answer a;
    std::vector<double> last(s.series);
    for (std::uint32_t i = 0; i < s.series; ++i) {
        const double rate = rate_of(s.start_rate, s.increment, i);
        double term = start_of(s.increment, i);
        std::uint64_t hash = kHashBasis;
        for (std::uint64_t t = 0; t < s.terms; ++t) {
            term = next_term(term, rate);
            hash = fold(hash, bits(term));
        }
        a.terms_hash = fold(a.terms_hash, hash);
        last[i] = term;
    }
    for (double term : last) a.final_sum += term;
    a.series_reported = s.series;
    a.terms_computed = std::uint64_t(s.series) * s.terms;
    return describe(a);
}

// Start (kernel -> master), NextTerm and GetTerm (master -> worker), Compute (worker ->
// computer), Result (computer -> worker), SeriesDone (worker -> master).
struct Start {};
struct NextTerm {};
struct GetTerm {};
class SeriesWorker;
struct Compute {
    SeriesWorker* sender;
    double term;
};
struct TermResult {
    double term;
};
struct SeriesDone {
    std::uint32_t id;
    std::uint64_t computed;
    std::uint64_t hash;
    double last;
};

class RateComputer final : public rt::Agent {
public:
    explicit RateComputer(double rate) : rate_(rate) { subscribe<&RateComputer::on_compute>(); }

private:
    void on_compute(const Compute& compute);
    const double rate_;
};

class SeriesWorker final : public rt::Agent {
public:
    SeriesWorker(std::uint32_t id, rt::Agent& master, RateComputer& computer, double start_term)
        : id_(id), master_(master), computer_(computer), term_(start_term) {
        subscribe<&SeriesWorker::on_next>();
        subscribe<&SeriesWorker::on_get>();
        subscribe<&SeriesWorker::on_result>();
    }

private:
    enum class Held : std::uint8_t { next, get };

    void on_next(const NextTerm&) {
        if (waiting_) held_.push_back(Held::next);
        else request();
    }

    void on_get(const GetTerm&) {
        if (waiting_) held_.push_back(Held::get);
        else report();
    }

    void on_result(const TermResult& result) {
        waiting_ = false;
        term_ = result.term;
        ++computed_;
        hash_ = fold(hash_, bits(term_));
        // The held requests, oldest first, until one waits for a reply again.
        while (!waiting_ && !held_.empty()) {
            const Held held = held_.front();
            held_.pop_front();
            if (held == Held::next) request();
            else report();
        }
    }

    void request() {
        rt::send<Compute>(computer_, this, term_);
        waiting_ = true;
    }

    void report() { rt::send<SeriesDone>(master_, id_, computed_, hash_, term_); }

    const std::uint32_t id_;
    rt::Agent& master_;
    RateComputer& computer_;
    double term_;
    bool waiting_ = false;
    std::deque<Held> held_;
    std::uint64_t computed_ = 0;
    std::uint64_t hash_ = kHashBasis;
};

void RateComputer::on_compute(const Compute& compute) {
    rt::send<TermResult>(*compute.sender, next_term(compute.term, rate_));
}

class Master final : public rt::Agent {
public:
    Master(std::uint64_t terms, rt::Completion<Answer>& done) : terms_(terms), done_(done) {
        subscribe<&Master::on_start_message>();
        subscribe<&Master::on_done>();
    }
    void link(std::vector<SeriesWorker*> workers) {
        workers_ = std::move(workers);
        hashes_.assign(workers_.size(), 0);
        last_.assign(workers_.size(), 0);
        seen_.assign(workers_.size(), false);
    }

private:
    void on_start_message(const Start&) {
        for (std::uint64_t t = 0; t < terms_; ++t)
            for (SeriesWorker* worker : workers_) rt::send<NextTerm>(*worker);
        for (SeriesWorker* worker : workers_) rt::send<GetTerm>(*worker);
    }

    void on_done(const SeriesDone& d) {
        ++answer_.series_reported;
        answer_.terms_computed += d.computed;
        if (d.id < workers_.size() && !seen_[d.id]) {
            seen_[d.id] = true;
            hashes_[d.id] = d.hash;
            last_[d.id] = d.last;
        }
        if (answer_.series_reported != workers_.size()) return;
        // In series order, whatever order the reports came in: the sum is schedule-independent.
        for (std::size_t i = 0; i < workers_.size(); ++i) {
            answer_.terms_hash = fold(answer_.terms_hash, hashes_[i]);
            answer_.final_sum += last_[i];
        }
        done_.set(answer_);
    }

    const std::uint64_t terms_;
    rt::Completion<Answer>& done_;
    std::vector<SeriesWorker*> workers_;
    std::vector<std::uint64_t> hashes_;
    std::vector<double> last_;
    std::vector<bool> seen_;
    Answer answer_;
};

Setup setup(const Params& params) {
    return {std::uint32_t(params.integer("series")), std::uint64_t(params.integer("terms")),
            params.real("start_rate"), params.real("increment")};
}

// Start, then per series: terms x (NextTerm, Compute, Result), GetTerm and SeriesDone.
std::uint64_t messages(const Setup& s) { return 1 + s.series * (3 * s.terms + 2); }

Result run(const Params& params) {
    const Setup s = setup(params);

    MeasuredRun<Answer> run(params);
    Result result;

    // As Savina's runIteration: the agents are made inside the phase.
    const Answer answer = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        Master* master = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            master = &coop.make_agent_with_binder<Master>(dispatchers.binder(0), s.terms, run.done());
            std::vector<RateComputer*> computers;
            for (std::uint32_t i = 0; i < s.series; ++i)
                computers.push_back(&coop.make_agent_with_binder<RateComputer>(
                    dispatchers.binder(1 + i), rate_of(s.start_rate, s.increment, i)));
            std::vector<SeriesWorker*> workers;
            for (std::uint32_t i = 0; i < s.series; ++i)
                workers.push_back(&coop.make_agent_with_binder<SeriesWorker>(
                    dispatchers.binder(1 + s.series + i), i, *master, *computers[i], start_of(s.increment, i)));
            master->link(std::move(workers));
        });
        rt::send<Start>(*master);
    });

    result.messages_processed = 1 + answer.series_reported + answer.terms_computed * 3 + s.series;
    result.answer = describe(answer);
    result.expected = expected(s);
    return result;
}

void check(const Params& params) {
    const Setup s = setup(params);
    check_thread_per_agent("savina_logmap", params, 2 * std::uint64_t(s.series) + 1,
                           "series=" + std::to_string(s.series));
    const double last = double(s.series - 1) * s.increment;
    if (last > 1)
        throw ParamError("savina_logmap", "increment",
                         "parameter 'increment' times (series - 1) must be at most 1 (series i starts at "
                         "term i*increment, which must lie in [0, 1]); got " + std::to_string(last));
    if (s.start_rate + last > 4)
        throw ParamError("savina_logmap", "start_rate",
                         "parameter 'start_rate' + (series - 1) * increment must be at most 4 (the "
                         "logistic map leaves [0, 1] above rate 4); got " + std::to_string(s.start_rate + last));
}

Expectation expect(const Params& params) {
    const Setup s = setup(params);
    return {expected(s), messages(s)};
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("terms", 25'000, {1, 100'000'000}, "terms each series worker computes (Savina's numTerms)"),
        integer_param("series", 10, {1, 100'000}, "series workers, each with its rate computer (Savina's numSeries)"),
        real_param("start_rate", 3.46, {0, 4},
                   "the rate of series 0; series i's is start_rate + i*increment (Savina's startRate)"),
        real_param("increment", 0.0025, {0, 1},
                   "step of the rates and of the start terms: series i starts at term i*increment"),
    };
}

const Registration registration(Kernel{
    .name = "savina_logmap",
    .summary = "`series` workers each get `terms` logistic-map terms from a rate computer by "
               "request and reply: request/reply under a flood",
    .description =
        "Savina's 14. Logistic Map (logmap). A master sends each of `series` series workers "
        "`terms` NextTerm requests, then a GetTerm. For each NextTerm a worker sends its current "
        "term to its own rate computer (Compute) and waits for the reply (Result), holding back "
        "the requests that come meanwhile and taking them up, oldest first, when the reply "
        "comes; on GetTerm it reports its series to the master. Series i has rate start_rate + "
        "i*increment and starts at term i*increment; the next term is rate*term*(1-term). The "
        "phase covers what Savina's clock covers: from before the master, the computers and the "
        "workers are made (in one coop, the dispatcher's threads already running) and the Start "
        "message sent, to the master's having every series' report. Messages: Start, "
        "series*terms each of NextTerm, Compute and Result, series GetTerm and series reports. "
        "Differences from Savina: a worker takes its held requests up itself when the reply "
        "comes, where Savina's re-sends each to itself (one message per held request, a number "
        "the schedule decides); no Stop messages (the environment stops the agents after the "
        "phase); a worker reports its count, a hash of every term and its last term, not the "
        "last term alone; the final terms are summed in series order, not in order of arrival.",
    .sources = {{"savina", "14. Logistic Map (logmap)"}},
    .verifies = "every series computed `terms` terms, each bit for bit as a sequential "
                "computation (a hash of them all) and the sum of the last terms",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_logmap
