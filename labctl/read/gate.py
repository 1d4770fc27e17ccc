"""CI's regression gate: the instruction counts of a run of the gate experiment (experiments/
gate.toml: single-thread kernels at small sizes, measure = "instructions") against a baseline
committed beside it (experiments/gate.baseline.json), point by point.

A single-thread kernel's count repeats to a few hundred instructions in 10^8 on any machine with
the same build, so the rule needs no statistics: a point fails when its median count is more
than THRESHOLD percent above the baseline's (DEPENDENT_THRESHOLD for schedule-dependent counts). A point the baseline lacks, one it has that the run
lacks, and one that failed or was skipped fail too: the gate never passes by measuring less.
Counts depend on the compiler, its flags and the C library: a baseline taken with others cannot
judge this build, and the gate says so rather than guess. `labctl gate --update` writes the
baseline from a run, on purpose. Reads the store only.
"""

from __future__ import annotations

import json
import statistics
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from labctl.read import results
from labctl.store import Store, now
from labctl.vocabulary import files, inputs, metrics, shipped, text

EXPERIMENT = "gate"
METRIC = "instructions"  # the count judged (labctl.vocabulary.metrics), taken by the instructions measure
THRESHOLD = 2.0  # percent more instructions than the baseline that fails a point
# ... whose counts are schedule-dependent (labctl.catalogue.measures.schedule_dependent): they vary between
# runs by up to 2% (counting_actor: how far its sender runs ahead of the counter decides how
# many envelopes the pool must find), so a tighter rule would fail on noise.
DEPENDENT_THRESHOLD = 5.0
VERSION = 1  # of the baseline file's layout
# A baseline is a few hundred bytes per point: a file far larger is not one labctl wrote.
BASELINE_LIMIT = 16 << 20
# What a count depends on besides labctl's code (the run's context), and must match.
BUILD_KEYS = ("compiler", "flags", "libc")

OK = "ok"
REGRESSION = "regression"
IMPROVEMENT = "improvement"
NOT_IN_BASELINE = "not in the baseline"
NOT_IN_RUN = "not in the run"
NOT_MEASURED = "not measured"
FAILING = (REGRESSION, NOT_IN_BASELINE, NOT_IN_RUN, NOT_MEASURED)


class GateError(ValueError):
    """A baseline that cannot be read or cannot judge the run, or a run that cannot make one.
    `code` is the exit code: 2 for a baseline file that is not one (bad input), 1 otherwise."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Row:
    kernel: str
    params: dict
    baseline: int | None  # instructions
    measured: float | None  # the run's median
    spread: float | None  # (max - min) / median of the run's counts, percent
    verdict: str
    note: str = ""  # why a point is not measured; schedule-dependent counts

    @property
    def change(self) -> float | None:
        """Percent more instructions than the baseline (negative: fewer)."""
        if self.baseline and self.measured is not None:
            return (self.measured / self.baseline - 1) * 100
        return None


@dataclass
class Result:
    run: int
    baseline: Path
    threshold: float
    rows: list[Row] = field(default_factory=list)

    @property
    def failed(self) -> list[Row]:
        return [row for row in self.rows if row.verdict in FAILING]


def baseline_path(experiment_file: Path) -> Path:
    """Where an experiment's baseline lives: beside it (gate.toml: gate.baseline.json)."""
    return experiment_file.with_name(f"{experiment_file.stem}.baseline.json")


def _build(context: dict) -> dict:
    build = context.get("build") or {}
    return {"compiler": build.get("compiler"), "flags": (build.get("flags") or "").strip(),
            "libc": context.get("libc"), "valgrind": context.get("valgrind")}


def _measured(db: str | Path, run_id: int) -> tuple[dict, list[tuple]]:
    """The run's context, and for each of its points: (key, kernel, params, status, failure,
    measure, counts)."""
    with Store(db, create=False) as store:
        row = store.run(run_id)
        points = store.points(run_id)
    samples = results.load(db, run_id)
    counts = {int(point): [int(v) for v in group[METRIC].dropna()]
              for point, group in samples.groupby("point")} if not samples.empty else {}
    dependent = set(samples[samples["schedule_dependent"].fillna(False)]["point"]) if not samples.empty else set()
    return row.context, [(p.key, p.point.kernel, p.point.params, p.status, p.failure or "", p.point.measure,
                          counts.get(p.id, []), p.id in dependent) for p in points]


def record(db: str | Path, run: int | str) -> dict:
    """The baseline a run makes: each point's median count, with the build it was taken with.
    Raises GateError for a run with a point that has no count (failed, skipped, or not measured
    in instructions): a baseline is whole or not written."""
    with Store(db, create=False) as store:
        run_id = store.resolve_run(run)
        row = store.run(run_id)
    context, points = _measured(db, run_id)
    entries = []
    for key, kernel, params, status, failure, measure, counts, dependent in points:
        if measure != metrics.INSTRUCTIONS or not counts:
            why = failure or (f"measured in {measure}" if measure != metrics.INSTRUCTIONS else status)
            raise GateError(f"run {run_id}: {kernel} {_params(params)} has no instruction count "
                            f"({why}); a baseline needs every point")
        entries.append({"kernel": kernel, "params": params, "key": key,
                        METRIC: int(statistics.median(counts)), "samples": len(counts),
                        "spread_pct": round(_spread(counts), 6), "schedule_dependent": dependent})
    return {"version": VERSION, "experiment": row.name, "metric": METRIC, "recorded_at": now(),
            "command": "labctl gate --update", "run": {"id": run_id, "started_at": row.started_at,
                                                       "git_describe": context.get("git_describe")},
            "build": _build(context), "points": entries}


