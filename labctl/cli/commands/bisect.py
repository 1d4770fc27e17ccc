"""`labctl bisect GOOD BAD KERNEL`: the first commit where a point's figure moves (labctl.history.bisect)."""

from __future__ import annotations

from pathlib import Path

import click

from labctl.cli.commands.options import IntRange, cache_option, percent, repo_option
from labctl.cli.console import EXIT_FAILED, EXIT_USAGE, fail, safe, stdout
from labctl.history import bisect, builds
from labctl.vocabulary import metrics


@click.command("bisect", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("good")
@click.argument("bad")
@click.argument("kernel")
@click.option("--measure", type=click.Choice([metrics.INSTRUCTIONS, metrics.TIME]),
              default=metrics.INSTRUCTIONS, show_default=True,
              help="instructions: exact verdicts (callgrind); time: as good as --threshold is wide "
                   "against the samples' spread, which is printed.")
@click.option("--threshold", default=str(bisect.THRESHOLD), show_default=True, metavar="PCT",
              callback=percent, help="A commit moved when its median is more than PCT percent from GOOD's.")
@click.option("--repeats", default=3, show_default=True, type=IntRange(1, 100),
              help="Samples of each commit measured.")
@repo_option
@cache_option
@click.pass_context
def bisect_command(ctx: click.Context, good: str, bad: str, kernel: str, measure: str,
                   threshold: float, repeats: int, repo: str, cache: str | None) -> None:
    """Find the first commit after GOOD, up to BAD, where KERNEL (its parameters follow as
    --name value, as `labctl run` takes them) moves by more than --threshold percent from
    GOOD, measuring at most ceil(log2 N) + 1 of the N commits (each built once, cached); then
    name the functions whose own instruction counts moved in it."""
    if threshold == 0:
        fail("bisect: --threshold must be above 0 (every commit would move)", EXIT_USAGE)
    try:
        store = builds.Cache(Path(repo), Path(cache) if cache else None)
        result = bisect.run(store.repo, good, bad, kernel, list(ctx.args), store, measure, repeats,
                            threshold, say=lambda line: stdout.print(safe(line)))
    except (bisect.BisectError, builds.BuildError) as error:
        fail(f"bisect: {error}", EXIT_USAGE if isinstance(error, bisect.BisectError) else EXIT_FAILED)
    built = sum(p.built for p in result.probes)
    stdout.print(f"{len(result.probes)} commits measured of {result.commits} (bound "
                 f"ceil(log2 {result.commits}) + 1 = {result.bound}), {built} built, "
                 f"{len(result.probes) - built} from the cache")
    if result.first is None:
        stdout.print(f"no commit moves {kernel} by more than {threshold:g}% from GOOD "
                     f"({result.good.median:,.0f}) up to {result.bad[:10]}")
        return
    first, parent = result.first, result.parent
    change = (first.median / result.good.median - 1) * 100
    stdout.print(f"first commit that moves it: {first.sha} {safe(first.subject)}\n"
                 f"  {parent.median:,.0f} at {parent.sha[:10]} -> {first.median:,.0f} "
                 f"({change:+.3f}% from GOOD)")
    if result.unmeasured:
        stdout.print("  or one of the commits before it that do not build: "
                     + ", ".join(sha[:10] for sha in result.unmeasured))
    if result.functions:
        stdout.print("functions whose own instruction counts moved most:")
        for name, before, after in result.functions:
            stdout.print(f"  {after - before:+14,d}  {before:>14,d} -> {after:>14,d}  {safe(name)[:100]}")


command = bisect_command
