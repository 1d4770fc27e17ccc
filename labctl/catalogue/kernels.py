"""The kernel catalogue, read from the native registry, and parameter resolution.

The schema of every parameter is declared once, in C++; this module only reads it. A kernel of
ours may also run on other runtimes (labctl.catalogue.runtimes): its schema then starts with `runtime`, and
each parameter says which runtimes take it. `allocator` picks the malloc of the worker process.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from functools import cache

from labctl.catalogue import native, runtimes, studies
from labctl.catalogue.native import ParamError, Resolved, VerificationError  # noqa: F401 - the catalogue's errors
from labctl.vocabulary.schema import ALLOCATOR, RUNTIME, Catalogue, Dispatcher, Floor, Kernel, Param

DISPATCHER = "dispatcher"  # our runtime's scheduler, which a peer may map onto its own


def _param(p: dict, runtimes: tuple[str, ...] = ()) -> Param:
    return Param(name=p["name"], type=p["type"], default=p["default"], help=p["help"],
                 minimum=p["minimum"], maximum=p["maximum"], choices=tuple(p["choices"]),
                 applies_to=tuple(p["applies_to"]), runtimes=runtimes, configuration=p["configuration"],
                 default_for=tuple(p["default_for"].items()))


@cache
def catalogue() -> dict[str, Kernel]:
    """Every kernel of ours, by name, with the runtimes it runs on and their parameters."""
    registry = {k["name"]: k for k in native.kernels()}
    known = runtimes.runtimes()
    kernels = {}
    for k in registry.values():
        if k["runtime"] != runtimes.OURS:
            continue
        name = k["name"]
        on = [r for r in known.values() if name in r.kernels]  # ours first
        names = [p["name"] for p in k["params"]]
        taken = {r.name: _takes(r, name, names) for r in on}
        params = [Param(RUNTIME, "choice", runtimes.OURS,
                        "the runtime it runs on: labctl (ours), caf (built in) or an external "
                        "program (`labctl kernels` says which are available here)",
                        None, None, tuple(r.name for r in on), (), configuration=True)]
        params += [_param(p, runtimes=() if all(p["name"] in t for t in taken.values())
                          else tuple(r for r, t in taken.items() if p["name"] in t))
                   for p in k["params"]]
        for r in on:  # parameters of another runtime's own (CAF's policy)
            if r.kind == "native" and r.name != runtimes.OURS and r.kernels[name] is not None:
                params += [_param(p, runtimes=(r.name,)) for p in registry[runtimes.native_name(r.name, name)]["params"]
                           if p["name"] not in names]
        params.append(Param(ALLOCATOR, "choice", "system",
                            "the worker's malloc, preloaded (LD_PRELOAD): system, jemalloc or tcmalloc",
                            None, None, tuple(runtimes.ALLOCATORS), (),
                            tuple(r.name for r in on if r.kind == "native"), configuration=True))
        declared = [m["name"] for m in k["metrics"]]
        for r in on:  # another native runtime's own figures, after ours
            if r.kind == "native" and r.name != runtimes.OURS and r.kernels[name] is not None:
                declared += [m["name"] for m in registry[runtimes.native_name(r.name, name)]["metrics"] if m["name"] not in declared]
        sources = tuple((c["study"], c["part"]) for c in k["sources"])
        cited = studies.catalogue()
        kernels[name] = Kernel(name=name, summary=k["summary"], description=k["description"],
                               sources=sources,
                               source="; ".join(f"{cited[key].title} ({cited[key].author}, "
                                                f"{cited[key].year}), {part}" for key, part in sources),
                               verifies=k["verifies"], params=tuple(params),
                               runtimes=tuple(r.name for r in on),
                               floor_of=tuple(Floor(**f) for f in k["floor_of"]), metrics=tuple(declared))
    return kernels


def _takes(runtime: runtimes.Runtime, kernel: str, ours: list[str]) -> set[str]:
    """The parameters of ours a runtime's implementation of `kernel` takes."""
    if runtime.name == runtimes.OURS:
        return set(ours)
    names = runtime.kernels[kernel]
    if names is None:  # not built in: its schema is unknown; ours less the dispatcher's, and threads
        return set(ours[:ours.index("dispatcher")] + ["threads"]) if "dispatcher" in ours else set(ours)
    return set(names)


