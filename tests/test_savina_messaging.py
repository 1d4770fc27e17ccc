"""Savina's messaging benchmarks 1 (Ping Pong), 2 (Counting Actor) and 5 (Thread Ring), as the
savina_pingpong, savina_count and savina_threadring kernels and their CAF versions: hand-worked
answers, the oracles agreeing with them, wrong answers and bad parameters refused."""

from __future__ import annotations

import oracles
import pytest

from labctl import _native
from labctl.catalogue import kernels

CAF_KERNELS = {k["name"] for k in _native.kernels() if k["runtime"] == "caf"}
needs_caf = pytest.mark.skipif("caf_savina_pingpong" not in CAF_KERNELS,
                               reason="labctl._native was built without CAF (no caf_ kernels)")


def run(name: str, params: dict) -> dict:
    return _native.run(name, params)


def runtime(name: str, threads: int) -> dict:
    """`threads` threads: CAF's scheduler, or our thread pool."""
    return {"threads": threads} if name.startswith("caf_") else {"dispatcher": "thread_pool", "threads": threads}


def assert_oracle(name: str, params: dict, result: dict) -> None:
    expected = oracles.oracle(name.removeprefix("caf_"), _native.validate(name, params, scoped=False))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


# -- 1. Ping Pong -----------------------------------------------------------------------------
# pings=3 by hand: Start -> ping sends SendPing#1 (2 left); pong answers SendPong#1; ping, 2 left,
# sends itself Ping#1 -> SendPing#2 (1 left) -> SendPong#2 -> Ping#2 -> SendPing#3 (0 left) ->
# SendPong#3 -> none left: Stop. Start 1, Ping 2, SendPing 3, SendPong 3, Stop 1: 10 = 3*3+1.
# pings=1: Start, SendPing, SendPong, Stop: 4 messages, no Ping.
PINGPONG_BY_HAND = [
    (1, "start=1 ping=0 send_ping=1 send_pong=1 stop=1 pings_left=0", 4),
    (3, "start=1 ping=2 send_ping=3 send_pong=3 stop=1 pings_left=0", 10),
]


@pytest.mark.parametrize("pings, answer, messages", PINGPONG_BY_HAND)
def test_pingpong_oracle_matches_the_hand_worked_cases(pings, answer, messages):
    assert oracles.savina_pingpong({"pings": pings}) == oracles.Oracle(answer, messages)


@pytest.mark.parametrize("name", ["savina_pingpong", pytest.param("caf_savina_pingpong", marks=needs_caf)])
@pytest.mark.parametrize("pings, answer, messages", PINGPONG_BY_HAND)
def test_pingpong_answers_as_worked_by_hand(name, pings, answer, messages):
    result = run(name, {"pings": pings})
    assert (result["answer"], result["messages_processed"]) == (answer, messages)


def test_pingpong_defaults_are_savinas():
    assert kernels.get("savina_pingpong").param("pings").default == 40_000


@pytest.mark.parametrize("name", ["savina_pingpong", pytest.param("caf_savina_pingpong", marks=needs_caf)])
@pytest.mark.parametrize("threads", [1, 2])
def test_pingpong_at_savinas_default_size(name, threads):
    params = runtime(name, threads)
    assert_oracle(name, params, run(name, params))


@pytest.mark.parametrize("bad", [0, -1, 1_000_000_001])
def test_pingpong_refuses_a_pings_count_out_of_range(bad):
    with pytest.raises(kernels.ParamError) as caught:
        kernels.resolve("savina_pingpong", {"pings": bad})
    assert caught.value.param == "pings"


# -- 2. Counting Actor ------------------------------------------------------------------------
# increments=2 by hand: the kernel's Increment starts the producer; it sends Increment, Increment,
# Retrieve to the counter (count 1, 2, then a Result of 2 back): 1 + 2 + 1 + 1 = 5 messages.
# increments=0: start, Retrieve, Result of 0: 3 messages.
COUNT_BY_HAND = [
    (0, "start=1 increments=0 retrieves=1 results=1 result=0", 3),
    (2, "start=1 increments=2 retrieves=1 results=1 result=2", 5),
]


@pytest.mark.parametrize("increments, answer, messages", COUNT_BY_HAND)
def test_count_oracle_matches_the_hand_worked_cases(increments, answer, messages):
    assert oracles.savina_count({"increments": increments}) == oracles.Oracle(answer, messages)


@pytest.mark.parametrize("name", ["savina_count", pytest.param("caf_savina_count", marks=needs_caf)])
@pytest.mark.parametrize("increments, answer, messages", COUNT_BY_HAND)
def test_count_answers_as_worked_by_hand(name, increments, answer, messages):
    result = run(name, {"increments": increments})
    assert (result["answer"], result["messages_processed"]) == (answer, messages)


def test_count_defaults_are_savinas():
    assert kernels.get("savina_count").param("increments").default == 1_000_000


