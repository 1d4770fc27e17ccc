"""Savina's coordination benchmarks (group C): savina_chameneos (6, with caf_savina_chameneos),
savina_bndbuffer (10) and savina_philosopher (11). Hand-worked oracle cases, each kernel's own
checks, the parameters it refuses, and the CAF version answering as the oracle."""

from __future__ import annotations

import oracles
import pytest

from labctl import _native
from labctl.catalogue import kernels

CAF_KERNELS = {k["name"] for k in _native.kernels() if k["runtime"] == "caf"}
needs_caf = pytest.mark.skipif(
    "caf_savina_chameneos" not in CAF_KERNELS,
    reason="labctl._native was built without CAF (no caf_ kernels)")


def oracle(kernel: str, params: dict) -> oracles.Oracle:
    return oracles.oracle(kernel, _native.validate(kernel, params, scoped=False))


# -- savina_chameneos -------------------------------------------------------------------------------

def test_chameneos_oracle_by_hand():
    # Two creatures, one meeting: both ask (2 requests); the mall keeps the first waiting and
    # forwards the second to it (1 forward); it changes colour and tells the other (1 change);
    # both ask again (2 requests, 4 in all), and the meeting being made, each gets an exit (2)
    # and reports (2): 4 + 1 + 1 + 2 + 2 = 10 messages, counts 1 + 1 = 2.
    assert oracles.savina_chameneos({"creatures": 2, "meetings": 1}) == oracles.Oracle(
        "meetings=1 requests=4 exits=2 counted=2 reports=2 wrong_changes=0 colour_invariant=kept", 10)
    # No meeting: three requests, each answered with an exit, three reports: 9 messages.
    assert oracles.savina_chameneos({"creatures": 3, "meetings": 0}) == oracles.Oracle(
        "meetings=0 requests=3 exits=3 counted=0 reports=3 wrong_changes=0 colour_invariant=kept", 9)


@pytest.mark.parametrize("dispatcher", ["one_thread", "thread_pool", "work_stealing", "active_group"])
@pytest.mark.parametrize("creatures, meetings", [(2, 1), (3, 0), (7, 1001), (100, 5000)])
def test_chameneos_answers_as_its_oracle(dispatcher, creatures, meetings):
    params = {"creatures": creatures, "meetings": meetings, "dispatcher": dispatcher}
    result = _native.run("savina_chameneos", params)
    expected = oracle("savina_chameneos", params)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


def test_chameneos_states_its_expectation():
    stated = _native.expect("savina_chameneos", {})
    assert stated["messages"] == 3 * 100 + 4 * 200_000
    assert stated["answer"] == oracle("savina_chameneos", {}).answer


def test_chameneos_wrong_answer_raises():
    with pytest.raises(_native.VerificationError, match="wrong answer"):
        _native.run("savina_chameneos", {"creatures": 3, "meetings": 10}, "wrong_answer")


@pytest.mark.parametrize("values, param", [
    ({"creatures": 1}, "creatures"),  # nobody to meet: the mall would wait forever
    ({"meetings": -1}, "meetings"),
    ({"creatures": 20_000, "dispatcher": "active_obj"}, "dispatcher"),
])
def test_chameneos_refuses_wrong_parameters(values, param):
    with pytest.raises(kernels.ParamError) as caught:
        kernels.resolve("savina_chameneos", values)
    assert caught.value.param == param


@needs_caf
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("creatures, meetings", [(2, 1), (3, 0), (7, 1001)])
def test_caf_chameneos_answers_as_the_oracle(threads, creatures, meetings):
    params = {"creatures": creatures, "meetings": meetings, "threads": threads}
    result = _native.run("caf_savina_chameneos", params)
    expected = oracle("caf_savina_chameneos", params)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


# -- savina_bndbuffer -------------------------------------------------------------------------------

