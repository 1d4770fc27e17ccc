"""The analysis of a run, as the report and the notebook share it: one row per point with the
median of its metric and its 95% interval (point_table), which parameters vary, a configuration in
words, the figure's axes, the scenarios of a kernel and the runtimes ranked side by side.

Everything here reads the frames of labctl.read.results and the run's catalogue that travels with them
(results.catalogue_of); nothing needs the extension. A kernel is given by name (looked up in that
catalogue) or as a labctl.vocabulary.schema.Kernel.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from labctl.read import results
from labctl.vocabulary import stats
from labctl.vocabulary.metrics import COUNTS, REFUSED_WHEN, Metric, lookup
from labctl.vocabulary.schema import OFFERED, OPEN_LOOP_LATENCY, OURS, RUNTIME, Floor, Kernel, Param
from labctl.vocabulary.text import show

# Short names of parameters in labels and legends.
SHORT = {"max_demands_at_once": "mda", "spin_us": "spin", "threads": "threads"}
# Parameters that name a configuration by their value alone.
BY_VALUE = ("dispatcher", "fifo")
# Figures per kernel, one per scenario (size, kind of work); the table lists every point.
MAX_SCENARIOS = 12


def params_of(frame: pd.DataFrame | object, kernel: str | Kernel) -> tuple[Param, ...]:
    """The parameters of `kernel`, in its schema's order: a Kernel's own, or those of the kernel
    of that name in the catalogue `frame` carries."""
    if isinstance(kernel, Kernel):
        return kernel.params
    return results.catalogue_of(frame).params(kernel) if isinstance(frame, pd.DataFrame) else ()


TIME = lookup("elapsed_ns")
THROUGHPUT = lookup("msgs_per_s")


def counted(samples: pd.DataFrame) -> list[Metric]:
    """The counts (instructions, cache misses...; labctl.vocabulary.metrics.COUNTS) these samples have
    values of, in that order: what the instructions and counters measures add beside the time."""
    return [lookup(name) for name in COUNTS if name in samples and samples[name].notna().any()]


def per_agent(samples: pd.DataFrame) -> list[Metric]:
    """bytes_per_agent (labctl.vocabulary.metrics), where these samples have values of it: a
    column of `show` beside the counts."""
    return [lookup("bytes_per_agent")] if "bytes_per_agent" in samples and samples["bytes_per_agent"].notna().any() else []


def kernel_metric(samples: pd.DataFrame) -> Metric:
    """Time when every run of the kernel did the same work, throughput when the work varies (a
    size axis, or a kernel that runs for a fixed time)."""
    fixed_time = "duration_s" in samples and samples["duration_s"].notna().any()
    same_work = samples["messages_processed"].nunique() == 1
    return TIME if same_work and not fixed_time else THROUGHPUT


def machines(frame: pd.DataFrame) -> list[tuple[str, list[str], pd.DataFrame]]:
    """The samples (or points) of `frame` split by the machine their points ran on: (the machine
    in words, its hosts, its rows), in the order the machines first appear. One entry for a run
    on one machine (or a frame without a `machine` column, whose machine is then ""); none for
    an empty frame. Figures from two kinds of machine are never pooled: each gets its own."""
    if frame.empty:
        return []
    if "machine" not in frame:
        return [("", [], frame)]
    found = []
    for machine in dict.fromkeys(frame["machine"]):
        part = _with_attrs(frame[frame["machine"] == machine], frame)
        hosts = sorted({str(h) for h in part["host"] if _key(h) is not None}) if "host" in part else []
        found.append((machine, hosts, part))
    return found


# A point given two threads or more whose runtime threads were busy on average for less than
# this share of them ran nearly serially (a pool whose agents share one cooperation, say): its
# figures are not those of its nominal threads, and every table and figure marks it.
UNDERUSED_SHARE = 0.6


def underused(threads: object, busy: float) -> bool:
    """Whether a point given `threads` (None or NaN where it takes none) and busy `busy` threads
    on average used less than UNDERUSED_SHARE of them."""
    given = _key(threads)
    return (isinstance(given, (int, float)) and given >= 2 and not math.isnan(busy)
            and busy < UNDERUSED_SHARE * given)


def busy_text(point) -> str:
    """A point's achieved parallelism as tables write it: "1.04 of 2" (busy threads of its
    threads), "0.98" where it takes no threads parameter, "-" where it has no runtime counts."""
    busy = point.get("busy", math.nan)
    if busy is None or math.isnan(busy):
        return "-"
    given = _key(point.get("threads"))
    return f"{busy:.2f} of {show(given)}" if given is not None else f"{busy:.2f}"


def _native_parallelism(samples: pd.DataFrame) -> pd.Series:
    """Each sample's busy runtime threads (the fingerprint's parallelism), where its measure
    times natively: under valgrind the threads run one at a time."""
    from labctl.vocabulary.metrics import MEASURE

    if samples.empty:
        return pd.Series(dtype=float)
    native = samples["measure"].map(lambda m: MEASURE[m].native_time if m in MEASURE else False) \
        if "measure" in samples else pd.Series(True, index=samples.index)
    return fingerprint_rows(samples)["parallelism"].where(native.astype(bool))


def refused(samples: pd.DataFrame) -> str:
    """Why the point of `samples` is no latency figure, in words, where any of its samples carries
    a refusal (labctl.vocabulary.metrics.REFUSED_WHEN: the service's generator fell behind);
    empty otherwise."""
    return "; ".join(words for name, words in REFUSED_WHEN.items()
                     if name in samples and bool((samples[name] == 1).any()))


def point_table(samples: pd.DataFrame, metric: Metric, per: str | None = None) -> pd.DataFrame:
    """One row per point of `samples` that has values of `metric`: its parameters, sample count,
    the median of `metric` (divided by the parameter `per`) with its 95% interval, cv and noise
    flag, the median throughput, its measure, whether its counts are schedule-dependent, and
    the parallelism it achieved: `busy`, its runtime threads busy on average (median over its
    samples; NaN without runtime counts: a peer's), `underused` (underused()), and `refused`,
    why it is no latency figure (refused()), empty where it is one. A parameter that does not
    apply to the point (Param.condition: sleep_ms where the work is noop) is None, as one its
    dispatcher does not take."""
    rows = []
    params = results.param_columns(samples)
    parallelism = _native_parallelism(samples)
    conditional = {}  # kernel -> its parameters that apply with some values of another only
    for point, group in samples.groupby("point", sort=True):
        group = group[group[metric.name].notna()]  # a count the point's measure did not take
        if group.empty:
            continue
        values = group[metric.name].astype(float)
        if per is not None:
            values = values / group[per].astype(float)
        summary = stats.summarize(list(values))
        rows.append({
            "point": point, "position": group["position"].iloc[0], "kernel": group["kernel"].iloc[0],
            **{name: group[name].iloc[0] for name in params},
            "n": summary.count, "median": summary.median, "ci_low": summary.ci_low,
            "ci_high": summary.ci_high, "cv": summary.cv, "noisy": summary.noisy,
            "rate_median": float(group["msgs_per_s"].median()),
            "measure": group["measure"].iloc[0] if "measure" in group else "time",
            "schedule_dependent": bool(group["schedule_dependent"].fillna(False).any())
            if "schedule_dependent" in group else False,
            "busy": float(parallelism.loc[group.index].median()),
            "refused": refused(group),
        })
        rows[-1]["underused"] = underused(rows[-1].get("threads"), rows[-1]["busy"])
        kernel = rows[-1]["kernel"]
        if kernel not in conditional:
            conditional[kernel] = [p for p in params_of(samples, kernel) if p.condition and p.name in params]
        for param in conditional[kernel]:
            if not param.applies_with(rows[-1]):
                rows[-1][param.name] = None  # sleep_ms where the work is noop: said nowhere
    table = pd.DataFrame(rows)
    table.attrs.update(samples.attrs)  # its parameters are the samples': their catalogue goes with it
    return table


def varying(table: pd.DataFrame | Sequence[Mapping], kernel: str | Kernel,
            missing_varies: bool = False) -> list[str]:
    """The kernel's parameters, in its schema's order, that take more than one value among the
    points of `table` (the rows of a frame, or dicts of parameters). A parameter that some points
    lack (it does not apply to them) with one value wherever it applies, threads=2 say, is fixed,
    unless `missing_varies` (a table that shows each point's parameters in full)."""
    rows = table.to_dict("records") if isinstance(table, pd.DataFrame) else list(table)
    varies = []
    for param in params_of(table, kernel):
        values = {_key(row.get(param.name)) for row in rows}
        if values == {None}:
            continue
        if len(values - {None}) > 1 or (missing_varies and None in values):
            varies.append(param.name)
    return varies


def _key(value) -> object:
    """A parameter's value, None where it does not apply (NaN or NA in a frame)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") and not isinstance(value, (list, dict)) else value


def _numeric(table: pd.DataFrame, kernel: str | Kernel, name: str) -> bool:
    param = next((p for p in params_of(table, kernel) if p.name == name), None)
    return param is not None and param.numeric


def label(row, names: list[str]) -> str:
    """A configuration in words: `thread_pool individual mda=4`; parameters that do not apply to
    the point are left out."""
    parts = []
    for name in names:
        value = _key(row[name])
        if value is None:
            continue
        parts.append(show(value) if name in BY_VALUE else f"{SHORT.get(name, name)}={show(value)}")
    return " ".join(parts)


def fixed(table: pd.DataFrame, kernel: str | Kernel, vary: list[str]) -> str:
    """The parameters that do not vary, with their value."""
    parts = []
    for name in (p.name for p in params_of(table, kernel) if p.name in table and p.name not in vary):
        values = [v for v in table[name] if _key(v) is not None]
        if values:
            where = "" if len(values) == len(table) else " where it applies"
            parts.append(f"{SHORT.get(name, name)}={show(_key(values[0]))}{where}")
    return ", ".join(parts)


def scenarios(table: pd.DataFrame, kernel: str | Kernel) -> list[tuple[str, pd.DataFrame]]:
    """The points of a kernel split by the kernel's own parameters that vary (its sizes, its kind
    of work), so that a figure compares dispatcher configurations doing the same work: a list of
    (scenario in words, its points), at most MAX_SCENARIOS; ("", table) when nothing of the kernel's
    own varies. A scenario the experiment named (a grid's `scenario`) is called by its name."""
    how = {p.name for p in params_of(table, kernel) if p.configuration}
    own = [n for n in varying(table, kernel) if n not in how]
    if not own:
        return [("", table)]
    ordered = table.sort_values(own, key=lambda c: c.map(sort_key))
    groups: dict[str, list] = {}
    for _, row in ordered.iterrows():
        groups.setdefault(label(row, own), []).append(row)
    catalogue = results.catalogue_of(table)
    name_of = kernel if isinstance(kernel, str) else kernel.name
    found, used = [], set()
    for words, rows in itertools.islice(groups.items(), MAX_SCENARIOS):
        name = catalogue.scenario(name_of, rows[0]) or words
        name = f"{name} ({words})" if name in used else name
        used.add(name)
        found.append((name, _with_attrs(pd.DataFrame(rows), table)))
    return found


def _with_attrs(part: pd.DataFrame, whole: pd.DataFrame) -> pd.DataFrame:
    part.attrs.update(whole.attrs)
    return part


def heatmap_panels(table: pd.DataFrame, kernel: str | Kernel, x: str, y: str) -> dict[str, list]:
    """The points of a heat map over `x` and `y`, a panel per configuration of the other varying
    parameters that has at least two values on each axis (at most 6 panels); empty when none has."""
    others = [n for n in varying(table, kernel) if n not in (x, y)]
    panels: dict[str, list] = {}
    for _, row in table.dropna(subset=[x, y]).iterrows():
        panels.setdefault(label(row, others), []).append(row)
    dense = {name: rows for name, rows in panels.items()
             if len({row[x] for row in rows}) >= 2 and len({row[y] for row in rows}) >= 2}
    return dict(itertools.islice(dense.items(), 6))


def axes_for(table: pd.DataFrame, kernel: str | Kernel) -> tuple[str | None, str | None]:
    """The x axis of the line figure (threads first, else a numeric parameter that varies) and
    the y axis of a heat map (a second numeric parameter that varies), where there are any. A
    parameter is an axis only where it was swept: where it takes two values or more among points
    that agree on every other varying parameter. One that follows from the others, as
    max_demands_at_once from the dispatcher where each keeps its own default, is a configuration's
    label, not an axis."""
    vary = varying(table, kernel)
    numeric = [n for n in vary if _numeric(table, kernel, n) and _swept(table, n, vary)]
    numeric.sort(key=lambda n: n != "threads")
    x = numeric[0] if numeric else None
    y = numeric[1] if len(numeric) > 1 else None
    return x, y


def _swept(table: pd.DataFrame, name: str, vary: list[str]) -> bool:
    """Whether `name` takes two values or more among points that agree on every other parameter
    of `vary` (one that does not apply counts as a value of its own)."""
    others = [n for n in vary if n != name]
    groups = table.groupby(others, dropna=False, sort=False) if others else [((), table)]
    return any(len({_key(v) for v in part[name]} - {None}) >= 2 for _, part in groups)


def runtime_ranking(table: pd.DataFrame, kernel: str | Kernel,
                    metric: Metric) -> list[tuple[str, pd.DataFrame]]:
    """Where a kernel ran on several runtimes: for each setting of the parameters every one of
    them takes (the work, threads), each runtime's best point, fastest first, with `ratio` (to
    the fastest, >= 1) and `ours` (our median over its, in time: below 1, ours is faster)."""
    if RUNTIME not in table or table[RUNTIME].nunique() < 2:
        return []
    present = set(table[RUNTIME])
    shared = [p.name for p in params_of(table, kernel) if p.name != RUNTIME and p.name in table
              and (not p.runtimes or present <= set(p.runtimes))]
    keys = [n for n in shared if len({_key(v) for v in table[n]}) > 1]
    parts = table.groupby(keys, dropna=False, sort=True) if keys else [((), table)]
    ranked = []
    for _, part in parts:
        if part[RUNTIME].nunique() < 2:
            continue
        best = (part.sort_values("median", ascending=metric.lower_is_better)
                .groupby(RUNTIME, sort=False).head(1).copy())
        top = best["median"].iloc[0]
        best["ratio"] = best["median"] / top if metric.lower_is_better else top / best["median"]
        ours = best[best[RUNTIME] == OURS]["median"]
        if len(ours):
            mine = ours.iloc[0]
            best["ours"] = mine / best["median"] if metric.lower_is_better else best["median"] / mine
        else:
            best["ours"] = float("nan")
        ranked.append((_setting(table, kernel, part.iloc[0], keys), best))
    return ranked


def _setting(table: pd.DataFrame, kernel: str | Kernel, row, keys: list[str]) -> str:
    """A setting in words: its scenario's name (a grid's `scenario`) for the kernel's own
    parameters that the name stands for, then the rest (`mixed threads=2`), else every key."""
    named = results.catalogue_of(table).scenario(kernel if isinstance(kernel, str) else kernel.name, row)
    if named is None:
        return label(row, keys)
    own = {p.name for p in params_of(table, kernel) if not p.configuration}
    rest = label(row, [k for k in keys if k not in own])
    return f"{named} {rest}".strip()


def configuration(row, names: Sequence[str]) -> str:
    """How a point ran, across kernels: its runtime, then its values of `names` (settings the
    schemas call a configuration: dispatcher, fifo, threads...): `labctl thread_pool threads=2`."""
    runtime = _key(row[RUNTIME]) if RUNTIME in row else None
    return " ".join(part for part in (show(runtime or OURS), label(row, [n for n in names if n in row])) if part)


@dataclass(frozen=True)
class SuiteGroup:
    """A group of a suite's kernels (Catalogue.groups), summarised: `benchmarks` are its kernels'
    scenarios (a kernel at one size is one), and `table` has a row per configuration, best first:
    `geomean`, the geometric mean over the benchmarks it ran of its median over the best
    configuration's of that benchmark (1.0: the best on every one), `ran` how many it ran,
    `worst` its largest such ratio and `worst_at` that benchmark."""

    name: str
    benchmarks: list[str]
    table: pd.DataFrame


def suite_summary(views: Mapping[str, tuple[Metric, pd.DataFrame]],
                  groups: Mapping[str, str]) -> list[SuiteGroup]:
    """Each group of `groups` (kernel -> group) that has kernels in `views` (kernel -> its metric
    and point table), in the order the groups first appear. A configuration's ratio on a
    benchmark is its best point's median over the benchmark's best median (the other way round
    where higher is better), so every ratio is >= 1 and a configuration missing from a benchmark
    is left out of that benchmark's mean, not counted as best or worst."""
    summaries = []
    for group in dict.fromkeys(groups.values()):
        ratios: dict[str, dict[str, float]] = {}  # configuration -> benchmark -> ratio
        benchmarks = []
        kernels = [k for k, g in groups.items() if g == group and k in views]
        # The settings that tell the group's configurations apart: those that vary in a kernel.
        names = list(dict.fromkeys(name for k in kernels for name in varying(views[k][1], k) if name != RUNTIME
                                   and any(p.name == name and p.configuration for p in params_of(views[k][1], k))))
        for kernel in kernels:
            metric, table = views[kernel]
            for scenario, part in scenarios(table, kernel):
                part = part[part["median"] > 0]
                if part.empty:
                    continue
                benchmark = f"{kernel} {scenario}".strip()
                benchmarks.append(benchmark)
                best = part["median"].min() if metric.lower_is_better else part["median"].max()
                for _, row in part.iterrows():
                    ratio = row["median"] / best if metric.lower_is_better else best / row["median"]
                    mine = ratios.setdefault(configuration(row, names), {})
                    mine[benchmark] = min(ratio, mine.get(benchmark, math.inf))
        if not benchmarks:
            continue
        rows = []
        for name, of in ratios.items():
            worst_at = max(of, key=of.get)
            rows.append({"configuration": name, "ran": len(of),
                         "geomean": math.exp(sum(math.log(r) for r in of.values()) / len(of)),
                         "worst": of[worst_at], "worst_at": worst_at})
        table = pd.DataFrame(rows).sort_values(["ran", "geomean"], ascending=[False, True], kind="stable")
        summaries.append(SuiteGroup(group, benchmarks, table.reset_index(drop=True)))
    return summaries


@dataclass(frozen=True)
class RuntimeSuite:
    """A group of a suite's kernels at one thread count, its runtimes ranked: `benchmarks` as
    SuiteGroup's; `table` has a row per runtime, best first: `geomean`, the geometric mean over the
    benchmarks it ran of its best configuration's median over the best runtime's (1.0: the best on
    every one), `ran` how many it ran, `busy` the median over those best points of their runtime
    threads busy on average (NaN where the runtime counts none: a peer's), `worst` and `worst_at`,
    and `within_noise`: whether it is not told apart from the runtime ranked just above it (see
    runtime_suite)."""

    group: str
    threads: int
    benchmarks: list[str]
    table: pd.DataFrame


def runtime_suite(views: Mapping[str, tuple[Metric, pd.DataFrame]],
                  groups: Mapping[str, str]) -> list[RuntimeSuite]:
    """Each group of `groups` (kernel -> group) and thread count at which two runtimes or more ran
    its kernels in `views`, in the order the groups first appear, thread counts ascending. Per
    benchmark, a runtime stands for its best point at that thread count (a dispatcher of ours that
    takes no thread count and starts no thread per agent, one_thread, at 1; one that starts a
    thread per agent at none); a runtime that missed a benchmark is left out of that benchmark's
    mean, as suite_summary.

    Two runtimes next to each other are told apart only where their geometric means differ by
    more than the noise behind them: each median's 95% interval, as a half-width in log terms
    (benchmarks taken as independent, so a mean of n such has the root of their sum of squares
    over n), the two runtimes' combined as the root of their sum of squares. Otherwise the lower
    one is `within_noise` of the one above it. (Three runs of the same build, 27 points each: ours,
    Go, tokio and Erlang on three of Savina's micro benchmarks at one and two threads: tokio and Go
    at one thread 1-5% apart in each run, within noise in each; every other pair told apart in
    each, in the same order.)"""
    found = []
    for group in dict.fromkeys(groups.values()):
        # threads -> benchmark -> runtime -> (its best median, as a time: lower is better; its busy;
        # its 95% interval's half-width in log terms, NaN where unknown)
        best: dict[int, dict[str, dict[str, tuple[float, float, float]]]] = {}
        benchmarks = []
        for kernel in (k for k, g in groups.items() if g == group and k in views):
            metric, table = views[kernel]
            for scenario, part in scenarios(table, kernel):
                part = part[part["median"] > 0]
                benchmark = f"{kernel} {scenario}".strip()
                threads = part["threads"] if "threads" in part else pd.Series(math.nan, index=part.index)
                records = results.catalogue_of(table).dispatchers
                single = part["dispatcher"].map(lambda d: d in records and "threads" not in records[d].takes
                                                and not records[d].thread_per_agent) \
                    if "dispatcher" in part else pd.Series(False, index=part.index)
                threads = pd.to_numeric(threads.where(~single.astype(bool), 1), errors="coerce")
                for count, at in part[threads.notna()].groupby(threads[threads.notna()].astype(int)):
                    runtimes = at[RUNTIME].fillna(OURS) if RUNTIME in at else pd.Series(OURS, index=at.index)
                    for runtime, mine in at.groupby(runtimes):
                        top = mine.loc[mine["median"].idxmin() if metric.lower_is_better else mine["median"].idxmax()]
                        value = top["median"] if metric.lower_is_better else 1 / top["median"]
                        busy = float(top["busy"]) if "busy" in top and pd.notna(top["busy"]) else math.nan
                        best.setdefault(int(count), {}).setdefault(benchmark, {})[str(runtime)] = (
                            value, busy, _log_half_width(top))
                if benchmark not in benchmarks and not part.empty:
                    benchmarks.append(benchmark)
        for count in sorted(best):
            ratios: dict[str, dict[str, float]] = {}
            busy: dict[str, list[float]] = {}
            widths: dict[str, list[float]] = {}
            for benchmark, of in best[count].items():
                fastest = min(value for value, _, _ in of.values())
                for runtime, (value, load, width) in of.items():
                    ratios.setdefault(runtime, {})[benchmark] = value / fastest
                    busy.setdefault(runtime, []).append(load)
                    widths.setdefault(runtime, []).append(width)
            if len(ratios) < 2:
                continue
            rows = []
            for runtime, of in ratios.items():
                worst_at = max(of, key=of.get)
                loads = [b for b in busy[runtime] if not math.isnan(b)]
                rows.append({"runtime": runtime, "ran": len(of),
                             "geomean": math.exp(sum(math.log(r) for r in of.values()) / len(of)),
                             "busy": float(statistics.median(loads)) if loads else math.nan,
                             "worst": of[worst_at], "worst_at": worst_at,
                             "noise": math.sqrt(sum(w * w for w in widths[runtime])) / len(of)})
            table = pd.DataFrame(rows).sort_values(["ran", "geomean"], ascending=[False, True], kind="stable")
            table = table.reset_index(drop=True)
            # Told apart from the one above only past their combined noise (NaN noise: never tied).
            gap = table["geomean"].map(math.log).diff()
            table["within_noise"] = (gap <= (table["noise"] ** 2 + table["noise"].shift() ** 2) ** 0.5) & \
                (table["ran"] == table["ran"].shift())
            found.append(RuntimeSuite(group, count, benchmarks, table.drop(columns="noise")))
    return found


def _log_half_width(point: pd.Series) -> float:
    """Half the width of a point's 95% interval of its median, in log terms (NaN where it has none)."""
    low, high = point.get("ci_low", math.nan), point.get("ci_high", math.nan)
    if pd.isna(low) or pd.isna(high) or low <= 0 or high <= 0:
        return math.nan
    return (math.log(high) - math.log(low)) / 2


# The metric of a kernel that times its sequential program (native/kernels/savina/parallel.hpp): the same
# algorithm on the same input in one thread, without actors, after the phase.
SEQUENTIAL = "sequential_ns"
WORK_TOLERANCE = 0.01  # messages handled that differ by more: unlike work, compared per message


@dataclass(frozen=True)
class Scaling:
    """How one scenario of a kernel that times its sequential program scales with `threads`:
    `sequential` is that program's median time over the scenario's samples (NaN if none holds
    it), `threads` the values run, ascending; `table` has a row per
    configuration (runtime, dispatcher and settings, threads aside) and threads value with its
    `median` time, `speedup` over the same configuration at one thread (NaN where it did not run
    at one), `efficiency` (speedup / threads) and `over_sequential`, the sequential program's
    median over this median (above 1: faster than the program without actors)."""

    kernel: str
    scenario: str
    sequential: float
    threads: list[int]
    table: pd.DataFrame
    # The messages its runs handled, least and most, where they differ by more than
    # WORK_TOLERANCE (astar's search, whose work depends on the schedule): its medians are then
    # times per message, a speed-up a ratio of like work, and `sequential` NaN (no like work).
    work_varies: tuple[float, float] | None = None

    def best(self, threads: int) -> pd.Series | None:
        """The fastest configuration's row at `threads`, None if none ran there."""
        rows = self.table[self.table["threads"] == threads]
        return None if rows.empty else rows.loc[rows["median"].idxmin()]


def scaling(samples: pd.DataFrame) -> list[Scaling]:
    """Each scenario (analysis.scenarios) of each kernel in `samples` (one machine's, timed) whose
    samples hold sequential_ns and whose points ran at two or more `threads` values: its time
    against threads per configuration, with speed-up and efficiency over one thread and the
    sequential program as the baseline. Points without `threads` (a dispatcher that has no
    pool: one_thread, active_obj) are left out: their thread count is not a setting."""
    if SEQUENTIAL not in samples or "threads" not in samples:
        return []
    found = []
    for kernel, part in samples[samples[SEQUENTIAL].notna()].groupby("kernel", sort=False):
        part = _with_attrs(part, samples)
        table = point_table(part, TIME)
        if table.empty or "threads" not in table:
            continue
        # The settings that tell its configurations apart: those that vary, threads aside.
        how = {p.name for p in params_of(samples, kernel) if p.configuration}
        names = [n for n in varying(table, kernel) if n in how and n not in ("threads", RUNTIME)]
        for scenario, points in scenarios(_with_attrs(table, samples), kernel):
            # The sequential program is the same whatever the dispatcher: every point's samples.
            sequential = float(part.loc[part["point"].isin(points["point"]), SEQUENTIAL].median())
            points = points[points["threads"].notna() & (points["median"] > 0)]
            work = part.loc[part["point"].isin(points["point"]), "messages_processed"].astype(float)
            varies = None
            if work.notna().any() and work.min() > 0 and work.max() > work.min() * (1 + WORK_TOLERANCE):
                # Unlike work: a speed-up from times would credit a run for doing less.
                varies = (float(work.min()), float(work.max()))
                each = point_table(part[part["point"].isin(points["point"])], TIME, per="messages_processed")
                points = points.assign(median=points["point"].map(each.set_index("point")["median"]))
                sequential = math.nan
            counts = sorted({int(t) for t in points["threads"]})
            if len(counts) < 2:
                continue
            rows = []
            for _, row in points.iterrows():
                rows.append({"configuration": configuration(row, names), "threads": int(row["threads"]),
                             "median": float(row["median"]), "noisy": bool(row["noisy"])})
            frame = pd.DataFrame(rows).sort_values(["configuration", "threads"], kind="stable")
            at_one = frame[frame["threads"] == 1].groupby("configuration")["median"].min()
            frame["speedup"] = frame["configuration"].map(at_one) / frame["median"]
            frame["efficiency"] = frame["speedup"] / frame["threads"]
            frame["over_sequential"] = sequential / frame["median"]
            found.append(Scaling(kernel, scenario, sequential, counts, frame.reset_index(drop=True), varies))
    # In the experiment's order (its grouped kernels are kept in it), whatever order the points ran in.
    catalogue = results.catalogue_of(samples)
    order = {name: place for place, name in enumerate(dict.fromkeys([*catalogue.groups, *catalogue.kernels]))}
    return sorted(found, key=lambda one: order.get(one.kernel, len(order)))


@dataclass(frozen=True)
class FloorDistance:
    """How far the points of a kernel are from a floor the same run measured: `points` is their
    point table (analysis.point_table) with `multiple`, each median over the floor's in time
    (its floor over its median in throughput): 1.0 is the floor itself."""

    floor: Floor
    floor_kernel: str
    floor_point: str  # the floor's configuration whose median is the floor, in words
    floor_value: float  # that median: the best the floor kernel reached in this run
    metric: Metric
    points: pd.DataFrame


def floor_distances(samples: pd.DataFrame) -> list[FloorDistance]:
    """For each floor kernel of the run in `samples` (one that declares Kernel.floor_of, in the
    catalogue the frame carries) and each figure it bounds that the run measured: the floor's
    value, the best median of its floor_metric over its points (the machine's best case here),
    and each bounded point's median as a multiple of it. Only points with the floor's `where`."""
    catalogue = results.catalogue_of(samples)
    distances = []
    for name, spec in catalogue.kernels.items():
        measured = samples[samples["kernel"] == name] if spec.floor_of and not samples.empty else None
        if measured is None or measured.empty:
            continue
        for floor in spec.floor_of:
            bounded = samples[samples["kernel"] == floor.kernel]
            if bounded.empty or floor.metric not in bounded or floor.floor_metric not in measured:
                continue
            # A time (better lower) or a throughput: a floor and its figure share their unit.
            metric = lookup(floor.metric)
            lower = metric.lower_is_better
            floor_table = point_table(measured[measured[floor.floor_metric].notna()],
                                      lookup(floor.floor_metric).directed(lower))
            if floor_table.empty:
                continue
            best = floor_table.sort_values("median", ascending=lower).iloc[0]
            params = [p.name for p in params_of(bounded, floor.kernel)]
            table = point_table(bounded[bounded[floor.metric].notna()], metric)
            if table.empty:
                continue
            keep = [floor.matches({n: _key(row[n]) for n in params if n in row})
                    for _, row in table.iterrows()]
            table = _with_attrs(table[keep].copy(), table)
            if table.empty:
                continue
            table["multiple"] = (table["median"] / best["median"] if lower
                                 else best["median"] / table["median"])
            distances.append(FloorDistance(floor, name, label(best, varying(floor_table, name)),
                                           float(best["median"]), metric, table))
    return distances


def sort_key(value):
    """Orders parameter values: numbers first, by value, then the rest by text."""
    value = _key(value)
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


# -- fingerprints ---------------------------------------------------------------------------------
# What a workload is, beside how fast it ran, from the counts our runtime keeps of every phase
# (labctl.vocabulary.metrics.RUNTIME_COUNTS; native/runtime/stats.hpp): "Run, Actor, Run" (Blessing et al.,
# AGERE 2019) found that benchmarks of one category behave unlike each other and benchmarks of
# different ones alike. Each axis: its column, its words, and whether groups compare it on a log
# scale (rates and depths span orders of magnitude; shares do not).


@dataclass(frozen=True)
class Axis:
    name: str
    words: str  # in a sentence
    header: str  # in a table's header
    log: bool


AXES = (
    Axis("msgs_per_s", "messages per second", "msgs/s", True),
    Axis("creations_per_s", "agents created per second", "agents/s", True),
    # Messages a consumer found in its queue's inbox when it took it: what other threads (or,
    # in a pool, other queues' agents) had sent it since it last looked, the depth a mailbox
    # reached between looks.
    Axis("depth_mean", "mean inbox take", "take", True),
    Axis("depth_max", "largest inbox take", "max take", True),
    Axis("idle_share", "share of the runtime threads' time spent waiting for work", "idle", False),
    Axis("parallelism", "runtime threads busy on average", "busy", False),
    # Messages that reached their queue through its inbox (an atomic push) over all messages: on
    # one_thread, active_obj and active_group the cross-thread sends; in a pool, sends between
    # queues, which another worker may or may not take.
    Axis("remote_share", "share of messages sent through another queue's inbox", "via inbox", False),
)
MAX_GROUPS = 10


def format_axis(axis: Axis, value: float) -> str:
    """An axis' value as tables write it: rates and depths as numbers, shares as percentages,
    busy threads to two places; '-' where it is undefined."""
    if value is None or math.isnan(value):
        return "-"
    if axis.name in ("idle_share", "remote_share"):
        return f"{value * 100:.0f}%"
    if axis.name == "parallelism":
        return f"{value:.2f}"
    for factor, unit in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g}{unit}"
    return f"{value:.3g}"


@dataclass(frozen=True)
class Fingerprints:
    """The fingerprint of each point of a run that our runtime counted (timed samples only):
    `table` has a row per point (kernel, scenario and configuration in words, `point`) with the median over
    its samples of each axis of AXES and its `group`, a letter: points whose fingerprints lie
    close together share one (hierarchical clustering, Ward's method, on the axes standardised,
    rates and depths in log10, into about sqrt(points / 2) groups, at most MAX_GROUPS).
    `groups` maps each letter to its kernels with how many of their points it holds."""

    table: pd.DataFrame
    groups: dict[str, dict[str, int]]

    def nearest(self, kernel: str, scenario: str | None = None) -> tuple[str, float] | None:
        """The other kernel whose point lies nearest to one of `kernel`'s (of its `scenario`
        only, if given), by standardised distance, and that distance; None where no other kernel
        has a fingerprint."""
        mine = self.table[(self.table["kernel"] == kernel)
                          & ((self.table["scenario"] == scenario) if scenario is not None else True)]
        others = self.table[self.table["kernel"] != kernel]
        if mine.empty or others.empty:
            return None
        ours, theirs = _standardised(self.table).loc[mine.index], _standardised(self.table).loc[others.index]
        best = None
        for _, row in ours.iterrows():
            distances = ((theirs - row) ** 2).sum(axis=1) ** 0.5
            index = distances.idxmin()
            if best is None or distances[index] < best[1]:
                best = (str(self.table.loc[index, "kernel"]), float(distances[index]))
        return best


def fingerprint_rows(samples: pd.DataFrame) -> pd.DataFrame:
    """Each sample's fingerprint axes (AXES), from its runtime counts: NaN where it has none (a
    peer's, or a store written before they were kept) or where an axis is undefined (no inbox
    take: no depth)."""
    frame = pd.DataFrame(index=samples.index)
    if "span_ns" not in samples:
        return frame.assign(**{axis.name: float("nan") for axis in AXES})

    def column(name: str) -> pd.Series:
        return pd.to_numeric(samples[name], errors="coerce").astype(float)

    span, thread, idle = column("span_ns"), column("thread_ns"), column("idle_ns")
    taken, takes = column("inbox_messages"), column("inbox_takes")
    span = span.where(span > 0)
    frame["msgs_per_s"] = samples["msgs_per_s"].astype(float)
    frame["creations_per_s"] = column("agents_created") * 1e9 / span
    frame["depth_mean"] = taken / takes.where(takes > 0)
    frame["depth_max"] = column("inbox_largest").where(takes > 0)
    frame["idle_share"] = (idle / thread.where(thread > 0)).clip(0, 1)
    frame["parallelism"] = ((thread - idle) / span).clip(lower=0)
    messages = samples["messages_processed"].astype(float)
    frame["remote_share"] = (taken / messages.where(messages > 0)).clip(0, 1)
    return frame


def fingerprints(samples: pd.DataFrame) -> Fingerprints | None:
    """The fingerprints of the points in `samples` (one machine's) that hold runtime counts under
    a native clock; None if fewer than two points do."""
    from labctl.vocabulary.metrics import MEASURE

    native = samples["measure"].map(lambda m: MEASURE[m].native_time if m in MEASURE else False)
    timed = samples[native.astype(bool)]
    if timed.empty or "span_ns" not in timed or timed["span_ns"].isna().all():
        return None
    timed = timed[timed["span_ns"].notna()]
    medians = fingerprint_rows(timed).groupby(timed["point"]).median()
    first = _with_attrs(timed.drop_duplicates("point"), samples)
    rows = []
    for kernel, points in first.groupby("kernel", sort=False):
        # A point in words: its scenario (the kernel's own parameters that vary in this run: its
        # sizes, its mix) and its configuration (the settings that vary).
        how = {p.name for p in params_of(samples, str(kernel)) if p.configuration}
        names = varying(_with_attrs(points, samples), str(kernel))
        for _, row in points.iterrows():
            rows.append({"kernel": str(kernel), "scenario": label(row, [n for n in names if n not in how]),
                         "configuration": label(row, [n for n in names if n in how]) or "default",
                         "point": row["point"], **medians.loc[row["point"]].to_dict()})
    if len(rows) < 2:
        return None
    table = pd.DataFrame(rows)
    table["group"] = _groups(_standardised(table))
    groups: dict[str, dict[str, int]] = {}
    for letter, members in table.groupby("group", sort=True):
        groups[str(letter)] = {str(k): int(n) for k, n in members["kernel"].value_counts(sort=False).items()}
    return Fingerprints(table, groups)


def _standardised(table: pd.DataFrame) -> pd.DataFrame:
    """The axes of a fingerprint table as clustering compares them: log10(1 + x) for rates and
    depths, each axis then centred and scaled to unit deviation (a constant axis is 0), an axis
    a point lacks at the axis' mean (0)."""
    frame = pd.DataFrame(index=table.index)
    for axis in AXES:
        values = table[axis.name].astype(float)
        if axis.log:
            values = (1 + values.clip(lower=0)).map(math.log10)
        deviation = values.std(ddof=0)
        frame[axis.name] = ((values - values.mean()) / deviation if deviation > 0 else values * 0).fillna(0)
    return frame


def _groups(standardised: pd.DataFrame) -> list[str]:
    """A letter per row: Ward's hierarchical clustering cut into about sqrt(n / 2) groups."""
    from scipy.cluster.hierarchy import fcluster, linkage

    count = len(standardised)
    wanted = max(1, min(MAX_GROUPS, round(math.sqrt(count / 2))))
    labels = fcluster(linkage(standardised.to_numpy(), method="ward"), t=wanted, criterion="maxclust")
    # Letters in the order the groups first appear, so that the table reads A, B, C down.
    letters: dict[int, str] = {}
    for label_ in labels:
        letters.setdefault(int(label_), chr(ord("A") + len(letters)))
    return [letters[int(label_)] for label_ in labels]


# -- turns ----------------------------------------------------------------------------------------
# A workload that runs in turns (the chat of "Run, Actor, Run") reports the distribution of its
# turns' durations and their quality of service, and counts what its actors did.
TURN_FIGURES = ("turn_p50_ns", "turn_p99_ns", "turn_max_ns", "turn_qos_ns")
ACTIONS = ("computes", "posts", "deliveries", "departures", "invites", "nothings")


@dataclass(frozen=True)
class Turns:
    """One scenario of a kernel that records turn_p50_ns: `table` has a row per configuration
    (runtime, dispatcher and settings, threads aside) and threads value, with the median over the
    point's samples of each figure of TURN_FIGURES (NaN where none holds it); `actions` the
    median count of each action of ACTIONS its points recorded (the same on every configuration
    where the kernel verifies them against its simulation)."""

    kernel: str
    scenario: str
    threads: list[int]
    table: pd.DataFrame
    actions: dict[str, float]


def turns(samples: pd.DataFrame) -> list[Turns]:
    """Each scenario (analysis.scenarios) of each kernel in `samples` (one machine's, timed) that
    records turn_p50_ns: its turns' durations and quality of service against threads."""
    if TURN_FIGURES[0] not in samples:
        return []
    found = []
    for kernel, part in samples[samples[TURN_FIGURES[0]].notna()].groupby("kernel", sort=False):
        part = _with_attrs(part, samples)
        table = point_table(part, lookup(TURN_FIGURES[0]))
        how = {p.name for p in params_of(samples, kernel) if p.configuration}
        names = [n for n in varying(table, kernel) if n in how and n not in ("threads", RUNTIME)]
        for scenario, points in scenarios(_with_attrs(table, samples), kernel):
            mine = part[part["point"].isin(points["point"])]
            rows = []
            for _, row in points.iterrows():
                of_point = mine[mine["point"] == row["point"]]
                threads = row.get("threads")
                rows.append({"configuration": configuration(row, names),
                             "threads": 1 if _key(threads) is None else int(threads),
                             **{name: float(pd.to_numeric(of_point[name], errors="coerce").median())
                                if name in of_point else math.nan for name in TURN_FIGURES}})
            frame = pd.DataFrame(rows).sort_values(["configuration", "threads"], kind="stable")
            actions = {name: float(pd.to_numeric(mine[name], errors="coerce").median())
                       for name in ACTIONS if name in mine}
            found.append(Turns(str(kernel), scenario, sorted(set(frame["threads"])),
                               frame.reset_index(drop=True), actions))
    return found


# -- latency under load ---------------------------------------------------------------------------
# A kernel that offers a load (the parameter OFFERED, requests per second) and records latency
# percentiles from each request's due time (the service kernel): its curve of latency against
# load per configuration, and where each configuration saturates.

ANSWERED = "answered_per_s"
LATENCY_PERCENTILES = ("latency_p50_ns", "latency_p99_ns", "latency_p999_ns")
BOUND_PERCENTILE = OPEN_LOOP_LATENCY
# A configuration's latency bound: this many times its unloaded p99 (its p99 at its lightest load
# that is a latency figure).
BOUND_FACTOR = 10


def latency_curves(samples: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per kernel whose samples offer a load and record latency percentiles: a row per point, its
    `configuration` (its varying parameters but the load, in words), the offered `rate`, the
    median of each of LATENCY_PERCENTILES over its samples (NaN unless every sample has it: a run
    leaves a percentile out where its generator's late sends were more than the share above it),
    the median `answered_per_s`, and `refused` (refused(): why it is no latency figure,
    "" where it is one). Kernels without such samples are left out."""
    curves = {}
    for kernel, part in samples.groupby("kernel", sort=False):
        # A kernel whose every point was refused has no percentile column, and still its curve.
        if OFFERED not in part or part[OFFERED].isna().all() or \
                not ({BOUND_PERCENTILE, *REFUSED_WHEN} & set(part.columns)):
            continue
        points = part.groupby("point", sort=True)
        first = points.first()
        others = [name for name in varying(first.reset_index(), kernel) if name != OFFERED]
        rows = []
        for point, group in points:
            rows.append({"point": point, "configuration": label(group.iloc[0], others) or "one configuration",
                         OFFERED: float(group[OFFERED].iloc[0]),
                         **{name: float(group[name].median()) if name in group and group[name].notna().all()
                            else math.nan for name in LATENCY_PERCENTILES},
                         ANSWERED: float(group[ANSWERED].median()) if ANSWERED in group else math.nan,
                         "refused": refused(group)})
        curves[kernel] = pd.DataFrame(rows).sort_values(["configuration", OFFERED], kind="stable")
    return curves


def saturation(curve: pd.DataFrame) -> pd.DataFrame:
    """Per configuration of a latency_curves() table: `saturation_per_s`, the most requests per
    second it answered at any load; `unloaded_p99_ns`, its p99 at its lightest load that is a
    latency figure; `bound_ns`, BOUND_FACTOR times that; `within_bound_rate`, the highest offered
    load up to which its p99 stands and stays within the bound at every load from that lightest
    (NaN where even its lightest is not one); `refused`, how many of its points are no latency
    figure; and `p99_left_out`, how many others have no p99 (their generator's late sends)."""
    rows = []
    for configuration, points in curve.groupby("configuration", sort=False):
        points = points.sort_values(OFFERED)
        figures = points[points["refused"].eq("")]
        standing = figures[figures[BOUND_PERCENTILE].notna()]
        unloaded = float(standing[BOUND_PERCENTILE].iloc[0]) if not standing.empty else math.nan
        bound = BOUND_FACTOR * unloaded
        within = math.nan
        from_unloaded = figures[figures[OFFERED] >= standing[OFFERED].min()] if not standing.empty else figures[:0]
        for _, point in from_unloaded.iterrows():
            if not point[BOUND_PERCENTILE] <= bound:  # over the bound, or left out (NaN)
                break
            within = float(point[OFFERED])
        rows.append({"configuration": configuration, "saturation_per_s": float(points[ANSWERED].max()),
                     "unloaded_p99_ns": unloaded, "bound_ns": bound, "within_bound_rate": within,
                     "refused": int((points["refused"] != "").sum()),
                     "p99_left_out": int(figures[BOUND_PERCENTILE].isna().sum())})
    return pd.DataFrame(rows)
