"""`labctl experiments`: the experiments labctl ships, with their studies, points and estimates."""

from __future__ import annotations

from pathlib import Path

import click

from labctl.cli.commands.options import db_option, store_failures
from labctl.cli.console import past_runs, print_json, print_rows, safe, wrapped
from labctl.plan import experiment
from labctl.run import runner
from labctl.store import Store
from labctl.vocabulary.text import format_seconds


@click.command("experiments")
@db_option
@click.option("--json", "as_json", is_flag=True, help="The experiments as one JSON document (a list).")
@store_failures
def experiments_command(db: str, as_json: bool) -> None:
    """List the experiments labctl ships: each study it reproduces, and more. `labctl plan NAME`
    shows one; `labctl sweep NAME` runs it."""
    with past_runs(db) as store:
        if as_json:
            print_json(experiments_json(experiment.shipped_experiments(), store))
        else:
            print_experiments(experiment.shipped_experiments(), store)


def experiments_json(shipped: dict[str, Path], store: Store | None) -> list[dict]:
    """The shipped experiments as data: name, file, studies, points and the estimate (seconds,
    and whether it is a guess); `error` says why one cannot be read."""
    listed = []
    for name, path in shipped.items():
        try:
            plan = experiment.load(path, seed=0)
        except experiment.ExperimentError as error:
            listed.append({"name": name, "file": str(path), "error": str(error)})
            continue
        guess = runner.estimate(plan, store)
        listed.append({"name": name, "file": str(path), "description": plan.description,
                       "studies": [s.to_dict() for s in plan.studies], "points": len(plan.points),
                       "estimate_s": guess.seconds, "estimate_is_guess": guess.is_guess})
    return listed


def print_experiments(shipped: dict[str, Path], store: Store | None) -> None:
    """The shipped experiments: name, its points, its estimated time (from the runs in `store`,
    else a guess) and the studies it reproduces (beside or under the rest where the output is
    narrow: console.print_rows)."""
    rows = []
    for name, path in shipped.items():
        try:
            plan = experiment.load(path, seed=0)
        except experiment.ExperimentError as error:
            rows.append([safe(name), "", "", f"[red]cannot be read:[/red] {safe(error)}"])
            continue
        cited = "; ".join(f"{s.title} ({s.author}, {s.year})" for s in plan.studies) or "-"
        guess = runner.estimate(plan, store)
        rows.append([safe(name), str(len(plan.points)), ("~" if guess.is_guess else "") + format_seconds(guess.seconds),
                     safe(cited)])
    print_rows(["name", "points", "estimate", "study"], rows, right={1, 2}, aside={3}, label="{value}")
    wrapped("estimate: from the runs in the store where it has them; ~ marks a guess from the "
            f"kernels' sizes; {runner.COVERS}")


command = experiments_command
