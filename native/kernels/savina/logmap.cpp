// savina_logmap: Savina's 14. Logistic Map (logmap). A master asks `series` series workers for
// `terms` terms each; a worker gets each term from its rate computer by request and reply,
// holding back (stashing) the requests that come while it waits for a reply. Measures
// request/reply between pairs of agents under a flood of requests from one sender.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "logmap.hpp"
#include "mailboxes.hpp"

namespace labctl::kernels::savina_logmap {
namespace {

class SeriesWorker;
using Compute = savina_logmap::Compute<SeriesWorker*>;

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
        : id_(id), master_(master), computer_(computer), series_(start_term) {
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
        series_.computed(result.term);
        // The held requests, oldest first, until one waits for a reply again.
        while (!waiting_ && !held_.empty()) {
            const Held held = held_.front();
            held_.pop_front();
            if (held == Held::next) request();
            else report();
        }
    }

    void request() {
        rt::send<Compute>(computer_, this, series_.term());
        waiting_ = true;
    }

    void report() { rt::send<SeriesDone>(master_, series_.done(id_)); }

    const std::uint32_t id_;
    rt::Agent& master_;
    RateComputer& computer_;
    Series series_;
    bool waiting_ = false;
    std::deque<Held> held_;
};

void RateComputer::on_compute(const Compute& compute) {
    rt::send<TermResult>(*compute.sender, next_term(compute.term, rate_));
}

class Master final : public rt::Agent {
public:
    Master(std::uint64_t terms, std::uint32_t series, rt::Completion<Answer>& done)
        : terms_(terms), tally_(series), done_(done) {
        subscribe<&Master::on_start_message>();
        subscribe<&Master::on_done>();
    }
    void link(std::vector<SeriesWorker*> workers) { workers_ = std::move(workers); }

private:
    void on_start_message(const Start&) {
        for (std::uint64_t t = 0; t < terms_; ++t)
            for (SeriesWorker* worker : workers_) rt::send<NextTerm>(*worker);
        for (SeriesWorker* worker : workers_) rt::send<GetTerm>(*worker);
    }

    void on_done(const SeriesDone& d) {
        if (tally_.add(d)) done_.set(tally_.answer());
    }

    const std::uint64_t terms_;
    Tally tally_;
    rt::Completion<Answer>& done_;
    std::vector<SeriesWorker*> workers_;
};

Result run(const Params& params) {
    const Setup s = setup(params);

    MeasuredRun<Answer> run(params);
    Result result;

    // As Savina's runIteration: the agents are made inside the phase.
    const Answer answer = run.measure(result, [&](rt::Environment& env, DispatcherChoice& dispatchers) {
        Master* master = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) {
            master = &coop.make_agent_with_binder<Master>(dispatchers.binder(0), s.terms, s.series, run.done());
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

    report(result, answer, s);
    return result;
}

void check(const Params& params) {
    const Setup s = setup(params);
    check_thread_per_agent("savina_logmap", params, 2 * std::uint64_t(s.series) + 1,
                           "series=" + std::to_string(s.series));
    check_series("savina_logmap", params);
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
