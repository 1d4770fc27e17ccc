// adv_thread_pool: N threads and one shared FIFO of ready queues, as thread_pool, where an agent's
// handlers subscribed `rt::thread_safe` may run on several threads at once, as in SObjectizer's
// adv_thread_pool. A handler that is not thread-safe (and every lifecycle demand) runs alone: not
// beside any other handler of its agent, thread-safe ones included.
//
// Settings: threads, max_demands_at_once (demands that are not thread-safe a thread runs
// from one queue before it moves on, if another queue waits; a thread-safe one always ends the
// turn, so that another thread can take the next), and wake as thread_pool's (thread_pool.hpp:
// fifo is SObjectizer's scheduling, lifo ours). fifo does not apply: every agent has a queue
// of its own. A coop's shared queue would make every agent of the coop wait, in order, behind a
// sibling's demand that waits for its own agent's thread-safe handlers (SObjectizer's
// cooperation FIFO makes the coop one agent for thread safety instead); no kernel needs that.
#pragma once

#include "worker_pool.hpp"

namespace labctl::rt {

class AdvThreadPool final : public WorkerPool {
public:
    AdvThreadPool(Environment& environment, DispatcherParams params);
    std::string_view name() const noexcept override { return "adv_thread_pool"; }

private:
    struct AgentQueue;

    void bind(Agent& agent, unsigned group) override;
    void unbind(Agent& agent) noexcept override;
    void serve_queues(int index) override;
    // One turn of worker `index` on `queue`. Returns a thread-safe demand it took, to run after
    // it has let go of the queue, or nullptr.
    Envelope* take_turn(AgentQueue& queue, int index, ExecutionContext& context) noexcept;
};

}  // namespace labctl::rt
