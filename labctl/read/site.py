"""`labctl publish`: a store as a static site of plain files, read offline from file:// or from any
static host, with relative links only, nothing fetched from elsewhere and no script needed to read.

index.html lists the store's runs, its experiments with a history and the comparisons of each
experiment's two latest runs. runs/RUN.html holds a run's points and its report (labctl.read.report,
written into runs/RUN/ and rendered from markdown). history/EXPERIMENT.html follows each point's
figures over commits (labctl.read.series.series), with the changes labctl.read.changes finds plotted and
listed; regressions.html gathers the changes that make a figure worse, biggest first; and
compare/A-B.html is labctl.read.compare's table. A run's and a history's plots are drawn in the
browser by plots.js (the site's one script file, no library) from the JSON the page embeds
(_embedded), filtered and zoomed there; without script a run page's table and a history's PNGs
say the same. The pages are Jinja2 templates (labctl/read/templates/),
autoescaped: every text from the store, a name, a parameter or a failure, is shown as written,
never read as markup.

The folder is written as labctl.vocabulary.files writes a report folder: built beside it and renamed into
place, never onto a store, and only in place of a folder that is new, empty, or a site labctl wrote
(SITE_MARKER) holding nothing but the files it lists, unchanged.
"""

from __future__ import annotations

import functools
import json
import math
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jinja2
import pandas as pd
from markupsafe import Markup

from labctl import __version__
from labctl.read import results, series
from labctl.store import RunRow, Store, now
from labctl.vocabulary import files, metrics, text

# The file labctl leaves in every site it writes: the store it came from, and each file written
# there with its size and hash. A folder without it, or holding anything else, or any of those
# files changed, is never replaced.
SITE_MARKER = ".labctl-site"
STYLE_FILE = "style.css"
# The site's one script file, which draws the interactive plots from the JSON a page embeds.
PLOTS_FILE = "plots.js"

# How much of a text from the store a page shows: a failure is a paragraph, anything else a cell.
# A store can hold a name of a megabyte; the page stays readable and says what it left out.
FAILURE_SHOWN = 2000
CELL_SHOWN = 300

# History plots label at most this many commits on the x axis; more are thinned evenly.
TICKS_SHOWN = 40

# A commit a change names that the history does not know, as a page names it.
UNKNOWN_COMMIT = {"short": "?", "subject": "", "href": None}

@dataclass
class Published:
    """What a publish wrote: the folder, and how many of each kind of page."""

    folder: Path
    runs: int = 0
    histories: int = 0
    comparisons: int = 0
    regressions: int = 0
    plots: int = 0
    pages: list[str] = field(default_factory=list)


