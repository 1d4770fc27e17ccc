//! savina_cigsmok (Savina's benchmark 13, Cigarette Smokers) on tokio: an arbiter task and
//! `smokers` smoker tasks. On Start and on each StartedSmoking the arbiter draws a smoker and its
//! spell of work from Savina's PseudoRandom (seeded with `seed`, or with rounds*smokers where seed
//! = 0, as Savina) and sends it StartSmoking, until `rounds` rounds; then Exit to every smoker. A
//! smoker tells the arbiter StartedSmoking at once, then smokes: that many steps of a 64-bit LCG
//! (ours' synthetic work in place of Savina's busy-wait on Math.random()), summed. On Exit a smoker
//! sends its tally and ends (ours' difference: Savina's smoker only exits). 1 + 2*rounds +
//! 2*smokers messages (cigsmok.cpp).
//!
//! Measured phase (elapsed_ns), as ours: the arbiter and the smokers made and started, the Start,
//! until the arbiter's task has ended on the last tally.

use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use super::random::{busy_work, fnv_fold, PseudoRandom, FNV_BASIS};
use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

/// A round's pick (cigsmok.cpp's draw): the smoker, then its spell of work, in Savina's order.
fn draw(random: &mut PseudoRandom, smokers: u64) -> (usize, u32) {
    let smoker = random.next(smokers) as usize;
    let work = (random.next(1000) + 10) as u32;
    (smoker, work)
}

enum ToSmoker {
    StartSmoking { work: u32 },
    Exit,
}

enum ToArbiter {
    Start,
    StartedSmoking,
    Tally { smoker: usize, smokes: u64, exits: u64, work_units: u64, work_sum: u64 },
}

/// Savina's SmokerActor.
async fn smoker(index: usize, mut inbox: UnboundedReceiver<ToSmoker>, arbiter: UnboundedSender<ToArbiter>) {
    let (mut smokes, mut work_units, mut work_sum) = (0u64, 0u64, 0u64);
    while let Some(message) = inbox.recv().await {
        match message {
            ToSmoker::StartSmoking { work } => {
                let _ = arbiter.send(ToArbiter::StartedSmoking); // the ingredients are off the table
                smokes += 1;
                work_units += u64::from(work);
                work_sum = work_sum.wrapping_add(busy_work(work));
            }
            ToSmoker::Exit => {
                let _ = arbiter.send(ToArbiter::Tally { smoker: index, smokes, exits: 1, work_units, work_sum });
                return;
            }
        }
    }
}

/// cigsmok.cpp's Answer: the tallies' sums and the messages of each kind, as their receivers
/// counted them.
#[derive(Default)]
struct Answer {
    smokers_reported: u64,
    smokes: u64,
    uneven_smokers: u64,
    smokes_hash: u64,
    work_units: u64,
    work_sum: u64,
    start: u64,
    start_smoking: u64,
    started_smoking: u64,
    exit: u64,
    tally: u64,
}

impl Answer {
    fn messages(&self) -> u64 {
        self.start + self.start_smoking + self.started_smoking + self.exit + self.tally
    }

    fn describe(&self) -> String {
        format!(
            "smokers_reported={} smokes={} uneven_smokers={} smokes_hash={:016x} work_units={} work_sum={} \
             start={} start_smoking={} started_smoking={} exit={} tally={}",
            self.smokers_reported, self.smokes, self.uneven_smokers, self.smokes_hash, self.work_units,
            self.work_sum, self.start, self.start_smoking, self.started_smoking, self.exit, self.tally
        )
    }
}

