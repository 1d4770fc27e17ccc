"""Points on a Dask distributed cluster: `labctl sweep --cluster ADDRESS` (a scheduler started by
hand, over SSH, or by dask-jobqueue) or `--cluster local:N` (a LocalCluster on this machine).

Dask moves the work, labctl measures it. DaskBackend is a runner.Backend: each point is a Dask
task that runs runner.run_point on the host, so the point runs in labctl's own pinned worker
process with its timeout, memory limit and environment, exactly as locally. Every Dask worker
offers the resource `host=1` and every point asks for it, so points on one host never overlap.
The samples come back to the CLI process, the only writer of the store:

- Streaming: the task logs each sample as a Dask event (`Worker.log_event`) on a topic of the
  sweep's own, to which the CLI subscribes (`Client.subscribe_topic`), so a sample is stored the
  moment it exists, as locally; the same channel carries the cluster's own add-worker and
  remove-worker events. Events are fire and forget: the task's result carries every sample
  again, and the CLI stores the ones the stream missed before the point's end. (A
  distributed.Queue would cost a scheduler round trip per sample and outlive a killed CLI;
  results alone, as_completed, would bring a point's samples only at its end.)
- Faults: a worker that dies mid-point loses it once (Dask reschedules it, or labctl resubmits
  it where the scheduler gives up at once); a second death fails the point as `lost`, naming
  both. A point that only waited on a worker that died goes back to the queue, no death of its.
  A worker whose labctl is not this one is refused: at connect the sweep is refused naming the
  host; a worker joining later is retired from the cluster, and a task that reaches one anyway
  runs nothing there and goes back to the queue.
- A cancelled task (Ctrl-C, kill -9 of the CLI: the scheduler drops its client's tasks) kills its
  point's worker process within a second (the watcher sees the cancel within half a second, the
  point's wait sees the stop within another); the host's resource is freed only then.

Dask is optional (`pip install 'labctl[dist]'`): this module imports it only when a cluster is
used.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import re
import socket
import threading
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import labctl
from labctl.run import runner, sysinfo
from labctl.run.runner import (
    DoneEvent,
    Event,
    FailureEvent,
    NoteEvent,
    PointFailed,
    SampleEvent,
    StartedEvent,
)
from labctl.store import now
from labctl.vocabulary.point import Point
from labctl.vocabulary.sample import Sample
from labctl.vocabulary.text import printable

# The resource every point asks for and every worker offers once: one point at a time per host.
RESOURCE = "host"
WORKER_COMMAND = f"dask worker ADDRESS --nthreads 1 --resources {RESOURCE}=1"
INSTALL = "pip install 'labctl[dist]'"
# A point's host may die once: Dask (or labctl) runs it again elsewhere; a second death fails it.
ATTEMPTS = 2
# A point that reached a worker without running there (a worker with another labctl; a worker
# that died running the point before it) goes back to the queue, this many times at most.
REQUEUES = 10
# A scheduler with no worker yet (jobs still queued): how long a sweep waits for the first one.
WAIT_FOR_WORKERS_S = 60.0
# How often the sweep looks at its client when nothing happens: a client that gave up
# reconnecting to a scheduler gone ends the sweep.
TICK_S = 1.0
LOCAL_MAX_WORKERS = 256

_ADDRESS = re.compile(r"^(?:(?P<scheme>[a-z][a-z0-9+]*)://)?(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+)"
                      r":(?P<port>[0-9]{1,5})/?$")
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")  # Dask's network transports


class ClusterError(Exception):
    """No cluster to run on: the message says why in one line, before anything was written. `code`:
    2 for a bad --cluster (or no Dask), 1 for a cluster that cannot be reached or is refused."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Spec:
    """A --cluster value: a scheduler's address, or a LocalCluster of `local_workers` workers."""

    text: str
    address: str | None = None
    local_workers: int | None = None


