"""Every path a command writes, found by introspecting the command group (not listed by hand), tried
against what must never be lost: the store and its -wal and -shm, links to it, the user's files and
folders, a FIFO, a socket, a character device, a missing folder, the working folder, with and
without --force. A new command or path option fails test_every_path_option_is_classified until it
is classified here, and from then on is tried against all of them."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import click
import pytest
from test_faults import labctl_here

from labctl import cli
from labctl.plan import experiment
from labctl.read import gate
from labctl.read.report import SLUG_LENGTH, slug
from labctl.store import Store
from labctl.vocabulary import files
from labctl.vocabulary.sample import Sample

WRITES_FILE = "writes a file"  # replaced only when a regular file, and only with --force
WRITES_FOLDER = "writes a folder"  # a report folder: replaced only when it holds what labctl wrote
READS = "reads"  # an input: read, never written (item 2 of issue 31 reads it safely)
STORE = "the store"  # read, and appended to by sweep and gate: never an output
CACHE = "a build cache"  # builds added under it, never replaced (tests/test_history.py)

# Every path-valued parameter of every command, by (command, parameter name). A parameter that
# is found and is not here fails the test below: classify it, and a writing one gets its
# invocation in WRITERS.
CLASSIFIED = {
    **{(name, "db"): STORE for name in cli.COMMANDS if name not in ("kernels", "run", "bisect")},
    ("compare", "db_b"): READS,
    ("plan", "file"): READS,
    ("sweep", "file"): READS,
    ("gate", "file"): READS,
    ("compare", "output"): WRITES_FILE,
    ("export", "output"): WRITES_FILE,
    ("gate", "baseline"): WRITES_FILE,  # written with --update, read otherwise
    ("report", "output"): WRITES_FOLDER,
    ("report", "out"): WRITES_FOLDER,  # the former name of --output
    ("publish", "output"): WRITES_FOLDER,
    ("history", "file"): READS,
    ("history", "repo"): READS,  # a repository: its commits are read, a worktree added beside them
    ("history", "cache"): CACHE,
    ("bisect", "repo"): READS,
    ("bisect", "cache"): CACHE,
    ("calibrate", "file"): READS,
    ("ab", "file"): READS,
    ("ab", "repo"): READS,
    ("ab", "cache"): CACHE,
}
# How each writing option is made to write: the command line before the option (run 1 is a swept
# run of TINY, run 2 a made-up run of GATE with instruction counts).
WRITERS = {
    ("compare", "output"): ["compare", "1", "1"],
    ("export", "output"): ["export", "1", "--format", "csv"],
    ("gate", "baseline"): ["gate", "--run", "2", "--update"],
    ("report", "output"): ["report", "1"],
    ("report", "out"): ["report", "1"],
    ("publish", "output"): ["publish"],
}
# What a folder option's folder holds once written.
FOLDER_HOLDS = {"report": "report.md", "publish": "index.html"}
# What names a parameter as a path, besides a click.Path type.
PATH_NAME = re.compile(r"(^|_)(db|file|path|output|out|baseline|folder|dir|directory)(_|$)")

TINY = 'name = "tiny"\nrepeats = 1\nwarmup = 0\n[[grid]]\nkernel = "skynet"\nparams = { leaves = 100 }\n'
GATE = ('name = "g"\nmeasure = "instructions"\nrepeats = 1\nwarmup = 0\norder = "grid"\n'
        '[[grid]]\nkernel = "skynet"\nparams = { leaves = 100, dispatcher = "one_thread" }\n')
CONTEXT = {"build": {"compiler": "GNU 12", "flags": "-O3"}, "libc": "glibc 2.36"}


def path_params() -> dict[tuple[str, str], click.Parameter]:
    """Every path-valued parameter of every command of the group, found by introspection."""
    found = {}
    for name in cli.COMMANDS:
        command = importlib.import_module(f"labctl.cli.commands.{name}").command
        for param in command.params:
            if isinstance(param.type, click.Path) or PATH_NAME.search(param.name or ""):
                found[(name, param.name)] = param
    return found


def flag(param: click.Parameter) -> str:
    """The option's long name, as a user types it and an error names it."""
    return next(opt for opt in param.opts if opt.startswith("--"))


