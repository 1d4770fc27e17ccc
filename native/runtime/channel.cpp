// The multi-consumer channel: the FIFO and the waiting requests under one spin lock, hand-offs
// to agents and futex wake-ups after it.
#include "channel.hpp"

#include <climits>
#include <mutex>
#include <stdexcept>

namespace labctl::rt {

ChannelCore::~ChannelCore() {
    while (Envelope* e = pop_locked()) e->dispose(e);
}

Envelope* ChannelCore::pop_locked() noexcept {
    Envelope* e = head_;
    if (e == nullptr) return nullptr;
    head_ = e->next;
    if (head_ == nullptr) tail_ = nullptr;
    // An event queue appends a pushed chain up to its last envelope's null link.
    e->next = nullptr;
    return e;
}

bool ChannelCore::push(Envelope* e) noexcept {
    std::unique_lock lock(lock_);
    if (closed_) {
        lock.unlock();
        e->dispose(e);
        return false;
    }
    if (ChannelRequest* request = requests_) {
        requests_ = request->next_;
        if (requests_ == nullptr) last_request_ = nullptr;
        request->pending_ = false;
        // relaxed: cancel() reads it after taking the lock, which orders this increment before
        // its read; the decrement that ends the hand-off is the release (deliver).
        request->deliveries_.fetch_add(1, std::memory_order_relaxed);
        lock.unlock();
        deliver(*request, e);
        return true;
    }
    if (tail_ != nullptr) tail_->next = e;
    else head_ = e;
    tail_ = e;
    const bool wake = sleepers_ != 0;
    // relaxed: epoch_ changes only under the lock, and sleepers read it under the lock; the
    // lock orders the bump after a sleeper's read, and the futex orders it against the sleep
    // (see the class comment).
    if (wake) epoch_.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    if (wake) futex_wake(epoch_, 1);
    return true;
}

void ChannelCore::request(ChannelRequest& request) {
    std::unique_lock lock(lock_);
    if (request.pending_) throw std::logic_error("a channel request asked twice before its message came");
    Envelope* e = pop_locked();
    if (e == nullptr && !closed_) {
        request.next_ = nullptr;
        request.pending_ = true;
        if (last_request_ != nullptr) last_request_->next_ = &request;
        else requests_ = &request;
        last_request_ = &request;
        return;
    }
    // relaxed: as in push.
    request.deliveries_.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    deliver(request, e);  // e null: closed and empty
}

bool ChannelCore::cancel(ChannelRequest& request) noexcept {
    {
        std::lock_guard lock(lock_);
        if (request.pending_) {
            ChannelRequest* previous = nullptr;
            for (ChannelRequest* r = requests_; r != &request; r = r->next_) previous = r;
            (previous != nullptr ? previous->next_ : requests_) = request.next_;
            if (last_request_ == &request) last_request_ = previous;
            request.pending_ = false;
            return true;
        }
    }
    // acquire: pairs with the release in deliver(), so the hand-off's queue push happened before
    // we return. A hand-off that left the lock before ours took it incremented the count under
    // the lock, so this load sees it; none can start after: the request is not waiting.
    for (unsigned spins = 0; request.deliveries_.load(std::memory_order_acquire) != 0; ++spins) {
        if (spins < 64) cpu_relax();
        else yield_thread();
    }
    return false;
}

void ChannelCore::deliver(ChannelRequest& request, Envelope* e) noexcept {
    Agent& agent = *request.agent_;
    if (e == nullptr) e = make_envelope<ChannelClosed>(&agent, subscription_key(kDirectMbox, type_id<ChannelClosed>), this);
    e->target = &agent;
    queue_of(agent).push(e);
    // release: the push above happens before a cancel() that sees the count drop. Past this
    // line the request (and its agent) may be gone.
    request.deliveries_.fetch_sub(1, std::memory_order_release);
}

Envelope* ChannelCore::take() noexcept {
    std::unique_lock lock(lock_);
    for (;;) {
        if (Envelope* e = pop_locked()) return e;
        if (closed_) return nullptr;
        ++sleepers_;
        // relaxed: read under the lock, as every bump is made (see push).
        const std::uint32_t seen = epoch_.load(std::memory_order_relaxed);
        lock.unlock();
        futex_wait(epoch_, seen);
        lock.lock();
        --sleepers_;
    }
}

Envelope* ChannelCore::try_take() noexcept {
    std::lock_guard lock(lock_);
    return pop_locked();
}

void ChannelCore::close() noexcept {
    std::unique_lock lock(lock_);
    if (closed_) return;
    closed_ = true;
    // Every waiting request gets ChannelClosed: the FIFO is empty while requests wait.
    ChannelRequest* waiting = requests_;
    requests_ = last_request_ = nullptr;
    for (ChannelRequest* r = waiting; r != nullptr; r = r->next_) {
        r->pending_ = false;
        r->deliveries_.fetch_add(1, std::memory_order_relaxed);  // as in push
    }
    const bool wake = sleepers_ != 0;
    if (wake) epoch_.fetch_add(1, std::memory_order_relaxed);  // as in push
    lock.unlock();
    if (wake) futex_wake(epoch_, INT_MAX);
    // Each link is read before its request is delivered: past deliver() it may be gone. No one
    // else writes a link once the request has left the list (a new request() of a closed,
    // empty channel is answered at once, never queued).
    for (ChannelRequest* r = waiting; r != nullptr;) {
        ChannelRequest* next = r->next_;
        deliver(*r, nullptr);
        r = next;
    }
}

bool ChannelCore::closed() const noexcept {
    std::lock_guard lock(lock_);
    return closed_;
}

}  // namespace labctl::rt
