"""`labctl publish`: a store as a static site of plain files, read offline from file:// or from any
static host, with relative links only, nothing fetched from elsewhere and no script needed to read.

index.html lists the store's runs, its experiments with a history and the comparisons of each
experiment's two latest runs. runs/RUN.html holds a run's points and its report (labctl.report,
written into runs/RUN/ and rendered from markdown). history/EXPERIMENT.html follows each point's
figures over commits (labctl.history.series), with the changes labctl.changes finds plotted and
listed; regressions.html gathers the changes that make a figure worse, biggest first; and
compare/A-B.html is labctl.compare's table. Every text from the store is escaped: a name, a
parameter or a failure is shown as written, never read as markup.

The folder is written as labctl.files writes a report folder: built beside it and renamed into
place, never onto a store, and only in place of a folder that is new, empty, or a site labctl wrote
(SITE_MARKER) holding nothing but the files it lists, unchanged.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pandas as pd

from labctl import __version__, files, history, metrics, results, text
from labctl.store import RunRow, Store, now

# The file labctl leaves in every site it writes: the store it came from, and each file written
# there with its size and hash. A folder without it, or holding anything else, or any of those
# files changed, is never replaced.
SITE_MARKER = ".labctl-site"
STYLE_FILE = "style.css"

# How much of a text from the store a page shows: a failure is a paragraph, anything else a cell.
# A store can hold a name of a megabyte; the page stays readable and says what it left out.
FAILURE_SHOWN = 2000
CELL_SHOWN = 300

# History plots label at most this many commits on the x axis; more are thinned evenly.
TICKS_SHOWN = 40

# Every page's one script: what a reader cannot see when an image does not load is said under it,
# and the count of images loaded goes on <body data-images="LOADED/TOTAL"> (the site's test reads
# it in a headless browser). The page reads the same without it.
IMAGES_SCRIPT = """window.addEventListener("load", function () {
  var images = document.images, loaded = 0;
  for (var i = 0; i < images.length; i++) {
    var image = images[i];
    if (image.complete && image.naturalWidth > 0) { loaded++; continue; }
    var note = document.createElement("p");
    note.className = "missing";
    note.textContent = "plot missing: " + image.getAttribute("src");
    image.insertAdjacentElement("afterend", note);
  }
  document.body.dataset.images = loaded + "/" + images.length;
});"""

STYLE = """body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
  margin: 0; background: #fff; }
