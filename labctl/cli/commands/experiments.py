"""`labctl experiments`: the experiments labctl ships, with their studies, points and estimates."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from labctl.cli.commands.options import db_option, store_failures
from labctl.cli.console import past_runs, safe, stdout
from labctl.plan import experiment
from labctl.run import runner
from labctl.store import Store
from labctl.vocabulary.text import format_seconds


@click.command("experiments")
@db_option
@store_failures
def experiments_command(db: str) -> None:
    """List the experiments labctl ships: each study it reproduces, and more. `labctl plan NAME`
    shows one; `labctl sweep NAME` runs it."""
    with past_runs(db) as store:
        print_experiments(experiment.shipped_experiments(), store)


def print_experiments(shipped: dict[str, Path], store: Store | None) -> None:
    """The shipped experiments: name, the studies each reproduces, its points and its estimated
    time (from the runs in `store`, else a guess)."""
    table = Table(box=None, padding=(0, 2), show_edge=False, pad_edge=False)
    for column in ("name", "study", "points", "estimate"):
        table.add_column(column, justify="right" if column in ("points", "estimate") else "left")
    for name, path in shipped.items():
        try:
            plan = experiment.load(path, seed=0)
        except experiment.ExperimentError as error:
            table.add_row(safe(name), f"[red]cannot be read:[/red] {safe(error)}", "", "")
            continue
        cited = "; ".join(f"{s.title} ({s.author}, {s.year})" for s in plan.studies) or "-"
        guess = runner.estimate(plan, store)
        table.add_row(safe(name), safe(cited), str(len(plan.points)),
                      ("~" if guess.is_guess else "") + format_seconds(guess.seconds))
    stdout.print(table)
    stdout.print("estimate: from the runs in the store where it has them; ~ marks a guess from "
                 "the kernels' sizes")


command = experiments_command
