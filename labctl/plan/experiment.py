"""Experiment files: load and validate a TOML file, and expand its grids into a Plan of points.

The file's shape is checked by pydantic models; every parameter value by the kernels' native
schema. A bad file is refused before anything runs, naming the file, the key and what is allowed.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from labctl.catalogue import kernels, native, studies
from labctl.vocabulary import inputs, metrics, shipped
from labctl.vocabulary.point import Point
from labctl.vocabulary.schema import SCALES, STATISTICS, Catalogue, Claim, Figure, Reference, Scenario, Study, StudyRan
from labctl.vocabulary.text import printable

Scalar = Union[StrictBool, StrictInt, StrictFloat, StrictStr]

# The settings are strict: `repeats = true`, `timeout_s = "60"` or `rlimit_mb = 2.0` are refused,
# not read as 1, 60 and 2. Their bounds keep every accepted value usable where it goes: a timeout
# past what the platform can wait for, a limit past what setrlimit takes, or a seed past SQLite's
# 64-bit integers would fail in the middle of a sweep instead.
MAX_TIMEOUT_S, MAX_RLIMIT_MB = inputs.MAX_TIMEOUT_S, inputs.MAX_RLIMIT_MB
Repeats = Annotated[int, Field(strict=True, ge=1, le=inputs.MAX_REPEATS)]
Warmup = Annotated[int, Field(strict=True, ge=0, le=inputs.MAX_WARMUP)]
TimeoutS = Annotated[float, Field(strict=True, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)]
RlimitMb = Annotated[int, Field(strict=True, ge=1, le=MAX_RLIMIT_MB)]
Seed = Annotated[int, Field(strict=True, ge=-2**63, le=2**63 - 1)]
Measure = Literal[metrics.MEASURES]  # type: ignore[valid-type]


class ExperimentError(ValueError):
    """A bad experiment file: the message names the file, the key and what is allowed."""


Axes = dict[str, Annotated[list[Scalar], Field(min_length=1)]]


class FullSpec(BaseModel):
    """What `--scale full` changes in a grid: the study's sizes, merged over params and axes."""

    model_config = ConfigDict(extra="forbid")

    params: dict[str, Scalar] = {}
    axes: Axes = {}


class GridSpec(BaseModel):
    """One kernel, fixed parameters and axes to vary; a point per combination of axis values."""

    model_config = ConfigDict(extra="forbid")

    kernel: str
    params: dict[str, Scalar] = {}
    axes: Axes = {}
    full: FullSpec | None = None
    # A combination matching every key of a rule (a value, or a list of values) is left out.
    exclude: list[dict[str, Union[Scalar, list[Scalar]]]] = []
    repeats: Repeats | None = None
    warmup: Warmup | None = None
    timeout_s: TimeoutS | None = None
    rlimit_mb: RlimitMb | None = None
    measure: Measure | None = None
    env: dict[str, str] = {}  # environment of the worker process (e.g. LD_PRELOAD)
    cpus: str | None = None  # pin the worker process: cores of the inherited CPU set, "0-1"
    # The suite's category of the grid's kernel (Savina's micro, concurrency, parallelism): a
    # report summarises each group across its kernels. A kernel belongs to one group.
    group: Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _-]*$")] | None = None
    # The name of the work the grid's points do (the study's: the chat's "mixed", "compute"),
    # which reports give them in place of the values of the kernel's own parameters.
    scenario: Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _-]*$")] | None = None


class FigureSpec(BaseModel):
    """One published figure: the parameters of our point it corresponds to (any kernel parameter
    as a key), or `peer`, a runtime of the study that is not ours (placed in the ranking only)."""

    model_config = ConfigDict(extra="allow")

    # Absent where the study prints no number for it: our point it shows in a graph only, or a
    # peer whose run gave none (`outcome`).
    value: Annotated[float, Field(strict=False, gt=0, allow_inf_nan=False)] | None = None
    peer: str | None = None
    name: str | None = None  # what the study calls the figure of ours, e.g. "Theron 3.03 64-bit"
    outcome: Annotated[str, Field(min_length=1)] | None = None  # a peer's: "crashed for more than 210 actors"
    # A peer's: why the lab does not run that runtime ("not packaged in Debian 12"); a runtime the
    # lab runs is a figure of ours with `runtime = "<name>"` instead, measured beside the rest.
    not_run: Annotated[str, Field(min_length=1)] | None = None
    # The study's values of our parameters where this figure's differ from its table's.
    study: dict[str, Scalar] = {}


