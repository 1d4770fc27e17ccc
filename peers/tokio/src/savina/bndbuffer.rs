//! savina_bndbuffer (Savina's benchmark 10, Producer-Consumer with Bounded Buffer) on tokio: a
//! manager task which, when it starts, makes `consumers` consumer tasks (every one free) and
//! `producers` producer tasks and tells each producer to produce, as Savina's ManagerActor. A
//! producer told to produce does Savina's synthetic work (produce_cost x 100 logarithms of its
//! PseudoRandom's doubles) and sends the item to the manager, which hands it to the first free
//! consumer or keeps it in its buffer, and tells the producer to produce again unless the buffer
//! holds buffer_size - producers items or more (then the producer waits for room). A consumer
//! does its work (consume_cost) on each item, counts it (in one array of atomic counters the
//! consumers share, an item's slot its own, as ours), and tells the manager it is free, which
//! hands it the oldest buffered item. A producer told to produce with all its items made tells the
//! manager it has exited; once every producer has and every consumer is free the manager tells the
//! consumers to exit. Producers and consumers are named by index and items carry their producer's
//! sequence number, as ours. 4*producers*items_per_producer + 2*producers + consumers messages
//! (bndbuffer.cpp). The logarithms are f64::ln, the C library's log as ours; the items' values are
//! not part of the answer.
//!
//! Measured phase (elapsed_ns), as ours: the manager made and started, the producers and consumers
//! made and started by it, every item, until every consumer's task has ended on its Exit.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::collections::VecDeque;
use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

use super::joined;
use super::random::PseudoRandom;
use crate::{fail, fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

/// Savina's processItem (bndbuffer.cpp's process_item): `cost` x 100 logarithms of its
/// PseudoRandom's doubles (one with cost 0), the generator seeded with the cost.
fn process_item(current: f64, cost: u64) -> f64 {
    let mut result = current;
    let mut random = PseudoRandom(cost);
    if cost > 0 {
        for _ in 0..cost {
            for _ in 0..100 {
                result += (random.next_double().abs() + 0.01).ln();
            }
        }
    } else {
        result += (random.next_double().abs() + 0.01).ln();
    }
    result
}

struct Setup {
    buffer_size: usize,
    producers: usize,
    consumers: usize,
    items: u64, // per producer
    produce_cost: u64,
    consume_cost: u64,
    /// Times item producer * items + seq was consumed, counted by the consumers. Relaxed: each
    /// count is read only after every consumer's task has been joined (a join happens after the
    /// task's every write), and fetch_add counts an item handed out twice twice.
    consumed: Vec<AtomicU32>,
}

struct Produce;

struct Data {
    producer: usize,
    seq: u64,
    value: f64,
}

enum ToManager {
    Data(Data),
    Available(usize),
    ProducerExit,
}

enum ToConsumer {
    Data(Data),
    Exit,
}

/// A producer's or consumer's tally, handed back when its task ends.
struct Tally {
    produced: u64,
    handled: u64,
    sink: f64, // the synthetic work's last result
}

/// Savina's ProducerActor; `items` it makes (Fault::compute: one more than the setup's).
async fn producer(id: usize, items: u64, setup: Arc<Setup>, mut inbox: UnboundedReceiver<Produce>,
                  manager: UnboundedSender<ToManager>) -> Tally {
    let mut tally = Tally { produced: 0, handled: 0, sink: 0.0 };
    while let Some(Produce) = inbox.recv().await {
        tally.handled += 1;
        if tally.produced == items {
            let _ = manager.send(ToManager::ProducerExit);
            break;
        }
        tally.sink = process_item(tally.sink, setup.produce_cost);
        let _ = manager.send(ToManager::Data(Data { producer: id, seq: tally.produced, value: tally.sink }));
        tally.produced += 1;
    }
    tally
}

/// Savina's ConsumerActor.
async fn consumer(id: usize, setup: Arc<Setup>, mut inbox: UnboundedReceiver<ToConsumer>,
                  manager: UnboundedSender<ToManager>) -> Tally {
    let mut tally = Tally { produced: 0, handled: 0, sink: 0.0 };
    while let Some(message) = inbox.recv().await {
        tally.handled += 1;
        match message {
            ToConsumer::Data(data) => {
                tally.sink = process_item(tally.sink + data.value, setup.consume_cost);
                if data.producer < setup.producers && data.seq < setup.items {
                    setup.consumed[data.producer * setup.items as usize + data.seq as usize].fetch_add(1, Ordering::Relaxed);
                }
                let _ = manager.send(ToManager::Available(id));
            }
            ToConsumer::Exit => break,
        }
    }
    tally
}

/// The manager's tally and the tasks it made.
struct Managed {
    handled: u64,
    over_buffer: u64, // items that found the buffer full
    producers: Vec<JoinHandle<Tally>>,
    consumers: Vec<JoinHandle<Tally>>,
}

/// Savina's ManagerActor: makes the others when it starts; ends once it has told the consumers to
/// exit (nothing is sent to it after: every producer has exited, every consumer is free).
async fn manager(setup: Arc<Setup>, produce: u64, me: UnboundedSender<ToManager>, mut inbox: UnboundedReceiver<ToManager>) -> Managed {
    let mut available: VecDeque<usize> = (0..setup.consumers).collect(); // in the order they became free
    let (mut consumers, mut consumer_tasks) = (Vec::with_capacity(setup.consumers), Vec::with_capacity(setup.consumers));
    for id in 0..setup.consumers {
        let (sender, inbox) = unbounded_channel();
        consumers.push(sender);
        consumer_tasks.push(tokio::spawn(consumer(id, setup.clone(), inbox, me.clone())));
    }
    let (mut producers, mut producer_tasks) = (Vec::with_capacity(setup.producers), Vec::with_capacity(setup.producers));
    for id in 0..setup.producers {
        let (sender, inbox) = unbounded_channel();
        producers.push(sender);
        producer_tasks.push(tokio::spawn(producer(id, produce, setup.clone(), inbox, me.clone())));
    }
    drop(me);
    for producer in &producers {
        let _ = producer.send(Produce);
    }
    let adjusted = setup.buffer_size - setup.producers; // Savina's: room for an item from each producer in flight
    let mut pending: VecDeque<Data> = VecDeque::new(); // the buffer
    let mut parked: VecDeque<usize> = VecDeque::new(); // producers waiting for room
    let (mut exited, mut handled, mut over_buffer) = (0, 0, 0);
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToManager::Data(data) => {
                let producer = data.producer;
                match available.pop_front() {
                    Some(consumer) => {
                        let _ = consumers[consumer].send(ToConsumer::Data(data));
                    }
                    None => {
                        pending.push_back(data);
                        over_buffer += u64::from(pending.len() > setup.buffer_size);
                    }
                }
                if pending.len() >= adjusted {
                    parked.push_back(producer);
                } else {
                    let _ = producers[producer].send(Produce);
                }
            }
            ToManager::Available(consumer) => match pending.pop_front() {
                None => available.push_back(consumer),
                Some(data) => {
                    let _ = consumers[consumer].send(ToConsumer::Data(data));
                    if let Some(producer) = parked.pop_front() {
                        let _ = producers[producer].send(Produce);
                    }
                }
            },
            ToManager::ProducerExit => exited += 1,
        }
        if exited == setup.producers && available.len() == setup.consumers {
            for consumer in &consumers {
                let _ = consumer.send(ToConsumer::Exit);
            }
            break;
        }
    }
    Managed { handled, over_buffer, producers: producer_tasks, consumers: consumer_tasks }
}

