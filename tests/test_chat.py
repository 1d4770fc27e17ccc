"""The chat application of "Run, Actor, Run" (chat, caf_chat, and on Go, Erlang and tokio): its oracle on cases
worked out by hand, the kernel against the oracle on four dispatchers (buffering on and off, one
directory, compute only, post heavy, leaves that make the deliveries depend on the schedule), the
same answer on repeated runs, the metrics present and consistent, the expectation a peer is held
to (a range of message counts where the schedule decides the deliveries), the Go, Erlang and tokio
peers against the oracle, and bad parameters refused by name."""

from __future__ import annotations

import json
import sys
import textwrap

import oracles
import pytest
from savina_support import DISPATCHERS, fnv, resolved

from labctl import _native
from labctl.catalogue import kernels, runtimes
from labctl.run import runner
from labctl.vocabulary.point import Point

WORD = 2**64
COMPUTE, POST, LEAVE, INVITE, NOTHING = range(5)  # the actions' numbers in a client's fold
CAF = any(k["name"] == "caf_chat" for k in _native.kernels())
ONLY = {"compute": 0, "post": 0, "leave": 0, "invite": 0}
ACTION_PARAMS = ("clients", "directories", "turns", "compute", "post", "leave", "invite", "befriend", "seed")
SMALL = {"clients": 16, "directories": 2, "turns": 4, "iterations": 2, "compute_repeats": 5, "seed": 2}
# A chat posted to and left in the same turn: the deliveries depend on the schedule.
LEAVING = {"clients": 20, "directories": 1, "turns": 6, "iterations": 2, "compute_repeats": 2,
           "compute": 20, "post": 40, "leave": 20, "invite": 20, "befriend": 30, "seed": 10}
CASES = {
    "defaults_small": SMALL,
    "no_buffering": {**SMALL, "buffering": False},
    "one_directory": {**SMALL, "directories": 1, "clients": 12, "seed": 5},
    "compute_only": {**SMALL, **ONLY, "compute": 100, "befriend": 0},
    "post_heavy": {**SMALL, "compute": 10, "post": 60, "leave": 5, "invite": 25, "befriend": 40, "seed": 7},
    "leaving": LEAVING,
}


def answer(runs: int, turns: int, clients: int, counts: dict[str, int], invitations: int = 0,
           logout_leaves: int = 0, decisions: int = 0) -> str:
    every = {name: counts.get(name, 0) for name in oracles.CHAT_ACTIONS}
    return (f"iterations={runs} turns={turns} clients={clients} "
            + " ".join(f"{name}={value}" for name, value in every.items())
            + f" invitations={invitations} logout_leaves={logout_leaves} decisions={decisions % WORD:016x} "
            "miscounted_turns=0 deliveries_off_turns=0 unacknowledged=0 late=0 wrong_computes=0 stray_messages=0")


def run_and_oracle(kernel: str, params: dict) -> tuple[dict, oracles.Oracle]:
    result = _native.run(kernel, params)
    return result, oracles.chat(resolved(kernel, params), int(result["metrics"]["deliveries"]))


# -- the oracle, worked by hand -------------------------------------------------------------------

@pytest.mark.parametrize("only, action", [
    ({"compute": 100}, COMPUTE),
    ({"post": 100}, NOTHING),   # in no chat: a post does nothing
    ({"leave": 100}, NOTHING),
    ({}, NOTHING),              # the draws past the four percentages
])
def test_oracle_when_every_draw_does_one_thing_without_chats(only, action):
    # 4 clients in 2 directories, 3 turns, twice, nobody befriended. Each iteration: the driver's
    # Ready and Finished per directory and TurnDone and Closed per turn (4 + 6); the directories'
    # 4 Login, 4 ClientLeft, 2 BefriendAll, 2 Disconnect, 3 x 2 Poke (18); the clients' 12 Act
    # and 4 Logout (16); the accumulators' 12 resolutions and 3 Close (15): 59; and one Start.
    params = resolved("chat", {"clients": 4, "directories": 2, "turns": 3, "iterations": 2, "befriend": 0,
                               **ONLY, **only})
    got = oracles.chat(params)
    name = oracles.CHAT_ACTIONS[action]
    assert got.answer == answer(2, 3, 4, {name: 24}, decisions=8 * fnv(action, action, action))
    assert got.messages == 1 + 2 * 59
    assert got.metrics == {**dict.fromkeys(oracles.CHAT_ACTIONS, 0), name: 24, "deliveries": 0}
    assert got.absent == frozenset()


