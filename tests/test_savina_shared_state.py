"""Group D's Savina kernels, where agents share state through one agent: savina_concdict (8),
savina_concsll (9) and savina_banking (15). Hand-worked oracle cases, the schedule-independent
answers on threaded dispatchers, and parameters they refuse."""

from __future__ import annotations

import oracles
import pytest

from labctl import _native
from labctl.catalogue import kernels

THREADED = {"dispatcher": "thread_pool", "threads": 2}


def run(kernel: str, params: dict) -> dict:
    return _native.run(kernel, params)


def resolved_oracle(kernel: str, params: dict) -> oracles.Oracle:
    return oracles.oracle(kernel, _native.validate(kernel, params, scoped=False))


# -- savina_concdict -----------------------------------------------------------------------------

# By hand: 1 worker, 5 requests, no writes, one key. Every request is a read of key 0 (any number
# mod 1), the dictionary stays {0: 0}, whose digest is mix64(0 << 32 | 0) = mix64(0) = 0 (each
# step of SplitMix64's finalizer maps 0 to 0). Messages: 1 DoWork + 5 reads + 5 replies + 1
# EndWork + 1 End = 13 = 2 * 1 * (5 + 1) + 1.
# With messages_per_worker = 0 and 3 workers: no request; 3 DoWork, 3 EndWork, 1 End = 7 messages;
# the dictionary {k: k} for k < 2 has digest mix64(0) + mix64(1 << 32 | 1).
# With write_percent = 100 and 2 workers, 4 requests each over 3 keys: 8 writes, 0 reads, 8
# replies, size 3; messages 2 * 2 * 5 + 1 = 21.
def test_concdict_oracle_hand_worked_cases():
    base = {"write_percent": 10, "seed": 1}
    reads_only = oracles.savina_concdict({**base, "workers": 1, "messages_per_worker": 5, "write_percent": 0, "keys": 1})
    assert reads_only == oracles.Oracle("reads=5 writes=0 replies=5 size=1 digest=0", 13)
    idle = oracles.savina_concdict({**base, "workers": 3, "messages_per_worker": 0, "keys": 2})
    assert idle.answer == f"reads=0 writes=0 replies=0 size=2 digest={oracles._d_mix64(0) + oracles._d_mix64(1 << 32 | 1)}"
    assert idle.messages == 7
    writes = oracles.savina_concdict({**base, "workers": 2, "messages_per_worker": 4, "write_percent": 100, "keys": 3})
    assert writes.answer.startswith("reads=0 writes=8 replies=8 size=3 digest=")
    assert writes.messages == 21


@pytest.mark.parametrize("seed", [0, 7, 123456])
@pytest.mark.parametrize("write_percent", [0, 10, 50, 100])
def test_concdict_final_contents_do_not_depend_on_the_schedule(seed, write_percent):
    # Many writers on few keys, on two threads: worker i writes only keys k % workers == i.
    params = {"workers": 6, "messages_per_worker": 300, "write_percent": write_percent, "keys": 40,
              "seed": seed, **THREADED}
    result = run("savina_concdict", params)
    expected = resolved_oracle("savina_concdict", params)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


def test_concdict_seeds_give_different_contents():
    answers = {run("savina_concdict", {"workers": 3, "messages_per_worker": 200, "keys": 50, "seed": s})["answer"]
               for s in range(3)}
    assert len(answers) == 3


def test_concdict_states_its_expectation_as_the_oracle():
    params = {"workers": 5, "messages_per_worker": 100, "keys": 64, "seed": 3}
    stated = _native.expect("savina_concdict", params)
    expected = resolved_oracle("savina_concdict", params)
    assert (stated["answer"], stated["messages"]) == (expected.answer, expected.messages)


def test_concdict_a_wrong_answer_raises():
    with pytest.raises(_native.VerificationError):
        _native.run("savina_concdict", {"workers": 2, "messages_per_worker": 10, "keys": 10}, "wrong_answer")