class StudyRanSpec(BaseModel):
    """What the study ran for a table: its values of our kernel's parameters, the statistic it
    published of its runs, and what differs that is no parameter of ours (labctl.vocabulary.schema.StudyRan)."""

    model_config = ConfigDict(extra="forbid")

    params: dict[str, Scalar] = {}
    statistic: Literal[tuple(STATISTICS)]  # type: ignore[valid-type]
    runs: Annotated[int, Field(strict=True, ge=1)] | None = None
    facts: list[Annotated[str, Field(min_length=1)]] = []


class ReferenceSpec(BaseModel):
    """Published figures of one table or list of a study, compared with our points by ratios and
    rankings, never by absolute value: they were measured on other hardware."""

    model_config = ConfigDict(extra="forbid")

    title: Annotated[str, Field(min_length=1)]
    source: Annotated[str, Field(min_length=1)]  # the seed file and where in it
    hardware: Annotated[str, Field(min_length=1)]
    kernel: str
    metric: str = "elapsed_ns"  # our column compared: elapsed_ns, msgs_per_s or a kernel metric
    per: str | None = None  # a parameter our metric is divided by (e.g. leaves: time per leaf)
    unit: Annotated[str, Field(min_length=1)]  # of the published values, as printed
    better: Literal["lower", "higher"] | None = None  # default: lower for *_ns, else higher
    where: dict[str, Scalar] = {}  # parameters every matching point of ours has
    note: str = ""
    study: StudyRanSpec  # what the study ran: the report derives every difference from it
    figures: Annotated[list[FigureSpec], Field(min_length=1)]


class ClaimSpec(BaseModel):
    """A study's statement across two benchmarks, as the ratio of two of its figures: judged on
    the same ratio of our points (labctl.vocabulary.schema.Claim)."""

    model_config = ConfigDict(extra="forbid")

    title: Annotated[str, Field(min_length=1)]
    source: Annotated[str, Field(min_length=1)]
    metric: str = "elapsed_ns"
    numerator: dict[str, Scalar]  # kernel = "...", and the parameters of our point
    denominator: dict[str, Scalar]
    ratio: Annotated[float, Field(strict=False, gt=0, allow_inf_nan=False)]
    tolerance: Annotated[float, Field(strict=False, ge=1, allow_inf_nan=False)] = 1.25
    study: StudyRanSpec


class StudySpec(BaseModel):
    """A publication the experiment reproduces that labctl does not know by key."""

    model_config = ConfigDict(extra="forbid")

    title: Annotated[str, Field(min_length=1)]
    author: Annotated[str, Field(min_length=1)]  # a person, or the site that published it
    published: str = ""  # where: a blog, a site, a journal
    year: StrictInt
    url: Annotated[str, Field(min_length=1)]


StudyRef = Union[StrictStr, StudySpec]  # a key of labctl.catalogue.studies, or a publication in full


class ExperimentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(min_length=1)]
    description: str = ""
    # The publications it reproduces: `study = "theron_303"`, a list of keys, or [[study]] tables.
    study: Union[StudyRef, list[StudyRef]] = []
    repeats: Repeats = 5
    warmup: Warmup = 1
    timeout_s: TimeoutS = 600.0
    # The worker's address-space limit (RLIMIT_AS) in MiB; thread stacks count (8 MiB each).
    rlimit_mb: RlimitMb | None = None
    # How each point is measured (labctl.catalogue.measures): the clock, or counts of what its phase ran.
    measure: Measure = "time"
    order: Literal["random", "grid"] = "random"
    seed: Seed | None = None  # of the random order; derived from the text when absent, recorded
    grid: Annotated[list[GridSpec], Field(min_length=1)]
    reference: list[ReferenceSpec] = []
    claim: list[ClaimSpec] = []


@dataclass
class Plan:
    name: str
    description: str
    source: str  # the experiment file
    text: str  # its content, kept with the run
    order: str
    seed: int | None
    points: list[Point]  # in the order they run
    notes: list[str]  # what expansion dropped or merged, in words
    scale: str = "default"
    references: list[Reference] = field(default_factory=list)
    studies: list[Study] = field(default_factory=list)  # the publications it reproduces
    claims: list[Claim] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)  # kernel -> its grid's group
    scenarios: list[Scenario] = field(default_factory=list)  # the grids' named works

    @property
    def catalogue(self) -> Catalogue:
        """What its analysis needs besides the samples, kept with the run (labctl.vocabulary.schema)."""
        catalogue = kernels.catalogue_of([point.kernel for point in self.points])
        catalogue.studies, catalogue.references = list(self.studies), list(self.references)
        catalogue.claims, catalogue.groups = list(self.claims), dict(self.groups)
        catalogue.scenarios = list(self.scenarios)
        return catalogue


