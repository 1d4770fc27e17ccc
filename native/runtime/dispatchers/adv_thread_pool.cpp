// adv_thread_pool's loop: a turn on an agent's queue runs the demands that are not thread-safe
// while no thread-safe handler of the agent runs; a thread-safe demand is taken off the queue,
// the queue let go (another worker may take the next one), and the demand runs after.
#include "adv_thread_pool.hpp"

#include <utility>

#include "../environment.hpp"

namespace labctl::rt {

// An agent's queue and its thread-safe handlers in flight. Like every EventQueue it has one
// consumer at a time: the worker that holds it (took it from the ready list, or woke it).
//
// `running` counts the handlers in units of kHandler; kWaiting says that a demand that is not
// thread-safe waits for them in `waiting`, and that no worker holds the queue. The holder counts
// a thread-safe demand before it lets the queue go, so the next holder sees it; a holder that
// meets a demand that is not thread-safe while some run parks the demand and the queue (sets
// kWaiting); the last handler to finish finds kWaiting and puts the queue back in line, where
// the next holder runs the waiting demand before any other.
struct AdvThreadPool::AgentQueue final : EventQueue {
    static constexpr std::uint32_t kWaiting = 1, kHandler = 2;

    using EventQueue::EventQueue;

    // Holder only, before it lets the queue go to run `demand` (thread-safe) on its own.
    void count_thread_safe() noexcept {
        // relaxed: the queue's hand-over to the next holder (the ready list's lock, or
        // try_sleep's release and the waking push's acquire) carries the count with it.
        running.fetch_add(kHandler, std::memory_order_relaxed);
    }

    // Holder only, with `demand` not thread-safe: true if it may run now. False if thread-safe
    // handlers still run: the demand then waits here for the last of them, and the holder must
    // let go of the queue without touching it again (not even try_sleep: the queue stays awake,
    // so no push schedules it meanwhile).
    bool may_run_alone(Envelope& demand) noexcept {
        // acquire: pairs with the finished handlers' release (thread_safe_done); what they
        // wrote is visible to the demand that runs now. The count and the fetch_subs form one
        // release sequence (only read-modify-writes change it while handlers run).
        if (running.load(std::memory_order_acquire) == 0) return true;
        waiting = &demand;
        // release: `waiting` and the queue's local FIFO travel to the last handler, which takes
        // the queue over (its acquire). acquire: as above, if they finished meanwhile.
        if (running.fetch_or(kWaiting, std::memory_order_acq_rel) != 0) return false;
        // They all finished between the load and the fetch_or: no handler runs, none can start
        // while we hold the queue, so the word is ours alone.
        running.store(0, std::memory_order_relaxed);
        waiting = nullptr;
        return true;
    }

    // After a thread-safe handler: true if it was the last one and a demand waits; the caller
    // then holds the queue and must put it back in line. False: the caller must not touch the
    // queue again (the waiting demand may be the agent's finish, and the agent and its queue go
    // once it has run).
    bool thread_safe_done() noexcept {
        // release: the handler's writes reach the next demand that is not thread-safe (the
        // acquire in may_run_alone, or the hand-over below). acquire: with kWaiting, the holder
        // that parked the queue released its state to us.
        if (running.fetch_sub(kHandler, std::memory_order_acq_rel) != (kHandler | kWaiting)) return false;
        // No handler runs and no worker holds the queue: nobody else looks at the word. The
        // next holder gets what this thread saw through the ready list's lock.
        running.store(0, std::memory_order_relaxed);
        return true;
    }

    std::atomic<std::uint32_t> running{0};
    Envelope* waiting = nullptr;  // the holder's, or (while kWaiting is set) the last handler's
};

AdvThreadPool::AdvThreadPool(Environment& environment, DispatcherParams params)
    : WorkerPool(environment,
                 {.threads = params.threads,
                  .fifo = Fifo::individual,
                  .max_demands_at_once = params.max_demands_at_once,
                  .wake = params.wake},
                 make_shared_fifo(params.threads, params.wake)) {
    start();
}

void AdvThreadPool::bind(Agent& agent, unsigned) {
    auto* queue = pool::make<AgentQueue>(scheduler());
    binding(agent) = queue;
    set_queue(agent, *queue);
}

void AdvThreadPool::unbind(Agent& agent) noexcept {
    if (void* queue = binding(agent)) pool::destroy(static_cast<AgentQueue*>(queue));
}

void AdvThreadPool::serve_queues(int index) {
    ExecutionContext context;
    while (EventQueue* taken = take(index)) {
        auto& queue = static_cast<AgentQueue&>(*taken);
        Envelope* thread_safe = take_turn(queue, index, context);
        reap_finished(context);
        if (thread_safe == nullptr) continue;
        // The queue may be with another worker now, running the agent's next thread-safe demand.
        execute(*thread_safe, context);
        if (queue.thread_safe_done()) put_back(queue, index);
    }
    environment_.leave_thread(context);
}

Envelope* AdvThreadPool::take_turn(AgentQueue& queue, int index, ExecutionContext& context) noexcept {
    Envelope* thread_safe = nullptr;
    {
        ConsumeScope consuming(queue);
        do {
            queue.take_inbox();
            for (std::uint32_t n = 0; n < params().max_demands_at_once; ++n) {
                // A demand that waited for the thread-safe handlers first: it is the oldest.
                Envelope* demand =
                    queue.waiting != nullptr ? std::exchange(queue.waiting, nullptr) : queue.pop();
                if (demand == nullptr) break;
                if (runs_thread_safe(*demand)) {
                    queue.count_thread_safe();
                    thread_safe = demand;
                    break;
                }
                if (!queue.may_run_alone(*demand)) return nullptr;  // parked: the queue is not ours
                execute(*demand, context);
            }
        } while (thread_safe == nullptr && !ends_turn(queue, index, context));
    }
    let_go(queue, index);
    return thread_safe;
}

}  // namespace labctl::rt
