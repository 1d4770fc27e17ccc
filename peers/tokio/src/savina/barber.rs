//! savina_barber (Savina's benchmark 12, Sleeping Barber) on tokio: a factory, a waiting room and
//! a barber task, and a customer task per haircut. On Start the factory makes `haircuts`
//! customers, each a task it spawns with its mailbox, sending each into the room (Enter) and
//! working a spell drawn from its PseudoRandom (next % production_rate + 10 steps of ours' 64-bit
//! LCG) after each. The room turns a customer away (Full) when its `seats` seats are taken, and the
//! customer asks the factory to send it again (Returned, carrying its Sender); otherwise it seats
//! it and wakes a sleeping barber (a Next to itself) or tells the customer to wait (Wait). A Next
//! sends the first waiting customer to the barber (Enter), or lets the barber sleep. The barber
//! sends the customer StartCut, works a spell drawn from its own PseudoRandom (haircut_rate), sends
//! DoneCut and asks the room for the next (Next). A customer answers DoneCut with its Done to the
//! factory, carrying its counts, and its task ends (Savina's exit()); after the last, Exit goes to
//! the room and, once the barber sleeps, from the room to the barber, whose task ends with every
//! count. 3 + 7*haircuts + 3*turned_away messages (barber.cpp), the turned-away customers the
//! schedule's: the metrics attempts, turned_away and barber_wakes, the room's counts; the answer
//! the same on every schedule.
//!
//! Differences from Savina, as ours: the synthetic work in place of Savina's busy-wait on
//! Math.random(); the room sends the barber no Wait when it lets it sleep; the room hands Exit on
//! only once the barber sleeps; the customers report their counts with their Done; a customer's id
//! is its ordinal, the attempts counted by the room (Savina's factory counts them in an AtomicLong).
//!
//! Measured phase (elapsed_ns), as ours: from before the barber, the room and the factory are made
//! and Start sent, until the barber's task has ended on the Exit.

use std::collections::VecDeque;
use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::joined;
use super::random::{busy_work, PseudoRandom};
use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

/// A spell of work drawn as Savina draws its busy-wait (nextInt(rate) + 10).
fn draw(random: &mut PseudoRandom, rate: u64) -> u32 {
    (random.next(rate) + 10) as u32
}

/// Spells of synthetic work: their units and their results summed (barber.cpp's Work).
#[derive(Clone, Copy, Default)]
struct Work {
    units: u64,
    sum: u64,
}

impl Work {
    fn add(&mut self, spell: u32) {
        self.units += u64::from(spell);
        self.sum = self.sum.wrapping_add(busy_work(spell));
    }
}

/// barber.cpp's model_work: `n` spells from a PseudoRandom seeded with `seed`.
fn model_work(n: u64, rate: u64, seed: u64) -> Work {
    let mut random = PseudoRandom(seed);
    let mut work = Work::default();
    for _ in 0..n {
        work.add(draw(&mut random, rate));
    }
    work
}

/// What the tasks counted (barber.cpp's Counts), carried with the Exits to the barber.
#[derive(Clone, Copy, Default)]
struct Counts {
    // the factory's
    customers: u64,
    returned: u64,
    served: u64,
    served_wrong: u64,
    repeated: u64,
    factory_work: Work,
    // the room's
    enters: u64,
    full: u64,
    wakes: u64,
    waits: u64,
    nexts: u64,
    to_barber: u64,
    // the barber's
    haircuts: u64,
    barber_work: Work,
    // the customers', summed at their Done
    customer_starts: u64,
    customer_dones: u64,
    customer_fulls: u64,
    customer_waits: u64,
}

impl Counts {
    /// barber.cpp's accounting_errors: every schedule's invariants.
    fn accounting_errors(&self) -> u64 {
        let c = self;
        [
            c.enters != c.customers + c.returned,
            c.full != c.returned || c.customer_fulls != c.returned,
            c.enters.wrapping_sub(c.full) != c.wakes + c.waits,
            c.customer_waits != c.waits,
            c.to_barber != c.haircuts || c.nexts != c.wakes + c.haircuts,
            c.customer_starts != c.haircuts || c.customer_dones != c.haircuts,
        ]
        .iter()
        .map(|&wrong| u64::from(wrong))
        .sum()
    }

