"""Savina's coordination benchmarks (group C): savina_chameneos (6, with caf_savina_chameneos),
savina_bndbuffer (10) and savina_philosopher (11). Hand-worked oracle cases, each kernel's own
checks, the parameters it refuses, and the CAF version answering as the oracle."""

from __future__ import annotations

import oracles
import pytest

from labctl import _native, kernels

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
