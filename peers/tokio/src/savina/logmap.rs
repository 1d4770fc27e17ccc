//! savina_logmap (Savina's benchmark 14, Logistic Map) on tokio: a master task, `series` rate
//! computer tasks and `series` series worker tasks. On Start the master sends each worker `terms`
//! rounds of NextTerm, then a GetTerm. For a NextTerm a worker sends its term to its computer in a
//! Compute carrying a oneshot Sender (tokio's request and reply) and awaits the Result there: the
//! requests that come meanwhile wait in its mailbox and are taken up after, oldest first, where
//! ours holds them in a queue of its own and Savina's worker re-sends each stashed message to
//! itself. On GetTerm a worker reports its series (its count, a hash of every term's bits and its
//! last term) and ends; its computer's mailbox closes with it. Series i has rate start_rate +
//! i*increment and starts at term i*increment; the next term is rate*term*(1-term), Savina's order
//! of operations (Rust never fuses a multiply and an add unasked, so each term is our C++'s double
//! to the bit). The master folds the reports in series order, whatever order they come in.
//! 1 + series*(3*terms + 2) messages (logmap.cpp): a Result counted as a message.
//!
//! Measured phase (elapsed_ns), as ours: the master, the computers and the workers made and
//! started, the Start, until the master's task has ended on the last report.

use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

use super::random::{fnv_fold, FNV_BASIS};
use super::{format_g17, joined};
use crate::{fail, fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

/// Savina's LogisticMapConfig.computeNextTerm, in the same order of operations.
fn next_term(term: f64, rate: f64) -> f64 {
    rate * term * (1.0 - term)
}

/// Series i's rate and start term, as Savina's Master computes them (the product rounded alone).
fn rate_of(start_rate: f64, increment: f64, i: u32) -> f64 {
    start_rate + f64::from(i) * increment
}

fn start_of(increment: f64, i: u32) -> f64 {
    f64::from(i) * increment
}

struct Compute {
    term: f64,
    reply: oneshot::Sender<f64>,
}

enum ToWorker {
    NextTerm,
    GetTerm,
}

enum ToMaster {
    Start,
    SeriesDone { id: usize, computed: u64, hash: u64, last: f64 },
}

/// Savina's RateComputer: each Compute answered with the next term at its rate; returns the
/// Computes it handled once its worker has ended.
async fn computer(rate: f64, mut inbox: UnboundedReceiver<Compute>) -> u64 {
    let mut handled = 0;
    while let Some(Compute { term, reply }) = inbox.recv().await {
        handled += 1;
        let _ = reply.send(next_term(term, rate));
    }
    handled
}

/// Savina's SeriesWorker; returns the messages it handled (the Results included).
async fn worker(id: usize, mut term: f64, mut inbox: UnboundedReceiver<ToWorker>, computer: UnboundedSender<Compute>,
                master: UnboundedSender<ToMaster>) -> u64 {
    let (mut handled, mut computed, mut hash) = (0, 0, FNV_BASIS);
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToWorker::NextTerm => {
                let (reply, result) = oneshot::channel();
                let _ = computer.send(Compute { term, reply });
                match result.await {
                    Ok(next) => term = next,
                    Err(_) => break, // the computer is gone: the master's count comes up short
                }
                handled += 1; // the Result
                computed += 1;
                hash = fnv_fold(hash, term.to_bits());
            }
            ToWorker::GetTerm => {
                let _ = master.send(ToMaster::SeriesDone { id, computed, hash, last: term });
                break;
            }
        }
    }
    handled
}

#[derive(Default)]
struct Answer {
    series_reported: u64,
    terms_computed: u64,
    terms_hash: u64,
    final_sum: f64,
}

fn describe(a: &Answer) -> String {
    format!(
        "series_reported={} terms_computed={} terms_hash={:016x} final_sum={}",
        a.series_reported, a.terms_computed, a.terms_hash, format_g17(a.final_sum)
    )
}

