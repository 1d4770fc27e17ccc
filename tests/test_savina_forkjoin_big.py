"""Savina's benchmarks 3 (Fork-Join throughput), 4 (Fork-Join creation) and 7 (Big), as the
savina_fjthrput, savina_fjcreate and savina_big kernels and their CAF versions: hand-worked
answers, the oracles agreeing with them, bad parameters refused, the CAF versions answering as
the oracles."""

from __future__ import annotations

import oracles
import pytest

from labctl import _native
from labctl.catalogue import kernels, native

CAF_KERNELS = {k["name"] for k in _native.kernels() if k["runtime"] == "caf"}


def needs_caf(name: str):
    return pytest.mark.skipif(name not in CAF_KERNELS,
                              reason="labctl._native was built without CAF (no caf_ kernels)")


def oracle(name: str, params: dict) -> oracles.Oracle:
    return oracles.oracle(name, _native.validate(name, params, scoped=False))


def assert_oracle(name: str, params: dict, result: dict) -> None:
    expected = oracle(name, params)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


def refused(name: str, params: dict) -> kernels.ParamError:
    with pytest.raises(kernels.ParamError) as caught:
        native.run(name, params)
    return caught.value


# Savina's job: sin(37.2)^2. 37.2 - 12*pi = x = -0.4991118; sin x = x - x^3/6 + x^5/120 - x^7/5040
# = -0.4991118 + 0.0207225 - 0.0002581 + 0.0000015 = -0.4786459; squared 0.2291019.
JOB = 0.2291019


def result_sum(answer: str) -> float:
    return float(answer.rsplit("result_sum=", 1)[1])


# -- 3. Fork-Join throughput ----------------------------------------------------------------------

def test_fjthrput_oracle_worked_by_hand():
    # One actor, one message: one job, one tally; the sum is the job's result itself.
    one = oracle("savina_fjthrput", {"messages": 1, "actors": 1})
    assert one.answer.startswith("jobs=1 workers_done=1 bad_results=0 result_sum=")
    assert result_sum(one.answer) == pytest.approx(JOB, rel=1e-6)
    assert one.messages == 2
    # Savina's sizes: 60 actors x 10,000 messages, 600,000 jobs and 60 tallies.
    full = oracle("savina_fjthrput", {})
    assert full.answer.startswith("jobs=600000 workers_done=60 bad_results=0 ")
    assert full.messages == 600_060
    assert result_sum(full.answer) == pytest.approx(600_000 * JOB, rel=1e-6)


@pytest.mark.parametrize("messages, actors", [(1, 1), (7, 3), (1000, 2), (3, 61)])
@pytest.mark.parametrize("dispatcher", ["one_thread", "thread_pool"])
def test_fjthrput_answers_as_its_oracle(messages, actors, dispatcher):
    params = {"messages": messages, "actors": actors, "dispatcher": dispatcher}
    assert_oracle("savina_fjthrput", params, _native.run("savina_fjthrput", params))


def test_fjthrput_defaults_are_savinas():
    assert {k: v for k, v in _native.validate("savina_fjthrput", {}, scoped=False).items()
            if k in ("messages", "actors")} == {"messages": 10_000, "actors": 60}


@pytest.mark.parametrize("name", ["savina_fjthrput", "caf_savina_fjthrput"])
@pytest.mark.parametrize("values, param", [
    ({"messages": 0}, "messages"),
    ({"actors": 0}, "actors"),
    ({"actors": -3}, "actors"),
])
def test_fjthrput_refuses_bad_parameters(name, values, param):
    if name not in {k["name"] for k in _native.kernels()}:
        pytest.skip("no CAF kernels in this build")
    assert refused(name, values).param == param


def test_fjthrput_refuses_a_thread_per_actor_beyond_the_limit():
    error = refused("savina_fjthrput", {"actors": 20_000, "messages": 1, "dispatcher": "active_obj"})
    assert "actors=20000" in str(error)


