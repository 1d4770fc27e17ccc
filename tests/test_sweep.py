"""`labctl sweep` end to end: the store it fills, failing points, interruption by SIGINT and
SIGKILL resumed with no sample lost or repeated, two sweeps on one store, and the commands that
read the store (runs, show, export, results.load)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from conftest import sigint_as_at_a_terminal

from labctl import results
from labctl.plan import experiment
from labctl.run import sysinfo
from labctl.store import Store

ROOT = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


SMALL = '''
name = "small"
description = "two kernels, a few points"
repeats = 2
warmup = 1
timeout_s = 60
[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
axes = { dispatcher = ["one_thread", "thread_pool"] }
[[grid]]
kernel = "ping_pong"
params = { messages = 2000 }
axes = { dispatcher = ["one_thread", "active_obj"] }
'''


def sample_counts(db: str) -> dict[int, list[int]]:
    """Repeat numbers stored per point."""
    connection = sqlite3.connect(db)
    rows = connection.execute("SELECT point_id, repeat FROM samples ORDER BY point_id, repeat").fetchall()
    connection.close()
    counts: dict[int, list[int]] = {}
    for point, repeat in rows:
        counts.setdefault(point, []).append(repeat)
    return counts


def test_a_sweep_fills_the_store_with_every_sample_and_the_machine(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    result = labctl("sweep", write(tmp_path, SMALL), "--db", db)
    assert result.returncode == 0, result.stderr
    assert "run 1 finished" in result.stdout
    with Store(db) as store:
        [run] = store.runs()
        assert (run.status, run.points, run.points_done, run.points_failed, run.samples) == (
            "finished", 4, 4, 0, 8)
        assert run.machine["cpu_model"] and run.machine["logical_cpus"] >= 1
        assert "smt" in run.machine and "kernel" in run.machine
        for key in ("load_average", "memory_available_kb", "python", "labctl", "build", "governor",
                    "git_describe", "experiment_git_describe"):
            assert key in run.context
        assert run.context["build"]["flags"]
        assert run.seed is not None and "--seed" in run.command
    assert all(repeats == [0, 1] for repeats in sample_counts(db).values())


def test_plan_and_dry_run_print_the_points_and_run_nothing(labctl, tmp_path):
    db = tmp_path / "r.db"
    path = write(tmp_path, SMALL)
    for args in (["plan", path, "--db", str(db)], ["sweep", path, "--dry-run", "--db", str(db)]):
        result = labctl(*args)
        assert result.returncode == 0, result.stderr
        assert "4 points, 8 measured samples" in result.stdout
        assert "skynet" in result.stdout and "active_obj" in result.stdout
        assert "estimate:" in result.stdout
    assert not db.exists()


def test_scale_full_runs_the_studys_sizes_and_is_recorded_in_the_rerun_command(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    path = write(tmp_path, SMALL.replace('params = { leaves = 1000 }',
                                         'params = { leaves = 1000 }\nfull = { params = { leaves = 2000 } }'))
    result = labctl("plan", path, "--db", db, "--scale", "full")
    assert result.returncode == 0 and "scale full" in result.stdout and "2000" in result.stdout
    assert labctl("sweep", path, "--db", db, "--scale", "full").returncode == 0
    with Store(db) as store:
        [run] = store.runs()
        assert run.command.endswith("--scale full")
        assert {p.point.params.get("leaves") for p in store.points(run.id)} == {2000, None}
    refused = labctl("sweep", "--resume", "1", "--db", db, "--scale", "full")
    assert refused.returncode == 2 and "--scale goes with an experiment FILE" in refused.stderr
    wrong = labctl("plan", path, "--scale", "huge")
    assert wrong.returncode == 2 and "'huge' is not one of 'default', 'full'" in wrong.stderr


def test_a_bad_experiment_is_refused_before_anything_runs(labctl, tmp_path):
    db = tmp_path / "r.db"
    result = labctl("sweep", write(tmp_path, SMALL.replace("leaves = 1000", "leaves = -1")), "--db", str(db))
    assert result.returncode == 2
    assert "grid[0].params.leaves" in result.stderr and "Traceback" not in result.stderr
    assert not db.exists()


FAULTS = '''
name = "faults"
order = "grid"
repeats = 2
warmup = 0
timeout_s = 60
[[grid]]
kernel = "skynet"
params = { leaves = 100 }
[[grid]]
kernel = "skynet"
params = { leaves = 200 }
env = { LABCTL_FAULT = "crash" }
[[grid]]
kernel = "skynet"
params = { leaves = 300 }
env = { LABCTL_FAULT = "wrong_answer" }
[[grid]]
kernel = "skynet"
params = { leaves = 400 }
env = { LABCTL_FAULT = "hang" }
timeout_s = 2
[[grid]]
kernel = "ping_pong"
params = { messages = 200 }
'''


def test_failing_points_are_recorded_with_their_reason_and_the_sweep_goes_on(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    result = labctl("sweep", write(tmp_path, FAULTS), "--db", db)
    assert result.returncode == 1
    assert "3 of 5 points failed" in result.stderr
    with Store(db) as store:
        points = {p.point.params["leaves"] if "leaves" in p.point.params else "ping_pong": p
                  for p in store.points(1)}
    assert points[100].status == "done" and points["ping_pong"].status == "done"
    assert (points[200].status, points[200].failure_kind) == ("failed", "crash")
    assert "killed by SIGSEGV" in points[200].failure
    assert (points[300].status, points[300].failure_kind) == ("failed", "verification")
    assert "wrong answer" in points[300].failure
    assert (points[400].status, points[400].failure_kind) == ("failed", "timeout")
    shown = labctl("show", "1", "--db", db)
    assert shown.returncode == 0
    assert shown.stdout.count("failed") == 3 and "wrong answer" in shown.stdout


LONG = '''
name = "long"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 120
[[grid]]
kernel = "skynet"
params = { leaves = 300_000 }
axes = { branching = [2, 3, 4, 5, 6, 7, 8, 9] }
'''


# Marks the processes of this test session's sweeps (their workers inherit it), so that a
# worker of another sweep on the machine is never taken for one of ours.
SESSION_TAG = f"labctl-tests-{os.getpid()}"


def start_sweep(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-P", "-m", "labctl", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_at_a_terminal,
                            env={**os.environ, "LABCTL_TEST_SESSION": SESSION_TAG})


def wait_for_samples(db: str, count: int, process: subprocess.Popen, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        if Path(db).exists():
            try:
                if sum(len(r) for r in sample_counts(db).values()) >= count:
                    return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.05)
    pytest.fail(f"fewer than {count} samples after {limit} s")


def worker_processes() -> list[str]:
    """The worker processes of this session's sweeps that are still alive."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        try:
            if "labctl.run.worker" in " ".join(process.info["cmdline"] or []) and \
                    process.environ().get("LABCTL_TEST_SESSION") == SESSION_TAG:
                found.append(f"{process.pid} {' '.join(process.info['cmdline'])}")
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_sweep_resumes_without_losing_or_repeating_a_sample(labctl, tmp_path, how):
    db = str(tmp_path / "r.db")
    process = start_sweep(["sweep", write(tmp_path, LONG), "--db", db])
    wait_for_samples(db, 4, process)
    process.send_signal(how)
    _, err = process.communicate(timeout=60)
    if how == signal.SIGINT:
        assert process.returncode == 130, err
        assert "--resume 1" in err
    else:
        assert process.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while worker_processes() and time.monotonic() < deadline:  # a worker dies with its sweep
        time.sleep(0.05)
    assert not worker_processes()
    with Store(db) as store:
        run = store.run(1)
        assert run.status == "interrupted"
        stored = run.samples
    assert 4 <= stored < 24

    resumed = labctl("sweep", "--resume", "1", "--db", db)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({stored} samples already stored)" in resumed.stdout
    counts = sample_counts(db)
    assert len(counts) == 8
    assert all(repeats == [0, 1, 2] for repeats in counts.values())
    with Store(db) as store:
        assert store.run(1).status == "finished"


