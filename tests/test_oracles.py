"""The oracles of tests/oracles.py against answers worked out by hand: a kernel is held to its
oracle, so the oracle is held to arithmetic done here, line by line, without either of them."""

from __future__ import annotations

import oracles
import pytest


def assert_oracle(kernel: str, params: dict, answer: str, messages: int, metrics: dict | None = None):
    expected = oracles.oracle(kernel, params)
    assert (expected.answer, expected.messages) == (answer, messages)
    if metrics is not None:
        assert expected.metrics == metrics


@pytest.mark.parametrize("params, answer, messages", [
    # 1 leaf: the root is the leaf; sum 0, 1 agent, no report.
    ({"leaves": 1, "branching": 10}, "sum=0 agents=1", 0),
    # 10 leaves, branching 10: a root over 10 leaves; sum 0+..+9 = 45, 11 agents, 10 reports.
    ({"leaves": 10, "branching": 10}, "sum=45 agents=11", 10),
    # 7 leaves, branching 3: root -> 3, 2, 2 leaves; 3 -> 1,1,1 (4 agents), 2 -> 1,1 (3 agents each):
    # 1 + 4 + 3 + 3 = 11 agents; sum 0+..+6 = 21.
    ({"leaves": 7, "branching": 3}, "sum=21 agents=11", 10),
])
def test_the_skynet_oracle_sums_the_leaves_and_counts_the_tree(params, answer, messages):
    assert_oracle("skynet", params, answer, messages, {"agents": messages + 1})


def test_the_skynet_oracle_finds_the_published_answer():
    # 10^6 leaves, branching 10: 1 + 10 + ... + 10^6 = 1111111 agents; sum 10^6 (10^6 - 1) / 2.
    assert oracles.oracle("skynet", {"leaves": 10**6, "branching": 10}).answer == \
        "sum=499999500000 agents=1111111"


@pytest.mark.parametrize("depth, answer, messages, agents", [
    (0, "leaves=1 agents=1", 1, 1),       # the root alone: its one spread, no report
    (1, "leaves=2 agents=3", 5, 3),       # 3 spreads, two leaves reporting
    (3, "leaves=8 agents=15", 29, 15),    # 1 + 2 + 4 + 8 = 15 spreads, 14 reports
])
def test_the_actor_creation_oracle_counts_a_binary_tree_and_its_spread_messages(depth, answer, messages, agents):
    assert_oracle("actor_creation", {"depth": depth}, answer, messages, {"agents": agents})


@pytest.mark.parametrize("params, answer, messages", [
    # 2 messages: 1 ping, 1 pong.
    ({"messages": 2, "latency_samples": 0}, "pings=1 pongs=1 out_of_order=0 corrupt=0", 2),
    # 2000 messages: 1000 round trips; the 7 probes are samples, not messages.
    ({"messages": 2000, "latency_samples": 7}, "pings=1000 pongs=1000 out_of_order=0 corrupt=0", 2000),
])
def test_the_ping_pong_oracle_counts_half_the_messages_each_way(params, answer, messages):
    assert_oracle("ping_pong", params, answer, messages, {"round_trip_samples": params["latency_samples"]})


def test_without_latency_samples_the_oracles_want_no_percentile_and_no_clock_read():
    figures = {"round_trip_p50_ns", "round_trip_p99_ns", "round_trip_max_ns", "clock_read_ns"}
    assert oracles.oracle("ping_pong", {"messages": 2, "latency_samples": 0}).absent == figures
    assert oracles.oracle("ping_pong", {"messages": 2, "latency_samples": 1}).absent == frozenset()
    assert oracles.oracle("floor_cache_line", {"round_trips": 1, "latency_samples": 0}).absent == figures
    assert oracles.oracle("floor_futex_wake", {"round_trips": 1, "latency_samples": 3}).absent == frozenset()


def test_a_ring_without_hops_has_no_time_per_hop_in_its_oracle():
    # 0 hops: each token is received once (its injection) and reports once; nothing was timed per hop.
    ring = oracles.oracle("thread_ring", {"hops": 0})
    assert (ring.messages, ring.absent) == (2, {"ns_per_hop"})
    assert oracles.oracle("parallel_thread_ring", {"tokens": 3, "hops": 0}).messages == 6
    assert oracles.oracle("thread_ring", {"hops": 1}).absent == frozenset()


@pytest.mark.parametrize("messages, answer", [
    (2, "pings=1 pongs=1 out_of_order=0 corrupt=0"),
    (6000, "pings=3000 pongs=3000 out_of_order=0 corrupt=0"),
])
def test_the_actor_loop_floor_oracle_is_ping_pongs(messages, answer):
    assert_oracle("floor_actor_loop", {"messages": messages}, answer, messages)