def write(db: str | Path, out: str | Path, progress: Callable[[str], None] | None = None,
          option: str = "OUT") -> Published:
    """Writes the site of the store `db` into the folder `out`, built beside it and renamed into
    place (an interrupted publish leaves the previous site whole); `progress` gets a line per
    group of pages. `option` is how the user named the folder, for the errors. Raises
    files.OutputError (a folder labctl may not replace) or StoreError (not a store)."""
    db, out = Path(db), Path(out)
    say = progress or (lambda line: None)
    with Store(db, create=False) as store:
        rows = store.runs()

    def check() -> None:
        check_folder(option, out, [db])

    check()
    published = Published(out)

    def fill(staging: Path) -> None:
        _fill(staging, db, rows, published, say)
        marker = {"site": True, "store": str(db), "written": now(), "labctl": __version__,
                  "files": files.manifest(staging), "folders": files.subfolders(staging)}
        (staging / SITE_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")

    try:
        files.replace_folder(out, fill, check)
    except OSError as error:
        raise files.OutputError(f"{option} {out}: cannot write: {error.strerror or error}", code=1) from None
    return published


# -- the folder ---------------------------------------------------------------------------------


def check_folder(option: str, folder: Path, stores: list[Path]) -> None:
    """Refuses a site folder labctl may not replace: what no output folder may be
    (files.check_output_folder), a folder that is not empty and holds no site labctl marked, and
    one holding anything but the files its marker lists, unchanged. Raises files.OutputError."""
    if not files.check_output_folder(option, folder, stores, "site"):
        return
    marker = _marker(folder)
    if marker is None or not isinstance(marker.get("files"), dict):
        raise files.OutputError(f"{option} {folder}: a folder that holds no site labctl wrote (no "
                                f"{SITE_MARKER}); give a new or empty folder, or a previous site's")
    # The marker is the one file its own list cannot hold: it is taken as it stands.
    try:
        listed = {**marker["files"], SITE_MARKER: {"size": (folder / SITE_MARKER).stat().st_size,
                                                   "sha256": files.digest(folder / SITE_MARKER)}}
    except OSError as error:
        raise files.OutputError(f"{option} {folder}: cannot read {SITE_MARKER}: {error.strerror}") from None
    files.check_unchanged(option, folder, marker, listed, "site")


def _marker(folder: Path) -> dict | None:
    marker = files.read_marker(folder / SITE_MARKER)
    return marker if marker is not None and marker.get("site") is True else None


# -- the site -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Series:
    """A point's followed figure over an experiment's commits, with its changes."""

    anchor: str
    label: str
    metric: str
    rows: pd.DataFrame  # series.series' rows of this point and figure, in commit order
    changes: list  # labctl.read.changes.Change, indexed by commit order
    plot: str  # its PNG, relative to the history page

    @property
    def words(self) -> str:
        """Its figure in words (labctl.vocabulary.metrics)."""
        return metrics.lookup(self.metric).words


def _fill(site: Path, db: Path, rows: list[RunRow], published: Published, say: Callable[[str], None]) -> None:
    for name in (STYLE_FILE, PLOTS_FILE):
        (site / name).write_text(resources.files("labctl.read").joinpath("templates", name)
                                 .read_text(encoding="utf-8"), encoding="utf-8")
    by_name: dict[str, list[RunRow]] = {}
    for row in rows:
        by_name.setdefault(row.name, []).append(row)
    pairs = {name: (runs[-2].id, runs[-1].id) for name, runs in by_name.items() if len(runs) >= 2}

    histories, problem = _histories(db)
    pages: dict[str, str] = {}  # experiment -> its history page
    for name in histories:
        pages[name] = f"history/{_file_name(name)}.html"

    say(f"runs: {len(rows)} pages with their reports")
    (site / "runs").mkdir()
    compared_in = {run: pair for pair in pairs.values() for run in pair}
    for row in rows:
        _write(site, f"runs/{row.id}.html", _run_page(site, db, row, compared_in.get(row.id), pages.get(row.name)),
               published)
    published.runs = len(rows)

    say(f"history: {_counted(len(histories), 'experiment')}")
    found: list[tuple[str, _Series, object]] = []  # (experiment, series, change) of every change
    if histories:
        (site / "history").mkdir()
    for name, frame in histories.items():
        plots = site / "history" / _file_name(name)
        plots.mkdir()
        series = _follow(frame, plots)
        published.plots += len(series)
        found += [(name, one, change) for one in series for change in one.changes]
        _write(site, pages[name], _history_page(name, frame, series, {r.id for r in by_name.get(name, [])}),
               published)
    published.histories = len(histories)

    say(f"compare: {_counted(len(pairs), 'comparison')} of each experiment's two latest runs")
    if pairs:
        (site / "compare").mkdir()
    for name, (a, b) in pairs.items():
        _write(site, f"compare/{a}-{b}.html", _compare_page(db, name, a, b), published)
    published.comparisons = len(pairs)

    worse = [(name, one, change) for name, one, change in found if _is_worse(one.metric, change)]
    worse.sort(key=lambda item: -_size(item[2]))
    published.regressions = len(worse)
    _write(site, "regressions.html", _regressions_page(worse, pages), published)
    _write(site, "index.html", _index_page(db, rows, histories, pages, pairs, len(worse), problem), published)


def _write(site: Path, relative: str, page: str, published: Published) -> None:
    (site / relative).write_text(page, encoding="utf-8", errors="backslashreplace")
    published.pages.append(relative)


def _histories(db: Path) -> tuple[dict[str, pd.DataFrame], str | None]:
    """Each experiment's history series (labctl.read.series.series), by experiment; and, where the
    store's histories cannot be read (a commit whose date is no date), why, for the index."""
    try:
        frame = series.series(str(db))
    except (ValueError, TypeError) as error:
        return {}, f"{type(error).__name__}: {error}"
    return {name: part for name, part in frame.groupby("experiment", sort=False)}, None


def _file_name(name: str) -> str:
    """An experiment's name as a file name: labctl.read.report's folder name (never two names alike)."""
    from labctl.read.report import slug

    return slug(name)


# -- the pages ------------------------------------------------------------------------------------


def _index_page(db: Path, rows: list[RunRow], histories: dict[str, pd.DataFrame], pages: dict[str, str],
                pairs: dict[str, tuple[int, int]], regressions: int, problem: str | None) -> str:
    """index.html: the runs, newest first; each history with its commits and points; each
    comparison; and why the histories cannot be read, where they cannot."""
    experiments = [(name, pages[name], frame["commit"].nunique(), frame["key"].nunique())
                   for name, frame in histories.items()]
    return _render("index.html.j2", f"Results of {db.name}", depth=0, store=db.name,
                   runs=[(row, _commit(row)) for row in reversed(rows)], histories=experiments, pairs=pairs,
                   regressions=regressions, problem=problem)


def _commit(row: RunRow) -> dict | None:
    """The commit a run measured, where a history recorded one: sha, subject, date."""
    commit = row.context.get("commit") if isinstance(row.context, dict) else None
    return commit if isinstance(commit, dict) else None


def _run_page(site: Path, db: Path, row: RunRow, pair: tuple[int, int] | None, history_page: str | None) -> str:
    """A run's facts, its points (_points) and its report, written into runs/RUN/ and rendered; a
    report that cannot be written is said on the page, and the site goes on."""
    points, fixed, no_medians, plots = _points(db, row.id)
    folder = site / "runs" / str(row.id)
    report, no_report = None, None
    try:
        from labctl.read import report as reports

        reports.write(db, row.id, folder, option="OUT")
        report = render_markdown((folder / "report.md").read_text(encoding="utf-8"), folder, f"{row.id}/")
    except Exception as error:  # noqa: BLE001 - one run's report never stops the site: said on its page
        no_report = error
    return _render("run.html.j2", f"Run {row.id}: {row.name}", depth=1, row=row, commit=_commit(row), pair=pair,
                   history=history_page, points=points, plots=[_embedded(plot) for plot in plots],
                   fixed=" ".join(f"{k}={text.show(v)}" for k, v in fixed.items()), no_medians=no_medians, report=report, no_report=no_report)


def _points(db: Path, run: int) -> tuple[list[dict], dict, Exception | None, list[dict]]:
    """A run's points as its page lists them: position, kernel, the parameters that vary across the
    run (in schema order; the fixed ones, returned apart, are said once above the table), status, failure, and
    the median of the kernel's figure (labctl.read.analysis.kernel_metric: time where every run did
    the same work, else throughput); where the medians cannot be had, why; and the page's
    interactive plots (_run_plot), one per kernel and measure."""
    from labctl.read.analysis import kernel_metric, point_table

    points = results.points(db, run)
    if points.empty:
        return [], {}, None, []
    with Store(db, create=False) as store:
        stored = {p.id: p.point.params for p in store.points(run)}
    order = results.in_schema_order(results.catalogue(db, run), sorted({k for p in stored.values() for k in p}))
    params = {point: {k: p[k] for k in order if k in p} for point, p in stored.items()}
    fixed = _fixed(list(params.values()))
    varying = [k for k in order if k not in fixed]
    medians: dict[int, str] = {}
    plots: list[dict] = []
    problem = None
    try:
        samples = results.load(db, run)
        for _, part in samples.groupby(["kernel", "measure"], sort=False):
            metric = kernel_metric(part)
            table = point_table(part, metric).to_dict("records")
            for record in table:
                medians[int(record["point"])] = _format(metric, record["median"])
            if table:
                plots.append(_run_plot(metric, table, params, varying))
    except Exception as error:  # noqa: BLE001 - the points are shown without their medians, and why
        problem = error
    return [{"position": record["position"] + 1, "kernel": record["kernel"],
             "params": " ".join(f"{k}={text.show(v)}" for k, v in params.get(record["point"], {}).items()
                                if k not in fixed),
             "status": record["status"], "failed": record["status"] == "failed",
             "failure_kind": record["failure_kind"] or "", "failure": record["failure"] or "",
             "median": medians.get(int(record["point"]), "-")}
            for record in points.to_dict("records")], fixed, problem, plots


# A parameter a point does not have, as a run's plot names its value.
ABSENT = "-"


def _run_plot(metric: metrics.Metric, table: list[dict], params: dict[int, dict], varying: list[str]) -> dict:
    """A run's plot of one kernel and measure as plots.js draws it ("run"): each point's median and
    95% interval in the axis's unit, and its varying parameters as shown (text.show); `x`, the
    parameter on the x axis at first: the first of numbers with more than one value, else the first."""
    kernel = str(table[0]["kernel"])
    finite = [r["median"] for r in table if _finite(r["median"])]
    factor, unit = metric.scale(finite or [1.0])
    shown = []
    for record in table:
        mine = params.get(int(record["point"]), {})
        values = {k: text.show(mine[k]) if k in mine else ABSENT for k in varying}
        described = " ".join(f"{k}={v}" for k, v in values.items())
        shown.append({"params": values, "median": _scaled(record["median"], factor),
                      "low": _scaled(record["ci_low"], factor), "high": _scaled(record["ci_high"], factor),
                      "title": f"#{int(record['position']) + 1} {kernel} {described}: {_format(metric, record['median'])}"
                               f" [{_format(metric, record['ci_low'])}, {_format(metric, record['ci_high'])}]"})
    used = [k for k in varying if len({p["params"][k] for p in shown}) > 1]

    def numeric(name: str) -> bool:
        return all(_finite(p["params"][name]) for p in shown)

    first = next((k for k in used if numeric(k)), used[0] if used else None)
    return {"kind": "run", "kernel": kernel, "title": f"{kernel}: {metric.words}", "params": used, "x": first,
            "y": f"{metric.words} ({unit})" if unit else metric.words, "points": shown}


def _scaled(value: object, factor: float) -> float | None:
    return float(value) / factor if _finite(value) else None


def _fixed(params: list[dict]) -> dict:
    """The parameters every point of a run has with the same value, in the first point's order: the
    run page says them once above its table and lists only the others per point."""
    if not params:
        return {}
    first = params[0]
    return {k: v for k, v in first.items() if all(k in p and text.show(p[k]) == text.show(v) for p in params[1:])}


# -- a history ------------------------------------------------------------------------------------


def _follow(frame: pd.DataFrame, plots: Path) -> list[_Series]:
    """Each point and followed figure of an experiment's history, with its changes
    (labctl.read.series.follow) and its plot, written into `plots`."""
    commits = _commits(frame)
    vary = _varying(frame)
    found = []
    for number, one in enumerate(series.follow(frame), 1):
        name = f"{number}-{one.metric}.png"
        _plot(one.rows, commits, one.metric, one.changes, plots / name)
        first = one.rows.iloc[0]
        label = " ".join([str(first["kernel"])] + [f"{k}={text.show(v)}" for k, v in first["params"].items()
                                                   if k in vary])
        found.append(_Series(f"series-{number}", label, one.metric, one.rows, one.changes, f"{plots.name}/{name}"))
    return found


def _varying(frame: pd.DataFrame) -> set[str]:
    """The parameters whose value is not the same for every point of a history."""
    params = list({key: p for key, p in zip(frame["key"], frame["params"])}.values())
    names = {name for p in params for name in p}
    return {name for name in names if len({json.dumps(p.get(name), sort_keys=True, default=str)
                                           for p in params}) > 1}


def _shared(frame: pd.DataFrame) -> str:
    """The parameters every point of a history has alike, as name=value."""
    vary = _varying(frame)
    first = frame["params"].iloc[0] if len(frame) else {}
    return " ".join(f"{k}={text.show(v)}" for k, v in first.items() if k not in vary)


def _commits(frame: pd.DataFrame) -> list[dict]:
    """An experiment's commits in history order (`order`): sha, short sha, subject, date, runs, and
    href, the anchor of its row in the history page's table of commits."""
    commits: dict[int, dict] = {}
    for record in frame.to_dict("records"):
        entry = commits.setdefault(int(record["order"]), {
            "sha": record["commit"], "short": record["short"], "subject": record["subject"],
            "date": record["date"], "runs": set()})
        entry["runs"].add(int(record["run"]))
    last = max(commits, default=-1)
    # A commit whose every point failed has no row: it keeps its place, unlabelled.
    return [{**commits.get(order, {"sha": "", "short": "?", "subject": "", "date": "", "runs": set()}),
             "href": f"#commit-{order}"} for order in range(last + 1)]


def _plot(rows: pd.DataFrame, commits: list[dict], metric: str, detected: list, path: Path) -> None:
    """A figure over commits: each commit's samples as dots, the medians as a line, a step as a
    vertical line before the commit that made it and a drift as a shaded span."""
    import matplotlib
    from matplotlib.figure import Figure

    from labctl.read.figures import DPI, STYLE

    figure_of = metrics.lookup(metric)
    values = [v for vs in rows["values"] for v in vs if _finite(v)]
    factor, unit = figure_of.scale(values or [1.0])
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(8, 3.4), dpi=DPI)
        ax = figure.add_subplot()
        for order, samples in zip(rows["order"], rows["values"]):
            finite = [v / factor for v in samples if _finite(v)]
            ax.scatter([order] * len(finite), finite, s=12, color="#8c959f", alpha=0.7, zorder=2,
                       label="samples" if order == rows["order"].iloc[0] else None)
        medians = [m / factor if _finite(m) else math.nan for m in rows["median"]]
        ax.plot(list(rows["order"]), medians, color="#0969da", marker="o", markersize=3, zorder=3, label="median")
        for change in detected:
            if change.kind == "drift":
                ax.axvspan(change.start - 0.5, change.end - 0.5, color="#fb8f44", alpha=0.25, zorder=1)
            else:
                ax.axvline(change.start - 0.5, color="#cf222e", linestyle="--", zorder=1)
        every = max(1, math.ceil(len(commits) / TICKS_SHOWN))
        ticks = list(range(0, len(commits), every))
        ax.set_xticks(ticks)
        ax.set_xticklabels([_plain(commits[i]["short"][:7]) for i in ticks], rotation=60, fontsize=7,
                           fontfamily="monospace")
        ax.set_xlim(-0.6, max(len(commits) - 0.4, 0.6))
        ax.set_xlabel("commit, oldest first")
        ax.set_ylabel(f"{figure_of.words} ({unit})" if unit else figure_of.words)
        _level_axis(ax, [m for m in medians if _finite(m)])
        ax.legend(loc="best", fontsize=7)
        figure.savefig(path, format="png", bbox_inches="tight", dpi=DPI)


