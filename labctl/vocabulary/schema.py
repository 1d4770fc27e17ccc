"""What labctl knows about kernels and studies, as plain data: each kernel's parameters and
texts, the publications a run reproduces and the figures they published. kernels.py builds these
from the extension; a run stores the ones it uses (Catalogue), so that everything after the store
(results, reports, compare, the notebook) reads them back without the extension."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field

from labctl.vocabulary.text import show

# A parameter's help that opens with another's values ("work=sleep: ...") says it applies with those only.
CONDITION = re.compile(r"^(?P<name>[a-z_][a-z0-9_]*)=(?P<values>[A-Za-z0-9_.]+(?:\|[A-Za-z0-9_.]+)*): ")

OURS = "labctl"  # our runtime's name: `runtime = "labctl"`
RUNTIME = "runtime"  # the parameter every kernel of ours has: the runtime it runs on
ALLOCATOR = "allocator"  # and the worker's malloc
# An experiment's scales: its default sizes, or the study's (each grid's `full` table).
SCALES = ("default", "full")


@dataclass(frozen=True)
class Study:
    """A publication a run reproduces (labctl.catalogue.studies reads the native table of them)."""

    key: str  # how kernels and experiment files name it; empty for one an experiment describes
    title: str
    author: str  # a person, or the site that published it
    published: str  # where: a blog, a site, a library's documentation
    year: int
    url: str

    @property
    def citation(self) -> str:
        """"Title", Author, where, year. URL"""
        where = f", {self.published}" if self.published else ""
        return f'"{self.title}", {self.author}{where}, {self.year}. {self.url}'

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # integer, number, boolean, choice, text
    default: object
    help: str
    minimum: float | None
    maximum: float | None
    choices: tuple[object, ...]
    applies_to: tuple[str, ...]  # dispatchers it applies to (on our runtime); empty: all
    runtimes: tuple[str, ...] = ()  # runtimes that take it; empty: all
    # It says how the kernel runs (a dispatcher's parameter, the runtime, the allocator, another
    # runtime's own) rather than what it does (its size, its kind of work).
    configuration: bool = False
    # (dispatcher, default) where a dispatcher has a default of its own (work_stealing's budget).
    default_for: tuple[tuple[str, object], ...] = ()

    def default_text(self) -> str:
        """The default in words: "4", or "4 (work_stealing: 16)" with a dispatcher's own."""
        own = ", ".join(f"{dispatcher}: {show(value)}" for dispatcher, value in self.default_for)
        return f"{show(self.default)} ({own})" if own else show(self.default)

    @property
    def numeric(self) -> bool:
        return self.type in ("integer", "number")

    def taken_by(self, runtime: str) -> bool:
        """Whether `runtime` takes it at all (whether it fits a point's dispatcher, C++ decides:
        labctl.catalogue.kernels.point)."""
        return not self.runtimes or runtime in self.runtimes

    @property
    def condition(self) -> tuple[str, tuple[str, ...]] | None:
        """The values of another of the kernel's parameters it applies with, where its help opens
        with them, as the kernel's C++ schema writes it ("work=sleep: milliseconds a worker
        sleeps"): ("work", ("sleep",)); "a=x|y:" for several. None where it always applies."""
        found = CONDITION.match(self.help)
        return (found["name"], tuple(found["values"].split("|"))) if found else None

    def applies_with(self, params: Mapping[str, object]) -> bool:
        """Whether it applies to a point with these parameters (its condition holds, or it has
        none, or the point lacks the parameter the condition names)."""
        condition = self.condition
        if condition is None or params.get(condition[0]) is None:
            return True
        return show(params[condition[0]]) in condition[1]

    def scope(self) -> str:
        """Where it applies, in words: "runtime: labctl; dispatcher: thread_pool", or "all"."""
        parts = [f"runtime: {', '.join(self.runtimes)}"] if self.runtimes else []
        parts += [f"dispatcher on labctl: {', '.join(self.applies_to)}"] if self.applies_to else []
        return "; ".join(parts) or "all"

    def allowed(self) -> str:
        """What values are allowed, in words."""
        if self.choices:
            return " | ".join(str(c) for c in self.choices)
        if self.type == "boolean":
            return "true | false"
        low = show(self.minimum) if self.minimum is not None else None
        high = show(self.maximum) if self.maximum is not None else None
        if low is not None and high is not None:
            return f"{low}..{high}"
        if low is not None:
            return f">= {low}"
        return self.type


