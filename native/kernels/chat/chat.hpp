// What every chat kernel (ours, caf_chat) shares: the parametric chat application of "Run,
// Actor, Run" (its program, sblessing/chat-app). Its parameters, its generators and how they are
// seeded, the directories' befriending, a client's decision each turn, the compute job, the
// accumulator's tally, the sequential simulation of the same draws, and the answer, its
// metrics and its format: so that both runtimes are verified the same way.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../framework/kernel.hpp"
#include "../savina/random.hpp"

namespace labctl::kernels::chat {

// The program's generator (its pseudo_random / SimpleRand): Savina's 16-bit LCG. next(bound) is
// its next_int(bound) for bound > 0; the program's next_int(0) is the raw next().
using Generator = savina::PseudoRandom;

// What a client does in a turn; `nothing` also where a post or a leave finds the client in no
// chat (the program's None).
enum class Action : std::uint8_t { compute, post, leave, invite, nothing };
inline constexpr std::size_t kActions = 5;
inline constexpr const char* kActionNames[kActions] = {"computes", "posts", "departures", "invites", "nothings"};

// The compute job: the program's Fibonacci(35) by its recursion, checked against this.
inline constexpr std::uint8_t kFibonacciIndex = 35;
inline constexpr std::uint64_t kFibonacci35 = 9'227'465;

// A run's parameters.
struct Settings {
    std::uint32_t clients = 0;
    std::uint32_t directories = 0;
    std::uint32_t turns = 0;
    std::uint32_t iterations = 0;
    std::uint32_t compute = 0;  // percentages
    std::uint32_t post = 0;
    std::uint32_t leave = 0;
    std::uint32_t invite = 0;
    std::uint32_t befriend = 0;
    std::uint64_t seed = 0;
    bool buffering = true;
    std::uint64_t compute_repeats = 0;

    static Settings from(const Params& params) {
        Settings s;
        s.clients = std::uint32_t(params.integer("clients"));
        s.directories = std::uint32_t(params.integer("directories"));
        s.turns = std::uint32_t(params.integer("turns"));
        s.iterations = std::uint32_t(params.integer("iterations"));
        s.compute = std::uint32_t(params.integer("compute"));
        s.post = std::uint32_t(params.integer("post"));
        s.leave = std::uint32_t(params.integer("leave"));
        s.invite = std::uint32_t(params.integer("invite"));
        s.befriend = std::uint32_t(params.integer("befriend"));
        s.seed = std::uint64_t(params.integer("seed"));
        s.buffering = params.boolean("buffering");
        s.compute_repeats = std::uint64_t(params.integer("compute_repeats"));
        return s;
    }
};

// The program's BehaviorFactory: a draw in [0, 100) against cumulative thresholds.
class Thresholds {
public:
    explicit Thresholds(const Settings& s)
        : compute_(s.compute), post_(compute_ + s.post), leave_(post_ + s.leave), invite_(leave_ + s.invite) {}
    Action pick(std::uint64_t draw) const noexcept {
        if (draw < compute_) return Action::compute;
        if (draw < post_) return Action::post;
        if (draw < leave_) return Action::leave;
        if (draw < invite_) return Action::invite;
        return Action::nothing;
    }

private:
    std::uint64_t compute_, post_, leave_, invite_;
};

// The seeds of the directories' generators: the first `directories` values of a generator
// started at `seed` (the program's poker: SimpleRand(42).next() for each directory). A client's
// generator starts at its directory's next value when it logs in; the directory's befriending
// draws from the same generator after its logins.
inline std::vector<std::uint64_t> directory_seeds(std::uint64_t seed, std::uint32_t directories) {
    Generator top(seed);
    std::vector<std::uint64_t> seeds(directories);
    for (std::uint64_t& s : seeds) s = top.next();
    return seeds;
}

// Client `id` logs in at directory id % directories, as the program's poker sends it; a
// directory's clients log in in order of id.
inline std::uint32_t directory_of(std::uint32_t id, std::uint32_t directories) noexcept { return id % directories; }
inline std::uint32_t clients_of(std::uint32_t directory, const Settings& s) noexcept {
    return (s.clients - directory + s.directories - 1) / s.directories;
}

// A directory's befriending, as the program's: for each of its `n` clients f in order, passes
// over all its clients c, each drawing next(100) < percent (the draw made even where c is f),
// until f has befriended someone; each success befriends c and f both ways: befriend(c, f)
// is called (the directory tells c about f, then f about c). None if percent is 0. Positions
// are the clients' login order in the directory.
// The program loops for ever where a client can befriend nobody: with befriend = 1, a draw below
// 1 is a multiple of 4, which the 16-bit generator gives only every fourth draw, and in a
// directory of 2 or 4 clients (of some even numbers more) these fall on the same client every
// pass. The draws and the passes' positions repeat after 65536 / gcd(n, 65536) passes: a client
// with no friend by then never has one, and befriend_all throws Unfriended (the kernels' checks
// refuse such parameters first).
struct Unfriended : std::logic_error {
    Unfriended() : std::logic_error("chat: a client can befriend nobody in its directory") {}
};

template <class Befriend>
void befriend_all(Generator& random, std::uint32_t n, std::uint32_t percent, Befriend&& befriend) {
    if (percent == 0) return;
    const std::uint64_t period = 65'536 / std::gcd(std::uint64_t(n), std::uint64_t{65'536});
    for (std::uint32_t f = 0; f < n; ++f) {
        bool found = false;
        for (std::uint64_t pass = 0; !found; ++pass) {
            if (pass == period) throw Unfriended();
            for (std::uint32_t c = 0; c < n; ++c) {
                if (random.next(100) < percent && c != f) {
                    befriend(c, f);
                    found = true;
                }
            }
        }
    }
}

