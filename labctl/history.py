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

import collections
import dataclasses
import json
import math
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from labctl import builds, experiment, metrics, native, results, sysinfo, text
from labctl.console import EXIT_INTERRUPTED
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
            given = {p.key: p.params for p in store.points(run_id)}
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

class HistoryError(ValueError):
    """A history that cannot be run as asked (a range with no commits, not a repository...):
    the message names the option."""


def commits(repo: Path, spec: str, every: int = 1) -> list[str]:
    """The commits `spec` names, oldest first: a range (A..B: the first-parent line from A,
    excluded, to B, as `git log --first-parent` walks it), a comma-separated list, or one
    revision; with `every` > 1, every Nth of them, the newest always kept."""
    spec = spec.strip()
    if not spec:
        raise HistoryError("--commits: empty; give a range (HEAD~20..HEAD), a list (a,b,c) or a commit")
    if ".." in spec:
        try:
            listed = builds.git(repo, "rev-list", "--first-parent", "--reverse", spec, "--").split()
        except builds.BuildError as error:
            raise HistoryError(f"--commits {spec}: {error}") from None
    else:
        listed = []
        for name in filter(None, (name.strip() for name in spec.split(","))):
            sha = builds.git(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", check=False)
            if not sha:
                raise HistoryError(f"--commits {spec}: {name} is not a commit of {repo}")
            listed.append(sha)
    if not listed:
        raise HistoryError(f"--commits {spec}: no commits in it")
    if every > 1:
        listed = listed[::-1][::every][::-1]  # counted from the newest, which is always measured
    return list(dict.fromkeys(listed))


def describe(repo: Path, sha: str, build: str) -> dict:
    """A commit as a run's context records it (sysinfo.COMMIT_KEYS)."""
    full, subject, date = builds.git(repo, "show", "-s", "--format=%H%x00%s%x00%cI", sha).split("\0")
    return {"sha": full, "subject": subject, "date": date, "build": build}


@dataclass
class Step:
    """What history did for one commit: its build (seconds, cached), its run and how long the
    sweep took, or why nothing was measured."""

    commit: str
    subject: str
    build_s: float = 0.0
    cached: bool = False
    sweep_s: float = 0.0
    run: int | None = None
    outcome: str = ""  # measured, resumed, already measured, does not build, not planned


def measure(repo: Path, file: Path, shas: list[str], db: str, cache: builds.Cache,
            rebuild: bool = False, say=print) -> list[Step]:
    """Measures experiment `file` on each commit of `shas`, oldest first, into the store `db`: a
    commit already measured there (a finished run of this experiment recording it) is kept, one
    whose run was interrupted is resumed, one that does not build, or whose extension cannot
    plan the experiment, is stored as a run whose points failed with the reason. Raises
    HistoryError for what stops the whole history (an interrupted sweep: run it again)."""
    name = experiment.load(file).name
    steps = []
    for index, sha in enumerate(shas, 1):
        commit = describe(repo, sha, "")
        step = Step(sha, commit["subject"])
        steps.append(step)
        head = f"[{index}/{len(shas)}] {sha[:10]} {text.printable(commit['subject'])[:60]}"
        done = _stored(db, name, sha)
        finished = [run for run, status in done if status == "finished"]
        if finished and not rebuild:
            step.run, step.outcome = finished[-1], "already measured"
            say(f"{head}: already measured (run {step.run})")
            continue
        started = time.monotonic()
        build = cache.build(sha, rebuild, starting=lambda head=head: say(f"{head}: building"))
        step.build_s, step.cached = time.monotonic() - started, build.cached
        commit["build"] = build.key
        say(f"{head}: " + ("build cached" if build.cached else f"built in {step.build_s:.0f} s")
            + ("" if build.ok else f", does not build: {build.error}"))
        if not build.ok:
            step.run = _record_failed(db, file, commit, f"commit {sha[:10]} does not build: "
                                      f"{build.error} (log: {build.log})")
            step.outcome = "does not build"
            continue
        resumable = [run for run, status in done if status != "finished"]
        step.run, step.outcome, step.sweep_s = _sweep(db, file, name, commit, build,
                                                      resumable[-1] if resumable else None)
    return steps


def _stored(db: str, name: str, sha: str) -> list[tuple[int, str]]:
    """The runs of experiment `name` that measured commit `sha`: (run, status)."""
    if not Path(db).exists():
        return []
    with Store(db, create=False) as store:
        return [(row.id, row.status) for row in store.runs()
                if row.name == name and isinstance(row.context.get("commit"), dict)
                and row.context["commit"].get("sha") == sha]


def _sweep(db: str, file: Path, name: str, commit: dict, build: builds.Build,
           resume: int | None) -> tuple[int | None, str, float]:
    """The commit's sweep, in a process of its own that loads the commit's extension (its
    workers inherit it): a new run, or the interrupted one resumed. An interruption stops the
    history (HistoryError); an experiment the extension cannot plan is stored as failed."""
    env = {**os.environ, NATIVE_ENV: str(build.path), COMMIT_ENV: json.dumps(commit)}
    command = [sys.executable, "-m", "labctl", "sweep"]
    command += ["--resume", str(resume), "--db", db] if resume else [str(file), "--db", db]
    before = {run for run, _ in _stored(db, name, commit["sha"])}
    started = time.monotonic()
    sys.stdout.flush()  # what history said about the commit comes before what its sweep says
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, errors="replace") as process:
        said = collections.deque(maxlen=20)  # its last lines: why it could not run, if it could not
        for line in process.stderr:  # passed on as they come: its warnings, its progress
            sys.stderr.write(line)
            said.append(line)
        returncode = process.wait()
    seconds = time.monotonic() - started
    if returncode == EXIT_INTERRUPTED:
        raise HistoryError(f"commit {commit['sha'][:10]}: its sweep was interrupted; run the same "
                           "command again to finish the history (measured commits are kept)")
    runs_now = [run for run, _ in _stored(db, name, commit["sha"])]
    if resume:
        return resume, "resumed", seconds
    new = [run for run in runs_now if run not in before]
    if new:
        return new[-1], "measured", seconds
    why = ("".join(said).strip().splitlines() or [f"exit {returncode}"])[-1]
    return (_record_failed(db, file, commit, f"commit {commit['sha'][:10]}: its extension cannot run "
                           f"the experiment: {text.printable(why)[:400]}"), "not planned", seconds)


