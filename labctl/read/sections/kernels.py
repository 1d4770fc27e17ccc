"""The report's sections on each kernel: a summary of every kernel's best and worst point, what
the measures beside the time counted, and each kernel's figures and table of medians."""

from __future__ import annotations

import pandas as pd

from labctl.read.analysis import (
    BOUND_FACTOR,
    BOUND_PERCENTILE,
    SHORT,
    UNDERUSED_SHARE,
    _key,
    _with_attrs,
    axes_for,
    busy_text,
    fixed,
    heatmap_panels,
    label,
    latency_curves,
    point_table,
    saturation,
    scenarios,
    sort_key,
    varying,
)
from labctl.read.figures import (
    file_name,
    percentile_family,
    plot_bars,
    plot_heatmap,
    plot_latency_load,
    plot_lines,
    plot_percentiles,
)
from labctl.read import results
from labctl.read.sections.data import Machine, ReportData, View
from labctl.read.sections.markdown import blocks, figure, named, or_dash, title
from labctl.vocabulary import metrics, stats
from labctl.vocabulary.schema import Kernel
from labctl.vocabulary.text import markdown_table, printable, show


def summary(run: ReportData) -> list[str]:
    """The best and the worst configuration of each kernel, and how far apart they are."""
    if not run.views:
        return []
    # An open-loop kernel's time is its schedule's length, set by its offered load, which is no
    # size of work: it is ranked by its latency under load (latency_under_load), not here.
    loaded = sorted({view.kernel for view in run.views if run.catalogue.open_loop(view.kernel)})
    left_out = [f"Open-loop kernels ({printable(', '.join(loaded))}) are left out: their time is the "
                "length of the schedule their offered load sets, no figure of merit; \"Latency under "
                "load\" ranks their configurations."] if loaded else []
    # A row per scenario (the kernel's own parameters: its work), so that best and worst are
    # configurations doing the same work, never one scenario's figure over another's.
    rows = [[*([view.on] if run.several else []),
             named(view.kernel, scenario) + (f" ({view.measure})" if view.measure else ""),
             len(part), *_best_and_worst(view, part)]
            for view in run.views if view.kernel not in loaded
            for scenario, part in scenarios(view.table, view.kernel)]
    headers = [*(["machine"] if run.several else []), "kernel", "points", "best", "worst", "worst/best"]
    return blocks("## Summary",
                  "The best and the worst configuration of each kernel in this run, for each of its "
                  "scenarios (the work its own parameters set) apart (medians; time when every run "
                  "did the same work, throughput otherwise).",
                  *left_out,
                  *([markdown_table(headers, rows, {1 + run.several, 4 + run.several})] if rows else []),
                  *_underused(run))


def _underused(run: ReportData) -> list[str]:
    """What the report says, before any figure, of the points that ran on fewer threads than
    they were given: how many, of which kernels, and how each table and figure marks them."""
    found = [(view.kernel, int(view.table["underused"].sum())) for view in run.views
             if "underused" in view.table and view.table["underused"].any()]
    if not found:
        return []
    total = sum(count for _, count in found)
    return [f"**{total} point{'s' if total > 1 else ''} ran on fewer threads than {'they were' if total > 1 else 'it was'} "
            f"given** (runtime threads busy on average below {UNDERUSED_SHARE:.0%} of its threads: "
            + ", ".join(f"{printable(kernel)} {count}" for kernel, count in found)
            + "): their figures are not those of their nominal threads. Each is flagged in its "
            "kernel's table (busy threads beside its threads), circled in red in the figures, and "
            "named where it is set against another runtime."]


def _best_and_worst(view: View, table: pd.DataFrame) -> list[str]:
    """The best and worst point of `table` (a scenario of a view) with their medians, and the
    worse's multiple of the best."""
    metric, vary = view.metric, varying(table, view.kernel)
    ordered = table.sort_values("median", ascending=metric.lower_is_better)
    best, worst = ordered.iloc[0], ordered.iloc[-1]
    spread = (worst["median"] / best["median"] if metric.lower_is_better
              else best["median"] / worst["median"]) if best["median"] and worst["median"] else float("nan")
    return [f"{label(best, vary) or 'one point'}: {metric.format(best['median'])}",
            f"{label(worst, vary) or 'one point'}: {metric.format(worst['median'])}", f"{spread:.2f}x"]


