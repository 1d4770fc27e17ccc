"""Change points over commits (labctl.read.changes): planted steps and drifts in instruction counts and
wall time are found at their commits with their sizes; noise, failed builds and odd values are not.

Every series is built here from its levels and a seeded generator, so the oracle is the plant.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from labctl.read import changes
from labctl.read.changes import DRIFT, STEP, Change


def counts(levels, samples=3, jitter=1e-6, seed=0) -> list[list[float]]:
    """Instruction counts: each commit's samples are its level times (1 + jitter * N(0, 1))."""
    rng = np.random.default_rng(seed)
    return [list(level * (1 + jitter * rng.standard_normal(samples))) for level in levels]


def wall(levels, samples=5, spread=0.03, seed=0) -> list[list[float]]:
    """Wall times, or schedule-dependent counts: a relative standard deviation of `spread`."""
    return counts(levels, samples, spread, seed)


def steps(before: float, after: float, at: int, n: int) -> list[float]:
    return [before if i < at else after for i in range(n)]


def test_a_step_in_instruction_counts_is_one_step_at_its_commit():
    found = changes.detect(counts(steps(1e8, 1.005e8, at=12, n=25)), exact=True)
    assert len(found) == 1
    change = found[0]
    assert (change.start, change.end, change.kind) == (12, 12, STEP)
    assert change.change_pct == pytest.approx(0.5, abs=0.001)
    assert change.before == pytest.approx(1e8, rel=1e-5)
    assert change.confidence > 0.99


@pytest.mark.parametrize("seed", range(5))
def test_a_large_step_in_wall_time_is_found_at_its_commit(seed):
    found = changes.detect(wall(steps(100.0, 115.0, at=15, n=30), seed=seed), exact=False)
    assert [(c.start, c.end, c.kind) for c in found] == [(15, 15, STEP)]
    assert found[0].change_pct == pytest.approx(15, abs=2.5)
    assert found[0].confidence > 0.99


@pytest.mark.parametrize("seed", range(5))
def test_a_step_smaller_than_the_wall_time_noise_is_not_reported(seed):
    assert changes.detect(wall(steps(100.0, 101.0, at=15, n=30), seed=seed), exact=False) == []


@pytest.mark.parametrize("seed", range(10))
def test_wall_time_noise_alone_reports_nothing(seed):
    assert changes.detect(wall([100.0] * 30, seed=seed), exact=False) == []


def test_one_sample_per_commit_rarely_reports_noise_and_finds_a_clear_step():
    # With one sample a commit, sigma rests on the MAD of 29 differences alone, 30% low in one
    # series out of ten (sigma^2 half): the penalty factor's margin is for them. At 4,
    # pure noise reports something in 2.3% of these series (1000 of them; 5.7% at 3, about 15% at
    # plain BIC's 2): more than 8 in 100 would be a broken sigma or penalty (Poisson: p < 0.001).
    noisy = sum(bool(changes.detect(wall([100.0] * 30, samples=1, seed=seed), exact=False))
                for seed in range(100))
    assert noisy <= 8
    found = [changes.detect(wall(steps(100.0, 115.0, at=10, n=30), samples=1, seed=seed), False)
             for seed in range(10)]
    assert sum([(c.start, c.kind) for c in f] == [(10, STEP)] for f in found) >= 9


def test_a_slow_drift_is_one_drift_over_its_commits_with_its_total_size():
    # +0.4% a commit on commits 10..17, flat before and after: commit 17 is the first at +3.2%.
    levels = [1e8] * 10 + [1e8 * (1 + 0.004 * k) for k in range(1, 9)] + [1.032e8] * 12
    found = changes.detect(counts(levels), exact=True)
    assert [(c.start, c.end, c.kind) for c in found] == [(10, 17, DRIFT)]
    assert found[0].change_pct == pytest.approx(3.2, abs=0.3)
    assert found[0].confidence > 0.99


def test_a_step_and_a_drift_in_opposite_directions_are_both_found():
    # +2% at commit 8; then -0.5% of the base a commit on 20..25, down to 0.99.
    levels = ([1e8] * 8 + [1.02e8] * 12 + [1e8 * (1.02 - 0.005 * k) for k in range(1, 7)]
              + [0.99e8] * 14)
    found = changes.detect(counts(levels, seed=1), exact=True)
    assert [(c.start, c.end, c.kind) for c in found] == [(8, 8, STEP), (20, 25, DRIFT)]
    assert found[0].change_pct == pytest.approx(2.0, abs=0.01)
    assert found[1].change_pct == pytest.approx((0.99 / 1.02 - 1) * 100, abs=0.01)


