"""History: an experiment measured on each commit of a repository (`labctl history`), and the
series over commits that change points are found on (labctl.changes).

What is measured is each commit's compiled extension (the runtime and the kernels, native/);
what measures it is this labctl (the sweep, the workers, the store, the experiment file), as asv
measures each commit of a project with the benchmarks of today. A commit's extension is loaded
from the build cache (labctl.builds) through NATIVE_ENV, and the commit it was built from is
recorded in each run's context under "commit" (COMMIT_ENV): a history is the runs of a store
that carry one, in the commits' order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from labctl import metrics, native, results, sysinfo
from labctl.store import Store

# The compiled extension a process loads instead of its installed one (labctl.native), and the
# commit it was built from (labctl.sysinfo): set by `labctl history` and `labctl bisect` for the
# sweeps they start, inherited by their workers.
NATIVE_ENV = native.NATIVE_ENV
COMMIT_ENV = sysinfo.COMMIT_ENV
COMMIT_KEYS = sysinfo.COMMIT_KEYS

# The figures a history follows, by the point's measure: what the measure measures, and whether
# it repeats to a few parts per million (labctl.changes.detect's `exact`). Under instructions the
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
                  "order", "commit", "short", "subject", "date", "run", "values", "median"]


def series(db: str, experiment: str | None = None) -> pd.DataFrame:
    """Every history of the store as series: one row per point, followed figure and commit, in
    the commits' order (`order`, from 0 per experiment), with the commit's measured `values`
    (its samples, warmups left out) and their `median`. A point that failed on a commit (a
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
            given = {p.key: p.params for p in store.points(run_id)}
        frame = frame[~frame["warmup"].astype(bool)]
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
                             "date": commit.date, "run": run_id, "values": values,
                             "median": float(pd.Series(values).median())})
    return pd.DataFrame(rows, columns=SERIES_COLUMNS)


def _label(kernel: str, params: dict) -> str:
    return " ".join([kernel] + [f"{k}={v}" for k, v in params.items()])