# An experiment file is a few kilobytes of TOML; past this it is refused unread.
MAX_FILE_BYTES = 1 << 20


def load(file_or_name: str | Path, seed: int | None = None, scale: str = "default") -> Plan:
    """Reads, validates and expands an experiment file, given by path or by the name of a
    shipped experiment (the plan's source is what was given). Raises ExperimentError."""
    path = locate(str(file_or_name))
    try:
        text = inputs.read_text(path, "an experiment file", MAX_FILE_BYTES)
    except inputs.InputError as error:
        raise ExperimentError(printable(str(error))) from None
    return parse(text, str(file_or_name), seed, scale)


def parse(text: str, source: str, seed: int | None = None, scale: str = "default") -> Plan:
    """Validates and expands an experiment's text; `scale` "full" applies each grid's `full`
    table (the study's sizes). Raises ExperimentError."""
    if scale not in SCALES:
        raise ExperimentError(f"scale: unknown scale '{scale}' (scales: {', '.join(SCALES)})")
    try:
        data = inputs.parse_toml(text, source)
    except inputs.InputError as error:
        raise ExperimentError(printable(str(error))) from None
    try:
        spec = ExperimentSpec.model_validate(data)
    except ValidationError as error:
        raise ExperimentError(_describe_validation(source, error)) from None

    points: list[Point] = []
    notes: list[str] = []
    seen: set[str] = set()
    grids = [grid.model_copy(update={"params": {**grid.params, **grid.full.params},
                                     "axes": {**grid.axes, **grid.full.axes}})
             if scale == "full" and grid.full is not None else grid for grid in spec.grid]
    combinations = sum(math.prod(len(values) for values in grid.axes.values()) for grid in grids)
    if combinations > MAX_POINTS:
        raise ExperimentError(printable(f"{source}: its grids have {combinations} combinations; a file "
                                        f"expands to at most {MAX_POINTS} points (split it, or fix an axis)"))
    try:
        for index, grid in enumerate(grids):
            for point in _expand(spec, grid, f"{source}: grid[{index}]", notes):
                if point.key not in seen:
                    seen.add(point.key)
                    points.append(point)
        references = [_reference(spec, ref, f"{source}: reference[{index}]")
                      for index, ref in enumerate(spec.reference)]
        claims = [_claim(spec, claim, f"{source}: claim[{index}]") for index, claim in enumerate(spec.claim)]
        cited = _studies(spec, f"{source}: study")
        groups = _groups(spec, source)
        named = _scenarios(grids, source)
    except ExperimentError as error:  # one line, quoting the file's text (a key, a value) as is
        raise ExperimentError(printable(str(error))) from None
    if spec.order == "random":
        seed = seed if seed is not None else spec.seed
        if seed is None:  # from the text: `plan` and the `sweep` after it run the same order
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") >> 1
        random.Random(seed).shuffle(points)
    else:
        seed = None
    return Plan(spec.name, spec.description, source, text, spec.order, seed, points, notes,
                scale, references, cited, claims, groups, named)


def _scenarios(grids: list[GridSpec], source: str) -> list[Scenario]:
    """The grids' named works: each the values the grid gives the kernel's own parameters (those
    that do not say how it runs). A name is one work: a grid that varies one of them on an axis
    is refused, as are one name for two works and two names for one."""
    found: dict[tuple[str, str], tuple[int, dict]] = {}
    for index, grid in enumerate(grids):
        if grid.scenario is None:
            continue
        own = {p.name for p in kernels.get(grid.kernel).params if not p.configuration}
        if varied := sorted(own & set(grid.axes)):
            raise ExperimentError(f"{source}: grid[{index}].scenario: '{grid.scenario}' names one work, "
                                  f"but the grid varies {', '.join(varied)} on an axis; give each value a grid")
        params = {name: value for name, value in grid.params.items() if name in own}
        for (kernel, name), (other, given) in found.items():
            if kernel != grid.kernel:
                continue
            if name == grid.scenario and given != params:
                raise ExperimentError(f"{source}: grid[{index}].scenario: '{name}' names another work of "
                                      f"{kernel} in grid[{other}]; a name is one work")
            if name != grid.scenario and given == params:
                raise ExperimentError(f"{source}: grid[{index}].scenario: grid[{other}] names the same work "
                                      f"of {kernel} '{name}'; give it one name")
        found.setdefault((grid.kernel, grid.scenario), (index, params))
    return [Scenario(kernel, name, params) for (kernel, name), (_, params) in found.items()]