def test_a_step_up_right_before_a_drift_down_stays_a_step():
    # Moves of opposite directions never make one drift, even one commit apart.
    levels = [1e8] * 10 + [1.05e8] + [1e8 * (1.05 - 0.01 * k) for k in range(1, 5)] + [1.01e8] * 10
    found = changes.detect(counts(levels, seed=2), exact=True)
    assert [(c.start, c.end, c.kind) for c in found] == [(10, 10, STEP), (11, 14, DRIFT)]
    assert found[0].after == pytest.approx(1.05e8, rel=1e-5)
    assert found[1].before == pytest.approx(1.05e8, rel=1e-5)


def test_a_one_commit_regression_fixed_by_the_next_is_two_steps():
    levels = [1e8] * 10 + [1.1e8] + [1e8] * 10
    found = changes.detect(counts(levels, seed=3), exact=True)
    assert [(c.start, c.end, c.kind) for c in found] == [(10, 10, STEP), (11, 11, STEP)]
    assert found[0].change_pct == pytest.approx(10, abs=0.01)
    assert found[1].change_pct == pytest.approx((1 / 1.1 - 1) * 100, abs=0.01)


@pytest.mark.parametrize("seed", range(3))
def test_schedule_dependent_counts_without_a_change_report_nothing(seed):
    assert changes.detect(wall([5e6] * 30, spread=0.02, seed=seed), exact=True) == []


@pytest.mark.parametrize("seed", range(3))
def test_a_step_in_schedule_dependent_counts_is_found(seed):
    found = changes.detect(wall(steps(5e6, 5.5e6, at=14, n=30), spread=0.02, seed=seed), True)
    assert [(c.start, c.end, c.kind) for c in found] == [(14, 14, STEP)]
    assert found[0].change_pct == pytest.approx(10, abs=1.5)


@pytest.mark.parametrize("samples", [[], [[]], [[], []], [[5.0]], [[5.0, 5.0, 5.0]],
                                     [[7.0, 7.0]] * 20, [[0.0]] * 10, [[1e8]] * 3 + [[]] + [[1e8]]])
def test_nothing_to_segment_gives_no_change(samples):
    assert changes.detect(samples, exact=True) == []
    assert changes.detect(samples, exact=False) == []


def test_failed_builds_keep_the_indices_of_the_input():
    series = counts(steps(1e8, 1.005e8, at=12, n=25))
    for failed in (3, 7, 20):
        series[failed] = []
    found = changes.detect(series, exact=True)
    assert [(c.start, c.end, c.kind) for c in found] == [(12, 12, STEP)]
    # The commit that moved did not build: the change is on the first measured one after it.
    series[12] = []
    assert [(c.start, c.end) for c in changes.detect(series, exact=True)] == [(13, 13)]


def test_nan_and_infinite_samples_are_ignored():
    clean = counts(steps(1e8, 1.005e8, at=12, n=25))
    dirty = [list(commit) for commit in clean]
    dirty[2].append(math.nan)
    dirty[12].insert(0, math.inf)
    dirty[20].append(-math.inf)
    dirty.insert(5, [math.nan, math.nan])  # a commit with nothing usable: a failed build
    found = changes.detect(dirty, exact=True)
    assert [(c.start, c.end, c.kind) for c in found] == [(13, 13, STEP)]
    assert found[0].before == changes.detect(clean, exact=True)[0].before


def test_change_pct_is_nan_from_a_zero_level_and_signed_from_a_negative_one():
    [from_zero] = changes.detect([[0.0]] * 8 + [[5.0]] * 8, exact=True)
    assert (from_zero.start, from_zero.before, from_zero.after) == (8, 0.0, 5.0)
    assert math.isnan(from_zero.change_pct) and from_zero.confidence == 1.0
    [negative] = changes.detect([[-100.0]] * 8 + [[-110.0]] * 8, exact=True)
    assert negative.start == 8 and negative.change_pct == pytest.approx(10.0)


