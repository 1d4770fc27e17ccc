//! savina_chameneos (Savina's benchmark 6) on tokio: a mall task and `creatures` creature tasks,
//! creature i of colour i % 3. The mall makes the creatures when it starts, as Savina's does; each
//! creature asks the mall to meet when it starts and after each meeting; the mall keeps the first
//! of a pair waiting and forwards the second's request to it; that creature takes the complement,
//! tells the other in a Change and asks again; once `meetings` are made the mall answers each
//! request with Exit, and each creature reports its count and exits. 3*creatures + 4*meetings
//! messages (chameneos.hpp). The creatures address one another by index in a list of Senders they
//! share, where Savina's Meet carries the sender's ActorRef.
//!
//! Measured phase (elapsed_ns), as ours: the mall made and started, the creatures made and started
//! by it, every meeting and every report, until the mall's task has ended on the last report.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

const RED: u8 = 0;
const FADED: u8 = 3;

/// Savina's rule: one colour stays, two different take the third; faded stays faded.
fn complement(mine: u8, other: u8) -> u8 {
    if mine == FADED || other == FADED {
        FADED
    } else if mine == other {
        mine
    } else {
        3 - mine - other
    }
}

enum ToCreature {
    Meet { id: usize, colour: u8 }, // the mall's forward of the partner's request
    Change { colour: u8, partner_was: u8 },
    Exit,
}

enum ToMall {
    Meet { id: usize, colour: u8 },
    Count { id: usize, meetings: u64, wrong_changes: u64, handled: u64, colour: u8 },
}

/// Savina's ChameneosChameneoActor.
async fn creature(id: usize, mut inbox: UnboundedReceiver<ToCreature>, mall: UnboundedSender<ToMall>,
                  all: Arc<Vec<UnboundedSender<ToCreature>>>) {
    let mut colour = RED + (id % 3) as u8;
    let (mut meetings, mut wrong_changes, mut handled) = (0, 0, 0);
    let _ = mall.send(ToMall::Meet { id, colour });
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToCreature::Meet { id: partner, colour: other } => {
                let was = colour;
                colour = complement(colour, other);
                meetings += 1;
                let _ = all[partner].send(ToCreature::Change { colour, partner_was: was });
                let _ = mall.send(ToMall::Meet { id, colour });
            }
            ToCreature::Change { colour: to, partner_was } => {
                wrong_changes += u64::from(complement(colour, partner_was) != to);
                colour = to;
                meetings += 1;
                let _ = mall.send(ToMall::Meet { id, colour });
            }
            ToCreature::Exit => {
                let _ = mall.send(ToMall::Count { id, meetings, wrong_changes, handled, colour });
                return;
            }
        }
    }
}

fn describe(meetings: u64, requests: u64, exits: u64, counted: u64, reports: u64, wrong_changes: u64, kept: bool) -> String {
    format!(
        "meetings={} requests={} exits={} counted={} reports={} wrong_changes={} colour_invariant={}",
        meetings, requests, exits, counted, reports, wrong_changes, if kept { "kept" } else { "broken" }
    )
}

/// Savina's ChameneosMallActor (chameneos.hpp's Mall): returns its answer and the messages handled.
async fn mall(creatures: usize, meetings: u64, me: UnboundedSender<ToMall>, mut inbox: UnboundedReceiver<ToMall>) -> (String, u64) {
    let mut senders = Vec::with_capacity(creatures);
    let mut inboxes = Vec::with_capacity(creatures);
    for _ in 0..creatures {
        let (sender, inbox) = unbounded_channel();
        senders.push(sender);
        inboxes.push(inbox);
    }
    let all = Arc::new(senders);
    for (id, inbox) in inboxes.into_iter().enumerate() {
        tokio::spawn(creature(id, inbox, me.clone(), all.clone()));
    }
    drop(me);
    let (mut made, mut requests, mut exits, mut reports, mut bad_reports) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut counted, mut creatures_handled, mut wrong) = (0u64, 0u64, 0u64);
    let mut finals = [0u64; 3];
    let mut reported = vec![false; creatures];
    let mut waiting: Option<usize> = None;
    while let Some(message) = inbox.recv().await {
        match message {
            ToMall::Meet { id, colour } => {
                requests += 1;
                if made == meetings {
                    exits += 1;
                    let _ = all[id].send(ToCreature::Exit);
                } else if let Some(waiter) = waiting.take() {
                    made += 1;
                    let _ = all[waiter].send(ToCreature::Meet { id, colour });
                } else {
                    waiting = Some(id);
                }
            }
            ToMall::Count { id, meetings, wrong_changes, handled, colour } => {
                reports += 1;
                creatures_handled += handled;
                match reported.get_mut(id) {
                    Some(seen) if !*seen => *seen = true,
                    _ => bad_reports += 1,
                }
                counted += meetings;
                wrong += wrong_changes;
                match finals.get_mut(usize::from(colour)) {
                    Some(count) => *count += 1,
                    None => bad_reports += 1, // faded
                }
                if reports == creatures as u64 {
                    break;
                }
            }
        }
    }
    // A meeting of two colours takes one from each and gives two to the third: the differences
    // between the colours' counts stay the same modulo 3.
    let mut start = [0u64; 3];
    for i in 0..creatures {
        start[i % 3] += 1;
    }
    let mod3 = |a: u64, b: u64| (a + 3 * (b + 1) - b) % 3;
    let kept = mod3(finals[0], finals[1]) == mod3(start[0], start[1])
        && mod3(finals[1], finals[2]) == mod3(start[1], start[2]);
    let answer = describe(made, requests, exits, counted, reports - bad_reports, wrong, kept && waiting.is_none());
    (answer, requests + reports + creatures_handled)
}

async fn root(creatures: usize, meetings: u64) -> (String, u64, std::time::Duration) {
    let start = Instant::now();
    let (to_mall, inbox) = unbounded_channel();
    let (answer, handled) = joined(tokio::spawn(mall(creatures, meetings, to_mall, inbox))).await;
    (answer, handled, start.elapsed())
}

pub fn run(params: &Params) -> Reply {
    let creatures = params["creatures"] as u64;
    let meetings = params["meetings"] as u64;
    let injected = fault();
    // Fault::compute: the mall makes one meeting more, which the check below must catch.
    let made = meetings + u64::from(injected == Fault::Compute);
    let (answer, handled, elapsed) = on_runtime(params["threads"], root(creatures as usize, made));
    let expected = describe(meetings, creatures + 2 * meetings, creatures, 2 * meetings, creatures, 0, true);
    if answer != expected {
        wrong_answer("savina_chameneos", &answer, &expected);
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: handled,
        answer: if injected == Fault::Reply { answer.replace("kept", "broken") } else { answer },
        metrics: Vec::new(),
    }
}
