"""Memory per agent (bytes_per_agent, labctl.vocabulary.metrics): the worker's peak RSS over its
baseline, over the agents the phase created, on the kernels that create many."""

import json

import pytest
from conftest import run_labctl

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


def test_bytes_per_agent_is_absent_below_many_agents_and_without_a_baseline():
    many = results.MANY_AGENTS
    assert results._bytes_per_agent({"rss_growth_kb": 1000, "agents_created": many}) == pytest.approx(1024e3 / many)
    assert results._bytes_per_agent({"rss_growth_kb": 1000, "agents_created": many - 1}) is None
    assert results._bytes_per_agent({"agents_created": many}) is None  # a peer's, or an old store's
    assert lookup("bytes_per_agent").lower_is_better and lookup("bytes_per_agent").format(245.9) == "246 B"
