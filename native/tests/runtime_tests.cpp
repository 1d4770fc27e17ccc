// The runtime's behaviour through every dispatcher: every message delivered once and in order
// per sender, lifecycle order, coop deregistration, clean shutdown under load, named mboxes,
// pinning. stress_tests.cpp loads it harder. Run under ThreadSanitizer and AddressSanitizer too
// (CMake's LABCTL_SANITIZE); the pool's accounting doubles as a leak check.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "configs.hpp"
#include "runtime/dispatchers/worker_pool.hpp"

namespace {

struct Item {
    std::uint32_t sender;
    std::uint64_t seq;
};

// What happened to a group of agents over their lives, counted outside them (they are gone when
// the counts are read).
struct Lifecycle {
    std::atomic<int> started{0};
    std::atomic<int> finished{0};
    std::atomic<int> destroyed{0};
    std::atomic<int> complete{0};
};

// Counts what it receives and checks that each sender's items arrive in order.
class Receiver final : public rt::Agent {
public:
    Receiver(std::uint32_t senders, std::uint64_t per_sender, Lifecycle& lifecycle)
        : next_(senders, 0), expected_(std::uint64_t(senders) * per_sender), lifecycle_(lifecycle) {
        subscribe<&Receiver::on_item>();
    }
    ~Receiver() override { lifecycle_.destroyed.fetch_add(1); }

    std::uint64_t received = 0;
    std::uint64_t out_of_order = 0;
    bool started_first = true;

private:
    void on_start() override {
        started_ = true;
        lifecycle_.started.fetch_add(1);
    }
    void on_finish() override { lifecycle_.finished.fetch_add(1); }
    void on_item(const Item& item) {
        if (!started_) started_first = false;
        if (item.seq != next_[item.sender]) ++out_of_order;
        next_[item.sender] = item.seq + 1;
        if (++received == expected_) lifecycle_.complete.fetch_add(1);
    }

    bool started_ = false;
    std::vector<std::uint64_t> next_;
    const std::uint64_t expected_;
    Lifecycle& lifecycle_;
};

// Sends `per_receiver` items to every receiver from its start handler.
class Sender final : public rt::Agent {
public:
    Sender(std::uint32_t id, std::vector<Receiver*>& receivers, std::uint64_t per_receiver)
        : id_(id), receivers_(receivers), per_receiver_(per_receiver) {}

private:
    void on_start() override {
        for (std::uint64_t seq = 0; seq < per_receiver_; ++seq)
            for (Receiver* r : receivers_) rt::send<Item>(*r, id_, seq);
    }
    std::uint32_t id_;
    std::vector<Receiver*>& receivers_;
    std::uint64_t per_receiver_;
};

void wait_for(const std::atomic<int>& counter, int value) {
    while (counter.load() < value) std::this_thread::sleep_for(1ms);
}

}  // namespace

TEST(every_message_is_delivered_once_and_in_order_per_sender, 120) {
    constexpr std::uint32_t kReceivers = 6, kAgentSenders = 3, kThreadSenders = 3;
    constexpr std::uint64_t kPerPair = 5'000;
    for (const Config& config : configs()) {
        Lifecycle lifecycle;
        std::vector<Receiver*> receivers;
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) {
            for (std::uint32_t i = 0; i < kReceivers; ++i)
                receivers.push_back(&coop.make_agent_with_binder<Receiver>(
                    dispatcher.binder(i % 2), kAgentSenders + kThreadSenders, kPerPair, lifecycle));
        });
        // Senders of both kinds at once: agents on the dispatcher, and plain threads.
        env->introduce_coop(dispatcher.binder(1), [&](rt::Coop& coop) {
            for (std::uint32_t s = 0; s < kAgentSenders; ++s) coop.make_agent<Sender>(s, receivers, kPerPair);
        });
        std::vector<std::thread> threads;
        for (std::uint32_t s = 0; s < kThreadSenders; ++s)
            threads.emplace_back([&, s] {
                for (std::uint64_t seq = 0; seq < kPerPair; ++seq)
                    for (Receiver* r : receivers) rt::send<Item>(*r, kAgentSenders + s, seq);
            });
        for (auto& t : threads) t.join();
        wait_for(lifecycle.complete, kReceivers);
        for (Receiver* r : receivers) {
            CHECK_EQ(r->received, std::uint64_t(kAgentSenders + kThreadSenders) * kPerPair);
            CHECK_EQ(r->out_of_order, std::uint64_t{0});
            CHECK(r->started_first);
        }
        env->stop();
        CHECK_EQ(lifecycle.started.load(), int(kReceivers));
        CHECK_EQ(lifecycle.finished.load(), int(kReceivers));
        CHECK_EQ(lifecycle.destroyed.load(), int(kReceivers));
        CHECK_EQ(env->dropped(), std::uint64_t{0});  // every message found its handler
    }
    check_no_leak();
}

namespace {

struct Token {
    std::uint64_t hops;
};

// Passes tokens around a ring for as long as the environment runs.
class RingMember final : public rt::Agent {
public:
    explicit RingMember(std::atomic<std::uint64_t>& hops, std::atomic<int>& destroyed)
        : hops_(hops), destroyed_(destroyed) {
        subscribe<&RingMember::on_token>();
    }
    ~RingMember() override { destroyed_.fetch_add(1); }
    RingMember* next = nullptr;
    int tokens_at_start = 0;

private:
    void on_start() override {
        for (int i = 0; i < tokens_at_start; ++i) rt::send<Token>(*next, 0u);
    }
    void on_token(const Token& token) {
        hops_.fetch_add(1, std::memory_order_relaxed);
        rt::send<Token>(*next, token.hops + 1);
    }
    std::atomic<std::uint64_t>& hops_;
    std::atomic<int>& destroyed_;
};

}  // namespace

