"""Issue 31's wrong figures, escapes and words: every numeric input is finite and in range, a
figure that was not measured is absent (never 0) from the store to the report, outside text
reaches report.md escaped, a worker the OS will not start fails its point instead of leaving a
run `running`, and what report, compare and --cluster say is true."""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import run_labctl
from test_hostile import one_line

from labctl import results
from labctl.catalogue import kernels, runtimes
from labctl.plan import experiment
from labctl.read import compare
from labctl.run import cluster, runner
from labctl.store import Store
from labctl.vocabulary import metrics
from labctl.vocabulary.point import Point


def sweep(labctl, folder: Path, text: str, name: str = "e.toml", db: str = "r.db", env=None) -> Path:
    (folder / name).write_text(text)
    result = labctl("sweep", str(folder / name), "--db", str(folder / db), env=env)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    return folder / db


def sql(db: Path, statement: str, *args) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute(statement, args)


# -- every numeric input is finite and in range ---------------------------------------------------

def numeric_params() -> list[tuple[str, str]]:
    """(kernel, parameter) for every numeric parameter of every kernel of the catalogue."""
    return [(name, p.name) for name, spec in sorted(kernels.catalogue().items())
            for p in spec.params if p.numeric]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_nan_and_inf_are_refused_for_every_numeric_parameter_of_a_file(value):
    found = numeric_params()
    assert ("fan", "duration_s") in found and len(found) > 20
    for kernel, name in found:
        for section in (f"params = {{ {name} = {value} }}", f"axes = {{ {name} = [{value}] }}"):
            text = f'name = "e"\n[[grid]]\nkernel = "{kernel}"\n{section}\n'
            with pytest.raises(experiment.ExperimentError) as caught:
                experiment.parse(text, "e.toml")
            message = str(caught.value)
            assert f"e.toml: grid[0].{section.split()[0]}.{name}" in message, message
            assert value in message and "\n" not in message


def test_a_file_value_out_of_its_range_is_refused_naming_the_range():
    text = 'name = "e"\n[[grid]]\nkernel = "fan"\naxes = { duration_s = [0.5, 7200.0] }\n'
    with pytest.raises(experiment.ExperimentError) as caught:
        experiment.parse(text, "e.toml")
    assert str(caught.value) == ("e.toml: grid[0].axes.duration_s: fan: parameter 'duration_s' must "
                                 "be number from 0.001 to 3600, got 7200")


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400"])
def test_nan_and_inf_are_refused_on_the_command_line(labctl, value):
    one_line(labctl("run", "fan", "--duration_s", value), 2, "duration_s", "0.001", "3600")


def test_a_worker_refuses_a_request_whose_parameter_is_nan():
    # The protocol between the sweep and its worker is JSON as Python writes it, which carries
    # NaN (a store written before files refused it keeps one): refused, never run.
    params = kernels.point("fan", {"iterations": 0, "fan_out": 2}, metrics.TIME).params
    point = Point("fan", {**params, "duration_s": math.nan}, timeout_s=60)
    with pytest.raises(runner.PointFailed) as caught:
        list(runner.run_point(point))
    assert caught.value.kind == "param"
    assert "parameter 'duration_s' must be a finite number (0.001..3600), got nan" in str(caught.value)


# -- a figure that was not measured is absent ---------------------------------------------------

def test_what_is_a_measured_figure():
    assert metrics.measured("round_trip_p50_ns", 812.0)
    assert not metrics.measured("round_trip_p50_ns", 0.0)  # a latency of no sample
    assert not metrics.measured("ns_per_hop", 0)
    assert not metrics.measured("round_trip_p99_ns", -3.0)
    assert metrics.measured("round_trip_samples", 0.0)  # a count of 0 is a count
    assert metrics.measured("agents", 0)
    for value in (math.nan, math.inf, -math.inf, None, "12", True):
        assert not metrics.measured("agents", value)
    assert metrics.measured_only({"a_ns": 0.0, "b_ns": 3, "c": math.nan, "d": 0}) == {"b_ns": 3.0, "d": 0.0}


LATENCIES = ("round_trip_p50_ns", "round_trip_p99_ns", "round_trip_max_ns")


@pytest.mark.parametrize("kernel, args", [
    ("ping_pong", ["--messages", "2000", "--latency_samples", "0"]),
    ("floor_cache_line", ["--round_trips", "1000", "--latency_samples", "0"]),
])
def test_latencies_of_no_sample_are_absent_from_a_run(labctl, kernel, args):
    result = labctl("run", kernel, *args, "--json")
    assert result.returncode == 0, result.stderr
    sample = json.loads(result.stdout.splitlines()[0])
    assert not set(LATENCIES) & set(sample["metrics"]), sample["metrics"]
    assert sample["metrics"]["round_trip_samples"] == 0


