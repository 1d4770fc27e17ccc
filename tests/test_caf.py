"""The kernels written on CAF 0.17 (native/caf/, caf_ kernels), built into labctl._native when
CAF is installed: each verifies its answer at small sizes on CAF's scheduler, and each has the
schema and the answer format of our kernel of the same name, so that a report can put them side
by side."""

from __future__ import annotations

import itertools
import time

import oracles
import pytest

from labctl import _native
from labctl.catalogue import kernels, native

CAF_KERNELS = sorted(k["name"] for k in _native.kernels() if k["runtime"] == "caf")

pytestmark = pytest.mark.skipif(
    not CAF_KERNELS,
    reason="labctl._native was built without CAF (no caf_ kernels): install CAF 0.17 "
           "(Debian: libcaf-dev) and rebuild the extension")

# Ours and CAF's at the same small sizes: each run well under 0.2 s.
SMALL = {
    "skynet": {"leaves": 1000},
    "ping_pong": {"messages": 2000},
    "one_to_many": {"workers": 8, "messages_per_worker": 200},
    "counting_actor": {"messages": 2000},
    "thread_ring": {"actors": 8, "hops": 500},
    "parallel_thread_ring": {"actors": 8, "tokens": 5, "hops": 503},
    "mailbox_n_to_1": {"senders": 3, "messages_per_sender": 300, "sender": "agent"},
    "savina_chameneos": {"creatures": 5, "meetings": 200},
    "savina_pingpong": {"pings": 1000},
    "savina_count": {"increments": 2000},
    "savina_threadring": {"actors": 8, "pings": 500},
    "savina_fjthrput": {"messages": 200, "actors": 6},
    "savina_fjcreate": {"workers": 100},
    "savina_big": {"actors": 10, "pings": 100, "seed": 7},
    "savina_logmap": {"terms": 200, "series": 4},
    "savina_banking": {"accounts": 20, "transactions": 300},
    "savina_cigsmok": {"rounds": 200, "smokers": 10},
    # One philosopher, never denied, and as many seats as customers, none turned away: the
    # message counts the parameters' (tests/test_savina_coordination.py and
    # test_savina_simulations.py run them where the schedule decides).
    "savina_philosopher": {"philosophers": 1, "rounds": 200},
    "savina_barber": {"haircuts": 40, "seats": 40, "production_rate": 50, "haircut_rate": 50},
    "savina_bndbuffer": {"buffer_size": 10, "producers": 4, "consumers": 4, "items_per_producer": 20,
                         "produce_cost": 1, "consume_cost": 1},
    "savina_concdict": {"workers": 4, "messages_per_worker": 200, "keys": 1000},
    "savina_concsll": {"workers": 4, "messages_per_worker": 200},
    "service": {"requests": 300, "rate": 20_000, "late_bound_us": 1_000_000},
    "chat": {"clients": 16, "directories": 2, "turns": 4, "iterations": 2, "compute_repeats": 10,
             "leave": 0, "seed": 2},
}

# Our parameters a caf_ kernel does not take: the dispatcher's, and those with no CAF meaning.
DISPATCHER_PARAMS = {"dispatcher", "threads", "fifo", "max_demands_at_once", "wake", "stack_kb", "spin_us", "pin"}
# Parameters of ours a CAF kernel does not take: named mboxes (a CAF group would be another
# kernel).
LEFT_OUT = {"ping_pong": {"mbox"}}


def ours(caf_name: str) -> str:
    return caf_name.removeprefix("caf_")


def test_every_caf_kernel_has_a_small_size_here_and_a_kernel_of_ours():
    assert {"caf_skynet", "caf_ping_pong", "caf_one_to_many", "caf_counting_actor",
            "caf_thread_ring", "caf_mailbox_n_to_1"} <= set(CAF_KERNELS)
    for name in CAF_KERNELS:
        assert ours(name) in SMALL, name
        assert ours(name) in kernels.catalogue(), name


def oracle(name: str, params: dict) -> oracles.Oracle:
    """The oracle of our kernel of the same name, at `params` with the caf_ kernel's defaults
    filled in (validate only resolves: it runs nothing and states no answer)."""
    return oracles.oracle(name, _native.validate(name, params, scoped=False))


def assert_answers_as_its_oracle(result: dict, expected: oracles.Oracle) -> None:
    assert result["answer"] == expected.answer
    assert result["messages_processed"] == expected.messages
    assert {name: result["metrics"][name] for name in expected.metrics} == expected.metrics


@pytest.mark.parametrize("name, threads, policy",
                         list(itertools.product(CAF_KERNELS, [1, 2], ["stealing", "sharing"])))