@dataclass(frozen=True)
class Floor:
    """A figure of another kernel that a floor kernel (a limit of the machine: a cache line's round
    trip, a futex wake-up, a bare actor loop) bounds: a report states it as a multiple of the
    floor. Declared in C++ with the floor kernel (Kernel::floor_of)."""

    kernel: str  # the bounded kernel
    metric: str  # its figure: elapsed_ns, msgs_per_s or one of its metrics
    floor_metric: str  # the floor kernel's metric in the same unit
    name: str  # the floor in words: "the cache line"
    # The bounded points' parameters (dispatcher=active_obj); left out of the hash, as a dict.
    where: dict[str, object] = field(default_factory=dict, hash=False)

    def matches(self, params: dict[str, object]) -> bool:
        """Whether a point of the bounded kernel with these parameters is bounded by this floor."""
        return all(params.get(name) == value for name, value in self.where.items())


@dataclass(frozen=True)
class Dispatcher:
    """One of our runtime's dispatchers (native/runtime/dispatchers/registry.cpp), as far as the
    analysis needs it: a run keeps these facts, so nothing after the store names a dispatcher."""

    name: str
    help: str
    takes: tuple[str, ...]  # the settings it takes: threads, fifo, max_demands_at_once
    thread_per_agent: bool  # it starts a thread per agent (active_obj)


# An open-loop kernel (the service kernel) offers a load, the parameter OFFERED (requests per
# second), and records latencies from each request's due time (OPEN_LOOP_LATENCY among them): its
# time is the length of the schedule its load sets, not a figure of merit, and its load no size.
OFFERED = "rate"
OPEN_LOOP_LATENCY = "latency_p99_ns"


@dataclass(frozen=True)
class Kernel:
    name: str
    summary: str
    description: str
    sources: tuple[tuple[str, str], ...]  # (study key, the part of it followed): labctl.catalogue.studies
    source: str  # the same in words: "Title (Author, Year), the part it follows; ..."
    verifies: str
    params: tuple[Param, ...]
    runtimes: tuple[str, ...] = (OURS,)  # the runtimes it runs on, ours first
    floor_of: tuple[Floor, ...] = ()  # a floor kernel's: the figures of other kernels it bounds
    # The figures beyond a sample's own (elapsed_ns, msgs_per_s, ...) its runs may record, on any
    # of its native runtimes (Kernel::metrics in C++, which refuses a run recording another);
    # a run's parameters may leave some out (ping_pong's percentiles with latency_samples = 0).
    # Empty in a catalogue stored before kernels declared them.
    metrics: tuple[str, ...] = ()

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def open_loop(self) -> bool:
        """Whether it offers a load and records latencies from each request's due time (OFFERED)."""
        return self.param(OFFERED) is not None and OPEN_LOOP_LATENCY in self.metrics

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Kernel:
        params = tuple(Param(**{**p, "choices": tuple(p["choices"]), "applies_to": tuple(p["applies_to"]),
                                "runtimes": tuple(p["runtimes"]),
                                "default_for": tuple(tuple(d) for d in p.get("default_for", ()))})
                       for p in data["params"])
        floors = tuple(Floor(**f) for f in data.get("floor_of", ()))  # none in a catalogue before floors
        return cls(**{**data, "sources": tuple(tuple(s) for s in data["sources"]), "params": params,
                      "runtimes": tuple(data["runtimes"]), "floor_of": floors,
                      "metrics": tuple(data.get("metrics", ()))})


