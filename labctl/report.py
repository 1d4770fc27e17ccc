"""`labctl report`: a run as a folder holding report.md and its figures, readable on GitHub as is.

For each kernel: a figure of its metric against the numeric parameter that varies (threads first),
one line per configuration with its 95% interval as a band; a heat map where two numeric parameters
vary; bars where none does; a table of medians with their spread, noisy points flagged. Then the
failed points with their reasons, the machine and the command to rerun, and, where the experiment
carries published figures, those figures beside ours, compared as ratios and rankings.

Everything is read through labctl.results; the statistics are labctl.stats'.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from labctl import __version__, experiment, files, kernels, results, runtimes, stats
from labctl.store import RunRow, Store, now
from labctl.text import printable

# Short names of parameters in labels and legends.
SHORT = {"max_demands_at_once": "mda", "spin_us": "spin", "threads": "threads"}
# Parameters that name a configuration by their value alone.
BY_VALUE = ("dispatcher", "fifo")
# Figures per kernel, one per scenario (size, kind of work); the table lists every point.
MAX_SCENARIOS = 12
# Published figures closer than this (ratio) are a tie in the study: no order to check.
TIE_RATIO = 1.10
# Values spanning more than this ratio get a log scale.
LOG_SPAN = 30.0
# Units a published figure may be given in, in our units (ns; messages per second).
TIME_UNITS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
RATE_UNITS = {"msgs/s": 1.0, "K msgs/s": 1e3, "M msgs/s": 1e6}


# -- statistics of a run: one row per point ----------------------------------------------------

@dataclass(frozen=True)
class Metric:
    column: str  # elapsed_ns, msgs_per_s, or a kernel metric
    lower_is_better: bool

    @property
    def is_time(self) -> bool:
        return self.column.endswith("_ns")

    def scale(self, values) -> tuple[float, str]:
        """A divisor and unit that suit `values`: (1e6, "ms"), or (1e6, "M msgs/s")."""
        largest = max((abs(v) for v in values if v == v), default=1.0)
        if self.is_time:
            for unit, factor in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
                if largest >= factor:
                    return factor, unit
            return 1.0, "ns"
        if self.column == "msgs_per_s":
            return (1e6, "M msgs/s") if largest >= 1e5 else (1.0, "msgs/s")
        return 1.0, ""

    @property
    def title(self) -> str:
        if self.column == "elapsed_ns":
            return "time per run"
        if self.column == "msgs_per_s":
            return "throughput"
        return self.column.removesuffix("_ns").replace("_", " ")


TIME = Metric("elapsed_ns", True)
THROUGHPUT = Metric("msgs_per_s", False)


def kernel_metric(samples: pd.DataFrame) -> Metric:
    """Time when every run of the kernel did the same work, throughput when the work varies (a
    size axis, or a kernel that runs for a fixed time)."""
    fixed_time = "duration_s" in samples and samples["duration_s"].notna().any()
    same_work = samples["messages_processed"].nunique() == 1
    return TIME if same_work and not fixed_time else THROUGHPUT


def point_table(samples: pd.DataFrame, metric: Metric, per: str | None = None) -> pd.DataFrame:
    """One row per point of `samples`: its parameters, sample count, the median of `metric`
    (divided by the parameter `per`) with its 95% interval, cv and noise flag, and the median
    throughput."""
    rows = []
    params = results.param_columns(samples)
    for point, group in samples.groupby("point", sort=True):
        values = group[metric.column].astype(float)
        if per is not None:
            values = values / group[per].astype(float)
        summary = stats.summarize(list(values))
        rows.append({
            "point": point, "position": group["position"].iloc[0], "kernel": group["kernel"].iloc[0],
            **{name: group[name].iloc[0] for name in params},
            "n": summary.count, "median": summary.median, "ci_low": summary.ci_low,
            "ci_high": summary.ci_high, "cv": summary.cv, "noisy": summary.noisy,
            "rate_median": float(group["msgs_per_s"].median()),
        })
    return pd.DataFrame(rows)


def _schema(kernel: str) -> tuple[kernels.Param, ...]:
    spec = kernels.catalogue().get(kernel)
    return spec.params if spec else ()


def varying(table: pd.DataFrame, kernel: str) -> list[str]:
    """The kernel's parameters that take more than one value among the points of `table` (a
    parameter with one value wherever it applies, threads=2 say, is fixed)."""
    names = [p.name for p in _schema(kernel) if p.name in table]
    return [n for n in names if len({_key(v) for v in table[n]} - {None}) > 1]


def _key(value) -> object:
    """A parameter's value, None where it does not apply (NaN in a frame)."""
    return None if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)) else value


def _numeric(kernel: str, name: str) -> bool:
    param = next((p for p in _schema(kernel) if p.name == name), None)
    return param is not None and param.type in ("integer", "number")


def label(row, names: list[str]) -> str:
    """A configuration in words: `thread_pool individual mda=4`; parameters that do not apply to
    the point are left out."""
    parts = []
    for name in names:
        value = _key(row[name])
        if value is None:
            continue
        parts.append(kernels.show(value) if name in BY_VALUE else f"{SHORT.get(name, name)}={kernels.show(value)}")
    return " ".join(parts)


