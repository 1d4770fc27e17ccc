// Cooperations: agents registered and deregistered as a unit. A coop is built (make_agent),
// registered (every agent starts), deregistered (every agent finishes), and then destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "agent.hpp"
#include "dispatchers/dispatcher.hpp"
#include "pool.hpp"

namespace labctl::rt {

class Coop {
public:
    Coop(const Coop&) = delete;
    Coop& operator=(const Coop&) = delete;

    Environment& environment() const noexcept { return environment_; }
    std::uint32_t size() const noexcept { return size_; }

    template <class T, class... Args>
    T& make_agent(Args&&... args) {
        return make_agent_with_binder<T>(default_binder_, std::forward<Args>(args)...);
    }

    // Constructs an agent in this coop and binds it at once, so its queue is known before
    // registration (handles can be wired between agents of one coop).
    template <class T, class... Args>
    T& make_agent_with_binder(const Binder& binder, Args&&... args) {
        static_assert(std::is_base_of_v<Agent, T>);
        Coop* const saved = detail::t_coop_under_construction;
        detail::t_coop_under_construction = this;
        T* agent;
        try {
            agent = pool::make<T>(std::forward<Args>(args)...);
        } catch (...) {
            detail::t_coop_under_construction = saved;
            throw;
        }
        detail::t_coop_under_construction = saved;
        agent->allocation_size_ = sizeof(T);
        adopt(*agent, binder);
        return *agent;
    }

    // The queue this coop's agents share on `owner` (a thread pool with cooperation FIFO),
    // created on first use and destroyed with the coop.
    EventQueue& shared_queue(const Dispatcher& owner, Scheduler& scheduler);

private:
    friend class Environment;
    friend void reap(ExecutionContext& context) noexcept;

    enum class State : std::uint8_t { building, registering, registered, deregister_pending, deregistering };

    Coop(Environment& environment, Binder default_binder) noexcept
        : environment_(environment), default_binder_(default_binder) {}
    ~Coop();

    // Binds `agent` and links it in; destroys it if binding fails.
    void adopt(Agent& agent, const Binder& binder);
    static void destroy_agent(Agent& agent) noexcept;

    struct SharedQueue {
        SharedQueue(const Dispatcher& owner, Scheduler& scheduler) noexcept
            : queue(scheduler), owner(&owner) {}
        EventQueue queue;
        const Dispatcher* owner;
        SharedQueue* next = nullptr;
    };

    Environment& environment_;
    Binder default_binder_;
    Agent* first_ = nullptr;
    Agent* last_ = nullptr;
    std::uint32_t size_ = 0;
    std::uint32_t named_subscriptions_ = 0;  // registration skips the mboxes when there are none
    // Agents that have not finished and been reaped; the reaper that takes it to zero retires
    // the coop's agents. Then agents whose retire demand has not run; the reaper that takes it
    // to zero completes the coop (reap).
    std::atomic<std::uint32_t> unfinished_{0};
    std::atomic<std::uint32_t> unretired_{0};
    std::atomic<State> state_{State::building};
    std::uint8_t shard_ = 0;  // the environment's registry shard it is in (once registered)
    SharedQueue* shared_queues_ = nullptr;
    // The neighbours in its registry shard's list (under the shard's lock).
    Coop* prev_ = nullptr;
    Coop* next_ = nullptr;
};

}  // namespace labctl::rt
