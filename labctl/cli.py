"""The `labctl` command: argument parsing and printing only; the work is done by the modules it
calls (kernels, runner, stats).
"""

from __future__ import annotations

import functools
import json
import math
import shlex
import signal
import sqlite3
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from labctl import __version__, experiment, files, kernels, runner, runtimes, stats, studies, sysinfo, text
from labctl.text import printable
from labctl.sample import Sample
from labctl.store import Store, StoreError, explain, failure_kind

EXIT_USAGE = 2  # bad input: unknown kernel or parameter, bad value
EXIT_FAILED = 1  # a kernel failed: wrong answer, crash, timeout

EXIT_INTERRUPTED = 130

DEFAULT_DB = "results.db"

# Piped output is 100 columns wide (rich would take 80): tables fit it, and free text that can
# be long is wrapped to it (_wrapped); a line of a log (a path, a message) is never broken.
stdout = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 100)
stderr = Console(highlight=False, soft_wrap=True, stderr=True)


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit code 2."""


def fail(message: str, code: int) -> None:
    """One line on stderr, escaped (labctl.text.printable), and the exit code."""
    click.echo(f"labctl: {printable(message)}", err=True)
    sys.exit(code)


def _store_failures(command):
    """Reports a store that fails mid-command (damaged, read-only, disk full, locked too long) in
    one line naming it: exit 2 for a damaged file (bad input, like a foreign one), 1 otherwise.
    Every sample already written stays."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except sqlite3.DatabaseError as error:
            db = kwargs["db"]
            fail(f"{db}: {explain(error, db)}",
                 EXIT_USAGE if failure_kind(error) == "damaged" else EXIT_FAILED)

    return wrapper