def measures(run: ReportData) -> list[str]:
    """What the run's measures counted, beside the time, and what this machine could not."""
    samples = run.samples
    taken = set(samples["measure"]) - {metrics.TIME} if not samples.empty else set()
    if not taken:
        return []
    lines = blocks("## Measures")
    if metrics.INSTRUCTIONS in taken:
        lines += blocks("Points measured in `instructions` ran under valgrind's callgrind, which counted "
                        "the instructions of the measured phase alone (and simulated its L1 and last-level "
                        "cache misses): the same count run after run, on a noisy machine too. Their times "
                        "were taken under valgrind, 70-200x slower than natively: read their counts, not "
                        "their times.")
    if metrics.COUNTERS in taken:
        lines += blocks("Points measured in `counters` counted the measured phase with perf_event: the "
                        "CPU's counters (user space) and the kernel's, for every thread of the process.")
    dependent = samples[samples["schedule_dependent"].fillna(False)]
    if not dependent.empty:
        lines += blocks(f"{dependent['point'].nunique()} points are marked schedule-dependent: more than one "
                        "thread did their phase's work, so their counts change with how the threads "
                        "interleaved (a queue found empty, a thread parked and woken); they vary between "
                        "runs, less than times do.")
    missing: dict[str, str] = {}
    for unsupported in samples["unsupported"]:
        for name, why in (unsupported or {}).items():
            missing.setdefault(name, why)
    if missing:
        lines += blocks("Counters this machine does not have (left empty, never counted as 0):",
                        markdown_table(["counter", "why"], [[metrics.lookup(n).words, w] for n, w in missing.items()]))
    return lines


def kernels(run: ReportData) -> list[str]:
    """Each kernel's section, machine by machine and measure by measure."""
    return [line for view in run.views for line in _kernel(run, view)]


def _kernel(run: ReportData, view: View) -> list[str]:
    """A kernel's figures (its metric, and each count its measure took), then its table."""
    spec = run.catalogue.kernels.get(view.kernel)
    # The kernel's, its metrics' and its parameters' names come from the store: outside text.
    lines = blocks(title(printable(view.kernel), view.on)
                   + (f", measured in {printable(view.measure)}" if view.measure else ""))
    if spec is not None and spec.summary:
        lines += blocks(printable(f"{spec.summary.rstrip('.')}." + (f" Reproduces {spec.source}." if spec.source else "")))
    sizes = _sizes(spec, view.table)
    if sizes:
        # The summary speaks of the kernel's defaults (often the study's sizes); what this run
        # ran is said beside it, so a figure is never read at a size it was not measured at.
        lines += blocks(f"This run's sizes: {printable(sizes)}.")
    unvaried = fixed(view.table, view.kernel, varying(view.table, view.kernel))
    if unvaried:
        # Said once, here, rather than in every figure's title.
        lines += blocks(f"Fixed in every point below: {printable(unvaried)}.")
    groups = scenarios(view.table, view.kernel)
    if all(len(part) < 2 for _, part in groups):
        # Every scenario is one point (only the sizes vary, or only a kind of work): nothing to
        # draw within one, so the kernel's points are drawn together, over the size where one
        # was swept, else as bars; never a heading per point with no figure under it.
        groups = [("", view.table)]
    for scenario, part in groups:
        if scenario and len(part) < 2:
            continue  # a scenario of one point among larger ones: its row below says it all
        stem = view.kernel if len(groups) == 1 or not scenario else f"{view.kernel}-{file_name(scenario)}"
        stem = "-".join(filter(None, (view.on, stem, view.measure)))
        if scenario:
            lines += blocks(f"**{printable(scenario)}**")
        lines += blocks(conclusion(view.metric, part, view.kernel))
        lines += _figures(run, view, part, stem)
    return lines + blocks(_table(view))


