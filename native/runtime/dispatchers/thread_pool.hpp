// thread_pool: N threads and one shared FIFO of ready queues, as in SObjectizer: any idle
// thread takes the queue that has waited longest. One exception, for locality: a queue that a
// worker's send wakes runs next on that worker (its LIFO stack), and the oldest one a full stack
// displaces joins the shared FIFO.
#pragma once

#include "worker_pool.hpp"

namespace labctl::rt {

class ThreadPool final : public WorkerPool {
public:
    ThreadPool(Environment& environment, DispatcherParams params);
    std::string_view name() const noexcept override { return "thread_pool"; }
};

}  // namespace labctl::rt
