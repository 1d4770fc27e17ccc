"""How a point is measured: `time` (the steady clock inside the kernel, the default),
`instructions` (the worker runs under valgrind's callgrind, which counts the instructions of the
measured phase, and simulates its cache misses: the same count run after run on a noisy machine,
at 70-200x the time) or `counters` (perf_event counters of the CPU and the kernel around the
phase): the run side of each, what it needs, how its worker starts, and how its counts are
read back. Their names and what each counts are labctl.vocabulary.metrics', which analysis reads.

The phase's edges are marked in native code (native/kernels/framework/phase.hpp), where MeasuredPhase
starts and ends every kernel's phase, so every measure covers the same work as the clock. The
analysis after the store never imports this module: only the functions that ask this build or
run a kernel import the extension.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from labctl.vocabulary.metrics import COUNTERS, INSTRUCTIONS, TIME

# How a worker of the instructions measure starts: under callgrind, instrumenting nothing until
# the phase begins (Python's start-up and the kernel's set-up run at valgrind's plain speed and
# count for nothing), a cache simulation for the misses, and a dump of the counts at each
# phase's end into OUT.1, OUT.2, ... (the N-th phase of the process). Only totals are read, so
# the dumps are kept small.
CALLGRIND = ("valgrind", "--tool=callgrind", "--instr-atstart=no", "--cache-sim=yes",
             "--dump-line=no")
OUT_FILE = "callgrind.out"

class MeasureError(Exception):
    """A measure could not read a phase's counts back."""


# What the instructions measure costs, for `labctl plan`'s estimates of points never measured so:
# a phase takes this many times its native time (on one_thread, on the 2-vCPU VM: skynet
# leaves=100000 10 ms natively, 0.75 s under callgrind with the cache simulation, 70x;
# ping_pong messages=1000000 10.6 ms and 2.1 s, 200x), and a worker this long to start (Python
# and labctl imported under valgrind).
CALLGRIND_SLOWDOWN = 150.0
CALLGRIND_START_S = 3.0

# A thread was at work in a phase when it used at least this share of the process's CPU time in
# it (see schedule_dependent). Natively, thread_ring's collector, woken once at the end, uses 5%
# of it and the kernel's own thread, which only starts the phase and waits, 2%; counting_actor's
# sender about half, but up to 64% on a loaded 2-core VM, and more where first-touch page faults
# cost more (one CI machine left its counter under 25%). Under callgrind the waiting thread uses
# 20% in a process's first phase (valgrind translates the code it runs for the first time) and
# counting_actor's sender 35%, so that measure draws the line higher (Instructions.at_work).
AT_WORK = 0.10


class Measure:
    """The run side of a way of measuring a point (labctl.vocabulary.metrics.MEASURE says what analysis
    needs of it): what this machine needs for it, which points it cannot take, how its worker
    starts, and what a run counts. The clock, with nothing counted besides it."""

    name = TIME
    reads_counters = False  # native.run opens perf_event counters around the phase
    slowdown = 1.0  # a phase's time under it, as a multiple of its native time (for estimates)
    start_s = 0.0  # what it adds to a worker's start
    at_work = AT_WORK  # the share of the phase's CPU time that makes a thread busy in it

    def missing(self) -> str:
        """Why this machine cannot take it; empty if it can."""
        return ""

    def refused(self, runtime: str, external: bool) -> str:
        """Why a point on `runtime` (an `external` program or not) cannot take it anywhere."""
        if self.name != TIME and external:
            return (f"measure '{self.name}' counts a phase inside labctl's process; runtime "
                    f"'{runtime}' is an external program (measure it with: {TIME})")
        return ""

    def prefix(self, folder: Path | None) -> list[str]:
        """What goes before the worker's command line."""
        return []

    def needs_folder(self) -> bool:
        """Whether its worker writes files of counts (into a folder of the point's)."""
        return False

    def counts(self, result: dict, folder: str | None, phase: int) -> tuple[dict[str, int], dict[str, str]] | None:
        """What the `phase`-th run of a worker (from 1) counted, with why a count is missing
        here; None where the measure counts nothing."""
        return None


