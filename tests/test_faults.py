"""Faults a sweep must survive: a worker killed with SIGKILL, a worker that allocates until its
memory limit (rlimit_mb) stops it, a store that is read-only, a disk that fills up, a damaged or
foreign store file. Each leaves the store consistent and the run resumable, and says what
happened in one line, with no traceback. (Interrupting the CLI itself and two sweeps on one store
are in test_sweep.py.)"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from labctl.store import Store

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


def test_killed_and_starved_workers_fail_their_points_and_the_sweep_goes_on(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    result = labctl("sweep", write(tmp_path, FAULTS), "--db", db)
    no_traceback(result)
    assert result.returncode == 1  # some points failed
    with Store(db) as store:
        points = store.points(1)
    by_fault = {(p.kernel, p.env.get("LABCTL_FAULT")): p for p in points}
    starved = by_fault[("skynet", "allocate")]
    assert (starved.status, starved.failure_kind) == ("failed", "memory")
    assert "exceeded rlimit_mb=300" in starved.failure
    killed = by_fault[("ping_pong", "sigkill")]
    assert (killed.status, killed.failure_kind) == ("failed", "crash")
    assert "killed by SIGKILL" in killed.failure
    assert killed.samples_done == 1  # the sample before the kill is kept
    healthy = by_fault[("ping_pong", None)]
    assert (healthy.status, healthy.samples_done, healthy.rlimit_mb) == ("done", 2, 2000)
    for line in ("exceeded rlimit_mb=300", "killed by SIGKILL"):
        assert line in result.stdout + result.stderr
    consistent(db).close()


def test_a_worker_that_allocates_without_a_memory_limit_is_refused(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    text = FAULTS.replace("rlimit_mb = 300\n", "")
    result = labctl("sweep", write(tmp_path, text), "--db", db)
    no_traceback(result)
    with Store(db) as store:
        starved = next(p for p in store.points(1) if p.env.get("LABCTL_FAULT") == "allocate")
    assert starved.status == "failed" and "needs rlimit_mb" in starved.failure


@pytest.mark.parametrize("bad", ["rlimit_mb = 0", "rlimit_mb = -5", 'rlimit_mb = "lots"', "rlimit_mb = 1.5"])
def test_a_bad_memory_limit_is_refused_naming_it(labctl, tmp_path, bad):
    text = FAULTS.replace("rlimit_mb = 300", bad)
    result = labctl("plan", write(tmp_path, text))
    no_traceback(result)
    assert result.returncode == 2 and "rlimit_mb" in result.stderr


def _limit_file_size(limit: int):
    def apply() -> None:
        # Ignored, SIGXFSZ no longer kills the process: write() fails with EFBIG instead.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def _sweep_in(db: str, experiment: str, preexec=None):
    return subprocess.run([sys.executable, "-P", "-m", "labctl", "sweep", experiment, "--db", db],
                          capture_output=True, text=True, timeout=300, preexec_fn=preexec)


def _resume_and_check(labctl, db: str) -> None:
    with consistent(db) as connection:
        stored_before = connection.execute("SELECT point_id, repeat, recorded_at FROM samples").fetchall()
    assert stored_before, "the sweep should have stored some samples before the disk filled"
    listing = labctl("runs", "--db", db)
    assert "interrupted" in listing.stdout
    resumed = labctl("sweep", "--resume", "1", "--db", db)
    assert resumed.returncode == 0, resumed.stderr
    connection = consistent(db)
    rows = connection.execute("SELECT point_id, repeat, recorded_at FROM samples").fetchall()
    assert len(rows) == 40 and len({(p, r) for p, r, _ in rows}) == 40  # none missing, none twice
    assert set(stored_before) <= set(rows)  # what was stored before is kept as it was
    connection.close()


def test_a_full_disk_stops_the_sweep_with_a_clear_error_and_the_run_resumes(labctl, tmp_path):
    # The file-size limit stands in for a full disk: SQLite sees a write fail the same way.
    db = str(tmp_path / "r.db")
    result = _sweep_in(db, write(tmp_path, MANY_SAMPLES), _limit_file_size(100_000))
    no_traceback(result)
    assert result.returncode == 1
    assert "results store: disk I/O error (cannot write: the disk may be full" in result.stderr
    _resume_and_check(labctl, db)


def test_a_sweep_on_a_tiny_filesystem_stops_cleanly_and_resumes_elsewhere(labctl, tmp_path):
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(small)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)")
    try:
        result = _sweep_in(str(small / "r.db"), write(tmp_path, MANY_SAMPLES))
        no_traceback(result)
        assert result.returncode == 1
        assert "results store: database or disk is full (cannot write" in result.stderr
        for name in os.listdir(small):
            shutil.copy(small / name, tmp_path / name)
    finally:
        subprocess.run(["umount", str(small)], check=True)
    _resume_and_check(labctl, str(tmp_path / "r.db"))


def test_a_read_only_store_is_read_but_never_written(labctl, tmp_path):
    db = tmp_path / "r.db"
    experiment = write(tmp_path, MANY_SAMPLES.replace("repeats = 5", "repeats = 1"))
    assert labctl("sweep", experiment, "--db", str(db)).returncode == 0
    if os.geteuid() == 0:
        # root writes through file modes; the immutable attribute stops it.
        if subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode != 0:
            pytest.skip("running as root, and chattr +i is not available to make the file read-only")
        undo = ["chattr", "-i", str(db)]
    else:
        db.chmod(0o444)
        undo = ["chmod", "0644", str(db)]
    before = sha256(db)
    try:
        swept = labctl("sweep", experiment, "--db", str(db))
        resumed = labctl("sweep", "--resume", "1", "--retry-failed", "--db", str(db))
        shown = labctl("show", "latest", "--db", str(db))
    finally:
        subprocess.run(undo, check=True)
    for result in (swept, resumed):
        no_traceback(result)
        assert result.returncode == 1
        assert "results store: attempt to write a readonly database (the store file or its folder " \
               "is not writable)" in result.stderr
    assert shown.returncode == 0 and "ping_pong" in shown.stdout
    assert sha256(db) == before


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "pages overwritten":
        data[20_000:24_000] = bytes(range(256)) * 15 + bytes(160)
    elif how == "truncated":
        data = data[:30_000]
    elif how == "header only":
        data = data[:100]
    elif how == "random bytes":
        data = bytearray(os.urandom(len(data)))
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how, says", [
    ("pages overwritten", "database disk image is malformed"),
    ("truncated", "a damaged SQLite file"),
    ("header only", "a damaged SQLite file"),
    ("random bytes", "not an SQLite database"),
])
def test_a_damaged_store_is_refused_by_every_command_and_left_untouched(labctl, tmp_path, how, says):
    db = tmp_path / "r.db"
    experiment = write(tmp_path, MANY_SAMPLES.replace("repeats = 5", "repeats = 1"))
    assert labctl("sweep", experiment, "--db", str(db)).returncode == 0
    _damage(db, how)
    before = sha256(db)
    for command in (["runs"], ["show", "latest"], ["export", "1", "--format", "csv"], ["sweep", experiment],
                    ["sweep", "--resume", "1"]):
        result = labctl(*command, "--db", str(db))
        no_traceback(result)
        assert result.returncode != 0, command
        errors = [line for line in result.stderr.splitlines() if not line.startswith("warning")]
        assert len(errors) == 1 and says in errors[0], (command, result.stderr)
    assert sha256(db) == before


def test_a_foreign_file_or_a_folder_given_as_the_store_is_refused(labctl, tmp_path):
    experiment = write(tmp_path, MANY_SAMPLES)
    foreign = tmp_path / "other.db"
    connection = sqlite3.connect(foreign)
    connection.execute("CREATE TABLE notes (text TEXT)")
    connection.execute("INSERT INTO notes VALUES ('keep me')")
    connection.commit()
    connection.close()
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    for path, says in ((foreign, "not a labctl store"), (text, "not an SQLite database"),
                       (tmp_path, "")):
        before = sha256(path) if path.is_file() else None
        result = labctl("sweep", experiment, "--db", str(path))
        no_traceback(result)
        assert result.returncode != 0 and says in result.stderr
        if before is not None:
            assert sha256(path) == before
