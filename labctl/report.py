"""`labctl report`: a run as a folder holding report.md and its figures, readable on GitHub as is.

For each kernel: a figure of its metric against the numeric parameter that varies (threads first),
one line per configuration with its 95% interval as a band; a heat map where two numeric parameters
vary; bars where none does; a table of medians with their spread, noisy points flagged. Then the
failed points with their reasons, the machine and the command to rerun, and, where the experiment
carries published figures, those figures beside ours, compared as ratios and rankings.

Everything is read from the store (labctl.results and the run's catalogue): a report needs no
extension. The analysis is labctl.analysis', the figures labctl.figures', the published figures
labctl.references'.
"""

from __future__ import annotations

import hashlib
import json
import math
import shlex
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from labctl import __version__, files, metrics, results, stats
from labctl.analysis import (
    AXES,
    SHORT,
    TURN_FIGURES,
    Metric,
    _key,
    _with_attrs,
    axes_for,
    counted,
    fingerprints,
    fixed,
    floor_distances,
    format_axis,
    heatmap_panels,
    kernel_metric,
    label,
    machines,
    point_table,
    runtime_ranking,
    scaling,
    scenarios,
    sort_key,
    suite_summary,
    turns,
    varying,
)
from labctl.figures import file_name, plot_bars, plot_heatmap, plot_lines, plot_reference, save
from labctl.references import (
    TIE_RATIO,
    Comparison,
    Match,
    compare_reference,
    in_unit,
    judge_claim,
    rank,
    ranks,
)
from labctl.schema import OURS, RUNTIME, STATISTICS, Catalogue, Figure
from labctl.store import RunRow, Store, now
from labctl.text import (
    machine_line,
    markdown_table,
    number,
    printable,
    show,
)


@dataclass
class Written:
    folder: Path
    figures: list[str]


