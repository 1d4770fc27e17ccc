"""`labctl gate`: CI's regression gate on instruction counts (labctl.read.gate)."""

from __future__ import annotations

from pathlib import Path

import click

from labctl.cli import sweeping
from labctl.cli.commands.options import db_option, percent, store_failures
from labctl.cli.console import EXIT_FAILED, EXIT_USAGE, fail, load_plan, safe, stdout
from labctl.plan import experiment
from labctl.run import runner
from labctl.store import Store, StoreError
from labctl.vocabulary import files


@click.command("gate")
@click.argument("file", default="gate", metavar="[EXPERIMENT]")
@db_option
@click.option("--baseline", type=click.Path(),
              help="The baseline (default: beside the experiment file, gate.baseline.json).")
@click.option("--run", "run", metavar="RUN",
              help="Judge a stored run (an id or 'latest') instead of sweeping the experiment.")
@click.option("--update", is_flag=True,
              help="Write the baseline from the run instead of judging it: on purpose, committed "
                   "with the change that moved the counts.")
@click.option("--force", is_flag=True,
              help="With --update: replace a --baseline file that is not this experiment's "
                   "baseline labctl wrote.")
@click.option("--threshold", default="2", show_default=True, metavar="PCT", callback=percent,
              help="A point fails above PCT percent more instructions than its baseline.")
@store_failures
def gate_command(file: str, db: str, baseline: str | None, run: str | None, update: bool,
                 force: bool, threshold: float) -> None:
    """CI's regression gate: sweep EXPERIMENT (default: gate, single-thread kernels measured in
    instructions) and exit 1 where a point executes more than PCT percent more instructions than
    the committed baseline, or has no count. `--update` refreshes the baseline instead."""
    if run is None:  # a point that failed fails the gate, judged below with the others
        plan = load_plan(file, None)
        if update:  # a baseline that may not be written is refused before half a minute of sweep
            baseline_target(plan.source, plan.name, baseline, db, force)
        else:  # and one that is malformed, or of another build, cannot judge what it would sweep
            _check_baseline(_baseline_path(plan.source, baseline))
        run = str(sweeping.sweep(sweeping.Request(db, plan, file=file), runner.LocalBackend()).run_id)
    print_gate(db, run, baseline, update, threshold, force)


def baseline_target(source: str, name: str, baseline: str | None, db: str, force: bool) -> Path:
    """Where `--update` writes the baseline of experiment `name` (from `source`), checked as any
    output is (labctl.read.gate.check_target); ends labctl with its code where it may not. Without
    --baseline, a shipped experiment's folder inside an installed package is refused: a baseline
    is the user's file, committed with their change, not a file of labctl's install."""
    from labctl.read import gate

    path = _baseline_path(source, baseline)
    if baseline is None and gate.installed(path):
        fail(f"gate: --update would write {path} inside the installed package; give --baseline FILE "
             "(a path of yours, such as ./gate.baseline.json)", EXIT_USAGE)
    try:
        gate.check_target(path, name, [Path(db)], force)
    except files.OutputError as error:
        fail(str(error), error.code)
    return path


def _baseline_path(source: str, baseline: str | None) -> Path:
    from labctl.read import gate

    if baseline is not None:
        return Path(baseline)
    try:
        return gate.baseline_path(experiment.locate(source))
    except experiment.ExperimentError as error:
        fail(f"gate: the run's experiment is not here ({error}); give --baseline FILE", EXIT_USAGE)


def _check_baseline(path: Path) -> None:
    """Refuses, before a sweep, a baseline that cannot judge it: malformed, or taken with another
    build than this labctl's extension, libc and valgrind."""
    from labctl.read import gate
    from labctl.run import sysinfo

    try:
        gate.same_build(gate.read(path), path, sysinfo.host_context())
    except gate.GateError as error:
        fail(f"gate: {error}", error.code)


def print_gate(db: str, run: str, baseline: str | None, update: bool, threshold: float,
               force: bool = False) -> None:
    """`labctl gate` once its run is stored: writes the baseline from it (`update`), or judges it
    against the baseline, prints the table and ends labctl with 1 where a point fails."""
    from labctl.read import gate

    try:
        with Store(db, create=False) as store:
            run_id = store.resolve_run(run)
            row = store.run(run_id)
    except StoreError as error:
        fail(str(error), error.code)
    try:
        if update:
            path = baseline_target(row.source, row.name, baseline, db, force)
            gate.write(gate.record(db, run_id), path, [Path(db)], force)
            stdout.print(f"run {run_id}: wrote the baseline {safe(path)}; commit it with the "
                         "change that moved the counts")
            return
        path = _baseline_path(row.source, baseline)
        result = gate.check(db, run_id, gate.read(path), path, threshold)
    except gate.GateError as error:
        fail(f"gate: {error}", error.code)
    except files.OutputError as error:
        fail(str(error), error.code)
    click.echo(gate.markdown(result))
    if result.failed:
        fail("\n".join(f"gate: {gate.label(row)}: {row.verdict}"
                       + (f" ({row.change:+.2f}% instructions)" if row.change is not None else "")
                       + (f" ({row.note})" if row.note and row.change is None else "")
                       for row in result.failed), EXIT_FAILED)


command = gate_command
