"""The public analysis API: a results store as tidy pandas DataFrames, one row per sample, one
column per parameter and per metric, each frame carrying the run's catalogue (its kernels'
parameters, its studies and their published figures). It reads only the store: no extension.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from labctl.store import Store
from labctl.vocabulary.metrics import COUNTS, RUNTIME_COUNTS, measured_only
from labctl.vocabulary.sample import COLUMNS as SAMPLE_COLUMNS  # noqa: F401 - the API's names
from labctl.vocabulary.sample import POINT_COLUMNS, verified
from labctl.vocabulary.schema import Catalogue
from labctl.vocabulary.text import machine_line


def load(db: str | Path, run: int | str | None = None) -> pd.DataFrame:
    """Every sample of `run` (an id or 'latest'; all runs if None) in `db`: one row per sample,
    one column per parameter (named as in the kernel's schema; empty where it does not apply) and
    per kernel metric. msgs_per_s is derived from elapsed_ns and messages_processed; `machine`
    is the kind of machine the sample's point ran on (its CPU, CPUs, cores, SMT and OS kernel:
    hosts alike in these are one machine) and `host` the host's name. `measure` is the point's
    (under `instructions`, elapsed_ns was taken under valgrind); the counts (instructions,
    cycles, ...; labctl.vocabulary.metrics.COUNTS) are empty where the measure did not count them, and
    `unsupported` says why a counter the measure counts is empty on this machine. A count the
    store holds that the registry does not name (a store written by a newer labctl) gets a
    column of its own after the kernel metrics. A kernel metric a sample did not measure is empty,
    never 0 (labctl.vocabulary.metrics.measured: a stored NaN or 0 ns is read as absent); one whose name is
    taken by a parameter or a column is given as `metric_<name>`."""
    with Store(db, create=False) as store:
        run_id = store.resolve_run(run) if run is not None else None
        samples = store.samples(run_id)
    known = catalogue(db, run_id)
    renamed = _metric_columns(known, samples)
    rows = []
    params: list[str] = []
    metrics: list[str] = []
    others: list[str] = []  # counts the registry does not name
    for sample in samples:
        row = {name: sample[name] for name in SAMPLE_COLUMNS if name in sample}
        row.update(sample["counts"])
        others += [name for name in sample["counts"]
                   if name not in COUNTS and name not in RUNTIME_COUNTS and name not in others]
        row["msgs_per_s"] = sample["messages_processed"] * 1e9 / sample["elapsed_ns"]
        row["verified"] = verified(sample["answer"], sample["expected"])
        row["cpu_ns"] = sum(sample["thread_cpu_ns"])
        row.update(_cost_of_a_message(row["cpu_ns"], sample["messages_processed"], sample["counts"]))
        row["bytes_per_agent"] = _bytes_per_agent(sample["counts"])
        row["machine"], row["host"] = machine_line(sample["machine"]), sample["machine"].get("hostname")
        for name, value in sample["params"].items():
            row[name] = value
            if name not in params:
                params.append(name)
        for name, value in measured_only(sample["metrics"]).items():
            name = renamed.get(name, name)
            row[name] = value
            if name not in metrics:
                metrics.append(name)
        rows.append(row)
    params = in_schema_order(known, params)
    others = [name for name in others if name not in metrics and name not in params]
    frame = _typed(pd.DataFrame(rows, columns=SAMPLE_COLUMNS + params + metrics + others), rows, params)
    for name in (*COUNTS, *RUNTIME_COUNTS, *others):  # whole numbers with gaps: pandas' nullable integers, not floats
        frame[name] = pd.array([row.get(name) for row in rows], dtype="Int64")
    frame["schedule_dependent"] = pd.array([row.get("schedule_dependent") for row in rows], dtype="boolean")
    carry_catalogue(frame, known)
    return frame


def _cost_of_a_message(cpu_ns: int, messages: int, counts: dict) -> dict[str, float | None]:
    """cpu_per_message_ns and waiting_cpu_share (labctl.vocabulary.metrics) of a sample: absent
    where it has no runtime threads' CPU time (a peer's) or no messages, and the share where the
    runtime counted no thread or idle time."""
    if cpu_ns <= 0:
        return {"cpu_per_message_ns": None, "waiting_cpu_share": None}
    working = None
    if counts.get("thread_ns") is not None and counts.get("idle_ns") is not None:
        working = counts["thread_ns"] - counts["idle_ns"]
    return {"cpu_per_message_ns": cpu_ns / messages if messages > 0 else None,
            "waiting_cpu_share": None if working is None else min(1.0, max(0.0, (cpu_ns - working) / cpu_ns))}


# The fewest agents a phase creates for its memory per agent to be given: below it the runtime's
# fixed cost (threads' stacks, pools' first blocks) is most of the growth (skynet here: 16 MiB
# over its baseline at 11,111 agents, 1,524 B an agent; 246 B at 111,111 and at 1,111,111).
MANY_AGENTS = 100_000


def _bytes_per_agent(counts: dict) -> float | None:
    """bytes_per_agent (labctl.vocabulary.metrics) of a sample: its rss_growth_kb over the agents it
    created, where it created MANY_AGENTS or more; absent otherwise."""
    growth, agents = counts.get("rss_growth_kb"), counts.get("agents_created")
    if growth is None or agents is None or agents < MANY_AGENTS:
        return None
    return growth * 1024 / agents


def _metric_columns(known: Catalogue, samples: list[dict]) -> dict[str, str]:
    """The column of each kernel metric whose name is taken (a parameter of a kernel of these
    runs, a sample's own column or a count): `metric_<name>`, so that one column never holds a
    parameter for some rows and a metric for others. A store written before external metrics
    were refused every kernel's parameter names may hold such a metric (a peer's `leaves`
    beside skynet's parameter); it is renamed, never written over a parameter's value."""
    taken = {*SAMPLE_COLUMNS, *(p.name for k in known.kernels.values() for p in k.params)}
    for sample in samples:
        taken.update(sample["params"])
    names = {name for sample in samples for name in sample["metrics"]}
    renamed = {}
    for name in sorted(names & taken):
        column = f"metric_{name}"
        while column in taken or column in names:
            column = f"metric_{column}"
        renamed[name] = column
        taken.add(column)
    return renamed


def in_schema_order(known: Catalogue, names: list[str]) -> list[str]:
    """Parameter names in the order the kernels' schemas give them (the store keeps them sorted)."""
    order = list(dict.fromkeys(p.name for kernel in known.kernels.values() for p in kernel.params))
    return sorted(names, key=lambda name: (order.index(name) if name in order else len(order), name))


def _typed(frame: pd.DataFrame, rows: list[dict], params: list[str]) -> pd.DataFrame:
    """Integer parameters as integers (pandas' nullable Int64) where some rows lack them, not as
    the floats a column with gaps would otherwise become."""
    for name in params:
        values = [row.get(name) for row in rows]
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            frame[name] = pd.array(values, dtype="Int64")
    return frame


def catalogue(db: str | Path, run: int | str | None = None) -> Catalogue:
    """What the analysis of `run` (all runs if None) needs besides its samples: its kernels'
    parameters and texts, its studies and their published figures, as the run stored them."""
    with Store(db, create=False) as store:
        ids = [store.resolve_run(run)] if run is not None else [r.id for r in store.runs()]
        found = Catalogue()
        for run_id in ids:
            found = found.merged(store.catalogue(run_id))
    return found


def carry_catalogue(frame: pd.DataFrame, known: Catalogue) -> None:
    """Gives `frame` the catalogue its parameters come from (catalogue_of reads it), as one JSON
    string in `frame.attrs`: pandas deep-copies attrs into every frame, row and column an
    operation makes, and a nested dict there cost a report 40% of its time in copy.deepcopy; a
    string is copied by reference."""
    frame.attrs["catalogue"] = json.dumps(known.to_json(), sort_keys=True)


def catalogue_of(frame: pd.DataFrame) -> Catalogue:
    """The catalogue a frame of load() carries with it (carry_catalogue: kept through filters,
    groups and copies, and by to_parquet; a parquet file written before it was a string holds it
    as a dict); an empty one for a frame of another origin, whose parameters are then unknown."""
    found = frame.attrs.get("catalogue")
    if isinstance(found, dict):
        found = json.dumps(found, sort_keys=True)
    if not isinstance(found, str):
        return Catalogue()
    if found not in _CATALOGUES:
        try:
            _CATALOGUES[found] = Catalogue.from_json(json.loads(found))
        except (ValueError, TypeError, KeyError):  # not a catalogue: its parameters are unknown
            return Catalogue()
    return _CATALOGUES[found]


_CATALOGUES: dict[str, Catalogue] = {}  # parsed once per catalogue


def param_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of `frame` (from load) that are parameters of its kernels, in frame order;
    for a frame without a catalogue (made by hand), every column that is not a sample's own."""
    known = catalogue_of(frame)
    if not known.kernels:
        return [column for column in frame.columns if column not in SAMPLE_COLUMNS]
    names = {p.name for kernel in frame["kernel"].unique() for p in known.params(kernel)}
    return [column for column in frame.columns if column in names]


def points(db: str | Path, run: int | str) -> pd.DataFrame:
    """The points of a run, failed ones included (status, failure kind and message), with the
    worker's environment, CPUs and measure (env, cpus, measure): with the kernel and parameters,
    what makes a point the same point in another run; and where and when it ran (machine and
    host as in load; started_at and finished_at on the host's clock, empty for a point not run)."""
    with Store(db, create=False) as store:
        run_id = store.resolve_run(run)
        rows = store.points(run_id)
        machine = store.run(run_id).machine
    records = [{
        "point": p.id, "position": p.position, "kernel": p.point.kernel, **p.point.params,
        "env": p.point.env, "cpus": p.point.cpus, "measure": p.point.measure, "repeats": p.point.repeats,
        "samples": p.samples_done,
        "status": p.status, "failure_kind": p.failure_kind, "failure": p.failure,
        "machine": machine_line(p.machine or machine), "host": (p.machine or machine).get("hostname"),
        "started_at": p.started_at, "finished_at": p.finished_at,
    } for p in rows]
    known = catalogue(db, run_id)
    params = in_schema_order(known, list(dict.fromkeys(n for p in rows for n in p.point.params)))
    frame = _typed(pd.DataFrame(records, columns=POINT_COLUMNS[:3] + params + POINT_COLUMNS[3:]),
                   records, params)
    carry_catalogue(frame, known)
    return frame


def runs(db: str | Path) -> pd.DataFrame:
    """Every run of the store with its machine and the state it started in."""
    with Store(db, create=False) as store:
        rows = store.runs()
    return pd.DataFrame([{
        "run": r.id, "name": r.name, "source": r.source, "status": r.status,
        "started_at": r.started_at, "finished_at": r.finished_at, "points": r.points,
        "points_done": r.points_done, "points_failed": r.points_failed, "samples": r.samples,
        "cpu_model": r.machine.get("cpu_model"), "logical_cpus": r.machine.get("logical_cpus"),
        "hostname": r.machine.get("hostname"), "load_average": r.context.get("load_average"),
        "git_describe": r.context.get("git_describe"), "command": r.command,
    } for r in rows])
