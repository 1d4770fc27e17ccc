"""Runs points and sweeps, and owns a run's life: started (the whole plan stored first) or
resumed (claimed), swept, ended as finished or interrupted, and how long it will take. A point
runs in a worker process of its own (never the caller's), with a time limit, and each sample is
handed back the moment the worker reports it.

Where points run is one small interface, Backend: it takes points and yields events (a point
started on a host, a sample, a point done, a point failed, a note about the hosts). LocalBackend
runs them one at a time in local worker processes; labctl.run.cluster's DaskBackend hands them to a
Dask cluster, where each runs in the same kind of worker process. The sweep, the store and the
reports never care where a sample came from: each point records the machine it ran on.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import psutil

from labctl.catalogue import kernels, measures, runtimes
from labctl.plan import experiment
from labctl.plan.experiment import Plan
from labctl.run import sysinfo
from labctl.store import Store, StoreError, now
from labctl.vocabulary import text
from labctl.vocabulary.point import Point
from labctl.vocabulary.sample import Sample
from labctl.vocabulary.schema import OFFERED
from labctl.vocabulary.text import printable


class PointFailed(Exception):
    """The point produced no (further) valid sample: kind is param, verification, failure,
    memory, crash or timeout; the message says what happened."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class StartedEvent:
    """A point's worker process is starting on a host (again, for a point retried elsewhere)."""

    point: Point
    at: str  # on the host's clock (ISO 8601, UTC)
    machine: dict | None = None  # the host's sysinfo.machine(); None: the run's own machine
    context: dict | None = None  # the host's state and software (sysinfo.host_context); None: the run's


@dataclass(frozen=True)
class SampleEvent:
    point: Point
    sample: Sample  # as the worker reports it; its index counts the point's measured runs


@dataclass(frozen=True)
class DoneEvent:
    point: Point
    at: str | None = None  # when its worker process ended, on the host's clock


@dataclass(frozen=True)
class FailureEvent:
    point: Point
    kind: str
    message: str
    at: str | None = None  # when its worker process ended, on the host's clock


@dataclass(frozen=True)
class NoteEvent:
    """Something about the hosts the user should know (one lost mid-point, one refused)."""

    message: str


Event = StartedEvent | SampleEvent | DoneEvent | FailureEvent | NoteEvent


class Backend(Protocol):
    def run(self, points: Iterable[Point]) -> Iterator[Event]:
        """Runs every point, one worker process each, and yields what happens, in the order it
        happens: a point's StartedEvent before its samples, and its samples before its end.
        Measured samples only (warmups are not reported)."""


class LocalBackend:
    """Worker processes on this machine, one point at a time, so points never disturb each other."""

    def run(self, points: Iterable[Point]) -> Iterator[Event]:
        machine = sysinfo.machine()
        for point in points:
            yield StartedEvent(point, now(), machine)
            try:
                for sample in run_point(point):
                    if not sample.warmup:
                        yield SampleEvent(point, sample)
            except PointFailed as failure:
                yield FailureEvent(point, failure.kind, str(failure), now())
            else:
                yield DoneEvent(point, now())


def worker_command() -> list[str]:
    """The command that starts a worker (labctl.run.worker), before its measure's prefix."""
    # -P: do not put the current directory first on sys.path, so that a checkout's labctl/
    # folder (which has no compiled _native) cannot shadow the installed package.
    return [sys.executable, "-P", "-m", "labctl.run.worker"]


def worker_request(point: Point, counts: Path | None = None) -> str:
    """What a worker reads on its stdin (labctl.run.worker): the point, and what only that
    process has: the process it dies with (this one) and the folder callgrind writes `counts` to."""
    return json.dumps({"point": point.to_json(), "parent": os.getpid(),
                       "counts_folder": str(counts) if counts else None})


# -- memory: a limit on by default ----------------------------------------------------------------
# Where a point sets no rlimit_mb, its worker and everything it starts (a peer's program) may hold
# at most this share of the memory available when it starts, divided among the workers running
# on the host then: resident memory, watched every MEMORY_POLL_S, the tree killed past it. An
# address-space limit cannot be the default: Go, Erlang, GHC and the JVM reserve far more address
# space than they touch, and a child inherits the limit.
MEMORY_SHARE = 0.8
MEMORY_POLL_S = 0.05


