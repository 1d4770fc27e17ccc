"""Savina's benchmarks 3 (Fork-Join throughput), 4 (Fork-Join creation) and 7 (Big), as the
savina_fjthrput, savina_fjcreate and savina_big kernels and their CAF versions: hand-worked
answers, the oracles agreeing with them, bad parameters refused, the CAF versions answering as
the oracles."""

from __future__ import annotations

import oracles
import pytest

from labctl import _native, kernels, native

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