// A client's friends: each once, in the order they were first befriended (as the program's CAF
// version, which drops a repeat).
template <class Handle>
bool add_friend(std::vector<std::pair<std::uint32_t, Handle>>& friends, std::uint32_t id, Handle handle) {
    for (const auto& f : friends)
        if (f.first == id) return false;
    friends.emplace_back(id, std::move(handle));
    return true;
}

// A chat's id: the turn it was made in (within its iteration) and the client that made it (a
// client makes at most one chat a turn). A client keeps its chats ordered by id.
inline std::uint64_t chat_id(std::uint32_t turn, std::uint32_t creator, std::uint32_t clients) noexcept {
    return std::uint64_t(turn) * clients + creator;
}

template <class Handle>
void insert_chat(std::vector<std::pair<std::uint64_t, Handle>>& chats, std::uint64_t id, Handle handle) {
    auto at = std::lower_bound(chats.begin(), chats.end(), id, [](const std::pair<std::uint64_t, Handle>& c,
                                                                  std::uint64_t key) { return c.first < key; });
    chats.emplace(at, id, std::move(handle));
}

// The chats a client had at the start of turn `turn`: the first of its list, those made in an
// earlier turn. A chat made in the turn (the client invited to it by a friend who acted first)
// is left out of the turn's draw: it counts from the next turn, whatever the schedule.
template <class Handle>
std::size_t settled_chats(const std::vector<std::pair<std::uint64_t, Handle>>& chats, std::uint32_t turn,
                          std::uint32_t clients) {
    const std::uint64_t first_of_turn = chat_id(turn, 0, clients);
    return std::size_t(std::lower_bound(chats.begin(), chats.end(), first_of_turn,
                                        [](const std::pair<std::uint64_t, Handle>& c, std::uint64_t key) {
                                            return c.first < key;
                                        }) -
                       chats.begin());
}

template <class Handle>
bool erase_chat(std::vector<std::pair<std::uint64_t, Handle>>& chats, std::uint64_t id) {
    for (auto it = chats.begin(); it != chats.end(); ++it) {
        if (it->first == id) {
            chats.erase(it);
            return true;
        }
    }
    return false;
}

// A client's decision in a turn, from its generator and what it had at the turn's start (its
// settled chats' count, its friends' count), as the program's CAF client: first a chat's position
// (next(chats), the raw next() when it has none), then the action's draw next(100); an invite
// shuffles its friends' positions (for i = friends down to 1, swap i-1 with next(i)) and invites
// the first next(friends) of them (at least one).
struct Decision {
    Action action = Action::nothing;
    std::uint32_t chat = 0;                // the chat's position, for a post or a leave
    std::vector<std::uint32_t> invited;    // friends' positions, for an invite
};

inline Decision decide(Generator& random, const Thresholds& thresholds, std::size_t chats, std::size_t friends) {
    Decision d;
    if (chats == 0) random.next();
    else d.chat = random.next(std::uint32_t(chats));
    d.action = thresholds.pick(random.next(100));
    if ((d.action == Action::post || d.action == Action::leave) && chats == 0) d.action = Action::nothing;
    if (d.action == Action::invite) {
        if (friends == 0) throw std::logic_error("chat: a client with no friend drew an invite");
        std::vector<std::uint32_t> order(friends);
        std::iota(order.begin(), order.end(), 0u);
        for (std::size_t i = friends; i > 0; --i) std::swap(order[i - 1], order[random.next(std::uint32_t(i))]);
        std::uint32_t invitations = random.next(std::uint32_t(friends));
        if (invitations == 0) invitations = 1;
        order.resize(invitations);
        d.invited = std::move(order);
    }
    return d;
}