def test_a_ring_of_no_hop_reports_no_time_per_hop(labctl):
    # hops = 0 is allowed by the schema (a ring that only starts and stops): a time per hop of
    # none is no figure, so it is absent.
    result = labctl("run", "thread_ring", "--actors", "4", "--hops", "0", "--json")
    assert result.returncode == 0, result.stderr
    sample = json.loads(result.stdout.splitlines()[0])
    assert "ns_per_hop" not in sample["metrics"], sample["metrics"]


PING_PONG = '''
name = "latency"
repeats = 3
warmup = 0
order = "grid"
[[grid]]
kernel = "ping_pong"
params = { messages = 2000, latency_samples = 100 }
[[grid]]
kernel = "floor_cache_line"
params = { round_trips = 1000, latency_samples = 100 }
'''


@pytest.fixture(scope="module")
def zero_latency_runs(tmp_path_factory) -> Path:
    """Two runs of ping_pong whose stored latencies are 0 ns, as a labctl before this one stored
    them for latency_samples = 0."""
    folder = tmp_path_factory.mktemp("zeros")
    db = sweep(run_labctl, folder, PING_PONG)
    assert run_labctl("sweep", str(folder / "e.toml"), "--db", str(db)).returncode == 0
    with sqlite3.connect(db) as connection:
        for (sample, stored) in connection.execute("SELECT id, metrics FROM samples").fetchall():
            figures = json.loads(stored)
            figures.update({name: 0.0 for name in LATENCIES})
            connection.execute("UPDATE samples SET metrics = ? WHERE id = ?", (json.dumps(figures), sample))
    return db


def test_stored_zero_latencies_are_absent_in_results_show_and_compare(labctl, zero_latency_runs):
    db = zero_latency_runs
    frame = results.load(db)
    assert not set(LATENCIES) & set(frame.columns)  # no sample measured them: no column
    assert (frame["round_trip_mean_ns"] > 0).all()
    shown = labctl("show", "1", "--db", str(db))
    assert shown.returncode == 0 and "0 ns" not in shown.stdout, shown.stdout
    compared = labctl("compare", "1", "2", "--db", str(db), "--metric", "round_trip_mean_ns")
    assert compared.returncode == 0, compared.stderr
    both = compare.compare(compare.load(db, 1), compare.load(db, 2), "round_trip_mean_ns")
    assert len(both.rows) == 2  # ping_pong and the cache line
    # A figure that no sample of either run measured is no metric of theirs: nothing to compare,
    # never "no change" between two zeros.
    asked = labctl("compare", "1", "2", "--db", str(db), "--metric", "round_trip_p50_ns")
    assert "no change" not in asked.stdout
    one_line(asked, 2, "--metric", "round_trip_p50_ns")


def test_a_report_of_stored_zero_latencies_bounds_nothing_by_them(labctl, zero_latency_runs, tmp_path):
    # The cache line bounds ping_pong's round_trip_p50_ns: of two figures never measured, no
    # distance ("0 ns", "infx"); its mean, measured, keeps its section.
    result = labctl("report", "1", "--db", str(zero_latency_runs), "-o", str(tmp_path / "r"))
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "r" / "report.md").read_text()
    assert "`round_trip_p50_ns`" not in report and "`round_trip_mean_ns`" in report
    assert " 0 ns" not in report and "inf" not in report


# -- a peer's metrics never take a parameter's name -----------------------------------------------

PEER = textwrap.dedent('''
    import json, sys
    request = json.load(sys.stdin)
    n = request["params"]["messages"]
    metrics = json.load(open(sys.argv[1]))
    print(json.dumps({"elapsed_ns": 10**6 + n, "messages": n,
                      "answer": f"received={n} sum={n * (n + 1) // 2}", "metrics": metrics}))
''')


@pytest.fixture
def peer(tmp_path, monkeypatch):
    """A peer running counting_actor that replies with the metrics it is given."""
    root = tmp_path / "peers"

    def make(figures: dict) -> str:
        folder = root / "echo"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "peer.py").write_text(PEER)
        (folder / "metrics.json").write_text(json.dumps(figures))
        command = json.dumps([sys.executable, "{folder}/peer.py", "{folder}/metrics.json"])
        (folder / "peer.toml").write_text(f'name = "echo"\nsummary = "echo"\ncommand = {command}\n'
                                          '[kernels]\ncounting_actor = ["messages"]\n')
        runtimes.runtimes.cache_clear()
        kernels.catalogue.cache_clear()
        return "echo"

    monkeypatch.setenv(runtimes.PEERS_ENV, str(root))
    monkeypatch.setenv(runtimes.CACHE_ENV, str(tmp_path / "cache"))
    yield make
    monkeypatch.undo()
    runtimes.runtimes.cache_clear()
    kernels.catalogue.cache_clear()


