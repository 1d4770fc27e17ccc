"""Faults a sweep must survive: a worker killed with SIGKILL, a worker that allocates until its
memory limit (rlimit_mb) stops it, a store that is read-only, a disk that fills up, a damaged or
foreign store file. Each leaves the store consistent and the run resumable, and says what
happened in one line, with no traceback. (Interrupting the CLI itself and two sweeps on one store
are in test_sweep.py.)"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from labctl import cli
from labctl.store import Store
from labctl.vocabulary.point import Point

FAULTS = '''
name = "faults"
repeats = 2
warmup = 0
timeout_s = 60
order = "grid"
[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
rlimit_mb = 300
env = { LABCTL_FAULT = "allocate" }
[[grid]]
kernel = "ping_pong"
params = { messages = 2000 }
env = { LABCTL_FAULT = "sigkill" }
[[grid]]
kernel = "skynet"
params = { leaves = 1_000_000 }
rlimit_mb = 200
[[grid]]
kernel = "ping_pong"
params = { messages = 1000 }
rlimit_mb = 2000
'''

MANY_SAMPLES = '''
name = "many"
repeats = 5
warmup = 0
order = "grid"
[[grid]]
kernel = "ping_pong"
axes = { messages = [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000] }
'''


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return str(path)


def consistent(db: str) -> sqlite3.Connection:
    connection = sqlite3.connect(db)
    assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
    return connection


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def no_traceback(result) -> None:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout


def errors(result) -> list[str]:
    """The error lines on stderr (not the warnings about the machine, nor the progress bar)."""
    return [line for line in result.stderr.splitlines() if line.startswith("labctl:")]


def test_killed_and_starved_workers_fail_their_points_and_the_sweep_goes_on(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    result = labctl("sweep", write(tmp_path, FAULTS), "--db", db)
    no_traceback(result)
    assert result.returncode == 1  # some points failed
    assert "3 of 4 points failed" in result.stderr
    with Store(db) as store:
        points = store.points(1)
    by_fault = {(p.point.kernel, p.point.env.get("LABCTL_FAULT")): p for p in points}
    starved = by_fault[("skynet", "allocate")]
    assert (starved.status, starved.failure_kind) == ("failed", "memory")
    assert "exceeded rlimit_mb=300" in starved.failure
    killed = by_fault[("ping_pong", "sigkill")]
    assert (killed.status, killed.failure_kind) == ("failed", "crash")
    assert "killed by SIGKILL" in killed.failure
    assert killed.samples_done == 1  # the sample before the kill is kept
    # Native code out of memory: std::bad_alloc, on a runtime thread or the worker's own.
    native = by_fault[("skynet", None)]
    assert (native.status, native.failure_kind, native.point.rlimit_mb) == ("failed", "memory", 200)
    assert "exceeded rlimit_mb=200" in native.failure
    healthy = by_fault[("ping_pong", None)]
    assert (healthy.status, healthy.samples_done, healthy.point.rlimit_mb) == ("done", 2, 2000)
    for line in ("exceeded rlimit_mb=300", "killed by SIGKILL", "exceeded rlimit_mb=200"):
        assert line in result.stdout + result.stderr
    consistent(db).close()


def test_a_worker_that_allocates_without_a_memory_limit_is_refused(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    text = FAULTS.replace("rlimit_mb = 300\n", "")
    result = labctl("sweep", write(tmp_path, text), "--db", db)
    no_traceback(result)
    with Store(db) as store:
        starved = next(p for p in store.points(1) if p.point.env.get("LABCTL_FAULT") == "allocate")
    assert starved.status == "failed" and "needs rlimit_mb" in starved.failure


@pytest.mark.parametrize("bad", ["rlimit_mb = 0", "rlimit_mb = true"])
def test_a_bad_memory_limit_is_refused_naming_it(labctl, tmp_path, bad):
    # Every kind of bad value is in test_experiment.py; this is the command's side of it.
    text = FAULTS.replace("rlimit_mb = 300", bad)
    result = labctl("plan", write(tmp_path, text))
    no_traceback(result)
    [line] = errors(result)
    assert result.returncode == 2
    assert line.startswith(f"labctl: {tmp_path / 'exp.toml'}: grid[0].rlimit_mb: ")


# -- a full disk -----------------------------------------------------------------------------

def _limit_file_size(limit: int):
    def apply() -> None:
        # Ignored, SIGXFSZ no longer kills the process: write() fails with EFBIG instead.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def _sweep_in(db: str, experiment: str, preexec=None):
    return subprocess.run([sys.executable, "-P", "-m", "labctl", "sweep", experiment, "--db", db],
                          capture_output=True, text=True, timeout=300, preexec_fn=preexec)


def _stopped_cleanly(result, db: str, says: str) -> None:
    no_traceback(result)
    assert result.returncode == 1
    [line] = errors(result)
    assert line.startswith(f"labctl: {db}: cannot write to it ({says}): the disk may be full"), line
    assert f"finish it with `labctl sweep --resume 1 --db {db}`" in line


def _resume_and_check(labctl, db: str) -> None:
    with consistent(db) as connection:
        stored_before = connection.execute("SELECT point_id, repeat, recorded_at FROM samples").fetchall()
        status = connection.execute("SELECT status FROM runs").fetchall()
    assert stored_before, "the sweep should have stored some samples before the disk filled"
    # Marked so in the store when the disk still took that, and by `runs` in any case (its
    # process is gone).
    assert status in ([("interrupted",)], [("running",)])
    listing = labctl("runs", "--db", db)
    assert "interrupted" in listing.stdout
    resumed = labctl("sweep", "--resume", "1", "--db", db)
    assert resumed.returncode == 0, resumed.stderr
    connection = consistent(db)
    rows = connection.execute("SELECT point_id, repeat, recorded_at FROM samples").fetchall()
    assert len(rows) == 40 and len({(p, r) for p, r, _ in rows}) == 40  # none missing, none twice
    assert set(stored_before) <= set(rows)  # what was stored before is kept as it was
    assert connection.execute("SELECT status FROM runs").fetchall() == [("finished",)]
    connection.close()


def test_a_full_disk_stops_the_sweep_with_a_clear_error_and_the_run_resumes(labctl, tmp_path):
    # The file-size limit stands in for a full disk: SQLite sees a write fail the same way.
    db = str(tmp_path / "r.db")
    result = _sweep_in(db, write(tmp_path, MANY_SAMPLES), _limit_file_size(100_000))
    _stopped_cleanly(result, db, "disk I/O error")
    _resume_and_check(labctl, db)


def test_a_sweep_on_a_tiny_filesystem_stops_cleanly_and_resumes_elsewhere(labctl, tmp_path):
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(small)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)")
    try:
        db = str(small / "r.db")
        _stopped_cleanly(_sweep_in(db, write(tmp_path, MANY_SAMPLES)), db, "database or disk is full")
        for name in os.listdir(small):
            shutil.copy(small / name, tmp_path / name)
    finally:
        subprocess.run(["umount", str(small)], check=True)
    _resume_and_check(labctl, str(tmp_path / "r.db"))


# -- read-only stores ------------------------------------------------------------------------

@contextlib.contextmanager
def read_only(path: Path):
    """Makes a file or folder read-only for this process, root included."""
    if os.geteuid() == 0:
        # root writes through file modes; the immutable attribute stops it.
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("running as root, and chattr +i is not available to make a path read-only")
        undo = ["chattr", "-i", str(path)]
    else:
        mode = path.stat().st_mode & 0o777
        path.chmod(0o555 if path.is_dir() else 0o444)
        undo = ["chmod", oct(mode)[2:], str(path)]
    try:
        assert not os.access(path, os.W_OK)
        yield
    finally:
        subprocess.run(undo, check=True)


def test_a_read_only_store_is_read_but_never_written(labctl, tmp_path):
    db = tmp_path / "r.db"
    experiment = write(tmp_path, MANY_SAMPLES.replace("repeats = 5", "repeats = 2"))
    # Every worker dies after its first sample: the run has failed points for --retry-failed.
    assert labctl("sweep", experiment, "--db", str(db), env={"LABCTL_FAULT": "sigkill"}).returncode == 1
    before = sha256(db)
    with read_only(db):
        swept = labctl("sweep", experiment, "--db", str(db))
        resumed = labctl("sweep", "--resume", "1", "--retry-failed", "--db", str(db))
        shown = labctl("show", "latest", "--db", str(db))
    for result in (swept, resumed):
        no_traceback(result)
        assert result.returncode == 1
        assert errors(result) == [f"labctl: {db}: cannot write to it: the file or its folder is "
                                  "read-only (attempt to write a readonly database)"]
    assert shown.returncode == 0 and "ping_pong" in shown.stdout
    assert sha256(db) == before
    with Store(db) as store:
        assert [r.id for r in store.runs()] == [1]


def test_a_store_in_a_read_only_folder_is_refused_and_none_is_made_there(labctl, tmp_path):
    experiment = write(tmp_path, MANY_SAMPLES.replace("repeats = 5", "repeats = 1"))
    folder = tmp_path / "results"
    folder.mkdir()
    existing = folder / "old.db"
    assert labctl("sweep", experiment, "--db", str(existing)).returncode == 0
    before = sha256(existing)
    with read_only(folder):
        new = labctl("sweep", experiment, "--db", str(folder / "new.db"))
        # SQLite cannot make the -wal and -shm files a store in WAL mode needs beside it.
        old = labctl("sweep", experiment, "--db", str(existing))
        listed = labctl("runs", "--db", str(existing))
    no_traceback(new)
    assert new.returncode == 1  # README: a store that could not be written (read-only) exits 1
    assert errors(new) == [f"labctl: {folder / 'new.db'}: cannot create a store there (unable to "
                           "open database file): is its folder there and writable?"]
    for result in (old, listed):
        no_traceback(result)
        assert result.returncode == 1
        [line] = errors(result)
        assert line.startswith(f"labctl: {existing}: cannot open it (unable to open database file)")
        assert "old.db-wal and old.db-shm" in line
    assert sorted(os.listdir(folder)) == ["old.db"] and sha256(existing) == before


# -- damaged and foreign files ---------------------------------------------------------------

@pytest.fixture(scope="module")
def good_store(tmp_path_factory) -> tuple[Path, str]:
    """A store with one run of 8 samples, and its experiment file."""
    folder = tmp_path_factory.mktemp("good")
    experiment = write(folder, MANY_SAMPLES.replace("repeats = 5", "repeats = 1"))
    db = folder / "r.db"
    assert _sweep_in(str(db), experiment).returncode == 0
    return db, experiment


def _overwrite_table(data: bytearray, path: Path, table: str) -> None:
    """Garbles the cells of a table's root page, keeping the page's header."""
    connection = sqlite3.connect(path)
    [page] = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    size = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.close()
    start = (page - 1) * size
    data[start + 8:start + size] = (bytes(range(256)) * (size // 256 + 1))[:size - 8]


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how.endswith("overwritten"):
        _overwrite_table(data, path, how.split()[0])
    elif how == "truncated":
        data = data[:30_000]
    elif how == "header only":
        data = data[:100]
    elif how == "random bytes":
        data = bytearray(os.urandom(len(data)))
    elif how == "foreign SQLite":
        path.unlink()
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.execute("INSERT INTO notes VALUES ('keep me')")
        connection.commit()
        connection.close()
        return
    elif how == "text":
        data = bytearray(b"not a database\n" * 100)
    path.write_bytes(bytes(data))


def labctl_here(capsys, *args: str):
    """Runs the labctl command in this process (no interpreter to start, so many commands are
    cheap); an exception it does not turn into an error line fails the test with its traceback."""
    try:
        cli.main.main(list(args), prog_name="labctl", standalone_mode=False)
        code = 0
    except SystemExit as exit:
        code = exit.code
    except click.ClickException as error:
        error.show()
        code = error.exit_code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)


# A table that a write can miss (machines: a sweep wrote its run beside it) and one every reading
# command reads (samples): either way, every command refuses the file.
@pytest.mark.parametrize("how, says", [
    ("machines page overwritten", "a damaged SQLite file (quick_check: On tree page"),
    ("samples page overwritten", "a damaged SQLite file (quick_check: On tree page"),
    ("truncated", "a damaged SQLite file (database disk image is malformed); refusing to touch it"),
    ("header only", "a damaged SQLite file"),
    ("random bytes", "not a labctl store (not an SQLite database); refusing to touch it"),
    ("text", "not a labctl store (not an SQLite database); refusing to touch it"),
    ("foreign SQLite", "an SQLite database, but not a labctl store; refusing to touch it"),
])
def test_a_damaged_or_foreign_store_is_refused_by_every_command_and_left_untouched(
        labctl, capsys, tmp_path, good_store, how, says):
    db = tmp_path / "r.db"
    shutil.copy(good_store[0], db)
    _damage(db, how)
    before = sha256(db)
    # The real command once, then every command in this process.
    commands = [["sweep", good_store[1]], ["sweep", "--resume", "1"], ["runs"], ["show", "latest"],
                ["export", "1", "--format", "csv"], ["plan", good_store[1]]]
    results = [labctl("sweep", good_store[1], "--db", str(db))]
    results += [labctl_here(capsys, *command, "--db", str(db)) for command in commands]
    for command, result in zip([["sweep"]] + commands, results):
        no_traceback(result)
        if command[0] == "plan":  # a store only lends plan its estimate
            assert result.returncode == 0 and "estimate:" in result.stdout
            assert errors(result) == [] and says in result.stderr
            continue
        assert result.returncode == 2, (command, result.stderr)
        [line] = errors(result)
        assert line.startswith(f"labctl: {db}: ") and says in line, (command, line)
    assert sha256(db) == before
    assert os.listdir(tmp_path) == ["r.db"]  # no -wal or -shm left beside it


def test_a_folder_given_as_the_store_is_refused(labctl, capsys, tmp_path, good_store):
    results = [labctl("sweep", good_store[1], "--db", str(tmp_path))]
    results += [labctl_here(capsys, *command, "--db", str(tmp_path)) for command in
                (["runs"], ["show", "latest"], ["export", "1"], ["sweep", "--resume", "1"])]
    for result in results:
        no_traceback(result)
        assert result.returncode == 2
        assert result.stderr == f"labctl: {tmp_path}: a folder, not a store file\n"
    assert os.listdir(tmp_path) == []


def test_a_point_without_a_memory_limit_gets_the_default_one_which_kills_its_tree(monkeypatch):
    # The default is a share of the memory available: here made 200 MiB, which the worker's
    # 1 GiB of touched pages passes within a second.
    from labctl.run import runner

    monkeypatch.setattr(runner, "default_memory_mb", lambda: 200)
    point = Point("skynet", {"leaves": 100, "dispatcher": "one_thread"}, timeout_s=60,
                  env={"LABCTL_FAULT": "touch"})
    started = time.monotonic()
    with pytest.raises(runner.PointFailed) as failed:
        list(runner.run_point(point))
    assert failed.value.kind == "memory" and time.monotonic() - started < 30
    assert "past the default limit of 200 MiB" in str(failed.value) and "set rlimit_mb" in str(failed.value)
    held = int(str(failed.value).split("held ")[1].split(" MiB")[0])
    assert 200 < held < 400, held  # caught within a few of the worker's 16 MiB steps


@pytest.mark.parametrize("nodes, block", [(4000, 1), (400, 10), (4000, 50)])
def test_apsp_must_hold_at_least_each_blocks_row_and_column_and_the_matrix(nodes, block):
    # An agent per block, each listing the 2 (p - 1) blocks of its row and column (a pointer of 8
    # bytes and a slot of 4 each), p = nodes / block; and the 8-byte distances of the matrix.
    from labctl.catalogue import kernels

    p = nodes // block
    expected = (p * p * 2 * (p - 1) * 12 + 8 * nodes * nodes) / 2**20
    assert kernels.memory_mb("savina_apsp", {"nodes": nodes, "block_size": block}) == pytest.approx(expected)
    assert kernels.memory_mb("savina_quicksort", {"values": 2**20}) == 8
    assert kernels.memory_mb("skynet", {"leaves": 10**6}) == 0  # it cannot say: never refused by it


def test_the_memory_a_kernel_says_it_needs_grows_no_faster_than_what_its_runs_hold(tmp_path, labctl):
    # A lower bound: from a small point to a large one of the same kernel, the resident peak
    # grows by at least what the bound grows by (the worker's own memory, the same in both,
    # cancels). apsp's bound, a few MiB at a size that runs in seconds, is held to its formula
    # above instead: a few MiB are within what two workers' peaks differ by.
    sizes = {"savina_quicksort": ("values", 200_000, 2_000_000), "savina_uct": ("nodes", 20_000, 200_000),
             "chat": ("turns", 16, 32_768)}
    fixed = {"savina_quicksort": "", "savina_uct": "",
             "chat": "clients = 64, directories = 2, iterations = 4, compute = 100, post = 0, leave = 0, "
                     "invite = 0, compute_repeats = 1, "}
    grids = "".join(f'[[grid]]\nkernel = "{kernel}"\nparams = {{ {fixed[kernel]}dispatcher = "one_thread" }}\n'
                    f'axes = {{ {name} = [{small}, {large}] }}\n' for kernel, (name, small, large) in sizes.items())
    (tmp_path / "m.toml").write_text('name = "m"\nrepeats = 1\nwarmup = 0\ntimeout_s = 120\n' + grids)
    assert labctl("sweep", str(tmp_path / "m.toml"), "--db", str(tmp_path / "m.db")).returncode == 0
    from labctl import results
    from labctl.catalogue import kernels

    samples = results.load(tmp_path / "m.db")
    for kernel, (name, small, large) in sizes.items():
        mine = samples[samples["kernel"] == kernel]
        peaks, bounds = {}, {}
        for _, sample in mine.iterrows():
            params = {n: sample[n] for n in results.param_columns(mine) if not pd_isna(sample[n])}
            peaks[sample[name]] = sample["peak_rss_kb"] / 1024
            bounds[sample[name]] = kernels.memory_mb(kernel, params)
        assert 0 < bounds[large] - bounds[small] <= peaks[large] - peaks[small], (kernel, bounds, peaks)


def pd_isna(value) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


@pytest.mark.parametrize("rlimit_mb, words", [(None, "more than the default limit of 1,024 MiB"),
                                              (2048, "more than its rlimit_mb of 2,048 MiB")])
def test_a_point_that_must_hold_more_than_its_limit_is_refused_before_its_worker_starts(monkeypatch,
                                                                                       rlimit_mb, words):
    from labctl.run import runner

    monkeypatch.setattr(runner, "default_memory_mb", lambda: 1024)
    monkeypatch.setattr(runner.subprocess, "Popen", lambda *args, **kwargs: pytest.fail("a worker started"))
    point = Point("savina_apsp", {"nodes": 4000, "block_size": 1, "dispatcher": "one_thread"},
                  timeout_s=60, rlimit_mb=rlimit_mb)
    with pytest.raises(runner.PointFailed) as failed:
        list(runner.run_point(point))
    assert failed.value.kind == "memory"
    assert "savina_apsp: needs at least 1,464," in str(failed.value) and words in str(failed.value)


def test_an_older_commits_extension_without_memory_estimates_says_none(monkeypatch):
    # labctl history, bisect and ab load commits' extensions built before kernels could say what
    # they need: such a point is run (and held to its limit as it runs), never failed for it.
    from types import SimpleNamespace

    from labctl.catalogue import kernels, native

    kernels.get("savina_apsp")  # the catalogue, read from this build before the older one stands in
    monkeypatch.setattr(native, "_extension", lambda: SimpleNamespace())
    assert kernels.memory_mb("savina_apsp", {"nodes": 4000, "block_size": 1}) == 0


def test_plan_says_which_points_will_fail_before_they_run_and_leaves_them_out_of_its_estimate(labctl, tmp_path):
    from labctl.plan import experiment
    from labctl.run import runner

    small = '[[grid]]\nkernel = "skynet"\nparams = { leaves = 1000 }\n'
    big = ('[[grid]]\nkernel = "savina_apsp"\nrlimit_mb = 4096\n'
           'params = { dispatcher = "one_thread", nodes = 4000, block_size = 1 }\n')
    (tmp_path / "big.toml").write_text('name = "big"\n' + small + big)
    planned = labctl("plan", str(tmp_path / "big.toml"), "--db", str(tmp_path / "none.db"))
    assert planned.returncode == 0, planned.stderr
    text = " ".join(planned.stdout.split())
    assert text.count("will fail before it runs: savina_apsp: needs at least") == 1
    assert "more than its rlimit_mb of 4,096 MiB" in text
    with_it = runner.estimate(experiment.parse('name = "big"\n' + small + big, "big.toml"))
    without = runner.estimate(experiment.parse('name = "big"\n' + small, "big.toml"))
    assert with_it.seconds == without.seconds  # not the hours a 4,000-node search would take