def write(db: str | Path, run: int | str, out: str | Path | None = None,
          command: str | None = None, option: str = "--output") -> Written:
    """Writes the report of `run` into the folder `out` (default reports/<experiment name>) and
    returns what it wrote. The folder is built beside its destination and renamed into place, so
    an interrupted report leaves the previous one whole; a folder that is not a report labctl
    wrote of this experiment, or holds anything but the files its marker lists, unchanged
    (files.check_report_folder), is refused untouched. `option` is how the user named the folder
    (--output, --out), for the errors. Raises files.OutputError or StoreError."""
    with Store(db, create=False) as store:
        run_id = store.resolve_run(run)
        row = store.run(run_id)
    out = Path(out) if out is not None else Path("reports") / slug(row.name)

    def check() -> None:
        files.check_report_folder(option, out, row.name, stores=[Path(db)])

    check()
    samples = results.load(db, run_id)
    points = results.points(db, run_id)
    catalogue = results.catalogue_of(samples)
    figures: list[str] = []

    def fill(staging: Path) -> None:
        (staging / "figures").mkdir()
        verdicts: dict[str, list[dict]] = {"references": [], "claims": []}
        text = _markdown(row, catalogue, samples, points, staging, figures, db, command, verdicts)
        (staging / "report.md").write_text(text, encoding="utf-8")
        # The verdicts as data, for what quotes them (docs/studies.md, checked by a test).
        (staging / VERDICTS_FILE).write_text(
            json.dumps({"experiment": row.name, "run": row.id, **verdicts}, indent=1) + "\n", encoding="utf-8")
        # Every file written, with its size and hash: the next report replaces this folder only
        # while it holds these and nothing else, unchanged (a user's figures/mine.png, or an edit
        # to report.md, is refused, never deleted).
        marker = {"experiment": row.name, "run": row.id, "store": str(db), "written": now(),
                  "labctl": __version__, "files": files.manifest(staging),
                  "folders": files.subfolders(staging)}
        (staging / files.REPORT_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")

    try:
        files.replace_folder(out, fill, check)
    except OSError as error:
        raise files.OutputError(f"{option} {out}: cannot write: {error.strerror or error}", code=1) from None
    return Written(out, figures)


# The verdicts of a report's references and claims, as data, beside report.md.
VERDICTS_FILE = "verdicts.json"

# A folder name's bytes are bounded (255 on Linux): a long experiment name is cut, and the cut
# one gets the hash of the whole, so the default folder always has a name the system takes, with
# room for the staging folder's suffix beside it.
SLUG_LENGTH = 100


def slug(name: str) -> str:
    """A folder name for an experiment name: its letters, digits and -_. as they are; a name that
    needs others replaced, or is longer than SLUG_LENGTH, is cut and gets a short hash of itself,
    so two names never share a folder."""
    kept = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name).strip("._")
    if kept == name and kept and len(kept) <= SLUG_LENGTH:
        return kept
    kept = kept[:SLUG_LENGTH].rstrip("._")
    return f"{kept or 'report'}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _markdown(row: RunRow, catalogue: Catalogue, samples: pd.DataFrame, points: pd.DataFrame,
              folder: Path, figures: list[str], db: str | Path, command: str | None,
              verdicts: dict[str, list[dict]]) -> str:
    machine, context = row.machine, row.context
    failed = points[points["status"] == "failed"] if not points.empty else points
    pending = points[points["status"] == "pending"] if not points.empty else points
    lines = [f"# {printable(row.name)}: run {row.id}", ""]
    if row.description:
        lines += [printable(row.description), ""]
    for study in catalogue.studies:
        lines += [f"Reproduces {printable(study.citation)}", ""]
    lines += [
        f"Experiment `{printable(row.source)}`, run {row.id}, {printable(row.status)}, started {_when(row.started_at)}"
        + (f", finished {_when(row.finished_at)}" if row.finished_at else "") + ". "
        f"{row.points_done} of {row.points} points done, {row.points_failed} failed, "
        + (f"{row.points_skipped} skipped (cannot run here), " if row.points_skipped else "") +
        f"{row.samples} samples" + _verified(samples),
        "",
    ]
    groups = machines(samples)
    lines += _machines(row, groups, points)
    for warning in row.warnings:
        lines += [f"> warning at the start of the run: {printable(warning)}", ""]
    if len(pending):
        lines += [_pending(row, len(pending), db), ""]

    # Figures from two kinds of machine are never pooled: with several, each kernel gets a
    # section, and each set of published figures a comparison, per machine (m1, m2, ...).
    several = len(groups) > 1
    # A kernel whose points were measured in more than one way gets a section per measure: a
    # time taken under valgrind is never plotted beside a native one.
    views = []  # (machine number or None, kernel, metric, point table, measure or "")
    counts = []  # beside each view: [(a count's metric, its point table)], the measures' figures
    for number_, (_, _, part) in enumerate(groups, 1):
        for kernel in dict.fromkeys(part["kernel"]):
            of_kernel = part[part["kernel"] == kernel]
            taken = list(dict.fromkeys(of_kernel["measure"]))
            for measure in taken:
                kernel_samples = of_kernel[of_kernel["measure"] == measure]
                metric = kernel_metric(kernel_samples)
                views.append((number_ if several else None, kernel, metric, point_table(kernel_samples, metric),
                              measure if len(taken) > 1 else ""))
                counts.append([(count, point_table(kernel_samples, count)) for count in counted(kernel_samples)])
    if views:
        lines += ["## Summary", "", "The best and the worst configuration of each kernel in this run "
                  "(medians; time when every run did the same work, throughput otherwise).", ""]
        summary_rows = []
        for machine, kernel, metric, table, measure in views:
            vary = varying(table, kernel)
            ordered = table.sort_values("median", ascending=metric.lower_is_better)
            best, worst = ordered.iloc[0], ordered.iloc[-1]
            spread = (worst["median"] / best["median"] if metric.lower_is_better
                      else best["median"] / worst["median"]) if best["median"] and worst["median"] else float("nan")
            summary_rows.append([*([f"m{machine}"] if several else []),
                                 kernel + (f" ({measure})" if measure else ""), len(table),
                                 f"{label(best, vary) or 'one point'}: {metric.format(best['median'])}",
                                 f"{label(worst, vary) or 'one point'}: {metric.format(worst['median'])}",
                                 f"{spread:.2f}x"])
        headers = [*(["machine"] if several else []), "kernel", "points", "best", "worst", "worst/best"]
        lines += [markdown_table(headers, summary_rows, {1 + several, 4 + several}), ""]

    lines += _measures_section(samples)
    for number_, (_, _, part) in enumerate(groups or [("", [], samples)], 1):
        number_ = number_ if several else None
        timed = {kernel: (metric, table) for machine, kernel, metric, table, measure in views
                 if machine == number_ and measure in ("", metrics.TIME)}
        lines += _suite_section(timed, catalogue.groups, _on(number_))
        lines += _scaling_section(part[part["measure"] == metrics.TIME], _on(number_))
        lines += _runtimes_section(timed, _on(number_))
        # A floor bounds the clock's figures of its own machine only.
        lines += _floors_section(part[part["measure"] == metrics.TIME], _on(number_))
        lines += _turns_section(part[part["measure"] == metrics.TIME], _on(number_))
        lines += _fingerprints_section(part, _on(number_))
    for (machine, kernel, metric, table, measure), counted_ in zip(views, counts):
        lines += _kernel_section(catalogue, kernel, metric, table, folder, figures, _on(machine), counted_,
                                 measure)

    lines += _failures(catalogue, failed)
    lines += _skipped(points[points["status"] == "skipped"] if not points.empty else points)
    for number_, (_, _, part) in enumerate(groups or [("", [], samples)], 1):
        on = _on(number_ if several else None)
        lines += _references(catalogue, part, folder, figures, verdicts["references"], on)
        lines += _claims(catalogue, part, verdicts["claims"], on)
    lines += _provenance(row, context, db, command)
    return "\n".join(lines).rstrip() + "\n"


def _verified(samples: pd.DataFrame) -> str:
    """What the samples' answers say, after their count: nothing to verify where there is none
    (every point failed, or none ran yet), never "every one verified"."""
    if samples.empty:
        return "."
    wrong = int((~samples["verified"]).sum())
    if not wrong:
        return ", every one verified against the kernel's expected answer."
    return f", **{wrong} of them with a wrong answer**."


def _pending(row: RunRow, count: int, db: str | Path) -> str:
    """The points not run yet, and what to do about them: wait while the run is running (its
    sweep is still at work: resuming it is refused), resume it otherwise."""
    if row.status == "running":
        return (f"> {count} points are not run yet: the run is still running (started "
                f"{_when(row.started_at)}); make the report again when it has ended.")
    return (f"> {count} points were not run: finish them with "
            f"`{printable(shlex.join(['labctl', 'sweep', '--resume', str(row.id), '--db', str(db)]))}`.")


def _on(machine: int | None) -> str:
    """What a section's title and figure names add for machine m<N> of several."""
    return f"m{machine}" if machine is not None else ""