def conclusion(metric: metrics.Metric, table: pd.DataFrame, kernel: str | Kernel) -> str:
    """A scenario's points in one line: the best configuration, how far ahead of the next it is
    (or that their 95% intervals overlap, so the order of the two is not known), and the worst's
    multiple of the best."""
    vary = varying(table, kernel)
    ordered = table.sort_values("median", ascending=metric.lower_is_better)
    best = ordered.iloc[0]
    if len(ordered) < 2:
        return f"In short: one point, {metric.format(best['median'])}."
    line = f"In short: {printable(label(best, vary))} is best, {metric.format(best['median'])}"
    second, worst = ordered.iloc[1], ordered.iloc[-1]

    def ahead(other: pd.Series) -> float:
        if not (best["median"] and other["median"]):
            return float("nan")
        return other["median"] / best["median"] if metric.lower_is_better else best["median"] / other["median"]

    apart = _key(best["ci_high"]) is not None and _key(second["ci_low"]) is not None and (
        best["ci_high"] < second["ci_low"] if metric.lower_is_better else best["ci_low"] > second["ci_high"])
    line += (f", {ahead(second):.2f}x ahead of {printable(label(second, vary))}" if apart else
             f", within noise of {printable(label(second, vary))} ({ahead(second):.2f}x; their 95% intervals overlap)")
    if len(ordered) > 2:
        line += f"; the worst, {printable(label(worst, vary))}, is {ahead(worst):.2f}x behind"
    noisy = int(table["noisy"].fillna(False).astype(bool).sum()) if "noisy" in table else 0
    if noisy:
        line += f"; {noisy} of {len(table)} points noisy (hollow in the figures)"
    return line + "."


def _figures(run: ReportData, view: View, part: pd.DataFrame, stem: str) -> list[str]:
    """The figures of a scenario's points: lines over the axis that varies, a heat map over two,
    bars where none does; then each count its measure took, drawn the same way."""
    name, words, kernel = printable(view.kernel), printable(view.metric.words), view.kernel
    x, y = axes_for(part, kernel)
    lines = []
    if x is not None:
        lines += figure(run, plot_lines(part, kernel, view.metric, x), f"{stem}-{x}",
                        f"{name}: {words} vs {printable(x)}", svg=True)
    if y is not None and heatmap_panels(part, kernel, x, y):
        lines += figure(run, plot_heatmap(part, kernel, view.metric, x, y), f"{stem}-{x}-{y}",
                        f"{name}: {words} over {printable(x)} x {printable(y)}")
    if x is None and len(part) > 1:
        lines += figure(run, plot_bars(part, kernel, view.metric), f"{stem}-bars", f"{name}: {words} per configuration")
    lines += _percentiles(run, view, part, stem)
    for count, count_table in view.counts:
        counted = _with_attrs(count_table[count_table["point"].isin(part["point"])], count_table)
        counted_words, file = printable(count.words), file_name(count.name)
        if x is not None and counted[x].notna().any():
            lines += figure(run, plot_lines(counted, kernel, count, x), f"{stem}-{x}-{file}",
                            f"{name}: {counted_words} vs {printable(x)}", svg=True)
        elif len(counted) > 1:
            lines += figure(run, plot_bars(counted, kernel, count), f"{stem}-bars-{file}",
                            f"{name}: {counted_words} per configuration")
    return lines


def _percentiles(run: ReportData, view: View, part: pd.DataFrame, stem: str) -> list[str]:
    """The percentiles a kernel recorded (ping_pong's round trips: p50, p99, the longest and the
    mean), one row of marks per configuration, where its points have them."""
    if view.measure not in ("", metrics.TIME):
        return []  # under valgrind a latency is the simulator's
    samples = _with_attrs(run.samples[run.samples["point"].isin(part["point"])], run.samples)
    lines = []
    for prefix, names in percentile_family(c for c in samples.columns if samples[c].notna().any()).items():
        tables = {statistic: point_table(samples, metrics.lookup(name)) for statistic, name in names.items()}
        if len(tables["p50"]) < 1:
            continue
        words = printable(prefix.replace("_", " "))
        lines += figure(run, plot_percentiles(tables, view.kernel, words), f"{stem}-{file_name(prefix)}",
                        f"{printable(view.kernel)}: {words} percentiles per configuration")
    return lines


