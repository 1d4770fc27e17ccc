"""`labctl report`: the folder it writes (report.md, every figure it names, readable PNGs), the
medians table, failed points, provenance, the published figures compared by ratios and rankings,
and a bad --out refused without touching anything."""

from __future__ import annotations

import json
import math
import re
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from labctl import results
from labctl.read import results as read_results
from labctl.plan import experiment
from labctl.read import analysis, references
from labctl.vocabulary import schema
from labctl.vocabulary.metrics import lookup

EXPERIMENT = '''
name = "tiny study"
description = "a study in small"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 60

[[grid]]
kernel = "self_send"
params = { workers = 4, messages_per_worker = 2000, dispatcher = "thread_pool" }
axes = { threads = [1, 2], max_demands_at_once = [1, 8] }

[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
axes = { dispatcher = ["one_thread", "work_stealing"], threads = [2] }

[[grid]]
kernel = "skynet"
params = { leaves = 300, dispatcher = "one_thread" }
env = { LABCTL_FAULT = "wrong_answer" }

[[reference]]
title = "skynet per leaf, two dispatchers"
source = "a test's own figures"
hardware = "a machine of the test"
kernel = "skynet"
per = "leaves"
unit = "us"
note = "made up"
study = { statistic = "best", runs = 5, params = { leaves = 1_000_000 }, facts = ["made-up stacks"] }
figures = [ { dispatcher = "one_thread", value = 0.2, name = "one" }, { dispatcher = "work_stealing", value = 0.3, name = "stealing" },
            { dispatcher = "thread_pool", value = 9.0, name = "pool" }, { peer = "Go 1.8", value = 0.45 } ]
'''


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from conftest import run_labctl

    folder = tmp_path_factory.mktemp("report")
    path = folder / "study.toml"
    path.write_text(EXPERIMENT)
    db = folder / "r.db"
    result = run_labctl("sweep", str(path), "--db", str(db))
    assert result.returncode == 1, result.stderr  # the wrong answer fails its point, the rest runs
    return db


def figures_named(markdown: str) -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown)