@pytest.mark.parametrize("kernel", ["floor_cache_line", "floor_futex_wake"])
@pytest.mark.parametrize("params, answer, messages", [
    # 300 + 40 round trips over both phases; the throughput phase's 300 are 600 messages.
    ({"round_trips": 300, "latency_samples": 40}, "round_trips=340 answered=340 out_of_order=0", 600),
    ({"round_trips": 1, "latency_samples": 0}, "round_trips=1 answered=1 out_of_order=0", 2),
])
def test_the_round_trip_floor_oracles_count_both_phases(kernel, params, answer, messages):
    assert_oracle(kernel, params, answer, messages, {"round_trip_samples": params["latency_samples"]})


@pytest.mark.parametrize("params, answer, messages", [
    # 6 workers x 40 numbers = 240 deliveries, + 6 reports = 246.
    ({"workers": 6, "messages_per_worker": 40}, "received=240 out_of_order=0 short_workers=0 wrong_series=0", 246),
    # 1 worker x 1 number: 1 delivery + 1 report.
    ({"workers": 1, "messages_per_worker": 1}, "received=1 out_of_order=0 short_workers=0 wrong_series=0", 2),
])
def test_the_one_to_many_oracle_delivers_every_number_to_every_worker(params, answer, messages):
    assert_oracle("one_to_many", params, answer, messages, {"deliveries": messages - params["workers"]})


@pytest.mark.parametrize("params, answer, messages", [
    # 5 workers x 100 = 500 handled, + 5 reports = 505.
    ({"workers": 5, "messages_per_worker": 100}, "handled=500 reports=5 repeated=0 short_workers=0", 505),
    # 4 x 500 = 2000, + 4 = 2004.
    ({"workers": 4, "messages_per_worker": 500}, "handled=2000 reports=4 repeated=0 short_workers=0", 2004),
])
def test_the_self_send_oracle_counts_every_workers_messages_and_report(params, answer, messages):
    assert_oracle("self_send", params, answer, messages)


@pytest.mark.parametrize("messages, answer", [
    (1, "received=1 sum=1"),
    (4, "received=4 sum=10"),            # 1 + 2 + 3 + 4
    (12345, "received=12345 sum=76205685"),  # 12345 x 12346 / 2
    # 2^33: 2^33 (2^33 + 1) / 2 = 2^65 + 2^32, which the counter's 64-bit word wraps to 2^32.
    (2**33, f"received={2**33} sum=4294967296"),
])
def test_the_counting_actor_oracle_sums_one_to_n(messages, answer):
    assert_oracle("counting_actor", {"messages": messages}, answer, messages)


@pytest.mark.parametrize("params, answer, messages, continues", [
    # 1 producer, quota 10: seq sum 0+..+9 = 45; bursts of 3: 4 bursts, 3 continues beside the 10.
    ({"producers": 1, "messages": 10, "burst": 3}, "received=10 sum=45 out_of_order=0 short_producers=0", 10, 3),
    # 3 producers, 2001 items: quotas 667 each; sum 3 x (667 x 666 / 2) = 3 x 222111 = 666333;
    # bursts of 100: 7 each, 6 continues each: 18.
    ({"producers": 3, "messages": 2001, "burst": 100},
     "received=2001 sum=666333 out_of_order=0 short_producers=0", 2001, 18),
    # 4 producers, 10 items: quotas 3, 3, 2, 2; sum 3 + 3 + 1 + 1 = 8; burst 2: 2, 2, 1, 1 bursts,
    # 1 + 1 + 0 + 0 continues.
    ({"producers": 4, "messages": 10, "burst": 2}, "received=10 sum=8 out_of_order=0 short_producers=0", 10, 2),
])
def test_the_producer_consumer_oracle_splits_the_items_and_counts_the_bursts_apart(params, answer, messages,
                                                                                   continues):
    assert_oracle("producer_consumer", {**params, "producer": "agent"}, answer, messages,
                  {"continue_messages": continues})
    # Writing threads send in one loop: the same items, no Continue to report.
    threads = oracles.oracle("producer_consumer", {**params, "producer": "thread"})
    assert (threads.answer, threads.messages, threads.metrics) == (answer, messages, {})
    assert threads.absent == {"continue_messages"}


@pytest.mark.parametrize("params, answer, messages", [
    # 3 threads x 300: 900 messages, no Continue.
    ({"senders": 3, "messages_per_sender": 300, "sender": "thread"},
     "received=900 out_of_order=0 short_senders=0", 900),
    # 3 agents x 300: one burst each, one Continue each: 900 + 3.
    ({"senders": 3, "messages_per_sender": 300, "sender": "agent"},
     "received=900 out_of_order=0 short_senders=0", 903),
    # 2 agents x 2500: bursts of 1000, 1000, 500: 3 Continues each: 5000 + 6.
    ({"senders": 2, "messages_per_sender": 2500, "sender": "agent"},
     "received=5000 out_of_order=0 short_senders=0", 5006),
])
def test_the_mailbox_n_to_1_oracle_counts_messages_and_continues(params, answer, messages):
    assert_oracle("mailbox_n_to_1", params, answer, messages)


