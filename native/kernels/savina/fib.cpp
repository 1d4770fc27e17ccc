// savina_fib: Savina's 29. Fibonacci (fib). A tree of agents: the agent asked for fib(n), n > 2,
// creates two child agents, asks them for fib(n-1) and fib(n-2) and adds their answers; n <= 2
// answers 1. Measures the creation of many short-lived agents, each doing almost nothing.
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "mailboxes.hpp"
#include "parallel.hpp"

namespace labctl::kernels::savina_fib {
namespace {

// Savina's base case: fib(n) = 1 for n <= 2.
constexpr std::int64_t kBase = 2;

// The sequential program: the same recursion, no agents.
std::uint64_t fib(std::int64_t n) noexcept { return n <= kBase ? 1 : fib(n - 1) + fib(n - 2); }

// The agents of the tree, in closed form: a leaf is one agent, a node one more than its two
// subtrees, so agents(n) = 2 fib(n) - 1 (fib computed by iteration here, not by the recursion).
std::uint64_t agents(std::int64_t n) noexcept {
    std::uint64_t a = 1, b = 1;  // fib(1), fib(2)
    for (std::int64_t k = 3; k <= n; ++k) {
        const std::uint64_t c = a + b;
        a = b;
        b = c;
    }
    return 2 * b - 1;
}

struct Request {
    std::int64_t n;
};

// An answer, with the number of agents of the subtree that computed it.
struct Response {
    std::uint64_t value;
    std::uint64_t agents;
};

std::string describe(const Response& r) {
    return "fib=" + std::to_string(r.value) + " agents=" + std::to_string(r.agents);
}

// Each request and each answer but the root's.
std::uint64_t messages(std::uint64_t tree_agents) { return 2 * tree_agents - 1; }

struct Tree {
    DispatcherChoice& dispatchers;
    rt::Completion<Response>& done;
};

class FibAgent final : public rt::Agent {
public:
    FibAgent(const Tree& tree, FibAgent* parent) : tree_(tree), parent_(parent) {
        subscribe<&FibAgent::on_request>();
        subscribe<&FibAgent::on_response>();
    }

private:
    void on_request(const Request& request) {
        if (request.n <= kBase) {
            report({1, 1});
            return;
        }
        // As Savina's: the first child made and asked, then the second.
        ask(0, request.n - 1);
        ask(1, request.n - 2);
    }

    void ask(unsigned side, std::int64_t n) {
        FibAgent* child = nullptr;
        environment().introduce_coop(tree_.dispatchers.binder(side), [&](rt::Coop& coop) {
            child = &coop.make_agent<FibAgent>(tree_, this);
        });
        rt::send<Request>(*child, n);
    }

    void on_response(const Response& response) {
        sum_ += response.value;
        agents_ += response.agents;
        if (++received_ == 2) report({sum_, agents_});
    }

    void report(const Response& response) {
        if (parent_ != nullptr) rt::send<Response>(*parent_, response);
        else tree_.done.set(response);
    }

    const Tree& tree_;
    FibAgent* const parent_;
    std::uint64_t sum_ = 0;
    std::uint64_t agents_ = 1;  // itself
    unsigned received_ = 0;
};

Result run(const Params& params) {
    const std::int64_t n = params.integer("n");

    MeasuredRun<Response> run(params);
    rt::Environment& env = run.environment();
    DispatcherChoice& dispatchers = run.dispatchers();
    const Tree tree{dispatchers, run.done()};
    Result result;

    // As Savina's clock: from the root's creation and its request to the root's answer.
    const Response answer = run.measure(result, [&] {
        FibAgent* root = nullptr;
        env.introduce_coop(dispatchers.binder(), [&](rt::Coop& coop) { root = &coop.make_agent<FibAgent>(tree, nullptr); });
        rt::send<Request>(*root, n);
    });

    const std::uint64_t value = savina::timed_sequential(result, [&] { return fib(n); });
    result.messages_processed = messages(answer.agents);
    result.answer = describe(answer);
    result.expected = describe({value, agents(n)});
    return result;
}

Expectation expect(const Params& params) {
    const std::int64_t n = params.integer("n");
    return {describe({fib(n), agents(n)}), messages(agents(n))};
}

void check(const Params& params) {
    const std::int64_t n = params.integer("n");
    check_thread_per_agent("savina_fib", params, agents(n), "n=" + std::to_string(n));
}

std::vector<ParamSpec> own_params() {
    return {
        integer_param("n", 25, {1, 32},
                      "the Fibonacci number asked for; the tree has 2 fib(n) - 1 agents (Savina's N)"),
    };
}

const Registration registration(Kernel{
    .name = "savina_fib",
    .summary = "a tree of agents computing fib(n): each node creates two children, for the two "
               "numbers below its own, and adds their answers; creation-bound",
    .description =
        "Savina's benchmark 29, Fibonacci (fib). The root agent is asked for fib(n); an agent "
        "asked for fib(k) with k <= 2 answers 1 (Savina's base case), otherwise it creates a "
        "child agent (in a coop of its own) and asks it for fib(k-1), then another for fib(k-2), "
        "and answers its parent with the sum once both have answered. The tree has 2 fib(n) - 1 "
        "agents (150,049 at Savina's N = 25, fib = 75,025); messages: a request per agent and an "
        "answer per agent but the root. The phase runs from the root's creation and its request "
        "to the root's answer, the dispatcher's threads already running. Each agent's work is "
        "tiny (an addition): the run is bound by creating agents and delivering their two "
        "messages, which limits its speed-up on more threads. Verifies the value against the "
        "sequential program (the same recursion in one thread, no agents, timed as "
        "sequential_ns) and the number of agents against the closed form 2 fib(n) - 1. "
        "Differences from Savina: its clock also covers making the actor system, ours does not; "
        "each answer also carries the number of agents of its subtree (Savina's carries the "
        "value alone); Savina's actors exit once they have answered and the run ends when the "
        "actor system has terminated, ours stay registered until the environment stops, after "
        "the phase (their deregistration and destruction are not timed).",
    .sources = {{"savina", "29. Fibonacci (fib)"}},
    .verifies = "fib(n) as the sequential recursion computes it, and 2 fib(n) - 1 agents in the tree",
    .params = schema(own_params(), Timed::phase, savina::dispatcher_params()),
    .metrics = {savina::sequential_metric()},
    .check = check,
    .run = run,
    .expect = expect,
});

}  // namespace
}  // namespace labctl::kernels::savina_fib
