"""`labctl plan FILE`: the points an experiment expands to, and the time they will take."""

from __future__ import annotations

import click

from labctl.cli.commands.options import db_option, scale_option, seed_option, store_failures
from labctl.cli.console import load_plan, past_runs, print_points, safe, stdout
from labctl.plan.experiment import Plan
from labctl.run import runner
from labctl.store import Store
from labctl.vocabulary import metrics


@click.command("plan")
@click.argument("file")
@db_option
@seed_option
@scale_option
@store_failures
def plan_command(file: str, db: str, seed: int | None, scale: str) -> None:
    """Print the points an experiment FILE (or NAME) expands to, and an estimate of the time; run
    nothing."""
    print_plan_of(load_plan(file, seed, scale), db)


def print_plan_of(plan: Plan, db: str) -> None:
    """A plan, with its estimate from the past runs in `db`."""
    with past_runs(db) as store:
        print_plan(plan, db, store)


def print_plan(plan: Plan, db: str, store: Store | None) -> None:
    """The points a plan expands to, what expansion left out, and the time they will take."""
    samples = sum(p.repeats for p in plan.points)
    order = f"random (seed {plan.seed})" if plan.order == "random" else "as written"
    stdout.print(f"[bold]{safe(plan.name)}[/bold]: {safe(plan.description)}  "
                 f"({safe(plan.source)}{', scale full' if plan.scale == 'full' else ''})")
    stdout.print(f"{len(plan.points)} points, {samples} measured samples; order {order}")
    extra = {"warmup+repeats": [f"{p.warmup}+{p.repeats}" for p in plan.points]}
    if any(p.measure != metrics.TIME for p in plan.points):
        extra["measure"] = [p.measure for p in plan.points]
    print_points([(p.kernel, p.params) for p in plan.points], extra, plan.catalogue)
    for note in plan.notes:
        stdout.print(f"note: {safe(note)}")
    stdout.print(safe(runner.estimate(plan, store).text(db)))


command = plan_command