@pytest.mark.parametrize("values, param", [
    ({"workers": 0}, "workers"),
    ({"write_percent": 101}, "write_percent"),
    ({"keys": 0}, "keys"),
    ({"workers": 10, "keys": 9}, "keys"),
    ({"seed": -1}, "seed"),
    ({"workers": 10_000, "dispatcher": "active_obj"}, "dispatcher"),
])
def test_concdict_refuses_bad_parameters(values, param):
    with pytest.raises(kernels.ParamError, match=param) as caught:
        kernels.resolve("savina_concdict", values)
    assert caught.value.param == param


# -- savina_concsll ------------------------------------------------------------------------------

# By hand: with write_percent = size_percent = 0 every request is a membership test (a draw
# below 100 is never below 0): 3 workers x 4 requests = 12 tests, 12 replies, an empty list
# (length 0, digest 0). Messages: 3 DoWork + 12 requests + 12 replies + 3 EndWork + 1 End = 31.
# With size_percent = 100 every request is a size query: 2 x 5 = 10 sizes, messages 2*2*6+1 = 25.
# With write_percent = 100, 1 worker x 3 requests: 3 inserts, a list of 3.
def test_concsll_oracle_hand_worked_cases():
    base = {"seed": 1}
    tests = oracles.savina_concsll({**base, "workers": 3, "messages_per_worker": 4, "write_percent": 0, "size_percent": 0})
    assert tests == oracles.Oracle("contains=12 writes=0 sizes=0 replies=12 length=0 unsorted=0 digest=0", 31)
    sizes = oracles.savina_concsll({**base, "workers": 2, "messages_per_worker": 5, "write_percent": 0, "size_percent": 100})
    assert sizes == oracles.Oracle("contains=0 writes=0 sizes=10 replies=10 length=0 unsorted=0 digest=0", 25)
    inserts = oracles.savina_concsll({**base, "workers": 1, "messages_per_worker": 3, "write_percent": 100, "size_percent": 0})
    assert inserts.answer.startswith("contains=0 writes=3 sizes=0 replies=3 length=3 unsorted=0 digest=")
    assert inserts.messages == 2 * 1 * 4 + 1


@pytest.mark.parametrize("seed", [0, 9])
@pytest.mark.parametrize("write_percent, size_percent", [(10, 1), (60, 20), (100, 0)])
def test_concsll_final_list_does_not_depend_on_the_schedule(seed, write_percent, size_percent):
    params = {"workers": 6, "messages_per_worker": 150, "write_percent": write_percent,
              "size_percent": size_percent, "seed": seed, **THREADED}
    result = run("savina_concsll", params)
    expected = resolved_oracle("savina_concsll", params)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


def test_concsll_states_its_expectation_as_the_oracle():
    params = {"workers": 5, "messages_per_worker": 100, "write_percent": 30, "seed": 4}
    stated = _native.expect("savina_concsll", params)
    expected = resolved_oracle("savina_concsll", params)
    assert (stated["answer"], stated["messages"]) == (expected.answer, expected.messages)


def test_concsll_a_wrong_answer_raises():
    with pytest.raises(_native.VerificationError):
        _native.run("savina_concsll", {"workers": 2, "messages_per_worker": 10}, "wrong_answer")


@pytest.mark.parametrize("values, param", [
    ({"workers": 0}, "workers"),
    ({"write_percent": 101}, "write_percent"),
    ({"size_percent": -1}, "size_percent"),
    ({"write_percent": 90, "size_percent": 11}, "write_percent"),
    ({"messages_per_worker": -1}, "messages_per_worker"),
    ({"workers": 10_000, "dispatcher": "active_obj"}, "dispatcher"),
])
def test_concsll_refuses_bad_parameters(values, param):
    with pytest.raises(kernels.ParamError, match=param) as caught:
        kernels.resolve("savina_concsll", values)
    assert caught.value.param == param


# -- savina_banking ------------------------------------------------------------------------------

# By hand: no transactions. The teller stops the 10 accounts at once; every balance stays at
# 10**12 cents, the total 10 * 10**12; messages: 1 start + 10 stops = 11. One transaction among
# 10 accounts moves an amount between two of them, the total unchanged; messages 1 + 4 + 10 = 15.
def test_banking_oracle_hand_worked_cases():
    opening = 10**12
    idle = oracles.savina_banking({"accounts": 10, "transactions": 0, "seed": 5})
    digest = sum(oracles._d_mix64(opening + oracles._d_mix64(i)) for i in range(10)) % 2**64
    assert idle == oracles.Oracle(f"completed=0 repeated=0 credits=0 debits=0 stopped=10 total={10 * opening} "
                                  f"digest={digest}", 11)
    one = oracles.savina_banking({"accounts": 10, "transactions": 1, "seed": 5})
    assert one.answer.startswith(f"completed=1 repeated=0 credits=1 debits=1 stopped=10 total={10 * opening} ")
    assert one.messages == 15