TEST(stop_under_load_finishes_every_agent_and_frees_every_message, 120) {
    constexpr int kMembers = 16;
    for (const Config& config : configs()) {
        std::atomic<std::uint64_t> hops{0};
        std::atomic<int> destroyed{0};
        {
            auto env = make_environment(config);
            rt::Dispatcher& dispatcher = config.make(*env);
            // Two coops, so that while one finishes the other still sends to it.
            std::vector<RingMember*> ring;
            rt::Coop& first = env->make_coop(dispatcher.binder());
            rt::Coop& second = env->make_coop(dispatcher.binder());
            for (int i = 0; i < kMembers; ++i) {
                rt::Coop& coop = i % 2 ? second : first;
                auto& member = coop.make_agent_with_binder<RingMember>(dispatcher.binder(i % 3), hops,
                                                                      destroyed);
                member.tokens_at_start = 4;
                ring.push_back(&member);
            }
            for (int i = 0; i < kMembers; ++i) ring[i]->next = ring[(i + 1) % kMembers];
            env->register_coop(first);
            env->register_coop(second);
            while (hops.load() < 20'000) std::this_thread::sleep_for(1ms);
            env->stop();
            CHECK_EQ(destroyed.load(), kMembers);
            // A token only ends by reaching a finished agent: every one of them is dropped
            // exactly once (and freed: check_no_leak below).
            CHECK_EQ(env->dropped(), std::uint64_t(4 * kMembers));
            CHECK_EQ(env->live_coops(), std::uint64_t{0});
        }
    }
    check_no_leak();
}

namespace {

struct Stop {};

// Deregisters its own coop on its first message; counts lifecycle calls.
class SelfDeregistering final : public rt::Agent {
public:
    SelfDeregistering(std::atomic<int>& started, std::atomic<int>& finished, std::atomic<int>& destroyed)
        : started_(started), finished_(finished), destroyed_(destroyed) {
        subscribe<&SelfDeregistering::on_stop>();
    }
    ~SelfDeregistering() override { destroyed_.fetch_add(1); }

private:
    void on_start() override { started_.fetch_add(1); }
    void on_finish() override { finished_.fetch_add(1); }
    void on_stop(const Stop&) { environment().deregister_coop(coop()); }
    std::atomic<int>& started_;
    std::atomic<int>& finished_;
    std::atomic<int>& destroyed_;
};

}  // namespace

TEST(deregistering_a_coop_finishes_and_destroys_all_its_agents, 120) {
    constexpr int kCoops = 50, kAgents = 8;
    for (const Config& config : configs()) {
        std::atomic<int> started{0}, finished{0}, destroyed{0};
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        for (int c = 0; c < kCoops; ++c) {
            SelfDeregistering* first = nullptr;
            env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) {
                for (int i = 0; i < kAgents; ++i) {
                    auto& agent = coop.make_agent_with_binder<SelfDeregistering>(dispatcher.binder(i % 2),
                                                                                started, finished, destroyed);
                    if (i == 0) first = &agent;
                }
            });
            rt::send<Stop>(*first);
        }
        env->wait_for_no_coops();
        // Destroyed while the environment runs: deregistration does not wait for stop().
        CHECK_EQ(started.load(), kCoops * kAgents);
        CHECK_EQ(finished.load(), kCoops * kAgents);
        CHECK_EQ(destroyed.load(), kCoops * kAgents);
        CHECK_EQ(env->live_coops(), std::uint64_t{0});
        env->stop();
    }
    check_no_leak();
}

namespace {

struct Count {
    std::uint64_t value;
};

}  // namespace

namespace {

struct News {
    std::uint32_t seq;
};

class Subscriber final : public rt::Agent {
public:
    Subscriber(rt::NamedMbox& channel, std::atomic<std::uint64_t>& received, std::atomic<int>& out_of_order)
        : received_(received), out_of_order_(out_of_order) {
        subscribe<&Subscriber::on_news>(channel);
    }

private:
    void on_news(News& news) {
        if (news.seq != next_) out_of_order_.fetch_add(1);
        next_ = news.seq + 1;
        news.seq = ~0u;  // each subscriber has its own copy: this must not leak to the others
        received_.fetch_add(1);
    }
    std::uint32_t next_ = 0;
    std::atomic<std::uint64_t>& received_;
    std::atomic<int>& out_of_order_;
};

}  // namespace

TEST(named_mbox_delivers_one_copy_to_each_subscriber_until_it_leaves, 120) {
    constexpr int kSubscribers = 10;
    constexpr std::uint32_t kMessages = 2'000;
    for (const Config& config : configs()) {
        std::atomic<std::uint64_t> received{0};
        std::atomic<int> out_of_order{0};
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        rt::NamedMbox& channel = env->named_mbox("news");
        CHECK(&env->named_mbox("news") == &channel);
        rt::Coop& coop = env->introduce_coop(dispatcher.binder(), [&](rt::Coop& c) {
            for (int i = 0; i < kSubscribers; ++i)
                c.make_agent_with_binder<Subscriber>(dispatcher.binder(i % 3), channel, received, out_of_order);
        });
        for (std::uint32_t seq = 0; seq < kMessages; ++seq) rt::send<News>(channel, seq);
        while (received.load() < std::uint64_t(kSubscribers) * kMessages) std::this_thread::sleep_for(1ms);
        env->deregister_coop(coop);
        env->wait_for_no_coops();
        rt::send<News>(channel, 0u);  // nobody listens any more: dropped at the mbox
        CHECK_EQ(received.load(), std::uint64_t(kSubscribers) * kMessages);
        CHECK_EQ(out_of_order.load(), 0);
        env->stop();
    }
    check_no_leak();
}

namespace {

class Thrower final : public rt::Agent {
public:
    Thrower() { subscribe<&Thrower::on_stop>(); }

private:
    void on_stop(const Stop&) { throw std::runtime_error("handler failed on purpose"); }
};

}  // namespace

TEST(a_handler_that_throws_fails_the_environment_with_its_error, 60) {
    for (const Config& config : configs()) {
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        rt::Completion<int> never;
        env->set_failure_listener([&] { never.abandon(); });
        Thrower* thrower = nullptr;
        env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) { thrower = &coop.make_agent<Thrower>(); });
        rt::send<Stop>(*thrower);
        CHECK(!never.wait().has_value());
        CHECK(env->failed());
        try {
            std::rethrow_exception(env->error());
        } catch (const std::runtime_error& e) {
            CHECK_EQ(std::string(e.what()), std::string("handler failed on purpose"));
        }
        env->stop();
    }
    check_no_leak();
}

namespace {

// Records which CPUs it may run on, from inside its worker thread.
class AffinityProbe final : public rt::Agent {
public:
    explicit AffinityProbe(rt::Completion<std::vector<int>>& done) : done_(done) {}

private:
    void on_start() override { done_.set(rt::allowed_cpus()); }
    rt::Completion<std::vector<int>>& done_;
};

}  // namespace

