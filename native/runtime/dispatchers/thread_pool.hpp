// thread_pool: N threads serving many queues. With cooperation FIFO the agents of a coop share
// one queue (their demands never run in parallel); with individual FIFO each agent has its own.
// A worker runs at most max_demands_at_once demands of a queue before it moves to the next.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "../wait.hpp"
#include "dispatcher.hpp"

namespace labctl::rt {

enum class Fifo : std::uint8_t { cooperation, individual };

struct ThreadPoolParams {
    unsigned threads = 2;
    Fifo fifo = Fifo::cooperation;
    std::uint32_t max_demands_at_once = 4;
};

class ThreadPool final : public Dispatcher, private Scheduler {
public:
    ThreadPool(Environment& environment, ThreadPoolParams params);
    ~ThreadPool() override;
    std::string_view name() const noexcept override { return "thread_pool"; }

private:
    void bind(Agent& agent, unsigned group) override;
    void unbind(Agent& agent) noexcept override;
    void shutdown() noexcept override;

    // A push found `queue` asleep: it goes to the back of the ready list.
    void schedule(EventQueue& queue) noexcept override { push_ready(queue); }

    void run();
    void push_ready(EventQueue& queue) noexcept;
    EventQueue* pop_ready() noexcept;
    // Spins, then parks, until a queue is ready (true) or the pool stops with none (false).
    bool wait_for_work() noexcept;

    const ThreadPoolParams params_;

    // The ready list: queues with demands and no worker, oldest first.
    alignas(64) SpinLock ready_lock_;
    EventQueue* ready_head_ = nullptr;
    EventQueue* ready_tail_ = nullptr;
    // Mirrors the list's length, for idle workers to poll without the lock.
    std::atomic<std::uint32_t> ready_count_{0};

    // Parking: sleepers_ counts parked (or parking) workers; wake_seq_ is their futex word.
    alignas(64) std::atomic<std::uint32_t> sleepers_{0};
    std::atomic<std::uint32_t> wake_seq_{0};
    std::atomic<bool> stop_{false};

    std::vector<std::thread> threads_;
};

}  // namespace labctl::rt
