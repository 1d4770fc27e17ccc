//! chat: the parametric chat application of "Run, Actor, Run" (AGERE 2019; its program,
//! sblessing/chat-app) on tokio, as ours (native/kernels/chat/chat.cpp, chat.hpp): a driver, the
//! directories, the clients, their chats and an accumulator per turn, each a task owning the
//! receiving end of an unbounded mpsc channel, its mailbox, handling one message at a time in a
//! `match` on its own message type; whoever sends to it holds a Sender. The messages are ours. The
//! same generators from the same seed (Savina's 16-bit LCG, src/savina/random.rs), the same
//! befriending, the same decision per client per turn and the same sequential simulation of those
//! draws, ported word for word: every turn is held to it in the answer as ours holds it
//! (miscounted_turns, deliveries_off_turns, stray_messages), the answer compared here with the
//! simulation's (a wrong one exits 1) and by labctl with our kernel's expectation.
//!
//! Measured phase (elapsed_ns), as ours: from the driver's Start (the driver's task spawned before
//! it) to its last Closed, every iteration whole: the directories made, the clients logged in and
//! befriended, every turn, every logout, the accumulators closed. tokio's scheduler and its threads
//! exist before the clock starts, as our dispatcher's. Every task counts the messages it handles
//! and adds them to the run's count as it ends; the root waits, after the clock, for every task to
//! have ended (each holds a share of the run's World, whose last drop closes a channel the root
//! awaits: tokio's idiom for waiting on tasks it has no handle of). Differences from ours, beyond
//! tokio's scheduler: the mailboxes are unbounded, as ours (so no sender ever waits and no two
//! actors can wait on each other's full mailbox, whatever a turn's fan-in; Go's are bounded and
//! sized for that); a chat finds a leaving member by its Sender (`same_channel`), ours by its
//! address; a Forward carries no chat (ours and Go's carry one its client never reads: here a
//! Sender's clone, an atomic count, per delivery).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

use crate::ping_pong::percentile;
use crate::savina::random::{fnv_fold, PseudoRandom, FNV_BASIS};
use crate::{fail, fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

type Mailbox<T> = UnboundedSender<T>;

/// What a client does in a turn, numbered as ours (its fold takes the number); `Nothing` also
/// where a post or a leave finds the client in no chat.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    Compute = 0,
    Post = 1,
    Leave = 2,
    Invite = 3,
    Nothing = 4,
}

const ACTIONS: usize = 5;
const ACTION_NAMES: [&str; ACTIONS] = ["computes", "posts", "departures", "invites", "nothings"];

/// The compute job: the program's Fibonacci(35) by its recursion, checked against this.
const FIBONACCI_INDEX: u8 = 35;
const FIBONACCI_35: u64 = 9_227_465;

#[derive(Clone, Copy)]
struct Settings {
    clients: u32,
    directories: u32,
    turns: u32,
    iterations: u32,
    compute: u32,
    post: u32,
    leave: u32,
    invite: u32,
    befriend: u32,
    seed: u64,
    buffering: bool,
    compute_repeats: u64,
    /// Fault::compute: a compute evaluates Fibonacci(34), every evaluation wrong.
    fibonacci_index: u8,
}

impl Settings {
    fn from(params: &Params, fibonacci_index: u8) -> Settings {
        let int = |name: &str| params[name] as u32;
        Settings {
            clients: int("clients"),
            directories: int("directories"),
            turns: int("turns"),
            iterations: int("iterations"),
            compute: int("compute"),
            post: int("post"),
            leave: int("leave"),
            invite: int("invite"),
            befriend: int("befriend"),
            seed: params["seed"] as u64,
            buffering: params.flag("buffering"),
            compute_repeats: params["compute_repeats"] as u64,
            fibonacci_index,
        }
    }
}

/// What ours refuses beyond the ranges (chat.hpp's check_settings), naming the parameters; a
/// befriending that never ends is refused by the simulation.
fn check(s: &Settings) {
    if s.compute + s.post + s.leave + s.invite > 100 {
        fail(&format!(
            "params compute ({}), post ({}), leave ({}) and invite ({}) are percentages of the turns: their sum \
             must be at most 100",
            s.compute, s.post, s.leave, s.invite
        ));
    }
    if u64::from(s.clients) < 2 * u64::from(s.directories) {
        fail(&format!(
            "param clients ({}) must be at least twice directories ({}): each directory needs two clients to \
             befriend",
            s.clients, s.directories
        ));
    }
    if s.invite > 0 && s.befriend == 0 {
        fail(&format!("param befriend must be above 0 where invite ({}) is: a client invites its friends", s.invite));
    }
}

/// The program's BehaviorFactory: a draw in [0, 100) against cumulative thresholds.
#[derive(Clone, Copy)]
struct Thresholds {
    compute: u64,
    post: u64,
    leave: u64,
    invite: u64,
}

impl Thresholds {
    fn new(s: &Settings) -> Thresholds {
        let compute = u64::from(s.compute);
        let post = compute + u64::from(s.post);
        let leave = post + u64::from(s.leave);
        Thresholds { compute, post, leave, invite: leave + u64::from(s.invite) }
    }

