"""Savina's numeric parallelism benchmarks of group B (savina_filterbank, savina_trapezoid,
savina_piprecision): their oracles on cases worked out by hand, the kernels' answers at small
sizes on a few dispatchers (each kernel checks itself against its sequential program too), bad
parameters refused with a message naming the parameter, a wrong answer caught, and the oracles
telling a nudged input apart."""

from __future__ import annotations

import math

import oracles
import pytest
from savina_support import DISPATCHERS, bits, fnv, resolved

from labctl import _native

# -- savina_filterbank ----------------------------------------------------------------------------

def test_filterbank_oracle_worked_by_hand():
    # simulations=5, columns=2, channels=2: delays of 1 value, FIR filters of 2 taps, every 2nd
    # value sampled. H[j][i] = 3i + 4j + 1: H0 = [1, 4], H1 = [5, 8]; F[j][i] = ij + j*j + j + i:
    # F0 = [0, 1], F1 = [2, 4]. A filter puts out ring[0]*coef[1] + ring[1]*coef[0].
    #   source 0 1 2 3 4 -> delay 0 0 1 2 3
    #   FIR ch0 (ring[0]*4 + ring[1]*1): 0 4 6 14;  ch1 (ring[0]*8 + ring[1]*5): 0 8 18 34
    #   sampled: ch0 0 0 6 0, ch1 0 0 18 0 -> delayed: ch0 0 0 0 6, ch1 0 0 0 18
    #   FIR ch0 (ring[0]*1 + ring[1]*0): 0 0 0;  ch1 (ring[0]*4 + ring[1]*2): 0 0 36
    #   sink: 0, 0, 36. Messages: Next 6, Boot 5, Value 5, 3*2*5 into the first filters,
    #   3*2*4 after them, 2*2*3 after the second, 2*3 to the combiner and sink, 4 + 8*2 Exits = 108.
    #   The filters' outputs: 4 + 3 per channel, each filter's hash folded in channel order.
    got = oracles.savina_filterbank(resolved("savina_filterbank", {"simulations": 5, "columns": 2,
                                                                   "channels": 2}))
    first0, second0 = fnv(*map(bits, [0.0, 4.0, 6.0, 14.0])), fnv(*map(bits, [0.0, 0.0, 0.0]))
    first1, second1 = fnv(*map(bits, [0.0, 8.0, 18.0, 34.0])), fnv(*map(bits, [0.0, 0.0, 36.0]))
    assert got.answer == (f"outputs=3 outputs_hash={fnv(bits(0.0), bits(0.0), bits(36.0)):016x} outputs_sum=36 "
                          f"filter_outputs=14 filters_hash={fnv(first0, second0, first1, second1):016x}")
    assert got.messages == 108


def test_filterbank_at_savinas_proportions_sinks_only_zeros():
    # simulations < 3*columns - 1 (Savina's 34,816 and 16,384): the sink's values are all 0, the
    # filters' outputs are not; the answer holds both.
    params = {"simulations": 2 * 64 + 8, "columns": 64, "channels": 3}
    got = oracles.savina_filterbank(resolved("savina_filterbank", params))
    # The first filters put out 136 - 63 = 73 values each, the second 73 - 63 = 10.
    zeros = fnv(*[bits(0.0)] * 10)
    assert got.answer.startswith(f"outputs=10 outputs_hash={zeros:016x} outputs_sum=0 filter_outputs=249 ")
    result = _native.run("savina_filterbank", params)
    assert (result["answer"], result["messages_processed"]) == (got.answer, got.messages)


def test_filterbank_too_few_values_reach_no_sink():
    # Under 2*columns - 1 values, the second filters' windows never fill: only the Exits arrive.
    got = oracles.savina_filterbank(resolved("savina_filterbank", {"simulations": 30, "columns": 16,
                                                                   "channels": 2}))
    assert got.answer.startswith("outputs=0 ")
    result = _native.run("savina_filterbank", {"simulations": 30, "columns": 16, "channels": 2})
    assert (result["answer"], result["messages_processed"]) == (got.answer, got.messages)


