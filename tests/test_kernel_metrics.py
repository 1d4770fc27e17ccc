"""Every kernel declares the figures it may record (Kernel::metrics in C++, Kernel.metrics here),
and records exactly those its parameters call for: each case below states, from the kernel's
description, which figures a run with its parameters holds, and is checked against a real run at
a tiny size. Across a kernel's cases every declared figure is recorded and every one declared
absent in some runs (absent_when) is left out at least once, so a kernel that records a figure
it does not declare, or declares one it never records, fails here; a run that records an
undeclared figure is refused by the run itself."""

from __future__ import annotations

import pytest

from labctl import _native
from labctl.catalogue import kernels, runtimes
from labctl.run import runner
from labctl.vocabulary.point import Point
from labctl.vocabulary.schema import Kernel

DECLARED = {k["name"]: {m["name"]: m["absent_when"] for m in k["metrics"]} for k in _native.kernels()}

ROUND_TRIP = {"round_trip_mean_ns", "round_trip_samples"}  # every run of a round-trip kernel
PERCENTILES = {"round_trip_p50_ns", "round_trip_p99_ns", "round_trip_max_ns", "clock_read_ns"}  # with probes
TREE = {"agents", "ns_per_agent"}
ONE_TO_MANY = {"workers": 3, "messages_per_worker": 50}
LIFETIME = {"clock": "lifetime"}
SERVICE = {"generator_behind", "generator_lag_p99_ns", "generator_lag_max_ns", "generator_late_share",
           "answered_per_s", "histogram_record_ns"}
SERVICE_LATENCY = {"latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns"}
# A generator that keeps to its schedule (a bound of a second is never missed), and one that
# cannot (a rate of one request a nanosecond, late past 1 us): the latencies are left out.
ON_TIME = {"rate": 2000, "late_bound_us": 1_000_000}
CHAT = {"computes", "posts", "deliveries", "departures", "invites", "nothings", "turn_p50_ns", "turn_p99_ns",
        "turn_max_ns"}