# A history's y axis spans at least this share of the figure's level: a series that moves by 16
# instructions in 10^8 is drawn flat, as it is, not stretched into a cliff.
MIN_SPAN = 0.02


def _level_axis(ax, medians: list[float]) -> None:
    """The y axis in the figure's own numbers (no offset such as "1e-5+3.3938", which hides the
    level), at least MIN_SPAN of the level wide around the medians."""
    ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    if not medians:
        return
    low, high = ax.get_ylim()
    level = abs(statistics.median(medians))
    if high - low < MIN_SPAN * level:
        middle = (min(medians) + max(medians)) / 2
        ax.set_ylim(middle - MIN_SPAN * level / 2, middle + MIN_SPAN * level / 2)


def _history_page(name: str, frame: pd.DataFrame, series: list[_Series], runs: set[int]) -> str:
    """An experiment's commits, linked to the runs of this store that measured them, then each
    series: its plot and its changes."""
    commits = _commits(frame)
    changes = {one.anchor: _changes(one, commits) for one in series}
    plots = {one.anchor: _embedded(_history_plot(one)) for one in series}
    linked = _embedded([{"short": c["short"], "subject": text.printable(c["subject"]), "href": c["href"]}
                        for c in commits], "commits-data")
    return _render("history.html.j2", f"History of {name}", depth=1, name=name, commits=commits, runs=runs,
                   shared=_shared(frame) if series else "", series=series, changes=changes, plots=plots,
                   linked=linked)


