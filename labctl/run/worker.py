"""The worker process: runs one point (a kernel and its parameters) and writes each sample to
stdout as one JSON line, the moment it exists. Never run in the CLI's own process.

Request (one JSON object on stdin, labctl.run.runner.worker_request): {"point": the Point
(labctl.vocabulary.point) as to_json writes it, "parent"?: the pid that started this worker,
"counts_folder"?}. The point's params name the runtime (ours, CAF built in, or an external
program run once per sample) and the allocator (preloaded by the caller, which also applies the
point's env and timeout; checked here). Its measure (labctl.catalogue.measures) says what else a
sample counts: under `instructions` the caller started this worker under callgrind, which writes
each phase's counts to counts_folder/callgrind.out.N; under `counters`, perf_event counters are
read around each phase. Reply: one {"sample": {...}} line per run, warmups included and
flagged; on failure one {"error": {"kind", "message"}} line and a non-zero exit.

LABCTL_FAULT, a hook for testing the layers above: wrong_answer, crash and hang make the kernel
commit that fault; outside_work adds costly work before and after the kernel, outside its phase
(no measure may count it); allocate (only under rlimit_mb) allocates until the limit stops it;
touch fills 1 GiB of resident memory, 16 MiB at a time, then waits (for the default limit, which
kills it on the way; 1 GiB at most, so that a limit that fails cannot fill the machine);
sigkill kills the worker after its first sample; kill_host kills the process that started the
worker (on a cluster, the Dask worker: a host lost mid-point) after its first sample. With
LABCTL_FAULT_ONCE=PATH the fault strikes only the worker that creates PATH, the first.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import resource
import signal
import sys
import time
import traceback

import psutil

from labctl.catalogue import kernels, measures, native, runtimes
from labctl.vocabulary import metrics
from labctl.vocabulary.point import Point
from labctl.vocabulary.sample import Sample

NATIVE_FAULTS = ("wrong_answer", "crash", "hang", "outside_work")
EXIT_PARAM = 2
EXIT_FAILED = 3


class Unavailable(Exception):
    """The point's runtime or allocator cannot run on this machine."""