@pytest.mark.parametrize("params, answer, messages", [
    # 4 workers x 50 iterations: 200 Work and 200 replies.
    ({"fan_out": 4, "iterations": 50, "channel": "shared"},
     "iterations=50 replies=200 stray=0 bad_iterations=0 worker_total=200", 400),
    # 7 x 300 = 2100 each way; sent directly, each worker one per iteration.
    ({"fan_out": 7, "iterations": 300, "channel": "direct"},
     "iterations=300 replies=2100 stray=0 bad_iterations=0 worker_total=2100 uneven_workers=0", 4200),
])
def test_the_fan_oracle_counts_work_and_replies(params, answer, messages):
    assert_oracle("fan", params, answer, messages, {"iterations_done": params["iterations"]})


def test_the_fan_oracle_in_duration_mode_holds_the_figures_to_the_runs_count():
    # 3 workers, 11 iterations done: 33 each way.
    expected = oracles.fan({"fan_out": 3, "iterations": 0, "channel": "shared"}, 11)
    assert expected.answer == "iterations=11 replies=33 stray=0 bad_iterations=0 worker_total=33"
    assert (expected.messages, expected.metrics) == (66, {"iterations_done": 11})


@pytest.mark.parametrize("params, answer, messages", [
    # 4 agents x 50 laps: 200 hops, each a message received once.
    ({"actors": 4, "laps": 50}, "laps=50 hops=200 received=200 uneven_agents=0", 200),
    ({"actors": 2, "laps": 1}, "laps=1 hops=2 received=2 uneven_agents=0", 2),
])
def test_the_ring_laps_oracle_counts_a_hop_per_agent_per_lap(params, answer, messages):
    assert_oracle("ring_laps", params, answer, messages, {"laps_done": params["laps"]})


def test_the_ring_laps_oracle_in_duration_mode_holds_the_figures_to_the_runs_count():
    expected = oracles.ring_laps({"actors": 3, "laps": 0}, 9)  # 9 laps of 3 hops
    assert (expected.answer, expected.messages) == ("laps=9 hops=27 received=27 uneven_agents=0", 27)


RING = "tokens_ended={} wrong_end=0 wrong_hops=0 repeated=0 uneven_agents={}"


@pytest.mark.parametrize("hops, messages", [
    (0, 2),      # injected and ended at once: 1 receipt + 1 end report
    (10, 12),    # 11 receipts (injection and 10 hops) + 1 end report
    (500, 502),
])
def test_the_thread_ring_oracle_counts_every_receipt_and_the_end(hops, messages):
    assert_oracle("thread_ring", {"actors": 8, "hops": hops}, RING.format(1, 0), messages)


@pytest.mark.parametrize("params, messages", [
    # 5 tokens, 503 hops: ceil(503/5) = 101 for four, 503 - 404 = 99 for the last; receipts
    # 4 x 102 + 100 = 508, + 5 end reports = 513.
    ({"actors": 8, "tokens": 5, "hops": 503}, 513),
    # 3 tokens, 100 hops: 34, 34, 32; receipts 35 + 35 + 33 = 103, + 3 = 106.
    ({"actors": 7, "tokens": 3, "hops": 100}, 106),
])
def test_the_parallel_thread_ring_oracle_splits_the_hops_as_theron(params, messages):
    assert_oracle("parallel_thread_ring", params, RING.format(params["tokens"], 0), messages)


def test_theron_splits_50m_hops_over_503_tokens_as_published():
    split = oracles.ring_split(503, 50_000_000)
    assert split[:502] == [99404] * 502 and split[-1] == 99192 and sum(split) == 50_000_000


@pytest.mark.parametrize("params, answer, messages, agents", [
    # 2 rings x 2 repetitions = 4 rounds; each round the token (5) goes round 6 times through 4
    # agents: 4 x 6 x 4 = 96 hops; messages 96 + 4 Calc + 4 results + 2 farewells = 106; agents
    # 1 collector + 2 x (master, worker) + 4 rounds x 3 links = 17.
    ({"rings": 2, "ring_size": 4, "initial_token": 5, "repetitions": 2, "number": 9991},
     "factorizations=4 valid_factorizations=4 ring_rounds=4 token_hops=96 masters_done=2", 106, 17),
    # 1 ring x 3 repetitions; token 1 goes round twice through 2 agents: 3 x 2 x 2 = 12 hops;
    # 12 + 3 + 3 + 1 = 19 messages; 1 + 2 + 3 x 1 = 6 agents.
    ({"rings": 1, "ring_size": 2, "initial_token": 1, "repetitions": 3, "number": 3 * 1000003},
     "factorizations=3 valid_factorizations=3 ring_rounds=3 token_hops=12 masters_done=1", 19, 6),
])
def test_the_mixed_oracle_counts_rounds_hops_and_agents(params, answer, messages, agents):
    assert_oracle("mixed", params, answer, messages, {"agents": agents})


def test_a_caf_kernel_has_the_oracle_of_ours():
    assert oracles.oracle("caf_thread_ring", {"actors": 8, "hops": 10}) == \
        oracles.oracle("thread_ring", {"actors": 8, "hops": 10})
