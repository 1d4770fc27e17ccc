"""A point, in one place: a kernel with resolved parameters and how to run it, one record from the
plan (labctl.plan.experiment) to the store (a row of its points table) to the worker (its request).

The plan makes it, the store keeps its facts a column each and gives it back (labctl.store's
PointRow holds it beside how far it got), the runner hands it to a worker as JSON (to_json,
from_json) and every event of a sweep carries it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields

from labctl.vocabulary import metrics


@dataclass(frozen=True)
class Point:
    """A kernel with resolved parameters, and how to run it."""

    kernel: str
    params: dict[str, object]  # resolved (labctl.catalogue.kernels.point): only those that apply
    repeats: int = 1  # measured runs (a resumed point: those it still lacks)
    warmup: int = 0  # runs before them in the same worker process, not stored
    timeout_s: float = 600.0  # the whole worker's, warm-ups included
    env: dict[str, str] = field(default_factory=dict)  # extra environment of the worker (LD_PRELOAD...)
    cpus: tuple[int, ...] | None = None  # OS CPU numbers the worker process is pinned to
    rlimit_mb: int | None = None  # the worker's address-space limit (RLIMIT_AS), in MiB
    measure: str = metrics.TIME  # time, instructions (the worker under callgrind) or counters
    skip: str = ""  # why it cannot run on the machine that planned it; stored as skipped, not run

    @property
    def key(self) -> str:
        """Identifies the point across runs: same kernel, parameters and setting, same key."""
        return key(self.kernel, self.params, self.env, self.cpus, self.measure)

    def to_json(self) -> dict:
        """The point as a JSON object (the worker's request)."""
        data = asdict(self)
        data["cpus"] = list(self.cpus) if self.cpus else None
        return data

    @classmethod
    def from_json(cls, data: dict) -> Point:
        """A point from to_json's object; a key it does not know is ignored."""
        known = {f.name for f in fields(cls)}
        given = {name: value for name, value in data.items() if name in known}
        if given.get("cpus"):
            given["cpus"] = tuple(given["cpus"])
        return cls(**given)


def key(kernel: str, params: dict, env: dict, cpus: tuple[int, ...] | list[int] | None, measure: str) -> str:
    """What makes a point the same point in another run: its kernel, parameters, environment,
    CPUs and measure (a point timed under valgrind is not the one timed natively; the time
    measure adds nothing, so keys from before measures stay as they were)."""
    setting = [kernel, params, env, list(cpus) if cpus else cpus]
    if measure != metrics.TIME:
        setting.append(measure)
    return hashlib.sha256(json.dumps(setting, sort_keys=True).encode()).hexdigest()[:16]