    fn pick(&self, draw: u64) -> Action {
        if draw < self.compute {
            Action::Compute
        } else if draw < self.post {
            Action::Post
        } else if draw < self.leave {
            Action::Leave
        } else if draw < self.invite {
            Action::Invite
        } else {
            Action::Nothing
        }
    }
}

/// The seeds of the directories' generators: the first `directories` values of a generator
/// started at `seed`; a client's generator starts at its directory's next value at login.
fn directory_seeds(seed: u64, directories: u32) -> Vec<u64> {
    let mut top = PseudoRandom(seed);
    (0..directories).map(|_| top.next_value()).collect()
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let r = a % b;
        a = b;
        b = r;
    }
    a
}

/// A client can befriend nobody in its directory: the program loops for ever.
struct Unfriended;

/// A directory's befriending, as ours: for each of its n clients f in order, passes over all its
/// clients c, each drawing next(100) < percent (the draw made even where c is f), until f has
/// befriended someone; each success calls befriend(c, f). The draws and the passes' positions
/// repeat after 65536 / gcd(n, 65536) passes: past them, Unfriended.
fn befriend_all(random: &mut PseudoRandom, n: u32, percent: u32, mut befriend: impl FnMut(u32, u32))
    -> Result<(), Unfriended> {
    if percent == 0 {
        return Ok(());
    }
    let period = 65_536 / gcd(u64::from(n), 65_536);
    for f in 0..n {
        let mut found = false;
        let mut pass = 0;
        while !found {
            if pass == period {
                return Err(Unfriended);
            }
            for c in 0..n {
                if random.next(100) < u64::from(percent) && c != f {
                    befriend(c, f);
                    found = true;
                }
            }
            pass += 1;
        }
    }
    Ok(())
}

/// A client's friends: each once, in the order first befriended.
fn add_friend<H>(friends: &mut Vec<(u32, H)>, id: u32, handle: H) {
    if !friends.iter().any(|(known, _)| *known == id) {
        friends.push((id, handle));
    }
}

/// A chat's id: the turn it was made in and its maker; a client keeps its chats ordered by it.
fn chat_id(turn: u32, creator: u32, clients: u32) -> u64 {
    u64::from(turn) * u64::from(clients) + u64::from(creator)
}

fn insert_chat<H>(chats: &mut Vec<(u64, H)>, id: u64, handle: H) {
    let at = chats.partition_point(|(key, _)| *key < id);
    chats.insert(at, (id, handle));
}

/// The chats a client had at the start of `turn`: the first of its list, those made before it.
fn settled_chats<H>(chats: &[(u64, H)], turn: u32, clients: u32) -> usize {
    let first_of_turn = chat_id(turn, 0, clients);
    chats.partition_point(|(key, _)| *key < first_of_turn)
}

fn erase_chat<H>(chats: &mut Vec<(u64, H)>, id: u64) {
    if let Some(at) = chats.iter().position(|(key, _)| *key == id) {
        chats.remove(at);
    }
}

/// A client's decision in a turn (chat.hpp's decide): a chat's position drawn (the bare next()
/// with none), then the action; an invite shuffles its friends' positions and invites the first
/// next(friends) of them (at least one).
struct Decision {
    action: Action,
    chat: usize,
    invited: Vec<usize>,
}

fn decide(random: &mut PseudoRandom, thresholds: &Thresholds, chats: usize, friends: usize) -> Decision {
    let mut d = Decision { action: Action::Nothing, chat: 0, invited: Vec::new() };
    if chats == 0 {
        random.next_value();
    } else {
        d.chat = random.next(chats as u64) as usize;
    }
    d.action = thresholds.pick(random.next(100));
    if (d.action == Action::Post || d.action == Action::Leave) && chats == 0 {
        d.action = Action::Nothing;
    }
    if d.action == Action::Invite {
        assert!(friends > 0, "chat: a client with no friend drew an invite");
        let mut order: Vec<usize> = (0..friends).collect();
        for i in (1..=friends).rev() {
            let j = random.next(i as u64) as usize;
            order.swap(i - 1, j);
        }
        let invitations = (random.next(friends as u64) as usize).max(1);
        order.truncate(invitations);
        d.invited = order;
    }
    d
}

/// The program's Fibonacci, by its recursion.
fn fibonacci(x: u8) -> u64 {
    if x <= 1 {
        return u64::from(x);
    }
    let j = x / 2;
    let (fib_j, fib_i) = (fibonacci(j), fibonacci(j - 1));
    if x % 2 == 0 {
        fib_j * (fib_j + fib_i * 2)
    } else if x % 4 == 1 {
        (fib_j * 2 + fib_i) * (fib_j * 2 - fib_i) + 2
    } else {
        (fib_j * 2 + fib_i) * (fib_j * 2 - fib_i) - 2
    }
}

