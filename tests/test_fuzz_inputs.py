"""Fuzzing every file and reply labctl reads from outside (hypothesis): experiment files, peer
manifests (peer.toml in a LABCTL_PEERS folder), an external program's reply, gate baselines;
documents near the valid ones, byte-level garbage, nesting past any bound, and files that are not
files (a FIFO, a device). Driven through the CLI in this process (tests/test_faults.py's
labctl_here, which fails on any exception labctl does not turn into its one-line error), each
asserts: no traceback, the exit code README documents (0, 1 where a judged gate fails, 2 for bad
input), and the store's bytes unchanged, since no sweep ran. The experiment loader's own fuzzing
(values of every type at every key) is tests/test_fuzz_experiment.py; its generators are reused.

Sized for CI: about a minute in all (max_examples below)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_faults import labctl_here
from test_fuzz_experiment import documents, near_valid_documents, to_toml, toml_string, toml_value
from test_measures import fake_run

from labctl.catalogue import kernels, runtimes
from labctl.read import gate

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                      HealthCheck.data_too_large])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store holding one run of the gate experiment (run 1), as if swept: what a gate judges,
    what `plan` estimates from; its bytes must never change in this file."""
    db = tmp_path_factory.mktemp("fuzz-store") / "r.db"
    fake_run(db, {"skynet": [1000, 1001, 1000], "ping_pong": [5000, 5000, 5000]})
    return db


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-inputs")


def documented(result, codes: tuple[int, ...]) -> None:
    """A command's exit as README documents it: one of `codes`, and an error is labctl's lines."""
    assert result.returncode in codes, (result.returncode, result.stdout, result.stderr)
    event(f"{result.args[0]} exit {result.returncode}")  # --hypothesis-show-statistics: how inputs fared
    assert "Traceback" not in result.stdout + result.stderr
    if result.returncode:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert lines and all(line.startswith(("labctl: ", "warning: ", "Error: ", "Usage: ", "Try "))
                             for line in lines), result.stderr


# -- what a file can be besides its text ----------------------------------------------------------

def deep(depth: int, how: str) -> str:
    return {"lists": "[" * depth + "]" * depth,
            "tables": "{ a = " * depth + "1" + " }" * depth,
            "objects": '{"a": ' * depth + "1" + "}" * depth}[how]


@st.composite
def mutated(draw, text: str) -> bytes:
    """A valid text with a few of its bytes replaced, cut, or doubled."""
    data = bytearray(text.encode())
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        how = draw(st.sampled_from(["byte", "cut", "double"]))
        if how == "byte":
            data[at] = draw(st.integers(0, 255))
        elif how == "cut":
            del data[at:at + draw(st.integers(1, 20))]
        else:
            data[at:at] = data[at:at + draw(st.integers(1, 20))]
    return bytes(data)