def test_resuming_a_finished_run_runs_nothing(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    assert labctl("sweep", write(tmp_path, SMALL), "--db", db).returncode == 0
    again = labctl("sweep", "--resume", "latest", "--db", db)
    assert again.returncode == 0
    assert len(sample_counts(db)) == 4 and sum(len(r) for r in sample_counts(db).values()) == 8


def test_two_sweeps_write_to_one_store_at_once(tmp_path):
    db = str(tmp_path / "r.db")
    path = write(tmp_path, SMALL)
    sweeps = [start_sweep(["sweep", path, "--db", db]) for _ in range(2)]
    for process in sweeps:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    with Store(db) as store:
        runs = store.runs()
        assert [(r.status, r.samples) for r in runs] == [("finished", 8), ("finished", 8)]


def test_a_run_being_swept_cannot_be_resumed_beside_it(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    process = start_sweep(["sweep", write(tmp_path, LONG), "--db", db])
    try:
        wait_for_samples(db, 1, process)
        second = labctl("sweep", "--resume", "1", "--db", db)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert second.returncode == 2 and "Traceback" not in second.stderr
    assert second.stderr.startswith("labctl: run 1 is still running (labctl sweep ")
    assert all(repeats == list(range(len(repeats))) for repeats in sample_counts(db).values())


def test_two_sweeps_resuming_one_run_at_once_do_not_double_a_sample(tmp_path):
    # Both may find the run interrupted before either claims it: the claim decides, and the one
    # that loses says so. (Or the first finishes before the second looks: then it runs nothing.)
    db = str(tmp_path / "r.db")
    path = write(tmp_path, SMALL)
    with Store(db) as store:
        run = store.create_run(experiment.load(path), "labctl sweep exp.toml", sysinfo.machine(), {}, [])
        store.end_run(run, "interrupted")
    sweeps = [start_sweep(["sweep", "--resume", str(run), "--db", db]) for _ in range(2)]
    outcomes = []
    for process in sweeps:
        out, err = process.communicate(timeout=300)
        assert "Traceback" not in err
        outcomes.append(process.returncode)
        if process.returncode == 2:
            assert err.startswith("labctl: run 1 is ")
            assert "is still running" in err or "is being run by process" in err
            assert err.count("\n") == 1
        else:
            assert process.returncode == 0, err
    assert 0 in outcomes
    assert sorted(sample_counts(db).values()) == [[0, 1]] * 4
    with Store(db) as store:
        assert store.run(run).status == "finished"


def test_names_and_paths_that_look_like_markup_are_printed_as_written(labctl, tmp_path):
    text = ('name = "[/] [bold]odd"\ndescription = "[red]x[/]"\nrepeats = 1\nwarmup = 0\n'
            '[[grid]]\nkernel = "ping_pong"\nparams = { messages = 200 }\n')
    path = write(tmp_path, text, name="[bold]x.toml")
    db = str(tmp_path / "[red]y.db")
    planned = labctl("plan", path, "--db", db)
    assert planned.returncode == 0, planned.stderr
    assert "[/] [bold]odd: [red]x[/]" in planned.stdout and "[bold]x.toml" in planned.stdout
    swept = labctl("sweep", path, "--db", db)
    assert swept.returncode == 0, swept.stderr
    assert f"run 1: [/] [bold]odd, 1 points -> {db}" in swept.stdout
    listed, shown = labctl("runs", "--db", db), labctl("show", "1", "--db", db)
    assert listed.returncode == 0 and "[/] [bold]odd" in listed.stdout, listed.stderr
    assert shown.returncode == 0, shown.stderr
    shown_text = " ".join(shown.stdout.split())  # show wraps its lines to the terminal's width
    assert "[/] [bold]odd (" in shown_text and "[bold]x.toml)" in shown_text


def test_runs_show_export_and_results_read_the_store(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    assert labctl("sweep", write(tmp_path, SMALL), "--db", db).returncode == 0

    listing = labctl("runs", "--db", db)
    assert listing.returncode == 0 and "small" in listing.stdout and "4/4" in listing.stdout

    shown = labctl("show", "latest", "--db", db)
    assert shown.returncode == 0
    for word in ("skynet", "ping_pong", "median", "95% CI", "msgs/s", "machine:"):
        assert word in shown.stdout

    frame = results.load(db, "latest")
    assert len(frame) == 8
    for column in ("kernel", "dispatcher", "leaves", "messages", "messages_processed", "elapsed_ns", "msgs_per_s",
                   "round_trip_p50_ns", "agents", "verified", "cpu_ns", "peak_rss_kb"):
        assert column in frame.columns, column
    assert frame["verified"].all()
    row = frame.iloc[0]
    assert row["msgs_per_s"] == pytest.approx(row["messages_processed"] * 1e9 / row["elapsed_ns"])

    csv = labctl("export", "1", "--db", db, "--format", "csv")
    assert csv.returncode == 0 and len(csv.stdout.strip().splitlines()) == 9
    as_json = json.loads(labctl("export", "1", "--db", db, "--format", "json").stdout)
    assert len(as_json) == 8
    parquet = tmp_path / "r.parquet"
    assert labctl("export", "1", "--db", db, "--format", "parquet", "-o", str(parquet)).returncode == 0
    import pandas as pd

    assert len(pd.read_parquet(parquet)) == 8


@pytest.mark.parametrize("args, words", [
    (["show", "7"], ["no run 7"]),
    (["show", "nope"], ["give a run id"]),
    (["show", "99999999999999999999"], ["no run 99999999999999999999"]),
    (["sweep"], ["give an experiment FILE, or --resume RUN"]),
    (["sweep", "--resume", "3"], ["no run 3"]),
    (["export", "1", "--format", "parquet"], ["give --output FILE"]),
])
def test_store_commands_refuse_bad_input_in_one_line(labctl, tmp_path, args, words):
    db = str(tmp_path / "r.db")
    assert labctl("sweep", write(tmp_path, SMALL), "--db", db).returncode == 0
    result = labctl(*args, "--db", db)
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr


def test_a_foreign_file_given_as_db_is_refused_and_untouched(labctl, tmp_path):
    notes = tmp_path / "notes.db"
    notes.write_text("not a database\n")
    result = labctl("sweep", write(tmp_path, SMALL), "--db", str(notes))
    assert result.returncode == 2 and "not a labctl store" in result.stderr
    assert notes.read_text() == "not a database\n"


def test_warnings_about_the_machine_are_printed_not_enforced(labctl, tmp_path):
    result = labctl("sweep", write(tmp_path, SMALL), "--db", str(tmp_path / "r.db"))
    assert result.returncode == 0
    if not Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").exists():
        assert "frequency scaling is not visible" in result.stderr
    os.environ.get("CI")  # the warnings never change the exit code, in CI or not
