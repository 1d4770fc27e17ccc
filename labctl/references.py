"""Published figures beside ours: each figure of a study's table matched to our point, both
sides relative to their own best, and the study's ranking checked pair by pair (holds, within
noise, reversed). They were measured on other hardware: ratios and rankings, never absolute
values."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pandas as pd

from labctl.analysis import _key, point_table
from labctl.metrics import RATE, Metric, lookup
from labctl.schema import Figure, Reference

# Published figures closer than this (ratio) are a tie in the study: no order to check.
TIE_RATIO = 1.10
# Units a published figure may be given in, in our units (ns; messages per second).
TIME_UNITS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
RATE_UNITS = {"msgs/s": 1.0, "K msgs/s": 1e3, "M msgs/s": 1e6}


@dataclass
class Match:
    figure: Figure
    median: float | None = None  # ours, in our units (ns or msgs/s), per `per`
    interval: tuple[float, float] | None = None
    problem: str | None = None  # why there is no figure of ours

    def relative(self, best: float, lower_is_better: bool) -> float:
        return self.median / best if lower_is_better else best / self.median


@dataclass
class Comparison:
    reference: Reference
    matches: list[Match]
    verdict: str
    agree: list[str] = field(default_factory=list)
    reversed: list[str] = field(default_factory=list)
    unclear: list[str] = field(default_factory=list)
    tau: float | None = None

    @property
    def ours(self) -> list[Match]:
        return [m for m in self.matches if m.figure.peer is None and m.median is not None]


def compare_reference(reference: Reference, samples: pd.DataFrame) -> Comparison:
    """Our median for each published figure of `reference`, and whether the study's ranking of
    the figures holds on our points: each pair the study orders (more than 10% apart) is checked
    against ours, a pair whose 95% intervals overlap here is reported as unclear, not as agreeing."""
    kernel_samples = samples[samples["kernel"] == reference.kernel]
    for name, value in reference.where.items():
        if name not in kernel_samples:
            kernel_samples = kernel_samples.iloc[0:0]
            break
        kernel_samples = kernel_samples[kernel_samples[name].map(lambda v: _key(v) == _key(value)).astype(bool)]
    metric = lookup(reference.metric).directed(reference.lower_is_better)
    matches = []
    for figure in reference.figures:
        match = Match(figure)
        matches.append(match)
        if figure.peer is not None:
            continue
        if metric.name not in kernel_samples or (reference.per and reference.per not in kernel_samples):
            match.problem = f"{reference.kernel} records no '{metric.name}'"
            continue
        chosen = kernel_samples
        for name, value in figure.params.items():
            # astype(bool): an empty selection maps to an empty column of objects, which pandas
            # would read as a list of columns, not as a mask.
            chosen = chosen[chosen[name].map(lambda v: _key(v) == _key(value)).astype(bool)] \
                if name in chosen else chosen.iloc[0:0]
        points = chosen["point"].unique()
        if len(points) == 0:
            match.problem = "not in this run"
        elif len(points) > 1:
            match.problem = f"{len(points)} points of this run match; the reference must name one"
        else:
            row = point_table(chosen, metric, reference.per).iloc[0]
            match.median = float(row["median"])
            if _key(row["ci_low"]) is not None:
                match.interval = (float(row["ci_low"]), float(row["ci_high"]))
    return rank(reference, matches)


def rank(reference: Reference, matches: list[Match]) -> Comparison:
    ours = [m for m in matches if m.figure.peer is None and m.median is not None]
    comparison = Comparison(reference, matches, "")
    if len(ours) < 2:
        comparison.verdict = (f"{len(ours)} of the study's figures matched a point of this run: "
                              "no ranking to compare.")
        return comparison
    lower = reference.lower_is_better
    for a, b in itertools.combinations(ours, 2):
        published = a.figure.value / b.figure.value
        if max(published, 1 / published) < TIE_RATIO:
            continue  # a tie in the study: no order to check
        first, second = (a, b) if (published < 1) == lower else (b, a)  # first is better there
        study = _times(first.figure.value, second.figure.value)
        here = first.median / second.median
        overlap = (first.interval and second.interval
                   and first.interval[0] <= second.interval[1] and second.interval[0] <= first.interval[1])
        pair = f"{first.figure.label} vs {second.figure.label}"
        if overlap:
            comparison.unclear.append(f"{pair}: study {study} faster; here within noise")
        elif (here < 1) == lower:
            comparison.agree.append(f"{pair}: study {study}, here {_times(first.median, second.median)}")
        else:
            comparison.reversed.append(f"{pair}: study {study} faster for the first; here the "
                                       f"second is {_times(second.median, first.median)} faster")
    from scipy.stats import kendalltau

    tau = kendalltau([m.figure.value for m in ours], [m.median for m in ours]).statistic
    comparison.tau = None if tau != tau else float(tau)
    checked = len(comparison.agree) + len(comparison.reversed) + len(comparison.unclear)
    best_study = min(ours, key=lambda m: m.figure.value if lower else -m.figure.value)
    best_here = min(ours, key=lambda m: m.median if lower else -m.median)
    winner = (f"the best is {best_study.figure.label} in both" if best_study is best_here else
              f"the study's best is {best_study.figure.label}, ours is {best_here.figure.label}")
    if checked == 0:
        comparison.verdict = f"The study's figures are all within {TIE_RATIO:.2f}x: no order to check; {winner}."
    elif comparison.reversed:
        comparison.verdict = (f"**The study's ranking does not hold here**: {len(comparison.reversed)} "
                              f"of {checked} ordered pairs are reversed; {winner}.")
    elif not comparison.agree:
        comparison.verdict = (f"**We cannot tell here**: all {checked} pairs the study orders are within "
                              f"noise on this run; {winner}.")
    elif comparison.unclear:
        comparison.verdict = (f"**The study's ranking holds where we can tell**: {len(comparison.agree)} "
                              f"of {checked} ordered pairs agree, {len(comparison.unclear)} within "
                              f"noise here; {winner}.")
    else:
        comparison.verdict = (f"**The study's ranking holds here**: all {checked} ordered pairs agree; "
                              f"{winner}.")
    return comparison


def _times(a: float, b: float) -> str:
    ratio = max(a, b) / min(a, b)
    return f"{ratio:.2f}x"


def in_unit(value: float, metric: Metric, unit: str) -> float | None:
    """Our value in the published unit, where the two are the same kind of quantity."""
    if metric.is_time and unit in TIME_UNITS:
        return value / TIME_UNITS[unit]
    if metric.unit == RATE and unit in RATE_UNITS:
        return value / RATE_UNITS[unit]
    return None


def ranks(values: list[float], lower_is_better: bool) -> list[int]:
    order = sorted(range(len(values)), key=lambda i: values[i] if lower_is_better else -values[i])
    ranks = [0] * len(values)
    for rank, index in enumerate(order, 1):
        ranks[index] = rank
    return ranks
