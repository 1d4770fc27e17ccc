"""A history read back from the store (`labctl history`'s runs, labctl.read.site's pages): the runs
that carry a commit in their context (labctl.history measures them), their series over commits,
and the changes labctl.read.changes finds in each. Reads the store only: no extension, no run side."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import pandas as pd

from labctl.read import results
from labctl.store import COMMIT_KEYS, Store
from labctl.vocabulary import metrics

# A commit as a run's context records it (labctl.run.sysinfo.commit): the fields of Commit, in order.

# The figures a history follows, by the point's measure: what the measure measures, and whether
# it is a count, exact but for a runtime's waits (labctl.read.changes.detect's `exact`). Under instructions the
# clock runs under valgrind and is followed by nobody.
FOLLOWED = {metrics.TIME: ("elapsed_ns",), metrics.INSTRUCTIONS: ("instructions",),
            metrics.COUNTERS: ("elapsed_ns", "instructions", "cycles")}


def exact(metric: str) -> bool:
    """Whether a figure is a count that repeats (instructions, cycles...) rather than a time."""
    return metrics.lookup(metric).unit == metrics.COUNT


@dataclass(frozen=True)
class Commit:
    """A commit a run measured: its sha, subject, committer date (ISO 8601) and build key."""

    sha: str
    subject: str
    date: str
    build: str

    @property
    def short(self) -> str:
        return self.sha[:10]


def runs(db: str, experiment: str | None = None) -> list[tuple[int, str, Commit]]:
    """The store's runs made by a history, (run, experiment, commit), oldest commit first (by
    committer date, then run): of a commit measured twice, both."""
    with Store(db, create=False) as store:
        rows = store.runs()
    found = []
    for row in rows:
        commit = row.context.get("commit") if isinstance(row.context, dict) else None
        if not isinstance(commit, dict) or (experiment is not None and row.name != experiment):
            continue
        try:
            found.append((row.id, row.name, Commit(*(str(commit[k]) for k in COMMIT_KEYS))))
        except KeyError:
            continue
    return sorted(found, key=lambda item: (pd.Timestamp(item[2].date).value, item[0]))


SERIES_COLUMNS = ["experiment", "kernel", "key", "params", "label", "measure", "metric", "exact",
                  "order", "commit", "short", "subject", "date", "build", "run", "values", "median"]


def series(db: str, experiment: str | None = None) -> pd.DataFrame:
    """Every history of the store as series: one row per point, followed figure and commit, in
    the commits' order (`order`, from 0 per experiment), with the commit's measured `values`
    (its samples) and their `median`. A point that failed on a commit (a
    commit that does not build, a kernel it lacks) has no row there. `label` is the kernel and
    its parameters, as a person reads them."""
    made = runs(db, experiment)
    rows = []
    orders: dict[str, dict[str, int]] = {}
    for run_id, name, commit in made:
        order = orders.setdefault(name, {}).setdefault(commit.sha, len(orders[name]))
        frame = results.load(db, run_id)
        if frame.empty:
            continue
        with Store(db, create=False) as store:
            given = {p.key: p.point.params for p in store.points(run_id)}
        for key, samples in frame.groupby("point_key", sort=False):
            first = samples.iloc[0]
            params = given.get(key, {})
            for metric in FOLLOWED.get(first["measure"], ()):
                if metric not in samples:
                    continue
                values = [float(v) for v in samples[metric].dropna() if math.isfinite(float(v))]
                if not values:
                    continue
                rows.append({"experiment": name, "kernel": first["kernel"], "key": key, "params": params,
                             "label": _label(first["kernel"], params), "measure": first["measure"],
                             "metric": metric, "exact": exact(metric), "order": order,
                             "commit": commit.sha, "short": commit.short, "subject": commit.subject,
                             "date": commit.date, "build": commit.build, "run": run_id, "values": values,
                             "median": float(pd.Series(values).median())})
    return pd.DataFrame(rows, columns=SERIES_COLUMNS)


def _label(kernel: str, params: dict) -> str:
    return " ".join([kernel] + [f"{k}={v}" for k, v in params.items()])


# -- measuring a history ----------------------------------------------------------------------

# -- the changes of a history -----------------------------------------------------------------

@dataclass(frozen=True)
class Followed:
    """One point's figure over its experiment's commits, with the changes found in it."""

    experiment: str
    key: str
    metric: str
    rows: pd.DataFrame  # series' rows, one per measured commit (one measured twice: all its samples)
    samples: list[list[float]]  # per commit of the experiment's history in order; [] where not measured
    changes: list  # labctl.read.changes.Change, indexing `samples` (each at the first commit of its build)


def follow(frame: pd.DataFrame) -> list[Followed]:
    """Each point and figure of `series`' frame with its changes (labctl.read.changes.detect), found
    over its experiment's commits: one it was not measured on (a commit that does not build)
    keeps its place, empty. Consecutive commits with one build (commits that changed no C++)
    ran the same code: they cannot differ but by noise, so they are one element of the series
    detect segments, their samples pooled (which also shows the noise between runs, such as a
    schedule-dependent count's), and a change is placed on the first commit of its build."""
    from labctl.read import changes as found

    followed = []
    for name, one in frame.groupby("experiment", sort=False):
        commits = int(one["order"].max()) + 1
        builds_of = dict(zip(one["order"].astype(int), one["build"])) if "build" in one else {}
        groups: list[list[int]] = []  # runs of consecutive commits sharing a build, in order
        for order in range(commits):
            build = builds_of.get(order)
            if groups and build is not None and builds_of.get(groups[-1][0]) == build:
                groups[-1].append(order)
            else:
                groups.append([order])
        for (key, metric), rows in one.groupby(["key", "metric"], sort=False):
            rows = rows.sort_values(["order", "run"]).groupby("order", as_index=False, sort=True).agg(
                {**{column: "last" for column in rows.columns if column not in ("order", "values")},
                 "values": lambda lists: [v for values in lists for v in values]})
            rows["median"] = [float(pd.Series(values).median()) for values in rows["values"]]
            samples: list[list[float]] = [[] for _ in range(commits)]
            for order, values in zip(rows["order"], rows["values"]):
                samples[int(order)] = list(values)
            pooled = [[v for order in group for v in samples[order]] for group in groups]
            detected = [dataclasses.replace(change, start=groups[change.start][0], end=groups[change.end][0])
                        for change in found.detect(pooled, bool(rows["exact"].iloc[0]))]
            followed.append(Followed(str(name), str(key), str(metric), rows, samples, detected))
    return followed


CHANGE_COLUMNS = ["experiment", "kernel", "key", "label", "metric", "kind", "start", "end", "where",
                  "subject", "before", "after", "change_pct", "confidence", "worse"]


def changes(db: str, experiment_name: str | None = None) -> pd.DataFrame:
    """The changes (labctl.read.changes) of every series of the store's histories: one row per change,
    with its first and last commit (`start`, `end`: equal for a step), `where` as a person reads
    it, the subject of the commit that made it (a drift's last), and whether it made the figure
    worse (every figure a history follows is better lower). Largest first."""
    frame = series(db, experiment_name)
    commits = {(name, int(order)): (sha, short, subject) for name, order, sha, short, subject in
               frame[["experiment", "order", "commit", "short", "subject"]].drop_duplicates().itertuples(index=False)}
    rows = []
    for one in follow(frame):
        first = one.rows.iloc[0]
        for change in one.changes:
            start, end = commits[(one.experiment, change.start)], commits[(one.experiment, change.end)]
            rows.append({"experiment": one.experiment, "kernel": first["kernel"], "key": one.key,
                         "label": first["label"], "metric": one.metric, "kind": change.kind,
                         "start": start[0], "end": end[0],
                         "where": start[1] if change.start == change.end else f"{start[1]}..{end[1]}",
                         "subject": end[2], "before": change.before, "after": change.after,
                         "change_pct": change.change_pct, "confidence": change.confidence,
                         "worse": change.after > change.before})
    table = pd.DataFrame(rows, columns=CHANGE_COLUMNS)
    return table.sort_values("change_pct", key=abs, ascending=False, ignore_index=True)
