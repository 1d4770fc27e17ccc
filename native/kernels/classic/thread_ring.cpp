// thread_ring and parallel_thread_ring: tokens passed around a ring of agents, each hop a send
// to the next agent. One token measures the raw cost of a hop (only one agent is ever busy);
// many tokens measure the contention of many busy agents for the same threads and queues. One
// kernel with two schemas: the ring, its checks and its arithmetic are the same.
#include <cstdint>
#include <string>
#include <vector>

#include "../../runtime/dispatchers/one_thread.hpp"
#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "thread_ring.hpp"

namespace labctl::kernels::thread_ring {
namespace {

class Collector final : public rt::Agent {
public:
    Collector(const Plan& plan, rt::Completion<Outcome>& done, StartLatch& started)
        : ends_(plan), done_(done), started_(started) {
        subscribe<&Collector::on_end>();
    }

private:
    void on_start() override { started_.count_down(); }

    void on_end(const TokenEnd& end) {
        if (ends_.count(end.id, end.agent, end.hops)) done_.set(ends_.outcome());
    }

    Ends ends_;
    rt::Completion<Outcome>& done_;
    StartLatch& started_;
};

class Member final : public rt::Agent {
public:
    Member(std::uint32_t index, Collector& collector, StartLatch& started)
        : index_(index), collector_(collector), started_(started) {
        subscribe<&Member::on_token>();
    }
    void link(Member& next) { next_ = &next; }
    // Read after the run: every receipt is followed by a forward or an end report, whose chain
    // ends in the collector's done.set(), so each write here happened before the kernel reads.
    std::uint64_t received() const noexcept { return received_; }

private:
    void on_start() override { started_.count_down(); }

    void on_token(const Token& token) {
        ++received_;
        if (token.remaining == 0) rt::send<TokenEnd>(collector_, token.id, index_, token.hops);
        else rt::send<Token>(*next_, token.id, token.remaining - 1, token.hops + 1);
    }

    const std::uint32_t index_;
    Collector& collector_;
    StartLatch& started_;
    Member* next_ = nullptr;
    std::uint64_t received_ = 0;
};

Result run_ring(const Params& params, std::uint32_t tokens) {
    const auto actors = std::uint32_t(params.integer("actors"));
    const Plan plan(actors, tokens, std::uint64_t(params.integer("hops")));

    StartLatch started(actors + 1);  // the ring and the collector
    std::vector<Member*> ring;
    MeasuredRun<Outcome> run(params, started.all_started);
    rt::Environment& env = run.environment();
    // The collector has a thread of its own: the ring is what is measured.
    rt::Dispatcher& collector_thread = env.make_dispatcher<rt::OneThread>();
    env.introduce_coop(run.dispatchers().binder(), [&](rt::Coop& coop) {
        auto& collector = coop.make_agent_with_binder<Collector>(collector_thread.binder(), plan, run.done(), started);
        for (std::uint32_t i = 0; i < actors; ++i)
            ring.push_back(&coop.make_agent_with_binder<Member>(run.dispatchers().binder(i), i, collector, started));
        for (std::uint32_t i = 0; i < actors; ++i) ring[i]->link(*ring[(i + 1) % actors]);
    });
    Result result;
    Receipts counted;

    // The phase covers the hops: from the first injection, once every agent has started, to the
    // last token's end.
    started.wait(env);
    const Outcome outcome = run.measure(
        result, [&] { for (std::uint32_t j = 0; j < tokens; ++j) rt::send<Token>(*ring[plan.start[j]], j, plan.hops[j], 0); },
        [&](Outcome&) { counted = receipts(plan, [&ring](std::uint32_t i) { return ring[i]->received(); }); });

    report(result, outcome, counted, tokens);
    return result;
}

// What an external runtime is held to: every token ended where and when planned, each agent
// visited as planned; hops + tokens receipts (a token's injection is one) and tokens end reports.
Expectation expect_ring(const Params& params, std::uint64_t tokens) {
    return {expected(tokens), std::uint64_t(params.integer("hops")) + 2 * tokens};
}

void check_ring(const std::string& kernel, const Params& params, std::uint64_t tokens) {
    const auto actors = params.integer("actors");
    check_thread_per_agent(kernel, params, std::uint64_t(actors), "actors=" + std::to_string(actors));
    check_split(kernel, std::uint64_t(params.integer("hops")), tokens);
}

const Registration one_token(Kernel{
    .name = "thread_ring",
    .summary = "one token passed `hops` times around a ring of `actors` agents: the raw cost of a hop",
    .description =
        "`actors` agents form a ring; a token carrying a countdown of `hops` is injected at agent "
        "0 and each agent forwards it to the next with the countdown decremented, until it reaches "
        "0. Only one agent is ever busy, so this measures a send and a dispatch with a cold "
        "receiver; on a dispatcher with a thread per agent or group, every hop crosses threads. "
        "The phase runs from the injection to the end report (agents are created and started before it).",
    .sources = {{"theron_303", "ThreadRing"}},
    .verifies = "the token ends at agent hops % actors after exactly `hops` hops, and each agent "
                "received the number of visits the arithmetic predicts",
    .params = schema(own_params(false), Timed::phase, dispatcher_params()),
    .metrics = metric_schema(own_metrics(), Timed::phase),
    .check = [](const Params& params) { check_ring("thread_ring", params, 1); },
    .run = [](const Params& params) { return run_ring(params, 1); },
    .expect = [](const Params& params) { return expect_ring(params, 1); },
    .work = [](const Params& params) { return double(params.integer("hops")); },
});

const Registration many_tokens(Kernel{
    .name = "parallel_thread_ring",
    .summary = "`tokens` tokens circulating at once in a ring of `actors` agents: contention for threads",
    .description =
        "As thread_ring, with `tokens` tokens at once, token j injected at agent j % actors. The "
        "hops are split as Theron splits them: each of the first tokens-1 tokens makes "
        "ceil(hops/tokens) hops and the last the rest (the study's 50M over 503: 502 x 99404 and 99192). Every "
        "agent is busy, so this measures the dispatcher under load from many queues at once.",
    .sources = {{"theron_303", "ParallelThreadRing"}},
    .verifies = "every token ends once, at the agent its start and hop count predict, after its "
                "planned hops; each agent received the visits the arithmetic predicts",
    .params = schema(own_params(true), Timed::phase, dispatcher_params()),
    .metrics = metric_schema(own_metrics(), Timed::phase),
    .check = [](const Params& params) {
        check_ring("parallel_thread_ring", params, std::uint64_t(params.integer("tokens")));
    },
    .run = [](const Params& params) { return run_ring(params, std::uint32_t(params.integer("tokens"))); },
    .expect = [](const Params& params) { return expect_ring(params, std::uint64_t(params.integer("tokens"))); },
    .work = [](const Params& params) { return double(params.integer("hops")); },
});

}  // namespace
}  // namespace labctl::kernels::thread_ring
