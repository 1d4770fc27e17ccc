// thread_ring on Boost.Fiber: `actors` fibers in a ring, each with an inbox; one token carrying a
// countdown of `hops` is pushed into fiber 0's inbox, and each fiber forwards it to the next's
// with the countdown decremented, until it reaches 0: that fiber reports where it stands and how
// many hops the token made to the main fiber, the collector (as ours: agent i forwards to i+1
// mod actors, the end report goes to a collector outside the ring; ours gives the collector a
// thread of its own, here it waits on the main thread, one of the scheduler's). Every inbox is a
// buffered_channel of capacity 2, which holds one value: the channel and capacity of the
// library's own examples/ping_pong.cpp, and room for the one token a fiber can ever hold. Stacks
// are fixedsize_stack's at the library's default size (128 KiB on Boost 1.74): a ring fiber is
// created once, before the phase, so nothing is gained by skynet's two pages.
//
// Each fiber counts the tokens it received; after the phase the inboxes are closed, the fibers
// end and are joined, and the counts are checked against the visits the arithmetic predicts
// (our Plan::visits, computed apart from the run). The answer and the message count are ours:
// hops + 1 receipts (the injection is one) and one end report.
//
// Measured phase (elapsed_ns), as ours: from the injection, every ring fiber created and started
// (counted just before it first waits on its inbox) and the scheduler's threads registered, to
// the collector holding the end report. On thread_pool or work_stealing the token may cross
// threads at every hop.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peer.hpp"

namespace peer {
namespace {

struct Token {
    std::uint64_t remaining;  // hops still to make
    std::uint64_t hops;       // hops made so far, counted apart from `remaining`
};

// A token's last stop, reported to the collector.
struct End {
    std::uint32_t agent;
    std::uint64_t hops;
};

using Inbox = boost::fibers::buffered_channel<Token>;
using Stack = boost::fibers::fixedsize_stack;

// Counts down once per ring fiber, at its start; the collector waits for 0 before the phase.
class Started {
public:
    explicit Started(std::uint64_t count) : count_(count) {}

    void count_down() {
        std::unique_lock<boost::fibers::mutex> lock(mutex_);
        if (--count_ == 0) all_.notify_all();
    }

    void wait() {
        std::unique_lock<boost::fibers::mutex> lock(mutex_);
        all_.wait(lock, [this] { return count_ == 0; });
    }

private:
    boost::fibers::mutex mutex_;
    boost::fibers::condition_variable all_;
    std::uint64_t count_;
};

struct Ring {
    explicit Ring(std::uint32_t actors) : received(actors), started(actors) {
        inboxes.reserve(actors);
        for (std::uint32_t i = 0; i < actors; ++i) inboxes.push_back(std::make_unique<Inbox>(2));
    }

    std::vector<std::unique_ptr<Inbox>> inboxes;  // a channel neither moves nor copies
    std::vector<std::uint64_t> received;          // written by fiber i only, read once it is joined
    boost::fibers::buffered_channel<End> ends{2};
    Started started;
};

// Ring fiber `index`: forwards the token until its inbox is closed after the phase.
void member(Ring& ring, std::uint32_t index) {
    Inbox& inbox = *ring.inboxes[index];
    Inbox& next = *ring.inboxes[(index + 1) % ring.inboxes.size()];
    ring.started.count_down();
    Token token{};
    while (inbox.pop(token) == boost::fibers::channel_op_status::success) {
        ++ring.received[index];
        if (token.remaining == 0) ring.ends.push(End{index, token.hops});
        else next.push(Token{token.remaining - 1, token.hops + 1});
    }
}

std::string describe(std::uint64_t ended, std::uint64_t wrong_end, std::uint64_t wrong_hops, std::uint64_t repeated,
                     std::uint64_t uneven_agents) {
    return "tokens_ended=" + std::to_string(ended) + " wrong_end=" + std::to_string(wrong_end) +
           " wrong_hops=" + std::to_string(wrong_hops) + " repeated=" + std::to_string(repeated) +
           " uneven_agents=" + std::to_string(uneven_agents);
}

}  // namespace

Reply thread_ring(const Params& params) {
    const auto actors = std::uint32_t(params.at("actors"));
    const auto hops = std::uint64_t(params.at("hops"));
    const Fault injected = fault();

    Ring ring(actors);
    Stack stack;  // fixedsize_stack's default size
    End end{};
    std::uint64_t repeated = 0;
    Clock::duration elapsed{};
    {
        Scheduler scheduler(params);
        std::vector<boost::fibers::fiber> members;
        members.reserve(actors);
        for (std::uint32_t i = 0; i < actors; ++i)
            members.emplace_back(std::allocator_arg, stack, member, std::ref(ring), i);
        ring.started.wait();
        const Clock::time_point start = Clock::now();
        // Fault::compute: one hop too many, which the check below must catch.
        ring.inboxes[0]->push(Token{hops + (injected == Fault::compute ? 1 : 0), 0});
        end = ring.ends.value_pop();
        elapsed = Clock::now() - start;
        for (auto& inbox : ring.inboxes) inbox->close();
        for (auto& fiber : members) fiber.join();
        for (End again{}; ring.ends.try_pop(again) == boost::fibers::channel_op_status::success;) ++repeated;
    }

    // The token's stops are hops + 1, agent 0 first: agent i is visited (hops+1)/actors times,
    // once more if i < (hops+1) % actors; it ends at agent hops % actors.
    std::uint64_t received = 0, uneven = 0;
    for (std::uint32_t i = 0; i < actors; ++i) {
        received += ring.received[i];
        if (ring.received[i] != (hops + 1) / actors + (i < (hops + 1) % actors ? 1 : 0)) ++uneven;
    }
    const std::string answer = describe(1 + repeated, end.agent != hops % actors ? 1 : 0, end.hops != hops ? 1 : 0,
                                         repeated, uneven);
    const std::string expected = describe(1, 0, 0, 0, 0);
    if (answer != expected) wrong_answer("thread_ring", answer, expected);

    Reply reply;
    reply.elapsed_ns = std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
    reply.messages = received + 1 + repeated;  // receipts and end reports
    reply.answer = injected == Fault::reply ? describe(1, 0, 0, 0, 1) : answer;
    // Every receipt but the injection is a hop; with none there is no time per hop (ours says so).
    if (received > 1) reply.metrics.push_back({"ns_per_hop", double(reply.elapsed_ns) / double(received - 1)});
    return reply;
}

}  // namespace peer
