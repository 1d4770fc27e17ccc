//! savina_big (Savina's benchmark 7, Big) on tokio: `actors` actor tasks and a sink task; the root
//! task sends each actor a start (Savina's PongMessage(-1)). On each Pong an actor sends its next
//! Ping to a neighbour its generator draws (Savina's 16-bit PseudoRandom, actor i's starting at
//! seed + i), which may be itself, and the neighbour answers with a Pong; after `pings` pings, on
//! the last Pong, it reports to the sink. It stays to answer the others' pings; after the clock
//! the root tells each to exit (Savina's sink does, inside its clock: W messages ours do not send
//! nor count either) and takes the count of pings it received. The actors get the neighbours'
//! Senders when they are made (a list they share), where Savina's get them in a NeighborMessage.
//!
//! Measured phase (elapsed_ns), as ours: the actors made (the sink made first) and started, until
//! the sink's task has ended on the last report. Every Ping was answered before its pinger
//! reported, so every Ping was handled by then. Messages, as ours: the starts, the pings, their
//! pongs and the reports (big.hpp).

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use super::random::PseudoRandom;
use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

/// Pong's sender before any ping: the start every actor is given.
const NOBODY: usize = usize::MAX;

enum ToActor {
    Ping { from: usize },
    Pong { from: usize },
    Exit,
}

/// What an actor reports once it has made its pings (big.hpp's Finished).
struct Finished {
    actor: usize,
    pings: u64,
    pongs: u64, // the start's included
    wrong: u64, // pongs from another actor than the one last pinged
}

/// Savina's BigActor (big.hpp's Pinger); returns the pings it received, once told to exit.
async fn actor(index: usize, pings: u64, seed: u64, mut inbox: UnboundedReceiver<ToActor>,
               all: Arc<Vec<UnboundedSender<ToActor>>>, sink: UnboundedSender<Finished>) -> u64 {
    let mut generator = PseudoRandom(seed + index as u64);
    let mut expected = NOBODY;
    let (mut sent, mut pongs, mut wrong, mut pinged) = (0, 0, 0, 0);
    while let Some(message) = inbox.recv().await {
        match message {
            ToActor::Ping { from } => {
                pinged += 1;
                let _ = all[from].send(ToActor::Pong { from: index });
            }
            ToActor::Pong { from } => {
                pongs += 1;
                wrong += u64::from(from != expected);
                if sent == pings {
                    let _ = sink.send(Finished { actor: index, pings: sent, pongs, wrong });
                    continue;
                }
                sent += 1;
                expected = generator.next(all.len() as u64) as usize;
                let _ = all[expected].send(ToActor::Ping { from: index });
            }
            ToActor::Exit => break,
        }
    }
    pinged
}

#[derive(Default)]
struct Outcome {
    finished: u64,
    repeated: u64,
    pings: u64,
    pongs: u64, // the pings' answers, the starts not counted
    wrong: u64,
}

fn describe(o: &Outcome, uneven: u64, most_pinged: u64) -> String {
    format!(
        "finished={} repeated={} pings={} pongs={} wrong_pongs={} uneven_actors={} most_pinged={}",
        o.finished, o.repeated, o.pings, o.pongs, o.wrong, uneven, most_pinged
    )
}

/// Savina's SinkActor (big.hpp's Sink): counts the actors that finished.
async fn sink(actors: usize, mut inbox: UnboundedReceiver<Finished>) -> Outcome {
    let mut seen = vec![false; actors];
    let mut outcome = Outcome::default();
    while let Some(f) = inbox.recv().await {
        outcome.finished += 1;
        match seen.get_mut(f.actor) {
            Some(seen) if !*seen => *seen = true,
            _ => outcome.repeated += 1,
        }
        outcome.pings += f.pings;
        outcome.pongs += f.pongs - f.pongs.min(1);
        outcome.wrong += f.wrong;
        if outcome.finished == actors as u64 {
            break;
        }
    }
    outcome
}

async fn root(actors: usize, pings: u64, seed: u64) -> (Outcome, Vec<u64>, std::time::Duration) {
    let start = Instant::now();
    let (to_sink, sink_inbox) = unbounded_channel();
    let sink = tokio::spawn(sink(actors, sink_inbox));
    let mut senders = Vec::with_capacity(actors);
    let mut inboxes = Vec::with_capacity(actors);
    for _ in 0..actors {
        let (sender, inbox) = unbounded_channel();
        senders.push(sender);
        inboxes.push(inbox);
    }
    let all = Arc::new(senders);
    let tasks: Vec<_> = inboxes
        .into_iter()
        .enumerate()
        .map(|(index, inbox)| tokio::spawn(actor(index, pings, seed, inbox, all.clone(), to_sink.clone())))
        .collect();
    drop(to_sink);
    for to_actor in all.iter() {
        let _ = to_actor.send(ToActor::Pong { from: NOBODY });
    }
    let outcome = joined(sink).await;
    let elapsed = start.elapsed();
    for to_actor in all.iter() {
        let _ = to_actor.send(ToActor::Exit);
    }
    let mut pinged = Vec::with_capacity(actors);
    for task in tasks {
        pinged.push(joined(task).await);
    }
    (outcome, pinged, elapsed)
}

/// The pings each actor receives, replaying every actor's generator (big.hpp's pinged_plan).
fn pinged_plan(actors: usize, pings: u64, seed: u64) -> Vec<u64> {
    let mut pinged = vec![0; actors];
    for i in 0..actors {
        let mut generator = PseudoRandom(seed + i as u64);
        for _ in 0..pings {
            pinged[generator.next(actors as u64) as usize] += 1;
        }
    }
    pinged
}

pub fn run(params: &Params) -> Reply {
    let actors = params["actors"] as usize;
    let pings = params["pings"] as u64;
    let seed = params["seed"] as u64;
    let injected = fault();
    // Fault::compute: each actor makes one ping more, which the check below must catch.
    let (outcome, pinged, elapsed) =
        on_runtime(params["threads"], root(actors, pings + u64::from(injected == Fault::Compute), seed));
    let plan = pinged_plan(actors, pings, seed);
    let received: u64 = pinged.iter().sum();
    let most = pinged.iter().copied().max().unwrap_or(0);
    let uneven = pinged.iter().zip(&plan).filter(|(got, want)| got != want).count() as u64;
    let answer = describe(&outcome, uneven, most);
    let expected = describe(
        &Outcome { finished: actors as u64, repeated: 0, pings: actors as u64 * pings, pongs: actors as u64 * pings, wrong: 0 },
        0,
        plan.iter().copied().max().unwrap_or(0),
    );
    if answer != expected {
        wrong_answer("savina_big", &answer, &expected);
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: actors as u64 + received + outcome.pongs + outcome.finished,
        answer: if injected == Fault::Reply { describe(&outcome, 1, most) } else { answer },
        metrics: Vec::new(),
    }
}
