"""The report's sections against threads: each kernel's speed-up over its own one-thread time
and over its sequential program, and the turns of a workload that runs in turns (the chat)."""

from __future__ import annotations

import math

from labctl.read import analysis
from labctl.read.analysis import TURN_FIGURES, Scaling
from labctl.read.sections.data import Machine, ReportData
from labctl.read.sections.markdown import blocks, named, or_dash, share, times, title
from labctl.vocabulary import metrics
from labctl.vocabulary.text import markdown_table, printable

TIME = metrics.lookup("elapsed_ns")


def scaling(run: ReportData, machine: Machine) -> list[str]:
    """Time against threads for each kernel that times its sequential program (analysis.scaling):
    a summary row per benchmark at its largest thread count, then each benchmark's pools."""
    found = analysis.scaling(machine.timed)
    if not found:
        return []
    return [*blocks(
        title("Speed-up against threads", machine.on),
        "For each kernel that times its sequential program (the same algorithm on the same input "
        "in one thread, without actors, after the phase: its `sequential_ns`), each pool's median "
        "time against its threads. Speed-up: the same configuration's median at one thread over "
        "its median at N; efficiency: speed-up / N; x sequential: the sequential program's median "
        "over the configuration's (above 1.00x, faster than the program without actors). The "
        "summary gives each benchmark's fastest configuration at its largest thread count, and "
        "the largest speed-up any configuration reached there. Where a benchmark's runs handled "
        "different numbers of messages (its work depends on the schedule), its times are per "
        "message, so that a speed-up is a ratio of like work, and it has no x sequential.",
        markdown_table(["benchmark", "sequential", "fastest at most threads", "its time at 1", "its time",
                        "speed-up", "efficiency", "x sequential", "largest speed-up"],
                       [_fastest(one) for one in found], {1, 3, 4, 5, 6, 7})),
        *(line for one in found for line in _pools(one))]


def _fastest(one: Scaling) -> list[str]:
    """A benchmark's summary row: its fastest configuration at its largest thread count."""
    most = one.threads[-1]
    best = one.best(most)
    at_one = one.table[(one.table["configuration"] == best["configuration"]) & (one.table["threads"] == 1)]
    at_most = one.table[(one.table["threads"] == most) & one.table["speedup"].notna()]
    steepest = at_most.loc[at_most["speedup"].idxmax()] if not at_most.empty else None
    return [named(one.kernel, one.scenario) + (" (per message)" if one.work_varies else ""),
            or_dash(one.sequential, TIME.format),
            printable(best["configuration"]), TIME.format(at_one["median"].iloc[0]) if not at_one.empty else "-",
            f"{TIME.format(best['median'])} at {most}", times(best["speedup"]), share(best["efficiency"]),
            times(best["over_sequential"]),
            "-" if steepest is None else f"{times(steepest['speedup'])} ({printable(steepest['configuration'])})"]


def _pools(one: Scaling) -> list[str]:
    """A benchmark's configurations at each thread count: the median, and beyond one thread its
    speed-up and efficiency."""
    rows = []
    for name, part in one.table.groupby("configuration", sort=False):
        cells = []
        for threads in one.threads:
            row = part[part["threads"] == threads]
            if row.empty:
                cells.append("-")
                continue
            row = row.iloc[0]
            median = TIME.format(row["median"]) + (" (noisy)" if row["noisy"] else "")
            cells.append(median if threads == 1 else f"{median}: {times(row['speedup'])}, {share(row['efficiency'])}")
        rows.append([printable(name), *cells, times(part["over_sequential"].max())])
    headers = ["configuration", *(f"{t} thread{'s' if t > 1 else ''}" for t in one.threads), "best x sequential"]
    if one.work_varies:
        least, most = one.work_varies
        basis = (f"Its runs handled from {least:,.0f} to {most:,.0f} messages (the work depends on "
                 "the schedule): each time is per message, and the sequential program, whose work "
                 "is not counted in messages, is not set against them.")
    else:
        basis = f"The sequential program: {or_dash(one.sequential, TIME.format)}."
    return blocks(f"### {named(one.kernel, one.scenario)}", basis,
                  markdown_table(headers, rows, set(range(1, len(one.threads) + 2))))


def turns(run: ReportData, machine: Machine) -> list[str]:
    """For each kernel that runs in turns (analysis.turns: the chat), per scenario, its turns'
    durations (median, p99, max) and quality of service against threads, and its action counts."""
    found = analysis.turns(machine.timed)
    if not found:
        return []
    lines = blocks(title("Turns against threads", machine.on),
                   "For each scenario of a workload that runs in turns, each configuration's turns at each "
                   "thread count: the median, 99th percentile and longest turn over every turn of every "
                   "iteration of a run, and the quality of service (qos: the median over turns of a turn's "
                   "spread across the run's iterations; lower is steadier), each the median over the point's "
                   "runs; then what the actors did, counted.")
    for one in found:
        rows = [[printable(name), int(row["threads"]), *(or_dash(row[f], TIME.format) for f in TURN_FIGURES)]
                for name, part in one.table.groupby("configuration", sort=False) for _, row in part.iterrows()]
        lines += blocks(f"### {named(one.kernel, one.scenario)}",
                        markdown_table(["configuration", "threads", "median turn", "p99 turn", "longest turn",
                                        "qos"], rows, {1, 2, 3, 4, 5}))
        counts = ", ".join(f"{name} {value:,.0f}" for name, value in one.actions.items() if not math.isnan(value))
        if counts:
            lines += blocks(f"Actions (median per run): {counts}.")
    return lines
