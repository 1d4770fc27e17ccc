//! savina_pingpong (Savina's benchmark 1) on tokio: a ping task and a pong task exchange `pings`
//! SendPing / SendPong pairs with Savina's messages. Ping starts on Start, sends SendPing
//! (carrying its own Sender, as Akka's carries the sender's ActorRef) and counts a ping down; pong
//! answers each SendPing with SendPong to the Sender it carries; on each SendPong ping, while it
//! has pings left, sends itself a Ping, whose handling sends the next SendPing; after the last
//! pong it sends Stop to the Sender that SendPong carries, pong's end. 3N+1 messages (pingpong.hpp).
//!
//! Measured phase (elapsed_ns), as ours: the two actors made (pong, then ping with pong's Sender)
//! and started, the Start, and every message until pong's task has ended on the Stop. The kernel's
//! root task stands for our kernel's thread, which sends the Start.

use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

enum ToPing {
    Start,
    Ping, // ping's note to itself to send the next SendPing
    SendPong(UnboundedSender<ToPong>),
}

enum ToPong {
    SendPing(UnboundedSender<ToPing>),
    Stop,
}

/// What the two actors counted, each its own fields (pingpong.hpp's Tally).
#[derive(Default)]
struct Tally {
    start: u64,
    ping: u64,
    send_ping: u64,
    send_pong: u64,
    stop: u64,
    pings_left: i64,
}

impl Tally {
    fn messages(&self) -> u64 {
        self.start + self.ping + self.send_ping + self.send_pong + self.stop
    }

    fn describe(&self) -> String {
        format!(
            "start={} ping={} send_ping={} send_pong={} stop={} pings_left={}",
            self.start, self.ping, self.send_ping, self.send_pong, self.stop, self.pings_left
        )
    }
}

async fn ping(pings: i64, me: UnboundedSender<ToPing>, mut inbox: UnboundedReceiver<ToPing>,
              pong: UnboundedSender<ToPong>) -> Tally {
    let mut tally = Tally::default();
    let mut left = pings;
    let send_ping = |left: &mut i64| {
        let _ = pong.send(ToPong::SendPing(me.clone()));
        *left -= 1;
    };
    while let Some(message) = inbox.recv().await {
        match message {
            ToPing::Start => {
                tally.start += 1;
                send_ping(&mut left);
            }
            ToPing::Ping => {
                tally.ping += 1;
                send_ping(&mut left);
            }
            ToPing::SendPong(sender) => {
                tally.send_pong += 1;
                if left > 0 {
                    let _ = me.send(ToPing::Ping);
                } else {
                    let _ = sender.send(ToPong::Stop);
                    break; // Savina's ping exits after its Stop
                }
            }
        }
    }
    tally.pings_left = left;
    tally
}

async fn pong(mut inbox: UnboundedReceiver<ToPong>, me: UnboundedSender<ToPong>) -> Tally {
    let mut tally = Tally::default();
    while let Some(message) = inbox.recv().await {
        match message {
            ToPong::SendPing(sender) => {
                tally.send_ping += 1;
                let _ = sender.send(ToPing::SendPong(me.clone()));
            }
            ToPong::Stop => {
                tally.stop += 1;
                break; // Savina's pong exits here, the last of the two: the benchmark's end
            }
        }
    }
    tally
}

async fn root(pings: i64) -> (Tally, std::time::Duration) {
    let start = Instant::now();
    let (to_pong, pong_inbox) = unbounded_channel();
    let pong = tokio::spawn(pong(pong_inbox, to_pong.clone()));
    let (to_ping, ping_inbox) = unbounded_channel();
    let ping = tokio::spawn(ping(pings, to_ping.clone(), ping_inbox, to_pong));
    let _ = to_ping.send(ToPing::Start);
    drop(to_ping);
    let pong_tally = joined(pong).await;
    let elapsed = start.elapsed();
    let ping_tally = joined(ping).await;
    let tally = Tally { send_ping: pong_tally.send_ping, stop: pong_tally.stop, ..ping_tally };
    (tally, elapsed)
}

pub fn run(params: &Params) -> Reply {
    let pings = params["pings"];
    let injected = fault();
    // Fault::compute: ping makes one ping more than asked, which the check below must catch.
    let (tally, elapsed) = on_runtime(params["threads"], root(pings + i64::from(injected == Fault::Compute)));
    let n = pings as u64;
    let expected = Tally { start: 1, ping: n - 1, send_ping: n, send_pong: n, stop: 1, pings_left: 0 };
    let answer = tally.describe();
    if answer != expected.describe() {
        wrong_answer("savina_pingpong", &answer, &expected.describe());
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: tally.messages(),
        answer: if injected == Fault::Reply { Tally { stop: 0, ..tally }.describe() } else { answer },
        metrics: Vec::new(),
    }
}
