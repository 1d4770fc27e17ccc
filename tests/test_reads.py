"""Every file labctl reads (an experiment, a peer's peer.toml, a gate baseline, the store) is read
bounded: a regular file only (a FIFO never blocks a command), of a bounded size, nested to a
bounded depth, and refused in one line naming the file. One unusable peer costs its own runtime
only: every other command, a run on ours included, goes on. What a peer prints is bounded too,
and a store with damaged text is called damaged and never appended to."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_faults import labctl_here
from test_measures import fake_run
from test_runtimes import write_peer

from labctl.catalogue import runtimes
from labctl.plan import experiment
from labctl.read import gate
from labctl.store import Store, StoreError
from labctl.vocabulary import inputs

SMALL = 'name = "small"\nrepeats = 1\nwarmup = 0\n[[grid]]\nkernel = "skynet"\nparams = { leaves = 1000 }\n'


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line(result, code: int, *words: str) -> str:
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("labctl: "), result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# -- the one reader: labctl.vocabulary.inputs -----------------------------------------------------------

@pytest.mark.parametrize("make, says", [
    ("fifo", "a FIFO, not a regular file"),
    ("device", "a character device, not a regular file"),
    ("folder", "a folder, not a regular file"),
    ("link to a fifo", "a FIFO, not a regular file"),
])
def test_a_file_that_is_not_regular_is_refused_at_once_without_opening_it(tmp_path, make, says):
    path = tmp_path / "input"
    if make == "fifo":
        os.mkfifo(path)
    elif make == "device":
        path = Path("/dev/zero")
    elif make == "folder":
        path.mkdir()
    else:
        os.mkfifo(tmp_path / "fifo")
        path.symlink_to(tmp_path / "fifo")
    started = time.monotonic()
    with pytest.raises(inputs.InputError) as error:
        inputs.read_bounded(path, "an input", 1000)
    assert time.monotonic() - started < 5  # a FIFO opened for reading would wait for a writer
    assert str(error.value) == f"{path}: {says} (an input is a file)"


def test_a_file_past_its_bound_is_refused_unread_and_one_at_it_is_read(tmp_path):
    path = tmp_path / "input"
    path.write_bytes(b"x" * 1001)
    with pytest.raises(inputs.InputError, match=r"^.*input: 1001 bytes; an input is at most 1000 bytes$"):
        inputs.read_bounded(path, "an input", 1000)
    path.write_bytes(b"x" * 1000)
    assert inputs.read_bounded(path, "an input", 1000) == b"x" * 1000
    link = tmp_path / "link"
    link.symlink_to(path)  # a link to a regular file is read: a user's dotfiles repository
    assert inputs.read_bounded(link, "an input", 1000) == b"x" * 1000


@pytest.mark.parametrize("text", [
    "x = " + "[" * 50_000 + "]" * 50_000,  # RecursionError in tomllib
    "x = " + "[" * 33 + "]" * 33,  # parses, but deeper than any file of labctl's
    "a = 1\n" + "".join(f"[{'.'.join(['t'] * n)}]\n" for n in range(1, 40)),  # tables in tables
])
def test_a_toml_document_nested_past_the_bound_is_refused_in_one_line(text):
    with pytest.raises(inputs.InputError) as error:
        inputs.parse_toml(text, "f.toml")
    assert str(error.value) == (f"f.toml: nested more than {inputs.MAX_DEPTH} deep "
                                "(tables or lists within each other)")


def test_a_document_at_the_bound_is_accepted():
    assert inputs.depth(inputs.parse_toml("x = " + "[" * 31 + "]" * 31, "f.toml")) == 32
    assert inputs.depth(inputs.parse_json("[" * 32 + "]" * 32, "f.json")) == 32


@pytest.mark.parametrize("text, says", [
    ("[" * 100_000 + "]" * 100_000, "nested more than 32 deep"),
    ('{"a": NaN}', "not valid JSON: NaN is not a JSON number"),
    ('{"a": -Infinity}', "not valid JSON: -Infinity is not a JSON number"),
    ('{"a": ' + "9" * 5000 + "}", "not valid JSON"),
])
def test_a_json_document_too_deep_or_with_nan_is_refused(text, says):
    with pytest.raises(inputs.InputError, match=f"^f.json: {says}"):
        inputs.parse_json(text, "f.json")


def test_depth_counts_without_recursion():
    deep: list = []
    for _ in range(100_000):  # far past the recursion limit
        deep = [deep]
    assert inputs.depth(deep) == 100_001
    assert [inputs.depth(v) for v in (1, [], {}, {"a": [1]}, [[], [[]]])] == [0, 1, 1, 2, 3]


# -- experiment files ----------------------------------------------------------------------------

def test_a_deeply_nested_experiment_is_one_line_naming_the_file(labctl, tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text('name = "x"\nvalue = ' + "[" * 100_000 + "]" * 100_000 + "\n")
    one_line(labctl("plan", str(path), "--db", str(tmp_path / "r.db")), 2,
             f"{path}: nested more than 32 deep")
    with pytest.raises(experiment.ExperimentError, match="^inline: nested more than 32 deep"):
        experiment.parse("x = " + "{ a = " * 40 + "1" + " }" * 40, "inline")


def test_an_experiment_file_past_a_mebibyte_is_refused_unread(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text(SMALL + "#" * experiment.MAX_FILE_BYTES)
    with pytest.raises(experiment.ExperimentError, match=r"big.toml: \d+ bytes; an experiment file is at most 1048576"):
        experiment.load(path)


# -- exclude rules ---------------------------------------------------------------------------

def _naive_excluded(grid: dict) -> int:
    """The rule as documented, applied to each combination in turn: every key of a rule given,
    at one of its values. The oracle for the fast matcher."""
    import itertools

    count = 0
    for combination in itertools.product(*grid["axes"].values()):
        values = {**grid.get("params", {}), **dict(zip(grid["axes"], combination))}
        for rule in grid["exclude"]:
            if all(name in values and values[name] in (wanted if isinstance(wanted, list) else [wanted])
                   for name, wanted in rule.items()):
                count += 1
                break
    return count


def _toml(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def _grid_file(grid: dict) -> str:
    lines = ['name = "x"', "[[grid]]", 'kernel = "skynet"']
    lines.append("params = { " + ", ".join(f"{k} = {_toml(v)}" for k, v in grid.get("params", {}).items()) + " }")
    lines.append("axes = { " + ", ".join(f"{k} = {_toml(v)}" for k, v in grid["axes"].items()) + " }")
    for rule in grid["exclude"]:
        lines += ["[[grid.exclude]]"] + [f"{k} = {_toml(v)}" for k, v in rule.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("grid", [
    {"axes": {"leaves": [1000, 2000, 3000], "branching": [2, 5, 10]},
     "exclude": [{"leaves": 1000}, {"leaves": [2000, 3000], "branching": 10}, {"branching": 2, "leaves": 3000}]},
    {"params": {"deregister": True}, "axes": {"leaves": [1000, 2000]},
     "exclude": [{"deregister": False}, {"deregister": True, "leaves": 2000}]},  # fixed keys: all or none
    {"axes": {"leaves": [1000, 2000]}, "exclude": [{"threads": 2}]},  # a key the grid does not give
    {"axes": {"leaves": [1000, 2000], "branching": [2, 10]},
     "exclude": [{"leaves": [1000, 1000.0]}, {"branching": [10], "leaves": [2000]}, {}]},  # {}: every point
])
def test_exclude_rules_leave_out_exactly_the_combinations_they_match(grid):
    excluded = _naive_excluded(grid)
    total = len(grid["axes"]["leaves"]) * len(grid["axes"].get("branching", [1]))
    if excluded == total:
        with pytest.raises(experiment.ExperimentError, match="every combination is excluded"):
            experiment.parse(_grid_file(grid), "x.toml")
        return
    plan = experiment.parse(_grid_file(grid), "x.toml")
    assert len(plan.points) == total - excluded
    assert any(f"{excluded} combinations excluded by rules" in note for note in plan.notes) or not excluded


def test_thousands_of_exclude_rules_plan_in_seconds(tmp_path):
    # 2,000 points and 10,000 rules: a rule tried against each point in turn is 20 million
    # matches (about a minute); the matcher's sets of rules per value take a few integer ANDs.
    leaves = list(range(1000, 3000))
    rules = "".join(f"[[grid.exclude]]\nleaves = [{v}, {v + 1}]\nbranching = 7\n" for v in range(1000, 11000))
    path = tmp_path / "rules.toml"
    path.write_text(f'name = "r"\n[[grid]]\nkernel = "skynet"\naxes = {{ leaves = {leaves}, branching = [7, 8] }}\n'
                    + rules)
    started = time.monotonic()
    plan = experiment.load(path)
    assert time.monotonic() - started < 20
    # Rules at 1000..10999 each take two values of leaves with branching 7: every leaves value
    # of the axis is excluded at branching 7 and none at 8.
    assert len(plan.points) == 2000
    assert {p.params["branching"] for p in plan.points} == {8}


# -- peers -----------------------------------------------------------------------------------



def _broken_peers(root: Path) -> dict[str, str]:
    """Peer folders whose peer.toml cannot be used, by name, with what their reason says."""
    made = {}
    for name in ("fifo", "huge", "deep", "device", "format", "conversion", "attribute", "index"):
        (root / name).mkdir()
    os.mkfifo(root / "fifo" / "peer.toml")
    made["fifo"] = "a FIFO, not a regular file"
    (root / "huge" / "peer.toml").write_text('name = "huge"\n' + "# padding\n" * 100_000)
    made["huge"] = f"bytes; a peer.toml is at most {runtimes.MAX_MANIFEST_BYTES} bytes"
    (root / "deep" / "peer.toml").write_text("x = " + "[" * 30_000 + "]" * 30_000 + "\n")
    made["deep"] = "nested more than 32 deep"
    (root / "device" / "peer.toml").symlink_to("/dev/zero")
    made["device"] = "a character device, not a regular file"
    for name, word in (("format", "{folder:>99999999}/peer"), ("conversion", "{folder!r}"),
                       ("attribute", "{folder.name}"), ("index", "{build[0]}")):
        (root / name / "peer.toml").write_text(
            f'name = "{name}"\nsummary = "s"\ncommand = [{json.dumps(word)}]\n[kernels]\ncounting_actor = ["messages"]\n')
    made["format"] = "'{folder:>99999999}/peer' formats {folder}; a place is written bare: {folder}, {build}, {cache}"
    made["conversion"] = "'{folder!r}' formats {folder}; a place is written bare"
    made["attribute"] = "names {folder.name}; a word may name only {folder}, {build}, {cache}"
    made["index"] = "names {build[0]}; a word may name only"
    return made


def test_an_unusable_peer_is_listed_unavailable_with_its_reason_and_costs_nothing_else(peers, capsys):
    root, reload = peers
    broken = _broken_peers(root)
    write_peer(root, "honest", "honest")
    reload()
    started = time.monotonic()
    known = runtimes.runtimes()
    assert time.monotonic() - started < 10  # no FIFO waited on, no 2 MB parsed
    for name, says in broken.items():
        assert known[name].missing.startswith(f"{root / name / 'peer.toml'} is not a valid peer manifest: ")
        assert says in known[name].missing, known[name].missing
    assert not known["honest"].missing
    listed = labctl_here(capsys, "kernels")
    assert listed.returncode == 0
    text = " ".join(listed.stdout.split())
    for name in broken:
        assert f"{name} peer in {root / name}; unavailable: " in text
    # kernels --json names each, unavailable, with its reason (under every kernel: which kernels
    # a peer.toml that cannot be read offers is unknown).
    catalogue = json.loads(labctl_here(capsys, "kernels", "--json").stdout)
    counting = next(k for k in catalogue if k["name"] == "counting_actor")
    listed_runtimes = {r["name"]: r for r in counting["runtimes"]}
    assert listed_runtimes["honest"]["available"]
    for name, says in broken.items():
        if name in ("format", "conversion", "attribute", "index"):
            continue  # their manifests parse no further than the command either
        assert not listed_runtimes[name]["available"] and says in listed_runtimes[name]["missing"]


def test_a_broken_peer_named_as_a_runtime_says_why_it_is_unavailable(peers, capsys, tmp_path):
    root, reload = peers
    _broken_peers(root)
    reload()
    result = labctl_here(capsys, "run", "counting_actor", "--runtime", "fifo")
    one_line(result, 2, "counting_actor: runtime 'fifo' is unavailable here: ",
             "peer.toml is not a valid peer manifest: a FIFO, not a regular file",
             "(runtimes of counting_actor: labctl")
    path = tmp_path / "e.toml"
    path.write_text('name = "e"\n[[grid]]\nkernel = "counting_actor"\naxes = { runtime = ["labctl", "huge"] }\n')
    one_line(labctl_here(capsys, "plan", str(path), "--db", str(tmp_path / "r.db")), 2,
             "grid[0].axes.runtime: counting_actor: runtime 'huge' is unavailable here: ",
             "a peer.toml is at most 65536 bytes")


def test_runs_on_our_runtime_go_on_past_broken_peers(peers, labctl, tmp_path):
    # In processes of their own: the worker reads the runtimes too, and a FIFO hung it.
    root, _ = peers
    _broken_peers(root)
    env = {runtimes.PEERS_ENV: str(root)}
    ran = labctl("run", "skynet", "--leaves", "1000", env=env, timeout=60)
    assert ran.returncode == 0 and "sum=499500" in ran.stdout, ran.stderr
    path = tmp_path / "e.toml"
    path.write_text(SMALL)
    swept = labctl("sweep", str(path), "--db", str(tmp_path / "r.db"), env=env, timeout=120)
    assert swept.returncode == 0 and "1 points done, 0 failed" in swept.stdout, swept.stderr


# What a peer prints: a reply of one line, and stderr of which the last line is shown.
FLOODS = textwrap.dedent('''
    import json, sys
    request = json.load(sys.stdin)
    n = request["params"]["messages"]
    if sys.argv[1] == "stdout":
        while True:
            sys.stdout.write("x" * 65536)
    for _ in range(300):  # 36 MB of stderr, then a good reply
        sys.stderr.write("noise " * 20000 + "\\n")
    sys.stderr.write("the last line\\n")
    print(json.dumps({"elapsed_ns": 10**6, "messages": n, "answer": f"received={n} sum={n * (n + 1) // 2}"}))
    sys.exit(int(sys.argv[2]))
''')


def _flood_peer(root: Path, name: str, *args: str) -> runtimes.Runtime:
    folder = root / name
    folder.mkdir()
    (folder / "peer.py").write_text(FLOODS)
    (folder / "peer.toml").write_text(f'name = "{name}"\nsummary = "s"\n'
                                      f'command = {json.dumps([sys.executable, "{folder}/peer.py", *args])}\n'
                                      '[kernels]\ncounting_actor = ["messages"]\n')
    return runtimes.runtimes()[name]


def test_a_peer_flooding_stdout_is_killed_and_fails_as_protocol(peers):
    root, reload = peers
    reload()
    runtime = _flood_peer(root, "flood", "stdout", "0")
    with pytest.raises(runtimes.ProtocolError, match=r"^flood: printed more than 1 MiB on stdout, not one JSON "
                                                     r"line \(stdout began 'xxxx.*'\); labctl killed it$"):
        runtimes.run_external(runtime, "counting_actor", {"messages": 10})


def test_a_peer_flooding_stderr_keeps_only_its_tail(peers):
    root, reload = peers
    reload()
    ok = runtimes.run_external(_flood_peer(root, "noisy", "stderr", "0"), "counting_actor", {"messages": 10})
    assert ok.answer == "received=10 sum=55"
    reload()
    with pytest.raises(runtimes.ExternalFailure, match=r"^noisier: counting_actor exited with status 3: the last line$"):
        runtimes.run_external(_flood_peer(root, "noisier", "stderr", "3"), "counting_actor", {"messages": 10})


def test_a_reply_nested_past_the_bound_is_a_protocol_error():
    for reply in (b"[" * 100_000 + b"]" * 100_000, json.dumps({"metrics": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}).encode()):
        with pytest.raises(runtimes.ProtocolError, match="^p: printed JSON nested more than 32 deep"):
            runtimes._parse_reply("p", reply)


@pytest.mark.parametrize("histogram", [{"600": 3}, [[600]], [[600, 0]], [[-1, 3]], [[600, 1.5]], [[600, True]],
                                       [[600, 2**63]], [600, 3], [[600, 1]] * (runtimes.MAX_BUCKETS + 1)])
def test_a_histogram_that_is_no_list_of_buckets_is_a_protocol_error(histogram):
    reply = json.dumps({"elapsed_ns": 10, "messages": 0, "answer": "a", "histogram": histogram}).encode()
    with pytest.raises(runtimes.ProtocolError, match=r"^p: 'histogram' must be a list of at most 10000"):
        runtimes._parse_reply("p", reply)


def test_a_histogram_of_buckets_is_kept_as_given():
    reply = json.dumps({"elapsed_ns": 10, "messages": 0, "answer": "a", "histogram": [[0, 1], [600, 3]]}).encode()
    assert runtimes._parse_reply("p", reply).histogram == [[0, 1], [600, 3]]


# -- gate baselines --------------------------------------------------------------------------

GOOD_POINT = {"key": "k1", "kernel": "skynet", "params": {"leaves": 1000}, "instructions": 1000}


@pytest.mark.parametrize("baseline, key, says", [
    ({"points": [{**GOOD_POINT, "instructions": 0}]}, "points[0].instructions", "above 0, got 0"),
    ({"points": [{**GOOD_POINT, "instructions": -5}]}, "points[0].instructions", "got -5"),
    ({"points": [{**GOOD_POINT, "instructions": 1.5}]}, "points[0].instructions", "got 1.5"),
    ({"points": [{**GOOD_POINT, "instructions": "1000"}]}, "points[0].instructions", "got '1000'"),
    ({"points": [{**GOOD_POINT, "instructions": True}]}, "points[0].instructions", "got True"),
    ({"points": [{**GOOD_POINT, "instructions": None}]}, "points[0].instructions", "got None"),
    ({"points": [{**GOOD_POINT, "params": [1]}]}, "points[0].params", "must be an object of parameters"),
    ({"points": [{**GOOD_POINT, "key": 7}]}, "points[0].key", "must be a string, got 7"),
    ({"points": [{**GOOD_POINT, "schedule_dependent": "yes"}]}, "points[0].schedule_dependent", "true or false"),
    ({"points": [[GOOD_POINT]]}, "points[0]", "must be an object"),
    ({"points": [GOOD_POINT, GOOD_POINT]}, "points[1].key", "also points[0]'s"),
    ({"build": ["GNU"], "points": []}, "build", "must be an object"),
    ({"build": None, "points": []}, "build", "must be an object, got None"),
    ({"build": {"compiler": {"name": "GNU"}}, "points": []}, "build.compiler", "must be a string"),
])
def test_a_malformed_baseline_is_refused_naming_the_file_and_the_key(tmp_path, capsys, baseline, key, says):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"version": gate.VERSION, **baseline}))
    with pytest.raises(gate.GateError) as error:
        gate.read(path)
    assert error.value.code == 2
    assert str(error.value).startswith(f"--baseline {path}: {key}: ") and says in str(error.value)
    db = tmp_path / "r.db"
    fake_run(db, {"skynet": [1000] * 3, "ping_pong": [5000] * 3})
    before = sha256(db)
    one_line(labctl_here(capsys, "gate", "--run", "1", "--db", str(db), "--baseline", str(path)), 2,
             f"gate: --baseline {path}: {key}: ")
    assert sha256(db) == before


@pytest.mark.parametrize("content, says", [
    ('{"version": 1, "points": [{"key": "k", "instructions": NaN}]}', "not valid JSON: NaN is not a JSON number"),
    ("[" * 100_000 + "]" * 100_000, "nested more than 32 deep"),
    ("\udcff", "not UTF-8 text"),
])
def test_a_baseline_that_is_no_json_or_too_deep_is_one_line(tmp_path, content, says):
    path = tmp_path / "bad.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(gate.GateError, match=f"^--baseline {path}: {says}") as error:
        gate.read(path)
    assert error.value.code == 2


def test_a_baseline_that_is_a_fifo_is_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(gate.GateError, match="a FIFO, not a regular file"):
        gate.read(tmp_path / "fifo.json")


def test_a_well_formed_baseline_still_judges(tmp_path):
    db = tmp_path / "r.db"
    path = tmp_path / "g.baseline.json"
    gate.write(gate.record(db, fake_run(db, {"skynet": [1000] * 3, "ping_pong": [5000] * 3})), path)
    result = gate.check(db, fake_run(db, {"skynet": [1000] * 3, "ping_pong": [5000] * 3}), gate.read(path), path)
    assert not result.failed and [row.verdict for row in result.rows] == [gate.OK, gate.OK]


# -- the store ---------------------------------------------------------------------------------

@pytest.fixture
def small_store(tmp_path) -> tuple[Path, Path]:
    experiment_file = tmp_path / "small.toml"
    experiment_file.write_text(SMALL)
    db = tmp_path / "r.db"
    plan = experiment.load(experiment_file)
    fake_run(db, {"skynet": [1000], "ping_pong": [5000]})
    with Store(db) as store:  # a second run, of the small experiment, interrupted before its sample
        store.end_run(store.create_run(plan, "labctl sweep small.toml", {"hostname": "h"}, {}, []), "interrupted")
    return db, experiment_file


@pytest.mark.parametrize("table, column", [("runs", "description"), ("samples", "answer"), ("points", "failure")])
def test_a_store_with_text_that_is_not_utf8_is_damaged_and_never_appended_to(small_store, capsys, table, column):
    db, experiment_file = small_store
    with sqlite3.connect(db) as connection:  # another program's write: SQLite checks nothing
        connection.execute(f"UPDATE {table} SET {column} = CAST(X'41ff42' AS TEXT) WHERE rowid = 1")
    connection.close()
    before = sha256(db)
    said = f"{db}: a damaged store: a value of {table}.{column} is text that is not UTF-8; refusing to touch it"
    for command in (["sweep", str(experiment_file)], ["sweep", "--resume", "2"]):
        assert one_line(labctl_here(capsys, *command, "--db", str(db)), 2) == f"labctl: {said}"
    assert sha256(db) == before
    for command in (["runs"], ["show", "1"], ["fingerprint", "1"], ["export", "1", "--format", "csv"]):
        result = labctl_here(capsys, *command, "--db", str(db))
        if table == "samples" and command == ["runs"]:
            assert result.returncode == 0  # runs reads no sample: it lists the run
            continue
        one_line(result, 2, "damaged store", "not UTF-8", column)
    assert sha256(db) == before


def test_valid_text_past_ascii_is_not_damage(small_store):
    db, _ = small_store
    name = "caf\u00e9 \u2603 \U0001f600"
    plan = experiment.parse(SMALL.replace('"small"', json.dumps(name, ensure_ascii=False)), "s.toml")
    with Store(db) as store:
        first = store.create_run(plan, "labctl sweep s.toml", {"hostname": "h\u00e9"}, {}, [])
    with Store(db, create=False) as store:  # opened, checked, and appended to again
        second = store.create_run(plan, "labctl sweep s.toml", {"hostname": "h"}, {}, [])
        assert store.run(first).name == store.run(second).name == name


@pytest.mark.parametrize("make", ["fifo", "device"])
def test_a_store_path_that_is_not_a_regular_file_is_refused(tmp_path, capsys, make):
    path = tmp_path / "r.db"
    if make == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/null")
    with pytest.raises(StoreError, match="not a regular file"):
        Store(path)
    for command in (["runs"], ["sweep", "quickstart"], ["fingerprint", "1"]):
        one_line(labctl_here(capsys, *command, "--db", str(path)), 2, str(path), "not a regular file")


@pytest.mark.parametrize("args", [["runs"], ["show", "latest"], ["export", "1"], ["compare", "1", "1"],
                                  ["report", "1"], ["fingerprint", "1"]])
def test_a_folder_given_as_the_store_is_refused_in_one_line(capsys, tmp_path, args):
    result = labctl_here(capsys, *args, "--db", str(tmp_path))
    one_line(result, 2, "a folder, not a store file")
    assert list(tmp_path.iterdir()) == []
