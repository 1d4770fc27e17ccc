"""`labctl fingerprint RUN`: what each point's workload is, from the counts the runtime kept of its
phase (messages/s, agents created/s, inbox takes, idle share, busy threads, cross-queue sends),
and which points behave alike, grouped. Reads the store only."""

from __future__ import annotations

import click
from rich.table import Table

from labctl.cli.commands.options import db_option, store_failures
from labctl.cli.console import EXIT_FAILED, fail, open_store, safe, stdout
from labctl.store import StoreError


@click.command("fingerprint")
@click.argument("run")
@db_option
@store_failures
def fingerprint_command(run: str, db: str) -> None:
    """Each point's fingerprint in RUN (an id or 'latest') and the groups of points that behave
    alike, on each machine of the run."""
    from labctl.read import analysis, results

    store = open_store(db, create=False)
    try:
        run_id = store.resolve_run(run)
    except StoreError as error:
        fail(str(error), error.code)
    store.close()
    samples = results.load(db, run_id)
    found = False
    for machine, _, part in analysis.machines(samples):
        prints = analysis.fingerprints(part)
        if prints is None:
            continue
        found = True
        stdout.print(f"[bold]on {safe(machine)}[/bold]")
        print_fingerprints(prints)
    if not found:
        fail(f"run {run_id} has no fingerprints: they need two or more points of our runtime's kernels "
             "run under the time or counters measure (a store written before labctl kept the runtime's "
             "counts has none)", EXIT_FAILED)


def print_fingerprints(prints) -> None:
    """A table of points by group, then each group's kernels and each kernel's nearest other."""
    from labctl.read import analysis

    table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    table.add_column("group", no_wrap=True)
    table.add_column("kernel", no_wrap=True)
    table.add_column("point")
    for axis in analysis.AXES:
        table.add_column(axis.header, justify="right", no_wrap=True)
    for _, row in prints.table.sort_values(["group", "kernel"], kind="stable").iterrows():
        table.add_row(row["group"], safe(f"{row['kernel']} {row['scenario']}".strip()), safe(row["configuration"]),
                      *(analysis.format_axis(axis, row[axis.name]) for axis in analysis.AXES))
    stdout.print(table)
    stdout.print("; ".join(f"{axis.header}: {axis.words}" for axis in analysis.AXES))
    for letter, kernels in prints.groups.items():
        members = ", ".join(f"{safe(kernel)} ({count})" for kernel, count in kernels.items())
        stdout.print(f"group {letter}: {members}")
    for (kernel, scenario), _ in prints.table.groupby(["kernel", "scenario"], sort=False):
        near = prints.nearest(str(kernel), str(scenario))
        if near is not None:
            stdout.print(f"{safe(f'{kernel} {scenario}'.strip())} is nearest {safe(near[0])} "
                         f"(distance {near[1]:.2f})")


command = fingerprint_command
