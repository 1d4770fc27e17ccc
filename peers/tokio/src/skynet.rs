//! skynet on tokio: a tree of tasks over the leaves [0, leaves), each node having
//! min(branching, count) children of near-equal size (the first count % children one leaf
//! larger), as our kernel's. A node is an actor: a task that owns the receiving end of an mpsc
//! channel sized so its children never wait to send; each child holds a Sender to it and sends
//! one report (sum, agents) when its subtree is done; a leaf reports (its ordinal, 1).
//!
//! Measured phase (elapsed_ns), as ours: from spawning the root to the root's report in hand.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use tokio::sync::mpsc;

use crate::{fault, nanos, on_runtime, wrong_answer, Fault, Params, Reply};

#[derive(Clone, Copy)]
struct Report {
    sum: u64,
    agents: u64,
}

/// A node's task. Boxed: a node spawns nodes, and a future cannot contain its own type.
fn node(first: u64, count: u64, branching: u64, wrong_leaf: bool, parent: mpsc::Sender<Report>)
    -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        if count == 1 {
            // Fault::compute: leaf 0 reports 1, which the check below must catch.
            let sum = if wrong_leaf && first == 0 { 1 } else { first };
            let _ = parent.send(Report { sum, agents: 1 }).await;
            return;
        }
        let children = branching.min(count);
        let (sender, mut inbox) = mpsc::channel(children as usize);
        let (base, extra) = (count / children, count % children);
        let mut start = first;
        for i in 0..children {
            let size = base + u64::from(i < extra);
            tokio::spawn(node(start, size, branching, wrong_leaf, sender.clone()));
            start += size;
        }
        drop(sender);
        let mut total = Report { sum: 0, agents: 1 };
        for _ in 0..children {
            match inbox.recv().await {
                Some(report) => {
                    total.sum += report.sum;
                    total.agents += report.agents;
                }
                None => break, // a child died without reporting: the count tells
            }
        }
        let _ = parent.send(total).await;
    })
}

/// The agents of the tree (our kernel's tree_agents, computed apart from the run), memoised: a
/// level has at most two distinct subtree sizes.
fn tree_agents(leaves: u64, branching: u64, memo: &mut std::collections::HashMap<u64, u64>) -> u64 {
    if leaves == 1 {
        return 1;
    }
    if let Some(agents) = memo.get(&leaves) {
        return *agents;
    }
    let children = branching.min(leaves);
    let mut agents = 1;
    for i in 0..children {
        agents += tree_agents(leaves / children + u64::from(i < leaves % children), branching, memo);
    }
    memo.insert(leaves, agents);
    agents
}

fn describe(sum: u64, agents: u64) -> String {
    format!("sum={} agents={}", sum, agents)
}

pub fn run(params: &Params) -> Reply {
    let leaves = params["leaves"] as u64;
    let branching = params["branching"] as u64;
    let injected = fault();
    let expected = describe(leaves * (leaves - 1) / 2, tree_agents(leaves, branching, &mut Default::default()));

    let (root, elapsed) = on_runtime(params["threads"], async move {
        let (sender, mut inbox) = mpsc::channel(1);
        let start = Instant::now();
        tokio::spawn(node(0, leaves, branching, injected == Fault::Compute, sender));
        let root = inbox.recv().await.unwrap_or(Report { sum: 0, agents: 0 });
        (root, start.elapsed())
    });

    let answer = describe(root.sum, root.agents);
    if answer != expected {
        wrong_answer("skynet", &answer, &expected);
    }
    let elapsed_ns = nanos(elapsed);
    Reply {
        elapsed_ns,
        messages: root.agents - 1,
        answer: if injected == Fault::Reply { describe(root.sum + 1, root.agents) } else { answer },
        metrics: vec![
            ("agents", root.agents as f64),
            ("ns_per_agent", elapsed_ns as f64 / root.agents as f64),
            (crate::AGENTS_CREATED, root.agents as f64),
        ],
    }
}
