"""Savina's simulations of group E (savina_logmap, savina_cigsmok, savina_barber): their oracles
on cases worked out by hand, the kernels' answers at small sizes on a few dispatchers, bad
parameters refused with a message naming the parameter, and the kernels' checks catching a
wrong answer."""

from __future__ import annotations

import math

import oracles
import pytest
from savina_support import bits, fnv, resolved

from labctl import _native

KERNELS = {k["name"] for k in _native.kernels()}
DISPATCHERS = [{"dispatcher": "one_thread"}, {"dispatcher": "thread_pool", "threads": 2},
               {"dispatcher": "active_obj"}]


# -- savina_logmap --------------------------------------------------------------------------------

def test_logmap_oracle_worked_by_hand():
    # terms=2, series=2, start_rate=3.5, increment=0.5:
    #   series 0: rate 3.5, start 0   -> 3.5*0*(1-0) = 0, then 0 again: terms 0.0, 0.0
    #   series 1: rate 4.0, start 0.5 -> 4*0.5*0.5 = 1.0, then 4*1*0 = 0.0: terms 1.0, 0.0
    #   last terms 0.0 and 0.0 sum to 0; messages 1 Start + 2 x (2 x 3 + GetTerm + report) = 17.
    series0 = fnv(bits(0.0), bits(0.0))
    series1 = fnv(bits(1.0), bits(0.0))
    got = oracles.savina_logmap(resolved("savina_logmap", {"terms": 2, "series": 2, "start_rate": 3.5,
                                                           "increment": 0.5}))
    assert got.answer == (f"series_reported=2 terms_computed=4 terms_hash={fnv(series0, series1):016x} "
                          "final_sum=0")
    assert got.messages == 17