def _machines(row: RunRow, groups: list[tuple[str, list[str], pd.DataFrame]],
              points: pd.DataFrame) -> list[str]:
    """The machine the points ran on; where that is not the machine the run was swept from (a
    cluster's hosts), which it was; with several, a table of them, numbered m1, m2, ..."""
    swept_from = machine_line(row.machine)
    if [machine for machine, _, _ in groups] in ([], [swept_from]):
        return [f"Machine: {printable(swept_from)}.", ""]
    if len(groups) == 1:
        machine, hosts, _ = groups[0]
        return [f"Machine: {printable(machine)} (hosts {printable(', '.join(hosts))}); swept from "
                f"{printable(row.machine.get('hostname'))}: {printable(swept_from)}.", ""]
    rows = []
    for number_, (machine, hosts, part) in enumerate(groups, 1):
        rows.append([f"m{number_}", machine, ", ".join(hosts), part["point"].nunique(), len(part)])
    return [f"The points ran on {len(groups)} kinds of machine (swept from "
            f"{printable(row.machine.get('hostname'))}): their figures are kept apart, each section "
            "names its machine.", "",
            markdown_table(["", "machine", "hosts", "points", "samples"], rows, {3, 4}), ""]


def _when(stamp: str | None) -> str:
    return printable((stamp or "")[:19].replace("T", " ")) + " UTC"


def _measures_section(samples: pd.DataFrame) -> list[str]:
    """What the run's measures counted, beside the time, and what this machine could not."""
    taken = set(samples["measure"]) - {metrics.TIME} if not samples.empty else set()
    if not taken:
        return []
    lines = ["## Measures", ""]
    if metrics.INSTRUCTIONS in taken:
        lines += ["Points measured in `instructions` ran under valgrind's callgrind, which counted "
                  "the instructions of the measured phase alone (and simulated its L1 and last-level "
                  "cache misses): the same count run after run, on a noisy machine too. Their times "
                  "were taken under valgrind, 70-200x slower than natively: read their counts, not "
                  "their times.", ""]
    if metrics.COUNTERS in taken:
        lines += ["Points measured in `counters` counted the measured phase with perf_event: the "
                  "CPU's counters (user space) and the kernel's, for every thread of the process.", ""]
    dependent = samples[samples["schedule_dependent"].fillna(False)]
    if not dependent.empty:
        lines += [f"{dependent['point'].nunique()} points are marked schedule-dependent: more than one "
                  "thread did their phase's work, so their counts change with how the threads "
                  "interleaved (a queue found empty, a thread parked and woken); they vary between "
                  "runs, less than times do.", ""]
    missing: dict[str, str] = {}
    for unsupported in samples["unsupported"]:
        for name, why in (unsupported or {}).items():
            missing.setdefault(name, why)
    if missing:
        lines += ["Counters this machine does not have (left empty, never counted as 0):", "",
                  markdown_table(["counter", "why"], [[metrics.lookup(n).words, w] for n, w in missing.items()]), ""]
    return lines


def _kernel_section(catalogue: Catalogue, kernel: str, metric: Metric, table: pd.DataFrame,
                    folder: Path, figures: list[str], machine: str = "",
                    counts: list[tuple[Metric, pd.DataFrame]] = (), measure: str = "") -> list[str]:
    """A kernel's figures (its metric, and each count its measures took), then its table; of its
    points measured in `measure` alone where it has points of more than one."""
    spec = catalogue.kernels.get(kernel)
    vary = varying(table, kernel)
    # The kernel's, its metrics' and its parameters' names come from the store: outside text.
    name, words = printable(kernel), printable(metric.words)
    lines = [f"## {name}" + (f" on {machine}" if machine else "")
             + (f", measured in {printable(measure)}" if measure else ""), ""]
    if spec is not None and spec.summary:
        lines += [printable(f"{spec.summary.rstrip('.')}." + (f" Reproduces {spec.source}." if spec.source else "")), ""]
    sizes = _sizes(spec, table)
    if sizes:
        # The summary speaks of the kernel's defaults (often the study's sizes); what this run
        # ran is said beside it, so a figure is never read at a size it was not measured at.
        lines += [f"This run's sizes: {printable(sizes)}.", ""]
    groups = scenarios(table, kernel)
    if all(len(part) < 2 for _, part in groups):
        # Every scenario is one point (only the sizes vary, or only a kind of work): nothing to
        # draw within one, so the kernel's points are drawn together, over the size where one
        # was swept, else as bars; never a heading per point with no figure under it.
        groups = [("", table)]
    for scenario, part in groups:
        if scenario and len(part) < 2:
            continue  # a scenario of one point among larger ones: its row below says it all
        stem = kernel if len(groups) == 1 or not scenario else f"{kernel}-{file_name(scenario)}"
        stem = f"{machine}-{stem}" if machine else stem
        stem = f"{stem}-{measure}" if measure else stem
        if scenario:
            lines += [f"**{printable(scenario)}**", ""]
        x, y = axes_for(part, kernel)
        if x is not None:
            path = save(plot_lines(part, kernel, metric, x), folder, f"{stem}-{x}", figures, svg=True)
            lines += [f"![{name}: {words} vs {printable(x)}]({printable(path)})", ""]
        if y is not None and heatmap_panels(part, kernel, x, y):
            path = save(plot_heatmap(part, kernel, metric, x, y), folder, f"{stem}-{x}-{y}", figures)
            lines += [f"![{name}: {words} over {printable(x)} x {printable(y)}]({printable(path)})", ""]
        if x is None and len(part) > 1:
            path = save(plot_bars(part, kernel, metric), folder, f"{stem}-bars", figures)
            lines += [f"![{name}: {words} per configuration]({printable(path)})", ""]
        for count, count_table in counts:
            counted_part = _with_attrs(count_table[count_table["point"].isin(part["point"])], count_table)
            if x is not None and counted_part[x].notna().any():
                path = save(plot_lines(counted_part, kernel, count, x), folder,
                            f"{stem}-{x}-{file_name(count.name)}", figures, svg=True)
                lines += [f"![{name}: {printable(count.words)} vs {printable(x)}]({printable(path)})", ""]
            elif len(counted_part) > 1:
                path = save(plot_bars(counted_part, kernel, count), folder,
                            f"{stem}-bars-{file_name(count.name)}", figures)
                lines += [f"![{name}: {printable(count.words)} per configuration]({printable(path)})", ""]
    unvaried = fixed(table, kernel, vary)
    if unvaried:
        lines += [f"Fixed: {printable(unvaried)}.", ""]
    ordered = table.sort_values([*vary, "position"], key=lambda c: c.map(sort_key)) if vary else table
    medians = {count: count_table.set_index("point")["median"] for count, count_table in counts}
    rows = []
    for _, point in ordered.iterrows():
        interval = (f"{metric.format(point['ci_low'])} .. {metric.format(point['ci_high'])}"
                    if _key(point["ci_low"]) is not None else "n<3: none")
        flags = []
        if point["noisy"]:
            flags.append(f"noisy (cv > {stats.NOISE_CV:.0%})")
        if point["measure"] == metrics.INSTRUCTIONS:
            flags.append("time under valgrind")
        if point["schedule_dependent"]:
            flags.append("schedule-dependent counts")
        rows.append([*(show(point[n]) if _key(point[n]) is not None else "-" for n in vary),
                     point["n"], metric.format(point["median"]), interval,
                     f"{point['cv'] * 100:.1f}%", f"{point['rate_median'] / 1e6:.2f} M",
                     *(count.format(found[point["point"]]) if point["point"] in found.index else "-"
                       for count, found in medians.items()),
                     ", ".join(flags)])
    headers = [SHORT.get(n, n) for n in vary] + ["n", f"median {metric.words}", "95% interval",
                                                  "cv", "msgs/s",
                                                  *(f"median {count.words}" for count in medians), ""]
    right = set(range(len(vary), len(vary) + 5 + len(medians)))
    lines += [markdown_table(headers, rows, right), ""]
    return lines


