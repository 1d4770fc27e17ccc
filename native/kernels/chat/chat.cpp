// chat: the parametric chat application of "Run, Actor, Run" (AGERE 2019). Directories hold
// clients and befriend them; each turn every client computes, posts to a chat (each delivery
// acknowledged), leaves a chat, invites friends into a new chat or does nothing, as its own
// generator draws; an accumulator per turn counts the completions; the turns run one after
// another, iteration after iteration. Measures a mixed, irregular workload: creation, fan-out,
// CPU work and a barrier per turn.
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../framework/dispatcher_params.hpp"
#include "../framework/measured_run.hpp"
#include "../framework/phase.hpp"
#include "../framework/schema.hpp"
#include "chat.hpp"

namespace labctl::kernels::chat {

std::uint64_t compute_job(std::uint64_t repeats) noexcept {
    std::uint64_t wrong = 0;
    std::uint8_t index = kFibonacciIndex;
    for (std::uint64_t i = 0; i < repeats; ++i) {
        asm volatile("" : "+r"(index));
        if (fibonacci(index) != kFibonacci35) ++wrong;
    }
    return wrong;
}

namespace {

class Driver;
class Directory;
class Client;
class Chat;
class Accumulator;

// What every agent of a run reads.
struct World {
    const Settings& settings;
    const Thresholds thresholds;
    DispatcherChoice& dispatchers;
    rt::Completion<Outcome>& done;
    StartLatch& started;
    std::atomic<std::uint64_t>& handled;  // every handler run, added by each agent as it finishes
};

// The messages (chat.hpp) that carry an actor, each addressed by its agent.
using Messages = Protocol<Accumulator*, Client*, Chat*>;
using Poke = Messages::Poke;
using Befriend = Messages::Befriend;
using Act = Messages::Act;
using Forward = Messages::Forward;
using Accepted = Messages::Accepted;
using Left = Messages::Left;
using Post = Messages::Post;
using Join = Messages::Join;
using Leave = Messages::Leave;

// Every agent counts its handler runs and adds them to the world's count as it finishes.
class Counted : public rt::Agent {
public:
    explicit Counted(World& world) : world_(world) {}

protected:
    void on_finish() override { world_.handled.fetch_add(handled_, std::memory_order_relaxed); }
    void leave_environment() { environment().deregister_coop(coop()); }

    World& world_;
    std::uint64_t handled_ = 0;
};

class Driver final : public Counted {
public:
    explicit Driver(World& world) : Counted(world) {
        subscribe<&Driver::on_start_run>();
        subscribe<&Driver::on_ready>();
        subscribe<&Driver::on_turn_done>();
        subscribe<&Driver::on_finished>();
        subscribe<&Driver::on_closed>();
    }

private:
    void on_start() override { world_.started.count_down(); }
    void on_start_run(const Start&);
    void on_ready(const Ready&);
    void on_turn_done(const TurnDone&);
    void on_finished(const Finished&);
    void on_closed(const Closed&);
    void begin_iteration();
    void start_turn();

    std::vector<Directory*> directories_;
    std::vector<Accumulator*> accumulators_;  // this iteration's, by turn
    std::vector<TurnFigures> figures_;        // this iteration's, by turn
    std::uint32_t iteration_ = 0;
    std::uint32_t turn_ = 0;
    std::uint32_t count_ = 0;  // directories ready or finished, accumulators closed
    Outcome outcome_;
};

class Directory final : public Counted {
public:
    Directory(World& world, std::uint64_t seed, Driver& driver) : Counted(world), random_(seed), driver_(driver) {
        subscribe<&Directory::on_login>();
        subscribe<&Directory::on_befriend_all>();
        subscribe<&Directory::on_poke>();
        subscribe<&Directory::on_disconnect>();
        subscribe<&Directory::on_client_left>();
    }

private:
    void on_login(const Login&);
    void on_befriend_all(const BefriendAll&);
    void on_poke(const Poke&);
    void on_disconnect(const Disconnect&);
    void on_client_left(const ClientLeft&);

