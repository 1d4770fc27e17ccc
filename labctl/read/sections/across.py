"""The report's sections across the run's kernels on one machine: the suite's groups, the
runtimes side by side, the distance to the machine's floors, and what each workload is (its
fingerprint)."""

from __future__ import annotations

import math

import pandas as pd

from labctl.read import analysis
from labctl.read.analysis import (AXES, format_axis, label, params_of, runtime_ranking, runtime_suite, suite_summary,
                                  varying)
from labctl.read.sections.data import Machine, ReportData
from labctl.read.sections.markdown import assignments, blocks, named, title
from labctl.vocabulary.schema import OURS, RUNTIME
from labctl.vocabulary.text import markdown_table, printable, show


def suite(run: ReportData, machine: Machine) -> list[str]:
    """Per group of the experiment's kernels (`group` of a grid): where two runtimes or more ran
    it, the runtimes ranked at each thread count (analysis.runtime_suite); then each
    configuration's geometric mean over the group's benchmarks of its median over the best one's
    (analysis.suite_summary)."""
    lines = []
    ranked = runtime_suite(machine.timed_views(), run.catalogue.groups)
    for group in suite_summary(machine.timed_views(), run.catalogue.groups):
        lines += blocks(f"### {printable(group.name)}",
                        f"Benchmarks: {', '.join(printable(b) for b in group.benchmarks)}.")
        for at in (r for r in ranked if r.group == group.name):
            places = _places(at.table["within_noise"])
            rows = [[places[i], row["runtime"], f"{row['geomean']:.2f}x", f"{row['ran']} of {len(at.benchmarks)}",
                     "-" if math.isnan(row["busy"]) else f"{row['busy']:.2f} of {at.threads}",
                     f"{row['worst']:.2f}x ({row['worst_at']})"]
                    for i, (_, row) in enumerate(at.table.iterrows())]
            lines += blocks(f"Runtimes at {at.threads} thread{'s' * (at.threads > 1)}:",
                            markdown_table(["rank", "runtime", "geomean x best", "benchmarks", "busy threads",
                                            "worst"], rows, {0, 2}))
        rows = [[place, row["configuration"], f"{row['geomean']:.2f}x", f"{row['ran']} of {len(group.benchmarks)}",
                 f"{row['worst']:.2f}x ({row['worst_at']})"]
                for place, (_, row) in enumerate(group.table.iterrows(), 1)]
        lines += blocks(*(["Configurations:"] if any(r.group == group.name for r in ranked) else []),
                        markdown_table(["rank", "configuration", "geomean x best", "benchmarks", "worst"],
                                       rows, {0, 2}))
    if not lines:
        return []
    return blocks(title("Across the suite", machine.on),
                  "Per group of the experiment's kernels, first the runtimes, at each thread count two "
                  "or more of them ran: each runtime stands for its best configuration on each benchmark "
                  "(ours: its fastest dispatcher and settings at that thread count, one_thread at 1; "
                  "active_obj's thread per agent at none), with the geometric mean, over the benchmarks "
                  "it ran, of that median over the best runtime's (1.00x: the best on every one), how "
                  "many it ran, and its achieved parallelism (busy threads: the median over those points "
                  "of the runtime threads busy on average; the peers count none). A rank marked `~k` is "
                  "not told apart from rank k above it: their geometric means differ by less than the "
                  "95% intervals of the medians behind them. Then each configuration "
                  "(runtime, dispatcher, its settings, threads) with the geometric mean, over the group's "
                  "benchmarks it ran, of its median time over the best configuration's median on that "
                  "benchmark. In both, those that ran every benchmark of the group come first.") + lines


def _places(within_noise: pd.Series) -> list[str]:
    """Ranks 1, 2, ...; one within noise of the rank above it is `3 ~2` (a run of such points at
    the first of them: `4 ~2` where 3 was within noise of 2 and 4 of 3)."""
    places, first = [], 1
    for place, tied in enumerate(within_noise.fillna(False).astype(bool), 1):
        if not tied:
            first = place
        places.append(f"{place} ~{first}" if tied else str(place))
    return places