def writers() -> list[tuple[str, str]]:
    return sorted(key for key, kind in CLASSIFIED.items() if kind in (WRITES_FILE, WRITES_FOLDER))


def test_every_path_option_is_classified():
    found = path_params()
    unclassified = sorted(set(found) - set(CLASSIFIED))
    assert not unclassified, (f"path options nobody classified: {unclassified}; add each to CLASSIFIED "
                              "(and a writing one to WRITERS) in tests/test_outputs.py")
    assert not sorted(set(CLASSIFIED) - set(found)), "CLASSIFIED names options that are gone"
    assert sorted(WRITERS) == writers()
    for key in writers():  # a writing option takes --force where it replaces files
        command = importlib.import_module(f"labctl.cli.commands.{key[0]}").command
        assert CLASSIFIED[key] == WRITES_FOLDER or any(p.name == "force" for p in command.params), key


def fake_gate_run(db: Path, source: str = "g.toml", name: str = "g") -> int:
    """A run of GATE whose point counted 1000 instructions, as if swept, from `source`."""
    plan = experiment.parse(GATE.replace('"g"', json.dumps(name)), source)
    with Store(db) as store:
        run = store.create_run(plan, "labctl sweep g.toml", {"hostname": "h"}, CONTEXT, [])
        for point in store.points(run):
            store.add_sample(point.id, 0, Sample(
                kernel=point.point.kernel, params=point.point.params, index=0, warmup=False, elapsed_ns=10,
                messages_processed=1, answer="a", expected="a",
                counts={"instructions": 1000}))
            store.finish_point(point.id)
        store.end_run(run, "finished")
    return run


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store with run 1, a sweep of TINY, and run 2, a made-up GATE run with counts."""
    folder = tmp_path_factory.mktemp("outputs")
    (folder / "tiny.toml").write_text(TINY, encoding="utf-8")
    db = folder / "results.db"
    done = subprocess.run([sys.executable, "-P", "-m", "labctl", "sweep", str(folder / "tiny.toml"),
                           "--db", str(db)], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert fake_gate_run(db) == 2
    return db


def snapshot(folder: Path) -> dict[str, tuple]:
    """Everything under `folder` as it stands: each entry's type, and a regular file's size and
    hash, a link's target; read without following a link or opening a FIFO."""
    seen = {}
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = Path(root) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                seen[str(path.relative_to(folder))] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
            elif stat.S_ISLNK(mode):
                seen[str(path.relative_to(folder))] = ("link", os.readlink(path))
            else:
                seen[str(path.relative_to(folder))] = (stat.S_IFMT(mode),)
    return seen


# Each target: how to make it in the working folder (returns the path to give), and what a
# file option and a folder option must answer, with and without --force: (exit code, words).
def _store(here: Path) -> str:
    return "results.db"


def _wal(here: Path) -> str:
    return "results.db-wal"


def _shm(here: Path) -> str:
    return "results.db-shm"


def _symlink_to_store(here: Path) -> str:
    os.symlink("results.db", here / "link.db")
    return "link.db"


def _hard_link_to_store(here: Path) -> str:
    os.link(here / "results.db", here / "hard.db")
    return "hard.db"


def _other_store(here: Path) -> str:
    shutil.copy(here / "results.db", here / "other.db")  # a store, but not the one --db names
    return "other.db"


def _other_store_wal(here: Path) -> str:
    _other_store(here)
    (here / "other.db-wal").write_bytes(b"\x37\x7f\x06\x82" + bytes(28))  # as SQLite begins one
    return "other.db-wal"


def _user_file(here: Path) -> str:
    (here / "mine.txt").write_bytes(b"the user's own bytes\n")
    return "mine.txt"


