"""`labctl compare`: the statistics on synthetic samples (verdicts, the 3-sample rule, the sizes at
which a rank test cannot be significant, --min-change, the geometric mean, the metric's
direction), then on stores filled by real tiny sweeps: matching points, --ignore, the markdown,
--fail-on-regression and the one-line errors."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from test_cli import assert_one_line_error

from labctl.read import compare
from labctl.vocabulary import stats
from labctl.vocabulary.metrics import lookup

A_FEW = [100.0, 102.0, 98.0, 101.0, 99.0]
TWICE = [200.0, 204.0, 196.0, 202.0, 198.0]


# -- statistics --------------------------------------------------------------------------------


def test_a_clear_2x_slowdown_with_5_samples_a_side_is_slower():
    d = compare.difference(A_FEW, TWICE)
    assert d.verdict == compare.SLOWER and d.text == "slower (2.00x)"
    assert d.ratio == 2 and d.change == pytest.approx(100)
    assert d.p_value == pytest.approx(2 / 252)  # every B above every A: the exact test's floor
    assert d.ratio_low <= 2 <= d.ratio_high and d.ratio_low > 1


def test_the_same_distribution_is_no_significant_difference():
    d = compare.difference(A_FEW, [101.5, 98.5, 100.5, 99.5, 100.0])
    assert d.verdict == compare.NO_DIFFERENCE and d.text == "no significant difference"
    assert d.p_value > 0.5
    assert d.ratio_low < 1 < d.ratio_high


def test_identical_samples_are_no_significant_difference():
    d = compare.difference(A_FEW, A_FEW)
    assert (d.verdict, d.p_value, d.ratio) == (compare.NO_DIFFERENCE, 1.0, 1.0)
    assert d.ratio_low < 1 < d.ratio_high  # each side resampled on its own


def test_below_3_samples_a_side_there_is_no_verdict_and_no_p_value():
    d = compare.difference([100.0, 101.0], TWICE)
    assert d.verdict == compare.TOO_FEW and d.text == "too few samples (n=2 vs 5)"
    assert d.p_value is None and d.ratio_low is None
    assert d.ratio == pytest.approx(200 / 100.5)  # the medians are still shown
    # Two single values are never "significant", however far apart.
    assert compare.difference([1.0], [1000.0]).verdict == compare.TOO_FEW


def test_3_against_3_cannot_be_significant_however_large_the_change():
    d = compare.difference([100.0, 101.0, 99.0], [1000.0, 1010.0, 990.0])
    assert d.verdict == compare.CANNOT_BE_SIGNIFICANT
    assert d.text == "cannot be significant at n=3 vs 3"
    assert d.p_value == pytest.approx(0.1)


@pytest.mark.parametrize("n_a, n_b, smallest, reachable", [
    (3, 3, 0.1, False), (3, 4, 2 / 35, False), (3, 5, 2 / 56, True), (4, 4, 2 / 70, True),
    (5, 5, 2 / 252, True),
])
def test_the_smallest_p_of_the_rank_test(n_a, n_b, smallest, reachable):
    assert stats.smallest_p(n_a, n_b) == pytest.approx(smallest)
    a = [float(i) for i in range(n_a)]
    b = [100.0 + i for i in range(n_b)]
    assert stats.rank_test(a, b) == pytest.approx(smallest)  # complete separation reaches it
    verdict = compare.difference(a, b).verdict
    assert verdict == (compare.SLOWER if reachable else compare.CANNOT_BE_SIGNIFICANT)


def test_a_significant_change_below_min_change_is_no_change():
    slightly = [v * 1.05 for v in A_FEW]
    assert compare.difference(A_FEW, slightly, min_change=2).verdict == compare.SLOWER
    d = compare.difference(A_FEW, slightly, min_change=10)
    assert d.verdict == compare.NO_CHANGE and d.text == "no change (below 10%)"
    assert d.p_value < 0.05
    # --min-change is a percentage either way: 2x faster is a change of -50%.
    assert compare.difference(TWICE, A_FEW, min_change=49).verdict == compare.FASTER
    assert compare.difference(TWICE, A_FEW, min_change=51).verdict == compare.NO_CHANGE


def test_the_direction_follows_the_metric():
    assert lookup("elapsed_ns").lower_is_better and lookup("round_trip_p50_ns").lower_is_better
    assert not lookup("msgs_per_s").lower_is_better
    # Half the throughput is slower; the change is that of the metric itself.
    d = compare.difference(TWICE, A_FEW, lower_is_better=False)
    assert d.verdict == compare.SLOWER and d.text == "slower (2.00x)"
    assert d.change == pytest.approx(-50)
    assert compare.difference(A_FEW, TWICE, lower_is_better=False).verdict == compare.FASTER
    assert compare.difference(TWICE, A_FEW).verdict == compare.FASTER


def test_the_geometric_mean_of_ratios():
    assert compare.geometric_mean([2.0, 0.5]) == pytest.approx(1)  # 2x slower, 2x faster
    assert compare.geometric_mean([2.0, 2.0, 2.0]) == pytest.approx(2)
    assert compare.geometric_mean([4.0, 1.0]) == pytest.approx(2)
    assert compare.geometric_mean([float("nan"), 0.0]) is None


def test_the_ratio_interval_is_reproducible_and_needs_3_a_side():
    a = [1.0, 1.3, 0.9, 1.1, 1.2]
    b = [2.1, 2.4, 1.9, 2.2, 2.0]
    assert stats.ratio_interval(a, b) == stats.ratio_interval(a, b)
    low, high = stats.ratio_interval(a, b)
    assert low < 2.1 / 1.1 < high
    assert stats.ratio_interval(a[:2], b) is None and stats.ratio_interval([0, 0, 0], b) is None


def test_tied_samples_use_the_normal_approximation():
    assert stats.rank_test([5.0, 5.0, 5.0], [5.0, 5.0, 5.0]) == 1.0
    assert stats.rank_test([1.0, 1.0, 2.0, 2.0, 1.0], [3.0, 3.0, 4.0, 4.0, 3.0]) < 0.05


def test_counts_without_noise_are_judged_by_their_ranges_however_small_the_change():
    # Instruction counts repeat: tied values leave the rank test nothing but ties to rank, and
    # at 3 against 3 its exact form never reaches p < 0.05. Two quiet samples apart differ, by
    # however little: the verdict is by their ranges, not the test.
    counts = [104_040_705.0] * 3
    d = compare.difference(counts, [104_041_000.0] * 3)
    assert d.verdict == compare.SLOWER and d.quiet
    assert d.text == "slower (+0.00028%; ranges apart, no noise)"
    same = compare.difference(counts, counts)
    assert same.verdict == compare.NO_CHANGE and same.text == "no change (equal medians)"
    # A few instructions of jitter in 10^5: overlapping ranges are no difference, apart ones are.
    jitter = [100_000.0, 100_020.0, 100_010.0]
    overlap = compare.difference(jitter, [100_015.0, 100_005.0, 100_030.0])
    assert overlap.verdict == compare.NO_DIFFERENCE and overlap.text == "no difference (ranges overlap, no noise)"
    assert compare.difference(jitter, [100_050.0, 100_060.0, 100_055.0]).verdict == compare.SLOWER
    assert compare.difference([100_050.0, 100_060.0, 100_055.0], jitter).verdict == compare.FASTER
    assert compare.difference(counts, [104_000_000.0] * 3, min_change=1).verdict == compare.NO_CHANGE
    # One side with noise (a time, a schedule-dependent count): the rank test, as before.
    noisy = compare.difference([100.0, 101.0, 99.0], [100_050.0, 100_060.0, 100_055.0])
    assert noisy.verdict == compare.CANNOT_BE_SIGNIFICANT and not noisy.quiet


def test_counts_are_better_lower():
    assert all(lookup(name).lower_is_better for name in ("instructions", "cache_misses", "page_faults"))
    assert compare.difference([10.0] * 3, [12.0] * 3, lower_is_better=True).verdict == compare.SLOWER


# -- stores filled by real sweeps --------------------------------------------------------------

BASE = '''
name = "base"
repeats = 5
warmup = 0
timeout_s = 60
[[grid]]
kernel = "ping_pong"
params = { messages = 2000 }
axes = { dispatcher = ["one_thread", "active_obj"] }
[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
'''

# A deliberate slowdown: 25 times the messages.
SLOW = '''
name = "slow"
repeats = 5
warmup = 0
timeout_s = 60
[[grid]]
kernel = "ping_pong"
params = { messages = 50000 }
'''

FEW = '''
name = "few"
repeats = 2
warmup = 0
timeout_s = 60
[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
'''


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """A store with run 1 (base), run 2 (slow: ping_pong one_thread with 25x the messages) and
    run 3 (few: skynet, 2 samples)."""
    from conftest import run_labctl

    folder = tmp_path_factory.mktemp("compare")
    path = str(folder / "r.db")
    for name, text in (("base", BASE), ("slow", SLOW), ("few", FEW)):
        (folder / f"{name}.toml").write_text(text)
        result = run_labctl("sweep", str(folder / f"{name}.toml"), "--db", path)
        assert result.returncode == 0, result.stderr
    return path


def run_pair(db: str, a, b, db_b: str | None = None, **options) -> compare.Comparison:
    return compare.compare(compare.load(db, a), compare.load(db_b or db, b), **options)


def test_a_run_against_itself_differs_nowhere(db):
    c = run_pair(db, 1, 1)
    assert len(c.rows) == 3 and not c.only_a and not c.only_b and c.same_machine
    assert {row.difference.verdict for row in c.rows} == {compare.NO_DIFFERENCE}
    assert c.geometric_mean == pytest.approx(1)
    text = compare.markdown(c)
    assert "## Run 1 (B) against run 1 (A): elapsed_ns, lower is better" in text
    assert "### ping_pong" in text and "### skynet" in text
    # the parameters that vary: the dispatcher, and active_obj's own stack_kb ("-" on one_thread)
    assert "| dispatcher | stack_kb | n A/B | median A |" in text
    assert "| one_thread | - | 5/5 |" in text and "| active_obj | 0 | 5/5 |" in text
    assert "fixed: runtime=labctl messages=2000 mbox=direct" in text
    assert "Geometric mean of B/A over 3 points: 1.000 (+0.0%). With a verdict: 3 (3 no " \
           "significant difference)." in text
    assert "Warning" not in text


def test_points_of_one_run_only_are_listed_not_compared(db):
    c = run_pair(db, 1, 2)
    assert c.rows == []
    assert sorted((k, p["dispatcher"]) for k, p in c.only_a) == [
        ("ping_pong", "active_obj"), ("ping_pong", "one_thread"), ("skynet", "one_thread")]
    assert [(k, p["messages"]) for k, p in c.only_b] == [("ping_pong", 50000)]
    text = compare.markdown(c)
    assert "No point has samples in both runs" in text
    assert "Only in A (run 1), not compared:" in text
    assert "- ping_pong runtime=labctl messages=50000 mbox=direct" in text


def test_ignore_matches_a_deliberate_slowdown_and_finds_it(db):
    c = run_pair(db, 1, 2, ignore=["messages"])
    [row] = c.rows
    assert (row.params_a["messages"], row.params_b["messages"]) == (2000, 50000)
    assert row.difference.verdict == compare.SLOWER and row.difference.ratio > 5
    assert sorted(p["dispatcher"] for _, p in c.only_a) == ["active_obj", "one_thread"]
    text = compare.markdown(c)
    assert "| 2000 → 50000 | 5/5 |" in text and "slower (" in text
    assert "Matched ignoring messages." in text
    assert run_pair(db, 2, 1, ignore=["messages"]).rows[0].difference.verdict == compare.FASTER
    # Throughput: 25x the messages in about 25x the time, higher is better.
    assert "higher is better" in compare.markdown(
        run_pair(db, 1, 2, metric="msgs_per_s", ignore=["messages"]))


def test_too_few_samples_give_no_verdict(db):
    c = run_pair(db, 1, 3)
    [row] = c.rows
    assert row.difference.text == "too few samples (n=5 vs 2)"
    text = compare.markdown(c)
    assert "| 5/2 |" in text and "| - | too few samples (n=5 vs 2) |" in text  # no p
    assert "With a verdict: 0; without: 1 (1 too few samples)." in text


def test_a_kernel_metric_compares_the_points_that_have_it(db):
    c = run_pair(db, 1, 1, metric="round_trip_p50_ns")
    assert [row.kernel for row in c.rows] == ["ping_pong", "ping_pong"]
    assert [(k, side) for k, _, side in c.unmeasured] == [("skynet", "A and B")]


def test_ignoring_a_parameter_that_merges_two_points_is_refused(db):
    with pytest.raises(compare.CompareError, match="differ only in ignored parameters") as error:
        run_pair(db, 1, 1, ignore=["dispatcher"])
    assert "dispatcher=one_thread" in str(error.value) and "dispatcher=active_obj" in str(error.value)


def test_runs_from_different_machines_are_flagged(db, tmp_path):
    other = str(tmp_path / "other.db")
    shutil.copy(db, other)
    connection = sqlite3.connect(other)
    connection.execute("UPDATE machines SET info = json_set(info, '$.hostname', 'elsewhere')")
    connection.commit()
    connection.close()
    c = run_pair(db, 1, 1, db_b=other)
    assert not c.same_machine
    text = compare.markdown(c)
    assert "**Warning:** the runs come from different machines" in text
    assert f"| B | 1 of {other} |" in text and ", elsewhere |" in text


def test_points_of_another_kind_of_machine_are_matched_only_when_asked(labctl, db, tmp_path):
    other = str(tmp_path / "other.db")
    shutil.copy(db, other)
    connection = sqlite3.connect(other)
    connection.execute("UPDATE machines SET info = json_set(info, '$.cpu_model', 'Other CPU', "
                       "'$.hostname', 'node7')")
    connection.commit()
    connection.close()
    c = run_pair(db, 1, 1, db_b=other)
    # The same points on another kind of machine: in both runs, not "only in" either.
    assert c.rows == [] and c.only_a == c.only_b == [] and len(c.elsewhere) == 3
    text = compare.markdown(c)
    assert "In both runs but on different kinds of machine, not compared" in text
    assert "Only in" not in text
    assert "**Warning:** the runs come from different machines, so a point is compared only " \
           "with the same point on the same kind of machine" in text
    assert "- B ran on: Other CPU, " in text and "`--across-machines` compares them" in text
    across = run_pair(db, 1, 1, db_b=other, across_machines=True)
    assert len(across.rows) == 3 and not across.only_a and across.across_machines
    text = compare.markdown(across)
    assert "whatever machine it ran on (`--across-machines`)" in text
    assert "Matched across machines (--across-machines)." in text
    result = labctl("compare", "1", "1", "--db", db, "--db-b", other, "--across-machines", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["across_machines"] is True and len(data["points"]) == 3


def test_the_cli_fails_on_a_regression_past_the_threshold(labctl, db, tmp_path):
    output = tmp_path / "compare.md"
    result = labctl("compare", "1", "latest", "--db", db, "--ignore", "messages")
    assert result.returncode == 0, result.stderr
    assert "too few samples" in result.stdout  # latest is run 3
    args = ["compare", "1", "2", "--db", db, "--ignore", "messages"]
    result = labctl(*args, "--fail-on-regression", "50", "-o", str(output))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("labctl: regression past 50%: ping_pong runtime=labctl messages=50000")
    assert "slower (" in line and "elapsed_ns" in line
    assert output.read_text() == result.stdout
    # 25 times the messages is far less than 100,000% slower.
    result = labctl(*args, "--fail-on-regression", "100000", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    [point] = data["points"]
    assert point["verdict"] == "slower" and point["params_b"]["messages"] == 50000
    assert data["a"]["id"] == 1 and data["ignored"] == ["messages"]


@pytest.mark.parametrize("args, words", [
    (["1", "9"], ["RUN_B", "no run 9"]),
    (["x", "1"], ["RUN_A", "'x'"]),
    (["1", "1", "--metric", "speed"], ["--metric", "'speed'", "elapsed_ns, msgs_per_s"]),
    (["1", "1", "--ignore", "spinus"], ["--ignore", "'spinus'", "spin_us"]),
    (["1", "1", "--ignore", "dispatcher"], ["--ignore dispatcher", "differ only in ignored"]),
    (["1", "1", "--min-change", "-1"], ["--min-change", ">= 0", "'-1'"]),
    (["1", "1", "--fail-on-regression", "five"], ["--fail-on-regression", "'five'"]),
    (["1", "1", "--db-b", "missing.db"], ["missing.db", "no such store"]),
])
def test_bad_input_is_one_line_with_exit_code_2(labctl, db, args, words):
    assert_one_line_error(labctl("compare", *args[:2], "--db", db, *args[2:]), 2, *words)