@dataclass(frozen=True)
class Figure:
    """One published figure: the parameters of our point it corresponds to, or a runtime of the
    study that is not ours (`peer`). A study that prints no number for a runtime still says
    something of it: our point with no `value` (the study shows it in a graph only), a peer's
    `outcome` in words where its run gave no figure ("crashed for more than 210 actors")."""

    value: float | None  # None: the study prints no number for it
    params: dict[str, object]  # our point's parameters; empty for a peer
    peer: str | None = None  # a runtime of the study, not ours
    name: str | None = None  # what the study calls it
    outcome: str | None = None  # a peer's result that is no figure: a crash, a run not finished
    not_run: str | None = None  # a peer's: why the lab does not run that runtime
    # The study's values of our parameters where this figure's differ from its table's
    # (StudyRan.params): the threads of one column, the size of one row.
    study: dict[str, object] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Our point it stands for: dispatcher=thread_pool, fifo=individual (or the peer)."""
        return self.peer or ", ".join(f"{name}={show(value)}" for name, value in self.params.items())

    @property
    def published_as(self) -> str:
        """The figure as the study names it, where its table is printed: Theron 3.03 64-bit."""
        return self.peer or self.name or self.label

    @property
    def published(self) -> bool:
        """The study prints a number for it (else a graph only, or an outcome in words)."""
        return self.value is not None


# The statistics a study may have published of its runs, and how ours is taken of our samples
# to compare like with like (labctl.read.references.statistic).
STATISTICS = {
    "median": "the median",
    "mean": "the mean",
    "best": "the best",  # the fastest run (the lowest time, the highest throughput)
    "min": "the lowest value",  # the low end of a published range
    "max": "the highest value",
    "single": "one run",  # one run, or a figure the study does not say how it took
}


@dataclass(frozen=True)
class StudyRan:
    """What a study ran for one of its tables, as data, so that a report derives every
    difference from the run's own parameters instead of a note written by hand: the study's
    values of our kernel's parameters (sizes, work, threads), what differs that is no parameter
    of ours, and the statistic it published of its runs."""

    params: dict[str, object] = field(default_factory=dict)
    statistic: str = ""  # a key of STATISTICS; empty in a run stored before references had it
    runs: int | None = None  # how many runs that statistic is over, where the study says
    facts: tuple[str, ...] = ()  # differences that are no parameter of ours ("8 kB stacks")

    def described(self) -> str:
        """the best of 5 runs; the lowest value of its runs; one run"""
        if not self.statistic:
            return "not recorded"
        what = STATISTICS[self.statistic]
        if self.statistic == "single":
            return what
        return f"{what} of {self.runs} runs" if self.runs else f"{what} of its runs"


@dataclass(frozen=True)
class Reference:
    """Published figures of one table or list of a study, set beside our medians by ratio and
    ranking (never by absolute value: they were measured on other hardware)."""

    title: str
    source: str  # where in the study
    hardware: str
    kernel: str
    metric: str
    per: str | None
    unit: str
    lower_is_better: bool
    where: dict[str, object]
    note: str
    figures: list[Figure]
    # What the study ran; a run stored before references recorded it has an empty one, which a
    # report says it cannot compare with.
    study: StudyRan = field(default_factory=StudyRan)

    def study_params(self, figure: Figure) -> dict[str, object]:
        """The study's values of our parameters for one of its figures."""
        return {**self.study.params, **figure.study}

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Reference:
        study = data.get("study")
        return cls(**{**data, "figures": [Figure(**f) for f in data["figures"]],
                      "study": StudyRan(**{**study, "facts": tuple(study.get("facts", ()))})
                      if study else StudyRan()})


@dataclass(frozen=True)
class Claim:
    """A study's statement across two of its benchmarks, as a ratio of one figure to another
    ("50M hops take just over twice as long in parallel": ParallelThreadRing 12.0 s / ThreadRing
    5.0 s = 2.4), judged on the same ratio of our points."""

    title: str
    source: str
    metric: str
    numerator: dict[str, object]  # `kernel` and the parameters of our point
    denominator: dict[str, object]
    ratio: float  # the study's
    tolerance: float  # the claim holds here when ours is within this factor of the study's
    study: StudyRan = field(default_factory=StudyRan)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Claim:
        study = data.get("study") or {}
        return cls(**{**data, "study": StudyRan(**{**study, "facts": tuple(study.get("facts", ()))})})


@dataclass(frozen=True)
class Scenario:
    """A name an experiment gives the work of a kernel's points: the values of the kernel's own
    parameters (not those that say how it runs) that make it."""

    kernel: str
    name: str
    params: dict[str, object]