// A client's record of its decisions, folded turn after turn (FNV-1a over 64-bit words, from
// savina::kFnvBasis each iteration): the action's number, then the chat's id for a post or a
// leave, or the invitations and each invited friend's id for an invite.
inline std::uint64_t fold_action(std::uint64_t hash, Action action) noexcept {
    return savina::fnv_fold(hash, std::uint64_t(action));
}

// The program's Fibonacci, by its recursion (about 35 calls for 35).
inline std::uint64_t fibonacci(std::uint8_t x) noexcept {
    if (x <= 1) return x;
    const std::uint8_t j = x / 2;
    const std::uint64_t fib_j = fibonacci(j);
    const std::uint64_t fib_i = fibonacci(std::uint8_t(j - 1));
    if (x % 2 == 0) return fib_j * (fib_j + fib_i * 2);
    if (x % 4 == 1) return (fib_j * 2 + fib_i) * (fib_j * 2 - fib_i) + 2;
    return (fib_j * 2 + fib_i) * (fib_j * 2 - fib_i) - 2;
}

// A compute: `repeats` evaluations of Fibonacci(35), each checked; the wrong ones counted. The
// index passes through an empty asm statement each time, so the compiler can neither fold the
// call nor hoist it out of the loop (the program's fib_index does this). Defined once, in
// chat.cpp, and never inlined: every runtime written in C++ (ours, CAF) runs the same machine
// code for it. Inlined into each kernel's handler, GCC compiled the same source differently in
// each, and worse in both: the compute scenario on one thread (compute_repeats=1000) took ours
// 173.9 ms and CAF 163.9 ms inlined, 131.7 ms and 172.3 ms out of line (instructions at
// compute_repeats=100: ours 19.55M and 14.44M, CAF 24.15M and 21.83M).
[[gnu::noinline]] std::uint64_t compute_job(std::uint64_t repeats) noexcept;

// What one turn's accumulator saw.
struct TurnFigures {
    std::uint64_t actions[kActions] = {};
    std::uint64_t invitations = 0;       // announced by the invites
    std::uint64_t accepted = 0;          // acknowledged joins
    std::uint64_t announced = 0;         // deliveries announced: each post's members, each join's buffer
    std::uint64_t delivered = 0;         // deliveries acknowledged
    std::uint64_t wrong_computes = 0;
    std::uint64_t late = 0;              // messages after the turn had completed
    std::int64_t end_ns = 0;             // steady clock, when it completed
};

// The accumulator's side, on any runtime: the program's Accumulator. The turn is complete when
// every client's act is resolved (a compute, a leave or a nothing done, a post's members or an
// invite's invitations announced), every announced delivery and every announced invitation
// acknowledged. Each call returns true where it completes the turn.
class Tally {
public:
    explicit Tally(std::uint32_t clients) : clients_(clients) {}

    bool resolved(Action action, std::uint64_t wrong = 0) {
        count_message();
        ++figures_.actions[std::size_t(action)];
        figures_.wrong_computes += wrong;
        ++resolved_;
        return settle();
    }
    // A post to a chat of `members`: the post is resolved and its deliveries announced.
    bool posted(std::uint64_t members) {
        figures_.announced += members;
        return resolved(Action::post);
    }
    bool invited(std::uint64_t invitations) {
        figures_.invitations += invitations;
        return resolved(Action::invite);
    }
    bool delivered() {
        count_message();
        ++figures_.delivered;
        return settle();
    }
    // A join acknowledged by the client that joined, with the buffered posts it was sent first.
    bool accepted(std::uint64_t buffered) {
        count_message();
        ++figures_.accepted;
        figures_.announced += buffered;
        return settle();
    }

    bool complete() const noexcept { return complete_; }
    const TurnFigures& figures() const noexcept { return figures_; }
    // When the turn completed (steady clock): set by the runtime's accumulator.
    void ended_at(std::int64_t ns) noexcept { figures_.end_ns = ns; }

private:
    void count_message() noexcept {
        if (complete_) ++figures_.late;
    }
    bool settle() noexcept {
        if (complete_ || resolved_ != clients_ || figures_.accepted != figures_.invitations ||
            figures_.delivered != figures_.announced)
            return false;
        complete_ = true;
        return true;
    }

    const std::uint64_t clients_;
    std::uint64_t resolved_ = 0;
    bool complete_ = false;
    TurnFigures figures_;
};

inline std::int64_t steady_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// One turn as the sequential simulation has it (the same every iteration).
struct TurnPlan {
    std::uint64_t actions[kActions] = {};
    std::uint64_t invitations = 0;
    std::uint64_t deliveries_min = 0;  // every leave of the turn from a chat posted to before the post
    std::uint64_t deliveries_max = 0;  // every post before the leaves
};

