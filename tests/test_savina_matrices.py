"""Savina's matrix benchmarks of group D (savina_recmatmul, savina_apsp, savina_sor): their oracles
on cases worked out by hand, the kernels' answers at small sizes on a few dispatchers, bad
parameters refused with a message naming the parameter, the kernels' checks catching a wrong
answer, and the oracles telling a nudged input apart."""

from __future__ import annotations

import oracles
import pytest
from savina_support import DISPATCHERS, bits, fnv, resolved

from labctl import _native


def answers_as_its_oracle(kernel: str, params: dict) -> None:
    result = _native.run(kernel, params)
    expected = oracles.oracle(kernel, resolved(kernel, params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert _native.expect(kernel, params) == {"answer": expected.answer, "messages": expected.messages}
    assert set(result["metrics"]) == {"sequential_ns"}


# -- savina_recmatmul -----------------------------------------------------------------------------

def test_recmatmul_oracle_worked_by_hand():
    # n=2: A = [[0, 0], [1, 1]], B = [[0, 1], [0, 1]], so C = [[0, 0], [0, 2]] (= 2*i*j).
    # threshold=1: the whole product (4 elements) splits into 8 items of one element each: 9
    # items, 8 multiplied; 27 messages (a Work to a worker and a Done each, 8 Works to the master).
    got = oracles.savina_recmatmul(resolved("savina_recmatmul", {"data_length": 2, "threshold": 1}))
    c_hash = fnv(bits(0.0), bits(0.0), bits(0.0), bits(2.0))
    assert got.answer == f"work_items=9 leaves=8 c_hash={c_hash:016x} c_sum=2 off_closed_form=0"
    assert got.messages == 27
    # threshold=4: one item, multiplied by the worker it goes to: 3 messages counting the Start.
    whole = oracles.savina_recmatmul(resolved("savina_recmatmul", {"data_length": 2, "threshold": 4}))
    assert whole.answer.startswith("work_items=1 leaves=1 ") and whole.messages == 3


def test_recmatmul_defaults_are_savinas():
    params = resolved("savina_recmatmul", {})
    assert (params["data_length"], params["threshold"], params["workers"]) == (1024, 16384, 20)
    # 1,024^2 elements split three times to 128 x 128: 1 + 8 + 64 + 512 items.
    assert _native.expect("savina_recmatmul", {})["messages"] == 3 * 585


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_recmatmul_answers_as_its_oracle(dispatcher):
    answers_as_its_oracle("savina_recmatmul", {"data_length": 64, "threshold": 64, "workers": 6, **dispatcher})


def test_recmatmul_one_worker_and_no_split():
    answers_as_its_oracle("savina_recmatmul", {"data_length": 32, "threshold": 4096, "workers": 1})
    answers_as_its_oracle("savina_recmatmul", {"data_length": 8, "threshold": 1, "workers": 3})


def test_recmatmul_oracle_tells_a_different_size_apart():
    base = oracles.savina_recmatmul(resolved("savina_recmatmul", {"data_length": 16, "threshold": 16}))
    other = oracles.savina_recmatmul(resolved("savina_recmatmul", {"data_length": 16, "threshold": 64}))
    assert base.answer.split()[2:] == other.answer.split()[2:]  # the same C
    assert base.answer != other.answer and base.messages != other.messages


@pytest.mark.parametrize("params, name", [
    ({"data_length": 48}, "data_length"),
    ({"data_length": 0}, "data_length"),
    ({"threshold": 0}, "threshold"),
    ({"data_length": 4096, "threshold": 1}, "threshold"),
    ({"workers": 0}, "workers"),
    ({"workers": 20_000, "dispatcher": "active_obj"}, "workers"),
])
def test_recmatmul_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_recmatmul", params)


def test_recmatmul_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_recmatmul", {"data_length": 16, "threshold": 16}, fault="wrong_answer")


# -- savina_apsp ----------------------------------------------------------------------------------

def test_apsp_oracle_worked_by_hand():
    # nodes=3, max_weight=10: PseudoRandom(3) steps 3 -> 17776 -> 17353 -> 53470 (value*1309 +
    # 13849 mod 65536), so w(0,1) = 17776 % 10 + 1 = 7, w(0,2) = 17353 % 10 + 1 = 4, w(1,2) =
    # 53470 % 10 + 1 = 1. Shortest: 0-1 = min(7, 4 + 1) = 5, 0-2 = 4, 1-2 = 1.
    got = oracles.savina_apsp(resolved("savina_apsp", {"nodes": 3, "block_size": 1, "max_weight": 10}))
    matrix = [0, 5, 4, 5, 0, 1, 4, 1, 0]
    assert got.answer == f"nodes=3 dist_hash={fnv(*matrix):016x} dist_sum=20 dist_max=5"
    # 9 blocks of one node, 4 neighbours each: per block a Start, 4 x 3 Values and a Final.
    assert got.messages == 9 * (2 + 3 * 4)
    # With weights up to 5 (2, 4, 1): 0-1 = 2, 1-2 = 1, 0-2 = min(4, 2 + 1) = 3.
    small = oracles.savina_apsp(resolved("savina_apsp", {"nodes": 3, "block_size": 3, "max_weight": 5}))
    assert small.answer == f"nodes=3 dist_hash={fnv(0, 2, 3, 2, 0, 1, 3, 1, 0):016x} dist_sum=12 dist_max=3"
    assert small.messages == 2  # one block: its Start and its Final


def test_apsp_defaults_are_savinas():
    params = resolved("savina_apsp", {})
    assert (params["nodes"], params["block_size"], params["max_weight"]) == (300, 50, 100)
    assert _native.expect("savina_apsp", {})["messages"] == 36 * (2 + 300 * 10)


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_apsp_answers_as_its_oracle(dispatcher):
    answers_as_its_oracle("savina_apsp", {"nodes": 24, "block_size": 6, **dispatcher})


@pytest.mark.parametrize("params", [{"nodes": 7, "block_size": 7}, {"nodes": 10, "block_size": 1, "max_weight": 3},
                                    {"nodes": 30, "block_size": 10, "max_weight": 1000}])
def test_apsp_other_shapes(params):
    answers_as_its_oracle("savina_apsp", {**params, "dispatcher": "work_stealing", "threads": 2})


def test_apsp_oracle_tells_a_nudged_weight_apart():
    base = oracles.savina_apsp(resolved("savina_apsp", {"nodes": 12, "block_size": 4}))
    other = oracles.savina_apsp(resolved("savina_apsp", {"nodes": 12, "block_size": 4, "max_weight": 99}))
    assert base.answer != other.answer


def test_apsp_refuses_nodes_not_a_multiple_of_block_size():
    with pytest.raises(ValueError, match="'nodes'.*'block_size'"):
        _native.run("savina_apsp", {"nodes": 30, "block_size": 7})


@pytest.mark.parametrize("params, name", [
    ({"nodes": 0}, "nodes"),
    ({"block_size": 0}, "block_size"),
    ({"max_weight": 0}, "max_weight"),
    ({"nodes": 20, "block_size": 30}, "block_size"),
])
def test_apsp_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_apsp", params)


def test_apsp_active_obj_refuses_too_many_blocks():
    with pytest.raises(ValueError, match="nodes=4000 block_size=20"):
        _native.run("savina_apsp", {"nodes": 4000, "block_size": 20, "dispatcher": "active_obj"})


def test_apsp_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_apsp", {"nodes": 8, "block_size": 4}, fault="wrong_answer")


# -- savina_sor -----------------------------------------------------------------------------------

def test_sor_oracle_worked_by_hand():
    # size=2, iterations=2, omega=1: each element has the two others of its colour's opposite as
    # neighbours; an update is (a + b) / 4. Start values 1e-6 / (v + 1) from PseudoRandom(10101010).
    values = []
    v = 10101010
    for _ in range(4):
        v = (v * 1309 + 13849) & 65535
        values.append(1.0 / (v + 1) * 1e-6)
    g00, g01, g10, g11 = values
    # Colour 0 is (0,1) and (1,0): two updates; colour 1 is (0,0) and (1,1): one update.
    # (0,1)'s neighbours: vertical (1,1), horizontal (0,0); (1,0)'s: (0,0), (1,1).
    g01, g10 = 0.25 * (0.0 + g11 + g00) + 0.0 * g01, 0.25 * (0.0 + g00 + g11) + 0.0 * g10
    # (0,0)'s neighbours: (1,0), (0,1); (1,1)'s: (0,1), (1,0).
    g00, g11 = 0.25 * (0.0 + g10 + g01) + 0.0 * g00, 0.25 * (0.0 + g01 + g10) + 0.0 * g11
    g01, g10 = 0.25 * (0.0 + g11 + g00) + 0.0 * g01, 0.25 * (0.0 + g00 + g11) + 0.0 * g10
    got = oracles.savina_sor(resolved("savina_sor", {"size": 2, "iterations": 2, "omega": 1.0}))
    # Values: colour 1 sends 2 rounds x 2 neighbours each, colour 0 one round: 8 + 4 = 12.
    # The runner's half is column 0, the peer's column 1.
    total = (0.0 + g00 + g10) + (0.0 + g01 + g11)
    assert got.answer == (f"cells=4 values_received=12 grid_hash={fnv(*map(bits, (g00, g01, g10, g11))):016x} "
                          f"total={total:.17g}")
    assert got.messages == 4 + 2 * 4 + 12


def test_sor_defaults_are_savinas():
    params = resolved("savina_sor", {})
    assert (params["size"], params["iterations"], params["omega"]) == (20, 100, 1.25)
    # 1,520 neighbour links, half from each colour: 760 x 100 + 760 x 99 values.
    assert _native.expect("savina_sor", {})["messages"] == 4 + 800 + 760 * 199


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_sor_answers_as_its_oracle(dispatcher):
    answers_as_its_oracle("savina_sor", {"size": 9, "iterations": 12, **dispatcher})


def test_sor_default_grid_is_bit_for_bit():
    answers_as_its_oracle("savina_sor", {"dispatcher": "work_stealing", "threads": 2})


def test_sor_oracle_tells_a_nudged_omega_apart():
    base = resolved("savina_sor", {"size": 5, "iterations": 6})
    nudged = dict(base, omega=1.2500000000000002)
    assert oracles.savina_sor(base).answer != oracles.savina_sor(nudged).answer


@pytest.mark.parametrize("params, name", [
    ({"size": 1}, "size"),
    ({"iterations": 1}, "iterations"),
    ({"omega": 2.5}, "omega"),
    ({"size": 150, "dispatcher": "active_obj"}, "size"),
])
def test_sor_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_sor", params)


def test_sor_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_sor", {"size": 4, "iterations": 4}, fault="wrong_answer")