def _table(view: View) -> str:
    """The kernel's points, by the parameters that vary: n, the median and its 95% interval, the
    spread, the throughput, each count's median, and what to read with care."""
    metric, table, vary = view.metric, view.table, varying(view.table, view.kernel)
    ordered = table.sort_values([*vary, "position"], key=lambda c: c.map(sort_key)) if vary else table
    medians = {count: count_table.set_index("point")["median"] for count, count_table in view.counts}
    busy = "busy" in table and table["busy"].notna().any()  # our runtime's points, timed natively
    rows = []
    for _, point in ordered.iterrows():
        interval = (f"{metric.format(point['ci_low'])} .. {metric.format(point['ci_high'])}"
                    if _key(point["ci_low"]) is not None else "n<3: none")
        rows.append([*(show(point[n]) if _key(point[n]) is not None else "-" for n in vary),
                     point["n"], metric.format(point["median"]), interval,
                     f"{point['cv'] * 100:.1f}%", f"{point['rate_median'] / 1e6:.2f} M",
                     *([busy_text(point)] if busy else []),
                     *(count.format(found[point["point"]]) if point["point"] in found.index else "-"
                       for count, found in medians.items()),
                     ", ".join(_flags(point))])
    headers = [SHORT.get(n, n) for n in vary] + ["n", f"median {metric.words}", "95% interval", "cv", "msgs/s",
                                                  *(["busy threads"] if busy else []),
                                                  *(f"median {count.words}" for count in medians), ""]
    return markdown_table(headers, rows, set(range(len(vary), len(vary) + 5 + busy + len(medians))))


def _flags(point: pd.Series) -> list[str]:
    """What to read with care in a point's row."""
    flags = []
    if point["noisy"]:
        flags.append(f"noisy (cv > {stats.NOISE_CV:.0%})")
    if point["measure"] == metrics.INSTRUCTIONS:
        flags.append("time under valgrind")
    if point["schedule_dependent"]:
        flags.append("schedule-dependent counts")
    if point.get("refused"):
        flags.append(f"**{point['refused']}**")
    if point.get("underused", False):
        flags.append(f"**ran on {point['busy']:.2f} of its {show(point['threads'])} threads**")
    return flags


def _sizes(spec: Kernel | None, table: pd.DataFrame) -> str:
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


CPU_PER_MESSAGE, WAITING = metrics.lookup("cpu_per_message_ns"), metrics.lookup("waiting_cpu_share")
PER_AGENT = metrics.lookup("bytes_per_agent")


def _extremes(machine: Machine, metric: metrics.Metric, share: pd.Series | None = None) -> list[list[str]]:
    """For each kernel (and scenario) with values of `metric`: its points' medians of it, the
    configurations with the least and the most, and, with `share` (each point's median waiting
    share), the one whose threads burned the largest share of their CPU time waiting for work."""
    samples = machine.timed
    if metric.name not in samples or samples[metric.name].isna().all():
        return []
    rows = []
    tables = machine.timed_views()  # each point's parameters, with its kernel's own figure
    for kernel, part in samples[samples[metric.name].notna()].groupby("kernel", sort=False):
        if kernel not in tables:
            continue
        # Medians only (the rows need no interval): the points' own table, their median replaced.
        medians = part.groupby("point")[metric.name].median()
        table = tables[kernel][1]
        cost = _with_attrs(table[table["point"].isin(medians.index)].assign(median=lambda t: t["point"].map(medians)),
                           table)
        for scenario, points in scenarios(cost, kernel):
            vary = varying(points, kernel)

            def cell(point: pd.Series, value: str) -> str:
                return f"{printable(label(point, vary)) or 'one point'}: {value}"

            def with_share(point: pd.Series) -> str:
                found = None if share is None else share.get(point["point"])
                return metric.format(point["median"]) + (
                    "" if found is None or pd.isna(found) else f", {WAITING.format(found)} waiting")

            row = [named(kernel, scenario), str(len(points)), cell(points.loc[points["median"].idxmin()],
                                                                   with_share(points.loc[points["median"].idxmin()])),
                   cell(points.loc[points["median"].idxmax()], with_share(points.loc[points["median"].idxmax()]))]
            if share is not None:
                spent = share.reindex(points["point"]).dropna()
                row.append("-" if spent.empty else cell(points.set_index("point").loc[spent.idxmax()],
                                                        WAITING.format(spent.max())))
            rows.append(row)
    return rows