// One iteration as the sequential simulation has it.
struct Plan {
    std::vector<TurnPlan> turns;
    std::uint64_t befriendings = 0;   // befriend messages the directories send
    std::uint64_t logout_leaves = 0;  // the chats the clients are in at the end of the turns
    std::uint64_t decisions = 0;      // the clients' decision folds, added up
    std::uint64_t chats = 0;          // made (one per invite)
    std::uint64_t most_live_chats = 0;

    std::uint64_t total(Action action) const noexcept {
        std::uint64_t sum = 0;
        for (const TurnPlan& t : turns) sum += t.actions[std::size_t(action)];
        return sum;
    }
    std::uint64_t invitations() const noexcept {
        std::uint64_t sum = 0;
        for (const TurnPlan& t : turns) sum += t.invitations;
        return sum;
    }
    // Whether every schedule delivers the same number of posts (no turn leaves a chat that is
    // posted to in it), and that number.
    bool deliveries_fixed() const noexcept {
        for (const TurnPlan& t : turns)
            if (t.deliveries_min != t.deliveries_max) return false;
        return true;
    }
    std::uint64_t deliveries_min() const noexcept {
        std::uint64_t sum = 0;
        for (const TurnPlan& t : turns) sum += t.deliveries_min;
        return sum;
    }
    std::uint64_t deliveries_max() const noexcept {
        std::uint64_t sum = 0;
        for (const TurnPlan& t : turns) sum += t.deliveries_max;
        return sum;
    }
};

// The sequential simulation of one iteration: every draw of the directories and the clients in
// the program's order, each turn's decisions from the state at the turn's start, then their
// effects (leaves, new chats and their joins). A chat that loses its last member is gone.
inline Plan simulate(const Settings& s) {
    struct Client {
        Generator random{0};
        std::vector<std::pair<std::uint32_t, std::uint32_t>> friends;  // (id, id)
        std::vector<std::pair<std::uint64_t, std::uint64_t>> chats;     // (chat id, chat id), by id
        std::uint64_t fold = savina::kFnvBasis;
    };
    struct ChatState {
        std::uint64_t members = 0;
    };
    const Thresholds thresholds(s);
    Plan plan;
    std::vector<Client> clients(s.clients);
    std::vector<std::vector<std::uint32_t>> logged(s.directories);  // each directory's clients, in login order
    std::vector<Generator> directories;
    for (std::uint64_t seed : directory_seeds(s.seed, s.directories)) directories.emplace_back(seed);
    for (std::uint32_t id = 0; id < s.clients; ++id) {
        const std::uint32_t d = directory_of(id, s.directories);
        clients[id].random = Generator(directories[d].next());
        logged[d].push_back(id);
    }
    for (std::uint32_t d = 0; d < s.directories; ++d) {
        const std::vector<std::uint32_t>& in = logged[d];
        befriend_all(directories[d], std::uint32_t(in.size()), s.befriend, [&](std::uint32_t c, std::uint32_t f) {
            add_friend(clients[in[c]].friends, in[f], in[f]);
            add_friend(clients[in[f]].friends, in[c], in[c]);
            plan.befriendings += 2;
        });
    }

    std::vector<std::pair<std::uint64_t, ChatState>> live;  // by id
    auto find_chat = [&live](std::uint64_t id) -> ChatState& {
        auto at = std::lower_bound(live.begin(), live.end(), id,
                                   [](const auto& c, std::uint64_t key) { return c.first < key; });
        if (at == live.end() || at->first != id) throw std::logic_error("chat: simulation lost a chat");
        return at->second;
    };
    for (std::uint32_t turn = 0; turn < s.turns; ++turn) {
        TurnPlan tp;
        std::vector<std::uint64_t> posted_to;                           // a chat id per post
        std::vector<std::pair<std::uint32_t, std::uint64_t>> leaving;   // (client, chat id)
        std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> made;  // (creator, invitees)
        for (std::uint32_t id = 0; id < s.clients; ++id) {
            Client& c = clients[id];
            const Decision d = decide(c.random, thresholds, c.chats.size(), c.friends.size());
            ++tp.actions[std::size_t(d.action)];
            c.fold = fold_action(c.fold, d.action);
            if (d.action == Action::post || d.action == Action::leave) {
                const std::uint64_t chat = c.chats[d.chat].first;
                c.fold = savina::fnv_fold(c.fold, chat);
                if (d.action == Action::post) posted_to.push_back(chat);
                else leaving.emplace_back(id, chat);
            } else if (d.action == Action::invite) {
                c.fold = savina::fnv_fold(c.fold, d.invited.size());
                std::vector<std::uint32_t> invitees;
                for (std::uint32_t position : d.invited) {
                    invitees.push_back(c.friends[position].first);
                    c.fold = savina::fnv_fold(c.fold, invitees.back());
                }
                tp.invitations += invitees.size();
                made.emplace_back(id, std::move(invitees));
            }
        }
        // A post reaches the members at the turn's start, less any that leave it in the turn
        // before the post arrives (the poster is not one of them: one action a turn).
        for (std::uint64_t chat : posted_to) {
            std::uint64_t leaves = 0;
            for (const auto& l : leaving) leaves += l.second == chat ? 1 : 0;
            const std::uint64_t members = find_chat(chat).members;
            tp.deliveries_max += members;
            tp.deliveries_min += members - leaves;
        }
        // At most alive in the turn: those at its start and those it makes.
        plan.most_live_chats = std::max<std::uint64_t>(plan.most_live_chats, live.size() + made.size());
        for (const auto& [id, chat] : leaving) {
            erase_chat(clients[id].chats, chat);
            if (--find_chat(chat).members == 0)
                live.erase(std::find_if(live.begin(), live.end(), [chat](const auto& c) { return c.first == chat; }));
        }
        for (const auto& [creator, invitees] : made) {
            const std::uint64_t id = chat_id(turn, creator, s.clients);
            live.emplace_back(id, ChatState{1 + invitees.size()});  // ids of a turn rise with their creator
            insert_chat(clients[creator].chats, id, id);
            for (std::uint32_t invitee : invitees) insert_chat(clients[invitee].chats, id, id);
        }
        plan.chats += made.size();
        plan.turns.push_back(tp);
    }
    for (const Client& c : clients) {
        plan.logout_leaves += c.chats.size();
        plan.decisions += c.fold;
    }
    return plan;
}