class _Labctl(click.Group):
    """The command group: Ctrl-C (or SIGTERM where a command maps it) anywhere a command does
    not handle it itself ends labctl with 130 and one line, as the README promises."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, click.Abort):
            fail("interrupted", EXIT_INTERRUPTED)


@click.group(cls=_Labctl, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="labctl")
def main() -> None:
    """A performance lab for actor runtimes: verified benchmark kernels on a fast C++ actor
    runtime, each run in its own worker process."""


@main.command("kernels")
@click.option("--describe", "describe", metavar="KERNEL", help="Everything about one kernel.")
@click.option("--json", "as_json", is_flag=True, help="The catalogue as JSON.")
def kernels_command(describe: str | None, as_json: bool) -> None:
    """List the kernels with their parameters and defaults."""
    catalogue = kernels.catalogue()
    if describe is not None:
        try:
            selected = [kernels.get(describe)]
        except kernels.ParamError as error:
            fail(str(error), EXIT_USAGE)
    else:
        selected = list(catalogue.values())
    if as_json:
        click.echo(json.dumps([_kernel_json(k) for k in selected], indent=2))
        return
    for kernel in selected:
        if describe is not None:
            _print_description(kernel)
        else:
            _wrapped(f"{kernel.name}  {kernel.summary}", "", style="bold")
            stdout.print(_params_table(kernel))
    _print_runtimes(selected)


def _print_runtimes(selected: list[kernels.Kernel]) -> None:
    """The runtimes and allocators of the kernels listed, and why any cannot run here; every
    runtime labctl knows when every kernel is listed (a broken peer too, saying why)."""
    known = runtimes.runtimes()
    stdout.print("\n[bold]Runtimes[/bold] (`runtime = ...`)")
    names = dict.fromkeys(r for k in selected for r in k.runtimes)
    if len(selected) > 1:
        names.update(dict.fromkeys(known))
    for name in names:
        runtime = known[name]
        on = [k.name for k in selected if name in k.runtimes]
        state = "unavailable: " + runtime.missing if runtime.missing else "available"
        _wrapped(f"{name}  {runtime.summary}; {state}", "  ", style="red" if runtime.missing else None)
        _wrapped(f"kernels: {', '.join(on) or 'none'}"
                 + (f"; peer folder {runtime.folder}" if runtime.folder else ""), "      ")
    stdout.print("[bold]Allocators[/bold] (`allocator = ...`, on runtimes labctl and caf)")
    for name in runtimes.ALLOCATORS:
        why = runtimes.allocator_missing(name)
        _wrapped(f"{name}  " + (f"unavailable: {why}" if why else "available"), "  ",
                 style="red" if why else None)


def _safe(text: object) -> str:
    """Text from outside (a file, a store, a peer) for rich: no control character, no markup."""
    return escape(printable(text))


def _wrapped(line: str, indent: str, style: str | None = None) -> None:
    """A line of free text, escaped (labctl.text.printable, no markup), wrapped to the output's
    width under `indent`."""
    text = textwrap.fill(printable(line), width=max(stdout.width, 40), initial_indent=indent,
                         subsequent_indent=indent + "    ", break_on_hyphens=False, break_long_words=False)
    stdout.print(escape(text), style=style)


def _kernel_json(kernel: kernels.Kernel) -> dict:
    return {
        "name": kernel.name,
        "summary": kernel.summary,
        "description": kernel.description,
        "source": kernel.source,
        "studies": [{"part": part, **studies.catalogue()[key].to_dict()} for key, part in kernel.sources],
        "verifies": kernel.verifies,
        "params": [
            {
                "name": p.name,
                "type": p.type,
                "default": p.default,
                "allowed": p.allowed(),
                "applies_to": list(p.applies_to),
                "runtimes": list(p.runtimes),
                "help": p.help,
            }
            for p in kernel.params
        ],
        "runtimes": [{"name": name, "available": not runtimes.runtimes()[name].missing,
                      "missing": runtimes.runtimes()[name].missing} for name in kernel.runtimes],
    }


def _params_table(kernel: kernels.Kernel) -> Table:
    table = Table(box=None, padding=(0, 2), show_edge=False, pad_edge=False)
    for column in ("parameter", "default", "allowed", "with"):
        table.add_column(column, style="cyan" if column == "parameter" else None)
    for p in kernel.params:
        table.add_row(p.name, kernels.show(p.default), p.allowed(), p.scope())
    return table


def _print_description(kernel: kernels.Kernel) -> None:
    _wrapped(f"{kernel.name}: {kernel.summary}", "", style="bold")
    stdout.print()
    _wrapped(kernel.description, "")
    stdout.print("\n[bold]Studies:[/bold]")
    for key, part in kernel.sources:
        _wrapped(f"{part}, in {studies.catalogue()[key].citation}", "  ")
    _wrapped(f"Verifies: {kernel.verifies}", "")
    stdout.print("\n[bold]Parameters:[/bold]")
    for p in kernel.params:
        scope = f"; with {p.scope()}" if p.scope() != "all" else ""
        _wrapped(f"{p.name} = {kernels.show(p.default)}  ({p.allowed()}{scope})", "  ", style="cyan")
        _wrapped(p.help, "      ")


def parse_kernel_args(args: Sequence[str]) -> dict[str, str]:
    """`--name value` and `--name=value` pairs; dashes in names read as underscores."""
    given: dict[str, str] = {}
    i = 0
    while i < len(args):
        token = args[i]
        if not token.startswith("--") or token == "--":
            raise UsageError(f"unexpected argument '{token}' (parameters are given as --name value)")
        name, equals, value = token[2:].partition("=")
        name = name.replace("-", "_")
        if not equals:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise UsageError(f"parameter '{name}' needs a value (--{name} VALUE)")
            value = args[i + 1]
            i += 1
        if name in given:
            raise UsageError(f"parameter '{name}' given twice")
        given[name] = value
        i += 1
    return given


@main.command(
    "run",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument("kernel")
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1, 1000),
              help="Measured runs.")
@click.option("--warmup", default=0, show_default=True, type=click.IntRange(0, 1000),
              help="Runs before the measured ones, in the same worker process, not reported.")
@click.option("--timeout", default=600.0, show_default=True,
              type=click.FloatRange(min=0.1, max=experiment.MAX_TIMEOUT_S),
              help="Seconds the whole point may take before its worker is killed.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per sample on stdout.")
@click.pass_context
def run_command(ctx: click.Context, kernel: str, repeat: int, warmup: int, timeout: float,
                as_json: bool) -> None:
    """Run KERNEL in a worker process and print its samples.

    Kernel parameters follow as --name value (see `labctl kernels`), e.g.
    `labctl run skynet --dispatcher thread_pool --threads 2 --repeat 5`.
    """
    try:
        spec = kernels.get(kernel)
        given = parse_kernel_args(ctx.args)
        params = kernels.resolve(spec.name, given)
    except (UsageError, kernels.ParamError) as error:
        prefix = "" if isinstance(error, kernels.ParamError) else f"{kernel}: "
        fail(prefix + str(error), EXIT_USAGE)

    point = runner.Point(
        kernel=spec.name,
        params={name: value for name, value in params.items() if value is not None},
        repeat=repeat,
        warmup=warmup,
        timeout_s=timeout,
    )
    if not as_json:
        stdout.print(f"[bold]{spec.name}[/bold]  " + "  ".join(
            f"{name}={kernels.show(value)}" for name, value in params.items() if value is not None))
    elapsed: list[float] = []
    try:
        for sample in runner.run_point(point):
            if sample.warmup:
                continue
            elapsed.append(sample.elapsed_ns)
            if as_json:
                click.echo(json.dumps(sample.to_json()))
            else:
                stdout.print(_sample_line(sample, repeat))
    except runner.PointFailed as error:
        fail(f"{spec.name} failed: {error}", EXIT_USAGE if error.kind == "param" else EXIT_FAILED)
    except KeyboardInterrupt:
        fail("interrupted", EXIT_INTERRUPTED)
    if not as_json and len(elapsed) > 1:
        s = stats.summarize(elapsed)
        duration = text.format_duration
        stdout.print(f"  median {duration(s.median)}  (min {duration(s.minimum)}, "
                     f"max {duration(s.maximum)}, {s.count} runs)")


def _sample_line(sample: Sample, repeat: int) -> str:
    figures = [
        f"run {sample.index + 1}/{repeat}",
        f"{text.format_duration(sample.elapsed_ns):>9}",
        f"{stats.throughput(sample.messages_processed, sample.elapsed_ns) / 1e6:7.2f} M msgs/s",
    ]
    for name, value in sample.metrics.items():
        figures.append(f"{name.removesuffix('_ns')} {text.format_duration(value)}"
                       if name.endswith("_ns") else f"{name} {kernels.show(round(value, 2))}")
    return "  " + "  ".join(figures) + f"  [green]ok[/green] {_safe(sample.answer)}"


# -- experiments and sweeps ------------------------------------------------------------------

db_option = click.option("--db", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False),
                         help="The results store (an SQLite file).")


# The seed is stored, as one of SQLite's 64-bit integers.
seed_option = click.option("--seed", type=click.IntRange(-2**63, 2**63 - 1),
                           help="Seed of the random order (default: the file's, or one derived from its text).")
scale_option = click.option("--scale", type=click.Choice(experiment.SCALES), default="default",
                            show_default=True,
                            help="full: the study's sizes (each grid's `full` table); long.")


def _load_plan(path: str, seed: int | None, scale: str = "default") -> experiment.Plan:
    try:
        return experiment.load(path, seed, scale)
    except experiment.ExperimentError as error:
        for line in str(error).splitlines():
            click.echo(f"labctl: {line}", err=True)
        sys.exit(EXIT_USAGE)


def _open_store(path: str, create: bool = True) -> Store:
    try:
        return Store(path, create=create)
    except StoreError as error:
        fail(str(error), error.code)


def _print_points(points: list[tuple[str, dict]], extra: dict[str, list[str]]) -> None:
    """One table per kernel: its points, the parameters that vary among them, then `extra`
    columns (one value per point, in `points` order); its fixed parameters underneath."""
    for kernel in dict.fromkeys(kernel for kernel, _ in points):
        indices = [i for i, (k, _) in enumerate(points) if k == kernel]
        rows = [points[i][1] for i in indices]
        varying = kernels.varying(kernel, rows)
        table = Table(box=None, padding=(0, 2), show_edge=False, pad_edge=False,
                      title=f"[bold]{_safe(kernel)}[/bold]", title_justify="left")
        table.add_column("#", justify="right")
        for name in varying:
            table.add_column(name)
        for name in extra:
            table.add_column(name, justify="right")
        for i, params in zip(indices, rows):
            table.add_row(str(i + 1),
                          *[_safe(kernels.show(params[n])) if n in params else "-"
                            for n in varying],
                          *[values[i] for values in extra.values()])
        stdout.print(table)
        spec = kernels.catalogue().get(kernel)
        order = [p.name for p in spec.params] if spec else sorted(rows[0])
        fixed = {n: rows[0][n] for n in order if n in rows[0] and n not in varying}
        stdout.print("  fixed: " + _params_text(fixed) + "\n")


@main.command("experiments")
@db_option
@_store_failures
def experiments_command(db: str) -> None:
    """List the experiments labctl ships: each study it reproduces, and more. `labctl plan NAME`
    shows one; `labctl sweep NAME` runs it."""
    table = Table(box=None, padding=(0, 2), show_edge=False, pad_edge=False)
    for column in ("name", "study", "points", "estimate"):
        table.add_column(column, justify="right" if column in ("points", "estimate") else "left")
    store = _store_if_any(db)
    try:
        for name, path in experiment.shipped_experiments().items():
            try:
                plan = experiment.load(path, seed=0)
            except experiment.ExperimentError as error:
                table.add_row(_safe(name), f"[red]cannot be read:[/red] {_safe(str(error))}", "", "")
                continue
            cited = "; ".join(f"{s.title} ({s.author}, {s.year})" for s in plan.studies) or "-"
            guess = runner.estimate(plan.points, store)
            table.add_row(_safe(name), _safe(cited), str(len(plan.points)),
                          ("~" if guess.is_guess else "") + text.format_seconds(guess.seconds))
    finally:
        if store:
            store.close()
    stdout.print(table)
    stdout.print("estimate: from the runs in the store where it has them; ~ marks a guess from "
                 "the kernels' sizes")


@main.command("plan")
@click.argument("file")
@db_option
@seed_option
@scale_option
@_store_failures
def plan_command(file: str, db: str, seed: int | None, scale: str) -> None:
    """Print the points an experiment FILE (or NAME) expands to, and an estimate of the time; run
    nothing."""
    plan = _load_plan(file, seed, scale)
    _print_plan(plan, db)


def _print_plan(plan: experiment.Plan, db: str) -> None:
    samples = sum(p.repeats for p in plan.points)
    order = f"random (seed {plan.seed})" if plan.order == "random" else "as written"
    stdout.print(f"[bold]{_safe(plan.name)}[/bold]: {_safe(plan.description)}  "
                 f"({_safe(plan.source)}{', scale full' if plan.scale == 'full' else ''})")
    stdout.print(f"{len(plan.points)} points, {samples} measured samples; order {order}")
    _print_points([(p.kernel, p.params) for p in plan.points],
                  {"warmup+repeats": [f"{p.warmup}+{p.repeats}" for p in plan.points]})
    for note in plan.notes:
        stdout.print(f"note: {_safe(note)}")
    stdout.print(_safe(_estimate(plan, db).text(db)))


def _estimate(plan: experiment.Plan, db: str) -> runner.Estimate:
    """The plan's time from the store's past runs, if `db` is a store."""
    store = _store_if_any(db)
    try:
        return runner.estimate(plan.points, store)
    finally:
        if store:
            store.close()


def _store_if_any(db: str) -> Store | None:
    """The store at `db` for reading past runs, or None if there is none (a warning if the file
    is not one)."""
    if not Path(db).exists():
        return None
    try:
        return Store(db, create=False)
    except StoreError as error:
        stderr.print(f"[yellow]warning:[/yellow] {_safe(str(error))}; the estimate leaves it out")
        return None


class _SweepProgress:
    """A rich progress bar of samples, with points done and failed, and the time left."""

    def __init__(self) -> None:
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("samples  {task.fields[points]}"), TimeRemainingColumn(),
                            console=stderr)
        self.task = None
        self.points_total = self.points_done = self.failed = 0
        self.produced: dict[object, int] = {}  # samples each point has delivered so far

    def _points(self) -> str:
        failed = f", [red]{self.failed} failed[/red]" if self.failed else ""
        return f"points {self.points_done}/{self.points_total}{failed}"

    def started(self, points: int, samples: int) -> None:
        self.points_total = points
        self.bar.start()
        self.task = self.bar.add_task("sweep", total=samples, points=self._points())

    def sample(self, point: runner.Point) -> None:
        self.produced[point.tag] = self.produced.get(point.tag, 0) + 1
        self.bar.advance(self.task)

    def point_done(self, point: runner.Point) -> None:
        self.points_done += 1
        self.bar.update(self.task, points=self._points())

    def point_failed(self, point: runner.Point, kind: str, message: str) -> None:
        self.points_done += 1
        self.failed += 1
        # The samples a failed point will never produce leave the total, so the bar can finish.
        missing = point.repeat - self.produced.get(point.tag, 0)
        self.bar.update(self.task, total=self.bar.tasks[0].total - missing, points=self._points())
        self.bar.console.print(f"[red]failed[/red] {_safe(point.kernel)} {_params_text(point.params)}: "
                               f"{_safe(message)}")

    def stop(self) -> None:
        self.bar.stop()


def _params_text(params: dict) -> str:
    """For rich: markup in a value is escaped."""
    return " ".join(f"{name}={_safe(kernels.show(value))}" for name, value in params.items())


@main.command("sweep")
@click.argument("file", required=False)
@db_option
@click.option("--resume", "resume", metavar="RUN", help="Finish an interrupted run (id or 'latest').")
@click.option("--retry-failed", is_flag=True, help="With --resume: run failed points again too.")
@click.option("--dry-run", is_flag=True, help="Print the plan and run nothing.")
@seed_option
@scale_option
@_store_failures
def sweep_command(file: str | None, db: str, resume: str | None, retry_failed: bool, dry_run: bool,
                  seed: int | None, scale: str) -> None:
    """Run an experiment FILE (a path, or the name of an experiment labctl ships: see `labctl
    experiments`): every point in its own worker process, every sample stored the moment it
    exists. `--resume RUN` finishes an interrupted run without redoing its samples."""
    if file is None and resume is None:
        fail("sweep: give an experiment FILE, or --resume RUN (FILE may be the name of an "
             "experiment labctl ships: `labctl experiments`)", EXIT_USAGE)
    if retry_failed and resume is None:
        fail("sweep: --retry-failed goes with --resume RUN", EXIT_USAGE)
    if scale != "default" and resume is not None:
        fail("sweep: --scale goes with an experiment FILE; a resumed run keeps its own points",
             EXIT_USAGE)
    if resume is not None and (dry_run or seed is not None):
        fail(f"sweep: {'--dry-run' if dry_run else '--seed'} goes with an experiment FILE; a "
             "resumed run keeps its own points and order", EXIT_USAGE)
    plan = _load_plan(file, seed, scale) if file and resume is None else None
    if dry_run:
        if plan is None:
            fail("sweep: --dry-run needs an experiment FILE", EXIT_USAGE)
        _print_plan(plan, db)
        stdout.print("dry run: nothing was run")
        return

    # A resumed run is in a store that exists: resuming never creates one.
    store = _open_store(db, create=plan is not None)
    if plan is None:  # every check before anything is printed or written
        try:
            run_id = store.resolve_run(resume)
        except StoreError as error:
            fail(str(error), error.code)
        row = store.run(run_id)
        if file is not None and not _same_experiment(file, row):
            fail(f"sweep: run {run_id} ran {row.source}, not {file}; give only --resume {run_id} "
                 "(it keeps its own experiment), or the run's own file", EXIT_USAGE)
        if row.status == "running":
            fail(f"run {run_id} is still running ({row.command}); wait for it or stop it", EXIT_USAGE)
        left = [p for p in store.points(run_id) if p.status == "pending"
                or (retry_failed and p.status == "failed")]
        if not left:  # a finished run keeps its record as it is
            stdout.print(f"run {run_id} ({_safe(row.name)}) has no point left to run"
                         + ("" if retry_failed or not row.points_failed else
                            f"; {row.points_failed} failed: --retry-failed runs them again"))
            return
        try:
            store.claim_run(run_id)  # refused if another process resumed it meanwhile
        except StoreError as error:
            fail(str(error), error.code)
    context = sysinfo.run_context(_experiment_path(plan.source if plan else row.source))
    warnings = sysinfo.warnings(context)
    for warning in warnings:
        stderr.print(f"[yellow]warning:[/yellow] {_safe(warning)}")
    if plan is not None:
        command = shlex.join(["labctl", "sweep", plan.source, "--db", db]
                             + (["--seed", str(plan.seed)] if plan.seed is not None else [])
                             + (["--scale", plan.scale] if plan.scale != "default" else []))
        run_id = store.create_run(plan, command, sysinfo.machine(), context, warnings)
        stdout.print(f"run {run_id}: {_safe(plan.name)}, {len(plan.points)} points -> {_safe(db)}")
        for reason in sorted({p.skip for p in plan.points if p.skip}):
            count = sum(p.skip == reason for p in plan.points)
            stderr.print(f"[yellow]skipped:[/yellow] {count} points: {_safe(reason)}")
    else:
        if row.machine != sysinfo.machine():
            stderr.print(f"[yellow]warning:[/yellow] run {run_id} started on another machine "
                         f"({_safe(str(row.machine.get('hostname')))}, "
                         f"{_safe(str(row.machine.get('cpu_model')))})")
        stdout.print(f"run {run_id}: resuming {_safe(row.name)} "
                     f"({row.samples} samples already stored)")

    progress = _SweepProgress()
    started = time.monotonic()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        result = runner.sweep(store, run_id, runner.LocalBackend(), progress, retry_failed)
    except KeyboardInterrupt:
        progress.stop()
        store.end_run(run_id, "interrupted")
        row = store.run(run_id)
        fail(f"interrupted: run {run_id} has {row.samples} samples stored; finish it with "
             f"`labctl sweep --resume {run_id} --db {shlex.quote(db)}`", EXIT_INTERRUPTED)
    except sqlite3.DatabaseError as error:
        progress.stop()
        _store_failed_mid_sweep(store, run_id, db, error)
    finally:
        signal.signal(signal.SIGTERM, previous)
    progress.stop()
    row = store.run(run_id)
    store.close()
    stdout.print(f"run {run_id} finished in {text.format_seconds(time.monotonic() - started)}: "
                 f"{row.points_done} points done, {row.points_failed} failed, "
                 + (f"{row.points_skipped} skipped (unavailable here), " if row.points_skipped else "")
                 + f"{row.samples} samples. "
                 f"See `labctl show {run_id} --db {_safe(shlex.quote(db))}`.")
    if result.points_failed:
        fail(f"{result.points_failed} of {row.points} points failed (above); the rest is stored",
             EXIT_FAILED)


def _experiment_path(source: str) -> str | None:
    """The file a run's experiment came from (a path, or a shipped experiment's name)."""
    try:
        return str(experiment.locate(source))
    except experiment.ExperimentError:
        return None


def _same_experiment(file: str, row) -> bool:
    """Whether FILE is the run's own experiment: the same file, or a file with its text."""
    try:
        path = experiment.locate(file)
        if path.resolve() == Path(_experiment_path(row.source) or row.source).resolve():
            return True
        return path.read_text(encoding="utf-8") == row.experiment
    except (experiment.ExperimentError, OSError, UnicodeDecodeError):
        return False


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _store_failed_mid_sweep(store: Store, run_id: int, db: str,
                            error: sqlite3.DatabaseError) -> None:
    """Stops a sweep whose store failed under it, in one line. Every sample committed before
    stays. The run is marked interrupted if the store still takes that write; if it does not (a
    full disk), `labctl runs` shows it interrupted all the same, since its process is gone."""
    try:
        store.end_run(run_id, "interrupted")
    except sqlite3.Error:
        pass
    try:
        stored = f" with {store.run(run_id).samples} samples stored"
    except sqlite3.Error:
        stored = ""
    message = f"{db}: {explain(error, db)}; run {run_id} stopped{stored}"
    if failure_kind(error) == "damaged":
        fail(message, EXIT_USAGE)
    fail(f"{message}; once the store can be written, finish it with "
         f"`labctl sweep --resume {run_id} --db {shlex.quote(db)}`", EXIT_FAILED)