def _suite_section(views: dict[str, tuple[Metric, pd.DataFrame]], groups: dict[str, str],
                   machine: str = "") -> list[str]:
    lines = []
    for group in suite_summary(views, groups):
        rows = [[place, row["configuration"], f"{row['geomean']:.2f}x", f"{row['ran']} of {len(group.benchmarks)}",
                 f"{row['worst']:.2f}x ({row['worst_at']})"]
                for place, (_, row) in enumerate(group.table.iterrows(), 1)]
        lines += [f"### {printable(group.name)}", "",
                  f"Benchmarks: {', '.join(printable(b) for b in group.benchmarks)}.", "",
                  markdown_table(["rank", "configuration", "geomean x best", "benchmarks", "worst"], rows, {0, 2}), ""]
    if not lines:
        return []
    return ["## Across the suite" + (f" on {machine}" if machine else ""), "",
            ("Per group of the experiment's kernels: each configuration (runtime, dispatcher, its "
             "settings, threads) with the geometric mean, over the group's benchmarks it ran, of its "
             "median time over the best configuration's median on that benchmark (1.00x: the best on "
             "every one). Configurations that ran every benchmark of the group come first."), "", *lines]


def _scaling_section(samples: pd.DataFrame, machine: str = "") -> list[str]:
    """Time against threads for each kernel that times its sequential program (analysis.scaling):
    a summary row per benchmark at its largest thread count, then each benchmark's pools."""
    found = scaling(samples)
    if not found:
        return []
    time = metrics.lookup("elapsed_ns")
    summary, details = [], []
    for one in found:
        benchmark = printable(f"{one.kernel} {one.scenario}".strip())
        sequential = time.format(one.sequential) if not math.isnan(one.sequential) else "-"
        most = one.threads[-1]
        best = one.best(most)
        at_one = one.table[(one.table["configuration"] == best["configuration"]) & (one.table["threads"] == 1)]
        at_most = one.table[(one.table["threads"] == most) & one.table["speedup"].notna()]
        steepest = at_most.loc[at_most["speedup"].idxmax()] if not at_most.empty else None
        summary.append([benchmark, sequential, printable(best["configuration"]),
                        time.format(at_one["median"].iloc[0]) if not at_one.empty else "-",
                        f"{time.format(best['median'])} at {most}", _times(best["speedup"]),
                        _share(best["efficiency"]), _times(best["over_sequential"]),
                        "-" if steepest is None else
                        f"{_times(steepest['speedup'])} ({printable(steepest['configuration'])})"])
        rows = []
        for name, part in one.table.groupby("configuration", sort=False):
            cells = []
            for threads in one.threads:
                row = part[part["threads"] == threads]
                if row.empty:
                    cells.append("-")
                    continue
                row = row.iloc[0]
                noisy = " (noisy)" if row["noisy"] else ""
                cells.append(time.format(row["median"]) + noisy if threads == 1 else
                             f"{time.format(row['median'])}{noisy}: {_times(row['speedup'])}, "
                             f"{_share(row['efficiency'])}")
            rows.append([printable(name), *cells, _times(part["over_sequential"].max())])
        details += [f"### {benchmark}", "", f"The sequential program: {sequential}.", "",
                    markdown_table(["configuration", *(f"{t} thread{'s' if t > 1 else ''}" for t in one.threads),
                                    "best x sequential"], rows, set(range(1, len(one.threads) + 2))), ""]
    return ["## Speed-up against threads" + (f" on {machine}" if machine else ""), "",
            ("For each kernel that times its sequential program (the same algorithm on the same input "
             "in one thread, without actors, after the phase: its `sequential_ns`), each pool's median "
             "time against its threads. Speed-up: the same configuration's median at one thread over "
             "its median at N; efficiency: speed-up / N; x sequential: the sequential program's median "
             "over the configuration's (above 1.00x, faster than the program without actors). The "
             "summary gives each benchmark's fastest configuration at its largest thread count, and "
             "the largest speed-up any configuration reached there."), "",
            markdown_table(["benchmark", "sequential", "fastest at most threads", "its time at 1", "its time",
                            "speed-up", "efficiency", "x sequential", "largest speed-up"], summary,
                           {1, 3, 4, 5, 6, 7}), "",
            *details]


