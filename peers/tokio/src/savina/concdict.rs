//! savina_concdict (Savina's benchmark 8, Concurrent Dictionary) on tokio: a dictionary task,
//! `workers` worker tasks and a master (served.rs). Each worker sends `messages_per_worker`
//! requests to the dictionary, one at a time: `write_percent` percent writes of (key, value), the
//! rest reads of a key, from its own SplitMix64 stream (seed, worker), as ours; worker i writes only
//! keys k with k % workers == i, so the final contents do not depend on the interleaving. The
//! dictionary answers each with a Reply, and on End digests its contents. It is a std HashMap (Rust's
//! default hasher, SipHash-1-3), where ours is a std::unordered_map and Savina's a
//! java.util.HashMap. 2*workers*(messages_per_worker + 1) + 1 messages (concdict.cpp).
//!
//! Measured phase (elapsed_ns), as ours: the dictionary made (copying the initial map {k: k},
//! filled before the clock, as Savina fills it while parsing its arguments), the workers and the
//! master made and started, until the dictionary's task has ended on End.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use super::random::{mix64, SplitMix64};
use super::served::{self, ToWorker};
use crate::{fail, fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

/// One entry's share of the dictionary's digest (a sum over entries: the order does not count).
fn entry_digest(key: u32, value: u32) -> u64 {
    mix64(u64::from(key) << 32 | u64::from(value))
}

#[derive(Clone, Copy)]
struct Sizes {
    workers: u64,
    messages: u64,
    write_percent: u64,
    keys: u64,
    seed: u64,
}

/// concdict.cpp's Generator: worker w's operations, (write, key, value).
struct Generator {
    random: SplitMix64,
    sizes: Sizes,
    worker: u64,
    own_keys: u64,
}

impl Generator {
    fn new(sizes: Sizes, worker: u32) -> Self {
        let own_keys = (sizes.keys - u64::from(worker) + sizes.workers - 1) / sizes.workers;
        Generator { random: SplitMix64::new(sizes.seed, worker), sizes, worker: u64::from(worker), own_keys }
    }

    fn next(&mut self) -> (bool, u32, u32) {
        if self.random.next() % 100 < self.sizes.write_percent {
            let key = (self.worker + self.sizes.workers * (self.random.next() % self.own_keys)) as u32;
            return (true, key, (self.random.next() >> 32) as u32);
        }
        (false, (self.random.next() % self.sizes.keys) as u32, 0)
    }
}

enum ToDictionary {
    Write { sender: UnboundedSender<ToWorker>, key: u32, value: u32 },
    Read { sender: UnboundedSender<ToWorker>, key: u32 },
    End { replies: u64 },
}

#[derive(Default)]
struct Outcome {
    reads: u64,
    writes: u64,
    replies: u64,
    size: u64,
    digest: u64,
}

fn describe(o: &Outcome) -> String {
    format!("reads={} writes={} replies={} size={} digest={}", o.reads, o.writes, o.replies, o.size, o.digest)
}

/// Savina's DictionaryActor: returns its outcome and the messages it handled.
async fn dictionary(initial: Arc<HashMap<u32, u32>>, mut inbox: UnboundedReceiver<ToDictionary>) -> (Outcome, u64) {
    let mut data = HashMap::clone(&initial); // Savina's dictionary copies the initial map when made
    let mut outcome = Outcome::default();
    let mut handled = 0;
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToDictionary::Write { sender, key, value } => {
                outcome.writes += 1;
                data.insert(key, value);
                let _ = sender.send(ToWorker::Reply(u64::from(value)));
            }
            ToDictionary::Read { sender, key } => {
                outcome.reads += 1;
                let _ = sender.send(ToWorker::Reply(u64::from(data.get(&key).copied().unwrap_or(0)))); // 0 where absent, as ours
            }
            ToDictionary::End { replies } => {
                outcome.replies = replies;
                outcome.size = data.len() as u64;
                outcome.digest = data.iter().fold(0u64, |sum, (key, value)| sum.wrapping_add(entry_digest(*key, *value)));
                break;
            }
        }
    }
    (outcome, handled)
}

async fn root(sizes: Sizes, initial: Arc<HashMap<u32, u32>>) -> (Outcome, u64, std::time::Duration) {
    let start = Instant::now();
    let (to_dictionary, inbox) = unbounded_channel();
    let server = tokio::spawn(dictionary(initial, inbox));
    let next = |worker: usize| {
        let mut generator = Generator::new(sizes, worker as u32);
        move |sender| match generator.next() {
            (true, key, value) => ToDictionary::Write { sender, key, value },
            (false, key, _) => ToDictionary::Read { sender, key },
        }
    };
    let tasks = served::start(sizes.workers as usize, sizes.messages, next, &to_dictionary, |replies| ToDictionary::End { replies });
    drop(to_dictionary);
    let (outcome, handled) = joined(server).await;
    let elapsed = start.elapsed();
    (outcome, handled + served::handled(tasks).await, elapsed)
}

/// The sequential replay (concdict.cpp's replay): every worker's operations in turn, on {k: k}.
fn replay(sizes: Sizes) -> Outcome {
    let mut outcome = Outcome::default();
    let mut written: HashMap<u32, u32> = HashMap::new();
    for worker in 0..sizes.workers {
        let mut generator = Generator::new(sizes, worker as u32);
        for _ in 0..sizes.messages {
            match generator.next() {
                (true, key, value) => {
                    written.insert(key, value);
                    outcome.writes += 1;
                }
                (false, _, _) => outcome.reads += 1,
            }
        }
    }
    outcome.replies = outcome.reads + outcome.writes;
    outcome.size = sizes.keys;
    for k in 0..sizes.keys as u32 {
        outcome.digest = outcome.digest.wrapping_add(entry_digest(k, k));
    }
    for (key, value) in &written {
        outcome.digest = outcome.digest.wrapping_add(entry_digest(*key, *value)).wrapping_sub(entry_digest(*key, *key));
    }
    outcome
}

pub fn run(params: &Params) -> Reply {
    let sizes = Sizes {
        workers: params["workers"] as u64,
        messages: params["messages_per_worker"] as u64,
        write_percent: params["write_percent"] as u64,
        keys: params["keys"] as u64,
        seed: params["seed"] as u64,
    };
    if sizes.keys < sizes.workers {
        fail(&format!("param keys ({}) must be at least workers ({}): each worker writes its own keys", sizes.keys, sizes.workers));
    }
    let initial: HashMap<u32, u32> = (0..sizes.keys as u32).map(|k| (k, k)).collect();
    let injected = fault();
    // Fault::compute: each worker sends one request more, which the check below must catch.
    let sent = Sizes { messages: sizes.messages + u64::from(injected == Fault::Compute), ..sizes };
    let (outcome, handled, elapsed) = on_runtime(params["threads"], root(sent, Arc::new(initial)));
    let answer = describe(&outcome);
    let expected = describe(&replay(sizes));
    if answer != expected {
        wrong_answer("savina_concdict", &answer, &expected);
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: handled,
        answer: if injected == Fault::Reply { describe(&Outcome { size: outcome.size + 1, ..outcome }) } else { answer },
        metrics: Vec::new(),
    }
}
