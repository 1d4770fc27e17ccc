//! Savina's two fork-join benchmarks on tokio: savina_fjthrput (benchmark 3, throughput) and
//! savina_fjcreate (benchmark 4, creation). As ours and Savina's, the sender is a thread outside
//! the runtime (Savina's main thread; here a std::thread spawning the workers through the
//! runtime's Handle): on the current-thread scheduler the workers run on the program's main thread,
//! blocked on the sink's task, as ours run on one_thread's thread beside the kernel's own.
//!
//! Each job is Savina's performComputation(37.2), the square of a sine, the angle carried by the
//! message. Rust's f64::sin calls the C library's sin (glibc's libm here), as ours does, so the
//! sums match our answer to the last digit (Go's math.Sin does not: its peer calls C's sin through
//! cgo). A sink task adds the results up, as ours (Savina's workers only exit).

use std::time::Instant;

use tokio::runtime::Handle;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::{format_g17, joined};
use crate::{fault, nanos, runtime, wrong_answer, Fault, Params, Reply, PROGRAM};

/// Savina's angle (fjthrput.hpp's kTheta).
const THETA: f64 = 37.2;

/// Savina's job (fjthrput.hpp's job): out of line, so that its square is never fused into a sum.
#[inline(never)]
fn job(theta: f64) -> f64 {
    let sine = theta.sin();
    sine * sine
}

/// `value` added `count` times from zero, as a worker adds its results.
fn repeated_sum(value: f64, count: u64) -> f64 {
    let mut sum = 0.0;
    for _ in 0..count {
        sum += value;
    }
    sum
}

/// `theta` read at run time (a volatile read: std::hint::black_box is younger than Debian's
/// rustc 1.63), so that no sine of it is computed at compile time.
fn at_run_time(theta: f64) -> f64 {
    // SAFETY: a read of a live local f64, aligned and initialised.
    unsafe { std::ptr::read_volatile(&theta) }
}

/// The angle the jobs carry; Fault::compute: another, whose sums the check below must refuse.
fn theta(injected: Fault) -> f64 {
    at_run_time(if injected == Fault::Compute { THETA + 0.1 } else { THETA })
}

