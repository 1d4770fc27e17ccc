//! savina_concsll (Savina's benchmark 9, Concurrent Sorted Linked List) on tokio: a list task,
//! `workers` worker tasks and a master (served.rs). Each worker sends `messages_per_worker`
//! requests to the list, one at a time, drawn from its own SplitMix64 stream (seed, worker) as
//! ours: `size_percent` percent ask the list's size (a walk of it all), `write_percent` percent
//! insert a 32-bit value in order (a walk to its place), the rest ask whether a value is in it (a
//! walk until found). The list answers each with a Reply, and on End walks its list (length, order,
//! digest). Inserts commute, so the final list is the same in every interleaving.
//! 2*workers*(messages_per_worker + 1) + 1 messages (concsll.cpp).
//!
//! Measured phase (elapsed_ns), as ours: the list, the workers and the master made and started,
//! until the list's task has ended on End.

use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use super::random::{mix64, SplitMix64};
use super::served::{self, ToWorker};
use crate::{fail, fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

struct Node {
    value: u32,
    next: Option<Box<Node>>,
}

/// Savina's SortedLinkedList (concsll.cpp's SortedList): an insert after the last element not
/// greater than it, a membership test walking until it finds the value, a size that walks it all.
#[derive(Default)]
struct SortedList {
    head: Option<Box<Node>>,
}

impl SortedList {
    fn add(&mut self, value: u32) {
        let mut link = &mut self.head;
        while link.as_ref().map_or(false, |node| node.value <= value) {
            link = &mut link.as_mut().unwrap().next;
        }
        let next = link.take();
        *link = Some(Box::new(Node { value, next }));
    }

    fn nodes(&self) -> impl Iterator<Item = &Node> {
        std::iter::successors(self.head.as_deref(), |node| node.next.as_deref())
    }

    fn contains(&self, value: u32) -> bool {
        self.nodes().any(|node| node.value == value)
    }

    fn size(&self) -> u64 {
        self.nodes().count() as u64
    }
}

impl Drop for SortedList {
    // One node at a time: Box's own drop would recurse once per node, past a thread's stack on a
    // long list.
    fn drop(&mut self) {
        let mut next = self.head.take();
        while let Some(mut node) = next {
            next = node.next.take();
        }
    }
}

#[derive(Clone, Copy)]
struct Sizes {
    workers: u64,
    messages: u64,
    write_percent: u64,
    size_percent: u64,
    seed: u64,
}

/// A worker's next operation (concsll.cpp's next_operation): a draw below 100; under size_percent
/// a size query, under size_percent + write_percent an insert, else a membership test.
enum Operation {
    Size,
    Write(u32),
    Contains(u32),
}

fn next_operation(random: &mut SplitMix64, sizes: &Sizes) -> Operation {
    let draw = random.next() % 100;
    if draw < sizes.size_percent {
        Operation::Size
    } else if draw < sizes.size_percent + sizes.write_percent {
        Operation::Write((random.next() >> 32) as u32)
    } else {
        Operation::Contains((random.next() >> 32) as u32)
    }
}

enum ToList {
    Write { sender: UnboundedSender<ToWorker>, value: u32 },
    Contains { sender: UnboundedSender<ToWorker>, value: u32 },
    Size { sender: UnboundedSender<ToWorker> },
    End { replies: u64 },
}

#[derive(Default)]
struct Outcome {
    contains: u64,
    writes: u64,
    sizes: u64,
    replies: u64,
    length: u64,
    unsorted: u64, // adjacent pairs out of order in the final list
    digest: u64,   // sum of mix64(position << 32 | value) over the final list
}

fn describe(o: &Outcome) -> String {
    format!(
        "contains={} writes={} sizes={} replies={} length={} unsorted={} digest={}",
        o.contains, o.writes, o.sizes, o.replies, o.length, o.unsorted, o.digest
    )
}

/// Savina's SortedListActor: returns its outcome and the messages it handled.
async fn list(mut inbox: UnboundedReceiver<ToList>) -> (Outcome, u64) {
    let mut list = SortedList::default();
    let mut outcome = Outcome::default();
    let mut handled = 0;
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToList::Write { sender, value } => {
                outcome.writes += 1;
                list.add(value);
                let _ = sender.send(ToWorker::Reply(u64::from(value)));
            }
            ToList::Contains { sender, value } => {
                outcome.contains += 1;
                let _ = sender.send(ToWorker::Reply(u64::from(list.contains(value))));
            }
            ToList::Size { sender } => {
                outcome.sizes += 1;
                let _ = sender.send(ToWorker::Reply(list.size()));
            }
            ToList::End { replies } => {
                outcome.replies = replies;
                for (i, node) in list.nodes().enumerate() {
                    outcome.unsorted += u64::from(node.next.as_ref().map_or(false, |next| next.value < node.value));
                    outcome.digest = outcome.digest.wrapping_add(mix64((i as u64) << 32 | u64::from(node.value)));
                    outcome.length += 1;
                }
                break;
            }
        }
    }
    (outcome, handled)
}