/// Savina's ArbiterActor; `plan` is each smoker's smokes as the seeded picks say (the model).
async fn arbiter(rounds: u64, seed: u64, plan: Vec<u64>, mut inbox: UnboundedReceiver<ToArbiter>,
                 smokers: Vec<UnboundedSender<ToSmoker>>) -> Answer {
    let mut random = PseudoRandom(seed);
    let mut smokes = vec![0; smokers.len()];
    let mut answer = Answer { smokes_hash: FNV_BASIS, ..Answer::default() };
    let mut round = 0;
    let notify = |random: &mut PseudoRandom| {
        let (smoker, work) = draw(random, smokers.len() as u64);
        let _ = smokers[smoker].send(ToSmoker::StartSmoking { work });
    };
    while let Some(message) = inbox.recv().await {
        match message {
            ToArbiter::Start => {
                answer.start += 1;
                notify(&mut random);
            }
            ToArbiter::StartedSmoking => {
                answer.started_smoking += 1;
                round += 1;
                if round >= rounds {
                    for smoker in &smokers {
                        let _ = smoker.send(ToSmoker::Exit);
                    }
                } else {
                    notify(&mut random);
                }
            }
            ToArbiter::Tally { smoker, smokes: smoked, exits, work_units, work_sum } => {
                answer.tally += 1;
                answer.smokers_reported += 1;
                answer.smokes += smoked;
                answer.start_smoking += smoked;
                answer.exit += exits;
                answer.work_units += work_units;
                answer.work_sum = answer.work_sum.wrapping_add(work_sum);
                if let Some(count) = smokes.get_mut(smoker) {
                    *count = smoked;
                }
                if answer.tally == smokers.len() as u64 {
                    break;
                }
            }
        }
    }
    for (count, planned) in smokes.iter().zip(&plan) {
        answer.smokes_hash = fnv_fold(answer.smokes_hash, *count);
        answer.uneven_smokers += u64::from(count != planned);
    }
    answer
}

async fn root(rounds: u64, smokers: usize, seed: u64, plan: Vec<u64>) -> (Answer, std::time::Duration) {
    let start = Instant::now();
    let (to_arbiter, arbiter_inbox) = unbounded_channel();
    let mut senders = Vec::with_capacity(smokers);
    for index in 0..smokers {
        let (sender, inbox) = unbounded_channel();
        senders.push(sender);
        tokio::spawn(smoker(index, inbox, to_arbiter.clone()));
    }
    let arbiter = tokio::spawn(arbiter(rounds, seed, plan, arbiter_inbox, senders));
    let _ = to_arbiter.send(ToArbiter::Start);
    drop(to_arbiter);
    let answer = joined(arbiter).await;
    (answer, start.elapsed())
}

/// The sequential model (cigsmok.cpp's model): the arbiter's picks replayed; each smoker's smokes
/// and the answer they predict.
fn model(rounds: u64, smokers: usize, seed: u64) -> (Vec<u64>, Answer) {
    let mut smokes = vec![0; smokers];
    let mut random = PseudoRandom(seed);
    let mut answer = Answer { smokes_hash: FNV_BASIS, ..Answer::default() };
    for _ in 0..rounds {
        let (smoker, work) = draw(&mut random, smokers as u64);
        smokes[smoker] += 1;
        answer.work_units += u64::from(work);
        answer.work_sum = answer.work_sum.wrapping_add(busy_work(work));
    }
    for count in &smokes {
        answer.smokes_hash = fnv_fold(answer.smokes_hash, *count);
    }
    answer.smokers_reported = smokers as u64;
    answer.smokes = rounds;
    answer.start = 1;
    answer.start_smoking = rounds;
    answer.started_smoking = rounds;
    answer.exit = smokers as u64;
    answer.tally = smokers as u64;
    (smokes, answer)
}

pub fn run(params: &Params) -> Reply {
    let rounds = params["rounds"] as u64;
    let smokers = params["smokers"] as usize;
    let seed = match params["seed"] as u64 {
        0 => rounds * smokers as u64, // Savina's own
        seed => seed,
    };
    let injected = fault();
    let (plan, expected) = model(rounds, smokers, seed);
    // Fault::compute: the arbiter plays one round more, which the check below must catch.
    let played = rounds + u64::from(injected == Fault::Compute);
    let (answer, elapsed) = on_runtime(params["threads"], root(played, smokers, seed, plan));
    if answer.describe() != expected.describe() {
        wrong_answer("savina_cigsmok", &answer.describe(), &expected.describe());
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: answer.messages(),
        answer: if injected == Fault::Reply { Answer { uneven_smokers: 1, ..answer }.describe() } else { answer.describe() },
        metrics: Vec::new(),
    }
}