# (kernel, parameters, the figures a run with them records). The CAF kernels are listed where
# this build has them.
CASES = [
    ("skynet", {"leaves": 100}, TREE),
    ("skynet", {"leaves": 100, **LIFETIME}, TREE | {"phase_ns"}),
    ("actor_creation", {"depth": 4}, TREE),
    ("actor_creation", {"depth": 4, **LIFETIME}, TREE | {"phase_ns"}),
    ("ping_pong", {"messages": 200, "latency_samples": 10}, ROUND_TRIP | PERCENTILES),
    ("ping_pong", {"messages": 200, "latency_samples": 0}, ROUND_TRIP),
    ("service", {"requests": 20, **ON_TIME}, SERVICE | SERVICE_LATENCY | {"sent_per_s"}),
    ("service", {"requests": 1, **ON_TIME}, SERVICE | SERVICE_LATENCY),
    ("service", {"requests": 2000, "rate": 1e9, "late_bound_us": 1}, SERVICE | {"sent_per_s"}),
    ("caf_service", {"requests": 20, **ON_TIME}, SERVICE | SERVICE_LATENCY | {"sent_per_s"}),
    ("caf_service", {"requests": 1, **ON_TIME}, SERVICE | SERVICE_LATENCY),
    ("caf_service", {"requests": 2000, "rate": 1e9, "late_bound_us": 1}, SERVICE | {"sent_per_s"}),
    ("one_to_many", ONE_TO_MANY, {"send_ns", "deliveries"}),
    ("one_to_many", {**ONE_TO_MANY, "work": "sleep", "sleep_ms": 0}, {"send_ns", "deliveries"}),
    ("one_to_many", {**ONE_TO_MANY, "work": "cpu"}, {"send_ns", "deliveries", "series"}),
    ("one_to_many", {**ONE_TO_MANY, "work": "sph_neumann"}, {"send_ns", "deliveries", "series"}),
    # The study's series overflows past order ~155: no finite figure to report.
    ("one_to_many", {"workers": 1, "messages_per_worker": 300, "work": "sph_neumann"}, {"send_ns", "deliveries"}),
    ("one_to_many", {**ONE_TO_MANY, **LIFETIME}, {"send_ns", "deliveries", "phase_ns"}),
    ("self_send", {"workers": 2, "messages_per_worker": 100}, set()),
    ("self_send", {"workers": 2, "messages_per_worker": 100, **LIFETIME}, {"phase_ns"}),
    ("thread_ring", {"actors": 4, "hops": 100}, {"ns_per_hop"}),
    ("thread_ring", {"actors": 4, "hops": 0}, set()),
    ("parallel_thread_ring", {"actors": 4, "tokens": 3, "hops": 99}, {"ns_per_hop"}),
    ("parallel_thread_ring", {"actors": 4, "tokens": 3, "hops": 0}, set()),
    ("counting_actor", {"messages": 100}, set()),
    ("producer_consumer", {"producers": 2, "messages": 100, "burst": 10}, {"continue_messages"}),
    ("producer_consumer", {"producers": 2, "messages": 100, "producer": "thread"}, set()),
    ("producer_consumer", {"producers": 2, "messages": 100, "producer": "thread", "pin": "compact"},
     {"producer_cpus"}),
    ("fan", {"fan_out": 3, "iterations": 5}, {"iterations_done", "ns_per_iteration"}),
    ("fan", {"fan_out": 3, "iterations": 0, "duration_s": 0.001}, {"iterations_done", "ns_per_iteration"}),
    ("ring_laps", {"actors": 3, "laps": 5}, {"laps_done", "ns_per_hop"}),
    ("ring_laps", {"actors": 3, "laps": 0, "duration_s": 0.001}, {"laps_done", "ns_per_hop"}),
    ("mailbox_n_to_1", {"senders": 2, "messages_per_sender": 50, "sender": "agent"}, set()),
    ("mailbox_n_to_1", {"senders": 2, "messages_per_sender": 50}, set()),
    ("mailbox_n_to_1", {"senders": 2, "messages_per_sender": 50, "pin": "compact"}, {"sender_cpus"}),
    ("mailbox_n_to_1", {"senders": 2, "messages_per_sender": 50, **LIFETIME}, {"phase_ns"}),
    ("mixed", {"rings": 2, "ring_size": 3, "initial_token": 2, "repetitions": 1, "number": 9991},
     {"agents", "factorize_ns"}),
    ("mixed", {"rings": 2, "ring_size": 3, "initial_token": 2, "repetitions": 1, "number": 9991, **LIFETIME},
     {"agents", "factorize_ns", "phase_ns"}),
    ("floor_cache_line", {"round_trips": 100, "latency_samples": 10}, ROUND_TRIP | PERCENTILES | {"one_way_ns"}),
    ("floor_cache_line", {"round_trips": 100, "latency_samples": 0}, ROUND_TRIP | {"one_way_ns"}),
    ("floor_futex_wake", {"round_trips": 50, "latency_samples": 5},
     ROUND_TRIP | PERCENTILES | {"wake_up_ns", "sleeps_per_round_trip"}),
    ("floor_futex_wake", {"round_trips": 50, "latency_samples": 0}, ROUND_TRIP | {"wake_up_ns", "sleeps_per_round_trip"}),
    ("floor_actor_loop", {"messages": 100}, {"round_trip_mean_ns"}),
    ("caf_skynet", {"leaves": 100}, TREE),
    ("caf_skynet", {"leaves": 100, **LIFETIME}, TREE | {"phase_ns"}),
    ("caf_ping_pong", {"messages": 200, "latency_samples": 10}, ROUND_TRIP | PERCENTILES),
    ("caf_ping_pong", {"messages": 200, "latency_samples": 0}, ROUND_TRIP),
    ("caf_one_to_many", ONE_TO_MANY, {"send_ns", "deliveries"}),
    ("caf_one_to_many", {**ONE_TO_MANY, "work": "cpu", **LIFETIME}, {"send_ns", "deliveries", "series", "phase_ns"}),
    ("caf_thread_ring", {"actors": 4, "hops": 100}, {"ns_per_hop"}),
    ("caf_thread_ring", {"actors": 4, "hops": 0}, set()),
    ("caf_parallel_thread_ring", {"actors": 4, "tokens": 3, "hops": 99}, {"ns_per_hop"}),
    ("caf_parallel_thread_ring", {"actors": 4, "tokens": 3, "hops": 0}, set()),
    ("caf_counting_actor", {"messages": 100}, set()),
    # CAF's senders are never pinned: no sender_cpus.
    ("caf_mailbox_n_to_1", {"senders": 2, "messages_per_sender": 50}, set()),
    ("caf_mailbox_n_to_1", {"senders": 2, "messages_per_sender": 50, "sender": "agent", **LIFETIME}, {"phase_ns"}),
    ("savina_pingpong", {"pings": 100}, set()),
    ("caf_savina_pingpong", {"pings": 100}, set()),
    ("savina_count", {"increments": 100}, set()),
    ("caf_savina_count", {"increments": 100}, set()),
    ("savina_threadring", {"actors": 4, "pings": 100}, set()),
    ("caf_savina_threadring", {"actors": 4, "pings": 100}, set()),
    ("savina_fjthrput", {"messages": 20, "actors": 3}, set()),
    ("savina_fjcreate", {"workers": 10}, set()),
    ("caf_savina_fjthrput", {"messages": 20, "actors": 3}, set()),
    ("caf_savina_fjcreate", {"workers": 10}, set()),
    ("savina_big", {"actors": 5, "pings": 10}, set()),
    ("caf_savina_big", {"actors": 5, "pings": 10}, set()),
    ("savina_chameneos", {"creatures": 3, "meetings": 10}, set()),
    ("caf_savina_chameneos", {"creatures": 3, "meetings": 10}, set()),
    ("savina_bndbuffer", {"buffer_size": 3, "producers": 2, "consumers": 2, "items_per_producer": 5}, set()),
    ("caf_savina_bndbuffer", {"buffer_size": 3, "producers": 2, "consumers": 2, "items_per_producer": 5}, set()),
    ("savina_philosopher", {"philosophers": 3, "rounds": 10}, {"denials"}),
    ("caf_savina_philosopher", {"philosophers": 3, "rounds": 10}, {"denials"}),
    ("savina_concdict", {"workers": 3, "messages_per_worker": 50, "keys": 100}, set()),
    ("caf_savina_concdict", {"workers": 3, "messages_per_worker": 50, "keys": 100}, set()),
    ("savina_concsll", {"workers": 3, "messages_per_worker": 50}, set()),
    ("caf_savina_concsll", {"workers": 3, "messages_per_worker": 50}, set()),
    ("savina_banking", {"accounts": 10, "transactions": 50}, set()),
    ("caf_savina_banking", {"accounts": 10, "transactions": 50}, set()),
    ("savina_logmap", {"terms": 20, "series": 2}, set()),
    ("caf_savina_logmap", {"terms": 20, "series": 2}, set()),
    ("savina_cigsmok", {"rounds": 10, "smokers": 3}, set()),
    ("caf_savina_cigsmok", {"rounds": 10, "smokers": 3}, set()),
    ("savina_barber", {"haircuts": 5, "seats": 2}, {"attempts", "turned_away", "barber_wakes"}),
    ("caf_savina_barber", {"haircuts": 5, "seats": 2}, {"attempts", "turned_away", "barber_wakes"}),
    ("savina_radixsort", {"values": 50, "max_value": 2**10}, {"sequential_ns"}),
    ("savina_sieve", {"limit": 500, "primes_per_filter": 10}, {"sequential_ns"}),
    ("savina_bitonicsort", {"values": 8}, {"sequential_ns"}),
    ("savina_filterbank", {"simulations": 40, "columns": 8, "channels": 2}, {"sequential_ns"}),
    ("savina_trapezoid", {"pieces": 200, "workers": 3}, {"sequential_ns"}),
    ("savina_piprecision", {"precision": 30, "workers": 2}, {"sequential_ns", "terms_computed"}),
    ("savina_uct", {"nodes": 40, "binomial": 3, "avg_comp": 10, "stdev_comp": 2}, {"sequential_ns"}),
    ("savina_facloc", {"points": 300}, {"sequential_ns"}),
    ("savina_recmatmul", {"data_length": 16, "threshold": 16, "workers": 3}, {"sequential_ns"}),
    ("savina_apsp", {"nodes": 8, "block_size": 4}, {"sequential_ns"}),
    ("savina_sor", {"size": 4, "iterations": 4}, {"sequential_ns"}),
    ("savina_quicksort", {"values": 1000, "threshold": 100}, {"sequential_ns"}),
    ("savina_nqueenk", {"size": 6}, {"sequential_ns", "solutions"}),
    ("savina_fib", {"n": 8}, {"sequential_ns"}),
    ("savina_astar", {"grid_size": 6, "threshold": 10}, {"sequential_ns", "work_items", "nodes_expanded"}),
    # The chat: its turns and actions; the quality of service only from two iterations on.
    ("chat", {"clients": 8, "directories": 2, "turns": 2, "iterations": 1, "compute_repeats": 1}, CHAT),
    ("chat", {"clients": 8, "directories": 2, "turns": 2, "iterations": 2, "compute_repeats": 1},
     CHAT | {"turn_qos_ns"}),
    ("caf_chat", {"clients": 8, "directories": 2, "turns": 2, "iterations": 1, "compute_repeats": 1}, CHAT),
    ("caf_chat", {"clients": 8, "directories": 2, "turns": 2, "iterations": 2, "compute_repeats": 1},
     CHAT | {"turn_qos_ns"}),
]
BUILT = [case for case in CASES if case[0] in DECLARED]


