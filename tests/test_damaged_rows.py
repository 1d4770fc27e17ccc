"""What a store holds is read back as strictly as a file: a row changed outside labctl (a sample's
counts, a point's env, params, cpus or repeats, a run's context) is refused in one line naming the
store, the row and the column, by every command that reads it (found by introspecting the
command group, so a new command is covered once it is listed here), never a traceback, and never
a resume that runs what no file or command line could ask for (10^9 repeats)."""

from __future__ import annotations

import importlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from test_faults import labctl_here

from labctl import cli

TINY = ('name = "tiny"\nrepeats = 2\nwarmup = 0\n[[grid]]\nkernel = "skynet"\n'
        'params = { leaves = 100 }\naxes = { dispatcher = ["one_thread", "thread_pool"] }\n')

# Every command that takes --db, with how it is made to read run 1 ("OUT" is a fresh path) and
# the tables whose damage it must refuse (publish shows a run whose samples it cannot read
# without its medians, and says why on the run's page; a resume reads no samples).
READERS = {
    "runs": (["runs"], {"runs"}),
    "show": (["show", "1"], {"runs", "points", "samples"}),
    "fingerprint": (["fingerprint", "1"], {"samples"}),
    "report": (["report", "1", "--output", "OUT"], {"runs", "points", "samples"}),
    "export": (["export", "1", "--format", "json"], {"samples"}),
    "compare": (["compare", "1", "1"], {"runs", "points", "samples"}),
    "publish": (["publish", "--output", "OUT"], {"runs", "points"}),
    "sweep": (["sweep", "--resume", "1"], {"runs", "points"}),
    "gate": (["gate", "--run", "1"], {"runs"}),
}
NOT_READING = {
    "experiments": "lists the shipped files; --db only estimates their time from the store's history",
    "plan": "plans a file; --db only estimates its time from the store's history",
    "history": "measures new runs (and shows a series, read by tests/test_history.py)",
    "calibrate": "measures new runs",
    "ab": "measures new runs",
}
# Each damage: the SQL that makes it, and the column the refusal names.
DAMAGES = {
    "sample counts not JSON": ("UPDATE samples SET counts = 'not json'", "counts"),
    "sample counts NaN": ("UPDATE samples SET counts = '{\"span_ns\": NaN}'", "counts"),
    "sample counts a list": ("UPDATE samples SET counts = '[1, 2]'", "counts"),
    "sample thread times text": ("UPDATE samples SET thread_cpu_ns = '[\"x\"]'", "thread_cpu_ns"),
    "point env not an object": ("UPDATE points SET env = '[]'", "env"),
    "point params truncated": ("UPDATE points SET params = '{\"leaves\": 1'", "params"),
    "point cpus of text": ("UPDATE points SET cpus = '[\"zero\"]'", "cpus"),
    "point repeats 10^9": ("UPDATE points SET repeats = 1000000000", "repeats"),
    "point timeout NaN": ("UPDATE points SET timeout_s = 'NaN'", "timeout_s"),
    "run context not JSON": ("UPDATE runs SET context = '{'", "context"),
}


def store_commands() -> list[str]:
    return [name for name in cli.COMMANDS
            if any(p.name == "db" for p in importlib.import_module(f"labctl.cli.commands.{name}").command.params)]


def test_every_command_that_takes_a_store_is_tried_or_says_why_not():
    assert not set(READERS) & set(NOT_READING)
    assert set(READERS) | set(NOT_READING) == set(store_commands())


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("damaged")
    (folder / "tiny.toml").write_text(TINY, encoding="utf-8")
    db = folder / "results.db"
    done = subprocess.run([sys.executable, "-P", "-m", "labctl", "sweep", str(folder / "tiny.toml"),
                           "--db", str(db)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as connection:  # as if interrupted: one point pending again
        connection.execute("DELETE FROM samples WHERE point_id = (SELECT MAX(id) FROM points)")
        connection.execute("UPDATE points SET status = 'pending' WHERE id = (SELECT MAX(id) FROM points)")
        connection.execute("UPDATE runs SET status = 'interrupted'")
    return db


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("command", list(READERS))
def test_a_damaged_row_is_refused_in_one_line_by_every_command_that_reads_it(capsys, monkeypatch, tmp_path,
                                                                             swept, command, damage):
    monkeypatch.chdir(tmp_path)
    shutil.copy(swept, tmp_path / "results.db")
    sql, column = DAMAGES[damage]
    with sqlite3.connect(tmp_path / "results.db") as connection:
        connection.execute(sql)
    args, reads = READERS[command]
    args = [str(tmp_path / "out") if arg == "OUT" else arg for arg in args]
    result = labctl_here(capsys, *args, "--db", "results.db")
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    if sql.split()[1] in reads:
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert lines[0].startswith("labctl: ") and "results.db: " in lines[0], lines[0]
        assert f"its {column} is damaged" in lines[0] and "changed outside labctl" in lines[0], lines[0]
    elif result.returncode:  # refused for what the damage leads to (gate: no counts), in one line
        assert len(lines) == 1 and lines[0].startswith("labctl: "), result.stderr


@pytest.mark.parametrize("command", list(READERS))
def test_an_empty_file_as_the_store_is_called_empty_by_every_command_that_reads_one(capsys, monkeypatch,
                                                                                   tmp_path, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results.db").write_bytes(b"")
    args = [str(tmp_path / "out") if arg == "OUT" else arg for arg in READERS[command][0]]
    result = labctl_here(capsys, *args, "--db", "results.db")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "results.db: an empty file, not a store" in lines[0], lines[0]
    assert (tmp_path / "results.db").read_bytes() == b""


def test_a_resume_refuses_a_pending_point_whose_stored_repeats_no_file_could_ask_for(capsys, monkeypatch,
                                                                                    tmp_path, swept):
    monkeypatch.chdir(tmp_path)
    shutil.copy(swept, tmp_path / "results.db")
    with sqlite3.connect(tmp_path / "results.db") as connection:
        connection.execute("UPDATE points SET repeats = 1000000000 WHERE status = 'pending'")
    result = labctl_here(capsys, "sweep", "--resume", "1", "--db", "results.db")
    [line] = result.stderr.strip().splitlines()
    assert result.returncode == 2 and "its repeats is damaged (found 1000000000)" in line, line


def test_a_resume_refuses_two_pending_points_made_one_by_an_edit(capsys, monkeypatch, tmp_path, swept):
    # A plan merges equal points, and a sweep finds a point's row by what makes it that point.
    monkeypatch.chdir(tmp_path)
    shutil.copy(swept, tmp_path / "results.db")
    with sqlite3.connect(tmp_path / "results.db") as connection:
        connection.execute("UPDATE points SET status = 'pending'")
        connection.execute("UPDATE points SET params = (SELECT params FROM points WHERE id = 1)")
    result = labctl_here(capsys, "sweep", "--resume", "1", "--db", "results.db")
    [line] = result.stderr.strip().splitlines()
    assert result.returncode == 2 and line.startswith("labctl: results.db: run 1: point 2 is point 1 again"), line
    assert "changed outside labctl" in line
