"""`labctl report RUN`: a run's report folder (labctl.read.report). Reads the store only."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from labctl.cli.commands.options import db_option, old_spelling, output_option, store_failures
from labctl.cli.console import fail, open_store, safe, stdout
from labctl.store import StoreError
from labctl.vocabulary import files


@click.command("report")
@click.argument("run")
@db_option
@output_option("Folder to write (default: reports/<experiment name>); a previous report of the same "
               "experiment there is replaced, anything else refused.")
@old_spelling("--out", "out", type=click.Path())
@store_failures
def report_command(run: str, db: str, output: str | None, out: str | None) -> None:
    """Write the report of a RUN (an id or 'latest'): report.md with its figures, the medians,
    the failures, the machine, and the published figures beside ours."""
    from labctl.read import report

    store = open_store(db, create=False)
    try:
        run_id = store.resolve_run(run)
        name = store.run(run_id).name
    except StoreError as error:
        fail(str(error), error.code)
    finally:
        store.close()
    given = output if output is not None else out  # "" is the working folder, refused, not the default
    folder = given if given is not None else str(Path("reports") / report.slug(name))
    command = shlex.join(["labctl", "report", str(run_id), "--db", db, "--output", folder])
    try:
        written = report.write(db, run_id, folder, command,
                               option="--out" if out is not None and output is None else "--output")
    except files.OutputError as error:
        fail(str(error), error.code)
    stdout.print(f"run {run_id}: {safe(written.folder / 'report.md')} with {len(written.figures)} figures")


command = report_command