def _history_plot(one: _Series) -> dict:
    """A series as plots.js draws it ("history"): per measured commit (its order in the history,
    which the page's commits-data names) the median and the range of its samples in the axis's
    unit; its changes by commit order; and MIN_SPAN, the least share of its level its y axis spans."""
    figure_of = metrics.lookup(one.metric)
    values = [v for vs in one.rows["values"] for v in vs if _finite(v)]
    factor, unit = figure_of.scale(values or [1.0])
    points = []
    for record in one.rows.to_dict("records"):
        finite = [v for v in record["values"] if _finite(v)]
        points.append({"order": int(record["order"]), "median": _scaled(record["median"], factor),
                       "low": _scaled(min(finite), factor) if finite else None,
                       "high": _scaled(max(finite), factor) if finite else None,
                       "shown": f"median {_format(figure_of, record['median'])} of {len(finite)} samples"})
    return {"kind": "history", "title": f"{one.label}: {one.words}",
            "y": f"{one.words} ({unit})" if unit else one.words, "points": points, "min_span": MIN_SPAN,
            "changes": [{"kind": c.kind, "start": int(c.start), "end": int(c.end)} for c in one.changes]}


def _embedded(value: object, element_id: str | None = None) -> Markup:
    """`value` as JSON in a <script type="application/json"> for plots.js: every "<", ">" and "&"
    written as a \\u escape and every character past ASCII too, so that no text from the store
    (a name holding "</script>" or "<!--") can close the element or start markup, and the page
    reads alike in any encoding. Its class is plot-data, or its id `element_id`."""
    data = json.dumps(value, ensure_ascii=True, allow_nan=False)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    label = f'id="{element_id}"' if element_id else 'class="plot-data"'
    return Markup(f'<script type="application/json" {label}>{data}</script>')