def bndbuffer_model(buffer_size: int, producers: int, consumers: int, items: int) -> dict:
    """Savina's manager, producers and consumers on one FIFO queue of messages (one schedule of
    many), written from Savina's source: the messages handled, the items consumed per
    (producer, seq), and the most items its buffer held."""
    from collections import deque
    queue = deque(("produce", p) for p in range(producers))
    available, parked, pending = deque(range(consumers)), deque(), deque()
    adjusted, produced, exited, handled, most = buffer_size - producers, [0] * producers, 0, 0, 0
    consumed: dict[tuple[int, int], int] = {}
    exiting = False

    def try_exit():
        nonlocal exiting
        if exited == producers and len(available) == consumers and not exiting:
            exiting = True
            queue.extend(("consumer_exit", c) for c in range(consumers))

    while queue:
        kind, arg = queue.popleft()
        handled += 1
        if kind == "produce":
            if produced[arg] == items:
                queue.append(("producer_exit", arg))
            else:
                queue.append(("data", (arg, produced[arg])))
                produced[arg] += 1
        elif kind == "data":  # at the manager
            if available:
                queue.append(("consume", (available.popleft(), arg)))
            else:
                pending.append(arg)
                most = max(most, len(pending))
            if len(pending) >= adjusted:
                parked.append(arg[0])
            else:
                queue.append(("produce", arg[0]))
        elif kind == "consume":  # at a consumer
            consumer, item = arg
            consumed[item] = consumed.get(item, 0) + 1
            queue.append(("available", consumer))
        elif kind == "available":
            if pending:
                queue.append(("consume", (arg, pending.popleft())))
                if parked:
                    queue.append(("produce", parked.popleft()))
            else:
                available.append(arg)
                try_exit()
        elif kind == "producer_exit":
            exited += 1
            try_exit()
    return {"handled": handled, "consumed": consumed, "most": most}


@pytest.mark.parametrize("buffer_size, producers, consumers, items",
                         [(2, 1, 1, 3), (5, 3, 2, 50), (50, 40, 40, 20), (4, 3, 9, 7)])
def test_bndbuffer_oracle_agrees_with_a_model_of_savinas_manager(buffer_size, producers, consumers, items):
    model = bndbuffer_model(buffer_size, producers, consumers, items)
    expected = oracles.savina_bndbuffer(
        {"buffer_size": buffer_size, "producers": producers, "consumers": consumers, "items_per_producer": items})
    assert model["handled"] == expected.messages
    assert model["consumed"] == {(p, s): 1 for p in range(producers) for s in range(items)}
    assert model["most"] < buffer_size  # room for an item in flight from each producer


def test_bndbuffer_oracle_by_hand():
    # One producer, one consumer, two items: produce x3 (the third answered by the exit), 2 items
    # to the manager, 2 on to the consumer, 2 availabilities, 1 producer exit, 1 consumer exit:
    # 3 + 2 + 2 + 2 + 1 + 1 = 11.
    assert oracles.savina_bndbuffer(
        {"buffer_size": 2, "producers": 1, "consumers": 1, "items_per_producer": 2}) == oracles.Oracle(
        "produced=2 consumed=2 consumed_once=2 short_producers=0 over_buffer=0", 11)


@pytest.mark.parametrize("dispatcher", ["one_thread", "thread_pool", "work_stealing", "adv_thread_pool"])
@pytest.mark.parametrize("buffer_size, producers, consumers, items",
                         [(2, 1, 1, 0), (2, 1, 1, 3), (4, 3, 9, 7), (50, 40, 40, 20)])
def test_bndbuffer_answers_as_its_oracle(dispatcher, buffer_size, producers, consumers, items):
    params = {"buffer_size": buffer_size, "producers": producers, "consumers": consumers,
              "items_per_producer": items, "produce_cost": 0, "consume_cost": 0, "dispatcher": dispatcher}
    result = _native.run("savina_bndbuffer", params)
    expected = oracle("savina_bndbuffer", params)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


def test_bndbuffer_defaults_are_savinas():
    params = _native.validate("savina_bndbuffer", {}, scoped=False)
    assert [params[name] for name in ("buffer_size", "producers", "consumers", "items_per_producer",
                                      "produce_cost", "consume_cost")] == [50, 40, 40, 1000, 25, 25]
    assert _native.expect("savina_bndbuffer", {})["messages"] == 4 * 40 * 1000 + 2 * 40 + 40


def test_bndbuffer_wrong_answer_raises():
    with pytest.raises(_native.VerificationError, match="wrong answer"):
        _native.run("savina_bndbuffer", {"buffer_size": 3, "producers": 2, "items_per_producer": 5,
                                         "consumers": 2}, "wrong_answer")


@pytest.mark.parametrize("values, param, words", [
    ({"buffer_size": 40}, "buffer_size", "must exceed 'producers'"),  # the manager would deadlock
    ({"buffer_size": 3, "producers": 3}, "buffer_size", "must exceed 'producers'"),
    ({"consumers": 0}, "consumers", "consumers"),
    ({"items_per_producer": -1}, "items_per_producer", "items_per_producer"),
    ({"produce_cost": -1}, "produce_cost", "produce_cost"),
    ({"producers": 6000, "consumers": 6000, "buffer_size": 7000, "dispatcher": "active_obj"}, "dispatcher",
     "thread per agent"),
])
def test_bndbuffer_refuses_wrong_parameters(values, param, words):
    with pytest.raises(kernels.ParamError, match=words) as caught:
        kernels.resolve("savina_bndbuffer", values)
    assert caught.value.param == param


