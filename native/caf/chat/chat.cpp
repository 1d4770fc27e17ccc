// caf_chat: chat on CAF 0.17, the parametric chat application of "Run, Actor, Run". Directories
// hold clients and befriend them; each turn every client computes, posts to a chat (each
// delivery acknowledged), leaves a chat, invites friends into a new chat or does nothing, as its
// own generator draws; an accumulator per turn counts the completions.
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../../kernels/chat/chat.hpp"
#include "../../kernels/framework/schema.hpp"
#include "../run.hpp"

namespace labctl::kernels::chat {

// CAF's inspectors for the shared figures and messages, where argument-dependent lookup finds them.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TurnFigures& x) {
    return f(caf::meta::type_name("TurnFigures"), x.actions, x.invitations, x.accepted, x.announced, x.delivered,
             x.wrong_computes, x.late, x.end_ns);
}

// The messages as CAF sends them, and CAF's inspector for each.
using CafProtocol = Protocol<caf::actor, caf::actor, caf::actor>;

#define LABCTL_CHAT_INSPECT(Type, ...)                                      \
    template <class Inspector>                                              \
    typename Inspector::result_type inspect(Inspector& f, Type& x) {        \
        return f(caf::meta::type_name(#Type) __VA_OPT__(, ) __VA_ARGS__);   \
    }
#define LABCTL_CHAT_INSPECT_NAMED(Name, Type, ...)                          \
    template <class Inspector>                                              \
    typename Inspector::result_type inspect(Inspector& f, Type& x) {        \
        return f(caf::meta::type_name(#Name), __VA_ARGS__);                 \
    }
#define LABCTL_CHAT_INSPECT_EMPTY(Type)                                     \
    template <class Inspector>                                              \
    typename Inspector::result_type inspect(Inspector& f, Type&) {          \
        return f(caf::meta::type_name(#Type));                              \
    }

LABCTL_CHAT_INSPECT_EMPTY(Start)
LABCTL_CHAT_INSPECT_EMPTY(Ready)
LABCTL_CHAT_INSPECT_EMPTY(TurnDone)
LABCTL_CHAT_INSPECT(Finished, x.decisions, x.logout_leaves)
LABCTL_CHAT_INSPECT(Closed, x.turn, x.figures)
LABCTL_CHAT_INSPECT(Login, x.id)
LABCTL_CHAT_INSPECT_EMPTY(BefriendAll)
LABCTL_CHAT_INSPECT_NAMED(Poke, CafProtocol::Poke, x.accumulator, x.turn)
LABCTL_CHAT_INSPECT_EMPTY(Disconnect)
LABCTL_CHAT_INSPECT(ClientLeft, x.decisions, x.logout_leaves)
LABCTL_CHAT_INSPECT_NAMED(Befriend, CafProtocol::Befriend, x.id, x.client)
LABCTL_CHAT_INSPECT_NAMED(Act, CafProtocol::Act, x.accumulator, x.turn)
LABCTL_CHAT_INSPECT_NAMED(Forward, CafProtocol::Forward, x.chat, x.payload, x.accumulator)
LABCTL_CHAT_INSPECT_NAMED(Accepted, CafProtocol::Accepted, x.chat, x.id, x.accumulator, x.buffered)
LABCTL_CHAT_INSPECT_NAMED(Left, CafProtocol::Left, x.id, x.logout, x.accumulator)
LABCTL_CHAT_INSPECT_EMPTY(Logout)
LABCTL_CHAT_INSPECT_NAMED(Post, CafProtocol::Post, x.accumulator, x.payload)
LABCTL_CHAT_INSPECT_NAMED(Join, CafProtocol::Join, x.client, x.accumulator)
LABCTL_CHAT_INSPECT_NAMED(Leave, CafProtocol::Leave, x.client, x.logout, x.accumulator)
LABCTL_CHAT_INSPECT(Resolved, x.action, x.wrong)
LABCTL_CHAT_INSPECT(Posted, x.members)
LABCTL_CHAT_INSPECT(Invited, x.invitations)
LABCTL_CHAT_INSPECT_EMPTY(Delivered)
LABCTL_CHAT_INSPECT(AcceptedAck, x.buffered)
LABCTL_CHAT_INSPECT_EMPTY(Close)

#undef LABCTL_CHAT_INSPECT
#undef LABCTL_CHAT_INSPECT_NAMED
#undef LABCTL_CHAT_INSPECT_EMPTY

}  // namespace labctl::kernels::chat

namespace labctl::kernels::caf_chat {
namespace {

using chat::Action;
using chat::Outcome;
using chat::Settings;
using chat::TurnFigures;
using chat::Start;
using chat::Ready;
using chat::TurnDone;
using chat::Finished;
using chat::Closed;
using chat::Login;
using chat::BefriendAll;
using chat::Disconnect;
using chat::ClientLeft;
using chat::Logout;
using chat::Resolved;
using chat::Posted;
using chat::Invited;
using chat::Delivered;
using chat::AcceptedAck;
using chat::Close;

// What every actor of a run reads.
struct World {
    const Settings& settings;
    const chat::Thresholds thresholds;
    caf_support::CafRun& run;
    rt::Completion<Outcome>& done;
    std::atomic<std::uint64_t>& handled;  // every handler run, added by each actor as it exits
};

// The messages (chat.hpp) that carry an actor, each addressed by its caf::actor.
using Messages = chat::Protocol<caf::actor, caf::actor, caf::actor>;
using Poke = Messages::Poke;
using Befriend = Messages::Befriend;
using Act = Messages::Act;
using Forward = Messages::Forward;
using Accepted = Messages::Accepted;
using Left = Messages::Left;
using Post = Messages::Post;
using Join = Messages::Join;
using Leave = Messages::Leave;

// Every actor counts its handler runs and adds them to the world's count as it exits.
class Counted : public caf::event_based_actor {
public:
    Counted(caf::actor_config& config, World& world) : caf::event_based_actor(config), world_(world) {
        world.run.watch(*this);
    }

protected:
    void count_exit() { world_.handled.fetch_add(handled_, std::memory_order_relaxed); }
    caf::actor self() { return caf::actor_cast<caf::actor>(this); }

    World& world_;
    std::uint64_t handled_ = 0;
};

class Accumulator final : public Counted {
public:
    Accumulator(caf::actor_config& config, World& world, std::uint32_t turn, caf::actor driver)
        : Counted(config, world), turn_(turn), driver_(std::move(driver)), tally_(world.settings.clients) {}

    caf::behavior make_behavior() override {
        return {
            [this](const Resolved& m) { settle(tally_.resolved(m.action, m.wrong)); },
            [this](const Posted& m) { settle(tally_.posted(m.members)); },
            [this](const Invited& m) { settle(tally_.invited(m.invitations)); },
            [this](const Delivered&) { settle(tally_.delivered()); },
            [this](const AcceptedAck& m) { settle(tally_.accepted(m.buffered)); },
            [this](const Close&) {
                ++handled_;
                send(driver_, Closed{turn_, tally_.figures()});
                quit();
            },
        };
    }

    void on_exit() override {
        count_exit();
        driver_ = nullptr;
    }

private:
    void settle(bool completed) {
        ++handled_;
        if (!completed) return;
        tally_.ended_at(chat::steady_ns());
        send(driver_, TurnDone{});
    }

    const std::uint32_t turn_;
    caf::actor driver_;
    chat::Tally tally_;
};

class Chat final : public Counted {
public:
    Chat(caf::actor_config& config, World& world, std::uint64_t id, caf::actor initiator)
        : Counted(config, world), id_(id) {
        members_.push_back(std::move(initiator));
    }

    caf::behavior make_behavior() override {
        return {
            [this](const Post& m) { on_post(m); },
            [this](const Join& m) { on_join(m); },
            [this](const Leave& m) { on_leave(m); },
        };
    }

    void on_exit() override {
        count_exit();
        members_.clear();
    }

private:
    void on_post(const Post& m) {
        ++handled_;
        if (world_.settings.buffering) buffer_.push_back(m.payload);
        if (members_.empty()) {
            send(m.accumulator, Resolved{Action::post, 0});
            return;
        }
        send(m.accumulator, Posted{members_.size()});
        for (const caf::actor& member : members_) send(member, Forward{self(), m.payload, m.accumulator});
    }

    void on_join(const Join& m) {
        ++handled_;
        members_.push_back(m.client);
        const std::uint64_t buffered = world_.settings.buffering ? buffer_.size() : 0;
        if (buffered != 0)
            for (std::uint32_t payload : buffer_) send(m.client, Forward{self(), payload, m.accumulator});
        send(m.client, Accepted{self(), id_, m.accumulator, buffered});
    }

    // A chat that loses its last member quits: nobody holds it any more.
    void on_leave(const Leave& m) {
        ++handled_;
        for (auto it = members_.begin(); it != members_.end(); ++it) {
            if (*it == m.client) {
                members_.erase(it);
                break;
            }
        }
        send(m.client, Left{id_, m.logout, m.accumulator});
        if (members_.empty()) quit();
    }

    const std::uint64_t id_;
    std::vector<caf::actor> members_;
    std::vector<std::uint32_t> buffer_;
};

class Client final : public Counted {
public:
    Client(caf::actor_config& config, World& world, std::uint32_t id, caf::actor directory, std::uint64_t seed)
        : Counted(config, world), id_(id), directory_(std::move(directory)), random_(seed) {}

    caf::behavior make_behavior() override {
        return {
            [this](const Befriend& m) {
                ++handled_;
                chat::add_friend(friends_, m.id, m.client);
            },
            [this](const Act& m) { on_act(m); },
            [this](const Forward& m) {
                ++handled_;
                send(m.accumulator, Delivered{});
            },
            [this](const Accepted& m) {
                ++handled_;
                chat::insert_chat(chats_, m.id, m.chat);
                send(m.accumulator, AcceptedAck{m.buffered});
            },
            [this](const Left& m) { on_left(m); },
            [this](const Logout&) { on_logout(); },
        };
    }

    // Clients, chats and the directory hold handles to each other: let go, or none is freed.
    void on_exit() override {
        count_exit();
        friends_.clear();
        chats_.clear();
        directory_ = nullptr;
    }

private:
    void on_act(const Act& m) {
        ++handled_;
        const Settings& s = world_.settings;
        const chat::Decision d = chat::decide(random_, world_.thresholds,
                                              chat::settled_chats(chats_, m.turn, s.clients), friends_.size());
        decisions_ = chat::fold_action(decisions_, d.action);
        switch (d.action) {
            case Action::compute:
                send(m.accumulator, Resolved{Action::compute, chat::compute_job(s.compute_repeats)});
                break;
            case Action::post:
                decisions_ = savina::fnv_fold(decisions_, chats_[d.chat].first);
                send(chats_[d.chat].second, Post{m.accumulator, id_});
                break;
            case Action::leave:
                decisions_ = savina::fnv_fold(decisions_, chats_[d.chat].first);
                send(chats_[d.chat].second, Leave{self(), false, m.accumulator});
                break;
            case Action::invite: {
                const std::uint64_t id = chat::chat_id(m.turn, id_, s.clients);
                caf::actor created = spawn<Chat>(std::ref(world_), id, self());
                chat::insert_chat(chats_, id, created);
                decisions_ = savina::fnv_fold(decisions_, d.invited.size());
                send(m.accumulator, Invited{d.invited.size()});
                for (std::uint32_t position : d.invited) {
                    decisions_ = savina::fnv_fold(decisions_, friends_[position].first);
                    send(created, Join{friends_[position].second, m.accumulator});
                }
                break;
            }
            case Action::nothing:
                send(m.accumulator, Resolved{Action::nothing, 0});
                break;
        }
    }

    void on_left(const Left& m) {
        ++handled_;
        chat::erase_chat(chats_, m.id);
        if (!m.logout) {
            send(m.accumulator, Resolved{Action::leave, 0});
            return;
        }
        ++logout_leaves_;
        if (chats_.empty()) leave_directory();
    }

    void on_logout() {
        ++handled_;
        if (chats_.empty()) {
            leave_directory();
            return;
        }
        for (const auto& chat : chats_) send(chat.second, Leave{self(), true, caf::actor{}});
    }

    // Logged out: no chat holds the client any more and no turn is left; it quits.
    void leave_directory() {
        send(directory_, ClientLeft{decisions_, logout_leaves_});
        quit();
    }

    const std::uint32_t id_;
    caf::actor directory_;
    chat::Generator random_;
    std::vector<std::pair<std::uint32_t, caf::actor>> friends_;
    std::vector<std::pair<std::uint64_t, caf::actor>> chats_;  // by id
    std::uint64_t decisions_ = savina::kFnvBasis;
    std::uint64_t logout_leaves_ = 0;
};

class Directory final : public Counted {
public:
    Directory(caf::actor_config& config, World& world, std::uint64_t seed, caf::actor driver)
        : Counted(config, world), random_(seed), driver_(std::move(driver)) {}

    caf::behavior make_behavior() override {
        return {
            [this](const Login& m) {
                ++handled_;
                const std::uint64_t seed = random_.next();
                clients_.emplace_back(m.id, spawn<Client>(std::ref(world_), m.id, self(), seed));
            },
            [this](const BefriendAll&) {
                ++handled_;
                chat::befriend_all(random_, std::uint32_t(clients_.size()), world_.settings.befriend,
                                   [this](std::uint32_t c, std::uint32_t f) {
                                       send(clients_[c].second, Befriend{clients_[f].first, clients_[f].second});
                                       send(clients_[f].second, Befriend{clients_[c].first, clients_[c].second});
                                   });
                send(driver_, Ready{});
            },
            [this](const Poke& m) {
                ++handled_;
                for (const auto& client : clients_) send(client.second, Act{m.accumulator, m.turn});
            },
            [this](const Disconnect&) {
                ++handled_;
                for (const auto& client : clients_) send(client.second, Logout{});
            },
            [this](const ClientLeft& m) {
                ++handled_;
                decisions_ += m.decisions;
                logout_leaves_ += m.logout_leaves;
                if (++left_ < clients_.size()) return;
                send(driver_, Finished{decisions_, logout_leaves_});
                quit();
            },
        };
    }

    void on_exit() override {
        count_exit();
        clients_.clear();
        driver_ = nullptr;
    }

private:
    chat::Generator random_;
    caf::actor driver_;
    std::vector<std::pair<std::uint32_t, caf::actor>> clients_;  // (id, client), in login order
    std::uint32_t left_ = 0;
    std::uint64_t decisions_ = 0;
    std::uint64_t logout_leaves_ = 0;
};

class Driver final : public Counted {
public:
    Driver(caf::actor_config& config, World& world) : Counted(config, world) {}

    caf::behavior make_behavior() override {
        return {
            [this](const Start&) {
                ++handled_;
                begin_iteration();
            },
            [this](const Ready&) {
                ++handled_;
                if (++count_ < world_.settings.directories) return;
                count_ = 0;
                start_turn();
            },
            [this](const TurnDone&) {
                ++handled_;
                if (++turn_ < world_.settings.turns) {
                    start_turn();
                    return;
                }
                for (const caf::actor& directory : directories_) send(directory, Disconnect{});
            },
            [this](const Finished& m) {
                ++handled_;
                outcome_.decisions += m.decisions;
                outcome_.logout_leaves += m.logout_leaves;
                if (++count_ < world_.settings.directories) return;
                count_ = 0;
                figures_.assign(world_.settings.turns, TurnFigures{});
                for (const caf::actor& accumulator : accumulators_) send(accumulator, Close{});
            },
            [this](const Closed& m) {
                ++handled_;
                figures_[m.turn] = m.figures;
                if (++count_ < world_.settings.turns) return;
                count_ = 0;
                outcome_.turns.insert(outcome_.turns.end(), figures_.begin(), figures_.end());
                accumulators_.clear();
                directories_.clear();
                turn_ = 0;
                if (++iteration_ < world_.settings.iterations) begin_iteration();
                else world_.done.set(std::move(outcome_));
            },
        };
    }

    void on_exit() override {
        count_exit();
        directories_.clear();
        accumulators_.clear();
    }

private:
    void begin_iteration() {
        const Settings& s = world_.settings;
        directories_.clear();
        for (std::uint64_t seed : chat::directory_seeds(s.seed, s.directories))
            directories_.push_back(spawn<Directory>(std::ref(world_), seed, self()));
        for (std::uint32_t id = 0; id < s.clients; ++id)
            send(directories_[chat::directory_of(id, s.directories)], Login{id});
        for (const caf::actor& directory : directories_) send(directory, BefriendAll{});
    }

    void start_turn() {
        outcome_.started_ns.push_back(chat::steady_ns());
        accumulators_.push_back(spawn<Accumulator>(std::ref(world_), turn_, self()));
        for (const caf::actor& directory : directories_) send(directory, Poke{accumulators_.back(), turn_});
    }

    std::vector<caf::actor> directories_;
    std::vector<caf::actor> accumulators_;  // this iteration's, by turn
    std::vector<TurnFigures> figures_;      // this iteration's, by turn
    std::uint32_t iteration_ = 0;
    std::uint32_t turn_ = 0;
    std::uint32_t count_ = 0;
    Outcome outcome_;
};

Result run(const Params& params) {
    const Settings settings = Settings::from(params);
    const chat::Plan plan = chat::simulate(settings);  // the oracle, before the phase

    rt::Completion<Outcome> done;
    std::atomic<std::uint64_t> handled{0};
    Result result;
    Outcome outcome;
    {
        caf_support::CafRun caf(params, done);
        World world{settings, chat::Thresholds(settings), caf, done, handled};
        const caf::actor driver = caf.system().spawn<Driver>(std::ref(world));
        caf.keep<Driver>(driver);

        // As ours: every iteration whole (the driver is spawned before the phase).
        caf_support::CafPhase phase(caf);
        caf::anon_send(driver, Start{});
        outcome = caf.await(done);
        phase.finish(result, done.completed_at());
        caf.stop();  // every actor has exited: `handled` is complete
    }
    chat::report(result, settings, plan, outcome, handled.load(std::memory_order_relaxed));
    return result;
}

const Registration registration(Kernel{
    .name = "caf_chat",
    .summary = "chat on CAF 0.17: `clients` clients in `directories` directories, each turn computing, "
               "posting, leaving or inviting, `turns` turns `iterations` times",
    .description =
        "As chat (the chat application of \"Run, Actor, Run\", after its program's Pony and CAF "
        "versions), on CAF 0.17: the kernel's thread spawns the driver, which spawns the "
        "directories each iteration; a directory spawns each client at login, a client each chat "
        "it makes, the driver each turn's accumulator. The same protocol and messages as chat: the "
        "turns one after another, each accumulator counting resolutions, delivery and join "
        "acknowledgements apart; a client, a chat and a directory quit as they go in chat, an "
        "accumulator once closed. The phase covers every iteration whole (the actor system and "
        "the driver exist before it). The differences from the program are chat's; the program's "
        "own CAF version is the one this follows where its versions differ.",
    .sources = {{"run_actor_run", "the chat application (sblessing/chat-app: its Pony and CAF versions)"}},
    .verifies = "every turn's action counts, its invitations and each client's decisions (their fold) "
                "against a sequential simulation of the same draws; every turn's deliveries between "
                "the simulation's bounds (a chat's members at the turn's start, less or not the leaves "
                "of the same turn); every announced delivery and join acknowledged, no completion after "
                "a turn's end, every compute right, every client's logout leaves counted, and the "
                "messages handled equal to the count the figures give",
    .params = schema(chat::own_params(), Timed::phase, caf_support::scheduler_params()),
    .metrics = chat::metrics(),
    .check = [](const Params& params) { chat::check_settings("caf_chat", params); },
    .run = run,
    .runtime = "caf",
    .work = chat::work,
});

}  // namespace
}  // namespace labctl::kernels::caf_chat
