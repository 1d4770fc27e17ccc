"""`labctl export RUN`: every sample of a run as CSV, Parquet or JSON. Reads the store only."""

from __future__ import annotations

import json

import click

from labctl.cli.commands.options import db_option, force_option, output_option, store_failures
from labctl.cli.console import EXIT_USAGE, fail, open_store, write_output
from labctl.store import StoreError
from labctl.vocabulary.text import printable


@click.command("export")
@click.argument("run")
@db_option
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json"]), default="csv", show_default=True)
@output_option("File to write (default: stdout; required for parquet).")
@force_option
@store_failures
def export_command(run: str, db: str, fmt: str, output: str | None, force: bool) -> None:
    """Every sample of a RUN as CSV, Parquet or JSON: one row per sample."""
    from labctl.read import results

    open_store(db, create=False).close()
    if output is None and fmt == "parquet":
        fail("export: parquet is binary: give --output FILE", EXIT_USAGE)
    if output is not None:  # before the work: a refused target costs nothing
        write_output(output, [db], force)
    try:
        frame = results.load(db, run)
    except StoreError as error:
        fail(str(error), error.code)
    if fmt == "csv":  # a list in a CSV cell: as JSON
        frame["thread_cpu_ns"] = frame["thread_cpu_ns"].map(json.dumps)
    if fmt in ("csv", "parquet"):  # a mapping of any keys, often none: as JSON
        frame["unsupported"] = frame["unsupported"].map(json.dumps)
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            fail("export: parquet needs pyarrow: pip install 'labctl[parquet]'", EXIT_USAGE)
        write_output(output, [db], force, lambda path: frame.to_parquet(path, index=False))
        return
    if fmt == "csv" and output is None:
        # On a terminal, text from outside (a kernel's answer, a failure, a parameter) is shown
        # escaped, as every other output shows it (labctl.vocabulary.text.printable); a file keeps it exact.
        # JSON escapes it itself.
        for column in frame.select_dtypes(include=["object", "string"]).columns:
            frame[column] = frame[column].map(lambda value: printable(value) if isinstance(value, str) else value)
    written = frame.to_csv(index=False) if fmt == "csv" else frame.to_json(orient="records", indent=1)
    if output is None:
        click.echo(written, nl=False)
    else:
        write_output(output, [db], force, lambda path: path.write_text(written, encoding="utf-8"))


command = export_command
