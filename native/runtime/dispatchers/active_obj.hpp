// active_obj: a thread and a queue per agent. Its one setting, the threads' stack size, decides
// how many agents fit: the system's default reserves 8 MiB of address space a thread here.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "dispatcher.hpp"
#include "worker_thread.hpp"

namespace labctl::rt {

class ActiveObj final : public Dispatcher {
public:
    // `stack_bytes`: each agent's thread's stack (0: the system's default).
    explicit ActiveObj(Environment& environment, std::size_t stack_bytes = 0)
        : Dispatcher(environment), stack_bytes_(stack_bytes) {}
    std::string_view name() const noexcept override { return "active_obj"; }

private:
    // The thread outlives its agent until shutdown: a finished agent's thread idles, parked.
    void bind(Agent& agent, unsigned) override {
        auto worker = std::make_unique<WorkerThread>(environment_, stack_bytes_);
        set_queue(agent, worker->queue());
        std::lock_guard lock(mutex_);
        workers_.push_back(std::move(worker));
    }
    void shutdown() noexcept override {
        std::vector<std::unique_ptr<WorkerThread>> workers;
        {
            std::lock_guard lock(mutex_);
            workers.swap(workers_);
        }
        for (auto& worker : workers) worker->stop();
    }

    const std::size_t stack_bytes_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<WorkerThread>> workers_;
};

}  // namespace labctl::rt