    /// Every message, as its receiver counted it.
    fn messages(&self) -> u64 {
        1 + self.enters + self.customer_fulls + self.returned + self.nexts + self.customer_waits + self.haircuts
            + self.customer_starts + self.customer_dones + self.served + 2
    }

    fn describe(&self, errors: u64) -> String {
        format!(
            "customers={} haircuts={} served={} served_wrong={} repeated={} accounting_errors={} \
             factory_work_units={} factory_work_sum={} barber_work_units={} barber_work_sum={}",
            self.customers, self.haircuts, self.served, self.served_wrong, self.repeated, errors,
            self.factory_work.units, self.factory_work.sum, self.barber_work.units, self.barber_work.sum
        )
    }
}

type Customer = UnboundedSender<ToCustomer>;

enum ToCustomer {
    Full,
    Wait,
    StartCut,
    DoneCut,
}

enum ToFactory {
    Start,
    Returned(Customer),
    Done { id: u64, starts: u64, dones: u64, fulls: u64, waits: u64 },
}

enum ToRoom {
    Enter(Customer),
    Next,
    Exit(Counts),
}

enum ToBarber {
    Enter(Customer),
    Exit(Counts),
}

/// Savina's CustomerActor.
async fn customer(id: u64, me: Customer, mut inbox: UnboundedReceiver<ToCustomer>, factory: UnboundedSender<ToFactory>) {
    let (mut starts, mut dones, mut fulls, mut waits) = (0, 0, 0, 0);
    while let Some(message) = inbox.recv().await {
        match message {
            ToCustomer::Full => {
                fulls += 1;
                let _ = factory.send(ToFactory::Returned(me.clone()));
            }
            ToCustomer::Wait => waits += 1,
            ToCustomer::StartCut => starts += 1,
            ToCustomer::DoneCut => {
                dones += 1;
                let _ = factory.send(ToFactory::Done { id, starts, dones, fulls, waits });
                break;
            }
        }
    }
}

/// Savina's BarberActor: ends on the Exit, with every count.
async fn barber(seed: u64, rate: u64, mut inbox: UnboundedReceiver<ToBarber>, room: UnboundedSender<ToRoom>) -> Counts {
    let mut random = PseudoRandom(seed);
    let (mut haircuts, mut work) = (0, Work::default());
    while let Some(message) = inbox.recv().await {
        match message {
            ToBarber::Enter(customer) => {
                let _ = customer.send(ToCustomer::StartCut);
                work.add(draw(&mut random, rate));
                haircuts += 1;
                let _ = customer.send(ToCustomer::DoneCut);
                let _ = room.send(ToRoom::Next);
            }
            ToBarber::Exit(counts) => return Counts { haircuts, barber_work: work, ..counts },
        }
    }
    Counts::default() // the room ended without handing the Exit on: the answer says so
}

/// Savina's WaitingRoomActor; ends once it has handed the Exit on to the sleeping barber.
async fn room(seats: usize, me: UnboundedSender<ToRoom>, mut inbox: UnboundedReceiver<ToRoom>, barber: UnboundedSender<ToBarber>) {
    let mut waiting: VecDeque<Customer> = VecDeque::new();
    let (mut asleep, mut exiting) = (true, false);
    let mut c = Counts::default();
    while let Some(message) = inbox.recv().await {
        match message {
            ToRoom::Enter(customer) => {
                c.enters += 1;
                if waiting.len() == seats {
                    c.full += 1;
                    let _ = customer.send(ToCustomer::Full);
                    continue;
                }
                if asleep {
                    asleep = false;
                    c.wakes += 1;
                    let _ = me.send(ToRoom::Next);
                } else {
                    c.waits += 1;
                    let _ = customer.send(ToCustomer::Wait);
                }
                waiting.push_back(customer);
            }
            ToRoom::Next => {
                c.nexts += 1;
                if let Some(customer) = waiting.pop_front() {
                    c.to_barber += 1;
                    let _ = barber.send(ToBarber::Enter(customer));
                    continue;
                }
                asleep = true;
                if exiting {
                    break;
                }
            }
            ToRoom::Exit(f) => {
                // The factory's counts and the customers', beside the room's own.
                c = Counts { enters: c.enters, full: c.full, wakes: c.wakes, waits: c.waits, nexts: c.nexts,
                             to_barber: c.to_barber, ..f };
                exiting = true;
                if asleep {
                    break;
                }
            }
        }
    }
    let _ = barber.send(ToBarber::Exit(c));
}