@pytest.mark.parametrize("seed", [0, 42, 1234])
@pytest.mark.parametrize("turns", [1, 2])
def test_oracle_two_friends_inviting_each_other(seed, turns):
    # Two clients in one directory, befriend = 100: client 0's pass befriends 1 and 0 (its own
    # draw befriends nobody), client 1's pass the same pair again: 4 befriend messages, one friend
    # each. Every turn both invite (invite = 100) their one friend into a new chat: whatever the
    # draws, a shuffle of one and next(1) = 0 invitations, made one. Each fold: per turn the
    # invite (3), one invitation, the friend's id. At logout each is in 2 chats a turn.
    params = resolved("chat", {"clients": 2, "directories": 1, "turns": turns, "iterations": 1,
                               "befriend": 100, "seed": seed, **ONLY, "invite": 100})
    got = oracles.chat(params)
    folds = fnv(*[INVITE, 1, 1] * turns) + fnv(*[INVITE, 1, 0] * turns)
    assert got.answer == answer(1, turns, 2, {"invites": 2 * turns}, invitations=2 * turns,
                                logout_leaves=4 * turns, decisions=folds)
    # Once: the driver's Ready and Finished; the directory's 2 Login, 2 ClientLeft, BefriendAll,
    # Disconnect; the clients' 4 Befriend and 2 Logout. A turn: the driver's TurnDone and Closed;
    # a Poke; the clients' 2 Act, 2 Accepted, 4 Left (at logout); the chats' 2 Join and 4 Leave;
    # the accumulator's 2 resolutions, 2 join acknowledgements, its Close. And the Start.
    per_turn = 2 + 1 + (2 + 2 + 4) + (2 + 4) + (2 + 2 + 1)
    assert got.messages == 1 + (2 + 6 + 6) + per_turn * turns


def client_starts(seed: int) -> list[int]:
    """Two clients in one directory: their generators' starts, the directory's next two values,
    the directory's own start being the seed's generator's first value (the befriending draws
    from the directory's after the logins, which the clients' do not depend on)."""
    top = oracles.PseudoRandom(seed)
    directory = oracles.PseudoRandom(top.next())
    return [directory.next(), directory.next()]


def invite_then_post(seed: int) -> list[list[int]] | None:
    """With post = 50 and invite = 50, the draws of each client in 2 turns when both invite in the
    first (no chat yet: the bare next(), then a pick of 50 or more, then the shuffle's next(1) and
    next(1) invitations) and both post in the second (next(2) of their 2 chats, a pick below 50):
    [the chat's position of client 0, of client 1], or None where the draws do otherwise."""
    positions = []
    for start in client_starts(seed):
        random = oracles.PseudoRandom(start)
        random.next()
        if random.next(100) < 50:
            return None
        random.next(1), random.next(1)
        positions.append(random.next(2))
        if random.next(100) >= 50:
            return None
    return positions