def get(name: str) -> Kernel:
    """The kernel called `name`; ParamError naming the closest kernels and all of them if there
    is none."""
    kernel = catalogue().get(name)
    if kernel is None:
        close = difflib.get_close_matches(name, sorted(catalogue()), n=3, cutoff=0.6)
        guess = f"; did you mean {' or '.join(close)}?" if close else ""
        raise _error(name, "kernel", f"unknown kernel{guess} (kernels: {', '.join(sorted(catalogue()))})")
    return kernel


def _error(kernel: str, param: str, message: str) -> ParamError:
    return ParamError(f"{kernel}: {message}", kernel, param)


def parse_args(name: str, args: Sequence[str]) -> dict[str, str]:
    """Parameters given on a command line as `--name value` or `--name=value` (dashes in names
    read as underscores), as strings for resolve(). Raises ParamError."""
    given: dict[str, str] = {}
    i = 0
    while i < len(args):
        token = args[i]
        if not token.startswith("--") or token == "--":
            raise _error(name, "", f"unexpected argument '{token}' (parameters are given as --name value)")
        param, equals, value = token[2:].partition("=")
        param = param.replace("-", "_")
        if not equals:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise _error(name, param, f"parameter '{param}' needs a value (--{param} VALUE)")
            value = args[i + 1]
            i += 1
        if param in given:
            raise _error(name, param, f"parameter '{param}' given twice")
        given[param] = value
        i += 1
    return given


def resolve(name: str, values: Mapping[str, object]) -> dict[str, object]:
    """Typed parameters with defaults filled in, in schema order; those that do not apply to the
    runtime or the dispatcher are None. Values may be strings (from a command line). A given
    parameter that does not apply is refused: a command line names it on purpose. Raises
    ParamError."""
    return _resolve(name, values, drop=False).params


def _resolve(name: str, values: Mapping[str, object], drop: bool) -> Resolved:
    kernel = get(name)
    values = dict(values)
    runtime = values.pop(RUNTIME, runtimes.OURS)
    allocator = values.pop(ALLOCATOR, None)
    for param, value in ((kernel.param(RUNTIME), runtime), (kernel.param(ALLOCATOR), allocator)):
        broken = runtimes.runtimes().get(value) if param.name == RUNTIME and isinstance(value, str) else None
        if broken is not None and broken.missing and value not in param.choices:
            # A peer whose peer.toml cannot be read offers no kernel, so no choice lists it: say
            # why, not only which runtimes are left.
            raise _error(name, param.name, f"runtime '{value}' is unavailable here: {broken.missing} "
                                           f"(runtimes of {name}: {', '.join(param.choices)})")
        if value is not None and value not in param.choices:
            raise _error(name, param.name, f"parameter '{param.name}' must be one of: "
                                           f"{', '.join(param.choices)}; got {value!r}")
    on = runtimes.runtimes()[runtime]
    for param, allowed in (on.manifest.choices.items() if on.manifest else ()):
        # A peer's narrower choice (peer.toml `choices`), the value given or our default, refused
        # here rather than by the program, with the values that peer takes.
        spec = kernel.param(param)
        if spec is not None and param in (on.kernels.get(name) or ()):
            value = values.get(param, spec.default)
            if str(value) not in map(str, allowed):  # as given: a command line's is a string
                raise _error(name, param, f"parameter '{param}' on runtime '{runtime}' must be one of: "
                                          f"{', '.join(map(str, allowed))}; got {value!r}"
                                          + ("" if param in values else " (the default)"))
    dropped: dict[str, str] = {}
    for given in [*values, *([ALLOCATOR] if allocator is not None else [])]:
        param = kernel.param(given)
        if param is not None and not param.taken_by(runtime):
            why = (f"does not apply to runtime '{runtime}' (allowed with runtime: "
                   f"{', '.join(param.runtimes)})")
            if not drop:
                raise _error(name, given, f"parameter '{given}' {why}")
            dropped[given] = why
            values.pop(given, None)
    if runtime == runtimes.OURS or (on.kind == "native" and on.kernels[name] is not None):
        native_name = runtimes.native_name(runtime, name)
        if drop:
            point = native.resolve(native_name, values)
            resolved, dropped = point.params, {**dropped, **point.dropped}
        else:
            resolved = native.validate(native_name, values)
    else:  # an external program, or a native runtime not built in: our schema types the values
        taken = set(on.kernels[name] or values)
        if DISPATCHER in taken:
            # A program that maps our dispatchers onto its schedulers takes their parameters as
            # ours does: threads means nothing to one_thread, and is left out or refused as ours.
            if drop:
                point = native.resolve(name, values)
                typed, dropped = point.params, {**dropped, **point.dropped}
            else:
                typed = native.validate(name, values)
        else:
            typed = native.validate(name, values, scoped=False)
        resolved = {p: v for p, v in typed.items() if p in taken}
    allocator_param = kernel.param(ALLOCATOR)
    if allocator_param.taken_by(runtime):
        resolved[ALLOCATOR] = allocator or allocator_param.default
    params = {p.name: runtime if p.name == RUNTIME else resolved.get(p.name) for p in kernel.params}
    return Resolved(params, dropped)