def _symlink_to_user_file(here: Path) -> str:
    (here / "mine.txt").write_bytes(b"the user's own bytes\n")
    os.symlink("mine.txt", here / "link.txt")
    return "link.txt"


def _dangling_symlink(here: Path) -> str:
    os.symlink("nowhere.txt", here / "link.txt")
    return "link.txt"


def _user_folder(here: Path) -> str:
    (here / "thesis").mkdir()
    (here / "thesis" / "thesis.tex").write_bytes(b"keep me\n")
    return "thesis"


def _symlink_to_user_folder(here: Path) -> str:
    _user_folder(here)
    os.symlink("thesis", here / "link")
    return "link"


def _fifo(here: Path) -> str:
    os.mkfifo(here / "pipe")
    return "pipe"


def _socket(here: Path) -> str:
    listening = socket.socket(socket.AF_UNIX)
    listening.bind("sock")  # relative: a socket's path is bounded to 108 bytes
    listening.close()
    return "sock"


def _char_device(here: Path) -> str:
    """A character device: as root, a node of our own (1, 3: what /dev/null is), so that a
    regression replaces that one and never the system's /dev/null (found so: a mutant of
    check_target did, as root); as anyone else, /dev/null itself, whose folder they cannot write."""
    if os.geteuid() != 0:
        return "/dev/null"
    try:
        os.mknod(here / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as error:
        pytest.skip(f"cannot make a character device here ({error.strerror})")
    return "null"


def _missing_folder(here: Path) -> str:
    return "no/such/folder/out"


def _working_folder(here: Path) -> str:
    return "."


def _long_name(here: Path) -> str:
    return "x" * 300


STORE_WORDS = (2, "that is the store")
TARGETS = {  # name: (make, file option's answer, folder option's answer)
    "store": (_store, STORE_WORDS, STORE_WORDS),
    "store -wal": (_wal, STORE_WORDS, STORE_WORDS),
    "store -shm": (_shm, STORE_WORDS, STORE_WORDS),
    "symlink to the store": (_symlink_to_store, STORE_WORDS, STORE_WORDS),
    "hard link to the store": (_hard_link_to_store, STORE_WORDS, STORE_WORDS),
    "another store": (_other_store, (2, "an SQLite database"), (2, "a file, not a folder")),
    "another store's -wal": (_other_store_wal, (2, "the wal file of the SQLite database other.db"),
                             (2, "a file, not a folder")),
    "user's file": (_user_file, (2, "the file exists"), (2, "a file, not a folder")),
    "symlink to a user's file": (_symlink_to_user_file, (2, "a symbolic link"), (2, "a symbolic link")),
    "dangling symlink": (_dangling_symlink, (2, "a symbolic link"), (2, "a symbolic link")),
    "user's folder": (_user_folder, (2, "a folder"), (2, "a folder that holds no")),
    "symlink to a user's folder": (_symlink_to_user_folder, (2, "a symbolic link"), (2, "a symbolic link")),
    "FIFO": (_fifo, (2, "a FIFO"), (2, "a FIFO")),
    "socket": (_socket, (2, "a socket"), (2, "a socket")),
    "character device": (_char_device, (2, "a character device"), (2, "a character device")),
    "missing folder": (_missing_folder, (1, "no folder no/such/folder"), (0, "")),
    "working folder": (_working_folder, (2, "a folder"), (2, "the folder you are in")),
    "name too long": (_long_name, (2, "a name too long"), (2, "a name too long")),
}
# With --force, a file option replaces the user's regular file (asked for) and nothing else.
FORCED = {"user's file": (0, "")}


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("option, force", [
    (option, force) for option in writers() for force in (False, True)
    if not force or CLASSIFIED[option] == WRITES_FILE  # a report folder has no --force
], ids=lambda value: "-".join(value) if isinstance(value, tuple) else "force" if value else "")
def test_a_writing_option_never_loses_what_it_was_pointed_at(capsys, monkeypatch, tmp_path, store,
                                                             option, target, force):
    kind = CLASSIFIED[option]
    monkeypatch.chdir(tmp_path)
    shutil.copy(store, tmp_path / "results.db")
    make, as_file, as_folder = TARGETS[target]
    path = make(tmp_path)
    code, words = (FORCED.get(target) if force else None) or (as_file if kind == WRITES_FILE else as_folder)
    name = flag(path_params()[option])
    before = snapshot(tmp_path)
    result = labctl_here(capsys, *WRITERS[option], "--db", "results.db", name, path,
                         *(["--force"] if force else []))
    assert "Traceback" not in result.stderr
    assert result.returncode == code, (result.stdout, result.stderr)
    if code == 0:
        written = tmp_path / path
        assert (written / FOLDER_HOLDS[option[0]]).is_file() if kind == WRITES_FOLDER else written.is_file()
        assert not written.is_symlink()
        return
    [line] = result.stderr.splitlines()
    assert line.startswith(f"labctl: {name} {path}") and words in line, line
    assert snapshot(tmp_path) == before
    if target == "character device":
        assert stat.S_ISCHR(os.lstat(path).st_mode)


# -- the gate's baseline -------------------------------------------------------------------------

def test_update_replaces_a_baseline_labctl_wrote_and_nothing_else_without_force(capsys, monkeypatch,
                                                                                  tmp_path, store):
    monkeypatch.chdir(tmp_path)
    shutil.copy(store, tmp_path / "results.db")
    (tmp_path / "g.toml").write_text(GATE, encoding="utf-8")
    run = fake_gate_run(tmp_path / "results.db", str(tmp_path / "g.toml"))
    update = ["gate", "--db", "results.db", "--run", str(run), "--update"]
    beside = tmp_path / "g.baseline.json"
    # Beside a checkout's experiment, as CI's documented workflow: made, then refreshed, no --force.
    assert labctl_here(capsys, *update).returncode == 0
    first = json.loads(beside.read_text(encoding="utf-8"))
    assert first["experiment"] == "g" and first["points"][0]["instructions"] == 1000
    refreshed = labctl_here(capsys, *update)
    assert refreshed.returncode == 0 and "wrote the baseline" in refreshed.stdout
    # Another experiment's baseline, or a file that is not one, needs --force.
    other = {**first, "experiment": "other"}
    for text in (json.dumps(other), '{"version": 1, "points": []}', "my notes\n"):
        beside.write_text(text, encoding="utf-8")
        result = labctl_here(capsys, *update)
        assert result.returncode == 2 and result.stderr.startswith(
            f"labctl: --baseline {beside}: the file exists and is not a baseline labctl wrote of "
            "experiment 'g'; give another name, or --force")
        assert beside.read_text(encoding="utf-8") == text
    assert labctl_here(capsys, *update, "--force").returncode == 0
    assert json.loads(beside.read_text(encoding="utf-8"))["experiment"] == "g"


def test_update_never_writes_into_an_installed_package(capsys, monkeypatch, tmp_path, store):
    monkeypatch.chdir(tmp_path)
    shutil.copy(store, tmp_path / "results.db")
    shipped = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "labctl" / "experiments"
    shipped.mkdir(parents=True)
    (shipped / "g.toml").write_text(GATE, encoding="utf-8")
    run = fake_gate_run(tmp_path / "results.db", str(shipped / "g.toml"))
    before = snapshot(tmp_path)
    result = labctl_here(capsys, "gate", "--db", "results.db", "--run", str(run), "--update")
    [line] = result.stderr.splitlines()
    assert result.returncode == 2 and "inside the installed package; give --baseline FILE" in line
    assert snapshot(tmp_path) == before
    assert gate.installed(shipped / "g.baseline.json") and not gate.installed(tmp_path / "g.baseline.json")


# -- report folders ------------------------------------------------------------------------------

@pytest.fixture
def reported(capsys, monkeypatch, tmp_path, store) -> Path:
    """A report folder labctl wrote of run 1."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(store, tmp_path / "results.db")
    assert labctl_here(capsys, "report", "1", "--db", "results.db", "-o", "rep").returncode == 0
    return tmp_path / "rep"


def report_again(capsys, option: str = "--output") -> subprocess.CompletedProcess:
    return labctl_here(capsys, "report", "1", "--db", "results.db", option, "rep")


def test_the_marker_records_every_file_the_report_wrote_with_its_size_and_hash(reported):
    marker = json.loads((reported / files.REPORT_MARKER).read_text(encoding="utf-8"))
    on_disk = sorted(p.relative_to(reported).as_posix() for p in reported.rglob("*")
                     if p.is_file() and p.name != files.REPORT_MARKER)
    assert sorted(marker["files"]) == on_disk and "report.md" in on_disk
    for name, record in marker["files"].items():
        data = (reported / name).read_bytes()
        assert record == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_a_report_folder_as_labctl_wrote_it_is_replaced(capsys, reported):
    first = json.loads((reported / files.REPORT_MARKER).read_text(encoding="utf-8"))
    assert first["folders"] == ["figures"]
    gone = min(first["files"])
    (reported / gone).unlink()  # a file of the report the user deleted: replacing loses nothing
    assert report_again(capsys).returncode == 0
    again = json.loads((reported / files.REPORT_MARKER).read_text(encoding="utf-8"))
    assert (reported / gone).is_file() and again["written"] >= first["written"]


@pytest.mark.parametrize("change, named", [
    (lambda rep: (rep / "figures" / "mine.png").write_bytes(b"\x89PNG mine"), "figures/mine.png (added)"),
    (lambda rep: (rep / "figures" / "notes.txt").write_text("n"), "figures/notes.txt (added)"),
    (lambda rep: (rep / "report.md").write_text((rep / "report.md").read_text() + "my edit\n"),
     "report.md (changed)"),
    (lambda rep: (rep / "drafts").mkdir(), "drafts/ (added)"),
    (lambda rep: os.symlink("/etc/hostname", rep / "figures" / "x.svg"), "figures/x.svg (added)"),
], ids=["a png", "a text", "report.md edited", "a folder", "a link"])
def test_a_report_folder_with_a_file_added_or_changed_is_refused_untouched(capsys, reported, change, named):
    change(reported)
    before = snapshot(reported)
    for option in ("--output", "--out"):
        result = report_again(capsys, option)
        [line] = result.stderr.splitlines()
        assert result.returncode == 2 and line.startswith(f"labctl: {option} rep: changed or added"), line
        assert named in line
    assert snapshot(reported) == before


def test_an_old_marker_without_its_files_is_trusted_only_for_report_files(capsys, reported):
    marker = json.loads((reported / files.REPORT_MARKER).read_text(encoding="utf-8"))
    del marker["files"]
    (reported / files.REPORT_MARKER).write_text(json.dumps(marker), encoding="utf-8")
    (reported / "verdicts.json").unlink()  # which reports wrote from the same version on
    (reported / "notes.txt").write_text("mine\n", encoding="utf-8")
    before = snapshot(reported)
    result = report_again(capsys)
    [line] = result.stderr.splitlines()
    assert result.returncode == 2 and "notes.txt" in line and "marker predates" in line
    assert snapshot(reported) == before
    (reported / "notes.txt").unlink()
    assert report_again(capsys).returncode == 0
    assert "files" in json.loads((reported / files.REPORT_MARKER).read_text(encoding="utf-8"))


def test_a_long_experiment_name_gets_a_default_report_folder_the_system_takes(capsys, monkeypatch,
                                                                               tmp_path, store):
    name = "a-very-long-study-" * 20
    assert len(slug(name)) == SLUG_LENGTH + 9 and slug(name) != slug(name + "x")
    assert slug(name).startswith(name[:SLUG_LENGTH]) and slug("quickstart") == "quickstart"
    monkeypatch.chdir(tmp_path)
    shutil.copy(store, tmp_path / "results.db")
    run = fake_gate_run(tmp_path / "results.db", name=name)
    result = labctl_here(capsys, "report", str(run), "--db", "results.db")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "reports" / slug(name) / "report.md").is_file()
