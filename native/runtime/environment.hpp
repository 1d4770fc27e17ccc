// The environment: owns dispatchers, named mboxes and coops; starts agents, stops everything.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <pthread.h>

#include "affinity.hpp"
#include "coop.hpp"
#include "mbox.hpp"
#include "stats.hpp"
#include "thread.hpp"
#include "wait.hpp"

namespace labctl::rt {

struct EnvironmentConfig {
    // How long an idle worker thread spins before it parks.
    std::chrono::nanoseconds spin = std::chrono::microseconds(20);
    Placement placement;
};

class Environment {
public:
    explicit Environment(EnvironmentConfig config = {});
    ~Environment();  // stop()
    Environment(const Environment&) = delete;
    Environment& operator=(const Environment&) = delete;

    template <class D, class... Args>
    D& make_dispatcher(Args&&... args) {
        auto dispatcher = std::make_unique<D>(*this, std::forward<Args>(args)...);
        D& result = *dispatcher;
        std::lock_guard lock(mutex_);
        dispatchers_.push_back(std::move(dispatcher));
        return result;
    }

    NamedMbox& named_mbox(std::string_view name);

    // Building and registering a coop. make_coop, then make_agent on it, then register_coop;
    // or introduce_coop(binder, fill) for the three at once.
    Coop& make_coop(Binder default_binder);
    void register_coop(Coop& coop);
    // Destroys a coop that was built and never registered.
    void discard_coop(Coop& coop) noexcept;
    template <class Fill>
    Coop& introduce_coop(Binder default_binder, Fill&& fill) {
        Coop& coop = make_coop(default_binder);
        try {
            fill(coop);
        } catch (...) {
            discard_coop(coop);
            throw;
        }
        register_coop(coop);
        return coop;
    }

    // Every agent of the coop finishes (after the messages already queued for it), then the
    // coop is destroyed. Callable from anywhere, handlers included. Sending to an agent of a
    // deregistered coop is a program error, as with any dangling pointer: the runtime keeps no
    // reference counts on the hot path.
    void deregister_coop(Coop& coop) noexcept;

    // Deregisters every coop; returns at once. Callable from handlers.
    void request_stop() noexcept;
    // request_stop, waits for every agent to finish, drains and joins every thread, destroys
    // everything. Idempotent. Not from a runtime thread (it would wait for itself).
    void stop();
    // Waits until every coop registered so far has been deregistered and destroyed.
    void wait_for_no_coops();
    std::uint64_t live_coops() const;

    // A handler that throws fails the environment: the first error is kept, the listener is
    // called (to wake whoever waits for a result), and the owner stops the environment.
    bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
    std::exception_ptr error() const;
    void set_failure_listener(std::function<void()> listener);
    void fail(std::exception_ptr error) noexcept;

    std::chrono::nanoseconds spin() const noexcept { return config_.spin; }
    const Placement& placement() const noexcept { return config_.placement; }

    // CPU time of each runtime thread started so far, in start order (live ones read now).
    std::vector<std::int64_t> thread_cpu_ns() const;
    std::size_t thread_count() const;

    // The runtime's counts so far, summed over every runtime thread started so far, live ones
    // read now: a phase's are the difference of two (but `inbox_largest`, the phase's own).
    RunStats stats() const;

    // Messages dropped (no handler, or sent to a finished agent), summed over the runtime
    // threads that have exited.
    std::uint64_t dropped() const;

    // For dispatchers: starts a runtime thread running `body` on a stack of `stack_bytes` (0:
    // the system's default), and returns once the thread is pinned and registered (so its CPU
    // time counts from the start, and no agent runs on an unpinned thread). The body ends with
    // leave_thread.
    Thread spawn(std::function<void()> body, std::size_t stack_bytes = 0);
    void leave_thread(const ExecutionContext& context) noexcept;

private:
    friend class Coop;
    friend void reap(ExecutionContext& context) noexcept;

    void coop_completed(Coop& coop) noexcept;
    void begin_deregistration(Coop& coop) noexcept;
    void destroy_coop(Coop& coop) noexcept;
    void subscribe_named(Coop& coop, bool subscribe);
    void enter_thread();

    struct ThreadRecord {
        pthread_t thread;
        clockid_t clock;
        bool alive;
        std::int64_t final_cpu_ns;
        // The thread's counts: its own while it lives, copied here when it leaves.
        const ThreadStats* stats;
        std::int64_t started_ns;  // steady clock
        std::int64_t ended_ns = 0;
        RunStats final_stats = {};
        std::uint32_t final_epoch = 0;  // the stats epoch when it left (its `inbox_largest`'s)
    };

    const EnvironmentConfig config_;

    // The coops registered and not yet completed, in shards: a coop goes into the shard of the
    // thread that registers it (each runtime thread its own, other threads shard 0) and leaves
    // it when it completes. Every registration and completion takes its shard's lock (skynet:
    // 111,111 of each a run) and writes into the coops next to it in the shard's list, which
    // the same thread registered. With one list under one lock every coop's registration wrote
    // into the head coop, often another core's, and the lock's line moved between the cores:
    // skynet 1M on two work_stealing threads took 65.0 ms with it, 61.8 ms sharded (108.4 and
    // 100.3 ms with deregistration; one thread 100.7 and 101.1 ms). Under the environment's
    // mutex, two workers registering at once put a glibc mutex to sleep in the kernel (futex
    // wait and wake: 11% of skynet's samples).
    static constexpr unsigned kRegistryShards = 16;
    struct alignas(64) RegistryShard {
        mutable SpinLock lock;
        Coop* coops = nullptr;      // registered and not yet completed
        Coop* graveyard = nullptr;  // completed during stop: destroyed after the threads end
        std::uint64_t live = 0;     // registered here and not yet destroyed
        std::uint64_t agents = 0;   // registered here so far, for stats()
        bool stopping = false;
    };
    // Whether no shard has a live coop, each read under its lock in turn (not a snapshot):
    // see coop_completed.
    bool no_live_coops() const noexcept;
    static void unlink(RegistryShard& shard, Coop& coop) noexcept;  // under shard.lock
    std::array<RegistryShard, kRegistryShards> registry_;
    std::atomic<bool> stop_requested_{false};
    mutable std::mutex mutex_;
    // Notified, under mutex_, when the last live coop completes or the environment fails.
    std::condition_variable coops_changed_;
    bool stopped_ = false;
    std::vector<std::unique_ptr<Dispatcher>> dispatchers_;
    std::deque<NamedMbox> named_mboxes_;  // by id - 1; a deque never moves its elements
    std::unordered_map<std::string, NamedMbox*> mboxes_by_name_;
    std::vector<ThreadRecord> threads_;
    std::uint64_t dropped_ = 0;

    std::atomic<bool> failed_{false};
    std::exception_ptr error_;
    std::function<void()> failure_listener_;
};

}  // namespace labctl::rt