/// A compute: `repeats` evaluations of Fibonacci(index), each checked against Fibonacci(35); the
/// wrong ones counted. The index is read through a volatile load each time, so the compiler can
/// neither fold the call nor hoist it out of the loop (ours passes it through an empty asm).
fn compute_job(repeats: u64, index: u8) -> u64 {
    let mut wrong = 0;
    for _ in 0..repeats {
        // SAFETY: a read of a live local.
        let index = unsafe { std::ptr::read_volatile(&index) };
        wrong += u64::from(fibonacci(index) != FIBONACCI_35);
    }
    wrong
}

/// What one turn's accumulator saw (chat.hpp's TurnFigures).
#[derive(Clone, Copy, Default)]
struct TurnFigures {
    actions: [u64; ACTIONS],
    invitations: u64, // announced by the invites
    accepted: u64,    // acknowledged joins
    announced: u64,   // deliveries announced: each post's members, each join's buffer
    delivered: u64,   // deliveries acknowledged
    wrong_computes: u64,
    late: u64, // messages after the turn had completed
    end_ns: u64,
}

/// The accumulator's side (chat.hpp's Tally): the turn is complete when every client's act is
/// resolved, every announced delivery and every announced invitation acknowledged. Each call
/// returns true where it completes the turn.
struct Tally {
    clients: u64,
    resolved: u64,
    complete: bool,
    figures: TurnFigures,
}

impl Tally {
    fn count_message(&mut self) {
        if self.complete {
            self.figures.late += 1;
        }
    }

    fn settle(&mut self) -> bool {
        let f = &self.figures;
        if self.complete || self.resolved != self.clients || f.accepted != f.invitations || f.delivered != f.announced {
            return false;
        }
        self.complete = true;
        true
    }

    fn resolved(&mut self, action: Action, wrong: u64) -> bool {
        self.count_message();
        self.figures.actions[action as usize] += 1;
        self.figures.wrong_computes += wrong;
        self.resolved += 1;
        self.settle()
    }

    fn posted(&mut self, members: u64) -> bool {
        self.figures.announced += members;
        self.resolved(Action::Post, 0)
    }

    fn invited(&mut self, invitations: u64) -> bool {
        self.figures.invitations += invitations;
        self.resolved(Action::Invite, 0)
    }

    fn delivered(&mut self) -> bool {
        self.count_message();
        self.figures.delivered += 1;
        self.settle()
    }

    fn accepted(&mut self, buffered: u64) -> bool {
        self.count_message();
        self.figures.accepted += 1;
        self.figures.announced += buffered;
        self.settle()
    }
}

/// One turn as the sequential simulation has it (the same every iteration).
#[derive(Clone, Copy, Default)]
struct TurnPlan {
    actions: [u64; ACTIONS],
    invitations: u64,
    deliveries_min: u64, // every leave of the turn from a chat posted to before the post
    deliveries_max: u64, // every post before the leaves
}

/// One iteration as the sequential simulation has it.
#[derive(Default)]
struct Plan {
    turns: Vec<TurnPlan>,
    befriendings: u64,  // befriend messages the directories send
    logout_leaves: u64, // the chats the clients are in at the end of the turns
    decisions: u64,     // the clients' decision folds, added up
}

impl Plan {
    fn total(&self, action: Action) -> u64 {
        self.turns.iter().map(|t| t.actions[action as usize]).sum()
    }

    fn invitations(&self) -> u64 {
        self.turns.iter().map(|t| t.invitations).sum()
    }
}