def parse(value: str) -> Spec:
    """`local:N` or a scheduler address (`tcp://HOST:PORT`, `HOST:PORT`, another Dask scheme
    such as tls://); ClusterError (code 2) naming the allowed forms otherwise."""
    forms = f"local:N with N from 1 to {LOCAL_MAX_WORKERS}, or a scheduler's address (tcp://HOST:PORT or HOST:PORT)"
    if value.startswith("local:"):
        count = value.removeprefix("local:")
        if not (count.isascii() and count.isdigit()) or not 1 <= int(count) <= LOCAL_MAX_WORKERS:
            raise ClusterError(f"--cluster: '{value}' is not a cluster: give {forms}", 2)
        return Spec(value, local_workers=int(count))
    match = _ADDRESS.match(value)
    if not match or not 0 < int(match["port"]) < 65536 or (match["scheme"] or "tcp") not in SCHEMES:
        raise ClusterError(f"--cluster: '{value}' is not a cluster: give {forms}", 2)
    return Spec(value, address=value if match["scheme"] else f"tcp://{value}")


def require() -> None:
    """ClusterError (code 2) in one line where Dask distributed is not installed."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ClusterError(f"--cluster needs Dask distributed, which is not installed here: {INSTALL}",
                           2) from None


# -- on each host ---------------------------------------------------------------------------


def host_report() -> dict:
    """What a host says about itself when the sweep connects (Client.run on every worker): its
    labctl, the extension's build (importing it proves it is there), the machine and its state."""
    from labctl.catalogue import native

    return {"labctl": labctl.__version__, "build": native.build_info(),
            "machine": sysinfo.machine(), "context": sysinfo.host_context()}


def run_on_host(point: Point, version: str, topic: str, token: str) -> dict:
    """The Dask task of a point, on the host: refuses a host whose labctl is not `version`, else
    runs the point with runner.run_point, logs its start and each sample on `topic` as they come,
    and returns them all with how it ended. A cancelled task stops the point's worker process."""
    from distributed import get_worker
    from distributed.worker import thread_state

    worker = get_worker()
    if labctl.__version__ != version:
        return {"refused": f"labctl {labctl.__version__} there, {version} here", "worker": worker.address}
    attempt = uuid.uuid4().hex
    machine, context = sysinfo.machine(), {**sysinfo.host_context(), "worker": worker.address}
    started_at = now()
    worker.log_event(topic, {"point": token, "attempt": attempt, "started": started_at,
                             "worker": worker.address, "machine": machine, "context": context})
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_cancel, args=(worker, thread_state.key, stop), daemon=True)
    watcher.start()
    samples: list[dict] = []
    failure = None
    try:
        for sample in runner.run_point(point, stop):
            if sample.warmup:
                continue
            samples.append(sample.to_json())
            worker.log_event(topic, {"point": token, "attempt": attempt, "sample": samples[-1]})
    except PointFailed as error:
        failure = {"kind": error.kind, "message": str(error)}
    finally:
        stop.set()  # ends the watcher
    return {"attempt": attempt, "worker": worker.address, "machine": machine, "context": context,
            "started_at": started_at, "finished_at": now(), "samples": samples, "failure": failure}


def _watch_cancel(worker, key, stop: threading.Event) -> None:
    """Sets `stop` when the scheduler cancels the task `key` (a Dask worker cannot stop a running
    task; it keeps its resources until the task returns, which `stop` makes it do)."""
    while not stop.wait(0.5):
        task = worker.state.tasks.get(key)
        if task is None or task.state in ("cancelled", "released", "forgotten"):
            stop.set()


# -- on the CLI's side ----------------------------------------------------------------------


@dataclass
class Host:
    """A Dask worker, as it answered at connect."""

    address: str
    hostname: str
    slots: float  # its `host` resource
    report: dict