# -- figures ------------------------------------------------------------------------------------

# The look of every figure, applied while it is drawn (never set globally: a notebook that uses
# these functions keeps its own settings and backend).
STYLE = {"axes.grid": True, "grid.alpha": 0.3, "font.size": 9, "axes.titlesize": 10}
DPI = 110


def _styled(plot):
    """Draws `plot` under STYLE, on a matplotlib Figure made without pyplot."""

    @functools.wraps(plot)
    def wrapper(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(STYLE):
            return plot(*args, **kwargs)

    return wrapper


def _figure(**kwargs):
    from matplotlib.figure import Figure

    return Figure(dpi=DPI, **kwargs)


def _colors(count: int):
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(count)]


def _subtitle(table: pd.DataFrame, kernel: str, vary: list[str]) -> str:
    """The fixed parameters, wrapped to lines that fit under a figure's title."""
    return textwrap.fill(_fixed(table, kernel, vary), 110)


def _fixed(table: pd.DataFrame, kernel: str, vary: list[str]) -> str:
    """The parameters that do not vary, with their value."""
    parts = []
    for name in (p.name for p in _schema(kernel) if p.name in table and p.name not in vary):
        values = [v for v in table[name] if _key(v) is not None]
        if values:
            where = "" if len(values) == len(table) else " where it applies"
            parts.append(f"{SHORT.get(name, name)}={kernels.show(values[0])}{where}")
    return ", ".join(parts)


@_styled
def plot_lines(table: pd.DataFrame, kernel: str, metric: Metric, x: str, ax=None):
    """`metric` against the numeric parameter `x`: one line per configuration of the other varying
    parameters, its 95% interval as a band; a point without `x` (one_thread has no threads) as a
    dashed level across. Returns the figure."""
    vary = varying(table, kernel)
    others = [n for n in vary if n != x]
    figure = ax.figure if ax is not None else _figure(figsize=(7.5, 4.4))
    ax = ax if ax is not None else figure.add_subplot()
    factor, unit = metric.scale(table["median"])
    series = {}
    for _, row in table.sort_values(others, key=lambda c: c.map(_sort_key)).iterrows() if others \
            else table.iterrows():
        series.setdefault(label(row, others) or "median", []).append(row)
    colors = _colors(len(series))
    xs = [v for v in table[x] if _key(v) is not None]
    for color, (name, rows) in zip(colors, series.items()):
        frame = pd.DataFrame(rows)
        on_axis = frame[frame[x].map(lambda v: _key(v) is not None)].sort_values(x)
        level = frame[frame[x].map(lambda v: _key(v) is None)]
        if not on_axis.empty:
            ax.plot(on_axis[x], on_axis["median"] / factor, marker="o", color=color, label=name)
            banded = on_axis.dropna(subset=["ci_low", "ci_high"])
            if not banded.empty:
                ax.fill_between(banded[x].astype(float), banded["ci_low"] / factor,
                                banded["ci_high"] / factor, color=color, alpha=0.18, linewidth=0)
        for _, row in level.iterrows():
            ax.axhline(row["median"] / factor, color=color, linestyle="--", linewidth=1.2,
                       label=f"{name} (no {SHORT.get(x, x)})")
            if _key(row["ci_low"]) is not None and xs:
                ax.fill_between([min(xs), max(xs)], row["ci_low"] / factor, row["ci_high"] / factor,
                                color=color, alpha=0.10, linewidth=0)
    if xs and min(xs) > 0 and max(xs) / min(xs) >= 8:
        ax.set_xscale("log", base=2)
    if xs:
        ticks = sorted({float(v) for v in xs})
        ax.set_xticks(ticks, [kernels.show(t) for t in ticks])
    values = table["median"][table["median"] > 0]
    if not values.empty and values.max() / values.min() > LOG_SPAN:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(f"{metric.title} ({unit}), median" if unit else f"{metric.title}, median")
    better = "lower is better" if metric.lower_is_better else "higher is better"
    ax.set_title(f"{kernel}: {metric.title} vs {x} ({better}); band: 95% interval\n"
                 f"{_subtitle(table, kernel, vary)}")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    figure.tight_layout()
    return figure


@_styled
def scenarios(table: pd.DataFrame, kernel: str) -> list[tuple[str, pd.DataFrame]]:
    """The points of a kernel split by the kernel's own parameters that vary (its sizes, its kind
    of work), so that a figure compares dispatcher configurations doing the same work: a list of
    (scenario in words, its points), at most MAX_SCENARIOS; ("", table) when nothing of the kernel's
    own varies."""
    how = kernels.configuration(kernel)
    own = [n for n in varying(table, kernel) if n not in how]
    if not own:
        return [("", table)]
    ordered = table.sort_values(own, key=lambda c: c.map(_sort_key))
    groups: dict[str, list] = {}
    for _, row in ordered.iterrows():
        groups.setdefault(label(row, own), []).append(row)
    return [(name, pd.DataFrame(rows)) for name, rows in itertools.islice(groups.items(), MAX_SCENARIOS)]