/// The sequential simulation of one iteration (chat.hpp's simulate): every draw of the
/// directories and the clients in the program's order, each turn's decisions from the state at
/// the turn's start, then their effects (leaves, new chats and their joins).
fn simulate(s: &Settings) -> Result<Plan, Unfriended> {
    struct Client {
        random: PseudoRandom,
        friends: Vec<(u32, ())>,
        chats: Vec<(u64, ())>,
        fold: u64,
    }
    let thresholds = Thresholds::new(s);
    let mut plan = Plan::default();
    let mut directories: Vec<PseudoRandom> =
        directory_seeds(s.seed, s.directories).into_iter().map(PseudoRandom).collect();
    let mut logged: Vec<Vec<u32>> = vec![Vec::new(); s.directories as usize];
    let mut clients: Vec<Client> = (0..s.clients)
        .map(|id| {
            let d = (id % s.directories) as usize;
            logged[d].push(id);
            Client { random: PseudoRandom(directories[d].next_value()), friends: Vec::new(), chats: Vec::new(),
                     fold: FNV_BASIS }
        })
        .collect();
    for (d, random) in directories.iter_mut().enumerate() {
        let within = &logged[d];
        let mut befriendings = 0;
        befriend_all(random, within.len() as u32, s.befriend, |c, f| {
            let (c, f) = (within[c as usize], within[f as usize]);
            add_friend(&mut clients[c as usize].friends, f, ());
            add_friend(&mut clients[f as usize].friends, c, ());
            befriendings += 2;
        })?;
        plan.befriendings += befriendings;
    }
    let mut members: HashMap<u64, u64> = HashMap::new(); // the live chats' members
    for turn in 0..s.turns {
        let mut tp = TurnPlan::default();
        let mut posted_to: Vec<u64> = Vec::new();
        let mut leaving: Vec<(u32, u64)> = Vec::new(); // (client, chat)
        let mut made: Vec<(u32, Vec<u32>)> = Vec::new(); // (creator, invitees)
        for id in 0..s.clients {
            let c = &mut clients[id as usize];
            let d = decide(&mut c.random, &thresholds, c.chats.len(), c.friends.len());
            tp.actions[d.action as usize] += 1;
            c.fold = fnv_fold(c.fold, d.action as u64);
            match d.action {
                Action::Post | Action::Leave => {
                    let chat = c.chats[d.chat].0;
                    c.fold = fnv_fold(c.fold, chat);
                    if d.action == Action::Post {
                        posted_to.push(chat);
                    } else {
                        leaving.push((id, chat));
                    }
                }
                Action::Invite => {
                    c.fold = fnv_fold(c.fold, d.invited.len() as u64);
                    let mut invitees = Vec::with_capacity(d.invited.len());
                    for &position in &d.invited {
                        let friend = c.friends[position].0;
                        invitees.push(friend);
                        c.fold = fnv_fold(c.fold, u64::from(friend));
                    }
                    tp.invitations += invitees.len() as u64;
                    made.push((id, invitees));
                }
                Action::Compute | Action::Nothing => {}
            }
        }
        // A post reaches the members at the turn's start, less any that leave it in the turn
        // before the post arrives (the poster is not one of them: one action a turn).
        for chat in &posted_to {
            let gone = leaving.iter().filter(|(_, left)| left == chat).count() as u64;
            let here = *members.get(chat).expect("chat: simulation lost a chat");
            tp.deliveries_max += here;
            tp.deliveries_min += here - gone;
        }
        for &(client, chat) in &leaving {
            erase_chat(&mut clients[client as usize].chats, chat);
            let left = members.get_mut(&chat).expect("chat: simulation lost a chat");
            *left -= 1;
            if *left == 0 {
                members.remove(&chat);
            }
        }
        for (creator, invitees) in &made {
            let id = chat_id(turn, *creator, s.clients);
            members.insert(id, 1 + invitees.len() as u64);
            insert_chat(&mut clients[*creator as usize].chats, id, ());
            for &invitee in invitees {
                insert_chat(&mut clients[invitee as usize].chats, id, ());
            }
        }
        plan.turns.push(tp);
    }
    for c in &clients {
        plan.logout_leaves += c.chats.len() as u64;
        plan.decisions = plan.decisions.wrapping_add(c.fold);
    }
    Ok(plan)
}

/// The messages one run handles, every handler run, with `deliveries` over all iterations
/// (chat.hpp's messages).
fn messages(s: &Settings, plan: &Plan, deliveries: u64) -> u64 {
    let (d, t, c) = (u64::from(s.directories), u64::from(s.turns), u64::from(s.clients));
    let (joins, leaves) = (plan.invitations(), plan.total(Action::Leave));
    let per_iteration = 4 * d + 3 * t + t * d + 3 * c + plan.befriendings + 2 * t * c + 3 * joins
        + 2 * (leaves + plan.logout_leaves)
        + plan.total(Action::Post);
    1 + u64::from(s.iterations) * per_iteration + 2 * deliveries
}

/// What a run gathered: every turn's figures and start (iteration after iteration), the
/// clients' decision folds added up and the chats they left at logout.
#[derive(Default)]
struct Outcome {
    turns: Vec<TurnFigures>,
    started_ns: Vec<u64>,
    decisions: u64,
    logout_leaves: u64,
}

/// The answer's figures (chat.hpp's Answer).
#[derive(Default)]
struct Answer {
    actions: [u64; ACTIONS],
    invitations: u64,
    logout_leaves: u64,
    decisions: u64,
    miscounted_turns: u64,
    deliveries_off_turns: u64,
    unacknowledged: u64,
    late: u64,
    wrong_computes: u64,
    stray_messages: u64,
}

fn describe(s: &Settings, a: &Answer) -> String {
    let mut text = format!("iterations={} turns={} clients={}", s.iterations, s.turns, s.clients);
    for (name, count) in ACTION_NAMES.iter().zip(a.actions) {
        text += &format!(" {}={}", name, count);
    }
    text + &format!(
        " invitations={} logout_leaves={} decisions={:016x} miscounted_turns={} deliveries_off_turns={} \
         unacknowledged={} late={} wrong_computes={} stray_messages={}",
        a.invitations, a.logout_leaves, a.decisions, a.miscounted_turns, a.deliveries_off_turns, a.unacknowledged,
        a.late, a.wrong_computes, a.stray_messages
    )
}