def echo_point(messages: int = 100) -> Point:
    return Point("counting_actor", {"runtime": "echo", "messages": messages}, repeats=1, timeout_s=60)


def test_a_peer_metric_named_after_another_kernels_parameter_is_refused(peer):
    peer({"leaves": 7.0})  # skynet's parameter, not counting_actor's
    with pytest.raises(runner.PointFailed) as caught:
        list(runner.run_point(echo_point()))
    assert caught.value.kind == "protocol"
    assert "metric name 'leaves' is not allowed" in str(caught.value)


def test_a_peers_null_or_zero_latency_is_absent(peer):
    peer({"round_trip_p50_ns": None, "setup_ns": 0, "round_trip_mean_ns": 42.5, "agents": 0})
    (sample,) = runner.run_point(echo_point())
    assert sample.metrics == {"round_trip_mean_ns": 42.5, "agents": 0.0}


BOTH = '''
name = "both"
repeats = 1
warmup = 0
order = "grid"
[[grid]]
kernel = "skynet"
params = { leaves = 100 }
[[grid]]
kernel = "counting_actor"
params = { messages = 100 }
'''


def test_a_stored_metric_named_after_a_parameter_never_takes_its_column(labctl, tmp_path):
    # A store written before peers' metrics were refused every kernel's parameter names: a
    # counting_actor sample holds a metric `leaves`, skynet's parameter, in a run with both.
    db = sweep(labctl, tmp_path, BOTH)
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE samples SET metrics = '{\"leaves\": 7.0}' WHERE point_id IN "
                           "(SELECT id FROM points WHERE kernel = 'counting_actor')")
    frame = results.load(db, 1)
    by_kernel = frame.set_index("kernel")
    assert by_kernel.loc["skynet", "leaves"] == 100
    assert by_kernel.loc["counting_actor", "metric_leaves"] == 7.0
    assert frame.loc[frame["kernel"] == "counting_actor", "leaves"].isna().all()
    exported = labctl("export", "1", "--db", str(db), "-o", str(tmp_path / "x.csv"))
    assert exported.returncode == 0, exported.stderr
    reported = labctl("report", "1", "--db", str(db), "-o", str(tmp_path / "rep"))
    assert reported.returncode == 0 and "Traceback" not in reported.stderr, reported.stderr


# -- escape sequences never reach report.md -------------------------------------------------------

SMALL = '''
name = "small"
repeats = 1
warmup = 0
[[grid]]
kernel = "skynet"
axes = { leaves = [100, 200] }
'''


def test_paths_and_commands_reach_report_md_escaped(labctl, tmp_path):
    folder = tmp_path / "in\x1b[2Jside\u202e"
    folder.mkdir()
    db = sweep(labctl, folder, SMALL, name="e\x1b]0;x\x07.toml", db="r\x1b[31m.db")
    out = tmp_path / "rep"
    assert labctl("report", "1", "--db", str(db), "-o", str(out)).returncode == 0
    report = (out / "report.md").read_text()
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in report
    assert "in\\x1b[2Jside\\u202e" in report and "r\\x1b[31m.db" in report
    # The stored command line too, and the pending points' advice (its store's path).
    sql(db, "UPDATE runs SET command = 'labctl sweep \x1b[5m' WHERE id = 1")
    sql(db, "UPDATE points SET status = 'pending' WHERE id = 1")
    assert labctl("report", "1", "--db", str(db), "-o", str(out)).returncode == 0
    report = (out / "report.md").read_text()
    assert "\x1b" not in report and "labctl sweep \\x1b[5m" in report
    assert "--resume 1 --db" in report


# -- a worker that cannot start fails its point -------------------------------------------------

def test_a_stored_env_the_os_refuses_fails_the_point_and_ends_the_run(labctl, tmp_path):
    db = sweep(labctl, tmp_path, SMALL + 'env = { LABCTL_TEST = "1" }\n')
    # As a store written before the env checks (or edited) holds: a NUL the exec cannot pass,
    # and an entry past the kernel's 128 KiB (E2BIG).
    sql(db, "UPDATE points SET status = 'pending', env = ? WHERE id = 1", json.dumps({"A": "x\0y"}))
    sql(db, "UPDATE points SET status = 'pending', env = ? WHERE id = 2", json.dumps({"B": "x" * 200_000}))
    sql(db, "DELETE FROM samples")
    sql(db, "UPDATE runs SET status = 'interrupted' WHERE id = 1")
    started = time.monotonic()
    result = labctl("sweep", "--resume", "1", "--db", str(db), timeout=60)
    assert time.monotonic() - started < 30
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "cannot start its worker: embedded null byte" in result.stderr
    assert "cannot start its worker: Argument list too long" in result.stderr
    with Store(db) as store:
        assert store.run(1).status == "finished"
        assert [p.status for p in store.points(1)] == ["failed", "failed"]
        assert all("\n" not in p.failure for p in store.points(1))


