"""The `labctl` command: its output, its errors (one line, exit code 2, no traceback) and its
failures (exit code 1, no timing)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pytest

from labctl.catalogue import kernels, studies
from labctl.run import runner
from labctl.vocabulary.point import Point


def assert_one_line_error(result, code: int, *words: str) -> None:
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("labctl: ")
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0]


def test_kernels_lists_every_kernel_and_describe_its_parameters_and_defaults(labctl):
    result = labctl("kernels")
    assert result.returncode == 0
    for kernel in kernels.catalogue().values():
        assert kernel.name in result.stdout
    described = labctl("kernels", "--describe", "skynet")
    for param in kernels.get("skynet").params:
        assert param.name in described.stdout
    assert "leaves = 1000000" in described.stdout and "fifo = cooperation" in described.stdout
    assert "4 (work_stealing: 16)" in described.stdout  # a dispatcher's own default beside the kernel's


def test_kernels_describe_prints_purpose_study_and_verification(labctl):
    result = labctl("kernels", "--describe", "skynet")
    assert result.returncode == 0
    printed = " ".join(result.stdout.split())
    assert "SObjectizer Tales - 22. Performance, part 3" in printed
    assert "https://dev.to/ilpropheta/sobjectizer-tales-22-performance-part-3-24ng" in printed
    assert "499999500000" in result.stdout
    assert "children per node" in result.stdout


@pytest.mark.parametrize("name", sorted(kernels.catalogue()))
def test_every_kernel_describes_its_study_parameters_and_checks(labctl, name):
    kernel = kernels.get(name)
    result = labctl("kernels", "--describe", name)
    assert result.returncode == 0
    printed = " ".join(result.stdout.split())  # wrapped to the width of a pipe
    for key, part in kernel.sources:  # each study by its publication, with its address
        study = studies.catalogue()[key]
        for text in (part, study.title, study.author, str(study.year), study.url):
            assert text in printed
    assert kernel.sources and "seeds" not in result.stdout
    assert kernel.verifies[:40] in " ".join(result.stdout.split())
    for param in kernel.params:
        assert param.name in result.stdout


def test_a_wrong_answer_from_a_new_kernel_fails_the_run_loudly(labctl):
    result = labctl("run", "thread_ring", "--actors", "5", "--hops", "12", "--json",
                    env={"LABCTL_FAULT": "wrong_answer"})
    assert_one_line_error(result, 1, "thread_ring failed", "wrong answer")
    assert result.stdout == ""


def test_kernels_json_is_the_catalogue(labctl):
    catalogue = json.loads(labctl("kernels", "--json").stdout)
    assert {k["name"] for k in catalogue} == set(kernels.catalogue())
    # ping_pong's own figures, as ping_pong.cpp records them (the latency phase's)
    [ping_pong] = [k for k in catalogue if k["name"] == "ping_pong"]
    assert {"round_trip_p50_ns", "round_trip_p99_ns", "clock_read_ns"} <= set(ping_pong["metrics"])


def test_kernels_describe_an_unknown_kernel_is_a_usage_error(labctl):
    assert_one_line_error(labctl("kernels", "--describe", "nope"), 2, "unknown kernel")


def test_run_json_prints_one_object_per_sample(labctl):
    result = labctl("run", "skynet", "--leaves", "1000", "--dispatcher=thread_pool", "--repeat", "3",
                    "--warmup", "1", "--json")
    assert result.returncode == 0, result.stderr
    samples = [json.loads(line) for line in result.stdout.splitlines()]
    assert [s["index"] for s in samples] == [0, 1, 2]
    for sample in samples:
        assert sample["verified"] and sample["answer"] == "sum=499500 agents=1111"
        assert sample["params"]["dispatcher"] == "thread_pool"
        assert sample["params"]["fifo"] == "cooperation"
        assert sample["elapsed_ns"] > 0 and sample["peak_rss_kb"] > 0
        assert len(sample["thread_cpu_ns"]) == 2
        assert sample["pid"] != os.getpid()


def test_run_prints_a_readable_summary(labctl):
    result = labctl("run", "ping_pong", "--messages", "20000", "--repeat", "2")
    assert result.returncode == 0, result.stderr
    assert "ping_pong" in result.stdout and "dispatcher=one_thread" in result.stdout
    assert "run 1/2" in result.stdout and "run 2/2" in result.stdout
    assert "M msgs/s" in result.stdout and "round_trip_p50" in result.stdout
    assert "median" in result.stdout
    assert "ok pings=10000 pongs=10000" in result.stdout


@pytest.mark.parametrize(
    "args, words",
    [
        (["run", "skynot"], ["unknown kernel"]),
        (["run", "skynet", "--leafs", "10"], ["unknown parameter 'leafs'"]),
        (["run", "skynet", "--leaves", "ten"], ["parameter 'leaves'", "integer"]),
        (["run", "skynet", "--leaves", "-5"], ["parameter 'leaves'"]),
        (["run", "skynet", "--leaves"], ["parameter 'leaves' needs a value"]),
        (["run", "skynet", "10"], ["unexpected argument '10'"]),
        (["run", "skynet", "--leaves", "10", "--leaves", "20"], ["given twice"]),
        (["run", "skynet", "--fifo", "individual"],
         ["parameter 'fifo' does not apply to dispatcher 'one_thread'", "thread_pool"]),
        (["run", "ping_pong", "--dispatcher", "thread_pool", "--fifo", "fast"],
         ["cooperation, individual"]),
        (["run", "ping_pong", "--pin", "0-99"], ["outside the allowed set"]),
    ],
)
def test_bad_input_is_one_line_with_exit_code_2(labctl, args, words):
    assert_one_line_error(labctl(*args), 2, *words)


def test_a_wrong_answer_fails_loudly_with_no_timing(labctl):
    result = labctl("run", "skynet", "--leaves", "100", "--json", env={"LABCTL_FAULT": "wrong_answer"})
    assert_one_line_error(result, 1, "skynet failed", "wrong answer", "expected 'sum=4950 agents=111'")
    assert result.stdout == ""


def test_a_crashing_worker_is_reported_and_the_cli_survives(labctl):
    result = labctl("run", "skynet", "--leaves", "100", env={"LABCTL_FAULT": "crash"})
    assert_one_line_error(result, 1, "killed by SIGSEGV")


def test_a_hanging_worker_is_killed_at_the_timeout(labctl):
    start = time.monotonic()
    result = labctl("run", "skynet", "--leaves", "100", "--timeout", "2", env={"LABCTL_FAULT": "hang"})
    assert_one_line_error(result, 1, "no result within 2 s")
    assert time.monotonic() - start < 30


def test_the_worker_is_gone_after_a_timeout():
    point = Point("skynet", {"leaves": 100}, timeout_s=1, env={"LABCTL_FAULT": "hang"})
    with pytest.raises(runner.PointFailed) as failure:
        list(runner.run_point(point))
    assert failure.value.kind == "timeout"
    leftover = subprocess.run(["pgrep", "-f", "labctl.run.worker"], capture_output=True, text=True)
    assert str(os.getpid()) not in leftover.stdout


def test_a_point_runs_in_another_process():
    samples = list(runner.run_point(Point("ping_pong", {"messages": 200}, repeats=2)))
    assert len(samples) == 2 and all(s.pid != os.getpid() for s in samples)


def test_no_kernel_parameter_shadows_an_option_of_run():
    from labctl.cli.commands.run import run_command

    options = {p.name for p in run_command.params} | {"as_json", "json", "help"}
    for kernel in kernels.catalogue().values():
        assert not options & {p.name for p in kernel.params}, kernel.name


def test_the_labctl_script_is_installed_and_runs():
    script = shutil.which("labctl")
    assert script is not None
    result = subprocess.run([script, "run", "skynet", "--leaves", "10"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "ok sum=45 agents=11" in result.stdout