/// What a correct run answers: the simulation's counts, `iterations` times over.
fn expected_answer(s: &Settings, plan: &Plan) -> Answer {
    let runs = u64::from(s.iterations);
    let mut a = Answer::default();
    for (i, count) in a.actions.iter_mut().enumerate() {
        *count = runs * plan.turns.iter().map(|t| t.actions[i]).sum::<u64>();
    }
    a.invitations = runs * plan.invitations();
    a.logout_leaves = runs * plan.logout_leaves;
    a.decisions = runs.wrapping_mul(plan.decisions);
    a
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The program's Pony version's quality of service: per turn the standard deviation (over the
/// count) of its durations across the iterations, the median of those over the turns.
fn quality_of_service(durations: &[u64], turns: usize) -> f64 {
    let iterations = durations.len() / turns;
    let spreads = (0..turns)
        .map(|t| {
            let of_turn = || (0..iterations).map(|i| durations[i * turns + t] as f64);
            let mean = of_turn().sum::<f64>() / iterations as f64;
            let squares: f64 = of_turn().map(|d| (d - mean) * (d - mean)).sum();
            (squares / iterations as f64).sqrt()
        })
        .collect();
    median(spreads)
}

/// chat.hpp's report: the answer from the accumulators' figures held to the simulation's, and
/// the metrics.
fn report(s: &Settings, plan: &Plan, outcome: &Outcome, handled: u64) -> (Answer, Vec<(&'static str, f64)>) {
    let mut a = Answer { decisions: outcome.decisions, logout_leaves: outcome.logout_leaves, ..Answer::default() };
    let mut deliveries = 0;
    let mut durations = Vec::with_capacity(outcome.turns.len());
    for (k, f) in outcome.turns.iter().enumerate() {
        let p = &plan.turns[k % s.turns as usize];
        let mut same = f.accepted == p.invitations && f.invitations == p.invitations;
        for i in 0..ACTIONS {
            a.actions[i] += f.actions[i];
            same = same && f.actions[i] == p.actions[i];
        }
        a.miscounted_turns += u64::from(!same);
        a.invitations += f.accepted;
        a.deliveries_off_turns += u64::from(f.delivered < p.deliveries_min || f.delivered > p.deliveries_max);
        a.unacknowledged += f.announced.abs_diff(f.delivered) + f.invitations.abs_diff(f.accepted);
        a.late += f.late;
        a.wrong_computes += f.wrong_computes;
        deliveries += f.delivered;
        durations.push(f.end_ns.saturating_sub(outcome.started_ns[k]));
    }
    let want = u64::from(s.turns) * u64::from(s.iterations);
    a.miscounted_turns += want.abs_diff(outcome.turns.len() as u64);
    a.stray_messages = handled.abs_diff(messages(s, plan, deliveries));
    let mut metrics: Vec<(&'static str, f64)> =
        ACTION_NAMES.iter().zip(a.actions).map(|(name, count)| (*name, count as f64)).collect();
    metrics.push(("deliveries", deliveries as f64));
    if !durations.is_empty() {
        let mut sorted = durations.clone();
        sorted.sort_unstable();
        metrics.push(("turn_p50_ns", percentile(&sorted, 0.50)));
        metrics.push(("turn_p99_ns", percentile(&sorted, 0.99)));
        metrics.push(("turn_max_ns", sorted[sorted.len() - 1] as f64));
        if s.iterations >= 2 {
            metrics.push(("turn_qos_ns", quality_of_service(&durations, s.turns as usize)));
        }
    }
    (a, metrics)
}

// The messages (chat.hpp's), by who receives them; an actor is addressed by its mailbox's Sender.

enum ToDriver {
    Start,
    Ready,
    TurnDone,
    Finished { decisions: u64, logout_leaves: u64 },
    Closed { turn: u32, figures: TurnFigures },
}

enum ToDirectory {
    Login { id: u32 },
    BefriendAll,
    Poke { accumulator: Mailbox<ToAccumulator>, turn: u32 },
    Disconnect,
    ClientLeft { decisions: u64, logout_leaves: u64 },
}

enum ToClient {
    Befriend { id: u32, client: Mailbox<ToClient> },
    Act { accumulator: Mailbox<ToAccumulator>, turn: u32 },
    Forward { accumulator: Mailbox<ToAccumulator> },
    Accepted { chat: Mailbox<ToChat>, id: u64, accumulator: Mailbox<ToAccumulator>, buffered: u64 },
    Left { id: u64, logout: bool, accumulator: Option<Mailbox<ToAccumulator>> }, // none when logging out
    Logout,
}

enum ToChat {
    Post { accumulator: Mailbox<ToAccumulator>, payload: u32 }, // the poster's id
    Join { client: Mailbox<ToClient>, accumulator: Mailbox<ToAccumulator> },
    Leave { client: Mailbox<ToClient>, logout: bool, accumulator: Option<Mailbox<ToAccumulator>> },
}

enum ToAccumulator {
    Resolved { action: Action, wrong: u64 },
    Posted { members: u64 },
    Invited { invitations: u64 },
    Delivered,
    AcceptedAck { buffered: u64 },
    Close,
}

/// A send to an actor's mailbox. A task ends only once nothing is sent to it any more, so a send
/// to an ended one is a bug in the protocol: the message is lost, and the run's count tells.
fn send<T>(to: &Mailbox<T>, message: T) {
    let _ = to.send(message);
}

/// What every task of a run reads, and the run's count of messages handled. Every task holds a
/// share of it until its count is in; `alive` closes with the last share (the root awaits that).
struct World {
    s: Settings,
    thresholds: Thresholds,
    epoch: Instant,
    handled: Arc<AtomicU64>,
    _alive: UnboundedSender<()>,
}

impl World {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
}

/// Runs an actor's loop as a task of its own; the messages it handled are added to the run's
/// count as it ends. Relaxed: the root reads the count only once every task's share of the World
/// is dropped, after its add in program order; the last share's drop (Arc's release decrements,
/// acquire fence) closes `alive`, which the root's recv observes through the channel's own
/// synchronization, so every add happens before the root's load.
fn spawn(world: &Arc<World>, actor: impl Future<Output = u64> + Send + 'static) {
    let world = Arc::clone(world);
    tokio::spawn(async move {
        let handled = actor.await;
        world.handled.fetch_add(handled, Ordering::Relaxed);
    });
}

/// The program's Poker: each iteration a fresh application, its turns one after another, its
/// clients logged out and its accumulators closed.
async fn driver_task(world: Arc<World>, me: Mailbox<ToDriver>, mut inbox: UnboundedReceiver<ToDriver>,
                done: oneshot::Sender<Outcome>) -> u64 {
    let s = &world.s;
    let mut handled = 0;
    let mut directories: Vec<Mailbox<ToDirectory>> = Vec::new();
    let mut accumulators: Vec<Mailbox<ToAccumulator>> = Vec::new();
    let mut figures: Vec<TurnFigures> = Vec::new();
    let (mut iteration, mut turn, mut count) = (0, 0, 0);
    let mut outcome = Outcome::default();
    let begin_iteration = |directories: &mut Vec<Mailbox<ToDirectory>>| {
        directories.clear();
        for seed in directory_seeds(s.seed, s.directories) {
            let (directory, inbox) = unbounded_channel();
            spawn(&world, directory_task(Arc::clone(&world), seed, directory.clone(), inbox, me.clone()));
            directories.push(directory);
        }
        for id in 0..s.clients {
            send(&directories[(id % s.directories) as usize], ToDirectory::Login { id });
        }
        for directory in directories.iter() {
            send(directory, ToDirectory::BefriendAll);
        }
    };
    let start_turn = |turn: u32, outcome: &mut Outcome, directories: &[Mailbox<ToDirectory>],
                      accumulators: &mut Vec<Mailbox<ToAccumulator>>| {
        outcome.started_ns.push(world.now());
        let (accumulator, inbox) = unbounded_channel();
        spawn(&world, accumulator_task(Arc::clone(&world), turn, inbox, me.clone()));
        for directory in directories {
            send(directory, ToDirectory::Poke { accumulator: accumulator.clone(), turn });
        }
        accumulators.push(accumulator);
    };
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToDriver::Start => begin_iteration(&mut directories),
            ToDriver::Ready => {
                count += 1;
                if count == s.directories {
                    count = 0;
                    start_turn(turn, &mut outcome, &directories, &mut accumulators);
                }
            }
            ToDriver::TurnDone => {
                turn += 1;
                if turn < s.turns {
                    start_turn(turn, &mut outcome, &directories, &mut accumulators);
                } else {
                    for directory in &directories {
                        send(directory, ToDirectory::Disconnect);
                    }
                }
            }
            ToDriver::Finished { decisions, logout_leaves } => {
                outcome.decisions = outcome.decisions.wrapping_add(decisions);
                outcome.logout_leaves += logout_leaves;
                count += 1;
                if count == s.directories {
                    count = 0;
                    figures = vec![TurnFigures::default(); s.turns as usize];
                    for accumulator in &accumulators {
                        send(accumulator, ToAccumulator::Close);
                    }
                }
            }
            ToDriver::Closed { turn: closed, figures: theirs } => {
                figures[closed as usize] = theirs;
                count += 1;
                if count < s.turns {
                    continue;
                }
                count = 0;
                outcome.turns.extend_from_slice(&figures);
                accumulators.clear();
                turn = 0;
                iteration += 1;
                if iteration < s.iterations {
                    begin_iteration(&mut directories);
                    continue;
                }
                let _ = done.send(outcome);
                return handled;
            }
        }
    }
    handled
}

/// A directory holds its clients: it makes each at login (its generator's next value the
/// client's start), befriends them, tells each to act each turn and to log out at the end.
async fn directory_task(world: Arc<World>, seed: u64, me: Mailbox<ToDirectory>,
                        mut inbox: UnboundedReceiver<ToDirectory>, driver: Mailbox<ToDriver>) -> u64 {
    let mut random = PseudoRandom(seed);
    let mut handled = 0;
    let mut clients: Vec<(u32, Mailbox<ToClient>)> = Vec::new();
    let mut left = 0;
    let (mut decisions, mut logout_leaves) = (0u64, 0);
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToDirectory::Login { id } => {
                let start = random.next_value();
                let (client, inbox) = unbounded_channel();
                spawn(&world, client_task(Arc::clone(&world), id, me.clone(), start, client.clone(), inbox));
                clients.push((id, client));
            }
            ToDirectory::BefriendAll => {
                let befriended = befriend_all(&mut random, clients.len() as u32, world.s.befriend, |c, f| {
                    let (c, f) = (&clients[c as usize], &clients[f as usize]);
                    send(&c.1, ToClient::Befriend { id: f.0, client: f.1.clone() });
                    send(&f.1, ToClient::Befriend { id: c.0, client: c.1.clone() });
                });
                // The simulation, before the phase, found any that never ends first.
                assert!(befriended.is_ok(), "chat: a client can befriend nobody in its directory");
                send(&driver, ToDriver::Ready);
            }
            ToDirectory::Poke { accumulator, turn } => {
                for (_, client) in &clients {
                    send(client, ToClient::Act { accumulator: accumulator.clone(), turn });
                }
            }
            ToDirectory::Disconnect => {
                for (_, client) in &clients {
                    send(client, ToClient::Logout);
                }
            }
            ToDirectory::ClientLeft { decisions: theirs, logout_leaves: chats } => {
                decisions = decisions.wrapping_add(theirs);
                logout_leaves += chats;
                left += 1;
                if left == clients.len() {
                    send(&driver, ToDriver::Finished { decisions, logout_leaves });
                    return handled;
                }
            }
        }
    }
    handled
}