@dataclass
class _Tracked:
    """A point in flight: its task, the attempts that started, what was delivered."""

    point: Point
    label: str
    future: object = None
    submissions: int = 0
    started: bool = False  # an attempt of the latest submission started
    attempts: dict[str, str] = field(default_factory=dict)  # attempt -> worker address, in order
    deaths: list[str] = field(default_factory=list)  # the workers that died running it
    requeued: int = 0  # submitted again without having run: refused, or queued where a worker died
    seen: set[tuple[str, int]] = field(default_factory=set)  # (attempt, index) delivered or dropped
    delivered: int = 0  # samples delivered, over all attempts
    done: bool = False

    @property
    def running_on(self) -> str | None:
        return next(reversed(self.attempts.values()), None)


class DaskBackend:
    """Points on the workers of a Dask cluster, one at a time per host (runner.Backend). Made by
    connect(); close() (or `with`) lets the cluster go, and stops a LocalCluster."""

    def __init__(self, spec: Spec, client, local_cluster, hosts: dict[str, Host], warnings: list[str]):
        self.spec, self.client, self.local_cluster = spec, client, local_cluster
        self.hosts = hosts  # address -> Host: the workers checked so far
        self.refused: set[str] = set()
        self.warnings = warnings  # about the hosts' state and layout, for the run's record

    @property
    def summary(self) -> str:
        names = sorted({h.hostname for h in self.hosts.values()})
        return (f"cluster {self.spec.text}: {len(self.hosts)} workers on {len(names)} "
                f"host{'s' if len(names) != 1 else ''} ({', '.join(names[:5])}"
                f"{', ...' if len(names) > 5 else ''}), labctl {labctl.__version__}")

    def __enter__(self) -> DaskBackend:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.local_cluster is not None:
                self.local_cluster.close()

    def run(self, points: Iterable[Point]) -> Iterator[Event]:
        return _Sweep(self, list(points)).events()

    def retire(self, worker: str) -> None:
        """Takes a worker out of the cluster (its labctl is not this one)."""
        self.refused.add(worker)
        self.hosts.pop(worker, None)
        with contextlib.suppress(Exception):  # gone already
            self.client.retire_workers([worker], close_workers=True)

    def describe(self, worker: str) -> str:
        host = self.hosts.get(worker)
        return f"worker {worker} on {host.hostname}" if host else f"worker {worker}"


