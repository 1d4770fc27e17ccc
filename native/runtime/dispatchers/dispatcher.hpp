// The dispatcher interface: a policy that decides which event queue an agent's demands go to
// and which threads consume it, and the settings a dispatcher may take. A new dispatcher is a new
// file pair here and its registry.cpp entry; a few kernels name one as data (docs/extending.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "../agent.hpp"

namespace labctl::rt {

class Environment;

// How a pool gives agents queues: with cooperation FIFO a coop's agents share one queue (their
// demands never run in parallel); with individual FIFO each agent has its own.
enum class Fifo : std::uint8_t { cooperation, individual };

// Where a shared-FIFO pool (thread_pool, adv_thread_pool) puts a queue that a send from one of
// its own threads wakes. lifo: on that thread's LIFO stack, to run next there while what the send
// touched is still in its cache (ours; ping-pong between two individual-FIFO agents then stays on
// one thread). fifo: at the back of the one shared FIFO of ready queues, like every other ready
// queue, for whichever thread looks first: SObjectizer's thread_pool, which the studies measured
// (there its ping-pong crosses threads; here the sending thread, still running, mostly takes the
// queue back itself: thread_pool.hpp).
enum class Wake : std::uint8_t { lifo, fifo };

// Every setting a dispatcher may take, built by name (`{.threads = 4}`); a dispatcher's registry
// entry says which ones it reads (registry.hpp), and it leaves the others alone.
struct DispatcherParams {
    unsigned threads = 2;
    Fifo fifo = Fifo::cooperation;
    // Demands a pool thread runs from one queue before it moves on.
    std::uint32_t max_demands_at_once = 4;
    Wake wake = Wake::lifo;
    // KiB of stack for each thread a dispatcher starts per agent (active_obj); 0: the system's
    // default (ulimit -s, 8 MiB of address space here).
    std::uint32_t stack_kb = 0;
};

// Where to bind an agent: a dispatcher, and a group for dispatchers that have groups
// (active_group runs one thread per group; the others ignore it).
struct Binder {
    Dispatcher* dispatcher = nullptr;
    unsigned group = 0;
};

class Dispatcher {
public:
    explicit Dispatcher(Environment& environment) noexcept : environment_(environment) {}
    virtual ~Dispatcher() = default;
    Dispatcher(const Dispatcher&) = delete;
    Dispatcher& operator=(const Dispatcher&) = delete;

    Binder binder(unsigned group = 0) noexcept { return {this, group}; }
    virtual std::string_view name() const noexcept = 0;

protected:
    friend class Coop;
    friend class Environment;

    // Chooses the agent's event queue (set_queue), starting a thread if the policy needs one.
    // Called while its coop is being built, on the building thread.
    virtual void bind(Agent& agent, unsigned group) = 0;
    // Releases what bind took for this agent; the agent is about to be destroyed and no
    // worker holds its queue.
    virtual void unbind(Agent& agent) noexcept { (void)agent; }
    // Runs once, from Environment::stop, after every agent has finished: drains the queues,
    // stops the threads and joins them.
    virtual void shutdown() noexcept = 0;

    static void set_queue(Agent& agent, EventQueue& queue) noexcept { agent.queue_ = &queue; }
    static void*& binding(Agent& agent) noexcept { return agent.binding_; }

    Environment& environment_;
};

}  // namespace labctl::rt
