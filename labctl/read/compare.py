"""Two runs compared point by point: is B faster, slower, or is the difference noise?

Points are matched by kernel, parameters, environment, CPUs and measure (what makes a point key),
less the parameters the caller ignores, and by the kind of machine each point ran on
(labctl.read.results' `machine`): a point of one kind of host is compared with one of another kind only
when asked (across_machines), and the header says so. For each point measured in both runs: the ratio of medians B/A of
a metric with its 95% bootstrap interval, the Mann-Whitney U test (two-sided), and a verdict.
Below 3 samples on a side there is no verdict: two single values are never "significant". Where
the test cannot reach alpha at the sample sizes (3 against 3: p is never below 0.1) it says so,
rather than "no difference". A metric that reproduces (instruction counts: each side's values
within QUIET_SPREAD of each other) is judged without the test, which has nothing to rank there:
two such samples whose ranges do not overlap differ, however little. Pure functions over the
frames of labctl.read.results, and a markdown renderer.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from labctl.read import analysis, results
from labctl.store import Store, round_of
from labctl.vocabulary import stats, text
from labctl.vocabulary.metrics import COMPARABLE, lookup
from labctl.vocabulary.schema import Catalogue, Kernel

ALPHA = 0.05
DEFAULT_METRIC = "elapsed_ns"
# Metrics of every sample with a direction (labctl.vocabulary.metrics.COMPARABLE: the counts where its
# measure took them); a kernel's own (round_trip_p50_ns, ...) come with its samples.
SAMPLE_METRICS = COMPARABLE
# A sample is quiet when its values spread (max - min) by at most this share of its median: an
# instruction count of a single-thread kernel varies by a few hundred in 10^8 (0.001%) between
# runs, a time by 1-30%. For two quiet samples the rank test is the wrong tool: ties leave it
# nothing to rank, and at 3 against 3 it never reaches alpha however far apart the counts are.
# So their verdict is by their ranges: apart, they differ, by however little (a real change of
# the code, not noise); overlapping, they do not; equal and constant, no change at all.
QUIET_SPREAD = 0.001

# Verdicts. The last two are no verdict: the samples cannot tell.
FASTER = "faster"
SLOWER = "slower"
NO_DIFFERENCE = "no significant difference"
NO_CHANGE = "no change"
TOO_FEW = "too few samples"
CANNOT_BE_SIGNIFICANT = "cannot be significant"
WITHOUT_VERDICT = (TOO_FEW, CANNOT_BE_SIGNIFICANT)

# What a verdict rests on (Difference.basis).
RANKS = "rank test"  # the two runs' samples alone: they share their moment's load
ROUNDS = "interleaved rounds"  # the medians of each round of an interleaved A/B, paired
CALIBRATED = "A/A calibration"  # the two runs' medians, against the same build's round-to-round spread
# Fewer rounds than this leave a paired test or a calibration without a spread to speak of.
MIN_ROUNDS = 3


class CompareError(ValueError):
    """Bad input (a metric, an ignored parameter, points that fall together): the message names
    the option."""


@dataclass(frozen=True)
class Difference:
    """Sample B against sample A of one metric: their medians, the ratio and a verdict."""

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float  # median B / median A (inf or nan where A's median is 0)
    ratio_low: float | None  # its 95% bootstrap interval; None below 3 samples a side
    ratio_high: float | None
    p_value: float | None  # Mann-Whitney U, two-sided; None below 3 samples a side
    verdict: str
    lower_is_better: bool
    min_change: float  # percent
    quiet: bool = False  # both sides within QUIET_SPREAD: judged by their ranges, not the test
    basis: str = RANKS  # what p rests on: RANKS, ROUNDS or CALIBRATED
    p_adjusted: float | None = None  # p after Holm's adjustment over the comparison's points
    detectable: float | None = None  # percent: the change this test finds 80% of the time (ROUNDS, CALIBRATED)
    rounds: int = 0  # the interleaved rounds paired (ROUNDS), or the calibration's (CALIBRATED)
    family: int = 1  # the points tested together (Holm's adjustment is over them)

    @property
    def change(self) -> float:
        """The change of the metric, in percent: +131 is B's median 2.31 times A's."""
        return (self.ratio - 1) * 100

    @property
    def factor(self) -> float:
        """How many times faster or slower: 2.31 for a ratio of 2.31 or of 1/2.31."""
        if self.ratio > 0 and math.isfinite(self.ratio):
            return max(self.ratio, 1 / self.ratio)
        return math.inf

    @property
    def text(self) -> str:
        """The verdict in words, with what it rests on."""
        if self.verdict == TOO_FEW:
            return f"too few samples (n={self.n_a} vs {self.n_b})"
        if self.verdict == CANNOT_BE_SIGNIFICANT:
            return (f"cannot be significant at n={self.n_a} vs {self.n_b}"
                    + (f" among {self.family} points" if self.family > 1 else ""))
        if self.verdict == NO_CHANGE:
            return (f"no change (below {self.min_change:g}%)" if self.min_change
                    else "no change (equal medians)")
        if self.verdict in (FASTER, SLOWER):
            size = f"{self.factor:.2f}x" if self.factor >= 1.005 else f"{self.change:+.2g}%"
            return f"{self.verdict} ({size}" + ("; ranges apart, no noise)" if self.quiet else ")")
        if self.verdict == NO_DIFFERENCE and self.quiet:
            return "no difference (ranges overlap, no noise)"
        return self.verdict


def difference(a: Sequence[float], b: Sequence[float], lower_is_better: bool = True,
               min_change: float = 0.0, alpha: float = ALPHA) -> Difference:
    """Compares sample B with sample A (each at least one value). A verdict needs 3 values a
    side; then, where both sides are quiet (QUIET_SPREAD), ranges that do not overlap; otherwise
    sizes at which the rank test can reach `alpha` and p below alpha. And a change of the median
    of at least `min_change` percent either way."""
    if not a or not b:
        raise ValueError("each side needs at least one value")
    median_a, median_b = statistics.median(a), statistics.median(b)
    if median_a:
        ratio = median_b / median_a
    else:
        ratio = math.inf if median_b else math.nan
    interval = p_value = None
    quiet = False
    if min(len(a), len(b)) < stats.MIN_SAMPLES_FOR_INTERVAL:
        verdict = TOO_FEW
    else:
        interval = stats.ratio_interval(a, b)
        p_value = stats.rank_test(a, b)
        quiet = _quiet(a) and _quiet(b)
        if quiet:
            apart = max(a) < min(b) or max(b) < min(a)
            verdict = NO_DIFFERENCE if not apart else SLOWER if (median_b > median_a) == lower_is_better else FASTER
            if verdict == NO_DIFFERENCE and median_a == median_b and len(set(a) | set(b)) == 1:
                verdict = NO_CHANGE
        elif stats.smallest_p(len(a), len(b)) >= alpha:
            verdict = CANNOT_BE_SIGNIFICANT
        elif p_value >= alpha:
            verdict = NO_DIFFERENCE
        elif median_a == median_b:
            verdict = NO_CHANGE
        else:
            verdict = SLOWER if (median_b > median_a) == lower_is_better else FASTER
        if verdict in (FASTER, SLOWER) and abs((ratio - 1) * 100) < min_change:
            verdict = NO_CHANGE
    return Difference(len(a), len(b), median_a, median_b, ratio,
                      interval[0] if interval else None, interval[1] if interval else None,
                      p_value, verdict, lower_is_better, min_change, quiet)


def paired_difference(rounds_a: Sequence[Sequence[float]], rounds_b: Sequence[Sequence[float]],
                      lower_is_better: bool = True, min_change: float = 0.0,
                      alpha: float = ALPHA) -> Difference:
    """B against A measured in interleaved rounds (the same rounds on each side, in order): the
    log ratio of the two medians of each round, whose 20% trimmed mean Yuen's t-test holds
    against 0 (stats.trimmed). What drifts between rounds (the machine's load) moves both
    medians of a round alike and cancels in their ratio; a burst that hits one side of a round
    only is trimmed. Quiet samples (instruction counts) are judged by their ranges, pooled."""
    pooled_a = [v for values in rounds_a for v in values]
    pooled_b = [v for values in rounds_b for v in values]
    plain = difference(pooled_a, pooled_b, lower_is_better, min_change, alpha)
    logs = [math.log(statistics.median(b) / statistics.median(a)) for a, b in zip(rounds_a, rounds_b)
            if a and b and statistics.median(a) > 0 and statistics.median(b) > 0]
    if plain.quiet:
        return plain
    if len(logs) < MIN_ROUNDS:
        return replace(plain, verdict=TOO_FEW, basis=ROUNDS, rounds=len(logs))
    center, scale, df = stats.trimmed(logs)
    test = stats.log_ratio_test(center, scale, df)
    return _judge(replace(plain, ratio=test.ratio, ratio_low=test.low, ratio_high=test.high,
                          p_value=test.p_value, basis=ROUNDS, rounds=len(logs),
                          detectable=stats.detectable(scale, df, alpha)), test.p_value, alpha)


def calibrated_difference(a: Sequence[float], b: Sequence[float], noise: Noise,
                          lower_is_better: bool = True, min_change: float = 0.0,
                          alpha: float = ALPHA) -> Difference:
    """Run B against run A, one run a side, judged against the spread that the same build
    measured against itself shows from round to round on this machine (an A/A calibration):
    the log ratio of their medians, as a new observation of that spread, in a t-test."""
    plain = difference(a, b, lower_is_better, min_change, alpha)
    if plain.quiet or plain.verdict == TOO_FEW or not (plain.median_a > 0 and plain.median_b > 0):
        return plain
    scale = noise.scale_for_one_run
    test = stats.log_ratio_test(math.log(plain.median_b / plain.median_a), scale, noise.rounds - 1)
    return _judge(replace(plain, ratio_low=test.low, ratio_high=test.high, p_value=test.p_value,
                          basis=CALIBRATED, rounds=noise.rounds,
                          detectable=stats.detectable(scale, noise.rounds - 1, alpha)), test.p_value, alpha)


def _judge(d: Difference, p_value: float, alpha: float) -> Difference:
    """The verdict of a tested difference at `p_value` (its own, or Holm's adjustment of it)."""
    if d.quiet or d.p_value is None or d.verdict == TOO_FEW:
        return d
    if d.basis == RANKS and stats.smallest_p(d.n_a, d.n_b) >= alpha:
        verdict = CANNOT_BE_SIGNIFICANT
    elif p_value >= alpha:
        verdict = NO_DIFFERENCE
    elif d.ratio == 1:
        verdict = NO_CHANGE
    else:
        verdict = SLOWER if (d.ratio > 1) == d.lower_is_better else FASTER
    if verdict in (FASTER, SLOWER) and abs((d.ratio - 1) * 100) < d.min_change:
        verdict = NO_CHANGE
    return replace(d, verdict=verdict)


def adjusted(differences: Sequence[Difference], alpha: float = ALPHA) -> list[Difference]:
    """The differences judged together: Holm's adjustment over those with a tested p (neither
    quiet nor without a verdict), each judged again at its adjusted p."""
    tested = [i for i, d in enumerate(differences)
              if d.p_value is not None and not d.quiet and d.verdict not in WITHOUT_VERDICT]
    out = list(differences)
    for i, p in zip(tested, stats.holm([differences[i].p_value for i in tested])):
        d = replace(differences[i], p_adjusted=p, family=len(tested))
        if d.basis == RANKS and stats.smallest_p(d.n_a, d.n_b) * len(tested) >= alpha:
            # Not even samples wholly apart could pass Holm's first step among this many points:
            # no verdict, rather than "no difference" (calibrate, interleave or take more).
            out[i] = replace(d, verdict=CANNOT_BE_SIGNIFICANT)
        else:
            out[i] = _judge(d, p, alpha)
    return out


@dataclass(frozen=True)
class Noise:
    """What an A/A calibration (`labctl calibrate`) measured of a point on a kind of machine: the
    log ratio of the medians of the same build's two sides in each of its rounds."""

    group: str
    logs: tuple[float, ...]

    @property
    def rounds(self) -> int:
        return len(self.logs)

    @property
    def spread(self) -> float:
        """The standard deviation of a round's log ratio: what one run against another of the
        same build differs by on this machine."""
        return statistics.stdev(self.logs) if len(self.logs) > 1 else math.inf

    @property
    def scale_for_one_run(self) -> float:
        """The standard error of one new run-against-run log ratio, the spread estimated from
        `rounds` rounds: spread * sqrt(1 + 1 / rounds)."""
        return self.spread * math.sqrt(1 + 1 / self.rounds)


def _quiet(values: Sequence[float]) -> bool:
    """Whether values spread by at most QUIET_SPREAD of their median (all equal, say)."""
    middle = abs(statistics.median(values))
    return max(values) - min(values) <= QUIET_SPREAD * middle


def geometric_mean(ratios: Iterable[float]) -> float | None:
    """The geometric mean of positive, finite ratios (None if there are none): the mean change
    over points, where 2x slower and 2x faster cancel out."""
    logs = [math.log(r) for r in ratios if r > 0 and math.isfinite(r)]
    return math.exp(statistics.fmean(logs)) if logs else None


# -- runs -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """What the header says about a run."""

    id: int
    name: str
    started_at: str
    machine: str  # where its points ran: CPU model, CPUs and host names, per kind of machine
    code: str | None  # text.code_of: the commit whose extension measured it
    db: str
    machines: tuple[str, ...] = ()  # the kinds of machine its points ran on (results' `machine`)
    hosts: tuple[str, ...] = ()  # and their host names


@dataclass
class Side:
    """One run's samples and points, as labctl.read.results gives them."""

    run: Run
    samples: pd.DataFrame  # results.load
    points: pd.DataFrame  # results.points
    # The run's round of an interleaved comparison (sysinfo.ROUND_KEYS), and the finished runs of
    # its side of it, this one among them, in round order: one Side each.
    interleaved: dict | None = None
    rounds: list[Side] = field(default_factory=list)


def load(db: str | Path, run: int | str) -> Side:
    """A run (an id or 'latest') of a store; with the other rounds of its side where it is a
    round of an interleaved comparison. Raises StoreError for an unknown run."""
    with Store(db, create=False) as store:
        run_id = store.resolve_run(run)
        mine = round_of(store.run(run_id).context)
        siblings = sorted((r.round, r.run) for r in store.rounds(mine["group"]) if r.side == mine["side"]) \
            if mine else []
    side = _load_run(db, run_id)
    if mine:
        side.rounds = [side if other == run_id else _load_run(db, other) for _, other in siblings]
    return side


def _load_run(db: str | Path, run_id: int) -> Side:
    with Store(db, create=False) as store:
        row = store.run(run_id)
        points = store.points(run_id)
    # Where its points ran: those with samples (all of them, where none has any).
    ran = [p.machine or row.machine for p in points if p.samples_done] or \
        [p.machine or row.machine for p in points] or [row.machine]
    kinds: dict[str, list[dict]] = {}
    for machine in ran:
        kinds.setdefault(text.machine_line(machine), []).append(machine)
    hosts = tuple(sorted({str(m.get("hostname")) for m in ran}))
    where = "; ".join(_machine_cell(infos) for infos in kinds.values())
    info = Run(int(run_id), row.name, row.started_at, where, text.code_of(row.context), str(db),
               tuple(kinds), hosts)
    return Side(info, results.load(db, run_id), results.points(db, run_id), round_of(row.context))


def calibration(db: str | Path, metric: str = DEFAULT_METRIC, ignore: Sequence[str] = (),
                across_machines: bool = False) -> dict[str, Noise]:
    """The A/A calibrations in a store (`labctl calibrate`: interleaved rounds of one build
    against itself), by point key (that of compare's matching: a kind of machine's own): for
    each point, its latest calibration of at least MIN_ROUNDS rounds."""
    noises: dict[str, Noise] = {}
    for group in calibration_groups(db):  # oldest first: a later one replaces it
        for key, found in _group_rounds(db, group, metric, ignore, across_machines).items():
            if found.noise.rounds >= MIN_ROUNDS:
                noises[key] = found.noise
    return noises


def calibration_groups(db: str | Path) -> list[str]:
    """The A/A groups of a store with both sides, oldest first."""
    with Store(db, create=False) as store:
        groups: dict[str, tuple[int, set]] = {}
        for found in store.rounds():
            if found.same_build:
                last, sides = groups.get(found.group, (0, set()))
                groups[found.group] = (max(last, found.run), sides | {found.side})
    return [g for g, (_, sides) in sorted(groups.items(), key=lambda item: item[1][0]) if sides == {"A", "B"}]


@dataclass(frozen=True)
class Rounds:
    """One point over the rounds of an interleaved group: its samples on each side, round by
    round, and their log ratios of medians as a Noise."""

    kernel: str
    params: dict
    samples: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...]
    noise: Noise

    def false_calls(self, alpha: float = ALPHA) -> tuple[int, int]:
        """How many of its rounds, each A against B of one build, are called different (at
        `alpha`, no adjustment) by the rank test on the round's samples alone, and by the test
        against the spread of the other rounds (leave one out): the false-positive rates of a
        comparison of two runs, uncalibrated and calibrated."""
        ranks = sum(difference(list(a), list(b), alpha=alpha).verdict in (FASTER, SLOWER)
                    for a, b in self.samples)
        held = 0
        for index in range(self.noise.rounds):
            others = Noise(self.noise.group, self.noise.logs[:index] + self.noise.logs[index + 1:])
            if others.rounds >= MIN_ROUNDS:
                test = stats.log_ratio_test(self.noise.logs[index], others.scale_for_one_run, others.rounds - 1)
                held += test.p_value < alpha
        return ranks, held


def _group_rounds(db: str | Path, group: str, metric: str = DEFAULT_METRIC, ignore: Sequence[str] = (),
                  across_machines: bool = False) -> dict[str, Rounds]:
    """The points of an interleaved group's rounds, by compare's point key."""
    with Store(db, create=False) as store:
        ids: dict[str, dict[int, int]] = {"A": {}, "B": {}}
        for found in store.rounds(group):
            if found.side in ids:
                ids[found.side][found.round] = found.run
    kernels: dict[str, tuple[str, dict]] = {}
    samples: dict[str, list] = {}
    for index in sorted(set(ids["A"]) & set(ids["B"])):
        a, b = _load_run(db, ids["A"][index]), _load_run(db, ids["B"][index])
        try:
            points_a, points_b = _points(a, ignore, across_machines), _points(b, ignore, across_machines)
        except CompareError:
            return {}  # points that differ only in ignored parameters: not calibrated so
        values_a, values_b = _values(a, metric), _values(b, metric)
        for key, (point, kernel, params) in points_a.items():
            if key in points_b:
                first, second = values_a.get(point), values_b.get(points_b[key][0])
                if first and second and statistics.median(first) > 0 and statistics.median(second) > 0:
                    kernels[key] = (kernel, params)
                    samples.setdefault(key, []).append((tuple(first), tuple(second)))
    out = {}
    for key, pairs in samples.items():
        logs = tuple(math.log(statistics.median(b) / statistics.median(a)) for a, b in pairs)
        out[key] = Rounds(*kernels[key], tuple(pairs), Noise(group, logs))
    return out


def calibrated_points(db: str | Path, group: str, metric: str = DEFAULT_METRIC) -> list[Rounds]:
    """An A/A group's points, in the experiment's order: what `labctl calibrate` reports."""
    return list(_group_rounds(db, group, metric).values())


def _machine_cell(infos: list[dict]) -> str:
    """One kind of machine in a table cell: its CPU and how many, and its hosts (a few)."""
    hosts = sorted({str(info.get("hostname")) for info in infos})
    names = ", ".join(hosts[:3]) + (f" and {len(hosts) - 3} more" if len(hosts) > 3 else "")
    return text.machine_short({**infos[0], "hostname": names})


# -- comparing two runs ---------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """A point of both runs: its parameters on each side (they differ in ignored ones only)."""

    kernel: str
    params_a: dict
    params_b: dict
    difference: Difference


@dataclass
class Comparison:
    a: Run
    b: Run
    metric: str
    ignored: tuple[str, ...]
    min_change: float
    alpha: float
    rows: list[Row]
    only_a: list[tuple[str, dict]]  # (kernel, params): points of one run alone, not compared
    only_b: list[tuple[str, dict]]
    # Points of both runs without samples of the metric on a side ("A", "B" or "A and B"):
    # failed, or of a kernel without that metric.
    unmeasured: list[tuple[str, dict, str]]
    same_machine: bool  # the points of both ran on the same kinds of machine and the same hosts
    catalogue: Catalogue = field(default_factory=Catalogue)  # both runs' kernels, as stored
    across_machines: bool = False  # a point matched with the same point on any machine
    # Points of both runs that ran on different kinds of machine, so not matched (kernel,
    # params, A's machine, B's): in both runs, not "only in" either.
    elsewhere: list[tuple[str, dict, str, str]] = field(default_factory=list)
    basis: str = RANKS  # what the verdicts rest on, in words (ROUNDS, CALIBRATED or RANKS)
    calibrations: list[str] = field(default_factory=list)  # the A/A groups used (CALIBRATED)

    @property
    def same_kinds(self) -> bool:
        """Whether both runs' points ran on the same kinds of machine (hosts aside)."""
        return set(self.a.machines) == set(self.b.machines)

    @property
    def lower_is_better(self) -> bool:
        return lookup(self.metric).lower_is_better

    @property
    def geometric_mean(self) -> float | None:
        return geometric_mean(row.difference.ratio for row in self.rows)

    def regressions(self, percent: float) -> list[Row]:
        """Points significantly slower in B by more than `percent` (the metric's change)."""
        return [row for row in self.rows if row.difference.verdict == SLOWER
                and abs(row.difference.change) > percent]


def compare(a: Side, b: Side, metric: str = DEFAULT_METRIC, ignore: Sequence[str] = (),
            min_change: float = 0.0, alpha: float = ALPHA, across_machines: bool = False) -> Comparison:
    """Run B against run A, point by point: a point of A with the same point of B on the same
    kind of machine, or on any with `across_machines`. Raises CompareError for an unknown
    metric, an ignored name that is no parameter of their kernels, or two points of one run that
    only differ in ignored parameters."""
    _check_metric(metric, a, b)
    _check_ignored(ignore, a, b)
    points_a, points_b = _points(a, ignore, across_machines), _points(b, ignore, across_machines)
    values_a, values_b = _values(a, metric), _values(b, metric)
    lower = lookup(metric).lower_is_better
    paired = _paired_rounds(a, b, metric, ignore, across_machines)
    noises = {} if paired is not None else calibration(a.run.db, metric, ignore, across_machines)
    rows, only_a, unmeasured = [], [], []
    for key, (point, kernel, params) in points_a.items():
        if key not in points_b:
            only_a.append((kernel, params))
            continue
        point_b, _, params_b = points_b[key]
        sample_a, sample_b = values_a.get(point, []), values_b.get(point_b, [])
        if sample_a and sample_b:
            if paired is not None:
                rounds = [(ra.get(key, []), rb.get(key, [])) for ra, rb in paired]
                rounds = [(x, y) for x, y in rounds if x and y]
                found = paired_difference([x for x, _ in rounds], [y for _, y in rounds], lower, min_change, alpha)
            elif key in noises:
                found = calibrated_difference(sample_a, sample_b, noises[key], lower, min_change, alpha)
            else:
                found = difference(sample_a, sample_b, lower, min_change, alpha)
            rows.append(Row(kernel, params, params_b, found))
        else:
            side = " and ".join(name for name, sample in (("A", sample_a), ("B", sample_b))
                                if not sample)
            unmeasured.append((kernel, params, side))
    only_b = [(kernel, params) for key, (_, kernel, params) in points_b.items()
              if key not in points_a]
    elsewhere = []
    if not across_machines and (only_a or only_b):
        # The same point on another kind of machine is in both runs: said so, not "only in A".
        anywhere_a, anywhere_b = _points(a, ignore, True), _points(b, ignore, True)
        machine_a, machine_b = _machines_of(a), _machines_of(b)
        for key, (point, kernel, params) in anywhere_a.items():
            if key in anywhere_b and (kernel, params) in only_a and \
                    (anywhere_b[key][1], anywhere_b[key][2]) in only_b:
                elsewhere.append((kernel, params, machine_a[point], machine_b[anywhere_b[key][0]]))
        moved = {(k, json.dumps(p, sort_keys=True)) for k, p, _, _ in elsewhere}
        only_a = [(k, p) for k, p in only_a if (k, json.dumps(p, sort_keys=True)) not in moved]
        only_b = [(k, p) for k, p in only_b if (k, json.dumps(p, sort_keys=True)) not in moved]
    same_machine = (set(a.run.machines), set(a.run.hosts)) == (set(b.run.machines), set(b.run.hosts))
    judged = adjusted([row.difference for row in rows], alpha)
    rows = [replace(row, difference=d) for row, d in zip(rows, judged)]
    basis = (f"{ROUNDS}: {len(paired)} rounds" if paired is not None
             else f"{CALIBRATED}: {len({n.group for n in noises.values()})} calibration(s)" if noises else RANKS)
    return Comparison(a.run, b.run, metric, tuple(ignore), min_change, alpha, rows, only_a,
                      only_b, unmeasured, same_machine, _catalogue(a, b), across_machines, elsewhere,
                      basis, sorted({n.group for n in noises.values()}))


def _paired_rounds(a: Side, b: Side, metric: str, ignore: Sequence[str],
                   across_machines: bool) -> list[tuple[dict[str, list[float]], dict[str, list[float]]]] | None:
    """Where A and B are the two sides of one interleaved comparison: for each round both have,
    in order, the metric's values of each point key on each side. None otherwise."""
    if not (a.interleaved and b.interleaved and a.interleaved["group"] == b.interleaved["group"]
            and a.interleaved["side"] != b.interleaved["side"]):
        return None
    def by_round(side: Side) -> dict[int, dict[str, list[float]]]:
        out = {}
        for one in side.rounds:
            values = _values(one, metric)
            out[one.interleaved["round"]] = {key: values.get(point, [])
                                             for key, (point, _, _) in _points(one, ignore, across_machines).items()}
        return out
    rounds_a, rounds_b = by_round(a), by_round(b)
    return [(rounds_a[r], rounds_b[r]) for r in sorted(set(rounds_a) & set(rounds_b))]


def _machines_of(side: Side) -> dict[int, str]:
    """The kind of machine each point of a run ran on (results' `machine`), by point id."""
    return {int(record["point"]): str(record.get("machine"))
            for record in side.points.to_dict("records")}


def metrics(side: Side) -> list[str]:
    """The metrics a run's samples have: those of every sample, then its kernels' own."""
    params = _param_columns(side.points)
    own = [c for c in side.samples.columns if c not in results.SAMPLE_COLUMNS and c not in params]
    return [*SAMPLE_METRICS, *own]


def _check_metric(metric: str, a: Side, b: Side) -> None:
    known = list(dict.fromkeys(metrics(a) + metrics(b)))
    if metric not in known:
        raise CompareError(f"--metric: unknown metric '{metric}' (metrics of these runs: "
                           f"{', '.join(known)})")


def _check_ignored(ignore: Sequence[str], a: Side, b: Side) -> None:
    present = list(dict.fromkeys([*a.points["kernel"], *b.points["kernel"]]))
    known = _catalogue(a, b)
    names = [p.name for kernel in present for p in known.params(kernel)]
    names = list(dict.fromkeys(names + _param_columns(a.points) + _param_columns(b.points)))
    for name in ignore:
        if name not in names:
            raise CompareError(f"--ignore: '{name}' is not a parameter of {', '.join(present)} "
                               f"(parameters: {', '.join(names)})")


def _param_columns(points: pd.DataFrame) -> list[str]:
    return [c for c in points.columns if c not in results.POINT_COLUMNS]


def _catalogue(a: Side, b: Side) -> Catalogue:
    """Both runs' kernels, as each stored them (A's where both have one)."""
    return results.catalogue_of(a.points).merged(results.catalogue_of(b.points))


def _points(side: Side, ignore: Sequence[str], across_machines: bool = False) -> dict[str, tuple[int, str, dict]]:
    """The points of a run by matching key: (point id, kernel, parameters); the key holds the
    point's machine unless `across_machines`. Two points on one key (they differ in ignored
    parameters only) are refused, naming both."""
    columns = _param_columns(side.points)
    found: dict[str, tuple[int, str, dict]] = {}
    known = results.catalogue_of(side.points)
    for record in side.points.sort_values("position").to_dict("records"):
        order = [p.name for p in known.params(record["kernel"]) if p.name in columns] or columns
        params = {name: _plain(record[name]) for name in order if not _missing(record[name])}
        # A dispatcher's own settings (threads, stack_kb: a parameter the catalogue scopes to
        # some dispatchers) go with it when it is ignored: they follow from which one ran.
        following = {p.name for p in known.params(record["kernel"]) if p.applies_to} \
            if "dispatcher" in ignore else set()
        matched = {name: value for name, value in params.items() if name not in ignore and name not in following}
        machine = None if across_machines else record.get("machine")
        # A point of another measure is another point (its time was taken under valgrind, say).
        measure = record.get("measure") or "time"
        key = json.dumps([record["kernel"], matched, record["env"], record["cpus"], machine]
                         + ([measure] if measure != "time" else []), sort_keys=True)
        if key in found:
            _, kernel, other = found[key]
            raise CompareError(
                f"--ignore {' '.join(ignore)}: run {side.run.id} has points that differ only in "
                f"ignored parameters, so they cannot be matched: {label(kernel, other)}; "
                f"{label(record['kernel'], params)}")
        found[key] = (int(record["point"]), record["kernel"], params)
    return found


def _values(side: Side, metric: str) -> dict[int, list[float]]:
    """The metric's values of each point id (none where the kernel lacks it)."""
    if metric not in side.samples.columns:
        return {}
    measured = side.samples.dropna(subset=[metric])
    return {int(point): [float(v) for v in group[metric]]
            for point, group in measured.groupby("point")}


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _plain(value: object) -> object:
    """A parameter value from a frame as JSON has it: a column with gaps holds 2 as 2.0."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def label(kernel: str, params: dict) -> str:
    """A point in words: its kernel and parameters."""
    return f"{kernel} {_params_text(params)}".strip()


def _params_text(params: dict) -> str:
    return " ".join(f"{name}={text.show(value)}" for name, value in params.items())


# -- output ---------------------------------------------------------------------------------


def markdown(c: Comparison) -> str:
    """The comparison as markdown: the runs, a table per kernel (a row per point, a column per
    parameter that varies), the geometric mean, and what was not compared."""
    direction = "lower is better" if c.lower_is_better else "higher is better"
    out = [f"## Run {c.b.id} (B) against run {c.a.id} (A): {c.metric}, {direction}", ""]
    runs = [[side, str(run.id) if c.a.db == c.b.db else f"{run.id} of {run.db}", run.name,
             run.started_at[:19].replace("T", " "), run.machine, run.code or "-"]
            for side, run in (("A", c.a), ("B", c.b))]
    out += [text.markdown_table(["", "run", "name", "started (UTC)", "machine", "code"], runs), ""]
    out += _machines_note(c)
    out += _basis_note(c)
    for kernel in dict.fromkeys(row.kernel for row in c.rows):
        out += _kernel_table(c, kernel, [row for row in c.rows if row.kernel == kernel])
    out += [_summary(c), ""]
    for title, points in ((f"Only in A (run {c.a.id}), not compared:", c.only_a),
                          (f"Only in B (run {c.b.id}), not compared:", c.only_b)):
        if points:
            out += [title, "", *(f"- {text.cell(label(k, p))}" for k, p in points), ""]
    if c.elsewhere:
        out += ["In both runs but on different kinds of machine, not compared "
                "(`--across-machines` compares them):", "",
                *(f"- {text.cell(label(k, p))}: A on {text.cell(ma)}; B on {text.cell(mb)}"
                  for k, p, ma, mb in c.elsewhere), ""]
    if c.unmeasured:
        out += [f"No {c.metric} samples on a side (failed, not a metric of the kernel, or not counted by the point's measure):", "",
                *(f"- {text.cell(label(k, p))}: none in {side}" for k, p, side in c.unmeasured), ""]
    tested = sum(row.difference.p_adjusted is not None for row in c.rows)
    if c.basis.startswith(ROUNDS):
        notes = ("B/A: the 20% trimmed geometric mean over the rounds of the ratio of a round's "
                 "medians, with its 95% interval. p: Yuen's trimmed t-test of the rounds' log "
                 "ratios, two-sided (a round that a burst of load hit on one side only is among the "
                 "trimmed)")
    elif c.basis.startswith(CALIBRATED):
        notes = ("B/A: ratio of the medians; its 95% interval and p from a t-test against the spread "
                 "the calibration measured between runs of one build (where a point has none: the "
                 "bootstrap interval and the Mann-Whitney U test)")
    else:
        notes = "B/A: ratio of the medians, with its 95% bootstrap interval. p: Mann-Whitney U test, two-sided"
    notes += (f", adjusted by Holm's method over the {tested} points tested (the chance of any false "
              f"verdict among them at most {c.alpha:g}); a verdict needs 3 samples (or rounds) a "
              f"side and an adjusted p < {c.alpha:g}, or, where both sides are without noise (values "
              f"within {QUIET_SPREAD:.1%} of each other, as instruction counts are), ranges that do not "
              "overlap. detectable: the change the test finds 80% of the time")
    if c.min_change:
        notes += f", and a change of {c.min_change:g}% or more (else \"no change\")"
    if c.ignored:
        notes += f". Matched ignoring {', '.join(c.ignored)}"
    notes += (". Matched across machines (--across-machines)" if c.across_machines
              else ". Matched on the same kind of machine only")
    out.append(notes + ".")
    return "\n".join(out) + "\n"


WIDE_DETECTABLE = 10.0  # percent: rounds whose wall times detect no finer get the CPU-time hint


def _basis_note(c: Comparison) -> list[str]:
    """What the verdicts rest on, and the warning where the runs were neither interleaved nor
    calibrated: their samples share their moment's load, so drift reads as a difference."""
    if c.basis.startswith(ROUNDS):
        note = (f"Interleaved: A and B measured in alternating rounds ({c.basis.split(': ')[1]}, "
                "A B B A ...), each round's medians paired: what drifts on the machine between "
                "rounds moves both sides alike.")
        widths = [row.difference.detectable for row in c.rows if row.difference.detectable]
        if c.metric == DEFAULT_METRIC and widths and statistics.median(widths) > WIDE_DETECTABLE:
            note += (f" The rounds' wall times tell apart only changes of about ±{statistics.median(widths):.0f}% "
                     "here (a load takes its share of every sample, A's and B's alike but not "
                     "equally): where the points run on one thread, `--metric cpu_ns` leaves the "
                     "load's share out (docs/comparing.md).")
        return [note, ""]
    if c.basis.startswith(CALIBRATED):
        return ["Not interleaved: each verdict is held against the spread that runs of one build "
                "showed against each other on this kind of machine (A/A calibration "
                f"{', '.join(c.calibrations)}, `labctl calibrate`).", ""]
    if not c.rows or all(row.difference.quiet for row in c.rows):
        return []
    return ["**Not calibrated:** the runs were not interleaved, and the store has no A/A "
            "calibration of these points on this kind of machine, so each verdict rests on the two "
            "runs' own samples, which share their moment's load: a change of the machine between the "
            "runs reads as a difference. `labctl calibrate EXPERIMENT` measures the spread between "
            "runs that the verdicts are then held to; `labctl ab` interleaves two builds.", ""]


def _machines_note(c: Comparison) -> list[str]:
    """What the header says about where the points ran: nothing when both runs ran on the same
    machines; otherwise how the points were matched."""
    if c.same_machine:
        return []
    if c.across_machines:
        return ["**Warning:** the runs come from different machines, and each point is compared "
                "with the same point of the other run whatever machine it ran on "
                "(`--across-machines`): a difference may be the machine's, not the code's.", ""]
    if c.same_kinds:
        return ["**Warning:** the runs come from different machines (hosts of the same kind: the "
                "same CPU, CPUs, cores and OS kernel), matched point by point: a difference may be "
                "the machine's, not the code's.", ""]
    return ["**Warning:** the runs come from different machines, so a point is compared only with "
            "the same point on the same kind of machine; the others are listed below, those of "
            "both runs apart from those of one. `--across-machines` compares them across machines.", "",
            *(f"- {side} ran on: {text.cell('; '.join(run.machines))}"
              for side, run in (("A", c.a), ("B", c.b))), ""]


def _kernel_table(c: Comparison, kernel: str, rows: list[Row]) -> list[str]:
    spec = c.catalogue.kernels.get(kernel) or Kernel(kernel, "", "", (), "", "", ())
    varying = analysis.varying([row.params_a for row in rows] + [row.params_b for row in rows], spec,
                               missing_varies=True)
    columns = [*varying, "n A/B", "median A", "median B", "B/A (95% CI)", "change", "p (Holm)",
               "detectable", "verdict"]
    cells = []
    for row in rows:
        d = row.difference
        interval = (f" ({_ratio(d.ratio_low)}..{_ratio(d.ratio_high)})"
                    if d.ratio_low is not None else "")
        cells.append([*(_param_cell(row, name) for name in varying), f"{d.n_a}/{d.n_b}",
                      lookup(c.metric).format(d.median_a), lookup(c.metric).format(d.median_b),
                      _ratio(d.ratio) + interval,
                      f"{d.change:+.1f}%" if math.isfinite(d.change) else "n/a",
                      _p_cell(d), "±" + text.percent(d.detectable) if d.detectable is not None else "-", d.text])
    fixed = {name: value for name, value in rows[0].params_a.items() if name not in varying}
    return [f"### {kernel}", "", text.markdown_table(columns, cells), "",
            f"fixed: {text.cell(_params_text(fixed) or '-')}", ""]


def _p_cell(d: Difference) -> str:
    if d.p_value is None:
        return "-"
    return f"{d.p_value:.2g}" + (f" ({d.p_adjusted:.2g})" if d.p_adjusted is not None else "")


def _param_cell(row: Row, name: str) -> str:
    a, b = (text.show(p[name]) if name in p else "-" for p in (row.params_a, row.params_b))
    return a if a == b else f"{a} → {b}"


def _summary(c: Comparison) -> str:
    if not c.rows:
        return "No point has samples in both runs: nothing to compare."
    mean = c.geometric_mean
    counts: dict[str, int] = {}
    for row in c.rows:
        counts[row.difference.verdict] = counts.get(row.difference.verdict, 0) + 1
    judged = {v: n for v, n in counts.items() if v not in WITHOUT_VERDICT}
    unjudged = {v: n for v, n in counts.items() if v in WITHOUT_VERDICT}
    text = (f"Geometric mean of B/A over {len(c.rows)} point{'s' if len(c.rows) > 1 else ''}: "
            + (f"{mean:.3f} ({(mean - 1) * 100:+.1f}%)" if mean is not None else "n/a")
            + f". With a verdict: {sum(judged.values())}")
    if judged:
        text += " (" + ", ".join(f"{n} {v}" for v, n in judged.items()) + ")"
    if unjudged:
        text += (f"; without: {sum(unjudged.values())} ("
                 + ", ".join(f"{n} {v}" for v, n in unjudged.items()) + ")")
    return text + "."


def _ratio(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "n/a"


def to_json(c: Comparison) -> dict:
    """The comparison as JSON-ready data: no NaN or infinity (null instead)."""
    def point(kernel: str, params: dict) -> dict:
        return {"kernel": kernel, "params": params}

    data = {
        "a": asdict(c.a), "b": asdict(c.b), "metric": c.metric,
        "lower_is_better": c.lower_is_better, "ignored": list(c.ignored),
        "min_change": c.min_change, "alpha": c.alpha, "same_machine": c.same_machine,
        "across_machines": c.across_machines, "basis": c.basis, "calibrations": c.calibrations,
        "geometric_mean": c.geometric_mean,
        "points": [{
            "kernel": row.kernel, "params_a": row.params_a, "params_b": row.params_b,
            **{k: v for k, v in asdict(row.difference).items()
               if k not in ("lower_is_better", "min_change")},
            "change": row.difference.change, "verdict_text": row.difference.text,
        } for row in c.rows],
        "only_a": [point(k, p) for k, p in c.only_a],
        "only_b": [point(k, p) for k, p in c.only_b],
        "elsewhere": [{**point(k, p), "machine_a": ma, "machine_b": mb} for k, p, ma, mb in c.elsewhere],
        "unmeasured": [{**point(k, p), "missing_in": side} for k, p, side in c.unmeasured],
    }
    return _finite(data)


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