def _reply(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _die_with(parent: int) -> None:
    """Ends this worker when the process that started it ends (kill -9 of the CLI included), so
    no orphan keeps running beside the next sweep."""
    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it ended before prctl took effect
        os._exit(1)


def run(request: dict) -> None:
    point = Point.from_json(request["point"])
    if request.get("parent"):
        _die_with(request["parent"])
    if point.cpus:
        os.sched_setaffinity(0, point.cpus)
    limit_mb = point.rlimit_mb
    if limit_mb:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = limit_mb << 20
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    fault = os.environ.get("LABCTL_FAULT", "none")
    once = os.environ.get("LABCTL_FAULT_ONCE")
    if fault != "none" and once:
        try:
            os.close(os.open(once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            fault = "none"
    if fault == "allocate":
        if not limit_mb:
            raise RuntimeError("LABCTL_FAULT=allocate needs rlimit_mb (it would fill the machine)")
        hog = []
        while True:
            hog.append(bytearray(16 << 20))  # address space counts, touched or not
    if fault == "touch":
        held = []
        for _ in range(64):
            held.append(bytearray(16 << 20))  # zeroed, so resident
            time.sleep(0.01)
        time.sleep(3600)
    kernel, params, measure = point.kernel, point.params, point.measure
    _check_finite(kernel, params)
    # Whether the point can run here is asked on the host that runs it (a cluster's may differ
    # from the one that planned it); whether it can take its measure at all, the plan settled.
    why = kernels.unavailable(params, measure)
    if why:
        raise Unavailable(why)
    runtime = runtimes.runtimes()[params.get(kernels.RUNTIME) or runtimes.OURS]
    runtimes.check_allocator(params.get(kernels.ALLOCATOR))
    own = {k: v for k, v in params.items() if k not in (kernels.RUNTIME, kernels.ALLOCATOR)}
    if measure == metrics.INSTRUCTIONS and not native.under_valgrind():
        raise RuntimeError("measure instructions: this worker does not run under valgrind "
                           "(labctl.run.runner starts it so)")
    warmup = point.warmup
    for index in range(warmup + point.repeats):
        if runtime.kind == "external":
            measured = _external_sample(runtime, kernel, own)
        else:
            measured = _native_sample(runtime, kernel, own, fault if fault in NATIVE_FAULTS else "none",
                                      measures.get(measure), request.get("counts_folder"), index + 1)
        measured.kernel, measured.params, measured.measure = kernel, params, measure
        measured.index = index - warmup if index >= warmup else index
        measured.warmup = index < warmup
        _reply({"sample": measured.to_json()})
        if fault == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        if fault == "kill_host":
            os.kill(os.getppid(), signal.SIGKILL)  # this worker follows it (_die_with)
            signal.pause()


def _check_finite(kernel: str, params: dict) -> None:
    """Refuses a request with a NaN or infinite parameter (JSON as Python writes it carries them;
    a store written before files refused them keeps them): NaN passes every bound C++ checks, so
    it would run (fan with duration_s = nan ran one iteration and stored it as verified)."""
    for name, value in params.items():
        if isinstance(value, float) and not math.isfinite(value):
            spec = kernels.catalogue().get(kernel)
            param = spec.param(name) if spec else None
            allowed = f" ({param.allowed()})" if param else ""
            raise native.ParamError(f"{kernel}: parameter '{name}' must be a finite number{allowed}, "
                                    f"got {value!r}", kernel, name)


def _native_sample(runtime: runtimes.Runtime, kernel: str, params: dict, fault: str,
                   measure: measures.Measure, counts_folder: str | None, phase: int) -> Sample:
    """One run in this process; `phase` counts the process's runs from 1 (callgrind numbers its
    dumps so)."""
    name = runtimes.native_name(runtime.name, kernel)
    worker = psutil.Process()
    before = worker.num_ctx_switches()
    baseline_kb = _rss_baseline_kb(worker)
    result = native.run(name, params, fault, counters=measure.reads_counters)
    after = worker.num_ctx_switches()
    # Peak RSS: getrusage's (psutil gives the current RSS, not the peak).
    peak_rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    measured = Sample(kernel=kernel, params=params, index=0, warmup=False,
                      elapsed_ns=result["elapsed_ns"], messages_processed=result["messages_processed"],
                      answer=result["answer"], expected=result["expected"],
                      metrics=metrics.measured_only(result["metrics"]), thread_cpu_ns=result["thread_cpu_ns"], pid=worker.pid,
                      peak_rss_kb=peak_rss_kb, voluntary_switches=after.voluntary - before.voluntary,
                      involuntary_switches=after.involuntary - before.involuntary,
                      histogram=[[int(lowest), int(count)] for lowest, count in result.get("histogram", [])])
    runtime_counts = {name: int(value) for name, value in result.get("runtime_counts", {}).items()
                      if name in metrics.RUNTIME_COUNTS}
    runtime_counts["rss_growth_kb"] = max(0, peak_rss_kb - baseline_kb)
    # A runtime that counts no agents (CAF): the kernel's own figure of the agents its phase made
    # (skynet's, actor_creation's, mixed's `agents`), for its memory per agent.
    if "agents_created" not in runtime_counts and "agents" in result["metrics"]:
        runtime_counts["agents_created"] = int(result["metrics"]["agents"])
    counted = measure.counts(result, counts_folder, phase)
    if counted is None:
        measured.counts = runtime_counts
        return measured
    measured.counts, measured.unsupported = {**counted[0], **runtime_counts}, counted[1]
    dispatcher = kernels.dispatchers().get(str(params.get("dispatcher")))
    measured.schedule_dependent = measures.schedule_dependent(
        params, dispatcher is not None and dispatcher.thread_per_agent, result["thread_cpu_ns"],
        result["process_cpu_ns"], measure.at_work)
    return measured


# The worker's RSS just before its first phase, after the extension was loaded: the process's
# baseline, which rss_growth_kb (labctl.vocabulary.metrics) is the peak over. Taken once: a later
# phase's RSS holds what the runtime and the C library kept of the earlier ones (actor_creation's
# second run in one worker grew 16 KiB over such a baseline, its first 409 MiB), and a worker runs
# one point, so every phase's peak is a run like the first's.
_baseline_kb: int | None = None


def _rss_baseline_kb(worker: psutil.Process) -> int:
    global _baseline_kb
    if _baseline_kb is None:
        _baseline_kb = worker.memory_info().rss // 1024
    return _baseline_kb


def _external_sample(runtime: runtimes.Runtime, kernel: str, params: dict) -> Sample:
    """One run of an external program, verified as our kernels verify themselves."""
    expected = native.expect(kernel, params)
    # Its metrics may take no parameter name of any kernel (its own, and another's in the same
    # run: a column of labctl.read.results holds a parameter or a metric, never both).
    run = runtimes.run_external(runtime, kernel, params, reserved=parameter_names())
    if run.answer != expected["answer"]:
        raise native.VerificationError(f"{runtime.name}: {kernel}: wrong answer: got '{run.answer}', "
                                        f"expected '{expected['answer']}'")
    # A range where the schedule decides part of the count (chat's deliveries), no most where
    # nothing bounds it (savina_philosopher's denials), else one count.
    fewest, most = expected["messages"], expected.get("messages_most", expected["messages"])
    if run.messages < fewest or (most is not None and run.messages > most):
        allowed = f"at least {fewest}" if most is None else f"{fewest}" + (f" to {most}" if most != fewest else "")
        raise native.VerificationError(f"{runtime.name}: {kernel}: reported {run.messages} messages, "
                                        f"expected {allowed}")
    measured = Sample(kernel=kernel, params=params, index=0, warmup=False, elapsed_ns=run.elapsed_ns,
                      messages_processed=run.messages, answer=run.answer, expected=expected["answer"],
                      metrics=metrics.measured_only(run.metrics),
                      thread_cpu_ns=[run.cpu_ns],  # the whole process: its threads are not ours to see
                      pid=run.pid, peak_rss_kb=run.peak_rss_kb, voluntary_switches=run.voluntary_switches,
                      involuntary_switches=run.involuntary_switches, histogram=run.histogram)
    # Its memory per agent, as ours (labctl.read.results): its peak RSS over its own resident set
    # before the kernel (the runtime's start-up is not the agents'), over the agents it made.
    if run.rss_before_kb is not None and run.agents_created is not None:
        measured.counts = {"rss_growth_kb": max(0, run.peak_rss_kb - run.rss_before_kb),
                           "agents_created": run.agents_created}
    return measured


def parameter_names() -> set[str]:
    """Every parameter name of every kernel of the catalogue: names no external metric takes."""
    return {p.name for spec in kernels.catalogue().values() for p in spec.params}


def _rlimit_mb(request: object) -> int | None:
    """The point's address-space limit, where its request got as far as saying one."""
    point = request.get("point") if isinstance(request, dict) else None
    return point.get("rlimit_mb") if isinstance(point, dict) else None


def main() -> int:
    request = None
    try:
        request = json.loads(sys.stdin.read())
        run(request)
    except native.ParamError as error:
        _reply({"error": {"kind": "param", "message": str(error)}})
        return EXIT_PARAM
    except native.VerificationError as error:
        _reply({"error": {"kind": "verification", "message": str(error)}})
        return EXIT_FAILED
    except Unavailable as error:
        _reply({"error": {"kind": "unavailable", "message": str(error)}})
        return EXIT_FAILED
    except measures.MeasureError as error:
        _reply({"error": {"kind": "measure", "message": str(error)}})
        return EXIT_FAILED
    except runtimes.ProtocolError as error:
        _reply({"error": {"kind": "protocol", "message": str(error)}})
        return EXIT_FAILED
    except runtimes.ExternalFailure as error:
        _reply({"error": {"kind": error.kind, "message": str(error)}})
        return EXIT_FAILED
    except MemoryError:  # Python's, or native code's std::bad_alloc as pybind11 turns it
        limit = _rlimit_mb(request)
        _reply({"error": {"kind": "memory", "message": f"out of memory: exceeded rlimit_mb={limit}"
                          if limit else "out of memory"}})
        return EXIT_FAILED
    except Exception as error:  # noqa: BLE001 - the parent reports it; the traceback goes to stderr
        traceback.print_exc()
        message = f"{type(error).__name__}: {error}"
        limit = _rlimit_mb(request)
        if limit:  # a thread or mapping the limit refused fails as EAGAIN or ENOMEM, not MemoryError
            message += f" (under rlimit_mb={limit}, which may be too small)"
        _reply({"error": {"kind": "failure", "message": message}})
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