def _turns_section(samples: pd.DataFrame, machine: str = "") -> list[str]:
    """For each kernel that runs in turns (analysis.turns: the chat), per scenario, its turns'
    durations (median, p99, max) and quality of service against threads, and its action counts."""
    found = turns(samples)
    if not found:
        return []
    time = metrics.lookup("elapsed_ns")
    lines = ["## Turns against threads" + (f" on {machine}" if machine else ""), "",
             ("For each scenario of a workload that runs in turns, each configuration's turns at each "
              "thread count: the median, 99th percentile and longest turn over every turn of every "
              "iteration of a run, and the quality of service (qos: the median over turns of a turn's "
              "spread across the run's iterations; lower is steadier), each the median over the point's "
              "runs; then what the actors did, counted."), ""]
    for one in found:
        title = printable(f"{one.kernel} {one.scenario}".strip())
        rows = []
        for name, part in one.table.groupby("configuration", sort=False):
            for _, row in part.iterrows():
                rows.append([printable(name), int(row["threads"]),
                             *(time.format(row[f]) if not math.isnan(row[f]) else "-" for f in TURN_FIGURES)])
        counts = ", ".join(f"{name} {value:,.0f}" for name, value in one.actions.items() if not math.isnan(value))
        lines += [f"### {title}", "",
                  markdown_table(["configuration", "threads", "median turn", "p99 turn", "longest turn", "qos"],
                                 rows, {1, 2, 3, 4, 5}), ""]
        if counts:
            lines += [f"Actions (median per run): {counts}.", ""]
    return lines


def _fingerprints_section(samples: pd.DataFrame, machine: str = "") -> list[str]:
    """What each point's workload is, from the runtime's counts of its phase
    (analysis.fingerprints): the groups of points that behave alike, each kernel's nearest other
    kernel, and every point's fingerprint."""
    prints = fingerprints(samples)
    if prints is None:
        return []
    axes = AXES
    groups = []
    for letter, kernels in prints.groups.items():
        members = prints.table[prints.table["group"] == letter]
        groups.append([letter, printable(", ".join(f"{k} ({n})" for k, n in kernels.items())),
                       *(format_axis(axis, members[axis.name].median()) for axis in axes)])
    nearest = []
    for (kernel, scenario), part in prints.table.groupby(["kernel", "scenario"], sort=False):
        near = prints.nearest(str(kernel), str(scenario))
        nearest.append([printable(f"{kernel} {scenario}".strip()), ", ".join(sorted(set(part["group"]))),
                        "-" if near is None else printable(near[0]), "-" if near is None else f"{near[1]:.2f}"])
    rows = [[row["group"], printable(f"{row['kernel']} {row['scenario']}".strip()), printable(row["configuration"]),
             *(format_axis(axis, row[axis.name]) for axis in axes)]
            for _, row in prints.table.sort_values(["group", "kernel"], kind="stable").iterrows()]
    headers = [axis.header for axis in axes]
    numeric = set(range(2, 2 + len(axes)))
    return ["## Fingerprints" + (f" on {machine}" if machine else ""), "",
            ("What each point's workload is, beside how fast it ran, from what the runtime counted of "
             "its phase (medians over its samples): " + "; ".join(f"{a.header}: {a.words}" for a in axes)
             + ". Points whose fingerprints lie close together share a group (Ward's clustering of the "
             "axes, standardised, rates and takes in log10): a kernel in another's group stands in for "
             "it. `labctl fingerprint` prints the same."), "",
            markdown_table(["group", "kernels (points)", *headers], groups, numeric), "",
            markdown_table(["kernel and scenario", "its groups", "nearest other kernel", "distance"], nearest, {3}), "",
            "<details><summary>Every point's fingerprint</summary>", "",
            markdown_table(["group", "kernel", "point", *headers], rows, set(range(3, 3 + len(axes)))), "",
            "</details>", ""]


def _times(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.2f}x"


def _share(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.0%}"