/// A client acts once a turn as its generator draws, from what it had at the turn's start.
async fn client_task(world: Arc<World>, id: u32, directory: Mailbox<ToDirectory>, seed: u64, me: Mailbox<ToClient>,
                     mut inbox: UnboundedReceiver<ToClient>) -> u64 {
    let s = &world.s;
    let mut random = PseudoRandom(seed);
    let mut handled = 0;
    let mut friends: Vec<(u32, Mailbox<ToClient>)> = Vec::new();
    let mut chats: Vec<(u64, Mailbox<ToChat>)> = Vec::new();
    let mut decisions = FNV_BASIS;
    let mut logout_leaves = 0;
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToClient::Befriend { id, client } => add_friend(&mut friends, id, client),
            ToClient::Act { accumulator, turn } => {
                let d = decide(&mut random, &world.thresholds, settled_chats(&chats, turn, s.clients), friends.len());
                decisions = fnv_fold(decisions, d.action as u64);
                match d.action {
                    Action::Compute => {
                        let wrong = compute_job(s.compute_repeats, s.fibonacci_index);
                        send(&accumulator, ToAccumulator::Resolved { action: Action::Compute, wrong });
                    }
                    Action::Post => {
                        decisions = fnv_fold(decisions, chats[d.chat].0);
                        send(&chats[d.chat].1, ToChat::Post { accumulator, payload: id });
                    }
                    Action::Leave => {
                        decisions = fnv_fold(decisions, chats[d.chat].0);
                        send(&chats[d.chat].1, ToChat::Leave { client: me.clone(), logout: false,
                                                              accumulator: Some(accumulator) });
                    }
                    Action::Invite => {
                        let chat_id = chat_id(turn, id, s.clients);
                        let (chat, inbox) = unbounded_channel();
                        spawn(&world, chat_task(Arc::clone(&world), chat_id, me.clone(), chat.clone(), inbox));
                        decisions = fnv_fold(decisions, d.invited.len() as u64);
                        send(&accumulator, ToAccumulator::Invited { invitations: d.invited.len() as u64 });
                        for &position in &d.invited {
                            let (friend, client) = &friends[position];
                            decisions = fnv_fold(decisions, u64::from(*friend));
                            send(&chat, ToChat::Join { client: client.clone(), accumulator: accumulator.clone() });
                        }
                        insert_chat(&mut chats, chat_id, chat);
                    }
                    Action::Nothing => send(&accumulator, ToAccumulator::Resolved { action: Action::Nothing, wrong: 0 }),
                }
            }
            ToClient::Forward { accumulator } => send(&accumulator, ToAccumulator::Delivered),
            ToClient::Accepted { chat, id, accumulator, buffered } => {
                insert_chat(&mut chats, id, chat);
                send(&accumulator, ToAccumulator::AcceptedAck { buffered });
            }
            ToClient::Left { id, logout, accumulator } => {
                erase_chat(&mut chats, id);
                if !logout {
                    if let Some(accumulator) = accumulator {
                        send(&accumulator, ToAccumulator::Resolved { action: Action::Leave, wrong: 0 });
                    }
                    continue;
                }
                logout_leaves += 1;
                if chats.is_empty() {
                    send(&directory, ToDirectory::ClientLeft { decisions, logout_leaves });
                    return handled;
                }
            }
            ToClient::Logout => {
                if chats.is_empty() {
                    send(&directory, ToDirectory::ClientLeft { decisions, logout_leaves });
                    return handled;
                }
                for (_, chat) in &chats {
                    send(chat, ToChat::Leave { client: me.clone(), logout: true, accumulator: None });
                }
            }
        }
    }
    handled
}

