"""Fingerprints: what the runtime counts of each phase (agents created, inbox takes, idle time),
stored with every sample of our kernels, and what labctl derives from them (analysis.fingerprints,
the report's section, `labctl fingerprint`), each figure recomputed here from the counts."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from test_cli import assert_one_line_error

from labctl import _native, results
from labctl.read import analysis
from labctl.vocabulary import metrics

EXPERIMENT = '''
name = "fingerprints"
order = "grid"
repeats = 2
warmup = 0
timeout_s = 60

[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
axes = { dispatcher = ["one_thread", "thread_pool"], threads = [2] }

[[grid]]
kernel = "counting_actor"
params = { messages = 5000 }
axes = { dispatcher = ["one_thread", "active_obj"] }

[[grid]]
kernel = "ping_pong"
params = { messages = 2000 }
axes = { dispatcher = ["one_thread", "thread_pool"], threads = [2], fifo = ["individual"] }
'''


def counts_of(kernel: str, **params) -> dict:
    return _native.run(kernel, params)["runtime_counts"]


# -- what the runtime counts, against what the kernel did ------------------------------------------

def test_agents_created_are_the_agents_the_phase_registered():
    # skynet with 1000 leaves builds a tree of 1 + 10 + 100 + 1000 agents inside its phase.
    assert counts_of("skynet", leaves=1000)["agents_created"] == 1111
    # counting_actor's counter exists before its phase.
    assert counts_of("counting_actor", messages=1000)["agents_created"] == 0


def test_messages_from_another_thread_are_taken_from_the_inbox():
    # counting_actor's sender is the kernel's own thread: every message crosses through the inbox,
    # and no take can find more than were sent.
    counts = counts_of("counting_actor", messages=3000)
    assert counts["inbox_messages"] == 3000
    assert 1 <= counts["inbox_takes"] <= 3000
    assert 1 <= counts["inbox_largest"] <= 3000
    # On one thread, ping_pong's agents share a queue: what they send each other never does.
    assert counts_of("ping_pong", messages=2000)["inbox_messages"] <= 2


@pytest.mark.parametrize("dispatcher,threads", [("one_thread", 1), ("thread_pool", 2), ("work_stealing", 2)])
def test_threads_exist_for_the_span_and_are_idle_for_at_most_all_of_it(dispatcher, threads):
    params = {"leaves": 1000, "dispatcher": dispatcher}
    if dispatcher != "one_thread":
        params["threads"] = threads
    counts = counts_of("skynet", **params)
    # The pool's threads start before the phase: each exists for the whole span.
    assert counts["thread_ns"] == threads * counts["span_ns"]
    assert 0 <= counts["idle_ns"] <= counts["thread_ns"]


def test_a_peer_has_no_runtime_counts():
    if "caf_skynet" not in {k["name"] for k in _native.kernels()}:
        pytest.skip("CAF is not built here")
    assert "runtime_counts" not in _native.run("caf_skynet", {"leaves": 1000})


# -- derived figures -------------------------------------------------------------------------------

def frame(**columns) -> pd.DataFrame:
    base = {"msgs_per_s": [1e6], "messages_processed": [1000], "agents_created": [10],
            "inbox_messages": [500], "inbox_takes": [50], "inbox_largest": [40],
            "idle_ns": [3_000_000], "thread_ns": [8_000_000], "span_ns": [4_000_000]}
    base.update(columns)
    return pd.DataFrame(base)


def test_each_axis_is_its_definition():
    row = analysis.fingerprint_rows(frame()).iloc[0]
    assert row["creations_per_s"] == pytest.approx(10 / 4e-3)
    assert row["depth_mean"] == pytest.approx(10.0)
    assert row["depth_max"] == 40
    assert row["idle_share"] == pytest.approx(3 / 8)
    assert row["parallelism"] == pytest.approx((8 - 3) / 4)
    assert row["remote_share"] == pytest.approx(0.5)


@pytest.mark.parametrize("columns,undefined", [
    ({"inbox_takes": [0], "inbox_messages": [0]}, ["depth_mean", "depth_max"]),
    ({"span_ns": [0]}, ["creations_per_s", "parallelism"]),
    ({"thread_ns": [0], "idle_ns": [0]}, ["idle_share"]),
    ({"messages_processed": [0]}, ["remote_share"]),
    ({"span_ns": [float("nan")]}, ["creations_per_s", "parallelism"]),
])
def test_an_axis_with_nothing_to_divide_is_undefined_not_zero_or_infinite(columns, undefined):
    row = analysis.fingerprint_rows(frame(**columns)).iloc[0]
    for name in undefined:
        assert math.isnan(row[name]), name
    for axis in analysis.AXES:
        assert not math.isinf(row[axis.name]), axis.name


def test_shares_stay_within_zero_and_one_when_counts_disagree():
    # An idle interval ended just after the span counts whole: the share is capped, not 110%.
    row = analysis.fingerprint_rows(frame(idle_ns=[9_000_000], inbox_messages=[5000])).iloc[0]
    assert row["idle_share"] == 1.0
    assert row["parallelism"] == 0.0
    assert row["remote_share"] == 1.0


def test_a_sample_without_counts_has_no_fingerprint():
    rows = analysis.fingerprint_rows(pd.DataFrame({"msgs_per_s": [1.0], "messages_processed": [1]}))
    assert all(math.isnan(rows.iloc[0][axis.name]) for axis in analysis.AXES)


def test_runtime_counts_are_facts_never_ranked():
    for name in metrics.RUNTIME_COUNTS:
        assert name not in metrics.COMPARABLE
        assert name not in metrics.COUNTS


# -- a run: stored, grouped, reported, printed -----------------------------------------------------

@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    from conftest import run_labctl

    folder = tmp_path_factory.mktemp("fingerprints")
    (folder / "fingerprints.toml").write_text(EXPERIMENT)
    db = folder / "fingerprints.db"
    done = run_labctl("sweep", str(folder / "fingerprints.toml"), "--db", str(db))
    assert done.returncode == 0, done.stderr
    reported = run_labctl("report", "1", "--db", str(db), "--out", str(folder / "report"))
    assert reported.returncode == 0, reported.stderr
    printed = run_labctl("fingerprint", "1", "--db", str(db))
    assert printed.returncode == 0, printed.stderr
    return db, results.load(db, 1), (folder / "report" / "report.md").read_text(), printed.stdout


def test_every_sample_of_our_kernels_stores_its_runtime_counts(swept):
    _, samples, _, _ = swept
    for name in metrics.RUNTIME_COUNTS:
        assert samples[name].notna().all(), name


def test_each_point_is_the_median_of_its_samples_and_in_one_group(swept):
    _, samples, _, _ = swept
    prints = analysis.fingerprints(samples)
    assert len(prints.table) == samples["point"].nunique()
    axes = analysis.fingerprint_rows(samples)
    for _, row in prints.table.iterrows():
        mine = axes[samples["point"] == row["point"]]
        for axis in analysis.AXES:
            expected = mine[axis.name].median()
            assert (math.isnan(expected) and math.isnan(row[axis.name])) or row[axis.name] == pytest.approx(expected)
    # Every point in exactly one group, and the groups' kernels count their points.
    assert sum(sum(kernels.values()) for kernels in prints.groups.values()) == len(prints.table)
    for letter, kernels in prints.groups.items():
        members = prints.table[prints.table["group"] == letter]
        assert dict(members["kernel"].value_counts()) == kernels


def test_points_far_apart_fall_in_different_groups():
    # Two tight clusters, far apart on every axis: two groups, each holding one cluster.
    near = {"msgs_per_s": 1e6, "creations_per_s": 10.0, "depth_mean": 1.0, "depth_max": 2.0,
            "idle_share": 0.1, "parallelism": 1.0, "remote_share": 0.0}
    far = {"msgs_per_s": 1e3, "creations_per_s": 1e6, "depth_mean": 1e3, "depth_max": 1e4,
           "idle_share": 0.9, "parallelism": 0.2, "remote_share": 1.0}
    rows = [{"kernel": f"a{i}", **{k: v * (1 + i / 100) for k, v in near.items()}} for i in range(4)]
    rows += [{"kernel": f"b{i}", **{k: v * (1 + i / 100) for k, v in far.items()}} for i in range(4)]
    table = pd.DataFrame(rows)
    letters = analysis._groups(analysis._standardised(table))
    assert len(set(letters[:4])) == 1 and len(set(letters[4:])) == 1 and letters[0] != letters[4]
    prints = analysis.Fingerprints(table.assign(group=letters, scenario=""), {})
    assert prints.nearest("a0")[0].startswith("a")


def test_the_report_and_the_command_show_the_same_groups(swept):
    _, samples, report, printed = swept
    prints = analysis.fingerprints(samples)
    assert "## Fingerprints" in report
    for letter, kernels in prints.groups.items():
        members = ", ".join(f"{kernel} ({count})" for kernel, count in kernels.items())
        assert f"| {letter} | {members} |" in report
        assert f"group {letter}: {members}" in printed
    for (kernel, scenario), _ in prints.table.groupby(["kernel", "scenario"], sort=False):
        nearest = prints.nearest(kernel, scenario)
        assert f"{kernel} {scenario}".strip() + f" is nearest {nearest[0]}" in printed


def test_a_run_without_counts_is_refused_by_name(tmp_path):
    from conftest import run_labctl

    (tmp_path / "one.toml").write_text(EXPERIMENT.split("[[grid]]")[0] + '[[grid]]\nkernel = "skynet"\n'
                                       'params = { leaves = 1000 }\n')
    db = tmp_path / "one.db"
    assert run_labctl("sweep", str(tmp_path / "one.toml"), "--db", str(db)).returncode == 0
    refused = run_labctl("fingerprint", "1", "--db", str(db))
    assert_one_line_error(refused, 1, "no fingerprints", "two or more points")
    missing = run_labctl("fingerprint", "7", "--db", str(db))
    assert missing.returncode != 0 and "7" in missing.stderr


@pytest.mark.parametrize("damage", ["NaN", "", "not json", '{"span_ns": 1e30, "idle_ns": "x"}', "[1, 2]",
                                    '{"span_ns": NaN, "thread_ns": -1, "inbox_takes": Infinity}'])
def test_damaged_counts_in_the_store_never_raise_a_traceback(swept, tmp_path, damage):
    import shutil
    import sqlite3

    from conftest import run_labctl

    db = tmp_path / "damaged.db"
    shutil.copy(swept[0], db)
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE samples SET counts = ? WHERE id % 2 = 0", (damage,))
    done = run_labctl("fingerprint", "1", "--db", str(db))
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1, 2), done.stderr
    if done.returncode:
        assert_one_line_error(done, done.returncode)
