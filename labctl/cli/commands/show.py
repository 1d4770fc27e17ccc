"""`labctl show RUN`: a run's medians per point, with their spread and failures. Reads the
store only (the kernels' parameters come from the catalogue the run stored)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import click

from labctl.cli.commands.options import db_option, store_failures
from labctl.cli.console import (
    fail,
    open_store,
    params_text,
    print_json,
    print_points,
    safe,
    stdout,
    wrapped,
)
from labctl.store import PointRow, RunRow, StoreError
from labctl.vocabulary import metrics
from labctl.vocabulary.schema import Catalogue
from labctl.vocabulary.text import code_of, format_duration, machine_line

if TYPE_CHECKING:
    import pandas as pd


@click.command("show")
@click.argument("run")
@db_option
@click.option("--json", "as_json", is_flag=True, help="The run and its points' medians as one JSON document.")
@store_failures
def show_command(run: str, db: str, as_json: bool) -> None:
    """Medians per point of a RUN (an id or 'latest'), with their spread and failures."""
    from labctl.read import results

    store = open_store(db, create=False)
    try:
        run_id = store.resolve_run(run)
    except StoreError as error:
        fail(str(error), error.code)
    row, points, catalogue = store.run(run_id), store.points(run_id), store.catalogue(run_id)
    store.close()
    samples = results.load(db, run_id)
    if as_json:
        print_json(show_json(row, points, samples))
    else:
        print_show(row, points, catalogue, samples, db)


def show_json(row: RunRow, points: list[PointRow], samples: pd.DataFrame) -> dict:
    """What `show` prints, as data: the run (its machine, state and warnings), and each point with
    its parameters, status and failure, and the median of its time (ns) with the 95% interval,
    cv, noise flag and throughput, why it is no latency figure (null where it is one), and the median of each count its measure took (null where the
    point has no samples)."""
    from labctl.read import analysis

    table = analysis.point_table(samples, analysis.TIME).set_index("point") if not samples.empty else None
    counts = {metric.name: analysis.point_table(samples, metric).set_index("point")
              for metric in analysis.counted(samples)} if not samples.empty else {}
    memory = {metric.name: analysis.point_table(samples, metric).set_index("point")
              for metric in analysis.per_agent(samples)} if not samples.empty else {}

    def figures(point: int) -> dict:
        if table is None or point not in table.index:
            return {"n": 0, "median_ns": None, "ci_low_ns": None, "ci_high_ns": None, "cv": None,
                    "noisy": None, "msgs_per_s": None, "schedule_dependent": None, "refused": None,
                    "counts": {}, "bytes_per_agent": None}
        t = table.loc[point]
        return {"n": int(t["n"]), "median_ns": t["median"], "ci_low_ns": t["ci_low"], "ci_high_ns": t["ci_high"],
                "cv": t["cv"], "noisy": bool(t["noisy"]), "msgs_per_s": t["rate_median"],
                "schedule_dependent": bool(t["schedule_dependent"]), "refused": t["refused"] or None,
                "counts": {name: c.loc[point, "median"] for name, c in counts.items() if point in c.index},
                "bytes_per_agent": next((c.loc[point, "median"] for c in memory.values() if point in c.index), None)}

    run = {name: getattr(row, name) for name in (
        "id", "name", "source", "description", "status", "started_at", "finished_at", "seed", "command",
        "machine", "context", "warnings", "points", "points_done", "points_failed", "points_skipped", "samples")}
    return {"run": run, "points": [{
        "point": p.id, "position": p.position, "kernel": p.point.kernel, "params": p.point.params,
        "measure": p.point.measure, "repeats": p.point.repeats, "status": p.status, "failure_kind": p.failure_kind, "failure": p.failure,
        **figures(p.id)} for p in sorted(points, key=lambda p: p.position)]}


def print_show(row: RunRow, points: list[PointRow], catalogue: Catalogue, samples: pd.DataFrame,
               db: str) -> None:
    """A run: its machine, each point's median with its interval and spread, its failures."""
    from labctl.read import analysis

    wrapped(f"run {row.id}: {row.name} ({row.source}), {row.status}, started "
            f"{row.started_at[:19].replace('T', ' ')} UTC", style="bold")
    groups = analysis.machines(samples)
    elsewhere = [machine for machine, _, _ in groups] not in ([], [machine_line(row.machine)])
    wrapped(f"{'swept from' if elsewhere else 'machine'}: {machine_line(row.machine)}; "
            f"load {row.context.get('load_average')}; "
            f"labctl {row.context.get('labctl')} at {code_of(row.context) or 'no known commit'}; experiment "
            f"{row.context.get('experiment_git_describe') or 'not in a git checkout'}")
    for warning in row.warnings:
        wrapped(f"warning at start: {warning}", style="yellow")
    for machine, hosts, part in groups:
        if len(groups) > 1 or elsewhere:
            stdout.print(f"\n[bold]on {safe(machine)}[/bold] (hosts: {safe(', '.join(hosts))}; "
                         f"{part['point'].nunique()} points)")
        _print_medians(part, points, catalogue)
    for p in points:
        if p.status in ("failed", "skipped"):
            status = f"failed ({safe(p.failure_kind)})" if p.status == "failed" else "skipped"
            wrapped(f"{status} {safe(p.point.kernel)} {params_text(p.point.params)}: {safe(p.failure or '')}",
                    style="red" if p.status == "failed" else "yellow", markup=True)
    pending = [p for p in points if p.status == "pending"]
    if pending:
        wrapped(f"{len(pending)} points not run yet: `labctl sweep --resume {row.id} --db {shlex.quote(db)}`")


def _print_medians(samples: pd.DataFrame, points: list[PointRow], catalogue: Catalogue) -> None:
    """The medians of the points of `samples` (one machine's), a table per kernel: the time, and
    each count the points' measures took (instructions, cache misses...)."""
    from labctl.read import analysis

    table = analysis.point_table(samples, analysis.TIME).sort_values("position")
    measured = {p.id: p for p in points}
    counts = {metric.column: analysis.point_table(samples, metric).set_index("point")
              for metric in [*analysis.counted(samples), *analysis.per_agent(samples)]}
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
        if point["refused"]:
            flags.append(f"[yellow]{point['refused']}[/yellow]")
        columns[""].append(", ".join(flags))
    print_points([(measured[p].point.kernel, measured[p].point.params) for p in table["point"]], columns, catalogue)
    if counts:
        stdout.print("counts: medians over the measured phase (`labctl export` has every sample; "
                     "`unsupported` says why a counter is missing here)")


command = show_command
