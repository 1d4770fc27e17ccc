"""The GHC peer (peers/ghc): skynet and ping_pong on forkIO threads and MVars, held to our kernels'
answers and message counts, computed here from the parameters; its own check of a wrong answer;
its refusal of a bad request. Skipped where ghc is not installed."""

from __future__ import annotations

import json
import subprocess

import pytest

from labctl.catalogue import kernels, runtimes
from labctl.run import runner
from labctl.vocabulary.point import Point
from labctl.vocabulary.sample import Sample

ghc_missing = runtimes.runtimes()["ghc"].missing if "ghc" in runtimes.runtimes() else "no peers/ghc"
pytestmark = pytest.mark.skipif(bool(ghc_missing), reason=f"the GHC peer cannot run here: {ghc_missing}")


@pytest.fixture
def ghc_cache(tmp_path_factory, monkeypatch):
    """One cache for the module's tests: the peer is built once (a few seconds of ghc)."""
    folder = tmp_path_factory.getbasetemp() / "ghc-cache"
    folder.mkdir(exist_ok=True)
    monkeypatch.setenv(runtimes.CACHE_ENV, str(folder))
    return folder


def tree_agents(leaves: int, branching: int) -> int:
    """Agents in skynet's tree: a node of n > 1 leaves has min(branching, n) children of
    near-equal size, the first n % children one larger (sequential, no memo)."""
    if leaves == 1:
        return 1
    children = min(branching, leaves)
    base, extra = divmod(leaves, children)
    return 1 + sum(tree_agents(base + (i < extra), branching) for i in range(children))


def run_ghc(kernel: str, **params) -> Sample:
    resolved = kernels.resolve(kernel, {"runtime": "ghc", **params})
    [sample] = runner.run_point(Point(kernel, {k: v for k, v in resolved.items() if v is not None}))
    return sample


@pytest.mark.parametrize("leaves, branching", [(1000, 10), (37, 3), (1, 10), (100, 1000)])
@pytest.mark.parametrize("threads", [1, 2])
def test_skynet_on_ghc_sums_every_leaf_and_counts_every_agent(ghc_cache, leaves, branching, threads):
    agents = tree_agents(leaves, branching)
    sample = run_ghc("skynet", leaves=leaves, branching=branching, threads=threads)
    assert sample.verified
    assert sample.answer == f"sum={leaves * (leaves - 1) // 2} agents={agents}"
    assert sample.messages_processed == agents - 1
    assert sample.metrics["agents"] == agents
    assert sample.metrics["ns_per_agent"] == pytest.approx(sample.elapsed_ns / agents)
    assert set(sample.metrics) == {"agents", "ns_per_agent"} <= set(kernels.get("skynet").metrics)
    assert sample.counts["agents_created"] == agents and sample.counts["rss_growth_kb"] >= 0


@pytest.mark.parametrize("latency_samples", [10, 0])
@pytest.mark.parametrize("threads", [1, 2])
def test_ping_pong_on_ghc_counts_every_message_in_order(ghc_cache, latency_samples, threads):
    sample = run_ghc("ping_pong", messages=2000, latency_samples=latency_samples, threads=threads)
    assert sample.verified and sample.answer == "pings=1000 pongs=1000 out_of_order=0 corrupt=0"
    assert sample.messages_processed == 2000
    assert sample.metrics["round_trip_samples"] == latency_samples
    assert sample.metrics["round_trip_mean_ns"] == pytest.approx(sample.elapsed_ns / 1000)
    percentiles = {"round_trip_p50_ns", "round_trip_p99_ns", "round_trip_max_ns", "clock_read_ns"}
    assert set(sample.metrics) == {"round_trip_mean_ns", "round_trip_samples"} | (percentiles if latency_samples else set())
    assert set(sample.metrics) <= set(kernels.get("ping_pong").metrics)
    if latency_samples:
        assert 0 < sample.metrics["round_trip_p50_ns"] <= sample.metrics["round_trip_p99_ns"] \
            <= sample.metrics["round_trip_max_ns"]


@pytest.mark.parametrize("kernel, params, got", [
    ("skynet", {"leaves": 100}, "got 'sum=4951 agents=111', expected 'sum=4950 agents=111'"),
    ("ping_pong", {"messages": 100, "latency_samples": 0},
     "got 'pings=50 pongs=50 out_of_order=1 corrupt=0', expected 'pings=50 pongs=50 out_of_order=0 corrupt=0'"),
])
def test_the_ghc_peer_refuses_its_own_wrong_answer(ghc_cache, monkeypatch, kernel, params, got):
    monkeypatch.setenv("LABCTL_GHC_PEER_FAULT", "wrong_answer")  # one off, after the measured phase
    with pytest.raises(runner.PointFailed) as caught:
        run_ghc(kernel, **params)
    assert caught.value.kind == "failure"
    assert f"exited with status 1: labctl-ghc-peer: {kernel}: wrong answer: {got}" in str(caught.value)


@pytest.mark.parametrize("request_text, message", [
    ("", "empty request on stdin"),
    ('{"kernel": "skynet"} x', "bad request: trailing data after the JSON value"),
    ('{"kernel": "skynet", "kernel": "skynet"}', 'bad request: key "kernel" given twice'),
    ('{"kernel": "fan"}', 'unknown kernel "fan"'),
    ('{"kernel": "skynet", "params": {"speed": 1}}', 'unknown param "speed" for kernel skynet'),
    ('{"kernel": "skynet", "params": {"leaves": 1.5}}', "param leaves must be an integer"),
    ('{"kernel": "skynet", "params": {"leaves": "10"}}', "param leaves must be an integer"),
    ('{"kernel": "skynet", "params": {"leaves": 0}}', "param leaves=0 out of range [1, 100000000]"),
    ('{"kernel": "skynet", "params": {"threads": 1025}}', "param threads=1025 out of range [1, 1024]"),
    ('{"kernel": "ping_pong", "params": {"messages": 2001}}', "param messages=2001 must be even"),
])
def test_the_ghc_peer_refuses_a_bad_request_in_one_line(ghc_cache, request_text, message):
    program = runtimes.build(runtimes.runtimes()["ghc"]) / "labctl-ghc-peer"
    done = subprocess.run([program], check=False, input=request_text, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"labctl-ghc-peer: {message}\n")


def test_the_ghc_peer_reads_escapes_and_white_space_as_json_does(ghc_cache):
    program = runtimes.build(runtimes.runtimes()["ghc"]) / "labctl-ghc-peer"
    request = '\n { "kern\\u0065l" : "sky\\u006eet" ,\t"params":{"leaves":10,"branching":2,"threads":1}}\n'
    assert json.loads(request) == {"kernel": "skynet", "params": {"leaves": 10, "branching": 2, "threads": 1}}
    done = subprocess.run([program], check=False, input=request, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["answer"] == f"sum=45 agents={tree_agents(10, 2)}"


def test_labctl_run_on_ghc_prints_the_verified_answer(ghc_cache, labctl):
    result = labctl("run", "skynet", "--runtime", "ghc", "--threads", "2", "--leaves", "100", "--json",
                    env={runtimes.CACHE_ENV: str(ghc_cache)})
    assert result.returncode == 0, result.stderr
    [sample] = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert sample["verified"] and sample["answer"] == f"sum=4950 agents={tree_agents(100, 10)}"