def installed(path: Path) -> bool:
    """Whether `path` lies inside an installed package (site-packages, dist-packages, labctl's own
    folder): where a shipped experiment's default baseline would go, and labctl never writes."""
    resolved = path.resolve()
    roots = [Path(folder).resolve() for key in ("purelib", "platlib")
             if (folder := sysconfig.get_paths().get(key))] + [shipped.PACKAGE]
    return (any(resolved.is_relative_to(root) for root in roots)
            or any(part in ("site-packages", "dist-packages") for part in resolved.parts))


def written_by_labctl(path: Path, experiment: str) -> bool:
    """Whether `path` is a regular file holding a baseline `labctl gate --update` wrote of this
    experiment: the one file --update replaces without --force (CI's committed baseline)."""
    data = files.read_regular(path, BASELINE_LIMIT)
    try:
        baseline = json.loads(data.decode("utf-8")) if data is not None else None
    except (ValueError, RecursionError):
        return False
    return (isinstance(baseline, dict) and baseline.get("version") == VERSION
            and baseline.get("command") == "labctl gate --update" and baseline.get("metric") == METRIC
            and baseline.get("experiment") == experiment and isinstance(baseline.get("points"), list))


def check_target(path: Path, experiment: str, stores: Iterable[Path] = (), force: bool = False) -> None:
    """Refuses a baseline path as any output is refused (labctl.vocabulary.files.check_target): a store, a
    link, anything but a regular file; an existing file unless it is this experiment's baseline
    labctl wrote, or `force`. Raises files.OutputError."""
    files.check_target("--baseline", path, stores, force=True)  # a store, a link, a device...
    if not force and path.exists() and not written_by_labctl(path, experiment):
        raise files.OutputError(f"--baseline {path}: the file exists and is not a baseline labctl "
                                f"wrote of experiment {text.printable(repr(experiment))}; give another "
                                "name, or --force to replace it")


def write(baseline: dict, path: Path, stores: Iterable[Path] = (), force: bool = False) -> None:
    """Writes a baseline as any output (labctl.vocabulary.files.write_file): beside `path`, renamed into
    place, never onto a store (`stores`) nor in place of anything but a regular file; an existing
    file only when it is a baseline labctl wrote of the same experiment, or with `force`. Raises
    files.OutputError."""
    content = json.dumps(baseline, indent=1, sort_keys=False) + "\n"
    files.write_file("--baseline", path, lambda staging: staging.write_text(content, encoding="utf-8"),
                     stores, force or written_by_labctl(path, baseline.get("experiment")))


def read(path: Path) -> dict:
    """A baseline file, checked for everything `check` reads of it: a value of the wrong type,
    an instruction count of zero (a division) or below, a point twice, are each refused naming
    the file and the key. Raises GateError (code 2)."""
    where = f"--baseline {path}"
    try:
        data = inputs.load_json(path, "a baseline", BASELINE_LIMIT)
    except inputs.InputError as error:
        if not Path(path).exists() and not Path(path).is_symlink():
            raise GateError(f"{where}: no such file; make one with `labctl gate --update`", 2) from None
        raise GateError(text.printable(f"--baseline {error}"), 2) from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("points"), list):
        raise GateError(f"{where}: not a baseline of version {VERSION} (write one with "
                        "`labctl gate --update`)", 2)

    def refuse(key: str, wanted: str, value: object) -> None:
        shown = text.printable(repr(value))
        raise GateError(f"{where}: {key}: must be {wanted}, got {shown[:80]}"
                        f"{'...' if len(shown) > 80 else ''} (write one with `labctl gate --update`)", 2)

    # The build the counts were taken with, compared with this one's: an object of strings, as
    # `labctl gate --update` writes it (null is no build, refused as any other wrong value).
    build = data.get("build", {})
    if not isinstance(build, dict):
        refuse("build", "an object", build)
    for key in BUILD_KEYS:
        value = build.get(key)
        if value is not None and not isinstance(value, str):
            refuse(f"build.{key}", "a string", value)
    seen: dict[str, int] = {}
    for number, entry in enumerate(data["points"]):
        place = f"points[{number}]"
        if not isinstance(entry, dict):
            refuse(place, "an object", entry)
        for key, wanted, fits in (
                ("key", "a string", lambda v: isinstance(v, str) and v),
                ("kernel", "a string", lambda v: isinstance(v, str) and v),
                ("params", "an object of parameters",
                 lambda v: isinstance(v, dict) and all(isinstance(x, (str, int, float, bool)) for x in v.values())),
                (METRIC, "a whole number of instructions above 0",
                 lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**63)):
            if not fits(entry.get(key)):
                refuse(f"{place}.{key}", wanted, entry.get(key))
        if not isinstance(entry.get("schedule_dependent", False), bool):
            refuse(f"{place}.schedule_dependent", "true or false", entry.get("schedule_dependent"))
        if entry["key"] in seen:
            raise GateError(text.printable(f"{where}: {place}.key: {entry['key'][:40]!r} is also "
                                           f"points[{seen[entry['key']]}]'s; a point is in a baseline once"), 2)
        seen[entry["key"]] = number
    return data


