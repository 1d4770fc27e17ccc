"""What each kernel must answer, computed in Python from its resolved parameters alone.

The tests hold a run to these, not to the kernel's own `expected`: an oracle is arithmetic or a
small sequential model of what the kernel does, written here from its description, so that a
kernel whose own check is wrong disagrees with it. Nothing here calls the extension.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache

Params = Mapping[str, object]

# mailbox_n_to_1's sender agents send this many messages per Continue (the study's burst).
MAILBOX_BURST = 1000


@dataclass(frozen=True)
class Oracle:
    """A correct run's answer, its messages_processed, the metrics the parameters fix, and the
    metrics it must leave out because the parameters measure nothing for them (a figure that was
    not measured is absent, never 0)."""

    answer: str
    messages: int
    metrics: dict[str, float] = field(default_factory=dict)
    absent: frozenset[str] = frozenset()


# The figures of the latency phase: none without a sample.
LATENCY_FIGURES = frozenset({"round_trip_p50_ns", "round_trip_p99_ns", "round_trip_max_ns", "clock_read_ns"})


def _int(params: Params, name: str) -> int:
    value = params[name]
    assert isinstance(value, int) and not isinstance(value, bool), (name, value)
    return value


# -- trees ----------------------------------------------------------------------------------------

@cache
def skynet_agents(leaves: int, branching: int) -> int:
    """Agents in a tree whose node over `count` leaves has min(branching, count) children, the
    leaves shared as evenly as they go (the first count % children take one more)."""
    if leaves == 1:
        return 1
    children = min(branching, leaves)
    small, larger = divmod(leaves, children)  # `larger` children have small + 1 leaves
    agents = 1 + (children - larger) * skynet_agents(small, branching)
    return agents + larger * skynet_agents(small + 1, branching) if larger else agents


def skynet(params: Params) -> Oracle:
    """Leaves 0..leaves-1 send their ordinal up: the root's sum is their triangular number; every
    agent but the root reports once."""
    leaves, branching = _int(params, "leaves"), _int(params, "branching")
    agents = skynet_agents(leaves, branching)
    return Oracle(f"sum={leaves * (leaves - 1) // 2} agents={agents}", agents - 1, {"agents": agents})


def actor_creation(params: Params) -> Oracle:
    """A full binary tree `depth` levels below the root: 2^depth leaves, 2^(depth+1)-1 agents. As
    libcppa's testees, every agent is sent one {spread, N} (the root by the kernel, the others by
    their parent) and every agent but the root reports its count to its parent once."""
    depth = _int(params, "depth")
    agents = sum(2 ** level for level in range(depth + 1))
    spreads, counts = agents, agents - 1
    return Oracle(f"leaves={2 ** depth} agents={agents}", spreads + counts, {"agents": agents})


# -- two parties ----------------------------------------------------------------------------------

def _ping_pong_answer(round_trips: int) -> str:
    return f"pings={round_trips} pongs={round_trips} out_of_order=0 corrupt=0"


def ping_pong(params: Params) -> Oracle:
    """messages/2 pings, each answered by a pong, all in order; the latency probes come after the
    phase and are not counted, but every one of them is a sample."""
    round_trips, probes = _int(params, "messages") // 2, _int(params, "latency_samples")
    return Oracle(_ping_pong_answer(round_trips), 2 * round_trips, {"round_trip_samples": probes},
                  LATENCY_FIGURES if probes == 0 else frozenset())


def service(params: Params) -> Oracle:
    """Every request id 0..requests-1 answered exactly once: as many answers as requests, none
    missing or repeated, and the ids summing to requests*(requests-1)/2; a request and its answer
    are the two messages of each."""
    requests = _int(params, "requests")
    answer = (f"requests={requests} answered={requests} repeated=0 missing=0 unknown=0 "
              f"id_sum={sum(range(requests))}")
    return Oracle(answer, 2 * requests)


def floor_actor_loop(params: Params) -> Oracle:
    """ping_pong on a bare loop: the same answer, and no envelope left without a handler."""
    round_trips = _int(params, "messages") // 2
    return Oracle(_ping_pong_answer(round_trips), 2 * round_trips)


def _round_trip_floor(params: Params) -> Oracle:
    """The initiator's round trips and the responder's answers cover both phases; the messages
    counted are the throughput phase's two per round trip, as ping_pong's."""
    round_trips, probes = _int(params, "round_trips"), _int(params, "latency_samples")
    return Oracle(f"round_trips={round_trips + probes} answered={round_trips + probes} out_of_order=0",
                  2 * round_trips, {"round_trip_samples": probes},
                  LATENCY_FIGURES if probes == 0 else frozenset())


floor_cache_line = _round_trip_floor
floor_futex_wake = _round_trip_floor


# -- one to many, many to one ---------------------------------------------------------------------

def one_to_many(params: Params) -> Oracle:
    """Every number 0..messages_per_worker-1 reaches every worker; each worker then reports once."""
    workers, numbers = _int(params, "workers"), _int(params, "messages_per_worker")
    deliveries = workers * numbers
    return Oracle(f"received={deliveries} out_of_order=0 short_workers=0 wrong_series=0",
                  deliveries + workers, {"deliveries": deliveries})


def self_send(params: Params) -> Oracle:
    """Each worker handles its count of its own messages and reports once (with
    after_report=circulate, the messages left circulating after a report are not counted)."""
    workers, each = _int(params, "workers"), _int(params, "messages_per_worker")
    return Oracle(f"handled={workers * each} reports={workers} repeated=0 short_workers=0",
                  workers * each + workers)


def counting_actor(params: Params) -> Oracle:
    """1..messages summed by the counter, in its 64-bit unsigned word."""
    n = _int(params, "messages")
    return Oracle(f"received={n} sum={n * (n + 1) // 2 % 2 ** 64}", n)


def producer_consumer(params: Params) -> Oracle:
    """Producer p sends seq 0..quota_p-1, the first messages % producers taking one item more. The
    kernel's messages are the items alone. Producer agents send in bursts of `burst`, every burst
    after the first started by a Continue message to itself, reported as continue_messages;
    producer threads send in one loop and have none to report."""
    producers, total, burst = _int(params, "producers"), _int(params, "messages"), _int(params, "burst")
    quotas = [total // producers + (1 if p < total % producers else 0) for p in range(producers)]
    seq_sum = sum(quota * (quota - 1) // 2 for quota in quotas)  # 0 + 1 + ... + (quota - 1)
    answer = f"received={total} sum={seq_sum} out_of_order=0 short_producers=0"
    if params["producer"] == "thread":
        return Oracle(answer, total, absent=frozenset({"continue_messages"}))
    continues = sum(-(-quota // burst) - 1 for quota in quotas)
    return Oracle(answer, total, {"continue_messages": continues})


def mailbox_n_to_1(params: Params) -> Oracle:
    """senders * messages_per_sender messages, each sender's in order; sender agents also handle
    one Continue per burst of MAILBOX_BURST (the first one sent them by the kernel)."""
    senders, each = _int(params, "senders"), _int(params, "messages_per_sender")
    continues = senders * -(-each // MAILBOX_BURST) if params["sender"] == "agent" else 0
    return Oracle(f"received={senders * each} out_of_order=0 short_senders=0", senders * each + continues)


def fan(params: Params, iterations_done: int | None = None) -> Oracle:
    """Each iteration the master sends fan_out Work and takes fan_out replies: 2 * fan_out messages.
    With iterations > 0 the count is the parameter; with iterations = 0 (run for duration_s) the
    count depends on the machine, so the caller passes the run's iterations_done and the oracle
    holds every other figure to it. The channel=direct answer also says every worker took exactly
    one Work per iteration."""
    fan_out, iterations = _int(params, "fan_out"), _int(params, "iterations")
    if iterations == 0:
        assert iterations_done is not None, "fan timed by duration_s: pass the run's iterations_done"
        iterations = iterations_done
    answer = (f"iterations={iterations} replies={fan_out * iterations} stray=0 bad_iterations=0 "
              f"worker_total={fan_out * iterations}")
    if params["channel"] == "direct":
        answer += " uneven_workers=0"
    return Oracle(answer, 2 * fan_out * iterations, {"iterations_done": iterations})


def ring_laps(params: Params, laps_done: int | None = None) -> Oracle:
    """One token: each lap is one hop per agent, the token carrying its hop count and every agent
    receiving it once a lap. With laps = 0 (run for duration_s) the count depends on the machine:
    the caller passes the run's laps_done and the oracle holds every other figure to it."""
    actors, laps = _int(params, "actors"), _int(params, "laps")
    if laps == 0:
        assert laps_done is not None, "ring_laps timed by duration_s: pass the run's laps_done"
        laps = laps_done
    hops = laps * actors
    return Oracle(f"laps={laps} hops={hops} received={hops} uneven_agents=0", hops, {"laps_done": laps})


# -- rings of tokens ------------------------------------------------------------------------------