def cases_of(kernel: str) -> list[set[str]]:
    return [expected for name, _, expected in CASES if name == kernel]


@pytest.mark.parametrize("kernel, params, expected", [
    pytest.param(*case, id=f"{case[0]}-" + "-".join(f"{k}={v}" for k, v in case[1].items())) for case in BUILT])
def test_a_run_records_the_figures_its_parameters_call_for(kernel, params, expected):
    recorded = set(_native.run(kernel, params)["metrics"])
    assert recorded == expected
    assert recorded <= set(DECLARED[kernel])


@pytest.mark.parametrize("kernel", sorted(DECLARED))
def test_the_cases_record_every_declared_figure_and_leave_out_each_one_declared_absent_at_times(kernel):
    runs = cases_of(kernel)
    assert runs, f"{kernel} has no case here"
    assert set().union(*runs) == set(DECLARED[kernel])
    for name, absent_when in DECLARED[kernel].items():
        left_out = [run for run in runs if name not in run]
        if absent_when:  # then some case exercises it
            assert left_out, f"{kernel}: no case leaves out {name} ({absent_when})"
        else:  # always there
            assert not left_out, f"{kernel}: {name} is declared always recorded"


@pytest.mark.parametrize("kernel, params", [("skynet", {"leaves": 10}), ("counting_actor", {"messages": 10}),
                                            ("floor_actor_loop", {"messages": 10}),
                                            ("caf_skynet", {"leaves": 10})])
