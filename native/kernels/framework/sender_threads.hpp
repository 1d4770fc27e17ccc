// Writing threads outside the runtime, as the studies' senders were (libcppa's 20 sender threads,
// Theron's producers): started before the measured phase, released together at its start, each
// sending its quota in order; optionally confined to the runtime's CPUs, so that senders and
// runtime share the cores as they shared the study's machine.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <latch>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "../../runtime/affinity.hpp"

namespace labctl::kernels {

// Thread i calls send(i, seq) for seq = 0..quotas[i]-1, once released. With `cpus` not empty each
// thread runs on those CPUs only (rt::confine_current_thread); a thread the system refuses to
// confine fails the run rather than measure something else. Always joined, on failure too: the
// destructor releases the start (a thread never waits forever) and asks them to stop, then the
// jthreads join.
template <class Send>
class SenderThreads {
public:
    // A thread looks at its stop flag once per this many sends (an atomic load inside the
    // library), none per message: on failure it quits within that many.
    static constexpr std::uint64_t kStopCheck = 1000;

    SenderThreads(const std::vector<std::uint64_t>& quotas, Send send, std::vector<int> cpus = {})
        : send_(send), cpus_(std::move(cpus)) {
        threads_.reserve(quotas.size());
        try {
            for (std::uint32_t i = 0; i < quotas.size(); ++i) {
                threads_.emplace_back([this, i, quota = quotas[i]](std::stop_token stop) {
                    // relaxed: join() reads it after joining the thread, which orders the write.
                    if (!rt::confine_current_thread(cpus_)) refused_.store(true, std::memory_order_relaxed);
                    start_.wait();
                    for (std::uint64_t seq = 0; seq < quota;) {
                        if (stop.stop_requested()) return;
                        const std::uint64_t end = std::min(quota, seq + kStopCheck);
                        for (; seq < end; ++seq) send_(i, seq);
                    }
                });
            }
        } catch (...) {
            // A thread that could not start: the destructor will not run, so the ones that did
            // are let go here before threads_ joins them.
            let_go();
            throw;
        }
    }
    // `senders` threads, each sending `messages_per_sender`.
    SenderThreads(std::uint32_t senders, std::uint64_t messages_per_sender, Send send, std::vector<int> cpus = {})
        : SenderThreads(std::vector<std::uint64_t>(senders, messages_per_sender), send, std::move(cpus)) {}

    SenderThreads(const SenderThreads&) = delete;
    SenderThreads& operator=(const SenderThreads&) = delete;

    // threads_, declared last, is destroyed first: each jthread joins.
    ~SenderThreads() { let_go(); }

    void release() noexcept {
        if (released_) return;
        released_ = true;
        start_.count_down();
    }

    // Waits for every sender to have sent all its messages. Throws if a thread could not be
    // confined to `cpus` (its sends still ran, unconfined: the run measured something else).
    void join() {
        for (std::jthread& thread : threads_) thread.join();
        if (refused_.load(std::memory_order_relaxed))
            throw std::runtime_error("a sender thread could not be confined to the runtime's CPUs");
    }

private:
    void let_go() noexcept {
        for (std::jthread& thread : threads_) thread.request_stop();
        release();
    }

    const Send send_;  // called from every thread: it must not change state of its own
    const std::vector<int> cpus_;
    std::latch start_{1};
    std::atomic<bool> refused_{false};  // some thread could not be confined to cpus_
    bool released_ = false;
    std::vector<std::jthread> threads_;
};

}  // namespace labctl::kernels
