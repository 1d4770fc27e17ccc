"""Runtimes and allocators as axes: external programs held to the protocol (a well-behaved one,
one that lies about its answer or its message count, one that hangs, one that prints garbage,
one that fails or dies), peers built at first use, runtimes and allocators missing here skipped
with the reason, and the Go peers shipped in peers/go."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
import time
from pathlib import Path

import oracles
import pytest
from click.testing import CliRunner

from labctl import cli
from labctl.catalogue import kernels, runtimes
from labctl.plan import experiment
from labctl.run import runner
from labctl.store import Store
from labctl.vocabulary import metrics
from labctl.vocabulary.point import Point

# One program for every behaviour: counting_actor's answer, honest or not (argv[1] says how).
PEER = textwrap.dedent('''
    import json, os, sys, time
    mode = sys.argv[1]
    request = json.load(sys.stdin)
    assert request["kernel"] == "counting_actor", request
    n = request["params"]["messages"]
    reply = {"elapsed_ns": 10**9 + n, "messages": n, "answer": f"received={n} sum={n * (n + 1) // 2}",
             "metrics": {"setup_ns": 12.5}}
    if mode == "lie":
        reply["answer"] = f"received={n} sum=42"
    elif mode == "miscount":
        reply["messages"] = n - 1
    elif mode == "hang":
        open(os.environ["PEER_PIDFILE"], "w").write(str(os.getpid()))
        time.sleep(3600)
    elif mode == "garbage":
        print("all good, trust me")
        sys.exit(0)
    elif mode == "two_lines":
        print(json.dumps(reply))
    elif mode == "no_answer":
        del reply["answer"]
    elif mode == "fail":
        print("cannot run today", file=sys.stderr)
        sys.exit(3)
    elif mode == "crash":
        os.kill(os.getpid(), 9)
    elif mode == "huge":
        reply["elapsed_ns"] = 2**64
    elif mode == "collide":
        reply["metrics"] = {"elapsed_ns": 1.0}
    elif mode == "param_metric":
        reply["metrics"] = {"dispatcher": 1.0}
    elif mode == "nan_metric":
        reply["metrics"] = {"setup_ns": float("nan")}
    elif mode == "escapes":
        print("\x1b[2J\x1b[31mred\u202eevil", file=sys.stderr)
        sys.exit(4)
    print(json.dumps(reply))
''')


def write_peer(root: Path, name: str, mode: str, params: str = '["messages"]', **extra: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "peer.py").write_text(PEER)
    fields = {"name": json.dumps(name), "summary": json.dumps(f"a test program ({mode})"),
              "command": json.dumps([sys.executable, "{folder}/peer.py", mode]), **extra}
    lines = [f"{key} = {value}" for key, value in fields.items()]
    (folder / "peer.toml").write_text("\n".join(lines) + f"\n[kernels]\ncounting_actor = {params}\n")
    return folder




def point(runtime: str, messages: int = 1000, repeat: int = 2, timeout_s: float = 60) -> Point:
    params = kernels.resolve("counting_actor", {"runtime": runtime, "messages": messages})
    return Point("counting_actor", {k: v for k, v in params.items() if v is not None},
                 repeats=repeat, timeout_s=timeout_s)


def test_a_well_behaved_program_is_measured_and_verified(peers):
    root, reload = peers
    write_peer(root, "honest", "honest")
    reload()
    assert kernels.get("counting_actor").runtimes[:1] == ("labctl",)
    assert "honest" in kernels.get("counting_actor").runtimes
    samples = list(runner.run_point(point("honest", 1000)))
    assert [s.index for s in samples] == [0, 1]
    for sample in samples:
        assert sample.verified and sample.answer == sample.expected == "received=1000 sum=500500"
        assert sample.elapsed_ns == 10**9 + 1000 and sample.messages_processed == 1000
        assert sample.metrics == {"setup_ns": 12.5}
        assert sample.params == {"runtime": "honest", "messages": 1000}
        assert sample.pid > 0 and sample.peak_rss_kb > 0


@pytest.mark.parametrize("mode, kind, message", [
    ("lie", "verification", "honest? wrong answer: got 'received=1000 sum=42', expected 'received=1000 sum=500500'"),
    ("miscount", "verification", "reported 999 messages, expected 1000"),
    ("garbage", "protocol", "printed a line that is not JSON: 'all good, trust me'"),
    ("two_lines", "protocol", "printed 2 lines on stdout, not one JSON line"),
    ("no_answer", "protocol", "'answer' must be a string, got None"),
    ("fail", "failure", "exited with status 3: cannot run today"),
    ("crash", "crash", "killed by SIGKILL"),
    # What the store and the analysis cannot take is refused as the protocol's, never stored:
    ("huge", "protocol", "'elapsed_ns' must be an integer from 1 to 9223372036854775807"),
    ("collide", "protocol", "metric name 'elapsed_ns' is not allowed"),
    ("param_metric", "protocol", "metric name 'dispatcher' is not allowed"),
    ("nan_metric", "protocol", "metric 'setup_ns' must be a finite number"),
    # Its stderr reaches the store and the screen escaped: no terminal control from a peer.
    ("escapes", "failure", "exited with status 4: \\x1b[2J\\x1b[31mred\\u202eevil"),
])
def test_a_program_that_breaks_its_word_fails_its_point_saying_how(peers, mode, kind, message):
    root, reload = peers
    write_peer(root, mode, mode)
    reload()
    with pytest.raises(runner.PointFailed) as caught:
        list(runner.run_point(point(mode)))
    assert caught.value.kind == kind
    assert message.replace("honest? ", f"{mode}: counting_actor: ") in str(caught.value)


def test_a_program_that_hangs_is_killed_at_the_points_timeout(peers, tmp_path, monkeypatch):
    root, reload = peers
    write_peer(root, "stuck", "hang")
    reload()
    pidfile = tmp_path / "pid"
    monkeypatch.setenv("PEER_PIDFILE", str(pidfile))
    started = time.monotonic()
    with pytest.raises(runner.PointFailed) as caught:
        list(runner.run_point(point("stuck", timeout_s=3)))
    assert caught.value.kind == "timeout"
    assert time.monotonic() - started < 30
    pid = int(pidfile.read_text())
    for _ in range(100):  # killed with the worker's process group; reaped by init
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the hanging program (pid {pid}) outlived its point")


def test_a_peer_is_built_once_at_first_use_into_the_cache(peers, tmp_path):
    root, reload = peers
    folder = write_peer(root, "built", "honest", build=json.dumps(
        ["sh", "-c", "echo built >> {cache}/builds.log && cp peer.py {build}/copy.py"]))
    toml = (folder / "peer.toml").read_text().replace('"{folder}/peer.py"', '"{build}/copy.py"')
    (folder / "peer.toml").write_text(toml)
    reload()
    for _ in range(2):
        assert all(s.verified for s in runner.run_point(point("built")))
    assert (tmp_path / "cache" / "builds.log").read_text() == "built\n"
    (folder / "peer.py").write_text(PEER + "\n# changed\n")  # a change to the folder: built again
    assert all(s.verified for s in runner.run_point(point("built", repeat=1)))
    assert (tmp_path / "cache" / "builds.log").read_text() == "built\nbuilt\n"


def test_a_programs_peak_rss_is_its_own_not_its_builds(peers):
    # The build, in the same worker, holds 300 MiB; the program a few MiB: each sample's peak RSS
    # is the program's (wait4's use of that child), not the largest of the worker's children.
    root, reload = peers
    write_peer(root, "heavybuild", "honest", build=json.dumps(
        [sys.executable, "-c", "x = bytearray(300 << 20); x[::4096] = b'1' * len(x[::4096])"]))
    reload()
    samples = list(runner.run_point(point("heavybuild")))
    assert all(s.verified for s in samples)
    assert all(0 < s.peak_rss_kb < 150 * 1024 for s in samples), [s.peak_rss_kb for s in samples]


def test_a_failed_build_fails_the_point_with_the_build_output_and_leaves_nothing(peers, tmp_path):
    root, reload = peers
    write_peer(root, "broken", "honest", build=json.dumps(["sh", "-c", "echo 'syntax error at line 3' >&2; exit 1"]))
    reload()
    with pytest.raises(runner.PointFailed, match="build failed .* syntax error at line 3") as caught:
        list(runner.run_point(point("broken")))
    assert caught.value.kind == "failure"
    assert not [p for p in (tmp_path / "cache" / "peers").iterdir() if p.is_dir()]


SWEEP = '''
name = "peers"
repeats = 2
warmup = 0
order = "grid"
[[grid]]
kernel = "counting_actor"
params = { messages = 2000, dispatcher = "thread_pool" }
axes = { runtime = ["labctl", "honest", "absent"], threads = [1, 2] }
'''


def test_a_sweep_ranks_the_runtimes_and_skips_a_missing_one_with_the_reason(peers, tmp_path):
    root, reload = peers
    write_peer(root, "honest", "honest", params='["messages", "threads"]')
    write_peer(root, "absent", "honest", params='["messages", "threads"]', requires='["labctl-no-such-tool"]',
               install='"apt-get install nothing"')
    reload()
    (tmp_path / "peers.toml").write_text(SWEEP)
    plan = experiment.load(tmp_path / "peers.toml")
    by_runtime = {}
    for p in plan.points:
        by_runtime.setdefault(p.params["runtime"], []).append(p)
    assert len(by_runtime["labctl"]) == len(by_runtime["honest"]) == len(by_runtime["absent"]) == 2
    assert all("dispatcher" not in p.params and "allocator" not in p.params for p in by_runtime["honest"])
    assert all(p.skip == "runtime absent: labctl-no-such-tool not found on PATH (apt-get install nothing)"
               for p in by_runtime["absent"])
    assert not any(p.skip for p in by_runtime["labctl"] + by_runtime["honest"])
    assert any("2 points will be skipped: runtime absent" in note for note in plan.notes)

    db = tmp_path / "r.db"
    result = CliRunner().invoke(cli.main, ["sweep", str(tmp_path / "peers.toml"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "2 skipped (unavailable here)" in result.output
    with Store(db) as store:
        rows = store.points(1)
        assert sorted(r.status for r in rows) == ["done"] * 4 + ["skipped"] * 2
        assert {r.failure_kind for r in rows if r.status == "skipped"} == {"unavailable"}
        assert store.run(1).points_skipped == 2
    out = tmp_path / "report"
    result = CliRunner().invoke(cli.main, ["report", "1", "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = (out / "report.md").read_text()
    assert "## Runtimes side by side" in text
    assert "| counting_actor | threads=1 | 1 | labctl |" in text  # ours, then the slow honest one
    assert "| counting_actor | threads=1 | 2 | honest | - |" in text
    assert "## Skipped points" in text and "labctl-no-such-tool not found on PATH" in text


def test_kernels_lists_runtimes_and_allocators_with_why_one_is_missing(peers):
    root, reload = peers
    write_peer(root, "absent", "honest", requires='["labctl-no-such-tool"]')
    (root / "bad").mkdir()
    (root / "bad" / "peer.toml").write_text('name = "bad"\n')
    reload()
    assert "bad" in runtimes.runtimes() and "peer manifest" in runtimes.runtimes()["bad"].missing
    result = CliRunner().invoke(cli.main, ["kernels", "--describe", "counting_actor"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())  # wrapped to the console's width, which a test may set
    assert "absent" in text and "labctl-no-such-tool not found on PATH" in text
    assert "Allocators" in text and "jemalloc" in text
    listing = json.loads(CliRunner().invoke(cli.main, ["kernels", "--json"]).output)
    counting = next(k for k in listing if k["name"] == "counting_actor")
    assert {"name": "absent", "available": False,
            "missing": "labctl-no-such-tool not found on PATH"} in counting["runtimes"]


def test_a_peer_whose_library_is_not_installed_is_missing_with_its_install_line(peers, tmp_path, monkeypatch):
    # A library the build links is looked for before any build: without it the runtime is missing
    # (its points skipped), with it (here, a file in LD_LIBRARY_PATH) it runs.
    root, reload = peers
    write_peer(root, "unlinked", "honest", libraries='["libno_such_labctl_lib.so"]',
               install='"apt-get install libno-such-dev"')
    write_peer(root, "linked", "honest", libraries='["libhere_for_labctl.so"]')
    write_peer(root, "badname", "honest", libraries='["../../etc/passwd"]')
    library = tmp_path / "libs" / "libhere_for_labctl.so"
    library.parent.mkdir()
    library.write_bytes(Path(sys.executable).resolve().read_bytes()[:64])  # an ELF header of this word size
    monkeypatch.setenv("LD_LIBRARY_PATH", str(library.parent))  # undone, and the catalogue reread, by `peers`
    reload()
    known = runtimes.runtimes()
    assert known["unlinked"].missing == "libno_such_labctl_lib.so not found (apt-get install libno-such-dev)"
    assert known["linked"].missing == ""
    assert "peer manifest" in known["badname"].missing and "libraries.0" in known["badname"].missing


def test_a_peer_whose_files_are_not_installed_is_missing_with_its_install_line(peers, tmp_path):
    # Other files its build needs (a crate's sources), each a glob at least one regular file must
    # match: a folder left by a package whose files are gone (CI's bare path hides files, not
    # folders) does not count.
    crates = tmp_path / "registry"
    (crates / "thing-1.2.3").mkdir(parents=True)
    (crates / "thing-1.2.3" / "Cargo.toml").write_text("[package]\n")
    (crates / "gone-0.1.0").mkdir()
    root, reload = peers
    write_peer(root, "crated", "honest", files=json.dumps([f"{crates}/thing-1.*/Cargo.toml"]))
    write_peer(root, "uncrated", "honest", files=json.dumps([f"{crates}/gone-0.*/Cargo.toml"]),
               install='"apt-get install librust-gone-dev"')
    write_peer(root, "relative", "honest", files='["registry/thing-1.2.3/Cargo.toml"]')
    reload()
    known = runtimes.runtimes()
    assert known["crated"].missing == ""
    assert known["uncrated"].missing == f"{crates}/gone-0.*/Cargo.toml not found (apt-get install librust-gone-dev)"
    assert "peer manifest" in known["relative"].missing and "files.0" in known["relative"].missing


def test_a_manifest_naming_a_kernel_or_parameter_we_lack_is_a_runtime_that_cannot_run(peers):
    root, reload = peers
    folder = write_peer(root, "confused", "honest")
    (folder / "peer.toml").write_text((folder / "peer.toml").read_text()
                                      .replace('counting_actor = ["messages"]',
                                               'counting_actor = ["messages", "speed"]\nfan = ["fan_out"]'))
    reload()
    why = runtimes.runtimes()["confused"].missing
    assert "kernels.counting_actor: 'speed' is not a parameter of counting_actor" in why
    assert "labctl cannot verify an external fan" in why


def test_a_peer_takes_only_the_values_its_manifest_chooses_and_labctl_refuses_the_rest(peers):
    # A peer mapping our dispatchers onto fewer schedulers of its own: any other value, given or
    # our default, is refused before the program runs, naming the parameter and what it takes.
    root, reload = peers
    write_peer(root, "picky", "honest", '["messages", "dispatcher", "threads"]',
               choices='{ dispatcher = ["one_thread", "work_stealing"] }')
    write_peer(root, "stealer", "honest", '["messages", "dispatcher", "threads"]',
               choices='{ dispatcher = ["work_stealing"] }')
    reload()
    assert runtimes.runtimes()["picky"].missing == ""
    grid = lambda *given: kernels.point(*given, metrics.TIME, drop=True)
    for resolve in (kernels.resolve, grid):  # a command line's, and a grid's
        with pytest.raises(kernels.ParamError) as caught:
            resolve("counting_actor", {"runtime": "picky", "dispatcher": "thread_pool"})
        assert caught.value.param == "dispatcher"
        assert str(caught.value) == ("counting_actor: parameter 'dispatcher' on runtime 'picky' must be one of: "
                                     "one_thread, work_stealing; got 'thread_pool'")
    with pytest.raises(kernels.ParamError, match="must be one of: work_stealing; got 'one_thread' \\(the default\\)"):
        kernels.resolve("counting_actor", {"runtime": "stealer"})
    # The values it takes, and a runtime without the table, are as before.
    assert kernels.resolve("counting_actor", {"runtime": "picky", "dispatcher": "work_stealing"})["dispatcher"] \
        == "work_stealing"
    assert kernels.resolve("counting_actor", {"runtime": "labctl", "dispatcher": "thread_pool"})["threads"] == 2
    result = CliRunner().invoke(cli.main, ["run", "counting_actor", "--runtime", "picky", "--dispatcher",
                                           "active_obj", "--messages", "10"])
    assert result.exit_code != 0
    assert "parameter 'dispatcher' on runtime 'picky' must be one of: one_thread, work_stealing; " \
           "got 'active_obj'" in result.output


def test_a_peer_taking_our_dispatcher_takes_its_parameters_as_ours_does(peers):
    # threads means nothing to one_thread: left out of the request (a grid's point drops it, a
    # command line naming it is refused), as on our runtime; on a pool it has our default.
    root, reload = peers
    write_peer(root, "mapper", "honest", '["messages", "dispatcher", "threads"]')
    reload()

    def shown(params: dict) -> dict:
        return {k: v for k, v in params.items() if v is not None}

    assert shown(kernels.resolve("counting_actor", {"runtime": "mapper", "messages": 10})) == {
        "runtime": "mapper", "messages": 10, "dispatcher": "one_thread"}
    assert shown(kernels.resolve("counting_actor", {"runtime": "mapper", "messages": 10,
                                                    "dispatcher": "thread_pool"})) == {
        "runtime": "mapper", "messages": 10, "dispatcher": "thread_pool", "threads": 2}
    point_ = kernels.point("counting_actor", {"runtime": "mapper", "messages": 10, "threads": 4}, metrics.TIME,
                           drop=True)
    assert shown(point_.params) == {"runtime": "mapper", "messages": 10, "dispatcher": "one_thread"}
    assert "does not apply to dispatcher 'one_thread'" in point_.dropped["threads"]
    with pytest.raises(kernels.ParamError, match="'threads' does not apply to dispatcher 'one_thread'"):
        kernels.resolve("counting_actor", {"runtime": "mapper", "threads": 4})
    # A peer that takes threads but not our dispatcher keeps it whatever our default dispatcher is.
    assert kernels.resolve("skynet", {"runtime": "go", "threads": 3})["threads"] == 3


@pytest.mark.parametrize("choices, why", [
    ('{ dispatcher = ["one_thread", "fibers"] }',
     "choices.dispatcher: 'fibers' is not a value of counting_actor's 'dispatcher' (its values: one_thread, "),
    ('{ messages = [10, 20] }', "choices.messages: 'messages' of counting_actor is not a choice"),
    ('{ fifo = ["individual"] }', "choices.fifo: none of its kernels takes 'fifo'"),
    ('{ dispatcher = [] }', "choices.dispatcher: List should have at least 1 item"),
])
def test_a_manifest_choosing_values_we_lack_is_a_runtime_that_cannot_run(peers, choices, why):
    root, reload = peers
    write_peer(root, "chooser", "honest", '["messages", "dispatcher"]', choices=choices)
    reload()
    assert why in runtimes.runtimes()["chooser"].missing


@pytest.mark.parametrize("values, param, message", [
    ({"runtime": "pony"}, "runtime", "must be one of: labctl"),
    ({"runtime": "go", "dispatcher": "thread_pool"}, "dispatcher", "does not apply to runtime 'go'"),
    ({"runtime": "go", "allocator": "jemalloc"}, "allocator", "does not apply to runtime 'go'"),
    ({"allocator": "hoard"}, "allocator", "must be one of: system, jemalloc, tcmalloc"),
])
def test_a_runtime_or_allocator_that_does_not_fit_is_refused_naming_it(values, param, message):
    with pytest.raises(kernels.ParamError, match=message) as caught:
        kernels.resolve("skynet", values)
    assert caught.value.param == param


def test_our_runtime_and_the_system_allocator_are_the_defaults():
    resolved = kernels.resolve("skynet", {"leaves": 10})
    assert resolved["runtime"] == "labctl" and resolved["allocator"] == "system"
    go = kernels.resolve("skynet", {"runtime": "go", "leaves": 10, "threads": 2})
    assert {k: v for k, v in go.items() if v is not None} == {
        "runtime": "go", "leaves": 10, "branching": 10, "threads": 2}


@pytest.mark.parametrize("allocator", ["jemalloc", "tcmalloc"])
def test_an_allocator_is_preloaded_into_the_worker(allocator):
    if runtimes.allocator_missing(allocator):
        pytest.skip(runtimes.allocator_missing(allocator))
    params = kernels.resolve("skynet", {"leaves": 100, "allocator": allocator})
    point = Point("skynet", {k: v for k, v in params.items() if v is not None})
    # The worker checks its own memory map: the sample exists only if the library is loaded.
    [sample] = list(runner.run_point(point))
    assert sample.verified and sample.params["allocator"] == allocator


def test_a_missing_allocator_skips_its_points(monkeypatch, tmp_path):
    monkeypatch.setitem(runtimes.ALLOCATORS, "jemalloc", ("labctl_no_such_malloc", "libnope.so.9", "libnope9"))
    runtimes.allocator_library.cache_clear()
    try:
        plan = experiment.parse('name = "a"\n[[grid]]\nkernel = "skynet"\nparams = { leaves = 10 }\n'
                                'axes = { allocator = ["system", "jemalloc"] }\n', "a.toml")
    finally:
        runtimes.allocator_library.cache_clear()
    skips = {p.params["allocator"]: p.skip for p in plan.points}
    assert skips == {"system": "", "jemalloc": "allocator jemalloc: libnope.so.9 not found (apt-get install libnope9)"}


go_missing = runtimes.runtimes()["go"].missing if "go" in runtimes.runtimes() else "no peers/go"


@pytest.fixture(scope="module")
def go_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("go-cache")  # built once for the module's Go tests


# Each case once, on one thread and on two in turn (a covering set: every kernel on one thread
# count, each thread count on half the kernels, both on the kernels with two cases).
GO_CASES = [
    ("skynet", {"leaves": 1000, "branching": 10}),
    ("skynet", {"leaves": 37, "branching": 3}),
    ("ping_pong", {"messages": 2000}),
    ("savina_pingpong", {"pings": 1000}),
    ("savina_pingpong", {"pings": 1}),
    ("savina_count", {"increments": 5000}),  # past the mailbox's capacity: the producer waits
    ("savina_count", {"increments": 0}),
    ("service", {"requests": 300, "rate": 100_000, "arrivals": "poisson", "routing": "random", "servers": 3}),
    ("savina_fjthrput", {"messages": 50, "actors": 7}),
    ("savina_fjcreate", {"workers": 300}),
    ("savina_threadring", {"actors": 10, "pings": 1000}),
    ("savina_threadring", {"actors": 1, "pings": 3}),  # a ring of one: its own next member
    ("savina_chameneos", {"creatures": 10, "meetings": 500}),
    ("savina_big", {"actors": 10, "pings": 100, "seed": 3}),
    ("savina_logmap", {"terms": 100, "series": 5}),
    ("savina_banking", {"accounts": 10, "transactions": 100}),
    ("savina_cigsmok", {"rounds": 200, "smokers": 10}),  # seed 0: Savina's own, rounds*smokers
    ("savina_bndbuffer", {"buffer_size": 50, "producers": 40, "consumers": 40, "items_per_producer": 20,
                          "produce_cost": 1, "consume_cost": 1}),
    ("savina_concdict", {"workers": 3, "messages_per_worker": 300, "write_percent": 60, "keys": 50, "seed": 4}),
    ("savina_concsll", {"workers": 3, "messages_per_worker": 200, "write_percent": 50, "size_percent": 20,
                        "seed": 5}),
]


@pytest.mark.skipif(bool(go_missing), reason=f"the Go peer cannot run here: {go_missing}")
@pytest.mark.parametrize("kernel, params, threads", [(*case, 1 + i % 2) for i, case in enumerate(GO_CASES)])
def test_the_go_peer_verifies_as_our_kernels_do(go_cache, monkeypatch, kernel, params, threads):
    monkeypatch.setenv(runtimes.CACHE_ENV, str(go_cache))
    resolved = kernels.resolve(kernel, {"runtime": "go", **params, "threads": threads})
    [sample] = list(runner.run_point(Point(kernel, {k: v for k, v in resolved.items() if v is not None})))
    ours = list(runner.run_point(Point(kernel, {k: v for k, v in kernels.resolve(kernel, params).items()
                                                 if v is not None})))[0]
    assert sample.verified and sample.answer == ours.answer
    assert sample.messages_processed == ours.messages_processed
    if kernel == "service":  # every answer's latency, kept with the sample
        assert sum(count for _, count in sample.histogram) == params["requests"]
    if kernel == "skynet":  # its memory, as ours: the goroutines made, the RSS grown
        assert sample.counts["agents_created"] == sample.metrics["agents"] and sample.counts["rss_growth_kb"] >= 0


@pytest.mark.skipif(bool(go_missing), reason=f"the Go peer cannot run here: {go_missing}")
@pytest.mark.parametrize("kernel, params", [
    ("savina_logmap", {"terms": 50, "series": 3, "start_rate": 3.9, "increment": 0.03}),  # the reals reach it
    # 1250 credits to each source, past its mailbox's capacity: the teller takes completions meanwhile
    ("savina_banking", {"accounts": 10, "transactions": 10_000, "seed": 7}),
    ("savina_banking", {"accounts": 10, "transactions": 0}),
    ("savina_cigsmok", {"rounds": 50, "smokers": 1, "seed": 9}),  # one smoker picked every round
    # room for one item past the producers': producers parked, the buffer full, one consumer
    ("savina_bndbuffer", {"buffer_size": 3, "producers": 2, "consumers": 1, "items_per_producer": 200,
                          "produce_cost": 0, "consume_cost": 3}),
])
def test_the_go_peers_concurrency_benchmarks_verify_at_their_edges(go_cache, monkeypatch, kernel, params):
    # Verified: the answer and the message count are what our kernel's expectation says.
    monkeypatch.setenv(runtimes.CACHE_ENV, str(go_cache))
    resolved = kernels.resolve(kernel, {"runtime": "go", **params, "threads": 2})
    [sample] = list(runner.run_point(Point(kernel, {k: v for k, v in resolved.items() if v is not None})))
    assert sample.verified and sample.answer == sample.expected


# Savina's philosopher and barber, whose message counts the schedule decides (denials, customers
# turned away): each case once, threads 1 and 2 in turn.
SCHEDULED = [
    ("savina_philosopher", {"philosophers": 1, "rounds": 50}),  # never denied: the count exact
    ("savina_philosopher", {"philosophers": 5, "rounds": 200}),
    ("savina_barber", {"haircuts": 40, "seats": 40, "production_rate": 50, "haircut_rate": 50}),  # none turned away
    ("savina_barber", {"haircuts": 60, "seats": 3, "production_rate": 10, "haircut_rate": 300}),  # a slow barber
]


@pytest.mark.skipif(bool(go_missing), reason=f"the Go peer cannot run here: {go_missing}")
@pytest.mark.parametrize("kernel, params, threads", [(*case, 1 + i % 2) for i, case in enumerate(SCHEDULED)])
def test_the_go_peers_philosopher_and_barber_count_as_the_oracle_at_their_own_schedule(
        go_cache, monkeypatch, kernel, params, threads):
    # The answer the oracle's; the messages the oracle's at the run's own denials (customers turned
    # away), which it reports as ours' metrics, as ours counts them.
    monkeypatch.setenv(runtimes.CACHE_ENV, str(go_cache))
    resolved = kernels.resolve(kernel, {"runtime": "go", **params, "threads": threads})
    [sample] = list(runner.run_point(Point(kernel, {k: v for k, v in resolved.items() if v is not None})))
    oracles.check_at_its_schedule(kernel, kernels.resolve(kernel, params), sample)


@pytest.mark.skipif(bool(go_missing), reason=f"the Go peer cannot run here: {go_missing}")
def test_the_go_service_whose_generator_falls_behind_gives_no_latency_figure(go_cache, monkeypatch):
    # One request a nanosecond, late past a microsecond: no generator keeps it.
    monkeypatch.setenv(runtimes.CACHE_ENV, str(go_cache))
    params = {"requests": 3000, "rate": 1e9, "late_bound_us": 1, "threads": 2}
    reply = runtimes.run_external(runtimes.runtimes()["go"], "service",
                                  {k: v for k, v in kernels.resolve("service", {"runtime": "go", **params}).items()
                                   if v is not None and k != "runtime"})
    assert reply.metrics["generator_behind"] == 1 and reply.metrics["generator_late_share"] > 0.01
    assert not {name for name in reply.metrics if name.startswith("latency_")}
    assert reply.answer == "requests=3000 answered=3000 repeated=0 missing=0 unknown=0 id_sum=4498500"


@pytest.mark.skipif(bool(go_missing), reason=f"the Go peer cannot run here: {go_missing}")
def test_the_go_peer_itself_refuses_a_choice_it_does_not_know(go_cache, monkeypatch):
    # labctl refuses it before any program runs: the request is sent as it is.
    monkeypatch.setenv(runtimes.CACHE_ENV, str(go_cache))
    with pytest.raises(runtimes.ExternalFailure) as caught:
        runtimes.run_external(runtimes.runtimes()["go"], "service", {"routing": "sticky", "threads": 1})
    assert caught.value.kind == "failure" and "exited with status 2" in str(caught.value)
    assert 'param routing must be one of round_robin, random, hot, got "sticky"' in str(caught.value)


def test_the_shipped_peers_are_valid():
    shipped = runtimes.peer_folders()[0]
    assert (shipped / "go" / "peer.toml").is_file()
    go = runtimes.runtimes()["go"]
    assert set(go.kernels) == {"skynet", "ping_pong", "savina_pingpong", "savina_count", "savina_fjthrput",
                               "savina_fjcreate", "savina_threadring", "savina_chameneos", "savina_big", "service",
                               "savina_logmap", "savina_banking", "savina_cigsmok", "savina_bndbuffer",
                               "savina_concdict", "savina_concsll", "savina_philosopher", "savina_barber", "chat"}
    assert not go.missing or "not found on PATH" in go.missing
    assert shutil.which("go") is None or not go.missing
    tokio = runtimes.runtimes()["tokio"]
    assert set(tokio.kernels) == {"skynet", "ping_pong", "thread_ring", "savina_pingpong", "savina_count",
                                  "savina_fjthrput", "savina_fjcreate", "savina_threadring", "savina_chameneos",
                                  "savina_big", "savina_logmap", "savina_banking", "savina_cigsmok",
                                  "savina_bndbuffer", "savina_concdict", "savina_concsll", "savina_philosopher",
                                  "savina_barber", "chat"}
    assert not tokio.missing or tokio.missing.endswith("not found (apt-get install cargo librust-tokio-dev)")


@pytest.mark.skipif(not os.environ.get("LABCTL_EXPECT_RUNTIMES"), reason="LABCTL_EXPECT_RUNTIMES not set")
def test_every_runtime_and_allocator_expected_here_can_run():
    """CI installs every peer (.ci/run): there, a runtime that skips is a broken install."""
    for name in os.environ["LABCTL_EXPECT_RUNTIMES"].split():
        why = runtimes.allocator_missing(name) if name in runtimes.ALLOCATORS else \
            runtimes.runtimes()[name].missing if name in runtimes.runtimes() else "unknown"
        assert not why, f"{name}: {why}"


def test_a_sweep_goes_on_past_a_peer_whose_reply_the_store_cannot_take(peers, tmp_path):
    root, reload = peers
    write_peer(root, "huge", "huge")
    reload()
    path = tmp_path / "e.toml"
    path.write_text('name = "e"\nrepeats = 1\nwarmup = 0\n[[grid]]\nkernel = "counting_actor"\n'
                    'params = { messages = 100 }\naxes = { runtime = ["huge", "labctl"] }\n')
    db = tmp_path / "r.db"
    result = CliRunner().invoke(cli.main, ["sweep", str(path), "--db", str(db)])
    assert result.exit_code == 1
    with Store(db) as store:
        points = {p.point.params["runtime"]: p for p in store.points(1)}
    assert points["huge"].status == "failed" and points["huge"].failure_kind == "protocol"
    assert points["labctl"].status == "done"


@pytest.mark.parametrize("field, value, why", [
    ("command", '["{build}/peer", "{nope}"]', "names {nope}; a word may name only {folder}, {build}, {cache}"),
    ("command", '["peer", "{build"]', "write {{ and }} for a brace"),
    ("build", '["make", "{0}"]', "names {0}"),
])
def test_a_peer_whose_command_names_an_unknown_place_is_listed_unavailable(peers, field, value, why):
    root, reload = peers
    write_peer(root, "braces", "honest", **{field: value})
    reload()
    runtime = runtimes.runtimes()["braces"]
    assert "not a valid peer manifest" in runtime.missing and why in runtime.missing


def test_a_peer_manifest_that_is_not_utf8_is_listed_unavailable(peers, labctl):
    root, reload = peers
    folder = write_peer(root, "latin", "honest")
    (folder / "peer.toml").write_bytes((folder / "peer.toml").read_bytes() + b"# caf\xe9\n")
    broken = root / "broken"
    broken.mkdir()
    (broken / "peer.toml").write_text("name = 3\n")
    reload()
    assert "not UTF-8" in runtimes.runtimes()["latin"].missing
    listed = labctl("kernels", env={runtimes.PEERS_ENV: str(root)})
    text = " ".join(listed.stdout.split())
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
    for name in ("latin", "broken"):  # listed, unavailable, saying why
        assert f"{name} peer in {root / name}; unavailable: " in text