@main.command("runs")
@db_option
@_store_failures
def runs_command(db: str) -> None:
    """List the runs in a store."""
    store = _open_store(db, create=False)
    table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    for column in ("run", "name", "status", "started", "points", "failed", "samples", "machine", "file"):
        # Nothing is cut: the file (a path of any length) folds onto more lines where it must.
        table.add_column(column, no_wrap=column != "file", overflow="fold")
    for r in store.runs():
        table.add_row(str(r.id), _safe(r.name), r.status, r.started_at[:16].replace("T", " "),
                      f"{r.points_done}/{r.points}", str(r.points_failed), str(r.samples),
                      _safe(f"{r.machine.get('cpu_model')} x{r.machine.get('logical_cpus')}"),
                      _safe(r.source))
    stdout.print(table)


@main.command("show")
@click.argument("run")
@db_option
@_store_failures
def show_command(run: str, db: str) -> None:
    """Medians per point of a RUN (an id or 'latest'), with their spread and failures."""
    store = _open_store(db, create=False)
    try:
        run_id = store.resolve_run(run)
    except StoreError as error:
        fail(str(error), error.code)
    row = store.run(run_id)
    points = store.points(run_id)
    samples = store.samples(run_id)
    store.close()
    machine = row.machine
    stdout.print(f"[bold]run {row.id}[/bold]: {_safe(row.name)} ({_safe(row.source)}), "
                 f"{row.status}, started {row.started_at[:19].replace('T', ' ')} UTC")
    stdout.print(_safe(
        f"machine: {machine.get('cpu_model')}, {machine.get('logical_cpus')} CPUs "
        f"({machine.get('physical_cores')} cores), {machine.get('kernel')}; "
        f"load {row.context.get('load_average')}; labctl {row.context.get('labctl')} "
        f"{row.context.get('git_describe') or ''}; experiment "
        f"{row.context.get('experiment_git_describe') or 'not in a git checkout'}"))
    for warning in row.warnings:
        stdout.print(f"[yellow]warning at start:[/yellow] {_safe(warning)}")
    by_point: dict[int, list[dict]] = {}
    for sample in samples:
        by_point.setdefault(sample["point"], []).append(sample)
    measured = [p for p in points if by_point.get(p.id)]
    columns = {name: [] for name in ("n", "median", "95% CI", "cv", "msgs/s", "")}
    for p in measured:
        elapsed = stats.summarize([s["elapsed_ns"] for s in by_point[p.id]])
        rate = stats.summarize([stats.throughput(s["messages_processed"], s["elapsed_ns"]) for s in by_point[p.id]])
        columns["n"].append(str(elapsed.count))
        duration = text.format_duration
        columns["median"].append(duration(elapsed.median))
        columns["95% CI"].append(f"{duration(elapsed.ci_low)}..{duration(elapsed.ci_high)}"
                                 if elapsed.ci_low is not None else "(n<3)")
        columns["cv"].append(f"{elapsed.cv * 100:.1f}%")
        columns["msgs/s"].append(f"{rate.median / 1e6:.2f} M")
        columns[""].append("[yellow]noisy[/yellow]" if elapsed.noisy else "")
    _print_points([(p.kernel, p.params) for p in measured], columns)
    failed = [p for p in points if p.status == "failed"]
    pending = [p for p in points if p.status == "pending"]
    for p in failed:
        stdout.print(f"[red]failed[/red] ({_safe(p.failure_kind)}) {_safe(p.kernel)} {_params_text(p.params)}: "
                     f"{_safe(p.failure or '')}")
    for p in (p for p in points if p.status == "skipped"):
        stdout.print(f"[yellow]skipped[/yellow] {_safe(p.kernel)} {_params_text(p.params)}: {_safe(p.failure or '')}")
    if pending:
        stdout.print(f"{len(pending)} points not run yet: "
                     f"`labctl sweep --resume {run_id} --db {_safe(shlex.quote(db))}`")


