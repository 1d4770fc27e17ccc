// work_stealing: N threads, each with its own queue of ready queues; an idle thread steals from
// the others. A queue woken by a worker's send runs next on that worker (its LIFO stack, for
// locality; the stack's oldest goes to the worker's FIFO when it is full); queues put back after their budget go to the back of the worker's FIFO, which
// others can steal from; sends from outside the pool go to a shared injector.
#pragma once

#include "worker_pool.hpp"

namespace labctl::rt {

class WorkStealing final : public WorkerPool {
public:
    WorkStealing(Environment& environment, DispatcherParams params);
    std::string_view name() const noexcept override { return "work_stealing"; }
};

}  // namespace labctl::rt
