// active_group: a thread and a queue per group; agents bound to one group share them.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "dispatcher.hpp"
#include "worker_thread.hpp"

namespace labctl::rt {

class ActiveGroup final : public Dispatcher {
public:
    using Dispatcher::Dispatcher;
    std::string_view name() const noexcept override { return "active_group"; }

private:
    // A group's thread starts with its first agent and lives until shutdown.
    void bind(Agent& agent, unsigned group) override {
        std::lock_guard lock(mutex_);
        std::unique_ptr<WorkerThread>& worker = groups_[group];
        if (!worker) worker = std::make_unique<WorkerThread>(environment_);
        set_queue(agent, worker->queue());
    }
    void shutdown() noexcept override {
        std::map<unsigned, std::unique_ptr<WorkerThread>> groups;
        {
            std::lock_guard lock(mutex_);
            groups.swap(groups_);
        }
        for (auto& [group, worker] : groups) worker->stop();
    }

    std::mutex mutex_;
    std::map<unsigned, std::unique_ptr<WorkerThread>> groups_;
};

}  // namespace labctl::rt
