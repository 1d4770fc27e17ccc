"""Change points in a benchmark series over git commits: where, in history, a point's metric
stepped or drifted, by how much, and how sure we are (labctl history, issue 36).

The series is each commit's median (robust to a stray sample); commits without a measurement (a
failed build) are skipped, and indices still refer to the input. ruptures' Pelt segments it into
piecewise-constant stretches (cost "l2", min_size=1, jump=1: a change may be one commit long and sit
anywhere). l2 rather than l1 because the penalty below is in the l2 cost's own unit, a variance:
l1's cost grows as sigma, not sigma^2, and would need a penalty argued afresh. The series is divided
by its median level first, so the penalty does not depend on the metric's unit or magnitude.

The penalty comes from the series' own noise: pen = PENALTY_FACTOR * sigma^2 * log(n). Plain BIC
for a shift of the mean with a known variance is 2 sigma^2 log(n) (a breakpoint adds a location
and a level), but sigma here is estimated from a few tens of commits: from 30 single-sample commits
it is 30% low in one series out of ten, so sigma^2, what the penalty scales with, is half the
truth. PENALTY_FACTOR = 4 doubles BIC for that margin: of
1000 series of 30 single-sample commits of pure noise, 2.3% report a change (5.7% at 3, 14% at 2),
while a 5-sigma step is still found at its commit 9 times out of 10 (tests/test_changes.py holds
both). The price is paid by a one-commit blip, which needs two breakpoints: one of 6.7 sigma is
reported 70% of the time (84% at 3). A false change sends a reader bisecting for nothing; a blip
the next commit undid is no change of level.

sigma is the largest of
- the pooled within-commit spread: the median over commits with >= 2 samples of their standard
  deviation. Deliberately the spread of one sample, not of a median: samples of one commit are
  taken back to back, so they understate what varies between commits measured at other times
  (builds, code layout, the machine's state);
- the commit-to-commit noise: the MAD of the medians' first differences / (0.6745 * sqrt(2)). A
  step moves one difference and a drift a few; the median ignores them, as long as most
  differences are noise;
- a floor relative to the level. Instruction counts (exact) of a point whose threads never wait
  repeat to a few parts per million, but a runtime's waits are counted too, and follow the
  machine's load: the same build's ping_pong counted 0.06% and 0.13% apart with the test suite
  beside it, and with sigma at a few parts per million such a move was called a change (a
  history of seven commits found a -0.04% "step" between two commits of one build). A perfectly
  repeatable series would also make every last instruction a change (and a zero sigma a zero
  penalty): the floor is EXACT_FLOOR = 1e-3, so a change of instructions must be 0.2% to count. Wall time never repeats better than
  WALL_FLOOR = 0.5% on a shared machine (frequency, neighbours, the clock), whatever its samples
  suggest.

Breakpoints become changes: a run of consecutive breakpoints moving the same way whose
intermediate stretches are shorter than MIN_PLATEAU commits is one drift, from the first moved
commit to the first commit at the final level; any other breakpoint is a step. Pelt cuts a slow
drift into a staircase of short stretches, and a reader wants one change with its total size, not
four. A change smaller than MIN_SIZE_SIGMAS * sigma is dropped (its breakpoints removed, the rest
regrouped): Pelt can find it by pooling long stretches, but a move that small cannot be seen
between two adjacent commits, so which commit made it is a guess, and history would point at
the wrong one.

Confidence is 1 - p of Welch's t-test between all samples of the stretch before and all samples of
the stretch after (for a drift, the stretches outside it). Identical values on both sides (exact
counts) give 1 if the levels differ. A side of one value takes the commit-to-commit sigma (floored
as above) as its spread, known rather than estimated, so only the other side gives degrees of
freedom.
"""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

STEP = "step"
DRIFT = "drift"
# pen = PENALTY_FACTOR * sigma^2 * log(n): twice BIC, for a sigma estimated from the series.
PENALTY_FACTOR = 4.0
# Stretches shorter than this between breakpoints moving the same way make one drift.
MIN_PLATEAU = 3
# A change smaller than this many sigma cannot be placed on a commit: dropped.
MIN_SIZE_SIGMAS = 2.0
# sigma's floor relative to the level: instruction counts, wall time.
EXACT_FLOOR = 1e-3
WALL_FLOOR = 0.005
# The MAD of a normal variable is 0.6745 sigma; a difference of two has sigma * sqrt(2).
_MAD_TO_SIGMA = 0.6745 * math.sqrt(2)