# -- words that are true ------------------------------------------------------------------------

def test_a_report_made_while_its_sweep_runs_says_so(labctl, tmp_path):
    db = sweep(labctl, tmp_path, SMALL)
    sql(db, "UPDATE points SET status = 'pending' WHERE id = 2")
    # Running, by a live process of this host (this test's): its sweep is at work.
    sql(db, "UPDATE runs SET status = 'running', finished_at = NULL, pid = ?, host = ? WHERE id = 1",
        os.getpid(), socket.gethostname())
    assert labctl("report", "1", "--db", str(db), "-o", str(tmp_path / "r")).returncode == 0
    report = (tmp_path / "r" / "report.md").read_text()
    assert "--resume" not in report
    assert "1 points are not run yet: the run is still running" in report


def test_a_report_where_every_point_failed_claims_no_verification(labctl, tmp_path):
    db = sweep(labctl, tmp_path, SMALL, env={"LABCTL_FAULT": "crash"})
    with Store(db) as store:
        assert {p.status for p in store.points(1)} == {"failed"}
    assert labctl("report", "1", "--db", str(db), "-o", str(tmp_path / "r")).returncode == 0
    report = (tmp_path / "r" / "report.md").read_text()
    assert "verified" not in report
    assert "0 of 2 points done, 2 failed, 0 samples." in report


def test_compare_never_lists_a_point_of_both_runs_as_only_in_one(labctl, tmp_path):
    db = sweep(labctl, tmp_path, SMALL)
    assert labctl("sweep", str(tmp_path / "e.toml"), "--db", str(db)).returncode == 0
    # Run 2's points ran on another kind of machine (another CPU model).
    with sqlite3.connect(db) as connection:
        (info,) = connection.execute("SELECT m.info FROM machines m JOIN runs r ON r.machine_id = m.id"
                                     " WHERE r.id = 2").fetchone()
        other = {**json.loads(info), "cpu_model": "Other CPU 9000"}
        connection.execute("INSERT INTO machines (fingerprint, info) VALUES ('other', ?)", (json.dumps(other),))
        connection.execute("UPDATE runs SET machine_id = (SELECT id FROM machines WHERE fingerprint = 'other')"
                           " WHERE id = 2")
    result = labctl("compare", "1", "2", "--db", str(db))
    assert result.returncode == 0, result.stderr
    assert "Only in A" not in result.stdout and "Only in B" not in result.stdout, result.stdout
    assert "In both runs but on different kinds of machine, not compared" in result.stdout
    assert result.stdout.count("Other CPU 9000") >= 2
    across = labctl("compare", "1", "2", "--db", str(db), "--across-machines")
    assert "In both runs" not in across.stdout and "skynet" in across.stdout


def test_a_cluster_port_that_refuses_fails_at_once_saying_so():
    with socket.socket() as probe:  # a port nothing listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        spec = cluster.parse(f"127.0.0.1:{port}")
        assert "60 s" not in cluster.connecting(spec).split(", then")[0]
        started = time.monotonic()
        with pytest.raises(cluster.ClusterError) as caught:
            cluster.connect(spec)
    assert time.monotonic() - started < 5
    assert caught.value.code == 1
    assert str(caught.value) == (f"--cluster 127.0.0.1:{port}: connection refused: nothing listens on "
                                 f"port {port} of 127.0.0.1 (is the scheduler started? `dask scheduler "
                                 f"--port {port}`); nothing was run")


@pytest.mark.parametrize("grid, figure", [
    ('kernel = "skynet"\naxes = { leaves = [100, 200, 400] }', "skynet-leaves.png"),  # only sizes
    (('kernel = "ping_pong"\nparams = { messages = 1000, latency_samples = 10 }\n'
      'axes = { mbox = ["direct", "named"] }'), "ping_pong-bars.png"),  # only a categorical
])
def test_a_grid_varying_only_sizes_or_categories_gets_a_figure_and_no_empty_heading(labctl, tmp_path,
                                                                                     grid, figure):
    db = sweep(labctl, tmp_path, f'name = "g"\nrepeats = 1\nwarmup = 0\n[[grid]]\n{grid}\n')
    assert labctl("report", "1", "--db", str(db), "-o", str(tmp_path / "r")).returncode == 0
    report = (tmp_path / "r" / "report.md").read_text()
    assert f"(figures/{figure})" in report, report
    lines = report.splitlines()
    for number, line in enumerate(lines):  # a scenario's heading is followed by its figure
        if line.startswith("**") and line.endswith("**"):  # a heading, not a sentence in bold
            following = next((later for later in lines[number + 1:] if later.strip()), "")
            assert following.startswith("!["), (line, following)
