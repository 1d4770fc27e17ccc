// What savina_threadring and caf_savina_threadring share: Savina's parameters, what each ring
// member counts, where the arithmetic says each message lands, the answer, its format and what
// it must be.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::savina_threadring {

// What one member counted: its Data (its next member's handle), the Pings it received, the Exit
// it handled alive, the Exit that reached it after it had exited (Savina's dead letter), and
// whether it received the Ping whose countdown was 0.
struct Counts {
    std::uint64_t data = 0;
    std::uint64_t pings = 0;
    std::uint64_t exits = 0;
    std::uint64_t dead_letters = 0;
    std::uint64_t last_ping = 0;

    bool operator==(const Counts&) const = default;
};

// Savina's ring of N actors and a Ping counted down from R: Ping(R) starts at member 0, so
// Ping(R-k) lands on member k % N, R+1 Pings in all; Ping(0)'s member sends Exit(N) on, and
// Exit(N-k) lands on member (R+1+k) % N: every member exits once, and Exit(0) comes back to the
// first to have exited, which has: Savina's Akka drops it as a dead letter, we count it there.
struct Ring {
    std::uint64_t actors;
    std::uint64_t pings;

    std::uint64_t last_ping_at() const noexcept { return pings % actors; }
    std::uint64_t first_exit_at() const noexcept { return (pings + 1) % actors; }

    Counts expected(std::uint64_t i) const noexcept {
        const std::uint64_t stops = pings + 1;
        return {.data = 1,
                .pings = stops / actors + (i < stops % actors ? 1 : 0),
                .exits = 1,
                .dead_letters = i == first_exit_at() ? 1u : 0u,
                .last_ping = i == last_ping_at() ? 1u : 0u};
    }
};

struct Outcome {
    Counts total;
    std::int64_t last_ping_at = -1;  // the member that received Ping(0); -1: none did
    std::uint64_t uneven = 0;        // members whose counts differ from Ring::expected
};

inline std::string describe(const Outcome& o) {
    return "data=" + std::to_string(o.total.data) + " pings=" + std::to_string(o.total.pings) +
           " exits=" + std::to_string(o.total.exits) + " dead_letters=" + std::to_string(o.total.dead_letters) +
           " last_ping_at=" + std::to_string(o.last_ping_at) + " uneven_actors=" + std::to_string(o.uneven);
}

inline Outcome expected_outcome(const Ring& ring) {
    return {.total = {.data = ring.actors, .pings = ring.pings + 1, .exits = ring.actors, .dead_letters = 1,
                      .last_ping = 1},
            .last_ping_at = std::int64_t(ring.last_ping_at()),
            .uneven = 0};
}

inline std::uint64_t messages(const Counts& c) { return c.data + c.pings + c.exits + c.dead_letters; }

inline Ring ring_of(const Params& params) {
    return {std::uint64_t(params.integer("actors")), std::uint64_t(params.integer("pings"))};
}

// N Data, R+1 Pings, N Exits handled and the dead letter: 2N+R+2 messages.
inline Expectation expect(const Params& params) {
    const Outcome outcome = expected_outcome(ring_of(params));
    return {describe(outcome), messages(outcome.total)};
}

// What the members counted, read once the run has ended; `counts(i)`: member i's.
template <class CountsOf>
Outcome collect(const Ring& ring, CountsOf counts) {
    Outcome outcome;
    for (std::uint64_t i = 0; i < ring.actors; ++i) {
        const Counts c = counts(i);
        outcome.total.data += c.data;
        outcome.total.pings += c.pings;
        outcome.total.exits += c.exits;
        outcome.total.dead_letters += c.dead_letters;
        outcome.total.last_ping += c.last_ping;
        if (c.last_ping != 0) outcome.last_ping_at = std::int64_t(i);
        if (!(c == ring.expected(i))) ++outcome.uneven;
    }
    return outcome;
}

inline void report(Result& result, const Outcome& outcome, const Ring& ring) {
    result.messages_processed = messages(outcome.total);
    result.answer = describe(outcome);
    result.expected = describe(expected_outcome(ring));
}

// Savina's ThreadRingConfig: N (num actors) 100, R (num pings) 100,000.
inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("actors", 100, {1, 1'000'000},
                      "Savina's N: the actors in the ring (also the count the exit token starts from)"),
        integer_param("pings", 100'000, {0, 10'000'000'000},
                      "Savina's R: the countdown the ping starts with at actor 0, each hop one less; "
                      "pings+1 Ping messages in all"),
    };
}

// The messages, one protocol for ours and caf_savina_threadring (its CAF port); `Handle` is how
// the runtime addresses a member (ours: a pointer to its agent; CAF's: caf::actor).

template <class Handle>
struct Data {
    Handle next;
};

struct Ping {
    std::uint64_t pings_left;
};

struct Exit {
    std::uint64_t exits_left;
};

}  // namespace labctl::kernels::savina_threadring
