"""`labctl runs`: the runs of a store, a row each. Reads the store only."""

from __future__ import annotations

from dataclasses import asdict

import click

from labctl.cli.commands.options import db_option, store_failures
from labctl.cli.console import open_store, print_json, print_rows, safe
from labctl.store import RunRow


@click.command("runs")
@db_option
@click.option("--json", "as_json", is_flag=True, help="The runs as one JSON document (a list).")
@store_failures
def runs_command(db: str, as_json: bool) -> None:
    """List the runs in a store."""
    store = open_store(db, create=False)
    runs = store.runs()
    store.close()
    if as_json:
        print_json([runs_json(r) for r in runs])
    else:
        print_runs(runs)


def runs_json(run: RunRow) -> dict:
    """A run as `runs --json` lists it: what its row says, with its machine and context in full
    (the experiment file's text is `labctl export`'s)."""
    return {name: value for name, value in asdict(run).items() if name != "experiment"}


def print_runs(runs: list[RunRow]) -> None:
    """The runs of a store, a row each; where that is too wide, the machine and the file (a path
    of any length) beside or under the rest (console.print_rows)."""
    headers = ["run", "name", "status", "started", "points", "failed", "samples", "machine", "file"]
    rows = [[str(r.id), safe(r.name), r.status, r.started_at[:16].replace("T", " "),
             f"{r.points_done}/{r.points}", str(r.points_failed), str(r.samples),
             safe(f"{r.machine.get('cpu_model')} x{r.machine.get('logical_cpus')}"), safe(r.source)]
            for r in runs]
    print_rows(headers, rows, right={0, 4, 5, 6}, aside={7, 8}, label="{name}: {value}")


command = runs_command
