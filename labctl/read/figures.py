"""The report's figures, drawn on matplotlib Figures (never pyplot, never a global style or
backend, so a notebook that uses them keeps its own): a line figure of a metric against a numeric
parameter, a heat map over two, bars where none varies, and published figures beside ours."""

from __future__ import annotations

import functools
import math
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from labctl.read.analysis import SHORT, UNDERUSED_SHARE, _key, heatmap_panels, label, sort_key, varying
from labctl.read.references import Comparison
from labctl.vocabulary import stats
from labctl.vocabulary.metrics import Metric, lookup
from labctl.vocabulary.schema import Kernel
from labctl.vocabulary.text import show

# Values spanning more than this ratio get a log scale.
LOG_SPAN = 30.0

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


def _name(kernel: str | Kernel) -> str:
    return kernel.name if isinstance(kernel, Kernel) else kernel


# Markers and line styles the lines of a figure cycle through beside their colours, so that
# lines drawn over each other (three configurations at about 3 ms) still show each one.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
LINESTYLES = ("-", (0, (6, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2)))
# Each line's points are moved sideways by this share of a step between two x values (or of an
# octave, on a log axis) from the next line's, so intervals of lines at the same value stand apart.
DODGE = 0.025


def _better(metric: Metric) -> str:
    return "lower is better" if metric.lower_is_better else "higher is better"


