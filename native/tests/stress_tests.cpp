// The runtime under load, through every dispatcher: thousands of agents passing messages that
// threads inject from outside; cooperations registered and deregistered while messages are in
// flight; environments started and stopped hundreds of times in a row; askers waiting on busy
// hubs. Every message is counted:
// handled or dropped, exactly once; a channel shared by agents and threads hands each message
// to one of them. Each test has its own time limit (a hang fails it), and the
// pool's accounting proves nothing leaked.
#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "configs.hpp"

namespace {

// Dispatchers that start a thread per agent get fewer agents and fewer runs.
bool thread_per_agent(const Config& config) { return config.dispatcher->thread_per_agent; }

struct Token {
    std::uint32_t hops_left;
    std::uint64_t random;
};

std::uint64_t next_random(std::uint64_t x) noexcept {  // xorshift64
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

// Handles tokens and passes each on to a pseudo-random member until its hops run out.
class Hopper final : public rt::Agent {
public:
    Hopper(std::vector<Hopper*>& all, std::uint64_t& handled, std::atomic<std::uint64_t>& retired)
        : all_(all), handled_(handled), retired_(retired) {
        subscribe<&Hopper::on_token>();
    }

private:
    void on_token(const Token& token) {
        ++handled_;  // only this agent's handler writes it; read after stop()
        if (token.hops_left == 0) {
            retired_.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        const std::uint64_t random = next_random(token.random);
        rt::send<Token>(*all_[random % all_.size()], token.hops_left - 1, random);
    }
    std::vector<Hopper*>& all_;
    std::uint64_t& handled_;
    std::atomic<std::uint64_t>& retired_;
};

}  // namespace

TEST(thousands_of_agents_pass_messages_injected_from_many_threads_and_each_is_handled_once, 600) {
    constexpr std::uint32_t kCoops = 4, kThreads = 4, kTokensPerThread = 500, kHops = 20;
    for (const Config& config : configs()) {
        const std::uint32_t agents = thread_per_agent(config) ? 64 : 2'000;
        std::vector<Hopper*> all;
        std::vector<std::uint64_t> handled(agents, 0);
        std::atomic<std::uint64_t> retired{0};
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        for (std::uint32_t c = 0; c < kCoops; ++c)
            env->introduce_coop(dispatcher.binder(c), [&](rt::Coop& coop) {
                for (std::uint32_t a = c; a < agents; a += kCoops) all.push_back(&coop.make_agent<Hopper>(all, handled[all.size()], retired));
            });
        std::vector<std::thread> threads;
        for (std::uint32_t t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                std::uint64_t random = 0x9e3779b97f4a7c15ull * (t + 1);
                for (std::uint32_t i = 0; i < kTokensPerThread; ++i) {
                    random = next_random(random);
                    rt::send<Token>(*all[random % all.size()], kHops, random);
                }
            });
        for (std::thread& thread : threads) thread.join();
        constexpr std::uint64_t kTokens = std::uint64_t(kThreads) * kTokensPerThread;
        while (retired.load(std::memory_order_relaxed) < kTokens && !env->failed())
            std::this_thread::sleep_for(1ms);
        env->stop();
        std::uint64_t total = 0;
        for (std::uint64_t h : handled) total += h;
        CHECK_EQ(retired.load(), kTokens);
        CHECK_EQ(total, kTokens * (kHops + 1));
        CHECK_EQ(env->dropped(), std::uint64_t{0});
    }
    check_no_leak();
}

namespace {

struct Note {};
struct Ball {
    std::uint32_t hops;
};

// Lives through the whole test and counts the notes the short-lived coops send it.
class Sink final : public rt::Agent {
public:
    explicit Sink(std::uint64_t& notes) : notes_(notes) { subscribe<&Sink::on_note>(); }

private:
    void on_note(const Note&) { ++notes_; }  // only this handler writes it; read after stop()
    std::uint64_t& notes_;
};

struct Churn {
    std::atomic<std::uint64_t> thrown{0};    // balls sent between members
    std::atomic<std::uint64_t> caught{0};    // balls handled
    std::atomic<int> destroyed{0};
};

// A member of a short-lived coop: passes balls around its ring, tells the sink of each one, and
// deregisters its own coop when a ball has gone round enough, while other balls are in flight.
class Member final : public rt::Agent {
public:
    Member(Churn& churn, Sink& sink) : churn_(churn), sink_(sink) { subscribe<&Member::on_ball>(); }
    ~Member() override { churn_.destroyed.fetch_add(1, std::memory_order_relaxed); }
    Member* next = nullptr;

private:
    void on_start() override {
        for (int i = 0; i < 2; ++i) throw_to(*next, 0);
    }
    void on_ball(const Ball& ball) {
        churn_.caught.fetch_add(1, std::memory_order_relaxed);
        rt::send<Note>(sink_);
        if (ball.hops == 12) environment().deregister_coop(coop());
        // After deregistration the next member may have finished: then the ball is dropped.
        throw_to(*next, ball.hops + 1);
    }
    void throw_to(Member& to, std::uint32_t hops) {
        churn_.thrown.fetch_add(1, std::memory_order_relaxed);
        rt::send<Ball>(to, hops);
    }
    Churn& churn_;
    Sink& sink_;
};

}  // namespace

TEST(coops_registered_and_deregistered_while_messages_are_in_flight_lose_or_repeat_nothing, 600) {
    constexpr int kMembers = 4, kMaxLive = 8;
    for (const Config& config : configs()) {
        const int rounds = thread_per_agent(config) ? 60 : 400;
        Churn churn;
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        std::uint64_t notes = 0;
        Sink* sink = nullptr;
        env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) { sink = &coop.make_agent<Sink>(notes); });
        for (int round = 0; round < rounds; ++round) {
            // Several coops live at once, each ending on its own.
            while (round * kMembers - churn.destroyed.load() >= kMaxLive * kMembers && !env->failed())
                std::this_thread::sleep_for(50us);
            env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) {
                std::vector<Member*> ring;
                for (int i = 0; i < kMembers; ++i)
                    ring.push_back(&coop.make_agent_with_binder<Member>(dispatcher.binder((round + i) % kMembers), churn, *sink));
                for (int i = 0; i < kMembers; ++i) ring[i]->next = ring[(i + 1) % kMembers];
            });
        }
        // Waits on the coop count, not on `destroyed`: a coop's agents are destroyed before the
        // environment counts the coop out, so the last destructor can run while live_coops()
        // still counts its coop (seen under ThreadSanitizer).
        while (env->live_coops() > 1 && !env->failed()) std::this_thread::sleep_for(1ms);
        CHECK_EQ(env->live_coops(), std::uint64_t{1});  // the sink's
        env->stop();
        CHECK(!env->failed());
        CHECK_EQ(churn.destroyed.load(), rounds * kMembers);
        // Every ball thrown was caught or dropped at a finished member, exactly once; each
        // catch told the sink.
        CHECK_EQ(churn.caught.load() + env->dropped(), churn.thrown.load());
        CHECK_EQ(notes, churn.caught.load());
        CHECK(churn.caught.load() >= std::uint64_t(rounds) * 12);
    }
    check_no_leak();
}

