"""The Erlang peer (peers/erlang/): its kernels give the answers arithmetic predicts, labctl
verifies them, and a wrong one never becomes a timing. Skipped where erl/erlc are missing."""

from __future__ import annotations

import oracles
import pytest

from labctl.catalogue import kernels, runtimes
from labctl.run import runner
from labctl.vocabulary.point import Point

erlang_missing = runtimes.runtimes()["erlang"].missing if "erlang" in runtimes.runtimes() else "no peers/erlang"
pytestmark = pytest.mark.skipif(bool(erlang_missing), reason=f"the Erlang peer cannot run here: {erlang_missing}")

FAULT_ENV = "LABCTL_ERLANG_PEER_FAULT"


@pytest.fixture(scope="module")
def erlang_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("erlang-cache")  # built once for the module


@pytest.fixture
def run_erlang(erlang_cache, monkeypatch):
    monkeypatch.setenv(runtimes.CACHE_ENV, str(erlang_cache))

    def run(kernel: str, **params):
        resolved = kernels.resolve(kernel, {"runtime": "erlang", **params})
        [sample] = list(runner.run_point(Point(kernel, {k: v for k, v in resolved.items() if v is not None})))
        return sample

    return run


def tree_agents(leaves: int, branching: int) -> int:
    """Agents of the skynet tree, by walking it: min(branching, leaves) children, the first
    leaves % children of them one leaf more."""
    if leaves == 1:
        return 1
    children = min(branching, leaves)
    return 1 + sum(tree_agents(leaves // children + (i < leaves % children), branching) for i in range(children))


def test_the_oracle_counts_a_tree_by_hand():
    assert tree_agents(1000, 10) == 1111 and tree_agents(4, 2) == 7 and tree_agents(5, 10) == 6


@pytest.mark.parametrize("leaves, branching, threads", [(1000, 10, 1), (1000, 10, 2), (37, 3, 2), (1, 10, 1),
                                                       (2, 1000, 2)])
def test_skynet_sums_every_ordinal_over_every_process(run_erlang, leaves, branching, threads):
    sample = run_erlang("skynet", leaves=leaves, branching=branching, threads=threads)
    agents = tree_agents(leaves, branching)
    assert sample.verified
    assert sample.answer == f"sum={leaves * (leaves - 1) // 2} agents={agents}"
    assert sample.messages_processed == agents - 1
    assert sample.metrics["agents"] == agents and sample.elapsed_ns > 0
    # Its memory, as ours (tests/test_memory_per_agent.py): the processes made, the RSS grown.
    assert sample.counts["agents_created"] == agents and sample.counts["rss_growth_kb"] >= 0


@pytest.mark.parametrize("threads", [1, 2])
def test_ping_pong_counts_every_round_trip_and_times_the_probes(run_erlang, threads):
    sample = run_erlang("ping_pong", messages=2000, latency_samples=50, threads=threads)
    assert sample.verified and sample.answer == "pings=1000 pongs=1000 out_of_order=0 corrupt=0"
    assert sample.messages_processed == 2000
    assert sample.metrics["round_trip_samples"] == 50
    assert 0 < sample.metrics["round_trip_p50_ns"] <= sample.metrics["round_trip_p99_ns"] \
        <= sample.metrics["round_trip_max_ns"]


def test_ping_pong_without_probes_reports_no_percentile(run_erlang):
    sample = run_erlang("ping_pong", messages=20, latency_samples=0)
    assert sample.verified and sample.answer == "pings=10 pongs=10 out_of_order=0 corrupt=0"
    assert not {"round_trip_p50_ns", "round_trip_p99_ns", "round_trip_max_ns", "clock_read_ns"} & set(sample.metrics)


@pytest.mark.parametrize("messages, threads", [(1000, 1), (777, 2), (1, 2)])
def test_counting_actor_counts_and_sums_every_number(run_erlang, messages, threads):
    sample = run_erlang("counting_actor", messages=messages, threads=threads)
    assert sample.verified
    assert sample.answer == f"received={messages} sum={sum(range(1, messages + 1))}"
    assert sample.messages_processed == messages  # the numbers alone: no request for the count
    assert sample.metrics == {} and sample.elapsed_ns > 0


@pytest.mark.parametrize("senders, per_sender, threads", [(3, 300, 1), (20, 50, 2)])
def test_mailbox_n_to_1_receives_every_senders_messages_in_order(run_erlang, senders, per_sender, threads):
    sample = run_erlang("mailbox_n_to_1", senders=senders, messages_per_sender=per_sender, threads=threads)
    assert sample.verified
    assert sample.answer == f"received={senders * per_sender} out_of_order=0 short_senders=0"
    assert sample.messages_processed == senders * per_sender


@pytest.mark.parametrize("actors, hops, threads", [(8, 500, 1), (3, 7, 2), (8, 0, 1)])
def test_thread_ring_passes_the_token_hops_times(run_erlang, actors, hops, threads):
    sample = run_erlang("thread_ring", actors=actors, hops=hops, threads=threads)
    assert sample.verified
    assert sample.answer == "tokens_ended=1 wrong_end=0 wrong_hops=0 repeated=0 uneven_agents=0"
    assert sample.messages_processed == hops + 2  # hops + 1 receipts, one end report
    assert ("ns_per_hop" in sample.metrics) == (hops > 0)


def theron_split(hops: int, tokens: int) -> list[int]:
    """Each token's hops as Theron's ParallelThreadRing splits them: the first tokens-1 make
    ceil(hops/tokens), the last the rest."""
    each = -(-hops // tokens)
    return [each] * (tokens - 1) + [hops - each * (tokens - 1)]


def ring_walk(actors: int, tokens: int, hops: int) -> tuple[list[int], list[int]]:
    """Each agent's receipts and each token's last agent, by walking every token hop by hop from
    agent j % actors."""
    visits, ends = [0] * actors, []
    for j, made in enumerate(theron_split(hops, tokens)):
        at = j % actors
        visits[at] += 1  # the injection
        for _ in range(made):
            at = (at + 1) % actors
            visits[at] += 1
        ends.append(at)
    return visits, ends


def test_the_ring_oracle_splits_and_walks_as_by_hand():
    assert theron_split(50_000_000, 503) == [99404] * 502 + [99192]  # the study's own figures
    assert ring_walk(3, 2, 6) == ([3, 3, 2], [0, 1])  # 0 1 2 0 and 1 2 0 1
    assert ring_walk(2, 3, 0) == ([2, 1], [0, 1, 0])


@pytest.mark.parametrize("actors, tokens, hops, threads", [(5, 3, 100, 1), (3, 5, 20, 2), (7, 4, 1001, 2),
                                                          (4, 4, 0, 1), (1, 2, 9, 2)])
def test_parallel_thread_ring_ends_every_token_where_its_walk_does(run_erlang, actors, tokens, hops, threads):
    sample = run_erlang("parallel_thread_ring", actors=actors, tokens=tokens, hops=hops, threads=threads)
    visits, ends = ring_walk(actors, tokens, hops)
    assert sample.verified
    assert sample.answer == f"tokens_ended={len(ends)} wrong_end=0 wrong_hops=0 repeated=0 uneven_agents=0"
    assert sample.messages_processed == sum(visits) + len(ends)  # every receipt, one end report a token
    assert ("ns_per_hop" in sample.metrics) == (sum(visits) > tokens)


def test_the_peer_itself_refuses_hops_too_few_to_split(erlang_cache, monkeypatch):
    # labctl refuses these parameters before any program runs: the request is sent as it is.
    monkeypatch.setenv(runtimes.CACHE_ENV, str(erlang_cache))
    erlang = runtimes.runtimes()["erlang"]
    with pytest.raises(runtimes.ExternalFailure) as caught:
        runtimes.run_external(erlang, "parallel_thread_ring", {"actors": 3, "tokens": 5, "hops": 7, "threads": 1})
    assert caught.value.kind == "failure" and "exited with status 2" in str(caught.value)
    assert "param hops=7 is too small to split over 5 tokens" in str(caught.value)
    assert "use hops >= 20 or fewer tokens" in str(caught.value)


@pytest.mark.parametrize("depth, threads", [(6, 2), (0, 1)])
def test_actor_creation_counts_two_to_the_depth_leaves(run_erlang, depth, threads):
    sample = run_erlang("actor_creation", depth=depth, threads=threads)
    assert sample.verified and sample.answer == f"leaves={2 ** depth} agents={2 ** (depth + 1) - 1}"
    assert sample.messages_processed == 2 ** (depth + 2) - 3


@pytest.mark.parametrize("kernel, params, wrong", [
    ("skynet", {"leaves": 100}, "got 'sum=4951 agents=111', expected 'sum=4950 agents=111'"),
    ("ping_pong", {"messages": 20}, "got 'pings=10 pongs=10 out_of_order=1 corrupt=0'"),
    ("mailbox_n_to_1", {"senders": 2, "messages_per_sender": 5}, "got 'received=10 out_of_order=2 short_senders=0'"),
    ("thread_ring", {"actors": 3, "hops": 5}, "got 'tokens_ended=1 wrong_end=1 wrong_hops=1"),
    ("counting_actor", {"messages": 10}, "got 'received=10 sum=56', expected 'received=10 sum=55'"),
    ("parallel_thread_ring", {"actors": 3, "tokens": 2, "hops": 6},
     "got 'tokens_ended=2 wrong_end=1 wrong_hops=1 repeated=0 uneven_agents=1'"),
    ("actor_creation", {"depth": 2}, "got 'leaves=8 agents=7', expected 'leaves=4 agents=7'"),
    ("savina_count", {"increments": 10}, "got 'start=1 increments=10 retrieves=1 results=1 result=11'"),
    ("savina_fjthrput", {"messages": 5, "actors": 2}, "result_sum=3.2910191538134757', expected"),
    ("savina_logmap", {"terms": 10, "series": 2}, "got 'series_reported=2 terms_computed=21 terms_hash="),
    ("savina_banking", {"accounts": 10, "transactions": 20}, "got 'completed=21 repeated=0 credits=20 debits=20"),
    ("savina_cigsmok", {"rounds": 20, "smokers": 3}, "got 'smokers_reported=3 smokes=21 uneven_smokers=0"),
    ("savina_bndbuffer", {"buffer_size": 5, "producers": 2, "consumers": 2, "items_per_producer": 5},
     "got 'produced=11 consumed=10 consumed_once=10 short_producers=0 over_buffer=0'"),
    ("savina_concdict", {"workers": 2, "messages_per_worker": 10, "keys": 10}, "got 'reads=16 writes=5 replies=20"),
    ("savina_concsll", {"workers": 2, "messages_per_worker": 10}, "got 'contains=17 writes=2 sizes=1 replies=21"),
    ("savina_philosopher", {"philosophers": 3, "rounds": 10}, "got 'philosophers=3 meals=31 uneven_philosophers=0"),
    ("savina_barber", {"haircuts": 10, "seats": 3}, "got 'customers=10 haircuts=10 served=11 served_wrong=0"),
])
def test_a_wrong_answer_is_refused_by_the_peer_itself(run_erlang, monkeypatch, kernel, params, wrong):
    monkeypatch.setenv(FAULT_ENV, "wrong_answer")
    with pytest.raises(runner.PointFailed) as caught:
        run_erlang(kernel, **params)
    assert caught.value.kind == "failure" and wrong in str(caught.value)


@pytest.mark.parametrize("kernel, params, threads", [
    ("savina_pingpong", {"pings": 1000}, 2),
    ("savina_count", {"increments": 5000}, 1),
    ("savina_threadring", {"actors": 10, "pings": 1000}, 2),
    ("savina_threadring", {"actors": 1, "pings": 3}, 1),  # a ring of one: its own next member
    ("savina_fjthrput", {"messages": 50, "actors": 7}, 2),
    ("savina_fjcreate", {"workers": 300}, 1),
    ("savina_chameneos", {"creatures": 10, "meetings": 500}, 2),
    ("savina_big", {"actors": 10, "pings": 100, "seed": 3}, 1),
])
def test_savinas_micro_benchmarks_answer_as_ours(run_erlang, kernel, params, threads):
    sample = run_erlang(kernel, **params, threads=threads)
    ours = list(runner.run_point(Point(kernel, {k: v for k, v in kernels.resolve(kernel, params).items()
                                                 if v is not None})))[0]
    assert sample.verified and sample.answer == ours.answer
    assert sample.messages_processed == ours.messages_processed


# Savina's concurrency benchmarks but philosopher and barber (whose counts the schedule decides,
# below): each once, threads alternating, small sizes, checked against our kernel's own run.
@pytest.mark.parametrize("kernel, params, threads", [
    ("savina_logmap", {"terms": 100, "series": 5}, 2),
    ("savina_banking", {"accounts": 10, "transactions": 100}, 1),
    ("savina_cigsmok", {"rounds": 200, "smokers": 10}, 2),  # seed 0: Savina's own, rounds*smokers
    ("savina_bndbuffer", {"buffer_size": 50, "producers": 40, "consumers": 40, "items_per_producer": 20,
                          "produce_cost": 1, "consume_cost": 1}, 1),
    ("savina_concdict", {"workers": 3, "messages_per_worker": 300, "write_percent": 60, "keys": 50, "seed": 4}, 2),
    ("savina_concsll", {"workers": 3, "messages_per_worker": 200, "write_percent": 50, "size_percent": 20,
                        "seed": 5}, 1),
])
def test_savinas_concurrency_benchmarks_answer_as_ours(run_erlang, kernel, params, threads):
    sample = run_erlang(kernel, **params, threads=threads)
    ours = list(runner.run_point(Point(kernel, {k: v for k, v in kernels.resolve(kernel, params).items()
                                                 if v is not None})))[0]
    assert sample.verified and sample.answer == ours.answer
    assert sample.messages_processed == ours.messages_processed


# Philosopher's denials and barber's customers turned away are the schedule's: the oracle takes
# them from the run's metrics and holds the answer and every message to them.
@pytest.mark.parametrize("kernel, params, threads", [
    ("savina_philosopher", {"philosophers": 5, "rounds": 60}, 2),
    ("savina_philosopher", {"philosophers": 1, "rounds": 30}, 1),  # never denied: the count exact
    # Three seats and a slow barber: customers turned away and sent again
    ("savina_barber", {"haircuts": 60, "seats": 3, "production_rate": 10, "haircut_rate": 300}, 1),
    ("savina_barber", {"haircuts": 40, "seats": 40, "seed": 7}, 2),  # every customer seated at once
])
def test_savinas_philosopher_and_barber_answer_as_their_oracles_given_the_schedule(run_erlang, kernel, params,
                                                                                    threads):
    sample = run_erlang(kernel, **params, threads=threads)
    oracles.check_at_its_schedule(kernel, kernels.resolve(kernel, params), sample)


@pytest.mark.parametrize("kernel, params", [
    ("savina_logmap", {"terms": 50, "series": 3, "start_rate": 3.9, "increment": 0.03}),  # the reals reach it
    ("savina_banking", {"accounts": 10, "transactions": 0}),  # the teller stops every account at its start
    ("savina_cigsmok", {"rounds": 50, "smokers": 1, "seed": 9}),  # one smoker picked every round
    # room for one item past the producers': producers parked, the buffer full, one consumer
    ("savina_bndbuffer", {"buffer_size": 3, "producers": 2, "consumers": 1, "items_per_producer": 200,
                          "produce_cost": 0, "consume_cost": 3}),
])
def test_savinas_concurrency_benchmarks_verify_at_their_edges(run_erlang, kernel, params):
    # Verified: the answer and the message count are what our kernel's expectation says.
    sample = run_erlang(kernel, **params, threads=2)
    assert sample.verified and sample.answer == sample.expected


def test_the_peer_itself_refuses_a_logistic_map_that_leaves_the_unit_interval(erlang_cache, monkeypatch):
    # labctl refuses these parameters before any program runs: the request is sent as it is.
    monkeypatch.setenv(runtimes.CACHE_ENV, str(erlang_cache))
    erlang = runtimes.runtimes()["erlang"]
    with pytest.raises(runtimes.ExternalFailure) as caught:
        runtimes.run_external(erlang, "savina_logmap", {"series": 3, "start_rate": 3.5, "increment": 0.3,
                                                        "threads": 1})
    assert caught.value.kind == "failure" and "exited with status 2" in str(caught.value)
    assert "param start_rate + (series - 1) * increment must be at most 4, got 4.1" in str(caught.value)


def test_a_wrong_answer_printed_is_refused_by_labctl_as_verification(run_erlang, monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "misreport")
    with pytest.raises(runner.PointFailed) as caught:
        run_erlang("skynet", leaves=100)
    assert caught.value.kind == "verification"
    assert "got 'sum=4950 agents=1110', expected 'sum=4950 agents=111'" in str(caught.value)


def test_service_answers_every_request_exactly_once(run_erlang):
    sample = run_erlang("service", requests=300, rate=100_000, servers=3, routing="random", arrivals="poisson",
                        threads=2)
    assert sample.verified
    assert sample.answer == "requests=300 answered=300 repeated=0 missing=0 unknown=0 id_sum=44850"
    assert sample.messages_processed == 600
    assert sum(count for _, count in sample.histogram) == 300  # every answer's latency, kept with it


def test_a_service_whose_generator_falls_behind_gives_no_latency_figure(run_erlang):
    # One request a nanosecond, late past a microsecond: no generator keeps it.
    sample = run_erlang("service", requests=3000, rate=1e9, late_bound_us=1, threads=2)
    assert sample.verified and sample.metrics["generator_behind"] == 1
    assert sample.metrics["generator_late_share"] > 0.01
    assert not {name for name in sample.metrics if name.startswith("latency_")}


def test_a_service_that_sleeps_is_refused_on_erlang_naming_the_values_it_takes():
    # A BEAM timer sleeps whole milliseconds: work=sleep is refused before the program runs.
    with pytest.raises(kernels.ParamError, match="parameter 'work' on runtime 'erlang' must be one of: spin; got 'sleep'"):
        kernels.resolve("service", {"runtime": "erlang", "work": "sleep"})


def test_a_wrong_service_answer_is_refused_by_the_peer_itself(run_erlang, monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "wrong_answer")
    with pytest.raises(runner.PointFailed) as caught:
        run_erlang("service", requests=10, rate=100_000, threads=1)
    assert caught.value.kind == "failure"
    assert "got 'requests=10 answered=10 repeated=0 missing=0 unknown=0 id_sum=46'" in str(caught.value)
