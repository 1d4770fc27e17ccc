"""The Boost.Fiber peer (peers/boost_fiber/): built at first use, its skynet, ping_pong and
thread_ring verified on each of its schedulers (our dispatcher one_thread: round_robin;
thread_pool: shared_work; work_stealing: work_stealing) by labctl against answers computed here,
a wrong answer caught by its own check and, when it lies after that check, by labctl's, our other
dispatchers refused by labctl before it runs, and bad input refused in one line. Skipped where it
cannot build."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from labctl import cli
from labctl.catalogue import kernels, runtimes
from labctl.run import runner
from labctl.vocabulary import metrics
from labctl.vocabulary.point import Point

NAME = "boost_fiber"
FAULT_ENV = "LABCTL_BOOST_FIBER_FAULT"  # read by the peer: compute | reply (tests only)


def _missing() -> str:
    runtime = runtimes.runtimes().get(NAME)
    return "no peers/boost_fiber" if runtime is None else runtime.missing


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> str:
    """The peer built once for the module into a cache of its own; skipped where it cannot run or
    build here (c++ missing, or libboost-fiber-dev)."""
    if _missing():
        pytest.skip(f"the Boost.Fiber peer cannot run here: {_missing()}")
    cache = tmp_path_factory.mktemp("boost-fiber-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(runtimes.CACHE_ENV, str(cache))
        try:
            built = runtimes.build(runtimes.runtimes()[NAME])
        except runtimes.ExternalFailure as error:
            if "boost/fiber" in str(error) or "lboost_" in str(error):
                pytest.skip(f"the Boost.Fiber peer cannot build here (apt-get install libboost-fiber-dev): {error}")
            raise
    return str(cache), str(built / "labctl-boost-fiber-peer")


def tree_agents(leaves: int, branching: int) -> int:
    """The tree's size, split as our kernel's docs say: min(branching, leaves) children, the first
    leaves % children one leaf larger."""
    if leaves == 1:
        return 1
    children = min(branching, leaves)
    return 1 + sum(tree_agents(leaves // children + (i < leaves % children), branching) for i in range(children))


def oracle(kernel: str, params: dict) -> tuple[str, int]:
    if kernel == "skynet":
        leaves, branching = params["leaves"], params.get("branching", 10)
        agents = tree_agents(leaves, branching)
        return f"sum={leaves * (leaves - 1) // 2} agents={agents}", agents - 1
    if kernel == "thread_ring":
        # One token, every stop counted: the injection and each hop are receipts, then one end
        # report; nothing ends twice, nowhere else, and every agent is visited as planned.
        return "tokens_ended=1 wrong_end=0 wrong_hops=0 repeated=0 uneven_agents=0", 1 + params["hops"] + 1
    half = params["messages"] // 2
    return f"pings={half} pongs={half} out_of_order=0 corrupt=0", 2 * half


# Our dispatchers the peer takes, each with the thread counts tried: one_thread takes none.
SCHEDULERS = [("one_thread", None), ("thread_pool", 1), ("thread_pool", 2), ("work_stealing", 1),
              ("work_stealing", 2)]


def run_point(kernel: str, params: dict) -> list:
    resolved = kernels.resolve(kernel, {"runtime": NAME, **params})
    return list(runner.run_point(Point(kernel, {k: v for k, v in resolved.items() if v is not None},
                                       timeout_s=60)))


@pytest.mark.parametrize("kernel, params", [
    ("skynet", {"leaves": 1000, "branching": 10}),
    ("skynet", {"leaves": 37, "branching": 3}),
    ("skynet", {"leaves": 1, "branching": 2}),
    ("ping_pong", {"messages": 2000, "latency_samples": 50}),
    ("thread_ring", {"actors": 7, "hops": 100}),  # 14 laps and 3 agents once more
    ("thread_ring", {"actors": 1, "hops": 5}),  # a fiber sending to itself
    ("thread_ring", {"actors": 503, "hops": 1000}),
])
@pytest.mark.parametrize("dispatcher, threads", SCHEDULERS)
def test_the_boost_fiber_peer_gives_the_answer_arithmetic_predicts(program, monkeypatch, kernel, params, dispatcher,
                                                                   threads):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    scheduling = {"dispatcher": dispatcher, **({"threads": threads} if threads else {})}
    [sample] = run_point(kernel, {**params, **scheduling})
    answer, messages = oracle(kernel, params)
    assert sample.verified and sample.answer == sample.expected == answer
    assert sample.messages_processed == messages
    assert sample.elapsed_ns > 0
    assert sample.params["dispatcher"] == dispatcher and sample.params.get("threads") == threads
    assert set(sample.metrics) <= set(kernels.get(kernel).metrics)  # only figures our kernel declares
    if kernel == "skynet":
        assert sample.metrics["agents"] == messages + 1
        assert sample.counts["agents_created"] == messages + 1 and sample.counts["rss_growth_kb"] >= 0
    elif kernel == "thread_ring":
        assert set(sample.metrics) == {"ns_per_hop"}
        assert sample.metrics["ns_per_hop"] == pytest.approx(sample.elapsed_ns / params["hops"])
    else:
        assert sample.metrics["round_trip_samples"] == 50
        assert 0 < sample.metrics["round_trip_p50_ns"] <= sample.metrics["round_trip_p99_ns"] \
            <= sample.metrics["round_trip_max_ns"]


def test_thread_ring_without_hops_reports_no_time_per_hop(program, monkeypatch):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    [sample] = run_point("thread_ring", {"actors": 3, "hops": 0, "dispatcher": "work_stealing", "threads": 2})
    assert sample.verified and sample.messages_processed == 2  # the injection and the end report
    assert sample.metrics == {}


def test_ping_pong_without_latency_samples_reports_no_percentile(program, monkeypatch):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    [sample] = run_point("ping_pong", {"messages": 200, "latency_samples": 0})
    assert sample.verified
    assert set(sample.metrics) == {"round_trip_mean_ns", "round_trip_samples"}
    assert sample.metrics["round_trip_samples"] == 0


@pytest.mark.parametrize("kernel, params, got", [
    ("skynet", {"leaves": 100, "dispatcher": "work_stealing"}, "got 'sum=4951 agents=111'"),  # leaf 0 reports 1
    ("ping_pong", {"messages": 100, "latency_samples": 0}, "out_of_order=1"),
    # One hop too many: the token ends one agent on, and agent 2 is visited once more than planned.
    ("thread_ring", {"actors": 5, "hops": 11, "dispatcher": "thread_pool"},
     "got 'tokens_ended=1 wrong_end=1 wrong_hops=1 repeated=0 uneven_agents=1'"),
])
def test_a_wrong_answer_is_caught_by_the_peers_own_check(program, monkeypatch, kernel, params, got):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    monkeypatch.setenv(FAULT_ENV, "compute")
    with pytest.raises(runner.PointFailed) as caught:
        run_point(kernel, params)
    assert caught.value.kind == "failure"
    assert "exited with status 1" in str(caught.value) and "wrong answer" in str(caught.value)
    assert got in str(caught.value)


@pytest.mark.parametrize("kernel, params, expected", [
    ("skynet", {"leaves": 100}, "expected 'sum=4950 agents=111'"),
    ("ping_pong", {"messages": 100, "latency_samples": 0, "dispatcher": "work_stealing", "threads": 2},
     "expected 'pings=50 pongs=50 out_of_order=0 corrupt=0'"),
    ("thread_ring", {"actors": 5, "hops": 11, "dispatcher": "thread_pool", "threads": 2},
     "expected 'tokens_ended=1 wrong_end=0 wrong_hops=0 repeated=0 uneven_agents=0'"),
])
def test_a_peer_that_lies_after_its_check_fails_labctls_verification(program, monkeypatch, kernel, params, expected):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    monkeypatch.setenv(FAULT_ENV, "reply")
    with pytest.raises(runner.PointFailed) as caught:
        run_point(kernel, params)
    assert caught.value.kind == "verification"
    assert expected in str(caught.value)


@pytest.mark.parametrize("request_, message", [
    ({"kernel": "counting_actor", "params": {}},
     "unknown kernel 'counting_actor' (this peer runs skynet, ping_pong, thread_ring)"),
    ({"kernel": "ping_pong", "params": {"messages": 3}}, "param messages=3 must be even (pings plus pongs)"),
    ({"kernel": "skynet", "params": {"leaves": 0}}, "param leaves=0 out of range [1, 100000000]"),
    ({"kernel": "skynet", "params": {"leaves": 1.5}}, "param leaves must be an integer"),
    ({"kernel": "thread_ring", "params": {"hops": "many"}}, "param hops must be an integer"),
    ({"kernel": "skynet", "params": {"fifo": "individual"}}, "unknown param 'fifo' for kernel skynet"),
    ({"kernel": "skynet", "params": {"dispatcher": "active_obj"}},
     "param dispatcher must be one of: one_thread, thread_pool, work_stealing; got 'active_obj'"),
    ({"kernel": "skynet", "params": {"dispatcher": 1}},
     "param dispatcher must be one of: one_thread, thread_pool, work_stealing; got an integer"),
    ({"kernel": "thread_ring", "params": {"threads": 2}},
     "param threads does not apply to dispatcher one_thread (it runs on one thread)"),
    ({"kernel": "thread_ring", "params": {"dispatcher": "work_stealing", "threads": 0}},
     "param threads=0 out of range [1, 1024]"),
])
def test_bad_input_is_refused_in_one_line_with_nothing_on_stdout(program, request_, message):
    done = subprocess.run([program[1]], check=False, input=json.dumps(request_), capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"labctl-boost-fiber-peer: {message}"]


@pytest.mark.parametrize("dispatcher", ["active_group", "adv_thread_pool", "active_obj", "fibers"])
@pytest.mark.parametrize("kernel", ["skynet", "ping_pong", "thread_ring"])
def test_labctl_refuses_a_dispatcher_the_peer_has_no_scheduler_for(kernel, dispatcher):
    # Refused by labctl itself, before any program runs (the runtime need not even build here),
    # in one line naming the parameter and the values the peer takes, on a command line or in a grid.
    for resolve in (kernels.resolve, lambda *given: kernels.point(*given, metrics.TIME, drop=True)):
        with pytest.raises(kernels.ParamError) as caught:
            resolve(kernel, {"runtime": NAME, "dispatcher": dispatcher, "threads": 2})
        assert caught.value.param == "dispatcher"
        assert str(caught.value) == (f"{kernel}: parameter 'dispatcher' on runtime '{NAME}' must be one of: "
                                     f"one_thread, thread_pool, work_stealing; got '{dispatcher}'")


def test_one_thread_is_the_default_and_takes_no_threads():
    point = kernels.point("skynet", {"runtime": NAME, "leaves": 10, "threads": 4}, metrics.TIME, drop=True)
    assert point.params == {"runtime": NAME, "leaves": 10, "branching": 10, "dispatcher": "one_thread"}
    assert "threads" in point.dropped  # a grid's point: left out, and the points merged
    with pytest.raises(kernels.ParamError, match="parameter 'threads' does not apply to dispatcher 'one_thread'"):
        kernels.resolve("skynet", {"runtime": NAME, "threads": 4})
    assert kernels.resolve("skynet", {"runtime": NAME, "dispatcher": "thread_pool"})["threads"] == 2  # ours'


@pytest.mark.parametrize("args, params", [
    ([], {"dispatcher": "one_thread"}),
    (["--dispatcher", "thread_pool", "--threads", "2"], {"dispatcher": "thread_pool", "threads": 2}),
])
def test_labctl_run_runs_skynet_on_boost_fiber(program, monkeypatch, args, params):
    monkeypatch.setenv(runtimes.CACHE_ENV, program[0])
    result = CliRunner().invoke(cli.main, ["run", "skynet", "--runtime", NAME, "--leaves", "100", *args, "--json"])
    assert result.exit_code == 0, result.output
    [line] = [json.loads(x) for x in result.output.splitlines() if x.startswith("{")]
    assert line["verified"] and line["answer"] == "sum=4950 agents=111"
    assert line["params"] == {"runtime": NAME, "leaves": 100, "branching": 10, **params}