// Whether every directory's befriending ends (see Unfriended): replays the directories' draws
// alone, where that costs at most `budget` draws (about clients^2 / directories); true where it
// would cost more (the run then finds out, and fails).
inline bool befriending_ends(const Settings& s, std::uint64_t budget) {
    if (s.befriend == 0) return true;
    const std::uint64_t per_directory = s.clients / s.directories + 1;
    if (per_directory * per_directory * s.directories > budget) return true;
    const std::vector<std::uint64_t> seeds = directory_seeds(s.seed, s.directories);
    for (std::uint32_t d = 0; d < s.directories; ++d) {
        Generator random(seeds[d]);
        const std::uint32_t n = clients_of(d, s);
        for (std::uint32_t i = 0; i < n; ++i) random.next();  // the logins
        try {
            befriend_all(random, n, s.befriend, [](std::uint32_t, std::uint32_t) {});
        } catch (const Unfriended&) {
            return false;
        }
    }
    return true;
}

// The messages one run handles, every handler run: with `deliveries` over all iterations.
// Per iteration: the driver's Ready, TurnDone, Finished and Closed; the directories' Login,
// Befriend, Poke, Disconnect and ClientLeft; the clients' Befriend, Act, Forward, Accepted, Left
// and Logout; the chats' Post, Join and Leave; the accumulators' resolutions, acknowledgements
// and Close. And the driver's one Start.
inline std::uint64_t messages(const Settings& s, const Plan& plan, std::uint64_t deliveries) {
    const std::uint64_t d = s.directories, t = s.turns, c = s.clients;
    const std::uint64_t joins = plan.invitations(), leaves = plan.total(Action::leave);
    const std::uint64_t per_iteration = 4 * d + 3 * t + t * d + 3 * c + plan.befriendings + 2 * t * c + 3 * joins +
                                        2 * (leaves + plan.logout_leaves) + plan.total(Action::post);
    return 1 + s.iterations * per_iteration + 2 * deliveries;
}

// What a run gathered: every turn's figures (iteration after iteration), the turns' start times
// (steady clock), and over the iterations the clients' decision folds added up and the chats
// they left when they logged out.
struct Outcome {
    std::vector<TurnFigures> turns;
    std::vector<std::int64_t> started_ns;
    std::uint64_t decisions = 0;
    std::uint64_t logout_leaves = 0;
};

// The answer's figures.
struct Answer {
    std::uint64_t actions[kActions] = {};
    std::uint64_t invitations = 0;
    std::uint64_t logout_leaves = 0;
    std::uint64_t decisions = 0;
    std::uint64_t miscounted_turns = 0;       // actions or accepted invitations unlike the simulation's
    std::uint64_t deliveries_off_turns = 0;   // deliveries outside the simulation's bounds
    std::uint64_t unacknowledged = 0;         // deliveries or joins announced and not acknowledged, or more
    std::uint64_t late = 0;
    std::uint64_t wrong_computes = 0;
    std::uint64_t stray_messages = 0;         // handled beyond (or short of) the count the figures give
};

