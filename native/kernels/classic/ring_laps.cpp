// ring_laps: `actors` agents in a ring pass one token around; agent 0 counts the laps. Measures
// the cost of one hop (a send and a dispatch, across threads when the ring spans several), as
// laps made in a fixed time or time for a fixed number of laps.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"

namespace labctl::kernels::ring_laps {
namespace {

using Clock = std::chrono::steady_clock;

// hops: sends made so far, this one included.
struct Token {
    std::uint64_t hops;
};

struct Outcome {
    std::uint64_t laps = 0;
    std::uint64_t hops = 0;  // the hop count the token carried back to agent 0 last
    Clock::time_point start;
    Clock::time_point end;
};

// What agent 0 needs beyond what every member has.
struct Lead {
    std::uint64_t laps;  // 0: run whole laps until `duration` has elapsed
    Clock::duration duration;
    rt::Completion<Outcome>& done;
};

class Member final : public rt::Agent {
public:
    // `lead` is null for every agent but agent 0.
    explicit Member(const Lead* lead) : lead_(lead) { subscribe<&Member::on_token>(); }
    void send_to(Member& next) { next_ = &next; }
    std::uint64_t received() const noexcept { return received_; }

private:
    void on_start() override {
        if (lead_ == nullptr) return;
        // The phase starts here, once every agent exists: building a million agents is not a lap.
        outcome_.start = Clock::now();
        rt::send<Token>(*next_, std::uint64_t{1});
    }

    void on_token(const Token& token) {
        ++received_;
        if (lead_ != nullptr && lap_done(token)) return;
        rt::send<Token>(*next_, token.hops + 1);
    }

    // Agent 0 closes a lap; true when the token stops here.
    bool lap_done(const Token& token) {
        ++outcome_.laps;
        // One clock read per lap, and only in duration mode.
        const bool finished = lead_->laps != 0 ? outcome_.laps == lead_->laps
                                               : Clock::now() - outcome_.start >= lead_->duration;
        if (!finished) return false;
        outcome_.hops = token.hops;
        outcome_.end = Clock::now();
        lead_->done.set(outcome_);
        return true;
    }

    const Lead* const lead_;
    Member* next_ = nullptr;
    std::uint64_t received_ = 0;
    Outcome outcome_;  // agent 0's only
};

std::string describe(std::uint64_t laps, std::uint64_t hops, std::uint64_t received, std::uint64_t uneven) {
    return "laps=" + std::to_string(laps) + " hops=" + std::to_string(hops) +
           " received=" + std::to_string(received) + " uneven_agents=" + std::to_string(uneven);
}

Result run(const Params& params) {
    const auto actors = std::uint64_t(params.integer("actors"));
    const auto laps = std::uint64_t(params.integer("laps"));

    std::vector<Member*> ring;
    MeasuredRun<Outcome> run(params);
    const Lead lead{laps, run_duration(params), run.done()};
    Result result;
    std::uint64_t received = 0;
    std::uint64_t uneven = 0;

    const Outcome outcome = run.measure(
        result,
        [&](rt::Environment& env, DispatcherChoice& dispatchers) {
            ring.reserve(actors);
            // One coop: with a cooperation FIFO pool the ring shares one queue (one hop at a time,
            // never in parallel anyway: there is one token).
            env.introduce_coop(dispatchers.binder(0), [&](rt::Coop& coop) {
                for (std::uint64_t i = 0; i < actors; ++i)
                    ring.push_back(&coop.make_agent_with_binder<Member>(dispatchers.binder(unsigned(i)),
                                                                       i == 0 ? &lead : nullptr));
                for (std::uint64_t i = 0; i < actors; ++i) ring[i]->send_to(*ring[(i + 1) % actors]);
            });
        },
        // Each agent's last write happened before it forwarded the token, which travelled on to
        // agent 0 before done.set(): reading the counts here is ordered after them.
        [&](const Outcome& outcome) {
            for (const Member* member : ring) {
                received += member->received();
                if (member->received() != outcome.laps) ++uneven;
            }
        });
    // From agent 0's first send to its last lap: agent creation is not part of it.
    result.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.end - outcome.start).count();

    // Duration mode: the lap count is the run's; every other field must agree with it.
    const std::uint64_t n = laps != 0 ? laps : outcome.laps;
    result.messages_processed = received;
    result.answer = describe(outcome.laps, outcome.hops, received, uneven);
    result.expected = describe(n, n * actors, n * actors, 0);
    result.metrics = {{"laps_done", double(outcome.laps)},
                      {"ns_per_hop", outcome.hops == 0 ? 0.0 : double(result.elapsed_ns) / double(outcome.hops)}};
    return result;
}

void check(const Params& params) {
    const auto actors = std::uint64_t(params.integer("actors"));
    check_thread_per_agent("ring_laps", params, actors, "actors=" + std::to_string(actors));
}

// For time estimates (Kernel::work).
double work(const Params& params) {
    return double(params.integer("laps")) * double(params.integer("actors"));
}

// The kernel's own parameters: the work it does.
std::vector<ParamSpec> own_params() {
    std::vector<ParamSpec> params = {
        integer_param("actors", 100, {2, 1'000'000}, "agents in the ring"),
    };
    for (ParamSpec& spec : rounds_or_duration_params("laps")) params.push_back(std::move(spec));
    return params;
}

const Registration registration(Kernel{
    .name = "ring_laps",
    .summary = "one token around a ring of agents: laps per second, or the cost of a hop",
    .description =
        "`actors` agents form a ring; agent 0 sends a token carrying its hop count to agent 1, "
        "each agent forwards it to the next, and agent 0 counts a lap each time it comes "
        "back. With laps=0 agent 0 runs whole laps until duration_s has elapsed, reading the "
        "clock once per lap; laps>0 runs exactly that many and overrides duration_s. The "
        "phase runs from agent 0's first send to its last lap; every hop is one message.",
    .sources = {{"machinate_shootout", "the ring problem"}},
    .verifies = "the token's final hop count is laps*actors, the agents' own counts total "
                "the same and every agent received exactly `laps` tokens; with laps>0 the "
                "run did exactly that many",
    .params = schema(own_params(), Timed::phase, dispatcher_params()),
    .metrics = metric_schema({{.name = "laps_done"}, {.name = "ns_per_hop"}}, Timed::phase),
    .check = check,
    .run = run,
    .work = work,
});

}  // namespace
}  // namespace labctl::kernels::ring_laps