def _groups(spec: ExperimentSpec, source: str) -> dict[str, str]:
    """Each grouped kernel's group; a kernel two grids put in different groups is refused."""
    groups: dict[str, str] = {}
    where: dict[str, int] = {}
    for index, grid in enumerate(spec.grid):
        if grid.group is None:
            continue
        if groups.setdefault(grid.kernel, grid.group) != grid.group:
            raise ExperimentError(f"{source}: grid[{index}].group: kernel '{grid.kernel}' is in group "
                                  f"'{groups[grid.kernel]}' in grid[{where[grid.kernel]}]; a kernel "
                                  "belongs to one group")
        where.setdefault(grid.kernel, index)
    return groups


def _studies(spec: ExperimentSpec, where: str) -> list[Study]:
    given = spec.study if isinstance(spec.study, list) else [spec.study]
    known = studies.catalogue()
    cited = []
    for number, study in enumerate(given):
        if isinstance(study, StudySpec):
            cited.append(Study("", **study.model_dump()))
        elif study in known:
            cited.append(known[study])
        else:
            place = where if len(given) == 1 and not isinstance(spec.study, list) else f"{where}[{number}]"
            raise ExperimentError(f"{place}: unknown study '{study}' (studies: {', '.join(known)}; "
                                  "or give a [[study]] table with title, author, year and url)")
    return cited


def shipped_experiments() -> dict[str, Path]:
    """The experiment files labctl ships (the studies, quickstart...), by name."""
    found = shipped.folder("experiments")
    return {path.stem: path for path in sorted(found.glob("*.toml"))} if found else {}


def locate(file_or_name: str) -> Path:
    """An experiment file from a path or the name of a shipped experiment (a path that exists
    wins). Raises ExperimentError naming the shipped experiments."""
    path = Path(file_or_name)
    if path.exists() or path.is_symlink():
        return path
    known = shipped_experiments()
    if file_or_name in known:
        return known[file_or_name]
    names = ", ".join(known) or "none in this install"
    raise ExperimentError(printable(f"{file_or_name}: no such file, and no experiment of that name "
                                     f"(experiments: {names}; `labctl experiments` lists them)"))