class _Sweep:
    """The points of one DaskBackend.run: their tasks, and one inbox where everything that
    happens arrives (the points' events from the hosts, the cluster's add-worker and
    remove-worker, the tasks' ends), turned into runner events in the order it arrives."""

    def __init__(self, backend: DaskBackend, points: list[Point]):
        self.backend, self.client, self.spec = backend, backend.client, backend.spec
        self.topic = f"labctl-sweep-{uuid.uuid4().hex[:12]}"
        self.inbox: queue.Queue = queue.Queue()
        self.tracked = {str(index): _Tracked(point, _label(point)) for index, point in enumerate(points)}
        self.left = len(self.tracked)

    def events(self) -> Iterator[Event]:
        from distributed import KilledWorker

        self.client.subscribe_topic(self.topic, lambda event: self.inbox.put(("point", event[1])))
        self.client.subscribe_topic("all", lambda event: self.inbox.put(("cluster", event[1])))
        try:
            # A worker that joined after connect's check but before the subscription above has
            # no add-worker event of ours: checked now, as one that joins later.
            joined = set(self.client.scheduler_info().get("workers", {}))
            for address in sorted(joined - set(self.backend.hosts) - self.backend.refused):
                yield from self._join(address)
            for token, item in self.tracked.items():
                self._submit(token, item)
            while self.left:
                try:
                    what, message = self.inbox.get(timeout=TICK_S)
                except queue.Empty:
                    self._check_scheduler()
                    continue
                if what == "point":
                    item = self.tracked.get(message.get("point"))
                    if item is not None and not item.done:
                        yield from self._point_message(item, message)
                elif what == "cluster":
                    yield from self._cluster_message(message)
                else:  # a task ended
                    token, future = message
                    item = self.tracked[token]
                    if not item.done and future is item.future:
                        yield from self._task_ended(token, item, future, KilledWorker)
        finally:
            # A client already closed has nothing to unsubscribe; a scheduler gone cancels its
            # tasks itself.
            with contextlib.suppress(Exception):
                for topic in (self.topic, "all"):
                    self.client.unsubscribe_topic(topic)
            unfinished = [item.future for item in self.tracked.values() if not item.done and item.future]
            if unfinished:
                with contextlib.suppress(Exception):
                    self.client.cancel(unfinished, force=True)

    def _submit(self, token: str, item: _Tracked) -> None:
        item.submissions += 1
        item.started = False
        key = f"labctl-{item.point.kernel}-{self.topic.removeprefix('labctl-sweep-')}-{token}-{item.submissions}"
        # Earlier points first: the plan's order (random by default, seeded) is the experiment's.
        item.future = self.client.submit(run_on_host, item.point, labctl.__version__, self.topic,
                                         token, key=key, resources={RESOURCE: 1}, pure=False,
                                         priority=-int(token))
        item.future.add_done_callback(lambda future: self.inbox.put(("task", (token, future))))

    def _end(self, item: _Tracked) -> None:
        item.done = True
        self.left -= 1

    def _point_message(self, item: _Tracked, message: dict) -> Iterator[Event]:
        attempt = message.get("attempt")
        if "started" in message:
            yield from self._started(item, attempt, message["worker"], message["started"],
                                     message["machine"], message["context"])
        elif "sample" in message and attempt in item.attempts:
            yield from self._deliver(item, attempt, message["sample"])

    def _started(self, item: _Tracked, attempt: str, worker: str, at: str, machine: dict,
                 context: dict) -> Iterator[Event]:
        if attempt in item.attempts:
            return
        if item.attempts and item.running_on not in item.deaths:
            # Dask moved the point before labctl heard of its worker's death.
            item.deaths.append(item.running_on)
        item.attempts[attempt] = worker
        item.started = True
        if len(item.attempts) > ATTEMPTS:
            yield from self._lost(item)
            return
        yield StartedEvent(item.point, at, machine, context)

    def _deliver(self, item: _Tracked, attempt: str, sample: dict) -> Iterator[Event]:
        """A sample of an attempt, once: numbered after those already delivered (an attempt
        after a lost one starts counting again), and none past the point's repeats."""
        seen = (attempt, sample["index"])
        if seen in item.seen:
            return
        item.seen.add(seen)
        if item.delivered >= item.point.repeats:
            return
        measured = Sample.from_json(sample)
        measured.index = item.delivered
        item.delivered += 1
        yield SampleEvent(item.point, measured)

    def _task_ended(self, token: str, item: _Tracked, future, killed_worker: type) -> Iterator[Event]:
        if future.status == "finished":
            result = future.result()
            if "refused" in result:
                yield from self._refused_task(token, item, result)
                return
            attempt = result["attempt"]
            yield from self._started(item, attempt, result["worker"], result["started_at"],
                                     result["machine"], result["context"])
            if item.done:
                return
            for sample in result["samples"]:  # those the stream has not delivered yet
                yield from self._deliver(item, attempt, sample)
            self._end(item)
            failure = result["failure"]
            if failure is None:
                yield DoneEvent(item.point, result["finished_at"])
            else:
                yield FailureEvent(item.point, failure["kind"], failure["message"], result["finished_at"])
            return
        if self.client.status != "running":  # its futures are cancelled as the scheduler goes
            raise self._lost_scheduler()
        if future.status == "cancelled":
            raise runner.BackendLost(f"--cluster {self.spec.text}: the scheduler cancelled the points")
        error = future.exception()
        if isinstance(error, killed_worker) and not item.started:
            # It waited on a worker that died running another point: it never ran, no death of its.
            yield from self._requeue(token, item, f"{error}")
            return
        if isinstance(error, killed_worker):
            # The scheduler gave up at the first death (its allowed-failures is 0): labctl
            # retries once itself. The death may be known already, from remove-worker.
            worker = item.running_on or "?"
            known = worker in item.deaths
            if not known:
                item.deaths.append(worker)
            if len(item.deaths) >= ATTEMPTS:
                yield from self._lost(item)
                return
            if not known:
                yield NoteEvent(self._death_note(item, worker))
            self._submit(token, item)
            return
        self._end(item)
        yield FailureEvent(item.point, "failure", printable(
            f"the Dask task failed: {type(error).__name__}: {error}")[:1000])

    def _refused_task(self, token: str, item: _Tracked, result: dict) -> Iterator[Event]:
        """A task reached a worker whose labctl is not this one before labctl saw it join: it
        ran nothing there; the worker is retired and the point goes back to the queue."""
        worker = result["worker"]
        if worker not in self.backend.refused:
            note = f"{self.backend.describe(worker)}: {result['refused']}: retired from the cluster, it runs no point"
            self.backend.retire(worker)
            yield NoteEvent(note)
        yield from self._requeue(token, item, f"refused by a worker: {result['refused']}")

    def _requeue(self, token: str, item: _Tracked, why: str) -> Iterator[Event]:
        """Submits a point again that did not run (no attempt of it started): up to REQUEUES
        times, then it fails, saying why the last time."""
        item.requeued += 1
        if item.requeued > REQUEUES:
            self._end(item)
            yield FailureEvent(item.point, "lost", printable(
                f"{item.point.kernel}: sent to a worker {item.requeued} times without running; the "
                f"last: {why}")[:1000])
            return
        self._submit(token, item)

    def _lost(self, item: _Tracked) -> Iterator[Event]:
        self._end(item)
        with contextlib.suppress(Exception):  # already gone
            self.client.cancel([item.future], force=True)
        deaths = ", then ".join(self.backend.describe(w) for w in item.deaths[:ATTEMPTS])
        yield FailureEvent(item.point, "lost", f"{item.point.kernel}: the Dask worker running it died "
                                               f"{len(item.deaths)} times ({deaths}); not retried again")

    def _cluster_message(self, message: dict) -> Iterator[Event]:
        action, worker = message.get("action"), message.get("worker")
        if action == "remove-worker" and worker:
            for item in self.tracked.values():
                if item.done or item.running_on != worker or worker in item.deaths:
                    continue
                item.deaths.append(worker)
                if len(item.deaths) >= ATTEMPTS:
                    yield from self._lost(item)
                else:
                    yield NoteEvent(self._death_note(item, worker))
        elif action == "add-worker" and worker and worker not in self.backend.hosts:
            yield from self._join(worker)

    def _death_note(self, item: _Tracked, worker: str) -> str:
        return (f"{self.backend.describe(worker)} died running {item.label}: it runs once more, on "
                "another worker")

    def _join(self, address: str) -> Iterator[Event]:
        """A worker that joined during the sweep: checked as at connect; one whose labctl is not
        this one is retired from the cluster (it would run points with another labctl)."""
        problems, hosts = _check(self.client, [address])
        self.backend.hosts.update(hosts)
        if problems:
            self.backend.retire(address)
            yield NoteEvent(f"{problems[0]}: retired from the cluster, it runs no point")
        elif address in hosts:
            yield NoteEvent(f"worker {address} on {hosts[address].hostname} joined")

    def _check_scheduler(self) -> None:
        """While nothing happens: a client that gave up reconnecting has lost the scheduler."""
        if self.client.status not in ("running", "connecting"):
            raise self._lost_scheduler()

    def _lost_scheduler(self) -> runner.BackendLost:
        return runner.BackendLost(f"--cluster {self.spec.text}: lost the scheduler (the client is "
                                  f"{self.client.status})")