@main.command("report")
@click.argument("run")
@db_option
@click.option("--out", type=click.Path(file_okay=False),
              help="Folder to write (default: reports/<experiment name>); a previous report of the "
                   "same experiment there is replaced, anything else refused.")
@_store_failures
def report_command(run: str, db: str, out: str | None) -> None:
    """Write the report of a RUN (an id or 'latest'): report.md with its figures, the medians,
    the failures, the machine, and the published figures beside ours."""
    from labctl import report

    store = _open_store(db, create=False)
    try:
        run_id = store.resolve_run(run)
        name = store.run(run_id).name
    except StoreError as error:
        fail(str(error), error.code)
    finally:
        store.close()
    out = out or str(Path("reports") / report.slug(name))
    command = shlex.join(["labctl", "report", str(run_id), "--db", db, "--out", out])
    try:
        written = report.write(db, run_id, out, command)
    except files.OutputError as error:
        fail(str(error), error.code)
    stdout.print(f"run {run_id}: {_safe(written.folder / 'report.md')} "
                 f"with {len(written.figures)} figures")


@main.command("export")
@click.argument("run")
@db_option
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json"]), default="csv",
              show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="File to write (default: stdout; required for parquet).")
@click.option("--force", is_flag=True, help="Replace --output if it exists.")
@_store_failures
def export_command(run: str, db: str, fmt: str, output: str | None, force: bool) -> None:
    """Every sample of a RUN as CSV, Parquet or JSON: one row per sample."""
    from labctl import results

    _open_store(db, create=False).close()
    if output is None and fmt == "parquet":
        fail("export: parquet is binary: give --output FILE", EXIT_USAGE)
    if output is not None:  # before the work: a refused target costs nothing
        _check_output("--output", output, db, force=force)
    try:
        frame = results.load(db, run)
    except StoreError as error:
        fail(str(error), error.code)
    if fmt == "csv":  # a list in a CSV cell: as JSON
        frame["thread_cpu_ns"] = frame["thread_cpu_ns"].map(json.dumps)
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            fail("export: parquet needs pyarrow: pip install 'labctl[parquet]'", EXIT_USAGE)
        _write_output("--output", output, lambda path: frame.to_parquet(path, index=False), db, force=force)
        return
    text = frame.to_csv(index=False) if fmt == "csv" else frame.to_json(orient="records", indent=1)
    if output is None:
        click.echo(text, nl=False)
    else:
        _write_output("--output", output, lambda path: path.write_text(text, encoding="utf-8"),
                      db, force=force)