/// Savina's Master; returns its answer and the messages it handled.
async fn master(terms: u64, mut inbox: UnboundedReceiver<ToMaster>, workers: Vec<UnboundedSender<ToWorker>>) -> (Answer, u64) {
    let series = workers.len();
    let (mut hashes, mut last, mut seen) = (vec![0; series], vec![0.0; series], vec![false; series]);
    let mut answer = Answer { terms_hash: FNV_BASIS, ..Answer::default() };
    let mut handled = 0;
    while let Some(message) = inbox.recv().await {
        handled += 1;
        match message {
            ToMaster::Start => {
                for _ in 0..terms {
                    for worker in &workers {
                        let _ = worker.send(ToWorker::NextTerm);
                    }
                }
                for worker in &workers {
                    let _ = worker.send(ToWorker::GetTerm);
                }
            }
            ToMaster::SeriesDone { id, computed, hash, last: term } => {
                answer.series_reported += 1;
                answer.terms_computed += computed;
                if id < series && !seen[id] {
                    seen[id] = true;
                    hashes[id] = hash;
                    last[id] = term;
                }
                if answer.series_reported == series as u64 {
                    break;
                }
            }
        }
    }
    // In series order, whatever order the reports came in: the sum is schedule-independent.
    for i in 0..series {
        answer.terms_hash = fnv_fold(answer.terms_hash, hashes[i]);
        answer.final_sum += last[i];
    }
    (answer, handled)
}

async fn root(terms: u64, series: u32, start_rate: f64, increment: f64) -> (Answer, u64, std::time::Duration) {
    let start = Instant::now();
    let (to_master, master_inbox) = unbounded_channel();
    let mut workers = Vec::with_capacity(series as usize);
    let mut tasks = Vec::with_capacity(2 * series as usize);
    for i in 0..series {
        let (to_computer, computer_inbox) = unbounded_channel();
        tasks.push(tokio::spawn(computer(rate_of(start_rate, increment, i), computer_inbox)));
        let (to_worker, worker_inbox) = unbounded_channel();
        workers.push(to_worker);
        let me = worker(i as usize, start_of(increment, i), worker_inbox, to_computer, to_master.clone());
        tasks.push(tokio::spawn(me));
    }
    let master = tokio::spawn(master(terms, master_inbox, workers));
    let _ = to_master.send(ToMaster::Start);
    drop(to_master);
    let (answer, mut handled) = joined(master).await;
    let elapsed = start.elapsed();
    // Every worker has reported, so every one has ended or is ending, and its computer with it.
    for task in tasks {
        handled += joined(task).await;
    }
    (answer, handled, elapsed)
}

/// The sequential model (logmap.cpp's expected): every series computed in one loop, with the
/// operations in the agents' order, so that its hash matches bit for bit.
fn expected(terms: u64, series: u32, start_rate: f64, increment: f64) -> Answer {
    let mut answer = Answer { series_reported: u64::from(series), terms_computed: u64::from(series) * terms,
                              terms_hash: FNV_BASIS, final_sum: 0.0 };
    let mut last = Vec::with_capacity(series as usize);
    for i in 0..series {
        let rate = rate_of(start_rate, increment, i);
        let mut term = start_of(increment, i);
        let mut hash = FNV_BASIS;
        for _ in 0..terms {
            term = next_term(term, rate);
            hash = fnv_fold(hash, term.to_bits());
        }
        answer.terms_hash = fnv_fold(answer.terms_hash, hash);
        last.push(term);
    }
    answer.final_sum = last.iter().fold(0.0, |sum, term| sum + term);
    answer
}

pub fn run(params: &Params) -> Reply {
    let terms = params["terms"] as u64;
    let series = params["series"] as u32;
    let (start_rate, increment) = (params.real("start_rate"), params.real("increment"));
    let last = f64::from(series - 1) * increment;
    if last > 1.0 {
        fail(&format!("param increment times (series - 1) must be at most 1 (series i starts at term i*increment), got {}", last));
    }
    if start_rate + last > 4.0 {
        fail(&format!("param start_rate + (series - 1) * increment must be at most 4, got {}", start_rate + last));
    }
    let injected = fault();
    // Fault::compute: the master asks each series for one term more, which the check must catch.
    let asked = terms + u64::from(injected == Fault::Compute);
    let (outcome, handled, elapsed) = on_runtime(params["threads"], root(asked, series, start_rate, increment));
    let answer = describe(&outcome);
    let expected = describe(&expected(terms, series, start_rate, increment));
    if answer != expected {
        wrong_answer("savina_logmap", &answer, &expected);
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: handled,
        answer: if injected == Fault::Reply { describe(&Answer { final_sum: outcome.final_sum + 1.0, ..outcome }) } else { answer },
        metrics: Vec::new(),
    }
}
