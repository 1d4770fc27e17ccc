// What every thread_ring kernel (ours, caf_thread_ring) shares: where each token starts and
// ends, how often each agent is visited, the collector's checks, the answer and its format, so
// that they are verified the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::thread_ring {

// Where token j starts and how many hops it makes: the hops are split as Theron splits them
// (each of the first tokens-1 makes ceil(hops/tokens), the last the rest: 50M hops over 503
// tokens are 502 x 99404 and 99192).
struct Plan {
    std::uint32_t actors;
    std::vector<std::uint32_t> start;
    std::vector<std::uint64_t> hops;

    Plan(std::uint32_t actors_, std::uint32_t tokens, std::uint64_t total_hops) : actors(actors_) {
        const std::uint64_t each = (total_hops + tokens - 1) / tokens;
        for (std::uint32_t j = 0; j < tokens; ++j) {
            start.push_back(j % actors);
            hops.push_back(j + 1 < tokens ? each : total_hops - each * (tokens - 1));
        }
    }

    std::uint32_t end(std::uint32_t j) const { return std::uint32_t((start[j] + hops[j]) % actors); }

    // Tokens agent i receives (the injection included): token j visits start..start+hops.
    std::uint64_t visits(std::uint32_t i) const {
        std::uint64_t total = 0;
        for (std::size_t j = 0; j < start.size(); ++j) {
            const std::uint64_t stops = hops[j] + 1;
            const std::uint64_t offset = (i + actors - start[j]) % actors;
            total += stops / actors + (offset < stops % actors ? 1 : 0);
        }
        return total;
    }
};

struct Outcome {
    std::uint64_t ended = 0;       // tokens that reported their end
    std::uint64_t wrong_end = 0;   // ended at another agent than the arithmetic says
    std::uint64_t wrong_hops = 0;  // made another number of hops than planned
    std::uint64_t repeated = 0;    // ended twice
};

inline std::string describe(const Outcome& o, std::uint64_t uneven_agents) {
    return "tokens_ended=" + std::to_string(o.ended) + " wrong_end=" + std::to_string(o.wrong_end) +
           " wrong_hops=" + std::to_string(o.wrong_hops) + " repeated=" + std::to_string(o.repeated) +
           " uneven_agents=" + std::to_string(uneven_agents);
}

// What the answer must be: every token ended once, where and when planned, and every agent
// visited as often as Plan::visits says.
inline std::string expected(std::uint64_t tokens) {
    Outcome outcome;
    outcome.ended = tokens;
    return describe(outcome, 0);
}

// The collector's side, on any runtime: each token's end checked against the plan.
class Ends {
public:
    explicit Ends(const Plan& plan) : plan_(plan), seen_(plan.start.size(), false) {}

    // Token `id` ended at `agent` after `hops` hops; true once every token has ended, and
    // outcome() is then final.
    bool count(std::uint32_t id, std::uint32_t agent, std::uint64_t hops) {
        ++outcome_.ended;
        if (seen_[id]) ++outcome_.repeated;
        seen_[id] = true;
        if (agent != plan_.end(id)) ++outcome_.wrong_end;
        if (hops != plan_.hops[id]) ++outcome_.wrong_hops;
        return outcome_.ended == plan_.start.size();
    }

    const Outcome& outcome() const noexcept { return outcome_; }

private:
    const Plan& plan_;
    std::vector<bool> seen_;
    Outcome outcome_;
};

// What the ring's agents received, read after the run: in all, and how many agents received
// another number of tokens than Plan::visits says.
struct Receipts {
    std::uint64_t received = 0;
    std::uint64_t uneven = 0;
};

// `received(i)`: what agent i counted.
template <class Received>
Receipts receipts(const Plan& plan, Received received) {
    Receipts counted;
    for (std::uint32_t i = 0; i < plan.actors; ++i) {
        const std::uint64_t count = received(i);
        counted.received += count;
        if (count != plan.visits(i)) ++counted.uneven;
    }
    return counted;
}

// A ring's run of `tokens` tokens, once its phase is in `result`: what it processed, its answer
// and what that must be, and the time per hop. With hops = 0 no hop was made (each token is
// injected and reports where it stands): there is no time per hop, so none is reported, rather
// than the phase's whole time under that name.
inline void report(Result& result, const Outcome& outcome, const Receipts& receipts, std::uint64_t tokens) {
    result.messages_processed = receipts.received + outcome.ended;  // receipts and end reports
    result.answer = describe(outcome, receipts.uneven);
    result.expected = expected(tokens);
    // Every receipt but each token's injection is a hop (receipts.received >= tokens: the
    // answer's check counts them against the plan).
    const std::uint64_t hops = receipts.received - std::min(receipts.received, tokens);
    result.metrics.clear();
    if (hops != 0) result.metrics.push_back({"ns_per_hop", double(result.elapsed_ns) / double(hops)});
}

// What report() records, as every ring kernel declares it (Kernel::metrics).
inline std::vector<MetricSpec> own_metrics() {
    return {{.name = "ns_per_hop", .absent_when = "hops = 0"}};
}

// Theron's split gives the first tokens-1 ceil(hops/tokens) each; the last must not be short.
inline void check_split(const std::string& kernel, std::uint64_t hops, std::uint64_t tokens) {
    if (tokens > 1 && (hops + tokens - 1) / tokens * (tokens - 1) > hops)
        throw ParamError(kernel, "hops",
                         "parameter 'hops' (" + std::to_string(hops) + ") is too small to split over " +
                             std::to_string(tokens) + " tokens (each but the last makes ceil(hops/tokens)); "
                             "use hops >= " + std::to_string(tokens * (tokens - 1)) + " or fewer tokens");
}

// The rings' own parameters, one schema for every runtime that runs them: actors, tokens
// (parallel_thread_ring only) and hops; each kernel adds its runtime parameters with schema()
// (framework/schema.hpp).
inline std::vector<ParamSpec> own_params(bool parallel) {
    std::vector<ParamSpec> params = {
        integer_param("actors", 503, {1, 10'000'000}, "agents in the ring"),
        integer_param("hops", 50'000'000, {0, 100'000'000'000},
                      "sends from one agent to the next, over all tokens (0: each token is only "
                      "injected and reports, and no ns_per_hop is reported)"),
    };
    if (parallel)
        params.insert(params.begin() + 1,
                      integer_param("tokens", 503, {1, 10'000'000},
                                    "tokens circulating at once; token j starts at agent j % actors"));
    return params;
}

// The messages, one protocol for ours and caf_thread_ring (its CAF port).

struct Token {
    std::uint32_t id;
    std::uint64_t remaining;  // hops still to make
    std::uint64_t hops;       // hops made so far, counted independently of `remaining`
};

// A token's last stop, reported to the collector.
struct TokenEnd {
    std::uint32_t id;
    std::uint32_t agent;
    std::uint64_t hops;
};

}  // namespace labctl::kernels::thread_ring