def runtimes(run: ReportData, machine: Machine) -> list[str]:
    """Each runtime's best point for the same work and settings, fastest first
    (analysis.runtime_ranking)."""
    rows, marked = [], 0
    for kernel, (metric, table) in machine.timed_views().items():
        if run.catalogue.open_loop(kernel):
            continue  # its time is its schedule's: runtimes are ranked at equal load by latency_under_load
        vary = varying(table, kernel)
        configuring = {p.name for p in params_of(table, kernel) if p.configuration}  # the work is the setting's
        for setting, best in runtime_ranking(table, kernel, metric):
            own = [n for n in vary if n in configuring and n not in setting and n != RUNTIME]
            serial = bool(best.get("underused", pd.Series(False, index=best.index)).fillna(False).any())
            for place, (_, point) in enumerate(best.iterrows(), 1):
                ours = "" if math.isnan(point["ours"]) or point[RUNTIME] == OURS else f"{point['ours']:.3g}"
                how = label(point, own) or "-"
                if point.get("underused", False):
                    how += f" (**ran on {point['busy']:.2f} of {show(point['threads'])} threads**)"
                rows.append([kernel, setting or "-", place, point[RUNTIME], how,
                             metric.format(point["median"]), f"{point['ratio']:.2f}x", ours])
            marked += serial
    if not rows:
        return []
    return blocks(title("Runtimes side by side", machine.on),
                  "Each runtime's best point for the same work and the same parameters that every runtime "
                  "takes (threads: our pool's, CAF's scheduler threads, Go's GOMAXPROCS, Erlang's "
                  "schedulers, GHC's capabilities, Boost.Fiber's scheduler threads), fastest first. `x fastest`: "
                  "its median over the fastest one's, in time; `labctl / it`: our time over its time "
                  "(below 1, ours is faster).",
                  *([f"**In {marked} of these settings our best point ran on fewer threads than given** "
                     "(marked): it is set against runtimes whose threads may all have worked, so the "
                     "comparison is of one thread against several, not of the threads the setting names."]
                    if marked else []),
                  markdown_table(["kernel", "setting", "rank", "runtime", "its best configuration", "median",
                                  "x fastest", "labctl / it"], rows, {2, 5, 6, 7}))


def floors(run: ReportData, machine: Machine) -> list[str]:
    """Each figure that a floor kernel of this run bounds, as a multiple of that floor: a floor
    bounds the clock's figures of its own machine only."""
    distances = analysis.floor_distances(machine.timed)
    if not distances:
        return []
    lines = blocks(title("Distance to the machine's floor", machine.on),
                   "The floor kernels of this run measure limits of this machine, not of the runtime (a cache "
                   "line bounced between two threads, a futex wake-up, an actor loop with nothing around it). "
                   "Each figure a floor bounds is given as a multiple of it: its median over the floor's in "
                   "time, the floor's over its median in throughput; the floor is the best median of the "
                   "floor kernel here. 1.0x is the floor; below 1x a point does not do what the floor "
                   "measures (a round trip that never leaves its thread).")
    for distance in distances:
        floor, metric = distance.floor, distance.metric
        where = f" (points with {assignments(floor.where)})" if floor.where else ""
        floor_point = f" {distance.floor_point}" if distance.floor_point else ""
        vary = varying(distance.points, floor.kernel)
        rows = [[label(point, vary) or "one point", point["n"], metric.format(point["median"]),
                 f"{point['multiple']:.2f}x {printable(floor.name)}"]
                for _, point in distance.points.sort_values("multiple").iterrows()]
        lines += blocks(printable(f"### {floor.kernel} `{floor.metric}`: {floor.name}"),
                        printable(f"Floor: `{distance.floor_kernel}`{floor_point} `{floor.floor_metric}` = "
                                  f"{metric.format(distance.floor_value)}{where}."),
                        markdown_table(["configuration", "n", f"median {metric.words}", "distance"], rows, {1, 2}))
    return lines


def fingerprints(run: ReportData, machine: Machine) -> list[str]:
    """What each point's workload is, from the runtime's counts of its phase
    (analysis.fingerprints): the groups of points that behave alike, each kernel's nearest other
    kernel, and every point's fingerprint."""
    prints = analysis.fingerprints(machine.samples)
    if prints is None:
        return []
    groups = []
    for letter, kernels in prints.groups.items():
        members = prints.table[prints.table["group"] == letter]
        groups.append([letter, printable(", ".join(f"{k} ({n})" for k, n in kernels.items())),
                       *(format_axis(axis, members[axis.name].median()) for axis in AXES)])
    nearest = []
    for (kernel, scenario), part in prints.table.groupby(["kernel", "scenario"], sort=False):
        near = prints.nearest(str(kernel), str(scenario))
        nearest.append([named(kernel, scenario), ", ".join(sorted(set(part["group"]))),
                        "-" if near is None else printable(near[0]), "-" if near is None else f"{near[1]:.2f}"])
    rows = [[row["group"], named(row["kernel"], row["scenario"]), printable(row["configuration"]),
             *(format_axis(axis, row[axis.name]) for axis in AXES)]
            for _, row in prints.table.sort_values(["group", "kernel"], kind="stable").iterrows()]
    headers = [axis.header for axis in AXES]
    return blocks(title("Fingerprints", machine.on),
                  "What each point's workload is, beside how fast it ran, from what the runtime counted of "
                  "its phase (medians over its samples): " + "; ".join(f"{a.header}: {a.words}" for a in AXES)
                  + ". Points whose fingerprints lie close together share a group (Ward's clustering of the "
                  "axes, standardised, rates and takes in log10): a kernel in another's group stands in for "
                  "it. `labctl fingerprint` prints the same.",
                  markdown_table(["group", "kernels (points)", *headers], groups, set(range(2, 2 + len(AXES)))),
                  markdown_table(["kernel and scenario", "its groups", "nearest other kernel", "distance"],
                                 nearest, {3}),
                  "<details><summary>Every point's fingerprint</summary>",
                  markdown_table(["group", "kernel", "point", *headers], rows, set(range(3, 3 + len(AXES)))),
                  "</details>")
