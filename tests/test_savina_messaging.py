"""Savina's messaging benchmarks 1 (Ping Pong), 2 (Counting Actor) and 5 (Thread Ring), as the
savina_pingpong, savina_count and savina_threadring kernels and their CAF versions: hand-worked
answers, the oracles agreeing with them, wrong answers and bad parameters refused."""

from __future__ import annotations

import oracles
import pytest

from labctl import _native, kernels

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