def test_the_report_names_every_figure_it_writes_and_each_is_a_real_image(labctl, store, tmp_path):
    out = tmp_path / "rep"
    result = labctl("report", "latest", "--db", str(store), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "report.md with 4 figures" in result.stdout
    text = (out / "report.md").read_text()
    named = figures_named(text)
    assert sorted(named) == sorted(str(p.relative_to(out)) for p in (out / "figures").glob("*.png"))
    assert {Path(n).name for n in named} == {"self_send-threads.png", "skynet-bars.png",
                                             "self_send-threads-max_demands_at_once.png",
                                             "published-1.png"}
    for name in named:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name
    assert (out / "figures" / "self_send-threads.svg").exists()
    assert not list(tmp_path.glob(".rep*")), "the staging folder is gone"


def test_the_report_tables_medians_failures_machine_and_the_rerun_command(labctl, store, tmp_path):
    out = tmp_path / "rep"
    assert labctl("report", "1", "--db", str(store), "--out", str(out)).returncode == 0
    text = (out / "report.md").read_text()
    assert text.startswith("# tiny study: run 1\n\na study in small\n")
    assert "6 of 7 points done, 1 failed, 18 samples, every one verified" in text
    # one section per kernel, its table with a row per point and the varying parameters
    self_send = text.split("## self_send")[1].split("\n## ")[0]
    assert "| threads | mda | n | median time per run | 95% interval | cv | msgs/s | busy threads |  |" in self_send
    assert re.search(r"^\| 2 \| 8 \| 3 \| .* \| \d\.\d\d of 2 \| ", self_send, re.M), self_send
    assert len(re.findall(r"^\| [12] \| (1|8) \| 3 \|", self_send, re.M)) == 4
    assert "Fixed in every point below: runtime=labctl, workers=4, messages_per_worker=2000" in self_send
    # the failed point, with why
    failed = text.split("## Failed points")[1].split("\n## ")[0]
    assert ("| skynet | runtime=labctl leaves=300 branching=10 deregister=false clock=phase "
            "dispatcher=one_thread") in failed
    assert "| verification | skynet: wrong answer: got 'corrupted sum=44850" in failed
    # the machine and how to run it again
    provenance = text.split("## Machine and provenance")[1]
    assert "| CPU |" in provenance and "| labctl |" in provenance
    assert f"labctl sweep {store.parent / 'study.toml'} --db {store} --seed" not in provenance  # order = grid
    assert f"labctl sweep {store.parent / 'study.toml'} --db {store}" in provenance
    assert f"labctl report 1 --db {store} --output {out}" in provenance
    # every line of a table has the header's number of cells
    for table in re.findall(r"(?:^\|.*\|\n)+", text, re.M):
        widths = {len(re.findall(r"(?<!\\)\|", line)) for line in table.splitlines()}
        assert len(widths) == 1, table


def test_published_figures_are_set_beside_ours_by_ratio_and_rank(labctl, store, tmp_path):
    out = tmp_path / "rep"
    assert labctl("report", "1", "--db", str(store), "--out", str(out)).returncode == 0
    text = (out / "report.md").read_text()
    published = text.split("## Published figures beside ours")[1].split("\n## ")[0]
    assert "### skynet per leaf, two dispatchers" in published
    assert "Source: a test's own figures. Hardware: a machine of the test." in published
    assert "Note: made up" in published
    assert re.search(r"\*\*(The study's ranking|We cannot tell)", published)
    assert "| dispatcher=one_thread | one | 0.2 us | 1.00 |" in published
    assert "| dispatcher=work_stealing | stealing | 0.3 us | 1.50 |" in published
    assert "| dispatcher=thread_pool | pool | 9 us |  | not in this run |" in published
    assert "Go 1.8 (study)" in published and "**labctl dispatcher=one_thread (this machine)**" in published
    assert "one (study)" in published  # a published figure of ours under the study's own name
    # Beside the verdict, what the study ran against what this run did, from the record:
    assert "Compared as: the study published the best of 5 runs; ours is the best of our 3 samples" in published
    assert "- leaves: ours 1000, the study 1000000" in published
    assert "Also different, and no parameter of ours:\n\n- made-up stacks" in published
    assert "| ours per leaf (best) | our median [95%] |" in published


def test_an_unknown_run_or_a_folder_that_is_not_a_report_is_refused_untouched(labctl, store, tmp_path):
    result = labctl("report", "7", "--db", str(store), "--out", str(tmp_path / "x"))
    assert result.returncode == 2 and "no run 7" in result.stderr and not (tmp_path / "x").exists()
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("keep me")
    result = labctl("report", "1", "--db", str(store), "--out", str(precious))
    assert result.returncode == 2 and "holds no report.md" in result.stderr
    assert [p.name for p in precious.iterdir()] == ["thesis.tex"]
    afile = tmp_path / "afile"
    afile.write_text("x")
    result = labctl("report", "1", "--db", str(store), "--out", str(afile))
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_a_report_replaces_the_previous_one_whole(labctl, store, tmp_path):
    out = tmp_path / "rep"
    assert labctl("report", "1", "--db", str(store), "--out", str(out)).returncode == 0
    # A figure an earlier report wrote and this one does not: listed in the mark, so labctl's.
    mark = json.loads((out / ".labctl-report").read_text())
    name = min(n for n in mark["files"] if n.startswith("figures/"))
    (out / name).rename(out / "figures" / "stale.png")
    mark["files"]["figures/stale.png"] = mark["files"].pop(name)
    (out / ".labctl-report").write_text(json.dumps(mark))
    (out / "figures" / "mine.png").write_bytes(b"the user's")  # not listed: the folder is refused
    result = labctl("report", "1", "--db", str(store), "--out", str(out))
    assert result.returncode == 2 and "figures/mine.png (added)" in result.stderr
    assert (out / "figures" / "mine.png").read_bytes() == b"the user's"
    (out / "figures" / "mine.png").unlink()
    assert labctl("report", "1", "--db", str(store), "--out", str(out)).returncode == 0
    assert not (out / "figures" / "stale.png").exists() and (out / name).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_a_run_whose_points_all_failed_still_reports_why(labctl, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\nrepeats = 1\nwarmup = 0\n[[grid]]\nkernel = "skynet"\n'
                    'params = { leaves = 100 }\nenv = { LABCTL_FAULT = "crash" }\n')
    db = tmp_path / "r.db"
    assert labctl("sweep", str(path), "--db", str(db)).returncode == 1
    out = tmp_path / "rep"
    result = labctl("report", "1", "--db", str(db), "--out", str(out))
    assert result.returncode == 0, result.stderr
    text = (out / "report.md").read_text()
    assert "0 of 1 points done, 1 failed" in text and "| skynet | runtime=labctl leaves=100" in text and "crash" in text


# -- the comparison with published figures, on synthetic samples ------------------------------

def reference(figures: str, better: str = "") -> schema.Reference:
    text = f'''name = "t"
[[grid]]
kernel = "skynet"
[[reference]]
title = "t"
source = "s"
hardware = "h"
kernel = "skynet"
unit = "s"
study = {{ statistic = "median" }}
{better}
figures = {figures}
'''
    return experiment.parse(text, "t.toml").references[0]


def samples(values: dict[str, list[float]]) -> pd.DataFrame:
    """Samples of skynet points, one per dispatcher, with the given elapsed times."""
    rows = []
    for point, (dispatcher, elapsed) in enumerate(values.items(), 1):
        for repeat, ns in enumerate(elapsed):
            rows.append({"point": point, "position": point, "kernel": "skynet", "repeat": repeat,
                         "dispatcher": dispatcher, "leaves": 1000, "elapsed_ns": ns,
                         "messages_processed": 1111, "msgs_per_s": 1111e9 / ns})
    return pd.DataFrame(rows)


FIGURES = ('[ { dispatcher = "one_thread", value = 1.0 }, { dispatcher = "work_stealing", value = 2.0 },'
           ' { dispatcher = "thread_pool", value = 4.0 } ]')


def test_the_studys_ranking_holds_when_every_ordered_pair_agrees_with_intervals_apart():
    ours = samples({"one_thread": [10, 11, 12], "work_stealing": [30, 31, 32], "thread_pool": [90, 91, 95]})
    result = references.compare_reference(reference(FIGURES), ours)
    assert result.verdict.startswith("**The study's ranking holds here**: all 3 ordered pairs agree")
    assert [m.median for m in result.matches] == [11, 31, 91]
    assert result.tau == pytest.approx(1.0) and not result.reversed and not result.unclear


def test_a_reversed_pair_is_named_and_the_ranking_does_not_hold():
    ours = samples({"one_thread": [10, 11, 12], "work_stealing": [90, 91, 95], "thread_pool": [30, 31, 32]})
    result = references.compare_reference(reference(FIGURES), ours)
    assert result.verdict.startswith("**The study's ranking does not hold here**: 1 of 3 ordered pairs")
    assert result.reversed == ["dispatcher=work_stealing vs dispatcher=thread_pool: study 2.00x faster "
                               "for the first; here the second is 2.94x faster"]


def test_overlapping_intervals_are_within_noise_not_agreement_and_ties_are_not_checked():
    ours = samples({"one_thread": [10, 20, 30], "work_stealing": [12, 22, 32], "thread_pool": [90, 91, 95]})
    result = references.compare_reference(reference(FIGURES), ours)
    assert result.unclear == ["dispatcher=one_thread vs dispatcher=work_stealing: study 2.00x faster; "
                              "here within noise"]
    assert result.verdict.startswith("**The study's ranking holds where we can tell**: 2 of 3")
    tied = reference('[ { dispatcher = "one_thread", value = 1.0 }, { dispatcher = "work_stealing", value = 1.05 } ]')
    assert "all within 1.10x: no order to check" in references.compare_reference(tied, ours).verdict


def test_throughput_figures_rank_the_other_way_and_unmatched_figures_say_why():
    ours = samples({"one_thread": [10, 11, 12], "work_stealing": [30, 31, 32]})
    figures = '[ { dispatcher = "one_thread", value = 50 }, { dispatcher = "work_stealing", value = 10 }, { dispatcher = "active_obj", value = 1 } ]'
    ref = reference(figures, 'metric = "msgs_per_s"')
    assert ref.lower_is_better is False
    result = references.compare_reference(ref, ours)
    assert result.verdict.startswith("**The study's ranking holds here**: all 1 ordered pairs agree")
    assert result.matches[2].problem == "not in this run"
    two = pd.concat([ours, samples({"one_thread": [5, 5, 5]}).assign(point=9, leaves=2000)])
    ambiguous = references.compare_reference(ref, two)
    assert ambiguous.matches[0].problem == "2 points of this run match; the reference must name one"
    lonely = references.compare_reference(ref, samples({"one_thread": [1, 2, 3]}))
    assert lonely.verdict.startswith("1 of the study's figures matched a point of this run")


def test_a_store_that_is_not_a_labctl_store_is_refused(labctl, tmp_path):
    db = tmp_path / "other.db"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.close()
    result = labctl("report", "1", "--db", str(db), "--out", str(tmp_path / "rep"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert not (tmp_path / "rep").exists()


# -- distances to the machine's floor ---------------------------------------------------------------

FLOOR_EXPERIMENT = '''
name = "floors"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 60

[[grid]]
kernel = "floor_cache_line"
params = { round_trips = 2000, latency_samples = 200, pin = "none" }

[[grid]]
kernel = "floor_actor_loop"
params = { messages = 20000 }

[[grid]]
kernel = "ping_pong"
params = { messages = 20000, latency_samples = 200 }
axes = { dispatcher = ["one_thread", "active_group"], threads = [2] }
'''


def test_a_report_gives_each_figure_a_floor_of_its_run_bounds_as_a_multiple_of_it(labctl, tmp_path):
    from conftest import run_labctl

    path = tmp_path / "floors.toml"
    path.write_text(FLOOR_EXPERIMENT)
    db = tmp_path / "f.db"
    assert run_labctl("sweep", str(path), "--db", str(db)).returncode == 0
    out = tmp_path / "rep"
    assert labctl("report", "latest", "--db", str(db), "--out", str(out)).returncode == 0
    text = (out / "report.md").read_text()
    floors = text.split("## Distance to the machine's floor")[1].split("\n## ")[0]
    for metric, floor in (("round_trip_p50_ns", "the cache line"), ("round_trip_mean_ns", "the cache line"),
                          ("msgs_per_s", "the bare actor loop")):
        section = floors.split(f"### ping_pong `{metric}`: {floor}")[1].split("\n### ")[0]
        rows = re.findall(rf"^\| (one_thread|active_group) \| 3 \| [^|]+ \| ([0-9.]+)x {floor} \|$",
                          section, re.M)
        assert {name for name, _ in rows} == {"one_thread", "active_group"}, section  # threads is fixed
    assert "Floor: `floor_actor_loop` `msgs_per_s` = " in floors
    # thread_ring was not run, nor floor_futex_wake: nothing of theirs is given
    assert "### thread_ring" not in floors and "floor_futex_wake" not in floors


def floor_samples(kernel: str, rows: list[tuple[dict, list[float]]], metric: str) -> list[dict]:
    frames = []
    for point, (params, values) in enumerate(rows):
        for repeat, value in enumerate(values):
            frames.append({"point": f"{kernel}{point}", "position": point, "kernel": kernel, "repeat": repeat,
                           **params, metric: value, "elapsed_ns": 1000.0, "messages_processed": 10,
                           "msgs_per_s": 1e7})
    return frames


def test_a_floor_is_its_best_median_and_bounds_only_the_points_it_names():
    def param(name: str, kind: str = "text") -> schema.Param:
        return schema.Param(name, kind, None, "", None, None, (), (), (), name != "hops")

    wake = schema.Floor("thread_ring", "ns_per_hop", "wake_up_ns", "a futex wake-up", {"dispatcher": "active_obj"})
    catalogue = schema.Catalogue({
        "floor_futex_wake": schema.Kernel("floor_futex_wake", "", "", (), "", "", (param("pin"),), floor_of=(wake,)),
        "thread_ring": schema.Kernel("thread_ring", "", "", (), "", "", (param("hops", "integer"), param("dispatcher"))),
    })
    rows = floor_samples("floor_futex_wake", [({"pin": "compact"}, [100, 110, 120]),
                                              ({"pin": "spread"}, [300, 300, 300])], "wake_up_ns")
    rows += floor_samples("thread_ring", [({"hops": 10, "dispatcher": "active_obj"}, [200, 220, 240]),
                                          ({"hops": 10, "dispatcher": "one_thread"}, [5, 5, 5])], "ns_per_hop")
    frame = pd.DataFrame(rows)
    read_results.carry_catalogue(frame, catalogue)
    [distance] = analysis.floor_distances(frame)
    assert distance.floor_value == 110 and distance.floor_point == "pin=compact"
    assert list(distance.points["dispatcher"]) == ["active_obj"]  # one_thread wakes no thread
    assert list(distance.points["multiple"]) == [pytest.approx(2.0)]


def test_a_throughput_floor_is_the_floors_median_over_the_points():
    loop = schema.Floor("ping_pong", "msgs_per_s", "msgs_per_s", "the bare loop")
    catalogue = schema.Catalogue({
        "floor_actor_loop": schema.Kernel("floor_actor_loop", "", "", (), "", "", (), floor_of=(loop,)),
        "ping_pong": schema.Kernel("ping_pong", "", "", (), "", "", ()),
    })
    frame = pd.DataFrame(floor_samples("floor_actor_loop", [({}, [1e8, 1.6e8, 1.7e8])], "rate")
                         + floor_samples("ping_pong", [({}, [8e7, 8e7, 8e7])], "rate"))
    frame["msgs_per_s"] = frame["rate"]
    read_results.carry_catalogue(frame, catalogue)
    [distance] = analysis.floor_distances(frame)
    assert distance.floor_value == 1.6e8 and not distance.metric.lower_is_better
    assert list(distance.points["multiple"]) == [pytest.approx(2.0)]


def test_a_catalogue_stored_before_floors_reads_back_without_any():
    data = schema.Kernel("k", "", "", (), "", "", ()).to_json()
    del data["floor_of"]
    assert schema.Kernel.from_json(data).floor_of == ()


def test_points_of_two_kinds_of_machine_are_reported_apart(labctl, store, tmp_path):
    # As a sweep on a cluster of two kinds of host leaves it: skynet's points on another machine.
    db = tmp_path / "two.db"
    db.write_bytes(store.read_bytes())
    connection = sqlite3.connect(db)
    connection.execute("INSERT INTO machines (fingerprint, info) SELECT 'other', json_set(info, "
                       "'$.cpu_model', 'Other CPU', '$.hostname', 'node7') FROM machines")
    connection.execute("UPDATE points SET machine_id = (SELECT id FROM machines WHERE fingerprint = "
                       "'other') WHERE kernel = 'skynet'")
    connection.commit()
    connection.close()
    out = tmp_path / "rep"
    assert labctl("report", "1", "--db", str(db), "--out", str(out)).returncode == 0
    text = (out / "report.md").read_text()
    assert "The points ran on 2 kinds of machine (swept from " in text
    assert re.search(r"^\| m2 \| Other CPU, .* \| node7 \| 2 \| 6 \|$", text, re.M)
    assert "## self_send on m1" in text and "## skynet on m2" in text
    assert "| m2 | skynet | 2 |" in text  # the summary names the machine
    assert "## Published figures beside ours on m2" in text
    assert {Path(n).name for n in figures_named(text)} >= {"m1-self_send-threads.png", "m2-skynet-bars.png"}
    shown = labctl("show", "1", "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert "\non Other CPU, " in shown.stdout and "(hosts: node7; 2 points)" in shown.stdout


def test_a_parameter_that_follows_from_the_dispatcher_is_a_label_not_an_axis():
    # work_stealing's own max_demands_at_once (16) beside thread_pool's 4: it varies among the
    # points, but only with the dispatcher, so the figure's axis is threads, or none at all.
    def param(name: str, kind: str) -> schema.Param:
        return schema.Param(name, kind, None, "", None, None, (), (), (), True)

    kernel = schema.Kernel("skynet", "", "", (), "", "",
                           (param("dispatcher", "choice"), param("threads", "integer"),
                            param("max_demands_at_once", "integer")))
    points = [{"dispatcher": d, "threads": t, "max_demands_at_once": m}
              for d, m in (("thread_pool", 4), ("work_stealing", 16)) for t in (1, 2)]
    assert analysis.axes_for(pd.DataFrame(points), kernel) == ("threads", None)
    one_count = pd.DataFrame([p for p in points if p["threads"] == 2])
    assert analysis.axes_for(one_count, kernel) == (None, None)  # bars, one per configuration
    swept = pd.DataFrame(points + [{"dispatcher": "thread_pool", "threads": t, "max_demands_at_once": 100}
                                   for t in (1, 2)])
    assert analysis.axes_for(swept, kernel) == ("threads", "max_demands_at_once")


SERIAL = """\
name = "serial"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 60

[[grid]]
kernel = "ping_pong"
params = { messages = 20000, dispatcher = "thread_pool", fifo = "cooperation" }
axes = { threads = [1, 2] }
"""


def test_a_point_that_ran_on_fewer_threads_than_given_is_marked_in_every_table_and_figure(labctl, tmp_path):
    # Two agents passing one message back and forth keep one thread busy, however many there are.
    (tmp_path / "serial.toml").write_text(SERIAL)
    db = tmp_path / "s.db"
    assert labctl("sweep", str(tmp_path / "serial.toml"), "--db", str(db)).returncode == 0
    table = analysis.point_table(results.load(db, 1), lookup("elapsed_ns"))
    busy = dict(zip(table["threads"], table["busy"]))
    assert 0.5 < busy[1] <= 1.05 and busy[2] < analysis.UNDERUSED_SHARE * 2, busy
    assert list(table.sort_values("threads")["underused"]) == [False, True]
    out = tmp_path / "rep"
    assert labctl("report", "1", "--db", str(db), "--output", str(out)).returncode == 0
    text = (out / "report.md").read_text()
    assert "**1 point ran on fewer threads than it was given** (runtime threads busy on average " \
           "below 60% of its threads: ping_pong 1)" in text
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if re.match(r"^\| [12] \| 3 \| ", line)}
    assert re.search(r"\| \d\.\d\d of 2 \| .*\*\*ran on \d\.\d\d of its 2 threads\*\*", rows["| 2"]), rows
    assert re.search(r"\| \d\.\d\d of 1 \| ", rows["| 1"]) and "ran on" not in rows["| 1"], rows


def test_underused_needs_two_threads_or_more_and_a_busy_count():
    assert analysis.underused(2, 1.1) and not analysis.underused(2, 1.3)
    assert not analysis.underused(1, 0.2) and not analysis.underused(None, 0.5)
    assert not analysis.underused(4, math.nan) and analysis.underused(4.0, 2.0)


def test_the_summary_sets_best_against_worst_within_a_scenario_never_across_two(tmp_path):
    # Two sizes of skynet are two scenarios (two works): a best of one size over the worst of
    # the other would be a ratio of unlike work. The one the file names goes by its name.
    from conftest import run_labctl

    grid = '[[grid]]\nkernel = "skynet"\n{}params = {{ leaves = {} }}\naxes = {{ dispatcher = ["one_thread", "work_stealing"] }}\n'
    (tmp_path / "two.toml").write_text('name = "two"\nrepeats = 2\nwarmup = 0\n' + grid.format('scenario = "small"\n', 100)
                                       + grid.format("", 10000))
    assert run_labctl("sweep", str(tmp_path / "two.toml"), "--db", str(tmp_path / "t.db")).returncode == 0
    assert run_labctl("report", "1", "--db", str(tmp_path / "t.db"), "--output", str(tmp_path / "r")).returncode == 0
    report = (tmp_path / "r" / "report.md").read_text()
    summary = report[report.index("## Summary"):]
    rows = [line for line in summary[:summary.index("\n## ", 1)].splitlines() if line.startswith("| skynet")]
    assert [row.split(" | ")[0] for row in rows] == ["| skynet small", "| skynet leaves=10000"]
    samples = results.load(tmp_path / "t.db", 1)
    for row, leaves in zip(rows, (100, 10000)):
        cells = row.strip("| ").split(" | ")
        assert cells[1] == "2" and "leaves" not in cells[2] + cells[3]
        # The kernel's work differs between its points, so its figure is its throughput.
        assert "msgs/s" in cells[2]
        medians = samples[samples["leaves"] == leaves].groupby("dispatcher")["msgs_per_s"].median()
        assert cells[4] == f"{medians.max() / medians.min():.2f}x"


def test_the_cost_of_a_message_is_each_points_cpu_over_its_messages_and_its_waiting_share(store, tmp_path):
    samples = results.load(store, 1)
    ours = samples[samples["cpu_ns"] > 0]
    assert len(ours)
    for _, sample in ours.iterrows():
        cpu = sum(sample["thread_cpu_ns"])
        assert sample["cpu_per_message_ns"] == pytest.approx(cpu / sample["messages_processed"])
        working = sample["thread_ns"] - sample["idle_ns"]
        assert sample["waiting_cpu_share"] == pytest.approx(min(1.0, max(0.0, (cpu - working) / cpu)))
    from conftest import run_labctl

    assert run_labctl("report", "1", "--db", str(store), "--output", str(tmp_path / "r")).returncode == 0
    report = (tmp_path / "r" / "report.md").read_text()
    section = report[report.index("## The cost of a message"):]
    section = section[:section.index("\n## ", 1)]
    skynet = ours[ours["kernel"] == "skynet"].groupby("dispatcher")["cpu_per_message_ns"].median()
    row = next(line for line in section.splitlines() if line.startswith("| skynet |"))
    cheapest = lookup("cpu_per_message_ns").format(skynet.min())
    assert f"| {skynet.idxmin()}: {cheapest}, " in row