def ring_split(tokens: int, hops: int) -> list[int]:
    """Theron's split: each token but the last makes ceil(hops/tokens) hops, the last the rest."""
    each = -(-hops // tokens)
    return [each] * (tokens - 1) + [hops - each * (tokens - 1)]


def _ring(tokens: int, hops: int) -> Oracle:
    """Token j is received once at its injection and once per hop, then reports its end once.
    With no hop at all there is no time per hop to report."""
    receipts = sum(made + 1 for made in ring_split(tokens, hops))
    return Oracle(f"tokens_ended={tokens} wrong_end=0 wrong_hops=0 repeated=0 uneven_agents=0",
                  receipts + tokens, absent=frozenset({"ns_per_hop"}) if hops == 0 else frozenset())


def thread_ring(params: Params) -> Oracle:
    """One token making every hop."""
    return _ring(1, _int(params, "hops"))


def parallel_thread_ring(params: Params) -> Oracle:
    """`tokens` tokens sharing the hops as Theron splits them."""
    return _ring(_int(params, "tokens"), _int(params, "hops"))


# -- the mixed load -------------------------------------------------------------------------------

def mixed(params: Params) -> Oracle:
    """Per ring and repetition: one factorization of `number` (every number >= 2 has one, so
    every one the kernel reports must be valid; the factors are not in the answer, and `number`
    changes nothing else)
    and one ring round, in which the token goes round initial_token + 1 times (values
    initial_token..0), handled by each of ring_size agents each time. Messages: the token hops, a
    Calc and a result per factorization, and each master's farewell. Agents: the collector, a
    master and a worker per ring, ring_size - 1 links per ring and repetition."""
    rings, ring_size = _int(params, "rings"), _int(params, "ring_size")
    token, repetitions = _int(params, "initial_token"), _int(params, "repetitions")
    rounds = rings * repetitions
    hops = rounds * (token + 1) * ring_size
    agents = 1 + rings * 2 + rounds * (ring_size - 1)
    return Oracle(f"factorizations={rounds} valid_factorizations={rounds} ring_rounds={rounds} "
                  f"token_hops={hops} masters_done={rings}",
                  hops + 2 * rounds + rings, {"agents": agents})


# -- Savina (the savina_ kernels: Imam and Sarkar's suite) ---------------------------------------

# -- Savina's generators (native/kernels/savina/random.hpp) -------------------------------------

_D_M64 = 2**64 - 1
_D_GOLDEN = 0x9E3779B97F4A7C15


def _d_mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _D_M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _D_M64
    return z ^ (z >> 31)


class SplitMix64:
    """savina/random.hpp's SplitMix64: its state started at mix64(seed * 65536 + stream)."""

    def __init__(self, seed: int, stream: int) -> None:
        self.state = _d_mix64((seed * 65536 + stream) & _D_M64)

    def next(self) -> int:
        self.state = (self.state + _D_GOLDEN) & _D_M64
        return _d_mix64(self.state)

    def below(self, bound: int) -> int:
        """A value in [0, bound): the next value modulo `bound`."""
        return self.next() % bound

    def unit(self) -> float:
        """A float in [0, 1): the next value's top 53 bits."""
        return (self.next() >> 11) * 2.0**-53


class PseudoRandom:
    """Savina's PseudoRandom (savina/random.hpp): value = (value * 1309 + 13849) & 65535."""

    def __init__(self, seed: int) -> None:
        self.value = seed

    def next(self, bound: int | None = None) -> int:
        self.value = (self.value * 1309 + 13849) & 65535
        return self.value if bound is None else self.value % bound

    def next_double(self) -> float:
        return 1.0 / (self.next() + 1)


def busy_work(steps: int) -> int:
    """savina/random.hpp's busy_work: `steps` steps of the 64-bit LCG
    x = x*6364136223846793005 + 1442695040888963407 from x = steps; its last state."""
    x = steps
    for _ in range(steps):
        x = (x * 6364136223846793005 + 1442695040888963407) & _D_M64
    return x


def savina_pingpong(params: Params) -> Oracle:
    """Savina's Ping Pong: 1 Start, N SendPing, N SendPong, N-1 Ping (ping to itself), 1 Stop."""
    n = _int(params, "pings")
    return Oracle(f"start=1 ping={n - 1} send_ping={n} send_pong={n} stop=1 pings_left=0", 3 * n + 1)

def savina_count(params: Params) -> Oracle:
    """Savina's Counting Actor: the producer's start, N Increments, a Retrieve, a Result of N."""
    n = _int(params, "increments")
    return Oracle(f"start=1 increments={n} retrieves=1 results=1 result={n}", n + 3)

def savina_threadring(params: Params) -> Oracle:
    """Savina's Thread Ring: N Data, Ping(R)..Ping(0) from member 0 (Ping(0) at R % N), Exit(N)..
    Exit(1) once at each member and Exit(0) back at the first to have exited, its dead letter."""
    n, r = _int(params, "actors"), _int(params, "pings")
    return Oracle(f"data={n} pings={r + 1} exits={n} dead_letters=1 last_ping_at={r % n} uneven_actors=0",
                  2 * n + r + 2)


def _fj_job() -> float:
    """Savina's performComputation(37.2): the square of a sine (math.sin is the C library's)."""
    import math

    sine = math.sin(37.2)
    return sine * sine


def _fj_repeated_sum(value: float, count: int) -> float:
    """`count` copies of `value` added one after another from zero, as a worker adds them."""
    total = 0.0
    for _ in range(count):
        total += value
    return total


def savina_fjthrput(params: Params) -> Oracle:
    """Each of `actors` workers does `messages` jobs, adding the (equal) results in turn; the sink
    adds the workers' sums in the workers' order. Messages: every job, and each worker's tally."""
    messages, actors = _int(params, "messages"), _int(params, "actors")
    total = _fj_repeated_sum(_fj_repeated_sum(_fj_job(), messages), actors)
    return Oracle(f"jobs={actors * messages} workers_done={actors} bad_results=0 "
                  f"result_sum={format(total, '.17g')}", actors * (messages + 1))

def savina_fjcreate(params: Params) -> Oracle:
    """Each of `workers` workers does one job and reports it: every result is the same, so the
    sink's sum is `workers` of them added in turn, whatever their order. Messages: each worker's
    job and its report."""
    workers = _int(params, "workers")
    total = _fj_repeated_sum(_fj_job(), workers)
    return Oracle(f"workers_done={workers} repeated=0 bad_results=0 result_sum={format(total, '.17g')}",
                  2 * workers)

def savina_big(params: Params) -> Oracle:
    """Replays Savina's PseudoRandom for each actor i (value = (value * 1309 + 13849) & 65535,
    starting at seed + i; the target is value % actors): `pings` targets each, so how often each
    actor is pinged is fixed whatever the schedule. Messages: a start per actor, every ping, its
    pong, and each actor's report to the sink."""
    actors, pings, seed = _int(params, "actors"), _int(params, "pings"), _int(params, "seed")
    pinged = [0] * actors
    for i in range(actors):
        generator = PseudoRandom(seed + i)
        for _ in range(pings):
            pinged[generator.next(actors)] += 1
    total = actors * pings
    return Oracle(f"finished={actors} repeated=0 pings={total} pongs={total} wrong_pongs=0 "
                  f"uneven_actors=0 most_pinged={max(pinged)}", actors * (2 * pings + 2))


def savina_chameneos(params: Params) -> Oracle:
    """Every creature asks once at its start and both creatures of a meeting ask again after it:
    creatures + 2*meetings requests, the last `creatures` of them answered with an exit. Each
    meeting is a forwarded request and a change, counted by both its creatures; each creature
    reports once. Messages: requests, forwards, changes, exits, reports."""
    creatures, meetings = _int(params, "creatures"), _int(params, "meetings")
    answer = (f"meetings={meetings} requests={creatures + 2 * meetings} exits={creatures} "
              f"counted={2 * meetings} reports={creatures} wrong_changes=0 colour_invariant=kept")
    return Oracle(answer, (creatures + 2 * meetings) + meetings + meetings + creatures + creatures)

def savina_bndbuffer(params: Params) -> Oracle:
    """Each producer is told to produce items_per_producer + 1 times (the last answered by its
    exit); each item goes to the manager, on to a consumer, whose availability comes back; every
    producer's exit, and the manager's exit message to every consumer."""
    producers, consumers = _int(params, "producers"), _int(params, "consumers")
    items = producers * _int(params, "items_per_producer")
    answer = f"produced={items} consumed={items} consumed_once={items} short_producers=0 over_buffer=0"
    return Oracle(answer, (items + producers) + 3 * items + producers + consumers)

def savina_philosopher(params: Params, denials: int | None = None) -> Oracle:
    """Each round of each philosopher is a start, a granted hungry, an eat and a done; each
    philosopher exits once; each denial adds a denied and a hungry. The denials depend on the
    schedule: with two or more philosophers the caller passes the run's `denials` metric and the
    oracle holds every other figure to it. One philosopher, whose two forks are one, is never
    denied (its done reaches the arbitrator before its next hungry)."""
    n, rounds = _int(params, "philosophers"), _int(params, "rounds")
    if n == 1:
        denials = 0
    assert denials is not None, "savina_philosopher with 2+ philosophers: pass the run's denials"
    answer = (f"philosophers={n} meals={n * rounds} uneven_philosophers=0 fork_conflicts=0 "
              f"wrong_releases=0 forks_left_held=0 lost_denials=0")
    return Oracle(answer, 4 * n * rounds + n + 2 * denials, {"denials": denials})


def savina_concdict(params: Params) -> Oracle:
    """Each worker's operations replayed in turn on {k: k}: worker i writes only keys k with
    k % workers == i, so the final contents are the same in every interleaving. The digest sums
    mix64(key << 32 | value) over the entries. Messages: a DoWork and an EndWork per worker, a
    request and a reply per operation, one End."""
    workers, per_worker = _int(params, "workers"), _int(params, "messages_per_worker")
    write_percent, keys, seed = _int(params, "write_percent"), _int(params, "keys"), _int(params, "seed")
    reads = writes = 0
    written: dict[int, int] = {}
    for w in range(workers):
        rand = SplitMix64(seed, w)
        own_keys = (keys - w + workers - 1) // workers
        for _ in range(per_worker):
            if rand.next() % 100 < write_percent:
                key = w + workers * (rand.next() % own_keys)
                written[key] = rand.next() >> 32
                writes += 1
            else:
                rand.next()
                reads += 1
    digest = sum(_d_mix64(k << 32 | k) for k in range(keys) if k not in written)
    digest = (digest + sum(_d_mix64(k << 32 | v) for k, v in written.items())) & _D_M64
    return Oracle(f"reads={reads} writes={writes} replies={reads + writes} size={keys} digest={digest}",
                  2 * workers * (per_worker + 1) + 1)

def savina_concsll(params: Params) -> Oracle:
    """Each worker's operations replayed in turn: a draw below 100 picks a size query (under
    size_percent), an insert (under size_percent + write_percent) or a membership test, the last
    two drawing a 32-bit value. Inserts commute: the final list is every inserted value, sorted,
    whatever the interleaving; its digest sums mix64(position << 32 | value). Messages: a DoWork
    and an EndWork per worker, a request and a reply per operation, one End."""
    workers, per_worker = _int(params, "workers"), _int(params, "messages_per_worker")
    write_percent, size_percent, seed = _int(params, "write_percent"), _int(params, "size_percent"), _int(params, "seed")
    contains = sizes = 0
    values: list[int] = []
    for w in range(workers):
        rand = SplitMix64(seed, w)
        for _ in range(per_worker):
            draw = rand.next() % 100
            if draw < size_percent:
                sizes += 1
            elif draw < size_percent + write_percent:
                values.append(rand.next() >> 32)
            else:
                rand.next()
                contains += 1
    values.sort()
    digest = sum(_d_mix64(i << 32 | v) for i, v in enumerate(values)) & _D_M64
    writes = len(values)
    return Oracle(f"contains={contains} writes={writes} sizes={sizes} replies={contains + writes + sizes} "
                  f"length={writes} unsorted=0 digest={digest}", 2 * workers * (per_worker + 1) + 1)

def savina_banking(params: Params) -> Oracle:
    """The teller's transactions replayed in its order from one SplitMix64 stream (seed, 0): a
    source below accounts // 10 * 8, a destination source + max(1, draw % (accounts - source)),
    an amount below 100,000 cents; every account opens at 10**12 cents. Sums commute: each final
    balance is the same in any schedule; the digest sums mix64(balance + mix64(account)), the
    balance as a 64-bit two's complement word. Messages: the start, a credit, a debit, a reply and
    a completion per transaction, a stop per account."""
    accounts, transactions, seed = _int(params, "accounts"), _int(params, "transactions"), _int(params, "seed")
    opening = 10**12
    balances = [opening] * accounts
    rand = SplitMix64(seed, 0)
    for _ in range(transactions):
        source = rand.next() % (accounts // 10 * 8)
        destination = source + max(1, rand.next() % (accounts - source))
        amount = rand.next() % 100_000
        balances[source] -= amount
        balances[destination] += amount
    digest = sum(_d_mix64(((b & _D_M64) + _d_mix64(i)) & _D_M64) for i, b in enumerate(balances)) & _D_M64
    return Oracle(f"completed={transactions} repeated=0 credits={transactions} debits={transactions} "
                  f"stopped={accounts} total={sum(balances)} digest={digest}", 1 + 4 * transactions + accounts)


_FNV_BASIS, _FNV_PRIME, _WORD = 0xCBF29CE484222325, 0x100000001B3, 2**64


def _fnv(hash_: int, word: int) -> int:
    """FNV-1a over 64-bit words, as savina_logmap folds each term's bits and each series' hash."""
    return (hash_ ^ word) * _FNV_PRIME % _WORD


def savina_logmap(params: Params) -> Oracle:
    """Series i: rate start_rate + i*increment, start term i*increment, each next term
    rate*term*(1-term) (Python's floats are the same IEEE doubles, the same operations in the
    same order). The hash folds every term's bits per series, then the series' hashes in order;
    the last terms are summed in series order. Messages: Start, then per series terms x
    (NextTerm, Compute, Result), a GetTerm and a report."""
    import struct

    terms, series = _int(params, "terms"), _int(params, "series")
    start_rate, increment = float(params["start_rate"]), float(params["increment"])
    total, final_sum = _FNV_BASIS, 0.0
    for i in range(series):
        rate, term, hash_ = start_rate + i * increment, i * increment, _FNV_BASIS
        for _ in range(terms):
            term = rate * term * (1 - term)
            hash_ = _fnv(hash_, struct.unpack("<Q", struct.pack("<d", term))[0])
        total = _fnv(total, hash_)
        final_sum += term
    answer = (f"series_reported={series} terms_computed={series * terms} terms_hash={total:016x} "
              f"final_sum={final_sum:.17g}")
    return Oracle(answer, 1 + series * (3 * terms + 2))

def savina_cigsmok(params: Params) -> Oracle:
    """Savina's PseudoRandom (value = (value*1309 + 13849) & 65535, seeded with `seed` or
    rounds*smokers) replayed: each round draws the smoker (value % smokers), then the work
    (value % 1000 + 10); a spell of work is that many steps of the 64-bit LCG
    x = x*6364136223846793005 + 1442695040888963407 from x = work, the last states summed. Each
    smoker's count folds into the hash in smoker order. Messages: Start, rounds StartSmoking and
    StartedSmoking, smokers Exit and Tally."""
    rounds, smokers, seed = _int(params, "rounds"), _int(params, "smokers"), _int(params, "seed")
    random = PseudoRandom(seed or rounds * smokers)
    smokes, units, work_sum = [0] * smokers, 0, 0
    for _ in range(rounds):
        smoker = random.next(smokers)
        work = random.next(1000) + 10
        smokes[smoker] += 1
        units += work
        work_sum = (work_sum + busy_work(work)) % _WORD
    hash_ = _FNV_BASIS
    for count in smokes:
        hash_ = _fnv(hash_, count)
    answer = (f"smokers_reported={smokers} smokes={rounds} uneven_smokers=0 smokes_hash={hash_:016x} "
              f"work_units={units} work_sum={work_sum} start=1 start_smoking={rounds} "
              f"started_smoking={rounds} exit={smokers} tally={smokers}")
    return Oracle(answer, 1 + 2 * rounds + 2 * smokers)

def savina_barber(params: Params, turned_away: int | None = None) -> Oracle:
    """Every customer is cut once; the factory's and the barber's spells of work are drawn from
    Savina's PseudoRandom seeded with `seed` (value % rate + 10 each), each the 64-bit LCG of
    savina_cigsmok run that many steps, the last states summed. How many customers are turned
    away depends on the schedule unless the seats hold every customer (seats >= haircuts: none);
    otherwise the caller passes the run's turned_away. Messages: 3 + 7 per haircut + 3 per
    customer turned away (Full, Returned and its second Enter)."""
    haircuts, seats, seed = _int(params, "haircuts"), _int(params, "seats"), _int(params, "seed")
    if seats >= haircuts:
        turned_away = 0
    assert turned_away is not None, "savina_barber with seats < haircuts: pass the run's turned_away"

    def work(rate: int) -> tuple[int, int]:
        random, units, total = PseudoRandom(seed), 0, 0
        for _ in range(haircuts):
            spell = random.next(rate) + 10
            units, total = units + spell, (total + busy_work(spell)) % _WORD
        return units, total

    factory = work(_int(params, "production_rate"))
    barber = work(_int(params, "haircut_rate"))
    answer = (f"customers={haircuts} haircuts={haircuts} served={haircuts} served_wrong=0 repeated=0 "
              f"accounting_errors=0 factory_work_units={factory[0]} factory_work_sum={factory[1]} "
              f"barber_work_units={barber[0]} barber_work_sum={barber[1]}")
    return Oracle(answer, 3 + 7 * haircuts + 3 * turned_away,
                  {"attempts": haircuts + turned_away, "turned_away": turned_away})


def _sort_answer(values: list[int]) -> str:
    """The sorting kernels' answer for the sorted `values`: the length, sorted, the values that
    are smaller than the one before (none), their sum modulo 2^64, the sum of their SplitMix64
    finalizer images modulo 2^64 (the multiset) and FNV-1a over them in order."""
    ordered = sorted(values)
    sequence = _FNV_BASIS
    for value in ordered:
        sequence = _fnv(sequence, value)
    multiset = sum(_d_mix64(value) for value in ordered) % _WORD
    return (f"values={len(ordered)} sorted=1 out_of_place=0 sum={sum(ordered) % _WORD} "
            f"multiset_hash={multiset:016x} sequence_hash={sequence:016x}")


def _sort_draws(params: Params) -> list[int]:
    generator = SplitMix64(_int(params, "seed"), 0)
    return [generator.below(_int(params, "max_value")) for _ in range(_int(params, "values"))]


def savina_radixsort(params: Params) -> Oracle:
    """The SplitMix64(seed, 0) draws below max_value, sorted by Python. Messages: Start, then
    every value into each of the log2(max_value) stages and into the validation agent."""
    stages = _int(params, "max_value").bit_length() - 1
    return Oracle(_sort_answer(_sort_draws(params)), 1 + _int(params, "values") * (stages + 1))


def savina_sieve(params: Params) -> Oracle:
    """The primes below `limit` by a sieve of Eratosthenes that records each number's smallest
    prime factor. The chain holds the primes in ascending order, primes_per_filter per filter: an
    odd composite travels to the filter holding its smallest prime factor; a prime with k primes
    below it passes every one of the ceil(k / primes_per_filter) filters there are. Messages:
    Start, those Candidate deliveries and an Exit per filter."""
    limit, per_filter = _int(params, "limit"), _int(params, "primes_per_filter")
    smallest = list(range(limit))
    for n in range(2, int(limit**0.5) + 1):
        if smallest[n] == n:
            for m in range(n * n, limit, n):
                if smallest[m] == m:
                    smallest[m] = n
    primes = [n for n in range(2, limit) if smallest[n] == n]
    place = {p: i for i, p in enumerate(primes)}
    deliveries = 0
    for n in range(3, limit, 2):
        if smallest[n] == n:
            deliveries += -(-place[n] // per_filter)
        else:
            deliveries += place[smallest[n]] // per_filter + 1
    filters = -(-len(primes) // per_filter)
    hash_ = _FNV_BASIS
    for p in primes:
        hash_ = _fnv(hash_, p)
    answer = (f"primes={len(primes)} largest={primes[-1]} sum={sum(primes) % _WORD} hash={hash_:016x} "
              f"filters={filters}")
    return Oracle(answer, 1 + deliveries + filters)


def bitonic_network(n: int) -> tuple[int, int, int]:
    """Savina's bitonic network of width n: (agents, agents a value passes, extra Exits). Its steps:
    for each merge stage of order 2, 4, ..., n/2 the lengths order, ..., 2, then n, ..., 2 (the
    last stage). A step of length L has n/L workers, each a partition (its own agent, splitter,
    joiner, adapter and L/2 compare-exchanges; a value passes all but L/2 - 1 of the
    compare-exchanges) or, at L = 2, a compare-exchange; around them the step's agent, splitter
    and joiner, and an adapter outside the last stage. A joiner with k inputs gets k Exits."""
    steps = [(length, False) for order in (2**k for k in range(1, n.bit_length() - 1))
             for length in (order >> j for j in range(order.bit_length() - 1))]
    steps += [(n >> j, True) for j in range(n.bit_length() - 1)]
    stages = n.bit_length() - 1  # the merge stages' agents, the last one's included
    agents, path, extra = 4 + stages, 3 + stages, 0  # the kernel, source, adapter, validation
    for length, last in steps:
        workers = n // length
        around = 3 if last else 4
        if length == 2:
            agents += around + workers
            path += around + 1
        else:
            agents += around + workers * (length // 2 + 4)
            path += around + 5
            extra += workers * (length // 2 - 1)
        extra += workers - 1
    return agents, path, extra


def savina_bitonicsort(params: Params) -> Oracle:
    """The SplitMix64(seed, 0) draws below max_value, sorted by Python. Messages: Start, every
    value through its path, an Exit into every agent but the source and the joiners' extra."""
    n = _int(params, "values")
    agents, path, extra = bitonic_network(n)
    return Oracle(_sort_answer(_sort_draws(params)), 1 + n * path + agents - 1 + extra)

def savina_filterbank(params: Params) -> Oracle:
    """Savina's filter bank replayed channel by channel on whole streams: the source's values
    t % 1000; per channel a delay of columns - 1 (that many 0.0 first), a FIR filter over a ring
    of `columns` slots (value t in slot t % columns; from the window's filling on, each value puts
    out sum over slots i of slot[i] * coef[columns - 1 - i], slots in order, from 0.0), a sampler
    keeping every columns-th value from the first (the rest 0.0), a second delay and FIR filter.
    H[j][i] = i*columns + j*channels + 2j + i + 1, F[j][i] = i*j + j*j + j + i. The k-th outputs
    of the channels add up (from 0.0, channel order) to the sink's k-th value; the answer folds
    their bits and adds them in order, then counts every FIR filter's outputs and folds each
    filter's own hash of their bits, channel by channel, the first filter's then the second's.
    Messages: Next (1 + simulations), Boot and Value per
    simulation, 3 per channel per value into the first filter, 3 per channel per first-filter
    output, 2 per channel per second-filter output, 2 per sink value, and the Exits (4 + 8 per
    channel)."""
    import struct

    sims, cols, chans = _int(params, "simulations"), _int(params, "columns"), _int(params, "channels")

    def delay(stream: list[float]) -> list[float]:
        return ([0.0] * (cols - 1) + stream)[:len(stream)]

    def fir(stream: list[float], coef: list[float]) -> list[float]:
        ring, out = [0.0] * cols, []
        for t, x in enumerate(stream):
            ring[t % cols] = x
            if t >= cols - 1:
                acc = 0.0
                for i in range(cols):
                    acc += ring[i] * coef[cols - 1 - i]
                out.append(acc)
        return out

    def folded(values: list[float]) -> int:
        h = _FNV_BASIS
        for v in values:
            h = _fnv(h, struct.unpack("<Q", struct.pack("<d", v))[0])
        return h

    source = [float(t % 1000) for t in range(sims)]
    outputs, first, filters, filters_hash = [], 0, 0, _FNV_BASIS
    for j in range(chans):
        h = [float(i * cols + j * chans + 2 * j + i + 1) for i in range(cols)]
        f = [float(i * j + j * j + j + i) for i in range(cols)]
        y = fir(delay(source), h)
        sampled = [v if m % cols == 0 else 0.0 for m, v in enumerate(y)]
        outputs.append(fir(delay(sampled), f))
        first = len(y)
        filters += len(y) + len(outputs[-1])
        filters_hash = _fnv(_fnv(filters_hash, folded(y)), folded(outputs[-1]))
    second = len(outputs[0])
    hash_, total = _FNV_BASIS, 0.0
    for k in range(second):
        value = 0.0
        for j in range(chans):
            value += outputs[j][k]
        hash_ = _fnv(hash_, struct.unpack("<Q", struct.pack("<d", value))[0])
        total += value
    messages = (3 * sims + 5 + 8 * chans + 3 * chans * sims + 3 * chans * first + 2 * chans * second
                + 2 * second)
    return Oracle(f"outputs={second} outputs_hash={hash_:016x} outputs_sum={total:.17g} "
                  f"filter_outputs={filters} filters_hash={filters_hash:016x}", messages)


def savina_trapezoid(params: Params) -> Oracle:
    """Worker i integrates from wl = (right - left) / workers * i + left to wl + that range,
    int((wr - wl) / h) pieces of h = (right - left) / pieces, each piece's 0.5 * (f(lx) + f(rx))
    * h added in turn, f(x) = sin(x**3 - 1) / (x + 1) * sqrt(1 + exp(sqrt(2x))) with Python's
    math (the same C library as the kernel's: the same doubles). Areas folded and added in
    worker order. Messages: the first Work, a Work and a result per worker."""
    import math
    import struct

    pieces, workers = _int(params, "pieces"), _int(params, "workers")
    left, right = float(params["left"]), float(params["right"])

    def f(x: float) -> float:
        return math.sin(math.pow(x, 3.0) - 1) / (x + 1) * math.sqrt(1 + math.exp(math.sqrt(2 * x)))

    h, width = (right - left) / pieces, (right - left) / workers
    hash_, area, counted = _FNV_BASIS, 0.0, 0
    for i in range(workers):
        wl = width * i + left
        wr = wl + width
        n, acc = int((wr - wl) / h), 0.0
        for k in range(n):
            lx = k * h + wl
            acc += 0.5 * (f(lx) + f(lx + h)) * h
        counted += max(n, 0)
        hash_ = _fnv(hash_, struct.unpack("<Q", struct.pack("<d", acc))[0])
        area += acc
    return Oracle(f"workers_reported={workers} pieces={counted} areas_hash={hash_:016x} area={area:.17g}",
                  1 + 2 * workers)


def _decimal(n: int) -> str:
    """n >= 0 in decimal, past Python's limit on converting long integers to text."""
    chunk, parts = 10**1000, []
    while n >= chunk:
        n, low = divmod(n, chunk)
        parts.append(f"{low:01000d}")
    return str(n) + "".join(reversed(parts))


def machin_pi(digits: int) -> int:
    """floor(pi * 10**digits), by Machin's formula pi = 16 atan(1/5) - 4 atan(1/239) in Python
    integers with 10 guard digits."""
    scale = 10 ** (digits + 10)

    def atan_inv(x: int) -> int:
        total, power, k, sign = 0, scale // x, 1, 1
        while power:
            total += sign * (power // k)
            power //= x * x
            k, sign = k + 2, -sign
        return total

    return (16 * atan_inv(5) - 4 * atan_inv(239)) // 10**10


def savina_piprecision(params: Params, terms_computed: int | None = None) -> Oracle:
    """The Bailey-Borwein-Plouffe series' terms 1/16^k (4/(8k+1) - 2/(8k+4) - 1/(8k+5) -
    1/(8k+6)) summed up to the first K at or below 10^-precision (exact rationals decide K); the
    sum's first `precision` decimals, truncated, from the terms scaled by 10^(precision + 30) in
    integers (each off by under one unit), checked against Machin's pi on all but the last 10.
    The terms computed depend on the schedule: with one worker they come back in index order, so
    min(precision, 10) first requests and one more per term before K; else pass the run's
    terms_computed metric, held to K + 1 .. min(precision, 10 workers) + K. Messages: Start, a
    Work and a result per term computed."""
    from fractions import Fraction

    precision, workers = _int(params, "precision"), _int(params, "workers")
    tolerance = Fraction(1, 10**precision)

    def bracket(k: int) -> Fraction:
        return Fraction(4, 8 * k + 1) - Fraction(2, 8 * k + 4) - Fraction(1, 8 * k + 5) - Fraction(1, 8 * k + 6)

    last = 0
    while bracket(last) / 16**last > tolerance:
        last += 1
    extra = 30
    scale = 10 ** (precision + extra)
    total = 0
    for k in range(last + 1):
        a, b, c, d = 8 * k + 1, 8 * k + 4, 8 * k + 5, 8 * k + 6
        total += scale * (4 * b * c * d - 2 * a * c * d - a * b * d - a * b * c) // (a * b * c * d * 16**k)
    digits, rest = divmod(total, 10**extra)
    # The kernel's fixed-point sum is within 10^-(precision + 6) of the exact one: its digits are
    # these unless the exact sum lies that close to a boundary, which is refused here.
    assert 10 ** (extra - 7) < rest < 10**extra - 10 ** (extra - 7), "the sum's last digit is too close to call"
    text = _decimal(digits)
    assert text[: precision - 9] == _decimal(machin_pi(precision))[: precision - 9], "not pi's digits"
    hash_ = _FNV_BASIS
    for digit in text[1:]:
        hash_ = _fnv(hash_, int(digit))
    # The master asks first = min(precision, 10 workers) terms, then one more for each term that
    # comes back before the first at or below the tolerance (index `last`), and stops asking when
    # that one arrives: it must have asked for `last`, and asked at most first + last. With one
    # worker the terms come back in order and it asks exactly first + last; with more, the
    # schedule decides within those bounds, and the run's count is taken only inside them.
    first = min(precision, 10 * workers)
    if workers == 1:
        terms_computed = first + last
    assert terms_computed is not None, "savina_piprecision with 2+ workers: pass the run's terms_computed"
    assert last + 1 <= terms_computed <= first + last, \
        f"{terms_computed} terms computed, outside {last + 1}..{first + last}"
    answer = f"digits={precision} terms_summed={last + 1} leading={text[0]}.{text[1:21]} digits_hash={hash_:016x}"
    return Oracle(answer, 1 + 2 * terms_computed, {"terms_computed": terms_computed})

def _uct_normal(random: SplitMix64, mean: int, deviation: int) -> int:
    """java.util.Random's nextGaussian (the polar method, the pair's second value unused) times
    the deviation plus the mean, rounded as Math.round, drawn again until positive."""
    import math

    while True:
        while True:
            v1, v2 = 2 * random.unit() - 1, 2 * random.unit() - 1
            s = v1 * v1 + v2 * v2
            if 0 < s < 1:
                break
        result = math.floor(v1 * math.sqrt(-2 * math.log(s) / s) * deviation + mean + 0.5)
        if result > 0:
            return result


def savina_uct(params: Params) -> Oracle:
    """The tree grown breadth-first: the root's children (ids 1..b) share a size drawn from stream
    (seed, 0); then level by level, in id order, while size + b <= nodes, node i's stream (seed, i)
    gives a coin (below(2) == 1: children), its children's size, a percentage (below(100) at most
    urgent_percent: child below(b) is urgent); granted children take the next b ids. Each non-root
    node does a try loop of 100 * work_scale LCG steps and a traversal of comp * work_scale; the
    shape sums FNV(id, parent, depth, comp, urgent) over the nodes. Messages: 1 + 4 per non-root
    node + 2 per node granted children."""
    nodes_max, b = _int(params, "nodes"), _int(params, "binomial")
    mean, deviation = _int(params, "avg_comp"), _int(params, "stdev_comp")
    urgent_percent, scale, seed = _int(params, "urgent_percent"), _int(params, "work_scale"), _int(params, "seed")

    def lcg(steps: int) -> int:
        x = steps
        for _ in range(steps):
            x = (x * 6364136223846793005 + 1442695040888963407) % _WORD
        return x

    comp0 = _uct_normal(SplitMix64(seed, 0), mean, deviation)
    # id -> (parent, depth, comp, urgent); children counted in `parents`
    tree = {i: (0, 1, comp0, False) for i in range(1, b + 1)}
    parents: set[int] = set()
    levels, level, size, work = [1, b], list(range(1, b + 1)), 1 + b, 0
    while level:
        following = []
        for node in level:
            work += lcg(100 * scale)
            if size + b > nodes_max:
                continue
            random = SplitMix64(seed, node)
            if random.below(2) == 0:
                continue
            comp = _uct_normal(random, mean, deviation)
            urgent_child = random.below(b) if random.below(100) <= urgent_percent else -1
            for i in range(b):
                tree[size + i] = (node, tree[node][1] + 1, comp, i == urgent_child)
                following.append(size + i)
            parents.add(node)
            size += b
        if following:
            levels.append(len(following))
        level = following
    shape = 0
    for node, (parent, depth, comp, urgent) in tree.items():
        work += lcg(comp * scale)
        h = _FNV_BASIS
        for word in (node, parent, depth, comp, int(urgent)):
            h = _fnv(h, word)
        shape += h
    internal = len(parents)
    answer = (f"nodes={len(tree) + 1} leaves={len(tree) - internal} internal={internal} "
              f"urgent={sum(u for _, _, _, u in tree.values())} grants={internal} "
              f"height={max(d for _, d, _, _ in tree.values())} level_nodes={','.join(map(str, levels))} "
              f"comp_sum={sum(c for _, _, c, _ in tree.values())} work_sum={work % _WORD} "
              f"shape={shape % _WORD:016x}")
    return Oracle(answer, 1 + 4 * len(tree) + 2 * internal)
def savina_facloc(params: Params) -> Oracle:
    """Points (x, y) = (unit() * grid, unit() * grid) from stream (seed, 0), each taken down the
    quadtree to its childless quadrant; a quadrant's cost adds each customer's distance to the
    nearest of its ancestors' midpoints and its own; past alpha * sqrt(2) * grid (above
    cutoff_depth, if set) it splits into Savina's four closed boxes around its midpoint, each
    child taking the parent's customers its box holds, in order. The total cost sums the
    childless quadrants' costs child by child up the tree. Messages: 2 per point, 1 per forward,
    then 2 per quadrant less the root's confirmation."""
    import math

    points, seed, cutoff = _int(params, "points"), _int(params, "seed"), _int(params, "cutoff_depth")
    grid, alpha = float(params["grid_size"]), float(params["alpha"])
    threshold = alpha * (math.sqrt(2.0) * grid)
    forwards = 0

    class Quadrant:
        def __init__(self, box, depth, known, customers):
            self.box, self.depth, self.children = box, depth, None
            self.mid = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            self.known, self.customers, self.cost = known + [self.mid], [], 0.0
            for p in customers:
                if self.holds(p):
                    self.add(p)

        def holds(self, p):
            x1, y1, x2, y2 = self.box
            return x1 <= p[0] and y1 <= p[1] and p[0] <= x2 and p[1] <= y2

        def add(self, p):
            self.customers.append(p)
            self.cost += min(math.sqrt((p[0] - f[0]) * (p[0] - f[0]) + (p[1] - f[1]) * (p[1] - f[1]))
                             for f in self.known)

        def take(self, p):
            nonlocal forwards
            if self.children is not None:
                forwards += 1
                next(c for c in self.children if c.holds(p)).take(p)
                return
            self.add(p)
            if self.cost > threshold and (cutoff == 0 or self.depth < cutoff):
                (x1, y1, x2, y2), (mx, my) = self.box, self.mid
                boxes = [(x1, my, mx, y2), (mx, my, x2, y2), (x1, y1, mx, my), (mx, y1, x2, my)]
                self.children = [Quadrant(b, self.depth + 1, self.known, self.customers) for b in boxes]
                self.customers = []

        def summary(self):
            """(facilities, customers, quadrants, splits, max depth, cost)."""
            if self.children is None:
                return 0, len(self.customers), 1, 0, self.depth, self.cost
            parts = [c.summary() for c in self.children]
            cost = 0.0
            for part in parts:
                cost += part[5]
            return (1 + sum(p[0] for p in parts), sum(p[1] for p in parts), 1 + sum(p[2] for p in parts),
                    1 + sum(p[3] for p in parts), max(p[4] for p in parts), cost)

    random = SplitMix64(seed, 0)
    root = Quadrant((0.0, 0.0, grid, grid), 0, [], [])
    for _ in range(points):
        x = random.unit() * grid
        root.take((x, random.unit() * grid))
    facilities, customers, quadrants, splits, depth, cost = root.summary()
    answer = (f"facilities={facilities if splits else 1} splits={splits} quadrants={quadrants} "
              f"customers={customers} max_depth={depth} total_cost={cost:.17g}")
    return Oracle(answer, 2 * points + forwards + 2 * quadrants - 1)
def _d_bits(x: float) -> int:
    import struct

    return struct.unpack("<Q", struct.pack("<d", x))[0]


def savina_recmatmul(params: Params) -> Oracle:
    """A[i][j] = i, B[i][j] = j: C[i][j] = sum over k of i*j = n*i*j, exact as a double (integers
    below 2^53), in any order of additions. The work items: the whole product, and each item of
    more than `threshold` elements (dim*dim) split into 8 of half the dim. Each item is one Work to
    a worker and one Done, each but the first one Work to the master: 3 messages an item."""
    n, threshold = _int(params, "data_length"), _int(params, "threshold")

    def tree(dim: int) -> tuple[int, int]:  # (items, leaves) under an item of dim x dim
        if dim * dim <= threshold:
            return 1, 1
        items, leaves = tree(dim // 2)
        return 1 + 8 * items, 8 * leaves

    items, leaves = tree(n)
    hash_, total = _FNV_BASIS, 0.0
    for i in range(n):
        for j in range(n):
            value = float(n * i * j)
            hash_ = _fnv(hash_, _d_bits(value))
            total += value
    answer = (f"work_items={items} leaves={leaves} c_hash={hash_:016x} c_sum={total:.17g} "
              "off_closed_form=0")
    return Oracle(answer, 3 * items)


def savina_apsp(params: Params) -> Oracle:
    """Savina's graph: PseudoRandom(nodes), edge {i, j} (i < j, row order) weighs next % W + 1.
    Distances by Dijkstra from every node (independent of Floyd-Warshall). Messages: per block a
    Start, its values to 2 (blocks per side - 1) neighbours in each of `nodes` iterations, a
    Final."""
    import heapq

    n, b, w = _int(params, "nodes"), _int(params, "block_size"), _int(params, "max_weight")
    random = PseudoRandom(n)
    weight = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            weight[i][j] = weight[j][i] = random.next(w) + 1
    hash_, total, longest = _FNV_BASIS, 0, 0
    for source in range(n):
        dist = [None] * n
        heap = [(0, source)]
        while heap:
            d, u = heapq.heappop(heap)
            if dist[u] is not None:
                continue
            dist[u] = d
            for v in range(n):
                if dist[v] is None and v != u:
                    heapq.heappush(heap, (d + weight[u][v], v))
        for d in dist:
            hash_ = _fnv(hash_, d)
            total += d
            longest = max(longest, d)
    side = n // b
    messages = side * side * (2 + n * 2 * (side - 1))
    return Oracle(f"nodes={n} dist_hash={hash_:016x} dist_sum={total} dist_max={longest}", messages)


def savina_sor(params: Params) -> Oracle:
    """Savina's grid: PseudoRandom(10101010), 1e-6 / (next + 1) row by row. Rounds: colour 0
    ((row + col) odd) updates from colour 1's values, then colour 1 from colour 0's; colour 0
    `iterations` times, colour 1 one fewer. An update: omega/4 * (0 + the neighbours' values in
    Savina's order) + (1 - omega) * value. Values sent: colour 1's start value and updates, colour
    0's updates but its last, to each neighbour. The total: the left size//2 columns summed in row
    order, plus the rest."""
    n, iterations, omega = _int(params, "size"), _int(params, "iterations"), float(params["omega"])
    random = PseudoRandom(10101010)
    grid = {(x, y): random.next_double() * 1e-6 for x in range(n) for y in range(n)}

    def around(x: int, y: int) -> list[tuple[int, int]]:
        up_or_down = (x + 1, y) if x == 0 else (x - 1, y)
        left_or_right = (x, y + 1) if y == 0 else (x, y - 1)
        on_row_edge, on_col_edge = x in (0, n - 1), y in (0, n - 1)
        if on_row_edge and on_col_edge:
            return [up_or_down, left_or_right]
        if on_row_edge:
            return [up_or_down, (x, y + 1), (x, y - 1)]
        if on_col_edge:
            return [left_or_right, (x + 1, y), (x - 1, y)]
        return [(x, y + 1), (x + 1, y), (x, y - 1), (x - 1, y)]

    def odd(cell: tuple[int, int]) -> bool:
        return sum(cell) % 2 == 1

    def update(colour_odd: bool) -> None:
        # From a snapshot: an element of one colour reads only the other colour's values.
        old = dict(grid)
        for cell, value in old.items():
            if odd(cell) == colour_odd:
                total = 0.0
                for other in around(*cell):
                    total += old[other]
                grid[cell] = 0.25 * omega * total + (1.0 - omega) * value

    for round_ in range(iterations):
        update(True)
        if round_ < iterations - 1:
            update(False)
    hash_ = _FNV_BASIS
    for x in range(n):
        for y in range(n):
            hash_ = _fnv(hash_, _d_bits(grid[x, y]))
    left = sum((grid[x, y] for x in range(n) for y in range(n // 2)), 0.0)
    right = sum((grid[x, y] for x in range(n) for y in range(n // 2, n)), 0.0)
    values = sum(len(around(*cell)) * (iterations - 1 if odd(cell) else iterations) for cell in grid)
    answer = (f"cells={n * n} values_received={values} grid_hash={hash_:016x} "
              f"total={left + right:.17g}")
    return Oracle(answer, 4 + 2 * n * n + values)

def savina_quicksort(params: Params) -> Oracle:
    """Savina's PseudoRandom started at `seed` draws the values (each modulo max_value); Python's
    sorted() is the result, hashed with FNV-1a in order. The agents: a partition of `threshold`
    values or more splits around its middle value into the values below and above it (two child
    agents), a smaller one is a leaf. A Sort per agent, a sorted part per agent but the root."""
    count, threshold = _int(params, "values"), _int(params, "threshold")
    random, max_value = PseudoRandom(_int(params, "seed")), _int(params, "max_value")
    data = [random.next() % max_value for _ in range(count)]

    def agents(part: list[int]) -> int:
        if len(part) < threshold:
            return 1
        pivot = part[len(part) // 2]
        return 1 + agents([v for v in part if v < pivot]) + agents([v for v in part if v > pivot])

    hash_ = _FNV_BASIS
    for value in sorted(data):
        hash_ = _fnv(hash_, value)
    tree = agents(data)
    answer = f"values={count} sorted=1 permutation=1 agents={tree} sorted_hash={hash_:016x}"
    return Oracle(answer, 2 * tree - 1)


def _e_queens_boards(size: int, depth: int) -> list[tuple[int, ...]]:
    """The placements of queens in the first `depth` columns of a size x size board, one per
    column, no two on a row or a diagonal: permutations filtered by their diagonals."""
    import itertools

    return [rows for rows in itertools.permutations(range(size), depth)
            if len({r + c for c, r in enumerate(rows)}) == depth and len({r - c for c, r in enumerate(rows)}) == depth]


def savina_nqueenk(params: Params, solutions: int | None = None, messages: int | None = None) -> Oracle:
    """Below the limit: every solution (the full boards), fingerprinted by the sum of mix64 of each
    board packed 4 bits a row; messages: the Start, each board handed out (depths 0 to
    min(threshold, size)), each sent back but the first, each done, each solution. At or above
    the limit how many solutions (and messages) come depends on the schedule: the caller passes
    the run's `solutions` metric and messages_processed."""
    size, threshold, limit = _int(params, "size"), _int(params, "threshold"), _int(params, "solutions_limit")
    full = _e_queens_boards(size, size)
    boards = sum(len(_e_queens_boards(size, d)) for d in range(min(threshold, size) + 1))
    if len(full) >= limit:
        # The schedule decides how much of the search runs before the limit stops it: the run's
        # figures are taken only within what the parameters allow. Solutions: at least the limit,
        # at most all of them (exactly all where the limit is all: 92 at size 8). Messages: at
        # least the Start and one per solution, at most the whole search's.
        assert solutions is not None and messages is not None, "savina_nqueenk at its limit: pass the run's figures"
        assert limit <= solutions <= len(full), f"{solutions} solutions at limit {limit} of {len(full)}"
        assert solutions + 1 <= messages <= 3 * boards + len(full), \
            f"{messages} messages, outside {solutions + 1}..{3 * boards + len(full)}"
        return Oracle("limit_reached=1 at_most_all=1 invalid=0", messages, {"solutions": solutions})
    hash_ = sum(_d_mix64(sum(row << (4 * i) for i, row in enumerate(rows))) for rows in full) % 2**64
    answer = f"solutions={len(full)} solutions_hash={hash_:016x} invalid=0"
    return Oracle(answer, 3 * boards + len(full), {"solutions": len(full)})


def savina_fib(params: Params) -> Oracle:
    """fib(n) by the plain recursion with Savina's base case (1 for n <= 2); the agents by the
    tree's own recursion (a leaf for n <= 2, else one plus both subtrees); a request per agent and
    an answer per agent but the root."""
    n = _int(params, "n")

    @cache
    def fib(k: int) -> int:
        return 1 if k <= 2 else fib(k - 1) + fib(k - 2)

    @cache
    def agents(k: int) -> int:
        return 1 if k <= 2 else 1 + agents(k - 1) + agents(k - 2)

    return Oracle(f"fib={fib(n)} agents={agents(n)}", 2 * agents(n) - 1)

def savina_astar(params: Params, work_items: int | None = None) -> Oracle:
    """Savina's grid rebuilt from SplitMix64(seed, 0): node (i, j, k) = size*size*i + size*j + k,
    in that order each of the six candidate steps (0,0,1) (0,1,0) (0,1,1) (1,0,0) (1,0,1) (1,1,0),
    clamped, is kept when the top bit of the next value is set (the last one kept without a draw
    when none was kept before it), unless it is the node itself or a repeat. A plain breadth-first
    search from (0, 0, 0) gives the target's (a, a, a), a = int(0.8 * size), shortest distance.
    Messages: 3 per work item; the items depend on the schedule: the caller passes the run's
    `work_items`, unless one search covers the whole grid (threshold >= size^3: one item)."""
    size, seed = _int(params, "grid_size"), _int(params, "seed")
    rng = SplitMix64(seed, 0)
    adjacency: list[list[int]] = []
    edge_hash = 0xCBF29CE484222325
    for here in range(size**3):
        i, j, k = here // (size * size), here // size % size, here % size
        kept: list[int] = []
        for step, (di, dj, dk) in enumerate([(0, 0, 1), (0, 1, 0), (0, 1, 1), (1, 0, 0), (1, 0, 1), (1, 1, 0)]):
            if not (step == 5 and not kept) and rng.next() >> 63 == 0:
                continue
            there = (min(i + di, size - 1) * size + min(j + dj, size - 1)) * size + min(k + dk, size - 1)
            if there != here and there not in kept:
                kept.append(there)
                edge_hash = ((edge_hash ^ (here << 32 | there)) * 0x100000001B3) & _D_M64
        adjacency.append(kept)
    axis = int(0.8 * size)
    target = (axis * size + axis) * size + axis
    distance = {0: 0}
    order = [0]  # breadth-first: each node reached is appended once, in order of distance
    for node in order:
        for there in adjacency[node]:
            if there not in distance:
                distance[there] = distance[node] + 1
                order.append(there)
    reached = target in distance
    answer = (f"edges={sum(map(len, adjacency))} edge_hash={edge_hash:016x} reachable={int(reached)} "
              f"path_length={distance.get(target, 0)} path_valid={int(reached)}")
    if _int(params, "threshold") >= size**3:
        work_items = 1
    assert work_items is not None, "savina_astar: pass the run's work_items"
    # An item but the origin's is a node whose distance a search lowered, strictly; every step of
    # the grid raises i + j + k, so a path to (i, j, k) is at most i + j + k long and a node's
    # distance is lowered at most i + j + k - (its shortest distance) + 1 times, whatever the
    # schedule: the run's count is taken only within that.
    most = 1 + sum((node // (size * size)) + (node // size % size) + (node % size) - d + 1
                   for node, d in distance.items() if node != 0)
    assert 1 <= work_items <= most, f"{work_items} work items, outside 1..{most}"
    return Oracle(answer, 3 * work_items, {"work_items": work_items})


# -- the chat application of "Run, Actor, Run" (the chat kernels) ---------------------------------

@dataclass(frozen=True)
class ChatActions:
    """One iteration of the chat application replayed in order: each turn's actions (computes,
    posts, leaves, invites, nothings) and accepted invitations, the bounds of its deliveries, and
    over the iteration the befriend messages, the chats left at logout and the clients' decision
    folds added up."""

    turns: tuple[dict[str, int], ...]
    invitations: tuple[int, ...]
    deliveries: tuple[tuple[int, int], ...]  # (fewest, most) a turn
    befriendings: int
    logout_leaves: int
    decisions: int

    def total(self, action: str) -> int:
        return sum(turn[action] for turn in self.turns)


CHAT_ACTIONS = ("computes", "posts", "departures", "invites", "nothings")


def _fnv_word(h: int, word: int) -> int:
    return ((h ^ word) * 0x100000001B3) & _D_M64


def chat_actions(clients: int, directories: int, turns: int, compute: int, post: int, leave: int, invite: int,
                 befriend: int, seed: int) -> ChatActions:
    """The program's draws, all from its 16-bit LCG (PseudoRandom): a generator from `seed` gives
    the directories' starts; directory d logs in clients d, d + directories, ... each starting at
    the directory's next value, then befriends them: for each client f, passes over every client c
    drawing next(100) (even where c is f) until f has a friend, a draw below `befriend` befriending
    c and f (c told first; each keeps a friend once). A turn: every client, from what it had at
    the turn's start, draws a chat's position (next(number of chats), a bare next() with none),
    then next(100) against the cumulative percentages; a post or a leave with no chat does
    nothing; an invite shuffles its friends' positions (i from n down to 1: swap i-1 with next(i))
    and invites the first next(n) of them (at least one) into a new chat. Then the leaves, and the
    new chats with their members. A client's chats are ordered by (turn made, maker). A post
    reaches the chat's members, less at most those who leave it in the same turn."""
    top = PseudoRandom(seed)
    dir_random = [PseudoRandom(top.next()) for _ in range(directories)]
    rand: list[PseudoRandom] = []
    members_of: list[list[int]] = [[] for _ in range(directories)]
    for c in range(clients):
        rand.append(PseudoRandom(dir_random[c % directories].next()))
        members_of[c % directories].append(c)
    friends: list[list[int]] = [[] for _ in range(clients)]
    befriendings = 0
    for d, people in enumerate(members_of):
        if befriend == 0:
            continue
        # The draws and the passes' positions repeat after 65536 / gcd(n, 65536) passes: with
        # befriend = 1 (a multiple of 4 drawn, every fourth draw) and some even n, a client
        # never has a friend, and the program loops for ever.
        period = 65536 // min(len(people) & -len(people), 65536)
        for f in people:
            found, passes = False, 0
            while not found:
                if passes == period:
                    raise ValueError(f"chat: client {f} can befriend nobody in its directory")
                passes += 1
                for c in people:
                    if dir_random[d].next(100) < befriend and c != f:
                        for who, other in ((c, f), (f, c)):
                            if other not in friends[who]:
                                friends[who].append(other)
                        befriendings += 2
                        found = True
    cut = [compute, compute + post, compute + post + leave, compute + post + leave + invite]
    chats: list[list[tuple[int, int]]] = [[] for _ in range(clients)]  # (turn, maker), sorted
    roster: dict[tuple[int, int], set[int]] = {}
    folds = [0xCBF29CE484222325] * clients
    turn_counts, turn_invitations, turn_deliveries = [], [], []
    for t in range(turns):
        counts = dict.fromkeys(CHAT_ACTIONS, 0)
        posts_to: list[tuple[int, int]] = []
        leaves: list[tuple[int, tuple[int, int]]] = []
        made: list[tuple[int, list[int]]] = []
        for c in range(clients):
            mine = chats[c]
            position = rand[c].next() if not mine else rand[c].next(len(mine))
            pick = rand[c].next(100)
            action = next((name for name, bound in zip(CHAT_ACTIONS, cut) if pick < bound), "nothings")
            if action in ("posts", "departures") and not mine:
                action = "nothings"
            counts[action] += 1
            folds[c] = _fnv_word(folds[c], CHAT_ACTIONS.index(action))
            if action == "posts":
                posts_to.append(mine[position])
                folds[c] = _fnv_word(folds[c], mine[position][0] * clients + mine[position][1])
            elif action == "departures":
                leaves.append((c, mine[position]))
                folds[c] = _fnv_word(folds[c], mine[position][0] * clients + mine[position][1])
            elif action == "invites":
                order = list(range(len(friends[c])))
                for i in range(len(order), 0, -1):
                    j = rand[c].next(i)
                    order[i - 1], order[j] = order[j], order[i - 1]
                count = rand[c].next(len(order)) or 1
                guests = [friends[c][k] for k in order[:count]]
                folds[c] = _fnv_word(folds[c], count)
                for g in guests:
                    folds[c] = _fnv_word(folds[c], g)
                made.append((c, guests))
        fewest = most = 0
        for chat in posts_to:
            here = len(roster[chat])
            most += here
            fewest += here - sum(1 for _, left in leaves if left == chat)
        for c, chat in leaves:
            chats[c].remove(chat)
            roster[chat].discard(c)
            if not roster[chat]:
                del roster[chat]
        for maker, guests in made:
            roster[(t, maker)] = {maker, *guests}
            for who in (maker, *guests):
                chats[who].append((t, maker))
                chats[who].sort()
        turn_counts.append(counts)
        turn_invitations.append(sum(len(g) for _, g in made))
        turn_deliveries.append((fewest, most))
    return ChatActions(tuple(turn_counts), tuple(turn_invitations), tuple(turn_deliveries), befriendings,
                       sum(len(mine) for mine in chats), sum(folds) & _D_M64)


def chat(params: Params, deliveries: int | None = None) -> Oracle:
    """The counts of chat_actions, `iterations` times (each iteration replays the same draws).
    Messages per iteration, by who handles them: the driver's Ready and Finished per directory
    and TurnDone and Closed per turn; a directory's Login and ClientLeft per client, its Befriend,
    Disconnect and a Poke per turn; a client's Befriend messages, an Act per turn, each Forward
    (delivery), Accepted (join), Left (a leave, or a chat left at logout) and its Logout; a chat's
    Post, Join and Leave; an accumulator's one resolution per client, each delivery's and join's
    acknowledgement, and its Close. Plus the driver's Start. The deliveries depend on the
    schedule where a turn posts to a chat someone leaves in it: then the caller passes the run's
    `deliveries` and the oracle holds it to the bounds."""
    n = {name: _int(params, name) for name in ("clients", "directories", "turns", "iterations")}
    acts = chat_actions(n["clients"], n["directories"], n["turns"], *(
        _int(params, name) for name in ("compute", "post", "leave", "invite", "befriend", "seed")))
    runs = n["iterations"]
    fewest = sum(low for low, _ in acts.deliveries)
    most = sum(high for _, high in acts.deliveries)
    if fewest == most:
        deliveries = runs * fewest
    assert deliveries is not None, "chat: the deliveries depend on the schedule here: pass the run's"
    assert runs * fewest <= deliveries <= runs * most, (deliveries, runs * fewest, runs * most)
    clients, dirs, turns = n["clients"], n["directories"], n["turns"]
    joins, leaves, posts = sum(acts.invitations), acts.total("departures"), acts.total("posts")
    chat_leaves = leaves + acts.logout_leaves
    driver = 2 * dirs + 2 * turns
    directory = 2 * clients + 2 * dirs + turns * dirs
    client = acts.befriendings + turns * clients + joins + chat_leaves + clients
    chats = posts + joins + chat_leaves
    accumulator = turns * clients + joins + turns
    messages = 1 + runs * (driver + directory + client + chats + accumulator) + 2 * deliveries
    counts = {name: runs * acts.total(name) for name in CHAT_ACTIONS}
    answer = (f"iterations={runs} turns={turns} clients={clients} "
              + " ".join(f"{name}={value}" for name, value in counts.items())
              + f" invitations={runs * joins} logout_leaves={runs * acts.logout_leaves} "
              f"decisions={runs * acts.decisions & _D_M64:016x} miscounted_turns=0 deliveries_off_turns=0 "
              f"unacknowledged=0 late=0 wrong_computes=0 stray_messages=0")
    return Oracle(answer, messages, {**counts, "deliveries": deliveries},
                  frozenset({"turn_qos_ns"}) if runs == 1 else frozenset())


ORACLES: dict[str, Callable[[Params], Oracle]] = {
    "skynet": skynet,
    "ping_pong": ping_pong,
    "service": service,
    "one_to_many": one_to_many,
    "self_send": self_send,
    "thread_ring": thread_ring,
    "parallel_thread_ring": parallel_thread_ring,
    "counting_actor": counting_actor,
    "producer_consumer": producer_consumer,
    "fan": fan,
    "ring_laps": ring_laps,
    "mailbox_n_to_1": mailbox_n_to_1,
    "mixed": mixed,
    "actor_creation": actor_creation,
    "floor_cache_line": floor_cache_line,
    "floor_futex_wake": floor_futex_wake,
    "floor_actor_loop": floor_actor_loop,
    "savina_pingpong": savina_pingpong,
    "savina_count": savina_count,
    "savina_threadring": savina_threadring,
    "savina_fjthrput": savina_fjthrput,
    "savina_fjcreate": savina_fjcreate,
    "savina_big": savina_big,
    "savina_chameneos": savina_chameneos,
    "savina_bndbuffer": savina_bndbuffer,
    "savina_philosopher": savina_philosopher,
    "savina_concdict": savina_concdict,
    "savina_concsll": savina_concsll,
    "savina_banking": savina_banking,
    "savina_logmap": savina_logmap,
    "savina_cigsmok": savina_cigsmok,
    "savina_barber": savina_barber,
    "savina_radixsort": savina_radixsort,
    "savina_sieve": savina_sieve,
    "savina_bitonicsort": savina_bitonicsort,
    "savina_filterbank": savina_filterbank,
    "savina_trapezoid": savina_trapezoid,
    "savina_piprecision": savina_piprecision,
    "savina_uct": savina_uct,
    "savina_facloc": savina_facloc,
    "savina_recmatmul": savina_recmatmul,
    "savina_apsp": savina_apsp,
    "savina_sor": savina_sor,
    "savina_quicksort": savina_quicksort,
    "savina_nqueenk": savina_nqueenk,
    "savina_fib": savina_fib,
    "savina_astar": savina_astar,
    "chat": chat,
}


def oracle(kernel: str, params: Params) -> Oracle:
    """The oracle of `kernel` (a caf_ kernel answers as ours of the same name) at `params`, which
    must be resolved: every parameter the kernel reads present, defaults filled in."""
    return ORACLES[kernel.removeprefix("caf_")](params)


# The kernels whose message count the schedule decides, and the metric of a run that says how it
# decided: philosopher's denials, barber's customers turned away.
SCHEDULED = {"savina_philosopher": "denials", "savina_barber": "turned_away"}


def at_its_schedule(kernel: str, params: Params, metrics: dict[str, float]) -> Oracle:
    """The oracle of a kernel of SCHEDULED at `params` (resolved) and at the schedule a run's
    `metrics` report: its answer, and its messages and metrics given that schedule."""
    return ORACLES[kernel](params, int(metrics[SCHEDULED[kernel]]))


def check_at_its_schedule(kernel: str, params: Params, sample) -> None:
    """Asserts that a peer's verified `sample` of a kernel of SCHEDULED, run at `params`
    (resolved), holds its answer, messages and metrics to the oracle at its own schedule; and, for
    barber, that the barber woke at least once and at most once a haircut."""
    expected = at_its_schedule(kernel, params, sample.metrics)
    assert sample.verified and sample.answer == expected.answer
    assert sample.messages_processed == expected.messages
    assert expected.metrics.items() <= sample.metrics.items()
    if kernel == "savina_barber":
        assert 1 <= sample.metrics["barber_wakes"] <= _int(params, "haircuts")