/// A chat forwards each post to its members (keeping it where buffering), takes the joins
/// (sending a joiner the kept posts first) and the leaves; it goes once it loses its last member.
async fn chat_task(world: Arc<World>, id: u64, initiator: Mailbox<ToClient>, me: Mailbox<ToChat>,
                   mut inbox: UnboundedReceiver<ToChat>) -> u64 {
    let buffering = world.s.buffering;
    let mut handled = 0;
    let mut members = vec![initiator];
    let mut buffer: Vec<u32> = Vec::new();
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToChat::Post { accumulator, payload } => {
                if buffering {
                    buffer.push(payload);
                }
                if members.is_empty() {
                    send(&accumulator, ToAccumulator::Resolved { action: Action::Post, wrong: 0 });
                    continue;
                }
                send(&accumulator, ToAccumulator::Posted { members: members.len() as u64 });
                for member in &members {
                    send(member, ToClient::Forward { accumulator: accumulator.clone() });
                }
            }
            ToChat::Join { client, accumulator } => {
                let buffered = if buffering { buffer.len() as u64 } else { 0 };
                for _ in 0..buffered {
                    send(&client, ToClient::Forward { accumulator: accumulator.clone() });
                }
                send(&client, ToClient::Accepted { chat: me.clone(), id, accumulator, buffered });
                members.push(client);
            }
            ToChat::Leave { client, logout, accumulator } => {
                if let Some(at) = members.iter().position(|member| member.same_channel(&client)) {
                    members.remove(at);
                }
                send(&client, ToClient::Left { id, logout, accumulator });
                if members.is_empty() {
                    return handled;
                }
            }
        }
    }
    handled
}

