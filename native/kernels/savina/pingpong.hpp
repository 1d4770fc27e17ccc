// What savina_pingpong and caf_savina_pingpong share: Savina's parameter, the tally the two actors
// keep of the messages they handle, the answer, its format and what it must be.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"

namespace labctl::kernels::savina_pingpong {

// What the two actors counted, each its own fields: ping the Start, its own Ping messages and
// the SendPong replies, and the pings it had left at the end; pong the SendPing requests and the
// Stop.
struct Tally {
    std::uint64_t start = 0;
    std::uint64_t ping = 0;
    std::uint64_t send_ping = 0;
    std::uint64_t send_pong = 0;
    std::uint64_t stop = 0;
    std::int64_t pings_left = 0;

    std::uint64_t messages() const noexcept { return start + ping + send_ping + send_pong + stop; }
};

inline std::string describe(const Tally& t) {
    return "start=" + std::to_string(t.start) + " ping=" + std::to_string(t.ping) +
           " send_ping=" + std::to_string(t.send_ping) + " send_pong=" + std::to_string(t.send_pong) +
           " stop=" + std::to_string(t.stop) + " pings_left=" + std::to_string(t.pings_left);
}

// Savina's pattern with N pings: one Start, N SendPing, N SendPong, N-1 Ping (ping's message to
// itself before each ping but the first) and one Stop: 3N+1 messages.
inline Tally expected_tally(std::uint64_t pings) {
    return {.start = 1, .ping = pings - 1, .send_ping = pings, .send_pong = pings, .stop = 1, .pings_left = 0};
}

inline std::string expected(std::uint64_t pings) { return describe(expected_tally(pings)); }

inline Expectation expect(const Params& params) {
    const auto pings = std::uint64_t(params.integer("pings"));
    return {expected(pings), expected_tally(pings).messages()};
}

inline void report(Result& result, const Tally& tally, std::uint64_t pings) {
    result.messages_processed = tally.messages();
    result.answer = describe(tally);
    result.expected = expected(pings);
}

// Savina's PingPongConfig: N (num pings), 40,000.
inline std::vector<ParamSpec> own_params() {
    return {integer_param("pings", 40'000, {1, 1'000'000'000},
                          "Savina's N: the pings the ping actor sends, each answered by a pong")};
}

// The messages, one protocol for ours and caf_savina_pingpong (its CAF port); `Handle` is how the
// runtime addresses ping or pong (ours: a pointer to its agent; CAF's: caf::actor).

template <class Handle>
struct SendPing {
    Handle sender;
};

template <class Handle>
struct SendPong {
    Handle sender;
};

struct Start {};

struct PingMsg {};  // ping's note to itself to send the next ping

struct Stop {};

}  // namespace labctl::kernels::savina_pingpong