def missing(params: Mapping[str, object]) -> str:
    """Why a point with these resolved parameters cannot run on this machine; empty if it can."""
    name = params.get(RUNTIME) or runtimes.OURS
    runtime = runtimes.runtimes().get(name)
    if runtime is None:  # a peer of a stored run that is gone
        folders = ", ".join(map(str, runtimes.peer_folders()))
        return f"runtime {name}: unknown here (no peer.toml of that name in {folders})"
    if runtime.missing:
        return f"runtime {runtime.name}: {runtime.missing}"
    return runtimes.allocator_missing(params[ALLOCATOR]) if params.get(ALLOCATOR) else ""


def unavailable(params: Mapping[str, object], measure: str) -> str:
    """Why a point cannot run on this machine (its runtime or allocator, or its measure's tools,
    are missing here); empty if it can. Asked where the point is planned (it is then stored as
    skipped) and again where it runs."""
    from labctl.catalogue import measures

    return missing(params) or measures.get(measure).missing()


def point(name: str, values: Mapping[str, object], measure: str, drop: bool = False) -> Resolved:
    """A point resolved once for whatever runs it (`labctl run`, an experiment's grid): its
    parameters, what was dropped from them and why (`drop`: a grid's; otherwise a parameter that
    does not apply is refused), and its measure checked against its runtime. Raises ParamError
    (param 'measure' for a measure the runtime cannot take)."""
    from labctl.catalogue import measures

    resolved = _resolve(name, values, drop)
    params = {name: value for name, value in resolved.params.items() if value is not None}
    runtime = str(params.get(RUNTIME) or runtimes.OURS)
    known = runtimes.runtimes().get(runtime)
    why = measures.get(measure).refused(runtime, known is not None and known.kind == "external")
    if why:
        raise _error(name, "measure", why)
    return Resolved(params, resolved.dropped)


def configuration(name: str) -> set[str]:
    """The parameters that say how a kernel runs rather than what it does (Param.configuration);
    none for a kernel this build does not have."""
    spec = catalogue().get(name)
    return {p.name for p in spec.params if p.configuration} if spec else set()


def work(name: str, params: Mapping[str, object]) -> float:
    """About how many messages a run of the kernel with these resolved parameters processes (its
    size, from the parameters alone); 0 when it cannot say or runs for a fixed time. Raises
    ParamError."""
    ours = {p.name for p in get(name).params if p.name not in (RUNTIME, ALLOCATOR)
            and (not p.runtimes or runtimes.OURS in p.runtimes)}
    return native.work(name, {k: v for k, v in params.items() if k in ours})


def memory_mb(name: str, params: Mapping[str, object]) -> float:
    """The memory, in MiB, that a run of the kernel with these resolved parameters must hold at
    least (a lower bound from the parameters alone); 0 when it cannot say, or for a kernel not of
    our runtime. Raises ParamError."""
    if params.get(RUNTIME, runtimes.OURS) != runtimes.OURS:
        return 0.0
    ours = {p.name for p in get(name).params if p.name not in (RUNTIME, ALLOCATOR)
            and (not p.runtimes or runtimes.OURS in p.runtimes)}
    return native.memory(name, {k: v for k, v in params.items() if k in ours}) / 2**20


@cache
def dispatchers() -> dict[str, Dispatcher]:
    """Our runtime's dispatchers, by name (a run keeps them in its catalogue)."""
    return {d["name"]: Dispatcher(d["name"], d["help"], tuple(d["takes"]), bool(d["thread_per_agent"]))
            for d in native.dispatchers()}


def catalogue_of(used: Sequence[str]) -> Catalogue:
    """What the analysis of a run of these kernels needs to know of them and of the dispatchers."""
    return Catalogue({name: get(name) for name in dict.fromkeys(used)}, dispatchers=dispatchers())