def _changes(one: _Series, commits: list[dict]) -> list[dict]:
    """A series' changes as its table shows them: the commits of each (for a step, the last
    measured commit before it and the one that made it; for a drift, the first moved commit to
    the first at the new level), its size and levels, and how sure it is."""
    figure_of = metrics.lookup(one.metric)
    measured = [int(order) for order in one.rows["order"]]

    def at(order: int) -> dict:
        return commits[order] if 0 <= order < len(commits) else UNKNOWN_COMMIT

    found = []
    for change in one.changes:
        before = [order for order in measured if order < change.start]
        found.append({"kind": change.kind, "first": at(change.start), "last": at(change.end),
                      "commits": change.end - change.start + 1, "before": at(before[-1]) if before else None,
                      "worse": _is_worse(one.metric, change), "size": _percent(change.change_pct),
                      "level_before": _format(figure_of, change.before),
                      "level_after": _format(figure_of, change.after), "confidence": _confidence(change.confidence)})
    return found


# -- regressions ----------------------------------------------------------------------------------


def _is_worse(metric: str, change) -> bool:
    lower = metrics.lookup(metric).lower_is_better
    return change.after > change.before if lower else change.after < change.before


def _size(change) -> float:
    """How big a change is, for ordering: its percentage, the largest for a level from 0."""
    return abs(change.change_pct) if _finite(change.change_pct) else math.inf


