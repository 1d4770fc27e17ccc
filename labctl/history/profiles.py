"""Per-function instruction counts of one point's phase: the worker run once under callgrind
(instrumenting the phase only, as the instructions measure does) with a commit's extension, and
the dump read function by function. `labctl bisect` names the functions whose own counts moved
between a commit and the one before it.

A callgrind dump lists, under each `fn=` line, the function's own costs, and after each
`calls=` line the inclusive cost of that call: the own ("self") count of a function is the sum
of the first, which is what moves when the function's code changes. Names may be compressed
(`fn=(12) name` the first time, `fn=(12)` after), and are demangled by callgrind.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from labctl.catalogue import measures
from labctl.run import runner
from labctl.vocabulary.point import Point

OUT_FILE = "profile.out"


def profile(kernel: str, params: dict, env: dict[str, str] | None = None, timeout_s: float = 600) -> dict[str, int]:
    """The own instruction count of each function in one phase of KERNEL with `params` (as the
    worker takes them), in a worker under callgrind with `env` (a commit's extension). Raises
    RuntimeError with the worker's message where it fails."""
    with tempfile.TemporaryDirectory(prefix="labctl-profile-") as folder:
        out = Path(folder) / OUT_FILE
        command = [*measures.CALLGRIND, f"--callgrind-out-file={out}", *runner.worker_command()]
        request = runner.worker_request(Point(kernel, params))
        done = subprocess.run(command, input=request, capture_output=True, text=True,
                              env={**os.environ, **(env or {})}, check=False, timeout=timeout_s)
        dump = Path(f"{out}.1")  # the phase's, dumped at its end
        if done.returncode != 0 or not dump.exists():
            errors = [line for line in done.stdout.splitlines() if '"error"' in line]
            raise RuntimeError(errors[-1][:300] if errors else f"the profiled worker exited {done.returncode}")
        return own_counts(dump)


def own_counts(path: Path) -> dict[str, int]:
    """Each function's own instructions (Ir) in a callgrind dump. Raises ValueError for a file
    that is not one."""
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    column = None
    positions = 1
    current = None
    after_call = False
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
            if "Ir" not in events:
                raise ValueError(f"{path}: no Ir event")
            column = events.index("Ir")
        elif line.startswith("positions:"):
            positions = len(line.split()[1:])
        elif line.startswith("fn="):
            current = _name(line[3:], names)
            counts.setdefault(current, 0)
            after_call = False
        elif line.startswith(("cfn=", "cfi=", "cfl=", "cob=")):
            if line.startswith("cfn="):
                _name(line[4:], names)  # defines a compressed name the dump may use later
        elif line.startswith("calls="):
            after_call = True  # the next cost line is the call's inclusive cost
        elif line[:1].isdigit() or line[:1] in "+-*":
            if after_call:
                after_call = False
                continue
            if current is None or column is None:
                continue
            fields = line.split()
            if len(fields) > positions + column:
                counts[current] += int(fields[positions + column])
    if column is None:
        raise ValueError(f"{path}: not a callgrind dump (no events line)")
    return {name: count for name, count in counts.items() if count}


def _name(spec: str, names: dict[str, str]) -> str:
    """A (possibly compressed) function name: `(12) name` defines 12, `(12)` refers to it."""
    spec = spec.strip()
    if spec.startswith("("):
        ident, _, rest = spec.partition(")")
        rest = rest.strip()
        if rest:
            names[ident] = rest
        return names.get(ident, spec)
    return spec


def moved(before: dict[str, int], after: dict[str, int], top: int = 8) -> list[tuple[str, int, int]]:
    """The functions whose own counts moved most between two profiles: (name, before, after),
    largest absolute move first."""
    names = set(before) | set(after)
    ranked = sorted(names, key=lambda n: abs(after.get(n, 0) - before.get(n, 0)), reverse=True)
    return [(n, before.get(n, 0), after.get(n, 0)) for n in ranked[:top]
            if after.get(n, 0) != before.get(n, 0)]
