// floor_actor_loop: the machine's floor for an actor runtime on one thread: the loop every
// dispatcher runs, with nothing around it. Typed dispatch (a handler found by a type id in the
// receiver's table and called through a pointer), envelopes from a free list, one intrusive FIFO;
// no coops, no lifecycle, no per-thread pool, no inbox for other threads. ping_pong's semantics and
// answer, so that it compares with ping_pong on one thread.
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "../classic/ping_pong.hpp"
#include "../framework/counters.hpp"
#include "floors.hpp"

namespace labctl::kernels::floor_actor_loop {
namespace {

using Clock = std::chrono::steady_clock;

struct Actor;
using TypeId = std::uint32_t;

struct Envelope {
    Envelope* next;
    Actor* target;
    TypeId type;
};

template <class M>
struct Letter final : Envelope {
    M body;
};

using Handler = void (*)(Actor&, Envelope&);

// An actor's handler and the type it takes: the runtime's HandlerTable with its first entry alone.
struct Actor {
    TypeId type = 0;
    Handler handler = nullptr;
};

// Blocks of one size on a LIFO free list: the envelope a handler frees is the next one sent.
class FreeList {
public:
    static constexpr std::size_t kBlock = 64;

    void* take() {
        Block* block = free_;
        if (block == nullptr) [[unlikely]] return grow();
        free_ = block->next;
        return block;
    }
    void give(void* p) noexcept {
        auto* block = static_cast<Block*>(p);
        block->next = free_;
        free_ = block;
    }

private:
    struct Block {
        Block* next;
    };
    // Out of line, so that a send's fast path saves no registers for it.
    [[gnu::noinline, gnu::cold]] void* grow() {
        constexpr std::size_t kCount = 256;
        chunks_.push_back(std::make_unique<std::byte[]>(kBlock * kCount));
        for (std::size_t i = 0; i < kCount; ++i) give(chunks_.back().get() + i * kBlock);
        return take();
    }

    Block* free_ = nullptr;
    std::vector<std::unique_ptr<std::byte[]>> chunks_;
};

// The loop: one FIFO of envelopes, each handed to its target's handler, then freed.
class Loop {
public:
    template <class M>
    void send(Actor& to, TypeId type, M body) {
        static_assert(sizeof(Letter<M>) <= FreeList::kBlock);
        auto* letter = ::new (free_.take()) Letter<M>{{nullptr, &to, type}, body};
        if (tail_ != nullptr) tail_->next = letter;
        else head_ = letter;
        tail_ = letter;
    }