inline std::string describe(const Settings& s, const Answer& a) {
    char decisions[17];
    std::snprintf(decisions, sizeof decisions, "%016llx", static_cast<unsigned long long>(a.decisions));
    std::string text = "iterations=" + std::to_string(s.iterations) + " turns=" + std::to_string(s.turns) +
                       " clients=" + std::to_string(s.clients);
    for (std::size_t i = 0; i < kActions; ++i)
        text += std::string(" ") + kActionNames[i] + "=" + std::to_string(a.actions[i]);
    return text + " invitations=" + std::to_string(a.invitations) + " logout_leaves=" +
           std::to_string(a.logout_leaves) + " decisions=" + decisions + " miscounted_turns=" +
           std::to_string(a.miscounted_turns) + " deliveries_off_turns=" + std::to_string(a.deliveries_off_turns) +
           " unacknowledged=" + std::to_string(a.unacknowledged) + " late=" + std::to_string(a.late) +
           " wrong_computes=" + std::to_string(a.wrong_computes) + " stray_messages=" +
           std::to_string(a.stray_messages);
}

// What a correct run answers: the simulation's counts, `iterations` times over.
inline Answer expected_answer(const Settings& s, const Plan& plan) {
    Answer a;
    for (std::size_t i = 0; i < kActions; ++i) a.actions[i] = s.iterations * plan.total(Action(i));
    a.invitations = s.iterations * plan.invitations();
    a.logout_leaves = s.iterations * plan.logout_leaves;
    a.decisions = s.iterations * plan.decisions;
    return a;
}

// What a correct run of any runtime states, from the simulation: its answer (the counts depend
// on no schedule) and the messages it handles, which the schedule decides in part where a turn
// posts to a chat that a member leaves in it (each delivery a Forward and its acknowledgement):
// from the simulation's fewest deliveries to its most, exact where they are the same.
inline Expectation expectation(const Settings& s, const Plan& plan) {
    const std::uint64_t fewest = messages(s, plan, s.iterations * plan.deliveries_min());
    const std::uint64_t most = messages(s, plan, s.iterations * plan.deliveries_max());
    return {.answer = describe(s, expected_answer(s, plan)),
            .messages = fewest,
            .messages_most = most != fewest ? most : 0};
}

// A percentile of sorted samples (the nearest rank, as ping_pong's).
inline double percentile(const std::vector<std::int64_t>& sorted, double p) {
    const auto rank = std::size_t(p * double(sorted.size() - 1) + 0.5);
    return double(sorted[std::min(rank, sorted.size() - 1)]);
}

inline double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The quality of service as the program's Pony version computes it: for each turn, the standard
// deviation (over the count, not the count less one) of its durations across the iterations;
// then the median of those over the turns (sorted: the program takes the middle entry as they
// come). `durations` iteration after iteration, `turns` each.
inline double quality_of_service(const std::vector<std::int64_t>& durations, std::uint32_t turns) {
    const std::size_t iterations = durations.size() / turns;
    std::vector<double> spreads;
    for (std::uint32_t t = 0; t < turns; ++t) {
        double mean = 0;
        for (std::size_t i = 0; i < iterations; ++i) mean += double(durations[i * turns + t]);
        mean /= double(iterations);
        double squares = 0;
        for (std::size_t i = 0; i < iterations; ++i) {
            const double d = double(durations[i * turns + t]) - mean;
            squares += d * d;
        }
        spreads.push_back(std::sqrt(squares / double(iterations)));
    }
    return median(std::move(spreads));
}

// A run's result, once its phase is in `result`: the answer from the accumulators' figures
// held to the simulation's, the metrics, and `handled`, every handler run.
inline void report(Result& result, const Settings& s, const Plan& plan, const Outcome& outcome,
                   std::uint64_t handled) {
    Answer a;
    a.decisions = outcome.decisions;
    std::uint64_t deliveries = 0;
    std::vector<std::int64_t> durations;
    for (std::size_t k = 0; k < outcome.turns.size(); ++k) {
        const TurnFigures& f = outcome.turns[k];
        const TurnPlan& p = plan.turns[k % s.turns];
        bool same = f.accepted == p.invitations && f.invitations == p.invitations;
        for (std::size_t i = 0; i < kActions; ++i) {
            a.actions[i] += f.actions[i];
            same = same && f.actions[i] == p.actions[i];
        }
        a.miscounted_turns += same ? 0 : 1;
        a.invitations += f.accepted;
        a.deliveries_off_turns += f.delivered < p.deliveries_min || f.delivered > p.deliveries_max ? 1 : 0;
        a.unacknowledged += (f.announced > f.delivered ? f.announced - f.delivered : f.delivered - f.announced) +
                            (f.invitations > f.accepted ? f.invitations - f.accepted : f.accepted - f.invitations);
        a.late += f.late;
        a.wrong_computes += f.wrong_computes;
        deliveries += f.delivered;
        durations.push_back(f.end_ns - outcome.started_ns[k]);
    }
    if (outcome.turns.size() != std::size_t(s.turns) * s.iterations)
        a.miscounted_turns += std::size_t(s.turns) * s.iterations - outcome.turns.size();
    a.logout_leaves = outcome.logout_leaves;
    const std::uint64_t accounted = messages(s, plan, deliveries);
    a.stray_messages = handled > accounted ? handled - accounted : accounted - handled;

    result.messages_processed = handled;
    result.answer = describe(s, a);
    result.expected = describe(s, expected_answer(s, plan));
    for (std::size_t i = 0; i < kActions; ++i) result.metrics.push_back({kActionNames[i], double(a.actions[i])});
    result.metrics.push_back({"deliveries", double(deliveries)});
    if (!durations.empty()) {
        std::vector<std::int64_t> sorted = durations;
        std::sort(sorted.begin(), sorted.end());
        result.metrics.push_back({"turn_p50_ns", percentile(sorted, 0.50)});
        result.metrics.push_back({"turn_p99_ns", percentile(sorted, 0.99)});
        result.metrics.push_back({"turn_max_ns", double(sorted.back())});
        if (s.iterations >= 2) result.metrics.push_back({"turn_qos_ns", quality_of_service(durations, s.turns)});
    }
}

