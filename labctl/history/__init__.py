"""History: an experiment measured on each commit of a repository (`labctl history`), and the
series over commits that change points are found on (labctl.read.changes).

What is measured is each commit's compiled extension (the runtime and the kernels, native/);
what measures it is this labctl (the sweep, the workers, the store, the experiment file), as asv
measures each commit of a project with the benchmarks of today. A commit's extension is loaded
from the build cache (labctl.history.builds) through NATIVE_ENV, and the commit it was built from is
recorded in each run's context under "commit" (COMMIT_ENV): a history is the runs of a store
that carry one, in the commits' order.
"""

from __future__ import annotations

import collections
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from labctl.catalogue import native
from labctl.history import builds
from labctl.plan import experiment
from labctl.run import sysinfo
from labctl.store import Store
from labctl.vocabulary import text
from labctl.vocabulary.exits import EXIT_INTERRUPTED

# The compiled extension a process loads instead of its installed one (labctl.catalogue.native), and the
# commit it was built from (labctl.run.sysinfo): set by `labctl history` and `labctl bisect` for the
# sweeps they start, inherited by their workers.
NATIVE_ENV = native.NATIVE_ENV
COMMIT_ENV = sysinfo.COMMIT_ENV
COMMIT_KEYS = sysinfo.COMMIT_KEYS

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
        head = f"[{index}/{len(shas)}] {sha[:10]} {text.shorten(text.printable(commit['subject']), 60)}"
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