    // Runs until no envelope is left; returns the envelopes no handler took.
    [[gnu::hot]] std::uint64_t run() {
        std::uint64_t dropped = 0;
        while (Envelope* e = head_) {
            head_ = e->next;
            if (head_ == nullptr) tail_ = nullptr;
            Actor& target = *e->target;
            if (target.type == e->type) [[likely]] target.handler(target, *e);
            else ++dropped;
            free_.give(e);  // every message here is trivially destructible
        }
        return dropped;
    }

private:
    Envelope* head_ = nullptr;
    Envelope* tail_ = nullptr;
    FreeList free_;
};

constexpr TypeId kPing = 1, kPong = 2;

struct Ping {
    std::uint64_t seq;
};
struct Pong {
    std::uint64_t seq;
};

// The two sides, as ping_pong's: each counts what it receives, the pinger stops after round_trips.
struct Ponger;
struct Pinger : Actor {
    Loop* loop;
    Ponger* ponger;
    std::uint64_t round_trips;
    ping_pong::Tally pongs;
};
struct Ponger : Actor {
    Loop* loop;
    Pinger* pinger;
    ping_pong::Tally pings;
};

void on_ping(Actor& actor, Envelope& envelope) {
    auto& self = static_cast<Ponger&>(actor);
    const Ping& ping = static_cast<Letter<Ping>&>(envelope).body;
    self.pings.count(ping.seq, true);
    self.loop->send(*self.pinger, kPong, Pong{ping.seq});
}

void on_pong(Actor& actor, Envelope& envelope) {
    auto& self = static_cast<Pinger&>(actor);
    const Pong& pong = static_cast<Letter<Pong>&>(envelope).body;
    self.pongs.count(pong.seq, true);
    if (self.pongs.received < self.round_trips) self.loop->send(*self.ponger, kPing, Ping{pong.seq + 1});
}

Result run(const Params& params) {
    const auto round_trips = std::uint64_t(params.integer("messages")) / 2;
    Loop loop;
    Pinger pinger;
    Ponger ponger;
    pinger.type = kPong;
    pinger.handler = &on_pong;
    ponger.type = kPing;
    ponger.handler = &on_ping;
    pinger.loop = ponger.loop = &loop;
    pinger.ponger = &ponger;
    ponger.pinger = &pinger;
    pinger.round_trips = round_trips;

    const std::int64_t cpu_start = floors::thread_cpu_now();
    // The phase's edges marked as a kernel's (framework/phase.hpp), so that the instructions and
    // counters measures count the loop alone.
    counters::begin();
    const Clock::time_point start = Clock::now();
    loop.send(ponger, kPing, Ping{0});
    const std::uint64_t dropped = loop.run();
    const Clock::time_point end = Clock::now();
    counters::end();
    counters::record();

    Result result;
    result.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
    result.thread_cpu_ns = {floors::thread_cpu_now() - cpu_start};
    result.messages_processed = ponger.pings.received + pinger.pongs.received;
    result.answer = ping_pong::describe(ponger.pings, pinger.pongs) + (dropped ? " dropped=" + std::to_string(dropped) : "");
    result.expected = ping_pong::expected(round_trips);
    result.metrics = {{"round_trip_mean_ns", double(result.elapsed_ns) / double(round_trips)}};
    return result;
}

void check(const Params& params) {
    if (params.integer("messages") % 2 != 0)
        throw ParamError("floor_actor_loop", "messages",
                         "parameter 'messages' must be even (pings plus pongs), got " +
                             std::to_string(params.integer("messages")));
}

Expectation expect(const Params& params) {
    const auto round_trips = std::uint64_t(params.integer("messages")) / 2;
    return {ping_pong::expected(round_trips), 2 * round_trips};
}

const Registration registration(Kernel{
    .name = "floor_actor_loop",
    .summary = "the machine's floor for an actor runtime on one thread: typed dispatch, pooled "
               "envelopes and an intrusive FIFO, nothing else, passing ping_pong's messages",
    .description =
        "Two actors exchange a ping and a pong messages/2 times on the calling thread, as "
        "ping_pong on one thread: each envelope comes from a free list, is appended to one "
        "intrusive FIFO, and the loop hands it to the handler its target's table holds for its "
        "type (called through a pointer), then frees it. No coops, lifecycle, per-thread pool or "
        "inbox for other threads. Timed from the first ping to the last pong, no clock read "
        "inside; round_trip_mean_ns is that time over the round trips. The floor of ping_pong's "
        "throughput: a report gives it as a multiple of this loop's.",
    .sources = {{"theron_303", "PingPong: the exchange without a runtime around it"},
                {"sobjectizer_tales22", "Ping pong: the exchange without a runtime around it"}},
    .verifies = "both sides counted every message (messages/2 pings and pongs), in order, and "
                "every envelope found its handler",
    .params = {integer_param("messages", 10'000'000, {2, 10'000'000'000},
                             "messages in total, pings plus pongs (even)")},
    .metrics = {{.name = "round_trip_mean_ns"}},
    .check = check,
    .run = run,
    .expect = expect,
    .floor_of = {{.kernel = "ping_pong", .metric = "msgs_per_s", .floor_metric = "msgs_per_s",
                  .name = "the bare actor loop"}},
});

}  // namespace
}  // namespace labctl::kernels::floor_actor_loop