/// Runs `sink` on the scheduler `threads` asks for while `sender` runs on a thread outside it,
/// given the runtime's Handle; returns the sink's output and when it ended, and when the sender
/// started its clock.
fn with_sender<S, T>(threads: i64, sink: S, sender: impl FnOnce(Handle) -> Instant + Send + 'static) -> (T, Instant, Instant)
where
    S: std::future::Future<Output = (T, Instant)> + Send + 'static,
    T: Send + 'static,
{
    let runtime = runtime(threads);
    let sink = runtime.spawn(sink);
    let handle = runtime.handle().clone();
    let sender = std::thread::spawn(move || sender(handle));
    let (output, end) = runtime.block_on(joined(sink));
    let start = sender.join().unwrap_or_else(|_| {
        eprintln!("{}: the sender's thread failed", PROGRAM);
        std::process::exit(1)
    });
    (output, start, end)
}

// ---- savina_fjthrput ----

/// What a worker reports once it has done its `messages` jobs (fjthrput.hpp's Tally).
struct Tally {
    worker: usize,
    jobs: u64,
    bad: u64,
    sum: f64,
}

/// Savina's ThroughputActor: one job per message; after `messages` it reports and exits.
async fn throughput_worker(worker: usize, messages: u64, mut inbox: UnboundedReceiver<f64>,
                           sink: UnboundedSender<Tally>) {
    let (mut jobs, mut bad, mut sum) = (0, 0, 0.0);
    while let Some(theta) = inbox.recv().await {
        let result = job(theta);
        bad += u64::from(!(result > 0.0));
        sum += result;
        jobs += 1;
        if jobs == messages {
            let _ = sink.send(Tally { worker, jobs, bad, sum });
            return;
        }
    }
}

struct Throughput {
    jobs: u64,
    workers_done: u64,
    bad: u64,
    sum: f64,
}

fn describe_throughput(o: &Throughput) -> String {
    format!("jobs={} workers_done={} bad_results={} result_sum={}", o.jobs, o.workers_done, o.bad, format_g17(o.sum))
}

/// The sink: the workers' tallies kept by worker and added up in the workers' order once all have
/// reported (fjthrput.hpp's Tallies).
async fn throughput_sink(actors: usize, mut inbox: UnboundedReceiver<Tally>) -> (Throughput, Instant) {
    let mut sums = vec![0.0; actors];
    let mut outcome = Throughput { jobs: 0, workers_done: 0, bad: 0, sum: 0.0 };
    while let Some(tally) = inbox.recv().await {
        outcome.workers_done += 1;
        outcome.jobs += tally.jobs;
        outcome.bad += tally.bad;
        if let Some(sum) = sums.get_mut(tally.worker) {
            *sum = tally.sum;
        }
        if outcome.workers_done == actors as u64 {
            break;
        }
    }
    outcome.sum = sums.iter().fold(0.0, |total, sum| total + sum);
    (outcome, Instant::now())
}

/// savina_fjthrput: the sender makes `actors` workers, then sends `messages` rounds of one job to
/// each in turn. Measured phase, as ours: from the workers' making (the sink made before) to the
/// sink holding the last tally. (messages + 1) * actors messages.
pub fn run_throughput(params: &Params) -> Reply {
    let messages = params["messages"] as u64;
    let actors = params["actors"] as usize;
    let injected = fault();
    let theta = theta(injected);
    let (to_sink, sink_inbox) = unbounded_channel();
    let (outcome, start, end) = with_sender(params["threads"], throughput_sink(actors, sink_inbox), move |runtime| {
        let start = Instant::now();
        let workers: Vec<UnboundedSender<f64>> = (0..actors)
            .map(|worker| {
                let (to_worker, inbox) = unbounded_channel();
                runtime.spawn(throughput_worker(worker, messages, inbox, to_sink.clone()));
                to_worker
            })
            .collect();
        drop(to_sink);
        for _ in 0..messages {
            for worker in &workers {
                let _ = worker.send(theta);
            }
        }
        start
    });
    let expected = Throughput {
        jobs: actors as u64 * messages,
        workers_done: actors as u64,
        bad: 0,
        sum: repeated_sum(repeated_sum(job(at_run_time(THETA)), messages), actors as u64),
    };
    let answer = describe_throughput(&outcome);
    if answer != describe_throughput(&expected) {
        wrong_answer("savina_fjthrput", &answer, &describe_throughput(&expected));
    }
    Reply {
        elapsed_ns: nanos(end.saturating_duration_since(start)),
        messages: outcome.jobs + outcome.workers_done,
        answer: if injected == Fault::Reply { describe_throughput(&Throughput { bad: 1, ..outcome }) } else { answer },
        metrics: Vec::new(),
    }
}

// ---- savina_fjcreate ----

/// What a worker reports once it has done its one job (fjcreate.hpp's Done).
struct Done {
    worker: usize,
    result: f64,
}

/// Savina's ForkJoinActor: does its one job, reports it, and exits.
async fn creation_worker(worker: usize, mut inbox: UnboundedReceiver<f64>, sink: UnboundedSender<Done>) {
    if let Some(theta) = inbox.recv().await {
        let _ = sink.send(Done { worker, result: job(theta) });
    }
}

struct Creation {
    done: u64,
    repeated: u64,
    bad: u64,
    sum: f64,
}

fn describe_creation(o: &Creation) -> String {
    format!("workers_done={} repeated={} bad_results={} result_sum={}", o.done, o.repeated, o.bad, format_g17(o.sum))
}

/// The sink: counts the reports, once per worker, and adds the results as they come
/// (fjcreate.hpp's Reports).
async fn creation_sink(workers: usize, mut inbox: UnboundedReceiver<Done>) -> (Creation, Instant) {
    let mut seen = vec![false; workers];
    let mut outcome = Creation { done: 0, repeated: 0, bad: 0, sum: 0.0 };
    while let Some(done) = inbox.recv().await {
        outcome.done += 1;
        match seen.get_mut(done.worker) {
            Some(seen) if !*seen => *seen = true,
            _ => outcome.repeated += 1,
        }
        outcome.bad += u64::from(!(done.result > 0.0));
        outcome.sum += done.result;
        if outcome.done == workers as u64 {
            break;
        }
    }
    (outcome, Instant::now())
}

/// savina_fjcreate: the sender makes `workers` workers one after another, each a task owning its
/// mailbox, sending each its one job right after making it. Measured phase, as ours: from the first
/// worker's making (the sink made before) to the sink's last report. 2 * workers messages.
pub fn run_creation(params: &Params) -> Reply {
    let workers = params["workers"] as usize;
    let injected = fault();
    let theta = theta(injected);
    let (to_sink, sink_inbox) = unbounded_channel();
    let (outcome, start, end) = with_sender(params["threads"], creation_sink(workers, sink_inbox), move |runtime| {
        let start = Instant::now();
        for worker in 0..workers {
            let (to_worker, inbox) = unbounded_channel();
            runtime.spawn(creation_worker(worker, inbox, to_sink.clone()));
            let _ = to_worker.send(theta);
        }
        start
    });
    let expected = Creation { done: workers as u64, repeated: 0, bad: 0, sum: repeated_sum(job(at_run_time(THETA)), workers as u64) };
    let answer = describe_creation(&outcome);
    if answer != describe_creation(&expected) {
        wrong_answer("savina_fjcreate", &answer, &describe_creation(&expected));
    }
    Reply {
        elapsed_ns: nanos(end.saturating_duration_since(start)),
        messages: 2 * outcome.done,
        answer: if injected == Fault::Reply { describe_creation(&Creation { repeated: 1, ..outcome }) } else { answer },
        metrics: Vec::new(),
    }
}