def test_filterbank_oracle_tells_a_nudged_input():
    base = resolved("savina_filterbank", {"simulations": 60, "columns": 8, "channels": 3})
    assert oracles.savina_filterbank(base).answer != oracles.savina_filterbank(dict(base, simulations=61)).answer


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_filterbank_answers_as_its_oracle(dispatcher):
    params = {"simulations": 300, "columns": 32, "channels": 8, **dispatcher}
    result = _native.run("savina_filterbank", params)
    expected = oracles.savina_filterbank(resolved("savina_filterbank", params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert _native.expect("savina_filterbank", params) == {"answer": expected.answer,
                                                          "messages": expected.messages}
    assert result["metrics"]["sequential_ns"] > 0


@pytest.mark.parametrize("params, name", [
    ({"simulations": 0}, "simulations"),
    ({"columns": 1}, "columns"),
    ({"channels": 1}, "channels"),
    ({"channels": 35}, "channels"),
])
def test_filterbank_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_filterbank", params)


def test_filterbank_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_filterbank", {"simulations": 40, "columns": 4, "channels": 2}, fault="wrong_answer")


# -- savina_trapezoid -----------------------------------------------------------------------------

def f(x: float) -> float:
    return math.sin(math.pow(x, 3.0) - 1) / (x + 1) * math.sqrt(1 + math.exp(math.sqrt(2 * x)))


def test_trapezoid_oracle_worked_by_hand():
    # pieces=2, workers=1 on [0, 2]: h = 1, two pieces, [0, 1] and [1, 2]; messages 1 + 2.
    area = 0.0 + 0.5 * (f(0.0) + f(1.0)) * 1.0
    area += 0.5 * (f(1.0) + f(2.0)) * 1.0
    got = oracles.savina_trapezoid(resolved("savina_trapezoid", {"pieces": 2, "workers": 1, "left": 0.0,
                                                                 "right": 2.0}))
    assert got.answer == f"workers_reported=1 pieces=2 areas_hash={fnv(bits(area)):016x} area={area:.17g}"
    assert got.messages == 3


def test_trapezoid_pieces_are_truncated_as_savinas():
    # pieces=3, workers=2 on [0, 1]: each range 0.5 holds int(0.5 / (1/3)) = int(1.4999...) = 1
    # piece, so 2 pieces in all, as Savina's int conversion gives.
    params = {"pieces": 3, "workers": 2, "left": 0.0, "right": 1.0}
    got = oracles.savina_trapezoid(resolved("savina_trapezoid", params))
    assert " pieces=2 " in got.answer
    assert _native.run("savina_trapezoid", params)["answer"] == got.answer


def test_trapezoid_oracle_tells_a_nudged_input():
    base = resolved("savina_trapezoid", {"pieces": 400, "workers": 4})
    nudged = dict(base, left=math.nextafter(float(base["left"]), 2.0))
    assert oracles.savina_trapezoid(base).answer != oracles.savina_trapezoid(nudged).answer


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_trapezoid_answers_as_its_oracle(dispatcher):
    # The master adds the areas in worker order: the same bits whatever order they come in.
    params = {"pieces": 20_000, "workers": 16, **dispatcher}
    result = _native.run("savina_trapezoid", params)
    expected = oracles.savina_trapezoid(resolved("savina_trapezoid", params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert _native.expect("savina_trapezoid", params) == {"answer": expected.answer,
                                                         "messages": expected.messages}
    assert result["metrics"]["sequential_ns"] > 0


@pytest.mark.parametrize("params, name", [
    ({"pieces": 0}, "pieces"),
    ({"workers": 0}, "workers"),
    ({"left": -1.0}, "left"),
    ({"left": 3.0, "right": 3.0}, "right"),
    ({"left": 4.0, "right": 2.0}, "right"),
    ({"workers": 20_000, "dispatcher": "active_obj"}, "workers"),
])
def test_trapezoid_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_trapezoid", params)


def test_trapezoid_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_trapezoid", {"pieces": 100, "workers": 2}, fault="wrong_answer")


# -- savina_piprecision ---------------------------------------------------------------------------

def test_piprecision_oracle_worked_by_hand():
    # precision=3, workers=1: tolerance 0.001.
    #   term 0 = 4 - 1/2 - 1/5 - 1/6 = 3.13333...
    #   term 1 = (4/9 - 2/12 - 1/13 - 1/14) / 16 = 0.0080891...
    #   term 2 = (4/17 - 2/20 - 1/21 - 1/22) / 256 = 0.000164...  <= 0.001: the last summed
    #   sum 3.14159... -> "3.141"; the one worker gets min(3, 10) = 3 indices at first, and one
    #   more for each of terms 0 and 1: 5 terms computed, 1 + 2*5 messages.
    got = oracles.savina_piprecision(resolved("savina_piprecision", {"precision": 3, "workers": 1}))
    assert got.answer == f"digits=3 terms_summed=3 leading=3.141 digits_hash={fnv(1, 4, 1):016x}"
    assert (got.messages, got.metrics) == (11, {"terms_computed": 5})


def test_piprecision_machin_pi():
    assert str(oracles.machin_pi(50)) == "314159265358979323846264338327950288419716939937510"


def test_piprecision_oracle_tells_a_nudged_input():
    base = resolved("savina_piprecision", {"precision": 80, "workers": 1})
    assert oracles.savina_piprecision(base).answer != oracles.savina_piprecision(dict(base, precision=81)).answer


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("workers", [1, 7])
def test_piprecision_answers_as_its_oracle(dispatcher, workers):
    # With several workers the terms come back in any order and the terms asked for past the
    # last needed vary: the answer (the sum up to it, added in index order) does not.
    params = {"precision": 400, "workers": workers, **dispatcher}
    result = _native.run("savina_piprecision", params)
    computed = int(result["metrics"]["terms_computed"])
    expected = oracles.savina_piprecision(resolved("savina_piprecision", params), computed)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert result["metrics"]["sequential_ns"] > 0
    # Every term up to the last needed, and at most the first requests' worth past it.
    summed = int(expected.answer.split("terms_summed=")[1].split()[0])
    assert summed <= computed <= summed - 1 + min(400, 10 * workers)


def test_the_piprecision_oracle_takes_a_runs_term_count_only_within_what_the_master_can_ask():
    # 7 workers: 70 first requests, one more per term before the last needed (K), none after it
    # arrives: K + 1 .. 70 + K terms, whatever the schedule.
    params = resolved("savina_piprecision", {"precision": 400, "workers": 7})
    summed = int(oracles.savina_piprecision(dict(params, workers=1)).answer.split("terms_summed=")[1].split()[0])
    last = summed - 1
    for outside in (last, 70 + last + 1):
        with pytest.raises(AssertionError):
            oracles.savina_piprecision(params, outside)
    assert oracles.savina_piprecision(params, 70 + last).messages == 1 + 2 * (70 + last)


@pytest.mark.parametrize("params, name", [
    ({"precision": 0}, "precision"),
    ({"workers": 0}, "workers"),
    ({"workers": 10_000, "dispatcher": "active_obj"}, "workers"),
])
def test_piprecision_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_piprecision", params)


def test_piprecision_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_piprecision", {"precision": 50, "workers": 2}, fault="wrong_answer")
