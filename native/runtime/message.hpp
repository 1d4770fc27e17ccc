// Message envelopes and message type ids.
// A handler is found by comparing one 64-bit key (source mbox id, message type id) in the
// receiver's small table: no RTTI, no dynamic_cast, no std::function per message.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "pool.hpp"

namespace labctl::rt {

class Agent;

using TypeId = std::uint32_t;
using MboxId = std::uint32_t;

// Reserved type ids: the lifecycle demands every agent receives.
inline constexpr TypeId kStartType = 1;
inline constexpr TypeId kFinishType = 2;
inline constexpr TypeId kRetireType = 3;  // after its coop has finished: see reap
inline constexpr TypeId kFirstMessageType = 16;

// Mbox id 0 is an agent's own direct mbox; named mboxes number from 1.
inline constexpr MboxId kDirectMbox = 0;

namespace detail {
inline std::atomic<TypeId> next_type_id{kFirstMessageType};
}

// One id per message type, given out once when the program loads.
template <class M>
inline const TypeId type_id = detail::next_type_id.fetch_add(1, std::memory_order_relaxed);

constexpr std::uint64_t subscription_key(MboxId mbox, TypeId type) noexcept {
    return (std::uint64_t{mbox} << 32) | type;
}

// The header every demand carries through an event queue. `next` is written by the pusher
// before the release CAS that publishes the envelope and read by the consumer after its
// acquire exchange, so it needs no atomic of its own.
struct Envelope {
    Envelope* next;
    Agent* target;
    std::uint64_t key;
    // Destroys the message and returns the envelope to the pool, for whoever holds an envelope
    // without knowing its type (a message no handler takes, the finish demand, a channel); a
    // handler's thunk frees its envelope itself (detail::invoke). Null for the start and retire
    // demands embedded in agents.
    void (*dispose)(Envelope*) noexcept;
};

template <class M>
struct MessageEnvelope final : Envelope {
    // The header is written once, here, with the message: no default stores to overwrite.
    template <class... Args>
    MessageEnvelope(Agent* target, std::uint64_t key, Args&&... args)
        : Envelope{nullptr, target, key, &dispose_impl}, message(std::forward<Args>(args)...) {}
    M message;

    static void dispose_impl(Envelope* e) noexcept {
        pool::destroy(static_cast<MessageEnvelope*>(e));
    }
};

template <class M, class... Args>
MessageEnvelope<M>* make_envelope(Agent* target, std::uint64_t key, Args&&... args) {
    static_assert(std::is_nothrow_destructible_v<M>);
    return pool::make<MessageEnvelope<M>>(target, key, std::forward<Args>(args)...);
}

}  // namespace labctl::rt