/// Savina's CustomerFactoryActor; `make` the customers it makes (Fault::compute: one more than
/// `haircuts`, the customers it expects); ends once every customer it made is served.
async fn factory(haircuts: u64, make: u64, seed: u64, rate: u64, me: UnboundedSender<ToFactory>,
                 mut inbox: UnboundedReceiver<ToFactory>, room: UnboundedSender<ToRoom>) {
    let mut random = PseudoRandom(seed);
    let mut seen = vec![false; haircuts as usize];
    let mut c = Counts::default();
    while let Some(message) = inbox.recv().await {
        match message {
            ToFactory::Start => {
                for id in 0..make {
                    let (sender, inbox) = unbounded_channel();
                    tokio::spawn(customer(id, sender.clone(), inbox, me.clone()));
                    c.customers += 1;
                    let _ = room.send(ToRoom::Enter(sender));
                    c.factory_work.add(draw(&mut random, rate));
                }
            }
            ToFactory::Returned(customer) => {
                c.returned += 1;
                let _ = room.send(ToRoom::Enter(customer));
            }
            ToFactory::Done { id, starts, dones, fulls, waits } => {
                c.served += 1;
                match seen.get_mut(id as usize) {
                    Some(seen) if !*seen => *seen = true,
                    _ => c.repeated += 1,
                }
                c.served_wrong += u64::from(starts != 1 || dones != 1);
                c.customer_starts += starts;
                c.customer_dones += dones;
                c.customer_fulls += fulls;
                c.customer_waits += waits;
                if c.served == make {
                    let _ = room.send(ToRoom::Exit(c));
                    break;
                }
            }
        }
    }
}

struct Setup {
    haircuts: u64,
    seats: usize,
    production_rate: u64,
    haircut_rate: u64,
    seed: u64,
}

async fn root(s: Setup, make: u64) -> (Counts, std::time::Duration) {
    let start = Instant::now();
    let (to_barber, barber_inbox) = unbounded_channel();
    let (to_room, room_inbox) = unbounded_channel();
    let (to_factory, factory_inbox) = unbounded_channel();
    let barber = tokio::spawn(barber(s.seed, s.haircut_rate, barber_inbox, to_room.clone()));
    let room = tokio::spawn(room(s.seats, to_room.clone(), room_inbox, to_barber));
    let factory = tokio::spawn(factory(s.haircuts, make, s.seed, s.production_rate, to_factory.clone(), factory_inbox,
                                       to_room));
    let _ = to_factory.send(ToFactory::Start);
    drop(to_factory);
    let counts = joined(barber).await;
    let elapsed = start.elapsed();
    joined(room).await; // each ended before the barber's Exit was sent
    joined(factory).await;
    (counts, elapsed)
}

pub fn run(params: &Params) -> Reply {
    let s = Setup {
        haircuts: params["haircuts"] as u64,
        seats: params["seats"] as usize,
        production_rate: params["production_rate"] as u64,
        haircut_rate: params["haircut_rate"] as u64,
        seed: params["seed"] as u64,
    };
    let mut expected = Counts { customers: s.haircuts, haircuts: s.haircuts, served: s.haircuts, ..Counts::default() };
    expected.factory_work = model_work(s.haircuts, s.production_rate, s.seed);
    expected.barber_work = model_work(s.haircuts, s.haircut_rate, s.seed);
    let expected = expected.describe(0);
    let injected = fault();
    // Fault::compute: the factory makes one customer more, which the check below must catch.
    let make = s.haircuts + u64::from(injected == Fault::Compute);
    let (counts, elapsed) = on_runtime(params["threads"], root(s, make));
    let answer = counts.describe(counts.accounting_errors());
    if answer != expected {
        wrong_answer("savina_barber", &answer, &expected);
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: counts.messages(),
        answer: if injected == Fault::Reply { Counts { served_wrong: 1, ..counts }.describe(0) } else { answer },
        metrics: vec![
            ("attempts", counts.enters as f64),
            ("turned_away", counts.full as f64),
            ("barber_wakes", counts.wakes as f64),
        ],
    }
}
