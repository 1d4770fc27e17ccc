"""`labctl show RUN`: a run's medians per point, with their spread and failures. Reads the
store only (the kernels' parameters come from the catalogue the run stored)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import click

from labctl.cli.commands.options import db_option, store_failures
from labctl.cli.console import fail, open_store, params_text, print_points, safe, stdout
from labctl.store import PointRow, RunRow, StoreError
from labctl.vocabulary import metrics
from labctl.vocabulary.schema import Catalogue
from labctl.vocabulary.text import format_duration, machine_line

if TYPE_CHECKING:
    import pandas as pd


@click.command("show")
@click.argument("run")
@db_option
@store_failures
def show_command(run: str, db: str) -> None:
    """Medians per point of a RUN (an id or 'latest'), with their spread and failures."""
    from labctl.read import results

    store = open_store(db, create=False)
    try:
        run_id = store.resolve_run(run)
    except StoreError as error:
        fail(str(error), error.code)
    row, points, catalogue = store.run(run_id), store.points(run_id), store.catalogue(run_id)
    store.close()
    print_show(row, points, catalogue, results.load(db, run_id), db)


def print_show(row: RunRow, points: list[PointRow], catalogue: Catalogue, samples: pd.DataFrame,
               db: str) -> None:
    """A run: its machine, each point's median with its interval and spread, its failures."""
    from labctl.read import analysis

    stdout.print(f"[bold]run {row.id}[/bold]: {safe(row.name)} ({safe(row.source)}), "
                 f"{row.status}, started {row.started_at[:19].replace('T', ' ')} UTC")
    groups = analysis.machines(samples)
    elsewhere = [machine for machine, _, _ in groups] not in ([], [machine_line(row.machine)])
    stdout.print(safe(f"{'swept from' if elsewhere else 'machine'}: {machine_line(row.machine)}; "
                      f"load {row.context.get('load_average')}; "
                      f"labctl {row.context.get('labctl')} {row.context.get('git_describe') or ''}; experiment "
                      f"{row.context.get('experiment_git_describe') or 'not in a git checkout'}"))
    for warning in row.warnings:
        stdout.print(f"[yellow]warning at start:[/yellow] {safe(warning)}")
    for machine, hosts, part in groups:
        if len(groups) > 1 or elsewhere:
            stdout.print(f"\n[bold]on {safe(machine)}[/bold] (hosts: {safe(', '.join(hosts))}; "
                         f"{part['point'].nunique()} points)")
        _print_medians(part, points, catalogue)
    for p in points:
        if p.status in ("failed", "skipped"):
            status = f"[red]failed[/red] ({safe(p.failure_kind)})" if p.status == "failed" else "[yellow]skipped[/yellow]"
            stdout.print(f"{status} {safe(p.point.kernel)} {params_text(p.point.params)}: {safe(p.failure or '')}")
    pending = [p for p in points if p.status == "pending"]
    if pending:
        stdout.print(f"{len(pending)} points not run yet: `labctl sweep --resume {row.id} --db {safe(shlex.quote(db))}`")


def _print_medians(samples: pd.DataFrame, points: list[PointRow], catalogue: Catalogue) -> None:
    """The medians of the points of `samples` (one machine's), a table per kernel: the time, and
    each count the points' measures took (instructions, cache misses...)."""
    from labctl.read import analysis

    table = analysis.point_table(samples, analysis.TIME).sort_values("position")
    measured = {p.id: p for p in points}
    counts = {metric.column: analysis.point_table(samples, metric).set_index("point")
              for metric in analysis.counted(samples)}
    columns = {name: [] for name in ("n", "median", "95% CI", "cv", "msgs/s",
                                     *(metrics.lookup(name).words for name in counts), "")}
    for _, point in table.iterrows():
        columns["n"].append(str(point["n"]))
        columns["median"].append(format_duration(point["median"]))
        low, high = point["ci_low"], point["ci_high"]
        columns["95% CI"].append(f"{format_duration(low)}..{format_duration(high)}"
                                 if low == low and low is not None else "(n<3)")  # NaN: none
        columns["cv"].append(f"{point['cv'] * 100:.1f}%")
        columns["msgs/s"].append(f"{point['rate_median'] / 1e6:.2f} M")
        for name, medians in counts.items():
            columns[metrics.lookup(name).words].append(metrics.lookup(name).format(medians.loc[point["point"], "median"])
                                             if point["point"] in medians.index else "-")
        flags = ["[yellow]noisy[/yellow]"] if point["noisy"] else []
        if point["measure"] == metrics.INSTRUCTIONS:
            flags.append("time under valgrind")
        if point["schedule_dependent"]:
            flags.append("[yellow]schedule-dependent[/yellow]")
        columns[""].append(", ".join(flags))
    print_points([(measured[p].point.kernel, measured[p].point.params) for p in table["point"]], columns, catalogue,
                 frozenset({"", "95% CI"}))
    if counts:
        stdout.print("counts: medians over the measured phase (`labctl export` has every sample; "
                     "`unsupported` says why a counter is missing here)")


command = show_command