namespace {

struct Forest {
    std::atomic<int> made{0};
    std::atomic<int> destroyed{0};
    std::atomic<std::uint64_t> leaves{0};  // the root's answer
};

struct Grown {
    std::uint64_t leaves;
};

// A node of a tree that grows as it runs, as skynet's does: each node's start handler registers
// its children's coop, so coops are registered by every runtime thread (into its own shard of
// the environment's registry) and deregistered by whichever thread hears the children report.
class Sapling final : public rt::Agent {
public:
    static constexpr int kBranching = 3;
    Sapling(Forest& forest, rt::Dispatcher& dispatcher, Sapling* parent, int depth)
        : forest_(forest), dispatcher_(dispatcher), parent_(parent), depth_(depth) {
        forest_.made.fetch_add(1, std::memory_order_relaxed);
        subscribe<&Sapling::on_grown>();
    }
    ~Sapling() override { forest_.destroyed.fetch_add(1, std::memory_order_relaxed); }

private:
    void on_start() override {
        if (depth_ == 0) return report(1);
        children_ = &environment().introduce_coop(dispatcher_.binder(), [&](rt::Coop& coop) {
            for (int i = 0; i < kBranching; ++i)
                coop.make_agent_with_binder<Sapling>(dispatcher_.binder(unsigned(i)), forest_, dispatcher_, this,
                                                     depth_ - 1);
        });
    }
    void on_grown(const Grown& grown) {
        leaves_ += grown.leaves;
        if (++heard_ < kBranching) return;
        environment().deregister_coop(*children_);
        report(leaves_);
    }
    void report(std::uint64_t leaves) {
        if (parent_ != nullptr) rt::send<Grown>(*parent_, leaves);
        else forest_.leaves.store(leaves, std::memory_order_release);
    }
    Forest& forest_;
    rt::Dispatcher& dispatcher_;
    Sapling* const parent_;
    const int depth_;
    rt::Coop* children_ = nullptr;
    std::uint64_t leaves_ = 0;
    int heard_ = 0;
};

}  // namespace

