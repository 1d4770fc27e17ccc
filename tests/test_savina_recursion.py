"""Savina's recursive parallelism benchmarks of group E (savina_quicksort, savina_nqueenk,
savina_fib): their oracles on cases worked out by hand, the kernels' answers at small sizes on a
few dispatchers, bad parameters refused with a message naming the parameter, the kernels' checks
catching a wrong answer, and the oracles telling a nudged input apart."""

from __future__ import annotations

import oracles
import pytest
from savina_support import DISPATCHERS, fnv, resolved

from labctl import _native


def run_as_its_oracle(kernel: str, params: dict) -> dict:
    result = _native.run(kernel, params)
    expected = oracles.ORACLES[kernel](resolved(kernel, params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert result["metrics"]["sequential_ns"] > 0
    return result


# -- savina_quicksort -----------------------------------------------------------------------------

def test_quicksort_oracle_worked_by_hand():
    # values=4, threshold=3, seed=1; Savina's PseudoRandom value = (value*1309 + 13849) & 65535:
    #   1 -> 15158 -> 63799 -> 33876 -> 55197; modulo max_value 10: [8, 9, 6, 7].
    #   The root has 4 >= 3 values: pivot [8, 9, 6, 7][2] = 6; below [] and above [8, 9, 7], which
    #   has 3 >= 3: pivot [8, 9, 7][1] = 9, below [8, 7] and above [], both leaves. 5 agents,
    #   5 Sorts and 4 sorted parts.
    got = oracles.savina_quicksort(resolved("savina_quicksort", {"values": 4, "threshold": 3, "seed": 1,
                                                                 "max_value": 10}))
    assert got.answer == f"values=4 sorted=1 permutation=1 agents=5 sorted_hash={fnv(6, 7, 8, 9):016x}"
    assert got.messages == 9


def test_quicksort_oracle_tells_a_nudged_input_apart():
    base = resolved("savina_quicksort", {"values": 2000, "threshold": 64})
    assert oracles.savina_quicksort(base).answer != oracles.savina_quicksort(dict(base, seed=base["seed"] + 1)).answer
    assert oracles.savina_quicksort(base).answer != oracles.savina_quicksort(dict(base, values=1999)).answer


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("size", [{"values": 20_000, "threshold": 500},
                                  {"values": 3000, "threshold": 40, "max_value": 100, "seed": 77}],
                         ids=["savina_values", "many_equal"])
def test_quicksort_answers_as_its_oracle(dispatcher, size):
    params = {**size, **dispatcher}
    result = run_as_its_oracle("savina_quicksort", params)
    assert result["answer"] == _native.expect("savina_quicksort", params)["answer"]


def test_quicksort_below_the_threshold_is_one_agent():
    result = run_as_its_oracle("savina_quicksort", {"values": 100, "threshold": 101})
    assert " agents=1 " in result["answer"] and result["messages_processed"] == 1


@pytest.mark.parametrize("params, name", [
    ({"values": 0}, "values"),
    ({"threshold": 0}, "threshold"),
    ({"max_value": 0}, "max_value"),
    ({"seed": 70_000}, "seed"),
    # 20,000 values split down to 4 make thousands of agents: a thread each is refused.
    ({"values": 20_000, "threshold": 4, "dispatcher": "active_obj"}, "values"),
])
def test_quicksort_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_quicksort", params)


def test_quicksort_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_quicksort", {"values": 1000, "threshold": 50}, fault="wrong_answer")


# -- savina_nqueenk -------------------------------------------------------------------------------

def test_nqueenk_oracle_worked_by_hand():
    # size=4: the two solutions, rows by column, (1, 3, 0, 2) and (2, 0, 3, 1), packed 4 bits a row.
    # threshold=2: boards handed out at depth 0 (1), 1 (4) and 2 (the 6 pairs two apart or more:
    # 0-2, 0-3, 1-3 and back), 11 in all: 1 Start + 11 x 3 - 1 + 2 solutions = 35.
    got = oracles.savina_nqueenk(resolved("savina_nqueenk", {"size": 4, "threshold": 2}))
    packed = [1 | 3 << 4 | 0 << 8 | 2 << 12, 2 | 0 << 4 | 3 << 8 | 1 << 12]
    fingerprint = sum(oracles._d_mix64(p) for p in packed) % 2**64
    assert got.answer == f"solutions=2 solutions_hash={fingerprint:016x} invalid=0"
    assert (got.messages, got.metrics) == (35, {"solutions": 2})


@pytest.mark.parametrize("size, solutions", [(1, 1), (2, 0), (3, 0), (5, 10), (6, 4), (8, 92), (9, 352)])
def test_nqueenk_oracle_counts_as_savinas_table(size, solutions):
    got = oracles.savina_nqueenk(resolved("savina_nqueenk", {"size": size}))
    assert got.metrics == {"solutions": solutions}


def test_nqueenk_oracle_tells_a_nudged_input_apart():
    six = oracles.savina_nqueenk(resolved("savina_nqueenk", {"size": 6}))
    assert six != oracles.savina_nqueenk(resolved("savina_nqueenk", {"size": 7}))
    assert six.answer == oracles.savina_nqueenk(resolved("savina_nqueenk", {"size": 6, "threshold": 2})).answer
    assert six.messages != oracles.savina_nqueenk(resolved("savina_nqueenk", {"size": 6, "threshold": 2})).messages


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("size", [{"size": 8}, {"size": 7, "threshold": 7, "workers": 3}], ids=["t4", "t7"])
def test_nqueenk_answers_as_its_oracle(dispatcher, size):
    run_as_its_oracle("savina_nqueenk", {**size, **dispatcher})


def test_nqueenk_at_savinas_size_finds_savinas_14200():
    result = _native.run("savina_nqueenk", {"dispatcher": "thread_pool", "threads": 2})
    assert result["answer"].startswith("solutions=14200 ") and result["answer"].endswith(" invalid=0")
    assert result["metrics"]["solutions"] == 14200


@pytest.mark.parametrize("dispatcher", DISPATCHERS[:3], ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("limit", [1, 50, 92])
def test_nqueenk_at_its_limit_stops_between_the_limit_and_all(dispatcher, limit):
    # At the limit the work already handed out still finishes: the count lies in [limit, 92].
    params = {"size": 8, "threshold": 1, "solutions_limit": limit, **dispatcher}
    result = _native.run("savina_nqueenk", params)
    found = int(result["metrics"]["solutions"])
    assert limit <= found <= 92
    expected = oracles.savina_nqueenk(resolved("savina_nqueenk", params), found, result["messages_processed"])
    assert result["answer"] == expected.answer == "limit_reached=1 at_most_all=1 invalid=0"
    # Each board handed out is at least its Done and its delivery; each solution one more.
    assert result["messages_processed"] >= 1 + 2 + found


@pytest.mark.parametrize("solutions, messages", [(49, 100), (93, 100), (60, 10**9), (60, 60)])
def test_the_nqueenk_oracle_takes_a_runs_figures_only_within_what_its_parameters_allow(solutions, messages):
    # Size 8 has 92 solutions; at limit 50 a run finds 50 to 92, in at least a message a solution
    # and the Start and at most the whole search's (9 boards handed out at threshold 1: 119).
    params = resolved("savina_nqueenk", {"size": 8, "threshold": 1, "solutions_limit": 50})
    with pytest.raises(AssertionError):
        oracles.savina_nqueenk(params, solutions, messages)
    assert oracles.savina_nqueenk(params, 60, 100).metrics == {"solutions": 60}
    # Where the limit is all 92, all are found whatever the schedule.
    with pytest.raises(AssertionError):
        oracles.savina_nqueenk(resolved("savina_nqueenk", {"size": 8, "threshold": 1, "solutions_limit": 92}), 91, 100)


@pytest.mark.parametrize("params, name", [
    ({"size": 17}, "size"),
    ({"size": 0}, "size"),
    ({"threshold": 0}, "threshold"),
    ({"workers": 0}, "workers"),
    ({"solutions_limit": 0}, "solutions_limit"),
    ({"workers": 20_000, "dispatcher": "active_obj"}, "workers"),
])
def test_nqueenk_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_nqueenk", params)


def test_nqueenk_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_nqueenk", {"size": 6}, fault="wrong_answer")


# -- savina_fib -----------------------------------------------------------------------------------

def test_fib_oracle_worked_by_hand():
    # fib(5): 5 asks 4 and 3; 4 asks 3 and 2; each 3 asks 2 and 1: fib = 2 + 1 + 1 + 1 = 5 from
    # 9 agents (5, 4, 3, 3 and five leaves), 9 requests and 8 answers.
    got = oracles.savina_fib(resolved("savina_fib", {"n": 5}))
    assert (got.answer, got.messages) == ("fib=5 agents=9", 17)
    # Savina's N = 25: fib 75,025 from 2 x 75,025 - 1 agents.
    assert oracles.savina_fib(resolved("savina_fib", {"n": 25})).answer == "fib=75025 agents=150049"


def test_fib_oracle_tells_a_nudged_input_apart():
    assert oracles.savina_fib(resolved("savina_fib", {"n": 12})) != oracles.savina_fib(resolved("savina_fib", {"n": 13}))


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("n", [1, 2, 3, 11])
def test_fib_answers_as_its_oracle(dispatcher, n):
    params = {"n": n, **dispatcher}
    run_as_its_oracle("savina_fib", params)
    assert _native.expect("savina_fib", params)["answer"] == oracles.savina_fib(resolved("savina_fib", params)).answer


def test_fib_at_savinas_n_on_a_pool():
    run_as_its_oracle("savina_fib", {"n": 25, "dispatcher": "work_stealing", "threads": 2})


@pytest.mark.parametrize("params, name", [
    ({"n": 0}, "n"),
    ({"n": 33}, "n"),
    # Savina's N = 25 makes 150,049 agents: a thread each is refused, naming n.
    ({"n": 25, "dispatcher": "active_obj"}, "n"),
])
def test_fib_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_fib", params)


def test_fib_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_fib", {"n": 10}, fault="wrong_answer")