class Instructions(Measure):
    """valgrind's callgrind counts the phase's instructions and simulates its cache misses: the
    same count run after run, at 70-200x the time."""

    name = INSTRUCTIONS
    slowdown = CALLGRIND_SLOWDOWN
    start_s = CALLGRIND_START_S
    at_work = 0.25

    def missing(self) -> str:
        if shutil.which("valgrind") is None:
            return "measure instructions: valgrind not found on PATH (apt-get install valgrind)"
        from labctl.catalogue import native

        why = native.build_info().get("callgrind_missing", "")
        return f"measure instructions: {why}" if why else ""

    def prefix(self, folder: Path | None) -> list[str]:
        return [*CALLGRIND, f"--callgrind-out-file={folder / OUT_FILE}"]

    def needs_folder(self) -> bool:
        return True

    def counts(self, result: dict, folder: str | None, phase: int) -> tuple[dict[str, int], dict[str, str]]:
        # callgrind wrote OUT.N at the end of the process's N-th phase.
        dump = Path(folder) / f"{OUT_FILE}.{phase}"
        if not dump.is_file():
            raise MeasureError(
                f"measure instructions: callgrind wrote no counts for phase {phase} ({dump.name} missing): "
                "the kernel did not mark its measured phase (MeasuredPhase, native/kernels/framework/phase.hpp)")
        counts = read_callgrind(dump)
        dump.unlink()
        return {name: value for name, value in counts.items() if value is not None}, {}


class Counters(Measure):
    """perf_event counters of the CPU (user space) and the kernel around the phase."""

    name = COUNTERS
    reads_counters = True

    def counts(self, result: dict, folder: str | None, phase: int) -> tuple[dict[str, int], dict[str, str]]:
        return ({name: value for name, value in result["counters"].items() if value is not None},
                dict(result["unsupported"]))


# One per name of labctl.vocabulary.metrics.MEASURES (tests/test_measures.py holds the two to each other).
RUN_SIDE = {measure.name: measure for measure in (Measure(), Instructions(), Counters())}


def get(name: str) -> Measure:
    """The measure called `name` (one of labctl.vocabulary.metrics.MEASURES)."""
    return RUN_SIDE[name]


def valgrind_version() -> str | None:
    """`valgrind --version` (valgrind-3.19.0), or None where there is none."""
    if shutil.which("valgrind") is None:
        return None
    try:
        done = subprocess.run(["valgrind", "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def read_callgrind(path: Path) -> dict[str, int | None]:
    """The counts of one phase from a callgrind dump: instructions (Ir), l1_misses (I1mr + D1mr
    + D1mw) and cache_misses (last level: ILmr + DLmr + DLmw); the misses are None without the
    cache simulation. Raises ValueError for a file that is not such a dump."""
    events: list[str] = []
    totals: list[int] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("totals:"):
            totals = [int(value) for value in line.split()[1:]]
    if "Ir" not in events:
        raise ValueError(f"{path}: not a callgrind dump (no events line with Ir)")
    counts = dict(zip(events, totals + [0] * (len(events) - len(totals))))

    def total(*names: str) -> int | None:
        return sum(counts[name] for name in names) if all(name in counts for name in names) else None

    return {"instructions": counts["Ir"], "l1_misses": total("I1mr", "D1mr", "D1mw"),
            "cache_misses": total("ILmr", "DLmr", "DLmw")}


def schedule_dependent(params: Mapping[str, object], thread_per_agent: bool,
                       thread_cpu_ns: Sequence[int], process_cpu_ns: int, at_work: float = AT_WORK) -> bool:
    """Whether a phase's counts depend on the schedule: more than one thread did its work. Then
    their interleaving (valgrind runs one thread at a time, but the OS decides which; a spinning
    thread spins for a time, not a count) changes the work itself: a queue found empty, a thread
    parked and woken, more envelopes in flight. That is so when the dispatcher runs the kernel's
    agents on more than one thread (a thread per agent, or `threads` > 1), on a runtime other
    than ours (CAF has threads of its own), and when two or more threads were at work (`at_work`,
the measure's):
    runtime threads (one_to_many's producer has one of its own), or the threads outside the
    runtime together (counting_actor's sender is the kernel's own thread). One busy runtime
    thread, with the kernel's thread waiting for the answer, gives the same count every run.
    `thread_per_agent`: the point's dispatcher starts a thread per agent (its catalogue says)."""
    if (params.get("runtime") or "labctl") != "labctl":
        return True
    if thread_per_agent or int(params.get("threads") or 1) > 1:
        return True
    if process_cpu_ns <= 0:
        return False
    busy = sum(t >= at_work * process_cpu_ns for t in thread_cpu_ns)
    outside = process_cpu_ns - sum(thread_cpu_ns)
    return busy + (outside >= at_work * process_cpu_ns) > 1