inline std::vector<MetricSpec> metrics() {
    return {{.name = "computes"},
            {.name = "posts"},
            {.name = "deliveries"},
            {.name = "departures"},
            {.name = "invites"},
            {.name = "nothings"},
            {.name = "turn_p50_ns"},
            {.name = "turn_p99_ns"},
            {.name = "turn_max_ns"},
            {.name = "turn_qos_ns", .absent_when = "iterations = 1"}};
}

// The parameters' checks beyond their ranges, the program's (its CAF version's).
inline void check_settings(const std::string& kernel, const Params& params) {
    const auto compute = params.integer("compute"), post = params.integer("post");
    const auto leave = params.integer("leave"), invite = params.integer("invite");
    if (compute + post + leave + invite > 100)
        throw ParamError(kernel, "compute",
                         "parameters 'compute' (" + std::to_string(compute) + "), 'post' (" + std::to_string(post) +
                             "), 'leave' (" + std::to_string(leave) + ") and 'invite' (" + std::to_string(invite) +
                             ") are percentages of the turns: their sum must be at most 100");
    const auto clients = params.integer("clients"), directories = params.integer("directories");
    if (clients < 2 * directories)
        throw ParamError(kernel, "clients",
                         "parameter 'clients' (" + std::to_string(clients) + ") must be at least twice " +
                             "'directories' (" + std::to_string(directories) +
                             "): each directory needs two clients to befriend");
    if (invite > 0 && params.integer("befriend") == 0)
        throw ParamError(kernel, "befriend",
                         "parameter 'befriend' must be above 0 where 'invite' (" + std::to_string(invite) +
                             ") is: a client invites its friends");
    if (!befriending_ends(Settings::from(params), 100'000'000))
        throw ParamError(kernel, "befriend",
                         "parameter 'befriend' (" + std::to_string(params.integer("befriend")) + ") with 'seed' (" +
                             std::to_string(params.integer("seed")) + "), 'clients' (" + std::to_string(clients) +
                             ") and 'directories' (" + std::to_string(directories) +
                             "): a client's befriending would never end (the program loops for ever)");
}

// About how many messages a run handles, from the parameters alone (no simulation: the
// befriending's cost grows with the square of the clients per directory). A client in a
// directory of n has about 2 (n - 1) befriend / 100 friends; chats and their members are guessed
// from the invites' average size (half the friends), a post's deliveries as an invite's chat.
inline double work(const Params& params) {
    const Settings s = Settings::from(params);
    const double c = s.clients, t = s.turns, d = s.directories;
    const double n = c / d;
    const double friends = std::max(1.0, 2 * (n - 1) * s.befriend / 100.0);
    const double members = 1 + std::max(1.0, friends / 2);
    const double acts = t * c;
    const double posts = acts * s.post / 100.0, invites = acts * s.invite / 100.0, leaves = acts * s.leave / 100.0;
    const double befriendings = 2 * n * std::max(1.0, (n - 1) * s.befriend / 100.0) * d * (s.befriend > 0 ? 1 : 0);
    const double per_iteration = 4 * d + 3 * t + t * d + 3 * c + befriendings + 2 * acts + 3 * invites * (members - 1) +
                                 2 * (leaves + invites * members) + posts * (1 + 2 * members);
    return 1 + s.iterations * per_iteration;
}

