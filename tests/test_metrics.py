"""The vocabulary of figures (labctl.vocabulary.metrics): every metric's unit and direction from one registry,
the naming rule for the figures it does not declare, and the analysis side free of the run side."""

from __future__ import annotations

import subprocess
import sys

import pytest

from labctl.vocabulary import metrics, sample
from labctl.vocabulary.metrics import COUNT, HIGHER, KIB, LOWER, MESSAGES, NEITHER, NS, NUMBER, RATE, lookup

# What each figure of a sample is, written out here rather than read back from the registry.
SAMPLE_FIGURES = {
    "elapsed_ns": (NS, LOWER), "msgs_per_s": (RATE, HIGHER), "cpu_ns": (NS, LOWER),
    "messages_processed": (MESSAGES, NEITHER), "peak_rss_kb": (KIB, LOWER),
    "voluntary_switches": (COUNT, LOWER), "involuntary_switches": (COUNT, LOWER),
}
# The counts of a phase: callgrind's and perf_event's (native/kernels/framework/counters.cpp), each a
# number of events, better lower; task_clock_ns is a time.
COUNT_UNITS = {"instructions": COUNT, "cycles": COUNT, "l1_misses": COUNT, "cache_misses": COUNT,
               "branch_misses": COUNT, "task_clock_ns": NS, "context_switches": COUNT,
               "cpu_migrations": COUNT, "page_faults": COUNT}


def test_the_registry_gives_every_figure_of_a_sample_its_unit_and_direction():
    for name, (unit, better) in SAMPLE_FIGURES.items():
        metric = lookup(name)
        assert (metric.declared, metric.unit, metric.better) == (True, unit, better), name
    # Every column of labctl.results that holds a figure is declared, none derived by the rule.
    figures = [c for c in sample.COLUMNS if c in SAMPLE_FIGURES or c in COUNT_UNITS]
    assert set(figures) == set(SAMPLE_FIGURES) | set(COUNT_UNITS)
    assert all(lookup(name).declared for name in figures)


def test_the_registry_gives_every_count_its_unit_and_lower_is_better():
    assert set(metrics.COUNTS) == set(COUNT_UNITS)
    for name, unit in COUNT_UNITS.items():
        metric = lookup(name)
        assert (metric.unit, metric.lower_is_better, metric.declared) == (unit, True, True), name
    assert [lookup(n).words for n in ("l1_misses", "cpu_migrations", "task_clock_ns")] == [
        "L1 misses", "CPU migrations", "task clock"]
    # The results frame keeps them in the registry's order.
    assert [c for c in sample.COLUMNS if c in COUNT_UNITS] == list(metrics.COUNTS)


def test_each_measure_counts_only_registered_counts_and_every_count_has_a_measure():
    assert metrics.MEASURES == ("time", "instructions", "counters")
    assert metrics.MEASURE["time"].counts == ()
    assert set(metrics.MEASURE["instructions"].counts) == {"instructions", "l1_misses", "cache_misses"}
    assert not metrics.MEASURE["instructions"].native_time
    counted = {name for measure in metrics.MEASURE.values() for name in measure.counts}
    assert counted == set(metrics.COUNTS)


@pytest.mark.parametrize(("name", "unit", "better", "words"), [
    ("round_trip_p50_ns", NS, LOWER, "round trip p50"),  # ping_pong's latency percentiles
    ("ns_per_hop", NS, LOWER, "ns per hop"),
    ("agents", NUMBER, HIGHER, "agents"),
    ("hops_per_s", NUMBER, HIGHER, "hops per s"),
    ("nsec", NUMBER, HIGHER, "nsec"),  # neither *_ns nor ns_per_*
])
def test_a_metric_the_registry_does_not_declare_follows_the_naming_rule(name, unit, better, words):
    metric = lookup(name)
    assert (metric.name, metric.unit, metric.better, metric.words, metric.declared) == (
        name, unit, better, words, False)
    assert metric.is_time == (unit == NS) and not metric.is_count


def test_a_reference_can_judge_a_metric_the_other_way():
    assert lookup("agents").directed(lower_is_better=True).lower_is_better
    assert not lookup("elapsed_ns").directed(lower_is_better=False).lower_is_better
    assert lookup("elapsed_ns").lower_is_better  # the registry's entry is left as it was


def test_each_unit_has_its_formatter():
    assert lookup("instructions").format(104_040_705) == "104,040,705"
    assert lookup("task_clock_ns").format(21_000_345) == "21.0 ms"
    assert lookup("elapsed_ns").format(1_234_000_000) == "1.234 s"
    assert lookup("msgs_per_s").format(12_345_678) == "12.35 M msgs/s"
    assert lookup("msgs_per_s").format(950) == "950 msgs/s"
    assert lookup("peak_rss_kb").format(2048) == "2,048 KiB"
    assert lookup("messages_processed").format(1_000_000) == "1,000,000"
    assert lookup("agents").format(0.45) == "0.45" and lookup("agents").format(17_354_483) == "17,354,483"


def test_each_unit_has_its_scale_on_an_axis():
    assert lookup("elapsed_ns").scale([2e6, 5e6]) == (1e6, "ms")
    assert lookup("round_trip_p50_ns").scale([300.0]) == (1.0, "ns")
    assert lookup("instructions").scale([1.2e9, float("nan")]) == (1e9, "G")
    assert lookup("msgs_per_s").scale([3e7]) == (1e6, "M msgs/s")
    assert lookup("peak_rss_kb").scale([4096]) == (1024, "MiB")
    assert lookup("agents").scale([12.0]) == (1.0, "")


def test_the_analysis_side_never_imports_the_run_side_nor_the_extension():
    # metrics itself imports nothing heavy; report, gate and the rest read no run-side module.
    code = ("import sys; import labctl.vocabulary.metrics; "
            "heavy = [m for m in ('labctl._native', 'pandas', 'numpy', 'labctl.catalogue.measures') if m in sys.modules]; "
            "assert not heavy, heavy; "
            "import labctl.read.report, labctl.read.gate, labctl.read.analysis, labctl.read.compare, labctl.results, "
            "labctl.read.figures, labctl.read.references, labctl.vocabulary.stats; "
            "run_side = [m for m in ('labctl.catalogue.measures', 'labctl._native') if m in sys.modules]; "
            "assert not run_side, run_side")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