def test_caf_kernel_answers_as_its_oracle(name, threads, policy):
    params = {**SMALL[ours(name)], "threads": threads, "policy": policy}
    result = _native.run(name, params)
    assert_answers_as_its_oracle(result, oracle(name, params))
    assert result["elapsed_ns"] > 0
    # CAF's threads, each registered by a thread hook when it first runs: a worker that has not
    # run yet when a tiny phase ends is not there, so only one is sure to be.
    assert len(result["thread_cpu_ns"]) >= 1
    assert all(ns >= 0 for ns in result["thread_cpu_ns"])


@pytest.mark.parametrize("name", CAF_KERNELS)
def test_caf_kernel_takes_our_kernels_parameters_and_caf_scheduler_ones(name):
    native = {k["name"]: k for k in _native.kernels()}
    caf = {p["name"]: kernels._param(p) for p in native[name]["params"]}
    our = {p["name"]: kernels._param(p) for p in native[ours(name)]["params"]
           if p["name"] not in DISPATCHER_PARAMS | LEFT_OUT.get(ours(name), set())}
    assert set(caf) == set(our) | {"threads", "policy"}
    for param in our.values():
        mine = caf[param.name]
        assert (mine.type, mine.default, mine.minimum, mine.maximum, mine.choices) == \
               (param.type, param.default, param.minimum, param.maximum, param.choices), param.name
    assert caf["threads"].default == 2 and (caf["threads"].minimum, caf["threads"].maximum) == (1, 1024)
    assert set(caf["policy"].choices) == {"stealing", "sharing"} and caf["policy"].default == "stealing"


@pytest.mark.parametrize("name", CAF_KERNELS)
def test_caf_kernel_answers_as_ours_does(name):
    """Same answer format and the same count of messages: a report can set them side by side."""
    caf = _native.run(name, {**SMALL[ours(name)], "threads": 2})
    our = _native.run(ours(name), {**SMALL[ours(name)], "dispatcher": "thread_pool", "threads": 2})
    assert caf["answer"] == our["answer"]
    assert caf["messages_processed"] == our["messages_processed"]
    assert set(caf["metrics"]) == set(our["metrics"])


CLOCKED = sorted(k["name"] for k in _native.kernels()
                 if k["runtime"] == "caf" and any(p["name"] == "clock" for p in k["params"]))


def test_the_caf_kernels_of_kernels_with_a_clock_have_it_too():
    assert CLOCKED == ["caf_mailbox_n_to_1", "caf_one_to_many", "caf_skynet"]


@pytest.mark.parametrize("name", CLOCKED)
def test_a_caf_lifetime_clock_contains_the_phase_and_every_thread_of_the_actor_system(name):
    params = {**SMALL[ours(name)], "threads": 2}
    phase = _native.run(name, {**params, "clock": "phase"})
    assert_answers_as_its_oracle(phase, oracle(name, params))
    assert "phase_ns" not in phase["metrics"]  # elapsed_ns is the phase
    start = time.perf_counter_ns()
    lifetime = _native.run(name, {**params, "clock": "lifetime"})
    wall = time.perf_counter_ns() - start
    assert_answers_as_its_oracle(lifetime, oracle(name, params))
    assert lifetime["metrics"]["phase_ns"] < lifetime["elapsed_ns"] <= wall
    # Read once the actor system is gone: both scheduler workers have run by then (a tiny
    # phase can end before the second has), each with its whole life.
    assert len(lifetime["thread_cpu_ns"]) >= 2 and all(ns >= 0 for ns in lifetime["thread_cpu_ns"])


def test_a_caf_lifetime_clock_covers_the_end_of_the_actors():
    # 22,223 actors left running after the phase (deregister=false): stopping and destroying
    # them is in the lifetime alone.
    lifetime = _native.run("caf_skynet", {"leaves": 20_000, "threads": 1, "clock": "lifetime"})
    assert lifetime["elapsed_ns"] - lifetime["metrics"]["phase_ns"] > 0.2 * lifetime["metrics"]["phase_ns"]


@pytest.mark.parametrize("leaves, branching", [(1, 10), (10, 10), (37, 3), (1000, 7)])
@pytest.mark.parametrize("deregister", [False, True])
def test_caf_skynet_sums_every_leaf_and_counts_every_actor(leaves, branching, deregister):
    params = {"leaves": leaves, "branching": branching, "deregister": deregister}
    assert_answers_as_its_oracle(_native.run("caf_skynet", params), oracle("caf_skynet", params))