inline std::vector<ParamSpec> own_params() {
    auto percent = [](const char* name, std::int64_t value, const std::string& help) {
        return ParamSpec{.name = name,
                         .type = ParamType::integer,
                         .default_value = value,
                         .help = help,
                         .minimum = 0,
                         .maximum = 100};
    };
    return {
        integer_param("clients", 1024, {2, 1'000'000},
                      "clients, client i logging in at directory i % directories (the program's --clients); at "
                      "least twice `directories`"),
        integer_param("directories", 8, {1, 500'000},
                      "directories, each holding its clients and befriending them among themselves (the program's "
                      "--directories)"),
        integer_param("turns", 32, {1, 1'000'000},
                      "turns of an iteration, one after another; each client acts once a turn (the program's --turns)"),
        integer_param("iterations", 32, {1, 100'000},
                      "times the whole application runs, each from a fresh start with the same draws (the "
                      "program's --run); turn_qos_ns needs two or more"),
        percent("compute", 55, "percentage of a turn's draws that compute (the program's --compute)"),
        percent("post", 25,
                "percentage of a turn's draws that post to one of the client's chats (the program's --post)"),
        percent("leave", 10,
                "percentage of a turn's draws that leave one of the client's chats (the program's --leave)"),
        percent("invite", 10,
                "percentage of a turn's draws that make a chat and invite friends into it (the program's --invite); "
                "compute + post + leave + invite is at most 100, the rest of the draws do nothing"),
        percent("befriend", 10,
                "percentage chance of each draw of a directory's befriending (the program's --befriend); 0: no "
                "friends, then `invite` must be 0"),
        integer_param("seed", 42, {0, 1'000'000'000},
                      "start of the generator that gives each directory its generator's start (the program's 42); "
                      "every iteration starts from it again"),
        {.name = "buffering",
         .type = ParamType::boolean,
         .default_value = true,
         .help = "a chat keeps every post and sends them to a member who joins (the program's default; off: its "
                 "BENCH_NO_BUFFERED_CHATS)"},
        integer_param("compute_repeats", 10'000, {0, 100'000'000},
                      "evaluations of Fibonacci(35) by the program's recursion that a compute makes, each checked "
                      "against 9,227,465 (the program's 10,000)"),
    };
}

// The agents alive at most at once in a run (for a dispatcher with a thread per agent): the
// driver, the directories, the clients, a turn's accumulators (they live to the iteration's
// end), and the chats; the chats' count needs the simulation, made only where it matters.
inline std::uint64_t most_agents(const Settings& s, bool exact) {
    const std::uint64_t fixed = 1 + std::uint64_t(s.directories) + s.clients + s.turns;
    if (s.invite == 0) return fixed;
    if (!exact) return fixed + std::uint64_t(s.clients) * s.turns;
    return fixed + simulate(s).most_live_chats;
}

// The messages, one protocol for ours and caf_chat (its CAF port), by who receives them.

// The driver's (the program's Poker).
struct Start {};
struct Ready {};
struct TurnDone {};
struct Finished {
    std::uint64_t decisions;
    std::uint64_t logout_leaves;
};
struct Closed {
    std::uint32_t turn;
    TurnFigures figures;
};

// A directory's.
struct Login {
    std::uint32_t id;
};
struct BefriendAll {};
struct Disconnect {};
struct ClientLeft {
    std::uint64_t decisions;
    std::uint64_t logout_leaves;
};

// A client's.
struct Logout {};

// An accumulator's.
struct Resolved {
    Action action;
    std::uint64_t wrong;  // a compute's wrong results
};
struct Posted {
    std::uint64_t members;
};
struct Invited {
    std::uint64_t invitations;
};
struct Delivered {};
struct AcceptedAck {
    std::uint64_t buffered;
};
struct Close {};

// The messages that carry an actor, on how the runtime addresses each kind (ours: a pointer to
// its agent; CAF's: caf::actor).
template <class Accumulator, class Client, class Chat>
struct Protocol {
    // A directory's.
    struct Poke {
        Accumulator accumulator;
        std::uint32_t turn;
    };

    // A client's.
    struct Befriend {
        std::uint32_t id;
        Client client;
    };
    struct Act {
        Accumulator accumulator;
        std::uint32_t turn;
    };
    struct Forward {
        Chat chat;
        std::uint32_t payload;
        Accumulator accumulator;
    };
    struct Accepted {
        Chat chat;
        std::uint64_t id;
        Accumulator accumulator;
        std::uint64_t buffered;  // posts forwarded to the client before this
    };
    struct Left {
        std::uint64_t id;
        bool logout;
        Accumulator accumulator;  // none when logging out
    };

    // A chat's.
    struct Post {
        Accumulator accumulator;
        std::uint32_t payload;  // the poster's id (the program's is an empty byte array)
    };
    struct Join {
        Client client;
        Accumulator accumulator;
    };
    struct Leave {
        Client client;
        bool logout;
        Accumulator accumulator;
    };
};

}  // namespace labctl::kernels::chat