def _regressions_page(worse: list[tuple[str, _Series, object]], pages: dict[str, str]) -> str:
    """Each change that makes a figure worse, in the order given, linked to its series."""
    rows = []
    for name, one, change in worse:
        commits = {int(r["order"]): {"short": str(r["short"]), "subject": str(r["subject"])}
                   for r in one.rows.to_dict("records")}
        rows.append({"size": _percent(change.change_pct), "page": pages[name], "experiment": name,
                     "anchor": one.anchor, "label": one.label, "words": one.words, "kind": change.kind,
                     "first": commits.get(change.start, UNKNOWN_COMMIT),
                     "last": commits.get(change.end, UNKNOWN_COMMIT), "confidence": _confidence(change.confidence)})
    return _render("regressions.html.j2", "Regressions", depth=0, worse=rows)


# -- a comparison ---------------------------------------------------------------------------------


def _compare_page(db: Path, name: str, a: int, b: int) -> str:
    """Run b against run a (labctl.read.compare's markdown, rendered), or why there is no comparison."""
    from labctl.read import compare

    comparison, problem = None, None
    try:
        result = compare.compare(compare.load(db, a), compare.load(db, b))
        comparison = render_markdown(compare.markdown(result), None, "")
    except Exception as error:  # noqa: BLE001 - as a run's report: said on the page, the site goes on
        problem = error
    return _render("compare.html.j2", f"{name}: run {b} against run {a}", depth=1, name=name, a=a, b=b,
                   comparison=comparison, no_comparison=problem)


# -- markdown -------------------------------------------------------------------------------------


