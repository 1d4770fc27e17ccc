//! The workers and the master that savina_concdict and savina_concsll share (Savina's benchmarks 8
//! and 9): a worker sends one request at a time to one server task (the dictionary, the sorted
//! list), each carrying the worker's Sender (Savina's sender ActorRef), the next when the Reply
//! comes into its mailbox; after `messages` requests it tells the master its count of replies. The
//! master starts every worker (one DoWork each, Savina's onPostStart) and, once every one is done,
//! tells the server to end with the replies' total.

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

use super::joined;

pub enum ToWorker {
    DoWork,
    // The server's answer (a value, a membership, a size), which Savina's worker does not read
    // either: the server computes it and sends it, and the worker counts the reply.
    #[allow(dead_code)]
    Reply(u64),
}

/// A worker's end: its count of replies (Savina's EndWorkMessage).
pub struct EndWork(u64);

/// Savina's worker of both: `next` makes its next request, given the worker's Sender. Returns the
/// messages it handled.
async fn worker<R, F>(messages: u64, mut next: F, me: UnboundedSender<ToWorker>, mut inbox: UnboundedReceiver<ToWorker>,
                      server: UnboundedSender<R>, master: UnboundedSender<EndWork>) -> u64
where
    F: FnMut(UnboundedSender<ToWorker>) -> R,
{
    let (mut handled, mut sent, mut replies) = (0, 0, 0);
    while let Some(message) = inbox.recv().await {
        handled += 1;
        if let ToWorker::Reply(_) = message {
            replies += 1;
        }
        if sent == messages {
            let _ = master.send(EndWork(replies));
            break;
        }
        sent += 1;
        let _ = server.send(next(me.clone()));
    }
    handled
}

/// Savina's master of both; returns the messages it handled.
async fn master<R>(workers: Vec<UnboundedSender<ToWorker>>, mut inbox: UnboundedReceiver<EndWork>, server: UnboundedSender<R>,
                   end: fn(u64) -> R) -> u64 {
    for worker in &workers {
        let _ = worker.send(ToWorker::DoWork);
    }
    let (mut handled, mut replies) = (0, 0);
    while let Some(EndWork(counted)) = inbox.recv().await {
        handled += 1;
        replies += counted;
        if handled == workers.len() as u64 {
            let _ = server.send(end(replies));
            break;
        }
    }
    handled
}

/// Makes `workers` workers, worker i's requests from `next(i)`, and the master, which starts them;
/// returns their tasks, each ending with its count of messages handled.
pub fn start<R, F>(workers: usize, messages: u64, next: impl Fn(usize) -> F, server: &UnboundedSender<R>,
                   end: fn(u64) -> R) -> Vec<JoinHandle<u64>>
where
    R: Send + 'static,
    F: FnMut(UnboundedSender<ToWorker>) -> R + Send + 'static,
{
    let (to_master, master_inbox) = unbounded_channel();
    let mut senders = Vec::with_capacity(workers);
    let mut tasks = Vec::with_capacity(workers + 1);
    for i in 0..workers {
        let (sender, inbox) = unbounded_channel();
        tasks.push(tokio::spawn(worker(messages, next(i), sender.clone(), inbox, server.clone(), to_master.clone())));
        senders.push(sender);
    }
    tasks.push(tokio::spawn(master(senders, master_inbox, server.clone(), end)));
    tasks
}

/// The messages the workers and the master handled, once the server has ended.
pub async fn handled(tasks: Vec<JoinHandle<u64>>) -> u64 {
    let mut handled = 0;
    for task in tasks {
        handled += joined(task).await;
    }
    handled
}
