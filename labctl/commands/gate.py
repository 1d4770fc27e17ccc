"""`labctl gate`: CI's regression gate on instruction counts (labctl.gate)."""

from __future__ import annotations

from pathlib import Path

import click

from labctl import experiment, runner, sweeping
from labctl.commands.options import db_option, percent, store_failures
from labctl.console import EXIT_FAILED, EXIT_USAGE, fail, load_plan, safe, stdout
from labctl.store import Store, StoreError


@click.command("gate")
@click.argument("file", default="gate", metavar="[EXPERIMENT]")
@db_option
@click.option("--baseline", type=click.Path(dir_okay=False),
              help="The baseline (default: beside the experiment file, gate.baseline.json).")
@click.option("--run", "run", metavar="RUN",
              help="Judge a stored run (an id or 'latest') instead of sweeping the experiment.")
@click.option("--update", is_flag=True,
              help="Write the baseline from the run instead of judging it: on purpose, committed "
                   "with the change that moved the counts.")
@click.option("--threshold", default="2", show_default=True, metavar="PCT", callback=percent,
              help="A point fails above PCT percent more instructions than its baseline.")
@store_failures
def gate_command(file: str, db: str, baseline: str | None, run: str | None, update: bool,
                 threshold: float) -> None:
    """CI's regression gate: sweep EXPERIMENT (default: gate, single-thread kernels measured in
    instructions) and exit 1 where a point executes more than PCT percent more instructions than
    the committed baseline, or has no count. `--update` refreshes the baseline instead."""
    if run is None:  # a point that failed fails the gate, judged below with the others
        run = str(sweeping.sweep(sweeping.Request(db, load_plan(file, None), file=file),
                                 runner.LocalBackend()).run_id)
    print_gate(db, run, baseline, update, threshold)


def print_gate(db: str, run: str, baseline: str | None, update: bool, threshold: float) -> None:
    """`labctl gate` once its run is stored: writes the baseline from it (`update`), or judges it
    against the baseline, prints the table and ends labctl with 1 where a point fails."""
    from labctl import gate

    try:
        with Store(db, create=False) as store:
            run_id = store.resolve_run(run)
            source = store.run(run_id).source
    except StoreError as error:
        fail(str(error), error.code)
    try:
        path = Path(baseline) if baseline else gate.baseline_path(experiment.locate(source))
    except experiment.ExperimentError as error:
        fail(f"gate: run {run_id}'s experiment is not here ({error}); give --baseline FILE", EXIT_USAGE)
    try:
        if update:
            gate.write(gate.record(db, run_id), path)
            stdout.print(f"run {run_id}: wrote the baseline {safe(path)}; commit it with the "
                         "change that moved the counts")
            return
        result = gate.check(db, run_id, gate.read(path), path, threshold)
    except gate.GateError as error:
        fail(f"gate: {error}", EXIT_FAILED)
    except OSError as error:
        fail(f"gate: --baseline {path}: cannot write: {error.strerror or error}", EXIT_FAILED)
    click.echo(gate.markdown(result))
    if result.failed:
        fail("\n".join(f"gate: {gate.label(row)}: {row.verdict}"
                       + (f" ({row.change:+.2f}% instructions)" if row.change is not None else "")
                       + (f" ({row.note})" if row.note and row.change is None else "")
                       for row in result.failed), EXIT_FAILED)

command = gate_command