def _label(point: Point) -> str:
    return printable(" ".join([point.kernel, *(f"{k}={v}" for k, v in point.params.items())]))


def _check(client, addresses: list[str] | None = None) -> tuple[list[str], dict[str, Host]]:
    """Asks each worker (all, or `addresses`) for its host_report: the problems (one line each,
    naming the worker and its host) and the hosts that passed."""
    workers = client.scheduler_info().get("workers", {})
    reports = client.run(host_report, workers=addresses, on_error="return")
    problems, hosts = [], {}
    for address, report in sorted(reports.items()):
        info = workers.get(address, {})
        where = f"worker {address} on {info.get('host') or address}"
        if isinstance(report, BaseException):
            problems.append(f"{where}: cannot run labctl there ({type(report).__name__}: "
                            f"{printable(report)[:200]}); install labctl {labctl.__version__} there, "
                            "built there")
            continue
        where = f"worker {address} on {report['machine'].get('hostname')}"
        if report["labctl"] != labctl.__version__:
            problems.append(f"{where}: labctl {printable(report['labctl'])} there, {labctl.__version__} "
                            f"here; install labctl {labctl.__version__} there, built there")
            continue
        slots = (info.get("resources") or {}).get(RESOURCE)
        if slots is not None and slots != 1:
            problems.append(f"{where}: offers {RESOURCE}={slots:g}, so {slots:g} points would share "
                            f"its host; start it with `{WORKER_COMMAND}`")
            continue
        hosts[address] = Host(address, report["machine"].get("hostname") or address, slots or 0, report)
    return problems, hosts


