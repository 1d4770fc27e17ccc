// thread_pool: the worker pool with one shared FIFO of ready queues (SharedFifo).
#include "thread_pool.hpp"

namespace labctl::rt {

ThreadPool::ThreadPool(Environment& environment, DispatcherParams params)
    : WorkerPool(environment, params, std::make_unique<SharedFifo>()) {
    start();
}

}  // namespace labctl::rt