def test_oracle_two_friends_inviting_then_posting():
    # Turn 0: both invite, chats 0 (client 0's) and 1 (client 1's), each with both clients.
    # Turn 1: each posts to the chat at the position it draws (the chats by id: 0, 1), which
    # reaches both members: 4 deliveries, none left in the turn, so whatever the schedule.
    seed, positions = next((s, p) for s in range(5000) if (p := invite_then_post(s)) is not None)
    params = resolved("chat", {"clients": 2, "directories": 1, "turns": 2, "iterations": 1, "befriend": 100,
                               "seed": seed, **ONLY, "post": 50, "invite": 50})
    got = oracles.chat(params)
    folds = fnv(INVITE, 1, 1, POST, positions[0]) + fnv(INVITE, 1, 0, POST, positions[1])
    assert got.answer == answer(1, 2, 2, {"invites": 2, "posts": 2}, invitations=2, logout_leaves=4,
                                decisions=folds)
    assert got.metrics["deliveries"] == 4
    # Driver 2 + 4; directory 2 + 2 + 1 + 1 + 2 Poke; clients 4 Befriend, 4 Act, 4 Forward,
    # 2 Accepted, 4 Left, 2 Logout; chats 2 Post, 2 Join, 4 Leave; accumulators 4 resolutions,
    # 4 deliveries and 2 joins acknowledged, 2 Close; the Start.
    assert got.messages == 1 + 6 + 8 + 20 + 8 + 12


def test_oracle_holds_schedule_dependent_deliveries_to_their_bounds():
    params = resolved("chat", LEAVING)
    acts = oracles.chat_actions(*(params[k] for k in ACTION_PARAMS))
    fewest, most = (sum(d[i] for d in acts.deliveries) for i in (0, 1))
    assert fewest < most  # a chat posted to and left in the same turn
    runs = params["iterations"]
    with pytest.raises(AssertionError, match="pass the run's"):
        oracles.chat(params)
    assert oracles.chat(params, runs * most).metrics["deliveries"] == runs * most
    for wrong in (runs * fewest - 1, runs * most + 1):
        with pytest.raises(AssertionError):
            oracles.chat(params, wrong)
    # Each delivery is a Forward and its acknowledgement.
    assert oracles.chat(params, runs * most).messages - oracles.chat(params, runs * fewest).messages == \
        2 * runs * (most - fewest)


def test_oracle_refuses_a_befriending_that_never_ends():
    # befriend = 1: a draw below 1 is a multiple of 4, which the 16-bit generator gives every
    # fourth draw; passing over 2 clients, always at the same one of them: the other never has a
    # friend (the program loops for ever). A third client lets the draws reach everyone.
    with pytest.raises(ValueError, match="can befriend nobody"):
        oracles.chat_actions(2, 1, 1, 100, 0, 0, 0, 1, 42)
    assert oracles.chat_actions(3, 1, 1, 100, 0, 0, 0, 1, 42).befriendings > 0


def test_oracle_tells_a_nudged_input_apart():
    base = resolved("chat", {"clients": 24, "directories": 2, "turns": 5, "iterations": 1, "seed": 3})
    plan = oracles.chat_actions(*(base[k] for k in ACTION_PARAMS))
    for nudge in ({"seed": 4}, {"befriend": 20}, {"compute": 40}, {"post": 15}, {"directories": 3}):
        assert oracles.chat_actions(*({**base, **nudge}[k] for k in ACTION_PARAMS)) != plan, nudge


# -- the kernel against its oracle ----------------------------------------------------------------

@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("case", CASES)
def test_chat_answers_as_its_oracle(dispatcher, case):
    result, expected = run_and_oracle("chat", {**CASES[case], **dispatcher})
    assert result["answer"] == expected.answer
    assert result["messages_processed"] == expected.messages
    assert {name: result["metrics"][name] for name in expected.metrics} == expected.metrics


@pytest.mark.skipif(not CAF, reason="labctl._native was built without CAF")
@pytest.mark.parametrize("case", ["leaving", "post_heavy"])
def test_caf_chat_answers_as_its_oracle(case):
    result, expected = run_and_oracle("caf_chat", {**CASES[case], "threads": 2})
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert {name: result["metrics"][name] for name in expected.metrics} == expected.metrics


