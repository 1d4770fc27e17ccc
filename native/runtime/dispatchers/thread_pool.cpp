// thread_pool's policy: every ready queue in one shared FIFO (adv_thread_pool's too).
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

std::unique_ptr<ReadyQueues> make_shared_fifo() { return std::make_unique<SharedFifo>(); }

ThreadPool::ThreadPool(Environment& environment, DispatcherParams params)
    : WorkerPool(environment, params, make_shared_fifo()) {
    start();
}

}  // namespace labctl::rt