def test_logmap_oracle_is_bit_for_bit():
    # One ulp less in the start rate changes the terms, so the hash: the answer holds every bit.
    # (Series 0 starts at term 0 and stays there: series 1 is the one that moves.)
    base = resolved("savina_logmap", {"terms": 50, "series": 2})
    nudged = dict(base, start_rate=math.nextafter(float(base["start_rate"]), 0.0))
    assert oracles.savina_logmap(base).answer != oracles.savina_logmap(nudged).answer


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_logmap_answers_as_its_oracle(dispatcher):
    params = {"terms": 300, "series": 4, **dispatcher}
    result = _native.run("savina_logmap", params)
    expected = oracles.savina_logmap(resolved("savina_logmap", params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert result["answer"] == _native.expect("savina_logmap", params)["answer"]


@pytest.mark.parametrize("params, name", [
    ({"terms": 0}, "terms"),
    ({"series": 0}, "series"),
    ({"start_rate": 4.5}, "start_rate"),
    ({"increment": -0.1}, "increment"),
    ({"series": 500, "increment": 0.01}, "increment"),   # start terms past 1
    ({"series": 10, "start_rate": 3.99}, "start_rate"),  # rates past 4
    ({"series": 20_000, "dispatcher": "active_obj"}, "series"),
])
def test_logmap_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_logmap", params)


def test_logmap_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_logmap", {"terms": 10, "series": 2}, fault="wrong_answer")


# -- savina_cigsmok -------------------------------------------------------------------------------

def lcg_work(work: int) -> int:
    x = work
    for _ in range(work):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
    return x


def test_cigsmok_oracle_worked_by_hand():
    # rounds=2, smokers=3, seed=1; Savina's PseudoRandom value = (value*1309 + 13849) & 65535:
    #   1 -> 15158: smoker 15158 % 3 = 2;  15158 -> 63799: work 63799 % 1000 + 10 = 809
    #   63799 -> 33876: smoker 33876 % 3 = 0;  33876 -> 55197: work 197 + 10 = 207
    #   smokes [1, 0, 1], work units 1016; messages 1 Start + 2 x 2 rounds + 2 x 3 smokers = 11.
    got = oracles.savina_cigsmok(resolved("savina_cigsmok", {"rounds": 2, "smokers": 3, "seed": 1}))
    assert got.answer == (f"smokers_reported=3 smokes=2 uneven_smokers=0 smokes_hash={fnv(1, 0, 1):016x} "
                          f"work_units=1016 work_sum={(lcg_work(809) + lcg_work(207)) % 2**64} start=1 "
                          "start_smoking=2 started_smoking=2 exit=3 tally=3")
    assert got.messages == 11


def test_cigsmok_seed_zero_is_savinas_rounds_times_smokers():
    zero = oracles.savina_cigsmok(resolved("savina_cigsmok", {"rounds": 30, "smokers": 7, "seed": 0}))
    savina = oracles.savina_cigsmok(resolved("savina_cigsmok", {"rounds": 30, "smokers": 7, "seed": 210}))
    other = oracles.savina_cigsmok(resolved("savina_cigsmok", {"rounds": 30, "smokers": 7, "seed": 211}))
    assert zero == savina != other


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
@pytest.mark.parametrize("seed", [0, 12345])
def test_cigsmok_answers_as_its_oracle(dispatcher, seed):
    params = {"rounds": 200, "smokers": 9, "seed": seed, **dispatcher}
    result = _native.run("savina_cigsmok", params)
    expected = oracles.savina_cigsmok(resolved("savina_cigsmok", params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert result["answer"] == _native.expect("savina_cigsmok", params)["answer"]


@pytest.mark.parametrize("params, name", [
    ({"rounds": 0}, "rounds"),
    ({"smokers": 0}, "smokers"),
    ({"seed": -1}, "seed"),
    ({"smokers": 20_000, "dispatcher": "active_obj"}, "smokers"),
])
def test_cigsmok_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_cigsmok", params)


def test_cigsmok_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_cigsmok", {"rounds": 10, "smokers": 2}, fault="wrong_answer")


# -- savina_barber --------------------------------------------------------------------------------

def test_barber_oracle_worked_by_hand():
    # haircuts=1, seats=1, production_rate=1, haircut_rate=2, seed=1: both PRNGs step 1 -> 15158;
    # the factory works 15158 % 1 + 10 = 10 units, the barber 15158 % 2 + 10 = 10. One customer
    # finds the room empty and the barber asleep: Start, Enter (room), Next (the room to itself),
    # Enter (barber), StartCut, DoneCut, Next (barber to room), Done (factory), Exit x 2 = 10.
    got = oracles.savina_barber(resolved("savina_barber", {"haircuts": 1, "seats": 1, "production_rate": 1,
                                                           "haircut_rate": 2, "seed": 1}))
    assert got.answer == ("customers=1 haircuts=1 served=1 served_wrong=0 repeated=0 accounting_errors=0 "
                          f"factory_work_units=10 factory_work_sum={lcg_work(10)} "
                          f"barber_work_units=10 barber_work_sum={lcg_work(10)}")
    assert (got.messages, got.metrics) == (10, {"attempts": 1, "turned_away": 0})
    # Two customers turned away three times in all: 3 + 7*2 + 3*3 messages, 2 + 3 attempts.
    two = oracles.savina_barber(resolved("savina_barber", {"haircuts": 2, "seats": 1}), turned_away=3)
    assert (two.messages, two.metrics) == (26, {"attempts": 5, "turned_away": 3})


@pytest.mark.parametrize("dispatcher", DISPATCHERS, ids=lambda d: d["dispatcher"])
def test_barber_with_customers_turned_away_answers_as_its_oracle(dispatcher):
    # Three seats and a slow barber: customers are turned away and come back, as many times as
    # the schedule makes them; the oracle takes that count from the run and holds the rest to it.
    params = {"haircuts": 60, "seats": 3, "production_rate": 10, "haircut_rate": 300, **dispatcher}
    result = _native.run("savina_barber", params)
    turned_away = int(result["metrics"]["turned_away"])
    expected = oracles.savina_barber(resolved("savina_barber", params), turned_away)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert result["metrics"]["attempts"] == 60 + turned_away
    assert result["metrics"]["barber_wakes"] >= 1


@pytest.mark.parametrize("seats", [3, 20])
def test_barber_states_its_answer_and_the_fewest_messages_with_no_most(seats):
    # What a peer is held to: the oracle's answer and its count with nobody turned away, the
    # fewest; no most, since a schedule may turn a customer away without end, but where the seats
    # hold every customer, when nobody is, and the count is exact.
    params = resolved("savina_barber", {"haircuts": 20, "seats": seats, "haircut_rate": 30})
    fewest = oracles.savina_barber(params, 0)
    most = {} if seats >= 20 else {"messages_most": None}
    assert _native.expect("savina_barber", params) == {"answer": fewest.answer, "messages": fewest.messages,
                                                       **most}


def test_barber_seed_sets_the_work():
    a = oracles.savina_barber(resolved("savina_barber", {"haircuts": 20, "seats": 20}))
    b = oracles.savina_barber(resolved("savina_barber", {"haircuts": 20, "seats": 20, "seed": 7}))
    assert a.answer != b.answer and a.messages == b.messages
    result = _native.run("savina_barber", {"haircuts": 20, "seats": 20, "seed": 7})
    assert result["answer"] == b.answer


@pytest.mark.parametrize("params, name", [
    ({"haircuts": 0}, "haircuts"),
    ({"seats": 0}, "seats"),
    ({"production_rate": 0}, "production_rate"),
    ({"haircut_rate": 70_000}, "haircut_rate"),
    ({"seed": -5}, "seed"),
    ({"haircuts": 20_000, "dispatcher": "active_obj"}, "haircuts"),
])
def test_barber_refuses_bad_parameters(params, name):
    with pytest.raises(ValueError, match=f"'{name}'|{name}="):
        _native.run("savina_barber", params)


def test_barber_wrong_answer_is_caught():
    with pytest.raises(Exception, match="(?i)answer|expected"):
        _native.run("savina_barber", {"haircuts": 10, "seats": 10}, fault="wrong_answer")


# -- on CAF: caf_savina_logmap, caf_savina_cigsmok, caf_savina_barber -----------------------------

def needs_caf(name: str):
    return pytest.mark.skipif(name not in KERNELS, reason="labctl._native was built without CAF (no caf_ kernels)")


# Each once, threads 2 and 1 in turn; logmap's worker floods skip while it awaits each reply, and
# its hash holds every term to the order they were asked for.
@pytest.mark.parametrize("name, params", [
    pytest.param("caf_savina_logmap", {"terms": 300, "series": 3, "start_rate": 3.9, "increment": 0.01,
                                       "threads": 2}, marks=needs_caf("caf_savina_logmap")),
    pytest.param("caf_savina_cigsmok", {"rounds": 500, "smokers": 7, "seed": 3, "threads": 1},
                 marks=needs_caf("caf_savina_cigsmok")),
])
def test_caf_version_answers_as_the_oracle(name, params):
    result = _native.run(name, params)
    expected = oracles.oracle(name, resolved(name, params))
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)


@needs_caf("caf_savina_barber")
@pytest.mark.parametrize("threads", [2, 1])
def test_caf_barber_with_customers_turned_away_answers_as_its_oracle(threads):
    # Three seats and a slow barber, as ours above: CAF's schedule decides how many customers are
    # turned away; the oracle takes that count from the run and holds the rest to it.
    params = {"haircuts": 60, "seats": 3, "production_rate": 10, "haircut_rate": 300, "threads": threads}
    result = _native.run("caf_savina_barber", params)
    turned_away = int(result["metrics"]["turned_away"])
    expected = oracles.savina_barber(resolved("caf_savina_barber", params), turned_away)
    assert (result["answer"], result["messages_processed"]) == (expected.answer, expected.messages)
    assert result["metrics"]["attempts"] == 60 + turned_away
    assert result["metrics"]["barber_wakes"] >= 1


@needs_caf("caf_savina_logmap")
@pytest.mark.parametrize("values, param", [
    ({"series": 11, "increment": 0.2}, "increment"),  # series 10 would start at term 2
    ({"series": 2, "start_rate": 3.9, "increment": 0.2}, "start_rate"),  # series 1's rate 4.1
])
def test_caf_logmap_refuses_terms_and_rates_off_the_map(values, param):
    with pytest.raises(_native.ParamError, match=param):
        _native.run("caf_savina_logmap", values)
