"""Published figures beside ours: each figure of a study's table matched to our point, both
sides relative to their own best, and the study's ranking checked pair by pair (holds, within
noise, reversed). They were measured on other hardware: ratios and rankings, never absolute
values."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from labctl.read.analysis import _key, point_table
from labctl.read.results import param_columns
from labctl.vocabulary.metrics import RATE, Metric, lookup
from labctl.vocabulary.schema import OURS, RUNTIME, Claim, Figure, Reference
from labctl.vocabulary.text import show

# A verdict, as data: of a reference's ranking (the study's ordered pairs checked on ours), or of
# a claim. "no order": the study's figures are all ties; "no ranking": fewer than two of ours
# matched; "beside its peers": the study prints no number of its own runtime's to rank.
VERDICTS = ("holds", "holds where we can tell", "cannot tell", "does not hold", "no order",
            "no ranking", "beside its peers", "not judged")

# Published figures closer than this (ratio) are a tie in the study: no order to check.
TIE_RATIO = 1.10
# Units a published figure may be given in, in our units (ns; messages per second).
TIME_UNITS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
RATE_UNITS = {"msgs/s": 1.0, "K msgs/s": 1e3, "M msgs/s": 1e6}


@dataclass
class Match:
    figure: Figure
    # Ours, in our units (ns or msgs/s), per `per`: the study's statistic of our samples (the
    # best of them where it published its best run), so like is compared with like.
    value: float | None = None
    median: float | None = None  # of our samples, with its 95% interval: what noise is judged on
    interval: tuple[float, float] | None = None
    samples: int = 0
    params: dict[str, object] = field(default_factory=dict)  # our point's, as it ran
    problem: str | None = None  # why there is no figure of ours

    def relative(self, best: float, lower_is_better: bool) -> float:
        return self.value / best if lower_is_better else best / self.value


@dataclass
class Comparison:
    reference: Reference
    matches: list[Match]
    verdict: str
    # The verdict as data (VERDICTS), which a report also writes to verdicts.json for what quotes it.
    kind: str = ""
    agree: list[str] = field(default_factory=list)
    reversed: list[str] = field(default_factory=list)
    unclear: list[str] = field(default_factory=list)
    tau: float | None = None

    @property
    def measured(self) -> list[Match]:
        """Our points this run measured, the study's number for them printed or not."""
        return [m for m in self.matches if m.figure.peer is None and m.value is not None]

    @property
    def ours(self) -> list[Match]:
        """Our points this run measured whose study's number is printed: the ones ranked."""
        return [m for m in self.measured if m.figure.published]

    def differences(self) -> list[Difference]:
        """Each parameter whose study value (StudyRan.params, or a figure's own) differs from our
        matched point's, with the figures it differs for."""
        found: dict[tuple[str, str, str], list[str]] = {}
        for match in self.measured:
            for name, theirs in self.reference.study_params(match.figure).items():
                ours = match.params.get(name)
                if _key(ours) != _key(theirs):
                    key = (name, "does not apply" if _key(ours) is None else show(_key(ours)), show(theirs))
                    found.setdefault(key, []).append(match.figure.published_as)
        every = len(self.measured)
        return [Difference(name, ours, theirs, [] if len(figures) == every else figures)
                for (name, ours, theirs), figures in found.items()]


@dataclass(frozen=True)
class Difference:
    """A parameter of ours whose value in this run differs from what the study ran."""

    name: str
    ours: str
    study: str
    figures: list[str]  # the figures it differs for; empty: every one of ours

    def text(self) -> str:
        where = f" (for {', '.join(self.figures)})" if self.figures else ""
        return f"{self.name}: ours {self.ours}, the study {self.study}{where}"


def statistic(values: Sequence[float], name: str, lower_is_better: bool) -> float:
    """The statistic `name` (labctl.vocabulary.schema.STATISTICS) of our samples' values; the median where
    the study's is not recorded or is a single run of unknown kind."""
    if name == "mean":
        return float(np.mean(values))
    if name == "best":
        return float(min(values) if lower_is_better else max(values))
    if name == "min":
        return float(min(values))
    if name == "max":
        return float(max(values))
    return float(np.median(values))


