"""`labctl sweep --cluster`: points run on a Dask cluster (a LocalCluster of worker processes,
started here and reached by its address, or `--cluster local:N`) fill the store as a local sweep
does; points that ask for one host never overlap on it; a Dask worker killed mid-point costs one
retry, then fails the point; a host with another labctl is refused before anything runs; an
unreachable scheduler writes nothing; a sweep killed with kill -9 resumes, on the cluster or here.
"""

from __future__ import annotations

import itertools
import json
import logging
import signal
import sqlite3
from datetime import datetime
from pathlib import Path

import psutil
import pytest
from test_sweep import LONG, SMALL, sample_counts, start_sweep, wait_for_samples

from labctl import results
from labctl.run import cluster
from labctl.store import Store

distributed = pytest.importorskip("distributed")


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def one_line(result, code: int) -> str:
    assert result.returncode == code, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("labctl:")]
    return line


@pytest.fixture(scope="module")
def scheduler():
    """A cluster of 2 worker processes with 2 threads each, each offering host=1: only the
    resource keeps a worker from running two points at once."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                  resources={"host": 1}, memory_limit=0, dashboard_address=":0",
                                  silence_logs=logging.CRITICAL) as local:
        yield local.scheduler_address


def layout(db: str) -> dict[str, list[str]]:
    connection = sqlite3.connect(db)
    tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    found = {t: [c[1] for c in connection.execute(f"PRAGMA table_info({t})")] for t in sorted(tables)}
    connection.close()
    return found


def test_a_sweep_on_a_cluster_stores_what_a_local_sweep_stores(labctl, tmp_path):
    path = write(tmp_path, SMALL)
    here, there = str(tmp_path / "here.db"), str(tmp_path / "there.db")
    assert labctl("sweep", path, "--db", here).returncode == 0
    swept = labctl("sweep", path, "--db", there, "--cluster", "local:2")
    assert swept.returncode == 0, swept.stderr
    assert "cluster local:2: 2 workers on 1 host" in swept.stdout
    assert "run 1 finished" in swept.stdout and "8 samples" in swept.stdout
    assert "--cluster local:2: 2 points run at once on this machine's cores" in swept.stderr
    assert "for testing, not for publishing" in swept.stderr
    assert layout(here) == layout(there)
    with Store(here) as a, Store(there) as b:
        local, remote = a.points(1), b.points(1)
        assert b.run(1).command.endswith("--cluster local:2")
        assert b.run(1).status == "finished"
    assert [(p.key, p.status, p.samples_done) for p in local] == \
        [(p.key, p.status, p.samples_done) for p in remote]
    assert sample_counts(here) == sample_counts(there)
    for point in local + remote:
        assert point.machine is None  # this machine ran them all: the run's own
        assert point.started_at < point.finished_at
    assert all(p.context is None for p in local)
    for point in remote:  # the host's state at the point's start and its labctl
        assert point.context["worker"].startswith("tcp://") and point.context["labctl"]
        assert "load_average" in point.context and point.context["build"]["compiler"]
    frames = results.load(here, 1), results.load(there, 1)
    assert list(frames[0].columns) == list(frames[1].columns)
    assert frames[0].groupby("point_key").size().equals(frames[1].groupby("point_key").size())
    assert list(results.points(here, 1).columns) == list(results.points(there, 1).columns)
    # show, report and compare read it as a local store; the machine is one, so nothing splits
    shown = labctl("show", "1", "--db", there)
    assert shown.returncode == 0 and "machine: " in shown.stdout and "\non " not in shown.stdout
    report = labctl("report", "1", "--db", there, "--output", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert "The points ran on" not in (tmp_path / "report" / "report.md").read_text()
    compared = labctl("compare", "1", "1", "--db", here, "--db-b", there)
    assert compared.returncode == 0, compared.stderr
    assert "Geometric mean of B/A over 4 points" in compared.stdout and "Warning" not in compared.stdout


def test_the_notebook_reads_a_store_the_cluster_filled(labctl, tmp_path, monkeypatch):
    from test_notebook import THREADS, execute, text

    db = tmp_path / "r.db"
    swept = labctl("sweep", write(tmp_path, THREADS), "--db", str(db), "--cluster", "local:2")
    assert swept.returncode == 0, swept.stderr
    cells = execute(db, "1", tmp_path, monkeypatch)
    assert "30 samples of 10 points; kernels: ping_pong, skynet; 0 with a wrong answer" in \
        text(cells["samples"])
    assert "of 10 points are noisy" in text(cells["noise"])


POINTS = '''
name = "points"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 60
[[grid]]
kernel = "skynet"
params = { leaves = 1_000_000 }
axes = { branching = [2, 3, 4, 5, 6, 7, 8, 9] }
'''
# A million leaves: each sample takes tens of milliseconds, so a streamed sample has that long to
# reach the store before its point ends. At 20,000 leaves (3 ms a sample) the window was shorter
# than Dask's event relay on a busy 2-core CI machine, which once stored the first sample 58 ms
# after its point's end: the streaming assertion below failed with nothing wrong.


def stamp(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_points_that_ask_for_one_host_never_overlap_on_it(labctl, scheduler, tmp_path):
    db = str(tmp_path / "r.db")
    swept = labctl("sweep", write(tmp_path, POINTS), "--db", db, "--cluster", scheduler)
    assert swept.returncode == 0, swept.stderr
    assert f"cluster {scheduler}: 2 workers on 1 host" in swept.stdout
    # Two workers on one host, each offering host=1: the sweep says its points disturb each other.
    assert "has 2 workers offering host=1" in swept.stderr
    with Store(db) as store:
        points = store.points(1)
        samples = store.samples(1)
    assert all(p.status == "done" and p.samples_done == 3 for p in points)
    by_worker: dict[str, list[tuple[datetime, datetime]]] = {}
    for point in points:
        by_worker.setdefault(point.context["worker"], []).append(
            (stamp(point.started_at), stamp(point.finished_at)))
    assert len(by_worker) == 2  # both hosts worked
    for spans in by_worker.values():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, f"two points overlapped on one host: {spans}"
    # The samples were streamed: the first of each point was stored before the point ended.
    for point in points:
        first = min((s for s in samples if s["point"] == point.id), key=lambda s: s["repeat"])
        assert stamp(first["recorded_at"]) < stamp(point.finished_at)


KILLED = '''
name = "killed"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 60
[[grid]]
kernel = "ping_pong"
params = { messages = 2000 }
[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
env = { LABCTL_FAULT = "kill_host" }
[[grid]]
kernel = "skynet"
params = { leaves = 2000 }
env = { LABCTL_FAULT = "kill_host", LABCTL_FAULT_ONCE = "ONCE" }
'''


@pytest.fixture
def strict_scheduler():
    """A cluster whose scheduler gives a task up at its worker's first death (allowed-failures
    0: KilledWorker at once), where labctl resubmits the point itself."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  resources={"host": 1}, memory_limit=0, dashboard_address=":0",
                                  scheduler_kwargs={"allowed_failures": 0},
                                  silence_logs=logging.CRITICAL) as local:
        yield local.scheduler_address


