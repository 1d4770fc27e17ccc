//! savina_banking (Savina's benchmark 15, Bank Transaction) on tokio: a teller task and `accounts`
//! account tasks. On Start the teller draws every transaction (a SplitMix64 stream from `seed`, as
//! ours: a source below (accounts / 10) * 8, a destination above it, an amount below 100,000 cents)
//! and sends each source a Credit carrying the destination's Sender (Savina's recipient ActorRef),
//! all at once into unbounded mailboxes, as Savina's teller. A source takes the amount from its
//! balance, sends the destination a Debit carrying a oneshot Sender and awaits the Reply there
//! (tokio's request and reply): every other message waits in its mailbox meanwhile and is taken up
//! after, in order, as ours' stash (Savina's account re-sends each stashed message to itself). The
//! destination adds the amount and replies with the transaction's id, which the source reports to
//! the teller as complete. Sources lie below their destinations, so the chains of waiting accounts
//! climb and never close a cycle. Once every transaction is complete the teller sends every account
//! Stop. 1 + 4*transactions + accounts messages (banking.cpp): a Reply counted as a message.
//!
//! Measured phase (elapsed_ns), as ours: the accounts and the teller made and started, the Start,
//! until every account's task has ended on its Stop.

use std::time::Instant;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

use super::joined;
use super::random::{mix64, SplitMix64};
use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

/// Every account's opening balance and the bound of the amounts, in integer cents (banking.cpp).
const INITIAL_BALANCE: i64 = 1_000_000_000_000;
const AMOUNT_LIMIT: u64 = 100_000;

struct Transaction {
    source: usize,
    destination: usize,
    amount: i64,
}

/// banking.cpp's draw: a source below (accounts / 10) * 8, a destination above it.
fn draw(random: &mut SplitMix64, accounts: u32) -> Transaction {
    let source = (random.next() % u64::from(accounts / 10 * 8)) as u32;
    let step = ((random.next() % u64::from(accounts - source)) as u32).max(1);
    let amount = (random.next() % AMOUNT_LIMIT) as i64;
    Transaction { source: source as usize, destination: (source + step) as usize, amount }
}

fn balance_digest(account: usize, balance: i64) -> u64 {
    mix64((balance as u64).wrapping_add(mix64(account as u64)))
}

enum ToAccount {
    Credit { id: u64, amount: i64, destination: UnboundedSender<ToAccount> },
    Debit { id: u64, amount: i64, reply: oneshot::Sender<u64> },
    Stop,
}

enum ToTeller {
    Start,
    Completed(u64),
}

/// An account's tally, handed back when its task ends.
struct Account {
    balance: i64,
    credits: u64,
    debits: u64,
    stopped: u64,
    handled: u64,
}

/// Savina's Account. `debit_extra`: Fault::compute's cent more on each debit (money made).
async fn account(mut inbox: UnboundedReceiver<ToAccount>, teller: UnboundedSender<ToTeller>, debit_extra: i64) -> Account {
    let mut tally = Account { balance: INITIAL_BALANCE, credits: 0, debits: 0, stopped: 0, handled: 0 };
    while let Some(message) = inbox.recv().await {
        tally.handled += 1;
        match message {
            ToAccount::Credit { id, amount, destination } => {
                tally.credits += 1;
                tally.balance -= amount;
                let (reply, replied) = oneshot::channel();
                let _ = destination.send(ToAccount::Debit { id, amount, reply });
                // The Reply's id, not the one awaited, goes to the teller: a reply for another
                // transaction shows as one completed twice and one never.
                let id = match replied.await {
                    Ok(id) => id,
                    Err(_) => break, // the destination is gone: the teller's count comes up short
                };
                tally.handled += 1;
                let _ = teller.send(ToTeller::Completed(id));
            }
            ToAccount::Debit { id, amount, reply } => {
                tally.debits += 1;
                tally.balance += amount + debit_extra;
                let _ = reply.send(id);
            }
            ToAccount::Stop => {
                tally.stopped += 1;
                break;
            }
        }
    }
    tally
}

/// The teller's tally: the transactions it saw complete, those completed again, its messages.
#[derive(Default)]
struct Teller {
    completed: u64,
    repeated: u64,
    handled: u64,
}