@pytest.mark.parametrize("payload_bytes", [0, 16, 4096])
def test_caf_ping_pong_counts_every_message_with_its_payload(payload_bytes):
    result = _native.run("caf_ping_pong", {"messages": 3000 * 2, "payload_bytes": payload_bytes,
                                           "latency_samples": 700})
    assert result["answer"] == "pings=3000 pongs=3000 out_of_order=0 corrupt=0"
    assert result["messages_processed"] == 6000
    metrics = result["metrics"]
    assert 0 < metrics["round_trip_p50_ns"] <= metrics["round_trip_p99_ns"] <= metrics["round_trip_max_ns"]
    assert metrics["round_trip_samples"] == 700
    assert metrics["round_trip_mean_ns"] == pytest.approx(result["elapsed_ns"] / 3000)


@pytest.mark.parametrize("work", ["noop", "cpu", "sleep"])
def test_caf_one_to_many_delivers_every_number_to_every_worker(work):
    params = {"workers": 6, "messages_per_worker": 40, "work": work, "sleep_ms": 0.1, "cpu_iters": 3}
    result = _native.run("caf_one_to_many", params)
    assert result["answer"] == "received=240 out_of_order=0 short_workers=0 wrong_series=0"
    assert result["messages_processed"] == 240 + 6
    assert 0 < result["metrics"]["send_ns"] <= result["elapsed_ns"]


@pytest.mark.parametrize("sender", ["thread", "agent"])
def test_caf_mailbox_n_to_1_receives_every_senders_messages_in_order(sender):
    result = _native.run("caf_mailbox_n_to_1", {"senders": 4, "messages_per_sender": 2500, "sender": sender})
    assert result["answer"] == "received=10000 out_of_order=0 short_senders=0"


@pytest.mark.parametrize("actors, hops", [(1, 10), (7, 0), (503, 5000)])
def test_caf_thread_ring_ends_where_the_arithmetic_says(actors, hops):
    result = _native.run("caf_thread_ring", {"actors": actors, "hops": hops})
    assert result["answer"] == "tokens_ended=1 wrong_end=0 wrong_hops=0 repeated=0 uneven_agents=0"
    assert result["messages_processed"] == hops + 2


def test_caf_counting_actor_sums_one_to_n():
    result = _native.run("caf_counting_actor", {"messages": 12345, "threads": 1})
    assert result["answer"] == f"received=12345 sum={12345 * 12346 // 2}"


@pytest.mark.parametrize("values, param", [
    ({"threads": 0}, "threads"),
    ({"threads": 1025}, "threads"),
    ({"policy": "fifo"}, "policy"),
    ({"dispatcher": "thread_pool"}, "dispatcher"),  # ours, not CAF's
])
def test_caf_kernels_refuse_wrong_parameters(values, param):
    with pytest.raises(kernels.ParamError) as caught:
        kernels.resolve("counting_actor", {"runtime": "caf", **values})
    assert caught.value.param == param


def test_caf_ping_pong_refuses_an_odd_message_count():
    with pytest.raises(kernels.ParamError, match="'messages' must be even") as caught:
        native.run("caf_ping_pong", {"messages": 2001})
    assert caught.value.param == "messages"


@pytest.mark.parametrize("name", CAF_KERNELS)
def test_a_wrong_answer_from_a_caf_kernel_raises(name):
    with pytest.raises(_native.VerificationError, match="wrong answer"):
        _native.run(name, SMALL[ours(name)], "wrong_answer")


@pytest.mark.parametrize("name", CAF_KERNELS)
def test_each_caf_kernel_is_our_kernel_on_runtime_caf(name):
    kernel = kernels.get(ours(name))
    assert "caf" in kernel.runtimes and "caf" in kernel.param("runtime").choices
    assert name not in kernels.catalogue()  # an implementation, not a kernel of its own
    resolved = kernels.resolve(ours(name), {"runtime": "caf", "threads": 1})
    assert resolved["runtime"] == "caf" and resolved["threads"] == 1 and resolved["policy"] == "stealing"
    assert resolved["dispatcher"] is None and resolved["allocator"] == "system"


def test_many_actor_systems_in_a_row_in_one_process():
    skynet = {"leaves": 100, "threads": 2}
    ping_pong = {"messages": 200, "threads": 1}
    for _ in range(20):
        assert_answers_as_its_oracle(_native.run("caf_skynet", skynet), oracle("caf_skynet", skynet))
        assert_answers_as_its_oracle(_native.run("caf_ping_pong", ping_pong), oracle("caf_ping_pong", ping_pong))