def connecting(spec: Spec) -> str:
    """What connect() is doing, for the minute it may take: each wait with its own limit (a port
    that refuses ends it at once, _probe)."""
    if spec.local_workers is not None:
        return f"starting a LocalCluster of {spec.local_workers} single-thread worker processes ..."
    return (f"connecting to the Dask scheduler at {spec.address} (up to {_connect_timeout():g} s), "
            f"then waiting up to {WAIT_FOR_WORKERS_S:g} s for a worker if none has joined ...")


def _connect_timeout() -> float:
    """How long Dask's client tries to reach a scheduler (distributed.comm.timeouts.connect)."""
    try:
        import dask
        from dask.utils import parse_timedelta

        return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s"))
    except Exception:  # noqa: BLE001 - Dask missing or its setting odd: its documented default
        return 30.0


# Schemes that run over TCP, whose port can be tried with a plain connection first.
_TCP_SCHEMES = ("tcp", "tls", "ws", "wss")


def _probe(spec: Spec, timeout: float) -> None:
    """Tries the scheduler's port with a plain TCP connection before Dask's client, which retries
    a refused connection until its timeout (30 s) and then says only that it timed out: a port
    that refuses, a host that does not resolve or cannot be reached ends the sweep at once, with
    the reason. ClusterError (code 1)."""
    match = _ADDRESS.match(spec.address or "")
    if match is None or (match["scheme"] or "tcp") not in _TCP_SCHEMES:
        return  # ucx: not a TCP port; Dask's client says what it finds
    host, port = match["host"].strip("[]"), int(match["port"])
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except ConnectionRefusedError:
        raise ClusterError(f"--cluster {spec.text}: connection refused: nothing listens on port "
                           f"{port} of {printable(host)} (is the scheduler started? `dask scheduler "
                           f"--port {port}`); nothing was run") from None
    except socket.gaierror as error:
        raise ClusterError(f"--cluster {spec.text}: cannot resolve host {printable(host)} "
                           f"({printable(error.strerror or error)}); nothing was run") from None
    except TimeoutError:
        raise ClusterError(f"--cluster {spec.text}: no answer from port {port} of {printable(host)} "
                           f"within {timeout:g} s; nothing was run") from None
    except OSError as error:
        raise ClusterError(f"--cluster {spec.text}: cannot reach port {port} of {printable(host)} "
                           f"({printable(error.strerror or error)}); nothing was run") from None