def _check_output(option: str, output: str, *stores: str, force: bool = False) -> None:
    try:
        files.check_target(option, Path(output), [Path(s) for s in stores], force)
    except files.OutputError as error:
        fail(str(error), error.code)


def _write_output(option: str, output: str, write, *stores: str, force: bool = False) -> None:
    try:
        files.write_file(option, output, write, [Path(s) for s in stores], force)
    except files.OutputError as error:
        fail(str(error), error.code)


def _percent(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """A percentage >= 0, refused in one line otherwise."""
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not number >= 0 or math.isinf(number):
        fail(f"{ctx.info_name}: {param.opts[0]} takes a percentage >= 0, got '{value}'", EXIT_USAGE)
    return number


@main.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@db_option
@click.option("--db-b", type=click.Path(dir_okay=False),
              help="The store of RUN_B, when it is not --db.")
@click.option("--metric", default="elapsed_ns", show_default=True,
              help="A sample's elapsed_ns, msgs_per_s or cpu_ns, or a kernel metric "
                   "(round_trip_p50_ns, ...): *_ns lower is better, others higher.")
@click.option("--ignore", multiple=True, metavar="PARAM",
              help="Leave a parameter out of the matching of points, e.g. to compare spin_us=0 "
                   "with spin_us=20 (repeatable).")
@click.option("--min-change", default="0", show_default=True, metavar="PCT", callback=_percent,
              help="A significant change smaller than PCT percent is reported as no change.")
@click.option("--fail-on-regression", metavar="PCT", callback=_percent,
              help="Exit 1 if a point of B is significantly slower by more than PCT percent.")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="Also write the markdown to FILE.")
