"""Memory per agent (bytes_per_agent, labctl.vocabulary.metrics): the worker's peak RSS over its
baseline, over the agents the phase created, on the kernels that create many; a peer's from the
resident set and agents it reports (each peer's own tests check its skynet reports them)."""

import json
from types import SimpleNamespace

import pytest
from conftest import run_labctl

from labctl.catalogue import native
from labctl.read import results
from labctl.vocabulary.metrics import lookup


def _sample(*args: str) -> dict:
    done = run_labctl("run", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_skynet_with_ten_times_the_leaves_costs_about_as_much_per_agent():
    small, large = _sample("skynet", "--leaves", "100000"), _sample("skynet", "--leaves", "1000000")
    per_agent = [results._bytes_per_agent(s["counts"]) for s in (small, large)]
    # Ten times the agents take about ten times the memory: growth is per agent, not fixed.
    assert large["counts"]["rss_growth_kb"] > 5 * small["counts"]["rss_growth_kb"]
    assert 1 / 1.5 < per_agent[1] / per_agent[0] < 1.5
    assert 16 < per_agent[1] < 16384  # an agent is more than a pointer, less than a page


@pytest.mark.skipif("caf_skynet" not in {k["name"] for k in native.kernels()}, reason="CAF is not built in")
def test_caf_counts_no_agents_so_its_skynet_gives_the_agents_it_made():
    sample = _sample("skynet", "--runtime", "caf", "--leaves", "1000")
    assert sample["counts"]["agents_created"] == 1111 == sample["metrics"]["agents"]
    assert sample["counts"]["rss_growth_kb"] >= 0


def test_bytes_per_agent_is_absent_below_many_agents_and_without_a_baseline():
    many = results.MANY_AGENTS
    assert results._bytes_per_agent({"rss_growth_kb": 1000, "agents_created": many}) == pytest.approx(1024e3 / many)
    assert results._bytes_per_agent({"rss_growth_kb": 1000, "agents_created": many - 1}) is None
    assert results._bytes_per_agent({"agents_created": many}) is None  # a peer's, or an old store's
    assert lookup("bytes_per_agent").lower_is_better and lookup("bytes_per_agent").format(245.9) == "246 B"


@pytest.mark.parametrize("reply, why", [
    ({"rss_before_kb": -1}, "'rss_before_kb' must be an integer from 0"),
    ({"rss_before_kb": 1.5}, "'rss_before_kb' must be an integer from 0"),
    ({"rss_before_kb": "100"}, "'rss_before_kb' must be an integer from 0"),
    ({"agents_created": True}, "'agents_created' must be an integer from 0"),
    ({"agents_created": 2**63}, "'agents_created' must be an integer from 0"),
    ({"agents_created": None}, "'agents_created' must be an integer from 0"),
])
def test_a_peers_memory_fields_are_integers_or_its_reply_is_refused(reply, why):
    from labctl.catalogue import runtimes

    line = json.dumps({"elapsed_ns": 10, "messages": 0, "answer": "a", **reply}).encode()
    with pytest.raises(runtimes.ProtocolError, match=why):
        runtimes._parse_reply("p", line)


def test_a_peers_memory_per_agent_is_its_peak_over_its_own_start(monkeypatch):
    # A peer's runtime starts before its kernel (a BEAM of tens of MiB): growth is counted from
    # the resident set it reports, not from nothing, and only where it counts its agents too.
    from labctl.catalogue import runtimes
    from labctl.run import worker

    def reply(**memory):
        def run(runtime, kernel, params, reserved=()):
            return runtimes.ExternalRun(elapsed_ns=10, messages=111_110, answer="sum=4999950000 agents=111111",
                                        peak_rss_kb=90_000, **memory)
        return run

    runtime = SimpleNamespace(name="p")  # what the sample needs of it: a name for its errors
    params = {"leaves": 100_000, "branching": 10}
    monkeypatch.setattr(runtimes, "run_external", reply(rss_before_kb=40_000, agents_created=111_111))
    sample = worker._external_sample(runtime, "skynet", params)
    assert sample.counts == {"rss_growth_kb": 50_000, "agents_created": 111_111}
    assert results._bytes_per_agent(sample.counts) == pytest.approx(50_000 * 1024 / 111_111)
    monkeypatch.setattr(runtimes, "run_external", reply(rss_before_kb=40_000))
    assert worker._external_sample(runtime, "skynet", params).counts == {}


def test_the_report_gives_the_least_and_most_memory_per_agent_of_each_kernel(tmp_path):
    (tmp_path / "agents.toml").write_text('''
name = "agents"
description = "skynet's memory per agent on two dispatchers"
repeats = 1
warmup = 0

[[grid]]
kernel = "skynet"
params = { leaves = 100000 }
axes = { dispatcher = ["one_thread", "thread_pool"] }
''')
    db, out = tmp_path / "a.db", tmp_path / "report"
    assert run_labctl("sweep", str(tmp_path / "agents.toml"), "--db", str(db)).returncode == 0
    assert run_labctl("report", "1", "--db", str(db), "--out", str(out)).returncode == 0
    section = (out / "report.md").read_text().split("## The cost of a message", 1)[1].split("\n## ", 1)[0]
    table = section.split("Memory per agent", 1)[1]
    [row] = [line for line in table.splitlines() if line.startswith("| skynet |")]
    frame = results.load(db, 1)
    per_agent = sorted(frame["bytes_per_agent"])
    assert row.startswith("| skynet | 2 | ") and row.count(" B |") == 2
    assert f"{per_agent[0]:,.0f} B" in row and f"{per_agent[-1]:,.0f} B" in row