def _runtimes_section(views: dict[str, tuple[Metric, pd.DataFrame]], machine: str = "") -> list[str]:
    rows = []
    for kernel, (metric, table) in views.items():
        vary = varying(table, kernel)
        for setting, best in runtime_ranking(table, kernel, metric):
            own = [n for n in vary if n not in setting and n != RUNTIME]
            for place, (_, point) in enumerate(best.iterrows(), 1):
                ours = "" if math.isnan(point["ours"]) or point[RUNTIME] == OURS \
                    else f"{point['ours']:.3g}"
                rows.append([kernel, setting or "-", place, point[RUNTIME], label(point, own) or "-",
                             metric.format(point["median"]), f"{point['ratio']:.2f}x", ours])
    if not rows:
        return []
    return ["## Runtimes side by side" + (f" on {machine}" if machine else ""), "",
            "Each runtime's best point for the same work and the same parameters that every runtime "
            "takes (threads: our pool's, CAF's scheduler threads, Go's GOMAXPROCS, Erlang's "
            "schedulers, GHC's capabilities, Boost.Fiber's scheduler threads), fastest first. `x fastest`: "
            "its median over the fastest one's, in time; `labctl / it`: our time over its time "
            "(below 1, ours is faster).", "",
            markdown_table(["kernel", "setting", "rank", "runtime", "its best configuration", "median",
                    "x fastest", "labctl / it"], rows, {2, 5, 6, 7}), ""]


def _floors_section(samples: pd.DataFrame, machine: str = "") -> list[str]:
    """Each figure that a floor kernel of this run bounds, as a multiple of that floor: `samples`
    are one machine's."""
    distances = floor_distances(samples)
    if not distances:
        return []
    lines = ["## Distance to the machine's floor" + (f" on {machine}" if machine else ""), "",
             "The floor kernels of this run measure limits of this machine, not of the runtime (a cache "
             "line bounced between two threads, a futex wake-up, an actor loop with nothing around it). "
             "Each figure a floor bounds is given as a multiple of it: its median over the floor's in "
             "time, the floor's over its median in throughput; the floor is the best median of the "
             "floor kernel here. 1.0x is the floor; below 1x a point does not do what the floor "
             "measures (a round trip that never leaves its thread).", ""]
    for distance in distances:
        floor = distance.floor
        where = (" (points with " + ", ".join(f"{k}={show(v)}" for k, v in floor.where.items()) + ")"
                 if floor.where else "")
        floor_point = f" {distance.floor_point}" if distance.floor_point else ""
        lines += [printable(f"### {floor.kernel} `{floor.metric}`: {floor.name}"), "",
                  printable(f"Floor: `{distance.floor_kernel}`{floor_point} `{floor.floor_metric}` = "
                            f"{distance.metric.format(distance.floor_value)}{where}."), ""]
        table = distance.points
        vary = varying(table, floor.kernel)
        ordered = table.sort_values("multiple")
        rows = [[label(point, vary) or "one point", point["n"], distance.metric.format(point["median"]),
                 f"{point['multiple']:.2f}x {printable(floor.name)}"] for _, point in ordered.iterrows()]
        lines += [markdown_table(["configuration", "n", f"median {distance.metric.words}", "distance"],
                                 rows, {1, 2}), ""]
    return lines


def _skipped(skipped: pd.DataFrame) -> list[str]:
    if skipped.empty:
        return []
    lines = ["## Skipped points", "", "Points this machine cannot run (a runtime or an allocator is "
             "missing): never run, not failed. Install what the reason names and run the experiment "
             "again.", ""]
    reasons = skipped.groupby("failure", sort=True)
    rows = [[reason, len(part), ", ".join(sorted(set(part["kernel"])))] for reason, part in reasons]
    return lines + [markdown_table(["reason", "points", "kernels"], rows, {1}), ""]


def _failures(catalogue: Catalogue, failed: pd.DataFrame) -> list[str]:
    if failed.empty:
        return []
    lines = ["## Failed points", "", "Each failed point and why. A point that failed after some of its "
             "runs keeps the samples it stored: the figures and tables above include them (see n).", ""]
    rows = []
    for _, point in failed.iterrows():
        params = {p.name: _key(point[p.name]) for p in catalogue.params(point["kernel"])
                  if p.name in point and _key(point[p.name]) is not None}
        reason = str(point["failure"] or "")
        rows.append([point["kernel"], " ".join(f"{SHORT.get(n, n)}={show(v)}" for n, v in params.items()),
                     point["failure_kind"] or "", reason if len(reason) <= 300 else reason[:297] + "..."])
    return lines + [markdown_table(["kernel", "parameters", "failure", "reason"], rows), ""]


def _references(catalogue: Catalogue, samples: pd.DataFrame, folder: Path, figures: list[str],
                verdicts: list[dict], machine: str = "") -> list[str]:
    references = catalogue.references
    if machine:  # one machine of several: the published figures of the kernels it ran
        references = [r for r in references if r.kernel in set(samples["kernel"])]
    if not references:
        return []
    lines = ["## Published figures beside ours" + (f" on {machine}" if machine else ""), "",
             "Each study measured on its own hardware, with its own sizes, so absolute values are not "
             "comparable: each set of figures is compared relative to its own best (1.00 = the best; "
             "2.00 = twice as slow as the best), and by ranking. A pair the study orders (more than "
             f"{TIE_RATIO:.2f}x apart) agrees when ours is in the same order with 95% intervals apart.",
             ""]
    for index, reference in enumerate(references):
        if samples.empty:
            comparison = rank(reference, [Match(f, problem="no samples") for f in reference.figures])
        else:
            comparison = compare_reference(reference, samples)
        verdicts.append({"title": reference.title, "kernel": reference.kernel, "machine": machine,
                         "verdict": comparison.kind, "agree": len(comparison.agree),
                         "reversed": len(comparison.reversed), "unclear": len(comparison.unclear)})
        lines += _reference_section(comparison, index, folder, figures, machine)
    return lines


