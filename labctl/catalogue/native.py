"""The only door to the compiled extension, labctl._native: what the catalogue, a point's
resolution and a run ask of it, with its errors turned into labctl's own.

Nothing else under labctl/ imports the extension, and nothing imports it at start-up: the
commands that only read a store (runs, show, report, compare, export) work where it is missing,
and the ones that need it say so in one line (ExtensionMissing).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import ModuleType

# The extension to load in place of the installed one: a commit's build (labctl.history sets
# it for the sweeps it starts; their workers inherit it).
NATIVE_ENV = "LABCTL_NATIVE"


class ExtensionMissing(RuntimeError):
    """The compiled extension cannot be imported here: the message says why and what to do."""


class ParamError(ValueError):
    """Bad parameters of a kernel: the message names the kernel, the parameter (`param`) and
    what is allowed."""

    def __init__(self, message: str, kernel: str = "", param: str = ""):
        super().__init__(message)
        self.kernel, self.param = kernel, param


class VerificationError(RuntimeError):
    """A kernel (or a peer) computed a wrong answer: no timing is kept."""


@cache
def _extension() -> ModuleType:
    chosen = os.environ.get(NATIVE_ENV)
    if chosen:  # a commit's build (labctl.history), in place of the installed one
        return _load(chosen)
    try:
        from labctl import _native
    except ImportError as error:
        raise ExtensionMissing(
            f"the compiled extension labctl._native cannot be loaded ({error}): reinstall labctl "
            "(pip install . in its folder); runs, show, report, compare, export, publish and history "
            "(of a store) work without it"
        ) from None
    return _native


def _load(path: str) -> ModuleType:
    """The extension built at `path` (a build cache's _native*.so), as labctl._native."""
    name = "labctl._native"
    try:
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except (ImportError, OSError) as error:
        raise ExtensionMissing(f"{NATIVE_ENV}={path}: the extension cannot be loaded ({error})") from None
    sys.modules[name] = module
    return module


def missing() -> str:
    """Why the extension cannot be loaded here; empty when it can."""
    try:
        _extension()
    except ExtensionMissing as error:
        return str(error)
    return ""


def _call(function: str, *args, **kwargs):
    """Calls the extension, its errors raised as labctl's."""
    extension = _extension()
    try:
        return getattr(extension, function)(*args, **kwargs)
    except extension.ParamError as error:
        raise ParamError(str(error), getattr(error, "kernel", ""), getattr(error, "param", "")) from None
    except extension.VerificationError as error:
        raise VerificationError(str(error)) from None


# -- the catalogue -------------------------------------------------------------------------------

@cache
def kernels() -> list[dict]:
    """The native registry: each kernel's name, runtime, texts and parameter schema."""
    return _call("kernels")


@cache
def dispatchers() -> list[dict]:
    """The runtime's dispatchers: name, help, the settings each takes, thread_per_agent."""
    return _call("dispatchers")


@cache
def studies() -> list[dict]:
    """The published studies the kernels cite (native/kernels/framework/studies.hpp)."""
    return _call("studies")


@cache
def build_info() -> dict[str, str]:
    """How the extension was compiled, and what it was built without (CAF, callgrind)."""
    return dict(_call("build_info"))


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on."""
    return list(_call("allowed_cpus"))


def under_valgrind() -> bool:
    return bool(_call("under_valgrind"))


# -- a point -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Resolved:
    """A point as C++ resolved it, once: typed, defaults filled in, None where a parameter does
    not apply to the dispatcher, and each given parameter it left out, with why."""

    params: dict[str, object]
    dropped: dict[str, str]


def resolve(kernel: str, values: Mapping[str, object]) -> Resolved:
    """A grid's point: a given parameter that does not apply to the dispatcher is dropped and
    said why (the C++ applies rule is the only one). Raises ParamError for anything else."""
    resolved = _call("resolve", kernel, dict(values))
    return Resolved(dict(resolved["params"]), dict(resolved["dropped"]))


def validate(kernel: str, values: Mapping[str, object], scoped: bool = True) -> dict[str, object]:
    """Typed parameters with defaults; a given one that does not apply to the dispatcher is
    refused (unless `scoped` is False: every parameter kept, as a program without dispatchers
    takes them). Raises ParamError."""
    return dict(_call("validate", kernel, dict(values), scoped=scoped))


def expect(kernel: str, values: Mapping[str, object]) -> dict:
    """{answer, messages} a correct run must report, from the parameters alone; with
    messages_most where the schedule decides part of the count (messages then the fewest), None
    where no number bounds it (a request the schedule may refuse without end)."""
    return dict(_call("expect", kernel, dict(values)))


def work(kernel: str, values: Mapping[str, object]) -> float:
    """About how many messages a run processes (0: it cannot say, or runs for a fixed time)."""
    return float(_call("work", kernel, dict(values)))


def memory(kernel: str, values: Mapping[str, object]) -> float:
    """The bytes a run must hold at least (0: the kernel cannot say, or the extension is an older
    commit's, loaded by labctl history, bisect or ab, built before kernels could say)."""
    if not hasattr(_extension(), "memory"):
        return 0.0
    return float(_call("memory", kernel, dict(values)))


def run(kernel: str, values: Mapping[str, object], fault: str = "none", counters: bool = False) -> dict:
    """Runs a kernel once in this process (a worker's): its result, verified. Raises
    VerificationError for a wrong answer, ParamError for bad parameters."""
    return _call("run", kernel, dict(values), fault, counters=counters)
