// active_group: a thread and a queue per group; agents bound to one group share them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "dispatcher.hpp"
#include "worker_thread.hpp"

namespace labctl::rt {

class ActiveGroup final : public Dispatcher {
public:
    // `groups` groups: a binder's group g is group g % groups, so that a program can spread
    // agents by index (agent i in group i) over a fixed number of threads.
    ActiveGroup(Environment& environment, unsigned groups) : Dispatcher(environment), group_count_(groups) {
        if (groups == 0) throw std::invalid_argument("active_group: threads must be at least 1");
    }
    std::string_view name() const noexcept override { return "active_group"; }

private:
    // A group's thread starts with its first agent and lives until shutdown.
    void bind(Agent& agent, unsigned group) override {
        std::lock_guard lock(mutex_);
        std::unique_ptr<WorkerThread>& worker = groups_[group % group_count_];
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

    const unsigned group_count_;
    std::mutex mutex_;
    std::map<unsigned, std::unique_ptr<WorkerThread>> groups_;
};

}  // namespace labctl::rt
