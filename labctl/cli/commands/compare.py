"""`labctl compare A B`: two runs point by point, a verdict on each (labctl.read.compare). Reads
the stores only."""

from __future__ import annotations

import json

import click

from labctl.cli.commands.options import db_option, force_option, output_option, percent, store_failures
from labctl.cli.console import EXIT_FAILED, EXIT_USAGE, fail, open_store, write_output
from labctl.store import StoreError


@click.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@db_option
@click.option("--db-b", type=click.Path(), help="The store of RUN_B, when it is not --db.")
@click.option("--metric", default="elapsed_ns", show_default=True,
              help="A sample's elapsed_ns, msgs_per_s or cpu_ns, or a kernel metric "
                   "(round_trip_p50_ns, ...): *_ns lower is better, others higher.")
@click.option("--ignore", multiple=True, metavar="PARAM",
              help="Leave a parameter out of the matching of points, e.g. to compare spin_us=0 "
                   "with spin_us=20 (repeatable).")
@click.option("--min-change", default="0", show_default=True, metavar="PCT", callback=percent,
              help="A significant change smaller than PCT percent is reported as no change.")
@click.option("--fail-on-regression", metavar="PCT", callback=percent,
              help="Exit 1 if a point of B is significantly slower by more than PCT percent.")
@click.option("--across-machines", is_flag=True,
              help="Match a point with the same point of the other run whatever machine each ran "
                   "on (by default only on the same kind of machine).")
@output_option("Also write the markdown to FILE.")
@force_option
@click.option("--json", "as_json", is_flag=True, help="The comparison as JSON on stdout.")
@store_failures
def compare_command(run_a: str, run_b: str, db: str, db_b: str | None, metric: str,
                    ignore: tuple[str, ...], min_change: float, fail_on_regression: float | None,
                    across_machines: bool, output: str | None, force: bool, as_json: bool) -> None:
    """Compare RUN_B with RUN_A (ids or 'latest') point by point: the ratio of medians with its
    interval, and a verdict from a rank test (none below 3 samples a side). A markdown table."""
    from labctl.read import compare

    stores = [db, db_b or db]
    if output is not None:
        write_output(output, stores, force)
    sides = []
    for name, run, store in (("RUN_A", run_a, db), ("RUN_B", run_b, db_b or db)):
        open_store(store, create=False).close()
        try:
            sides.append(compare.load(store, run))
        except StoreError as error:
            fail(f"compare: {name}: {error}", error.code)
    try:
        result = compare.compare(*sides, metric=metric, ignore=ignore, min_change=min_change,
                                 across_machines=across_machines)
    except compare.CompareError as error:
        fail(f"compare: {error}", EXIT_USAGE)
    markdown = compare.markdown(result)
    if output is not None:
        write_output(output, stores, force, lambda path: path.write_text(markdown, encoding="utf-8"))
    click.echo(json.dumps(compare.to_json(result), indent=1) if as_json else markdown, nl=as_json)
    if fail_on_regression is not None:
        regressions = result.regressions(fail_on_regression)
        if regressions:
            fail("\n".join(f"regression past {fail_on_regression:g}%: "
                           f"{compare.label(row.kernel, row.params_b)}: {row.difference.text}, "
                           f"{row.difference.change:+.1f}% {metric}" for row in regressions), EXIT_FAILED)

command = compare_command
