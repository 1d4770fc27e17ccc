//! thread_ring on tokio: `actors` tasks in a ring, each owning the receiving end of an mpsc
//! channel (capacity 1: a member never holds more than the one token) and holding a Sender to
//! the next's; one token carrying a countdown of `hops` is sent to member 0, and each member
//! forwards it to the next with the countdown decremented, until it reaches 0: that member
//! reports where it stands and how many hops the token made to the kernel's root task, the
//! collector (as ours: agent i forwards to i+1 mod actors, the end report goes to a collector
//! outside the ring).
//!
//! Each member counts the tokens it received; after the phase a stop message goes once round
//! the ring, each member returns its count, and the counts are checked against the visits the
//! arithmetic predicts (our Plan::visits, computed apart from the run). The answer and the
//! message count are ours: hops + 1 receipts (the injection is one) and one end report.
//!
//! Measured phase (elapsed_ns), as ours: from the injection, every member task started (each
//! says so before it first waits on its inbox), to the collector holding the end report.

use std::time::Instant;

use tokio::sync::mpsc;

use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

enum Message {
    Token { remaining: u64, hops: u64 },
    Stop,
}

/// A token's last stop, reported to the collector.
struct End {
    member: u64,
    hops: u64,
}

/// Member `index`: forwards the token until the stop comes round; returns the tokens it received.
async fn member(index: u64, mut inbox: mpsc::Receiver<Message>, next: mpsc::Sender<Message>,
                ends: mpsc::UnboundedSender<End>, started: mpsc::UnboundedSender<()>) -> u64 {
    let _ = started.send(());
    drop(started);
    let mut received = 0;
    while let Some(message) = inbox.recv().await {
        match message {
            Message::Token { remaining: 0, hops } => {
                received += 1;
                let _ = ends.send(End { member: index, hops });
            }
            Message::Token { remaining, hops } => {
                received += 1;
                let _ = next.send(Message::Token { remaining: remaining - 1, hops: hops + 1 }).await;
            }
            Message::Stop => {
                let _ = next.send(Message::Stop).await; // the last one's goes to a member that has ended
                break;
            }
        }
    }
    received
}

fn describe(ended: u64, wrong_end: u64, wrong_hops: u64, repeated: u64, uneven_agents: u64) -> String {
    format!(
        "tokens_ended={} wrong_end={} wrong_hops={} repeated={} uneven_agents={}",
        ended, wrong_end, wrong_hops, repeated, uneven_agents
    )
}

struct Ringed {
    end: End,
    repeated: u64,
    received: Vec<u64>,
    elapsed: std::time::Duration,
}

async fn ring(actors: u64, hops: u64) -> Ringed {
    let (ends, mut end_inbox) = mpsc::unbounded_channel();
    let (started, mut started_inbox) = mpsc::unbounded_channel();
    let mut senders = Vec::with_capacity(actors as usize);
    let mut inboxes = Vec::with_capacity(actors as usize);
    for _ in 0..actors {
        let (sender, inbox) = mpsc::channel(1);
        senders.push(sender);
        inboxes.push(inbox);
    }
    let mut members = Vec::with_capacity(actors as usize);
    for (index, inbox) in inboxes.into_iter().enumerate() {
        let next = senders[(index + 1) % actors as usize].clone();
        members.push(tokio::spawn(member(index as u64, inbox, next, ends.clone(), started.clone())));
    }
    drop((ends, started));
    for _ in 0..actors {
        let _ = started_inbox.recv().await;
    }
    let first = senders[0].clone();
    drop(senders); // the ring's own Senders keep every inbox open

    let start = Instant::now();
    let _ = first.send(Message::Token { remaining: hops, hops: 0 }).await;
    let end = end_inbox.recv().await.unwrap_or(End { member: u64::MAX, hops: u64::MAX });
    let elapsed = start.elapsed();

    let _ = first.send(Message::Stop).await;
    let mut received = Vec::with_capacity(actors as usize);
    for handle in members {
        received.push(handle.await.unwrap_or(0));
    }
    let mut repeated = 0;
    while end_inbox.try_recv().is_ok() {
        repeated += 1;
    }
    Ringed { end, repeated, received, elapsed }
}

pub fn run(params: &Params) -> Reply {
    let actors = params["actors"] as u64;
    let hops = params["hops"] as u64;
    let injected = fault();
    // Fault::compute: one hop too many, which the check below must catch.
    let made = hops + u64::from(injected == Fault::Compute);
    let run = on_runtime(params["threads"], ring(actors, made));

    // The token's stops are hops + 1, member 0 first: member i is visited (hops+1)/actors times,
    // once more if i < (hops+1) % actors; it ends at member hops % actors.
    let mut received = 0;
    let mut uneven = 0;
    for (i, count) in run.received.iter().enumerate() {
        received += count;
        uneven += u64::from(*count != (hops + 1) / actors + u64::from((i as u64) < (hops + 1) % actors));
    }
    let answer = describe(
        1 + run.repeated,
        u64::from(run.end.member != hops % actors),
        u64::from(run.end.hops != hops),
        run.repeated,
        uneven,
    );
    let expected = describe(1, 0, 0, 0, 0);
    if answer != expected {
        wrong_answer("thread_ring", &answer, &expected);
    }
    let elapsed_ns = nanos(run.elapsed);
    let mut metrics = Vec::new();
    // Every receipt but the injection is a hop; with none there is no time per hop (ours says so).
    if received > 1 {
        metrics.push(("ns_per_hop", elapsed_ns as f64 / (received - 1) as f64));
    }
    Reply {
        elapsed_ns,
        messages: received + 1 + run.repeated,
        answer: if injected == Fault::Reply { describe(1, 0, 0, 0, 1) } else { answer },
        metrics,
    }
}