def heatmap_panels(table: pd.DataFrame, kernel: str, x: str, y: str) -> dict[str, list]:
    """The points of a heat map over `x` and `y`, a panel per configuration of the other varying
    parameters that has at least two values on each axis (at most 6 panels); empty when none has."""
    others = [n for n in varying(table, kernel) if n not in (x, y)]
    panels: dict[str, list] = {}
    for _, row in table.dropna(subset=[x, y]).iterrows():
        panels.setdefault(label(row, others), []).append(row)
    dense = {name: rows for name, rows in panels.items()
             if len({row[x] for row in rows}) >= 2 and len({row[y] for row in rows}) >= 2}
    return dict(itertools.islice(dense.items(), 6))


def plot_heatmap(table: pd.DataFrame, kernel: str, metric: Metric, x: str, y: str):
    """`metric` over two numeric parameters, a panel per configuration of the other varying
    parameters (at most 6), each cell annotated with its median."""
    panels = heatmap_panels(table, kernel, x, y)
    grid = pd.DataFrame([row for rows in panels.values() for row in rows])
    factor, unit = metric.scale(grid["median"])
    columns = min(len(panels), 3)
    lines = math.ceil(len(panels) / columns)
    figure = _figure(figsize=(3.9 * columns + 0.8, 3.3 * lines), layout="constrained")
    axes = figure.subplots(lines, columns, squeeze=False)
    values = grid["median"] / factor
    log = values.min() > 0 and values.max() / values.min() > LOG_SPAN
    from matplotlib.colors import LogNorm, Normalize

    norm = LogNorm(values.min(), values.max()) if log else Normalize(values.min(), values.max())
    cmap = "viridis_r" if metric.lower_is_better else "viridis"
    image = None
    for ax, (name, rows) in zip(axes.flat, panels.items()):
        frame = pd.DataFrame(rows)
        xs = sorted({float(v) for v in frame[x]})
        ys = sorted({float(v) for v in frame[y]})
        cells = np.full((len(ys), len(xs)), np.nan)
        for _, row in frame.iterrows():
            cells[ys.index(float(row[y])), xs.index(float(row[x]))] = row["median"] / factor
        image = ax.imshow(cells, origin="lower", aspect="auto", cmap=cmap, norm=norm)
        ax.set_xticks(range(len(xs)), [kernels.show(v) for v in xs])
        ax.set_yticks(range(len(ys)), [kernels.show(v) for v in ys])
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(textwrap.fill(name, 48), fontsize=8)
        ax.grid(False)
        for (i, j), value in np.ndenumerate(cells):
            if value == value:
                ax.text(j, i, f"{value:.3g}", ha="center", va="center", fontsize=7,
                        color="white" if norm(value) > 0.5 else "black")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    better = "lower is better" if metric.lower_is_better else "higher is better"
    figure.suptitle(f"{kernel}: {metric.title} ({unit}, median) over {x} x {y} ({better})",
                    fontsize=10)
    if image is not None:
        figure.colorbar(image, ax=axes.ravel().tolist(), shrink=0.85,
                        label=f"{metric.title} ({unit})")
    return figure


@_styled
def plot_bars(table: pd.DataFrame, kernel: str, metric: Metric):
    """One bar per point, best first, with its 95% interval as an error bar."""
    vary = varying(table, kernel)
    ordered = table.sort_values("median", ascending=metric.lower_is_better)
    factor, unit = metric.scale(ordered["median"])
    names = [label(row, vary) for _, row in ordered.iterrows()]
    figure = _figure(figsize=(7.5, 1.0 + 0.32 * len(ordered)))
    ax = figure.subplots()
    medians = ordered["median"] / factor
    low = (ordered["median"] - ordered["ci_low"].fillna(ordered["median"])) / factor
    high = (ordered["ci_high"].fillna(ordered["median"]) - ordered["median"]) / factor
    ax.barh(range(len(ordered)), medians, xerr=[low, high], color=_colors(1)[0], alpha=0.8,
            error_kw={"elinewidth": 1, "capsize": 2})
    ax.set_yticks(range(len(ordered)), names, fontsize=8)
    ax.invert_yaxis()
    if medians.min() > 0 and medians.max() / medians.min() > LOG_SPAN:
        ax.set_xscale("log")
    ax.set_xlabel(f"{metric.title} ({unit}), median; bars: 95% interval" if unit
                  else f"{metric.title}, median")
    ax.set_title(f"{kernel}: {metric.title}, best first\n{_subtitle(table, kernel, vary)}")
    figure.tight_layout()
    return figure


def axes_for(table: pd.DataFrame, kernel: str) -> tuple[str | None, str | None]:
    """The x axis of the line figure (threads first, else a numeric parameter that varies) and
    the y axis of a heat map (a second numeric parameter that varies), where there are any."""
    numeric = [n for n in varying(table, kernel) if _numeric(kernel, n)
               and len({_key(v) for v in table[n]} - {None}) >= 2]
    numeric.sort(key=lambda n: n != "threads")
    x = numeric[0] if numeric else None
    y = numeric[1] if len(numeric) > 1 else None
    return x, y


