"""The vocabulary of figures: every metric labctl knows, with its unit, its direction (lower or
higher is better), its name in words and how it is written, and the measures that count them.

One registry (REGISTRY) declares the sample's own figures (elapsed_ns, msgs_per_s, ...) and every
count a measure takes of a phase (instructions, cache_misses, ...; COUNTS). The figures a kernel
or an external program reports (round_trip_p50_ns, ns_per_hop, agents, ...) are not declared here:
`lookup` derives them by one naming rule, written once, below. Everything that judges, scales or
writes a figure asks `lookup(name)` (pyperf's `_metadata.py` is the model). A new count is one
entry of REGISTRY: the store keeps counts by name (labctl.store), so it needs no migration.

Plain data, standard library only: the report, the comparison and the gate read it on a machine
without the extension. The run side of the measures (valgrind, callgrind's files) is
labctl.catalogue.measures.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from labctl.vocabulary.text import format_duration, number

# Directions: which way a figure is better. A figure with none is a fact of the run (the messages
# it processed), not a figure of merit; it is never ranked.
LOWER = "lower"
HIGHER = "higher"
NEITHER = ""

# Units, as the registry names them.
NS = "ns"  # a time, in nanoseconds
COUNT = "count"  # a whole number of events: instructions, misses, switches
RATE = "messages/s"
MESSAGES = "messages"
KIB = "KiB"
BYTES = "bytes"
SHARE = "share"  # a part of a whole, 0 to 1, read as a percentage
NUMBER = ""  # a number of no declared unit: a kernel's own figure (agents, hops per second)


@dataclass(frozen=True)
class Metric:
    """A figure: its name (the same from C++ to the DataFrame column), its unit, which way it is
    better, and its name in words as a table header, a plot's axis or a sentence gives it
    (l1_misses: L1 misses). `declared`: in REGISTRY, not derived by the naming rule."""

    name: str
    unit: str
    better: str  # LOWER, HIGHER or NEITHER
    words: str
    declared: bool = True

    @property
    def column(self) -> str:
        """The DataFrame column of labctl.read.results that holds it: its name."""
        return self.name

    @property
    def lower_is_better(self) -> bool:
        return self.better == LOWER

    @property
    def is_time(self) -> bool:
        return self.unit == NS

    @property
    def is_count(self) -> bool:
        """A whole number of events a phase executed (instructions, misses...), not a time."""
        return self.unit == COUNT

    def directed(self, lower_is_better: bool) -> Metric:
        """The same figure judged the other way where a study says so (a reference's `better`)."""
        return dataclasses.replace(self, better=LOWER if lower_is_better else HIGHER)

    def format(self, value: float) -> str:
        """A value as people read it: 12.3 ms, 104,040,705, 12.35 M msgs/s, 2,048 KiB, 0.45."""
        if self.unit == NS:
            return format_duration(value)
        if self.unit in (COUNT, MESSAGES):
            return f"{value:,.0f}"
        if self.unit == RATE:
            return f"{value / 1e6:.2f} M msgs/s" if value >= 1e5 else f"{value:.0f} msgs/s"
        if self.unit == KIB:
            return f"{value:,.0f} KiB"
        if self.unit == SHARE:
            return f"{value:.0%}"
        if self.unit == BYTES:
            return f"{value:,.0f} B"
        return number(value)

    def scale(self, values: Iterable[float]) -> tuple[float, str]:
        """A divisor and a unit that suit `values` on an axis: (1e6, "ms"), (1e6, "M msgs/s"),
        (1e9, "G") for billions of instructions; (1.0, "") for a number of no unit."""
        largest = max((abs(v) for v in values if not math.isnan(v)), default=1.0)
        steps = {NS: (("s", 1e9), ("ms", 1e6), ("µs", 1e3)),
                 COUNT: (("G", 1e9), ("M", 1e6), ("k", 1e3)),
                 KIB: (("GiB", 2.0**20), ("MiB", 2.0**10))}.get(self.unit, ())
        for unit, factor in steps:
            if largest >= factor:
                return factor, unit
        if self.unit == RATE:
            return (1e6, "M msgs/s") if largest >= 1e5 else (1.0, "msgs/s")
        return 1.0, {NS: "ns", KIB: "KiB"}.get(self.unit, "")


def _declare(*metrics: Metric) -> dict[str, Metric]:
    return {metric.name: metric for metric in metrics}


# The figures every sample has (labctl.vocabulary.sample.Sample, and those labctl.read.results derives from it).
SAMPLE = _declare(
    Metric("elapsed_ns", NS, LOWER, "time per run"),
    Metric("msgs_per_s", RATE, HIGHER, "throughput"),
    Metric("cpu_ns", NS, LOWER, "CPU time"),
    # The cost of a message: the runtime threads' CPU time over the messages of the phase, and
    # the share of that CPU time spent waiting for work (spinning) rather than handling it: CPU
    # time beyond the threads' working time (their time less their idle time), over CPU time.
    Metric("cpu_per_message_ns", NS, LOWER, "CPU per message"),
    Metric("waiting_cpu_share", SHARE, LOWER, "CPU spent waiting"),
    # The memory of an agent, on the kernels that create many (labctl.read.results.MANY_AGENTS or
    # more): the worker's peak RSS over its baseline (rss_growth_kb), over the agents the phase
    # created. Created, not alive at the peak, which the runtime does not count: where agents end before
    # the last is made it counts what the runtime kept of the ended ones, per agent made; where all
    # are alive at once (actor_creation's tree) it is what one alive costs.
    Metric("bytes_per_agent", BYTES, LOWER, "memory per agent"),
    Metric("messages_processed", MESSAGES, NEITHER, "messages processed"),
    Metric("peak_rss_kb", KIB, LOWER, "peak RSS"),
    Metric("voluntary_switches", COUNT, LOWER, "voluntary switches"),
    Metric("involuntary_switches", COUNT, LOWER, "involuntary switches"),
)
# The counts of what a phase executed, in the order tables show them: callgrind's (instructions
# measure) and perf_event's (counters measure, native/kernels/framework/counters.cpp). Each is better lower.
# A new one is a line here and nothing else in Python: the store keeps counts by name.
COUNTED = _declare(
    Metric("instructions", COUNT, LOWER, "instructions"),
    Metric("cycles", COUNT, LOWER, "cycles"),
    Metric("l1_misses", COUNT, LOWER, "L1 misses"),
    Metric("cache_misses", COUNT, LOWER, "cache misses"),
    Metric("branch_misses", COUNT, LOWER, "branch misses"),
    Metric("task_clock_ns", NS, LOWER, "task clock"),
    Metric("context_switches", COUNT, LOWER, "context switches"),
    Metric("cpu_migrations", COUNT, LOWER, "CPU migrations"),
    Metric("page_faults", COUNT, LOWER, "page faults"),
)
# What our runtime counted of the phase, on every run of one of our kernels under any measure
# (native/runtime/stats.hpp): the workload's facts, for its fingerprint (labctl.read.analysis
# .fingerprints), never figures of merit. Kept in a sample's counts beside the measure's.
RUNTIME = _declare(
    Metric("agents_created", COUNT, NEITHER, "agents created"),
    Metric("inbox_messages", MESSAGES, NEITHER, "messages taken from inboxes"),
    Metric("inbox_takes", COUNT, NEITHER, "inbox takes"),
    Metric("inbox_largest", MESSAGES, NEITHER, "largest inbox take"),
    Metric("idle_ns", NS, NEITHER, "idle time"),
    Metric("thread_ns", NS, NEITHER, "thread time"),
    Metric("span_ns", NS, NEITHER, "counted span"),
    # Not the runtime's but the worker's (labctl.run.worker): its peak RSS (getrusage's, by the end
    # of the phase) over its RSS just before its first phase, after the extension was loaded.
    Metric("rss_growth_kb", KIB, NEITHER, "peak RSS over baseline"),
)
REGISTRY: dict[str, Metric] = {**SAMPLE, **COUNTED, **RUNTIME}
# Kernels' own figures that lookup's naming rule would get wrong. No sample has them all, so they
# are not REGISTRY's (compare judges REGISTRY's figures on every sample).
KERNEL_OWN = _declare(
    Metric("generator_late_share", SHARE, LOWER, "share of sends late"),
    Metric("generator_behind", NUMBER, NEITHER, "generator fell behind (1) or kept up (0)"),
)
COUNTS: tuple[str, ...] = tuple(COUNTED)
RUNTIME_COUNTS: tuple[str, ...] = tuple(RUNTIME)
# What `labctl compare` can judge of every sample: each declared figure with a direction.
COMPARABLE: tuple[str, ...] = tuple(name for name, m in REGISTRY.items() if m.better != NEITHER)


def lookup(name: str) -> Metric:
    """The registry's entry for `name`; for a name it does not declare (a kernel's or an external
    program's own figure), one derived by the naming rule, the only place it is written:

    - `*_ns` or `ns_per_*` is a time in nanoseconds, better lower (round_trip_p50_ns,
      ns_per_hop), named in words without its `_ns` (round trip p50);
    - anything else is a number of no declared unit, better higher (agents, hops_per_s).

    A figure the rule gets wrong (a count better lower, a time in another unit) is declared in
    REGISTRY or KERNEL_OWN, or given its direction where it is used (a reference's `better`)."""
    found = REGISTRY.get(name) or KERNEL_OWN.get(name)
    if found is not None:
        return found
    if name.endswith("_ns") or name.startswith("ns_per_"):
        return Metric(name, NS, LOWER, name.removesuffix("_ns").replace("_", " "), declared=False)
    return Metric(name, NUMBER, HIGHER, name.replace("_", " "), declared=False)


# A kernel's figure that, when 1, refuses its sample as a latency figure, with the words that say
# so wherever the sample is shown (`labctl run`, `show`, reports): the service kernel's generator
# fell behind its schedule, so the load it offered was not the one asked for, and the kernel left
# its latency percentiles out.
REFUSED_WHEN: dict[str, str] = {"generator_behind": "generator fell behind: no latency figure"}


def refusals(figures: Mapping[str, object]) -> list[str]:
    """The words of each refusal (REFUSED_WHEN) that `figures`, a sample's metrics or a row of
    them, carries."""
    return [words for name, words in REFUSED_WHEN.items()
            if isinstance(figures.get(name), (int, float)) and figures.get(name) == 1]


def measured(name: str, value: object) -> bool:
    """Whether a kernel's or an external program's figure is a measurement, to be kept: a finite
    number, and, for a time, above 0. A figure that was not measured is absent, never 0: a kernel
    says so by leaving it out (or, from a peer, null); one that still reports NaN, infinity or a
    time of 0 ns (a latency percentile of no sample at all: ping_pong with latency_samples = 0,
    the floors, the Go peer before it left them out) is dropped by this rule, before the store
    and again where a store written before it is read. No phase of work takes no time on a
    nanosecond clock, so 0 ns is never a measured time."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    return value > 0 or not lookup(name).is_time


def measured_only(figures: dict) -> dict[str, float]:
    """The figures of a sample that are measurements (measured), as floats."""
    return {name: float(value) for name, value in figures.items() if measured(name, value)}


# -- measures -------------------------------------------------------------------------------------
# How a point is measured. The run side of each (how its worker starts, how its counts are read)
# is labctl.catalogue.measures; what analysis needs of them is here.

TIME = "time"
INSTRUCTIONS = "instructions"
COUNTERS = "counters"


@dataclass(frozen=True)
class Measure:
    """A way of measuring a point: what it counts of the phase besides the clock, and whether
    its clock is a native one."""

    name: str
    counts: tuple[str, ...]  # names in COUNTS: the counts a sample of it may have
    native_time: bool  # False: elapsed_ns was taken under valgrind, 70-200x slower
    summary: str


MEASURE: dict[str, Measure] = {m.name: m for m in (
    Measure(TIME, (), True, "the steady clock inside the kernel, around its measured phase"),
    Measure(INSTRUCTIONS, ("instructions", "l1_misses", "cache_misses"), False,
            "valgrind's callgrind counts the phase's instructions and simulates its cache misses"),
    Measure(COUNTERS, ("cycles", "instructions", "cache_misses", "branch_misses", "task_clock_ns",
                       "context_switches", "cpu_migrations", "page_faults"), True,
            "perf_event counters of the CPU (user space) and the kernel around the phase"),
)}
MEASURES: tuple[str, ...] = tuple(MEASURE)
