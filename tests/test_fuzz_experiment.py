"""Fuzzing the experiment loader (hypothesis): random TOML documents, mixing the real keys with
random values of every type and unknown keys, and random text. The loader either returns a plan
that a sweep can use (every value within what the worker, the platform and the store take) or
raises ExperimentError with a message; nothing else ever escapes, and the CLI never prints a
traceback."""

from __future__ import annotations

import contextlib
import io
import json
import math
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labctl.cli.commands.plan import print_plan
from labctl.plan import experiment
from labctl.store import Store

KERNEL_PARAMS = ["leaves", "branching", "deregister", "messages", "mbox", "payload_bytes", "dispatcher",
                 "threads", "fifo", "max_demands_at_once", "spin_us", "pin", "nonsense"]
TOP_KEYS = ["name", "description", "repeats", "warmup", "timeout_s", "rlimit_mb", "order", "seed", "grid",
            "unknown"]
SETTINGS = ["repeats", "warmup", "timeout_s", "rlimit_mb"]
GRID_KEYS = ["kernel", "params", "axes", "exclude", "repeats", "warmup", "timeout_s", "rlimit_mb", "env",
             "cpus", "extra"]

texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)  # TOML has no surrogates
# Values at the edges of what a setting's use takes: C's and SQLite's integers, time_t, floats.
edges = st.sampled_from([2**63, -2**63 - 1, 2**64, 10**30, 1e300, math.inf, -math.inf, math.nan, 2**43,
                         2**63 - 1, 2**31, 0, -1, 1, 0.5, -0.0, True, False, "", "300"])
markup = st.sampled_from(["[/]", "[bold]x", "[red]x[/red]", "[/bold]"])  # rich reads these
scalars = st.one_of(
    edges,
    markup,
    st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    texts,
    st.sampled_from(["skynet", "ping_pong", "one_thread", "thread_pool", "work_stealing", "active_obj",
                     "individual", "cooperation", "named", "grid", "random", "0-1", "compact", "9999",
                     "0-99999999999"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.sampled_from(KERNEL_PARAMS) | texts, inner, max_size=4)), max_leaves=8)


@st.composite
def grids(draw):
    keys = draw(st.lists(st.sampled_from(GRID_KEYS), unique=True, max_size=6))
    grid = {}
    if draw(st.booleans()):
        grid["kernel"] = draw(st.sampled_from(["skynet", "ping_pong", "nope"]))
    for key in keys:
        if key in ("params", "axes"):
            chosen = draw(st.lists(st.sampled_from(KERNEL_PARAMS), unique=True, max_size=4))
            grid[key] = {name: draw(st.lists(scalars, max_size=3) if key == "axes" else scalars)
                         for name in chosen}
        else:
            grid[key] = draw(values)
    return grid


@st.composite
def documents(draw):
    keys = draw(st.lists(st.sampled_from(TOP_KEYS), unique=True, max_size=7))
    document = {}
    if draw(st.booleans()):
        document["name"] = draw(texts)
    for key in keys:
        document[key] = draw(st.lists(grids(), max_size=3)) if key == "grid" else draw(values)
    if "grid" not in document and draw(st.booleans()):
        document["grid"] = draw(st.lists(grids(), min_size=1, max_size=2))
    return document


VALID = {
    "name": "fuzz", "repeats": 1, "warmup": 0, "timeout_s": 30,
    "grid": [
        {"kernel": "skynet", "params": {"leaves": 1000}, "axes": {"dispatcher": ["one_thread", "thread_pool"]}},
        {"kernel": "ping_pong", "params": {"messages": 2000},
         "axes": {"dispatcher": ["one_thread", "active_obj", "work_stealing"]},
         "exclude": [{"dispatcher": "active_obj"}]},
    ],
}


@st.composite
def settings_documents(draw):
    """A valid document whose settings (at the top, in a grid, or both) take random values."""
    document = json.loads(json.dumps(VALID))
    for target in draw(st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=2, unique=True)):
        keys = SETTINGS + (["name", "description", "order", "seed"] if target == 0 else ["env", "cpus"])
        for key in keys:
            if draw(st.booleans()):
                value = draw(st.one_of(edges, markup, scalars))
                (document if target == 0 else document["grid"][target - 1])[key] = value
    return document