@dataclass(frozen=True)
class Change:
    start: int  # index (in the series) of the first commit whose level moved
    end: int  # index of the last commit of the move: == start for a step, > start for a drift
    kind: str  # STEP or DRIFT
    before: float  # the level (median of the commit medians) of the segment before the move
    after: float  # the level of the segment after it
    change_pct: float  # (after / before - 1) * 100; NaN when before is 0
    confidence: float  # 0..1: 1 - p of Welch's t-test that before and after differ


@dataclass(frozen=True)
class _Series:
    indices: list[int]  # input index of each measured commit
    values: list[np.ndarray]  # its finite samples
    medians: np.ndarray
    scale: float  # the level the series is divided by: median |median|, else max |median|


def detect(samples: Sequence[Sequence[float]], exact: bool) -> list[Change]:
    """The steps and drifts of a series over commits, in history order. samples[i] holds the
    values measured on the i-th commit (empty: not measured); exact is True for instruction
    counts, False for wall time. Raises ValueError only for arguments of the wrong type."""
    series = _series(samples, exact)
    if len(series.medians) < 2 or np.ptp(series.medians) == 0:
        return []
    sigma = _sigma(series, exact)
    breakpoints = _segment(series.medians / series.scale, sigma / series.scale)
    while True:
        groups = _group(series.medians, breakpoints)
        bounds = [0, *breakpoints, len(series.medians)]
        levels = _levels(series.medians, bounds)
        small = [group for group in groups
                 if abs(levels[group[-1] + 1] - levels[group[0]]) < MIN_SIZE_SIGMAS * sigma]
        if not small:
            break
        smallest = min(small, key=lambda group: abs(levels[group[-1] + 1] - levels[group[0]]))
        breakpoints = [b for k, b in enumerate(breakpoints) if k not in smallest]
    commit_sigma = max(_commit_to_commit(series.medians), _floor(series, exact))
    return [_change(series, bounds, levels, group, commit_sigma) for group in groups]


def noise(samples: Sequence[Sequence[float]], exact: bool) -> float:
    """The sigma the penalty is made from, in the metric's unit; NaN when no commit is measured."""
    series = _series(samples, exact)
    return _sigma(series, exact) if series.indices else math.nan


def _series(samples: Sequence[Sequence[float]], exact: bool) -> _Series:
    if not isinstance(exact, (bool, np.bool_)):
        # ValueError, not TypeError, for every bad argument: the interface callers code against.
        raise ValueError(f"exact: expected True (instruction counts) or False "  # noqa: TRY004
                         f"(wall time), got {type(exact).__name__}")
    if not _is_sequence(samples):
        raise ValueError(f"samples: expected a sequence of per-commit value lists, "
                         f"got {type(samples).__name__}")
    indices, values = [], []
    for index, commit in enumerate(samples):
        finite = _finite(commit, index)
        if finite.size:
            indices.append(index)
            values.append(finite)
    medians = np.array([np.median(v) for v in values], dtype=float)
    magnitudes = np.abs(medians)
    scale = float(np.median(magnitudes)) if medians.size else 0.0
    if scale == 0 and medians.size:
        scale = float(magnitudes.max())
    return _Series(indices, values, medians, scale)


def _is_sequence(value: object) -> bool:
    return (isinstance(value, np.ndarray)
            or isinstance(value, Sequence) and not isinstance(value, (str, bytes)))


def _finite(commit: object, index: int) -> np.ndarray:
    """A commit's samples as floats, NaN and infinities dropped (a failed or garbled reading)."""
    problem = f"samples[{index}]: expected a sequence of numbers"
    if not _is_sequence(commit):
        raise ValueError(f"{problem}, got {type(commit).__name__}")
    if isinstance(commit, np.ndarray):
        if commit.ndim != 1 or (commit.size and commit.dtype.kind not in "iuf"):
            raise ValueError(f"{problem}, got an array of {commit.dtype} with shape {commit.shape}")
    else:
        for value in commit:
            if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{problem}, got {type(value).__name__} {value!r}")  # noqa: TRY004
    data = np.asarray(commit, dtype=float)
    return data[np.isfinite(data)]


def _sigma(series: _Series, exact: bool) -> float:
    spreads = [np.std(v, ddof=1) for v in series.values if v.size >= 2]
    within = float(np.median(spreads)) if spreads else 0.0
    return max(within, _commit_to_commit(series.medians), _floor(series, exact))


