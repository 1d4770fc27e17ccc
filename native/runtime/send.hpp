// Sending: a message constructed in a pooled envelope and pushed onto the receiver's queue.
#pragma once

#include <type_traits>
#include <utility>

#include "agent.hpp"
#include "mbox.hpp"

namespace labctl::rt {

// To one agent's direct mbox.
template <class M, class... Args>
void send(Agent& to, Args&&... args) {
    const std::uint64_t key = subscription_key(kDirectMbox, type_id<M>);
    Envelope* e = make_envelope<M>(&to, key, std::forward<Args>(args)...);
    queue_of(to).push(e);
}

// To every subscriber of M on a named mbox, each receiving its own copy. Subscribers that share
// a queue (one thread, one group, one coop) receive their copies in one push. Out of line, so
// that a handler that may send either way keeps the direct path lean.
template <class M, class... Args>
[[gnu::noinline]] void send(NamedMbox& to, Args&&... args) {
    static_assert(std::is_copy_constructible_v<M>, "a named mbox copies the message per subscriber");
    const M prototype(std::forward<Args>(args)...);
    const std::uint64_t key = subscription_key(to.id(), type_id<M>);
    to.for_each_queue(type_id<M>, [&](const NamedMbox::Subscriber* first,
                                      const NamedMbox::Subscriber* last) {
        Envelope* head = nullptr;
        Envelope* tail = nullptr;
        for (const NamedMbox::Subscriber* s = first; s != last; ++s) {
            Envelope* e = make_envelope<M>(s->agent, key, prototype);
            e->next = head;
            head = e;
            if (tail == nullptr) tail = e;
        }
        first->queue->push_chain(head, tail);
    });
}

template <class M, class... Args>
void send(const Mbox& to, Args&&... args) {
    if (Agent* agent = to.agent()) send<M>(*agent, std::forward<Args>(args)...);
    else send<M>(*to.named(), std::forward<Args>(args)...);
}

}  // namespace labctl::rt
