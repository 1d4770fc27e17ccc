//! savina_threadring (Savina's benchmark 5, Thread Ring) on tokio: `actors` member tasks; the root
//! task sends each a Data carrying its next member's Sender, then Ping(R) to member 0. A member
//! receiving Ping(p) sends Ping(p-1) on while p > 0, and at Ping(0) sends Exit(N) instead; a member
//! receiving Exit(k) exits, sending Exit(k-1) on while k > 0. Exit(N)..Exit(1) reach every member
//! once, and Exit(0) goes to the first member to have exited: Akka's dead letter. Here a member
//! closes its mailbox when it exits (Receiver::close), so that send fails and hands the message
//! back, tokio's dead letter: the sender counts it as reaching its next member, where ours count it
//! at that member. 2N+R+2 messages (threadring.hpp).
//!
//! Measured phase (elapsed_ns), as ours: the members made and started, the Data that link them,
//! the pings and the exits, until every member's task has ended (the last is the one whose
//! Exit(0) was refused), where ours ends at the dead letter.

use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

enum Message {
    Data(UnboundedSender<Message>),
    Ping(u64),
    Exit(u64),
}

/// What one member counted (threadring.hpp's Counts).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    data: u64,
    pings: u64,
    exits: u64,
    dead_letters: u64,
    last_ping: u64,
}

/// A member's tally, and whether a message it sent was refused by its next member (a dead letter).
async fn member(actors: u64, mut inbox: UnboundedReceiver<Message>) -> (Counts, u64) {
    let mut counts = Counts::default();
    let mut refused = 0;
    let mut next: Option<UnboundedSender<Message>> = None;
    let mut pass = |next: &Option<UnboundedSender<Message>>, message: Message| {
        if next.as_ref().map_or(true, |next| next.send(message).is_err()) {
            refused += 1;
        }
    };
    while let Some(message) = inbox.recv().await {
        match message {
            Message::Data(sender) => {
                counts.data += 1;
                next = Some(sender);
            }
            Message::Ping(left) => {
                counts.pings += 1;
                if left > 0 {
                    pass(&next, Message::Ping(left - 1));
                } else {
                    counts.last_ping += 1;
                    pass(&next, Message::Exit(actors));
                }
            }
            Message::Exit(left) => {
                counts.exits += 1;
                inbox.close(); // exited: what is sent to it from now on is a dead letter
                if left > 0 {
                    pass(&next, Message::Exit(left - 1));
                }
                break;
            }
        }
    }
    (counts, refused)
}

struct Outcome {
    total: Counts,
    last_ping_at: i64,
    uneven: u64,
}

fn describe(outcome: &Outcome) -> String {
    let t = &outcome.total;
    format!(
        "data={} pings={} exits={} dead_letters={} last_ping_at={} uneven_actors={}",
        t.data, t.pings, t.exits, t.dead_letters, outcome.last_ping_at, outcome.uneven
    )
}

async fn root(actors: u64, pings: u64) -> (Vec<Counts>, std::time::Duration) {
    let start = Instant::now();
    let mut senders = Vec::with_capacity(actors as usize);
    let mut members = Vec::with_capacity(actors as usize);
    for _ in 0..actors {
        let (sender, inbox) = unbounded_channel();
        senders.push(sender);
        members.push(tokio::spawn(member(actors, inbox)));
    }
    for (i, sender) in senders.iter().enumerate() {
        let _ = sender.send(Message::Data(senders[(i + 1) % senders.len()].clone()));
    }
    let _ = senders[0].send(Message::Ping(pings));
    drop(senders);
    let mut tallies = Vec::with_capacity(actors as usize);
    for task in members {
        tallies.push(joined(task).await);
    }
    let elapsed = start.elapsed();
    // A refused message is a dead letter at the member it was sent to, as ours count it.
    let mut counts: Vec<Counts> = tallies.iter().map(|(counts, _)| *counts).collect();
    for (i, (_, refused)) in tallies.iter().enumerate() {
        counts[(i + 1) % actors as usize].dead_letters += refused;
    }
    (counts, elapsed)
}

pub fn run(params: &Params) -> Reply {
    let actors = params["actors"] as u64;
    let pings = params["pings"] as u64;
    let injected = fault();
    // Fault::compute: the ping starts one higher, which the check below must catch.
    let (counts, elapsed) = on_runtime(params["threads"], root(actors, pings + u64::from(injected == Fault::Compute)));

    // As threadring.hpp's collect: the totals, who got Ping(0), the members off their share.
    let stops = pings + 1;
    let mut outcome = Outcome { total: Counts::default(), last_ping_at: -1, uneven: 0 };
    for (i, c) in counts.iter().enumerate() {
        let i = i as u64;
        let t = &mut outcome.total;
        t.data += c.data;
        t.pings += c.pings;
        t.exits += c.exits;
        t.dead_letters += c.dead_letters;
        t.last_ping += c.last_ping;
        if c.last_ping != 0 {
            outcome.last_ping_at = i as i64;
        }
        let want = Counts {
            data: 1,
            pings: stops / actors + u64::from(i < stops % actors),
            exits: 1,
            dead_letters: u64::from(i == (pings + 1) % actors),
            last_ping: u64::from(i == pings % actors),
        };
        outcome.uneven += u64::from(*c != want);
    }
    let expected = Outcome {
        total: Counts { data: actors, pings: stops, exits: actors, dead_letters: 1, last_ping: 1 },
        last_ping_at: (pings % actors) as i64,
        uneven: 0,
    };
    let answer = describe(&outcome);
    if answer != describe(&expected) {
        wrong_answer("savina_threadring", &answer, &describe(&expected));
    }
    let t = &outcome.total;
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: t.data + t.pings + t.exits + t.dead_letters,
        answer: if injected == Fault::Reply { describe(&Outcome { uneven: 1, ..outcome }) } else { answer },
        metrics: Vec::new(),
    }
}