# -- published figures beside ours ---------------------------------------------------------------

@dataclass
class Match:
    figure: experiment.Figure
    median: float | None = None  # ours, in our units (ns or msgs/s), per `per`
    interval: tuple[float, float] | None = None
    problem: str | None = None  # why there is no figure of ours

    def relative(self, best: float, lower_is_better: bool) -> float:
        return self.median / best if lower_is_better else best / self.median


@dataclass
class Comparison:
    reference: experiment.Reference
    matches: list[Match]
    verdict: str
    agree: list[str] = field(default_factory=list)
    reversed: list[str] = field(default_factory=list)
    unclear: list[str] = field(default_factory=list)
    tau: float | None = None

    @property
    def ours(self) -> list[Match]:
        return [m for m in self.matches if m.figure.peer is None and m.median is not None]


def compare_reference(reference: experiment.Reference, samples: pd.DataFrame) -> Comparison:
    """Our median for each published figure of `reference`, and whether the study's ranking of
    the figures holds on our points: each pair the study orders (more than 10% apart) is checked
    against ours, a pair whose 95% intervals overlap here is reported as unclear, not as agreeing."""
    kernel_samples = samples[samples["kernel"] == reference.kernel]
    for name, value in reference.where.items():
        if name not in kernel_samples:
            kernel_samples = kernel_samples.iloc[0:0]
            break
        kernel_samples = kernel_samples[kernel_samples[name].map(lambda v: _key(v) == _key(value))]
    metric = Metric(reference.metric, reference.lower_is_better)
    matches = []
    for figure in reference.figures:
        match = Match(figure)
        matches.append(match)
        if figure.peer is not None:
            continue
        if metric.column not in kernel_samples or (reference.per and reference.per not in kernel_samples):
            match.problem = f"{reference.kernel} records no '{metric.column}'"
            continue
        chosen = kernel_samples
        for name, value in figure.params.items():
            chosen = chosen[chosen[name].map(lambda v: _key(v) == _key(value))] if name in chosen else chosen.iloc[0:0]
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
    return _rank(reference, matches)


def _rank(reference: experiment.Reference, matches: list[Match]) -> Comparison:
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


def _in_unit(value: float, metric: Metric, unit: str) -> float | None:
    """Our value in the published unit, where the two are the same kind of quantity."""
    if metric.is_time and unit in TIME_UNITS:
        return value / TIME_UNITS[unit]
    if metric.column == "msgs_per_s" and unit in RATE_UNITS:
        return value / RATE_UNITS[unit]
    return None


@_styled
def plot_reference(comparison: Comparison):
    """The study's figures and ours, each relative to its own best (1 = the best), side by side."""
    ref = comparison.reference
    ours = comparison.ours
    best_study = min(m.figure.value for m in ours) if ref.lower_is_better else max(m.figure.value for m in ours)
    best_here = min(m.median for m in ours) if ref.lower_is_better else max(m.median for m in ours)
    study = [(m.figure.value / best_study if ref.lower_is_better else best_study / m.figure.value) for m in ours]
    here = [m.relative(best_here, ref.lower_is_better) for m in ours]
    figure = _figure(figsize=(7.5, 1.5 + 0.45 * len(ours)), layout="constrained")
    ax = figure.subplots()
    positions = np.arange(len(ours))
    colors = _colors(2)
    ax.barh(positions - 0.2, study, height=0.38, color=colors[0], label=f"study ({ref.hardware})")
    ax.barh(positions + 0.2, here, height=0.38, color=colors[1], label="labctl, this machine")
    ax.set_yticks(positions, [m.figure.label for m in ours], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    if max(study + here) > LOG_SPAN:
        ax.set_xscale("log")
    ax.set_xlabel("times behind the best of its own set (1 = best; lower is better)")
    ax.set_title(f"{ref.title}\npublished vs ours, each relative to its own best", fontsize=9)
    figure.legend(fontsize=7, loc="outside lower center", ncols=2, frameon=False)
    return figure


# -- the report ---------------------------------------------------------------------------------

@dataclass
class Written:
    folder: Path
    figures: list[str]


def write(db: str | Path, run: int | str, out: str | Path | None = None,
          command: str | None = None) -> Written:
    """Writes the report of `run` into the folder `out` (default reports/<experiment name>) and
    returns what it wrote. The folder is built beside its destination and renamed into place, so
    an interrupted report leaves the previous one whole; a folder that is not a report labctl
    wrote of this experiment (files.check_report_folder) is refused untouched. Raises
    files.OutputError or StoreError."""
    with Store(db, create=False) as store:
        run_id = store.resolve_run(run)
        row = store.run(run_id)
    out = Path(out) if out is not None else Path("reports") / slug(row.name)
    files.check_report_folder("--out", out, row.name, stores=[Path(db)])
    samples = results.load(db, run_id)
    points = results.points(db, run_id)
    figures: list[str] = []

    def fill(staging: Path) -> None:
        (staging / "figures").mkdir()
        text = _markdown(row, samples, points, staging, figures, db, command)
        (staging / "report.md").write_text(text, encoding="utf-8")
        marker = {"experiment": row.name, "run": row.id, "store": str(db), "written": now(),
                  "labctl": __version__}
        (staging / files.REPORT_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")

    try:
        files.replace_folder(out, fill)
    except OSError as error:
        raise files.OutputError(f"--out {out}: cannot write: {error.strerror or error}", code=1) from None
    return Written(out, figures)


def slug(name: str) -> str:
    """A folder name for an experiment name: its letters, digits and -_. as they are; a name that
    needs others replaced gets a short hash of itself, so two names never share a folder."""
    kept = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name).strip("._")
    if kept == name and kept:
        return kept
    return f"{kept or 'report'}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _save(figure, folder: Path, name: str, figures: list[str], svg: bool = False) -> str:
    """Saves a figure as figures/NAME.png (and .svg); a name already taken gets a number."""
    taken = f"figures/{name}.png" in figures
    name = next(f"{name}-{n}" for n in range(2, len(figures) + 3) if f"figures/{name}-{n}.png" not in figures) \
        if taken else name
    path = f"figures/{name}.png"
    figure.savefig(folder / path, bbox_inches="tight", dpi=DPI)
    if svg:
        figure.savefig(folder / f"figures/{name}.svg", bbox_inches="tight")
    figures.append(path)
    return path


def _file_name(text: str) -> str:
    """A scenario as part of a file name: leaves=1000 mbox=direct -> leaves-1000_mbox-direct."""
    name = text.replace("=", "-").replace(" ", "_")
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)[:80]


