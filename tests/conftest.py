"""Shared helpers for the tests: running the `labctl` command in a subprocess, a folder of test
peers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest


def run_labctl(*args: str, env: dict[str, str] | None = None, timeout: float = 300):
    """Runs `python -P -m labctl ARGS` (what the `labctl` script runs) and returns the result.
    Its output is a pipe, as wide as COLUMNS in `env` says, else labctl's 100 columns (a COLUMNS
    of the tests' own environment is left out)."""
    inherited = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    return subprocess.run(
        [sys.executable, "-P", "-m", "labctl", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**inherited, **(env or {})},
    )


def sigint_as_at_a_terminal() -> None:
    """A Popen preexec_fn: the child takes Ctrl-C as one started at a terminal does. A test run
    started in the background (`cmd &` in a script) ignores SIGINT, its children inherit that, and
    a labctl sent SIGINT would then go on to its end."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def labctl():
    return run_labctl


@pytest.fixture
def peers(tmp_path, monkeypatch):
    """A folder of test peers named in LABCTL_PEERS, and a cache of their own; the catalogue
    is read again with them (and again after the test, without them)."""
    from labctl.catalogue import kernels, runtimes

    root = tmp_path / "peers"
    root.mkdir()
    monkeypatch.setenv(runtimes.PEERS_ENV, str(root))
    monkeypatch.setenv(runtimes.CACHE_ENV, str(tmp_path / "cache"))

    def reload():
        runtimes.runtimes.cache_clear()
        kernels.catalogue.cache_clear()

    reload()
    yield root, reload
    monkeypatch.undo()
    reload()


def pytest_addoption(parser):
    parser.addoption("--sanitizers", action="store_true",
                     help="also build the runtime's C++ tests with ThreadSanitizer and with "
                          "AddressSanitizer + UndefinedBehaviorSanitizer, and run them (minutes)")
    parser.addoption("--kernel-grid", choices=("covering", "full"), default="covering",
                     help="the kernel x dispatcher grid of tests/test_kernels.py: a covering set "
                          "(every kernel on every dispatcher, every setting's every value; the "
                          "default) or the full product of the settings (about four times as long)")


# The end-to-end files, the slowest (the serial suite's durations: 1,000 of its 1,250 s): they
# build C++ (history and bisect, the runtime's C++ tests) or the peers' programs with their
# toolchains, start hosts, daemons, a cluster or a browser, execute the notebook, count
# instructions under valgrind, kill and interrupt sweeps, or try hostile input on every command.
# `pytest -m "not slow"` leaves them out: the quick loop of docs/extending.md.
SLOW = {"test_history.py", "test_hosts.py", "test_slurm.py", "test_cluster.py", "test_runtime_native.py",
        "test_publish.py", "test_notebook.py", "test_measures.py", "test_hostile.py", "test_sweep.py",
        "test_faults.py", "test_peer_boost_fiber.py", "test_peer_erlang.py", "test_peer_ghc.py",
        "test_peer_tokio.py", "test_fuzz_inputs.py", "test_runtimes.py", "test_without_extension.py", "test_calibrate.py"}


def pytest_collection_modifyitems(config, items):
    slow = pytest.mark.slow
    for item in items:
        if item.path.name in SLOW:
            item.add_marker(slow)
    if config.getoption("--sanitizers"):
        return
    skip = pytest.mark.skip(reason="sanitizer builds run with --sanitizers")
    for item in items:
        if "sanitizer" in item.keywords:
            item.add_marker(skip)
