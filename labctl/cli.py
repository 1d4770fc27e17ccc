"""The `labctl` command: its options and what each command prints. The work is the modules'
(kernels, experiment, runner, store, results, report, compare); printing is labctl.console's.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import shlex
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click

from labctl import __version__, cluster, experiment, files, kernels, runner, text
from labctl.console import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    SweepProgress,
    fail,
    kernel_json,
    params_text,
    print_experiments,
    print_kernels,
    print_opened,
    print_plan,
    print_runs,
    print_show,
    runs_summary,
    safe,
    sample_line,
    stderr,
    stdout,
)
from labctl.store import Store, StoreError, explain, failure_kind

DEFAULT_DB = "results.db"


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
            fail(f"{db}: {explain(error, db)}", EXIT_USAGE if failure_kind(error) == "damaged" else EXIT_FAILED)

    return wrapper


class _Labctl(click.Group):
    """The command group: Ctrl-C anywhere a command does not handle it itself ends labctl with
    130 and one line, as the README promises."""

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


# Options every command spells the same way. An older spelling still works, hidden.
db_option = click.option("--db", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False),
                         help="The results store (an SQLite file).")
seed_option = click.option("--seed", type=click.IntRange(-2**63, 2**63 - 1),  # SQLite's integers
                           help="Seed of the random order (default: the file's, or one derived from its text).")
scale_option = click.option("--scale", type=click.Choice(experiment.SCALES), default="default",
                            show_default=True, help="full: the study's sizes (each grid's `full` table); long.")
force_option = click.option("--force", is_flag=True, help="Replace --output if it exists.")


def output_option(help_text: str, folder: bool = False):
    return click.option("--output", "-o", "output", type=click.Path(file_okay=not folder, dir_okay=folder),
                        help=help_text)


def old_spelling(name: str, dest: str, **kwargs):
    """An option's former name, still taken and not shown."""
    return click.option(name, dest, hidden=True, **kwargs)


@main.command("kernels")
@click.option("--describe", "describe", metavar="KERNEL", help="Everything about one kernel.")
@click.option("--json", "as_json", is_flag=True, help="The catalogue as JSON.")
def kernels_command(describe: str | None, as_json: bool) -> None:
    """List the kernels with their parameters and defaults, and the runtimes they run on."""
    try:
        selected = [kernels.get(describe)] if describe is not None else list(kernels.catalogue().values())
    except kernels.ParamError as error:
        fail(str(error), EXIT_USAGE)
    if as_json:
        click.echo(json.dumps([kernel_json(k) for k in selected], indent=2))
    else:
        print_kernels(selected, describe is not None)