def _record_failed(db: str, file: Path, commit: dict, message: str) -> int:
    """A run of the experiment on `commit` whose every point failed with `message` (kind
    "build"): the history shows the commit as not measured, and why. The plan is this labctl's."""
    plan = experiment.load(file)
    context = {**sysinfo.run_context(str(file)), "commit": commit, "build": None}
    with Store(db) as store:
        run_id = store.create_run(plan, shlex.join(["labctl", "history", plan.source, "--db", db]),
                                  sysinfo.machine(), context, [])
        for point in store.points(run_id):
            if point.status == "pending":
                store.fail_point(point.id, "build", message)
        store.end_run(run_id, "finished")
    return run_id


# -- the changes of a history -----------------------------------------------------------------

@dataclass(frozen=True)
class Followed:
    """One point's figure over its experiment's commits, with the changes found in it."""

    experiment: str
    key: str
    metric: str
    rows: pd.DataFrame  # series' rows, one per measured commit (one measured twice: all its samples)
    samples: list[list[float]]  # per commit of the experiment's history in order; [] where not measured
    changes: list  # labctl.changes.Change, indexing `samples` (each at the first commit of its build)


def follow(frame: pd.DataFrame) -> list[Followed]:
    """Each point and figure of `series`' frame with its changes (labctl.changes.detect), found
    over its experiment's commits: one it was not measured on (a commit that does not build)
    keeps its place, empty. Consecutive commits with one build (commits that changed no C++)
    ran the same code: they cannot differ but by noise, so they are one element of the series
    detect segments, their samples pooled (which also shows the noise between runs, such as a
    schedule-dependent count's), and a change is placed on the first commit of its build."""
    from labctl import changes as found

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
    """The changes (labctl.changes) of every series of the store's histories: one row per change,
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
