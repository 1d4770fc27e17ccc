"""The worker process: runs one point (a kernel and its parameters) and writes each sample to
stdout as one JSON line, the moment it exists. Never run in the CLI's own process.

Request (one JSON object on stdin): {"kernel", "params", "repeat", "warmup", "cpus"?, "parent"?}.
Reply: one {"sample": {...}} line per run, warmups included and flagged; on failure one
{"error": {"kind", "message"}} line and a non-zero exit. LABCTL_FAULT=wrong_answer|crash|hang
makes the kernel commit that fault: a hook for testing the layers above.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import traceback

from labctl import _native

EXIT_PARAM = 2
EXIT_FAILED = 3


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
    if request.get("parent"):
        _die_with(request["parent"])
    if request.get("cpus"):
        os.sched_setaffinity(0, request["cpus"])
    fault = os.environ.get("LABCTL_FAULT", "none")
    warmup = int(request.get("warmup", 0))
    for index in range(warmup + int(request.get("repeat", 1))):
        before = resource.getrusage(resource.RUSAGE_SELF)
        result = _native.run(request["kernel"], request["params"], fault)
        after = resource.getrusage(resource.RUSAGE_SELF)
        result.update(
            index=index - warmup if index >= warmup else index,
            warmup=index < warmup,
            pid=os.getpid(),
            peak_rss_kb=after.ru_maxrss,
            voluntary_switches=after.ru_nvcsw - before.ru_nvcsw,
            involuntary_switches=after.ru_nivcsw - before.ru_nivcsw,
        )
        _reply({"sample": result})


def main() -> int:
    try:
        request = json.loads(sys.stdin.read())
        run(request)
    except _native.ParamError as error:
        _reply({"error": {"kind": "param", "message": str(error)}})
        return EXIT_PARAM
    except _native.VerificationError as error:
        _reply({"error": {"kind": "verification", "message": str(error)}})
        return EXIT_FAILED
    except Exception as error:  # noqa: BLE001 - the parent reports it; the traceback goes to stderr
        traceback.print_exc()
        _reply({"error": {"kind": "failure", "message": f"{type(error).__name__}: {error}"}})
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
