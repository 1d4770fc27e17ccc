"""The report's figures as a reader sees them: one-line titles, every configuration its own marker
and line, intervals as error bars, noisy points hollow and said so; a parameter that does not
apply never named; the percentiles a kernel stores drawn; each kernel's conclusion in a line; and
a run set against the previous run of its experiment."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from labctl.read import figures, report
from labctl.read.sections.kernels import conclusion
from labctl.vocabulary import schema
from labctl.vocabulary.metrics import lookup

TIME = lookup("elapsed_ns")


def param(name: str, kind: str, help: str = "", configuration: bool = True) -> schema.Param:
    return schema.Param(name, kind, None, help, None, None, (), (), (), configuration)


KERNEL = schema.Kernel("skynet", "", "", (), "", "",
                       (param("leaves", "integer", configuration=False), param("dispatcher", "choice"),
                        param("threads", "integer")))


def points(noisy_at: set[tuple[str, int]] = frozenset()) -> pd.DataFrame:
    """Three configurations at 1, 2 and 4 threads, two of them at nearly the same time; one
    dispatcher without threads."""
    rows = []
    for dispatcher, base in (("thread_pool", 3.0e6), ("work_stealing", 3.05e6), ("adv_pool", 8e6)):
        for threads in (1, 2, 4):
            median = base / threads ** 0.5
            rows.append({"leaves": 1000, "dispatcher": dispatcher, "threads": threads, "median": median,
                         "ci_low": median * 0.7, "ci_high": median * 2.5,
                         "noisy": (dispatcher, threads) in noisy_at, "underused": False})
    rows.append({"leaves": 1000, "dispatcher": "one_thread", "threads": None, "median": 2e6,
                 "ci_low": 1.9e6, "ci_high": 2.2e6, "noisy": False, "underused": False})
    return pd.DataFrame(rows)


def test_a_line_figure_has_a_one_line_title_without_the_fixed_parameters():
    figure = figures.plot_lines(points(), KERNEL, TIME, "threads")
    title = figure.axes[0].get_title()
    assert title == "skynet: time per run vs threads"
    assert "leaves" not in title and "\n" not in title


def test_each_configuration_has_its_own_marker_and_is_moved_apart_from_the_next():
    figure = figures.plot_lines(points(), KERNEL, TIME, "threads")
    ax = figure.axes[0]
    lines = [line for line in ax.get_lines() if line.get_marker() in figures.MARKERS]
    assert len(lines) == 3
    assert len({line.get_marker() for line in lines}) == 3
    xs = [tuple(line.get_xdata()) for line in lines]
    assert len(set(xs)) == 3, "no two lines at the same x"
    for line in xs:  # moved by a little, never onto the next value
        assert all(abs(x / true - 1) < 0.2 for x, true in zip(line, (1, 2, 4)))


def test_intervals_are_error_bars_not_filled_bands():
    from matplotlib.collections import LineCollection, PolyCollection

    ax = figures.plot_lines(points(), KERNEL, TIME, "threads").axes[0]
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    bars = [c for c in ax.collections if isinstance(c, LineCollection)]
    segments = [s for c in bars for s in c.get_segments()]
    # thread_pool at 1 thread: from 0.7 to 2.5 times its median of 3 ms
    assert any(abs(s[0][1] - 2.1) < 1e-9 and abs(s[1][1] - 7.5) < 1e-9 for s in segments)


def test_noisy_points_are_hollow_and_the_legend_says_so():
    ax = figures.plot_lines(points({("adv_pool", 2)}), KERNEL, TIME, "threads").axes[0]
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert "hollow: noisy (cv > 10%)" in legend
    hollow = [c for c in ax.collections if len(c.get_offsets()) and len(c.get_facecolors()) and
              tuple(c.get_facecolors()[0][:3]) == (1.0, 1.0, 1.0)]
    assert [tuple(c.get_offsets()[0]) for c in hollow] == [(pytest.approx(2, rel=0.2), pytest.approx(8 / 2 ** 0.5))]
    quiet = figures.plot_lines(points(), KERNEL, TIME, "threads").axes[0]
    assert "hollow: noisy (cv > 10%)" not in [t.get_text() for t in quiet.get_legend().get_texts()]


def test_a_noisy_bar_is_hollow_as_its_axis_says_and_the_title_is_one_line():
    table = points({("work_stealing", 2)})
    table = table[table["threads"] == 2]
    figure = figures.plot_bars(table, KERNEL, TIME)
    ax = figure.axes[0]
    assert "\n" not in ax.get_title() and "leaves" not in ax.get_title()
    names = [t.get_text() for t in ax.get_yticklabels()]
    hollow = [name for name, bar in zip(names, ax.patches) if bar.get_facecolor()[:3] == (1.0, 1.0, 1.0)]
    assert hollow == ["work_stealing"]
    assert ax.get_xlabel() == "time per run (ms): median and its 95% interval; hatched: noisy (cv > 10%)"


def test_a_parameter_whose_help_names_a_condition_applies_with_it_only():
    sleep = param("sleep_ms", "number", "work=sleep: milliseconds a worker sleeps per number", False)
    either = param("burst", "integer", "producer=agent|thread: items per message", False)
    assert sleep.condition == ("work", ("sleep",)) and either.condition == ("producer", ("agent", "thread"))
    assert sleep.applies_with({"work": "sleep"}) and not sleep.applies_with({"work": "noop"})
    assert sleep.applies_with({}) and either.applies_with({"producer": "thread"})
    assert param("threads", "integer", "threads of the pool: 0 for one per CPU").condition is None


def test_the_percentiles_a_kernel_stores_are_found_by_their_names():
    names = ["elapsed_ns", "round_trip_p50_ns", "round_trip_p99_ns", "round_trip_max_ns",
             "round_trip_mean_ns", "round_trip_samples", "turn_p50_ns", "clock_read_ns", "send_p99_ns"]
    assert figures.percentile_family(names) == {
        "round_trip": {"p50": "round_trip_p50_ns", "p99": "round_trip_p99_ns", "max": "round_trip_max_ns",
                       "mean": "round_trip_mean_ns"}}


def test_the_conclusion_names_the_best_and_says_when_the_next_is_within_noise():
    table = points()
    at_two = table[table["threads"] == 2]
    line = conclusion(TIME, at_two, KERNEL)
    # thread_pool (2.12 ms) and work_stealing (2.16 ms) overlap: no order between them is claimed
    assert line.startswith("In short: thread_pool is best, 2.1 ms, within noise of work_stealing (1.02x; ")
    assert "the worst, adv_pool, is 2.67x behind" in line
    apart = at_two.assign(ci_low=at_two["median"] * 0.999, ci_high=at_two["median"] * 1.001)
    assert ", 1.02x ahead of work_stealing;" in conclusion(TIME, apart, KERNEL)


PING = """\
name = "ping twice"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 60