def test_a_run_that_records_an_undeclared_figure_is_refused(kernel, params):
    if kernel not in DECLARED:
        pytest.skip(f"{kernel} is not built here")
    with pytest.raises(RuntimeError, match=rf"^{kernel}: recorded metric 'undeclared_metric', which it does "
                                           r"not declare \((declared: .+|it declares none)\)$"):
        _native.run(kernel, params, "undeclared_metric")


def test_the_catalogue_gives_each_kernel_the_figures_of_every_native_runtime_it_runs_on():
    for name, kernel in kernels.catalogue().items():
        expected = list(DECLARED[name])
        for runtime in kernel.runtimes:
            if runtime != runtimes.OURS and f"{runtime}_{name}" in DECLARED:
                expected += [m for m in DECLARED[f"{runtime}_{name}"] if m not in expected]
        assert kernel.metrics == tuple(expected), name
    assert kernels.get("ping_pong").metrics == ("round_trip_mean_ns", "round_trip_p50_ns", "round_trip_p99_ns",
                                                "round_trip_max_ns", "round_trip_samples", "clock_read_ns")


def test_a_stored_catalogue_keeps_the_figures_and_one_stored_before_them_still_loads():
    kernel = kernels.get("skynet")
    assert Kernel.from_json(kernel.to_json()) == kernel
    before = kernel.to_json()
    del before["metrics"]
    assert Kernel.from_json(before).metrics == ()


go_missing = runtimes.runtimes()["go"].missing if "go" in runtimes.runtimes() else "no peers/go"


@pytest.mark.skipif(bool(go_missing), reason=f"the Go peer cannot run here: {go_missing}")
@pytest.mark.parametrize("kernel, params, expected", [
    ("skynet", {"leaves": 100}, TREE),
    ("ping_pong", {"messages": 200, "latency_samples": 10}, ROUND_TRIP | PERCENTILES),
    ("ping_pong", {"messages": 200, "latency_samples": 0}, ROUND_TRIP),
])
def test_the_go_peer_records_the_figures_our_kernel_declares(tmp_path_factory, monkeypatch, kernel, params, expected):
    # Built once for the module's Go tests.
    monkeypatch.setenv(runtimes.CACHE_ENV, str(tmp_path_factory.getbasetemp() / "go-cache"))
    resolved = kernels.resolve(kernel, {"runtime": "go", **params})
    [sample] = runner.run_point(Point(kernel, {k: v for k, v in resolved.items() if v is not None}))
    assert set(sample.metrics) == expected
    assert set(sample.metrics) <= set(kernels.get(kernel).metrics)