def same_build(baseline: dict, path: Path, context: dict) -> None:
    """Raises GateError where the baseline was taken with another build than the one a run's
    `context` (sysinfo.host_context: the extension's build, libc, valgrind) names: its counts
    cannot judge it. Asked before a sweep too, so that it is not half a minute late."""
    theirs, ours = baseline.get("build") or {}, _build(context)
    differ = [f"{key} {theirs.get(key)!r} there, {ours.get(key)!r} here" for key in BUILD_KEYS
              if theirs.get(key) != ours.get(key)]
    if differ:
        raise GateError(f"--baseline {path}: taken with another build ({'; '.join(differ)}): its "
                        "counts cannot judge this one; refresh it with `labctl gate --update`")


def check(db: str | Path, run: int | str, baseline: dict, path: Path,
          threshold: float = THRESHOLD) -> Result:
    """Judges a run against a baseline. Raises GateError where the baseline's build differs."""
    with Store(db, create=False) as store:
        run_id = store.resolve_run(run)
    context, points = _measured(db, run_id)
    same_build(baseline, path, context)
    result = Result(run_id, path, threshold)
    expected = {entry["key"]: entry for entry in baseline["points"]}
    for key, kernel, params, status, failure, measure, counts, dependent in points:
        entry = expected.pop(key, None)
        dependent = dependent or bool(entry and entry.get("schedule_dependent"))
        note = f"schedule-dependent, judged at {max(threshold, DEPENDENT_THRESHOLD):g}%" if dependent else ""
        if not counts or measure != metrics.INSTRUCTIONS:
            why = failure or (f"measured in {measure}" if measure != metrics.INSTRUCTIONS else status)
            result.rows.append(Row(kernel, params, entry and entry[METRIC], None, None, NOT_MEASURED,
                                   text.printable(why)))
            continue
        median = statistics.median(counts)
        if entry is None:
            result.rows.append(Row(kernel, params, None, median, _spread(counts), NOT_IN_BASELINE, note))
            continue
        change = (median / entry[METRIC] - 1) * 100
        limit = max(threshold, DEPENDENT_THRESHOLD) if dependent else threshold
        verdict = REGRESSION if change > limit else IMPROVEMENT if change < -limit else OK
        result.rows.append(Row(kernel, params, entry[METRIC], median, _spread(counts), verdict, note))
    for entry in expected.values():
        result.rows.append(Row(entry["kernel"], entry["params"], entry[METRIC], None, None, NOT_IN_RUN))
    return result


def label(row: Row) -> str:
    """A point in words: its kernel and parameters."""
    return f"{row.kernel} {_params(row.params)}"


def _spread(counts: list[int]) -> float:
    middle = statistics.median(counts)
    return (max(counts) - min(counts)) / middle * 100 if middle else 0.0


def _params(params: dict) -> str:
    return " ".join(f"{name}={text.show(value)}" for name, value in params.items())


def markdown(result: Result) -> str:
    """The gate's table: a row per point (the parameters every point shares are said once
    under it), its baseline, its count, the change and the verdict."""
    names = dict.fromkeys(n for row in result.rows for n in row.params)
    shared = {n: result.rows[0].params[n] for n in names
              if all(n in row.params and row.params[n] == result.rows[0].params[n] for row in result.rows)}
    rows = []
    for row in result.rows:
        shown = {n: v for n, v in row.params.items() if n not in shared}
        change = row.change
        rows.append([f"{row.kernel} {_params(shown)}".strip(),
                     metrics.lookup(METRIC).format(row.baseline) if row.baseline is not None else "-",
                     metrics.lookup(METRIC).format(row.measured) if row.measured is not None else "-",
                     f"{change:+.3f}%" if change is not None else "-",
                     f"{row.spread:.3g}%" if row.spread is not None else "-",
                     row.verdict + (f": {row.note}" if row.note else "")])
    failed = result.failed
    verdict = (f"**{len(failed)} of {len(result.rows)} points fail**" if failed
               else f"all {len(result.rows)} points pass")
    return "\n".join([
        f"## Gate: run {result.run} against {result.baseline}, {METRIC}, fail above +{result.threshold:g}%",
        "", text.markdown_table(["point", "baseline", "median here", "change", "spread", "verdict"],
                                rows, {1, 2, 3, 4}),
        "", f"Every point: {_params(shared) or '-'}.",
        "", f"{verdict}. An improvement past {result.threshold:g}% passes; refresh the baseline "
            "with `labctl gate --update` to keep it.", ""])
