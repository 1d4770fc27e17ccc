//! labctl-tokio-peer runs one labctl kernel (skynet, ping_pong, thread_ring, one of Savina's
//! seven micro benchmarks or eight concurrency benchmarks, src/savina/, or the chat of "Run,
//! Actor, Run", src/chat.rs) on Rust's tokio and reports how long its measured phase took.
//!
//! Protocol (docs/runtimes.md): labctl writes one JSON request {"kernel": ..., "params": {...}}
//! on stdin; the program runs the kernel once, checks its answer as our kernel does, and prints
//! one JSON line {"elapsed_ns", "messages", "answer", "metrics"} on stdout, exit 0. Bad input:
//! one line on stderr, nothing on stdout, exit 2. A wrong answer: one line on stderr, exit 1.
//!
//! Actors are tasks that own the receiving end of a tokio::sync::mpsc channel (the common
//! "actors with tokio" pattern); whoever sends to one holds a Sender. `threads` = 1 runs them on
//! the current-thread scheduler (the program's main thread), more on the multi-threaded
//! scheduler with that many workers. Each kernel's root is spawned as a task, so on the
//! multi-threaded scheduler every actor runs on a worker, none on the main thread. Savina's two
//! fork-join benchmarks send from a thread of their own outside the runtime instead, as ours and
//! Savina's main thread do (src/savina/fork_join.rs).

mod chat;
mod ping_pong;
mod savina;
mod skynet;
mod thread_ring;

use std::collections::BTreeMap;
use std::future::Future;
use std::io::Read;
use std::process::exit;

const PROGRAM: &str = "labctl-tokio-peer";

/// Bad input: one line on stderr, nothing on stdout, exit 2.
pub fn fail(message: &str) -> ! {
    eprintln!("{}: {}", PROGRAM, message);
    exit(2)
}

/// A wrong answer is no timing: one line on stderr naming both answers, exit 1.
pub fn wrong_answer(kernel: &str, got: &str, expected: &str) -> ! {
    eprintln!("{}: {}: wrong answer: got '{}', expected '{}'", PROGRAM, kernel, got, expected);
    exit(1)
}

/// Fault injection for tests/test_peer_tokio.py only (LABCTL_TOKIO_FAULT): compute: the kernel
/// computes a wrong answer, which its own check must catch (exit 1); reply: the kernel reports a
/// wrong answer after its check passed, which labctl must catch.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    Compute,
    Reply,
}

pub fn fault() -> Fault {
    match std::env::var("LABCTL_TOKIO_FAULT") {
        Err(_) => Fault::None,
        Ok(value) => match value.as_str() {
            "" => Fault::None,
            "compute" => Fault::Compute,
            "reply" => Fault::Reply,
            other => fail(&format!("LABCTL_TOKIO_FAULT must be compute or reply, got '{}'", other)),
        },
    }
}

/// The one JSON line printed on stdout. A metric not measured is left out, never 0. A kernel that
/// counts the agents (tasks) its phase made names them AGENTS_CREATED among its metrics: printed at
/// the top level, beside rss_before_kb, for labctl's memory per agent.
pub struct Reply {
    pub elapsed_ns: u64,
    pub messages: u64,
    pub answer: String,
    pub metrics: Vec<(&'static str, f64)>,
}

/// The request's parameters, validated against the kernel's table: `params["name"]` an integer,
/// `params.real("name")` a real (savina_logmap's rates), `params.flag("name")` a boolean (the
/// chat's buffering).
pub struct Params {
    integers: BTreeMap<String, i64>,
    reals: BTreeMap<String, f64>,
    flags: BTreeMap<String, bool>,
}

impl std::ops::Index<&str> for Params {
    type Output = i64;
    fn index(&self, name: &str) -> &i64 {
        &self.integers[name]
    }
}

impl Params {
    pub fn real(&self, name: &str) -> f64 {
        self.reals[name]
    }

