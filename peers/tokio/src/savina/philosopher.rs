//! savina_philosopher (Savina's benchmark 11, Dining Philosophers) on tokio: an arbitrator task
//! holding the forks and `philosophers` philosopher tasks, philosopher i between forks i and
//! (i + 1) % philosophers. Each is sent Start; Start and each Denied send the arbitrator Hungry,
//! which answers Eat, taking both forks, if both are free, else Denied. An Eat counts a meal and
//! sends Done (the forks freed) and Start to the philosopher itself, until `rounds` meals, when it
//! tells the arbitrator it exits and its task ends (Savina's exit()). 4*philosophers*rounds +
//! philosophers + 2*denials messages (philosopher.cpp), the denials the schedule's: the metric
//! denials, the arbitrator's count; the answer the same on every schedule.
//!
//! Differences from Savina, as ours: the arbitrator records which philosopher holds each fork
//! (Savina's whether it is taken) and checks what ours checks; philosophers are named by index (the
//! arbitrator holds every philosopher's Sender, where Savina's Hungry carries an ActorRef); each
//! philosopher counts its own denials, where Savina's adds its running count to one AtomicLong all
//! share after every meal.
//!
//! Measured phase (elapsed_ns), as ours: the arbitrator and the philosophers made and started, each
//! sent Start, until the arbitrator's task has ended on the last Exit.

use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

enum ToPhilosopher {
    Start,
    Eat,
    Denied,
}

enum ToArbitrator {
    Hungry(usize),
    Done(usize),
    Exit,
}

/// A philosopher's tally, handed back when its task ends.
struct Tally {
    eaten: u64,
    denied: u64,
    handled: u64,
}

/// Savina's PhilosopherActor; `rounds` the meals it eats (Fault::compute: one more than the
/// setup's).
async fn philosopher(id: usize, rounds: u64, me: UnboundedSender<ToPhilosopher>,
                     mut inbox: UnboundedReceiver<ToPhilosopher>, arbitrator: UnboundedSender<ToArbitrator>) -> Tally {
    let mut tally = Tally { eaten: 0, denied: 0, handled: 0 };
    while let Some(message) = inbox.recv().await {
        tally.handled += 1;
        match message {
            ToPhilosopher::Start => {
                let _ = arbitrator.send(ToArbitrator::Hungry(id));
            }
            ToPhilosopher::Denied => {
                tally.denied += 1;
                let _ = arbitrator.send(ToArbitrator::Hungry(id));
            }
            ToPhilosopher::Eat => {
                tally.eaten += 1;
                let _ = arbitrator.send(ToArbitrator::Done(id));
                if tally.eaten < rounds {
                    let _ = me.send(ToPhilosopher::Start);
                } else {
                    let _ = arbitrator.send(ToArbitrator::Exit);
                    break;
                }
            }
        }
    }
    tally
}

/// What the arbitrator counted (philosopher.cpp's Outcome) and each philosopher's meals as granted.
#[derive(Default)]
struct Outcome {
    meals: u64,
    denials: u64,
    fork_conflicts: u64,
    wrong_releases: u64,
    forks_left_held: u64,
    handled: u64,
    granted: Vec<u64>,
}

