"""A sweep as the `labctl sweep` (and `labctl gate`) command runs it: the run opened or resumed,
its progress (a bar on a terminal, a line per point finished in a pipe, nothing with --quiet), and
the one line that ends it: finished, interrupted, or stopped by a store or a cluster that failed
under it, each saying how to finish the run."""

from __future__ import annotations

import shlex
import sqlite3
import statistics
import time
from dataclasses import dataclass

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from labctl.cli.console import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    fail,
    open_store,
    params_text,
    safe,
    stderr,
    stdout,
)
from labctl.plan import experiment
from labctl.run import runner
from labctl.store import Store, StoreError, explain, failure_kind
from labctl.vocabulary import text
from labctl.vocabulary.point import Point
from labctl.vocabulary.sample import Sample


@dataclass(frozen=True)
class Request:
    """What to sweep: a new run of `plan`, or the run `resume` finished (`file`, if given, must be
    its own experiment; `retry_failed` runs its failed points again), into the store `db`.
    `where`: the --cluster its points run on, whose hosts' warnings are `host_warnings`; `quiet`:
    print only errors (a failed point, a failed sweep) and the last line."""

    db: str
    plan: experiment.Plan | None = None
    resume: str | None = None
    file: str | None = None
    retry_failed: bool = False
    where: str | None = None
    host_warnings: tuple[str, ...] = ()
    quiet: bool = False  # only errors and the last line


@dataclass(frozen=True)
class Swept:
    """A sweep's end: its run (None: a resumed run had nothing left to run), how many points
    it has, and how many of them failed (the caller judges them)."""

    run_id: int | None
    points: int = 0
    points_failed: int = 0


def sweep(request: Request, backend: runner.Backend) -> Swept:
    """Starts (or resumes) a run and sweeps it on `backend`, printing as it goes. An
    interruption, or a store or cluster failing under it, ends the command (console.Failed) with
    the line that says how to finish the run."""
    db = request.db
    store = open_store(db, create=request.plan is not None)  # resuming never creates a store
    try:
        opened = runner.start(store, request.plan, db, request.where, list(request.host_warnings)) \
            if request.plan is not None else \
            runner.resume(store, request.resume, request.file, request.retry_failed, request.where,
                          list(request.host_warnings))
    except (runner.Refused, StoreError) as error:
        fail(str(error), getattr(error, "code", EXIT_USAGE))
    if opened is None:
        row = store.run(store.resolve_run(request.resume))
        stdout.print(f"run {row.id} ({safe(row.name)}) has no point left to run"
                     + ("" if request.retry_failed or not row.points_failed else
                        f"; {row.points_failed} failed: --retry-failed runs them again"))
        return Swept(None)
    if not request.quiet:
        _print_opened(opened, db, len(request.plan.points) if request.plan else 0)
    started = time.monotonic()
    progress = _Progress(request.quiet)
    try:
        result = runner.execute(store, opened.run_id, backend, progress, request.retry_failed)
    except runner.Interrupted as interrupted:
        progress.stop()
        fail(f"{interrupted}; finish it with {_resume(opened.run_id, db)}", EXIT_INTERRUPTED)
    except runner.BackendLost as lost:
        progress.stop()
        fail(f"{lost}; run {opened.run_id} interrupted with {store.run(opened.run_id).samples} samples "
             f"stored: finish it with {_resume(opened.run_id, db)} (here, or with --cluster)", EXIT_FAILED)
    except sqlite3.DatabaseError as error:
        progress.stop()
        _store_failed(store, opened.run_id, db, error)
    progress.stop()
    row = store.run(opened.run_id)
    store.close()
    stdout.print(f"run {row.id} finished in {text.format_elapsed(time.monotonic() - started)}: "
                 f"{row.points_done} points done, {row.points_failed} failed, "
                 + (f"{row.points_skipped} skipped (unavailable here), " if row.points_skipped else "")
                 + f"{row.samples} samples. See `labctl show {row.id} --db {safe(shlex.quote(db))}`.")
    return Swept(row.id, row.points, result.points_failed)


