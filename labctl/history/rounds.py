"""Interleaved rounds: an experiment measured on two builds in alternating sweeps, A B B A A B
..., so that what drifts on the machine between sweeps (its load, its frequency, its
temperature) moves both sides alike (`labctl ab`); and an A/A calibration, the installed build
measured the same way against itself (`labctl calibrate`), whose round-to-round spread is what
`labctl compare` holds two runs that were not interleaved to.

Each sweep runs in a process of its own, as history's do: a side that is a commit loads that
commit's extension from the build cache (labctl.history.builds). Each is a run of the store whose
context records its round (sysinfo.ROUND_ENV: group, side, round); labctl.read.compare pairs the two
sides' medians round by round.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from labctl.run import sysinfo
from labctl.store import Store
from labctl.vocabulary.exits import EXIT_INTERRUPTED

INSTALLED = "installed"  # a side that is the extension this labctl runs with
MAX_ROUNDS = 1000


class RoundsError(ValueError):
    """Rounds that cannot run or did not finish (an interrupted or failed sweep)."""


@dataclass(frozen=True)
class Build:
    """One side: what its sweeps load (`env`: history's NATIVE_ENV and COMMIT_ENV, or nothing
    for the installed extension) and its name in the output."""

    label: str
    env: dict[str, str] = field(default_factory=dict)


def order(index: int) -> tuple[str, str]:
    """The sides of round `index` (1, 2, ...) in the order they run: A B, then B A, ..., so that
    a drift over the rounds falls on A first as often as on B first."""
    return ("A", "B") if index % 2 else ("B", "A")


def measure(file: Path, db: str, a: Build, b: Build, rounds: int, say=print) -> str:
    """Sweeps experiment `file` into `db` `rounds` times on each side, interleaved (`order`): each
    sweep a run recording its round. Returns the group's name (the runs' context). Raises
    RoundsError where a sweep does not finish: the rounds done so far stay in the store."""
    if not 1 <= rounds <= MAX_ROUNDS:
        raise RoundsError(f"--rounds: {rounds} is not between 1 and {MAX_ROUNDS}")
    group = uuid.uuid4().hex[:12]
    sides = {"A": a, "B": b}
    for index in range(1, rounds + 1):
        for name in order(index):
            build = sides[name]
            mark = {"group": group, "side": name, "round": index, "rounds": rounds,
                    "build": build.label, "same_build": a == b}
            env = {**os.environ, **build.env, sysinfo.ROUND_ENV: json.dumps(mark)}
            started = time.monotonic()
            sys.stdout.flush()
            done = subprocess.run([sys.executable, "-m", "labctl", "sweep", str(file), "--db", db],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  errors="replace", check=False)
            # The sweeps' warnings (a busy machine, no fixed frequency) are the machine's, the
            # same each round: said once, from the first sweep; each run's record keeps its own.
            if index == 1 and name == order(1)[0]:
                for line in done.stderr.splitlines():
                    if line.startswith(("warning:", "skipped:")):
                        say(line)
            if done.returncode == EXIT_INTERRUPTED:
                raise RoundsError(f"round {index} ({name}): the sweep was interrupted; the rounds "
                                  f"before it are stored (group {group})")
            run = _run_of(db, group, name, index)
            if done.returncode != 0 or run is None:
                last = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines()
                        or [f"exit {done.returncode}"])[-1]
                raise RoundsError(f"round {index} ({name}, {build.label}): the sweep failed: {last}")
            say(f"[round {index}/{rounds}] {name} ({build.label}): run {run}, "
                f"{time.monotonic() - started:.0f} s")
    return group


def _run_of(db: str, group: str, side: str, index: int) -> int | None:
    """The finished run of a round's side."""
    with Store(db, create=False) as store:
        return next((found.run for found in store.rounds(group) if (found.side, found.round) == (side, index)), None)


def first_runs(db: str, group: str) -> tuple[int, int]:
    """The runs of round 1 of a group, A's and B's: what `labctl compare` is given to compare
    the whole group."""
    a, b = _run_of(db, group, "A", 1), _run_of(db, group, "B", 1)
    if a is None or b is None:
        raise RoundsError(f"group {group}: its first round is not in {db}")
    return a, b
