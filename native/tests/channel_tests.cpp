// The multi-consumer channel (runtime/channel.hpp): competing receivers, threads and agents on
// every dispatcher configuration, take every message exactly once and each producer's messages
// in the order sent; close wakes every blocked receiver; no wake-up is lost; a cancelled
// request gets nothing. stress_tests.cpp loads it harder.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "configs.hpp"

namespace {

struct Item {
    std::uint32_t producer;
    std::uint64_t seq;
};

// Every (producer, seq) taken, counted across receivers; and out-of-order takes by any one
// receiver.
struct Ledger {
    Ledger(std::uint32_t producers, std::uint64_t per_producer)
        : per_producer(per_producer), taken(producers * per_producer) {}

    void record(const Item& item, std::vector<std::int64_t>& last_seen) {
        taken[item.producer * per_producer + item.seq].fetch_add(1, std::memory_order_relaxed);
        if (std::int64_t(item.seq) <= last_seen[item.producer]) out_of_order.fetch_add(1, std::memory_order_relaxed);
        last_seen[item.producer] = std::int64_t(item.seq);
        total.fetch_add(1, std::memory_order_relaxed);
    }

    void check_each_taken_once() const {
        for (const auto& times : taken) CHECK_EQ(times.load(), 1);
        CHECK_EQ(out_of_order.load(), 0);
    }

    const std::uint64_t per_producer;
    std::vector<std::atomic<int>> taken;
    std::atomic<int> out_of_order{0};
    std::atomic<std::uint64_t> total{0};
};

void produce(rt::Channel<Item>& channel, std::uint32_t producer, std::uint64_t per_producer) {
    for (std::uint64_t seq = 0; seq < per_producer; ++seq) CHECK(channel.send(producer, seq));
}

// A receiver thread: takes until the channel is closed and drained.
void drain(rt::Channel<Item>& channel, Ledger& ledger, std::uint32_t producers) {
    std::vector<std::int64_t> last_seen(producers, -1);
    while (std::optional<Item> item = channel.receive()) ledger.record(*item, last_seen);
}

// An agent receiver: asks for one item at a time, and counts the ChannelClosed it gets at the end.
class Taker final : public rt::Agent {
public:
    Taker(rt::Channel<Item>& channel, Ledger& ledger, std::uint32_t producers, std::atomic<int>& closed)
        : channel_(channel), ledger_(ledger), last_seen_(producers, -1), closed_(closed) {
        subscribe<&Taker::on_item>();
        subscribe<&Taker::on_closed>();
    }

    std::uint64_t taken = 0;  // read once it has handled ChannelClosed

private:
    void on_start() override { channel_.request(request_); }
    void on_item(const Item& item) {
        ledger_.record(item, last_seen_);
        ++taken;
        channel_.request(request_);
    }
    void on_closed(const rt::ChannelClosed& closed) {
        CHECK(closed.channel == &channel_.core());
        closed_.fetch_add(1);
    }

    rt::Channel<Item>& channel_;
    Ledger& ledger_;
    std::vector<std::int64_t> last_seen_;
    std::atomic<int>& closed_;
    rt::ChannelRequest request_{*this};
};

void wait_until(const std::atomic<int>& counter, int value) {
    while (counter.load() < value) std::this_thread::sleep_for(1ms);
}

}  // namespace

TEST(channel_threads_take_every_message_exactly_once_in_each_producers_order, 120) {
    constexpr std::uint32_t kProducers = 4, kReceivers = 4;
    constexpr std::uint64_t kPerProducer = 20'000;
    rt::Channel<Item> channel;
    Ledger ledger(kProducers, kPerProducer);
    std::vector<std::thread> receivers;
    for (std::uint32_t r = 0; r < kReceivers; ++r) receivers.emplace_back(drain, std::ref(channel), std::ref(ledger), kProducers);
    std::vector<std::thread> producers;
    for (std::uint32_t p = 0; p < kProducers; ++p) producers.emplace_back(produce, std::ref(channel), p, kPerProducer);
    for (auto& t : producers) t.join();
    channel.close();
    for (auto& t : receivers) t.join();
    ledger.check_each_taken_once();
    CHECK_EQ(ledger.total.load(), std::uint64_t{kProducers * kPerProducer});
    check_no_leak();
}

TEST(channel_agents_compete_and_take_every_message_exactly_once_on_every_dispatcher, 120) {
    constexpr std::uint32_t kProducers = 3, kTakers = 6;
    constexpr std::uint64_t kPerProducer = 5'000;
    for (const Config& config : configs()) {
        // Declared before the environment: it outlives every agent that holds a request on it.
        rt::Channel<Item> channel;
        Ledger ledger(kProducers, kPerProducer);
        std::atomic<int> closed{0};
        std::vector<Taker*> takers;
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) {
            for (std::uint32_t i = 0; i < kTakers; ++i)
                takers.push_back(&coop.make_agent_with_binder<Taker>(dispatcher.binder(i), channel, ledger,
                                                                     kProducers, closed));
        });
        std::vector<std::thread> producers;
        for (std::uint32_t p = 0; p < kProducers; ++p) producers.emplace_back(produce, std::ref(channel), p, kPerProducer);
        for (auto& t : producers) t.join();
        while (ledger.total.load() < kProducers * kPerProducer) std::this_thread::sleep_for(1ms);
        // Each taker gets one ChannelClosed: for the request waiting at close, or at once for
        // one made after it.
        channel.close();
        wait_until(closed, int(kTakers));
        // Each taker's last count was written before it handled ChannelClosed (its last
        // demand), which it said through `closed`: read here, before stop() destroys it.
        std::uint64_t taken = 0;
        for (const Taker* taker : takers) taken += taker->taken;
        env->stop();
        ledger.check_each_taken_once();
        CHECK_EQ(taken, std::uint64_t{kProducers * kPerProducer});
        CHECK_EQ(env->dropped(), std::uint64_t{0});
    }
    check_no_leak();
}