# -- savina_philosopher -----------------------------------------------------------------------------

def philosopher_model(n: int, rounds: int) -> tuple[int, int, list[int]]:
    """Savina's arbitrator and philosophers on one FIFO queue of messages (one schedule of many),
    written from Savina's source: (messages handled, denials, meals per philosopher)."""
    from collections import deque
    queue = deque(("start", i) for i in range(n))
    taken, eaten, handled, denials, exited = [False] * n, [0] * n, 0, 0, 0
    while exited < n:
        kind, i = queue.popleft()
        handled += 1
        left, right = i, (i + 1) % n
        if kind in ("start", "denied"):
            queue.append(("hungry", i))
        elif kind == "hungry":  # at the arbitrator
            if taken[left] or taken[right]:
                denials += 1
                queue.append(("denied", i))
            else:
                assert not (taken[left] or taken[right])
                taken[left] = taken[right] = True
                queue.append(("eat", i))
        elif kind == "eat":
            eaten[i] += 1
            queue.append(("done", i))
            queue.append(("start", i) if eaten[i] < rounds else ("exit", i))
        elif kind == "done":
            taken[left] = taken[right] = False
        elif kind == "exit":
            exited += 1
    return handled, denials, eaten


@pytest.mark.parametrize("n, rounds", [(1, 3), (2, 5), (5, 40), (20, 30)])
def test_philosopher_oracle_agrees_with_a_model_of_savinas_arbitrator(n, rounds):
    handled, denials, eaten = philosopher_model(n, rounds)
    assert eaten == [rounds] * n
    expected = oracles.savina_philosopher({"philosophers": n, "rounds": rounds}, denials)
    assert expected.messages == handled and expected.metrics == {"denials": denials}
    if n == 1:
        assert denials == 0


def test_philosopher_oracle_by_hand():
    # One philosopher, two rounds: start, hungry, eat, done (x2), then its exit: 9 messages.
    assert oracles.savina_philosopher({"philosophers": 1, "rounds": 2}) == oracles.Oracle(
        "philosophers=1 meals=2 uneven_philosophers=0 fork_conflicts=0 wrong_releases=0 "
        "forks_left_held=0 lost_denials=0", 9, {"denials": 0})
    # Two philosophers share both forks; with 3 denials: 4*2*1 + 2 + 2*3 = 16.
    assert oracles.savina_philosopher({"philosophers": 2, "rounds": 1}, 3).messages == 16


@pytest.mark.parametrize("dispatcher", ["one_thread", "thread_pool", "work_stealing", "adv_thread_pool",
                                        "active_group"])
@pytest.mark.parametrize("n, rounds", [(1, 50), (2, 100), (5, 200), (20, 100)])
def test_philosopher_answers_as_its_oracle_given_its_denials(dispatcher, n, rounds):
    params = {"philosophers": n, "rounds": rounds, "dispatcher": dispatcher}
    result = _native.run("savina_philosopher", params)
    denials = result["metrics"]["denials"]
    assert denials == int(denials) >= 0
    # With one philosopher the oracle knows there are none (and the metric must agree).
    resolved = _native.validate("savina_philosopher", params, scoped=False)
    expected = oracles.savina_philosopher(resolved, None if n == 1 else int(denials))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert result["metrics"] == expected.metrics


@pytest.mark.parametrize("n", [1, 3])
def test_philosopher_states_its_answer_and_the_fewest_messages_with_no_most(n):
    # What a peer is held to: the oracle's answer and its count without denials, the fewest; no
    # most, since a schedule may deny a philosopher without end, but for one philosopher, never
    # denied, whose count is exact.
    params = {"philosophers": n, "rounds": 7}
    fewest = oracles.savina_philosopher(params, 0)
    most = {} if n == 1 else {"messages_most": None}
    assert _native.expect("savina_philosopher", params) == {"answer": fewest.answer, "messages": fewest.messages,
                                                            **most}


