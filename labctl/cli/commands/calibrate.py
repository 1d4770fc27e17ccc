"""`labctl calibrate EXPERIMENT`: the installed build measured against itself in interleaved
rounds (labctl.history.rounds), and what that says of this machine: per point, the spread between runs,
the change a comparison can detect, and how often a comparison of two runs would call identical
code different (labctl.read.compare)."""

from __future__ import annotations

import click

from labctl.cli.commands.options import IntRange, db_option, store_failures
from labctl.cli.console import EXIT_FAILED, EXIT_USAGE, fail, open_store, safe, stdout
from labctl.history import rounds
from labctl.plan import experiment
from labctl.read import compare
from labctl.vocabulary import stats, text

DEFAULT_ROUNDS = 6


@click.command("calibrate")
@click.argument("file", metavar="EXPERIMENT")
@click.option("--rounds", "count", default=DEFAULT_ROUNDS, show_default=True,
              type=IntRange(compare.MIN_ROUNDS, rounds.MAX_ROUNDS),
              help="Rounds of the A/A: each sweeps EXPERIMENT twice (A B, then B A, ...).")
@click.option("--metric", default=compare.DEFAULT_METRIC, show_default=True,
              help="The metric whose spread is reported (a sample's elapsed_ns, cpu_ns...).")
@db_option
@store_failures
def calibrate_command(file: str, count: int, metric: str, db: str) -> None:
    """Measure EXPERIMENT (a file or a shipped name) against itself on this machine: the
    installed build as A and as B in --rounds interleaved rounds, into --db. Then, for each
    point: the spread between two runs of one build, the smallest change a comparison of two
    runs (and an interleaved `labctl ab` of as many rounds) finds 80% of the time, and how many
    rounds the rank test of two runs alone calls different. `labctl compare` holds the
    comparisons of this store's runs on this kind of machine to this spread."""
    try:
        path = experiment.locate(file)
        experiment.load(path)  # its errors now, not from the first round's sweep
    except experiment.ExperimentError as error:
        fail(f"calibrate: {error}", EXIT_USAGE)
    open_store(db, create=True).close()
    same = rounds.Build(rounds.INSTALLED)
    stdout.print(f"A/A of {safe(path.name)}: the installed build against itself, {count} rounds -> {safe(db)}")
    try:
        group = rounds.measure(path, db, same, same, count, say=lambda line: stdout.print(safe(line)))
    except rounds.RoundsError as error:
        fail(f"calibrate: {error}", EXIT_FAILED)
    stdout.print(report(db, group, metric), markup=False, highlight=False)


def report(db: str, group: str, metric: str) -> str:
    """The calibration of group as markdown: a row per point."""
    rows, ranks_total, held_total, tested = [], 0, 0, 0
    points = compare.calibrated_points(db, group, metric)
    for point in points:
        noise = point.noise
        ranks, held = point.false_calls()
        ranks_total, held_total, tested = ranks_total + ranks, held_total + held, tested + noise.rounds
        interleaved = noise.spread / noise.rounds ** 0.5
        rows.append([text.cell(_name(point, points)), str(noise.rounds), text.percent(noise.spread * 100),
                     "±" + text.percent(stats.detectable(noise.scale_for_one_run, noise.rounds - 1)),
                     "±" + text.percent(stats.detectable(interleaved, noise.rounds - 1)),
                     f"{ranks}/{noise.rounds}", f"{held}/{noise.rounds}"])
    if not rows:
        return f"No point of group {group} has {metric} on both sides: nothing calibrated.\n"
    head = ["point", "rounds", "spread", "detectable, two runs", "detectable, ab",
            "rank test: false", "calibrated: false"]
    return "\n".join([
        f"## A/A calibration {group}: {metric}", "",
        text.markdown_table(head, rows), "",
        f"spread: the standard deviation, between rounds, of the log ratio of the two sides' medians "
        f"(one build against itself). detectable: the change a test finds 80% of the time at 5%, "
        f"comparing two runs against this spread, or the rounds of `labctl ab`. false: rounds (A "
        f"against B, one build) called different at 5% without adjustment, by the rank test of the "
        f"two runs' samples alone (what an uncalibrated `labctl compare` does) and by the test "
        f"against the spread of the other rounds. Over all points: rank test {ranks_total}/{tested} "
        f"({ranks_total / tested:.0%}), calibrated {held_total}/{tested} ({held_total / tested:.0%}); "
        f"the nominal rate is 5%.", ""])


def _name(point: compare.Rounds, points: list[compare.Rounds]) -> str:
    """A point by its kernel and the parameters that vary among the kernel's points."""
    same = [p.params for p in points if p.kernel == point.kernel]
    varying = {k: v for k, v in point.params.items() if any(other.get(k) != v for other in same)}
    return compare.label(point.kernel, varying)


command = calibrate_command
