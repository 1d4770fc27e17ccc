"""Parameter resolution against the native schema: defaults, types, ranges, combinations that
make no sense, each refused with a message naming the parameter and what is allowed."""

from __future__ import annotations

import os

import pytest

from labctl.catalogue import kernels
from labctl.catalogue.kernels import ParamError


def refused(kernel: str, **values) -> ParamError:
    with pytest.raises(ParamError) as caught:
        kernels.resolve(kernel, values)
    return caught.value


def test_defaults_are_filled_in_and_inapplicable_parameters_are_none():
    params = kernels.resolve("skynet", {})
    assert params["leaves"] == 1_000_000
    assert params["branching"] == 10
    assert params["deregister"] is False
    assert params["dispatcher"] == "one_thread"
    assert params["threads"] is None and params["fifo"] is None
    pool = kernels.resolve("skynet", {"dispatcher": "thread_pool"})
    assert pool["threads"] == 2 and pool["fifo"] == "cooperation" and pool["max_demands_at_once"] == 4


def test_a_dispatcher_of_ours_has_a_budget_of_its_own_and_a_given_one_wins():
    # thread_pool and adv_thread_pool keep SObjectizer's 4; work_stealing's default is its own.
    for dispatcher, budget in (("thread_pool", 4), ("adv_thread_pool", 4), ("work_stealing", 16)):
        assert kernels.resolve("skynet", {"dispatcher": dispatcher})["max_demands_at_once"] == budget
    given = kernels.resolve("skynet", {"dispatcher": "work_stealing", "max_demands_at_once": 4})
    assert given["max_demands_at_once"] == 4
    param = kernels.get("skynet").param("max_demands_at_once")
    assert param.default == 4 and param.default_for == (("work_stealing", 16),)
    assert param.default_text() == "4 (work_stealing: 16)"


def test_strings_from_a_command_line_are_typed():
    params = kernels.resolve("skynet", {"leaves": "1_000", "deregister": "true", "spin_us": "2.5"})
    assert params["leaves"] == 1000 and params["deregister"] is True and params["spin_us"] == 2.5
    assert kernels.resolve("skynet", {"leaves": "1e3"})["leaves"] == 1000


def test_an_unknown_parameter_is_refused_with_the_list_of_parameters():
    error = refused("skynet", leafs=10)
    assert error.param == "leafs"
    assert "unknown parameter 'leafs'" in str(error)
    assert "leaves, branching, deregister" in str(error)


def test_an_unknown_kernel_is_refused_with_the_list_of_kernels():
    with pytest.raises(ParamError, match=r"unknown kernel; did you mean skynet\? \(kernels: actor_creation, chat, counting_actor, fan, floor_actor_loop, floor_cache_line, floor_futex_wake, mailbox_n_to_1, mixed"):
        kernels.get("skynot")


@pytest.mark.parametrize(
    "kernel, values, param, words",
    [
        ("skynet", {"leaves": "many"}, "leaves", "must be integer from 1 to 100000000, got 'many'"),
        ("skynet", {"leaves": 0}, "leaves", "must be integer from 1 to 100000000, got 0"),
        ("skynet", {"leaves": 2.5}, "leaves", "must be integer"),
        ("skynet", {"deregister": "maybe"}, "deregister", "must be true or false"),
        ("skynet", {"dispatcher": "fibers"}, "dispatcher",
         "must be one of: one_thread, active_group, thread_pool, work_stealing, adv_thread_pool, active_obj"),
        ("skynet", {"dispatcher": "thread_pool", "fifo": "lifo"}, "fifo",
         "must be one of: cooperation, individual"),
        ("skynet", {"spin_us": -1}, "spin_us", "must be number from 0 to 1000000"),
        ("ping_pong", {"payload_bytes": 100}, "payload_bytes", "one of: 0, 16, 64, 256, 1024, 4096"),
        ("ping_pong", {"messages": 3}, "messages", "must be even"),
        ("ping_pong", {"threads": 2}, "threads",
         "does not apply to dispatcher 'one_thread' (allowed with: active_group, thread_pool, work_stealing, adv_thread_pool)"),
        ("skynet", {"fifo": "individual"}, "fifo",
         "does not apply to dispatcher 'one_thread' (allowed with: thread_pool, work_stealing)"),
        ("skynet", {"dispatcher": "active_obj", "max_demands_at_once": 4}, "max_demands_at_once",
         "does not apply to dispatcher 'active_obj'"),
        ("skynet", {"dispatcher": "active_obj"}, "dispatcher", "starts a thread per agent"),
        ("skynet", {"pin": "fast"}, "pin", "'fast' is not a core list"),
        ("one_to_many", {"work": "spin"}, "work", "must be one of: noop, sleep, cpu"),
        ("one_to_many", {"work": "sleep"}, "messages_per_worker",
         "workers*messages_per_worker*sleep_ms must be at most 600000 (ten minutes"),
        ("one_to_many", {"dispatcher": "active_obj", "workers": 20_000}, "dispatcher",
         "workers=20000 needs 20000 threads"),
        ("thread_ring", {"dispatcher": "active_obj", "actors": 10_001}, "dispatcher", "actors=10001"),
        ("parallel_thread_ring", {"tokens": 503, "hops": 1000}, "hops",
         "too small to split over 503 tokens"),
        ("producer_consumer", {"producers": 5, "messages": 4}, "messages", "must be at least 'producers'"),
        ("self_send", {"start_batch": 0}, "start_batch", "must be integer from 1"),
        ("counting_actor", {"messages": 0}, "messages", "must be integer from 1"),
        ("fan", {"fan_out": 0}, "fan_out", "must be integer from 1"),
        ("ring_laps", {"actors": 1}, "actors", "must be integer from 2"),
    ],
)
def test_bad_values_are_refused_naming_the_parameter_and_what_is_allowed(kernel, values, param, words):
    error = refused(kernel, **values)
    assert error.param == param
    assert str(error).startswith(f"{kernel}: ")
    assert words in str(error)


def test_a_core_outside_the_inherited_cpu_set_is_refused():
    cores = len(os.sched_getaffinity(0))
    error = refused("ping_pong", pin=f"0,{cores}")
    assert f"core {cores} is outside the allowed set" in str(error)
    assert f"this process may use {cores} CPU" in str(error)
    assert "allowed: none, compact, spread" in str(error)


def test_python_values_of_other_types_are_refused():
    error = refused("skynet", leaves=[1, 2])
    assert "has a value of type list" in str(error)


@pytest.mark.parametrize("pin", ["compact", "spread"])
def test_topology_pins_resolve_after_numpy_is_loaded(pin):
    """numpy's bundled libraries loaded first once made the topology read (then an ifstream)
    crash on a 16-core machine with GCC 13; the read is plain stdio now."""
    import subprocess
    import sys

    script = ("import numpy, pandas\nfrom labctl import _native\n"
              f"print(_native.validate('ping_pong', {{'pin': '{pin}'}})['pin'])")
    result = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == pin