def _store_failed(store: Store, run_id: int, db: str, error: sqlite3.DatabaseError) -> None:
    """Stops a sweep whose store failed under it (runner.execute marked the run interrupted where
    it could), in one line. Every sample committed before stays."""
    try:
        stored = f" with {store.run(run_id).samples} samples stored"
    except sqlite3.Error:
        stored = ""
    message = f"{db}: {explain(error, db)}; run {run_id} stopped{stored}"
    if failure_kind(error) == "damaged":
        fail(message, EXIT_USAGE)
    fail(f"{message}; once the store can be written, finish it with {_resume(run_id, db)}", EXIT_FAILED)


def _resume(run_id: int, db: str) -> str:
    """The command that finishes an interrupted run."""
    return f"`labctl sweep --resume {run_id} --db {shlex.quote(db)}`"


def _print_opened(opened: runner.Opened, db: str, points: int) -> None:
    """A sweep's start: the machine's warnings, the run, and what will be skipped or was stored."""
    for warning in opened.warnings:
        stderr.print(f"[yellow]warning:[/yellow] {safe(warning)}")
    if not opened.resumed:
        stdout.print(f"run {opened.run_id}: {safe(opened.name)}, {points} points -> {safe(db)}")
        for reason, count in opened.skipped.items():
            stderr.print(f"[yellow]skipped:[/yellow] {count} points: {safe(reason)}")
        return
    if opened.other_machine is not None:
        stderr.print(f"[yellow]warning:[/yellow] run {opened.run_id} started on another machine "
                     f"({safe(opened.other_machine.get('hostname'))}, "
                     f"{safe(opened.other_machine.get('cpu_model'))})")
    stdout.print(f"run {opened.run_id}: resuming {safe(opened.name)} ({opened.stored} samples already stored)")


class _Progress:
    """A sweep's progress (a runner.Progress): on a terminal, a bar of samples with the points done
    and failed and the time left; where stderr is not a terminal (a pipe, a log), a line per point
    as it finishes; with `quiet`, neither. A failed point is a line in every case."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.live = stderr.is_terminal and not quiet
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("samples  {task.fields[points]}"), TimeRemainingColumn(),
                            console=stderr, disable=not self.live)
        self.task = None
        self.points_total = self.points_done = self.failed = 0
        self.produced: dict[str, list[int]] = {}  # each point's samples so far (by key): their times

    def _points(self) -> str:
        failed = f", [red]{self.failed} failed[/red]" if self.failed else ""
        return f"points {self.points_done}/{self.points_total}{failed}"

    def started(self, points: int, samples: int) -> None:
        self.points_total = points
        self.bar.start()
        self.task = self.bar.add_task("sweep", total=samples, points=self._points())

    def sample(self, point: Point, sample: Sample) -> None:
        self.produced.setdefault(point.key, []).append(sample.elapsed_ns)
        self.bar.advance(self.task)

    def point_done(self, point: Point) -> None:
        self.points_done += 1
        self.bar.update(self.task, points=self._points())
        if not self.live and not self.quiet:
            times = self.produced.get(point.key, [])
            median = f"median {text.format_duration(statistics.median(times))} of {len(times)}" if times else "no"
            stderr.print(f"point {self.points_done}/{self.points_total} done: {safe(point.kernel)}, "
                         f"{median} samples: {params_text(point.params)}")

    def point_failed(self, point: Point, kind: str, message: str) -> None:
        self.points_done += 1
        self.failed += 1
        # The samples a failed point will never produce leave the total, so the bar can finish.
        missing = point.repeats - len(self.produced.get(point.key, []))
        self.bar.update(self.task, total=self.bar.tasks[0].total - missing, points=self._points())
        where = "" if self.live else f"point {self.points_done}/{self.points_total} "
        self.bar.console.print(f"{where}[red]failed[/red] {safe(point.kernel)} {params_text(point.params)}: "
                               f"{safe(message)}")

    def note(self, message: str) -> None:
        if not self.quiet:
            self.bar.console.print(f"[yellow]note:[/yellow] {safe(message)}")

    def stop(self) -> None:
        self.bar.stop()
