// Agent lifecycle and the slow paths of executing a demand.
#include "agent.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "coop.hpp"
#include "environment.hpp"

namespace labctl::rt {

namespace detail {
constinit thread_local Coop* t_coop_under_construction LABCTL_FAST_TLS = nullptr;
}

HandlerTable::~HandlerTable() {
    if (more_ != nullptr) pool::deallocate(more_, more_capacity_ * sizeof(Entry));
}

void HandlerTable::add(std::uint64_t key, Handler handler, ThreadSafety safety) {
    constexpr std::uint32_t kMaxMore = std::numeric_limits<std::uint16_t>::max();
    // The entry's index: 0 is first_, i is more_[i - 1]; one past the end for a new key.
    std::uint32_t index = 0;
    if (first_.handler != nullptr && first_.key != key) {
        index = 1;
        while (index <= more_size_ && more_[index - 1].key != key) ++index;
    }
    const bool safe = safety == ThreadSafety::thread_safe;
    if (safe && index >= kThreadSafeBits)
        throw std::length_error("an agent can mark only its first 32 subscriptions thread-safe");
    if (index == 0) {
        first_ = {key, handler};
    } else {
        if (index > more_size_) {
            if (more_size_ == kMaxMore)
                throw std::length_error("an agent can have at most 65536 subscriptions");
            if (more_size_ == more_capacity_) {
                const auto capacity =
                    std::uint16_t(std::clamp<std::uint32_t>(more_capacity_ * 2, 4, kMaxMore));
                auto* entries = static_cast<Entry*>(pool::allocate(capacity * sizeof(Entry)));
                std::copy(more_, more_ + more_size_, entries);
                if (more_ != nullptr) pool::deallocate(more_, more_capacity_ * sizeof(Entry));
                more_ = entries;
                more_capacity_ = capacity;
            }
            ++more_size_;
        }
        more_[index - 1] = {key, handler};
    }
    if (index < kThreadSafeBits) {
        const std::uint32_t bit = std::uint32_t{1} << index;
        thread_safe_ = safe ? thread_safe_ | bit : thread_safe_ & ~bit;
    }
}

Environment& Agent::environment() const noexcept { return coop_->environment(); }

void Agent::start() noexcept {
    state_ = State::running;
    try {
        on_start();
    } catch (...) {
        handler_failed(std::current_exception());
    }
}

void Agent::handler_failed(std::exception_ptr error) noexcept { environment().fail(error); }

void Agent::execute_special(Envelope& envelope, ExecutionContext& context) noexcept {
    // A message can overtake the start demand when agents of one coop live on different
    // threads (the first started sends to one whose start is not queued yet); the agent starts
    // on its first demand, whichever it is, so on_start always comes first.
    if (state_ == State::created) start();
    switch (envelope.key) {
    case kStartType:
        break;
    case kRetireType:
        context.retired.push_back(this);
        break;
    case kFinishType:
        if (state_ != State::running) break;
        state_ = State::finished;
        try {
            on_finish();
        } catch (...) {
            handler_failed(std::current_exception());
        }
        context.finished.push_back(this);
        break;
    default:
        // A message (lifecycle demands carry the keys above).
        if (state_ == State::running) {
            if (Handler handler = handlers_.find(envelope.key)) {
                try {
                    handler(*this, envelope);  // frees the envelope
                } catch (...) {
                    handler_failed(std::current_exception());
                }
                return;
            }
        }
        ++context.dropped;
    }
    // Every envelope no handler took: a message, or the finish demand (pooled, unlike the start
    // and retire demands embedded in the agent, which have no dispose).
    if (envelope.dispose != nullptr) envelope.dispose(&envelope);
}

void reap(ExecutionContext& context) noexcept {
    for (Agent* agent : context.finished) {
        Coop& coop = agent->coop();
        // acq_rel: each reaper releases its agent's last writes; the one that reaches zero
        // acquires them all. Past this line a reaper that did not reach zero must not touch the
        // coop: another thread may be retiring or destroying it.
        if (coop.unfinished_.fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
        // Every agent has finished, but what they sent one another before that may still sit in
        // their queues (to be dropped), and a pool may have such a queue scheduled. So the coop
        // is not destroyed yet: each agent gets a retire demand behind whatever its queue holds,
        // and the coop goes when the last of them has run (below), on a thread that has let go
        // of that queue. Nothing else reaches the queues: the agents that could send to them
        // have finished, and their named mboxes were left at deregistration.
        coop.unretired_.store(coop.size_, std::memory_order_relaxed);
        for (Agent* member = coop.first_; member != nullptr;) {
            // Read the link first: once the last retire is queued, the coop may be destroyed.
            Agent* next = member->next_in_coop_;
            member->lifecycle_demand_.next = nullptr;
            member->lifecycle_demand_.key = kRetireType;
            // The push publishes the store to unretired_ above (release in the queue).
            queue_of(*member).push(&member->lifecycle_demand_);
            member = next;
        }
    }
    context.finished.clear();
    for (Agent* agent : context.retired) {
        Coop& coop = agent->coop();
        // acq_rel: as for unfinished_ above; the last one destroys the coop.
        if (coop.unretired_.fetch_sub(1, std::memory_order_acq_rel) == 1)
            coop.environment().coop_completed(coop);
    }
    context.retired.clear();
}

}  // namespace labctl::rt
