"""Careless and hostile input, tried as a new user would: nothing the user did not ask labctl to
write is ever written over or deleted, every refusal is one line with the README's exit code,
and nothing from outside reaches a terminal or a report raw. (The external programs' family is
in test_runtimes.py, the stores' in test_faults.py.)"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import sigint_as_at_a_terminal

from labctl import results
from labctl.plan import experiment
from labctl.store import Store

SMALL = '''
name = "small"
repeats = 1
warmup = 0
[[grid]]
kernel = "skynet"
axes = { leaves = [100, 200] }
'''


def one_line(result, code: int, *words: str) -> str:
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("labctl: "), result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store with one run of the small experiment."""
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "small.toml").write_text(SMALL)
    db = folder / "results.db"
    done = subprocess.run([sys.executable, "-P", "-m", "labctl", "sweep", str(folder / "small.toml"),
                           "--db", str(db)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return db


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -- data loss ----------------------------------------------------------------------------------

def test_a_report_never_replaces_a_folder_labctl_did_not_mark(labctl, store, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    shutil.copy(store, project / "results.db")
    (project / "report.md").write_text("x\n")
    (project / "notes.txt").write_text("n\n")
    before = snapshot(project)
    result = labctl("report", "1", "--db", str(project / "results.db"), "--out", str(project))
    one_line(result, 2, f"--out {project}")
    assert snapshot(project) == before


def test_a_report_is_never_written_into_the_working_folder(labctl, store, tmp_path):
    before = snapshot(tmp_path)
    for out in (".", str(tmp_path)):
        result = subprocess.run([sys.executable, "-P", "-m", "labctl", "report", "1", "--db", str(store),
                                 "--out", out], capture_output=True, text=True, cwd=tmp_path)
        one_line(result, 2, "the folder you are in")
    assert snapshot(tmp_path) == before


def test_a_marked_report_holding_other_files_or_another_experiments_is_refused(labctl, store, tmp_path):
    out = tmp_path / "rep"
    assert labctl("report", "1", "--db", str(store), "--out", str(out)).returncode == 0
    marker = json.loads((out / ".labctl-report").read_text())
    assert marker["experiment"] == "small" and marker["run"] == 1
    assert labctl("report", "1", "--db", str(store), "--out", str(out)).returncode == 0  # its own: replaced
    (out / "figures" / "mine.txt").write_text("keep me")
    before = snapshot(out)
    one_line(labctl("report", "1", "--db", str(store), "--out", str(out)), 2, "figures/mine.txt")
    (out / "figures" / "mine.txt").unlink()
    # The mark of the report now there (its files' hashes are the second report's).
    marker = json.loads((out / ".labctl-report").read_text())
    (out / ".labctl-report").write_text(json.dumps({**marker, "experiment": "other"}))
    one_line(labctl("report", "1", "--db", str(store), "--out", str(out)), 2, "experiment 'other'")
    assert snapshot(out) != before and (out / "report.md").read_bytes() == before["report.md"]


def test_report_folders_follow_the_umask_and_names_never_share_a_folder(labctl, store, tmp_path):
    from labctl.read.report import slug

    assert slug("quickstart") == "quickstart"
    assert len({slug("a/b"), slug("a_b"), slug("a:b"), slug("a b")}) == 4
    out = tmp_path / "r"
    assert labctl("report", "1", "--db", str(store), "--out", str(out)).returncode == 0
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~mask
    assert stat.S_IMODE((out / "report.md").stat().st_mode) == 0o666 & ~mask


@pytest.mark.parametrize("command", [
    ["export", "1", "--format", "csv"], ["export", "1", "--format", "json"],
    ["export", "1", "--format", "parquet"], ["compare", "1", "1"],
])
def test_no_output_is_written_onto_the_store(labctl, store, tmp_path, command):
    db = tmp_path / "s.db"
    shutil.copy(store, db)
    before = db.read_bytes()
    for target in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        for force in ([], ["--force"]):
            result = labctl(*command, "--db", str(db), "-o", str(target), *force)
            one_line(result, 2, "that is the store", "never writes over a store")
    assert db.read_bytes() == before


def test_an_output_replaces_an_existing_file_only_when_forced(labctl, store, tmp_path):
    target = tmp_path / "mine.csv"
    target.write_text("precious\n")
    one_line(labctl("export", "1", "--db", str(store), "-o", str(target)), 2, "the file exists", "--force")
    assert target.read_text() == "precious\n"
    assert labctl("export", "1", "--db", str(store), "-o", str(target), "--force").returncode == 0
    assert target.read_text().startswith("run,")
    assert [p.name for p in tmp_path.iterdir()] == ["mine.csv"]  # no temporary left beside it
    one_line(labctl("compare", "1", "1", "--db", str(store), "-o", str(target)), 2, "the file exists")


def test_an_output_into_a_missing_or_read_only_folder_is_one_line(labctl, store, tmp_path):
    # README "Exit codes": an output that could not be written (a missing folder) is 1.
    one_line(labctl("export", "1", "--db", str(store), "-o", str(tmp_path / "no" / "x.csv")), 1,
             "no folder")
    locked = tmp_path / "locked"
    locked.mkdir()
    if subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode != 0:
        locked.chmod(0o555)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("cannot make a folder read-only here")
        one_line(labctl("export", "1", "--db", str(store), "-o", str(locked / "x.csv")), 1, "cannot write")
        one_line(labctl("report", "1", "--db", str(store), "--out", str(locked / "r")), 1, "cannot write")
    finally:
        subprocess.run(["chattr", "-i", str(locked)], capture_output=True)
        locked.chmod(0o755)


def test_ctrl_c_during_a_report_exits_130_and_leaves_nothing_half_written(store, tmp_path):
    out = tmp_path / "r"
    process = subprocess.Popen([sys.executable, "-P", "-m", "labctl", "report", "1", "--db", str(store),
                                "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=sigint_as_at_a_terminal)
    # Past start-up (which a loaded machine can stretch past a second or two: a signal during
    # Python's own imports ends it as Python does, -2), in the middle of the figures: once the
    # report's staging folder exists beside its folder.
    deadline = time.monotonic() + 60
    while not any(tmp_path.iterdir()) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip("the report was done before the signal")
    assert process.returncode == 130 and err.strip() == "labctl: interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no half report, no staging folder


@pytest.mark.parametrize("handler", ["", "except KeyboardInterrupt:\n        labctl.cli._exit('interrupted', 130)"],
                         ids=["uncaught", "the CLI's handler"])
def test_an_interruption_that_passed_through_exec_of_a_string_still_exits_130(tmp_path, handler):
    # CPython marks a KeyboardInterrupt raised inside exec() of a string as unhandled for good
    # and, under `python -m`, turns the exit into death by SIGINT (-2) even though labctl caught
    # it; scipy imports numpy so, lazily, in reports and sweeps. Here a command is interrupted in
    # such an exec, and the CLI's own handler (or none) takes it.
    (tmp_path / "interrupted_in_exec.py").write_text(
        "import labctl.cli, labctl.__main__ as entry\n"
        "def main():\n"
        "    try:\n"
        "        exec('raise KeyboardInterrupt')\n"
        f"    {handler or 'finally: pass'}\n"
        "labctl.cli.main = main\n"
        "entry.run()\n")
    done = subprocess.run([sys.executable, "-m", "interrupted_in_exec"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 130 and done.stderr.strip() == "labctl: interrupted", done


# -- one clear line, never a traceback ---------------------------------------------------------

@pytest.mark.parametrize("content, words", [
    (b'name = "caf\xe9"\n', ["not UTF-8 text"]),
    (b'name = "a"\n[[grid]]\nkernel = "skynet"\nenv = { "A=B" = "1" }\n', ["not an environment entry"]),
    (b'name = "a"\n[[grid]]\nkernel = "skynet"\nenv = { A = "x\\u0000y" }\n', ["not an environment entry"]),
    (b'name = "a"\n[[grid]]\nkernel = "skynet"\nparams = { leaves = "1e2" }\n',
     ["grid[0].params.leaves: must be an integer", "write it without quotes"]),
    (b'name = "a"\n[[grid]]\nkernel = "skynet"\nparams = { deregister = "yes" }\n',
     ["grid[0].params.deregister: must be true or false"]),
    (b'name = "a"\n[[grid]]\nkernel = "skynet"\naxes = { leaves = [1, 2, "3"] }\n',
     ["grid[0].axes.leaves[2]: must be an integer"]),
])
def test_a_bad_experiment_is_one_line(labctl, tmp_path, content, words):
    path = tmp_path / "e.toml"
    path.write_bytes(content)
    for command in ("plan", "sweep"):
        one_line(labctl(command, str(path), "--db", str(tmp_path / "r.db")), 2, *words)
    assert not (tmp_path / "r.db").exists()


def test_a_grid_of_millions_of_points_is_refused_at_once(labctl, tmp_path):
    axes = ", ".join(f'{name} = [{", ".join(str(v) for v in range(1, 41))}]'
                     for name in ("leaves", "branching", "threads", "spin_us", "max_demands_at_once"))
    path = tmp_path / "big.toml"
    path.write_text(f'name = "big"\n[[grid]]\nkernel = "skynet"\nparams = {{ dispatcher = "thread_pool" }}\n'
                    f"axes = {{ {axes} }}\n")
    started = time.monotonic()
    one_line(labctl("plan", str(path)), 2, "102400000 combinations", "at most 10000 points")
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("make", ["folder", "fifo", "device"])
def test_an_experiment_path_that_is_not_a_regular_file_is_refused(labctl, tmp_path, make):
    path = tmp_path / "e.toml"
    if make == "folder":
        path.mkdir()
    elif make == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    one_line(labctl("plan", str(path)), 2, "not a regular file")


def test_a_worker_that_dies_before_reading_its_request_fails_its_point_and_the_run_resumes(labctl, tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(SMALL + 'env = { PYTHONHOME = "/nonexistent" }\n')
    db = tmp_path / "r.db"
    result = labctl("sweep", str(path), "--db", str(db))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "worker exited with status 1 (" in result.stderr and "error" in result.stderr.lower()
    with Store(db) as store:
        assert {p.status for p in store.points(1)} == {"failed"}
        assert store.run(1).status == "finished"
    # The run keeps its points (their env too): resuming runs them again and fails them again,
    # saying why, with the run's record whole.
    resumed = labctl("sweep", "--resume", "1", "--retry-failed", "--db", str(db))
    assert resumed.returncode == 1 and "Traceback" not in resumed.stderr
    assert "worker exited with status 1 (" in resumed.stderr
    with Store(db) as store:
        assert store.run(1).status == "finished" and store.run(1).samples == 0


# -- nothing raw reaches a terminal or a report ------------------------------------------------

def test_control_characters_from_a_file_reach_neither_terminal_nor_report(labctl, tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(SMALL.replace('name = "small"', 'name = "evil\\u001b[2J\\u202e"\n'
                                  'description = "line\\nbreak\\u001b]0;title\\u0007"'))
    db = str(tmp_path / "r.db")
    outputs = [labctl("plan", str(path), "--db", db), labctl("sweep", str(path), "--db", db),
               labctl("runs", "--db", db), labctl("show", "1", "--db", db),
               labctl("report", "1", "--db", db, "--out", str(tmp_path / "rep")),
               labctl("export", "1", "--db", db, "--format", "csv"),
               labctl("export", "1", "--db", db, "--format", "json")]
    for result in outputs:
        assert result.returncode == 0, result.stderr
        for text in (result.stdout, result.stderr):
            assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "evil\\x1b[2J\\u202e" in outputs[2].stdout
    assert "evil\\x1b[2J\\u202e" in outputs[5].stdout  # the CSV on a terminal: escaped, as everywhere
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "\x1b" not in report and "\u202e" not in report and "evil\\x1b[2J\\u202e" in report
    assert "line\\nbreak" in report


# -- history and types ---------------------------------------------------------------------------

def test_resuming_a_finished_run_keeps_its_record(labctl, store, tmp_path):
    db = tmp_path / "s.db"
    shutil.copy(store, db)
    with Store(db) as s:
        before = s.run(1)
    result = labctl("sweep", "--resume", "1", "--db", str(db))
    assert result.returncode == 0 and "no point left to run" in result.stdout
    with Store(db) as s:
        after = s.run(1)
    assert (after.status, after.finished_at, after.started_at) == (before.status, before.finished_at,
                                                                     before.started_at)


def test_integers_stay_integers_in_results_and_exports(labctl, tmp_path):
    path = tmp_path / "e.toml"
    path.write_text('name = "mixed"\nrepeats = 1\nwarmup = 0\n[[grid]]\nkernel = "ping_pong"\n'
                    'params = { messages = 1000 }\naxes = { dispatcher = ["one_thread", "thread_pool"] }\n')
    db = str(tmp_path / "r.db")
    assert labctl("sweep", str(path), "--db", db).returncode == 0
    frame = results.load(db, 1)
    assert str(frame["threads"].dtype) == "Int64" and frame["threads"].isna().sum() == 1
    assert str(frame["max_demands_at_once"].dtype) == "Int64"
    exported = json.loads(labctl("export", "1", "--db", db, "--format", "json").stdout)
    threads = sorted(row["threads"] for row in exported if row["threads"] is not None)
    assert threads == [2] and all(isinstance(row["thread_cpu_ns"], list) for row in exported)
    csv = labctl("export", "1", "--db", db, "--format", "csv").stdout
    assert ",2," in csv and ",2.0," not in csv


def test_plan_and_the_sweep_after_it_run_the_same_order(labctl, tmp_path):
    plan_a = experiment.load(Path(__file__).resolve().parent.parent / "experiments" / "quickstart.toml")
    plan_b = experiment.load(Path(__file__).resolve().parent.parent / "experiments" / "quickstart.toml")
    assert plan_a.seed == plan_b.seed and [p.key for p in plan_a.points] == [p.key for p in plan_b.points]
    other = experiment.load(Path(__file__).resolve().parent.parent / "experiments" / "quickstart.toml", seed=7)
    assert [p.key for p in other.points] != [p.key for p in plan_a.points]


def test_piped_output_fits_100_columns(labctl):
    for args in (["kernels"], ["experiments"], ["kernels", "--describe", "mixed"]):
        result = labctl(*args)
        assert result.returncode == 0
        assert max(len(line) for line in result.stdout.splitlines()) <= 100, args


# Digits of other scripts: Python's int() and float() take "３" and "٣"; kernel parameters,
# experiment files and the store do not. Every number labctl reads refuses them alike.
OTHER_DIGITS = ("３", "٣", "3\u0663")


def numeric_options() -> list[tuple[str, str]]:
    """Every option of every command that takes a number, found by introspection: a click int or
    float type, or the percentage callback."""
    import importlib

    import click

    from labctl import cli
    from labctl.cli.commands import options

    found = []
    for name in cli.COMMANDS:
        for param in importlib.import_module(f"labctl.cli.commands.{name}").command.params:
            numeric = isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType))
            if numeric or param.callback is options.percent:
                found.append((name, next(opt for opt in param.opts if opt.startswith("--"))))
    return found


def test_the_numeric_options_are_found():
    found = numeric_options()
    for expected in [("run", "--repeats"), ("sweep", "--seed"), ("gate", "--threshold"),
                     ("compare", "--fail-on-regression"), ("ab", "--rounds"), ("history", "--every")]:
        assert expected in found


@pytest.mark.parametrize("digits", OTHER_DIGITS)
def test_every_numeric_option_refuses_other_scripts_digits_naming_itself(digits):
    from click.testing import CliRunner

    from labctl.cli import main

    for command, option in numeric_options():
        # The option first: click converts options in the order given, before required arguments.
        result = CliRunner().invoke(main, [command, option, digits])
        assert result.exit_code == 2, (command, option, result.output)
        assert option in result.output and "Traceback" not in result.output, (command, option, result.output)


@pytest.mark.parametrize("args, words", [
    (["show", "３"], ["run '３'"]),
    (["sweep", "x.toml", "--cluster", "local:２"], ["--cluster", "local:N"]),
])
def test_run_ids_and_cluster_sizes_refuse_other_scripts_digits(labctl, tmp_path, args, words):
    Store(tmp_path / "s.db", create=True).close()
    (tmp_path / "x.toml").write_text(SMALL, encoding="utf-8")
    one_line(labctl(*[str(tmp_path / a) if a.endswith(".toml") else a for a in args],
                    "--db", str(tmp_path / "s.db")), 2, *words)


def test_a_core_list_refuses_other_scripts_digits(tmp_path):
    (tmp_path / "x.toml").write_text(SMALL.replace('kernel = "skynet"', 'kernel = "skynet"\ncpus = "０-1"'),
                                     encoding="utf-8")
    with pytest.raises(experiment.ExperimentError, match="is not a core list"):
        experiment.load(tmp_path / "x.toml")
