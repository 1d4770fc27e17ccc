"""Runs points in worker processes: one process per point, never the caller's own, with a time
limit, handing each sample back the moment the worker reports it.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Point:
    """One kernel with resolved parameters, and how to run it."""

    kernel: str
    params: dict[str, object]
    repeat: int = 1
    warmup: int = 0
    timeout_s: float = 600.0
    cpus: tuple[int, ...] | None = None  # pin the worker process to these CPUs
    env: dict[str, str] = field(default_factory=dict)  # extra environment (e.g. LD_PRELOAD)


class PointFailed(Exception):
    """The point produced no (further) valid sample: kind is param, verification, failure,
    crash or timeout; the message says what happened."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _worker_command() -> list[str]:
    # -P: do not put the current directory first on sys.path, so that a checkout's labctl/
    # folder (which has no compiled _native) cannot shadow the installed package.
    return [sys.executable, "-P", "-m", "labctl.worker"]


def _pump(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_point(point: Point) -> Iterator[dict]:
    """Runs `point` in a fresh worker process and yields its samples (warmups flagged) as they
    arrive. Raises PointFailed if the worker reports an error, dies, or outlives the timeout;
    the worker never survives the generator."""
    request = {
        "kernel": point.kernel,
        "params": point.params,
        "repeat": point.repeat,
        "warmup": point.warmup,
        "cpus": list(point.cpus) if point.cpus else None,
    }
    process = subprocess.Popen(
        _worker_command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **point.env},
        start_new_session=True,  # a Ctrl-C in the terminal reaches the CLI, which ends the worker
    )
    lines: queue.Queue = queue.Queue()
    stderr: list[str] = []
    readers = [
        threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True),
        threading.Thread(target=lambda: stderr.extend(process.stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + point.timeout_s
    error: dict | None = None
    try:
        process.stdin.write(json.dumps(request))
        process.stdin.close()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PointFailed("timeout", f"{point.kernel}: no result within {point.timeout_s:g} s")
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                break
            message = json.loads(line)
            if "sample" in message:
                yield message["sample"]
            elif "error" in message:
                error = message["error"]
        returncode = process.wait(timeout=max(1.0, deadline - time.monotonic()))
        for reader in readers:
            reader.join(timeout=5)
        if error is not None:
            raise PointFailed(error["kind"], error["message"])
        if returncode != 0:
            raise PointFailed("crash", _describe_death(point.kernel, returncode, "".join(stderr)))
    except subprocess.TimeoutExpired:
        raise PointFailed("timeout", f"{point.kernel}: no result within {point.timeout_s:g} s") from None
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _describe_death(kernel: str, returncode: int, stderr: str) -> str:
    if returncode < 0:
        try:
            cause = f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            cause = f"killed by signal {-returncode}"
    else:
        cause = f"exited with status {returncode}"
    tail = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    return f"{kernel}: worker {cause}" + (f" ({tail})" if tail else "")