@pytest.mark.parametrize("name", ["savina_count", pytest.param("caf_savina_count", marks=needs_caf)])
@pytest.mark.parametrize("threads", [1, 2])
def test_count_at_savinas_default_size(name, threads):
    params = runtime(name, threads)
    assert_oracle(name, params, run(name, params))


@pytest.mark.parametrize("bad", [-1, 10_000_000_001])
def test_count_refuses_an_increments_count_out_of_range(bad):
    with pytest.raises(kernels.ParamError) as caught:
        kernels.resolve("savina_count", {"increments": bad})
    assert caught.value.param == "increments"


# -- 5. Thread Ring ---------------------------------------------------------------------------
# actors=3, pings=4 by hand: Data to 0, 1, 2; Ping(4) at 0, Ping(3) at 1, Ping(2) at 2, Ping(1) at
# 0, Ping(0) at 1 (last_ping_at = 4 % 3 = 1), which sends Exit(3) to 2; Exit(2) at 0, Exit(1) at 1,
# Exit(0) back at 2, exited already: the dead letter. 3 + 5 + 3 + 1 = 12 messages.
# actors=1, pings=0: Data, Ping(0), Exit(1) and Exit(0) all at member 0: 4 messages.
THREADRING_BY_HAND = [
    (1, 0, "data=1 pings=1 exits=1 dead_letters=1 last_ping_at=0 uneven_actors=0", 4),
    (3, 4, "data=3 pings=5 exits=3 dead_letters=1 last_ping_at=1 uneven_actors=0", 12),
    (2, 5, "data=2 pings=6 exits=2 dead_letters=1 last_ping_at=1 uneven_actors=0", 11),
]


@pytest.mark.parametrize("actors, pings, answer, messages", THREADRING_BY_HAND)
def test_threadring_oracle_matches_the_hand_worked_cases(actors, pings, answer, messages):
    assert oracles.savina_threadring({"actors": actors, "pings": pings}) == oracles.Oracle(answer, messages)


@pytest.mark.parametrize("name", ["savina_threadring", pytest.param("caf_savina_threadring", marks=needs_caf)])
@pytest.mark.parametrize("actors, pings, answer, messages", THREADRING_BY_HAND)
def test_threadring_answers_as_worked_by_hand(name, actors, pings, answer, messages):
    result = run(name, {"actors": actors, "pings": pings})
    assert (result["answer"], result["messages_processed"]) == (answer, messages)


def test_threadring_defaults_are_savinas():
    kernel = kernels.get("savina_threadring")
    assert (kernel.param("actors").default, kernel.param("pings").default) == (100, 100_000)


@pytest.mark.parametrize("name", ["savina_threadring", pytest.param("caf_savina_threadring", marks=needs_caf)])
@pytest.mark.parametrize("threads", [1, 2])
def test_threadring_at_savinas_default_size(name, threads):
    params = runtime(name, threads)
    assert_oracle(name, params, run(name, params))


@pytest.mark.parametrize("name", ["savina_threadring", pytest.param("caf_savina_threadring", marks=needs_caf)])
@pytest.mark.parametrize("actors, pings", [(7, 0), (7, 6), (7, 7), (50, 1234)])
def test_threadring_ends_where_the_arithmetic_says(name, actors, pings):
    params = {"actors": actors, "pings": pings}
    assert_oracle(name, params, run(name, params))


@pytest.mark.parametrize("values, param", [
    ({"actors": 0}, "actors"),
    ({"actors": 1_000_001}, "actors"),
    ({"pings": -1}, "pings"),
    ({"pings": 10_000_000_001}, "pings"),
    # a thread per agent: more than the dispatcher's cap refused, naming the dispatcher and actors
    ({"actors": 20_000, "dispatcher": "active_obj"}, "dispatcher"),
])
def test_threadring_refuses_bad_parameters(values, param):
    with pytest.raises(kernels.ParamError) as caught:
        kernels.resolve("savina_threadring", values)
    assert caught.value.param == param
    assert all(name in str(caught.value) for name in values)


# -- every kernel here ------------------------------------------------------------------------
OURS = ["savina_pingpong", "savina_count", "savina_threadring"]
SMALL = {"savina_pingpong": {"pings": 50}, "savina_count": {"increments": 50},
         "savina_threadring": {"actors": 5, "pings": 50}}


@pytest.mark.parametrize("name", OURS + [pytest.param("caf_" + n, marks=needs_caf) for n in OURS])
def test_a_wrong_answer_is_caught(name):
    with pytest.raises(_native.VerificationError, match="wrong answer"):
        _native.run(name, SMALL[name.removeprefix("caf_")], "wrong_answer")


@pytest.mark.parametrize("name", OURS)
def test_the_kernel_states_its_savina_source_and_how_it_differs_from_ours(name):
    kernel = {k["name"]: k for k in _native.kernels()}[name]
    assert "Savina" in kernel["description"] and "Differences from Savina" in kernel["description"]
    ours = {"savina_pingpong": "ping_pong", "savina_count": "counting_actor", "savina_threadring": "thread_ring"}
    assert f"Unlike {ours[name]} " in kernel["description"]