TEST(trees_of_coops_registered_by_every_thread_are_all_destroyed_when_waited_for_or_stopped, 600) {
    for (const Config& config : configs()) {
        const int depth = thread_per_agent(config) ? 2 : 5;
        const std::uint64_t leaves = depth == 2 ? 9 : 243;
        const int trees = thread_per_agent(config) ? 10 : 40;
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        Forest forest;
        // Grown and cut down one after another: wait_for_no_coops returns only once every coop,
        // whichever shard it is in, is destroyed (its count goes after its agents), and no later.
        for (int tree = 0; tree < trees && !env->failed(); ++tree) {
            rt::Coop& root = env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) {
                coop.make_agent<Sapling>(forest, dispatcher, nullptr, depth);
            });
            while (forest.leaves.load(std::memory_order_acquire) == 0 && !env->failed())
                std::this_thread::sleep_for(50us);
            CHECK_EQ(forest.leaves.exchange(0), leaves);
            env->deregister_coop(root);
            env->wait_for_no_coops();
            CHECK_EQ(env->live_coops(), std::uint64_t{0});
            CHECK_EQ(forest.destroyed.load(), forest.made.load());
        }
        // Stopped while growing: coops registered in shards the stop has reached never start,
        // the rest finish; every agent made is destroyed either way.
        for (int tree = 0; tree < trees / 2 && !env->failed(); ++tree) {
            // Stopped once the tree has made some of its agents (at most a whole tree's).
            const int whole = (depth == 2 ? 27 : 729) / 2, until = forest.made.load() + 1 + tree * 37 % whole;
            auto growing = make_environment(config);
            rt::Dispatcher& its_dispatcher = config.make(*growing);
            growing->introduce_coop(its_dispatcher.binder(), [&](rt::Coop& coop) {
                coop.make_agent<Sapling>(forest, its_dispatcher, nullptr, depth);
            });
            while (forest.made.load() < until && !growing->failed()) std::this_thread::yield();
            growing->stop();
            CHECK(!growing->failed());
            CHECK_EQ(growing->live_coops(), std::uint64_t{0});
        }
        env->stop();
        CHECK(!env->failed());
        CHECK_EQ(forest.destroyed.load(), forest.made.load());
    }
    check_no_leak();
}

namespace {

struct Parcel {
    std::uint32_t producer;
    std::uint32_t seq;
};

// Takes parcels from a shared channel one request at a time until the channel closes.
class ParcelTaker final : public rt::Agent {
public:
    ParcelTaker(rt::Channel<Parcel>& channel, std::vector<std::atomic<std::uint8_t>>& seen,
                std::uint32_t per_producer, std::atomic<int>& closed)
        : channel_(channel), seen_(seen), per_producer_(per_producer), closed_(closed) {
        subscribe<&ParcelTaker::on_parcel>();
        subscribe<&ParcelTaker::on_closed>();
    }

private:
    void on_start() override { channel_.request(request_); }
    void on_parcel(const Parcel& parcel) {
        seen_[parcel.producer * per_producer_ + parcel.seq].fetch_add(1, std::memory_order_relaxed);
        channel_.request(request_);
    }
    void on_closed(const rt::ChannelClosed&) { closed_.fetch_add(1); }

