//! ping_pong on tokio: a pinger (the kernel's root task) and a ponger task exchange messages/2
//! round trips, each owning the receiving end of an mpsc channel of capacity 1 (tokio's
//! smallest; Go's channels here are unbuffered) and holding a Sender to the other's; each side
//! checks that the sequence numbers arrive in order. As our kernel, in two phases: the
//! throughput phase (elapsed_ns) has no clock read inside; then the latency phase times
//! latency_samples more round trips one by one for the percentiles.

use std::time::Instant;

use tokio::sync::mpsc;

use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

/// What one side received: how many, and how many out of order.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    received: u64,
    out_of_order: u64,
}

fn describe(pings: Tally, pongs: Tally) -> String {
    format!(
        "pings={} pongs={} out_of_order={} corrupt=0",
        pings.received,
        pongs.received,
        pings.out_of_order + pongs.out_of_order
    )
}

/// The ponger answers each ping with a pong of the same seq (Fault::compute: the first pong's
/// seq is off by one); the first round_trips pings are the throughput phase's, the rest the
/// probes'. Returns what it received in each phase.
async fn ponger(round_trips: u64, probes: u64, wrong_pong: bool, mut ping: mpsc::Receiver<u64>,
                pong: mpsc::Sender<u64>) -> (Tally, Tally) {
    let (mut pings, mut probe_pings) = (Tally::default(), Tally::default());
    for k in 0..round_trips + probes {
        let seq = match ping.recv().await {
            Some(seq) => seq,
            None => break,
        };
        let tally = if k < round_trips { &mut pings } else { &mut probe_pings };
        tally.out_of_order += u64::from(seq != k);
        tally.received += 1;
        let answer = seq + u64::from(wrong_pong && k == 0);
        if pong.send(answer).await.is_err() {
            break;
        }
    }
    (pings, probe_pings)
}

/// What one clock read costs here: each timed round trip includes about one.
fn clock_read_ns() -> f64 {
    const READS: u32 = 1000;
    let first = Instant::now();
    let mut last = first;
    for _ in 0..READS {
        last = Instant::now();
    }
    (last - first).as_nanos() as f64 / f64::from(READS)
}

/// Our kernel's percentile: sorted[min(int(p*(n-1)+0.5), n-1)]; `sorted` is not empty (the chat's
/// turns take it too).
pub fn percentile(sorted: &[u64], p: f64) -> f64 {
    let rank = (p * (sorted.len() - 1) as f64 + 0.5) as usize;
    sorted[rank.min(sorted.len() - 1)] as f64
}

struct Pinged {
    pings: Tally,
    pongs: Tally,
    probe_pings: Tally,
    probe_pongs: Tally,
    elapsed: std::time::Duration,
    samples: Vec<u64>,
    clock_read: f64,
}

async fn pinger(round_trips: u64, probes: u64, wrong_pong: bool) -> Pinged {
    let (ping, ping_inbox) = mpsc::channel(1);
    let (pong, mut inbox) = mpsc::channel(1);
    let ponger = tokio::spawn(ponger(round_trips, probes, wrong_pong, ping_inbox, pong));
    let (mut pongs, mut probe_pongs) = (Tally::default(), Tally::default());

    // The throughput phase: no clock read inside.
    let start = Instant::now();
    for k in 0..round_trips {
        if ping.send(k).await.is_err() {
            break;
        }
        match inbox.recv().await {
            Some(seq) => pongs.out_of_order += u64::from(seq != k),
            None => break,
        }
        pongs.received += 1;
    }
    let elapsed = start.elapsed();

    // The latency phase.
    let clock_read = if probes > 0 { clock_read_ns() } else { 0.0 };
    let mut samples = Vec::with_capacity(probes as usize);
    for k in round_trips..round_trips + probes {
        let sent = Instant::now();
        if ping.send(k).await.is_err() {
            break;
        }
        let seq = match inbox.recv().await {
            Some(seq) => seq,
            None => break,
        };
        samples.push(nanos(sent.elapsed()));
        probe_pongs.out_of_order += u64::from(seq != k);
        probe_pongs.received += 1;
    }
    drop(ping);
    let (pings, probe_pings) = ponger.await.unwrap_or_default();
    Pinged { pings, pongs, probe_pings, probe_pongs, elapsed, samples, clock_read }
}

pub fn run(params: &Params) -> Reply {
    let round_trips = params["messages"] as u64 / 2;
    let probes = params["latency_samples"] as u64;
    let injected = fault();
    let mut run = on_runtime(params["threads"], pinger(round_trips, probes, injected == Fault::Compute));

    let answer = describe(run.pings, run.pongs);
    let expected = describe(Tally { received: round_trips, out_of_order: 0 }, Tally { received: round_trips, out_of_order: 0 });
    if answer != expected {
        wrong_answer("ping_pong", &answer, &expected);
    }
    let probed = describe(run.probe_pings, run.probe_pongs);
    let planned = describe(Tally { received: probes, out_of_order: 0 }, Tally { received: probes, out_of_order: 0 });
    if probed != planned {
        wrong_answer("ping_pong (latency phase)", &probed, &planned);
    }

    let elapsed_ns = nanos(run.elapsed);
    let samples = &mut run.samples;
    samples.sort_unstable();
    let mut metrics = vec![("round_trip_mean_ns", elapsed_ns as f64 / round_trips as f64)];
    if !samples.is_empty() {
        metrics.push(("round_trip_p50_ns", percentile(samples, 0.50)));
        metrics.push(("round_trip_p99_ns", percentile(samples, 0.99)));
        metrics.push(("round_trip_max_ns", *samples.last().unwrap() as f64));
    }
    metrics.push(("round_trip_samples", samples.len() as f64));
    if !samples.is_empty() {
        metrics.push(("clock_read_ns", run.clock_read));
    }
    let wrong_pongs = Tally { received: run.pongs.received - 1, out_of_order: 0 };
    Reply {
        elapsed_ns,
        messages: run.pings.received + run.pongs.received,
        answer: if injected == Fault::Reply { describe(run.pings, wrong_pongs) } else { answer },
        metrics,
    }
}