    Generator random_;
    Driver& driver_;
    std::vector<std::pair<std::uint32_t, Client*>> clients_;  // (id, client), in login order
    std::uint32_t left_ = 0;
    std::uint64_t decisions_ = 0;
    std::uint64_t logout_leaves_ = 0;
};

class Client final : public Counted {
public:
    Client(World& world, std::uint32_t id, Directory& directory, std::uint64_t seed)
        : Counted(world), id_(id), directory_(directory), random_(seed) {
        subscribe<&Client::on_befriend>();
        subscribe<&Client::on_act>();
        subscribe<&Client::on_forward>();
        subscribe<&Client::on_accepted>();
        subscribe<&Client::on_left>();
        subscribe<&Client::on_logout>();
    }

private:
    void on_befriend(const Befriend&);
    void on_act(const Act&);
    void on_forward(const Forward&);
    void on_accepted(const Accepted&);
    void on_left(const Left&);
    void on_logout(const Logout&);
    void leave_directory();

    const std::uint32_t id_;
    Directory& directory_;
    Generator random_;
    std::vector<std::pair<std::uint32_t, Client*>> friends_;
    std::vector<std::pair<std::uint64_t, Chat*>> chats_;  // by id
    std::uint64_t decisions_ = savina::kFnvBasis;
    std::uint64_t logout_leaves_ = 0;
};

class Chat final : public Counted {
public:
    Chat(World& world, std::uint64_t id, Client* initiator) : Counted(world), id_(id), members_{initiator} {
        subscribe<&Chat::on_post>();
        subscribe<&Chat::on_join>();
        subscribe<&Chat::on_leave>();
    }

private:
    void on_post(const Post&);
    void on_join(const Join&);
    void on_leave(const Leave&);

    const std::uint64_t id_;
    std::vector<Client*> members_;
    std::vector<std::uint32_t> buffer_;
};

class Accumulator final : public Counted {
public:
    Accumulator(World& world, std::uint32_t turn, Driver& driver)
        : Counted(world), turn_(turn), driver_(driver), tally_(world.settings.clients) {
        subscribe<&Accumulator::on_resolved>();
        subscribe<&Accumulator::on_posted>();
        subscribe<&Accumulator::on_invited>();
        subscribe<&Accumulator::on_delivered>();
        subscribe<&Accumulator::on_accepted>();
        subscribe<&Accumulator::on_close>();
    }

private:
    void on_resolved(const Resolved& m) { settle(tally_.resolved(m.action, m.wrong)); }
    void on_posted(const Posted& m) { settle(tally_.posted(m.members)); }
    void on_invited(const Invited& m) { settle(tally_.invited(m.invitations)); }
    void on_delivered(const Delivered&) { settle(tally_.delivered()); }
    void on_accepted(const AcceptedAck& m) { settle(tally_.accepted(m.buffered)); }
    void on_close(const Close&);
    void settle(bool completed);