    rt::Channel<Parcel>& channel_;
    std::vector<std::atomic<std::uint8_t>>& seen_;
    const std::uint32_t per_producer_;
    std::atomic<int>& closed_;
    rt::ChannelRequest request_{*this};
};

}  // namespace

TEST(a_channel_shared_by_agents_and_threads_hands_each_message_to_exactly_one_receiver, 600) {
    constexpr std::uint32_t kProducers = 4, kThreadReceivers = 2;
    for (const Config& config : configs()) {
        const std::uint32_t agents = thread_per_agent(config) ? 8 : 64;
        const std::uint32_t per_producer = thread_per_agent(config) ? 5'000 : 25'000;
        rt::Channel<Parcel> channel;  // outlives the environment's agents
        std::vector<std::atomic<std::uint8_t>> seen(kProducers * per_producer);
        std::atomic<int> closed{0};
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) {
            for (std::uint32_t i = 0; i < agents; ++i)
                coop.make_agent_with_binder<ParcelTaker>(dispatcher.binder(i), channel, seen, per_producer, closed);
        });
        // Threads compete with the agents for the same parcels, blocking when there are none.
        std::vector<std::thread> threads;
        for (std::uint32_t r = 0; r < kThreadReceivers; ++r)
            threads.emplace_back([&] {
                while (std::optional<Parcel> parcel = channel.receive())
                    seen[parcel->producer * per_producer + parcel->seq].fetch_add(1, std::memory_order_relaxed);
            });
        std::vector<std::thread> producers;
        for (std::uint32_t p = 0; p < kProducers; ++p)
            producers.emplace_back([&, p] {
                for (std::uint32_t seq = 0; seq < per_producer; ++seq) CHECK(channel.send(p, seq));
            });
        for (auto& t : producers) t.join();
        // Closing while agents and threads still take: what is queued is drained, then each
        // agent gets one ChannelClosed and each thread returns.
        channel.close();
        for (auto& t : threads) t.join();
        while (closed.load() < int(agents)) std::this_thread::sleep_for(1ms);
        env->stop();
        CHECK_EQ(closed.load(), int(agents));
        for (const auto& times : seen) CHECK_EQ(int(times.load()), 1);
        CHECK_EQ(env->dropped(), std::uint64_t{0});
    }
    check_no_leak();
}

namespace {

struct Lap {
    std::uint64_t count;
};

// Passes laps round a ring for as long as it lives; the first member reports when the ring has
// done `report_at` laps.
class Runner final : public rt::Agent {
public:
    Runner(std::atomic<std::uint64_t>& laps, std::atomic<int>& destroyed) : laps_(laps), destroyed_(destroyed) {
        subscribe<&Runner::on_lap>();
    }
    ~Runner() override { destroyed_.fetch_add(1, std::memory_order_relaxed); }
    Runner* next = nullptr;
    bool starts = false;

private:
    void on_start() override {
        if (starts) rt::send<Lap>(*next, 0u);
    }
    void on_lap(const Lap& lap) {
        laps_.fetch_add(1, std::memory_order_relaxed);
        rt::send<Lap>(*next, lap.count + 1);
    }
    std::atomic<std::uint64_t>& laps_;
    std::atomic<int>& destroyed_;
};

}  // namespace

TEST(environments_start_and_stop_hundreds_of_times_with_messages_in_flight, 600) {
    constexpr int kMembers = 6;
    for (const Config& config : configs()) {
        const int runs = thread_per_agent(config) ? 60 : 300;
        for (int run = 0; run < runs; ++run) {
            std::atomic<std::uint64_t> laps{0};
            std::atomic<int> destroyed{0};
            auto env = make_environment(config);
            rt::Dispatcher& dispatcher = config.make(*env);
            env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) {
                std::vector<Runner*> ring;
                for (int i = 0; i < kMembers; ++i)
                    ring.push_back(&coop.make_agent_with_binder<Runner>(dispatcher.binder(i), laps, destroyed));
                for (int i = 0; i < kMembers; ++i) ring[i]->next = ring[(i + 1) % kMembers];
                ring[0]->starts = ring[kMembers / 2]->starts = true;
            });
            // Stop at once on odd runs, after some traffic on even ones: a message is always in
            // flight, or about to be sent from a start handler, when stop() begins.
            if (run % 2 == 0)
                while (laps.load(std::memory_order_relaxed) < 50 && !env->failed()) std::this_thread::yield();
            env->stop();
            CHECK(!env->failed());
            CHECK_EQ(destroyed.load(), kMembers);
            // Each of the two laps ends at a finished member: dropped there, exactly once.
            CHECK_EQ(env->dropped(), std::uint64_t{2});
        }
    }
    check_no_leak();
}