/// Savina's Teller: every transaction's Credit on Start, a Stop to every account once all are complete.
async fn teller(transactions: u64, seed: u64, mut inbox: UnboundedReceiver<ToTeller>, accounts: Vec<UnboundedSender<ToAccount>>) -> Teller {
    let mut random = SplitMix64::new(seed, 0);
    let mut seen = vec![false; transactions as usize];
    let mut tally = Teller::default();
    let stop_all = || {
        for account in &accounts {
            let _ = account.send(ToAccount::Stop);
        }
    };
    while let Some(message) = inbox.recv().await {
        tally.handled += 1;
        match message {
            ToTeller::Start => {
                for id in 0..transactions {
                    let tx = draw(&mut random, accounts.len() as u32);
                    let credit = ToAccount::Credit { id, amount: tx.amount, destination: accounts[tx.destination].clone() };
                    let _ = accounts[tx.source].send(credit);
                }
                if transactions == 0 {
                    stop_all();
                    break;
                }
            }
            ToTeller::Completed(id) => {
                match seen.get_mut(id as usize) {
                    Some(seen) if !*seen => *seen = true,
                    _ => tally.repeated += 1,
                }
                tally.completed += 1;
                if tally.completed == transactions {
                    stop_all();
                    break;
                }
            }
        }
    }
    tally
}

#[derive(Default)]
struct Outcome {
    completed: u64,
    repeated: u64,
    credits: u64,
    debits: u64,
    stopped: u64,
    total: i64,
    digest: u64,
}

fn describe(o: &Outcome) -> String {
    format!(
        "completed={} repeated={} credits={} debits={} stopped={} total={} digest={}",
        o.completed, o.repeated, o.credits, o.debits, o.stopped, o.total, o.digest
    )
}

async fn root(accounts: u32, transactions: u64, seed: u64, debit_extra: i64) -> (Outcome, u64, std::time::Duration) {
    let start = Instant::now();
    let (to_teller, teller_inbox) = unbounded_channel();
    let mut senders = Vec::with_capacity(accounts as usize);
    let mut tasks = Vec::with_capacity(accounts as usize);
    for _ in 0..accounts {
        let (sender, inbox) = unbounded_channel();
        senders.push(sender);
        tasks.push(tokio::spawn(account(inbox, to_teller.clone(), debit_extra)));
    }
    let teller = tokio::spawn(teller(transactions, seed, teller_inbox, senders));
    let _ = to_teller.send(ToTeller::Start);
    drop(to_teller);
    let mut ended = Vec::with_capacity(accounts as usize);
    for task in tasks {
        ended.push(joined(task).await);
    }
    let elapsed = start.elapsed();
    let told = joined(teller).await; // it ended on sending the Stops
    let mut outcome = Outcome { completed: told.completed, repeated: told.repeated, ..Outcome::default() };
    let mut handled = told.handled;
    for (i, account) in ended.iter().enumerate() {
        outcome.credits += account.credits;
        outcome.debits += account.debits;
        outcome.stopped += account.stopped;
        outcome.total += account.balance;
        outcome.digest = outcome.digest.wrapping_add(balance_digest(i, account.balance));
        handled += account.handled;
    }
    (outcome, handled, elapsed)
}

/// The sequential replay (banking.cpp's replay): the transactions in the teller's order. Integer
/// sums commute, so each final balance is the same whatever order the accounts handle them in.
fn replay(accounts: u32, transactions: u64, seed: u64) -> Outcome {
    let mut balances = vec![INITIAL_BALANCE; accounts as usize];
    let mut random = SplitMix64::new(seed, 0);
    for _ in 0..transactions {
        let tx = draw(&mut random, accounts);
        balances[tx.source] -= tx.amount;
        balances[tx.destination] += tx.amount;
    }
    let mut outcome = Outcome { completed: transactions, credits: transactions, debits: transactions,
                                stopped: u64::from(accounts), ..Outcome::default() };
    for (i, balance) in balances.iter().enumerate() {
        outcome.total += balance;
        outcome.digest = outcome.digest.wrapping_add(balance_digest(i, *balance));
    }
    outcome
}

pub fn run(params: &Params) -> Reply {
    let accounts = params["accounts"] as u32;
    let transactions = params["transactions"] as u64;
    let seed = params["seed"] as u64;
    let injected = fault();
    // Fault::compute: each debit adds a cent more than its credit took, which the check must catch.
    let extra = i64::from(injected == Fault::Compute);
    let (outcome, handled, elapsed) = on_runtime(params["threads"], root(accounts, transactions, seed, extra));
    let answer = describe(&outcome);
    let expected = describe(&replay(accounts, transactions, seed));
    if answer != expected {
        wrong_answer("savina_banking", &answer, &expected);
    }
    Reply {
        elapsed_ns: nanos(elapsed),
        messages: handled,
        answer: if injected == Fault::Reply { describe(&Outcome { repeated: 1, ..outcome }) } else { answer },
        metrics: Vec::new(),
    }
}