@needs_caf("caf_savina_fjthrput")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("messages, actors", [(1, 1), (500, 4), (2, 100)])
def test_caf_fjthrput_answers_as_the_oracle(messages, actors, threads):
    params = {"messages": messages, "actors": actors, "threads": threads}
    assert_oracle("caf_savina_fjthrput", params, _native.run("caf_savina_fjthrput", params))


# -- 4. Fork-Join creation ------------------------------------------------------------------------

def test_fjcreate_oracle_worked_by_hand():
    # One worker: its job and its report; the sum is the one result.
    one = oracle("savina_fjcreate", {"workers": 1})
    assert one.answer.startswith("workers_done=1 repeated=0 bad_results=0 result_sum=")
    assert result_sum(one.answer) == pytest.approx(JOB, rel=1e-6)
    assert one.messages == 2
    # Savina's 40,000 workers: 80,000 messages, the sum 40,000 results.
    full = oracle("savina_fjcreate", {})
    assert full.answer.startswith("workers_done=40000 repeated=0 bad_results=0 ")
    assert full.messages == 80_000
    assert result_sum(full.answer) == pytest.approx(40_000 * JOB, rel=1e-6)


@pytest.mark.parametrize("workers", [1, 2, 999])
@pytest.mark.parametrize("dispatcher", ["one_thread", "thread_pool", "active_group"])
def test_fjcreate_answers_as_its_oracle(workers, dispatcher):
    params = {"workers": workers, "dispatcher": dispatcher}
    assert_oracle("savina_fjcreate", params, _native.run("savina_fjcreate", params))


def test_fjcreate_defaults_are_savinas():
    assert _native.validate("savina_fjcreate", {}, scoped=False)["workers"] == 40_000


@pytest.mark.parametrize("name", ["savina_fjcreate", "caf_savina_fjcreate"])
@pytest.mark.parametrize("values", [{"workers": 0}, {"workers": 10**9}])
def test_fjcreate_refuses_bad_parameters(name, values):
    if name not in {k["name"] for k in _native.kernels()}:
        pytest.skip("no CAF kernels in this build")
    assert refused(name, values).param == "workers"


def test_fjcreate_refuses_a_thread_per_worker_beyond_the_limit():
    # Savina's 40,000 workers, a thread each: refused, naming the parameters that ask for it.
    error = refused("savina_fjcreate", {"dispatcher": "active_obj"})
    assert error.param == "dispatcher" and "workers=40000" in str(error)


@needs_caf("caf_savina_fjcreate")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("workers", [1, 50, 2000])
def test_caf_fjcreate_answers_as_the_oracle(workers, threads):
    params = {"workers": workers, "threads": threads}
    assert_oracle("caf_savina_fjcreate", params, _native.run("caf_savina_fjcreate", params))


# -- 7. Big ---------------------------------------------------------------------------------------

def test_big_oracle_worked_by_hand():
    # Three actors, two pings each, seed 0; actor i's generator starts at i, the target is
    # value % 3. Actor 0: 0*1309 + 13849 = 13849 -> 1; 13849*1309 + 13849 = 18142190, & 65535 =
    # 54254 -> 2. Actor 1: 1309 + 13849 = 15158 -> 2; 15158*1309 + 13849 = 19855671, & 65535 =
    # 63799 -> 1. Actor 2: 2618 + 13849 = 16467 -> 0; 16467*1309 + 13849 = 21569152, & 65535 =
    # 7808 -> 2. Pinged: actor 0 once, actor 1 twice, actor 2 three times. Messages: 3 starts,
    # 6 pings, 6 pongs, 3 reports.
    three = oracle("savina_big", {"actors": 3, "pings": 2, "seed": 0})
    assert three.answer == ("finished=3 repeated=0 pings=6 pongs=6 wrong_pongs=0 uneven_actors=0 "
                            "most_pinged=3")
    assert three.messages == 18
    # No pings: each actor's start is answered by its report.
    none = oracle("savina_big", {"actors": 5, "pings": 0})
    assert none.answer.endswith("pings=0 pongs=0 wrong_pongs=0 uneven_actors=0 most_pinged=0")
    assert none.messages == 10
    # One actor pings only itself.
    alone = oracle("savina_big", {"actors": 1, "pings": 9})
    assert alone.answer.endswith("pings=9 pongs=9 wrong_pongs=0 uneven_actors=0 most_pinged=9")
    assert alone.messages == 20


