"""`labctl ab EXPERIMENT A B`: two builds measured in interleaved rounds, then compared round by
round (labctl.history.rounds, labctl.read.compare)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from labctl import history
from labctl.cli.commands.options import IntRange, cache_option, db_option, percent, repo_option, store_failures
from labctl.cli.console import EXIT_FAILED, EXIT_USAGE, fail, open_store, safe, stdout
from labctl.history import builds, rounds
from labctl.plan import experiment
from labctl.read import compare


@click.command("ab")
@click.argument("file", metavar="EXPERIMENT")
@click.argument("build_a", metavar="A")
@click.argument("build_b", metavar="B")
@click.option("--rounds", "count", default=6, show_default=True,
              type=IntRange(compare.MIN_ROUNDS, rounds.MAX_ROUNDS),
              help="Rounds: each sweeps EXPERIMENT on both builds (A B, then B A, ...).")
@click.option("--metric", default=compare.DEFAULT_METRIC, show_default=True,
              help="The metric compared (as labctl compare takes it).")
@click.option("--fail-on-regression", metavar="PCT", callback=percent,
              help="Exit 1 if a point of B is significantly slower by more than PCT percent.")
@repo_option
@cache_option
@db_option
@store_failures
def ab_command(file: str, build_a: str, build_b: str, count: int, metric: str,
               fail_on_regression: float | None, repo: str, cache: str | None, db: str) -> None:
    """Measure EXPERIMENT (a file or a shipped name) on build A and build B in --rounds
    interleaved rounds into --db, and compare them round by round: what drifts on the machine
    between rounds moves both alike. A and B are commits of --repo (each built once, cached as
    labctl history builds them) or `installed`, the extension this labctl runs with."""
    try:
        path = experiment.locate(file)
        if rounds.INSTALLED in (build_a, build_b):
            # Its errors now, not from the first round's sweep after the builds. (Against this
            # extension's kernels: a commit's may differ, so two commits are not checked here.)
            experiment.load(path)
    except experiment.ExperimentError as error:
        fail(f"ab: {error}", EXIT_USAGE)
    open_store(db, create=True).close()
    try:
        sides = [_side(name, spec, repo, cache) for name, spec in (("A", build_a), ("B", build_b))]
    except (history.HistoryError, builds.BuildError) as error:
        fail(f"ab: {error}", EXIT_USAGE if isinstance(error, history.HistoryError) else EXIT_FAILED)
    stdout.print(f"ab of {safe(path.name)}: A {safe(sides[0].label)}, B {safe(sides[1].label)}, "
                 f"{count} rounds -> {safe(db)}")
    try:
        group = rounds.measure(path, db, *sides, count, say=lambda line: stdout.print(safe(line)))
        run_a, run_b = rounds.first_runs(db, group)
        result = compare.compare(compare.load(db, run_a), compare.load(db, run_b), metric=metric)
    except rounds.RoundsError as error:
        fail(f"ab: {error}", EXIT_FAILED)
    except compare.CompareError as error:
        fail(f"ab: {error}", EXIT_USAGE)
    stdout.print(compare.markdown(result), markup=False, highlight=False)
    if fail_on_regression is not None and (found := result.regressions(fail_on_regression)):
        fail("\n".join(f"regression past {fail_on_regression:g}%: {compare.label(row.kernel, row.params_b)}: "
                       f"{row.difference.text}" for row in found), EXIT_FAILED)


def _side(name: str, spec: str, repo: str, cache: str | None) -> rounds.Build:
    """A side: the installed extension, or a commit's, built (or taken from the cache)."""
    if spec == rounds.INSTALLED:
        return rounds.Build(rounds.INSTALLED)
    store = builds.Cache(Path(repo), Path(cache) if cache else None)
    shas = history.commits(store.repo, spec)
    if len(shas) != 1:
        raise history.HistoryError(f"{name}: {spec} names {len(shas)} commits; give one commit or `installed`")
    built = store.build(shas[0], starting=lambda: stdout.print(f"{name}: building {shas[0][:10]}"))
    if not built.ok:
        raise builds.BuildError(f"{name}: commit {shas[0][:10]} does not build: {built.error} (log: {built.log})")
    commit = history.describe(store.repo, shas[0], built.key)
    return rounds.Build(shas[0][:10], {history.NATIVE_ENV: str(built.path), history.COMMIT_ENV: json.dumps(commit)})


command = ab_command