    pub fn flag(&self, name: &str) -> bool {
        self.flags[name]
    }
}

/// The scheduler `threads` asks for: the current-thread one for 1 (it runs its tasks on the thread
/// that blocks on it), else the multi-threaded one with `threads` workers.
pub fn runtime(threads: i64) -> tokio::runtime::Runtime {
    let runtime = if threads == 1 {
        tokio::runtime::Builder::new_current_thread().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(threads as usize).build()
    };
    runtime.unwrap_or_else(|error| {
        eprintln!("{}: cannot start the tokio runtime: {}", PROGRAM, error);
        exit(1)
    })
}

/// Runs `root` as a task on the scheduler `threads` asks for, and returns its result.
pub fn on_runtime<F>(threads: i64, root: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let runtime = runtime(threads);
    let task = runtime.spawn(root);
    match runtime.block_on(task) {
        Ok(output) => output,
        Err(error) => {
            eprintln!("{}: the kernel's root task failed: {}", PROGRAM, error);
            exit(1)
        }
    }
}

/// Nanoseconds of a duration, at least 1 (a time of 0 ns is read by labctl as not measured).
pub fn nanos(elapsed: std::time::Duration) -> u64 {
    (elapsed.as_nanos().min(i64::MAX as u128) as u64).max(1)
}

// An integer parameter: its default and allowed range, as our kernel's schema says.
struct Spec {
    name: &'static str,
    default: i64,
    min: i64,
    max: i64,
}

// A real parameter: its default and allowed range, as our kernel's schema says.
struct RealSpec {
    name: &'static str,
    default: f64,
    min: f64,
    max: f64,
}

// A boolean parameter: its default, as our kernel's schema says.
struct FlagSpec {
    name: &'static str,
    default: bool,
}

struct Kernel {
    name: &'static str,
    params: &'static [Spec],
    reals: &'static [RealSpec],
    flags: &'static [FlagSpec],
    run: fn(&Params) -> Reply,
}

const THREADS: Spec = Spec { name: "threads", default: 1, min: 1, max: 1024 };

const KERNELS: &[Kernel] = &[
    Kernel {
        name: "skynet",
        params: &[
            Spec { name: "leaves", default: 1_000_000, min: 1, max: 100_000_000 },
            Spec { name: "branching", default: 10, min: 2, max: 1_000_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: skynet::run,
    },
    Kernel {
        name: "ping_pong",
        params: &[
            Spec { name: "messages", default: 10_000_000, min: 2, max: 10_000_000_000 },
            Spec { name: "latency_samples", default: 10_000, min: 0, max: 10_000_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: ping_pong::run,
    },
    Kernel {
        name: "thread_ring",
        params: &[
            Spec { name: "actors", default: 503, min: 1, max: 10_000_000 },
            Spec { name: "hops", default: 50_000_000, min: 0, max: 100_000_000_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: thread_ring::run,
    },
    Kernel {
        name: "savina_pingpong",
        params: &[Spec { name: "pings", default: 40_000, min: 1, max: 1_000_000_000 }, THREADS],
        reals: &[],
        flags: &[],
        run: savina::pingpong::run,
    },
    Kernel {
        name: "savina_count",
        params: &[Spec { name: "increments", default: 1_000_000, min: 0, max: 10_000_000_000 }, THREADS],
        reals: &[],
        flags: &[],
        run: savina::count::run,
    },
    Kernel {
        name: "savina_fjthrput",
        params: &[
            Spec { name: "messages", default: 10_000, min: 1, max: 1_000_000_000 },
            Spec { name: "actors", default: 60, min: 1, max: 1_000_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::fork_join::run_throughput,
    },
    Kernel {
        name: "savina_fjcreate",
        params: &[Spec { name: "workers", default: 40_000, min: 1, max: 100_000_000 }, THREADS],
        reals: &[],
        flags: &[],
        run: savina::fork_join::run_creation,
    },
    Kernel {
        name: "savina_threadring",
        params: &[
            Spec { name: "actors", default: 100, min: 1, max: 1_000_000 },
            Spec { name: "pings", default: 100_000, min: 0, max: 10_000_000_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::threadring::run,
    },
    Kernel {
        name: "savina_chameneos",
        params: &[
            Spec { name: "creatures", default: 100, min: 2, max: 1_000_000 },
            Spec { name: "meetings", default: 200_000, min: 0, max: 1_000_000_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::chameneos::run,
    },
    Kernel {
        name: "savina_big",
        params: &[
            Spec { name: "actors", default: 120, min: 1, max: 1_000_000 },
            Spec { name: "pings", default: 20_000, min: 0, max: 1_000_000_000 },
            Spec { name: "seed", default: 0, min: 0, max: 1_000_000_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::big::run,
    },
    Kernel {
        name: "savina_logmap",
        params: &[
            Spec { name: "terms", default: 25_000, min: 1, max: 100_000_000 },
            Spec { name: "series", default: 10, min: 1, max: 100_000 },
            THREADS,
        ],
        reals: &[
            RealSpec { name: "start_rate", default: 3.46, min: 0.0, max: 4.0 },
            RealSpec { name: "increment", default: 0.0025, min: 0.0, max: 1.0 },
        ],
        flags: &[],
        run: savina::logmap::run,
    },
    Kernel {
        name: "savina_banking",
        params: &[
            Spec { name: "accounts", default: 1_000, min: 10, max: 1_000_000 },
            Spec { name: "transactions", default: 50_000, min: 0, max: 100_000_000 },
            Spec { name: "seed", default: 123_456, min: 0, max: 4_294_967_295 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::banking::run,
    },
    Kernel {
        name: "savina_cigsmok",
        params: &[
            Spec { name: "rounds", default: 1_000, min: 1, max: 100_000_000 },
            Spec { name: "smokers", default: 200, min: 1, max: 1_000_000 },
            Spec { name: "seed", default: 0, min: 0, max: 4_294_967_295 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::cigsmok::run,
    },
    Kernel {
        name: "savina_bndbuffer",
        params: &[
            Spec { name: "buffer_size", default: 50, min: 2, max: 10_000_000 },
            Spec { name: "producers", default: 40, min: 1, max: 100_000 },
            Spec { name: "consumers", default: 40, min: 1, max: 100_000 },
            Spec { name: "items_per_producer", default: 1_000, min: 0, max: 100_000_000 },
            Spec { name: "produce_cost", default: 25, min: 0, max: 100_000 },
            Spec { name: "consume_cost", default: 25, min: 0, max: 100_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::bndbuffer::run,
    },
    Kernel {
        name: "savina_concdict",
        params: &[
            Spec { name: "workers", default: 20, min: 1, max: 10_000 },
            Spec { name: "messages_per_worker", default: 10_000, min: 0, max: 1_000_000_000 },
            Spec { name: "write_percent", default: 10, min: 0, max: 100 },
            Spec { name: "keys", default: 524_287, min: 1, max: 100_000_000 },
            Spec { name: "seed", default: 1, min: 0, max: 4_294_967_295 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::concdict::run,
    },
    Kernel {
        name: "savina_concsll",
        params: &[
            Spec { name: "workers", default: 20, min: 1, max: 10_000 },
            Spec { name: "messages_per_worker", default: 8_000, min: 0, max: 100_000_000 },
            Spec { name: "write_percent", default: 10, min: 0, max: 100 },
            Spec { name: "size_percent", default: 1, min: 0, max: 100 },
            Spec { name: "seed", default: 1, min: 0, max: 4_294_967_295 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::concsll::run,
    },
    Kernel {
        name: "savina_philosopher",
        params: &[
            Spec { name: "philosophers", default: 20, min: 1, max: 1_000_000 },
            Spec { name: "rounds", default: 10_000, min: 1, max: 1_000_000_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::philosopher::run,
    },
    Kernel {
        name: "savina_barber",
        params: &[
            Spec { name: "haircuts", default: 5_000, min: 1, max: 10_000_000 },
            Spec { name: "seats", default: 1_000, min: 1, max: 10_000_000 },
            Spec { name: "production_rate", default: 1_000, min: 1, max: 65_536 },
            Spec { name: "haircut_rate", default: 1_000, min: 1, max: 65_536 },
            Spec { name: "seed", default: 74_755, min: 0, max: 4_294_967_295 },
            THREADS,
        ],
        reals: &[],
        flags: &[],
        run: savina::barber::run,
    },
    Kernel {
        name: "chat",
        params: &[
            Spec { name: "clients", default: 1024, min: 2, max: 1_000_000 },
            Spec { name: "directories", default: 8, min: 1, max: 500_000 },
            Spec { name: "turns", default: 32, min: 1, max: 1_000_000 },
            Spec { name: "iterations", default: 32, min: 1, max: 100_000 },
            Spec { name: "compute", default: 55, min: 0, max: 100 },
            Spec { name: "post", default: 25, min: 0, max: 100 },
            Spec { name: "leave", default: 10, min: 0, max: 100 },
            Spec { name: "invite", default: 10, min: 0, max: 100 },
            Spec { name: "befriend", default: 10, min: 0, max: 100 },
            Spec { name: "seed", default: 42, min: 0, max: 1_000_000_000 },
            Spec { name: "compute_repeats", default: 10_000, min: 0, max: 100_000_000 },
            THREADS,
        ],
        reals: &[],
        flags: &[FlagSpec { name: "buffering", default: true }],
        run: chat::run,
    },
];

/// A reader of the request: one JSON object {"kernel": string, "params": {name: number}}.
struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn skip_space(&mut self) {
        while self.pos < self.text.len() && b" \t\r\n".contains(&self.text[self.pos]) {
            self.pos += 1;
        }
    }

    fn next_is(&mut self, c: u8) -> bool {
        self.skip_space();
        self.pos < self.text.len() && self.text[self.pos] == c
    }

    fn expect(&mut self, c: u8) {
        if !self.next_is(c) {
            fail(&format!("bad request: expected '{}'", c as char));
        }
        self.pos += 1;
    }

    fn string(&mut self) -> String {
        self.expect(b'"');
        let mut out = Vec::new();
        while self.pos < self.text.len() && self.text[self.pos] != b'"' {
            let mut c = self.text[self.pos];
            self.pos += 1;
            if c < 0x20 {
                fail("bad request: control character in a string");
            }
            if c == b'\\' {
                let escaped = *self.text.get(self.pos).unwrap_or(&b'?');
                self.pos += 1;
                c = match escaped {
                    b'"' | b'\\' | b'/' => escaped,
                    b'n' => b'\n',
                    b't' => b'\t',
                    _ => fail(&format!("bad request: unsupported escape \\{} in a string", escaped as char)),
                };
            }
            out.push(c);
        }
        self.expect(b'"');
        String::from_utf8(out).unwrap_or_else(|_| fail("bad request: a string is not UTF-8"))
    }

    /// A parameter's value: a JSON number's text or a boolean's (true, false), or None for any
    /// other value (a string, null, an array, an object), read past; which values fit is the
    /// kernel's to say.
    fn value(&mut self) -> Option<String> {
        self.skip_space();
        let start = self.pos;
        let mut end = start;
        while end < self.text.len() && b"+-.eE0123456789".contains(&self.text[end]) {
            end += 1;
        }
        if end > start {
            self.pos = end;
            return Some(String::from_utf8_lossy(&self.text[start..end]).into_owned());
        }
        for word in ["true", "false"] {
            if self.text[start..].starts_with(word.as_bytes())
                && !self.text.get(start + word.len()).map_or(false, |c| c.is_ascii_alphabetic())
            {
                self.pos = start + word.len();
                return Some(word.to_string());
            }
        }
        self.skip_value();
        None
    }

    /// Reads past one JSON value that is not a number.
    fn skip_value(&mut self) {
        if self.next_is(b'"') {
            self.string();
        } else if self.next_is(b'[') || self.next_is(b'{') {
            let close = if self.text[self.pos] == b'[' { b']' } else { b'}' };
            self.pos += 1;
            let mut first = true;
            while !self.next_is(close) {
                if !first {
                    self.expect(b',');
                }
                first = false;
                if close == b'}' {
                    self.string();
                    self.expect(b':');
                }
                let _ = self.value();
            }
            self.pos += 1;
        } else {
            let start = self.pos;
            while self.pos < self.text.len() && self.text[self.pos].is_ascii_alphabetic() {
                self.pos += 1;
            }
            if !matches!(&self.text[start..self.pos], b"true" | b"false" | b"null") {
                fail("bad request: expected a JSON value");
            }
        }
    }

    fn end(&mut self) {
        self.skip_space();
        if self.pos != self.text.len() {
            fail("bad request: trailing data after the JSON object");
        }
    }
}

fn parse(text: &[u8]) -> (&'static Kernel, Params) {
    let mut reader = Reader { text, pos: 0 };
    let mut kernel_name: Option<String> = None;
    let mut given: Vec<(String, Option<String>)> = Vec::new();
    reader.expect(b'{');
    let mut first = true;
    while !reader.next_is(b'}') {
        if !first {
            reader.expect(b',');
        }
        first = false;
        let key = reader.string();
        reader.expect(b':');
        match key.as_str() {
            "kernel" => kernel_name = Some(reader.string()),
            "params" => {
                reader.expect(b'{');
                let mut first_param = true;
                while !reader.next_is(b'}') {
                    if !first_param {
                        reader.expect(b',');
                    }
                    first_param = false;
                    let name = reader.string();
                    reader.expect(b':');
                    let value = reader.value();
                    given.push((name, value));
                }
                reader.expect(b'}');
            }
            _ => fail(&format!("bad request: unknown field '{}'", key)),
        }
    }
    reader.expect(b'}');
    reader.end();
    let kernel_name = kernel_name.unwrap_or_else(|| fail("bad request: no kernel"));
    let names: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
    let kernel = KERNELS.iter().find(|k| k.name == kernel_name).unwrap_or_else(|| {
        fail(&format!("unknown kernel '{}' (this peer runs {})", kernel_name, names.join(", ")))
    });
    for (name, _) in &given {
        if !kernel.params.iter().any(|spec| spec.name == name) && !kernel.reals.iter().any(|spec| spec.name == name)
            && !kernel.flags.iter().any(|spec| spec.name == name)
        {
            fail(&format!("unknown param '{}' for kernel {}", name, kernel.name));
        }
    }
    // The last value given for a name counts, as a JSON reader's map would keep it.
    let given_value = |name: &str| given.iter().rev().find(|(given, _)| given == name).map(|(_, value)| value);
    let mut params = Params { integers: BTreeMap::new(), reals: BTreeMap::new(), flags: BTreeMap::new() };
    for spec in kernel.params {
        let value = match given_value(spec.name) {
            None => spec.default,
            Some(text) => integer(spec.name, text.as_deref()),
        };
        if value < spec.min || value > spec.max {
            fail(&format!("param {}={} out of range [{}, {}]", spec.name, value, spec.min, spec.max));
        }
        params.integers.insert(spec.name.to_string(), value);
    }
    for spec in kernel.reals {
        let value = match given_value(spec.name) {
            None => spec.default,
            Some(text) => real(spec.name, text.as_deref()),
        };
        if !(value >= spec.min && value <= spec.max) {
            fail(&format!("param {}={} out of range [{}, {}]", spec.name, value, spec.min, spec.max));
        }
        params.reals.insert(spec.name.to_string(), value);
    }
    for spec in kernel.flags {
        let value = match given_value(spec.name) {
            None => spec.default,
            Some(text) => flag(spec.name, text.as_deref()),
        };
        params.flags.insert(spec.name.to_string(), value);
    }
    if kernel.name == "ping_pong" {
        let messages = params["messages"];
        if messages % 2 != 0 {
            fail(&format!("param messages={} must be even (pings plus pongs)", messages));
        }
    }
    (kernel, params)
}

/// An integer parameter's value; a fraction, an exponent or anything not a number is refused.
fn integer(name: &str, text: Option<&str>) -> i64 {
    let text = text.unwrap_or_else(|| fail(&format!("param {} must be an integer", name)));
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        fail(&format!("param {} must be an integer", name));
    }
    text.parse().unwrap_or_else(|_| fail(&format!("param {} must be an integer, got {}", name, text)))
}

/// A real parameter's value: any JSON number, read as the nearest f64 (as Python's float and
/// our kernel's double read it, so the same bits).
fn real(name: &str, text: Option<&str>) -> f64 {
    let text = text.unwrap_or_else(|| fail(&format!("param {} must be a number", name)));
    let json = text.strip_prefix('-').unwrap_or(text);
    // JSON's grammar: no '+' before the number, no leading '.', digits on both sides of a '.'.
    if !json.starts_with(|c: char| c.is_ascii_digit()) || json.contains(".e") || json.contains(".E") || json.ends_with('.') {
        fail(&format!("param {} must be a number, got {}", name, text));
    }
    text.parse().unwrap_or_else(|_| fail(&format!("param {} must be a number, got {}", name, text)))
}

/// A boolean parameter's value: JSON's true or false, nothing else (not 0 nor 1).
fn flag(name: &str, text: Option<&str>) -> bool {
    match text {
        Some("true") => true,
        Some("false") => false,
        Some(other) => fail(&format!("param {} must be true or false, got {}", name, other)),
        None => fail(&format!("param {} must be true or false", name)),
    }
}

fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

pub const AGENTS_CREATED: &str = "agents_created";

/// The process's resident set in KiB (VmRSS in /proc/self/status).
fn resident_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_else(|error| fail(&format!("reading /proc/self/status: {}", error)));
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| fail("/proc/self/status has no VmRSS"))
}

fn print(reply: &Reply, rss_before_kb: u64) {
    let mut line = format!(
        "{{\"elapsed_ns\": {}, \"messages\": {}, \"answer\": {}, \"rss_before_kb\": {}",
        reply.elapsed_ns,
        reply.messages,
        quoted(&reply.answer),
        rss_before_kb
    );
    let (agents, metrics): (Vec<_>, Vec<_>) = reply.metrics.iter().partition(|(name, _)| *name == AGENTS_CREATED);
    if let Some((_, made)) = agents.first() {
        line += &format!(", \"agents_created\": {}", *made as u64);
    }
    if !metrics.is_empty() {
        let metrics: Vec<String> = metrics.iter().map(|(name, value)| format!("{}: {:?}", quoted(name), value)).collect();
        line += &format!(", \"metrics\": {{{}}}", metrics.join(", "));
    }
    println!("{}}}", line);
}

fn main() {
    let mut input = Vec::new();
    if let Err(error) = std::io::stdin().read_to_end(&mut input) {
        fail(&format!("reading stdin: {}", error));
    }
    if input.iter().all(|c| b" \t\r\n".contains(c)) {
        fail("empty request on stdin");
    }
    let (kernel, params) = parse(&input);
    fault(); // a bad value is refused before any work
    let rss_before_kb = resident_kb();
    print(&(kernel.run)(&params), rss_before_kb);
}
