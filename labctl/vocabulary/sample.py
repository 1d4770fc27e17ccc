"""What a sample is, in one place: the fields every sample of every kernel has, on every runtime,
as the worker reports them (Sample), the store keeps them (STORED: a column each) and
labctl.read.results gives them (COLUMNS). A new field is one line of Sample and of STORED, and a
migration of the store (labctl.store.MIGRATIONS); a new count is none of these, only an entry of
labctl.vocabulary.metrics' registry: counts are kept by name. Metric names a kernel or an external program
reports may not be any of the column names."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from labctl.vocabulary import metrics


@dataclass
class Sample:
    """One run of a point, as the worker reports it (one JSON object per line)."""

    kernel: str
    params: dict  # resolved, as the point has them
    index: int  # counts the point's measured runs from 0 (and its warm-ups, separately)
    warmup: bool  # a warm-up run: reported, never stored
    elapsed_ns: int  # the measured phase, timed inside the kernel
    messages_processed: int
    answer: str
    expected: str  # what its parameters say a correct run answers (`verified`)
    metrics: dict[str, float] = field(default_factory=dict)  # the kernel's own figures
    thread_cpu_ns: list[int] = field(default_factory=list)  # per runtime thread, over the phase
    pid: int | None = None  # of the worker (or of the external program)
    peak_rss_kb: int | None = None
    voluntary_switches: int | None = None
    involuntary_switches: int | None = None
    # How the point is measured (labctl.vocabulary.metrics.MEASURE): kept with the point, not the sample.
    # Under `instructions` the elapsed time was taken under valgrind.
    measure: str = "time"
    # What the measured phase executed, counted, by name (labctl.vocabulary.metrics.COUNTS): instructions,
    # l1_misses and cache_misses are callgrind's (simulated misses) under `instructions`; under
    # `counters`, perf_event's (the CPU's instructions in user space). A count the measure does
    # not take, or this machine lacks, is absent, never 0.
    # Beside them, under every measure, what our runtime counted of the phase
    # (labctl.vocabulary.metrics.RUNTIME_COUNTS: agents created, inbox takes, idle time...); a peer has none.
    counts: dict[str, int] = field(default_factory=dict)
    unsupported: dict[str, str] = field(default_factory=dict)  # counter -> why it is absent here
    schedule_dependent: bool | None = None  # counts that depend on how threads interleaved
    # A latency kernel's histogram (the service's, on every runtime): [lowest value (ns), count]
    # for each bucket that counted a value, lowest first, in HdrHistogram's layout at 2
    # significant digits (a bucket holds the values within 1% above its lowest); empty otherwise.
    histogram: list[list[int]] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return verified(self.answer, self.expected)

    def to_json(self) -> dict:
        """Its fields, and `verified` for whoever reads the JSON (`labctl run --json`)."""
        return {**asdict(self), "verified": self.verified}

    @classmethod
    def from_json(cls, data: dict) -> Sample:
        names = {f.name for f in fields(cls)}
        return cls(**{name: value for name, value in data.items() if name in names})


def verified(answer: str, expected: str) -> bool:
    """Whether a run answered what its parameters say a correct run answers: decided here, for a
    sample as the worker reports it and as the store gives it back. (A kernel of ours refuses to
    report a wrong answer, and the worker refuses a peer's, so a stored sample is verified unless
    the store was changed; the store keeps the answer and the expected one, not the verdict.)"""
    return answer == expected


# The fields the store keeps, in its samples table's column order, with their SQL types; a dict
# or a list is kept as JSON. (The point, the repeat and the time it was recorded come first and
# last: see labctl.store.)
STORED: tuple[tuple[str, str], ...] = (
    ("elapsed_ns", "INTEGER NOT NULL"),
    ("messages_processed", "INTEGER NOT NULL"),
    ("answer", "TEXT NOT NULL"),
    ("expected", "TEXT NOT NULL"),
    ("metrics", "TEXT NOT NULL"),  # JSON
    ("thread_cpu_ns", "TEXT NOT NULL"),  # JSON list
    ("peak_rss_kb", "INTEGER"),
    ("voluntary_switches", "INTEGER"),
    ("involuntary_switches", "INTEGER"),
    ("pid", "INTEGER"),
    # JSON {count name: integer} (v6): a count not taken is absent. One column for them all, so
    # that a new count needs no migration; read back whole with its sample, as metrics is.
    ("counts", "TEXT NOT NULL DEFAULT '{}'"),
    ("unsupported", "TEXT NOT NULL DEFAULT '{}'"),  # JSON (v5)
    ("schedule_dependent", "INTEGER"),  # 0, 1, or NULL under the time measure
    ("histogram", "TEXT NOT NULL DEFAULT '[]'"),  # JSON list of [lowest, count] (v7)
)
JSON_FIELDS = ("metrics", "thread_cpu_ns", "counts", "unsupported", "histogram")

# The columns labctl.read.results gives every sample, before the parameters and metrics of its kernel:
# where it comes from, what was stored (a column per count of labctl.vocabulary.metrics.COUNTS, nullable;
# the kernel's metrics, and a count the registry does not name, get columns of their own), what
# is derived from it (msgs_per_s, verified, cpu_ns), and the machine its point ran on (machine:
# the kind, labctl.vocabulary.text.machine_line; host: its host name).
COLUMNS = ["run", "run_name", "point", "position", "point_key", "kernel", "repeat", "measure",
           "elapsed_ns", "messages_processed", "msgs_per_s", "answer", "expected", "verified",
           "cpu_ns", "cpu_per_message_ns", "waiting_cpu_share", "bytes_per_agent", "thread_cpu_ns", "peak_rss_kb", "voluntary_switches",
           "involuntary_switches", *metrics.COUNTS, *metrics.RUNTIME_COUNTS, "unsupported", "schedule_dependent", "histogram", "recorded_at",
           "machine", "host"]
# The columns labctl.read.results.points gives every point besides its parameters.
POINT_COLUMNS = ["point", "position", "kernel", "env", "cpus", "measure", "repeats", "samples",
                 "status", "failure_kind", "failure", "machine", "host", "started_at", "finished_at"]
