"""`labctl sweep FILE`: an experiment run (or an interrupted run finished), here or on a Dask
cluster; the sweep itself, its progress and its last line, are labctl.cli.sweeping's."""

from __future__ import annotations

import click

from labctl.cli import sweeping
from labctl.cli.commands.options import (
    db_option,
    old_spelling,
    scale_option,
    seed_option,
    store_failures,
)
from labctl.cli.commands.plan import print_plan_of
from labctl.cli.console import EXIT_FAILED, EXIT_USAGE, fail, load_plan, safe, stderr, stdout
from labctl.run import cluster, runner


def _cluster(ctx: click.Context, param: click.Parameter, value: str | None) -> cluster.Spec | None:
    """--cluster as a cluster.Spec; a bad value, or no Dask, refused in one line."""
    if value is None:
        return None
    try:
        spec = cluster.parse(value)
        cluster.require()
    except cluster.ClusterError as error:
        fail(str(error), error.code)
    return spec


@click.command("sweep")
@click.argument("file", required=False)
@db_option
@click.option("--resume", "resume", metavar="RUN", help="Finish an interrupted run (id or 'latest').")
@click.option("--retry-failed", is_flag=True, help="With --resume: run failed points again too.")
@click.option("--cluster", "cluster_spec", metavar="ADDRESS|local:N", callback=_cluster,
              help="Run the points on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:PORT), "
                   "one at a time per host, or on local:N, N single-thread Dask workers on this "
                   f"machine (for testing). Needs {cluster.INSTALL}.")
@old_spelling("--dry-run", "dry_run", is_flag=True)  # it is `labctl plan`
@seed_option
@scale_option
@click.option("--quiet", "-q", is_flag=True,
              help="Print only errors (each failed point) and the last line, no progress.")
@store_failures
def sweep_command(file: str | None, db: str, resume: str | None, retry_failed: bool,
                  cluster_spec: cluster.Spec | None, dry_run: bool, seed: int | None, scale: str,
                  quiet: bool) -> None:
    """Run an experiment FILE (a path, or the name of an experiment labctl ships: see `labctl
    experiments`): every point in its own worker process, every sample stored the moment it
    exists. `--resume RUN` finishes an interrupted run without redoing its samples. `--cluster`
    runs the points on a Dask cluster; the samples come back here."""
    if file is None and resume is None:
        fail("sweep: give an experiment FILE, or --resume RUN (FILE may be the name of an "
             "experiment labctl ships: `labctl experiments`)", EXIT_USAGE)
    if retry_failed and resume is None:
        fail("sweep: --retry-failed goes with --resume RUN", EXIT_USAGE)
    if resume is not None and (scale != "default" or dry_run or seed is not None):
        option = "--scale" if scale != "default" else "--dry-run" if dry_run else "--seed"
        fail(f"sweep: {option} goes with an experiment FILE; a resumed run keeps its own points and "
             "order", EXIT_USAGE)
    plan = load_plan(file, seed, scale) if resume is None else None
    if dry_run:
        print_plan_of(plan, db)
        stdout.print("dry run: nothing was run (`labctl plan` shows the same)")
        return
    request = sweeping.Request(db, plan, resume, file, retry_failed, quiet=quiet)
    if cluster_spec is None:
        _judge(sweeping.sweep(request, runner.LocalBackend()))
        return
    # Connected before the store is touched: a cluster that cannot be had writes nothing.
    if not quiet:
        stderr.print(f"[dim]{safe(cluster.connecting(cluster_spec))}[/dim]")
    try:
        backend = cluster.connect(cluster_spec)
    except cluster.ClusterError as error:
        fail(str(error), error.code)
    with backend:
        if not quiet:
            stdout.print(safe(backend.summary))
        _judge(sweeping.sweep(sweeping.Request(db, plan, resume, file, retry_failed, cluster_spec.text,
                                               tuple(backend.warnings), quiet), backend))


def _judge(swept: sweeping.Swept) -> None:
    """A sweep whose points failed fails the command (each failure was printed as it came)."""
    if swept.points_failed:
        fail(f"{swept.points_failed} of {swept.points} points failed (above); the rest is stored", EXIT_FAILED)

command = sweep_command