def compare_reference(reference: Reference, samples: pd.DataFrame) -> Comparison:
    """Ours for each published figure of `reference` (the study's statistic of our samples), and
    whether the study's ranking of the figures holds on our points: each pair the study orders (more than 10% apart) is checked
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
            measured = chosen[chosen[metric.name].notna()]
            values = measured[metric.name].astype(float)
            if reference.per:
                values = values / measured[reference.per].astype(float)
            match.value = statistic(list(values), reference.study.statistic, reference.lower_is_better)
            match.samples = len(values)
            match.params = {name: measured[name].iloc[0] for name in param_columns(measured)}
    return rank(reference, matches)


def rank(reference: Reference, matches: list[Match]) -> Comparison:
    comparison = Comparison(reference, matches, "")
    ours = comparison.ours
    # The study's own runtime is the one our runtime stands for; its other runtimes are peers, or
    # figures of ours with `runtime` where the lab runs them.
    own = [m for m in matches if m.figure.peer is None and m.figure.params.get(RUNTIME, OURS) == OURS]
    if not any(m.figure.published for m in own):
        comparison.kind = "beside its peers"
        comparison.verdict = ("The study prints no number for its own runtime here, only its "
                              "other runtimes' results: ours is set beside them below (a runtime "
                              "run here, measured on this machine; one known from the study alone, "
                              "by absolute value: two machines, an indication), no verdict.")
        return comparison
    if len(ours) < 2:
        comparison.kind = "no ranking"
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
        here = first.value / second.value
        overlap = (first.interval and second.interval
                   and first.interval[0] <= second.interval[1] and second.interval[0] <= first.interval[1])
        pair = f"{first.figure.published_as} vs {second.figure.published_as}"
        if overlap:
            comparison.unclear.append(f"{pair}: study {study} faster; here within noise")
        elif (here < 1) == lower:
            comparison.agree.append(f"{pair}: study {study}, here {_times(first.value, second.value)}")
        else:
            comparison.reversed.append(f"{pair}: study {study} faster for the first; here the "
                                       f"second is {_times(second.value, first.value)} faster")
    from scipy.stats import kendalltau

    tau = kendalltau([m.figure.value for m in ours], [m.value for m in ours]).statistic
    comparison.tau = None if tau != tau else float(tau)
    checked = len(comparison.agree) + len(comparison.reversed) + len(comparison.unclear)
    best_study = min(ours, key=lambda m: m.figure.value if lower else -m.figure.value)
    best_here = min(ours, key=lambda m: m.value if lower else -m.value)
    winner = (f"the best is {best_study.figure.published_as} in both" if best_study is best_here else
              f"the study's best is {best_study.figure.published_as}, ours is {best_here.figure.published_as}")
    comparison.kind = ("no order" if checked == 0 else "does not hold" if comparison.reversed else
                       "cannot tell" if not comparison.agree else
                       "holds where we can tell" if comparison.unclear else "holds")
    comparison.verdict = {
        "no order": f"The study's figures are all within {TIE_RATIO:.2f}x: no order to check; {winner}.",
        "does not hold": (f"**The study's ranking does not hold here**: {len(comparison.reversed)} "
                          f"of {checked} ordered pairs are reversed; {winner}."),
        "cannot tell": (f"**We cannot tell here**: all {checked} pairs the study orders are within "
                        f"noise on this run; {winner}."),
        "holds where we can tell": (f"**The study's ranking holds where we can tell**: {len(comparison.agree)} "
                                    f"of {checked} ordered pairs agree, {len(comparison.unclear)} within "
                                    f"noise here; {winner}."),
        "holds": f"**The study's ranking holds here**: all {checked} ordered pairs agree; {winner}.",
    }[comparison.kind]
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


@dataclass
class ClaimVerdict:
    claim: Claim
    numerator: float | None = None  # ours: the study's statistic of our samples
    denominator: float | None = None
    verdict: str = ""
    kind: str = ""  # VERDICTS: holds, does not hold, not judged

    @property
    def ratio(self) -> float | None:
        if self.numerator is None or self.denominator is None:
            return None
        return self.numerator / self.denominator


def judge_claim(claim: Claim, samples: pd.DataFrame) -> ClaimVerdict:
    """The claim's ratio on our points: it holds where ours is within its tolerance of the
    study's (a factor either way)."""
    judged = ClaimVerdict(claim)
    lower = lookup(claim.metric).lower_is_better
    sides = []
    for side in (claim.numerator, claim.denominator):
        wanted = dict(side)
        chosen = samples[samples["kernel"] == wanted.pop("kernel")]
        for name, value in wanted.items():
            chosen = chosen[chosen[name].map(lambda v: _key(v) == _key(value)).astype(bool)] \
                if name in chosen else chosen.iloc[0:0]
        if claim.metric in chosen:
            chosen = chosen[chosen[claim.metric].notna()]
        points = chosen["point"].nunique() if not chosen.empty else 0
        if points != 1 or claim.metric not in chosen:
            judged.kind = "not judged"
            judged.verdict = (f"Not judged: {points} points of this run match "
                              f"{', '.join(f'{k}={show(v)}' for k, v in side.items())} (one is needed).")
            return judged
        sides.append(statistic(list(chosen[claim.metric].astype(float)), claim.study.statistic, lower))
    judged.numerator, judged.denominator = sides
    ours, theirs = judged.ratio, claim.ratio
    apart = max(ours / theirs, theirs / ours)
    judged.kind = "holds" if apart <= claim.tolerance else "does not hold"
    if judged.kind == "holds":
        judged.verdict = (f"**Holds here**: ours {ours:.2f}, the study's {theirs:.2f} "
                          f"(within {claim.tolerance:.2f}x).")
    else:
        judged.verdict = (f"**Does not hold here**: ours {ours:.2f}, the study's {theirs:.2f}, "
                          f"{apart:.2f}x apart (it holds within {claim.tolerance:.2f}x).")
    return judged