@pytest.mark.parametrize("which", ["scheduler", "strict_scheduler"],
                         ids=["Dask reschedules it", "labctl resubmits it"])
def test_a_worker_killed_mid_point_costs_one_retry_then_fails_the_point(labctl, request, tmp_path, which):
    address = request.getfixturevalue(which)
    db = str(tmp_path / "r.db")
    text = KILLED.replace('"ONCE"', json.dumps(str(tmp_path / "once")))
    swept = labctl("sweep", write(tmp_path, text), "--db", db, "--cluster", address, timeout=300)
    assert swept.returncode == 1, swept.stdout + swept.stderr
    assert "1 of 3 points failed" in swept.stderr
    assert "died running skynet" in swept.stderr and "it runs once more" in swept.stderr
    with Store(db) as store:
        healthy, always, once = store.points(1)
    assert (healthy.status, healthy.samples_done) == ("done", 3)
    # Killed after its first sample on each of two workers: failed, with what each attempt stored.
    assert (always.status, always.failure_kind) == ("failed", "lost")
    assert "the Dask worker running it died 2 times" in always.failure
    assert always.failure.count("tcp://") == 2 and "not retried again" in always.failure
    assert 0 <= always.samples_done <= 2
    # Killed once: retried on another worker, where it finished its repeats.
    assert (once.status, once.samples_done) == ("done", 3)
    assert sorted(sample_counts(db)[once.id]) == [0, 1, 2]


