// thread_pool: N threads and one shared FIFO of ready queues: any idle thread takes the queue
// that has waited longest. `wake` says where a queue woken by a send from a pool thread goes:
//   fifo: to the back of that FIFO, like any other, for whichever thread looks first:
//         SObjectizer's thread_pool, what its studies measured. Ping-pong between two
//         individual-FIFO agents crosses threads whenever the other thread takes the woken queue
//         first; here the sending thread, still running, mostly takes it back itself (2 threads,
//         2 cores: 12 M msgs/s against lifo's 23 M, median of 5 interleaved runs of 10M
//         messages; the SObjectizer article's pool "drops to ~1.7 million per second").
//   lifo: ours, the default: onto the waking thread's LIFO stack, to run next there while what the
//         send touched is in its cache; the oldest one a full stack displaces joins the shared
//         FIFO. The same ping-pong stays on one thread.
// A setting of the dispatcher, not a dispatcher of its own: the two differ in that one step and
// share everything else (cooperation/individual FIFO, max_demands_at_once, parking), and a study
// file selects SObjectizer's with one grid line (wake = "fifo") on the points that reproduce it.
// The policy is chosen once, when the pool is made; the worker loop calls it through the same
// virtual calls either way, so the default's hot path is what it was.
#pragma once

#include "worker_pool.hpp"

namespace labctl::rt {

class ThreadPool final : public WorkerPool {
public:
    ThreadPool(Environment& environment, DispatcherParams params);
    std::string_view name() const noexcept override { return "thread_pool"; }
};

}  // namespace labctl::rt
