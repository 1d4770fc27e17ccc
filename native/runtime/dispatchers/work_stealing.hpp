// work_stealing: N threads, each with its own queue of ready queues; an idle thread steals from
// the others. A queue woken by a worker's send runs next on that worker (its LIFO stack, for
// locality; the stack's oldest goes to the worker's FIFO when it is full); a queue put back
// after its turn is held by its worker, which runs it again after the others; the FIFO is what
// others can steal from, and a thief that finds it empty gets the older half of the LIFO stack
// at the owner's next push or pop; sends from outside the pool go to a shared injector.
#pragma once

#include "worker_pool.hpp"

namespace labctl::rt {

class WorkStealing final : public WorkerPool {
public:
    WorkStealing(Environment& environment, DispatcherParams params);
    std::string_view name() const noexcept override { return "work_stealing"; }
};

}  // namespace labctl::rt
