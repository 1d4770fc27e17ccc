"""Savina's pipelines and sorting networks of group A (savina_radixsort, savina_sieve,
savina_bitonicsort): their oracles on cases worked out by hand, Python models of the agents'
algorithms against plain sorting, the kernels' answers at small sizes on a few dispatchers, bad
parameters refused with a message naming the parameter, and the kernels' checks catching a wrong
answer."""

from __future__ import annotations

import oracles
import pytest
from savina_support import DISPATCHERS, fnv, resolved

from labctl import _native

KERNELS = {k["name"] for k in _native.kernels()}


def mix64(z: int) -> int:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 % 2**64
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB % 2**64
    return z ^ (z >> 31)


def sorted_answer(values: list[int]) -> str:
    ordered = sorted(values)
    return (f"values={len(ordered)} sorted=1 out_of_place=0 sum={sum(ordered) % 2**64} "
            f"multiset_hash={sum(mix64(v) for v in ordered) % 2**64:016x} sequence_hash={fnv(*ordered):016x}")


def draws(seed: int, count: int, below: int) -> list[int]:
    generator = oracles.SplitMix64(seed, 0)
    return [generator.below(below) for _ in range(count)]


def agrees(kernel: str, params: dict) -> None:
    result = _native.run(kernel, params)
    expected = oracles.oracle(kernel, resolved(kernel, params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert _native.expect(kernel, params) == {"answer": expected.answer, "messages": expected.messages}
    assert result["metrics"]["sequential_ns"] > 0


# -- savina_radixsort -----------------------------------------------------------------------------

def test_radixsort_oracle_worked_by_hand():
    # values=3, max_value=4 (2 stages), seed=5: the three draws below 4, sorted; messages: Start,
    # then 3 values into stage 0, stage 1 and the validation agent: 1 + 3 * 3 = 10.
    values = draws(5, 3, 4)
    assert all(0 <= v < 4 for v in values)
    got = oracles.savina_radixsort(resolved("savina_radixsort", {"values": 3, "max_value": 4, "seed": 5}))
    assert got.answer == sorted_answer(values)
    assert got.messages == 10


def test_radixsort_stages_are_a_stable_sort():
    # The pipeline's algorithm: each stage forwards the values whose bit is clear in their order,
    # then the held ones in theirs; stage after stage, bit 0 first, that sorts.
    values = draws(11, 300, 2**12)
    for bit in range(12):
        values = [v for v in values if not v >> bit & 1] + [v for v in values if v >> bit & 1]
    assert values == sorted(values)


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_radixsort_answers_as_its_oracle(dispatcher):
    agrees("savina_radixsort", {"values": 500, "max_value": 2**20, "seed": 3, **dispatcher})


def test_radixsort_oracle_sees_a_nudged_input():
    base = resolved("savina_radixsort", {"values": 50, "max_value": 2**16})
    assert oracles.savina_radixsort(base).answer != oracles.savina_radixsort(dict(base, seed=base["seed"] + 1)).answer


# -- savina_sieve ---------------------------------------------------------------------------------

def test_sieve_oracle_worked_by_hand():
    # limit=12, primes_per_filter=2. Filter 1 holds 2. 3 passes it and is kept there (2, 3);
    # 5 passes, filter 1 is full: filter 2 is made holding 5; 7 passes filter 1 and is kept by
    # filter 2 (5, 7); 9 is dropped by 3 at filter 1; 11 passes both, filter 2 is full: filter 3.
    # Candidates delivered: 3, 5, 9 once, 7 and 11 twice = 7; messages 1 Start + 7 + 3 Exits = 11.
    got = oracles.savina_sieve(resolved("savina_sieve", {"limit": 12, "primes_per_filter": 2}))
    assert got.answer == f"primes=5 largest=11 sum=28 hash={fnv(2, 3, 5, 7, 11):016x} filters=3"
    assert got.messages == 11


def test_sieve_oracle_at_savinas_size():
    got = oracles.savina_sieve(resolved("savina_sieve", {}))
    assert got.answer.startswith("primes=9592 largest=99991 sum=454396537 ")
    assert got.answer.endswith(" filters=10")


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_sieve_answers_as_its_oracle(dispatcher):
    agrees("savina_sieve", {"limit": 5000, "primes_per_filter": 30, **dispatcher})


def test_sieve_at_savinas_size():
    agrees("savina_sieve", {"dispatcher": "thread_pool", "threads": 2})


def test_sieve_oracle_sees_a_nudged_input():
    # 101 is prime: the primes below 102 are one more than those below 101.
    small = oracles.savina_sieve(resolved("savina_sieve", {"limit": 101, "primes_per_filter": 5}))
    large = oracles.savina_sieve(resolved("savina_sieve", {"limit": 102, "primes_per_filter": 5}))
    assert small.answer.startswith("primes=25 ") and large.answer.startswith("primes=26 ")


# -- savina_bitonicsort ---------------------------------------------------------------------------

def test_bitonicsort_oracle_worked_by_hand():
    # values=2: kernel, last stage, step (its agent, splitter, one compare-exchange, joiner),
    # adapter, validation and the source: 9 agents; a value passes the 8 but the source; every
    # agent but the source gets one Exit. Messages 1 + 2 * 8 + 8 = 25.
    assert oracles.bitonic_network(2) == (9, 8, 0)
    got = oracles.savina_bitonicsort(resolved("savina_bitonicsort", {"values": 2, "max_value": 100, "seed": 1}))
    assert got.answer == sorted_answer(draws(1, 2, 100))
    assert got.messages == 25
    # values=4: merge stage 2 (its agent; a step of length 2: agent, splitter, 2 compare-exchanges,
    # joiner, adapter) = 7 agents, a value passes 6; the last stage's agent, its step of length 4
    # (agent, splitter, joiner and a partition: agent, splitter, 2 compare-exchanges, joiner,
    # adapter) = 9, a value passes 8, and its step of length 2 (agent, splitter, 2
    # compare-exchanges, joiner) = 5, a value passes 4; kernel, source, adapter, validation.
    # Agents 7 + 1 + 9 + 5 + 4 = 26, path 6 + 1 + 8 + 4 + 3 = 22; joiners with two inputs: 3.
    assert oracles.bitonic_network(4) == (26, 22, 3)
    assert oracles.savina_bitonicsort(resolved("savina_bitonicsort", {"values": 4})).messages == 1 + 4 * 22 + 25 + 3


def test_bitonic_network_sorts():
    # The network's compare-exchanges as Savina wires them: merge stages of order 2, 4, ..., n/2
    # (steps of length order down to 2, blocks of `order` alternately up and down), then the last
    # stage up; within a block of length L, place k against k + L/2.
    n = 32
    values = draws(9, n, 1000)

    def step(length: int, order: int | None) -> None:
        for start in range(0, n, length):
            up = order is None or (start // order) % 2 == 0
            for k in range(start, start + length // 2):
                low, high = sorted((values[k], values[k + length // 2]))
                values[k], values[k + length // 2] = (low, high) if up else (high, low)

    order = 2
    while order <= n // 2:
        length = order
        while length >= 2:
            step(length, order)
            length //= 2
        order *= 2
    length = n
    while length >= 2:
        step(length, None)
        length //= 2
    assert values == sorted(values)


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_bitonicsort_answers_as_its_oracle(dispatcher):
    agrees("savina_bitonicsort", {"values": 32, "seed": 4, **dispatcher})


def test_bitonicsort_at_a_larger_size():
    agrees("savina_bitonicsort", {"values": 256, "max_value": 50, "dispatcher": "work_stealing", "threads": 2})


def test_bitonicsort_oracle_sees_a_nudged_input():
    base = resolved("savina_bitonicsort", {"values": 16})
    nudged = dict(base, max_value=base["max_value"] - 1)
    assert oracles.savina_bitonicsort(base).answer != oracles.savina_bitonicsort(nudged).answer


# -- all three ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel, params, name", [
    ("savina_radixsort", {"values": 0}, "values"),
    ("savina_radixsort", {"max_value": 1000}, "max_value"),
    ("savina_radixsort", {"max_value": 1}, "max_value"),
    ("savina_radixsort", {"seed": -1}, "seed"),
    ("savina_sieve", {"limit": 2}, "limit"),
    ("savina_sieve", {"primes_per_filter": 0}, "primes_per_filter"),
    ("savina_sieve", {"limit": 1_000_000, "primes_per_filter": 1, "dispatcher": "active_obj"}, "limit"),
    ("savina_bitonicsort", {"values": 12}, "values"),
    ("savina_bitonicsort", {"values": 1}, "values"),
    ("savina_bitonicsort", {"values": 1024, "dispatcher": "active_obj"}, "values"),
])
def test_bad_parameters_are_refused(kernel, params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run(kernel, params)


@pytest.mark.parametrize("kernel, params", [
    ("savina_radixsort", {"values": 20, "max_value": 16}),
    ("savina_sieve", {"limit": 100, "primes_per_filter": 3}),
    ("savina_bitonicsort", {"values": 4}),
])
def test_wrong_answer_is_caught(kernel, params):
    assert kernel in KERNELS
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run(kernel, params, fault="wrong_answer")