def test_big_generator_modulo_a_power_of_two_spreads_evenly():
    # The 16-bit generator's low bits cycle with period 2^k: with 8 actors each is pinged
    # exactly `pings` times, whatever the seed.
    for seed in (0, 5):
        assert oracle("savina_big", {"actors": 8, "pings": 40, "seed": seed}).answer.endswith("most_pinged=40")


@pytest.mark.parametrize("actors, pings, seed", [(2, 2, 0), (1, 50, 0), (7, 100, 3), (13, 0, 0), (120, 20, 11)])
@pytest.mark.parametrize("dispatcher", ["one_thread", "thread_pool", "adv_thread_pool"])
def test_big_answers_as_its_oracle(actors, pings, seed, dispatcher):
    params = {"actors": actors, "pings": pings, "seed": seed, "dispatcher": dispatcher}
    assert_oracle("savina_big", params, _native.run("savina_big", params))


def test_big_seed_changes_who_is_pinged_and_is_reproducible():
    answers = {seed: _native.run("savina_big", {"actors": 11, "pings": 200, "seed": seed})["answer"]
               for seed in (0, 1, 2)}
    assert answers[0] == _native.run("savina_big", {"actors": 11, "pings": 200, "seed": 0})["answer"]
    assert len({answer.rsplit("most_pinged=", 1)[1] for answer in answers.values()}) > 1


def test_big_defaults_are_savinas():
    resolved = _native.validate("savina_big", {}, scoped=False)
    assert (resolved["actors"], resolved["pings"], resolved["seed"]) == (120, 20_000, 0)


@pytest.mark.parametrize("name", ["savina_big", "caf_savina_big"])
@pytest.mark.parametrize("values, param", [
    ({"actors": 0}, "actors"),
    ({"pings": -1}, "pings"),
    ({"seed": -1}, "seed"),
])
def test_big_refuses_bad_parameters(name, values, param):
    if name not in {k["name"] for k in _native.kernels()}:
        pytest.skip("no CAF kernels in this build")
    assert refused(name, values).param == param


def test_big_refuses_a_thread_per_actor_beyond_the_limit():
    error = refused("savina_big", {"actors": 50_000, "pings": 1, "dispatcher": "active_obj"})
    assert error.param == "dispatcher" and "actors=50000" in str(error)


@needs_caf("caf_savina_big")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("actors, pings, seed", [(2, 2, 0), (1, 30, 0), (9, 150, 4), (120, 20, 0)])
def test_caf_big_answers_as_the_oracle(actors, pings, seed, threads):
    params = {"actors": actors, "pings": pings, "seed": seed, "threads": threads}
    assert_oracle("caf_savina_big", params, _native.run("caf_savina_big", params))


# -- every kernel here ----------------------------------------------------------------------------

SMALL = {"savina_fjthrput": {"messages": 20, "actors": 3}, "savina_fjcreate": {"workers": 10},
         "savina_big": {"actors": 5, "pings": 10}}


@pytest.mark.parametrize("name", sorted(SMALL) + sorted(f"caf_{name}" for name in SMALL))
def test_a_wrong_answer_raises_and_returns_no_timing(name):
    if name not in {k["name"] for k in _native.kernels()}:
        pytest.skip("no CAF kernels in this build")
    with pytest.raises(_native.VerificationError, match="wrong answer"):
        _native.run(name, SMALL[name.removeprefix("caf_")], "wrong_answer")
