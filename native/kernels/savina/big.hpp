// What every savina_big kernel (ours, caf_savina_big) shares: Savina's generator, where each
// actor's pings go, the actors' side of the exchange, the sink's tally, the answer and its
// format, so that they are verified the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "random.hpp"

namespace labctl::kernels::savina_big {

// Savina's PseudoRandom; actor i's starts at seed + i (Savina's is seed 0: PseudoRandom(id)).
using Generator = savina::PseudoRandom;

// Pong's sender before any ping: the start the kernel gives every actor (Savina's PongMessage(-1)).
inline constexpr std::uint32_t kNobody = ~std::uint32_t{0};

// What an actor reports to the sink once it has made its pings.
struct Finished {
    std::uint32_t actor;
    std::uint64_t pings;       // sent
    std::uint64_t pongs;       // received, the start's included
    std::uint64_t wrong;       // pongs from another actor than the one last pinged
};

// An actor's side, on any runtime: Savina's BigActor. Its pings go where its generator says;
// each pong must come from the actor it last pinged.
class Pinger {
public:
    Pinger(std::uint32_t index, std::uint32_t actors, std::uint64_t pings, std::uint64_t seed)
        : index_(index), actors_(actors), pings_(pings), generator_(seed + index) {}

    // A ping received: counted (the answer to send goes to `from`).
    void pinged() noexcept { ++pinged_; }

    // A pong received from `from`: the actor to ping next, or kNobody once every ping is made
    // (then report finished()).
    std::uint32_t ponged(std::uint32_t from) {
        ++pongs_;
        if (from != expected_) ++wrong_;
        if (sent_ == pings_) return kNobody;
        ++sent_;
        expected_ = generator_.next(actors_);
        return expected_;
    }

    Finished finished() const noexcept { return {index_, sent_, pongs_, wrong_}; }
    // Pings received: read once the run is over.
    std::uint64_t pinged_count() const noexcept { return pinged_; }

private:
    const std::uint32_t index_;
    const std::uint32_t actors_;
    const std::uint64_t pings_;
    Generator generator_;
    std::uint32_t expected_ = kNobody;
    std::uint64_t sent_ = 0;
    std::uint64_t pongs_ = 0;
    std::uint64_t wrong_ = 0;
    std::uint64_t pinged_ = 0;
};

// The pings each actor receives, replaying every actor's generator.
inline std::vector<std::uint64_t> pinged_plan(std::uint32_t actors, std::uint64_t pings, std::uint64_t seed) {
    std::vector<std::uint64_t> pinged(actors, 0);
    for (std::uint32_t i = 0; i < actors; ++i) {
        Generator generator(seed + i);
        for (std::uint64_t n = 0; n < pings; ++n) ++pinged[generator.next(actors)];
    }
    return pinged;
}

struct Outcome {
    std::uint64_t finished = 0;
    std::uint64_t repeated = 0;  // reports from an actor that had reported already
    std::uint64_t pings = 0;
    std::uint64_t pongs = 0;     // the pings' answers (the starts not counted)
    std::uint64_t wrong = 0;
};

inline std::string describe(const Outcome& o, std::uint64_t uneven, std::uint64_t most_pinged) {
    return "finished=" + std::to_string(o.finished) + " repeated=" + std::to_string(o.repeated) +
           " pings=" + std::to_string(o.pings) + " pongs=" + std::to_string(o.pongs) +
           " wrong_pongs=" + std::to_string(o.wrong) + " uneven_actors=" + std::to_string(uneven) +
           " most_pinged=" + std::to_string(most_pinged);
}

// The sink's side, on any runtime: Savina's SinkActor, counting the actors that finished.
class Sink {
public:
    explicit Sink(std::uint32_t actors) : seen_(actors, false) {}
    bool add(const Finished& f) {
        ++outcome_.finished;
        if (f.actor >= seen_.size() || seen_[f.actor]) ++outcome_.repeated;
        else seen_[f.actor] = true;
        outcome_.pings += f.pings;
        outcome_.pongs += f.pongs - std::min<std::uint64_t>(f.pongs, 1);
        outcome_.wrong += f.wrong;
        return outcome_.finished == seen_.size();
    }
    const Outcome& outcome() const noexcept { return outcome_; }

private:
    std::vector<bool> seen_;
    Outcome outcome_;
};

// What the answer must be: every actor finished once after its `pings` pings, each answered by
// the actor pinged; each actor pinged as often as the generators say, the most pinged that often.
inline std::string expected(std::uint32_t actors, std::uint64_t pings, std::uint64_t seed) {
    Outcome o;
    o.finished = actors;
    o.pings = o.pongs = std::uint64_t(actors) * pings;
    const std::vector<std::uint64_t> pinged = pinged_plan(actors, pings, seed);
    return describe(o, 0, *std::max_element(pinged.begin(), pinged.end()));
}

// A run's outcome, once its phase is in `result`; `pinged(i)`: the pings actor i received.
template <class Pinged>
void report(Result& result, const Outcome& outcome, std::uint32_t actors, std::uint64_t pings, std::uint64_t seed,
            Pinged pinged) {
    const std::vector<std::uint64_t> plan = pinged_plan(actors, pings, seed);
    std::uint64_t received = 0, uneven = 0, most = 0;
    for (std::uint32_t i = 0; i < actors; ++i) {
        const std::uint64_t count = pinged(i);
        received += count;
        most = std::max(most, count);
        if (count != plan[i]) ++uneven;
    }
    // The starts, the pings received, their pongs, the reports.
    result.messages_processed = actors + received + outcome.pongs + outcome.finished;
    result.answer = describe(outcome, uneven, most);
    result.expected = expected(actors, pings, seed);
}

inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("actors", 120, {1, 1'000'000}, "actors pinging one another (Savina's W)"),
        integer_param("pings", 20'000, {0, 1'000'000'000},
                      "pings each actor sends, one at a time, each to a neighbour its generator draws "
                      "and answered by a pong (Savina's N)"),
        integer_param("seed", 0, {0, 1'000'000'000},
                      "actor i's generator (Savina's 16-bit PseudoRandom) starts at seed + i (Savina's: 0)"),
    };
}

// The messages, one protocol for ours and caf_savina_big (its CAF port).

struct Ping {
    std::uint32_t from;
};

struct Pong {
    std::uint32_t from;
};

}  // namespace labctl::kernels::savina_big