struct Outcome {
    produced: u64,
    consumed: u64,
    once: u64,
    short_producers: u64,
    over_buffer: u64,
}

fn describe(o: &Outcome) -> String {
    format!(
        "produced={} consumed={} consumed_once={} short_producers={} over_buffer={}",
        o.produced, o.consumed, o.once, o.short_producers, o.over_buffer
    )
}

async fn root(setup: Arc<Setup>, produce: u64) -> (Outcome, u64, std::time::Duration) {
    let start = Instant::now();
    let (to_manager, inbox) = unbounded_channel();
    let managed = joined(tokio::spawn(manager(setup.clone(), produce, to_manager.clone(), inbox))).await;
    drop(to_manager);
    let mut consumed = Vec::with_capacity(managed.consumers.len());
    for task in managed.consumers {
        consumed.push(joined(task).await);
    }
    let elapsed = start.elapsed();
    let mut produced = Vec::with_capacity(managed.producers.len());
    for task in managed.producers {
        produced.push(joined(task).await); // each ended on its exit, before the manager did
    }
    let mut outcome = Outcome { produced: 0, consumed: 0, once: 0, short_producers: 0, over_buffer: managed.over_buffer };
    let mut handled = managed.handled;
    let mut sink = 0.0;
    for tally in &produced {
        outcome.produced += tally.produced;
        outcome.short_producers += u64::from(tally.produced != setup.items);
        handled += tally.handled;
        sink += tally.sink;
    }
    for tally in &consumed {
        handled += tally.handled;
        sink += tally.sink;
    }
    // SAFETY: a read of a live local f64: the synthetic work's results are used, so none is dropped.
    let _ = unsafe { std::ptr::read_volatile(&sink) };
    for times in &setup.consumed {
        let times = times.load(Ordering::Relaxed);
        outcome.consumed += u64::from(times);
        outcome.once += u64::from(times == 1);
    }
    (outcome, handled, elapsed)
}

pub fn run(params: &Params) -> Reply {
    let buffer_size = params["buffer_size"] as usize;
    let producers = params["producers"] as usize;
    let consumers = params["consumers"] as usize;
    let items = params["items_per_producer"] as u64;
    if buffer_size <= producers {
        fail(&format!("param buffer_size ({}) must exceed producers ({}): the manager keeps room for an item \
                       from each producer in flight", buffer_size, producers));
    }
    if producers as u64 * items > 1_000_000_000 {
        fail("param producers * items_per_producer must be at most 1000000000 (each item is tracked)");
    }
    let tracked = producers * items as usize;
    let setup = Arc::new(Setup {
        buffer_size,
        producers,
        consumers,
        items,
        produce_cost: params["produce_cost"] as u64,
        consume_cost: params["consume_cost"] as u64,
        consumed: (0..tracked).map(|_| AtomicU32::new(0)).collect(),
    });
    let injected = fault();
    // Fault::compute: each producer makes one item more, which the check below must catch.
    let produce = items + u64::from(injected == Fault::Compute);
    let (outcome, handled, elapsed) = on_runtime(params["threads"], root(setup, produce));
    let answer = describe(&outcome);
    let all = producers as u64 * items;
    let expected = describe(&Outcome { produced: all, consumed: all, once: all, short_producers: 0, over_buffer: 0 });
    if answer != expected {
        wrong_answer("savina_bndbuffer", &answer, &expected);
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: handled,
        answer: if injected == Fault::Reply { describe(&Outcome { over_buffer: 1, ..outcome }) } else { answer },
        metrics: Vec::new(),
    }
}