TEST(pinning_places_threads_inside_the_inherited_cpu_set, 60) {
    const std::vector<int> cpus = rt::allowed_cpus();
    CHECK(!cpus.empty());
    const std::string last_core = std::to_string(cpus.size() - 1);
    struct Case {
        std::string pin;
        std::vector<int> expected_first_thread;
    };
    for (const Case& c : std::vector<Case>{{"none", cpus}, {"compact", {cpus.front()}}, {last_core, {cpus.back()}}}) {
        rt::EnvironmentConfig env_config;
        env_config.placement = rt::Placement::parse(c.pin);
        rt::Environment env(env_config);
        rt::Dispatcher& dispatcher = rt::find_dispatcher("one_thread").make(env, {});
        rt::Completion<std::vector<int>> done;
        env.introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) { coop.make_agent<AffinityProbe>(done); });
        CHECK(done.wait().value() == c.expected_first_thread);
        env.stop();
    }
    // A core outside the set is refused, naming what is allowed.
    try {
        rt::Placement::parse(std::to_string(cpus.size()));
        CHECK(false);
    } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()).find("outside the allowed set") != std::string::npos);
        CHECK(std::string(e.what()).find("allowed: none, compact, spread") != std::string::npos);
    }
    for (const char* bad : {"", "x", "1-0", "0,,1", "-1"}) {
        bool refused = false;
        try {
            rt::Placement::parse(bad);
        } catch (const std::invalid_argument&) {
            refused = true;
        }
        CHECK(refused);
    }
    check_no_leak();
}

// active_obj's agents run on threads with the stack size asked for (stack_kb), the smallest the
// system takes included; 0 keeps the system's default (ulimit -s: 8 MiB here). What each agent's
// thread has is read from inside it (pthread_getattr_np).
namespace {
class StackProbe final : public rt::Agent {
public:
    explicit StackProbe(rt::Completion<std::size_t>& done) : done_(done) {}

private:
    void on_start() override {
        pthread_attr_t attributes;
        std::size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
            pthread_attr_getstacksize(&attributes, &size);
            pthread_attr_destroy(&attributes);
        }
        done_.set(size);
    }
    rt::Completion<std::size_t>& done_;
};

std::size_t agent_stack_bytes(std::uint32_t stack_kb) {
    rt::Environment env;
    rt::Dispatcher& dispatcher = rt::find_dispatcher("active_obj").make(env, {.stack_kb = stack_kb});
    rt::Completion<std::size_t> done;
    env.introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) { coop.make_agent<StackProbe>(done); });
    const std::size_t size = done.wait().value();
    env.stop();
    return size;
}
}  // namespace

// The sanitizers' pthread_create enlarges small stacks for their own use (TSan gave a 16 KiB
// request 900 KiB): there a thread gets at least what it asked for.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kExactStacks = false;
#else
constexpr bool kExactStacks = true;
#endif

TEST(active_obj_threads_run_on_the_stack_size_asked_for, 30) {
    const std::size_t minimum = rt::Thread::min_stack_bytes();
    CHECK(minimum >= 2048 && minimum <= 1 << 20);
    for (const std::size_t asked : {minimum, std::size_t{256} << 10}) {
        const std::size_t got = agent_stack_bytes(std::uint32_t(asked / 1024));
        if (kExactStacks) CHECK_EQ(got, asked);
        else CHECK(got >= asked);
    }
    pthread_attr_t defaults;
    std::size_t default_size = 0;
    CHECK(pthread_attr_init(&defaults) == 0);
    pthread_attr_getstacksize(&defaults, &default_size);
    pthread_attr_destroy(&defaults);
    CHECK_EQ(agent_stack_bytes(0), default_size);
    // A size the system does not take fails the dispatcher's bind with the system's reason.
    bool refused = false;
    try {
        rt::Thread([] {}, 1).join();
    } catch (const std::system_error& e) {
        refused = e.code() == std::errc::invalid_argument;
    }
    CHECK(refused);
    check_no_leak();
}

// A thread confined to a set of CPUs runs on those and no others (the studies' sender threads,
// sharing the runtime's cores); an empty set leaves the thread's affinity as it was.
TEST(confining_a_thread_limits_it_to_the_given_cpus, 10) {
    const std::vector<int> cpus = rt::allowed_cpus();
    CHECK(!cpus.empty());
    std::vector<int> seen, unchanged;
    std::thread([&] {
        CHECK(rt::confine_current_thread({}));
        unchanged = rt::allowed_cpus();
        CHECK(rt::confine_current_thread({cpus.back()}));
        seen = rt::allowed_cpus();
    }).join();
    CHECK(unchanged == cpus);
    CHECK(seen == std::vector<int>{cpus.back()});
    CHECK(rt::allowed_cpus() == cpus);  // the caller's own affinity is untouched
}

namespace {

// Records overlapping handler executions of agents that share a coop queue.
class Overlap final : public rt::Agent {
public:
    Overlap(std::atomic<int>& inside, std::atomic<int>& overlaps, std::atomic<int>& handled)
        : inside_(inside), overlaps_(overlaps), handled_(handled) {
        subscribe<&Overlap::on_count>();
    }

private:
    void on_count(const Count&) {
        if (inside_.fetch_add(1) != 0) overlaps_.fetch_add(1);
        for (int spin = 0; spin < 200; ++spin) rt::cpu_relax();
        inside_.fetch_sub(1);
        handled_.fetch_add(1);
    }
    std::atomic<int>& inside_;
    std::atomic<int>& overlaps_;
    std::atomic<int>& handled_;
};

}  // namespace

