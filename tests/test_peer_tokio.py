"""The tokio peer (peers/tokio/): built at first use by cargo, offline, from Debian's packaged
crates; its skynet, ping_pong and thread_ring verified by labctl against answers computed here,
Savina's seven micro benchmarks and six concurrency benchmarks against our kernels' own runs,
philosopher and barber, whose message counts the schedule decides, against the oracles at the
run's own denials and turned-away customers (its chat against the chat's oracle in
test_chat.py), on
tokio's current-thread scheduler (threads = 1) and its multi-threaded one (threads = 2); a wrong answer caught by its own check and,
when it lies after that check, by labctl's; bad input refused in one line. Skipped where cargo or
librust-tokio-dev is missing."""

from __future__ import annotations

import functools
import json
import math
import subprocess
from pathlib import Path

import oracles
import pytest
from click.testing import CliRunner

from labctl import cli
from labctl.catalogue import kernels, runtimes
from labctl.run import runner
from labctl.vocabulary.point import Point

NAME = "tokio"
FAULT_ENV = "LABCTL_TOKIO_FAULT"  # read by the peer: compute | reply (tests only)


def _missing() -> str:
    runtime = runtimes.runtimes().get(NAME)
    return "no peers/tokio" if runtime is None else runtime.missing


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> tuple[str, str]:
    """The peer built once for the module into a cache of its own (cargo: tens of seconds)."""
    if _missing():
        pytest.skip(f"the tokio peer cannot run here: {_missing()}")
    cache = tmp_path_factory.mktemp("tokio-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(runtimes.CACHE_ENV, str(cache))
        built = runtimes.build(runtimes.runtimes()[NAME])
    return str(cache), str(built / "labctl-tokio-peer")


def tree_agents(leaves: int, branching: int) -> int:
    """The tree's size, split as our kernel's docs say: min(branching, leaves) children, the first
    leaves % children one leaf larger."""
    if leaves == 1:
        return 1
    children = min(branching, leaves)
    return 1 + sum(tree_agents(leaves // children + (i < leaves % children), branching) for i in range(children))


def oracle(kernel: str, params: dict) -> tuple[str, int]:
    if kernel == "skynet":
        leaves, branching = params["leaves"], params.get("branching", 10)
        agents = tree_agents(leaves, branching)
        return f"sum={leaves * (leaves - 1) // 2} agents={agents}", agents - 1
    if kernel == "thread_ring":
        # One token, every stop counted: the injection and each hop are receipts, then one end report.
        return "tokens_ended=1 wrong_end=0 wrong_hops=0 repeated=0 uneven_agents=0", 1 + params["hops"] + 1
    half = params["messages"] // 2
    return f"pings={half} pongs={half} out_of_order=0 corrupt=0", 2 * half


def run_point(kernel: str, params: dict) -> list:
    resolved = kernels.resolve(kernel, {"runtime": NAME, **params})
    return list(runner.run_point(Point(kernel, {k: v for k, v in resolved.items() if v is not None},
                                       timeout_s=60)))


@pytest.mark.parametrize("kernel, params", [
    ("skynet", {"leaves": 1000, "branching": 10}),
    ("skynet", {"leaves": 37, "branching": 3}),
    ("skynet", {"leaves": 1, "branching": 2}),
    ("ping_pong", {"messages": 2000, "latency_samples": 50}),
    ("thread_ring", {"actors": 7, "hops": 100}),  # 14 laps and 3 agents once more
    ("thread_ring", {"actors": 1, "hops": 5}),  # a task sending to itself
    ("thread_ring", {"actors": 503, "hops": 1000}),
])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_tokio_peer_gives_the_answer_arithmetic_predicts(program, monkeypatch, kernel, params, threads):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    [sample] = run_point(kernel, {**params, "threads": threads})
    answer, messages = oracle(kernel, params)
    assert sample.verified and sample.answer == sample.expected == answer
    assert sample.messages_processed == messages
    assert sample.elapsed_ns > 0 and sample.params["threads"] == threads
    assert set(sample.metrics) <= set(kernels.get(kernel).metrics)  # only figures our kernel declares
    if kernel == "skynet":
        assert sample.metrics["agents"] == messages + 1
        assert sample.metrics["ns_per_agent"] == pytest.approx(sample.elapsed_ns / (messages + 1))
        assert sample.counts["agents_created"] == messages + 1 and sample.counts["rss_growth_kb"] >= 0
    elif kernel == "thread_ring":
        assert sample.metrics["ns_per_hop"] == pytest.approx(sample.elapsed_ns / params["hops"])
    else:
        assert sample.metrics["round_trip_samples"] == 50
        assert 0 < sample.metrics["round_trip_p50_ns"] <= sample.metrics["round_trip_p99_ns"] \
            <= sample.metrics["round_trip_max_ns"]


def test_the_tokio_peer_answers_as_our_kernels_do(program, monkeypatch):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    for kernel, params in [("skynet", {"leaves": 500, "branching": 7}), ("ping_pong", {"messages": 400}),
                           ("thread_ring", {"actors": 5, "hops": 23})]:
        [theirs] = run_point(kernel, {**params, "threads": 2})
        ours = list(runner.run_point(Point(kernel, {k: v for k, v in kernels.resolve(kernel, params).items()
                                                     if v is not None})))[0]
        assert theirs.answer == ours.answer and theirs.messages_processed == ours.messages_processed


# Savina's micro benchmarks at small sizes, and each one's edges: one ping, nothing to count, one
# worker, a ring of one (its own next member) and a ping that ends where it starts, no meeting, an
# actor pinging itself, no ping.
SAVINA = [
    ("savina_pingpong", {"pings": 1000}),
    ("savina_pingpong", {"pings": 1}),
    ("savina_count", {"increments": 5000}),
    ("savina_count", {"increments": 0}),
    ("savina_fjthrput", {"messages": 50, "actors": 7}),
    ("savina_fjthrput", {"messages": 3, "actors": 1}),
    ("savina_fjcreate", {"workers": 300}),
    ("savina_threadring", {"actors": 10, "pings": 1000}),
    ("savina_threadring", {"actors": 1, "pings": 3}),
    ("savina_threadring", {"actors": 7, "pings": 0}),
    ("savina_chameneos", {"creatures": 10, "meetings": 500}),
    ("savina_chameneos", {"creatures": 3, "meetings": 0}),
    ("savina_big", {"actors": 10, "pings": 100, "seed": 3}),
    ("savina_big", {"actors": 1, "pings": 5}),  # an actor pinging itself
    ("savina_big", {"actors": 4, "pings": 0}),
]


@functools.cache
def ours(kernel: str, frozen: tuple) -> tuple[str, int]:
    """Our kernel's answer and message count at these parameters, from a run of it."""
    params = dict(frozen)
    [sample] = runner.run_point(Point(kernel, {k: v for k, v in kernels.resolve(kernel, params).items()
                                               if v is not None}))
    assert sample.verified
    return sample.answer, sample.messages_processed


# Each case once, on one thread and on two in turn: every benchmark but fjcreate on both (a
# covering set, not every case on both).
@pytest.mark.parametrize("kernel, params, threads", [(*case, 1 + i % 2) for i, case in enumerate(SAVINA)])
def test_savinas_micro_benchmarks_answer_as_ours(program, monkeypatch, kernel, params, threads):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    [sample] = run_point(kernel, {**params, "threads": threads})
    assert sample.verified and sample.answer == sample.expected
    assert (sample.answer, sample.messages_processed) == ours(kernel, tuple(sorted(params.items())))
    assert sample.elapsed_ns > 0 and sample.metrics == {}


# Savina's concurrency benchmarks but philosopher and barber (whose message counts the schedule
# decides: below), at small sizes, and the edges where the idiom bites.
SAVINA_CONCURRENCY = [
    ("savina_logmap", {"terms": 100, "series": 5}),
    # Rates and start terms other than the defaults: the reals reach the peer to the bit (the hash).
    ("savina_logmap", {"terms": 50, "series": 3, "start_rate": 3.9, "increment": 0.03}),
    # 1250 credits to each source: accounts await replies while credits and debits queue up.
    ("savina_banking", {"accounts": 10, "transactions": 10_000, "seed": 7}),
    ("savina_banking", {"accounts": 10, "transactions": 0}),  # the teller stops them at once
    ("savina_cigsmok", {"rounds": 200, "smokers": 10}),  # seed 0: Savina's own, rounds*smokers
    ("savina_bndbuffer", {"buffer_size": 50, "producers": 40, "consumers": 40, "items_per_producer": 20,
                          "produce_cost": 1, "consume_cost": 1}),
    # Room for one item past the producers': producers parked, the buffer full, one consumer.
    ("savina_bndbuffer", {"buffer_size": 3, "producers": 2, "consumers": 1, "items_per_producer": 200,
                          "produce_cost": 0, "consume_cost": 3}),
    ("savina_concdict", {"workers": 3, "messages_per_worker": 300, "write_percent": 60, "keys": 50, "seed": 4}),
    ("savina_concsll", {"workers": 3, "messages_per_worker": 200, "write_percent": 50, "size_percent": 20,
                        "seed": 5}),
]


# Each case once, on one thread and on two in turn.
@pytest.mark.parametrize("kernel, params, threads",
                         [(*case, 1 + i % 2) for i, case in enumerate(SAVINA_CONCURRENCY)])
def test_savinas_concurrency_benchmarks_answer_as_ours(program, monkeypatch, kernel, params, threads):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    [sample] = run_point(kernel, {**params, "threads": threads})
    assert sample.verified and sample.answer == sample.expected
    assert (sample.answer, sample.messages_processed) == ours(kernel, tuple(sorted(params.items())))
    assert sample.elapsed_ns > 0 and sample.metrics == {}


# Savina's philosopher and barber, whose message counts the schedule decides (denials, customers
# turned away): each case once, threads 1 and 2 in turn.
SAVINA_SCHEDULED = [
    ("savina_philosopher", {"philosophers": 1, "rounds": 50}),  # never denied: the count exact
    ("savina_philosopher", {"philosophers": 5, "rounds": 200}),
    ("savina_barber", {"haircuts": 40, "seats": 40, "production_rate": 50, "haircut_rate": 50}),  # none turned away
    ("savina_barber", {"haircuts": 60, "seats": 3, "production_rate": 10, "haircut_rate": 300}),  # a slow barber
]


@pytest.mark.parametrize("kernel, params, threads", [(*case, 1 + i % 2) for i, case in enumerate(SAVINA_SCHEDULED)])
def test_philosopher_and_barber_count_as_the_oracle_at_their_own_schedule(program, monkeypatch, kernel, params,
                                                                          threads):
    # The answer the oracle's; the messages the oracle's at the run's own denials (customers turned
    # away), which it reports as ours' metrics, as ours counts them.
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    [sample] = run_point(kernel, {**params, "threads": threads})
    oracles.check_at_its_schedule(kernel, kernels.resolve(kernel, params), sample)


def test_a_real_parameter_is_the_same_double_whatever_its_json_form(program):
    # The terms' hash holds every term's bits: one ulp off in a rate or a start term would change it.
    def answer(params: str) -> str:
        done = subprocess.run([program[1]], check=True, capture_output=True, text=True, timeout=30,
                              input='{"kernel": "savina_logmap", "params": {"terms": 20, "series": 4, ' + params + "}}")
        return json.loads(done.stdout)["answer"]
    assert answer('"start_rate": 3, "increment": 25e-4') == answer('"start_rate": 3.0, "increment": 0.0025') \
        != answer('"start_rate": 3.0000000000000004, "increment": 0.0025')


def test_the_fork_join_job_is_the_c_librarys_sine_to_the_last_digit(program):
    # Savina's job, sin(37.2) squared: the workers' sums printed with 17 digits, as ours.
    done = subprocess.run([program[1]], check=True, capture_output=True, text=True, timeout=30,
                          input=json.dumps({"kernel": "savina_fjcreate", "params": {"workers": 1}}))
    assert json.loads(done.stdout)["answer"] == \
        f"workers_done=1 repeated=0 bad_results=0 result_sum={math.sin(37.2) ** 2:.17g}"


def test_thread_ring_without_hops_reports_no_time_per_hop(program, monkeypatch):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    [sample] = run_point("thread_ring", {"actors": 3, "hops": 0, "threads": 2})
    assert sample.verified and sample.messages_processed == 2  # the injection and the end report
    assert sample.metrics == {}


def test_ping_pong_without_latency_samples_reports_no_percentile(program, monkeypatch):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    [sample] = run_point("ping_pong", {"messages": 200, "latency_samples": 0, "threads": 1})
    assert sample.verified
    assert set(sample.metrics) == {"round_trip_mean_ns", "round_trip_samples"}
    assert sample.metrics["round_trip_samples"] == 0


# test_chat.py's LEAVING: a chat posted to and left in one turn (its answer checked against the
# oracle there).
CHAT = {"clients": 20, "directories": 1, "turns": 6, "iterations": 2, "compute_repeats": 2, "compute": 20, "post": 40,
        "leave": 20, "invite": 20, "befriend": 30, "seed": 10}


@pytest.mark.parametrize("kernel, params, got", [
    ("skynet", {"leaves": 100, "threads": 2}, "got 'sum=4951 agents=111'"),  # leaf 0 reports 1
    ("ping_pong", {"messages": 100, "latency_samples": 0, "threads": 1}, "out_of_order=1"),
    # One hop too many: the token ends one agent on, and agent 2 is visited once more than planned.
    ("thread_ring", {"actors": 5, "hops": 11, "threads": 2},
     "got 'tokens_ended=1 wrong_end=1 wrong_hops=1 repeated=0 uneven_agents=1'"),
    # Savina's: ping makes one ping more, the producer one Increment more, the jobs' angle is off,
    # the ping starts one higher, the mall makes one meeting more, each actor one ping more.
    ("savina_pingpong", {"pings": 10, "threads": 1},
     "got 'start=1 ping=10 send_ping=11 send_pong=11 stop=1 pings_left=0'"),
    ("savina_count", {"increments": 10, "threads": 2},
     "got 'start=1 increments=11 retrieves=1 results=1 result=11'"),
    ("savina_fjthrput", {"messages": 5, "actors": 2, "threads": 2},
     "got 'jobs=10 workers_done=2 bad_results=0 result_sum=1.5101007046138635'"),
    ("savina_fjcreate", {"workers": 30, "threads": 1},
     "got 'workers_done=30 repeated=0 bad_results=0 result_sum=4.5303021138415902'"),
    ("savina_threadring", {"actors": 5, "pings": 11, "threads": 2},
     "got 'data=5 pings=13 exits=5 dead_letters=1 last_ping_at=2 uneven_actors=3'"),
    ("savina_chameneos", {"creatures": 4, "meetings": 10, "threads": 2},
     "got 'meetings=11 requests=26 exits=4 counted=22 reports=4 wrong_changes=0 colour_invariant=kept'"),
    ("savina_big", {"actors": 4, "pings": 10, "threads": 1},
     "got 'finished=4 repeated=0 pings=44 pongs=44 wrong_pongs=0 uneven_actors=4 most_pinged=11'"),
    # The concurrency benchmarks': the master asks each series one term more, each debit adds a
    # cent (money made), the arbiter plays a round more, each producer makes an item more, each
    # worker sends one request more (to the dictionary, to the list).
    ("savina_logmap", {"terms": 10, "series": 3, "threads": 1}, "got 'series_reported=3 terms_computed=33 "),
    ("savina_banking", {"accounts": 10, "transactions": 20, "threads": 2},
     "got 'completed=20 repeated=0 credits=20 debits=20 stopped=10 total=10000000000020 "),
    ("savina_cigsmok", {"rounds": 10, "smokers": 3, "threads": 1}, "got 'smokers_reported=3 smokes=11 uneven_smokers=1 "),
    ("savina_bndbuffer", {"buffer_size": 5, "producers": 2, "consumers": 2, "items_per_producer": 10, "threads": 2},
     "got 'produced=22 consumed=20 consumed_once=20 short_producers=2 over_buffer=0'"),
    ("savina_concdict", {"workers": 2, "messages_per_worker": 10, "keys": 10, "threads": 1},
     "got 'reads=18 writes=4 replies=22 size=10 "),
    ("savina_concsll", {"workers": 2, "messages_per_worker": 10, "threads": 2},
     "got 'contains=19 writes=2 sizes=1 replies=22 length=2 unsorted=0 "),
    # The chat's computes evaluate Fibonacci(34): each of 28 computes' 2 evaluations wrong.
    ("chat", {**CHAT, "threads": 2}, "computes=28 posts=58 departures=60 invites=28 nothings=66 invitations=162 "
     "logout_leaves=130 decisions=4cd3ea36c5da9060 miscounted_turns=0 deliveries_off_turns=0 unacknowledged=0 "
     "late=0 wrong_computes=56 stray_messages=0'"),
    # Each philosopher eats once more; the factory makes one customer more (an id past its list).
    ("savina_philosopher", {"philosophers": 3, "rounds": 10, "threads": 1},
     "got 'philosophers=3 meals=33 uneven_philosophers=3 fork_conflicts=0 wrong_releases=0 forks_left_held=0 "),
    ("savina_barber", {"haircuts": 10, "seats": 3, "threads": 2},
     "got 'customers=11 haircuts=11 served=11 served_wrong=0 repeated=1 accounting_errors=0 "),
])
def test_a_wrong_answer_is_caught_by_the_peers_own_check(program, monkeypatch, kernel, params, got):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    monkeypatch.setenv(FAULT_ENV, "compute")
    with pytest.raises(runner.PointFailed) as caught:
        run_point(kernel, params)
    assert caught.value.kind == "failure"
    assert "exited with status 1" in str(caught.value) and "wrong answer" in str(caught.value)
    assert got in str(caught.value)


@pytest.mark.parametrize("kernel, params, expected", [
    ("skynet", {"leaves": 100, "threads": 1}, "expected 'sum=4950 agents=111'"),
    ("ping_pong", {"messages": 100, "latency_samples": 0, "threads": 2},
     "expected 'pings=50 pongs=50 out_of_order=0 corrupt=0'"),
    ("thread_ring", {"actors": 5, "hops": 11, "threads": 1},
     "expected 'tokens_ended=1 wrong_end=0 wrong_hops=0 repeated=0 uneven_agents=0'"),
    ("savina_pingpong", {"pings": 10, "threads": 2},
     "expected 'start=1 ping=9 send_ping=10 send_pong=10 stop=1 pings_left=0'"),
    ("savina_count", {"increments": 10, "threads": 1},
     "expected 'start=1 increments=10 retrieves=1 results=1 result=10'"),
    ("savina_fjthrput", {"messages": 5, "actors": 2, "threads": 1},
     "expected 'jobs=10 workers_done=2 bad_results=0 result_sum=2.2910191538134757'"),
    ("savina_fjcreate", {"workers": 30, "threads": 2},
     "expected 'workers_done=30 repeated=0 bad_results=0 result_sum=6.8730574614404274'"),
    ("savina_threadring", {"actors": 5, "pings": 11, "threads": 1},
     "expected 'data=5 pings=12 exits=5 dead_letters=1 last_ping_at=1 uneven_actors=0'"),
    ("savina_chameneos", {"creatures": 4, "meetings": 10, "threads": 1},
     "expected 'meetings=10 requests=24 exits=4 counted=20 reports=4 wrong_changes=0 colour_invariant=kept'"),
    ("savina_big", {"actors": 4, "pings": 10, "threads": 2},
     "expected 'finished=4 repeated=0 pings=40 pongs=40 wrong_pongs=0 uneven_actors=0 most_pinged=10'"),
    ("savina_logmap", {"terms": 10, "series": 3, "threads": 2},
     "expected 'series_reported=3 terms_computed=30 terms_hash=40384c195fa9a8e1 final_sum=0.91242239182426821'"),
    ("savina_banking", {"accounts": 10, "transactions": 20, "threads": 1},
     "expected 'completed=20 repeated=0 credits=20 debits=20 stopped=10 total=10000000000000 "
     "digest=16446187826627556193'"),
    ("savina_cigsmok", {"rounds": 10, "smokers": 3, "threads": 2},
     "expected 'smokers_reported=3 smokes=10 uneven_smokers=0 smokes_hash=b6b4c018587ac515 work_units=5298 "
     "work_sum=7076082876923308324 start=1 start_smoking=10 started_smoking=10 exit=3 tally=3'"),
    ("savina_bndbuffer", {"buffer_size": 5, "producers": 2, "consumers": 2, "items_per_producer": 10, "threads": 1},
     "expected 'produced=20 consumed=20 consumed_once=20 short_producers=0 over_buffer=0'"),
    ("savina_concdict", {"workers": 2, "messages_per_worker": 10, "keys": 10, "threads": 2},
     "expected 'reads=16 writes=4 replies=20 size=10 digest=156074312202478498'"),
    ("savina_concsll", {"workers": 2, "messages_per_worker": 10, "threads": 1},
     "expected 'contains=17 writes=2 sizes=1 replies=20 length=2 unsorted=0 digest=9104069227574383112'"),
    ("chat", {**CHAT, "threads": 1},
     "expected 'iterations=2 turns=6 clients=20 computes=28 posts=58 departures=60 invites=28 nothings=66 "
     "invitations=162 logout_leaves=130 decisions=4cd3ea36c5da9060 miscounted_turns=0 deliveries_off_turns=0 "
     "unacknowledged=0 late=0 wrong_computes=0 stray_messages=0'"),
    ("savina_philosopher", {"philosophers": 3, "rounds": 10, "threads": 2},
     "expected 'philosophers=3 meals=30 uneven_philosophers=0 fork_conflicts=0 wrong_releases=0 forks_left_held=0 "
     "lost_denials=0'"),
    ("savina_barber", {"haircuts": 10, "seats": 3, "threads": 1},
     "expected 'customers=10 haircuts=10 served=10 served_wrong=0 repeated=0 accounting_errors=0 "
     "factory_work_units=4897 factory_work_sum=12895253694416699628 barber_work_units=4897 "
     "barber_work_sum=12895253694416699628'"),
])
def test_a_peer_that_lies_after_its_check_fails_labctls_verification(program, monkeypatch, kernel, params, expected):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    monkeypatch.setenv(FAULT_ENV, "reply")
    with pytest.raises(runner.PointFailed) as caught:
        run_point(kernel, params)
    assert caught.value.kind == "verification"
    assert expected in str(caught.value)


@pytest.mark.parametrize("request_, message", [
    ({"kernel": "counting_actor", "params": {}},
     "unknown kernel 'counting_actor' (this peer runs skynet, ping_pong, thread_ring, savina_pingpong, "
     "savina_count, savina_fjthrput, savina_fjcreate, savina_threadring, savina_chameneos, savina_big, "
     "savina_logmap, savina_banking, savina_cigsmok, savina_bndbuffer, savina_concdict, savina_concsll, "
     "savina_philosopher, savina_barber, chat)"),
    ({"kernel": "ping_pong", "params": {"messages": 3}}, "param messages=3 must be even (pings plus pongs)"),
    ({"kernel": "skynet", "params": {"leaves": 0}}, "param leaves=0 out of range [1, 100000000]"),
    ({"kernel": "skynet", "params": {"leaves": 1.5}}, "param leaves must be an integer"),
    ({"kernel": "thread_ring", "params": {"hops": "many"}}, "param hops must be an integer"),
    ({"kernel": "skynet", "params": {"leaves": True}}, "param leaves must be an integer"),
    # A boolean: JSON's true or false, nothing else.
    ({"kernel": "chat", "params": {"buffering": "yes"}}, "param buffering must be true or false"),
    ({"kernel": "chat", "params": {"buffering": 0}}, "param buffering must be true or false, got 0"),
    ({"kernel": "skynet", "params": {"fifo": 1}}, "unknown param 'fifo' for kernel skynet"),
    ({"kernel": "thread_ring", "params": {"threads": 0}}, "param threads=0 out of range [1, 1024]"),
    # Our kernels' ranges: a chameneos of one creature would never meet.
    ({"kernel": "savina_chameneos", "params": {"creatures": 1}}, "param creatures=1 out of range [2, 1000000]"),
    ({"kernel": "savina_pingpong", "params": {"pings": 0}}, "param pings=0 out of range [1, 1000000000]"),
    ({"kernel": "savina_big", "params": {"hops": 3}}, "unknown param 'hops' for kernel savina_big"),
    # A real parameter: any JSON number, in our kernel's range; the rest refused as ours refuses it.
    ({"kernel": "savina_logmap", "params": {"start_rate": "fast"}}, "param start_rate must be a number"),
    ({"kernel": "savina_logmap", "params": {"increment": 1.5}}, "param increment=1.5 out of range [0, 1]"),
    ({"kernel": "savina_logmap", "params": {"terms": 2.0}}, "param terms must be an integer"),
    ({"kernel": "savina_logmap", "params": {"series": 5, "increment": 0.5}},
     "param increment times (series - 1) must be at most 1 (series i starts at term i*increment), got 2"),
    ({"kernel": "savina_bndbuffer", "params": {"buffer_size": 4, "producers": 4}},
     "param buffer_size (4) must exceed producers (4): the manager keeps room for an item from each producer "
     "in flight"),
    ({"kernel": "savina_concdict", "params": {"workers": 3, "keys": 2}},
     "param keys (2) must be at least workers (3): each worker writes its own keys"),
    ({"kernel": "savina_concsll", "params": {"write_percent": 60, "size_percent": 50}},
     "param write_percent (60) plus size_percent (50) must be at most 100"),
    ({"params": {}}, "bad request: no kernel"),
    ({"kernel": "skynet", "params": {}, "extra": 1}, "bad request: unknown field 'extra'"),
])
def test_bad_input_is_refused_in_one_line_with_nothing_on_stdout(program, request_, message):
    done = subprocess.run([program[1]], check=False, input=json.dumps(request_), capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"labctl-tokio-peer: {message}"]


def test_the_build_writes_nothing_into_the_peers_folder_and_reuses_its_compiled_crates(program):
    # cargo resolves its Cargo.lock in a copy of the crate in the build folder; the compiled
    # crates stay in the cache's tokio-target for the next version of the folder.
    folder = runtimes.runtimes()[NAME].folder
    assert sorted(p.name for p in folder.iterdir()) == ["Cargo.toml", "build.sh", "peer.toml", "src"]
    cache = Path(program[0])
    assert any((cache / "tokio-target" / "release" / "deps").glob("libtokio-*.rlib"))


def test_labctl_run_runs_skynet_on_tokio(program, monkeypatch):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    result = CliRunner().invoke(cli.main, ["run", "skynet", "--runtime", NAME, "--leaves", "100", "--threads", "2",
                                           "--json"])
    assert result.exit_code == 0, result.output
    [line] = [json.loads(x) for x in result.output.splitlines() if x.startswith("{")]
    assert line["verified"] and line["answer"] == "sum=4950 agents=111"
    assert line["params"] == {"runtime": NAME, "leaves": 100, "branching": 10, "threads": 2}