def _reference(spec: ExperimentSpec, ref: ReferenceSpec, where: str) -> Reference:
    """Checks a reference against its kernel's parameters and the file's grids."""
    try:
        kernel = kernels.get(ref.kernel)
    except kernels.ParamError:
        known = ", ".join(sorted(kernels.catalogue()))
        raise ExperimentError(f"{where}.kernel: unknown kernel '{ref.kernel}' (kernels: {known})") from None
    if not any(grid.kernel == ref.kernel for grid in spec.grid):
        raise ExperimentError(f"{where}.kernel: no grid of this file runs '{ref.kernel}'")
    names = [p.name for p in kernel.params]

    def check(values: dict, section: str) -> None:
        for name, value in values.items():
            param = kernel.param(name)
            if param is None:
                raise ExperimentError(f"{where}.{section}.{name}: unknown parameter of {kernel.name} "
                                      f"(parameters: {', '.join(names)})")
            _check_type(param, value, f"{where}.{section}.{name}")
            if param.choices and value not in param.choices:
                raise ExperimentError(f"{where}.{section}.{name}: {value!r} is not "
                                      f"{param.allowed()}")

    _check_metric(kernel, ref.metric, f"{where}.metric")
    if ref.per is not None and kernel.param(ref.per) is None:
        raise ExperimentError(f"{where}.per: unknown parameter of {kernel.name} "
                              f"(parameters: {', '.join(names)})")
    check(ref.where, "where")
    check(ref.study.params, "study.params")
    figures = []
    for number, figure in enumerate(ref.figures):
        params = dict(figure.model_extra or {})
        if figure.peer is not None and (params or figure.study):
            raise ExperimentError(f"{where}.figures[{number}]: a peer's figure names no parameters "
                                  f"of ours (got {', '.join([*params, *figure.study])})")
        if figure.peer is None and figure.outcome is not None:
            raise ExperimentError(f"{where}.figures[{number}].outcome: only a peer's figure has an "
                                  "outcome; ours is measured (leave out value where the study prints none)")
        if figure.peer is None and figure.not_run is not None:
            raise ExperimentError(f"{where}.figures[{number}].not_run: only a peer's figure is not run "
                                  "here; a figure of ours is a point of this run")
        if figure.peer is not None and (figure.value is None) == (figure.outcome is None):
            raise ExperimentError(f"{where}.figures[{number}]: a peer's figure gives a value or an "
                                  "outcome (what its run gave instead of a figure), one of the two")
        check(params, f"figures[{number}]")
        check(figure.study, f"figures[{number}].study")
        figures.append(Figure(figure.value, params, peer=figure.peer, name=figure.name,
                              outcome=figure.outcome, not_run=figure.not_run, study=dict(figure.study)))
    if not any(figure.published or figure.outcome for figure in figures):
        raise ExperimentError(f"{where}.figures: none gives a value: a reference records at least "
                              "one of the study's results (a value, or a peer's outcome)")
    if not any(figure.peer is None for figure in figures):
        raise ExperimentError(f"{where}.figures: no figure corresponds to a point of ours "
                              f"(every one is a peer)")
    unnamed = [number for number, figure in enumerate(figures) if figure.peer is None and not figure.name]
    if unnamed and len(unnamed) < len(figures):  # the study's runtimes are listed beside its own
        raise ExperimentError(f"{where}.figures[{unnamed[0]}]: no name: where a table lists the "
                              "study's other runtimes (peer), each figure of ours gives the study's "
                              "own name for it (name = \"Theron 3.03 64-bit\")")
    lower = ref.better == "lower" if ref.better else metrics.lookup(ref.metric).lower_is_better
    study = StudyRan(dict(ref.study.params), ref.study.statistic, ref.study.runs, tuple(ref.study.facts))
    return Reference(ref.title, ref.source, ref.hardware, kernel.name, ref.metric, ref.per, ref.unit,
                     lower, dict(ref.where), ref.note, figures, study)


def _claim(spec: ExperimentSpec, claim: ClaimSpec, where: str) -> Claim:
    """Checks each side of a claim names a kernel a grid of the file runs, and its parameters."""
    for side in ("numerator", "denominator"):
        point = dict(getattr(claim, side))
        name = point.pop("kernel", None)
        try:
            kernel = kernels.get(str(name))
        except kernels.ParamError:
            raise ExperimentError(f"{where}.{side}.kernel: {'missing' if name is None else repr(name)}: "
                                  f"give a kernel of this file's grids") from None
        if not any(grid.kernel == kernel.name for grid in spec.grid):
            raise ExperimentError(f"{where}.{side}.kernel: no grid of this file runs '{kernel.name}'")
        for param, value in point.items():
            if kernel.param(param) is None:
                raise ExperimentError(f"{where}.{side}.{param}: unknown parameter of {kernel.name} "
                                      f"(parameters: {', '.join(p.name for p in kernel.params)})")
            _check_type(kernel.param(param), value, f"{where}.{side}.{param}")
        _check_metric(kernel, claim.metric, f"{where}.metric")
    study = StudyRan(dict(claim.study.params), claim.study.statistic, claim.study.runs,
                     tuple(claim.study.facts))
    return Claim(claim.title, claim.source, claim.metric, dict(claim.numerator), dict(claim.denominator),
                 claim.ratio, claim.tolerance, study)


def _check_metric(kernel: kernels.Kernel, name: str, where: str) -> None:
    """A figure compared with a study's is one the kernel records: a sample's own (elapsed_ns,
    msgs_per_s...), a measure's count, or a metric the kernel declares (Kernel.metrics), so a
    reference cannot name one that every run leaves out."""
    if name in metrics.REGISTRY or name in kernel.metrics:
        return
    allowed = ", ".join([*metrics.SAMPLE, *kernel.metrics])
    raise ExperimentError(f"{where}: '{name}' is no figure {kernel.name} records (its figures: "
                          f"{allowed}; or a measure's count: {', '.join(metrics.COUNTS)})")


