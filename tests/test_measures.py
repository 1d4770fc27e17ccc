"""The measures (labctl.catalogue.measures): instruction counts under callgrind cover the measured phase
alone and repeat, perf_event counters say which this machine lacks instead of counting 0, a
machine without valgrind skips the points that need it, schedule-dependent counts are marked; and
the gate (labctl.read.gate) judges a run's counts against a baseline."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
from pathlib import Path

import pandas as pd
import pytest

from labctl import _native, results
from labctl.catalogue import measures
from labctl.history import profiles
from labctl.plan import experiment
from labctl.read import gate
from labctl.run import runner
from labctl.store import Store
from labctl.vocabulary import metrics
from labctl.vocabulary.point import Point
from labctl.vocabulary.sample import Sample

needs_valgrind = pytest.mark.skipif(bool(measures.get(metrics.INSTRUCTIONS).missing()),
                                    reason=measures.get(metrics.INSTRUCTIONS).missing() or "")
# One runtime thread does the phase's work, the kernel's thread waits for the answer.
SINGLE_THREAD = [("ping_pong", {"messages": 20_000}), ("skynet", {"leaves": 2_000}),
                 ("thread_ring", {"hops": 20_000})]


def counted(kernel: str, params: dict, repeat: int = 3, warmup: int = 1, measure: str = metrics.INSTRUCTIONS,
            env: dict | None = None) -> list[Sample]:
    ours = params.get("runtime", "labctl") == "labctl"
    point = Point(kernel, {**params, "dispatcher": "one_thread"} if ours and "dispatcher" not in params else params,
                  repeats=repeat, warmup=warmup, timeout_s=300, measure=measure, env=env or {})
    return [s for s in runner.run_point(point) if not s.warmup]


def spread(values: list[int]) -> float:
    return (max(values) - min(values)) / statistics.median(values)


# -- instructions -----------------------------------------------------------------------------


@needs_valgrind
@pytest.mark.parametrize(("kernel", "params"), SINGLE_THREAD)
def test_instruction_counts_of_a_single_thread_kernel_repeat_within_half_a_percent(kernel, params):
    samples = counted(kernel, params)
    counts = [s.counts["instructions"] for s in samples]
    assert len(counts) == 3 and all(c > 0 for c in counts)
    assert spread(counts) < 0.005, counts
    again = counted(kernel, params, repeat=1)[0].counts["instructions"]  # another process
    assert abs(again / statistics.median(counts) - 1) < 0.005
    assert all(s.measure == metrics.INSTRUCTIONS and s.schedule_dependent is False for s in samples)
    assert all("l1_misses" in s.counts and "cache_misses" in s.counts for s in samples)  # simulated
    assert all("cycles" not in s.counts and not s.unsupported for s in samples)  # not this measure's


@needs_valgrind
@pytest.mark.parametrize(("kernel", "params"), SINGLE_THREAD[:2])
def test_instructions_count_the_measured_phase_only_not_the_work_around_it(kernel, params):
    # outside_work runs about 80 million instructions before the kernel and as many after it,
    # in the same process and thread: ten times the phase's own, and not one of them counted.
    plain = statistics.median(s.counts["instructions"] for s in counted(kernel, params))
    padded = statistics.median(s.counts["instructions"] for s in counted(kernel, params, env={"LABCTL_FAULT": "outside_work"}))
    assert abs(padded / plain - 1) < 0.005, (plain, padded)
    assert plain < 20_000_000


@needs_valgrind
@pytest.mark.parametrize("runtime", ["labctl", "caf"])
def test_ping_pong_counts_its_throughput_phase_not_the_latency_probes_after_it(runtime):
    # The phase's clock covers the throughput phase alone, so must its counts, on CAF as on ours
    # (CAF's counted the probes too: 40% more for as many probes as round trips). Ours is counted to
    # within 2%; CAF's scheduler threads poll and sleep as the machine lets them, and one CI run counted
    # 3.1% apart with no probe counted, so CAF is held to 10%, still a quarter of the defect. Polling
    # only adds (a loaded machine once counted one CAF run 4.6x its phase), and the defect adds to every
    # run, so CAF's fewest of three runs are compared.
    tolerance = 0.02 if runtime == "labctl" else 0.10
    if runtime == "caf" and not any(k["runtime"] == "caf" for k in _native.kernels()):
        pytest.skip("labctl._native was built without CAF")
    # As many probes as messages' round trips, so the defect would add its 40% at any size; CAF's
    # kept small, its runs under callgrind being the suite's slowest (47 s in CI at 10,000 probes).
    messages = 20_000 if runtime == "labctl" else 6_000
    params = {"runtime": runtime, "messages": messages, **({"threads": 1} if runtime == "caf" else {})}
    repeat = 1 if runtime == "labctl" else 3
    plain, probed = (min(s.counts["instructions"] for s in counted("ping_pong", {**params, "latency_samples": n},
                                                                  repeat=repeat))
                     for n in (0, messages // 2))
    assert abs(probed / plain - 1) < tolerance, (plain, probed)


@needs_valgrind
def test_the_bare_actor_loop_floor_counts_its_loop_as_a_kernel_counts_its_phase():
    # The floors time themselves without MeasuredPhase; floor_actor_loop did not mark its loop for
    # callgrind, so `--measure instructions` found no dump and failed with a FileNotFoundError.
    # Its loop is the floor of ping_pong on one thread: counted, it grows with the messages and
    # costs fewer instructions a message than ping_pong's.
    def per_message(kernel, params):
        point = Point(kernel, params, repeats=1, warmup=0, timeout_s=300, measure=metrics.INSTRUCTIONS)
        sample = next(iter(runner.run_point(point)))
        return sample.counts["instructions"], sample.messages_processed

    small, large = (per_message("floor_actor_loop", {"messages": n}) for n in (20_000, 40_000))
    assert small[1] == 20_000 and large[1] == 40_000
    assert 1.95 < large[0] / small[0] < 2.05, (small, large)
    ours, messages = per_message("ping_pong", {"messages": 40_000, "latency_samples": 0, "dispatcher": "one_thread"})
    assert 10 < large[0] / large[1] < ours / messages, (large, ours)


def test_a_phase_callgrind_wrote_no_counts_for_fails_saying_so_not_with_a_missing_file(tmp_path):
    with pytest.raises(measures.MeasureError, match=r"no counts for phase 2 \(callgrind.out.2 missing\).*mark its measured phase"):
        measures.get(metrics.INSTRUCTIONS).counts({}, str(tmp_path), 2)


@needs_valgrind
def test_a_phase_that_includes_teardown_counts_it():
    # skynet's phase ends at the root's sum, or, with deregister, when every coop is destroyed.
    kept = statistics.median(s.counts["instructions"] for s in counted("skynet", {"leaves": 2_000}))
    destroyed = statistics.median(s.counts["instructions"] for s in counted("skynet", {"leaves": 2_000, "deregister": True}))
    assert destroyed > 1.3 * kept


@needs_valgrind
def test_a_phase_after_its_agents_are_made_does_not_count_their_start():
    # thread_ring makes its ring before the phase; the agents start on the runtime's thread once
    # their coop is registered. One hop around 20,000 agents is a few thousand instructions;
    # their starts, had any of them fallen in the phase (they did, whenever the kernel's thread
    # began the phase before the worker got through them), about 50 each.
    counts = [s.counts["instructions"] for s in counted("thread_ring", {"hops": 1, "actors": 20_000}, repeat=2)]
    assert all(0 < count < 100_000 for count in counts), counts


@needs_valgrind
def test_a_profile_counts_the_own_instructions_of_one_phase_in_a_worker_given_its_point():
    # labctl.history.profiles starts the worker as the runner does (runner.worker_request); a
    # worker that cannot read its request fails, and the profile with it (RuntimeError).
    own = profiles.profile("ping_pong", {"messages": 1_000, "dispatcher": "one_thread"})
    assert own and all(isinstance(count, int) and count > 0 for count in own.values())


@needs_valgrind
def test_the_time_under_valgrind_is_kept_and_said_to_be_so(tmp_path, labctl):
    result = labctl("run", "ping_pong", "--messages", "20000", "--measure", "instructions", "--repeats", "2")
    assert result.returncode == 0, result.stderr
    assert "(under valgrind)" in result.stdout and "instructions" in result.stdout
    assert "median" in result.stdout and "spread" in result.stdout


def test_a_kernel_sending_from_its_own_thread_is_schedule_dependent_one_waiting_is_not():
    # Under the counters measure (no valgrind): the rule is the same for both measures.
    [alone] = counted("ping_pong", {"messages": 100_000}, repeat=1, measure=metrics.COUNTERS)
    [beside] = counted("counting_actor", {"messages": 200_000}, repeat=1, measure=metrics.COUNTERS)
    [pool] = counted("ping_pong", {"messages": 20_000, "dispatcher": "thread_pool", "threads": 2},
                     repeat=1, measure=metrics.COUNTERS)
    assert (alone.schedule_dependent, beside.schedule_dependent, pool.schedule_dependent) == (False, True, True)
    [timed] = counted("ping_pong", {"messages": 20_000}, repeat=1, measure=metrics.TIME)
    # The time measure counts nothing of its own: only what the runtime counts of every phase.
    assert timed.schedule_dependent is None and set(timed.counts) == set(metrics.RUNTIME_COUNTS)


def test_the_schedule_rule_counts_threads_at_work():
    one = {"runtime": "labctl", "dispatcher": "one_thread"}
    assert not measures.schedule_dependent(one, False, [950, 50], 1000)  # a collector woken at the end
    assert measures.schedule_dependent(one, False, [500, 480], 1000)  # two runtime threads at work
    assert measures.schedule_dependent(one, False, [600], 1000)  # the kernel's own thread sends: 40%
    assert not measures.schedule_dependent(one, False, [980], 1000)
    # A sender at 85% (page faults on a VM) leaves its receiver at work natively; under callgrind
    # a share that small is the waiting thread's first-phase translation, not work.
    assert measures.schedule_dependent(one, False, [150], 1000)
    assert not measures.schedule_dependent(one, False, [800], 1000, measures.get(metrics.INSTRUCTIONS).at_work)
    assert measures.schedule_dependent({**one, "dispatcher": "active_obj"}, True, [1000], 1000)
    assert measures.schedule_dependent({**one, "threads": 2}, False, [1000], 1000)
    assert measures.schedule_dependent({"runtime": "caf"}, False, [1000], 1000)


# -- counters ---------------------------------------------------------------------------------


def test_every_counter_has_a_value_or_a_reason_never_a_zero_for_a_counter_that_is_missing():
    result = _native.run("ping_pong", {"messages": 100_000}, counters=True)
    names = ["cycles", "instructions", "cache_misses", "branch_misses", "task_clock_ns",
             "context_switches", "cpu_migrations", "page_faults"]
    assert list(result["counters"]) == names
    for name, value in result["counters"].items():
        if name in result["unsupported"]:
            assert value is None and result["unsupported"][name], name
        else:
            assert isinstance(value, int) and value >= 0, name
    assert result["counters"]["task_clock_ns"] > 0  # software counters exist wherever perf does
    # Without a PMU (this VM has none), the CPU's counters are unsupported, with why.
    if result["counters"]["cycles"] is None:
        assert "perf_event_open" in result["unsupported"]["cycles"]


def test_an_unsupported_counter_is_stored_empty_with_its_reason(tmp_path):
    db = tmp_path / "r.db"
    plan = experiment.parse('name = "c"\nmeasure = "counters"\nrepeats = 1\nwarmup = 0\n[[grid]]\n'
                            'kernel = "ping_pong"\nparams = { messages = 20_000 }\n', "c.toml")
    with Store(db) as store:
        run = store.create_run(plan, "t", {"hostname": "h"}, {}, [])
        [point] = store.points(run)
        measured = Sample(kernel="ping_pong", params={}, index=0, warmup=False, elapsed_ns=10,
                          messages_processed=1, answer="a", expected="a",
                          counts={"task_clock_ns": 9}, unsupported={"cycles": "no PMU here"},
                          schedule_dependent=False)
        store.add_sample(point.id, 0, measured)
    frame = results.load(db, run)
    row = frame.iloc[0]
    assert row["measure"] == "counters" and row["task_clock_ns"] == 9
    assert pd.isna(row["cycles"]) and row["unsupported"] == {"cycles": "no PMU here"}
    assert str(frame["instructions"].dtype) == "Int64"


# -- a machine without valgrind -----------------------------------------------------------------


def without_valgrind(tmp_path: Path) -> dict[str, str]:
    """PATH with every folder of it but none holding valgrind (the tests' Python stays reachable)."""
    folders = [f for f in os.environ.get("PATH", "").split(os.pathsep)
               if f and not (Path(f) / "valgrind").exists()]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python3")
    return {"PATH": os.pathsep.join([str(bin_dir), *folders])}


def test_without_valgrind_instruction_points_are_skipped_with_the_reason(tmp_path, labctl, monkeypatch):
    env = without_valgrind(tmp_path)
    monkeypatch.setenv("PATH", env["PATH"])
    assert shutil.which("valgrind") is None
    assert "valgrind not found on PATH" in measures.get(metrics.INSTRUCTIONS).missing()
    file = tmp_path / "e.toml"
    file.write_text('name = "e"\nrepeats = 1\nwarmup = 0\n[[grid]]\nkernel = "skynet"\n'
                    'params = { leaves = 100 }\naxes = { dispatcher = ["one_thread"] }\n'
                    '[[grid]]\nkernel = "ping_pong"\nparams = { messages = 100 }\nmeasure = "instructions"\n',
                    encoding="utf-8")
    db = tmp_path / "r.db"
    result = labctl("sweep", str(file), "--db", str(db), env=env)
    assert result.returncode == 0, result.stderr
    assert "skipped" in result.stderr and "valgrind not found on PATH" in result.stderr
    points = results.points(db, "latest")
    assert sorted(points["status"]) == ["done", "skipped"]
    skipped = points[points["status"] == "skipped"].iloc[0]
    assert skipped["measure"] == "instructions" and "apt-get install valgrind" in skipped["failure"]
    ran = labctl("run", "ping_pong", "--messages", "100", "--measure", "instructions", env=env)
    assert ran.returncode == 1 and "valgrind not found on PATH" in ran.stderr


# -- experiments, options -------------------------------------------------------------------------


def test_measure_is_a_setting_of_the_file_and_of_each_grid():
    plan = experiment.parse('name = "m"\nmeasure = "counters"\norder = "grid"\n[[grid]]\nkernel = "skynet"\n'
                            '[[grid]]\nkernel = "ping_pong"\nmeasure = "time"\n', "m.toml")
    assert [p.measure for p in plan.points] == ["counters", "time"]


def test_a_bad_measure_is_refused_naming_the_key_and_the_measures():
    with pytest.raises(experiment.ExperimentError) as error:
        experiment.parse('name = "m"\n[[grid]]\nkernel = "skynet"\nmeasure = "cycles"\n', "m.toml")
    assert str(error.value) == ("m.toml: grid[0].measure: Input should be 'time', 'instructions' or "
                                "'counters', got 'cycles'")


def test_an_external_program_cannot_be_counted(labctl):
    with pytest.raises(experiment.ExperimentError, match="grid\\[0\\].measure: .*external program"):
        experiment.parse('name = "m"\nmeasure = "instructions"\n[[grid]]\nkernel = "skynet"\n'
                         'params = { runtime = "go" }\n', "m.toml")
    result = labctl("run", "skynet", "--runtime", "go", "--measure", "counters")
    assert result.returncode == 2 and result.stderr.startswith("labctl: --measure:")
    bad = labctl("run", "skynet", "--measure", "cycles")
    assert bad.returncode == 2 and "'time', 'instructions', 'counters'" in bad.stderr


def test_the_estimate_knows_valgrind_is_slow():
    text = 'name = "m"\nrepeats = 3\n[[grid]]\nkernel = "ping_pong"\nparams = { messages = 1_000_000 }\n'
    timed = experiment.parse(text, "m.toml")
    counted_plan = experiment.parse(text.replace("repeats = 3", 'repeats = 3\nmeasure = "instructions"'), "m.toml")
    fast, slow = runner.estimate(timed).seconds, runner.estimate(counted_plan).seconds
    assert slow > 20 * fast


# -- after the store: report, compare, export ---------------------------------------------------

COUNTED = ('name = "counted"\nmeasure = "instructions"\nrepeats = 3\nwarmup = 0\norder = "grid"\n'
           '[[grid]]\nkernel = "ping_pong"\nparams = { messages = 100 }\naxes = { spin_us = [0, 20] }\n')


def stored_counts(db: Path, per_point: list[list[int]], text: str = COUNTED) -> int:
    plan = experiment.parse(text, "counted.toml")
    with Store(db) as store:
        run = store.create_run(plan, "labctl sweep counted.toml", {"hostname": "h"}, BUILD, [])
        for point, counts in zip(store.points(run), per_point):
            for repeat, value in enumerate(counts):
                store.add_sample(point.id, repeat, Sample(
                    kernel=point.point.kernel, params=point.point.params, index=repeat, warmup=False,
                    elapsed_ns=1_000_000 + repeat, messages_processed=100, answer="a", expected="a",
                    counts={"instructions": value, "l1_misses": 10, "cache_misses": 5},
                    schedule_dependent=False))
            store.finish_point(point.id)
        store.end_run(run, "finished")
    return run


def test_the_report_has_a_column_and_a_figure_per_count(tmp_path):
    from labctl.read import report

    db = tmp_path / "r.db"
    run = stored_counts(db, [[12_000, 12_000, 12_001], [12_500, 12_500, 12_500]])
    written = report.write(db, run, tmp_path / "out")
    text = (written.folder / "report.md").read_text(encoding="utf-8")
    assert "## Measures" in text and "under valgrind's callgrind" in text
    assert "| median instructions | median L1 misses | median cache misses |" in text
    assert "12,000" in text and "12,500" in text and "time under valgrind" in text
    named = [f for f in written.figures if "instructions" in f]
    assert named and all((written.folder / f).is_file() for f in named)
    assert any("l1_misses" in f for f in written.figures) and any("cache_misses" in f for f in written.figures)


def test_the_report_never_plots_a_time_under_valgrind_beside_a_native_one(tmp_path):
    from labctl.read import report

    db = tmp_path / "r.db"
    mixed = COUNTED + '[[grid]]\nkernel = "ping_pong"\nparams = { messages = 100 }\naxes = { spin_us = [0, 20] }\nmeasure = "time"\n'
    run = stored_counts(db, [[12_000] * 3, [12_500] * 3, [9_000] * 3, [9_100] * 3], mixed)
    written = report.write(db, run, tmp_path / "out")
    text = (written.folder / "report.md").read_text(encoding="utf-8")
    assert "## ping_pong, measured in instructions" in text
    assert "| ping_pong (instructions) | 2 |" in text


def test_compare_matches_points_by_measure_and_compares_their_counts(tmp_path, labctl):
    from labctl.read import compare

    db = tmp_path / "r.db"
    a = stored_counts(db, [[12_000] * 3, [12_500] * 3])
    b = stored_counts(db, [[12_001] * 3, [12_500] * 3])
    result = compare.compare(compare.load(db, a), compare.load(db, b), metric="instructions")
    assert [row.difference.verdict for row in result.rows] == [compare.SLOWER, compare.NO_CHANGE]
    timed = stored_counts(db, [[1] * 3, [1] * 3], COUNTED.replace('measure = "instructions"', ""))
    other = compare.compare(compare.load(db, a), compare.load(db, timed))
    assert not other.rows and len(other.only_a) == 2  # timed under valgrind, or not: other points
    cli = labctl("compare", str(a), str(b), "--db", str(db), "--metric", "instructions",
                 "--fail-on-regression", "0")
    assert cli.returncode == 1 and "ranges apart, no noise" in cli.stdout
    assert "12,001" in cli.stdout


def test_export_writes_the_counts_and_why_a_counter_is_missing(tmp_path, labctl):
    db = tmp_path / "r.db"
    run = stored_counts(db, [[12_000] * 3, [12_500] * 3])
    out = labctl("export", str(run), "--db", str(db), "--format", "csv")
    assert out.returncode == 0, out.stderr
    header = out.stdout.splitlines()[0].split(",")
    assert {"measure", "instructions", "l1_misses", "unsupported", "schedule_dependent"} <= set(header)
    parquet = labctl("export", str(run), "--db", str(db), "--format", "parquet", "-o", str(tmp_path / "s.parquet"))
    assert parquet.returncode == 0, parquet.stderr
    assert list(pd.read_parquet(tmp_path / "s.parquet")["instructions"])[:3] == [12_000] * 3


# -- the gate ---------------------------------------------------------------------------------

GATE = ('name = "g"\nmeasure = "instructions"\nrepeats = 3\nwarmup = 0\norder = "grid"\n'
        '[[grid]]\nkernel = "skynet"\nparams = { leaves = 100, dispatcher = "one_thread" }\n'
        '[[grid]]\nkernel = "ping_pong"\nparams = { messages = 100, dispatcher = "one_thread" }\n')
BUILD = {"build": {"compiler": "GNU 12", "flags": " -O3"}, "libc": "glibc 2.36", "valgrind": "valgrind-3.19.0"}


def fake_run(db: Path, counts: dict[str, list[int]], context: dict = BUILD, dependent: bool = False) -> int:
    """A run of GATE whose points counted these instructions (by kernel), as if swept."""
    plan = experiment.parse(GATE, "g.toml")
    with Store(db) as store:
        run = store.create_run(plan, "labctl sweep g.toml", {"hostname": "h"}, context, [])
        for point in store.points(run):
            for repeat, value in enumerate(counts.get(point.point.kernel, [])):
                store.add_sample(point.id, repeat, Sample(
                    kernel=point.point.kernel, params=point.point.params, index=repeat, warmup=False, elapsed_ns=10,
                    messages_processed=1, answer="a", expected="a",
                    counts={"instructions": value}, schedule_dependent=dependent))
            if counts.get(point.point.kernel):
                store.finish_point(point.id)
            else:
                store.fail_point(point.id, "crash", "it crashed")
        store.end_run(run, "finished")
    return run


def test_the_gate_passes_the_same_counts_and_fails_past_two_percent(tmp_path):
    db = tmp_path / "r.db"
    base = gate.record(db, fake_run(db, {"skynet": [1000, 1001, 1000], "ping_pong": [5000, 5000, 5000]}))
    assert [(p["kernel"], p["instructions"]) for p in base["points"]] == [("skynet", 1000), ("ping_pong", 5000)]
    path = tmp_path / "g.baseline.json"
    gate.write(base, path)
    same = gate.check(db, fake_run(db, {"skynet": [1000, 1000, 1000], "ping_pong": [5001, 5000, 5000]}),
                      gate.read(path), path)
    assert [r.verdict for r in same.rows] == [gate.OK, gate.OK] and not same.failed
    worse = gate.check(db, fake_run(db, {"skynet": [1021, 1021, 1021], "ping_pong": [4800, 4800, 4800]}),
                       gate.read(path), path)
    assert [r.verdict for r in worse.rows] == [gate.REGRESSION, gate.IMPROVEMENT]
    assert [r.kernel for r in worse.failed] == ["skynet"] and worse.rows[0].change == pytest.approx(2.1)
    assert "**1 of 2 points fail**" in gate.markdown(worse)


def test_the_gate_fails_a_point_it_cannot_judge(tmp_path):
    db = tmp_path / "r.db"
    path = tmp_path / "g.baseline.json"
    gate.write(gate.record(db, fake_run(db, {"skynet": [1000] * 3, "ping_pong": [5000] * 3})), path)
    crashed = gate.check(db, fake_run(db, {"skynet": [1000] * 3}), gate.read(path), path)
    assert [r.verdict for r in crashed.rows] == [gate.OK, gate.NOT_MEASURED]
    assert crashed.rows[1].note == "it crashed"
    short = dict(gate.read(path))
    short["points"] = short["points"][:1]
    new = gate.check(db, fake_run(db, {"skynet": [1000] * 3, "ping_pong": [5000] * 3}), short, path)
    assert [r.verdict for r in new.rows] == [gate.OK, gate.NOT_IN_BASELINE] and new.failed
    with pytest.raises(gate.GateError, match="has no instruction count"):
        gate.record(db, fake_run(db, {"skynet": [1000] * 3}))


def test_schedule_dependent_counts_are_judged_at_the_wider_threshold(tmp_path):
    db = tmp_path / "r.db"
    path = tmp_path / "g.baseline.json"
    gate.write(gate.record(db, fake_run(db, {"skynet": [1000] * 3, "ping_pong": [5000] * 3}, dependent=True)), path)
    moved = gate.check(db, fake_run(db, {"skynet": [1030] * 3, "ping_pong": [5300] * 3}, dependent=True),
                       gate.read(path), path)
    assert [r.verdict for r in moved.rows] == [gate.OK, gate.REGRESSION]


def test_a_baseline_of_another_build_cannot_judge(tmp_path):
    db = tmp_path / "r.db"
    path = tmp_path / "g.baseline.json"
    gate.write(gate.record(db, fake_run(db, {"skynet": [1000] * 3, "ping_pong": [5000] * 3})), path)
    other = {**BUILD, "build": {"compiler": "GNU 13", "flags": " -O3"}}
    with pytest.raises(gate.GateError, match="another build .*compiler 'GNU 12' there, 'GNU 13' here"):
        gate.check(db, fake_run(db, {"skynet": [1000] * 3, "ping_pong": [5000] * 3}, other), gate.read(path), path)
    with pytest.raises(gate.GateError, match="no such file; make one with `labctl gate --update`"):
        gate.read(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(gate.GateError, match="not a baseline"):
        gate.read(tmp_path / "bad.json")


def test_labctl_gate_judges_a_stored_run_and_updates_its_baseline(tmp_path, labctl):
    db = tmp_path / "r.db"
    first = fake_run(db, {"skynet": [1000] * 3, "ping_pong": [5000] * 3})
    (tmp_path / "g.toml").write_text(GATE, encoding="utf-8")
    path = tmp_path / "g.baseline.json"
    made = labctl("gate", str(tmp_path / "g.toml"), "--db", str(db), "--run", str(first), "--update",
                  "--baseline", str(path))
    assert made.returncode == 0, made.stderr
    assert json.loads(path.read_text(encoding="utf-8"))["points"][0]["instructions"] == 1000
    worse = fake_run(db, {"skynet": [1100] * 3, "ping_pong": [5000] * 3})
    judged = labctl("gate", "--db", str(db), "--run", str(worse), "--baseline", str(path))
    assert judged.returncode == 1
    assert "| regression |" in judged.stdout and "labctl: gate: skynet" in judged.stderr
    assert "+10.00% instructions" in judged.stderr
    fine = labctl("gate", "--db", str(db), "--run", str(first), "--baseline", str(path))
    assert fine.returncode == 0 and "all 2 points pass" in fine.stdout


def test_the_committed_gate_baseline_matches_the_gate_experiment():
    path = gate.baseline_path(experiment.locate(gate.EXPERIMENT))
    baseline = gate.read(path)
    plan = experiment.load(gate.EXPERIMENT)
    assert {p.key for p in plan.points} == {entry["key"] for entry in baseline["points"]}
    assert all(p.measure == metrics.INSTRUCTIONS for p in plan.points)


def test_every_measure_has_one_run_side_of_the_same_name():
    assert tuple(measures.RUN_SIDE) == metrics.MEASURES
    assert all(measures.get(name).name == name for name in metrics.MEASURES)
    # What a measure counts, as analysis knows it, is what its run side can report.
    assert measures.get(metrics.TIME).counts({}, None, 1) is None
    assert measures.get(metrics.COUNTERS).counts(
        {"counters": {"cycles": 5, "page_faults": None}, "unsupported": {"page_faults": "no PMU"}}, None, 1) \
        == ({"cycles": 5}, {"page_faults": "no PMU"})