TEST(closing_a_channel_wakes_every_blocked_receiver_after_it_drained_the_queue, 60) {
    rt::Channel<Item> channel;
    CHECK(channel.send(7u, std::uint64_t{1}));
    CHECK(channel.send(7u, std::uint64_t{2}));
    std::atomic<int> woke{0}, got{0};
    std::vector<std::thread> receivers;
    for (int r = 0; r < 4; ++r)
        receivers.emplace_back([&] {
            while (channel.receive()) got.fetch_add(1);
            woke.fetch_add(1);
        });
    // The queued two are taken; then all four block until close.
    while (got.load() < 2) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(20ms);
    CHECK_EQ(woke.load(), 0);
    channel.close();
    for (auto& t : receivers) t.join();
    CHECK_EQ(woke.load(), 4);
    CHECK_EQ(got.load(), 2);
    CHECK(channel.closed());
    check_no_leak();
}

TEST(a_closed_channel_refuses_sends_and_its_receivers_drain_what_was_queued, 60) {
    {
        rt::Channel<Item> channel;
        CHECK(channel.send(0u, std::uint64_t{10}));
        CHECK(channel.send(0u, std::uint64_t{11}));
        channel.close();
        channel.close();  // idempotent
        CHECK(!channel.send(0u, std::uint64_t{12}));
        const std::optional<Item> first = channel.receive(), second = channel.try_receive();
        CHECK(first && second);
        CHECK_EQ(first->seq, std::uint64_t{10});
        CHECK_EQ(second->seq, std::uint64_t{11});
        CHECK(!channel.try_receive());
        CHECK(!channel.receive());  // closed and empty: at once
        // Destroying a channel frees what nobody took.
        rt::Channel<Item> abandoned;
        for (std::uint64_t seq = 0; seq < 100; ++seq) CHECK(abandoned.send(1u, seq));
    }
    check_no_leak();
}

TEST(a_channel_loses_no_wake_up_between_threads_passing_a_message_back_and_forth, 120) {
    // Each message is sent while the other side is about to sleep or asleep: a lost wake-up
    // hangs the test (the harness's time limit fails it).
    constexpr std::uint64_t kRoundTrips = 100'000;
    rt::Channel<Item> there, back;
    std::uint64_t wrong = 0;
    std::thread echo([&] {
        while (std::optional<Item> item = there.receive()) back.send(item->producer, item->seq + 1);
    });
    for (std::uint64_t i = 0; i < kRoundTrips; ++i) {
        there.send(0u, 2 * i);
        if (back.receive()->seq != 2 * i + 1) ++wrong;
    }
    there.close();
    echo.join();
    CHECK_EQ(wrong, std::uint64_t{0});
    check_no_leak();
}

namespace {

// Takes what its request brings and says so; its request is driven from outside.
class Waiter final : public rt::Agent {
public:
    explicit Waiter(std::atomic<std::uint64_t>& got) : got_(got) { subscribe<&Waiter::on_item>(); }
    rt::ChannelRequest request{*this};

private:
    void on_item(const Item& item) { got_.store(item.seq + 1); }
    std::atomic<std::uint64_t>& got_;
};

}  // namespace

TEST(a_cancelled_request_gets_nothing_and_a_request_answers_with_the_oldest_message, 60) {
    const Config config = configs().front();
    rt::Channel<Item> channel;
    std::atomic<std::uint64_t> got{0};
    auto env = make_environment(config);
    rt::Dispatcher& dispatcher = config.make(*env);
    Waiter* waiter = nullptr;
    env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) { waiter = &coop.make_agent<Waiter>(got); });

    channel.request(waiter->request);  // any thread may ask for an agent
    bool refused = false;
    try {
        channel.request(waiter->request);
    } catch (const std::logic_error&) {
        refused = true;
    }
    CHECK(refused);  // one message per request
    CHECK(channel.cancel(waiter->request));
    CHECK(!channel.cancel(waiter->request));  // no longer waiting, nothing on its way
    CHECK(channel.send(0u, std::uint64_t{41}));
    CHECK(channel.send(0u, std::uint64_t{42}));
    std::this_thread::sleep_for(10ms);
    CHECK_EQ(got.load(), std::uint64_t{0});  // the cancelled request took nothing
    channel.request(waiter->request);  // the oldest queued: 41
    while (got.load() == 0) std::this_thread::sleep_for(1ms);
    CHECK_EQ(got.load(), std::uint64_t{42});
    CHECK(!channel.cancel(waiter->request));  // answered
    const std::optional<Item> left = channel.try_receive();
    CHECK(left && left->seq == 42);
    env->stop();
    check_no_leak();
}