/// Savina's ArbitratorActor; ends on the last philosopher's Exit.
async fn arbitrator(mut inbox: UnboundedReceiver<ToArbitrator>, philosophers: Vec<UnboundedSender<ToPhilosopher>>) -> Outcome {
    let n = philosophers.len();
    let mut holder: Vec<Option<usize>> = vec![None; n]; // fork i: the philosopher holding it
    let mut outcome = Outcome { granted: vec![0; n], ..Outcome::default() };
    let mut exits = 0;
    while let Some(message) = inbox.recv().await {
        outcome.handled += 1;
        match message {
            ToArbitrator::Hungry(id) => {
                let (left, right) = (id, (id + 1) % n);
                if holder[left].is_some() || holder[right].is_some() {
                    outcome.denials += 1;
                    let _ = philosophers[id].send(ToPhilosopher::Denied);
                    continue;
                }
                // Checked beside the rule that ensures it: neither neighbour eats.
                let before = (id + n - 1) % n;
                if n > 1 && (holder[before] == Some(before) || holder[right] == Some(right)) {
                    outcome.fork_conflicts += 1;
                }
                holder[left] = Some(id);
                holder[right] = Some(id);
                outcome.granted[id] += 1;
                outcome.meals += 1;
                let _ = philosophers[id].send(ToPhilosopher::Eat);
            }
            ToArbitrator::Done(id) => {
                let (left, right) = (id, (id + 1) % n);
                if holder[left] != Some(id) || holder[right] != Some(id) {
                    outcome.wrong_releases += 1;
                }
                holder[left] = None;
                holder[right] = None;
            }
            ToArbitrator::Exit => {
                exits += 1;
                if exits == n {
                    outcome.forks_left_held = holder.iter().filter(|h| h.is_some()).count() as u64;
                    break;
                }
            }
        }
    }
    outcome
}

/// philosopher.cpp's answer: `meals` the philosophers' (0 where they disagree with the grants).
fn describe(philosophers: u64, meals: u64, uneven: u64, lost_denials: u64, o: &Outcome) -> String {
    format!(
        "philosophers={} meals={} uneven_philosophers={} fork_conflicts={} wrong_releases={} forks_left_held={} \
         lost_denials={}",
        philosophers, meals, uneven, o.fork_conflicts, o.wrong_releases, o.forks_left_held, lost_denials
    )
}

async fn root(philosophers: usize, rounds: u64, eat: u64) -> (String, u64, u64, std::time::Duration) {
    let start = Instant::now();
    let (to_arbitrator, arbitrator_inbox) = unbounded_channel();
    let mut senders = Vec::with_capacity(philosophers);
    let mut tasks = Vec::with_capacity(philosophers);
    for id in 0..philosophers {
        let (sender, inbox) = unbounded_channel();
        tasks.push(tokio::spawn(philosopher(id, eat, sender.clone(), inbox, to_arbitrator.clone())));
        senders.push(sender);
    }
    drop(to_arbitrator);
    for sender in &senders {
        let _ = sender.send(ToPhilosopher::Start);
    }
    let outcome = joined(tokio::spawn(arbitrator(arbitrator_inbox, senders))).await;
    let elapsed = start.elapsed();
    let (mut handled, mut eaten, mut denied, mut uneven) = (outcome.handled, 0, 0, 0);
    for (id, task) in tasks.into_iter().enumerate() {
        let tally = joined(task).await; // each ended on its Exit, before the arbitrator did
        handled += tally.handled;
        eaten += tally.eaten;
        denied += tally.denied;
        uneven += u64::from(tally.eaten != rounds || outcome.granted[id] != rounds);
    }
    let meals = if eaten == outcome.meals { eaten } else { 0 };
    let answer = describe(philosophers as u64, meals, uneven, denied.abs_diff(outcome.denials), &outcome);
    (answer, handled, outcome.denials, elapsed)
}

pub fn run(params: &Params) -> Reply {
    let philosophers = params["philosophers"] as u64;
    let rounds = params["rounds"] as u64;
    let injected = fault();
    // Fault::compute: each philosopher eats once more, which the check below must catch.
    let eat = rounds + u64::from(injected == Fault::Compute);
    let (answer, handled, denials, elapsed) = on_runtime(params["threads"], root(philosophers as usize, rounds, eat));
    let expected = describe(philosophers, philosophers * rounds, 0, 0, &Outcome::default());
    if answer != expected {
        wrong_answer("savina_philosopher", &answer, &expected);
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: handled,
        answer: if injected == Fault::Reply { describe(philosophers, philosophers * rounds, 1, 0, &Outcome::default()) } else { answer },
        metrics: vec![("denials", denials as f64)],
    }
}
