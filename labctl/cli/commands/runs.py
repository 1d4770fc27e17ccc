"""`labctl runs`: the runs of a store, a row each. Reads the store only."""

from __future__ import annotations

import click
from rich.table import Table

from labctl.cli.commands.options import db_option, store_failures
from labctl.cli.console import open_store, safe, stdout
from labctl.store import RunRow


@click.command("runs")
@db_option
@store_failures
def runs_command(db: str) -> None:
    """List the runs in a store."""
    store = open_store(db, create=False)
    print_runs(store.runs())


def print_runs(runs: list[RunRow]) -> None:
    """The runs of a store, a row each."""
    columns = ("run", "name", "status", "started", "points", "failed", "samples", "machine", "file")
    rows = [(str(r.id), safe(r.name), r.status, r.started_at[:16].replace("T", " "),
             f"{r.points_done}/{r.points}", str(r.points_failed), str(r.samples),
             safe(f"{r.machine.get('cpu_model')} x{r.machine.get('logical_cpus')}"), safe(r.source))
            for r in runs]
    # Nothing is cut in a narrow terminal: the machine and the file (a path of any length) fold
    # onto more lines, and every other column keeps the width of its longest value.
    folding = {"machine", "file"}
    table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    for i, column in enumerate(columns):
        if column in folding:
            table.add_column(column, overflow="fold")
        else:
            table.add_column(column, no_wrap=True,
                             min_width=max([len(column)] + [len(row[i]) for row in rows]))
    for row in rows:
        table.add_row(*row)
    stdout.print(table)


command = runs_command