def _commit_to_commit(medians: np.ndarray) -> float:
    if medians.size < 3:
        return 0.0  # one difference has no spread to measure
    differences = np.diff(medians)
    mad = np.median(np.abs(differences - np.median(differences)))
    return float(mad / _MAD_TO_SIGMA)


def _floor(series: _Series, exact: bool) -> float:
    return (EXACT_FLOOR if exact else WALL_FLOOR) * series.scale


def _segment(scaled: np.ndarray, sigma: float) -> list[int]:
    """Pelt's breakpoints: positions in the series where a new stretch begins."""
    import ruptures  # imported when needed: it is slow to import

    penalty = PENALTY_FACTOR * sigma ** 2 * math.log(len(scaled))
    algorithm = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(scaled)
    return list(algorithm.predict(pen=penalty))[:-1]  # the last is the series' end


def _levels(medians: np.ndarray, bounds: list[int]) -> list[float]:
    return [float(np.median(medians[a:b])) for a, b in itertools.pairwise(bounds)]


def _group(medians: np.ndarray, breakpoints: list[int]) -> list[list[int]]:
    """Breakpoints (by their position in the list) gathered into changes: a breakpoint joins the
    one before when the stretch between them is shorter than MIN_PLATEAU and both move the same
    way. Breakpoint k separates stretch k from stretch k + 1."""
    bounds = [0, *breakpoints, len(medians)]
    levels = _levels(medians, bounds)
    groups: list[list[int]] = []
    for k in range(len(breakpoints)):
        direction = np.sign(levels[k + 1] - levels[k])
        if (groups and groups[-1][-1] == k - 1 and bounds[k + 1] - bounds[k] < MIN_PLATEAU
                and direction == np.sign(levels[k] - levels[k - 1])):
            groups[-1].append(k)
        else:
            groups.append([k])
    return groups


def _change(series: _Series, bounds: list[int], levels: list[float], group: list[int],
            commit_sigma: float) -> Change:
    first, last = group[0], group[-1]
    before, after = levels[first], levels[last + 1]
    before_samples = np.concatenate(series.values[bounds[first]:bounds[first + 1]])
    after_samples = np.concatenate(series.values[bounds[last + 1]:bounds[last + 2]])
    return Change(
        start=series.indices[bounds[first + 1]],
        end=series.indices[bounds[last + 1]],
        kind=STEP if first == last else DRIFT,
        before=before,
        after=after,
        change_pct=(after / before - 1) * 100 if before != 0 else math.nan,
        confidence=_confidence(before_samples, after_samples, before != after, commit_sigma),
    )


def _confidence(before: np.ndarray, after: np.ndarray, levels_differ: bool,
                commit_sigma: float) -> float:
    """1 - p of Welch's two-sided t-test; see the module's docstring for the degenerate sides."""
    from scipy import stats as scipy_stats  # imported when needed: it is slow to import

    # The test is shift-free; centring spares it the cancellation of 1e8 +- 100.
    reference = float(np.median(before))
    before, after = before - reference, after - reference
    if before.size >= 2 and after.size >= 2:
        if np.ptp(before) == 0 and np.ptp(after) == 0:
            return 1.0 if levels_differ else 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = scipy_stats.ttest_ind(before, after, equal_var=False).pvalue
    else:
        p = _known_spread_test(before, after, commit_sigma)
    if math.isnan(p):
        return 1.0 if levels_differ else 0.0
    return min(1.0, max(0.0, 1.0 - float(p)))


def _known_spread_test(before: np.ndarray, after: np.ndarray, commit_sigma: float) -> float:
    """Welch's test where a side has one value and so no spread of its own: it takes
    commit_sigma, a known variance with no degrees of freedom to lose."""
    from scipy import stats as scipy_stats

    terms, df_denominator = [], 0.0
    for side in (before, after):
        if side.size >= 2:
            term = float(np.var(side, ddof=1)) / side.size
            df_denominator += term ** 2 / (side.size - 1)
        else:
            term = commit_sigma ** 2
        terms.append(term)
    standard_error = math.sqrt(sum(terms))
    difference = float(np.mean(after) - np.mean(before))
    if standard_error == 0:
        return 0.0 if difference else 1.0
    t = abs(difference) / standard_error
    if df_denominator == 0:
        return float(2 * scipy_stats.norm.sf(t))
    return float(2 * scipy_stats.t.sf(t, sum(terms) ** 2 / df_denominator))
