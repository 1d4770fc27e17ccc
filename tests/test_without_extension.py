"""A laptop that only analyses a store copied from a lab machine: with labctl._native made
unimportable, the commands that read a store work through the installed console script, and the
ones that need the extension say so in one line."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

import labctl

EXPERIMENT = """
name = "copied"
repeats = 3
warmup = 0
[[grid]]
kernel = "skynet"
params = { leaves = 200 }
axes = { dispatcher = ["one_thread", "thread_pool"] }
"""

# Installed first on sys.meta_path by the interpreter's start-up (sitecustomize on PYTHONPATH):
# every import of the extension fails as it does where it was never built.
BLOCKER = """
import sys

class _NoExtension:
    def find_spec(self, name, path=None, target=None):
        if name == "labctl._native":
            raise ImportError("No module named 'labctl._native' (hidden by the test)")
        return None

sys.meta_path.insert(0, _NoExtension())
"""


@pytest.fixture(scope="module")
def copied_store(tmp_path_factory) -> Path:
    """A store with one finished run, made here with the extension (the lab machine)."""
    folder = tmp_path_factory.mktemp("lab")
    (folder / "copied.toml").write_text(EXPERIMENT)
    done = subprocess.run([shutil.which("labctl"), "sweep", "copied.toml", "--db", "lab.db"], cwd=folder,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return folder / "lab.db"


def labctl_without_extension(folder: Path, *args: str) -> subprocess.CompletedProcess:
    hidden = folder / "hide"
    hidden.mkdir(exist_ok=True)
    (hidden / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": str(hidden)}
    return subprocess.run([shutil.which("labctl"), *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_the_blocker_hides_the_extension(tmp_path):
    hidden = labctl_without_extension(tmp_path, "run", "skynet", "--leaves", "10")
    assert hidden.returncode == 1
    assert hidden.stderr.splitlines() == [(
        "labctl: the compiled extension labctl._native cannot be loaded (No module named "
        "'labctl._native' (hidden by the test)): reinstall labctl (pip install . in its folder); "
        "runs, show, report, compare, export, publish and history (of a store) work without it")]


@pytest.mark.parametrize("args", [["sweep", "copied.toml"], ["plan", "copied.toml"], ["kernels"],
                                  ["experiments"]])
def test_a_command_that_needs_the_extension_says_so_in_one_line(copied_store, args):
    folder = copied_store.parent
    done = labctl_without_extension(folder, *args, *(["--db", "other.db"] if args[0] != "kernels" else []))
    assert done.returncode == 1, done.stdout
    assert len(done.stderr.splitlines()) == 1 and "labctl._native cannot be loaded" in done.stderr
    assert not (folder / "other.db").exists()


def test_reading_commands_work_on_a_copied_store(copied_store):
    folder = copied_store.parent
    runs = labctl_without_extension(folder, "runs", "--db", "lab.db")
    assert runs.returncode == 0, runs.stderr
    assert "copied" in runs.stdout and "finished" in runs.stdout

    show = labctl_without_extension(folder, "show", "1", "--db", "lab.db")
    assert show.returncode == 0, show.stderr
    assert "skynet" in show.stdout and "fixed: runtime=labctl leaves=200" in show.stdout

    report = labctl_without_extension(folder, "report", "1", "--db", "lab.db", "--output", "report")
    assert report.returncode == 0, report.stderr
    assert "skynet" in (folder / "report" / "report.md").read_text()

    export = labctl_without_extension(folder, "export", "1", "--db", "lab.db", "--format", "json")
    assert export.returncode == 0, export.stderr
    assert export.stdout.count('"kernel":"skynet"') == 6

    compare = labctl_without_extension(folder, "compare", "1", "1", "--db", "lab.db")
    assert compare.returncode == 0, compare.stderr
    assert "skynet" in compare.stdout

    published = labctl_without_extension(folder, "publish", "--db", "lab.db", "-o", "site")
    assert published.returncode == 0, published.stderr
    assert "copied" in (folder / "site" / "index.html").read_text()

    history = labctl_without_extension(folder, "history", "copied", "--db", "lab.db")
    assert history.returncode == 0, history.stderr
    assert "no changes found in the history of copied" in " ".join(history.stdout.split())


def test_exactly_one_module_of_labctl_imports_the_extension():
    importers = set()
    for path in Path(labctl.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            if any(name.endswith("labctl._native") or name == "_native" for name in names):
                importers.add(path.name)
    assert importers == {"native.py"}


def test_no_module_restates_a_dispatchers_name():
    """The dispatchers are the runtime's registry's; Python reads their facts from it (or from a
    run's catalogue), never by name."""
    names = ["one_thread", "active_obj", "active_group", "thread_pool", "work_stealing", "adv_thread_pool"]
    for path in Path(labctl.__file__).parent.rglob("*.py"):
        code = textwrap.dedent(path.read_text(encoding="utf-8"))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value not in names, f"{path.name}: names the dispatcher {node.value!r}"
