"""`labctl plan FILE`: the points an experiment expands to, and the time they will take."""

from __future__ import annotations

import click

from labctl.cli.commands.options import db_option, scale_option, seed_option, store_failures
from labctl.cli.console import load_plan, past_runs, print_json, print_points, safe, stdout, wrapped
from labctl.plan.experiment import Plan
from labctl.run import runner
from labctl.store import Store
from labctl.vocabulary import metrics


@click.command("plan")
@click.argument("file")
@db_option
@seed_option
@scale_option
@click.option("--json", "as_json", is_flag=True, help="The plan as one JSON document.")
@store_failures
def plan_command(file: str, db: str, seed: int | None, scale: str, as_json: bool) -> None:
    """Print the points an experiment FILE (or NAME) expands to, and an estimate of the time; run
    nothing."""
    plan = load_plan(file, seed, scale)
    if not as_json:
        print_plan_of(plan, db)
        return
    with past_runs(db) as store:
        print_json(plan_json(plan, store))


def plan_json(plan: Plan, store: Store | None) -> dict:
    """A plan as data: the experiment, its points in the order they run (each with why it will be
    skipped here, if it will), what expansion left out, and the estimate in seconds."""
    guess = runner.estimate(plan, store)
    return {
        "name": plan.name, "description": plan.description, "source": plan.source, "scale": plan.scale,
        "order": plan.order, "seed": plan.seed, "studies": [s.to_dict() for s in plan.studies],
        "points": [{"kernel": p.kernel, "params": p.params, "repeats": p.repeats, "warmup": p.warmup,
                    "timeout_s": p.timeout_s, "measure": p.measure, "env": p.env, "cpus": p.cpus,
                    "key": p.key, "skip": p.skip or None} for p in plan.points],
        "notes": plan.notes, "estimate_s": guess.seconds, "estimate_is_guess": guess.is_guess,
    }


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
        wrapped(f"note: {note}")
    default_mb = runner.default_memory_mb()
    for point in plan.points:
        if not point.skip and (why := runner.too_large(point, default_mb)):
            wrapped(f"will fail before it runs: {why}", style="yellow")
    wrapped(runner.estimate(plan, store).text(db))


command = plan_command
