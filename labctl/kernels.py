"""The kernel catalogue, read from the native registry, and parameter resolution.

The schema of every parameter is declared once, in C++; this module only reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from labctl import _native

ParamError = _native.ParamError
VerificationError = _native.VerificationError


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # integer, number, boolean, choice, text
    default: object
    help: str
    minimum: float | None
    maximum: float | None
    choices: tuple[object, ...]
    applies_to: tuple[str, ...]  # dispatchers it applies to; empty: all

    def allowed(self) -> str:
        """What values are allowed, in words."""
        if self.choices:
            return " | ".join(str(c) for c in self.choices)
        if self.type == "boolean":
            return "true | false"
        low = _number(self.minimum) if self.minimum is not None else None
        high = _number(self.maximum) if self.maximum is not None else None
        if low is not None and high is not None:
            return f"{low}..{high}"
        if low is not None:
            return f">= {low}"
        return self.type


@dataclass(frozen=True)
class Kernel:
    name: str
    summary: str
    description: str
    source: str
    verifies: str
    params: tuple[Param, ...]

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


@cache
def catalogue() -> dict[str, Kernel]:
    """Every kernel of the native registry, by name."""
    kernels = {}
    for k in _native.kernels():
        params = tuple(
            Param(
                name=p["name"],
                type=p["type"],
                default=p["default"],
                help=p["help"],
                minimum=p["minimum"],
                maximum=p["maximum"],
                choices=tuple(p["choices"]),
                applies_to=tuple(p["applies_to"]),
            )
            for p in k["params"]
        )
        kernels[k["name"]] = Kernel(
            name=k["name"],
            summary=k["summary"],
            description=k["description"],
            source=k["source"],
            verifies=k["verifies"],
            params=params,
        )
    return kernels


def get(name: str) -> Kernel:
    """The kernel called `name`; ParamError naming the kernels if there is none."""
    kernel = catalogue().get(name)
    if kernel is None:
        _native.validate(name, {})  # raises the registry's own "unknown kernel" error
    return kernel


def resolve(name: str, values: Mapping[str, object]) -> dict[str, object]:
    """Typed parameters with defaults filled in; those that do not apply to the dispatcher are
    None. Values may be strings (from a command line). Raises ParamError."""
    return _native.validate(name, dict(values))


def show(value: object) -> str:
    """A parameter value as written in files and on the command line: true, 20 (not 20.0)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def varying(kernel: str, rows: Sequence[Mapping[str, object]]) -> list[str]:
    """Parameters whose value differs between rows (or is missing from some), in schema order."""
    spec = catalogue().get(kernel)
    names = [p.name for p in spec.params] if spec else sorted({n for row in rows for n in row})
    return [n for n in names if len({json.dumps(row.get(n)) for row in rows}) > 1]
