"""Two runs compared point by point: is B faster, slower, or is the difference noise?

Points are matched by kernel, parameters, environment, CPUs and measure (what makes a point key),
less the parameters the caller ignores, and by the kind of machine each point ran on
(labctl.results' `machine`): a point of one kind of host is compared with one of another kind only
when asked (across_machines), and the header says so. For each point measured in both runs: the ratio of medians B/A of
a metric with its 95% bootstrap interval, the Mann-Whitney U test (two-sided), and a verdict.
Below 3 samples on a side there is no verdict: two single values are never "significant". Where
the test cannot reach alpha at the sample sizes (3 against 3: p is never below 0.1) it says so,
rather than "no difference". A metric that reproduces (instruction counts: each side's values
within QUIET_SPREAD of each other) is judged without the test, which has nothing to rank there:
two such samples whose ranges do not overlap differ, however little. Pure functions over the
frames of labctl.results, and a markdown renderer.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from labctl import analysis, results, stats, text
from labctl.metrics import COMPARABLE, lookup
from labctl.schema import Catalogue, Kernel
from labctl.store import Store

ALPHA = 0.05
DEFAULT_METRIC = "elapsed_ns"
# Metrics of every sample with a direction (labctl.metrics.COMPARABLE: the counts where its
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
            return f"cannot be significant at n={self.n_a} vs {self.n_b}"
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
    git_describe: str | None
    db: str
    machines: tuple[str, ...] = ()  # the kinds of machine its points ran on (results' `machine`)
    hosts: tuple[str, ...] = ()  # and their host names


@dataclass
class Side:
    """One run's samples and points, as labctl.results gives them."""

    run: Run
    samples: pd.DataFrame  # results.load
    points: pd.DataFrame  # results.points


def load(db: str | Path, run: int | str) -> Side:
    """A run (an id or 'latest') of a store. Raises StoreError for an unknown run."""
    with Store(db, create=False) as store:
        run_id = store.resolve_run(run)
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
    info = Run(int(run_id), row.name, row.started_at, where, row.context.get("git_describe"), str(db),
               tuple(kinds), hosts)
    return Side(info, results.load(db, run_id), results.points(db, run_id))


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
    rows, only_a, unmeasured = [], [], []
    for key, (point, kernel, params) in points_a.items():
        if key not in points_b:
            only_a.append((kernel, params))
            continue
        point_b, _, params_b = points_b[key]
        sample_a, sample_b = values_a.get(point, []), values_b.get(point_b, [])
        if sample_a and sample_b:
            rows.append(Row(kernel, params, params_b, difference(
                sample_a, sample_b, lookup(metric).lower_is_better, min_change, alpha)))
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
    return Comparison(a.run, b.run, metric, tuple(ignore), min_change, alpha, rows, only_a,
                      only_b, unmeasured, same_machine, _catalogue(a, b), across_machines, elsewhere)


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
             run.started_at[:19].replace("T", " "), run.machine, run.git_describe or "-"]
            for side, run in (("A", c.a), ("B", c.b))]
    out += [text.markdown_table(["", "run", "name", "started (UTC)", "machine", "git describe"], runs), ""]
    out += _machines_note(c)
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
    notes = (f"B/A: ratio of the medians, with its 95% bootstrap interval. p: Mann-Whitney U "
             f"test, two-sided; a verdict needs 3 samples a side and p < {c.alpha:g}, or, where "
             f"both sides are without noise (values within {QUIET_SPREAD:.1%} of each other, as "
             "instruction counts are), ranges that do not overlap")
    if c.min_change:
        notes += f", and a change of {c.min_change:g}% or more (else \"no change\")"
    if c.ignored:
        notes += f". Matched ignoring {', '.join(c.ignored)}"
    notes += (". Matched across machines (--across-machines)" if c.across_machines
              else ". Matched on the same kind of machine only")
    out.append(notes + ".")
    return "\n".join(out) + "\n"


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
    columns = [*varying, "n A/B", "median A", "median B", "B/A (95% CI)", "change", "p", "verdict"]
    cells = []
    for row in rows:
        d = row.difference
        interval = (f" ({_ratio(d.ratio_low)}..{_ratio(d.ratio_high)})"
                    if d.ratio_low is not None else "")
        cells.append([*(_param_cell(row, name) for name in varying), f"{d.n_a}/{d.n_b}",
                      lookup(c.metric).format(d.median_a), lookup(c.metric).format(d.median_b),
                      _ratio(d.ratio) + interval,
                      f"{d.change:+.1f}%" if math.isfinite(d.change) else "n/a",
                      f"{d.p_value:.2g}" if d.p_value is not None else "-", d.text])
    fixed = {name: value for name, value in rows[0].params_a.items() if name not in varying}
    return [f"### {kernel}", "", text.markdown_table(columns, cells), "",
            f"fixed: {text.cell(_params_text(fixed) or '-')}", ""]


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
        "across_machines": c.across_machines,
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
