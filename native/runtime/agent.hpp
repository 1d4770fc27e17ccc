// Agents: the actors. An agent subscribes member functions to message types, on its own direct
// mbox or on named mboxes; a handler is called through a typed thunk found by one key compare.
#pragma once

#include <cstdint>
#include <exception>
#include <type_traits>
#include <vector>

#include "event_queue.hpp"
#include "message.hpp"

namespace labctl::rt {

class Coop;
class Dispatcher;
class Environment;
class NamedMbox;
struct ExecutionContext;

// Runs a message's handler and frees its envelope (see detail::invoke).
using Handler = void (*)(Agent&, Envelope&);

// Whether a handler may run while other thread-safe handlers of its agent run, on other threads
// (SObjectizer's thread_safety_t). Only adv_thread_pool makes use of it; a handler that is not
// thread-safe never runs beside any other handler of its agent, on any dispatcher.
enum class ThreadSafety : bool { not_thread_safe, thread_safe };
inline constexpr ThreadSafety not_thread_safe = ThreadSafety::not_thread_safe;
inline constexpr ThreadSafety thread_safe = ThreadSafety::thread_safe;

namespace detail {

template <class Method>
struct HandlerTraits;
template <class A, class M>
struct HandlerTraits<void (A::*)(const M&)> {
    using AgentType = A;
    using Message = M;
};
template <class A, class M>
struct HandlerTraits<void (A::*)(M&)> {
    using AgentType = A;
    using Message = M;
};

// The thunk for one (agent class, message type, member function): a static_cast (a constant
// offset, no RTTI) and a direct call the compiler can inline. It owns the envelope it is given:
// knowing the message's type, it destroys the envelope and gives it back to the pool inline
// (a constant size class, no indirect dispose call), also when the handler throws.
template <auto Method>
void invoke(Agent& agent, Envelope& envelope) {
    using Traits = HandlerTraits<decltype(Method)>;
    using Letter = MessageEnvelope<typename Traits::Message>;
    struct Free {
        Letter* letter;
        ~Free() { pool::destroy(letter); }
    } owned{&static_cast<Letter&>(envelope)};
    auto& self = static_cast<typename Traits::AgentType&>(agent);
    (self.*Method)(owned.letter->message);
}

extern constinit thread_local Coop* t_coop_under_construction LABCTL_FAST_TLS;

}  // namespace detail

// An agent's subscriptions: a small flat table searched linearly (agents subscribe to one or
// two types; a compare per entry beats any map). The first entry lives in the agent itself:
// finding the handler of an agent with one subscription costs one load from the agent.
class HandlerTable {
public:
    struct Entry {
        std::uint64_t key;
        Handler handler;
    };

    HandlerTable() = default;
    HandlerTable(const HandlerTable&) = delete;
    HandlerTable& operator=(const HandlerTable&) = delete;
    ~HandlerTable();

    Handler find(std::uint64_t key) const noexcept {
        if (first_.key == key) [[likely]] return first_.handler;
        for (std::uint32_t i = 0; i < more_size_; ++i)
            if (more_[i].key == key) return more_[i].handler;
        return nullptr;
    }

    // Whether the subscription with this key is thread-safe (false if there is none). A second
    // search: only adv_thread_pool asks, and only it pays for it.
    bool thread_safe(std::uint64_t key) const noexcept {
        if (first_.key == key) return (thread_safe_ & 1) != 0;
        for (std::uint32_t i = 0; i < more_size_; ++i)
            if (more_[i].key == key) return i + 1 < kThreadSafeBits && ((thread_safe_ >> (i + 1)) & 1) != 0;
        return false;
    }

    // Adds a subscription, or replaces the handler and safety of an existing one with the same
    // key. Throws std::length_error past 65536 subscriptions, or for a thread-safe one past the
    // 32nd.
    void add(std::uint64_t key, Handler handler, ThreadSafety safety);

    template <class Visit>
    void for_each(Visit&& visit) const {
        if (first_.handler != nullptr) visit(first_);
        for (std::uint32_t i = 0; i < more_size_; ++i) visit(more_[i]);
    }

private:
    static constexpr std::uint32_t kThreadSafeBits = 32;

    Entry first_{~std::uint64_t{0}, nullptr};  // a key no message carries, until the first add
    Entry* more_ = nullptr;
    // 16-bit counts leave room for the safety mask in the same 8 bytes: the table, and so every
    // agent, is the size it was before handlers could be thread-safe (skynet makes 1.1M agents).
    std::uint16_t more_size_ = 0;
    std::uint16_t more_capacity_ = 0;
    std::uint32_t thread_safe_ = 0;  // bit 0: first_; bit i: more_[i - 1]
};

class Agent {
public:
    Agent() noexcept : coop_(detail::t_coop_under_construction) {}
    virtual ~Agent() = default;
    Agent(const Agent&) = delete;
    Agent& operator=(const Agent&) = delete;