def costs(run: ReportData, machine: Machine) -> list[str]:
    """The cost of a message on one machine: for each kernel (and scenario) timed on our runtime,
    the configurations with the least and the most CPU time per message, and the one whose
    threads burned the largest share of their CPU time waiting for work; and the cost of an
    agent, on the kernels that create many: the least and the most memory per agent, on every
    runtime that reports it."""
    samples = machine.timed
    share = samples.groupby("point")[WAITING.name].median().dropna() if WAITING.name in samples else None
    cpu, memory = _extremes(machine, CPU_PER_MESSAGE, share), _extremes(machine, PER_AGENT)
    if not cpu and not memory:
        return []
    lines = blocks(title("The cost of a message", machine.on))
    if cpu:
        lines += blocks("CPU time per message: the runtime threads' CPU time over the phase, over its "
                        "messages (every thread, so a configuration whose threads spin while they wait "
                        "pays for it here, where its time per run may not show it); waiting: the share of "
                        "that CPU time its threads spent waiting for work rather than handling it (CPU "
                        "time beyond their time less their idle time). Medians per point; each row is "
                        "one kernel's (and scenario's) configurations doing the same work.",
                        markdown_table(["kernel", "points", "least CPU per message", "most CPU per message",
                                        "most CPU spent waiting"], cpu, {1}))
    if memory:
        lines += blocks(f"Memory per agent, on the kernels whose phase made {results.MANY_AGENTS:,} agents or "
                        "more: the process's peak RSS over its resident set before the phase, over the "
                        "agents the phase made (docs/measures.md); medians per point.",
                        markdown_table(["kernel", "points", "least memory per agent", "most memory per agent"],
                                       memory, {1}))
    return lines


def latency_under_load(run: ReportData, machine: Machine) -> list[str]:
    """Latency against offered load on one machine, for each kernel that offers one (the service
    kernel): the percentiles against the load, a line per configuration, and a table of each
    configuration's saturation throughput and the highest load at which its p99 stays within
    BOUND_FACTOR times its unloaded p99. Points whose generator fell behind are named, never
    drawn: they are no latency figure; so are those whose p99 was left out (late sends)."""
    lines: list[str] = []
    for kernel, curve in latency_curves(machine.samples).items():
        prefix = f"{machine.on}-" if machine.on else ""
        lines += blocks(title(f"Latency under load: {printable(kernel)}", machine.on),
                        "Each request's latency runs from when it was due to when its answer was "
                        "taken (open loop: a late send counts against the service, never for it), "
                        "kept in a high-dynamic-range histogram (2 significant digits); medians over "
                        "each point's runs. A send later than late_bound_us after it was due is "
                        "late: a percentile is left out where more of the sends were late than lie "
                        "above it (p99: 1%; the max: any), in any of the point's runs, so that no "
                        "percentile drawn is the generator's lateness; a point whose generator fell "
                        "behind (more than half its sends late) is no latency figure and is left "
                        "off the curve.")
        lines += figure(run, plot_latency_load(curve, kernel), f"{prefix}{file_name(kernel)}-latency-load",
                        f"{kernel}: latency percentiles against offered load")
        rows = []
        for _, row in saturation(curve).iterrows():
            rows.append([printable(row["configuration"]), f"{row['saturation_per_s']:,.0f}/s",
                         or_dash(row["unloaded_p99_ns"], metrics.lookup(BOUND_PERCENTILE).format),
                         or_dash(row["within_bound_rate"], lambda v: f"{v:,.0f}/s"),
                         str(row["p99_left_out"]) if row["p99_left_out"] else "-",
                         str(row["refused"]) if row["refused"] else "-"])
        lines += blocks(f"Saturation throughput: the most requests per second a configuration answered "
                        f"at any offered load. Bound: {BOUND_FACTOR}x the configuration's unloaded p99 "
                        f"(its p99 at its lightest load that is a latency figure); the load given is the "
                        f"highest up to which every point's p99 stands and stays within it.",
                        markdown_table(["configuration", "saturation throughput", "unloaded p99",
                                        f"highest load with p99 <= {BOUND_FACTOR}x unloaded",
                                        "points without p99 (late sends)", "points refused (generator behind)"],
                                       rows))
        left_out = curve[(curve["refused"] == "") & curve[BOUND_PERCENTILE].isna()]
        if not left_out.empty:
            lines += blocks("No p99 (more than 1% of the sends late in a run): " + "; ".join(
                f"{printable(row['configuration'])} at {row['rate']:,.0f}/s" for _, row in left_out.iterrows()) + ".")
        refused = curve[curve["refused"] != ""]
        if not refused.empty:
            lines += blocks("No latency figure (the generator fell behind): " + "; ".join(
                f"{printable(row['configuration'])} at {row['rate']:,.0f}/s" for _, row in refused.iterrows()) + ".")
    return lines
