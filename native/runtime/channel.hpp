// A channel several receivers take messages from, each message taken by exactly one of them: a
// multi-consumer FIFO (SObjectizer's mchain, a Go channel, machinate's channel). Any thread
// sends. A receiver is an agent, which asks for one message at a time and gets it in its own
// queue, or a thread, which blocks until a message comes or the channel is closed.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <utility>

#include "agent.hpp"
#include "message.hpp"
#include "wait.hpp"

namespace labctl::rt {

class ChannelCore;

// What an agent's request gets instead of a message once the channel is closed and empty: sent
// to the agent's direct mbox (an agent that does not subscribe to it drops it).
struct ChannelClosed {
    const ChannelCore* channel;
};

// An agent's standing request for one message of a channel, embedded in the agent (a request
// allocates nothing): `rt::ChannelRequest request_{*this};`. One request asks for one message;
// the agent asks again for the next (typically in the handler of the one it got).
class ChannelRequest {
public:
    explicit ChannelRequest(Agent& agent) noexcept : agent_(&agent) {}
    ChannelRequest(const ChannelRequest&) = delete;
    ChannelRequest& operator=(const ChannelRequest&) = delete;

private:
    friend class ChannelCore;

    Agent* const agent_;
    // The channel's list of waiting requests, oldest first; both fields under the channel's lock.
    ChannelRequest* next_ = nullptr;
    bool pending_ = false;
    // Hand-offs of a message (or of ChannelClosed) to this request's agent that have left the
    // channel's lock and not yet reached the agent's queue: cancel() waits for them.
    std::atomic<std::uint32_t> deliveries_{0};
};

// The untyped channel: envelopes in, envelopes out. Channel<M> below is what code uses.
//
// One spin lock guards the FIFO, the waiting requests, the closed flag and the count of
// sleeping threads; every operation is a few instructions under it (the queue pushes and the
// futex calls happen after it is released). Invariant, under the lock: when requests wait, the
// FIFO is empty (a push hands its message to the oldest request instead of queuing it; a
// request takes the oldest queued message instead of waiting), so a message never waits while
// an agent does.
//
// Threads sleep on `epoch_`, a futex word changed only under the lock: a sleeper reads it under
// the lock after finding the FIFO empty, and a push that queues a message while anyone sleeps
// bumps it under the lock, then wakes one sleeper. So a sleeper either sees the bump before it
// sleeps (the futex compare fails) or is queued in the kernel when the wake comes (futex_wait
// compares and queues under the futex's own lock, which futex_wake takes after the bump): no
// lost wake-up. A woken thread takes the lock and looks again; one that finds the FIFO empty
// (another receiver was quicker) sleeps again, so each push wakes at most one thread for nothing.
class ChannelCore {
public:
    ChannelCore() = default;
    // Disposes the messages nobody took and forgets the waiting requests (their agents are not
    // touched: they may be gone). No thread may be blocked in take(), nor send, by then.
    ~ChannelCore();
    ChannelCore(const ChannelCore&) = delete;
    ChannelCore& operator=(const ChannelCore&) = delete;

    // Any thread. Hands `e` to the oldest waiting request (into its agent's queue, with the
    // agent as target), or queues it and wakes a sleeping thread. `e`'s key is the direct-mbox
    // key of its type. Once closed: false, and `e` is disposed.
    bool push(Envelope* e) noexcept;

    // Any thread. The oldest queued message goes to `request`'s agent now; if there is none,
    // the request waits for the next push. Closed and empty: the agent gets ChannelClosed.
    // Throws std::logic_error if `request` is already waiting.
    void request(ChannelRequest& request);

    // Any thread. Withdraws a waiting request: true if it was waiting (no message will come for
    // it). False if it was not: whatever was handed to it is in its agent's queue when this
    // returns, ahead of anything queued after (so an agent that cancels in on_finish, before
    // its coop retires, never has a message arrive after it is gone).
    bool cancel(ChannelRequest& request) noexcept;

    // Threads. The oldest message, waiting for one; nullptr once the channel is closed and
    // empty. The caller owns the envelope (dispose it).
    Envelope* take() noexcept;
    // The oldest message, or nullptr if there is none right now.
    Envelope* try_take() noexcept;

    // No more sends; receivers drain what is queued. Wakes every sleeping thread and sends
    // ChannelClosed to every waiting request. Idempotent.
    void close() noexcept;
    bool closed() const noexcept;

private:
    // After the lock is released: puts `e` in `request`'s agent's queue (or ChannelClosed when
    // `e` is null) and ends the hand-off counted in its deliveries_.
    void deliver(ChannelRequest& request, Envelope* e) noexcept;
    Envelope* pop_locked() noexcept;

    mutable SpinLock lock_;
    Envelope* head_ = nullptr;  // the FIFO, linked through Envelope::next
    Envelope* tail_ = nullptr;
    ChannelRequest* requests_ = nullptr;  // waiting requests, oldest first
    ChannelRequest* last_request_ = nullptr;
    std::uint32_t sleepers_ = 0;  // threads between registering in take() and looking again
    bool closed_ = false;
    std::atomic<std::uint32_t> epoch_{0};  // the futex word (see above)
};

// A channel of messages of type M.
template <class M>
class Channel {
public:
    // Any thread: false once closed (the message is dropped).
    template <class... Args>
    bool send(Args&&... args) {
        Envelope* e = make_envelope<M>(nullptr, subscription_key(kDirectMbox, type_id<M>),
                                       std::forward<Args>(args)...);
        return core_.push(e);
    }

    // Agents: the next message arrives in the agent's queue as a direct message of type M
    // (subscribe<&A::on_m>()); see ChannelCore::request and cancel.
    void request(ChannelRequest& request) { core_.request(request); }
    bool cancel(ChannelRequest& request) noexcept { return core_.cancel(request); }

    // Threads: the next message, waiting for it; nothing once closed and drained.
    std::optional<M> receive() { return unwrap(core_.take()); }
    std::optional<M> try_receive() { return unwrap(core_.try_take()); }

    void close() noexcept { core_.close(); }
    bool closed() const noexcept { return core_.closed(); }
    const ChannelCore& core() const noexcept { return core_; }

private:
    static std::optional<M> unwrap(Envelope* e) {
        if (e == nullptr) return std::nullopt;
        std::optional<M> value(std::move(static_cast<MessageEnvelope<M>*>(e)->message));
        e->dispose(e);
        return value;
    }

    ChannelCore core_;
};

}  // namespace labctl::rt