def _md(value: object) -> str:
    """A table cell: one line, no control character (labctl.text.printable), pipes escaped."""
    return printable(value).replace("|", "\\|")


def _table(headers: list[str], rows: list[list[object]], right: set[int] = frozenset()) -> str:
    lines = ["| " + " | ".join(_md(h) for h in headers) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _value(value: float, metric: Metric) -> str:
    if metric.is_time:
        return stats.format_duration(value)
    if metric.column == "msgs_per_s":
        return f"{value / 1e6:.2f} M msgs/s" if value >= 1e5 else f"{value:.0f} msgs/s"
    return _number(value)


def _number(value: float) -> str:
    """A figure as people write it: 0.45, 12.3, 1,234, 17,354,483."""
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def _markdown(row: RunRow, samples: pd.DataFrame, points: pd.DataFrame, folder: Path,
              figures: list[str], db: str | Path, command: str | None) -> str:
    machine, context = row.machine, row.context
    failed = points[points["status"] == "failed"] if not points.empty else points
    pending = points[points["status"] == "pending"] if not points.empty else points
    lines = [f"# {printable(row.name)}: run {row.id}", ""]
    if row.description:
        lines += [printable(row.description), ""]
    lines += [
        f"Experiment `{printable(row.source)}`, run {row.id}, {row.status}, started {_when(row.started_at)}"
        + (f", finished {_when(row.finished_at)}" if row.finished_at else "") + ". "
        f"{row.points_done} of {row.points} points done, {row.points_failed} failed, "
        + (f"{row.points_skipped} skipped (cannot run here), " if row.points_skipped else "") +
        f"{row.samples} samples, " + (
            "every one verified against the kernel's expected answer." if samples.empty
            or samples["verified"].all() else
            f"**{int((~samples['verified']).sum())} of them with a wrong answer**."),
        "",
        f"Machine: {machine.get('cpu_model')}, {machine.get('logical_cpus')} logical CPUs "
        f"({machine.get('physical_cores')} cores, SMT {machine.get('smt')}), "
        f"{machine.get('kernel')}.",
        "",
    ]
    for warning in row.warnings:
        lines += [f"> warning at the start of the run: {printable(warning)}", ""]
    if len(pending):
        lines += [f"> {len(pending)} points were not run: finish them with "
                  f"`labctl sweep --resume {row.id} --db {db}`.", ""]

    kernel_names = list(dict.fromkeys(samples["kernel"])) if not samples.empty else []
    views = {}
    for kernel in kernel_names:
        kernel_samples = samples[samples["kernel"] == kernel]
        metric = kernel_metric(kernel_samples)
        views[kernel] = (metric, point_table(kernel_samples, metric))
    if views:
        lines += ["## Summary", "", "The best and the worst configuration of each kernel in this run "
                  "(medians; time when every run did the same work, throughput otherwise).", ""]
        summary_rows = []
        for kernel, (metric, table) in views.items():
            vary = varying(table, kernel)
            ordered = table.sort_values("median", ascending=metric.lower_is_better)
            best, worst = ordered.iloc[0], ordered.iloc[-1]
            spread = (worst["median"] / best["median"] if metric.lower_is_better
                      else best["median"] / worst["median"]) if best["median"] and worst["median"] else float("nan")
            summary_rows.append([kernel, len(table),
                                 f"{label(best, vary) or 'one point'}: {_value(best['median'], metric)}",
                                 f"{label(worst, vary) or 'one point'}: {_value(worst['median'], metric)}",
                                 f"{spread:.2f}x"])
        lines += [_table(["kernel", "points", "best", "worst", "worst/best"], summary_rows, {1, 4}), ""]

    lines += _runtimes_section(views)
    for kernel, (metric, table) in views.items():
        lines += _kernel_section(kernel, metric, table, folder, figures)

    lines += _failures(failed)
    lines += _skipped(points[points["status"] == "skipped"] if not points.empty else points)
    lines += _references(row, samples, folder, figures)
    lines += _provenance(row, context, db, command)
    return "\n".join(lines).rstrip() + "\n"


def _when(stamp: str | None) -> str:
    return (stamp or "")[:19].replace("T", " ") + " UTC"


def _kernel_section(kernel: str, metric: Metric, table: pd.DataFrame, folder: Path,
                    figures: list[str]) -> list[str]:
    spec = kernels.catalogue().get(kernel)
    vary = varying(table, kernel)
    lines = [f"## {kernel}", ""]
    if spec is not None:
        lines += [f"{spec.summary.rstrip('.')}. Reproduces {spec.source}.", ""]
    groups = scenarios(table, kernel)
    for number, (scenario, part) in enumerate(groups, 1):
        stem = kernel if len(groups) == 1 or not scenario else f"{kernel}-{_file_name(scenario)}"
        if scenario:
            lines += [f"**{printable(scenario)}**", ""]
        x, y = axes_for(part, kernel)
        if x is not None:
            path = _save(plot_lines(part, kernel, metric, x), folder, f"{stem}-{x}", figures, svg=True)
            lines += [f"![{kernel}: {metric.title} vs {x}]({path})", ""]
        if y is not None and heatmap_panels(part, kernel, x, y):
            path = _save(plot_heatmap(part, kernel, metric, x, y), folder, f"{stem}-{x}-{y}", figures)
            lines += [f"![{kernel}: {metric.title} over {x} x {y}]({path})", ""]
        if x is None and len(part) > 1:
            path = _save(plot_bars(part, kernel, metric), folder, f"{stem}-bars", figures)
            lines += [f"![{kernel}: {metric.title} per configuration]({path})", ""]
    fixed = _fixed(table, kernel, vary)
    if fixed:
        lines += [f"Fixed: {fixed}.", ""]
    ordered = table.sort_values([*vary, "position"], key=lambda c: c.map(_sort_key)) if vary else table
    rows = []
    for _, point in ordered.iterrows():
        interval = (f"{_value(point['ci_low'], metric)} .. {_value(point['ci_high'], metric)}"
                    if _key(point["ci_low"]) is not None else "n<3: none")
        flags = []
        if point["noisy"]:
            flags.append(f"noisy (cv > {stats.NOISE_CV:.0%})")
        rows.append([*(kernels.show(point[n]) if _key(point[n]) is not None else "-" for n in vary),
                     point["n"], _value(point["median"], metric), interval,
                     f"{point['cv'] * 100:.1f}%", f"{point['rate_median'] / 1e6:.2f} M",
                     ", ".join(flags)])
    headers = [SHORT.get(n, n) for n in vary] + ["n", f"median {metric.title}", "95% interval",
                                                  "cv", "msgs/s", ""]
    right = set(range(len(vary), len(vary) + 5))
    lines += [_table(headers, rows, right), ""]
    return lines


def runtime_ranking(table: pd.DataFrame, kernel: str, metric: Metric) -> list[tuple[str, pd.DataFrame]]:
    """Where a kernel ran on several runtimes: for each setting of the parameters every one of
    them takes (the work, threads), each runtime's best point, fastest first, with `ratio` (to
    the fastest, >= 1) and `ours` (our median over its, in time: below 1, ours is faster)."""
    if kernels.RUNTIME not in table or table[kernels.RUNTIME].nunique() < 2:
        return []
    present = set(table[kernels.RUNTIME])
    shared = [p.name for p in _schema(kernel) if p.name != kernels.RUNTIME and p.name in table
              and (not p.runtimes or present <= set(p.runtimes))]
    keys = [n for n in shared if len({_key(v) for v in table[n]}) > 1]
    parts = table.groupby(keys, dropna=False, sort=True) if keys else [((), table)]
    ranked = []
    for _, part in parts:
        if part[kernels.RUNTIME].nunique() < 2:
            continue
        best = (part.sort_values("median", ascending=metric.lower_is_better)
                .groupby(kernels.RUNTIME, sort=False).head(1).copy())
        top = best["median"].iloc[0]
        best["ratio"] = best["median"] / top if metric.lower_is_better else top / best["median"]
        ours = best[best[kernels.RUNTIME] == runtimes.OURS]["median"]
        if len(ours):
            mine = ours.iloc[0]
            best["ours"] = mine / best["median"] if metric.lower_is_better else best["median"] / mine
        else:
            best["ours"] = float("nan")
        ranked.append((label(part.iloc[0], keys), best))
    return ranked


def _runtimes_section(views: dict[str, tuple[Metric, pd.DataFrame]]) -> list[str]:
    rows = []
    for kernel, (metric, table) in views.items():
        vary = varying(table, kernel)
        for setting, best in runtime_ranking(table, kernel, metric):
            own = [n for n in vary if n not in setting and n != kernels.RUNTIME]
            for rank, (_, point) in enumerate(best.iterrows(), 1):
                ours = "" if math.isnan(point["ours"]) or point[kernels.RUNTIME] == runtimes.OURS \
                    else f"{point['ours']:.3g}"
                rows.append([kernel, setting or "-", rank, point[kernels.RUNTIME], label(point, own) or "-",
                             _value(point["median"], metric), f"{point['ratio']:.2f}x", ours])
    if not rows:
        return []
    return ["## Runtimes side by side", "",
            "Each runtime's best point for the same work and the same parameters that every runtime "
            "takes (threads: CAF's scheduler threads, Go's GOMAXPROCS), fastest first. `x fastest`: "
            "its median over the fastest one's, in time; `labctl / it`: our time over its time "
            "(below 1, ours is faster).", "",
            _table(["kernel", "setting", "rank", "runtime", "its best configuration", "median",
                    "x fastest", "labctl / it"], rows, {2, 5, 6, 7}), ""]


def _skipped(skipped: pd.DataFrame) -> list[str]:
    if skipped.empty:
        return []
    lines = ["## Skipped points", "", "Points this machine cannot run (a runtime or an allocator is "
             "missing): never run, not failed. Install what the reason names and run the experiment "
             "again.", ""]
    reasons = skipped.groupby("failure", sort=True)
    rows = [[reason, len(part), ", ".join(sorted(set(part["kernel"])))] for reason, part in reasons]
    return lines + [_table(["reason", "points", "kernels"], rows, {1}), ""]


def _sort_key(value):
    value = _key(value)
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def _failures(failed: pd.DataFrame) -> list[str]:
    if failed.empty:
        return []
    lines = ["## Failed points", "", "Each failed point and why. A point that failed after some of its "
             "runs keeps the samples it stored: the figures and tables above include them (see n).", ""]
    rows = []
    for _, point in failed.iterrows():
        params = {p.name: point[p.name] for p in _schema(point["kernel"])
                  if p.name in point and _key(point[p.name]) is not None}
        reason = str(point["failure"] or "")
        rows.append([point["kernel"], " ".join(f"{SHORT.get(n, n)}={kernels.show(v)}" for n, v in params.items()),
                     point["failure_kind"] or "", reason if len(reason) <= 300 else reason[:297] + "..."])
    return lines + [_table(["kernel", "parameters", "failure", "reason"], rows), ""]


def _references(row: RunRow, samples: pd.DataFrame, folder: Path, figures: list[str]) -> list[str]:
    if not row.experiment:
        return []
    try:
        references = experiment.parse(row.experiment, row.source, seed=0).references
    except experiment.ExperimentError as error:
        return ["## Published figures", "", f"The experiment's published figures could not be read: "
                f"{error}", ""]
    if not references:
        return []
    lines = ["## Published figures beside ours", "",
             "Each study measured on its own hardware, with its own sizes, so absolute values are not "
             "comparable: each set of figures is compared relative to its own best (1.00 = the best; "
             "2.00 = twice as slow as the best), and by ranking. A pair the study orders (more than "
             f"{TIE_RATIO:.2f}x apart) agrees when ours is in the same order with 95% intervals apart.",
             ""]
    for number, reference in enumerate(references):
        if samples.empty:
            comparison = _rank(reference, [Match(f, problem="no samples") for f in reference.figures])
        else:
            comparison = compare_reference(reference, samples)
        lines += _reference_section(comparison, number, folder, figures)
    return lines


def _reference_section(comparison: Comparison, number: int, folder: Path, figures: list[str]) -> list[str]:
    ref = comparison.reference
    metric = Metric(ref.metric, ref.lower_is_better)
    per = f" per {_singular(ref.per)}" if ref.per else ""
    lines = [f"### {printable(ref.title)}", "",
             f"Source: {printable(ref.source.rstrip('.'))}. Hardware: {printable(ref.hardware.rstrip('.'))}. "
             f"Compared: {ref.kernel}'s "
             f"`{ref.metric}`{per}, {'lower' if ref.lower_is_better else 'higher'} is better"
             + (f"; our points with {', '.join(f'{k}={kernels.show(v)}' for k, v in ref.where.items())}"
                if ref.where else "") + ".", ""]
    if ref.note:
        lines += [f"Note: {printable(ref.note)}", ""]
    lines += [comparison.verdict, ""]
    ours = comparison.ours
    best_study = best_here = None
    if ours:
        pick = min if ref.lower_is_better else max
        best_study = pick(m.figure.value for m in ours)
        best_here = pick(m.median for m in ours)
    study_rank = _ranks([m.figure.value for m in ours], ref.lower_is_better)
    here_rank = _ranks([m.median for m in ours], ref.lower_is_better)
    rows = []
    for match in comparison.matches:
        if match.figure.peer is not None:
            continue
        published = f"{_number(match.figure.value)} {ref.unit}"
        if match.median is None:
            rows.append([match.figure.label, published, "", match.problem or "", "", "", ""])
            continue
        index = ours.index(match)
        study_relative = (match.figure.value / best_study if ref.lower_is_better
                          else best_study / match.figure.value)
        interval = (f" [{_value(match.interval[0], metric)} .. {_value(match.interval[1], metric)}]"
                    if match.interval else " (n<3)")
        rows.append([match.figure.label, published, f"{study_relative:.2f}",
                     _value(match.median, metric) + interval,
                     f"{match.relative(best_here, ref.lower_is_better):.2f}",
                     study_rank[index], here_rank[index]])
    lines += [_table(["configuration", "published", "study / its best", f"ours{per} (median [95%])",
                      "ours / our best", "rank in study", "rank here"], rows, {2, 4, 5, 6}), ""]
    if comparison.tau is not None:
        lines += [f"Kendall's tau between the two orders: {comparison.tau:.2f} (1: the same order).", ""]
    for title, items in (("Reversed here", comparison.reversed), ("Within noise here", comparison.unclear)):
        if items:
            lines += [f"{title}:", ""] + [f"- {item}" for item in items] + [""]
    if len(ours) >= 2:
        path = _save(plot_reference(comparison), folder, f"published-{number + 1}", figures)
        lines += [f"![{printable(ref.title)}: published vs ours]({path})", ""]
    peers = [m for m in comparison.matches if m.figure.peer is not None]
    if peers and ours:
        lines += _peer_ranking(comparison, peers, metric)
    return lines


def _singular(name: str) -> str:
    """leaves -> leaf, hops -> hop: a parameter that counts things, as one of them."""
    for plural, one in (("ves", "f"), ("ies", "y"), ("s", "")):
        if name.endswith(plural):
            return name[: -len(plural)] + one
    return name


def _ranks(values: list[float], lower_is_better: bool) -> list[int]:
    order = sorted(range(len(values)), key=lambda i: values[i] if lower_is_better else -values[i])
    ranks = [0] * len(values)
    for rank, index in enumerate(order, 1):
        ranks[index] = rank
    return ranks


def _peer_ranking(comparison: Comparison, peers: list[Match], metric: Metric) -> list[str]:
    """The study's runtimes and ours in one list by value: absolute values from two machines, so
    an indication of the order of magnitude only."""
    ref = comparison.reference
    entries = [(m.figure.value, f"{m.figure.peer} (study)") for m in peers]
    entries += [(m.figure.value, f"{m.figure.name or ref.kernel + ' ' + m.figure.label} (study)")
                for m in comparison.ours]
    converted = [(_in_unit(m.median, metric, ref.unit), m) for m in comparison.ours]
    if any(value is None for value, _ in converted):
        return [f"The study's other runtimes are given in {ref.unit}, which our `{ref.metric}` does "
                "not convert to: not ranked.", ""]
    entries += [(value, f"**labctl {m.figure.label} (this machine)**") for value, m in converted]
    entries.sort(key=lambda e: e[0] if ref.lower_is_better else -e[0])
    rows = [[rank, name, f"{_number(value)} {ref.unit}"] for rank, (value, name) in enumerate(entries, 1)]
    sizes = ("" if ref.per else " Our sizes are this run's, which may be smaller than the study's "
             "(`--scale full` runs the study's).")
    return ["The study's runtimes with ours, by absolute value (two different machines: an "
            f"indication of the order of magnitude, not a measurement).{sizes}", "",
            _table(["rank", "runtime", ref.unit], rows, {0, 2}), ""]


def _provenance(row: RunRow, context: dict, db: str | Path, command: str | None) -> list[str]:
    machine = row.machine
    build = context.get("build") or {}
    facts = [
        ("CPU", f"{machine.get('cpu_model')}: {machine.get('logical_cpus')} logical CPUs, "
                f"{machine.get('physical_cores')} cores, SMT {machine.get('smt')}"),
        ("OS kernel", machine.get("kernel")),
        ("host", machine.get("hostname")),
        ("load at start", context.get("load_average")),
        ("memory available at start", f"{context.get('memory_available_kb')} kB"),
        ("frequency governor", context.get("governor")),
        ("Python", context.get("python")),
        ("labctl", f"{context.get('labctl')} ({context.get('git_describe') or 'not a git checkout'})"),
        ("experiment file", context.get("experiment_git_describe") or "not in a git checkout"),
        ("extension build", " ".join(str(build.get(k, "")) for k in ("compiler", "flags")).strip()),
        ("seed of the point order", row.seed),
    ]
    lines = ["## Machine and provenance", "",
             _table(["", ""], [[name, value] for name, value in facts if value not in (None, "")]), "",
             "To run it again and rebuild this report:", "", "```bash", row.command,
             command or f"labctl report {row.id} --db {db}", "```", ""]
    return lines
