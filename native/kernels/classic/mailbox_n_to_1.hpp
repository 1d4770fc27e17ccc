// What every mailbox_n_to_1 kernel (ours, caf_mailbox_n_to_1) shares: a sender agent's bursts,
// the receiver's tally, the outcome and the answer, so that they send and are verified the same
// way. The study's sender threads are SenderThreads (framework/sender_threads.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../framework/kernel.hpp"
#include "../framework/sender_threads.hpp"

namespace labctl::kernels::mailbox_n_to_1 {

// A sender agent sends this many messages between two Continue messages (the study's threads
// send theirs in one loop).
inline constexpr std::uint64_t kBurst = 1000;

// What the receiver saw when the last expected message arrived, computed there: an extra
// (duplicated) message arriving later cannot race with the kernel reading it.
struct Outcome {
    std::uint64_t received = 0;
    std::uint64_t out_of_order = 0;
    std::uint64_t short_senders = 0;
};

inline std::string describe(const Outcome& outcome) {
    return "received=" + std::to_string(outcome.received) + " out_of_order=" +
           std::to_string(outcome.out_of_order) + " short_senders=" + std::to_string(outcome.short_senders);
}

// The receiver's count, per sender: how many, and whether in order. Each sender sends from one
// thread (or agent), and a queue keeps each sender's order: anything but the next seq is a lost,
// duplicated or reordered message.
class Tally {
public:
    Tally(std::uint32_t senders, std::uint64_t messages_per_sender)
        : per_sender_(senders), messages_per_sender_(messages_per_sender),
          total_(std::uint64_t{senders} * messages_per_sender) {}

    // Counts a message; true if it was the last one expected, and outcome() is then final.
    bool count(std::uint32_t sender, std::uint64_t seq) {
        if (sender >= per_sender_.size()) throw std::out_of_range("mailbox_n_to_1: message from an unknown sender");
        PerSender& from = per_sender_[sender];
        if (seq != from.last_seq + 1) ++outcome_.out_of_order;
        from.last_seq = seq;
        ++from.count;
        if (++outcome_.received != total_) return false;
        for (const PerSender& each : per_sender_)
            if (each.count != messages_per_sender_) ++outcome_.short_senders;
        return true;
    }

    const Outcome& outcome() const noexcept { return outcome_; }

private:
    struct PerSender {
        std::uint64_t count = 0;
        std::uint64_t last_seq = ~std::uint64_t{0};  // so that the first expected seq, 0, is last + 1
    };

    std::vector<PerSender> per_sender_;
    const std::uint64_t messages_per_sender_;
    const std::uint64_t total_;
    Outcome outcome_;
};

// What the answer must be: every message, from every sender, in order.
inline std::string expected(std::uint64_t senders, std::uint64_t messages_per_sender) {
    return describe(Outcome{senders * messages_per_sender, 0, 0});
}

// A run's outcome, once its phase is in `result`: what it processed (the receiver's messages
// and, with sender agents, every Continue they handled), its answer and what that must be.
inline void report(Result& result, const Outcome& outcome, std::uint64_t continues, std::uint64_t senders,
                   std::uint64_t messages_per_sender) {
    result.messages_processed = outcome.received + continues;
    result.answer = describe(outcome);
    result.expected = expected(senders, messages_per_sender);
}

// A sender agent's side, on any runtime: its messages in bursts of kBurst, one burst per
// Continue message.
class Bursts {
public:
    explicit Bursts(std::uint64_t messages) : messages_(messages) {}

    // A Continue came: sends the next burst, `send(seq)` each; true if messages remain, when
    // the agent sends itself the next Continue.
    template <class Send>
    bool next(Send&& send) {
        // Counted before the burst: the kernel reads it after the receiver has had every
        // message, the last of which the agent sends after this write.
        ++continues_;
        const std::uint64_t end = std::min(messages_, next_seq_ + kBurst);
        for (; next_seq_ < end; ++next_seq_) send(next_seq_);
        return next_seq_ < messages_;
    }

    std::uint64_t continues() const noexcept { return continues_; }

private:
    const std::uint64_t messages_;
    std::uint64_t next_seq_ = 0;
    std::uint64_t continues_ = 0;
};

// The kernel's own parameters (the work it does), one schema for every runtime that runs it;
// each kernel adds its clock and runtime parameters with schema() (framework/schema.hpp).
inline std::vector<ParamSpec> own_params() {
    return {
        integer_param("senders", 20, {1, 10'000}, "sender threads or agents"),
        integer_param("messages_per_sender", 1'000'000, {1, 10'000'000'000}, "messages each sender sends"),
        {.name = "sender",
         .type = ParamType::choice,
         .default_value = std::string("thread"),
         .help = "thread: plain threads outside the runtime (the study), on the runtime's "
                 "CPUs when pin is set; agent: agents on the dispatcher, in bursts of 1000",
         .choices = {std::string("thread"), std::string("agent")}},
    };
}

// The messages, one protocol for ours and caf_mailbox_n_to_1 (its CAF port).

struct Msg {
    std::uint32_t sender;
    std::uint64_t seq;
};

// A sender agent's next burst. Self-sent after each burst, so that a pool thread returns to its
// queue between bursts instead of spending the whole run in one sender's handler (and the
// receiver, or the other senders, get the thread in between); the first one comes from the
// kernel once the measured phase has begun.
struct Continue {};

}  // namespace labctl::kernels::mailbox_n_to_1