[[grid]]
kernel = "ping_pong"
params = { messages = 2000, latency_samples = 200, dispatcher = "one_thread" }
"""


def test_a_report_sets_its_run_against_the_previous_run_and_draws_the_round_trips(labctl, tmp_path):
    (tmp_path / "ping.toml").write_text(PING)
    db = tmp_path / "p.db"
    for _ in range(2):
        assert labctl("sweep", str(tmp_path / "ping.toml"), "--db", str(db), "--quiet").returncode == 0
    first, second = tmp_path / "r1", tmp_path / "r2"
    report.write(db, 1, first)  # in this process: a report needs no worker
    report.write(db, 2, second)
    assert "## Against the previous run" not in (first / "report.md").read_text()  # none before it
    text = (second / "report.md").read_text()
    section = text[text.index("## Against the previous run"):]
    section = section[:section.index("\n## ", 1)]
    assert "the same points of run 1, the previous run of this experiment" in section
    assert "`labctl compare 1 2`" in section
    row = next(line for line in section.splitlines() if line.startswith("| ping_pong |"))
    cells = row.strip("| ").split(" | ")
    assert cells[1:3] == ["time per run", "1"] and sum(map(int, cells[3:7])) == 1, row
    assert re.fullmatch(r"\d+\.\d\dx", cells[7]), row
    assert "![ping_pong: round trip percentiles per configuration](figures/ping_pong-round_trip.png)" in text
    assert (second / "figures" / "ping_pong-round_trip.png").stat().st_size > 5000
    kernel = text[text.index("## ping_pong"):]
    assert re.search(r"^In short: one point, \d", kernel, re.M)
    assert kernel.index("Fixed in every point below:") < kernel.index("![")


def test_lines_drawn_over_each_other_are_named_together_in_the_legend():
    table = points()
    # thread_pool and work_stealing lie within 2% of each other (adv_pool 2.67x theirs) at every thread count
    ax = figures.plot_lines(table, KERNEL, TIME, "threads").axes[0]
    legend = [text.get_text().replace("\n", " ") for text in ax.get_legend().get_texts()]
    assert "within 10% of each other at every threads: thread_pool, work_stealing" in legend
    apart = table.assign(median=table["median"].where(table["dispatcher"] != "work_stealing", table["median"] * 1.2))
    legend = [t.get_text() for t in figures.plot_lines(apart, KERNEL, TIME, "threads").axes[0].get_legend().get_texts()]
    assert not [words for words in legend if words.startswith("within")]
