// Mboxes: where messages are sent. An agent's direct mbox delivers to that agent alone; a named
// mbox delivers a copy to every agent subscribed to the message's type on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent.hpp"
#include "wait.hpp"

namespace labctl::rt {

class NamedMbox {
public:
    NamedMbox(std::string name, MboxId id) : name_(std::move(name)), id_(id) {}
    NamedMbox(const NamedMbox&) = delete;
    NamedMbox& operator=(const NamedMbox&) = delete;

    const std::string& name() const noexcept { return name_; }
    MboxId id() const noexcept { return id_; }

    struct Subscriber {
        TypeId type;
        EventQueue* queue;
        Agent* agent;
    };

    // Adds or removes subscribers in one exclusive section (a coop's worth at a time).
    void subscribe(const std::vector<Subscriber>& added);
    void unsubscribe(const std::vector<Subscriber>& removed);

    // Calls `deliver(first, last)` for each run of subscribers to `type` that share an event
    // queue, holding the mbox shared so that no subscriber can leave while a delivery to it is
    // in progress: once unsubscribe returns, nothing more arrives from this mbox.
    template <class Deliver>
    void for_each_queue(TypeId type, Deliver&& deliver) {
        struct Shared {
            RwSpinLock& lock;
            explicit Shared(RwSpinLock& l) noexcept : lock(l) { lock.lock_shared(); }
            ~Shared() { lock.unlock_shared(); }
        } shared(lock_);
        const Subscriber* it = subscribers_.data();
        const Subscriber* const end = it + subscribers_.size();
        while (it != end && it->type != type) ++it;
        while (it != end && it->type == type) {
            const Subscriber* run_end = it + 1;
            while (run_end != end && run_end->type == type && run_end->queue == it->queue) ++run_end;
            deliver(it, run_end);
            it = run_end;
        }
    }

private:
    const std::string name_;
    const MboxId id_;
    RwSpinLock lock_;
    std::vector<Subscriber> subscribers_;  // sorted by (type, queue): runs per queue are adjacent
};

template <auto Method>
void Agent::subscribe(NamedMbox& source, ThreadSafety safety) {
    using M = typename detail::HandlerTraits<decltype(Method)>::Message;
    handlers_.add(subscription_key(source.id(), type_id<M>), &detail::invoke<Method>, safety);
}

// A destination of either kind, for code that does not care which (ping_pong's mbox=direct|named).
class Mbox {
public:
    Mbox(Agent& agent) noexcept : agent_(&agent) {}
    Mbox(NamedMbox& named) noexcept : named_(&named) {}

    Agent* agent() const noexcept { return agent_; }
    NamedMbox* named() const noexcept { return named_; }

private:
    Agent* agent_ = nullptr;
    NamedMbox* named_ = nullptr;
};

}  // namespace labctl::rt