def _claims(catalogue: Catalogue, samples: pd.DataFrame, verdicts: list[dict], machine: str = "") -> list[str]:
    """The study's statements across two of its benchmarks, each judged on the same ratio of our
    points (labctl.references.judge_claim)."""
    if not catalogue.claims:
        return []
    lines = ["## The studies' claims across benchmarks" + (f" on {machine}" if machine else ""), "",
             "A study's statement that relates two of its figures, as their ratio, beside the same "
             "ratio of our points (each side the study's statistic of our samples).", ""]
    for claim in catalogue.claims:
        judged = judge_claim(claim, samples) if not samples.empty else None
        verdicts.append({"title": claim.title, "machine": machine,
                         "verdict": judged.kind if judged else "not judged",
                         "ours": judged.ratio if judged else None, "study": claim.ratio})
        lines += [f"### {printable(claim.title)}", "", f"Source: {printable(claim.source.rstrip('.'))}.", "",
                  judged.verdict if judged else "Not judged: no samples.", ""]
        if judged and judged.ratio is not None:
            metric = metrics.lookup(claim.metric)
            rows = [[role, printable(", ".join(f"{k}={show(v)}" for k, v in point.items())), metric.format(value)]
                    for role, point, value in (("numerator", claim.numerator, judged.numerator),
                                               ("denominator", claim.denominator, judged.denominator))]
            lines += [markdown_table(["", "our point", f"ours ({_statistic(claim)})"], rows, {2}), ""]
        lines += [f"Compared as: the study published {claim.study.described()}.", ""]
        if claim.study.facts:
            lines += ["Also different:", ""] + [f"- {printable(f)}" for f in claim.study.facts] + [""]
    return lines


def _reference_section(comparison: Comparison, position: int, folder: Path, figures: list[str],
                       machine: str = "") -> list[str]:
    ref = comparison.reference
    metric = metrics.lookup(ref.metric).directed(ref.lower_is_better)
    per = f" per {_singular(ref.per)}" if ref.per else ""
    lines = [f"### {printable(ref.title)}", "",
             f"Source: {printable(ref.source.rstrip('.'))}. Hardware: {printable(ref.hardware.rstrip('.'))}. "
             f"Compared: {ref.kernel}'s "
             f"`{ref.metric}`{per}, {'lower' if ref.lower_is_better else 'higher'} is better"
             + (f"; our points with {', '.join(f'{k}={show(v)}' for k, v in ref.where.items())}"
                if ref.where else "") + ".", ""]
    if ref.note:
        lines += [f"Note: {printable(ref.note)}", ""]
    lines += [comparison.verdict, ""]
    lines += _beside_the_verdict(comparison)
    ours = comparison.ours
    best_study = best_here = None
    if ours:
        pick = min if ref.lower_is_better else max
        best_study = pick(m.figure.value for m in ours)
        best_here = pick(m.value for m in ours)
    study_rank = ranks([m.figure.value for m in ours], ref.lower_is_better)
    here_rank = ranks([m.value for m in ours], ref.lower_is_better)
    rows = []
    for match in comparison.matches:
        if match.figure.peer is not None:
            continue
        published = (f"{number(match.figure.value)} {ref.unit}" if match.figure.published
                     else "no number (a graph only)")
        name = printable(match.figure.name) if match.figure.name else ""
        if match.value is None:
            rows.append([match.figure.label, name, published, "", match.problem or "", "", "", "", ""])
            continue
        interval = (f" [{metric.format(match.interval[0])} .. {metric.format(match.interval[1])}]"
                    if match.interval else " (n<3)")
        if not match.figure.published:  # measured, with nothing of the study's to rank it against
            rows.append([match.figure.label, name, published, "", metric.format(match.value),
                         metric.format(match.median) + interval, "", "", ""])
            continue
        index = ours.index(match)
        study_relative = (match.figure.value / best_study if ref.lower_is_better
                          else best_study / match.figure.value)
        rows.append([match.figure.label, name, published, f"{study_relative:.2f}",
                     metric.format(match.value), metric.format(match.median) + interval,
                     f"{match.relative(best_here, ref.lower_is_better):.2f}",
                     study_rank[index], here_rank[index]])
    lines += [markdown_table(["our configuration", "the study's name", "published", "study / its best",
                              f"ours{per} ({_statistic(ref)})", "our median [95%]", "ours / our best",
                              "rank in study", "rank here"], rows, {3, 6, 7, 8}), ""]
    if comparison.tau is not None:
        lines += [f"Kendall's tau between the two orders: {comparison.tau:.2f} (1: the same order).", ""]
    for title, items in (("Reversed here", comparison.reversed), ("Within noise here", comparison.unclear)):
        if items:
            lines += [f"{title}:", ""] + [f"- {item}" for item in items] + [""]
    if len(ours) >= 2:
        path = save(plot_reference(comparison), folder,
                    f"{machine}-published-{position + 1}" if machine else f"published-{position + 1}",
                    figures)
        lines += [f"![{printable(ref.title)}: published vs ours]({path})", ""]
    peers = [m for m in comparison.matches if m.figure.peer is not None]
    if peers and comparison.measured:
        lines += _peer_ranking(comparison, peers, metric)
    return lines


def _sizes(spec, table: pd.DataFrame) -> str:
    """What the kernel did in this run's points, in its parameters that say so (not how it ran):
    leaves=100000, branching=10; a parameter that varies, with its values."""
    if spec is None or table.empty:
        return ""
    parts = []
    for param in spec.params:
        if param.configuration or param.name not in table:
            continue
        values = sorted({show(v) for v in table[param.name] if _key(v) is not None}, key=_natural)
        if values:
            parts.append(f"{param.name}=" + " or ".join(values))
    return ", ".join(parts)