TEST(cooperation_fifo_never_runs_two_agents_of_a_coop_at_once, 60) {
    for (const rt::DispatcherEntry& dispatcher : rt::dispatchers()) {
        if (!dispatcher.takes.fifo) continue;
        rt::Environment env;
        rt::Dispatcher& pool =
            dispatcher.make(env, {.threads = 4, .fifo = rt::Fifo::cooperation, .max_demands_at_once = 2});
        std::atomic<int> inside{0}, overlaps{0}, handled{0};
        std::vector<Overlap*> agents;
        env.introduce_coop(pool.binder(), [&](rt::Coop& coop) {
            for (int i = 0; i < 8; ++i) agents.push_back(&coop.make_agent<Overlap>(inside, overlaps, handled));
        });
        std::vector<std::thread> senders;
        for (int s = 0; s < 3; ++s)
            senders.emplace_back([&] {
                for (int i = 0; i < 2'000; ++i)
                    for (Overlap* a : agents) rt::send<Count>(*a, std::uint64_t(i));
            });
        for (auto& t : senders) t.join();
        while (handled.load() < 3 * 2'000 * 8) std::this_thread::sleep_for(1ms);
        CHECK_EQ(overlaps.load(), 0);
        env.stop();
    }
    check_no_leak();
}

// A worker thread whose queue has had no message yet parks after its spin budget; it does not
// spin until the first one (it once did: building a coop of 100 active_obj agents took seconds
// on 2 cores, each new thread waiting for a core behind the spinning ones).
TEST(idle_worker_threads_park_before_their_first_message, 60) {
    rt::EnvironmentConfig config;
    config.spin = 20us;
    rt::Environment env(config);
    for (int i = 0; i < 2; ++i) rt::find_dispatcher("one_thread").make(env, {});  // no agent, ever
    rt::Dispatcher& active_obj = rt::find_dispatcher("active_obj").make(env, {});
    std::atomic<int> inside{0}, overlaps{0}, handled{0};
    rt::Coop& coop = env.make_coop(active_obj.binder());
    std::vector<Overlap*> agents;  // their threads start now, their coop not yet
    for (int i = 0; i < 2; ++i) agents.push_back(&coop.make_agent<Overlap>(inside, overlaps, handled));

    const std::vector<std::int64_t> before = env.thread_cpu_ns();
    std::this_thread::sleep_for(300ms);
    const std::vector<std::int64_t> after = env.thread_cpu_ns();
    CHECK_EQ(after.size(), std::size_t(4));
    std::int64_t busy_ns = 0;
    for (std::size_t i = 0; i < before.size(); ++i) busy_ns += after[i] - before[i];
    // Parked threads use next to nothing; spinning ones would use up to 4 x 300 ms.
    CHECK(busy_ns < 60'000'000);

    env.register_coop(coop);
    for (int i = 0; i < 100; ++i)
        for (Overlap* agent : agents) rt::send<Count>(*agent, std::uint64_t(i));
    while (handled.load() < 200) std::this_thread::sleep_for(1ms);
    env.stop();
    check_no_leak();
}

// A busy queue keeps its worker past max_demands_at_once only while nothing else waits for that
// worker: a queue its handler woke (a worker's LIFO stack included) gets its turn within a
// budget, not after the busy agent is done.
struct Tick {};
struct Poke {};

class Poked final : public rt::Agent {
public:
    explicit Poked(std::atomic<std::uint64_t>& seen_at) : seen_at_(seen_at) { subscribe<&Poked::on_poke>(); }
    std::uint64_t* ticks = nullptr;  // the busy agent's count, read on the same worker

private:
    void on_poke(const Poke&) { seen_at_.store(*ticks); }
    std::atomic<std::uint64_t>& seen_at_;
};

class Busy final : public rt::Agent {
public:
    explicit Busy(Poked& poked, std::atomic<bool>& finished) : poked_(poked), finished_(finished) {
        subscribe<&Busy::on_tick>();
        poked_.ticks = &ticks_;
    }

private:
    void on_start() override { rt::send<Tick>(*this); }
    void on_tick(const Tick&) {
        if (++ticks_ == 10) rt::send<Poke>(poked_);
        if (ticks_ < 100'000) rt::send<Tick>(*this);
        else finished_.store(true);
    }
    Poked& poked_;
    std::atomic<bool>& finished_;
    std::uint64_t ticks_ = 0;
};

TEST(a_busy_queue_lets_a_queue_it_woke_run_within_its_budget, 60) {
    for (const rt::DispatcherEntry& dispatcher : rt::dispatchers()) {
        if (!dispatcher.takes.max_demands_at_once) continue;
        rt::Environment env;
        const rt::DispatcherParams params{.threads = 1, .fifo = rt::Fifo::individual, .max_demands_at_once = 4};
        rt::Dispatcher& pool = dispatcher.make(env, params);
        std::atomic<std::uint64_t> seen_at{0};
        std::atomic<bool> finished{false};
        env.introduce_coop(pool.binder(), [&](rt::Coop& coop) {
            auto& poked = coop.make_agent<Poked>(seen_at);
            coop.make_agent<Busy>(poked, finished);
        });
        while (!finished.load()) std::this_thread::sleep_for(1ms);
        env.stop();
        CHECK(seen_at.load() >= 10);
        CHECK(seen_at.load() <= 10 + 2 * params.max_demands_at_once);
    }
    check_no_leak();
}

// A queue woken by a worker's send runs next on that worker (its LIFO stack), on every pool: a
// token passed around a ring of agents, each with a queue of its own, stays on one thread once
// inside the pool, however many threads wait idle (before the slot, thread_pool handed each hop
// to whichever thread was free).
namespace {

struct Baton {
    std::uint32_t hops_left;
};

class Relay final : public rt::Agent {
public:
    Relay(std::vector<std::thread::id>& threads, std::atomic<int>& started, std::atomic<bool>& done)
        : threads_(threads), started_(started), done_(done) {
        subscribe<&Relay::on_token>();
    }
    Relay* next = nullptr;

private:
    void on_start() override { started_.fetch_add(1); }
    void on_token(const Baton& token) {
        // One token: the handlers run one after another, each ordered after the last by its send.
        threads_.push_back(std::this_thread::get_id());
        if (token.hops_left == 0) done_.store(true);
        else rt::send<Baton>(*next, token.hops_left - 1);
    }
    std::vector<std::thread::id>& threads_;
    std::atomic<int>& started_;
    std::atomic<bool>& done_;
};

}  // namespace

TEST(a_queue_a_worker_wakes_runs_on_that_worker, 60) {
    for (const rt::DispatcherEntry& dispatcher : rt::dispatchers()) {
        if (!dispatcher.takes.max_demands_at_once) continue;  // the pools
        rt::Environment env;
        rt::Dispatcher& pool =
            dispatcher.make(env, {.threads = 3, .fifo = rt::Fifo::individual, .max_demands_at_once = 4});
        std::vector<std::thread::id> threads;
        std::atomic<int> started{0};
        std::atomic<bool> done{false};
        std::vector<Relay*> ring;
        env.introduce_coop(pool.binder(), [&](rt::Coop& coop) {
            for (int i = 0; i < 10; ++i) ring.push_back(&coop.make_agent<Relay>(threads, started, done));
        });
        for (std::size_t i = 0; i < ring.size(); ++i) ring[i]->next = ring[(i + 1) % ring.size()];
        // Every queue asleep before the token: a queue still held after its start would take
        // the token on its own worker (not a wake-up). The pause covers the step from a start
        // handler to its worker letting the queue go.
        while (started.load() < 10) std::this_thread::sleep_for(1ms);
        std::this_thread::sleep_for(50ms);
        rt::send<Baton>(*ring[0], 1000u);
        while (!done.load()) std::this_thread::sleep_for(1ms);
        env.stop();
        CHECK(threads.size() == 1001);
        // The token comes from outside the pool, to whichever worker takes it; every hop after
        // wakes a sleeping queue.
        CHECK(std::count(threads.begin(), threads.end(), threads[0]) == std::ptrdiff_t(threads.size()));
    }
    check_no_leak();
}

// wake=fifo is SObjectizer's scheduling: a queue woken by a worker's send goes to the back of the
// one shared FIFO, which every worker takes from; with wake=lifo it goes to the waking worker's
// own stack, which no other worker sees. The policies alone, one push and the pops after it.
namespace {
struct NoScheduler final : rt::Scheduler {
    void schedule(rt::EventQueue&) noexcept override {}
};
}  // namespace

TEST(wake_fifo_puts_a_queue_a_worker_woke_where_any_worker_takes_it, 10) {
    NoScheduler scheduler;
    rt::EventQueue first(scheduler), second(scheduler);
    {
        auto fifo = rt::make_shared_fifo(2, rt::Wake::fifo);
        CHECK(fifo->push(first, 0, true));  // other workers can take it: they are told
        CHECK(fifo->push(second, 1, true));
        CHECK(fifo->maybe_ready());
        // Worker 1 takes the queue worker 0 woke: in the order they were woken, whoever looks.
        CHECK(fifo->pop(1) == &first);
        CHECK(fifo->pop(1) == &second);
        CHECK(fifo->pop(0) == nullptr);
        CHECK(!fifo->maybe_ready());
    }
    {
        auto lifo = rt::make_shared_fifo(2, rt::Wake::lifo);
        CHECK(!lifo->push(first, 0, true));  // on worker 0's stack: nobody else is told
        CHECK(lifo->pop(1) == nullptr);
        CHECK(lifo->pop(0) == &first);
        // From outside the pool (no worker's stack) it goes to the shared FIFO in both modes.
        CHECK(lifo->push(second, rt::ReadyQueues::kNotAWorker, true));
        CHECK(lifo->pop(1) == &second);
    }
}

// Through a whole pool, on one thread so that the order is the policy's alone: an agent wakes
// three sleeping agents in turn; with wake=fifo they run in the order they were woken (one FIFO,
// as SObjectizer's thread_pool), with wake=lifo newest first (the waking worker's stack).
namespace {

struct Mark {
    int id;
};
struct WakeThem {};

class Marker final : public rt::Agent {
public:
    Marker(std::vector<int>& order, std::atomic<int>& started) : order_(order), started_(started) {
        subscribe<&Marker::on_mark>();
    }

private:
    void on_start() override { started_.fetch_add(1); }
    // One pool thread: the handlers run one after another; the count publishes the order.
    void on_mark(const Mark& mark) {
        order_.push_back(mark.id);
        started_.fetch_add(1);
    }
    std::vector<int>& order_;
    std::atomic<int>& started_;
};

class Waker final : public rt::Agent {
public:
    Waker(std::vector<Marker*>& markers, std::atomic<int>& started) : markers_(markers), started_(started) {
        subscribe<&Waker::on_wake>();
    }

private:
    void on_start() override { started_.fetch_add(1); }
    void on_wake(const WakeThem&) {
        for (int i = 0; i < int(markers_.size()); ++i) rt::send<Mark>(*markers_[i], i + 1);
    }
    std::vector<Marker*>& markers_;
    std::atomic<int>& started_;
};

std::vector<int> wake_order(const rt::DispatcherEntry& dispatcher, rt::Wake wake) {
    rt::Environment env;
    rt::Dispatcher& pool =
        dispatcher.make(env, {.threads = 1, .fifo = rt::Fifo::individual, .max_demands_at_once = 4, .wake = wake});
    std::vector<int> order;
    std::vector<Marker*> markers;
    std::atomic<int> started{0};
    Waker* waker = nullptr;
    env.introduce_coop(pool.binder(), [&](rt::Coop& coop) {
        for (int i = 0; i < 3; ++i) markers.push_back(&coop.make_agent<Marker>(order, started));
        waker = &coop.make_agent<Waker>(markers, started);
    });
    // Every queue asleep first (the start demands run, their worker let go), so that each send
    // below wakes one.
    while (started.load() < 4) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(50ms);
    rt::send<WakeThem>(*waker);
    // Four starts and three marks (seq_cst: each mark's push_back is ordered before its count).
    while (started.load() < 7) std::this_thread::sleep_for(1ms);
    env.stop();
    return order;
}

}  // namespace

TEST(woken_queues_run_in_the_order_woken_with_wake_fifo_and_newest_first_with_wake_lifo, 60) {
    for (const rt::DispatcherEntry& dispatcher : rt::dispatchers()) {
        if (!dispatcher.takes.wake) continue;
        CHECK(wake_order(dispatcher, rt::Wake::fifo) == (std::vector<int>{1, 2, 3}));
        CHECK(wake_order(dispatcher, rt::Wake::lifo) == (std::vector<int>{3, 2, 1}));
    }
    check_no_leak();
}

// A queue at the bottom of a worker's LIFO stack gets its turn within a streak of the stack's
// pops, even while two agents above it keep waking each other (each wake puts the other's queue
// on top): when the streak ends, the oldest moves behind the others. Without that it waited
// until the pair stopped.
namespace {

struct Rally {
    std::uint32_t left;
};
struct Serve {};

class Player final : public rt::Agent {
public:
    explicit Player(std::atomic<std::uint64_t>& hits) : hits_(hits) { subscribe<&Player::on_rally>(); }
    Player* other = nullptr;

private:
    void on_rally(const Rally& rally) {
        hits_.fetch_add(1, std::memory_order_relaxed);
        if (rally.left > 0) rt::send<Rally>(*other, rally.left - 1);
    }
    std::atomic<std::uint64_t>& hits_;
};

class Waiter final : public rt::Agent {
public:
    Waiter(std::atomic<std::uint64_t>& hits, std::atomic<std::int64_t>& ran_at) : hits_(hits), ran_at_(ran_at) {
        subscribe<&Waiter::on_serve>();
    }

private:
    void on_serve(const Serve&) { ran_at_.store(std::int64_t(hits_.load(std::memory_order_relaxed))); }
    std::atomic<std::uint64_t>& hits_;
    std::atomic<std::int64_t>& ran_at_;
};

// On its start, wakes the waiter first and then the rally: the waiter's queue is below.
class Umpire final : public rt::Agent {
public:
    Umpire(Waiter& waiter, Player& first) : waiter_(waiter), first_(first) { subscribe<&Umpire::on_serve>(); }

private:
    void on_serve(const Serve&) {
        rt::send<Serve>(waiter_);
        rt::send<Rally>(first_, 100'000u);
    }
    Waiter& waiter_;
    Player& first_;
};

// Two players rally 100,000 times on a one-thread pool (budget 4) while `Late` waits for its
// turns; `Starter` sets them going. Checks that every hit landed and that `Late` marked its last
// turn at `bound` hits or before.
template <class Late, class Starter>
void check_turns_during_a_rally(std::int64_t bound) {
    for (const rt::DispatcherEntry& dispatcher : rt::dispatchers()) {
        if (!dispatcher.takes.max_demands_at_once) continue;  // the pools
        rt::Environment env;
        rt::Dispatcher& pool =
            dispatcher.make(env, {.threads = 1, .fifo = rt::Fifo::individual, .max_demands_at_once = 4});
        std::atomic<std::uint64_t> hits{0};
        std::atomic<std::int64_t> marked_at{-1};
        Starter* starter = nullptr;
        env.introduce_coop(pool.binder(), [&](rt::Coop& coop) {
            auto& late = coop.make_agent<Late>(hits, marked_at);
            auto& a = coop.make_agent<Player>(hits);
            auto& b = coop.make_agent<Player>(hits);
            a.other = &b;
            b.other = &a;
            starter = &coop.make_agent<Starter>(late, a);
        });
        // Every queue asleep first (four start demands, and their worker letting go), so that
        // each send below wakes one.
        std::this_thread::sleep_for(100ms);
        rt::send<Serve>(*starter);
        while (hits.load() < 100'001 || marked_at.load() < 0) std::this_thread::sleep_for(1ms);
        env.stop();
        CHECK(hits.load() == 100'001);
        CHECK(marked_at.load() >= 0 && marked_at.load() <= bound);
    }
    check_no_leak();
}

}  // namespace

TEST(the_bottom_of_a_lifo_stack_runs_while_agents_above_it_wake_each_other, 60) {
    // A streak is 16 pops; a few more cover the umpire's own turn.
    check_turns_during_a_rally<Waiter, Umpire>(40);
}

// A queue put back after its turn with work left (on work_stealing, held by its worker, out of
// thieves' reach) gets its next turns within a streak, even while two agents keep waking each
// other: 8 demands at a budget of 4 are two turns.
namespace {

class Regular final : public rt::Agent {
public:
    Regular(std::atomic<std::uint64_t>& hits, std::atomic<std::int64_t>& done_at) : hits_(hits), done_at_(done_at) {
        subscribe<&Regular::on_serve>();
    }
    static constexpr int kServes = 8;

private:
    void on_serve(const Serve&) {
        if (++served_ == kServes) done_at_.store(std::int64_t(hits_.load(std::memory_order_relaxed)));
    }
    int served_ = 0;
    std::atomic<std::uint64_t>& hits_;
    std::atomic<std::int64_t>& done_at_;
};

// Wakes the regular with all its serves at once, then the rally.
class Host final : public rt::Agent {
public:
    Host(Regular& regular, Player& first) : regular_(regular), first_(first) { subscribe<&Host::on_serve>(); }

private:
    void on_serve(const Serve&) {
        for (int i = 0; i < Regular::kServes; ++i) rt::send<Serve>(regular_);
        rt::send<Rally>(first_, 100'000u);
    }
    Regular& regular_;
    Player& first_;
};

}  // namespace

TEST(a_queue_put_back_with_work_left_runs_again_while_agents_wake_each_other, 60) {
    // Two turns, each within a streak of 16 pops and a few more.
    check_turns_during_a_rally<Regular, Host>(80);
}

// A busy queue stays with its worker while no other queue waits, on every pool: its budget
// (max_demands_at_once) spent, the worker goes on with it rather than putting it back in line for
// an idle worker on another core to take (adv_thread_pool did, every 4 demands: producer_consumer
// on 2 threads ran 3.4x slower than with the queue kept).
namespace {

struct Tick {};

class Ticker final : public rt::Agent {
public:
    static constexpr int kTicks = 1000;

    Ticker(std::vector<std::thread::id>& threads, std::atomic<bool>& done) : threads_(threads), done_(done) {
        subscribe<&Ticker::on_tick>();
    }

private:
    // All sent to itself at once, so its queue has work for kTicks demands without a wake-up.
    void on_start() override {
        for (int i = 0; i < kTicks; ++i) rt::send<Tick>(*this);
    }
    void on_tick(const Tick&) {
        threads_.push_back(std::this_thread::get_id());
        if (int(threads_.size()) == kTicks) done_.store(true);
    }
    std::vector<std::thread::id>& threads_;
    std::atomic<bool>& done_;
};

}  // namespace

TEST(a_busy_queue_stays_with_its_worker_while_no_other_queue_waits, 60) {
    for (const rt::DispatcherEntry& dispatcher : rt::dispatchers()) {
        if (!dispatcher.takes.max_demands_at_once) continue;  // the pools
        rt::Environment env;
        rt::Dispatcher& pool =
            dispatcher.make(env, {.threads = 2, .fifo = rt::Fifo::individual, .max_demands_at_once = 4});
        std::vector<std::thread::id> threads;
        std::atomic<bool> done{false};
        env.introduce_coop(pool.binder(), [&](rt::Coop& coop) { coop.make_agent<Ticker>(threads, done); });
        while (!done.load()) std::this_thread::sleep_for(1ms);
        env.stop();
        CHECK(threads.size() == std::size_t(Ticker::kTicks));
        CHECK(std::count(threads.begin(), threads.end(), threads[0]) == std::ptrdiff_t(threads.size()));
    }
    check_no_leak();
}

namespace {

struct Probe {};

// Each thread-safe Probe waits (up to a limit) until `wanted` probes have arrived, and none leaves
// before: they can all be inside at once only if the dispatcher runs them in parallel, so what
// the test sees does not depend on timing luck (one at a time, each would wait out the limit
// alone).
class Gathering final : public rt::Agent {
public:
    Gathering(int wanted, std::atomic<int>& most_inside, std::atomic<int>& handled)
        : wanted_(wanted), most_inside_(most_inside), handled_(handled) {
        subscribe<&Gathering::on_probe>(rt::thread_safe);
    }

private:
    void on_probe(const Probe&) {
        const int inside = inside_.fetch_add(1) + 1;
        int most = most_inside_.load();
        while (most < inside && !most_inside_.compare_exchange_weak(most, inside)) {
        }
        arrived_.fetch_add(1);
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (arrived_.load() < wanted_ && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        inside_.fetch_sub(1);
        handled_.fetch_add(1);
    }
    const int wanted_;
    std::atomic<int> inside_{0};
    std::atomic<int> arrived_{0};
    std::atomic<int>& most_inside_;
    std::atomic<int>& handled_;
};

}  // namespace

TEST(adv_thread_pool_runs_an_agents_thread_safe_handlers_in_parallel, 120) {
    constexpr int kThreads = 4;
    rt::Environment env;
    rt::Dispatcher& pool = rt::find_dispatcher("adv_thread_pool").make(env, {.threads = kThreads});
    std::atomic<int> most_inside{0}, handled{0};
    Gathering* gathering = nullptr;
    env.introduce_coop(pool.binder(), [&](rt::Coop& coop) {
        gathering = &coop.make_agent<Gathering>(kThreads, most_inside, handled);
    });
    for (int i = 0; i < kThreads; ++i) rt::send<Probe>(*gathering);
    while (handled.load() < kThreads) std::this_thread::sleep_for(1ms);
    env.stop();
    CHECK_EQ(most_inside.load(), kThreads);
    check_no_leak();
}

namespace {

struct Read {
    std::uint32_t seq;
};
struct Write {};

// Thread-safe reads and exclusive writes (and starts and finishes) of one agent. `inside` counts
// its handlers in flight: an exclusive one must find none at its start and leave none at its end;
// a read must never see a write in progress. `writes_` is a plain field the writes change and
// the reads read: under ThreadSanitizer an overlap, or a missing happens-before between them, is
// a reported race.
class Ledger final : public rt::Agent {
public:
    Ledger(std::vector<std::atomic<int>>& reads, std::atomic<int>& overlaps, std::atomic<int>& handled)
        : reads_(reads), overlaps_(overlaps), handled_(handled) {
        subscribe<&Ledger::on_read>(rt::thread_safe);
        subscribe<&Ledger::on_write>();
    }
    std::uint64_t writes() const noexcept { return writes_; }

private:
    void on_start() override { exclusive([] {}); }
    void on_finish() override { exclusive([] {}); }
    void on_write(const Write&) {
        exclusive([this] { ++writes_; });
        handled_.fetch_add(1);
    }
    void on_read(const Read& read) {
        inside_.fetch_add(1);
        if (writing_.load()) overlaps_.fetch_add(1);
        reads_[read.seq].fetch_add(1);
        const std::uint64_t writes = writes_;
        for (int spin = 0; spin < 100; ++spin) rt::cpu_relax();
        if (writing_.load() || writes_ != writes) overlaps_.fetch_add(1);
        inside_.fetch_sub(1);
        handled_.fetch_add(1);
    }
    template <class Body>
    void exclusive(Body body) {
        if (inside_.fetch_add(1) != 0) overlaps_.fetch_add(1);
        writing_.store(true);
        body();
        for (int spin = 0; spin < 100; ++spin) rt::cpu_relax();
        writing_.store(false);
        if (inside_.fetch_sub(1) != 1) overlaps_.fetch_add(1);
    }

    std::vector<std::atomic<int>>& reads_;
    std::atomic<int>& overlaps_;
    std::atomic<int>& handled_;
    std::atomic<int> inside_{0};
    std::atomic<bool> writing_{false};
    std::uint64_t writes_ = 0;
};

}  // namespace

// On adv_thread_pool the reads run in parallel with each other; on every dispatcher none runs
// beside a write, and every message is handled once.
TEST(a_handler_that_is_not_thread_safe_never_runs_beside_another_of_its_agent, 120) {
    constexpr std::uint32_t kSenders = 3, kReadsPerSender = 2'000, kWriteEvery = 50;
    constexpr std::uint32_t kReads = kSenders * kReadsPerSender, kWrites = kReads / kWriteEvery;
    for (const Config& config : configs()) {
        std::vector<std::atomic<int>> reads(kReads);
        std::atomic<int> overlaps{0}, handled{0};
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        Ledger* ledger = nullptr;
        env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) {
            ledger = &coop.make_agent<Ledger>(reads, overlaps, handled);
        });
        std::vector<std::thread> senders;
        for (std::uint32_t s = 0; s < kSenders; ++s)
            senders.emplace_back([&, s] {
                for (std::uint32_t i = 0; i < kReadsPerSender; ++i) {
                    const std::uint32_t seq = s * kReadsPerSender + i;
                    rt::send<Read>(*ledger, seq);
                    if (seq % kWriteEvery == 0) rt::send<Write>(*ledger);
                }
            });
        for (auto& t : senders) t.join();
        while (handled.load() < int(kReads + kWrites)) std::this_thread::sleep_for(1ms);
        CHECK_EQ(ledger->writes(), std::uint64_t{kWrites});
        env->stop();
        CHECK_EQ(overlaps.load(), 0);
        for (const std::atomic<int>& times : reads) CHECK_EQ(times.load(), 1);
    }
    check_no_leak();
}

int main(int argc, char** argv) { return harness::run_all(argc > 1 ? argv[1] : ""); }

// The idle clock's sequence lock: a reader racing the writer sees each interval counted once,
// never twice nor not at all. The writer's fake clock makes interval k idle from 10k to 10k + 3,
// so every consistent read is one of two forms, which a torn read cannot take: 3k (k intervals
// done, none open) or 3k + (now - 10k) (k done, the next open since 10k); and the reads, in
// order, never go back.
TEST(idle_clock_reads_are_consistent_while_the_thread_writes, 60) {
    rt::IdleClock clock;
    std::atomic<bool> done{false}, reading{false};
    constexpr std::int64_t kIntervals = 200'000;
    constexpr std::int64_t kNow = 1'000'000'007;  // far past every boundary
    std::thread writer([&] {
        // Once the reader reads: under a sanitizer on a loaded machine the writer could otherwise
        // finish before the reader's first read.
        while (!reading.load(std::memory_order_acquire)) std::this_thread::yield();
        for (std::int64_t k = 0; k < kIntervals; ++k) {
            clock.begin(10 * k);
            clock.end(10 * k + 3);
        }
        done.store(true, std::memory_order_release);
    });
    std::int64_t last_position = 0;
    bool consistent = true, ordered = true;
    std::uint64_t reads = 0;
    reading.store(true, std::memory_order_release);
    while (!done.load(std::memory_order_acquire)) {
        const std::int64_t idle = clock.read(kNow);
        std::int64_t position = -1;  // 2k: k intervals done; 2k + 1: and the next one open
        if (idle <= 3 * kIntervals) {
            if (idle % 3 == 0) position = 2 * (idle / 3);
        } else if ((kNow - idle) % 7 == 0) {
            position = 2 * ((kNow - idle) / 7) + 1;
        }
        consistent = consistent && position >= 0;
        ordered = ordered && position >= last_position;
        if (position >= 0) last_position = position;
        ++reads;
    }
    writer.join();
    CHECK(consistent);
    CHECK(ordered);
    CHECK(reads > 0);
    CHECK_EQ(clock.read(kNow), 3 * kIntervals);
}

// A thread's waits: a long one (it spun a round or parked) counts its whole length; short ones
// count about theirs, some timed, the others at the mean of those timed. Each wait here began
// 2 us before it ends (or more: the clock is read at the end), so every short wait's share, timed
// or estimated, is at least 2 us and at most what the whole run lasted.
// What a thousand short waits may count beyond their 2 us and the loop's time (see below).
constexpr std::int64_t kShortWaitSlackNs = 1000 * 1000;

TEST(a_threads_waits_count_their_length_and_short_ones_are_estimated_from_the_ones_timed, 30) {
    rt::ThreadStats stats;
    const auto began = std::chrono::steady_clock::now();
    constexpr int kShort = 1000;
    for (int i = 0; i < kShort; ++i) {
        rt::WaitStart wait{std::chrono::steady_clock::now() - 2us, /*read=*/true};
        stats.end_wait(wait, /*parked=*/false);
    }
    const std::int64_t run = rt::ns_since_epoch(std::chrono::steady_clock::now()) - rt::ns_since_epoch(began);
    const std::int64_t shorts = stats.idle.read(0);
    CHECK(shorts >= kShort * 2000);
    // Each counts 2 us and its share of the loop; a timed one the machine delayed, yet under the
    // bound of a short wait, raises the mean for those after it: 1 us a wait allows for that (the
    // TSan and ASan builds, run side by side on a loaded machine, once counted past run * 2).
    CHECK(shorts <= kShort * 2000 + run * 2 + kShortWaitSlackNs);
    rt::WaitStart spun{std::chrono::steady_clock::now() - 3ms, /*read=*/true, /*read_again=*/true};
    stats.end_wait(spun, /*parked=*/false);
    const std::int64_t after_spin = stats.idle.read(0);
    CHECK(after_spin - shorts >= 3'000'000);
    CHECK(after_spin - shorts < 3'000'000 + 1'000'000'000);
    rt::WaitStart parked{std::chrono::steady_clock::now() - 5ms, /*read=*/true, /*read_again=*/true};
    stats.idle.begin(rt::ns_since_epoch(parked.at));  // as IdleScope::parking opens it
    stats.end_wait(parked, /*parked=*/true);
    CHECK(stats.idle.read(0) - after_spin >= 5'000'000);
    CHECK(stats.idle.read(0) - after_spin < 5'000'000 + 1'000'000'000);
}

// A short wait preempted while it was timed counts its own length, and no other wait's: the first
// short wait is timed, and here it lasted 5 ms (a thread descheduled mid-wait).
TEST(a_preempted_short_wait_is_not_the_estimate_of_the_others, 30) {
    rt::ThreadStats stats;
    rt::WaitStart preempted{std::chrono::steady_clock::now() - 5ms, /*read=*/true};
    stats.end_wait(preempted, /*parked=*/false);
    const std::int64_t first = stats.idle.read(0);
    CHECK(first >= 5'000'000);
    constexpr int kShort = 1000;
    const auto began = std::chrono::steady_clock::now();
    for (int i = 0; i < kShort; ++i) {
        rt::WaitStart wait{std::chrono::steady_clock::now() - 2us, /*read=*/true};
        stats.end_wait(wait, /*parked=*/false);
    }
    const std::int64_t run = rt::ns_since_epoch(std::chrono::steady_clock::now()) - rt::ns_since_epoch(began);
    // With the 5 ms in the mean, the thousand waits would count seconds.
    CHECK(stats.idle.read(0) - first <= kShort * 2000 + run * 2 + kShortWaitSlackNs);
}

// Where a wait reads the clock: not at all where it finds work at its first look (it counts
// nothing), at its spin's first round where it spins, and where it parks without having spun
// (spin_us 0), when it parks: that wait counts from there to its end.
TEST(a_wait_reads_the_clock_only_once_its_first_look_failed, 30) {
    std::thread([] {
        const rt::IdleClock& idle = rt::detail::t_stats.idle;
        const std::int64_t before = idle.read(0);
        {
            rt::IdleScope wait;
            CHECK(rt::spin_until([] { return true; }, 20us, wait.start()));
            CHECK(!wait.start().read);
        }
        CHECK_EQ(idle.read(0), before);
        {
            rt::IdleScope wait;
            int looks = 0;
            CHECK(rt::spin_until([&] { return ++looks > 3; }, 1s, wait.start()));
            CHECK(wait.start().read);
            CHECK(!wait.start().read_again);  // within its first round: a short wait
        }
        const std::int64_t after_spin = idle.read(0);
        CHECK(after_spin >= before);
        {
            rt::IdleScope wait;
            CHECK(!rt::spin_until([] { return false; }, 0us, wait.start()));
            CHECK(!wait.start().read);
            wait.parking();
            CHECK(wait.start().read);
            std::this_thread::sleep_for(2ms);
        }
        CHECK(idle.read(0) - after_spin >= 2'000'000);
    }).join();
}

// The environment's counts: a pool's threads exist for the whole span, an idle pool is idle for
// all of it, and inbox takes count every message sent to it from outside.
struct Note {};

class Noted final : public rt::Agent {
public:
    explicit Noted(std::atomic<int>& handled) : handled_(handled) { subscribe<&Noted::on_note>(); }

private:
    void on_note(const Note&) { handled_.fetch_add(1); }
    std::atomic<int>& handled_;
};

TEST(environment_stats_count_threads_idle_time_and_inbox_takes, 60) {
    rt::Environment env;
    rt::Dispatcher& pool = rt::find_dispatcher("thread_pool").make(env, {.threads = 2, .fifo = rt::Fifo::individual});
    std::atomic<int> handled{0};
    Noted* agent = nullptr;
    env.introduce_coop(pool.binder(), [&](rt::Coop& coop) { agent = &coop.make_agent<Noted>(handled); });
    std::this_thread::sleep_for(50ms);
    const rt::RunStats before = env.stats();
    std::this_thread::sleep_for(100ms);
    const rt::RunStats idle = env.stats();
    const std::int64_t span = idle.at_ns - before.at_ns;
    CHECK_EQ(idle.thread_ns - before.thread_ns, 2 * span);
    // Parked the whole time, but for the wake-ups of a spurious futex return.
    CHECK(idle.idle_ns - before.idle_ns > 2 * span * 9 / 10);
    CHECK(idle.idle_ns - before.idle_ns <= 2 * span);
    CHECK_EQ(idle.agents_created, std::uint64_t(1));
    for (int i = 0; i < 1000; ++i) rt::send<Note>(*agent);
    while (handled.load() < 1000) std::this_thread::sleep_for(1ms);
    const rt::RunStats after = env.stats();
    CHECK_EQ(after.inbox_messages - idle.inbox_messages, std::uint64_t(1000));
    CHECK(after.inbox_takes > idle.inbox_takes);
    CHECK(after.inbox_largest >= 1 && after.inbox_largest <= 1000);
    env.stop();
    check_no_leak();
}