# -- the expectation a peer is held to, and the Go peer ---------------------------------------------

def fewest_and_most(params: dict) -> tuple[oracles.Oracle, oracles.Oracle]:
    """The oracle at the simulation's fewest deliveries and at its most, every iteration."""
    acts = oracles.chat_actions(*(params[k] for k in ACTION_PARAMS))
    runs = params["iterations"]
    return tuple(oracles.chat(params, runs * sum(d[i] for d in acts.deliveries)) for i in (0, 1))


def test_the_stated_expectation_is_the_oracles_with_the_schedules_range():
    params = resolved("chat", LEAVING)
    fewest, most = fewest_and_most(params)
    assert fewest.messages < most.messages and fewest.answer == most.answer
    assert _native.expect("chat", LEAVING) == {"answer": fewest.answer, "messages": fewest.messages,
                                               "messages_most": most.messages}
    # Where no turn leaves a chat it posts to, one count.
    exact = oracles.chat(resolved("chat", SMALL))
    assert _native.expect("chat", SMALL) == {"answer": exact.answer, "messages": exact.messages}


# Answers as told by the environment: a program that reports `messages` as the test says.
TOLD = textwrap.dedent('''
    import json, os, sys
    json.load(sys.stdin)
    print(json.dumps({"elapsed_ns": 1000, "messages": int(os.environ["CHAT_MESSAGES"]),
                      "answer": os.environ["CHAT_ANSWER"]}))
''')


@pytest.mark.parametrize("told, verified", [("fewest", True), ("most", True), ("below", False), ("above", False)])
def test_a_peers_message_count_is_held_to_the_simulations_range(peers, monkeypatch, told, verified):
    root, reload = peers
    folder = root / "told"
    folder.mkdir()
    (folder / "peer.py").write_text(TOLD)
    names = json.dumps(sorted(p for p in LEAVING if p != "threads"))
    (folder / "peer.toml").write_text(f'name = "told"\nsummary = "a test program"\n'
                                      f'command = {json.dumps([sys.executable, "{folder}/peer.py"])}\n'
                                      f"[kernels]\nchat = {names}\n")
    reload()
    fewest, most = fewest_and_most(resolved("chat", LEAVING))
    count = {"fewest": fewest.messages, "most": most.messages, "below": fewest.messages - 1,
             "above": most.messages + 1}[told]
    monkeypatch.setenv("CHAT_ANSWER", fewest.answer)
    monkeypatch.setenv("CHAT_MESSAGES", str(count))
    point = Point("chat", {k: v for k, v in kernels.resolve("chat", {"runtime": "told", **LEAVING}).items()
                           if v is not None})
    if verified:
        [sample] = list(runner.run_point(point))
        assert sample.verified and sample.messages_processed == count
        return
    with pytest.raises(runner.PointFailed) as caught:
        list(runner.run_point(point))
    assert caught.value.kind == "verification"
    assert f"reported {count} messages, expected {fewest.messages} to {most.messages}" in str(caught.value)


PEERS = ("go", "erlang", "tokio")  # the external runtimes that run the chat


def peer_missing(runtime: str) -> str:
    known = runtimes.runtimes()
    return known[runtime].missing if runtime in known else f"no peers/{runtime}"


@pytest.fixture(scope="module")
def peer_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("peer-cache")  # each peer built once for the module's tests


def on_peer(runtime: str, *values):
    """A test's parameters on `runtime`, skipped where it cannot run here."""
    why = peer_missing(runtime)
    return pytest.param(runtime, *values, marks=pytest.mark.skipif(bool(why), reason=f"{runtime}: {why}"))


# Each case once per peer, on one thread and on two in turn (each peer's turn the other way round
# from the one before).
@pytest.mark.parametrize("runtime, case, threads",
                         [on_peer(runtime, case, 1 + (i + p) % 2)
                          for p, runtime in enumerate(PEERS) for i, case in enumerate(CASES)])