def test_a_host_with_another_labctl_is_refused_before_anything_runs(labctl, tmp_path):
    preload = "import labctl; labctl.__version__ = '0.0.9'"  # what another install would report
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, resources={"host": 1},
                                  preload=[preload], dashboard_address=":0",
                                  silence_logs=logging.CRITICAL) as other:
        db = tmp_path / "r.db"
        result = labctl("sweep", write(tmp_path, SMALL), "--db", str(db), "--cluster",
                        other.scheduler_address)
    line = one_line(result, 1)
    assert f"--cluster {other.scheduler_address}: refused: worker tcp://" in line
    assert "labctl 0.0.9 there, 0.1.0 here; install labctl 0.1.0 there, built there" in line
    assert "nothing was run" in line
    assert not db.exists()


def test_an_unreachable_scheduler_is_one_line_and_writes_nothing(labctl, tmp_path):
    db = tmp_path / "r.db"
    result = labctl("sweep", write(tmp_path, SMALL), "--db", str(db), "--cluster", "tcp://127.0.0.1:9",
                    env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"})
    line = one_line(result, 1)
    # Port 9 refuses at once: said so, without Dask's retries until its timeout.
    assert line.startswith("labctl: --cluster tcp://127.0.0.1:9: connection refused: nothing listens "
                           "on port 9 of 127.0.0.1")
    assert not db.exists()


@pytest.mark.parametrize("value", ["local:0", "local:x", "local:", "nonsense", "tcp://host",
                                   "host:99999", "local:100000"])
def test_a_bad_cluster_is_refused_naming_the_forms(labctl, tmp_path, value):
    db = tmp_path / "r.db"
    line = one_line(labctl("sweep", write(tmp_path, SMALL), "--db", str(db), "--cluster", value), 2)
    assert f"--cluster: '{value}' is not a cluster: give local:N with N from 1 to 256, or a " \
           "scheduler's address (tcp://HOST:PORT or HOST:PORT)" in line
    assert not db.exists()


def test_cluster_addresses_are_read_as_dask_reads_them():
    assert cluster.parse("local:3") == cluster.Spec("local:3", local_workers=3)
    assert cluster.parse("node1:8786").address == "tcp://node1:8786"
    assert cluster.parse("tls://10.0.0.1:8786").address == "tls://10.0.0.1:8786"
    assert cluster.parse("[::1]:8786").address == "tcp://[::1]:8786"


def test_without_dask_the_cluster_option_says_how_to_install_it(labctl, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "distributed.py").write_text("raise ModuleNotFoundError(\"No module named 'distributed'\", "
                                            "name='distributed')\n")
    result = labctl("sweep", write(tmp_path, SMALL), "--db", str(tmp_path / "r.db"), "--cluster",
                    "local:2", env={"PYTHONPATH": str(blocked)})
    line = one_line(result, 2)
    assert line == "labctl: --cluster needs Dask distributed, which is not installed here: " \
                   "pip install 'labctl[dist]'"


@pytest.mark.parametrize("how, resume_on", [(signal.SIGKILL, ["--cluster", "local:2"]), (signal.SIGINT, [])],
                         ids=["kill -9, resumed on the cluster", "Ctrl-C, resumed here"])
def test_a_sweep_on_a_cluster_interrupted_resumes_there_or_here(labctl, tmp_path, how, resume_on):
    db = str(tmp_path / "r.db")
    process = start_sweep(["sweep", write(tmp_path, LONG), "--db", db, "--cluster", "local:2"])
    wait_for_samples(db, 4, process, limit=180)
    # The sweep's own processes (the cluster's workers, the points' workers under them), by pid:
    # other sweeps may run on this machine.
    tree = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(how)
    _, err = process.communicate(timeout=60)
    assert process.returncode == (130 if how == signal.SIGINT else -signal.SIGKILL), err
    if how == signal.SIGINT:
        assert "--resume 1" in err
    # The cluster's worker processes end with the CLI, and the points' workers with them.
    _, alive = psutil.wait_procs(tree, timeout=20)
    assert not alive, [p.cmdline() for p in alive]
    with Store(db) as store:
        assert store.run(1).status == "interrupted"
        stored = store.run(1).samples
    assert 4 <= stored < 24
    resumed = labctl("sweep", "--resume", "1", "--db", db, *resume_on, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({stored} samples already stored)" in resumed.stdout
    counts = sample_counts(db)
    assert len(counts) == 8 and all(repeats == [0, 1, 2] for repeats in counts.values())
    with Store(db) as store:
        assert store.run(1).status == "finished"
