// The loop of a dedicated worker thread: execute, spin, park.
#include "worker_thread.hpp"

#include "../environment.hpp"

namespace labctl::rt {

namespace {
// Demands executed between two looks at the inbox: what other threads sent waits behind at
// most this many of the thread's own sends.
constexpr unsigned kRound = 256;
}  // namespace

WorkerThread::WorkerThread(Environment& environment, std::size_t stack_bytes)
    : environment_(environment), thread_(environment.spawn([this] { run(); }, stack_bytes)) {}

WorkerThread::~WorkerThread() { stop(); }

void WorkerThread::stop() noexcept {
    if (!thread_.joinable()) return;
    // release: pairs with the thread's acquire load; it exits only with an empty queue.
    stop_.store(true, std::memory_order_release);
    parker_.unpark();
    thread_.join();
}

void WorkerThread::run() {
    ExecutionContext context;
    const auto spin = environment_.spin();
    {
        ConsumeScope consuming(queue_);
        for (;;) {
            queue_.take_inbox();
            for (unsigned n = 0; n < kRound; ++n) {
                Envelope* e = queue_.pop();
                if (e == nullptr) break;
                execute(*e, context);
            }
            reap_finished(context);
            if (queue_.has_work()) continue;
            if (stop_.load(std::memory_order_acquire)) break;
            IdleScope idle;
            const bool woke = spin_until(
                [this] { return queue_.has_work() || stop_.load(std::memory_order_relaxed); }, spin, idle.start());
            if (woke || !queue_.try_sleep()) continue;
            idle.parking();
            // Asleep: the next push calls schedule(), which unparks us.
            while (!queue_.awake() && !stop_.load(std::memory_order_acquire)) parker_.park();
        }
    }
    environment_.leave_thread(context);
}

}  // namespace labctl::rt
