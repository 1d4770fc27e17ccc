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

from labctl.read.analysis import SHORT, UNDERUSED_SHARE, Metric, _key, fixed, heatmap_panels, label, sort_key, varying
from labctl.read.references import Comparison
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


def _subtitle(table: pd.DataFrame, kernel: str | Kernel, vary: list[str]) -> str:
    """The fixed parameters, wrapped to lines that fit under a figure's title."""
    return textwrap.fill(fixed(table, kernel, vary), 110)


@_styled
def plot_lines(table: pd.DataFrame, kernel: str | Kernel, metric: Metric, x: str, ax=None):
    """`metric` against the numeric parameter `x`: one line per configuration of the other varying
    parameters, its 95% interval as a band; a point without `x` (one_thread has no threads) as a
    dashed level across. Returns the figure."""
    vary = varying(table, kernel)
    others = [n for n in vary if n != x]
    figure = ax.figure if ax is not None else _figure(figsize=(7.5, 4.4))
    ax = ax if ax is not None else figure.add_subplot()
    factor, unit = metric.scale(table["median"])
    series = {}
    for _, row in table.sort_values(others, key=lambda c: c.map(sort_key)).iterrows() if others \
            else table.iterrows():
        series.setdefault(label(row, others) or "median", []).append(row)
    colors = _colors(len(series))
    xs = [v for v in table[x] if _key(v) is not None]
    for color, (name, rows) in zip(colors, series.items()):
        frame = pd.DataFrame(rows)
        on_axis = frame[frame[x].map(lambda v: _key(v) is not None)].sort_values(x)
        level = frame[frame[x].map(lambda v: _key(v) is None)]
        if not on_axis.empty:
            ax.plot(on_axis[x].astype(float), on_axis["median"] / factor, marker="o", color=color,
                    label=name)
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
    _mark_underused(ax, table, x, factor)
    if xs and min(xs) > 0 and max(xs) / min(xs) >= 8:
        ax.set_xscale("log", base=2)
    if xs:
        ticks = sorted({float(v) for v in xs})
        ax.set_xticks(ticks, [show(t) for t in ticks])
    values = table["median"][table["median"] > 0]
    if not values.empty and values.max() / values.min() > LOG_SPAN:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(f"{metric.words} ({unit}), median" if unit else f"{metric.words}, median")
    better = "lower is better" if metric.lower_is_better else "higher is better"
    ax.set_title(f"{_name(kernel)}: {metric.words} vs {x} ({better}); band: 95% interval\n"
                 f"{_subtitle(table, kernel, vary)}")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    figure.tight_layout()
    return figure


def _mark_underused(ax, table: pd.DataFrame, x: str, factor: float) -> None:
    """Circles in red the points that ran on fewer threads than given (analysis.underused)."""
    if "underused" not in table:
        return
    marked = table[table["underused"].fillna(False).astype(bool) & table[x].map(lambda v: _key(v) is not None)]
    if not marked.empty:
        ax.scatter(marked[x].astype(float), marked["median"] / factor, s=140, facecolors="none",
                   edgecolors="#cf222e", linewidths=1.6, zorder=5,
                   label=f"busy < {UNDERUSED_SHARE:.0%} of its threads")


@_styled
def plot_heatmap(table: pd.DataFrame, kernel: str | Kernel, metric: Metric, x: str, y: str):
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
        ax.set_xticks(range(len(xs)), [show(v) for v in xs])
        ax.set_yticks(range(len(ys)), [show(v) for v in ys])
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
    figure.suptitle(f"{_name(kernel)}: {metric.words} ({unit}, median) over {x} x {y} ({better})",
                    fontsize=10)
    if image is not None:
        figure.colorbar(image, ax=axes.ravel().tolist(), shrink=0.85,
                        label=f"{metric.words} ({unit})")
    return figure


@_styled
def plot_bars(table: pd.DataFrame, kernel: str | Kernel, metric: Metric):
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
    ax.set_xlabel(f"{metric.words} ({unit}), median; bars: 95% interval" if unit
                  else f"{metric.words}, median")
    ax.set_title(f"{_name(kernel)}: {metric.words}, best first\n{_subtitle(table, kernel, vary)}")
    figure.tight_layout()
    return figure


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
