//! Savina's micro benchmarks 1-7 and its eight concurrency benchmarks (8-15) on tokio, in this peer's
//! idiom: each actor is a task that owns the receiving end of an mpsc channel, its mailbox, and
//! handles one message at a time in a `match` on its own message type; whoever sends to it holds a
//! Sender. The mailboxes are tokio's unbounded channels, as Akka's are unbounded (no sender ever
//! waits; this peer's skynet, ping_pong and thread_ring use bounded ones, as Go's). An actor keeps
//! its tally in its own variables and hands it back when its task ends (its JoinHandle's output),
//! where ours read the agents' counts after the run.
//!
//! The messages are Savina's, the counts and the answers our kernels'
//! (native/kernels/savina/<name>.hpp or .cpp), their seeded generators ours (random.rs), computed
//! here and checked by the program (a wrong answer exits 1) and again by labctl. Each measured
//! phase starts where ours does (the actors' making) and ends with the last message handled.
//! Differences from Savina every one has: tokio's scheduler and its threads exist before the clock
//! starts, where Savina's runIteration creates the actor system inside it; Savina reports
//! statistics over 12 iterations in one JVM, where each run here is one sample. Each kernel's
//! module tells its own.

pub mod banking;
pub mod barber;
pub mod big;
pub mod bndbuffer;
pub mod chameneos;
pub mod cigsmok;
pub mod concdict;
pub mod concsll;
pub mod count;
pub mod fork_join;
pub mod logmap;
pub mod philosopher;
pub mod pingpong;
pub mod random; // the chat's generator and fold too
mod served;
pub mod threadring;

use std::process::exit;

use tokio::task::JoinHandle;

use crate::PROGRAM;

/// An actor's task's output; a task that panicked is no timing (exit 1).
pub async fn joined<T>(task: JoinHandle<T>) -> T {
    match task.await {
        Ok(output) => output,
        Err(error) => {
            eprintln!("{}: an actor's task failed: {}", PROGRAM, error);
            exit(1)
        }
    }
}

/// A float as C's printf writes it with "%.17g" (our answers' format for a sum).
pub fn format_g17(x: f64) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // %g takes the exponent X of the value rounded to 17 significant digits: exponent form where
    // X < -4 or X >= 17, else fixed with 16 - X decimals; then drops trailing zeros.
    let scientific = format!("{:.16e}", x);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..17).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", trim_zeros(mantissa), sign, exponent.abs())
    } else {
        trim_zeros(&format!("{:.*}", (16 - exponent) as usize, x)).to_string()
    }
}

fn trim_zeros(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

