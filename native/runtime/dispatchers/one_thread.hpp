// one_thread: every agent bound to it shares one thread and one queue.
#pragma once

#include "dispatcher.hpp"
#include "worker_thread.hpp"

namespace labctl::rt {

class OneThread final : public Dispatcher {
public:
    explicit OneThread(Environment& environment) : Dispatcher(environment), worker_(environment) {}
    std::string_view name() const noexcept override { return "one_thread"; }

private:
    void bind(Agent& agent, unsigned) override { set_queue(agent, worker_.queue()); }
    void shutdown() noexcept override { worker_.stop(); }

    WorkerThread worker_;
};

}  // namespace labctl::rt