def connect(spec: Spec) -> DaskBackend:
    """Starts the LocalCluster of `local:N`, or connects to the scheduler at the address, and
    checks every worker (host_report). Raises ClusterError in one line, with nothing written,
    for a scheduler that cannot be reached, no worker offering `host=1`, or a worker whose labctl
    is not this one (the sweep is refused, naming each)."""
    require()
    import dask
    from distributed import Client, LocalCluster

    # labctl says what went wrong in one line; distributed's own log (a lost scheduler's
    # reconnection attempts and tracebacks, a killed worker's restart) would bury it.
    for name in ("distributed", "distributed.client"):  # each has its own level and handler
        logging.getLogger(name).setLevel(logging.CRITICAL)
    local_cluster = None
    try:
        if spec.local_workers is not None:
            # memory_limit=0: a point's memory is labctl's (rlimit_mb), not the nanny's to police.
            # ":0": the scheduler's HTTP server on a free port (8787 may be another cluster's).
            local_cluster = LocalCluster(n_workers=spec.local_workers, threads_per_worker=1,
                                         processes=True, resources={RESOURCE: 1}, memory_limit=0,
                                         dashboard_address=":0", silence_logs=logging.ERROR)
            client = Client(local_cluster, set_as_default=False)
        else:
            timeout = dask.config.get("distributed.comm.timeouts.connect")
            _probe(spec, _connect_timeout())
            try:
                client = Client(spec.address, timeout=timeout, set_as_default=False)
            except Exception as error:  # noqa: BLE001 - refused, timed out, a transport not installed
                raise ClusterError(f"--cluster {spec.text}: cannot reach a Dask scheduler there "
                                   f"({printable(error)[:200]}); nothing was run") from None
    except BaseException:
        if local_cluster is not None:
            local_cluster.close()
        raise
    try:
        return _checked(spec, client, local_cluster)
    except BaseException:
        client.close()
        if local_cluster is not None:
            local_cluster.close()
        raise


def _checked(spec: Spec, client, local_cluster) -> DaskBackend:
    try:
        client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS_S)
    except TimeoutError:
        raise ClusterError(f"--cluster {spec.text}: no worker joined the scheduler within "
                           f"{WAIT_FOR_WORKERS_S:g} s; start some: `{WORKER_COMMAND}`") from None
    problems, hosts = _check(client)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ClusterError(f"--cluster {spec.text}: refused: {problems[0]}{more}; nothing was run")
    offering = {a: h for a, h in hosts.items() if h.slots}
    if not offering:
        raise ClusterError(f"--cluster {spec.text}: no worker offers the resource {RESOURCE}=1 that "
                           f"each point asks for; start workers with `{WORKER_COMMAND}`")
    warnings = []
    by_host: dict[str, list[Host]] = {}
    for host in offering.values():
        by_host.setdefault(host.hostname, []).append(host)
    if spec.local_workers and spec.local_workers > 1:
        warnings.append(f"--cluster {spec.text}: {spec.local_workers} points run at once on this "
                        "machine's cores and disturb each other: its figures are for testing, not "
                        "for publishing")
    else:
        for hostname, workers in sorted(by_host.items()):
            if len(workers) > 1:
                warnings.append(f"host {hostname} has {len(workers)} workers offering {RESOURCE}=1: "
                                f"its points run {len(workers)} at a time and disturb each other; "
                                "start one worker per host")
    idle = sorted(a for a, h in hosts.items() if not h.slots)
    if idle:
        warnings.append(f"{len(idle)} worker(s) offer no {RESOURCE} resource and run no point "
                        f"({', '.join(idle[:3])}); start them with `{WORKER_COMMAND}`")
    by_warning: dict[str, list[str]] = {}
    for hostname, workers in sorted(by_host.items()):
        for warning in sysinfo.warnings(workers[0].report["context"]):
            by_warning.setdefault(warning, []).append(hostname)
    for warning, names in by_warning.items():
        warnings.append(f"{'host' if len(names) == 1 else 'hosts'} {', '.join(names)}: {warning}")
    return DaskBackend(spec, client, local_cluster, hosts, warnings)