def render_markdown(markdown: str, folder: Path | None, base: str) -> Markup:
    """Markdown (a report, a comparison) as HTML: tables on, headings one level down under the
    page's own. Raw HTML is shown as text but for the folding a report writes itself
    (FOLDING: <details>, <summary>); an image or link stays only where it names a file under
    `folder`, the folder the markdown was written in, and then points at it through `base` (its
    path from the page). Anything else (markup or a link a stored name smuggled in, a web
    address) is left as text, so the page runs and loads nothing from elsewhere."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": True}).enable("table")
    tokens = parser.parse(markdown)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + 1, 6)}"
        if token.type == "html_block" and not FOLDING.fullmatch(token.content.strip()):
            token.type = "text"  # rendered escaped
        dropping = False
        for child in token.children or []:
            if child.type == "html_inline":
                child.type = "text"
            elif child.type == "image":
                target = _local(str(child.attrGet("src") or ""), folder)
                if target is None:
                    child.type, child.tag, child.attrs, child.children = "text", "", {}, None
                else:
                    child.attrSet("src", base + target)
            elif child.type == "link_open":
                target = _local(str(child.attrGet("href") or ""), folder)
                if target is None:
                    child.type, child.tag, child.attrs, child.content, dropping = "text", "", {}, "", True
                else:
                    child.attrSet("href", base + target)
            elif child.type == "link_close" and dropping:
                child.type, child.tag, child.content, dropping = "text", "", "", False
    return Markup(parser.renderer.render(tokens, parser.options, {}))


# The raw HTML a report writes itself, kept as markup: a folded section (labctl.read.report's
# "Every point's fingerprint"), its summary plain text.
FOLDING = re.compile(r"(<details>)?(<summary>[^<>&]*</summary>)?|</details>")


def _local(url: str, folder: Path | None) -> str | None:
    """`url` as a path under `folder` where it names a file there, else None."""
    if folder is None:
        return None
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
        return None
    try:
        root = folder.resolve()
        target = (folder / unquote(parts.path)).resolve()
    except (OSError, ValueError):
        return None
    if not target.is_relative_to(root) or not target.is_file():
        return None
    return target.relative_to(root).as_posix()


# -- the templates --------------------------------------------------------------------------------


@functools.cache
def _templates() -> jinja2.Environment:
    """The site's templates (labctl/read/templates/), autoescaped, with the filters they write store
    text with."""
    environment = jinja2.Environment(loader=jinja2.PackageLoader("labctl.read", "templates"), autoescape=True,
                                     undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    environment.filters.update(text=_text, counted=_counted, when=_when, kind=lambda error: type(error).__name__,
                               machine=text.machine_short, machine_line=text.machine_line)
    environment.globals.update(style_file=STYLE_FILE, plots_file=PLOTS_FILE, version=__version__, cell_shown=CELL_SHOWN,
                               failure_shown=FAILURE_SHOWN)
    return environment


def _render(template: str, title: str, depth: int, **values: object) -> str:
    """A whole page from `template`, `depth` folders below the site's root."""
    return _templates().get_template(template).render(title=title, up="../" * depth, published=_when(now()),
                                                      **values)


def _text(value: object, limit: int = CELL_SHOWN) -> str:
    """A text from the store for a page: one line of printable characters (labctl.vocabulary.text.printable),
    cut at `limit` characters with the count of those left out; the template escapes it."""
    shown = text.printable(value)
    if len(shown) > limit:
        shown = f"{shown[:limit]}… ({len(shown) - limit:,} more characters)"
    return shown


def _counted(count: int, thing: str) -> str:
    """3 commits, 1 run."""
    return f"{count} {thing}{'s' if count != 1 else ''}"


def _plain(label: str) -> str:
    """A text for matplotlib, which reads $...$ as mathematics (and fails on a bad formula)."""
    return text.printable(label).replace("$", r"\$")


def _finite(value: object) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _format(figure_of: metrics.Metric, value: float) -> str:
    return figure_of.format(value) if _finite(value) else "-"


def _percent(value: float) -> str:
    return f"{value:+.1f}%" if _finite(value) else "from 0"


def _confidence(value: float) -> str:
    return f"{value:.0%}" if _finite(value) else "-"


def _when(stamp: str | None) -> str:
    return str(stamp or "")[:19].replace("T", " ")

