"""What the listing commands print, for a person at a terminal of 80 or 200 columns and in a pipe
(each line within the width, nothing cut within a word or wrapped a character a line), and for a
program (`--json`: one document on stdout); `kernels` a line per kernel, `--describe` and `run
KERNEL --help` a kernel's parameters; durations said as measured; `--quiet`; a piped sweep's
progress a line per point."""

from __future__ import annotations

import io
import json
import re
import statistics
from pathlib import Path

import pytest

from labctl.catalogue import kernels
from labctl.cli.commands.kernels import study_label
from labctl.plan import experiment
from labctl.store import Store
from labctl.vocabulary.sample import Sample
from labctl.vocabulary.text import format_elapsed, shorten

GRID = """
name = "widths"
description = "skynet over the pools, for the widths of show"
repeats = 3
warmup = 0
order = "grid"
[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
axes = { dispatcher = ["one_thread", "thread_pool", "work_stealing"], threads = [1, 2], fifo = ["cooperation", "individual"] }
"""

# Each point's samples, by its position: 93 µs, 94 µs and 95 µs times the position + 1, so the
# median of point i is 94 µs x (i + 1); the last point failed.
def _times(position: int) -> list[int]:
    return [(93_000 + k * 1_000) * (position + 1) for k in range(3)]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A finished run of GRID with known times (no kernel runs: the store is written directly)."""
    db = tmp_path_factory.mktemp("listing") / "r.db"
    plan = experiment.parse(GRID, "widths.toml", seed=1)
    machine = {"hostname": "h", "cpu_model": "AMD EPYC", "logical_cpus": 2, "physical_cores": 2, "smt": False,
               "kernel": "6.1"}
    with Store(db) as s:
        run = s.create_run(plan, "labctl sweep widths.toml", machine, {"load_average": [0.1, 0.1, 0.1]},
                           ["the machine is busy: load average 0.57 over 2 CPUs; other work will disturb the figures"])
        points = s.points(run)
        for point in points[:-1]:
            for repeat, ns in enumerate(_times(point.position)):
                s.add_sample(point.id, repeat, Sample(
                    kernel=point.point.kernel, params=point.point.params, index=repeat, warmup=False, elapsed_ns=ns,
                    messages_processed=2221, answer="sum=499500 agents=1111", expected="sum=499500 agents=1111"))
            s.finish_point(point.id)
        s.fail_point(points[-1].id, "crash", "killed by SIGSEGV")
        s.end_run(run, "finished")
    return db


def _lines(text: str) -> list[str]:
    return text.splitlines()


def _assert_within(text: str, width: int) -> None:
    too_wide = [line for line in _lines(text) if len(line) > width]
    assert not too_wide, too_wide
    # No cell folded a few characters a line ("dis", "pat", ...): every non-blank line says more.
    assert not [line for line in _lines(text) if 0 < len(line.strip()) <= 3], text


# --- kernels ---------------------------------------------------------------------------------


def test_kernels_lists_each_kernel_on_one_line_with_what_it_measures_and_its_study(labctl):
    listed = labctl("kernels", env={"COLUMNS": "80"})
    assert listed.returncode == 0, listed.stderr
    _assert_within(listed.stdout, 80)
    catalogue = kernels.catalogue()
    for kernel in catalogue.values():
        [line] = [line for line in _lines(listed.stdout) if line.startswith(kernel.name + " ")]
        assert line.endswith(study_label(kernel))
    assert "skynet                the cost of agent creation" in listed.stdout
    # A screen: the kernels, a header, the runtimes and allocators, and little else.
    assert len(_lines(listed.stdout)) <= len(catalogue) + 25


def test_a_study_is_cited_as_in_text():
    assert study_label(kernels.get("skynet")) == "Arena 2024 +1"
    assert study_label(kernels.get("savina_big")) == "Imam and Sarkar 2014"
    assert study_label(kernels.get("chat")) == "Blessing et al. 2019"


def test_kernels_describe_gives_each_parameter_its_default_allowed_values_and_the_metrics(labctl):
    described = labctl("kernels", "--describe", "ping_pong", env={"COLUMNS": "80"})
    assert described.returncode == 0, described.stderr
    _assert_within(described.stdout, 80)
    joined = " ".join(described.stdout.split())
    for param in kernels.get("ping_pong").params:
        assert f"{param.name} = {param.default_text()} ({param.allowed()}" in joined
    assert "max_demands_at_once = 4 (work_stealing: 16)" in joined
    assert "round_trip_p99_ns round trip p99 (ns, lower is better)" in joined


def test_kernels_describe_gives_a_kernels_share_and_flag_their_declared_directions(labctl):
    # The naming rule would call both "higher is better": a share of late sends is better lower,
    # a flag neither.
    joined = " ".join(labctl("kernels", "--describe", "service").stdout.split())
    assert "generator_late_share share of sends late (share, lower is better)" in joined
    assert "generator_behind generator fell behind (1) or kept up (0) latency_p50_ns" in joined


def test_an_unknown_kernel_is_one_line_naming_the_closest_and_every_kernel(labctl):
    refused = labctl("kernels", "--describe", "skynt")
    assert refused.returncode == 2 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith("labctl: --describe: skynt: unknown kernel; did you mean skynet? (kernels: actor_creation, ")
    assert all(name in line for name in kernels.catalogue())


def test_run_kernel_help_lists_the_kernels_parameters_as_options(labctl):
    helped = labctl("run", "skynet", "--help")
    assert helped.returncode == 0, helped.stderr
    text = " ".join(helped.stdout.split())
    assert "Parameters of skynet" in text
    assert "--leaves INTEGER leaf agents" in text and "[default: 1000000; 1..100000000]" in text
    assert "--dispatcher CHOICE" in text and "--fifo CHOICE" in text
    assert "--repeats" in text  # run's own options too
    refused = labctl("run", "skynt", "--help")
    assert refused.returncode == 2 and refused.stdout == "" and "did you mean skynet?" in refused.stderr
    assert "`labctl run KERNEL --help` lists KERNEL's parameters." in labctl("run", "--help").stdout


# --- show at 80 and 200 columns and piped ----------------------------------------------------


@pytest.mark.parametrize("columns", ["80", "200", None])
def test_show_fits_the_width_with_every_figure_and_parameter_whole(labctl, store, columns):
    shown = labctl("show", "1", "--db", str(store), env={"COLUMNS": columns} if columns else None)
    assert shown.returncode == 0, shown.stderr
    _assert_within(shown.stdout, int(columns or 100))  # a pipe without COLUMNS: 100
    points = Store(store, create=False).points(1)
    for point in points[:-1]:  # each median and interval whole, on one line
        low = statistics.median(_times(point.position)) / 1000
        assert re.search(rf"\b{low:.1f} µs\b", shown.stdout), (low, shown.stdout)
    assert re.search(r"\d+\.\d µs\.\.\d+\.\d µs", shown.stdout)
    assert "failed (crash) skynet" in " ".join(shown.stdout.split())
    if columns == "200":  # a table: a column per parameter that varies
        # (the settings the swept dispatchers take, in the schema's order: a new setting too)
        header = next(line for line in _lines(shown.stdout) if line.lstrip().startswith("#")).split()
        swept = {point.point.params["dispatcher"] for point in points}
        settings = [p.name for p in kernels.get("skynet").params if set(p.applies_to) & swept]
        assert header[:2] == ["#", "dispatcher"] and header[2:-6] == settings
        assert {"threads", "fifo", "max_demands_at_once", "wake"} <= set(settings)
        assert header[-6:] == ["n", "median", "95%", "CI", "cv", "msgs/s"]
    if columns == "80":  # the parameters under the figures, each name=value whole
        assert "dispatcher=work_stealing  threads=2  fifo=cooperation  max_demands_at_once=16" in shown.stdout


@pytest.mark.parametrize("args", [["runs"], ["plan", "quickstart"], ["kernels", "--describe", "chat"]])
def test_the_other_listings_fit_80_columns(labctl, store, args):
    listed = labctl(*args, "--db", str(store), env={"COLUMNS": "80"}) if args[0] != "kernels" else \
        labctl(*args, env={"COLUMNS": "80"})
    assert listed.returncode == 0, listed.stderr
    _assert_within(listed.stdout, 80)


ROWS = [["allocators", "12", "~8 s", "Boost.Fiber: Performance (Oliver Kowalke, 2023)"],
        ["chat", "70", "~40 s", "-"],
        ["savina", "311", "~4 min", ("Savina - An Actor Benchmark Suite: Enabling Empirical Evaluation of "
                                     "Actor Libraries (Shams M. Imam and Vivek Sarkar, 2014)")]]


@pytest.mark.parametrize("width, first_lines", [
    (200, ["name        points  estimate  study",
           "allocators      12      ~8 s  Boost.Fiber: Performance (Oliver Kowalke, 2023)",
           "chat            70     ~40 s  -"]),
    # beside: the long cell wrapped at spaces in the room the others leave, its header above it
    (80, ["name        points  estimate  study",
          "allocators      12      ~8 s  Boost.Fiber: Performance (Oliver Kowalke, 2023)",
          "chat            70     ~40 s",
          "savina         311    ~4 min  Savina - An Actor Benchmark Suite: Enabling",
          "                              Empirical Evaluation of Actor Libraries (Shams M.",
          "                              Imam and Vivek Sarkar, 2014)"]),
    # under: too little room beside, so the long cell goes on lines of its own under its row
    (50, ["name        points  estimate",
          "allocators      12      ~8 s",
          "            Boost.Fiber: Performance (Oliver",
          "            Kowalke, 2023)",
          "chat            70     ~40 s"]),
])
def test_rows_are_a_table_where_they_fit_else_the_long_cells_go_beside_or_under(monkeypatch, width, first_lines):
    from rich.console import Console

    from labctl.cli import console

    printed = io.StringIO()
    monkeypatch.setattr(console, "stdout", Console(file=printed, width=width, highlight=False, soft_wrap=True))
    console.print_rows(["name", "points", "estimate", "study"], ROWS, right={1, 2}, aside={3}, label="{value}")
    lines = printed.getvalue().splitlines()
    assert lines[:len(first_lines)] == first_lines
    assert max(len(line) for line in lines) <= width


def test_show_json_is_the_run_and_each_points_median(labctl, store):
    data = json.loads(labctl("show", "latest", "--db", str(store), "--json").stdout)
    assert data["run"]["name"] == "widths" and data["run"]["status"] == "finished"
    by_position = {p["position"]: p for p in data["points"]}
    assert len(by_position) == 9  # 12 combinations, one_thread's 4 one point (no threads, no fifo)
    for position, point in by_position.items():
        if point["status"] == "failed":
            assert point["failure_kind"] == "crash" and point["median_ns"] is None and point["n"] == 0
            continue
        assert point["median_ns"] == statistics.median(_times(position)) and point["n"] == 3
        assert point["ci_low_ns"] <= point["median_ns"] <= point["ci_high_ns"]
        assert point["params"]["leaves"] == 1000


def test_runs_experiments_plan_and_kernels_give_one_json_document(labctl, store, tmp_path):
    runs = json.loads(labctl("runs", "--db", str(store), "--json").stdout)
    assert [(r["id"], r["name"], r["points"], r["samples"]) for r in runs] == [(1, "widths", 9, 24)]
    shipped = json.loads(labctl("experiments", "--json", "--db", str(tmp_path / "none.db")).stdout)
    quickstart = next(e for e in shipped if e["name"] == "quickstart")
    assert quickstart["points"] == len(experiment.load("quickstart").points) and quickstart["estimate_s"] > 0
    (tmp_path / "widths.toml").write_text(GRID)
    plan = json.loads(labctl("plan", str(tmp_path / "widths.toml"), "--json", "--db", str(store)).stdout)
    assert plan["name"] == "widths" and len(plan["points"]) == 9 and plan["order"] == "grid"
    assert {p["params"]["dispatcher"] for p in plan["points"]} == {"one_thread", "thread_pool", "work_stealing"}
    described = json.loads(labctl("kernels", "--describe", "skynet", "--json").stdout)
    assert [k["name"] for k in described] == ["skynet"]


# --- words -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seconds, said", [(3.44, "3.4 s"), (45, "45 s"), (93, "1 min 33 s"), (120, "2 min"),
                                           (3599.6, "1 h 0 min"), (3600 + 5 * 60 + 20, "1 h 5 min")])
def test_a_measured_duration_is_said_to_the_second(seconds, said):
    assert format_elapsed(seconds) == said


@pytest.mark.parametrize("text, width, said", [
    ("compare: Noise keeps no list of run ids", 60, "compare: Noise keeps no list of run ids"),
    ("runner: one _tree(pid) for the worker's process tree, read by the memory watch", 40,
     "runner: one _tree(pid) for the worker's…"),
    ("docs: the layout, the extension, the rest", 24, "docs: the layout, the…"),
    ("a_single_word_longer_than_the_width", 10, "a_single_…"),
])
def test_a_subject_is_cut_at_a_word_with_an_ellipsis(text, width, said):
    assert shorten(text, width) == said and len(said) <= width


# --- sweeps and runs: quiet, and piped ------------------------------------------------------

TWO_POINTS = """
name = "two"
repeats = 2
warmup = 0
order = "grid"
[[grid]]
kernel = "skynet"
params = { leaves = 100 }
axes = { dispatcher = ["one_thread", "work_stealing"] }
"""


def test_a_piped_sweep_says_each_point_as_it_finishes_and_quiet_only_the_last_line(labctl, tmp_path):
    (tmp_path / "two.toml").write_text(TWO_POINTS)
    piped = labctl("sweep", str(tmp_path / "two.toml"), "--db", str(tmp_path / "a.db"))
    assert piped.returncode == 0, piped.stderr
    done = [line for line in piped.stderr.splitlines() if line.startswith("point ")]
    assert [line.split(":")[0] for line in done] == ["point 1/2 done", "point 2/2 done"]
    assert all(re.search(r"skynet, median [\d.]+ [µm]?s of 2 samples: ", line) for line in done), done
    assert re.search(r"^run 1 finished in [\d.]+ s: 2 points done", piped.stdout, re.MULTILINE)
    quiet = labctl("sweep", str(tmp_path / "two.toml"), "--db", str(tmp_path / "b.db"), "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
    [line] = quiet.stdout.splitlines()
    assert line.startswith("run 1 finished in ") and "2 points done, 0 failed, 4 samples" in line


def test_a_quiet_run_prints_the_median_alone(labctl):
    quiet = labctl("run", "skynet", "--leaves", "100", "--repeats", "3", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
    [line] = quiet.stdout.splitlines()
    assert re.fullmatch(r"  median [\d.]+ [µm]?s  \(min .*, max .*, 3 runs\)", line), line