def default_memory_mb() -> int:
    """The default limit of a point's resident memory, in MiB (MEMORY_SHARE of what is available
    now, over the labctl workers running on this host with the one about to start)."""
    running = 1
    for process in psutil.process_iter(["cmdline"]):
        try:
            if "labctl.run.worker" in (process.info["cmdline"] or []):
                running += 1
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return max(64, int(psutil.virtual_memory().available * MEMORY_SHARE / running) >> 20)


def _tree(pid: int) -> list[psutil.Process]:
    """A process and its descendants (psutil finds them, wherever their process group); none
    once it is gone."""
    try:
        return [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def resident_mb(pid: int) -> int:
    """The resident memory of a process and its descendants, in MiB (0 once it is gone)."""
    total = 0
    for process in _tree(pid):
        try:
            total += process.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total >> 20


def _watch_memory(pid: int, limit_mb: int, done: threading.Event, exceeded: list[int]) -> None:
    """Kills the worker's tree the first time its resident memory passes `limit_mb`, and notes
    what it held then in `exceeded`."""
    while not done.wait(MEMORY_POLL_S):
        held = resident_mb(pid)
        if held > limit_mb:
            exceeded.append(held)
            _kill_tree(pid)
            return


def _pump(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_point(point: Point, stop: threading.Event | None = None) -> Iterator[Sample]:
    """Runs `point` in a fresh worker process and yields its samples (warmups flagged) as they
    arrive. Raises PointFailed if the worker reports an error, dies, or outlives the timeout, or
    (kind `cancelled`) when another thread sets `stop`, or if this machine cannot take the point's
    measure (valgrind missing); the worker never survives the generator."""
    measure = measures.get(point.measure)
    why = measure.missing()
    if why:
        raise PointFailed("unavailable", why)
    # The default memory limit where the point sets none (rlimit_mb: the address space, in the
    # worker itself), read once: it scans the host's processes.
    memory_mb = None if point.rlimit_mb else default_memory_mb()
    # A point that cannot fit under its limit fails before its worker starts: it would only fill
    # the machine until killed.
    if why := too_large(point, memory_mb):
        raise PointFailed("memory", why)
    # The instructions measure: callgrind writes each phase's counts into a folder of the point's.
    counts = Path(tempfile.mkdtemp(prefix="labctl-counts-")) if measure.needs_folder() else None
    try:
        yield from _run_worker(point, counts, stop, memory_mb)
    finally:
        if counts is not None:
            shutil.rmtree(counts, ignore_errors=True)


def too_large(point: Point, default_mb: int | None = None) -> str | None:
    """Why a point cannot fit under its memory limit (rlimit_mb, or the default: `default_mb`
    where a caller judging many points read it once), where its kernel says from its parameters
    that it must hold more (kernels.memory_mb, a lower bound); None where it can, or where the
    kernel cannot say."""
    try:
        needed = kernels.memory_mb(point.kernel, point.params)
    except kernels.ParamError:
        return None  # the worker says what is wrong with them
    if not needed:
        return None
    limit = point.rlimit_mb or default_mb or default_memory_mb()
    if needed <= limit:
        return None
    which = (f"its rlimit_mb of {limit:,} MiB" if point.rlimit_mb else
             f"the default limit of {limit:,} MiB ({MEMORY_SHARE:.0%} of the memory available now, "
             "shared by the workers running)")
    return (f"{point.kernel}: needs at least {needed:,.0f} MiB by its parameters, more than {which}; "
            "not run (smaller sizes, or set rlimit_mb where the machine has more)")


def _run_worker(point: Point, counts: Path | None, stop: threading.Event | None,
                memory_mb: int | None) -> Iterator[Sample]:
    env = {**os.environ, **point.env}
    # The allocator goes first in LD_PRELOAD, before whatever the grid's env preloads.
    env.update(runtimes.allocator_env(point.params.get("allocator"), env.get("LD_PRELOAD", "")))
    request = worker_request(point, counts)
    try:
        process = subprocess.Popen(
            measures.get(point.measure).prefix(counts) + worker_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # a Ctrl-C in the terminal reaches the CLI, which ends the worker
        )
    except (OSError, ValueError) as error:
        # The OS or Python refused to start it: an environment it will not pass (a NUL or a '='
        # in a name, kept by a store older than the experiment's checks; an entry past the
        # kernel's 128 KiB, E2BIG). The point fails with the reason and the sweep goes on;
        # raised further, it would leave the run `running` with no process behind it.
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise PointFailed("failure", printable(f"{point.kernel}: cannot start its worker: {why} "
                                               f"(its env: {', '.join(point.env) or 'none'})")[:500]) from None
    lines: queue.Queue = queue.Queue()
    stderr: list[str] = []
    readers = [
        threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True),
        threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    # The default memory limit (`memory_mb`, where the point sets none) on the worker's tree.
    watched, exceeded = threading.Event(), []
    if memory_mb is not None:
        threading.Thread(target=_watch_memory, args=(process.pid, memory_mb, watched, exceeded),
                         daemon=True).start()
    deadline = time.monotonic() + point.timeout_s
    timed_out = f"{point.kernel}: no result within {point.timeout_s:g} s (worker killed)"
    error: dict | None = None
    try:
        try:
            process.stdin.write(request)
            process.stdin.close()
        except OSError:  # it died before reading its request: its exit and stderr say why
            pass
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PointFailed("timeout", timed_out)
            if stop is not None and stop.is_set():
                raise PointFailed("cancelled", f"{point.kernel}: stopped before its end (worker killed)")
            try:
                # In steps: a wait past the platform's time_t (a huge timeout_s) would raise; with
                # `stop`, short ones, so that a stop ends the worker within half a second.
                line = lines.get(timeout=min(remaining, 60.0 if stop is None else 0.5))
            except queue.Empty:
                continue
            if line is None:
                break
            try:
                message = json.loads(line)
            except ValueError:  # not from labctl's worker (a sitecustomize printing, say)
                continue
            if not isinstance(message, dict):
                continue
            if "sample" in message:
                yield Sample.from_json(message["sample"])
            elif "error" in message:
                error = message["error"]
        returncode = process.wait(timeout=max(1.0, deadline - time.monotonic()))
        for reader in readers:
            reader.join(timeout=5)
        if exceeded:
            raise PointFailed("memory", f"{point.kernel}: out of memory: its worker held {exceeded[0]} MiB, "
                                        f"past the default limit of {memory_mb} MiB ({MEMORY_SHARE:.0%} of the "
                                        "memory available when it started, shared by the workers running "
                                        "then), and was killed; set rlimit_mb in the experiment to choose one")
        if error is not None:
            raise PointFailed(error["kind"], error["message"])
        if returncode != 0:
            death = _describe_death(point.kernel, returncode, "".join(stderr))
            if point.rlimit_mb and "std::bad_alloc" in "".join(stderr):
                # Native code ran out of memory where no error reply could be made (on a runtime
                # thread, which ends the process): the limit was hit.
                raise PointFailed("memory", f"{point.kernel}: out of memory: exceeded rlimit_mb="
                                            f"{point.rlimit_mb} (std::bad_alloc in native code "
                                            "ended the worker)")
            if point.rlimit_mb:
                death += f"; it ran under rlimit_mb={point.rlimit_mb}, which may be too small"
            raise PointFailed("crash", death)
    except subprocess.TimeoutExpired:
        raise PointFailed("timeout", timed_out) from None
    finally:
        watched.set()
        if process.poll() is None:
            _kill_tree(process.pid)
            process.wait()


def _kill_tree(pid: int) -> None:
    """Kills a worker and everything it started: its descendants (psutil finds them, wherever
    their process group) and its process group (what left the tree by being re-parented)."""
    for process in _tree(pid):
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _describe_death(kernel: str, returncode: int, stderr: str) -> str:
    if returncode < 0:
        try:
            cause = f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            cause = f"killed by signal {-returncode}"
    else:
        cause = f"exited with status {returncode}"
    # The last line that names an error, else the last line: a Python that cannot start (a bad
    # PYTHONHOME in the grid's env) says why in "Fatal Python error: ..." and ends on a frame dump.
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    named = [line for line in lines if "error" in line.lower()]
    tail = printable((named or lines or [""])[-1])[:300]
    return f"{kernel}: worker {cause}" + (f" ({tail})" if tail else "")


class Progress(Protocol):
    """What a sweep reports as it goes (the CLI draws a progress bar from it)."""

    def started(self, points: int, samples: int) -> None: ...
    def sample(self, point: Point, sample: Sample) -> None: ...
    def point_done(self, point: Point) -> None: ...
    def point_failed(self, point: Point, kind: str, message: str) -> None: ...
    def note(self, message: str) -> None: ...


@dataclass
class SweepResult:
    points_run: int = 0
    points_failed: int = 0
    samples: int = 0


def sweep(store: Store, run_id: int, backend: Backend, progress: Progress | None = None,
          retry_failed: bool = False) -> SweepResult:
    """Runs every unfinished point of a run recorded in the store (pending ones, and failed ones
    with retry_failed), writing each sample the moment it arrives. A point with some samples
    already stored runs only the repeats it lacks, numbered after them: resuming never redoes a
    finished sample. Ends the run as finished; an interruption leaves it resumable."""
    wanted = ("pending", "failed") if retry_failed else ("pending",)
    todo: list[Point] = []
    stored: dict[str, tuple[int, int]] = {}  # a point's key -> its store id, its first repeat to run
    for row in store.points(run_id):
        if row.status not in wanted:
            continue
        missing = row.point.repeats - row.samples_done
        if missing <= 0:  # every sample stored, but the point was not marked done
            store.finish_point(row.id)
            continue
        todo.append(replace(row.point, repeats=missing))
        stored[todo[-1].key] = row.id, row.samples_done  # one row a key: start's plan, resume checks
    result = SweepResult()
    if progress:
        progress.started(len(todo), sum(p.repeats for p in todo))
    events = backend.run(todo)
    try:
        for event in events:
            if isinstance(event, NoteEvent):
                if progress:
                    progress.note(event.message)
                continue
            point_id, first_repeat = stored[event.point.key]
            if isinstance(event, StartedEvent):
                store.start_point(point_id, event.machine, event.context, event.at)
            elif isinstance(event, SampleEvent):
                store.add_sample(point_id, first_repeat + event.sample.index, event.sample)
                result.samples += 1
                if progress:
                    progress.sample(event.point, event.sample)
            elif isinstance(event, DoneEvent):
                store.finish_point(point_id, event.at)
                result.points_run += 1
                if progress:
                    progress.point_done(event.point)
            else:
                store.fail_point(point_id, event.kind, event.message, event.at)
                result.points_run += 1
                result.points_failed += 1
                if progress:
                    progress.point_failed(event.point, event.kind, event.message)
    finally:
        # A generator's close() ends the worker of the point in flight now, when the store fails
        # under the sweep, rather than whenever the generator is collected.
        if hasattr(events, "close"):
            events.close()
    store.end_run(run_id, "finished")
    return result


# -- a run from start to end ------------------------------------------------------------------


class Refused(Exception):
    """A sweep that cannot start or resume: the message says why, before anything was written."""


class BackendLost(Exception):
    """Where the points run went away mid-sweep (a cluster's scheduler): the run is marked
    interrupted and can be resumed, here or on a cluster."""


class Interrupted(Exception):
    """Ctrl-C or SIGTERM stopped a sweep; the run is marked interrupted and can be resumed."""

    def __init__(self, run_id: int, samples: int):
        super().__init__(f"interrupted: run {run_id} has {samples} samples stored")
        self.run_id, self.samples = run_id, samples


@dataclass
class Opened:
    """A run ready to sweep: a new one, or one claimed to resume."""

    run_id: int
    name: str
    resumed: bool
    warnings: list[str]  # about the machine's state (sysinfo.warnings)
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> points never run here
    stored: int = 0  # samples a resumed run had already
    other_machine: dict | None = None  # the machine a resumed run started on, if not this one


def start(store: Store, plan: Plan, db: str, cluster: str | None = None,
          host_warnings: list[str] | None = None) -> Opened:
    """Records a new run of `plan` and its whole plan in the store, with the machine and its
    state, before any point runs. `cluster`: the --cluster its points run on, if any (each point
    records the host it ran on), and `host_warnings` the warnings about its hosts' state, which
    replace this machine's."""
    context = sysinfo.run_context(_experiment_path(plan.source))
    warnings = sysinfo.warnings(context) if cluster is None else list(host_warnings or [])
    command = shlex.join(["labctl", "sweep", plan.source, "--db", db]
                         + (["--seed", str(plan.seed)] if plan.seed is not None else [])
                         + (["--scale", plan.scale] if plan.scale != "default" else [])
                         + (["--cluster", cluster] if cluster else []))
    run_id = store.create_run(plan, command, sysinfo.machine(), context, warnings)
    skipped: dict[str, int] = {}
    for point in plan.points:
        if point.skip:
            skipped[point.skip] = skipped.get(point.skip, 0) + 1
    return Opened(run_id, plan.name, False, warnings, dict(sorted(skipped.items())))


def resume(store: Store, run: str, file: str | None = None, retry_failed: bool = False,
           cluster: str | None = None, host_warnings: list[str] | None = None) -> Opened | None:
    """Claims a run to finish it (`file`, if given, must be its own experiment), here or on a
    `cluster` (with `host_warnings`, as start). None when it has no point left to run: a finished
    run keeps its record as it is. Raises Refused, or StoreError for an unknown run."""
    run_id = store.resolve_run(run)
    row = store.run(run_id)
    if file is not None and not _same_experiment(file, row):
        raise Refused(f"sweep: run {run_id} ran {row.source}, not {file}; give only --resume {run_id} "
                      "(it keeps its own experiment), or the run's own file")
    if row.status == "running":
        raise Refused(f"run {run_id} is still running ({row.command}); wait for it or stop it")
    left = [p for p in store.points(run_id) if p.status == "pending" or (retry_failed and p.status == "failed")]
    if not left:
        return None
    seen: dict[str, int] = {}
    for stored in left:  # the sweep finds a point's row by its key: a plan merges equal points
        other = seen.setdefault(stored.point.key, stored.id)
        if other != stored.id:
            raise StoreError(f"{store.path}: run {run_id}: point {stored.id} is point {other} again (the "
                             "same kernel, parameters and setting); the store was changed outside labctl")
    store.claim_run(run_id)  # refused (StoreError) if another process resumed it meanwhile
    if cluster is not None:  # each point records its host: none of them is "another machine"
        return Opened(run_id, row.name, True, list(host_warnings or []), stored=row.samples)
    warnings = sysinfo.warnings(sysinfo.run_context(_experiment_path(row.source)))
    machine = sysinfo.machine()
    return Opened(run_id, row.name, True, warnings, stored=row.samples,
                  other_machine=row.machine if row.machine != machine else None)


def execute(store: Store, run_id: int, backend: Backend, progress: Progress | None = None,
            retry_failed: bool = False) -> SweepResult:
    """Sweeps an opened run (see sweep) with SIGTERM taken as Ctrl-C. An interruption, a cluster
    lost under it (BackendLost) or a store that fails under it marks the run interrupted (where
    the store still takes that write) and raises Interrupted, or that error: every sample
    committed before stays."""
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return sweep(store, run_id, backend, progress, retry_failed)
    except KeyboardInterrupt:
        store.end_run(run_id, "interrupted")
        raise Interrupted(run_id, store.run(run_id).samples) from None
    except BackendLost:
        store.end_run(run_id, "interrupted")
        raise
    except sqlite3.DatabaseError:
        try:
            store.end_run(run_id, "interrupted")
        except sqlite3.Error:
            pass  # a full disk: `labctl runs` shows it interrupted all the same, its process gone
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _experiment_path(source: str) -> str | None:
    """The file a run's experiment came from (a path, or a shipped experiment's name)."""
    try:
        return str(experiment.locate(source))
    except experiment.ExperimentError:
        return None


def _same_experiment(file: str, row) -> bool:
    """Whether FILE is the run's own experiment: the same file, or a file with its text."""
    try:
        path = experiment.locate(file)
        if path.resolve() == Path(_experiment_path(row.source) or row.source).resolve():
            return True
        return path.read_text(encoding="utf-8") == row.experiment
    except (experiment.ExperimentError, OSError, UnicodeDecodeError):
        return False


# -- how long a plan will take ----------------------------------------------------------------

# Starting a worker process and importing labctl in it.
WORKER_START_S = 0.3
# What a message costs where nothing like the point was ever measured: a guess. One thread of
# this runtime handles tens of millions of messages a second; a thread per agent, far fewer.
GUESS_NS_PER_MESSAGE = 50.0
GUESS_NS_PER_MESSAGE_THREAD_PER_AGENT = 5000.0
# Kernels that keep one message in flight (a ping, a token): where the agents sit on threads of
# their own, every message crosses to another thread and nothing overlaps. The quickstart's
# ping_pong on 2 quiet cores took 123 ns a message on active_obj and on active_group with 2
# threads (reports/quickstart: 12 s in all), the other thread spinning for it; on busy cores (load
# 11), where a spinning thread loses its core and parks, 5.7 and 9.7 us (110 s in all), a busy
# machine's slowdown, which an estimate leaves out (COVERS).
ONE_IN_FLIGHT = frozenset({"ping_pong", "thread_ring", "savina_pingpong", "savina_threadring"})
GUESS_NS_PER_HANDOFF = 150.0


@dataclass
class Estimate:
    """How long a plan's points take, and what the figure rests on."""

    seconds: float = 0.0
    known: int = 0  # timed before in the store (same point), or running for a fixed duration_s
    scaled: int = 0  # the same kernel and configuration timed before at another size
    guessed: int = 0  # nothing like it timed before: its size times a nominal cost per message

    @property
    def is_guess(self) -> bool:
        return self.guessed > 0

    def text(self, db: str | None = None) -> str:
        where = f" in {db}" if db else ""
        parts = []
        if self.known:
            parts.append(f"{self.known} points timed before{where} or running for a fixed time")
        if self.scaled:
            parts.append(f"{self.scaled} scaled from the kernel's runs at other sizes")
        if self.guessed:
            parts.append(f"{self.guessed} a guess from the kernel's size (never run{where})")
        rests = f" ({'; '.join(parts)})" if parts else ""
        return (f"estimate: {'about ' if self.is_guess else ''}{text.format_seconds(self.seconds)}"
                f"{rests}; {COVERS}")


# What every estimate counts, said where it is printed.
COVERS = (f"each point's warm-up and repeats plus about {WORKER_START_S:g} s to start its worker; "
          "not the sweep's own start or a busy machine's slowdown")


def guess_ns_per_message(catalogue, kernel: str, params: dict) -> float:
    """The nominal cost of a message at a point never measured: a thread wake-up per message for a
    kernel of ONE_IN_FLIGHT on a thread per agent; a thread per agent's cost for another kernel;
    else one thread's. (Where a pool spreads two agents over its threads, a group per agent,
    the dispatchers' records do not say so: such a point is priced as one thread's.)"""
    if catalogue.thread_per_agent(params):
        return GUESS_NS_PER_HANDOFF if kernel in ONE_IN_FLIGHT else GUESS_NS_PER_MESSAGE_THREAD_PER_AGENT
    return GUESS_NS_PER_MESSAGE


def estimate(plan: Plan, store: Store | None = None) -> Estimate:
    """The time a plan's points take to run: from their own past samples in `store` where it has them,
    else from the kernel's size (kernels.work) times its cost per message in the store's runs of
    the same configuration, else times a nominal cost (a guess, and said to be one). A point of
    the instructions measure runs under callgrind: its time is its native time times
    the measure's slowdown where only native times are known."""
    result = Estimate()
    rates: dict[str, list[tuple[dict, float]]] = {}
    catalogue = plan.catalogue
    default_mb = default_memory_mb()  # once: it scans the host's processes
    for point in plan.points:
        if point.skip or too_large(point, default_mb):  # never run here, or failed before its worker starts
            continue
        runs = point.warmup + point.repeats
        measure = measures.get(point.measure)
        start_s = WORKER_START_S + measure.start_s
        previous = store.previous_elapsed(point.key) if store else []
        if previous:  # the same point, so the same measure: its own times
            result.known += 1
            result.seconds += start_s + runs * statistics.median(previous) / 1e9
            continue
        try:
            size = kernels.work(point.kernel, point.params)
        except kernels.ParamError:  # a kernel of a stored run that is not this build's
            size = 0.0
        if catalogue.open_loop(point.kernel):
            # Its run lasts its schedule: its requests at its offered rate, whatever a message costs.
            result.known += 1
            result.seconds += start_s + runs * _schedule_s(point.params)
            continue
        if not size and point.params.get("duration_s"):
            result.known += 1  # a fixed time of the clock's, under valgrind too
            result.seconds += start_s + runs * float(point.params["duration_s"])
            continue
        if store and point.kernel not in rates:
            # Native costs per message: a sample taken under valgrind counts for a fraction.
            rates[point.kernel] = [
                (params, elapsed / messages / measures.get(taken).slowdown)
                for params, elapsed, messages, taken in store.previous_samples(point.kernel)
                if messages]
        shape = _configuration(point.kernel, point.params)
        alike = [ns for params, ns in rates.get(point.kernel, ())
                 if _configuration(point.kernel, params) == shape]
        if alike and size:
            result.scaled += 1
            ns_per_message = statistics.median(alike)
        else:
            result.guessed += 1
            ns_per_message = guess_ns_per_message(catalogue, point.kernel, point.params)
        result.seconds += start_s + runs * max(size, 1.0) * ns_per_message * measure.slowdown / 1e9
    return result


def _schedule_s(params: dict) -> float:
    """The length of an open-loop point's schedule: its requests at its offered rate (OFFERED)."""
    rate = float(params.get(OFFERED) or 0)
    return float(params.get("requests") or 0) / rate if rate > 0 else 0.0


def _configuration(kernel: str, params: dict) -> dict:
    """What says how a point runs, rather than how much it does."""
    how = kernels.configuration(kernel)
    return {name: value for name, value in params.items()
            if name in how or not isinstance(value, (int, float)) or isinstance(value, bool)}