@main.command("run", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("kernel")
@click.option("--repeats", default=1, show_default=True, type=click.IntRange(1, 1000),
              help="Measured runs (an experiment's `repeats`).")
@old_spelling("--repeat", "repeat", type=click.IntRange(1, 1000))
@click.option("--warmup", default=0, show_default=True, type=click.IntRange(0, 1000),
              help="Runs before the measured ones, in the same worker process, not reported.")
@click.option("--timeout", default=600.0, show_default=True,
              type=click.FloatRange(min=0.1, max=experiment.MAX_TIMEOUT_S),
              help="Seconds the whole point may take before its worker is killed.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per sample on stdout.")
@click.pass_context
def run_command(ctx: click.Context, kernel: str, repeats: int, repeat: int | None, warmup: int,
                timeout: float, as_json: bool) -> None:
    """Run KERNEL in a worker process and print its samples.

    Kernel parameters follow as --name value (see `labctl kernels`), e.g.
    `labctl run skynet --dispatcher thread_pool --threads 2 --repeats 5`.
    """
    repeats = repeat or repeats
    try:
        spec = kernels.get(kernel)
        params = kernels.resolve(spec.name, kernels.parse_args(spec.name, ctx.args))
    except kernels.ParamError as error:
        fail(str(error), EXIT_USAGE)
    params = {name: value for name, value in params.items() if value is not None}
    point = runner.Point(kernel=spec.name, params=params, repeat=repeats, warmup=warmup, timeout_s=timeout)
    if not as_json:
        stdout.print(f"[bold]{spec.name}[/bold]  " + params_text(params).replace(" ", "  "))
    elapsed: list[float] = []
    try:
        for sample in runner.run_point(point):
            if sample.warmup:
                continue
            elapsed.append(sample.elapsed_ns)
            if as_json:
                click.echo(json.dumps(sample.to_json()))
            else:
                stdout.print(sample_line(sample, repeats))
    except runner.PointFailed as error:
        fail(f"{spec.name} failed: {error}", EXIT_USAGE if error.kind == "param" else EXIT_FAILED)
    if not as_json and len(elapsed) > 1:
        stdout.print(runs_summary(elapsed))


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
    except StoreError as error:  # a file that is no store (2), or one the system refuses (1)
        fail(str(error), error.code)


@contextlib.contextmanager
def _past_runs(db: str) -> Iterator[Store | None]:
    """The store at `db` for estimates from its past runs, or None if there is none (a warning
    if the file is not one)."""
    store = None
    if Path(db).exists():
        try:
            store = Store(db, create=False)
        except StoreError as error:
            stderr.print(f"[yellow]warning:[/yellow] {safe(error)}; the estimate leaves it out")
    try:
        yield store
    finally:
        if store:
            store.close()


@main.command("experiments")
@db_option
@_store_failures
def experiments_command(db: str) -> None:
    """List the experiments labctl ships: each study it reproduces, and more. `labctl plan NAME`
    shows one; `labctl sweep NAME` runs it."""
    with _past_runs(db) as store:
        print_experiments(experiment.shipped_experiments(), store)


@main.command("plan")
@click.argument("file")
@db_option
@seed_option
@scale_option
@_store_failures
def plan_command(file: str, db: str, seed: int | None, scale: str) -> None:
    """Print the points an experiment FILE (or NAME) expands to, and an estimate of the time; run
    nothing."""
    _plan(_load_plan(file, seed, scale), db)


def _plan(plan: experiment.Plan, db: str) -> None:
    with _past_runs(db) as store:
        print_plan(plan, db, store)


def _cluster(ctx: click.Context, param: click.Parameter, value: str | None) -> cluster.Spec | None:
    """--cluster as a cluster.Spec; a bad value, or no Dask, refused in one line."""
    if value is None:
        return None
    try:
        spec = cluster.parse(value)
        cluster.require()
    except cluster.ClusterError as error:
        fail(str(error), error.code)
    return spec


@main.command("sweep")
@click.argument("file", required=False)
@db_option
@click.option("--resume", "resume", metavar="RUN", help="Finish an interrupted run (id or 'latest').")
@click.option("--retry-failed", is_flag=True, help="With --resume: run failed points again too.")
@click.option("--cluster", "cluster_spec", metavar="ADDRESS|local:N", callback=_cluster,
              help="Run the points on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:PORT), "
                   "one at a time per host, or on local:N, N single-thread Dask workers on this "
                   f"machine (for testing). Needs {cluster.INSTALL}.")
@old_spelling("--dry-run", "dry_run", is_flag=True)  # it is `labctl plan`
@seed_option
@scale_option
@_store_failures
def sweep_command(file: str | None, db: str, resume: str | None, retry_failed: bool,
                  cluster_spec: cluster.Spec | None, dry_run: bool, seed: int | None, scale: str) -> None:
    """Run an experiment FILE (a path, or the name of an experiment labctl ships: see `labctl
    experiments`): every point in its own worker process, every sample stored the moment it
    exists. `--resume RUN` finishes an interrupted run without redoing its samples. `--cluster`
    runs the points on a Dask cluster; the samples come back here."""
    if file is None and resume is None:
        fail("sweep: give an experiment FILE, or --resume RUN (FILE may be the name of an "
             "experiment labctl ships: `labctl experiments`)", EXIT_USAGE)
    if retry_failed and resume is None:
        fail("sweep: --retry-failed goes with --resume RUN", EXIT_USAGE)
    if resume is not None and (scale != "default" or dry_run or seed is not None):
        option = "--scale" if scale != "default" else "--dry-run" if dry_run else "--seed"
        fail(f"sweep: {option} goes with an experiment FILE; a resumed run keeps its own points and "
             "order", EXIT_USAGE)
    plan = _load_plan(file, seed, scale) if resume is None else None
    if dry_run:
        _plan(plan, db)
        stdout.print("dry run: nothing was run (`labctl plan` shows the same)")
        return
    if cluster_spec is None:
        _sweep(plan, db, resume, file, retry_failed, runner.LocalBackend())
        return
    # Connected before the store is touched: a cluster that cannot be had writes nothing.
    stderr.print(f"[dim]{safe(cluster.connecting(cluster_spec))}[/dim]")
    try:
        backend = cluster.connect(cluster_spec)
    except cluster.ClusterError as error:
        fail(str(error), error.code)
    with backend:
        stdout.print(safe(backend.summary))
        _sweep(plan, db, resume, file, retry_failed, backend, cluster_spec.text, backend.warnings)


def _sweep(plan: experiment.Plan | None, db: str, resume: str | None, file: str | None,
           retry_failed: bool, backend: runner.Backend, where: str | None = None,
           host_warnings: list[str] | None = None) -> None:
    """Starts (or resumes) a run and sweeps it on `backend`, printing as it goes."""
    store = _open_store(db, create=plan is not None)  # resuming never creates a store
    try:
        opened = runner.start(store, plan, db, where, host_warnings) if plan is not None else \
            runner.resume(store, resume, file, retry_failed, where, host_warnings)
    except (runner.Refused, StoreError) as error:
        fail(str(error), getattr(error, "code", EXIT_USAGE))
    if opened is None:
        row = store.run(store.resolve_run(resume))
        stdout.print(f"run {row.id} ({safe(row.name)}) has no point left to run"
                     + ("" if retry_failed or not row.points_failed else
                        f"; {row.points_failed} failed: --retry-failed runs them again"))
        return
    print_opened(opened, db, len(plan.points) if plan else 0)
    progress = SweepProgress()
    started = time.monotonic()
    try:
        result = runner.execute(store, opened.run_id, backend, progress, retry_failed)
    except runner.Interrupted as interrupted:
        progress.stop()
        fail(f"{interrupted}; finish it with `labctl sweep --resume {opened.run_id} --db {shlex.quote(db)}`",
             EXIT_INTERRUPTED)
    except runner.BackendLost as lost:
        progress.stop()
        fail(f"{lost}; run {opened.run_id} interrupted with {store.run(opened.run_id).samples} samples "
             f"stored: finish it with `labctl sweep --resume {opened.run_id} --db {shlex.quote(db)}` "
             "(here, or with --cluster)", EXIT_FAILED)
    except sqlite3.DatabaseError as error:
        progress.stop()
        _store_failed_mid_sweep(store, opened.run_id, db, error)
    progress.stop()
    row = store.run(opened.run_id)
    store.close()
    stdout.print(f"run {row.id} finished in {text.format_seconds(time.monotonic() - started)}: "
                 f"{row.points_done} points done, {row.points_failed} failed, "
                 + (f"{row.points_skipped} skipped (unavailable here), " if row.points_skipped else "")
                 + f"{row.samples} samples. See `labctl show {row.id} --db {safe(shlex.quote(db))}`.")
    if result.points_failed:
        fail(f"{result.points_failed} of {row.points} points failed (above); the rest is stored", EXIT_FAILED)


def _store_failed_mid_sweep(store: Store, run_id: int, db: str, error: sqlite3.DatabaseError) -> None:
    """Stops a sweep whose store failed under it (runner.execute marked the run interrupted where
    it could), in one line. Every sample committed before stays."""
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
    print_runs(store.runs())


@main.command("show")
@click.argument("run")
@db_option
@_store_failures
def show_command(run: str, db: str) -> None:
    """Medians per point of a RUN (an id or 'latest'), with their spread and failures."""
    from labctl import results

    store = _open_store(db, create=False)
    try:
        run_id = store.resolve_run(run)
    except StoreError as error:
        fail(str(error), error.code)
    row, points = store.run(run_id), store.points(run_id)
    store.close()
    print_show(row, points, results.load(db, run_id), db)


@main.command("report")
@click.argument("run")
@db_option
@output_option("Folder to write (default: reports/<experiment name>); a previous report of the same "
               "experiment there is replaced, anything else refused.", folder=True)
@old_spelling("--out", "out", type=click.Path(file_okay=False))
@_store_failures
def report_command(run: str, db: str, output: str | None, out: str | None) -> None:
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
    folder = output or out or str(Path("reports") / report.slug(name))
    command = shlex.join(["labctl", "report", str(run_id), "--db", db, "--output", folder])
    try:
        written = report.write(db, run_id, folder, command)
    except files.OutputError as error:
        fail(str(error), error.code)
    stdout.print(f"run {run_id}: {safe(written.folder / 'report.md')} with {len(written.figures)} figures")


@main.command("export")
@click.argument("run")
@db_option
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json"]), default="csv", show_default=True)
@output_option("File to write (default: stdout; required for parquet).")
@force_option
@_store_failures
def export_command(run: str, db: str, fmt: str, output: str | None, force: bool) -> None:
    """Every sample of a RUN as CSV, Parquet or JSON: one row per sample."""
    from labctl import results

    _open_store(db, create=False).close()
    if output is None and fmt == "parquet":
        fail("export: parquet is binary: give --output FILE", EXIT_USAGE)
    if output is not None:  # before the work: a refused target costs nothing
        _output(output, [db], force)
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
        _output(output, [db], force, lambda path: frame.to_parquet(path, index=False))
        return
    written = frame.to_csv(index=False) if fmt == "csv" else frame.to_json(orient="records", indent=1)
    if output is None:
        click.echo(written, nl=False)
    else:
        _output(output, [db], force, lambda path: path.write_text(written, encoding="utf-8"))


def _output(output: str, stores: list[str], force: bool, write=None) -> None:
    """Checks --output (with no `write`), or writes it beside and renames it into place."""
    try:
        if write is None:
            files.check_target("--output", Path(output), [Path(s) for s in stores], force)
        else:
            files.write_file("--output", output, write, [Path(s) for s in stores], force)
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
@click.option("--db-b", type=click.Path(dir_okay=False), help="The store of RUN_B, when it is not --db.")
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
@click.option("--across-machines", is_flag=True,
              help="Match a point with the same point of the other run whatever machine each ran "
                   "on (by default only on the same kind of machine).")
@output_option("Also write the markdown to FILE.")
@force_option
@click.option("--json", "as_json", is_flag=True, help="The comparison as JSON on stdout.")
@_store_failures
def compare_command(run_a: str, run_b: str, db: str, db_b: str | None, metric: str,
                    ignore: tuple[str, ...], min_change: float, fail_on_regression: float | None,
                    across_machines: bool, output: str | None, force: bool, as_json: bool) -> None:
    """Compare RUN_B with RUN_A (ids or 'latest') point by point: the ratio of medians with its
    interval, and a verdict from a rank test (none below 3 samples a side). A markdown table."""
    from labctl import compare

    stores = [db, db_b or db]
    if output is not None:
        _output(output, stores, force)
    sides = []
    for name, run, store in (("RUN_A", run_a, db), ("RUN_B", run_b, db_b or db)):
        _open_store(store, create=False).close()
        try:
            sides.append(compare.load(store, run))
        except StoreError as error:
            fail(f"compare: {name}: {error}", error.code)
    try:
        result = compare.compare(*sides, metric=metric, ignore=ignore, min_change=min_change,
                                 across_machines=across_machines)
    except compare.CompareError as error:
        fail(f"compare: {error}", EXIT_USAGE)
    markdown = compare.markdown(result)
    if output is not None:
        _output(output, stores, force, lambda path: path.write_text(markdown, encoding="utf-8"))
    click.echo(json.dumps(compare.to_json(result), indent=1) if as_json else markdown, nl=as_json)
    if fail_on_regression is not None:
        regressions = result.regressions(fail_on_regression)
        for row in regressions:
            click.echo(f"labctl: regression past {fail_on_regression:g}%: "
                       f"{compare.label(row.kernel, row.params_b)}: {row.difference.text}, "
                       f"{row.difference.change:+.1f}% {metric}", err=True)
        if regressions:
            sys.exit(EXIT_FAILED)
