// Building a coop and destroying it.
#include "coop.hpp"

#include <stdexcept>

namespace labctl::rt {

EventQueue& Coop::shared_queue(const Dispatcher& owner, Scheduler& scheduler) {
    for (SharedQueue* q = shared_queues_; q != nullptr; q = q->next)
        if (q->owner == &owner) return q->queue;
    auto* q = pool::make<SharedQueue>(owner, scheduler);
    q->next = shared_queues_;
    shared_queues_ = q;
    return q->queue;
}

void Coop::adopt(Agent& agent, const Binder& binder) {
    try {
        if (state_.load(std::memory_order_relaxed) != State::building)
            throw std::logic_error("an agent can join a coop only before the coop is registered");
        if (binder.dispatcher == nullptr) throw std::invalid_argument("binder has no dispatcher");
        agent.dispatcher_ = binder.dispatcher;
        binder.dispatcher->bind(agent, binder.group);
    } catch (...) {
        destroy_agent(agent);
        throw;
    }
    agent.handlers_.for_each([this](const HandlerTable::Entry& entry) {
        if (MboxId(entry.key >> 32) != kDirectMbox) ++named_subscriptions_;
    });
    if (last_ != nullptr) last_->next_in_coop_ = &agent;
    else first_ = &agent;
    last_ = &agent;
    ++size_;
}

void Coop::destroy_agent(Agent& agent) noexcept {
    const std::uint32_t size = agent.allocation_size_;
    agent.~Agent();
    pool::deallocate(&agent, size);
}

Coop::~Coop() {
    for (Agent* agent = first_; agent != nullptr;) {
        Agent* next = agent->next_in_coop_;
        agent->dispatcher_->unbind(*agent);
        destroy_agent(*agent);
        agent = next;
    }
    for (SharedQueue* q = shared_queues_; q != nullptr;) {
        SharedQueue* next = q->next;
        pool::destroy(q);
        q = next;
    }
}

}  // namespace labctl::rt