    const std::uint32_t turn_;
    Driver& driver_;
    Tally tally_;
};

// -- the driver ---------------------------------------------------------------------------------

void Driver::on_start_run(const Start&) {
    ++handled_;
    begin_iteration();
}

// A fresh application: its directories made, every client logged in, every directory told to
// befriend its clients.
void Driver::begin_iteration() {
    const Settings& s = world_.settings;
    directories_.clear();
    const std::vector<std::uint64_t> seeds = directory_seeds(s.seed, s.directories);
    for (std::uint32_t d = 0; d < s.directories; ++d) {
        environment().introduce_coop(world_.dispatchers.binder(d), [&](rt::Coop& coop) {
            directories_.push_back(&coop.make_agent<Directory>(world_, seeds[d], *this));
        });
    }
    for (std::uint32_t id = 0; id < s.clients; ++id)
        rt::send<Login>(*directories_[directory_of(id, s.directories)], id);
    for (Directory* directory : directories_) rt::send<BefriendAll>(*directory);
}

void Driver::on_ready(const Ready&) {
    ++handled_;
    if (++count_ < world_.settings.directories) return;
    count_ = 0;
    start_turn();
}

// A turn: its start read, its accumulator made, every directory poked.
void Driver::start_turn() {
    outcome_.started_ns.push_back(steady_ns());
    Accumulator* accumulator = nullptr;
    environment().introduce_coop(world_.dispatchers.binder(turn_), [&](rt::Coop& coop) {
        accumulator = &coop.make_agent<Accumulator>(world_, turn_, *this);
    });
    accumulators_.push_back(accumulator);
    for (Directory* directory : directories_) rt::send<Poke>(*directory, accumulator, turn_);
}

void Driver::on_turn_done(const TurnDone&) {
    ++handled_;
    if (++turn_ < world_.settings.turns) {
        start_turn();
        return;
    }
    for (Directory* directory : directories_) rt::send<Disconnect>(*directory);
}

void Driver::on_finished(const Finished& m) {
    ++handled_;
    outcome_.decisions += m.decisions;
    outcome_.logout_leaves += m.logout_leaves;
    if (++count_ < world_.settings.directories) return;
    count_ = 0;
    figures_.assign(world_.settings.turns, TurnFigures{});
    for (Accumulator* accumulator : accumulators_) rt::send<Close>(*accumulator);
}

void Driver::on_closed(const Closed& m) {
    ++handled_;
    figures_[m.turn] = m.figures;
    if (++count_ < world_.settings.turns) return;
    count_ = 0;
    outcome_.turns.insert(outcome_.turns.end(), figures_.begin(), figures_.end());
    accumulators_.clear();
    turn_ = 0;
    if (++iteration_ < world_.settings.iterations) begin_iteration();
    else world_.done.set(std::move(outcome_));
}

// -- a directory --------------------------------------------------------------------------------

void Directory::on_login(const Login& m) {
    ++handled_;
    Client* client = nullptr;
    const std::uint64_t seed = random_.next();
    environment().introduce_coop(world_.dispatchers.binder(m.id), [&](rt::Coop& coop) {
        client = &coop.make_agent<Client>(world_, m.id, *this, seed);
    });
    clients_.emplace_back(m.id, client);
}

void Directory::on_befriend_all(const BefriendAll&) {
    ++handled_;
    befriend_all(random_, std::uint32_t(clients_.size()), world_.settings.befriend,
                 [this](std::uint32_t c, std::uint32_t f) {
                     rt::send<Befriend>(*clients_[c].second, clients_[f].first, clients_[f].second);
                     rt::send<Befriend>(*clients_[f].second, clients_[c].first, clients_[c].second);
                 });
    rt::send<Ready>(driver_);
}

void Directory::on_poke(const Poke& m) {
    ++handled_;
    for (const auto& client : clients_) rt::send<Act>(*client.second, m.accumulator, m.turn);
}

void Directory::on_disconnect(const Disconnect&) {
    ++handled_;
    for (const auto& client : clients_) rt::send<Logout>(*client.second);
}

void Directory::on_client_left(const ClientLeft& m) {
    ++handled_;
    decisions_ += m.decisions;
    logout_leaves_ += m.logout_leaves;
    if (++left_ < clients_.size()) return;
    rt::send<Finished>(driver_, decisions_, logout_leaves_);
    leave_environment();
}

// -- a client -----------------------------------------------------------------------------------

void Client::on_befriend(const Befriend& m) {
    ++handled_;
    add_friend(friends_, m.id, m.client);
}

void Client::on_act(const Act& m) {
    ++handled_;
    const Settings& s = world_.settings;
    const Decision d =
        decide(random_, world_.thresholds, settled_chats(chats_, m.turn, s.clients), friends_.size());
    decisions_ = fold_action(decisions_, d.action);
    switch (d.action) {
        case Action::compute:
            rt::send<Resolved>(*m.accumulator, Action::compute, compute_job(s.compute_repeats));
            break;
        case Action::post:
            decisions_ = savina::fnv_fold(decisions_, chats_[d.chat].first);
            rt::send<Post>(*chats_[d.chat].second, m.accumulator, id_);
            break;
        case Action::leave:
            decisions_ = savina::fnv_fold(decisions_, chats_[d.chat].first);
            rt::send<Leave>(*chats_[d.chat].second, this, false, m.accumulator);
            break;
        case Action::invite: {
            const std::uint64_t id = chat_id(m.turn, id_, s.clients);
            Chat* chat = nullptr;
            environment().introduce_coop(world_.dispatchers.binder(id_), [&](rt::Coop& coop) {
                chat = &coop.make_agent<Chat>(world_, id, this);
            });
            insert_chat(chats_, id, chat);
            decisions_ = savina::fnv_fold(decisions_, d.invited.size());
            rt::send<Invited>(*m.accumulator, std::uint64_t(d.invited.size()));
            for (std::uint32_t position : d.invited) {
                decisions_ = savina::fnv_fold(decisions_, friends_[position].first);
                rt::send<Join>(*chat, friends_[position].second, m.accumulator);
            }
            break;
        }
        case Action::nothing:
            rt::send<Resolved>(*m.accumulator, Action::nothing, std::uint64_t{0});
            break;
    }
}

void Client::on_forward(const Forward& m) {
    ++handled_;
    rt::send<Delivered>(*m.accumulator);
}

void Client::on_accepted(const Accepted& m) {
    ++handled_;
    insert_chat(chats_, m.id, m.chat);
    rt::send<AcceptedAck>(*m.accumulator, m.buffered);
}

void Client::on_left(const Left& m) {
    ++handled_;
    erase_chat(chats_, m.id);
    if (!m.logout) {
        rt::send<Resolved>(*m.accumulator, Action::leave, std::uint64_t{0});
        return;
    }
    ++logout_leaves_;
    if (chats_.empty()) leave_directory();
}

void Client::on_logout(const Logout&) {
    ++handled_;
    if (chats_.empty()) {
        leave_directory();
        return;
    }
    for (const auto& chat : chats_) rt::send<Leave>(*chat.second, this, true, static_cast<Accumulator*>(nullptr));
}

// Logged out: no chat holds the client any more and no turn is left; it goes.
void Client::leave_directory() {
    rt::send<ClientLeft>(directory_, decisions_, logout_leaves_);
    leave_environment();
}

// -- a chat -------------------------------------------------------------------------------------

void Chat::on_post(const Post& m) {
    ++handled_;
    if (world_.settings.buffering) buffer_.push_back(m.payload);
    if (members_.empty()) {
        rt::send<Resolved>(*m.accumulator, Action::post, std::uint64_t{0});
        return;
    }
    rt::send<Posted>(*m.accumulator, std::uint64_t(members_.size()));
    for (Client* member : members_) rt::send<Forward>(*member, this, m.payload, m.accumulator);
}

void Chat::on_join(const Join& m) {
    ++handled_;
    members_.push_back(m.client);
    const std::uint64_t buffered = world_.settings.buffering ? buffer_.size() : 0;
    if (buffered != 0)
        for (std::uint32_t payload : buffer_) rt::send<Forward>(*m.client, this, payload, m.accumulator);
    rt::send<Accepted>(*m.client, this, id_, m.accumulator, buffered);
}

// A chat that loses its last member goes: nobody holds it any more.
void Chat::on_leave(const Leave& m) {
    ++handled_;
    for (auto it = members_.begin(); it != members_.end(); ++it) {
        if (*it == m.client) {
            members_.erase(it);
            break;
        }
    }
    rt::send<Left>(*m.client, id_, m.logout, m.accumulator);
    if (members_.empty()) leave_environment();
}

// -- an accumulator -----------------------------------------------------------------------------

void Accumulator::settle(bool completed) {
    ++handled_;
    if (!completed) return;
    tally_.ended_at(steady_ns());
    rt::send<TurnDone>(driver_);
}

// The iteration is over: the figures go to the driver, and the accumulator goes.
void Accumulator::on_close(const Close&) {
    ++handled_;
    rt::send<Closed>(driver_, turn_, tally_.figures());
    leave_environment();
}

Result run(const Params& params) {
    const Settings settings = Settings::from(params);
    const Plan plan = simulate(settings);  // the oracle, before the phase

    StartLatch started(1);  // the driver
    std::atomic<std::uint64_t> handled{0};
    MeasuredRun<Outcome> run(params, started.all_started);
    rt::Environment& env = run.environment();
    World world{settings, Thresholds(settings), run.dispatchers(), run.done(), started, handled};
    Driver* driver = nullptr;
    env.introduce_coop(run.dispatchers().binder(), [&](rt::Coop& coop) { driver = &coop.make_agent<Driver>(world); });
    started.wait(env);
    Result result;

    // As the program's clock of an iteration, every iteration: the directories made, the clients
    // logged in and befriended, every turn, every client logged out; and the accumulators closed.
    // Every agent has finished once it returns: `handled` is complete.
    const Outcome outcome = run.measure(result, [&] { rt::send<Start>(*driver); });

    report(result, settings, plan, outcome, handled.load(std::memory_order_relaxed));
    return result;
}

// What a peer's chat is held to (chat.hpp's expectation): the simulation, outside any phase.
Expectation expect(const Params& params) {
    const Settings settings = Settings::from(params);
    return expectation(settings, simulate(settings));
}

void check(const Params& params) {
    check_settings("chat", params);
    if (!rt::find_dispatcher(params.text("dispatcher")).thread_per_agent) return;
    const Settings s = Settings::from(params);
    // The chats alive at once need the simulation: made only where the rough bound is too many.
    const std::uint64_t rough = most_agents(s, false);
    if (rough <= max_agent_threads(params)) return;
    check_thread_per_agent("chat", params, most_agents(s, true),
                           "clients=" + std::to_string(s.clients) + ", directories=" + std::to_string(s.directories) +
                               ", turns=" + std::to_string(s.turns) + " and the chats they make");
}

// At least each turn's figures and start, of every iteration (the turns' durations and quality
// of service are figures over all of them), and an agent per client: 10^6 turns of 10^5
// iterations would need 10 TB for the figures alone.
double memory(const Params& params) {
    const Settings s = Settings::from(params);
    return double(s.turns) * s.iterations * (sizeof(TurnFigures) + sizeof(std::int64_t)) +
           double(s.clients) * sizeof(Client);
}

const Registration registration(Kernel{
    .name = "chat",
    .summary = "`clients` clients in `directories` directories, each turn computing, posting to their "
               "chats, leaving chats or inviting friends, `turns` turns `iterations` times: the "
               "chat application of Run, Actor, Run",
    .description =
        "The parametric chat application of \"Run, Actor, Run\" (AGERE 2019), after its program "
        "(sblessing/chat-app, the Pony and CAF versions). A driver (the program's poker) makes "
        "`directories` directories and logs client i in at directory i % directories, which makes "
        "the client; each directory then befriends its clients among themselves (for each client, "
        "passes over the others drawing below `befriend` percent until it has a friend; each success "
        "befriends both ways). Then `turns` turns: the driver makes the turn's accumulator and pokes "
        "every directory, which tells each of its clients to act. A client draws once against the "
        "cumulative thresholds `compute`, `post`, `leave`, `invite` (percentages; the rest does "
        "nothing): compute runs `compute_repeats` evaluations of Fibonacci(35) by the program's "
        "recursion, each checked; post sends to one of its chats (drawn), which announces its "
        "members to the accumulator and forwards the post to each, each acknowledging it to the "
        "accumulator (with `buffering` the chat keeps the post, and a member who joins is sent the "
        "kept posts first); leave asks one of its chats to drop it; invite makes a chat with the "
        "client in it, shuffles its friends and asks the chat to join the first few (at least one), "
        "each join acknowledged by the invited client; a post or a leave by a client in no chat "
        "does nothing. The accumulator ends the turn when every client's act is resolved and every "
        "announced delivery and join acknowledged; only then does the next turn start. After the "
        "last turn every client logs out, leaving its chats, and the accumulators are closed; "
        "that is an iteration, run `iterations` times, each from a fresh application and the same "
        "draws (the program restarts its generators each run). Generators as the program's, its "
        "16-bit LCG (Savina's PseudoRandom): a generator started at `seed` (the program's 42) "
        "gives each directory's start, a directory's next value each client's start at login, and "
        "the directory's befriending draws after its logins; a client draws a chat's position, "
        "then its action, then (inviting) its shuffle and the invitations. The phase covers every "
        "iteration whole, as the program's clock of an iteration (the figure its plots show): the "
        "directories made, the clients made and befriended, every turn, every logout, the "
        "accumulators closed; the driver is made and started before it. A turn's time "
        "(turn_p50_ns, turn_p99_ns, turn_max_ns over every turn of every iteration) runs from the "
        "driver's start of the turn, before it makes the accumulator, to the accumulator's "
        "completion (the program's clocks read whole milliseconds); turn_qos_ns is the program's "
        "quality of service: for each turn the standard deviation (over the count) of its times "
        "across the iterations, the median of those over the turns (as the program's Pony version, "
        "which takes the middle entry of the unsorted list where ours sorts; its CAF version takes "
        "each iteration's spread over its turns instead). The action counts are metrics "
        "(computes, posts, leaves, invites, nothings; deliveries, the acknowledged forwards, "
        "depends on the schedule where a chat is "
        "posted to and left in the same turn). Differences from the program: its turns all run at "
        "once (each accumulator made and every directory poked for every turn before any "
        "completes, their clocks started before the logins are handled), ours one after another, "
        "the first once every directory has sent its befriendings (its clients handle them before "
        "their first act), and a client draws among the "
        "chats it was in at the turn's start (one it is invited into in the same turn, by a friend "
        "who acted first, counts from the next turn; in the program it counts at once where its "
        "acceptance arrives first), so that what a client does depends on no schedule; its "
        "accumulator ends a turn when one counter of completions less announcements reaches "
        "zero, which an acknowledgement "
        "overtaking its announcement would end early on a runtime without causal order, ours "
        "counts them apart; a client keeps its chats ordered by the turn and the client that made "
        "them (the program appends them as acceptances arrive, an order that depends on the "
        "schedule); its percentages must sum to 100 (a draw past them falls to nothing here); "
        "friends are kept once each, the shuffle draws friends times and the invite announces "
        "itself before the joins, as its CAF version (its Pony version keeps repeats, draws one "
        "less and shuffles the friends in place); a chat that loses its last member goes, a "
        "client goes once logged out and a directory once its clients are, as the program's "
        "actors end; the accumulators report their figures to the driver once the clients have "
        "logged out (a Close and a Closed each, in the phase) where the program's poker collects "
        "them after the iteration; a post carries the poster's id, not an empty payload; an error "
        "in a compute is counted and fails the run (the program counts it as an action); as its "
        "CAF version, `clients` must be at least twice `directories`, and parameters with which a "
        "directory's befriending never ends are refused (with `befriend` = 1 a draw below 1 comes "
        "only every fourth draw of the 16-bit generator, which can fall on the same client every "
        "pass, and the program then loops for ever). As in "
        "the program, members join a chat only when it is made, before any post, so no buffered "
        "post is ever sent: `buffering` costs the chats' memory, each post kept, and nothing else.",
    .sources = {{"run_actor_run", "the chat application (sblessing/chat-app: its Pony and CAF versions)"}},
    .verifies = "every turn's action counts, its invitations and each client's decisions (their fold) "
                "against a sequential simulation of the same draws; every turn's deliveries between "
                "the simulation's bounds (a chat's members at the turn's start, less or not the leaves "
                "of the same turn); every announced delivery and join acknowledged, no completion after "
                "a turn's end, every compute right, every client's logout leaves counted, and the "
                "messages handled equal to the count the figures give",
    .params = schema(own_params(), Timed::phase, dispatcher_params()),
    .metrics = metrics(),
    .check = check,
    .run = run,
    .expect = expect,
    .work = work,
    .memory = memory,
});

}  // namespace
}  // namespace labctl::kernels::chat