// Many agents asking two hubs in turn, each waiting for its answer before it asks again: the
// hubs stay busy while the askers come and go (on work_stealing a hub put back after its turn is
// held by its worker, and an idle worker asks the busy one to share its woken askers). Every
// question is answered once, every answer reaches its asker.
namespace {

struct Question {
    std::uint32_t from;
};
struct Reply {};

class Asker;

class Hub final : public rt::Agent {
public:
    Hub(std::vector<Asker*>& askers, std::uint64_t& answered) : askers_(askers), answered_(answered) {
        subscribe<&Hub::on_question>();
    }

private:
    void on_question(const Question& question);
    std::vector<Asker*>& askers_;
    std::uint64_t& answered_;  // only this hub's handler writes it; read after stop()
};

class Asker final : public rt::Agent {
public:
    Asker(std::uint32_t id, std::uint32_t rounds, Hub& hub, std::uint64_t& replies, std::atomic<std::uint32_t>& finished)
        : id_(id), left_(rounds), hub_(hub), replies_(replies), finished_(finished) {
        subscribe<&Asker::on_reply>();
    }

private:
    void on_start() override { rt::send<Question>(hub_, id_); }
    void on_reply(const Reply&) {
        ++replies_;  // only this asker's handler writes it; read after stop()
        if (--left_ == 0) finished_.fetch_add(1, std::memory_order_relaxed);
        else rt::send<Question>(hub_, id_);
    }
    const std::uint32_t id_;
    std::uint32_t left_;
    Hub& hub_;
    std::uint64_t& replies_;
    std::atomic<std::uint32_t>& finished_;
};

void Hub::on_question(const Question& question) {
    ++answered_;
    rt::send<Reply>(*askers_[question.from]);
}

}  // namespace

TEST(askers_waiting_on_two_busy_hubs_each_get_every_answer_once, 600) {
    for (const Config& config : configs()) {
        const std::uint32_t askers = thread_per_agent(config) ? 40 : 400;
        const std::uint32_t rounds = thread_per_agent(config) ? 100 : 500;
        std::vector<Asker*> all(askers, nullptr);
        std::vector<std::uint64_t> replies(askers, 0);
        std::uint64_t answered[2] = {0, 0};
        std::atomic<std::uint32_t> finished{0};
        auto env = make_environment(config);
        rt::Dispatcher& dispatcher = config.make(*env);
        env->introduce_coop(dispatcher.binder(), [&](rt::Coop& coop) {
            Hub* hubs[2];
            for (int h = 0; h < 2; ++h) hubs[h] = &coop.make_agent_with_binder<Hub>(dispatcher.binder(h), all, answered[h]);
            for (std::uint32_t a = 0; a < askers; ++a)
                all[a] = &coop.make_agent_with_binder<Asker>(dispatcher.binder(2 + a), a, rounds, *hubs[a % 2],
                                                             replies[a], finished);
        });
        while (finished.load(std::memory_order_relaxed) < askers && !env->failed()) std::this_thread::sleep_for(1ms);
        env->stop();
        CHECK(!env->failed());
        for (std::uint32_t a = 0; a < askers; ++a) CHECK_EQ(replies[a], std::uint64_t{rounds});
        CHECK_EQ(answered[0], std::uint64_t{askers / 2} * rounds);
        CHECK_EQ(answered[1], std::uint64_t{askers - askers / 2} * rounds);
        CHECK_EQ(env->dropped(), std::uint64_t{0});
    }
    check_no_leak();
}