@click.option("--force", is_flag=True, help="Replace --output if it exists.")
@click.option("--json", "as_json", is_flag=True, help="The comparison as JSON on stdout.")
@_store_failures
def compare_command(run_a: str, run_b: str, db: str, db_b: str | None, metric: str,
                    ignore: tuple[str, ...], min_change: float, fail_on_regression: float | None,
                    output: str | None, force: bool, as_json: bool) -> None:
    """Compare RUN_B with RUN_A (ids or 'latest') point by point: the ratio of medians with its
    interval, and a verdict from a rank test (none below 3 samples a side). A markdown table."""
    from labctl import compare

    if output is not None:
        _check_output("--output", output, db, db_b or db, force=force)
    sides = []
    for name, run, store in (("RUN_A", run_a, db), ("RUN_B", run_b, db_b or db)):
        _open_store(store, create=False).close()
        try:
            sides.append(compare.load(store, run))
        except StoreError as error:
            fail(f"compare: {name}: {error}", error.code)
    try:
        result = compare.compare(*sides, metric=metric, ignore=ignore, min_change=min_change)
    except compare.CompareError as error:
        fail(f"compare: {error}", EXIT_USAGE)
    text = compare.markdown(result)
    if output is not None:
        _write_output("--output", output, lambda path: path.write_text(text, encoding="utf-8"),
                      db, db_b or db, force=force)
    click.echo(json.dumps(compare.to_json(result), indent=1) if as_json else text, nl=as_json)
    if fail_on_regression is not None:
        regressions = result.regressions(fail_on_regression)
        for row in regressions:
            click.echo(f"labctl: regression past {fail_on_regression:g}%: "
                       f"{compare.label(row.kernel, row.params_b)}: {row.difference.text}, "
                       f"{row.difference.change:+.1f}% {metric}", err=True)
        if regressions:
            sys.exit(EXIT_FAILED)
