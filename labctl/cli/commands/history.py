"""`labctl history`: an experiment measured on each commit of a repository, and the changes
found in its series (labctl.history, labctl.history.builds, labctl.read.changes)."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path

import click

from labctl import history
from labctl.cli.commands.options import IntRange, cache_option, db_option, repo_option, store_failures
from labctl.cli.console import EXIT_FAILED, EXIT_USAGE, fail, open_store, safe, stdout
from labctl.history import builds
from labctl.plan import experiment
from labctl.read import series
from labctl.store import StoreError
from labctl.vocabulary.text import printable, shorten


@click.command("history")
@click.argument("file", metavar="EXPERIMENT")
@click.option("--commits", "spec", metavar="RANGE",
              help="The commits to measure: a range (HEAD~20..HEAD, the first-parent line), a list "
                   "(a,b,c) or one commit. Without it, the stored history is shown, nothing is run.")
@click.option("--every", default=1, show_default=True, type=IntRange(1, 10_000),
              help="Measure every Nth commit of RANGE, counted from the newest (always measured).")
@repo_option
@cache_option
@click.option("--rebuild", is_flag=True,
              help="Build and measure again commits the cache or the store already holds.")
@db_option
@store_failures
def history_command(file: str, spec: str | None, every: int, repo: str, cache: str | None,
                    rebuild: bool, db: str) -> None:
    """Measure EXPERIMENT (a file or a shipped name, such as gate) on each commit of --commits,
    each with the extension built at that commit (cached by what it is built from), into --db;
    then find the changes of every point's series. Run again, it measures only what is missing:
    an interrupted history resumes."""
    if spec is not None:
        _measure(file, spec, every, Path(repo), cache, rebuild, db)
    _show_changes(file, db)


def _measure(file: str, spec: str, every: int, repo: Path, cache: str | None, rebuild: bool, db: str) -> None:
    try:
        path = experiment.locate(file)
        open_store(db, create=True).close()  # a store that cannot be one is refused before a build
        store = builds.Cache(repo, Path(cache) if cache else None)
        shas = history.commits(store.repo, spec, every)
    except (experiment.ExperimentError, history.HistoryError, builds.BuildError, StoreError) as error:
        fail(f"history: {error}", getattr(error, "code", EXIT_USAGE))
    stdout.print(f"history of {safe(path.name)} over {len(shas)} commits of {safe(str(store.repo))} "
                 f"-> {safe(db)} (builds in {safe(str(store.folder))})")
    try:
        steps = history.measure(store.repo, path, shas, db, store, rebuild, say=lambda line: stdout.print(safe(line)))
    except builds.BuildError as error:
        fail(f"history: {error}", EXIT_FAILED)
    except history.HistoryError as error:
        fail(f"history: {error}: {shlex.join(['labctl', 'history', file, '--commits', spec, '--db', db])}",
             EXIT_FAILED)
    made = [s for s in steps if s.outcome not in ("already measured",) and not s.cached]
    stdout.print(f"{len(steps)} commits: {sum(s.outcome in ('measured', 'resumed') for s in steps)} measured, "
                 f"{sum(s.outcome == 'already measured' for s in steps)} already measured, "
                 f"{sum(s.outcome == 'does not build' for s in steps)} not building, "
                 f"{sum(s.outcome == 'not planned' for s in steps)} unable to run it; "
                 f"builds: {len(made)} made in {sum(s.build_s for s in made):.0f} s, "
                 f"{sum(s.cached for s in steps)} cached; sweeps: {sum(s.sweep_s for s in steps):.0f} s")


def _show_changes(file: str, db: str) -> None:
    name = _name(file)
    try:
        found = series.changes(db, name)
    except StoreError as error:
        fail(str(error), error.code)
    if found.empty:
        stdout.print(f"no changes found in the history of {safe(name)} in {safe(db)}")
        return
    stdout.print(f"changes in the history of {safe(name)}:")
    for row in found.itertuples():
        stdout.print(f"  {safe(row.label)} {row.metric}: {row.kind} of {row.change_pct:+.3f}% at "
                     f"{row.where} (confidence {row.confidence:.3f}): {safe(shorten(printable(row.subject), 60))}")


def _name(file: str) -> str:
    """The experiment's name, read without the extension: a file's own, else the name given (a
    store may hold the history of an experiment this checkout no longer has)."""
    try:
        data = tomllib.loads(experiment.locate(file).read_text(encoding="utf-8"))
    except (experiment.ExperimentError, OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return file
    name = data.get("name")
    return name if isinstance(name, str) else file


command = history_command