def _natural(text: str) -> tuple:
    """Numbers in numeric order, words after them."""
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def _statistic(ref) -> str:
    """Our figure's statistic, named for the table's header: the study's where it is recorded."""
    return ref.study.statistic if ref.study.statistic and ref.study.statistic != "single" else "median"


def _beside_the_verdict(comparison: Comparison) -> list[str]:
    """What the verdict compares, derived from what the study ran (labctl.schema.StudyRan) and
    this run's points: the statistic on each side, every parameter whose value differs, and
    what differs that is no parameter of ours."""
    study = comparison.reference.study
    if not study.statistic:
        return ["Compared as: the study's statistic and sizes are not recorded in this run's "
                "catalogue (stored before references recorded them); ours are medians.", ""]
    counts = sorted({m.samples for m in comparison.measured})
    samples = " or ".join(map(str, counts)) if counts else "no"
    ours = (f"the median of our {samples} samples, as the study's kind of figure is not known"
            if study.statistic == "single" else
            f"{STATISTICS[study.statistic]} of our {samples} samples, as the study's")
    lines = [f"Compared as: the study published {study.described()}; ours is {ours}.", ""]
    differences = comparison.differences()
    if differences:
        lines += ["Differences from the study (its values recorded with the reference, ours this "
                  "run's):", ""] + [f"- {printable(d.text())}" for d in differences] + [""]
    elif comparison.measured:
        lines += ["Differences from the study: none among the parameters it records "
                  f"({', '.join(study.params) or 'none'}).", ""]
    if study.facts:
        lines += ["Also different, and no parameter of ours:", ""] + [f"- {printable(f)}" for f in study.facts] + [""]
    return lines


def _singular(name: str) -> str:
    """leaves -> leaf, hops -> hop: a parameter that counts things, as one of them."""
    for plural, one in (("ves", "f"), ("ies", "y"), ("s", "")):
        if name.endswith(plural):
            return name[: -len(plural)] + one
    return name


def _peer_ranking(comparison: Comparison, peers: list[Match], metric: Metric) -> list[str]:
    """The study's runtimes and ours in one list by value: absolute values from two machines, so
    an indication of the order of magnitude only."""
    ref = comparison.reference
    entries = [(m.figure.value, _published_peer(m.figure)) for m in peers if m.figure.published]
    entries += [(m.figure.value, f"{m.figure.published_as} (study)") for m in comparison.ours]
    converted = [(in_unit(m.value, metric, ref.unit), m) for m in comparison.measured]
    if any(value is None for value, _ in converted):
        return [f"The study's other runtimes are given in {ref.unit}, which our `{ref.metric}` does "
                "not convert to: not ranked.", ""]
    entries += [(value, f"**{_measured_here(m)} (this machine)**") for value, m in converted]
    entries.sort(key=lambda e: e[0] if ref.lower_is_better else -e[0])
    rows = [[place, name, f"{number(value)} {ref.unit}"] for place, (value, name) in enumerate(entries, 1)]
    # A result that is no figure (a crash) has no place in the order: it follows it, in words.
    rows += [["", printable(_published_peer(m.figure)), printable(m.figure.outcome)]
             for m in peers if m.figure.outcome]
    sizes = ("" if ref.per else " Our sizes are this run's, which may be smaller than the study's "
             "(`--scale full` runs the study's).")
    return ["The study's runtimes with ours, by absolute value (two different machines: an "
            f"indication of the order of magnitude, not a measurement).{sizes}", "",
            markdown_table(["rank", "runtime", ref.unit], rows, {0, 2}), ""]


def _published_peer(figure: Figure) -> str:
    """A runtime of the study known from its figure alone: Theron 3.03 (study; not run here: why)."""
    return f"{figure.peer} (study" + (f"; not run here: {figure.not_run})" if figure.not_run else ")")


def _measured_here(match: Match) -> str:
    """A point of this run by its runtime, then the rest of its figure's parameters: `erlang
    threads=2`, `labctl dispatcher=one_thread`."""
    runtime = match.params.get(RUNTIME) or match.figure.params.get(RUNTIME) or OURS
    rest = ", ".join(f"{name}={show(value)}" for name, value in match.figure.params.items() if name != RUNTIME)
    return f"{runtime} {rest}".strip()


def _provenance(row: RunRow, context: dict, db: str | Path, command: str | None) -> list[str]:
    machine = row.machine
    build = context.get("build") or {}
    facts = [
        ("CPU", f"{machine.get('cpu_model')}: {machine.get('logical_cpus')} logical CPUs, "
                f"{machine.get('physical_cores')} cores, SMT {machine.get('smt')}"),
        ("OS kernel", machine.get("kernel")),
        ("host", machine.get("hostname")),
        ("load at start", context.get("load_average")),
        ("memory available at start", f"{context.get('memory_available_kb')} kB"),
        ("frequency governor", context.get("governor")),
        ("Python", context.get("python")),
        ("labctl", f"{context.get('labctl')} ({context.get('git_describe') or 'not a git checkout'})"),
        ("experiment file", context.get("experiment_git_describe") or "not in a git checkout"),
        ("extension build", " ".join(str(build.get(k, "")) for k in ("compiler", "flags")).strip()),
        ("seed of the point order", row.seed),
    ]
    lines = ["## Machine and provenance", "",
             markdown_table(["", ""], [[name, value] for name, value in facts if value not in (None, "")]), "",
             "To run it again and rebuild this report:", "", "```bash", printable(row.command),
             printable(command or shlex.join(["labctl", "report", str(row.id), "--db", str(db)])), "```", ""]
    return lines