@pytest.mark.parametrize("seed", [0, 123456])
@pytest.mark.parametrize("accounts, transactions", [(10, 2000), (40, 1000), (200, 3000)])
def test_banking_balances_do_not_depend_on_the_schedule(seed, accounts, transactions):
    # Few accounts and many transactions at once: long waits, deep stashes, on two threads.
    params = {"accounts": accounts, "transactions": transactions, "seed": seed, **THREADED}
    result = run("savina_banking", params)
    expected = resolved_oracle("savina_banking", params)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


def test_banking_without_transactions_stops_every_account():
    result = run("savina_banking", {"accounts": 12, "transactions": 0})
    assert " stopped=12 " in result["answer"] and result["messages_processed"] == 13


def test_banking_states_its_expectation_as_the_oracle():
    params = {"accounts": 30, "transactions": 500, "seed": 8}
    stated = _native.expect("savina_banking", params)
    expected = resolved_oracle("savina_banking", params)
    assert (stated["answer"], stated["messages"]) == (expected.answer, expected.messages)


def test_banking_a_wrong_answer_raises():
    with pytest.raises(_native.VerificationError):
        _native.run("savina_banking", {"accounts": 10, "transactions": 20}, "wrong_answer")


@pytest.mark.parametrize("values, param", [
    ({"accounts": 9}, "accounts"),
    ({"transactions": -1}, "transactions"),
    ({"seed": 2**32}, "seed"),
    ({"accounts": 10_000, "dispatcher": "active_obj"}, "dispatcher"),
])
def test_banking_refuses_bad_parameters(values, param):
    with pytest.raises(kernels.ParamError, match=param) as caught:
        kernels.resolve("savina_banking", values)
    assert caught.value.param == param


# -- on CAF: caf_savina_concdict, caf_savina_concsll, caf_savina_banking ---------------------------

CAF_KERNELS = {k["name"] for k in _native.kernels() if k["runtime"] == "caf"}


def needs_caf(name: str):
    return pytest.mark.skipif(name not in CAF_KERNELS,
                              reason="labctl._native was built without CAF (no caf_ kernels)")


# Each once, threads 1 and 2 in turn; banking's few accounts under many transactions keep an
# account's skipped messages many while it awaits a reply.
@pytest.mark.parametrize("name, params", [
    pytest.param("caf_savina_concdict", {"workers": 5, "messages_per_worker": 300, "write_percent": 50,
                                         "keys": 50, "threads": 1}, marks=needs_caf("caf_savina_concdict")),
    pytest.param("caf_savina_concsll", {"workers": 4, "messages_per_worker": 150, "write_percent": 60,
                                        "size_percent": 20, "threads": 2}, marks=needs_caf("caf_savina_concsll")),
    pytest.param("caf_savina_banking", {"accounts": 10, "transactions": 2000, "seed": 7, "threads": 1},
                 marks=needs_caf("caf_savina_banking")),
])
def test_caf_version_answers_as_the_oracle(name, params):
    result = run(name, params)
    expected = resolved_oracle(name, params)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


@pytest.mark.parametrize("name, values, param", [
    pytest.param("caf_savina_concdict", {"workers": 10, "keys": 9}, "keys", marks=needs_caf("caf_savina_concdict")),
    pytest.param("caf_savina_concsll", {"write_percent": 90, "size_percent": 11}, "write_percent",
                 marks=needs_caf("caf_savina_concsll")),
    pytest.param("caf_savina_banking", {"accounts": 9}, "accounts", marks=needs_caf("caf_savina_banking")),
])
def test_caf_version_refuses_bad_parameters(name, values, param):
    with pytest.raises(kernels.ParamError, match=param) as caught:
        kernels.resolve(name.removeprefix("caf_"), {"runtime": "caf", **values})
    assert caught.value.param == param
