"""Speed-up against threads (analysis.scaling and the report's section): for a kernel that times
its sequential program (sequential_ns), each pool's median against its threads, the speed-up over
the same configuration at one thread, the efficiency and the sequential program as the baseline,
each figure computed here again from the store's samples."""

from __future__ import annotations

import math
import re
import statistics

import pytest

from labctl import results
from labctl.read import analysis

EXPERIMENT = '''
name = "scaling"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 60

[[grid]]
kernel = "savina_trapezoid"
group = "parallelism"
params = { pieces = 20_000, workers = 8 }
axes = { dispatcher = ["one_thread", "thread_pool", "work_stealing"], threads = [1, 2] }

[[grid]]
kernel = "ping_pong"
params = { messages = 2000 }
axes = { dispatcher = ["thread_pool"], threads = [1, 2] }
'''


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    from conftest import run_labctl

    folder = tmp_path_factory.mktemp("scaling")
    (folder / "scaling.toml").write_text(EXPERIMENT)
    db = folder / "scaling.db"
    done = run_labctl("sweep", str(folder / "scaling.toml"), "--db", str(db))
    assert done.returncode == 0, done.stderr
    reported = run_labctl("report", "1", "--db", str(db), "--out", str(folder / "report"))
    assert reported.returncode == 0, reported.stderr
    return results.load(db, 1), (folder / "report" / "report.md").read_text()


def test_each_pool_is_held_to_its_own_one_thread_time_and_the_sequential_program(swept):
    samples, _ = swept
    (found,) = analysis.scaling(samples)  # ping_pong times no sequential program
    assert (found.kernel, found.scenario, found.threads) == ("savina_trapezoid", "", [1, 2])
    trapezoid = samples[samples["kernel"] == "savina_trapezoid"]
    assert found.sequential == statistics.median(trapezoid["sequential_ns"])
    # one_thread has no pool: its thread count is not a setting, so it is not in the table.
    assert set(found.table["configuration"]) == {"labctl thread_pool mda=4", "labctl work_stealing mda=16"}
    for _, row in found.table.iterrows():
        dispatcher = row["configuration"].split()[1]
        mine = trapezoid[(trapezoid["dispatcher"] == dispatcher)]
        at = {t: statistics.median(mine[mine["threads"] == t]["elapsed_ns"]) for t in (1, 2)}
        assert row["median"] == at[row["threads"]]
        assert math.isclose(row["speedup"], at[1] / at[row["threads"]])
        assert math.isclose(row["efficiency"], at[1] / at[row["threads"]] / row["threads"])
        assert math.isclose(row["over_sequential"], found.sequential / at[row["threads"]])
    best = found.best(2)
    assert best["median"] == found.table[found.table["threads"] == 2]["median"].min()
    assert found.best(16) is None


def test_the_report_gives_the_summary_and_each_pools_row(swept):
    samples, report = swept
    (found,) = analysis.scaling(samples)
    section = report[report.index("## Speed-up against threads"):]
    section = section[:section.index("\n## ", 1)]
    best = found.best(2)
    summary = re.search(r"^\| savina_trapezoid \| (.*) \|$", section, re.MULTILINE).group(1).split(" | ")
    assert summary[1] == best["configuration"]
    assert summary[4:7] == [f"{best['speedup']:.2f}x", f"{best['efficiency']:.0%}", f"{best['over_sequential']:.2f}x"]
    at_two = found.table[found.table["threads"] == 2]
    steepest = at_two.loc[at_two["speedup"].idxmax()]
    assert summary[7] == f"{steepest['speedup']:.2f}x ({steepest['configuration']})"
    for _, row in found.table[found.table["threads"] == 2].iterrows():
        line = next(line for line in section.splitlines() if line.startswith(f"| {row['configuration']} |"))
        assert f"{row['speedup']:.2f}x, {row['efficiency']:.0%}" in line
    assert "ping_pong" not in section


def test_one_thread_count_or_no_sequential_program_gives_no_scaling(swept):
    samples, _ = swept
    assert analysis.scaling(samples[samples["threads"] != 2]) == []
    assert analysis.scaling(samples.drop(columns=["sequential_ns"])) == []
    # A sample whose sequential time is absent (a store from before the metric) is left out.
    blank = samples.copy()
    blank["sequential_ns"] = float("nan")
    assert analysis.scaling(blank) == []


def test_runs_that_did_unlike_work_are_compared_per_message_and_not_with_the_sequential_program(swept):
    # As astar's search does: the work depends on the schedule. Here the two-thread runs are made
    # to have handled half the messages: a speed-up from their times would credit them for it.
    samples, _ = swept
    unlike = samples.copy()
    trapezoid = unlike["kernel"] == "savina_trapezoid"
    unlike.loc[trapezoid & (unlike["threads"] == 2), "messages_processed"] //= 2
    (found,) = analysis.scaling(unlike)
    handled = unlike.loc[trapezoid & unlike["threads"].notna(), "messages_processed"]
    assert found.work_varies == (handled.min(), handled.max())
    assert math.isnan(found.sequential) and found.table["over_sequential"].isna().all()
    mine = unlike[trapezoid]
    for _, row in found.table.iterrows():
        dispatcher = row["configuration"].split()[1]
        at = {}
        for t in (1, 2):
            part = mine[(mine["dispatcher"] == dispatcher) & (mine["threads"] == t)]
            at[t] = statistics.median(part["elapsed_ns"] / part["messages_processed"])
        assert math.isclose(row["median"], at[row["threads"]])
        assert math.isclose(row["speedup"], at[1] / at[row["threads"]])
    # The report says so, in the summary's row and above the benchmark's table.
    from labctl.read.sections import threads

    assert threads._fastest(found)[0] == "savina_trapezoid (per message)"
    assert f"handled from {handled.min():,.0f} to {handled.max():,.0f} messages" in "\n".join(threads._pools(found))
    # Like work (the run as measured) is compared in whole times.
    assert analysis.scaling(samples)[0].work_varies is None
