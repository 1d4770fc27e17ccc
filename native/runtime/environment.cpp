// Registration, deregistration and shutdown of coops; bookkeeping of runtime threads.
#include "environment.hpp"

#include <time.h>

#include <algorithm>
#include <future>
#include <map>
#include <stdexcept>

#include "send.hpp"
#include "tls.hpp"

namespace labctl::rt {

namespace {
thread_local bool t_runtime_thread = false;
// The registry shard this thread registers coops into: a runtime thread's own (set when it
// starts), 0 for any other thread. Any value below kRegistryShards is correct; the shard
// only decides which coops share a lock and a list.
constinit thread_local std::uint8_t t_registry_shard LABCTL_FAST_TLS = 0;

struct FinishDemand {};
}  // namespace

Environment::Environment(EnvironmentConfig config) : config_(std::move(config)) {}

Environment::~Environment() { stop(); }

NamedMbox& Environment::named_mbox(std::string_view name) {
    std::lock_guard lock(mutex_);
    auto found = mboxes_by_name_.find(std::string(name));
    if (found != mboxes_by_name_.end()) return *found->second;
    NamedMbox& mbox = named_mboxes_.emplace_back(std::string(name), MboxId(named_mboxes_.size() + 1));
    mboxes_by_name_.emplace(mbox.name(), &mbox);
    return mbox;
}

Coop& Environment::make_coop(Binder default_binder) {
    if (default_binder.dispatcher == nullptr) throw std::invalid_argument("binder has no dispatcher");
    void* memory = pool::allocate(sizeof(Coop));
    return *::new (memory) Coop(*this, default_binder);
}

void Environment::destroy_coop(Coop& coop) noexcept {
    coop.~Coop();
    pool::deallocate(&coop, sizeof(Coop));
}

void Environment::discard_coop(Coop& coop) noexcept { destroy_coop(coop); }

void Environment::register_coop(Coop& coop) {
    Coop::State expected = Coop::State::building;
    // relaxed: this publishes nothing. The agents learn of the coop through their first demands
    // (the queues' release, below); a deregister_coop that reads `registering` only marks the
    // coop pending and touches nothing else, and what it wrote comes back through the acq_rel
    // CAS further down. Its atomicity alone refuses a second registration, racing or not.
    if (!coop.state_.compare_exchange_strong(expected, Coop::State::registering, std::memory_order_relaxed))
        throw std::logic_error("a coop can be registered only once");
    coop.shard_ = t_registry_shard;
    RegistryShard& shard = registry_[coop.shard_];
    bool too_late;
    {
        std::lock_guard lock(shard.lock);
        too_late = shard.stopping;
        if (!too_late) {
            coop.next_ = shard.coops;
            if (shard.coops != nullptr) shard.coops->prev_ = &coop;
            shard.coops = &coop;
            ++shard.live;
            shard.agents += coop.size_;
        }
    }
    if (too_late) {
        // Registered after stop began: the coop never starts.
        destroy_coop(coop);
        return;
    }
    subscribe_named(coop, true);
    coop.unfinished_.store(coop.size_, std::memory_order_relaxed);
    // Agents that share a queue (a coop on a cooperation-FIFO pool) get their start demands in
    // one chain, one push (one CAS) for the run of them rather than one each: the demands go to
    // different agents, so their order among themselves is free (push_chain). Every link is read
    // before the push: once the last start is queued, the coop may run, finish and be destroyed
    // on another thread.
    for (Agent* agent = coop.first_; agent != nullptr;) {
        EventQueue& queue = queue_of(*agent);
        Envelope* const first = &agent->lifecycle_demand_;
        Envelope* last = first;
        agent = agent->next_in_coop_;
        while (agent != nullptr && &queue_of(*agent) == &queue) {
            last->next = &agent->lifecycle_demand_;
            last = last->next;
            agent = agent->next_in_coop_;
        }
        last->next = nullptr;
        queue.push_chain(first, last);
    }
    if (coop.size_ == 0) {
        coop.state_.store(Coop::State::deregistering, std::memory_order_relaxed);
        coop_completed(coop);
        return;
    }
    expected = Coop::State::registering;
    // acq_rel: a deregistration requested meanwhile (deregister_pending) is ours to run now.
    if (!coop.state_.compare_exchange_strong(expected, Coop::State::registered,
                                             std::memory_order_acq_rel)) {
        coop.state_.store(Coop::State::deregistering, std::memory_order_relaxed);
        begin_deregistration(coop);
    }
}

void Environment::deregister_coop(Coop& coop) noexcept {
    Coop::State state = coop.state_.load(std::memory_order_acquire);
    for (;;) {
        if (state == Coop::State::registered) {
            if (coop.state_.compare_exchange_weak(state, Coop::State::deregistering,
                                                  std::memory_order_acq_rel)) {
                begin_deregistration(coop);
                return;
            }
        } else if (state == Coop::State::registering) {
            // Its registration is still queuing start demands; the registering thread will
            // deregister it when it is done.
            if (coop.state_.compare_exchange_weak(state, Coop::State::deregister_pending,
                                                  std::memory_order_acq_rel))
                return;
        } else {
            return;  // not registered, or already on its way out
        }
    }
}

void Environment::begin_deregistration(Coop& coop) noexcept {
    // Named mboxes first: once unsubscribed, nothing more arrives from them, so every message
    // they delivered is queued ahead of the finish demand.
    subscribe_named(coop, false);
    for (Agent* agent = coop.first_; agent != nullptr;) {
        Agent* next = agent->next_in_coop_;  // see register_coop
        queue_of(*agent).push(make_envelope<FinishDemand>(agent, kFinishType));
        agent = next;
    }
}

void Environment::subscribe_named(Coop& coop, bool subscribe) {
    if (coop.named_subscriptions_ == 0) return;
    std::map<MboxId, std::vector<NamedMbox::Subscriber>> by_mbox;
    for (Agent* agent = coop.first_; agent != nullptr; agent = agent->next_in_coop_) {
        agent->handlers_.for_each([&](const HandlerTable::Entry& entry) {
            const auto mbox = MboxId(entry.key >> 32);
            if (mbox != kDirectMbox) by_mbox[mbox].push_back({TypeId(entry.key), agent->queue_, agent});
        });
    }
    for (auto& [id, subscribers] : by_mbox) {
        NamedMbox* mbox;
        {
            std::lock_guard lock(mutex_);
            mbox = &named_mboxes_[id - 1];
        }
        if (subscribe) mbox->subscribe(subscribers);
        else mbox->unsubscribe(subscribers);
    }
}

void Environment::unlink(RegistryShard& shard, Coop& coop) noexcept {
    if (coop.prev_ != nullptr) coop.prev_->next_ = coop.next_;
    else shard.coops = coop.next_;
    if (coop.next_ != nullptr) coop.next_->prev_ = coop.prev_;
    coop.prev_ = coop.next_ = nullptr;
}

void Environment::coop_completed(Coop& coop) noexcept {
    RegistryShard& shard = registry_[coop.shard_];
    bool destroy;
    {
        std::lock_guard lock(shard.lock);
        unlink(shard, coop);
        // During stop, agents still running may send to this coop's agents until everyone has
        // finished; its memory stays until the threads are gone.
        destroy = !shard.stopping;
        if (!destroy) {
            coop.next_ = shard.graveyard;
            shard.graveyard = &coop;
        }
    }
    // Counted out only once destroyed: wait_for_no_coops promises every coop destroyed (skynet
    // with deregistration times its agents' destruction that way).
    if (destroy) destroy_coop(coop);
    bool emptied;
    {
        std::lock_guard lock(shard.lock);
        emptied = --shard.live == 0;
    }
    // The last coop anywhere empties some shard, and whoever empties a shard last sees every
    // shard empty: say A empties shard a and B shard b, each then reading every shard under its
    // lock. If A reads b before B's decrement, A's section on b's lock precedes B's, so A's
    // decrement of a happens before B reads a (program order, then the lock's release and
    // acquire, then program order): B sees both empty. Otherwise A sees b empty. The reads
    // are not a snapshot (a coop registered in a shard already read, and one completing in a
    // shard not yet read, can read as none live): a wrong notification only wakes a waiter,
    // which tests live_coops(), a snapshot, again.
    if (emptied && no_live_coops()) {
        // Under mutex_: a waiter tests live_coops() and starts waiting while it holds it,
        // so this notification cannot fall between its test and its wait.
        std::lock_guard lock(mutex_);
        coops_changed_.notify_all();
    }
}

bool Environment::no_live_coops() const noexcept {
    for (const RegistryShard& shard : registry_) {
        std::lock_guard lock(shard.lock);
        if (shard.live != 0) return false;
    }
    return true;
}

void Environment::request_stop() noexcept {
    // acq_rel: the first caller stops the registry; a later one has nothing left to do (stop()
    // then waits for the coops the first one deregisters).
    if (stop_requested_.exchange(true, std::memory_order_acq_rel)) return;
    std::vector<Coop*> registered;
    for (RegistryShard& shard : registry_) {
        std::lock_guard lock(shard.lock);
        // From here on a coop registered in this shard is too late and never starts, and one
        // completing goes to the graveyard instead of being destroyed, so the pointers collected
        // here stay valid.
        shard.stopping = true;
        for (Coop* coop = shard.coops; coop != nullptr; coop = coop->next_) registered.push_back(coop);
    }
    for (Coop* coop : registered) deregister_coop(*coop);
}

void Environment::stop() {
    if (t_runtime_thread)
        throw std::logic_error("Environment::stop() called from a runtime thread; use request_stop()");
    request_stop();
    std::vector<Dispatcher*> dispatchers;
    {
        std::unique_lock lock(mutex_);
        coops_changed_.wait(lock, [this] { return live_coops() == 0; });
        if (stopped_) return;
        stopped_ = true;
        for (auto& d : dispatchers_) dispatchers.push_back(d.get());
    }
    // Every agent has finished, so no handler runs any more and nothing new is sent: each
    // dispatcher drains what is left (dropping it) and ends its threads.
    std::reverse(dispatchers.begin(), dispatchers.end());
    for (Dispatcher* d : dispatchers) d->shutdown();
    for (RegistryShard& shard : registry_) {
        Coop* graveyard;
        {
            std::lock_guard lock(shard.lock);
            graveyard = std::exchange(shard.graveyard, nullptr);
        }
        while (graveyard != nullptr) {
            Coop* next = graveyard->next_;
            destroy_coop(*graveyard);
            graveyard = next;
        }
    }
}

void Environment::wait_for_no_coops() {
    std::unique_lock lock(mutex_);
    coops_changed_.wait(lock, [this] { return live_coops() == 0 || failed(); });
}

std::uint64_t Environment::live_coops() const {
    // Every shard's lock at once, taken in order (no one holds two otherwise): a snapshot.
    for (const RegistryShard& shard : registry_) shard.lock.lock();
    std::uint64_t live = 0;
    for (const RegistryShard& shard : registry_) {
        live += shard.live;
        shard.lock.unlock();
    }
    return live;
}

std::exception_ptr Environment::error() const {
    std::lock_guard lock(mutex_);
    return error_;
}

void Environment::set_failure_listener(std::function<void()> listener) {
    std::lock_guard lock(mutex_);
    failure_listener_ = std::move(listener);
}

void Environment::fail(std::exception_ptr error) noexcept {
    std::function<void()> listener;
    {
        std::lock_guard lock(mutex_);
        if (error_) return;  // the first error is the one reported
        error_ = error;
        failed_.store(true, std::memory_order_release);
        listener = failure_listener_;
        coops_changed_.notify_all();
    }
    if (listener) listener();
}

Thread Environment::spawn(std::function<void()> body, std::size_t stack_bytes) {
    // A promise, not a latch on our stack: the thread may still be inside its notification
    // when wait() returns here. Shared, because a Thread's body is a std::function, which must
    // be copyable.
    auto registered = std::make_shared<std::promise<void>>();
    std::future<void> ready = registered->get_future();
    Thread thread(
        [this, registered, body = std::move(body)] {
            enter_thread();
            registered->set_value();
            body();
        },
        stack_bytes);
    ready.wait();
    return thread;
}

void Environment::enter_thread() {
    t_runtime_thread = true;
    ThreadRecord record{pthread_self(), {}, true, 0, &detail::t_stats, steady_now_ns()};
    pthread_getcpuclockid(record.thread, &record.clock);
    std::size_t index;
    {
        std::lock_guard lock(mutex_);
        index = threads_.size();
        threads_.push_back(record);
    }
    t_registry_shard = std::uint8_t(1 + index % (kRegistryShards - 1));
    if (const int cpu = config_.placement.cpu_for(unsigned(index)); cpu >= 0) pin_current_thread(cpu);
}

namespace {
std::int64_t cpu_ns(clockid_t clock) noexcept {
    timespec ts{};
    if (clock_gettime(clock, &ts) != 0) return 0;
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}


// A live thread's counts, read now (relaxed loads of fields it alone writes: stats.hpp).
RunStats read_stats(const ThreadStats& stats, std::int64_t now) noexcept {
    RunStats counts;
    counts.inbox_messages = stats.inbox_messages.load(std::memory_order_relaxed);
    counts.inbox_takes = stats.inbox_takes.load(std::memory_order_relaxed);
    if (stats.epoch.load(std::memory_order_relaxed) == detail::stats_epoch.load(std::memory_order_relaxed))
        counts.inbox_largest = stats.inbox_largest.load(std::memory_order_relaxed);
    counts.idle_ns = stats.idle.read(now);
    return counts;
}
}  // namespace

void Environment::leave_thread(const ExecutionContext& context) noexcept {
    const std::int64_t used = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
    const std::int64_t now = steady_now_ns();
    const RunStats counts = read_stats(detail::t_stats, now);
    std::lock_guard lock(mutex_);
    for (ThreadRecord& record : threads_) {
        if (record.alive && pthread_equal(record.thread, pthread_self())) {
            record.alive = false;
            record.final_cpu_ns = used;
            record.ended_ns = now;
            record.final_stats = counts;
            record.final_epoch = detail::stats_epoch.load(std::memory_order_relaxed);
            record.stats = nullptr;  // its thread-local block goes with the thread
        }
    }
    dropped_ += context.dropped;
}

RunStats Environment::stats() const {
    const std::int64_t now = steady_now_ns();
    RunStats total;
    total.at_ns = now;
    for (const RegistryShard& shard : registry_) {
        std::lock_guard lock(shard.lock);
        total.agents_created += shard.agents;
    }
    std::lock_guard lock(mutex_);
    // A live thread cannot exit while we hold the lock: it must take it in leave_thread.
    for (const ThreadRecord& record : threads_) {
        RunStats counts = record.alive ? read_stats(*record.stats, now) : record.final_stats;
        if (!record.alive && record.final_epoch != detail::stats_epoch.load(std::memory_order_relaxed))
            counts.inbox_largest = 0;  // an earlier phase's
        total.inbox_messages += counts.inbox_messages;
        total.inbox_takes += counts.inbox_takes;
        total.inbox_largest = std::max(total.inbox_largest, counts.inbox_largest);
        total.idle_ns += counts.idle_ns;
        total.thread_ns += (record.alive ? now : record.ended_ns) - record.started_ns;
    }
    return total;
}

std::vector<std::int64_t> Environment::thread_cpu_ns() const {
    std::lock_guard lock(mutex_);
    std::vector<std::int64_t> result;
    // A live thread cannot exit while we hold the lock: it must take it in leave_thread.
    for (const ThreadRecord& record : threads_)
        result.push_back(record.alive ? cpu_ns(record.clock) : record.final_cpu_ns);
    return result;
}

std::size_t Environment::thread_count() const {
    std::lock_guard lock(mutex_);
    return threads_.size();
}

std::uint64_t Environment::dropped() const {
    std::lock_guard lock(mutex_);
    return dropped_;
}

}  // namespace labctl::rt
