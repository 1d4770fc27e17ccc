"""Savina's trees of group C (savina_uct, savina_facloc): their oracles on cases worked out by
hand, the kernels' answers at small sizes on a few dispatchers (the same whatever the schedule),
bad parameters refused with a message naming the parameter, the kernels' checks catching a wrong
answer, and the oracles telling a nudged input apart."""

from __future__ import annotations

import math

import oracles
import pytest
from savina_support import DISPATCHERS, fnv, resolved

from labctl import _native

WORD = 2**64


def lcg(steps: int) -> int:
    x = steps
    for _ in range(steps):
        x = (x * 6364136223846793005 + 1442695040888963407) % WORD
    return x


# -- savina_uct -----------------------------------------------------------------------------------

def polar_size(random: oracles.SplitMix64, mean: int, deviation: int) -> int:
    """Java's nextGaussian by the polar method from `random`, as a size: the first pair inside
    the unit circle, v1 * sqrt(-2 ln s / s), times the deviation plus the mean, rounded half up."""
    while True:
        v1, v2 = 2 * random.unit() - 1, 2 * random.unit() - 1
        s = v1 * v1 + v2 * v2
        if 0 < s < 1:
            size = math.floor(v1 * math.sqrt(-2 * math.log(s) / s) * deviation + mean + 0.5)
            assert size > 0  # with these means no second draw is needed
            return size


def test_uct_oracle_worked_by_hand_without_grants():
    # nodes=4, binomial=3: the root and its three children (ids 1-3, depth 1) fill the budget
    # (4 + 3 > 4), so no node is granted children. The children's size is the root's draw from
    # stream (seed, 0); each child does a try loop of 100 steps and a traversal of `size` steps.
    # Messages: GenerateTree + 3 x (TryGenerateChildren, ShouldGenerate, Traverse, Tally) = 13.
    size = polar_size(oracles.SplitMix64(2, 0), 20, 5)
    got = oracles.savina_uct(resolved("savina_uct", {"nodes": 4, "binomial": 3, "avg_comp": 20, "stdev_comp": 5}))
    work = (3 * lcg(100) + 3 * lcg(size)) % WORD
    shape = sum(fnv(i, 0, 1, size, 0) for i in (1, 2, 3)) % WORD
    assert got.answer == (f"nodes=4 leaves=3 internal=0 urgent=0 grants=0 height=1 level_nodes=1,3 "
                          f"comp_sum={3 * size} work_sum={work} shape={shape:016x}")
    assert got.messages == 13


def test_uct_oracle_worked_by_hand_with_one_grant():
    # nodes=7, binomial=3: room for one family. Level 1 (ids 1, 2, 3) is answered in id order:
    # the first whose coin (below(2) of its own stream) is 1 gets ids 4-6 at depth 2, with a size
    # drawn next from its stream, then below(100) <= 50 makes child below(3) urgent. Then the
    # budget is spent. Messages: 1 + 4 x 6 non-root nodes + 2 (the grant, the UpdateGrant) = 27.
    seed = 5
    params = resolved("savina_uct", {"nodes": 7, "binomial": 3, "avg_comp": 30, "stdev_comp": 4, "seed": seed})
    granted = next(i for i in (1, 2, 3) if oracles.SplitMix64(seed, i).below(2) == 1)
    root_size = polar_size(oracles.SplitMix64(seed, 0), 30, 4)
    random = oracles.SplitMix64(seed, granted)
    assert random.below(2) == 1  # the coin
    size = polar_size(random, 30, 4)
    urgent_child = random.below(3) if random.below(100) <= 50 else -1
    nodes = {i: (0, 1, root_size, 0) for i in (1, 2, 3)}
    nodes.update({4 + i: (granted, 2, size, int(i == urgent_child)) for i in range(3)})
    work = sum(lcg(100) + lcg(c) for _, _, c, _ in nodes.values()) % WORD
    shape = sum(fnv(i, *v) for i, v in nodes.items()) % WORD
    got = oracles.savina_uct(params)
    assert got.answer == (f"nodes=7 leaves=5 internal=1 urgent={int(urgent_child >= 0)} grants=1 height=2 "
                          f"level_nodes=1,3,3 comp_sum={3 * root_size + 3 * size} work_sum={work} "
                          f"shape={shape:016x}")
    assert got.messages == 27


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("params", [
    {"nodes": 300, "binomial": 3, "avg_comp": 30, "stdev_comp": 8},
    {"nodes": 500, "avg_comp": 20, "stdev_comp": 5, "urgent_percent": 80, "seed": 11},
], ids=["binomial3", "binomial10"])
def test_uct_answers_as_its_oracle(dispatcher, params):
    params = {**params, **dispatcher}
    result = _native.run("savina_uct", params)
    expected = oracles.savina_uct(resolved("savina_uct", params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert _native.expect("savina_uct", params) == {"answer": expected.answer, "messages": expected.messages}
    assert result["metrics"]["sequential_ns"] > 0


def test_uct_shape_is_the_parameters_whatever_the_schedule():
    # The tree's shape comes from the node budget and each node's own stream, breadth-first:
    # repeated runs on two threads agree with each other and with the sequential program.
    params = {"nodes": 2000, "avg_comp": 5, "stdev_comp": 1, "dispatcher": "work_stealing", "threads": 2}
    answers = {_native.run("savina_uct", params)["answer"] for _ in range(3)}
    assert answers == {oracles.savina_uct(resolved("savina_uct", params)).answer}


def test_uct_oracle_tells_a_nudged_input_apart():
    base = resolved("savina_uct", {"nodes": 300, "binomial": 3, "avg_comp": 30, "stdev_comp": 8})
    answer = oracles.savina_uct(base).answer
    for nudge in ({"seed": 3}, {"urgent_percent": 10}, {"work_scale": 2}, {"avg_comp": 31}):
        assert oracles.savina_uct({**base, **nudge}).answer != answer, nudge


@pytest.mark.parametrize("params, name", [
    ({"nodes": 10}, "nodes"),  # fewer than the root and its 10 children
    ({"nodes": 1}, "nodes"),
    ({"binomial": 0}, "binomial"),
    ({"avg_comp": 0}, "avg_comp"),
    ({"urgent_percent": 101}, "urgent_percent"),
    ({"work_scale": 0}, "work_scale"),
    ({"seed": -1}, "seed"),
    ({"nodes": 20_000, "dispatcher": "active_obj"}, "nodes"),
])
def test_uct_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_uct", params)


def test_uct_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_uct", {"nodes": 40, "binomial": 3}, fault="wrong_answer")


# -- savina_facloc --------------------------------------------------------------------------------

def dist(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]))