def test_confidence_is_welchs_test_between_the_stretches_samples():
    # Medians exactly 100 and 110; the samples either side spread by +-3.
    before, after = [[97.0, 103.0]] * 4, [[107.0, 113.0]] * 4
    [change] = changes.detect(before + after, exact=False)
    expected = scipy_stats.ttest_ind([97.0, 103.0] * 4, [107.0, 113.0] * 4, equal_var=False)
    assert change.start == 4
    assert change.confidence == pytest.approx(1 - expected.pvalue, rel=1e-9)
    assert 0.99 < change.confidence < 0.9999999


def test_a_side_of_one_value_takes_the_commit_to_commit_sigma_as_its_spread():
    # 30 commits with medians exactly 100 (no commit-to-commit noise: its floor, 0.5% of 100,
    # stands), then one commit measured once at 102. That side's variance is 0.5^2, known: the
    # degrees of freedom come from the other side alone.
    before = [99.65, 100.35]
    [change] = changes.detect([before] * 30 + [[102.0]], exact=False)
    assert (change.start, change.end, change.kind) == (30, 30, STEP)
    term = np.var(before * 30, ddof=1) / 60
    standard_error = math.sqrt(term + 0.5 ** 2)
    degrees_of_freedom = standard_error ** 4 / (term ** 2 / 59)
    expected = 1 - 2 * scipy_stats.t.sf(2.0 / standard_error, degrees_of_freedom)
    assert change.confidence == pytest.approx(expected, rel=1e-12)
    assert 0.999 < change.confidence < 0.99999


def test_noise_grows_with_the_spread_and_has_a_floor():
    quiet = changes.noise(wall([100.0] * 30, spread=0.01), exact=False)
    loud = changes.noise(wall([100.0] * 30, spread=0.03), exact=False)
    assert quiet == pytest.approx(1.0, rel=0.25) and loud == pytest.approx(3.0, rel=0.25)
    assert changes.noise([[1e8]] * 10, exact=True) == pytest.approx(1e5)  # 0.1% of the level
    assert changes.noise([[200.0]] * 10, exact=False) == pytest.approx(1.0)  # 0.5%
    assert math.isnan(changes.noise([[], []], exact=True))


def test_numpy_arrays_are_accepted_as_samples():
    series = np.array(counts(steps(1e8, 1.005e8, at=12, n=25)))
    assert changes.detect(series, exact=True) == changes.detect(series.tolist(), exact=True)
    assert isinstance(changes.detect(list(series), exact=True)[0], Change)


@pytest.mark.parametrize("samples, exact", [
    ("100", True), (None, True), (3.5, False), ([1.0, 2.0], True), ([["1.0"]], True),
    ([[None]], False), ([[True, False]], True), ([np.zeros((2, 2))], True), ([[1.0]], "yes"),
    ([[1.0]], 1),
])
def test_arguments_of_the_wrong_type_are_value_errors(samples, exact):
    with pytest.raises(ValueError):
        changes.detect(samples, exact)
    with pytest.raises(ValueError):
        changes.noise(samples, exact)


def test_history_pools_commits_of_one_build_and_places_a_change_on_a_new_build():
    """labctl.read.series.follow: commits that share a build ran the same code, so a blip among them
    is noise (a schedule-dependent count), and a change lands on the first commit of its build."""
    import pandas as pd

    from labctl.read import series

    values = [[100.0] * 3, [101.0, 101.0, 100.0]] + [[100.0] * 3] * 5 + [[110.0] * 3] * 3
    builds = ["a", "a", "b", "b", "c", "c", "d", "e", "e", "e"]
    frame = pd.DataFrame([{"experiment": "e", "kernel": "k", "key": "p", "params": {}, "label": "k",
                           "measure": "instructions", "metric": "instructions", "exact": True, "order": i,
                           "commit": f"{i:040x}", "short": f"{i:010x}", "subject": "s", "date": "2026-01-01",
                           "build": build, "run": i + 1, "values": v, "median": float(np.median(v))}
                          for i, (v, build) in enumerate(zip(values, builds))])
    assert (1, 1) in [(c.start, c.end) for c in changes.detect(values, exact=True)]  # unpooled: the blip
    [followed] = series.follow(frame)
    assert [(c.kind, c.start, c.end) for c in followed.changes] == [(changes.STEP, 7, 7)]
    assert followed.changes[0].change_pct == pytest.approx(10.0)