def _describe_validation(source: str, error: ValidationError) -> str:
    lines = []
    for problem in error.errors():
        location = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in problem["loc"])
        location = location.lstrip(".") or "(top level)"
        if problem["type"] == "extra_forbidden":
            message = "unknown key"
        elif problem["type"] == "missing":
            message = "missing (required)"
        else:
            message = problem["msg"]
            if "input" in problem and problem["type"] not in ("too_short",):
                message += f", got {problem['input']!r}"
        lines.append(printable(f"{source}: {location}: {message}"))
    return "\n".join(lines)


def _check_type(param: kernels.Param, value: object, where: str) -> None:
    """A value of a file is of its parameter's type: TOML says what a value is, so "1e2" is a
    string and `yes` no boolean (the command line's strings are parsed; a file's are not)."""
    fits = {"integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "boolean": isinstance(value, bool)}.get(param.type, isinstance(value, str))
    if not fits:
        kind = {"integer": "an integer", "number": "a number", "boolean": "true or false"}.get(
            param.type, "a string")
        quoted = " (a string: write it without quotes)" if isinstance(value, str) else ""
        raise ExperimentError(f"{where}: must be {kind} ({param.allowed()}), got {value!r}{quoted}")
    # TOML has nan and inf; no parameter means either. NaN passes every comparison with a bound
    # (nan < 1 and nan > 1 are both false), so C++'s range check lets it through: fan with
    # duration_s = nan ran one iteration and stored it as a verified sample. (A finite value out
    # of range is C++'s to refuse, where the point resolves: the schema's one check.)
    if isinstance(value, float) and not math.isfinite(value):
        raise ExperimentError(f"{where}: must be a finite number ({param.allowed()}), got {value!r}")



# A file expands to at most this many points: past it, a grid is surely a mistake (an axis of a
# million values, ten axes of ten), refused before any of it is built.
MAX_POINTS = 10_000


def _expand(spec: ExperimentSpec, grid: GridSpec, where: str, notes: list[str]):
    try:
        kernel = kernels.get(grid.kernel)
    except kernels.ParamError:
        known = ", ".join(sorted(kernels.catalogue()))
        raise ExperimentError(f"{where}.kernel: unknown kernel '{grid.kernel}' (kernels: {known})") from None
    names = [p.name for p in kernel.params]
    for section, values in (("params", grid.params), ("axes", grid.axes)):
        for name in values:
            if name not in names:
                raise ExperimentError(f"{where}.{section}.{name}: unknown parameter of {kernel.name} "
                                      f"(parameters: {', '.join(names)})")
    for name in set(grid.params) & set(grid.axes):
        raise ExperimentError(f"{where}.axes.{name}: also fixed in params; give it in one place")
    for number, rule in enumerate(grid.exclude):
        for name in rule:
            if name not in names:
                raise ExperimentError(f"{where}.exclude[{number}].{name}: unknown parameter of "
                                      f"{kernel.name} (parameters: {', '.join(names)})")
    for section, values in (("params", grid.params), ("axes", grid.axes)):
        for name, value in values.items():
            for number, item in enumerate(value if section == "axes" else [value]):
                _check_type(kernel.param(name), item,
                            f"{where}.{section}.{name}" + (f"[{number}]" if section == "axes" else ""))
    for name, value in grid.env.items():
        if not name or "=" in name or "\0" in name or "\0" in value:
            raise ExperimentError(f"{where}.env: {name!r} = {value!r} is not an environment entry "
                                  "(a name without '=' or NUL, a value without NUL)")
    cpus = _worker_cpus(grid.cpus, f"{where}.cpus")

    excluded = 0
    dropped: dict[tuple[str, str], int] = {}  # (parameter, why C++ left it out) -> points
    used: set[str] = set()
    produced = []
    measure = grid.measure or spec.measure
    excludes = _exclusions(grid)
    for combination in itertools.product(*(range(len(values)) for values in grid.axes.values())):
        if excludes(combination):
            excluded += 1
            continue
        values = {**grid.params, **{name: grid.axes[name][index] for name, index in zip(grid.axes, combination)}}
        try:
            resolved = kernels.point(kernel.name, values, measure, drop=True)
        except kernels.ParamError as error:
            if error.param == "measure":
                raise ExperimentError(f"{where}.measure: {str(error).removeprefix(kernel.name + ': ')}") from None
            section = "axes" if error.param in grid.axes else "params"
            raise ExperimentError(f"{where}.{section}.{error.param}: {error}") from None
        for name, why in resolved.dropped.items():
            dropped[name, why] = dropped.get((name, why), 0) + 1
        used.update(name for name in values if name not in resolved.dropped)
        produced.append(Point(
            kernel=kernel.name,
            params=resolved.params,
            repeats=grid.repeats or spec.repeats,
            warmup=grid.warmup if grid.warmup is not None else spec.warmup,
            timeout_s=grid.timeout_s or spec.timeout_s,
            env=dict(grid.env),
            cpus=cpus,
            rlimit_mb=grid.rlimit_mb or spec.rlimit_mb,
            measure=measure,
            skip=kernels.unavailable(resolved.params, measure),
        ))
    if not produced:
        raise ExperimentError(f"{where}: empty grid: every combination is excluded")
    for section, values in (("params", grid.params), ("axes", grid.axes)):
        for name in values:
            if name not in used:
                raise ExperimentError(f"{where}.{section}.{name}: applies to none of the grid's points "
                                      f"(it applies with {kernel.param(name).scope()})")
    if excluded:
        notes.append(f"{where.split(': ')[-1]} ({kernel.name}): {excluded} combinations excluded by rules")
    for (name, why), count in sorted(dropped.items()):
        notes.append(f"{where.split(': ')[-1]} ({kernel.name}): {name} left out of {count} points: "
                     f"it {why}; equal points merged")
    skipped = [point for point in produced if point.skip]
    for reason in sorted({point.skip for point in skipped}):
        count = sum(point.skip == reason for point in skipped)
        notes.append(f"{where.split(': ')[-1]} ({kernel.name}): {count} points will be skipped: {reason}")
    return produced


def _exclusions(grid: GridSpec):
    """Whether a combination of the grid's axes (an index into each) is excluded by one of its
    rules. A rule matches a combination holding every key of it at one of its values (==, so
    1, 1.0 and true are one value, as in a list). Each axis value holds the set of rules it
    satisfies as the bits of an integer; a combination is excluded when the AND of its values'
    sets is not empty: a few integer operations per point however many rules there are (a rule
    tried against each point in turn took 30 s for 5,000 rules and 10,000 points)."""
    rules = []
    for rule in grid.exclude:
        wanted = {name: value if isinstance(value, list) else [value] for name, value in rule.items()}
        # A key the grid does not give never matches; a fixed parameter matches every point or none.
        if all(name in grid.axes or (name in grid.params and grid.params[name] in options)
               for name, options in wanted.items()):
            rules.append(wanted)
    everyone = (1 << len(rules)) - 1
    satisfied = []  # per axis, per value: the rules it satisfies
    for name, values in grid.axes.items():
        free = everyone  # the rules that do not name this axis
        where: dict[object, list[int]] = {}  # a value -> its indices on the axis (1 and 1.0: one key)
        for index, value in enumerate(values):
            where.setdefault(value, []).append(index)
        bits = [0] * len(values)
        for number, rule in enumerate(rules):
            if name in rule:
                free &= ~(1 << number)
                for option in rule[name]:
                    for index in where.get(option, ()):
                        bits[index] |= 1 << number
        satisfied.append([free | bit for bit in bits])

    def excludes(combination: tuple[int, ...]) -> bool:
        left = everyone
        for axis, index in enumerate(combination):
            left &= satisfied[axis][index]
            if not left:
                return False
        return bool(left)

    return excludes


def _worker_cpus(spec: str | None, where: str) -> tuple[int, ...] | None:
    """OS CPU numbers for a core list of the inherited CPU set (core 0 is the first allowed)."""
    if spec is None:
        return None
    allowed = native.allowed_cpus()
    cores: list[int] = []
    for item in spec.split(","):
        first, _, last = item.partition("-")
        try:
            if not item.isascii():  # int() would take any script's digits
                raise ValueError(item)
            first, last = int(first), int(last or first)
        except ValueError:
            first = last = -1
        if last < first or first < 0:
            raise ExperimentError(f"{where}: '{spec}' is not a core list such as 0,1 or 0-3")
        # Bounds before expanding: a range such as 0-99999999999 is refused, not built.
        if last >= len(allowed):
            outside = first if first >= len(allowed) else last
            raise ExperimentError(f"{where}: core {outside} is outside the {len(allowed)} CPUs "
                                  f"this process may use (cores 0-{len(allowed) - 1})")
        cores.extend(range(first, last + 1))
    return tuple(sorted({allowed[core] for core in cores}))