/// An accumulator counts one turn's completions and tells the driver when the turn is complete;
/// it reports its figures when closed, at the iteration's end.
async fn accumulator_task(world: Arc<World>, turn: u32, mut inbox: UnboundedReceiver<ToAccumulator>,
                          driver: Mailbox<ToDriver>) -> u64 {
    let mut handled = 0;
    let mut tally = Tally { clients: u64::from(world.s.clients), resolved: 0, complete: false,
                            figures: TurnFigures::default() };
    while let Some(message) = inbox.recv().await {
        handled += 1;
        let completed = match message {
            ToAccumulator::Resolved { action, wrong } => tally.resolved(action, wrong),
            ToAccumulator::Posted { members } => tally.posted(members),
            ToAccumulator::Invited { invitations } => tally.invited(invitations),
            ToAccumulator::Delivered => tally.delivered(),
            ToAccumulator::AcceptedAck { buffered } => tally.accepted(buffered),
            ToAccumulator::Close => {
                send(&driver, ToDriver::Closed { turn, figures: tally.figures });
                return handled;
            }
        };
        if completed {
            tally.figures.end_ns = world.now();
            send(&driver, ToDriver::TurnDone);
        }
    }
    handled
}

/// The run: the driver spawned, the clock around its Start and its outcome, then every task's end
/// awaited for the count of messages handled.
async fn root(world: World, mut alive: UnboundedReceiver<()>) -> (Outcome, u64, std::time::Duration) {
    let handled = Arc::clone(&world.handled);
    let world = Arc::new(world);
    let (driver, inbox) = unbounded_channel();
    let (done, outcome) = oneshot::channel();
    spawn(&world, driver_task(Arc::clone(&world), driver.clone(), inbox, done));
    drop(world);
    let start = Instant::now();
    send(&driver, ToDriver::Start);
    let outcome = match outcome.await {
        Ok(outcome) => outcome,
        Err(_) => {
            eprintln!("{}: chat: the driver ended without an outcome", crate::PROGRAM);
            std::process::exit(1)
        }
    };
    let elapsed = start.elapsed();
    drop(driver);
    let _ = alive.recv().await; // None once every task has ended and dropped its share of the World
    (outcome, handled.load(Ordering::Relaxed), elapsed)
}

pub fn run(params: &Params) -> Reply {
    let injected = fault();
    // Fault::compute: every compute evaluates Fibonacci(34), which the check below must catch.
    let s = Settings::from(params, if injected == Fault::Compute { FIBONACCI_INDEX - 1 } else { FIBONACCI_INDEX });
    check(&s);
    let plan = match simulate(&s) {
        Ok(plan) => plan, // the oracle, before the phase
        Err(Unfriended) => fail(&format!(
            "param befriend ({}) with seed ({}), clients ({}) and directories ({}): a client can befriend nobody \
             in its directory (the program loops for ever)",
            s.befriend, s.seed, s.clients, s.directories
        )),
    };
    let (alive, alive_inbox) = unbounded_channel();
    let world = World { s, thresholds: Thresholds::new(&s), epoch: Instant::now(),
                        handled: Arc::new(AtomicU64::new(0)), _alive: alive };
    let (outcome, handled, elapsed) = on_runtime(params["threads"], root(world, alive_inbox));
    let (answer, metrics) = report(&s, &plan, &outcome, handled);
    let (answer, expected) = (describe(&s, &answer), describe(&s, &expected_answer(&s, &plan)));
    if answer != expected {
        wrong_answer("chat", &answer, &expected);
    }
    // Fault::reply: an acknowledgement missing, told after the check passed, which labctl must catch.
    let told = Answer { unacknowledged: 1, ..expected_answer(&s, &plan) };
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: handled,
        answer: if injected == Fault::Reply { describe(&s, &told) } else { answer },
        metrics,
    }
}
