// thread_pool's policy: every ready queue in one shared FIFO.
#include "thread_pool.hpp"

namespace labctl::rt {
namespace {

class SharedFifo final : public ReadyQueues {
public:
    bool push(EventQueue& queue, int, bool) noexcept override {
        list_.push(queue);
        return true;
    }
    EventQueue* pop(int) noexcept override { return list_.take(); }
    bool maybe_ready() const noexcept override { return !list_.empty(); }

private:
    ReadyList list_;
};

}  // namespace

ThreadPool::ThreadPool(Environment& environment, DispatcherParams params)
    : WorkerPool(environment, params, std::make_unique<SharedFifo>()) {
    start();
}

}  // namespace labctl::rt