@st.composite
def near_valid_documents(draw):
    """A valid document with one key, at the top, in a grid or among its parameters, replaced or
    added with a random value: most of the loader's checks see a value they must judge."""
    document = json.loads(json.dumps(VALID))
    where = draw(st.sampled_from(["top", "grid", "params", "axes"]))
    grid = document["grid"][draw(st.integers(0, 1))]
    target = {"top": document, "grid": grid, "params": grid["params"], "axes": grid["axes"]}[where]
    keys = {"top": TOP_KEYS, "grid": GRID_KEYS, "params": KERNEL_PARAMS, "axes": KERNEL_PARAMS}[where]
    key = draw(st.sampled_from(keys))
    if key == "grid" and where == "top":
        return document
    if where == "axes":
        target[key] = draw(st.lists(scalars, min_size=1, max_size=3))
    elif where == "params" or draw(st.booleans()):
        target[key] = draw(scalars)
    else:
        target[key] = draw(values)
    return document


def toml_string(text: str) -> str:
    def escape(c: str) -> str:
        if c in '"\\':
            return "\\" + c
        return f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c
    return '"' + "".join(escape(c) for c in text) + '"'


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def to_toml(document: dict) -> str:
    lines = [f"{toml_string(k)} = {toml_value(v)}" for k, v in document.items()
             if k != "grid" or not isinstance(v, list) or not all(isinstance(g, dict) for g in v)]
    grids_ = document.get("grid")
    if isinstance(grids_, list) and all(isinstance(g, dict) for g in grids_):
        for grid in grids_:
            lines.append("[[grid]]")
            lines.extend(f"{toml_string(k)} = {toml_value(v)}" for k, v in grid.items())
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with Store(tmp_path_factory.mktemp("fuzz") / "r.db") as store:
        yield store


def load_or_refuse(text: str, store: Store, seed: int | None = 1) -> None:
    try:
        plan = experiment.parse(text, "fuzz.toml", seed=seed)
    except experiment.ExperimentError as error:
        lines = str(error).splitlines()
        assert lines, "an error must say something"
        for line in lines:  # each names the file and something in it
            assert line.startswith("fuzz.toml: ") and line[len("fuzz.toml: "):].strip(), line
        assert "Traceback" not in str(error)
    else:
        # What a sweep does with an accepted plan cannot fail on a value the loader let in.
        assert plan.points
        for point in plan.points:
            assert 0 < point.timeout_s <= experiment.MAX_TIMEOUT_S  # runner's wait, the estimate
            assert point.rlimit_mb is None or 1 <= point.rlimit_mb <= experiment.MAX_RLIMIT_MB
            assert point.repeats >= 1 and point.warmup >= 0
        store.create_run(plan, "labctl sweep fuzz.toml", {"hostname": "h"}, {}, [])
        with contextlib.redirect_stdout(io.StringIO()):  # rich markup in a name, say
            print_plan(plan, "none.db", None)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(documents(), near_valid_documents(), settings_documents()))
def test_random_experiment_files_load_or_are_refused_with_a_clear_error(store, document):
    # No seed from the command line: the file's own, or one drawn, is what gets stored.
    load_or_refuse(to_toml(document), store, seed=None)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_random_text_loads_or_is_refused_with_a_clear_error(store, text):
    load_or_refuse(text, store)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                              HealthCheck.function_scoped_fixture])
@given(st.one_of(documents(), near_valid_documents()))
def test_the_cli_never_prints_a_traceback_for_a_random_file(tmp_path, document):
    path = tmp_path / "fuzz.toml"
    path.write_text(to_toml(document))
    result = subprocess.run([sys.executable, "-P", "-m", "labctl", "plan", str(path), "--db",
                             str(tmp_path / "none.db")], capture_output=True, text=True, timeout=120)
    assert result.returncode in (0, 2), result.stderr
    assert "Traceback" not in result.stderr