def points(seed: int, count: int, grid: float) -> list[tuple[float, float]]:
    random = oracles.SplitMix64(seed, 0)
    out = []
    for _ in range(count):
        x = random.unit() * grid
        out.append((x, random.unit() * grid))
    return out


def test_facloc_oracle_worked_by_hand_one_point():
    # One point: the root (the 500 x 500 square) keeps it at its distance from the midpoint
    # (250, 250), far below the threshold 2 * sqrt(2) * 500; Savina's root counts its facility.
    # Messages: the Customer, the root's NextCustomer, the producer's RequestExit = 3.
    (p,) = points(9, 1, 500.0)
    got = oracles.savina_facloc(resolved("savina_facloc", {"points": 1, "seed": 9}))
    assert got.answer == (f"facilities=1 splits=0 quadrants=1 customers=1 max_depth=0 "
                          f"total_cost={dist(p, (250.0, 250.0)):.17g}")
    assert got.messages == 3


def test_facloc_oracle_worked_by_hand_one_split():
    # A threshold of almost 0 (alpha 1e-6) and cutoff_depth 1: the first point makes the root
    # (grid 2, midpoint (1, 1)) open and split into its four quadrants, which cannot split again.
    # The child holding the first point takes it; the second is forwarded to the child holding it.
    # Each costs its distance to the nearer of (1, 1) and its child's midpoint; the total sums
    # the children in Savina's order (top left, top right, bottom left, bottom right).
    # Messages: 2 Customers to the root + 1 forward + 2 NextCustomer + 5 RequestExit + 4
    # ConfirmExit = 14.
    p1, p2 = points(4, 2, 2.0)
    boxes = [(0, 1, 1, 2), (1, 1, 2, 2), (0, 0, 1, 1), (1, 0, 2, 1)]

    def child(p):
        return next(i for i, (x1, y1, x2, y2) in enumerate(boxes) if x1 <= p[0] <= x2 and y1 <= p[1] <= y2)

    def cost(p):
        x1, y1, x2, y2 = boxes[child(p)]
        return min(dist(p, (1.0, 1.0)), dist(p, ((x1 + x2) / 2, (y1 + y2) / 2)))

    per_child = [0.0] * 4
    for p in (p1, p2):
        per_child[child(p)] += cost(p)
    total = 0.0
    for c in per_child:
        total += c
    got = oracles.savina_facloc(resolved("savina_facloc", {"points": 2, "seed": 4, "grid_size": 2.0,
                                                           "alpha": 1e-6, "cutoff_depth": 1}))
    assert got.answer == (f"facilities=1 splits=1 quadrants=5 customers=2 max_depth=1 total_cost={total:.17g}")
    assert got.messages == 14


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("params", [{"points": 3000}, {"points": 2000, "alpha": 0.5, "cutoff_depth": 3, "seed": 8}],
                         ids=["unlimited", "cutoff"])
def test_facloc_answers_as_its_oracle(dispatcher, params):
    params = {**params, **dispatcher}
    result = _native.run("savina_facloc", params)
    expected = oracles.savina_facloc(resolved("savina_facloc", params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert _native.expect("savina_facloc", params) == {"answer": expected.answer, "messages": expected.messages}
    assert result["metrics"]["sequential_ns"] > 0


def test_facloc_is_the_same_whatever_the_schedule():
    # Every quadrant hears its customers from its parent alone, in the parent's order: repeated
    # runs on two threads give the sequential program's tree and cost, bit for bit.
    params = {"points": 5000, "alpha": 0.3, "dispatcher": "thread_pool", "threads": 2}
    answers = {_native.run("savina_facloc", params)["answer"] for _ in range(3)}
    assert answers == {oracles.savina_facloc(resolved("savina_facloc", params)).answer}


def test_facloc_oracle_tells_a_nudged_input_apart():
    base = resolved("savina_facloc", {"points": 1500})
    answer = oracles.savina_facloc(base).answer
    nudged = {**base, "grid_size": math.nextafter(500.0, 0.0)}  # every point moves by an ulp or so
    assert oracles.savina_facloc(nudged).answer != answer
    assert oracles.savina_facloc({**base, "seed": 123_457}).answer != answer
    assert oracles.savina_facloc({**base, "cutoff_depth": 1}).answer != answer


@pytest.mark.parametrize("params, name", [
    ({"points": 0}, "points"),
    ({"grid_size": 0.0}, "grid_size"),
    ({"alpha": 0.0}, "alpha"),
    ({"cutoff_depth": -1}, "cutoff_depth"),
    ({"seed": -1}, "seed"),
    # 20,000 points at a low threshold make 19,405 quadrants: a thread each is too many.
    ({"points": 20_000, "alpha": 0.01, "dispatcher": "active_obj"}, "points"),
])
def test_facloc_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_facloc", params)


def test_facloc_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_facloc", {"points": 200}, fault="wrong_answer")