nav { background: #24292f; padding: .6em 1.5em; }
nav a { color: #fff; margin-right: 1.5em; text-decoration: none; font-weight: 600; }
main { max-width: 1200px; margin: 0 auto; padding: 1em 1.5em 3em; overflow-wrap: break-word; }
footer { color: #57606a; font-size: 13px; padding: 1em 1.5em; border-top: 1px solid #d0d7de; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; margin-top: 1.6em; } h3 { font-size: 1.1em; }
a { color: #0969da; }
table { border-collapse: collapse; margin: .8em 0; font-size: 14px; display: block; max-width: 100%;
  overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.long { overflow-wrap: anywhere; min-width: 14em; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.failed td { background: #fff5f5; }
img { max-width: 100%; height: auto; display: block; margin: .6em 0; }
code, pre { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; white-space: pre-wrap; }
blockquote { color: #57606a; border-left: 4px solid #d0d7de; margin: 0; padding: 0 1em; }
.note, .empty { color: #57606a; }
.missing { color: #cf222e; font-weight: 600; }
.worse { color: #cf222e; } .better { color: #1a7f37; }
.report { border-top: 1px solid #d0d7de; margin-top: 2em; }
"""


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


# -- the pages ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Series:
    """A point's followed figure over an experiment's commits, with its changes."""

    anchor: str
    label: str
    metric: str
    rows: pd.DataFrame  # history.series' rows of this point and figure, in commit order
    changes: list  # labctl.changes.Change, indexed by commit order
    plot: str  # its PNG, relative to the history page


def _fill(site: Path, db: Path, rows: list[RunRow], published: Published, say: Callable[[str], None]) -> None:
    (site / STYLE_FILE).write_text(STYLE, encoding="utf-8")
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

    say(f"history: {len(histories)} experiment{'s' if len(histories) != 1 else ''}")
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

    say(f"compare: {len(pairs)} comparison{'s' if len(pairs) != 1 else ''} of each experiment's two latest runs")
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
    """Each experiment's history series (labctl.history.series), by experiment; and, where the
    store's histories cannot be read (a commit whose date is no date), why, for the index."""
    try:
        frame = history.series(str(db))
    except (ValueError, TypeError) as error:
        return {}, f"{type(error).__name__}: {error}"
    return {name: part for name, part in frame.groupby("experiment", sort=False)}, None


def _file_name(name: str) -> str:
    """An experiment's name as a file name: labctl.report's folder name (never two names alike)."""
    from labctl.report import slug

    return slug(name)


# -- the index ------------------------------------------------------------------------------------


def _index_page(db: Path, rows: list[RunRow], histories: dict[str, pd.DataFrame], pages: dict[str, str],
                pairs: dict[str, tuple[int, int]], regressions: int, problem: str | None) -> str:
    body = [f"<h1>Results of {_text(db.name)}</h1>"]
    if not rows:
        body.append('<p class="empty">This store holds no runs yet: <code>labctl sweep FILE --db '
                    f'{_text(db.name)}</code> makes one.</p>')
    else:
        body.append(f"<p>{len(rows)} run{'s' if len(rows) != 1 else ''}, "
                    f"{len(histories)} experiment{'s' if len(histories) != 1 else ''} with a history; "
                    f'<a href="regressions.html">Regressions</a>: {regressions}.</p>')
        body.append("<h2>Runs</h2>")
        table = []
        for row in reversed(rows):
            commit = row.context.get("commit") if isinstance(row.context, dict) else None
            commit_cell = (f"<code>{_text(str(commit.get('sha', ''))[:10])}</code> "
                           f"{_text(commit.get('subject', ''))}" if isinstance(commit, dict) else "")
            table.append([f'<a href="runs/{row.id}.html">{row.id}</a>', _text(row.name), _text(row.status),
                          _text(_when(row.started_at)), f"{row.points_done}/{row.points}",
                          str(row.points_failed), _text(text.machine_short(row.machine)), commit_cell])
        body.append(_table(["run", "experiment", "status", "started (UTC)", "points done",
                            "failed", "machine", "commit"], table, numbers={0, 4, 5}))
    body.append("<h2>Histories</h2>")
    if problem:
        body.append(f'<p class="missing">The histories of this store cannot be read: {_text(problem)}</p>')
    if histories:
        items = []
        for name, frame in histories.items():
            commits = frame["commit"].nunique()
            items.append(f'<li><a href="{pages[name]}">{_text(name)}</a>: {commits} '
                         f"commit{'s' if commits != 1 else ''}, {frame['key'].nunique()} points</li>")
        body.append("<ul>" + "".join(items) + "</ul>")
    elif not problem:
        body.append('<p class="empty">No experiment here has a history (runs measured on commits by '
                    "<code>labctl history</code>).</p>")
    if pairs:
        body.append("<h2>Comparisons</h2><p>Each experiment's latest run against the one before.</p><ul>")
        body += [f'<li><a href="compare/{a}-{b}.html">{_text(name)}: run {b} against run {a}</a></li>'
                 for name, (a, b) in pairs.items()]
        body.append("</ul>")
    body.append('<p><a href="regressions.html">Regressions</a>: every change over the histories '
                "that makes a figure worse, biggest first.</p>")
    return _page(f"Results of {db.name}", "\n".join(body), depth=0)


# -- a run ----------------------------------------------------------------------------------------


def _run_page(site: Path, db: Path, row: RunRow, pair: tuple[int, int] | None, history_page: str | None) -> str:
    commit = row.context.get("commit") if isinstance(row.context, dict) else None
    facts = [("experiment", _text(row.name)), ("file", _text(row.source)), ("status", _text(row.status)),
             ("started (UTC)", _text(_when(row.started_at))),
             ("finished (UTC)", _text(_when(row.finished_at)) if row.finished_at else "-"),
             ("points", f"{row.points_done} of {row.points} done, {row.points_failed} failed"
              + (f", {row.points_skipped} skipped" if row.points_skipped else "")),
             ("samples", str(row.samples)), ("machine", _text(text.machine_line(row.machine)))]
    if isinstance(commit, dict):
        facts.append(("commit", (f"<code>{_text(commit.get('sha', ''))}</code> {_text(commit.get('subject', ''))}"
                                f" ({_text(commit.get('date', ''))})")))
    body = [f"<h1>Run {row.id}: {_text(row.name)}</h1>"]
    if row.description:
        body.append(f"<p>{_text(row.description, CELL_SHOWN * 4)}</p>")
    body.append(_table([], [[name, value] for name, value in facts]))
    links = []
    if pair is not None:
        links.append(f'<a href="../compare/{pair[0]}-{pair[1]}.html">run {pair[1]} against run {pair[0]}</a>')
    if history_page is not None:
        links.append(f'<a href="../{history_page}">the history of {_text(row.name)}</a>')
    if links:
        body.append("<p>See also: " + "; ".join(links) + ".</p>")
    body.append(f"<pre>{_text(row.command, FAILURE_SHOWN)}</pre>")
    body += ["<h2>Points</h2>", _points_table(db, row.id)]
    body.append('<section class="report"><h2>Report</h2>')
    folder = site / "runs" / str(row.id)
    try:
        from labctl import report

        report.write(db, row.id, folder, option="OUT")
        markdown = (folder / "report.md").read_text(encoding="utf-8")
        body.append(render_markdown(markdown, folder, f"{row.id}/"))
    except Exception as error:  # noqa: BLE001 - one run's report never stops the site: said on its page
        body.append(f'<p class="note">No report for this run: {_text(type(error).__name__)}: '
                    f"{_text(error, FAILURE_SHOWN)}</p>")
    body.append("</section>")
    return _page(f"Run {row.id}: {row.name}", "\n".join(body), depth=1)


def _points_table(db: Path, run: int) -> str:
    """A run's points: kernel, parameters, status, failure, and the median of the kernel's figure
    (labctl.analysis.kernel_metric: time where every run did the same work, else throughput)."""
    from labctl.analysis import kernel_metric, point_table

    points = results.points(db, run)
    if points.empty:
        return '<p class="empty">This run has no points.</p>'
    medians: dict[int, str] = {}
    note = ""
    try:
        samples = results.load(db, run)
        for _, part in samples.groupby(["kernel", "measure"], sort=False):
            metric = kernel_metric(part)
            for record in point_table(part, metric).to_dict("records"):
                value = record["median"]
                medians[int(record["point"])] = metric.format(value) if _finite(value) else "-"
    except Exception as error:  # noqa: BLE001 - the points are shown without their medians, and why
        note = f'<p class="note">No medians: {_text(type(error).__name__)}: {_text(error, FAILURE_SHOWN)}</p>'
    with Store(db, create=False) as store:
        params = {p.id: p.params for p in store.points(run)}
    rows, failed = [], set()
    for index, record in enumerate(points.to_dict("records")):
        failure = ""
        if record["status"] == "failed":
            failed.add(index)
            failure = f"{_text(record['failure_kind'] or '')}: {_text(record['failure'] or '', FAILURE_SHOWN)}"
        given = params.get(record["point"], {})
        rows.append([str(record["position"] + 1), _text(record["kernel"]),
                     _text(" ".join(f"{k}={text.show(v)}" for k, v in given.items()), CELL_SHOWN * 2),
                     _text(record["status"]), failure, _text(medians.get(int(record["point"]), "-"))])
    return note + _table(["#", "kernel", "parameters", "status", "failure", "median"], rows,
                         numbers={0, 5}, failed=failed, long={2, 4})


# -- a history ------------------------------------------------------------------------------------


def _follow(frame: pd.DataFrame, plots: Path) -> list[_Series]:
    """Each point and followed figure of an experiment's history, with its changes
    (labctl.history.follow) and its plot, written into `plots`."""
    commits = _commits(frame)
    vary = _varying(frame)
    found = []
    for number, one in enumerate(history.follow(frame), 1):
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
    """An experiment's commits in history order (`order`): sha, short sha, subject, date, runs."""
    commits: dict[int, dict] = {}
    for record in frame.to_dict("records"):
        entry = commits.setdefault(int(record["order"]), {
            "sha": record["commit"], "short": record["short"], "subject": record["subject"],
            "date": record["date"], "runs": set()})
        entry["runs"].add(int(record["run"]))
    last = max(commits, default=-1)
    # A commit whose every point failed has no row: it keeps its place, unlabelled.
    return [commits.get(order, {"sha": "", "short": "?", "subject": "", "date": "", "runs": set()})
            for order in range(last + 1)]


def _plot(rows: pd.DataFrame, commits: list[dict], metric: str, detected: list, path: Path) -> None:
    """A figure over commits: each commit's samples as dots, the medians as a line, a step as a
    vertical line before the commit that made it and a drift as a shaded span."""
    import matplotlib
    from matplotlib.figure import Figure

    from labctl.figures import DPI, STYLE

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
        ax.legend(loc="best", fontsize=7)
        figure.savefig(path, format="png", bbox_inches="tight", dpi=DPI)


def _history_page(name: str, frame: pd.DataFrame, series: list[_Series], runs: set[int]) -> str:
    commits = _commits(frame)
    body = [f"<h1>History of {_text(name)}</h1>",
            (f"<p>{len(commits)} commit{'s' if len(commits) != 1 else ''}, oldest first; each point's figure "
            "per commit: its samples as dots, their median as the line. A dashed line marks a step "
            "before the commit that made it, a shaded span a drift over several commits.</p>")]
    rows = []
    for order, commit in enumerate(commits):
        links = ", ".join(f'<a href="../runs/{run}.html">{run}</a>' for run in sorted(commit["runs"]) if run in runs)
        rows.append([str(order), f"<code>{_text(commit['short'])}</code>", _text(commit["date"]),
                     _text(commit["subject"]), links])
    body += ["<h2>Commits</h2>", _table(["#", "commit", "date", "subject", "runs"], rows, numbers={0}, long={3})]
    if series:
        shared = _shared(frame)
        body.append("<h2>Points</h2>" + (f'<p class="note">Every point: {_text(shared, CELL_SHOWN * 2)}</p>'
                                           if shared else "") + "<ul>" + "".join(
            f'<li><a href="#{one.anchor}">{_text(one.label)}: {_text(metrics.lookup(one.metric).words)}</a>'
            f"{_changes_note(one)}</li>" for one in series) + "</ul>")
    for one in series:
        words = metrics.lookup(one.metric).words
        body.append(f'<section id="{one.anchor}"><h2>{_text(one.label)}: {_text(words)}</h2>')
        body.append(f'<img src="{html.escape(one.plot)}" '
                    f'alt="{_text(one.label)}: {_text(words)} over commits">')
        if one.changes:
            body.append(_changes_table(one, commits))
        else:
            body.append('<p class="note">No change found over these commits.</p>')
        body.append("</section>")
    return _page(f"History of {name}", "\n".join(body), depth=1)


def _changes_note(one: _Series) -> str:
    return f" ({len(one.changes)} change{'s' if len(one.changes) != 1 else ''})" if one.changes else ""


def _changes_table(one: _Series, commits: list[dict]) -> str:
    figure_of = metrics.lookup(one.metric)
    measured = [int(order) for order in one.rows["order"]]
    rows = []
    for change in one.changes:
        worse = _is_worse(one.metric, change)
        rows.append([_text(change.kind), _commit_span(change, commits, measured),
                     f'<span class="{"worse" if worse else "better"}">{_percent(change.change_pct)}</span>',
                     f"{_text(_format(figure_of, change.before))} &rarr; {_text(_format(figure_of, change.after))}",
                     _confidence(change.confidence)])
    return _table(["kind", "commits", "size", "level before → after", "confidence"], rows, numbers={2, 4})


def _commit_span(change, commits: list[dict], measured: list[int]) -> str:
    """The commits of a change: for a step, the last measured commit before it and the one that
    made it; for a drift, the first moved commit to the first at the new level."""
    def named(order: int) -> str:
        commit = commits[order] if 0 <= order < len(commits) else {"short": "?", "subject": ""}
        return f"<code>{_text(commit['short'])}</code> {_text(commit['subject'], 80)}"

    if change.kind == "drift":
        return f"{named(change.start)} &hellip; {named(change.end)} ({change.end - change.start + 1} commits)"
    before = [order for order in measured if order < change.start]
    return (f"{named(before[-1])} &rarr; " if before else "") + named(change.start)


# -- regressions ----------------------------------------------------------------------------------


def _is_worse(metric: str, change) -> bool:
    lower = metrics.lookup(metric).lower_is_better
    return change.after > change.before if lower else change.after < change.before


def _size(change) -> float:
    """How big a change is, for ordering: its percentage, the largest for a level from 0."""
    return abs(change.change_pct) if _finite(change.change_pct) else math.inf


def _regressions_page(worse: list[tuple[str, _Series, object]], pages: dict[str, str]) -> str:
    body = ["<h1>Regressions</h1>",
            ("<p>Every change over the store's histories that makes a figure worse (every figure a "
            "history follows is better lower), biggest first.</p>")]
    if not worse:
        body.append('<p class="empty">No change over the histories makes a figure worse.</p>')
    else:
        rows = []
        for name, one, change in worse:
            commits = _commits_of(one)
            rows.append([f'<span class="worse">{_percent(change.change_pct)}</span>',
                         f'<a href="{pages[name]}">{_text(name)}</a>',
                         f'<a href="{pages[name]}#{one.anchor}">{_text(one.label)}</a>',
                         _text(metrics.lookup(one.metric).words), _text(change.kind),
                         _commit_words(change, commits), _confidence(change.confidence)])
        body.append(_table(["size", "experiment", "point", "figure", "kind", "commit", "confidence"], rows,
                           numbers={0, 6}))
    return _page("Regressions", "\n".join(body), depth=0)


def _commits_of(one: _Series) -> dict[int, tuple[str, str]]:
    return {int(r["order"]): (str(r["short"]), str(r["subject"])) for r in one.rows.to_dict("records")}


def _commit_words(change, commits: dict[int, tuple[str, str]]) -> str:
    def named(order: int) -> str:
        short, subject = commits.get(order, ("?", ""))
        return f"<code>{_text(short)}</code> {_text(subject, 80)}"

    return named(change.start) + (f" &hellip; {named(change.end)}" if change.kind == "drift" else "")


# -- a comparison ---------------------------------------------------------------------------------


def _compare_page(db: Path, name: str, a: int, b: int) -> str:
    from labctl import compare

    body = [f"<h1>{_text(name)}: run {b} against run {a}</h1>",
            (f'<p><a href="../runs/{a}.html">Run {a}</a> (A) and <a href="../runs/{b}.html">run {b}</a> '
            "(B), the experiment's two latest runs, point by point (<code>labctl compare</code>).</p>")]
    try:
        result = compare.compare(compare.load(db, a), compare.load(db, b))
        body.append(render_markdown(compare.markdown(result), None, ""))
    except Exception as error:  # noqa: BLE001 - as a run's report: said on the page, the site goes on
        body.append(f'<p class="note">No comparison: {_text(error, FAILURE_SHOWN)}</p>')
    return _page(f"{name}: run {b} against run {a}", "\n".join(body), depth=1)


# -- markdown -------------------------------------------------------------------------------------


def render_markdown(markdown: str, folder: Path | None, base: str) -> str:
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
    return parser.renderer.render(tokens, parser.options, {})


# The raw HTML a report writes itself, kept as markup: a folded section (labctl.report's
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


# -- writing HTML ---------------------------------------------------------------------------------


def _page(title: str, body: str, depth: int) -> str:
    """A whole page: `body` (HTML already escaped) under the site's navigation, `depth` folders
    below the site's root."""
    up = "../" * depth
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_text(title, CELL_SHOWN)}</title>
<link rel="stylesheet" href="{up}{STYLE_FILE}">
<script>
{IMAGES_SCRIPT}
</script>
</head>
<body>
<nav><a href="{up}index.html">Runs and histories</a><a href="{up}regressions.html">Regressions</a></nav>
<main>
{body}
</main>
<footer>Published by labctl {html.escape(__version__)} at {html.escape(_when(now()))} UTC.</footer>
</body>
</html>
"""


def _table(headers: list[str], rows: list[list[str]], numbers: set[int] = frozenset(),
           failed: set[int] = frozenset(), long: set[int] = frozenset()) -> str:
    """An HTML table of cells already escaped (no header row without `headers`); `numbers`: the
    columns aligned right; `long`: those whose text may break anywhere (a failure, parameters);
    `failed`: the rows marked as failed."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    lines = ["<table>", f"<thead><tr>{head}</tr></thead>" if headers else "", "<tbody>"]
    for index, row in enumerate(rows):
        cells = "".join(f'<td class="{"number" if i in numbers else "long" if i in long else "text"}">{c}</td>'
                        for i, c in enumerate(row))
        lines.append(f'<tr class="failed">{cells}</tr>' if index in failed else f"<tr>{cells}</tr>")
    lines.append("</tbody>\n</table>")
    return "\n".join(lines)


def _text(value: object, limit: int = CELL_SHOWN) -> str:
    """A text from the store for a page: one line of printable characters (labctl.text.printable),
    cut at `limit` characters with the count of those left out, and escaped."""
    shown = text.printable(value)
    if len(shown) > limit:
        shown = f"{shown[:limit]}… ({len(shown) - limit:,} more characters)"
    return html.escape(shown)


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