def test_a_peers_chat_answers_as_its_oracle(peer_cache, monkeypatch, runtime, case, threads):
    # The deliveries the run's, within the simulation's bounds (the oracle holds them there).
    monkeypatch.setenv(runtimes.CACHE_ENV, str(peer_cache))
    params = {**CASES[case], "threads": threads}
    resolved_ = kernels.resolve("chat", {"runtime": runtime, **params})
    [sample] = list(runner.run_point(Point("chat", {k: v for k, v in resolved_.items() if v is not None})))
    expected = oracles.chat(resolved("chat", CASES[case]), int(sample.metrics["deliveries"]))
    assert sample.verified and sample.answer == expected.answer
    assert sample.messages_processed == expected.messages
    assert {name: sample.metrics[name] for name in expected.metrics} == expected.metrics
    assert 0 < sample.metrics["turn_p50_ns"] <= sample.metrics["turn_p99_ns"] <= sample.metrics["turn_max_ns"]
    assert ("turn_qos_ns" in sample.metrics) == (CASES[case]["iterations"] >= 2)


@pytest.mark.parametrize("runtime", [on_peer(runtime) for runtime in PEERS])
@pytest.mark.parametrize("params, says", [
    ({"compute": 60, "post": 30, "leave": 10, "invite": 10}, "their sum must be at most 100"),
    ({"clients": 5, "directories": 3}, "param clients (5) must be at least twice directories (3)"),
    ({"befriend": 0}, "param befriend must be above 0 where invite (10) is"),
    ({"clients": 2, "directories": 1, "befriend": 1, "seed": 42}, "a client can befriend nobody in its directory"),
    ({"buffering": 1}, "param buffering must be true or false, got 1"),
])
def test_a_peers_chat_itself_refuses_what_ours_refuses(peer_cache, monkeypatch, runtime, params, says):
    # labctl refuses these before any program runs: the request is sent as it is.
    monkeypatch.setenv(runtimes.CACHE_ENV, str(peer_cache))
    with pytest.raises(runtimes.ExternalFailure) as caught:
        runtimes.run_external(runtimes.runtimes()[runtime], "chat", {**SMALL, **params, "threads": 1})
    assert caught.value.kind == "failure" and "exited with status 2" in str(caught.value)
    assert says in str(caught.value)


@pytest.mark.skipif(bool(peer_missing("erlang")), reason=f"erlang: {peer_missing('erlang')}")
def test_the_erlang_chat_refuses_a_wrong_answer_itself(peer_cache, monkeypatch):
    # The wrong_answer fault computes Fibonacci(34): every compute's every evaluation is wrong.
    monkeypatch.setenv(runtimes.CACHE_ENV, str(peer_cache))
    monkeypatch.setenv("LABCTL_ERLANG_PEER_FAULT", "wrong_answer")
    params = {k: v for k, v in kernels.resolve("chat", {"runtime": "erlang", **SMALL}).items() if v is not None}
    computes = oracles.chat(resolved("chat", SMALL)).metrics["computes"]
    with pytest.raises(runner.PointFailed) as caught:
        list(runner.run_point(Point("chat", params)))
    assert caught.value.kind == "failure"
    assert f"wrong_computes={computes * SMALL['compute_repeats']} " in str(caught.value)


def test_the_counts_are_the_sequential_simulations_whatever_the_schedule():
    # Two threads, repeated: the same answer every time (the deliveries may differ, each within
    # the simulation's bounds, which the answer checks).
    params = {**LEAVING, "dispatcher": "work_stealing", "threads": 2}
    runs = [_native.run("chat", params) for _ in range(4)]
    expected = oracles.chat(resolved("chat", params), int(runs[0]["metrics"]["deliveries"])).answer
    assert {run["answer"] for run in runs} == {expected}