async fn root(sizes: Sizes) -> (Outcome, u64, std::time::Duration) {
    let start = Instant::now();
    let (to_list, inbox) = unbounded_channel();
    let server = tokio::spawn(list(inbox));
    let next = |worker: usize| {
        let mut random = SplitMix64::new(sizes.seed, worker as u32);
        move |sender| match next_operation(&mut random, &sizes) {
            Operation::Size => ToList::Size { sender },
            Operation::Write(value) => ToList::Write { sender, value },
            Operation::Contains(value) => ToList::Contains { sender, value },
        }
    };
    let tasks = served::start(sizes.workers as usize, sizes.messages, next, &to_list, |replies| ToList::End { replies });
    drop(to_list);
    let (outcome, handled) = joined(server).await;
    let elapsed = start.elapsed();
    (outcome, handled + served::handled(tasks).await, elapsed)
}

/// The sequential replay (concsll.cpp's replay): every value inserted, in any order, sorted.
fn replay(sizes: Sizes) -> Outcome {
    let mut outcome = Outcome::default();
    let mut values = Vec::new();
    for worker in 0..sizes.workers {
        let mut random = SplitMix64::new(sizes.seed, worker as u32);
        for _ in 0..sizes.messages {
            match next_operation(&mut random, &sizes) {
                Operation::Size => outcome.sizes += 1,
                Operation::Write(value) => {
                    values.push(value);
                    outcome.writes += 1;
                }
                Operation::Contains(_) => outcome.contains += 1,
            }
        }
    }
    values.sort_unstable();
    outcome.replies = outcome.contains + outcome.writes + outcome.sizes;
    outcome.length = values.len() as u64;
    for (i, value) in values.iter().enumerate() {
        outcome.digest = outcome.digest.wrapping_add(mix64((i as u64) << 32 | u64::from(*value)));
    }
    outcome
}

pub fn run(params: &Params) -> Reply {
    let sizes = Sizes {
        workers: params["workers"] as u64,
        messages: params["messages_per_worker"] as u64,
        write_percent: params["write_percent"] as u64,
        size_percent: params["size_percent"] as u64,
        seed: params["seed"] as u64,
    };
    if sizes.write_percent + sizes.size_percent > 100 {
        fail(&format!("param write_percent ({}) plus size_percent ({}) must be at most 100", sizes.write_percent, sizes.size_percent));
    }
    let injected = fault();
    // Fault::compute: each worker sends one request more, which the check below must catch.
    let sent = Sizes { messages: sizes.messages + u64::from(injected == Fault::Compute), ..sizes };
    let (outcome, handled, elapsed) = on_runtime(params["threads"], root(sent));
    let answer = describe(&outcome);
    let expected = describe(&replay(sizes));
    if answer != expected {
        wrong_answer("savina_concsll", &answer, &expected);
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: handled,
        answer: if injected == Fault::Reply { describe(&Outcome { unsorted: 1, ..outcome }) } else { answer },
        metrics: Vec::new(),
    }
}
