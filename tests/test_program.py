"""Property test of the runtime: random small programs of sends between agents, on random
dispatcher configurations, deliver exactly what a sequential model predicts, in per-sender order.

A program (native/tests/program/program.hpp) has agents in coops, named mboxes with subscribers,
and external sender threads, each sending messages along routes: whoever receives a message at
step s forwards it to the route's target s + 1. The runtime logs every send and every delivery.
Programs run through labctl._program, a test driver the editable install builds beside
labctl._native and a wheel does not carry."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labctl import _native

try:
    from labctl import _program
except ImportError as error:
    raise ImportError("labctl._program, the property tests' driver, is built by the editable install "
                      "only: pip install -e '.[test]' (README: set-up)") from error

# Each registered dispatcher, with values for the settings its registry entry says it takes.
SETTINGS = {
    "threads": st.integers(1, 3),
    "fifo": st.sampled_from(["cooperation", "individual"]),
    "max_demands_at_once": st.sampled_from([1, 2, 4, 100]),
    "wake": st.sampled_from(["lifo", "fifo"]),
    "stack_kb": st.sampled_from([0, 64]),
}
DISPATCHERS = st.one_of(*(
    st.fixed_dictionaries({"dispatcher": st.just(dispatcher["name"]),
                           **{setting: SETTINGS[setting] for setting in dispatcher["takes"]}})
    for dispatcher in _native.dispatchers()
))


@st.composite
def programs(draw):
    params = draw(DISPATCHERS)
    params["spin_us"] = draw(st.sampled_from([0, 20]))
    agent_count = draw(st.integers(1, 6))
    agents = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)),
                           min_size=agent_count, max_size=agent_count))
    subscribers = draw(st.lists(st.lists(st.integers(0, agent_count - 1), unique=True, max_size=agent_count),
                                max_size=2))
    targets = st.integers(0, agent_count + len(subscribers) - 1)
    senders = draw(st.lists(st.lists(st.lists(targets, min_size=1, max_size=4), min_size=1, max_size=8),
                            min_size=1, max_size=3))
    return params, agents, subscribers, senders


def model(agents, subscribers, senders):
    """What a sequential run delivers and sends: multisets of (receiver, from, channel, message,
    step) and of (sender, target, message, step)."""
    count = len(agents)
    routes = [route for routes in senders for route in routes]
    deliveries: Counter = Counter()
    sends: Counter = Counter()
    pending = []  # (sender, message, step) not yet delivered
    message = 0
    for s, sender_routes in enumerate(senders):
        for _ in sender_routes:
            pending.append((count + s, message, 0))
            message += 1
    while pending:
        sender, message, step = pending.pop()
        target = routes[message][step]
        sends[(sender, target, message, step)] += 1
        receivers = [target] if target < count else subscribers[target - count]
        for receiver in receivers:
            deliveries[(receiver, sender, target, message, step)] += 1
            if step + 1 < len(routes[message]):
                pending.append((receiver, message, step + 1))
    return deliveries, sends


def check(agents, subscribers, senders, log):
    count = len(agents)
    expected_deliveries, expected_sends = model(agents, subscribers, senders)
    deliveries = Counter((receiver, *d) for receiver, got in enumerate(log["received"]) for d in got)
    sends = Counter((sender, *s) for sender, sent in enumerate(log["sent"]) for s in sent)
    assert deliveries == expected_deliveries
    assert sends == expected_sends
    assert log["dropped"] == 0

    # External senders send their routes in order.
    first = 0
    for s, routes in enumerate(senders):
        assert log["sent"][count + s] == [(route[0], first + i, 0) for i, route in enumerate(routes)]
        first += len(routes)

    # Per sender and channel, each receiver gets messages in the order they were sent.
    for receiver, got in enumerate(log["received"]):
        by_source = defaultdict(list)
        for sender, channel, message, step in got:
            by_source[(sender, channel)].append((message, step))
        for (sender, channel), order in by_source.items():
            sent_order = [(m, s) for target, m, s in log["sent"][sender] if target == channel]
            assert order == sent_order, (receiver, sender, channel)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_deliver_what_the_sequential_model_predicts(program):
    params, agents, subscribers, senders = program
    log = _program.run_program(params, agents, subscribers, senders, timeout_s=30)
    check(agents, subscribers, senders, log)


def test_the_checks_catch_a_lost_a_duplicated_and_a_reordered_message():
    # The property above can fail: each kind of wrong log is caught.
    params, agents, subscribers = {"dispatcher": "one_thread"}, [(0, 0), (0, 0)], []
    senders = [[[0, 1], [0]], [[1]]]
    log = _program.run_program(params, agents, subscribers, senders)
    check(agents, subscribers, senders, log)

    lost = {**log, "received": [got[:-1] for got in log["received"]]}
    duplicated = {**log, "received": [got + got[-1:] for got in log["received"]]}
    reordered = {**log, "received": [list(reversed(log["received"][0])), log["received"][1]]}
    for wrong in (lost, duplicated, reordered):
        with pytest.raises(AssertionError):
            check(agents, subscribers, senders, wrong)


def test_a_malformed_program_is_refused_with_a_clear_error():
    with pytest.raises(_native.ParamError, match="out of range"):
        _program.run_program({"dispatcher": "one_thread"}, [(0, 0)], [], [[[5]]])
    with pytest.raises(_native.ParamError, match="dispatcher"):
        _program.run_program({"dispatcher": "nope"}, [(0, 0)], [], [[[0]]])
