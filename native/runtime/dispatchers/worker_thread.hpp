// A thread that consumes one event queue: the building block of one_thread, active_obj and
// active_group.
#pragma once

#include <atomic>
#include <cstddef>

#include "../event_queue.hpp"
#include "../thread.hpp"
#include "../wait.hpp"

namespace labctl::rt {

class Environment;

class WorkerThread final : private Scheduler {
public:
    // `stack_bytes`: the thread's stack (0: the system's default).
    explicit WorkerThread(Environment& environment, std::size_t stack_bytes = 0);
    ~WorkerThread();
    WorkerThread(const WorkerThread&) = delete;
    WorkerThread& operator=(const WorkerThread&) = delete;

    EventQueue& queue() noexcept { return queue_; }

    // Lets the thread drain its queue, then ends and joins it. Idempotent.
    void stop() noexcept;

private:
    void run();
    // A push found the queue asleep: the thread is spinning out its budget or parked.
    void schedule(EventQueue&) noexcept override { parker_.unpark(); }

    Environment& environment_;
    // Producers write the queue's inbox; keep it off the line holding the parker and flag.
    alignas(64) EventQueue queue_{*this};
    alignas(64) Parker parker_;
    std::atomic<bool> stop_{false};
    Thread thread_;
};

}  // namespace labctl::rt
