//! savina_count (Savina's benchmark 2, Counting Actor) on tokio: the root task sends an Increment
//! to the producer, which in that one handling sends N Increments to the counter and then a
//! Retrieve carrying its own Sender; the counter adds one per Increment and answers the Retrieve
//! with a Result carrying its count. N+3 messages (count.hpp). The counter's mailbox is unbounded,
//! as Akka's: the producer never waits, and the Increments it sent wait there for the counter.
//!
//! Measured phase (elapsed_ns), as ours: the two actors made (counter, then producer with the
//! counter's Sender) and started, and every message until the producer's task has ended on the
//! Result.

use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

enum ToCounter {
    Increment,
    Retrieve(UnboundedSender<ToProducer>),
}

enum ToProducer {
    Increment, // the start
    Result(u64),
}

/// The producer counts its start and the Result, the counter the Increments and the Retrieve
/// (count.hpp's Tally); `result` is the count the Result carried.
#[derive(Default)]
struct Tally {
    start: u64,
    increments: u64,
    retrieves: u64,
    results: u64,
    result: u64,
}

impl Tally {
    fn messages(&self) -> u64 {
        self.start + self.increments + self.retrieves + self.results
    }

    fn describe(&self) -> String {
        format!(
            "start={} increments={} retrieves={} results={} result={}",
            self.start, self.increments, self.retrieves, self.results, self.result
        )
    }
}

async fn counter(mut inbox: UnboundedReceiver<ToCounter>) -> Tally {
    let mut tally = Tally::default();
    let mut count = 0;
    while let Some(message) = inbox.recv().await {
        match message {
            ToCounter::Increment => {
                count += 1;
                tally.increments += 1;
            }
            ToCounter::Retrieve(sender) => {
                tally.retrieves += 1;
                let _ = sender.send(ToProducer::Result(count));
                break;
            }
        }
    }
    tally
}

async fn producer(increments: u64, me: UnboundedSender<ToProducer>, mut inbox: UnboundedReceiver<ToProducer>,
                  counter: UnboundedSender<ToCounter>) -> Tally {
    let mut tally = Tally::default();
    while let Some(message) = inbox.recv().await {
        match message {
            ToProducer::Increment => {
                tally.start += 1;
                for _ in 0..increments {
                    let _ = counter.send(ToCounter::Increment);
                }
                let _ = counter.send(ToCounter::Retrieve(me.clone()));
            }
            ToProducer::Result(result) => {
                tally.results += 1;
                tally.result = result;
                break;
            }
        }
    }
    tally
}

async fn root(increments: u64) -> (Tally, std::time::Duration) {
    let start = Instant::now();
    let (to_counter, counter_inbox) = unbounded_channel();
    let counter = tokio::spawn(counter(counter_inbox));
    let (to_producer, producer_inbox) = unbounded_channel();
    let producer = tokio::spawn(producer(increments, to_producer.clone(), producer_inbox, to_counter));
    let _ = to_producer.send(ToProducer::Increment);
    drop(to_producer);
    let produced = joined(producer).await;
    let elapsed = start.elapsed();
    let counted = joined(counter).await;
    (Tally { increments: counted.increments, retrieves: counted.retrieves, ..produced }, elapsed)
}

pub fn run(params: &Params) -> Reply {
    let increments = params["increments"] as u64;
    let injected = fault();
    // Fault::compute: the producer sends one Increment more, which the check below must catch.
    let (tally, elapsed) = on_runtime(params["threads"], root(increments + u64::from(injected == Fault::Compute)));
    let expected = Tally { start: 1, increments, retrieves: 1, results: 1, result: increments };
    let answer = tally.describe();
    if answer != expected.describe() {
        wrong_answer("savina_count", &answer, &expected.describe());
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: tally.messages(),
        answer: if injected == Fault::Reply { Tally { result: tally.result + 1, ..tally }.describe() } else { answer },
        metrics: Vec::new(),
    }
}
