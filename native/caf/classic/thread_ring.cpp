// caf_thread_ring and caf_parallel_thread_ring: thread_ring and parallel_thread_ring on CAF
// 0.17. Tokens passed around a ring of actors, each hop a send to the next actor: one token
// measures the raw cost of a hop, many the contention of many busy actors for the scheduler.
#include <cstdint>
#include <string>
#include <vector>

#include "../../kernels/classic/thread_ring.hpp"
#include "../../kernels/framework/schema.hpp"
#include "../run.hpp"

namespace labctl::kernels::thread_ring {

// CAF's inspectors for the shared messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Token& x) {
    return f(caf::meta::type_name("Token"), x.id, x.remaining, x.hops);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TokenEnd& x) {
    return f(caf::meta::type_name("TokenEnd"), x.id, x.agent, x.hops);
}

}  // namespace labctl::kernels::thread_ring

namespace labctl::kernels::caf_thread_ring {
namespace {

using thread_ring::Token;
using thread_ring::TokenEnd;
using thread_ring::Outcome;
using thread_ring::Plan;

class Collector final : public caf::event_based_actor {
public:
    Collector(caf::actor_config& config, caf_support::CafRun& run, const Plan& plan, rt::Completion<Outcome>& done)
        : caf::event_based_actor(config), ends_(plan), done_(done) {
        run.watch(*this);
    }

    caf::behavior make_behavior() override {
        return {[this](const TokenEnd& end) { on_end(end); }};
    }

private:
    void on_end(const TokenEnd& end) {
        if (ends_.count(end.id, end.agent, end.hops)) done_.set(ends_.outcome());
    }

    thread_ring::Ends ends_;
    rt::Completion<Outcome>& done_;
};

class Member final : public caf::event_based_actor {
public:
    Member(caf::actor_config& config, caf_support::CafRun& run, std::uint32_t index, caf::actor collector)
        : caf::event_based_actor(config), index_(index), collector_(std::move(collector)) {
        run.watch(*this);
    }
    void link(caf::actor next) { next_ = std::move(next); }
    // Read after the run: every receipt is followed by a forward or an end report, whose chain
    // ends in the collector's done.set(), so each write here happened before the kernel reads.
    std::uint64_t received() const noexcept { return received_; }

    caf::behavior make_behavior() override {
        return {[this](const Token& token) { on_token(token); }};
    }

    // The ring's handles form a cycle: let go of them, or no member is ever freed.
    void on_exit() override {
        next_ = nullptr;
        collector_ = nullptr;
    }

private:
    void on_token(const Token& token) {
        ++received_;
        if (token.remaining == 0) send(collector_, TokenEnd{token.id, index_, token.hops});
        else send(next_, Token{token.id, token.remaining - 1, token.hops + 1});
    }

    const std::uint32_t index_;
    caf::actor collector_;
    caf::actor next_;
    std::uint64_t received_ = 0;
};

Result run_ring(const Params& params, std::uint32_t tokens) {
    const auto actors = std::uint32_t(params.integer("actors"));
    const Plan plan(actors, tokens, std::uint64_t(params.integer("hops")));

    rt::Completion<Outcome> done;
    caf_support::CafRun caf(params, done);
    caf.reserve(actors + 1);
    // The collector has a thread of its own (a detached actor): the ring is what is measured.
    const caf::actor collector = caf.system().spawn<Collector, caf::detached>(std::ref(caf), std::cref(plan), std::ref(done));
    caf.keep<Collector>(collector);
    std::vector<caf::actor> handles;
    std::vector<Member*> ring;
    for (std::uint32_t i = 0; i < actors; ++i) {
        handles.push_back(caf.system().spawn<Member>(std::ref(caf), i, collector));
        ring.push_back(&caf.keep<Member>(handles.back()));
    }
    // Written here, read in handlers: the tokens sent below order these writes before them.
    for (std::uint32_t i = 0; i < actors; ++i) ring[i]->link(handles[(i + 1) % actors]);

    // The phase covers the hops: from the first injection to the last token's end.
    caf_support::CafPhase phase(caf);
    for (std::uint32_t j = 0; j < tokens; ++j) caf::anon_send(handles[plan.start[j]], Token{j, plan.hops[j], 0});
    const Outcome outcome = caf.await(done);
    Result result;
    phase.finish(result, done.completed_at());

    const thread_ring::Receipts counted =
        thread_ring::receipts(plan, [&ring](std::uint32_t i) { return ring[i]->received(); });
    caf.stop();

    thread_ring::report(result, outcome, counted, tokens);
    return result;
}

const Registration one_token(Kernel{
    .name = "caf_thread_ring",
    .summary = "thread_ring on CAF 0.17: one token passed `hops` times around a ring of `actors` actors",
    .description =
        "As thread_ring, on CAF 0.17: `actors` actors form a ring (each holds the next one's "
        "handle); a token carrying a countdown of `hops` is anon_sent to actor 0 and each actor "
        "sends it to the next with the countdown decremented, until it reaches 0, when the last "
        "reports to a collector, a detached actor (a thread of its own). Only one actor is ever "
        "busy. The phase runs from the injection to the end report; the actors are spawned, and "
        "the actor system started, before it.",
    .sources = {{"theron_303", "ThreadRing"}},
    .verifies = "the token ends at actor hops % actors after exactly `hops` hops, and each actor "
                "received the number of visits the arithmetic predicts",
    .params = schema(thread_ring::own_params(false), Timed::phase, caf_support::scheduler_params()),
    .metrics = metric_schema(thread_ring::own_metrics(), Timed::phase),
    .check = {},
    .run = [](const Params& params) { return run_ring(params, 1); },
    .runtime = "caf",
});

const Registration many_tokens(Kernel{
    .name = "caf_parallel_thread_ring",
    .summary = "parallel_thread_ring on CAF 0.17: `tokens` tokens at once in a ring of `actors` actors",
    .description =
        "As caf_thread_ring, with `tokens` tokens at once, token j injected at actor j % actors, "
        "the hops split as Theron splits them (the study's 50M over 503: 502 x 99404 and 99192). Every actor "
        "is busy, so this measures CAF's scheduler under load from many mailboxes at once.",
    .sources = {{"theron_303", "ParallelThreadRing"}},
    .verifies = "every token ends once, at the actor its start and hop count predict, after its "
                "planned hops; each actor received the visits the arithmetic predicts",
    .params = schema(thread_ring::own_params(true), Timed::phase, caf_support::scheduler_params()),
    .metrics = metric_schema(thread_ring::own_metrics(), Timed::phase),
    .check = [](const Params& params) {
        thread_ring::check_split("caf_parallel_thread_ring", std::uint64_t(params.integer("hops")),
                                 std::uint64_t(params.integer("tokens")));
    },
    .run = [](const Params& params) { return run_ring(params, std::uint32_t(params.integer("tokens"))); },
    .runtime = "caf",
});

}  // namespace
}  // namespace labctl::kernels::caf_thread_ring