def write_input(path: Path, kind: str, content: bytes) -> None:
    """Makes `path` a file of `content`, or something that is no regular file."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "huge":
        path.write_bytes(content + b"\n#" + b"x" * (16 << 20))
    else:
        path.write_bytes(content)


def texts_of(max_size: int):
    return st.text(st.characters(exclude_categories=("Cs",)), max_size=max_size)  # UTF-8 has no surrogates


KINDS = st.sampled_from(["file"] * 12 + ["fifo", "device", "huge"])

# -- experiment files ----------------------------------------------------------------------------

SMALL = 'name = "fuzz"\nrepeats = 1\nwarmup = 0\n[[grid]]\nkernel = "skynet"\nparams = { leaves = 1000 }\n'

@st.composite
def small_experiments(draw) -> bytes:
    """The small experiment, valid, with an axis and exclude rules of random values: what plans."""
    values = st.sampled_from([1000, 2000, 3000, 1000.0, True, "1000", 7])
    leaves = draw(st.lists(st.sampled_from([1000, 2000, 3000]), min_size=1, max_size=3, unique=True))
    rules = draw(st.lists(st.dictionaries(st.sampled_from(["leaves", "branching", "threads"]),
                                          values | st.lists(values, max_size=3), max_size=2), max_size=4))
    text = SMALL.replace("params = { leaves = 1000 }", f"axes = {{ leaves = {toml_value(leaves)} }}")
    for rule in rules:
        text += "[[grid.exclude]]\n" + "".join(f"{key} = {toml_value(value)}\n" for key, value in rule.items())
    return text.encode()


experiment_texts = st.one_of(
    small_experiments(),
    documents().map(to_toml).map(str.encode),
    near_valid_documents().map(to_toml).map(str.encode),
    mutated(SMALL),
    st.binary(max_size=300),
    st.builds(lambda depth, how: f'name = "deep"\nx = {deep(depth, how)}\n'.encode(),
              st.integers(30, 5000), st.sampled_from(["lists", "tables"])),
)


@settings(FUZZ, max_examples=60)
@given(kind=KINDS, content=experiment_texts)
def test_an_experiment_file_plans_or_is_refused_and_a_refused_sweep_leaves_the_store(
        capsys, store, folder, kind, content):
    path = folder / "e.toml"
    write_input(path, kind, content)
    before = sha256(store)
    planned = labctl_here(capsys, "plan", str(path), "--db", str(store))
    documented(planned, (0, 2))
    if planned.returncode == 2:  # refused before anything runs: the sweep is refused the same
        swept = labctl_here(capsys, "sweep", str(path), "--db", str(store))
        documented(swept, (2,))
    assert sha256(store) == before


# -- peer manifests ------------------------------------------------------------------------------

words = st.one_of(
    st.sampled_from(["{folder}/peer", "{build}/peer", "{cache}", "{folder:>99999999}", "{folder!r}",
                     "{folder.name}", "{build[0]}", "{nope}", "{", "}", "{{x}}", "{0}", "{}", "go", "run"]),
    texts_of(12),
)
manifest_values = {
    "name": st.one_of(st.sampled_from(["fuzzpeer", "labctl", "caf", "go", "Bad Name", "", "x" * 300]),
                      st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True), st.integers()),
    "summary": st.one_of(texts_of(20), st.integers(), st.just("\x1b[2J[red]x")),
    "requires": st.one_of(st.lists(st.sampled_from(["python3", "sh", "no-such-tool", ""]), max_size=3),
                          texts_of(5)),
    "install": st.one_of(texts_of(20), st.booleans()),
    "build": st.one_of(st.lists(words, max_size=3), words),
    "build_env": st.one_of(st.dictionaries(st.sampled_from(["CC", "GOPATH", "X"]), words, max_size=2),
                           st.lists(words, max_size=2)),
    "command": st.one_of(st.lists(words, max_size=3), words, st.integers()),
    "kernels": st.one_of(
        st.dictionaries(st.sampled_from(["counting_actor", "skynet", "ping_pong", "fan", "nope"]),
                        st.one_of(st.lists(st.sampled_from(["messages", "leaves", "dispatcher", "threads",
                                                            "nonsense"]), max_size=3),
                                  texts_of(4), st.integers()),
                        max_size=3),
        st.lists(texts_of(4), max_size=2)),
    "unknown": texts_of(5),
}


@st.composite
def manifests(draw) -> bytes:
    keys = draw(st.lists(st.sampled_from(list(manifest_values)), unique=True,
                         min_size=draw(st.integers(0, len(manifest_values)))))
    lines = [f"{toml_string(key)} = {toml_value(draw(manifest_values[key]))}" for key in keys]
    return ("\n".join(lines) + "\n").encode()


manifest_texts = st.one_of(
    manifests(),
    mutated('name = "fuzzpeer"\nsummary = "s"\ncommand = ["{folder}/peer"]\n[kernels]\ncounting_actor = ["messages"]\n'),
    st.binary(max_size=200),
    st.builds(lambda depth, how: f'name = "deep"\nx = {deep(depth, how)}\n'.encode(),
              st.integers(30, 40_000), st.sampled_from(["lists", "tables"])),
)


@contextlib.contextmanager
def peers_in(root: Path):
    """LABCTL_PEERS naming `root`, the catalogue read again with it, and without it after."""
    before = os.environ.get(runtimes.PEERS_ENV)
    os.environ[runtimes.PEERS_ENV] = str(root)
    runtimes.runtimes.cache_clear()
    kernels.catalogue.cache_clear()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(runtimes.PEERS_ENV, None)
        else:
            os.environ[runtimes.PEERS_ENV] = before
        runtimes.runtimes.cache_clear()
        kernels.catalogue.cache_clear()


@settings(FUZZ, max_examples=40)
@given(kind=KINDS, content=manifest_texts)
def test_any_peer_manifest_is_a_runtime_available_or_not_and_never_stops_another_command(
        capsys, store, folder, kind, content):
    root = folder / "peers"
    (root / "fuzzpeer").mkdir(parents=True, exist_ok=True)
    write_input(root / "fuzzpeer" / "peer.toml", kind, content)
    before = sha256(store)
    with peers_in(root):
        known = runtimes.runtimes()
        peer = next((r for r in known.values() if r.folder == root / "fuzzpeer"), None)
        assert peer is None or peer.manifest is not None or peer.missing  # unreadable: says why
        assert peer is None or "\n" not in peer.missing
        listed = labctl_here(capsys, "kernels")
        documented(listed, (0,))
        catalogue = labctl_here(capsys, "kernels", "--json")
        documented(catalogue, (0,))
        assert json.loads(catalogue.stdout)
        ours = folder / "ours.toml"  # ours runs whatever the peer's state
        ours.write_text(SMALL)
        documented(labctl_here(capsys, "plan", str(ours), "--db", str(store)), (0,))
        if peer is not None:  # a grid on the peer plans (its points skipped where it cannot run) or is refused
            on_peer = folder / "peer.toml.experiment"
            on_peer.write_text(f'name = "p"\n[[grid]]\nkernel = "counting_actor"\n'
                               f'params = {{ runtime = {toml_string(peer.name)}, messages = 100 }}\n')
            documented(labctl_here(capsys, "plan", str(on_peer), "--db", str(store)), (0, 2))
    assert sha256(store) == before


# -- an external program's reply -----------------------------------------------------------------

reply_scalars = st.one_of(
    st.integers(min_value=-2**70, max_value=2**70),
    st.sampled_from([0, 1, 2**63 - 1, 2**63, -1, 1e300, 1e308, math.inf, -math.inf, math.nan, True, None]),
    st.floats(allow_nan=True, allow_infinity=True),
    texts_of(20),
    st.just("received=10 sum=55"),
    st.just("x" * 1001),
)
reply_values = st.recursive(reply_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(texts_of(6), inner, max_size=3)), max_leaves=6)
metric_names = st.one_of(st.sampled_from(["setup_ns", "agents", "elapsed_ns", "leaves", "dispatcher", "Bad",
                                          "a" * 65, "", "x-y"]),
                         st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True), texts_of(6))


@st.composite
def replies(draw) -> bytes:
    reply: dict = {}
    for key in draw(st.lists(st.sampled_from(["elapsed_ns", "messages", "answer", "metrics", "extra"]),
                             unique=True, max_size=5)):
        if key == "metrics" and draw(st.booleans()):
            reply[key] = draw(st.dictionaries(metric_names, reply_scalars, max_size=40))
        else:
            reply[key] = draw(reply_values)
    line = json.dumps(reply)
    return draw(st.sampled_from([line, line + "\n", "\n" + line + "\n\n", line + "\n" + line,
                                 line.replace(", ", ",\n")])).encode()


@st.composite
def near_valid_replies(draw) -> bytes:
    """A reply labctl takes, with random metrics, a random count or answer at times."""
    reply = {"elapsed_ns": 1000, "messages": 10, "answer": "received=10 sum=55",
             "metrics": draw(st.dictionaries(metric_names, reply_scalars, max_size=34))}
    if draw(st.booleans()):
        key = draw(st.sampled_from(["elapsed_ns", "messages", "answer"]))
        reply[key] = draw(reply_scalars)
    return json.dumps(reply).encode()


@settings(FUZZ, max_examples=400)
@given(st.one_of(
    replies(),
    near_valid_replies(),
    mutated('{"elapsed_ns": 1000, "messages": 10, "answer": "received=10 sum=55", "metrics": {"setup_ns": 1.5}}'),
    st.binary(max_size=300),
    st.builds(lambda depth, how: deep(depth, how).encode(), st.integers(30, 100_000),
              st.sampled_from(["lists", "objects"])),
))
def test_any_reply_is_a_well_formed_sample_or_a_protocol_error(stdout):
    reserved = ("leaves", "dispatcher")
    try:
        run = runtimes._parse_reply("fuzzpeer", stdout, reserved)
    except runtimes.ProtocolError as error:
        event("protocol error")
        message = str(error)
        assert message.startswith("fuzzpeer: ") and "\n" not in message and len(message) < 1000
        return
    event("accepted")
    # What reaches the store: within its integers, an answer it can hold, finite figures whose
    # names are neither the sample's columns nor the kernel's parameters.
    assert 1 <= run.elapsed_ns <= runtimes.MAX_INTEGER and 0 <= run.messages <= runtimes.MAX_INTEGER
    assert isinstance(run.answer, str) and len(run.answer) <= runtimes.MAX_ANSWER
    assert len(run.metrics) <= runtimes.MAX_METRICS
    for name, value in run.metrics.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name) and name not in reserved and name != "elapsed_ns"
        assert isinstance(value, float) and math.isfinite(value)
    assert len(run.histogram) <= runtimes.MAX_BUCKETS
    assert all(0 <= lowest <= runtimes.MAX_INTEGER and 1 <= count <= runtimes.MAX_INTEGER for lowest, count in run.histogram)


# -- gate baselines ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def baseline(store) -> dict:
    return gate.record(store, 1)


@st.composite
def baselines(draw, good: dict) -> bytes:
    """The run's own baseline with a value somewhere in it replaced, removed or added."""
    document = json.loads(json.dumps(good))
    for _ in range(draw(st.integers(1, 3))):
        target = document  # a walk down from the top, stopping at a random container
        while draw(st.booleans()):
            children = [v for v in (target.values() if isinstance(target, dict) else target)
                        if isinstance(v, (dict, list)) and v]
            if not children:
                break
            target = draw(st.sampled_from(children))
        if isinstance(target, dict):
            key = draw(st.sampled_from(sorted(target) + ["new"]))
            if draw(st.integers(0, 4)) == 0:
                target.pop(key, None)
            else:
                target[key] = draw(reply_values)
        elif target:
            target[draw(st.integers(0, len(target) - 1))] = draw(reply_values)
    return json.dumps(document).encode()


@settings(FUZZ, max_examples=40)
@given(kind=KINDS, data=st.data())
def test_any_baseline_judges_or_is_refused_in_one_line_naming_it(capsys, store, folder, baseline, kind, data):
    content = data.draw(st.one_of(
        baselines(baseline),
        mutated(json.dumps(baseline)),
        st.binary(max_size=200),
        st.builds(lambda depth: deep(depth, "objects").encode(), st.integers(30, 100_000)),
    ))
    path = folder / "fuzz.baseline.json"
    write_input(path, kind, content)
    before = sha256(store)
    try:
        read = gate.read(path)
    except gate.GateError as error:
        assert error.code == 2 and str(error).startswith(f"--baseline {path}: ") and "\n" not in str(error)
    else:
        try:  # a baseline read judges this run, or says it was taken with another build
            gate.check(store, 1, read, path)
        except gate.GateError as error:
            assert error.code == 1 and "another build" in str(error)
    judged = labctl_here(capsys, "gate", "--run", "1", "--db", str(store), "--baseline", str(path))
    documented(judged, (0, 1, 2))
    if judged.returncode == 2:
        assert judged.stderr.startswith(f"labctl: gate: --baseline {path}: ")
    assert sha256(store) == before