# A peer that answers as the test tells it (the environment), to hold the worker's check to the
# expectation: no upper bound on the messages, the fewest still one.
TOLD = """
import json, os, sys
json.load(sys.stdin)
print(json.dumps({"elapsed_ns": 1000, "messages": int(os.environ["TOLD_MESSAGES"]),
                  "answer": os.environ["TOLD_ANSWER"]}))
"""


@pytest.mark.parametrize("told, verified", [("fewest", True), ("far_above", True), ("below", False)])
def test_a_peers_philosopher_count_has_a_floor_and_no_ceiling(peers, monkeypatch, told, verified):
    import json
    import sys

    from labctl.run import runner
    from labctl.vocabulary.point import Point

    root, reload = peers
    folder = root / "told"
    folder.mkdir()
    (folder / "peer.py").write_text(TOLD)
    (folder / "peer.toml").write_text(f'name = "told"\nsummary = "a test program"\n'
                                      f'command = {json.dumps([sys.executable, "{folder}/peer.py"])}\n'
                                      f'[kernels]\nsavina_philosopher = ["philosophers", "rounds"]\n')
    reload()
    params = {"philosophers": 3, "rounds": 7}
    fewest = oracles.savina_philosopher(params, 0)
    count = {"fewest": fewest.messages, "far_above": fewest.messages + 2 * 10**12, "below": fewest.messages - 1}[told]
    monkeypatch.setenv("TOLD_ANSWER", fewest.answer)
    monkeypatch.setenv("TOLD_MESSAGES", str(count))
    resolved_ = kernels.resolve("savina_philosopher", {"runtime": "told", **params})
    point = Point("savina_philosopher", {k: v for k, v in resolved_.items() if v is not None})
    if verified:
        [sample] = list(runner.run_point(point))
        assert sample.verified and sample.messages_processed == count
        return
    with pytest.raises(runner.PointFailed) as caught:
        list(runner.run_point(point))
    assert caught.value.kind == "verification"
    assert f"reported {count} messages, expected at least {fewest.messages}" in str(caught.value)


@pytest.mark.skipif("caf_savina_philosopher" not in CAF_KERNELS,
                    reason="labctl._native was built without CAF (no caf_ kernels)")
@pytest.mark.parametrize("n, rounds, threads", [(5, 60, 2), (2, 40, 1)])
def test_caf_philosopher_answers_as_its_oracle_given_its_denials(n, rounds, threads):
    # CAF's schedule decides the denials as ours does; the oracle takes them and holds the rest.
    params = {"philosophers": n, "rounds": rounds, "threads": threads}
    result = _native.run("caf_savina_philosopher", params)
    expected = oracles.savina_philosopher(_native.validate("caf_savina_philosopher", params, scoped=False),
                                          int(result["metrics"]["denials"]))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert result["metrics"] == expected.metrics


def test_philosopher_defaults_are_savinas():
    params = _native.validate("savina_philosopher", {}, scoped=False)
    assert (params["philosophers"], params["rounds"]) == (20, 10_000)


def test_philosopher_wrong_answer_raises():
    with pytest.raises(_native.VerificationError, match="wrong answer"):
        _native.run("savina_philosopher", {"philosophers": 3, "rounds": 10}, "wrong_answer")


@pytest.mark.parametrize("values, param", [
    ({"philosophers": 0}, "philosophers"),
    ({"rounds": 0}, "rounds"),
    ({"philosophers": 20_000, "dispatcher": "active_obj"}, "dispatcher"),
])
def test_philosopher_refuses_wrong_parameters(values, param):
    with pytest.raises(kernels.ParamError) as caught:
        kernels.resolve("savina_philosopher", values)
    assert caught.value.param == param
    assert param in str(caught.value)


@pytest.mark.skipif("caf_savina_bndbuffer" not in CAF_KERNELS,
                    reason="labctl._native was built without CAF (no caf_ kernels)")
def test_caf_bndbuffer_answers_as_the_oracle_and_refuses_a_buffer_too_small():
    # A buffer of 3 for 2 producers: producers are parked and woken; threads 2 (bndbuffer's turn).
    params = {"buffer_size": 3, "producers": 2, "consumers": 3, "items_per_producer": 30,
              "produce_cost": 0, "consume_cost": 0, "threads": 2}
    result = _native.run("caf_savina_bndbuffer", params)
    expected = oracle("caf_savina_bndbuffer", params)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    with pytest.raises(kernels.ParamError, match="must exceed 'producers'") as caught:
        kernels.resolve("savina_bndbuffer", {"runtime": "caf", "buffer_size": 3, "producers": 3})
    assert caught.value.param == "buffer_size"