@dataclass
class Catalogue:
    """What a run's analysis needs to know besides its samples: the kernels it ran (their
    parameters and texts), the publications it reproduces and their published figures. A run
    keeps it in the store from the moment it is created."""

    kernels: dict[str, Kernel] = field(default_factory=dict)
    studies: list[Study] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    dispatchers: dict[str, Dispatcher] = field(default_factory=dict)  # none in a run before v3 of it
    claims: list[Claim] = field(default_factory=list)
    # The suite's category of each kernel, where its experiment groups them (`group` of a grid:
    # Savina's micro, concurrency...): a report summarises each group across its kernels.
    groups: dict[str, str] = field(default_factory=dict)
    # The names its experiment gives the work of a kernel's points (`scenario` of a grid: the
    # chat's "mixed", "compute"): each the kernel, the name and the values of the kernel's own
    # parameters that make it, which a report names the points that have them by.
    scenarios: list[Scenario] = field(default_factory=list)

    def scenario(self, kernel: str, params: Mapping[str, object]) -> str | None:
        """The name of the scenario of `kernel` whose parameters `params` all have (of several,
        the one that names the most), if one has."""
        matching = [one for one in self.scenarios
                    if one.kernel == kernel and all(params.get(name) == value for name, value in one.params.items())]
        return max(matching, key=lambda one: len(one.params)).name if matching else None

    def thread_per_agent(self, params: dict[str, object]) -> bool:
        """Whether a point with these parameters runs each agent on a thread of its own."""
        dispatcher = self.dispatchers.get(str(params.get("dispatcher")))
        return dispatcher is not None and dispatcher.thread_per_agent

    def params(self, kernel: str) -> tuple[Param, ...]:
        spec = self.kernels.get(kernel)
        return spec.params if spec else ()

    def open_loop(self, kernel: str) -> bool:
        """Whether `kernel` is open loop (Kernel.open_loop); False for a kernel it does not know."""
        spec = self.kernels.get(kernel)
        return spec is not None and spec.open_loop

    def merged(self, other: Catalogue) -> Catalogue:
        """Both runs' kernels (the first's where both have one), studies, references and groups."""
        return Catalogue({**other.kernels, **self.kernels},
                         self.studies + [s for s in other.studies if s not in self.studies],
                         self.references + [r for r in other.references if r not in self.references],
                         {**other.dispatchers, **self.dispatchers},
                         self.claims + [c for c in other.claims if c not in self.claims],
                         {**other.groups, **self.groups},
                         self.scenarios + [c for c in other.scenarios if c not in self.scenarios])

    def to_json(self) -> dict:
        return {"kernels": {name: k.to_json() for name, k in self.kernels.items()},
                "studies": [s.to_dict() for s in self.studies],
                "references": [r.to_json() for r in self.references],
                "dispatchers": {name: asdict(d) for name, d in self.dispatchers.items()},
                "claims": [c.to_json() for c in self.claims],
                "groups": dict(self.groups),
                "scenarios": [asdict(one) for one in self.scenarios]}

    @classmethod
    def from_json(cls, data: dict) -> Catalogue:
        return cls({name: Kernel.from_json(k) for name, k in data.get("kernels", {}).items()},
                   [Study(**s) for s in data.get("studies", [])],
                   [Reference.from_json(r) for r in data.get("references", [])],
                   {name: Dispatcher(**{**d, "takes": tuple(d["takes"])})
                    for name, d in data.get("dispatchers", {}).items()},
                   [Claim.from_json(c) for c in data.get("claims", [])],
                   dict(data.get("groups", {})),
                   [Scenario(**one) for one in data.get("scenarios", [])])


# The parameters that said how a kernel ran, for runs stored before their catalogue was (v3).
_STORED_BEFORE_V3 = {"dispatcher", "threads", "fifo", "max_demands_at_once", "spin_us", "pin",
                     "policy", RUNTIME, ALLOCATOR}


def inferred(points: Iterable[tuple[str, dict]]) -> Catalogue:
    """A catalogue for a run stored without one (a store older than v3): each kernel's
    parameters in the order its points give them, typed by their values; no texts, studies or
    published figures."""
    names: dict[str, dict[str, object]] = {}
    for kernel, params in points:
        seen = names.setdefault(kernel, {})
        for name, value in params.items():
            seen.setdefault(name, value)
    def param(name: str, value: object) -> Param:
        kind = ("boolean" if isinstance(value, bool) else "integer" if isinstance(value, int)
                else "number" if isinstance(value, float) else "text")
        return Param(name, kind, value, "", None, None, (), (), (), name in _STORED_BEFORE_V3)
    return Catalogue({kernel: Kernel(kernel, "", "", (), "", "", tuple(param(n, v) for n, v in seen.items()))
                      for kernel, seen in names.items()})
