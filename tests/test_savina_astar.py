"""Savina's 27. A* / Guided Search (savina_astar, group F): the oracle on a grid worked out by
hand, the kernel's path against a plain breadth-first search's distance on a few dispatchers
(the work items, which the schedule decides, taken from the run), bad parameters refused with a
message naming the parameter, and the kernel's check catching a wrong answer."""

from __future__ import annotations

import oracles
import pytest
from savina_support import DISPATCHERS, fnv

from labctl import _native


def resolved(params: dict) -> dict:
    return _native.validate("savina_astar", params, scoped=False)


def test_astar_oracle_worked_by_hand():
    # grid_size=2, seed=0: nodes 0..7 = 4i + 2j + k; the steps +k, +j, +j+k, +i, +i+k, +i+j,
    # clamped. The top bits of SplitMix64(0, 0)'s values, six per node but where the sixth step is
    # taken without a draw (nodes 5, 6 and 7 have kept nothing before it):
    rng = oracles.SplitMix64(0, 0)
    draws = [rng.next() >> 63 for _ in range(40)]
    assert draws == [1, 0, 0, 1, 0, 0,  0, 1, 0, 1, 0, 1,  1, 1, 1, 1, 0, 1,  0, 1, 1, 1, 1, 0,
                     1, 1, 0, 0, 1, 1,  1, 0, 0, 0, 1,  0, 0, 0, 0, 0]
    #   node 0: 1 0 0 1 0 0 -> 1 (+k), 4 (+i)
    #   node 1: 0 1 0 1 0 1 -> 3 (+j), 5 (+i), 7 (+i+j)
    #   node 2: 1 1 1 1 0 1 -> 3 (+k); +j is itself, +j+k is 3 again; 6 (+i); +i+j is 6 again
    #   node 3: 0 1 1 1 1 0 -> 7 (+i); the others itself or 7 again
    #   node 4: 1 1 0 0 1 1 -> 5 (+k), 6 (+j); the rest itself or repeats
    #   node 5: 1 0 0 0 1   -> +k and +i+k are itself; nothing kept, so the sixth (+i+j) without
    #                          a draw: 7
    #   node 6: 0 0 0 0 0   -> nothing kept; the sixth without a draw is itself
    #   node 7: every step is itself
    # 11 edges; the target (int(0.8 * 2) = 1 on each axis) is node 7, two hops away (0 -> 1 -> 7).
    edges = [(0, 1), (0, 4), (1, 3), (1, 5), (1, 7), (2, 3), (2, 6), (3, 7), (4, 5), (4, 6), (5, 7)]
    got = oracles.savina_astar(resolved({"grid_size": 2, "seed": 0, "threshold": 8}))
    assert got.answer == (f"edges=11 edge_hash={fnv(*(u << 32 | v for u, v in edges)):016x} reachable=1 "
                          "path_length=2 path_valid=1")
    # threshold >= 8 nodes: the origin's search covers the grid, one work item, 3 messages.
    assert (got.messages, got.metrics) == (3, {"work_items": 1})
    # Fewer: the caller passes the run's work items.
    assert oracles.savina_astar(resolved({"grid_size": 2, "seed": 0, "threshold": 1}), 4).messages == 12


def test_astar_oracle_disagrees_with_a_nudged_grid():
    base = resolved({"grid_size": 10, "threshold": 10**6})
    answers = {oracles.savina_astar(dict(base, **change)).answer
               for change in ({}, {"seed": base["seed"] + 1}, {"grid_size": 11})}
    assert len(answers) == 3


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("size, threshold, workers", [(12, 20, 4), (20, 8, 8)])
def test_astar_path_is_valid_and_as_short_as_a_breadth_first_search(dispatcher, size, threshold, workers):
    # Small thresholds: many work items, searched at once where the pool has two threads.
    params = {"grid_size": size, "threshold": threshold, "workers": workers, "work": 10, **dispatcher}
    result = _native.run("savina_astar", params)
    items = int(result["metrics"]["work_items"])
    expected = oracles.savina_astar(resolved(params), items)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert "reachable=1" in result["answer"] and "path_valid=1" in result["answer"]
    assert items > 1 and result["metrics"]["nodes_expanded"] >= 1
    assert set(result["metrics"]) == {"sequential_ns", "work_items", "nodes_expanded"}


def test_astar_at_savinas_sizes_repeatedly_finds_the_shortest_path():
    params = {"dispatcher": "work_stealing", "threads": 2}
    expected = oracles.savina_astar(resolved(params), 1)
    for _ in range(3):
        result = _native.run("savina_astar", params)
        assert result["answer"] == expected.answer
        assert result["messages_processed"] == 3 * result["metrics"]["work_items"]
    assert "path_length=37 path_valid=1" in expected.answer


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_astar_one_search_covering_the_grid_is_one_work_item(dispatcher):
    params = {"grid_size": 8, "threshold": 512, **dispatcher}
    result = _native.run("savina_astar", params)
    expected = oracles.savina_astar(resolved(params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, 3)
    assert result["metrics"]["work_items"] == 1


@pytest.mark.parametrize("size, seed", [(2, 46), (3, 37)])
def test_astar_target_out_of_reach(size, seed):
    params = {"grid_size": size, "seed": seed, "threshold": 1, "workers": 2}
    result = _native.run("savina_astar", params)
    expected = oracles.savina_astar(resolved(params), int(result["metrics"]["work_items"]))
    assert "reachable=0 path_length=0 path_valid=0" in expected.answer
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


@pytest.mark.parametrize("params, name", [
    ({"workers": 0}, "workers"),
    ({"grid_size": 1}, "grid_size"),
    ({"grid_size": 249}, "grid_size"),
    ({"threshold": 0}, "threshold"),
    ({"work": -1}, "work"),
    ({"seed": -1}, "seed"),
    ({"workers": 20_000, "dispatcher": "active_obj"}, "workers"),
])
def test_astar_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_astar", params)


def test_astar_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_astar", {"grid_size": 6, "threshold": 4}, fault="wrong_answer")


def test_the_oracle_takes_a_runs_work_items_only_within_what_the_grid_allows():
    # Each item but the origin's lowered a node's distance, which can happen at most
    # i + j + k - shortest + 1 times a node: a count past that, or none, is refused.
    params = resolved({"grid_size": 6, "seed": 0, "threshold": 1})
    for outside in (0, 10**9):
        with pytest.raises(AssertionError, match="work items, outside 1.."):
            oracles.savina_astar(params, outside)
