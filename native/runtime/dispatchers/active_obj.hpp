// active_obj: a thread and a queue per agent.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "dispatcher.hpp"
#include "worker_thread.hpp"

namespace labctl::rt {

class ActiveObj final : public Dispatcher {
public:
    using Dispatcher::Dispatcher;
    std::string_view name() const noexcept override { return "active_obj"; }

private:
    // The thread outlives its agent until shutdown: a finished agent's thread idles, parked.
    void bind(Agent& agent, unsigned) override {
        auto worker = std::make_unique<WorkerThread>(environment_);
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

    std::mutex mutex_;
    std::vector<std::unique_ptr<WorkerThread>> workers_;
};

}  // namespace labctl::rt