def _interval_of(frame: pd.DataFrame, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """Each row's distance from its median down and up to its 95% interval (0 without one)."""
    medians = frame["median"].astype(float)
    low = (medians - frame["ci_low"].astype(float).fillna(medians)).clip(lower=0) / factor
    high = (frame["ci_high"].astype(float).fillna(medians) - medians).clip(lower=0) / factor
    return low.to_numpy(), high.to_numpy()


def _noisy(frame: pd.DataFrame) -> pd.Series:
    return frame["noisy"].fillna(False).astype(bool) if "noisy" in frame else pd.Series(False, index=frame.index)


def _dodged(values: pd.Series, shift: float, log: bool, step: float) -> np.ndarray:
    """x values moved by `shift` (in steps of DODGE): multiplied on a log axis, added on a linear one."""
    values = values.astype(float).to_numpy()
    return values * 2 ** (shift * DODGE) if log else values + shift * DODGE * step


@_styled
def plot_lines(table: pd.DataFrame, kernel: str | Kernel, metric: Metric, x: str, ax=None):
    """`metric` against the numeric parameter `x`: one line per configuration of the other varying
    parameters, each with a marker and a line style of its own and moved a little sideways from
    the next, its 95% interval as error bars; a noisy point (cv above stats.NOISE_CV) hollow; a point
    without `x` (one_thread has no threads) as a dashed level across, its interval as bars at its
    ends ("noisy" in its legend entry where it is). Lines drawn over each other (COINCIDE) are
    named together in the legend. The parameters that do not vary are not in the figure (the
    report says them once, beside it). Returns the figure."""
    vary = varying(table, kernel)
    others = [n for n in vary if n != x]
    figure = ax.figure if ax is not None else _figure(figsize=(7.5, 4.2))
    ax = ax if ax is not None else figure.add_subplot()
    factor, unit = metric.scale(table["median"])
    series = {}
    for _, row in table.sort_values(others, key=lambda c: c.map(sort_key)).iterrows() if others \
            else table.iterrows():
        series.setdefault(label(row, others) or "median", []).append(row)
    colors = _colors(len(series))
    xs = sorted({float(v) for v in table[x] if _key(v) is not None})
    log_x = bool(xs) and min(xs) > 0 and max(xs) / min(xs) >= 8
    step = min((b - a for a, b in zip(xs, xs[1:])), default=1.0)
    noisy_any = underused_any = False
    legend = []  # (handle, words), in the configurations' order
    for index, (color, (name, rows)) in enumerate(zip(colors, series.items())):
        frame = pd.DataFrame(rows)
        on_axis = frame[frame[x].map(lambda v: _key(v) is not None)].sort_values(x)
        level = frame[frame[x].map(lambda v: _key(v) is None)]
        shift = index - (len(series) - 1) / 2
        marker, style = MARKERS[index % len(MARKERS)], LINESTYLES[index // len(MARKERS) % len(LINESTYLES)]
        if not on_axis.empty:
            at = _dodged(on_axis[x], shift, log_x, step)
            medians = (on_axis["median"] / factor).to_numpy()
            low, high = _interval_of(on_axis, factor)
            legend.append((ax.errorbar(at, medians, yerr=[low, high], color=color, linestyle=style, linewidth=1.4,
                                       marker=marker, markersize=6, capsize=3, elinewidth=1.1), name))
            underused = (on_axis["underused"].fillna(False).astype(bool).to_numpy() if "underused" in on_axis
                         else np.zeros(len(on_axis), dtype=bool))
            if underused.any():
                # Red circles around the points that ran on fewer threads than given.
                ax.scatter(at[underused], medians[underused], s=180, facecolors="none", edgecolors=UNDERUSED_RED,
                           linewidths=1.6, zorder=5)
                underused_any = True
            noisy = _noisy(on_axis).to_numpy()
            if noisy.any():
                noisy_any = True
                ax.scatter(at[noisy], medians[noisy], marker=marker, s=36, facecolors="white",
                           edgecolors=color, linewidths=1.4, zorder=4)
        for _, row in level.iterrows():
            value = row["median"] / factor
            legend.append((ax.axhline(value, color=color, linestyle="--", linewidth=1.2),
                           f"{name} (no {SHORT.get(x, x)})" + (", noisy" if row.get("noisy") else "")))
            if _key(row["ci_low"]) is not None and xs:
                low, high = _interval_of(pd.DataFrame([row]), factor)
                ends = _dodged(pd.Series([xs[0], xs[-1]]), shift, log_x, step)
                ax.errorbar(ends, [value, value], yerr=[[low[0]] * 2, [high[0]] * 2], color=color,
                            linestyle="none", capsize=3, elinewidth=1.1)
    for group in coinciding({name: pd.DataFrame(rows) for name, rows in series.items()}, x):
        legend.append((ax.plot([], [], linestyle="none")[0],
                       textwrap.fill(f"within {COINCIDE:.0%} of each other at every {x}: " + ", ".join(group), 44)))
    if noisy_any:
        legend.append((ax.plot([], [], linestyle="none", marker="o", markerfacecolor="white",
                               markeredgecolor="0.3")[0], f"hollow: noisy (cv > {stats.NOISE_CV:.0%})"))
    if underused_any:
        legend.append((ax.scatter([], [], s=120, facecolors="none", edgecolors=UNDERUSED_RED, linewidths=1.6),
                       f"busy < {UNDERUSED_SHARE:.0%} of its threads"))
    if log_x:
        ax.set_xscale("log", base=2)
    if xs:
        ax.set_xticks(xs, [show(t) for t in xs])
        if log_x:
            ax.set_xlim(xs[0] / 2 ** 0.4, xs[-1] * 2 ** 0.4)
        else:
            margin = max(step * 0.25, (xs[-1] - xs[0]) * 0.04) if len(xs) > 1 else 0.5
            ax.set_xlim(xs[0] - margin, xs[-1] + margin)
        ax.minorticks_off()
    values = table["median"][table["median"] > 0]
    if not values.empty and values.max() / values.min() > LOG_SPAN:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(f"{metric.words} ({unit})" if unit else metric.words)
    _titled(ax, f"{_name(kernel)}: {metric.words} vs {x}", f"median and its 95% interval; {_better(metric)}")
    # The configurations in their order, then what the marks mean.
    ax.legend([handle for handle, _ in legend], [words for _, words in legend], fontsize=7,
              loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    figure.tight_layout()
    return figure


UNDERUSED_RED = "#cf222e"
# Lines whose medians are this close at every value of the axis are named together in the legend:
# drawn over each other, a reader would otherwise see one.
COINCIDE = 0.10


def coinciding(series: dict[str, pd.DataFrame], x: str) -> list[list[str]]:
    """The groups of lines (configuration -> its points) whose medians lie within COINCIDE of each
    other at every value of `x`, two values at least, each group in the lines' order."""
    shapes = {}
    for name, frame in series.items():
        on_axis = frame[frame[x].map(lambda v: _key(v) is not None)]
        shapes[name] = dict(zip(on_axis[x].astype(float), on_axis["median"].astype(float)))

    def close(a: dict, b: dict) -> bool:
        return len(a) >= 2 and a.keys() == b.keys() and all(
            min(a[k], b[k]) > 0 and max(a[k], b[k]) / min(a[k], b[k]) <= 1 + COINCIDE for k in a)

    groups: list[list[str]] = []
    for name, shape in shapes.items():
        group = next((g for g in groups if all(close(shape, shapes[other]) for other in g)), None)
        if group is not None:
            group.append(name)
        else:
            groups.append([name])
    return [g for g in groups if len(g) > 1]


def _titled(ax, words: str, note: str) -> None:
    """A figure's one-line title, and under it, small, what its marks are."""
    ax.set_title(words, pad=14)
    ax.text(0.5, 1.012, note, transform=ax.transAxes, fontsize=7, color="0.35", ha="center", va="bottom")


@_styled
def plot_heatmap(table: pd.DataFrame, kernel: str | Kernel, metric: Metric, x: str, y: str):
    """`metric` over two numeric parameters, a panel per configuration of the other varying
    parameters (at most 6), each cell annotated with its median, a noisy one's starred."""
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
    image, noisy_any = None, False
    for ax, (name, rows) in zip(axes.flat, panels.items()):
        frame = pd.DataFrame(rows)
        xs = sorted({float(v) for v in frame[x]})
        ys = sorted({float(v) for v in frame[y]})
        cells = np.full((len(ys), len(xs)), np.nan)
        noisy = np.zeros(cells.shape, dtype=bool)
        for _, row in frame.iterrows():
            cells[ys.index(float(row[y])), xs.index(float(row[x]))] = row["median"] / factor
            noisy[ys.index(float(row[y])), xs.index(float(row[x]))] = bool(row.get("noisy", False))
        noisy_any = noisy_any or bool(noisy.any())
        image = ax.imshow(cells, origin="lower", aspect="auto", cmap=cmap, norm=norm)
        ax.set_xticks(range(len(xs)), [show(v) for v in xs])
        ax.set_yticks(range(len(ys)), [show(v) for v in ys])
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(textwrap.fill(name, 48), fontsize=8)
        ax.grid(False)
        for (i, j), value in np.ndenumerate(cells):
            if value == value:
                ax.text(j, i, f"{value:.3g}" + ("*" if noisy[i, j] else ""), ha="center", va="center",
                        fontsize=7, color="white" if norm(value) > 0.5 else "black")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    figure.suptitle(f"{_name(kernel)}: {metric.words} ({unit}, median) over {x} x {y}", fontsize=10)
    figure.text(0.5, 0, (f"{_better(metric)}" + (f"; *: noisy (cv > {stats.NOISE_CV:.0%})" if noisy_any else "")),
                ha="center", va="top", fontsize=7, color="0.35")
    if image is not None:
        figure.colorbar(image, ax=axes.ravel().tolist(), shrink=0.85,
                        label=f"{metric.words} ({unit})")
    return figure


@_styled
def plot_bars(table: pd.DataFrame, kernel: str | Kernel, metric: Metric):
    """One bar per point, best first, with its 95% interval as an error bar; a noisy point's bar
    hollow and hatched, as the axis says. The parameters that do not vary are not in the figure (the report says them)."""
    vary = varying(table, kernel)
    ordered = table.sort_values("median", ascending=metric.lower_is_better)
    factor, unit = metric.scale(ordered["median"])
    names = [label(row, vary) or "median" for _, row in ordered.iterrows()]
    figure = _figure(figsize=(7.5, 1.1 + 0.32 * len(ordered)))
    ax = figure.subplots()
    medians = ordered["median"] / factor
    low, high = _interval_of(ordered, factor)
    noisy = _noisy(ordered).to_numpy()
    color = _colors(1)[0]
    bars = ax.barh(range(len(ordered)), medians, xerr=[low, high], color=color, alpha=0.85,
                   edgecolor=color, linewidth=1.2, error_kw={"elinewidth": 1, "capsize": 2})
    for bar, hollow in zip(bars, noisy):
        if hollow:
            bar.set_facecolor("white")
            bar.set_hatch("///")
    ax.set_yticks(range(len(ordered)), names, fontsize=8)
    ax.invert_yaxis()
    if medians.min() > 0 and medians.max() / medians.min() > LOG_SPAN:
        ax.set_xscale("log")
    hatched = f"; hatched: noisy (cv > {stats.NOISE_CV:.0%})" if noisy.any() else ""
    ax.set_xlabel((f"{metric.words} ({unit})" if unit else metric.words) + f": median and its 95% interval{hatched}")
    ax.set_title(f"{_name(kernel)}: {metric.words}, best first ({_better(metric)})")
    figure.tight_layout()
    return figure


# A family of percentiles a kernel records (ping_pong's round_trip_p50_ns, _p99_ns, _max_ns and
# its mean): each statistic's marker, in the order they are drawn and named.
PERCENTILES = (("mean", "|"), ("p50", "o"), ("p99", "s"), ("max", "^"))
# ping_pong's mean is that of its throughput phase, its percentiles its latency probes' (ping_pong.hpp).
STATISTIC_WORDS = {"mean": "mean (whole phase)", "p50": "median", "p99": "99th percentile", "max": "longest"}


def percentile_family(names) -> dict[str, dict[str, str]]:
    """The families of percentiles among metric names: {prefix: {statistic: name}} for each
    prefix with a p50 and at least one more of PERCENTILES (round_trip: p50, p99, max, mean)."""
    families: dict[str, dict[str, str]] = {}
    for name in names:
        for statistic, _ in PERCENTILES:
            suffix = f"_{statistic}_ns"
            if name.endswith(suffix):
                families.setdefault(name.removesuffix(suffix), {})[statistic] = name
    return {prefix: found for prefix, found in families.items() if "p50" in found and len(found) > 1}


@_styled
def plot_percentiles(tables: dict[str, pd.DataFrame], kernel: str | Kernel, words: str):
    """A family of percentiles (each statistic's point table: analysis.point_table of its metric),
    one row per configuration, fastest median first: its mean, p50, p99 and longest, each the
    median over the point's runs, on one time axis, joined from p50 to the longest."""
    first = tables["p50"]
    vary = varying(first, kernel)
    order = list(first.sort_values("median")["point"])
    names = {row["point"]: label(row, vary) or "median" for _, row in first.iterrows()}
    every = pd.concat([t["median"] for t in tables.values()])
    # The unit of a typical median (a longest 10^4 times the median would put the rest below 0.001).
    factor, unit = _time_scale([float(first["median"].median())])
    figure = _figure(figsize=(7.5, 1.3 + 0.32 * len(order)))
    ax = figure.subplots()
    colors = _colors(len(PERCENTILES))
    rows = {point: index for index, point in enumerate(order)}
    for color, (statistic, marker) in zip(colors, PERCENTILES):
        table = tables.get(statistic)
        if table is None:
            continue
        found = table[table["point"].isin(rows)]
        ax.scatter(found["median"] / factor, found["point"].map(rows), marker=marker, color=color,
                   s=30 if statistic == "p50" else 40, zorder=4 if statistic == "p50" else 3,
                   label=STATISTIC_WORDS.get(statistic, statistic))
    if "max" in tables:
        ends = tables["max"].set_index("point")["median"]
        starts = first.set_index("point")["median"]
        for point, index in rows.items():
            if point in ends.index:
                ax.plot([starts[point] / factor, ends[point] / factor], [index, index], color="0.6",
                        linewidth=1, zorder=2)
    ax.set_yticks(range(len(order)), [names[p] for p in order], fontsize=8)
    ax.invert_yaxis()
    values = every[every > 0]
    if not values.empty and values.max() / values.min() > LOG_SPAN / 3:
        ax.set_xscale("log")
    ax.set_xlabel(f"{words} ({unit}), each the median over the point's runs")
    ax.set_title(f"{_name(kernel)}: {words}, fastest median first (lower is better)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    figure.tight_layout()
    return figure


def _time_scale(values) -> tuple[float, str]:
    """The unit a set of times in ns reads best in, and its factor."""
    return lookup("elapsed_ns").scale(values)


@_styled
def plot_reference(comparison: Comparison):
    """The study's figures and ours, each relative to its own best (1 = the best), side by side."""
    ref = comparison.reference
    ours = comparison.ours
    best_study = min(m.figure.value for m in ours) if ref.lower_is_better else max(m.figure.value for m in ours)
    best_here = min(m.value for m in ours) if ref.lower_is_better else max(m.value for m in ours)
    study = [(m.figure.value / best_study if ref.lower_is_better else best_study / m.figure.value) for m in ours]
    here = [m.relative(best_here, ref.lower_is_better) for m in ours]
    figure = _figure(figsize=(7.5, 1.5 + 0.45 * len(ours)), layout="constrained")
    ax = figure.subplots()
    positions = np.arange(len(ours))
    colors = _colors(2)
    ax.barh(positions - 0.2, study, height=0.38, color=colors[0], label=f"study ({ref.hardware})")
    ax.barh(positions + 0.2, here, height=0.38, color=colors[1], label="labctl, this machine")
    ax.set_yticks(positions, [m.figure.published_as for m in ours], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    if max(study + here) > LOG_SPAN:
        ax.set_xscale("log")
    ax.set_xlabel("times behind the best of its own set (1 = best; lower is better)")
    ax.set_title(f"{ref.title}\npublished vs ours, each relative to its own best", fontsize=9)
    figure.legend(fontsize=7, loc="outside lower center", ncols=2, frameon=False)
    return figure


@_styled
def plot_latency_load(curve: pd.DataFrame, kernel: str | Kernel):
    """Latency percentiles (LATENCY_PERCENTILES: p50, p99, p99.9) against the offered load, a
    panel each, log scales, one line per configuration of a latency_curves() table; a point that
    is no latency figure (its generator fell behind) is left off its line. Returns the figure."""
    from labctl.read.analysis import LATENCY_PERCENTILES, OFFERED

    figure = _figure(figsize=(11, 4.0))
    axes = figure.subplots(1, len(LATENCY_PERCENTILES), sharey=True)
    configurations = list(dict.fromkeys(curve["configuration"]))
    colors = _colors(len(configurations))
    for ax, name in zip(axes, LATENCY_PERCENTILES):
        for color, configuration in zip(colors, configurations):
            points = curve[(curve["configuration"] == configuration) & (curve["refused"] == "")
                           & curve[name].notna()].sort_values(OFFERED)
            if not points.empty:
                ax.plot(points[OFFERED], points[name] / 1e3, marker="o", color=color, label=configuration)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("offered load (requests/s)")
        ax.set_title(name.removeprefix("latency_").removesuffix("_ns").replace("p999", "p99.9"))
    axes[0].set_ylabel("latency from due time (us), median of runs")
    figure.suptitle(f"{_name(kernel)}: latency against offered load (lower is better)")
    axes[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    figure.tight_layout()
    return figure


def save(figure, folder: Path, name: str, figures: list[str], svg: bool = False) -> str:
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


def file_name(text: str) -> str:
    """A scenario as part of a file name: leaves=1000 mbox=direct -> leaves-1000_mbox-direct."""
    name = text.replace("=", "-").replace(" ", "_")
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)[:80]