    Coop& coop() const noexcept { return *coop_; }
    Environment& environment() const noexcept;

protected:
    // Called on the agent's worker thread: start before any message, finish after the last.
    virtual void on_start() {}
    virtual void on_finish() {}

    // Subscribes `Method` (void(const M&) or void(M&)) to messages of type M sent to this
    // agent directly. Typically called in the constructor. `rt::thread_safe`: see ThreadSafety.
    template <auto Method>
    void subscribe(ThreadSafety safety = not_thread_safe) {
        using M = typename detail::HandlerTraits<decltype(Method)>::Message;
        handlers_.add(subscription_key(kDirectMbox, type_id<M>), &detail::invoke<Method>, safety);
    }

    // Subscribes `Method` to messages of type M published on `source`. The subscription takes
    // effect when the agent's coop is registered and ends when it is deregistered.
    template <auto Method>
    void subscribe(NamedMbox& source, ThreadSafety safety = not_thread_safe);

private:
    friend class Coop;
    friend class Dispatcher;
    friend class Environment;
    friend void execute(Envelope& envelope, ExecutionContext& context) noexcept;
    friend bool runs_thread_safe(const Envelope& envelope) noexcept;
    friend void reap(ExecutionContext& context) noexcept;
    friend EventQueue& queue_of(Agent& agent) noexcept;

    enum class State : std::uint8_t { created, running, finished };

    // The slow paths of execute(): lifecycle demands, messages that arrive while the agent is
    // not running, and messages it has no handler for (disposed of here).
    void execute_special(Envelope& envelope, ExecutionContext& context) noexcept;
    void start() noexcept;
    void handler_failed(std::exception_ptr error) noexcept;

    HandlerTable handlers_;
    EventQueue* queue_ = nullptr;        // where demands for this agent go, set when bound
    Coop* coop_;
    Agent* next_in_coop_ = nullptr;
    Dispatcher* dispatcher_ = nullptr;
    void* binding_ = nullptr;            // the dispatcher's own per-agent data
    // Start, and later retire: embedded, so neither can fail to allocate.
    Envelope lifecycle_demand_{nullptr, this, kStartType, nullptr};
    std::uint32_t allocation_size_ = 0;  // for returning the agent's memory to the pool
    State state_ = State::created;
};

inline EventQueue& queue_of(Agent& agent) noexcept { return *agent.queue_; }

// What a worker thread accumulates while it executes demands.
struct ExecutionContext {
    std::uint64_t dropped = 0;  // messages with no handler, or for a finished agent
    // Agents whose finish or retire demand ran on this thread and that are not reaped yet.
    // Reaping can free an agent and the queue it lives on, so a worker reaps only once it has
    // let go of the queue (see reap_finished).
    std::vector<Agent*> finished;
    std::vector<Agent*> retired;
};

// Executes one demand on its agent, and frees or disposes of its envelope. The hot path: a
// running agent, a message it subscribed to, whose handler's thunk frees the envelope. A
// lifecycle demand needs no test of its own here: its key (kStartType...) matches no
// subscription, so it takes the slow path, with every message no handler takes.
inline void execute(Envelope& envelope, ExecutionContext& context) noexcept {
    Agent& agent = *envelope.target;
    if (agent.state_ == Agent::State::running) [[likely]] {
        if (Handler handler = agent.handlers_.find(envelope.key)) [[likely]] {
            try {
                handler(agent, envelope);
            } catch (...) {
                agent.handler_failed(std::current_exception());
            }
            return;
        }
    }
    agent.execute_special(envelope, context);
}

// Whether `envelope` is a message that a running agent handles with a thread-safe handler (the
// lifecycle demands never are). For the consumer of the agent's queue: the agent's state changes
// only in demands that are not thread-safe, which run on that consumer alone.
inline bool runs_thread_safe(const Envelope& envelope) noexcept {
    const Agent& agent = *envelope.target;
    return envelope.key >= kFirstMessageType && agent.state_ == Agent::State::running &&
           agent.handlers_.thread_safe(envelope.key);
}

// Tells each finished agent's coop that the agent is done; the last one completes the coop.
// Call only while holding no queue of those agents.
void reap(ExecutionContext& context) noexcept;

// reap, where there is anything to reap: a worker calls it after every queue it lets go, and
// nearly always nothing has finished (22 instructions a hop out of 262 on thread_ring over a
// 1-thread individual-FIFO thread_pool when it always made the call).
inline void reap_finished(ExecutionContext& context) noexcept {
    if (!context.finished.empty() || !context.retired.empty()) [[unlikely]] reap(context);
}

}  // namespace labctl::rt