def test_buffering_and_the_compute_job_change_no_draw():
    runs = [_native.run("chat", {**SMALL, **extra, "dispatcher": "one_thread"})
            for extra in ({}, {"buffering": False}, {"compute_repeats": 0})]
    assert len({r["answer"] for r in runs}) == 1
    assert len({r["messages_processed"] for r in runs}) == 1


# -- the metrics ----------------------------------------------------------------------------------

@pytest.mark.parametrize("iterations", [1, 3])
def test_the_metrics_are_present_and_consistent(iterations):
    params = {**LEAVING, "iterations": iterations, "dispatcher": "thread_pool", "threads": 2}
    metrics = _native.run("chat", params)["metrics"]
    draws = params["clients"] * params["turns"] * iterations
    assert sum(metrics[name] for name in oracles.CHAT_ACTIONS) == draws
    assert metrics["posts"] > 0 and metrics["deliveries"] >= metrics["posts"]  # a poster is a member
    assert 0 < metrics["turn_p50_ns"] <= metrics["turn_p99_ns"] <= metrics["turn_max_ns"]
    if iterations == 1:
        assert "turn_qos_ns" not in metrics
    else:
        assert 0 <= metrics["turn_qos_ns"] <= metrics["turn_max_ns"]


def test_the_catalogue_declares_the_metrics_and_the_study():
    kernel = next(k for k in _native.kernels() if k["name"] == "chat")
    declared = {m["name"]: m["absent_when"] for m in kernel["metrics"]}
    assert set(declared) == {*oracles.CHAT_ACTIONS, "deliveries", "turn_p50_ns", "turn_p99_ns", "turn_max_ns",
                             "turn_qos_ns"}
    assert declared["turn_qos_ns"] == "iterations = 1"
    assert not set(declared) & {p["name"] for p in kernel["params"]}
    assert [source["study"] for source in kernel["sources"]] == ["run_actor_run"]


# -- bad parameters -------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", ["chat", "caf_chat"] if CAF else ["chat"])
@pytest.mark.parametrize("params, name", [
    ({"compute": 60, "post": 30, "leave": 10, "invite": 10}, "compute"),
    ({"compute": 101}, "compute"),
    ({"post": -1}, "post"),
    ({"clients": 0}, "clients"),
    ({"clients": 5, "directories": 3}, "clients"),  # a directory of one has nobody to befriend
    ({"directories": 0}, "directories"),
    ({"turns": 0}, "turns"),
    ({"iterations": 0}, "iterations"),
    ({"befriend": 0}, "befriend"),  # invite = 10 invites friends
    ({"clients": 2, "directories": 1, "befriend": 1}, "befriend"),  # the befriending never ends
    ({"compute_repeats": -1}, "compute_repeats"),
    ({"seed": -1}, "seed"),
])
def test_chat_refuses_bad_parameters(kernel, params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run(kernel, params)


def test_a_sum_over_a_hundred_names_the_four_percentages():
    with pytest.raises(ValueError) as refused:
        _native.validate("chat", {"compute": 60, "post": 30, "leave": 10, "invite": 10})
    assert all(f"'{name}'" in str(refused.value) for name in ("compute", "post", "leave", "invite"))


def test_no_invites_needs_no_friends_and_a_sum_under_a_hundred_is_taken():
    params = {**SMALL, "befriend": 0, "invite": 0, "compute": 30, "post": 30, "leave": 10}
    result, expected = run_and_oracle("chat", {**params, "dispatcher": "one_thread"})
    assert result["answer"] == expected.answer and result["metrics"]["invites"] == 0


def test_a_thread_per_agent_is_refused_where_the_chats_would_need_too_many():
    _native.validate("chat", {**SMALL, "dispatcher": "active_obj"})
    with pytest.raises(ValueError, match="dispatcher 'active_obj' starts a thread per agent: clients=9000"):
        _native.validate("chat", {"clients": 9000, "dispatcher": "active_obj"})
