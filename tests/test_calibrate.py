"""Verdicts that know their error rate (labctl.read.compare, labctl.history.rounds): Holm's adjustment; on
simulated machines whose state drifts between runs, how often identical code is called different
by the rank test of two runs alone, by the test against an A/A calibration and by interleaved
rounds, and how often each finds a real 5% change (seeded, so each figure is the same every
time); then `labctl calibrate` and `labctl ab` on tiny sweeps, and their refusals."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from conftest import run_labctl
from test_cli import assert_one_line_error

from labctl.read import compare
from labctl.vocabulary import stats

# A machine whose state moves between runs by a factor exp(N(0, DRIFT)) that all samples of a
# run share (the samples of a point run back to back), and a sample by exp(N(0, JITTER)).
DRIFT, JITTER, SAMPLES = 0.10, 0.01, 5


def run(rng: np.random.Generator, level: float = 1.0, shared: float | None = None) -> list[float]:
    """One run's samples of a point: `shared` is the drift of its moment where a round gives one."""
    moment = rng.normal(0, DRIFT) if shared is None else shared
    return list(level * np.exp(moment + rng.normal(0, JITTER, SAMPLES)))


def calibration(rng: np.random.Generator, rounds: int = 6) -> compare.Noise:
    logs = [math.log(np.median(run(rng)) / np.median(run(rng))) for _ in range(rounds)]
    return compare.Noise("simulated", tuple(logs))


def called(d: compare.Difference) -> bool:
    return d.verdict in (compare.FASTER, compare.SLOWER)


def test_holm_multiplies_the_ith_smallest_p_by_m_minus_i_and_keeps_the_order():
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, 0.9]) == [1.0, 1.0]
    assert stats.holm([]) == []


def test_two_runs_of_identical_code_on_a_drifting_machine_are_called_different_by_ranks_not_by_the_calibration():
    rng = np.random.default_rng(45)
    trials = 400
    ranks = sum(called(compare.difference(run(rng), run(rng))) for _ in range(trials))
    held = sum(called(compare.calibrated_difference(run(rng), run(rng), calibration(rng)))
               for _ in range(trials))
    # The rank test sees two moments, five samples each, and calls most of them different; the
    # calibrated test holds the two medians to the spread between runs: at its nominal 5%.
    assert ranks / trials > 0.8
    assert held / trials < 0.08


def test_holm_keeps_an_a_a_comparison_of_23_points_free_of_verdicts_in_95_percent_of_runs():
    rng = np.random.default_rng(23)
    families, points, wrong = 200, 23, 0
    for _ in range(families):
        found = [compare.calibrated_difference(run(rng), run(rng), calibration(rng)) for _ in range(points)]
        wrong += any(called(d) for d in compare.adjusted(found))
        unadjusted = found
    assert wrong / families <= 0.07  # family-wise, at most alpha (5%) but for sampling
    assert all(d.p_adjusted is None for d in unadjusted)


def test_interleaved_rounds_find_a_5_percent_change_that_the_drift_hides_from_two_runs():
    rng = np.random.default_rng(5)
    trials, rounds = 200, 6
    found = aa = 0
    for _ in range(trials):
        moments = rng.normal(0, DRIFT, rounds)  # each round's, shared by its A and its B
        a = [run(rng, 1.0, m) for m in moments]
        b = [run(rng, 1.05, m) for m in moments]
        again = [run(rng, 1.0, m) for m in moments]
        found += compare.paired_difference(a, b).verdict == compare.SLOWER
        aa += called(compare.paired_difference(a, again))
    assert found / trials > 0.95
    assert aa / trials < 0.08
    # Two runs against a calibration cannot see 5% under a 10% drift: the detectable change says so.
    noise = calibration(np.random.default_rng(1))
    d = compare.calibrated_difference(run(rng), run(rng, 1.05), noise)
    assert d.basis == compare.CALIBRATED and d.detectable > 20


def test_two_runs_of_5_samples_among_23_points_cannot_be_significant_without_a_calibration():
    # 0.0079, the rank test's smallest p at 5 against 5, times 23 is past 0.05: no verdict is
    # possible, which is said, rather than "no difference".
    apart = [compare.difference([1.0, 1.1, 1.2, 1.3, 1.4], [2.0, 2.1, 2.2, 2.3, 2.4]) for _ in range(23)]
    judged = compare.adjusted(apart)
    assert {d.verdict for d in judged} == {compare.CANNOT_BE_SIGNIFICANT}
    assert judged[0].text == "cannot be significant at n=5 vs 5 among 23 points"
    assert {d.verdict for d in compare.adjusted(apart[:3])} == {compare.SLOWER}  # 0.024 < 0.05


def test_quiet_samples_are_judged_by_their_ranges_in_rounds_too():
    counts = [[1000.0, 1000.0, 1000.0]] * 3
    more = [[1001.0, 1001.0, 1001.0]] * 3
    d = compare.paired_difference(counts, more)
    assert d.quiet and d.verdict == compare.SLOWER and d.basis == compare.RANKS
    assert compare.paired_difference(counts[:2], counts[:2]).verdict == compare.NO_CHANGE


TINY = """\
name = "tiny"
repeats = 3
warmup = 0
timeout_s = 60
[[grid]]
kernel = "ping_pong"
params = { messages = 2000 }
axes = { dispatcher = ["one_thread", "thread_pool"] }
"""


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """A store with an A/A calibration of TINY (4 rounds: runs 1-8) and two plain sweeps of it
    after (runs 9 and 10)."""
    folder = tmp_path_factory.mktemp("calibrate")
    (folder / "tiny.toml").write_text(TINY, encoding="utf-8")
    db = str(folder / "c.db")
    done = run_labctl("calibrate", str(folder / "tiny.toml"), "--rounds", "4", "--db", db)
    for _ in range(2):
        assert run_labctl("sweep", str(folder / "tiny.toml"), "--db", db).returncode == 0
    return folder, db, done


def test_calibrate_measures_the_build_against_itself_in_interleaved_rounds(calibrated):
    folder, db, done = calibrated
    assert done.returncode == 0, done.stderr
    # A B, then B A, then A B, then B A: 8 runs, each recording its round.
    assert re.findall(r"\[round (\d)/4\] ([AB])", done.stdout) == [
        ("1", "A"), ("1", "B"), ("2", "B"), ("2", "A"), ("3", "A"), ("3", "B"), ("4", "B"), ("4", "A")]
    assert "## A/A calibration" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ping_pong")]
    assert rows[0].startswith("| ping_pong dispatcher=one_thread | ")
    assert rows[1].startswith("| ping_pong dispatcher=thread_pool threads=2 ")
    assert all(row.split(" | ")[1] == "4" for row in rows)
    assert "the nominal rate is 5%" in done.stdout


def test_compare_of_two_plain_runs_is_held_to_the_calibration_and_says_so(calibrated):
    folder, db, _ = calibrated
    done = run_labctl("compare", "9", "10", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["basis"].startswith(compare.CALIBRATED) and len(data["calibrations"]) == 1
    assert {p["basis"] for p in data["points"]} == {compare.CALIBRATED}
    assert all(p["rounds"] == 4 and p["detectable"] > 0 and p["p_adjusted"] is not None for p in data["points"])
    # Whether two runs of one build get no verdict is a rate (at most 5% over the points, Holm's),
    # held on simulated machines above; a real one under the test suite's load proves nothing
    # either way, so this holds the table to what it rests on.
    text = run_labctl("compare", "9", "10", "--db", db).stdout
    assert "Not interleaved: each verdict is held against the spread" in text and "p (Holm)" in text


def test_compare_of_two_rounds_pairs_the_whole_group(calibrated):
    _, db, _ = calibrated
    data = json.loads(run_labctl("compare", "1", "2", "--db", db, "--json").stdout)
    assert data["basis"] == f"{compare.ROUNDS}: 4 rounds"
    assert {p["rounds"] for p in data["points"]} == {4}


def test_compare_without_a_calibration_warns_that_drift_reads_as_a_difference(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY, encoding="utf-8")
    db = str(tmp_path / "plain.db")
    for _ in range(2):
        assert run_labctl("sweep", str(tmp_path / "tiny.toml"), "--db", db).returncode == 0
    text = run_labctl("compare", "1", "2", "--db", db).stdout
    assert "**Not calibrated:** the runs were not interleaved" in text


def test_ab_of_the_installed_build_against_itself_compares_round_by_round(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY, encoding="utf-8")
    done = run_labctl("ab", str(tmp_path / "tiny.toml"), "installed", "installed", "--rounds", "3",
                      "--db", str(tmp_path / "ab.db"))
    assert done.returncode == 0, done.stderr
    assert "Interleaved: A and B measured in alternating rounds (3 rounds" in done.stdout
    assert done.stdout.count("| one_thread |") + done.stdout.count("| thread_pool |") == 2
    # The machine's warnings, the same in each of the 6 sweeps, are said once.
    warnings = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("warning:")]
    assert len(warnings) == len(set(warnings)) <= 3


@pytest.mark.parametrize("command, rounds", [("calibrate", "2"), ("ab", "1001"), ("ab", "x")])
def test_rounds_outside_3_to_1000_are_refused_naming_the_option_and_range(tmp_path, command, rounds):
    (tmp_path / "tiny.toml").write_text(TINY, encoding="utf-8")
    args = [command, str(tmp_path / "tiny.toml")] + (["installed", "installed"] if command == "ab" else [])
    done = run_labctl(*args, "--rounds", rounds, "--db", str(tmp_path / "x.db"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "Invalid value for '--rounds'" in done.stderr
    assert "3<=x<=1000" in done.stderr or "is not a valid integer" in done.stderr
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("args, words", [
    (["calibrate", "nothing.toml"], ["nothing.toml"]),
    (["ab", "tiny.toml", "no-such-commit", "installed"], ["no-such-commit"]),
    (["ab", "tiny.toml", "installed", "installed", "--fail-on-regression", "nan"], ["--fail-on-regression"]),
    (["ab", "unknown.toml", "installed", "HEAD"], ["unknown kernel 'nosuch'"]),
    (["calibrate", "unknown.toml"], ["unknown kernel 'nosuch'"]),
])
def test_calibrate_and_ab_refuse_bad_input_in_one_line(tmp_path, args, words):
    (tmp_path / "tiny.toml").write_text(TINY, encoding="utf-8")
    (tmp_path / "unknown.toml").write_text('name = "u"\n[[grid]]\nkernel = "nosuch"\n', encoding="utf-8")
    args = [str(tmp_path / arg) if arg.endswith(".toml") else arg for arg in args]
    done = run_labctl(*args, "--db", str(tmp_path / "x.db"))
    assert_one_line_error(done, 2, *words)


def test_rounds_that_a_burst_hit_on_one_side_are_trimmed_not_averaged():
    # A machine where, in 15% of the rounds, a burst of load doubles one side's median (the other
    # side of the round missed it): 20 rounds find a 5% change nearly always and call identical
    # code different at most at the test's level, where Student's mean would be pulled by the
    # bursts (the found rate it would reach is asserted lower, so the trimming is what finds it).
    rng = np.random.default_rng(15)
    trials, rounds, found, aa, found_by_mean = 200, 20, 0, 0, 0

    def sides(level: float) -> tuple[list[list[float]], list[list[float]]]:
        moments = rng.normal(0, DRIFT, rounds)
        a = [run(rng, 1.0, m) for m in moments]
        b = [run(rng, level, m) for m in moments]
        for i in np.flatnonzero(rng.random(rounds) < 0.15):
            hit = a if rng.random() < 0.5 else b
            hit[i] = [2 * v for v in hit[i]]
        return a, b

    for _ in range(trials):
        a, b = sides(1.05)
        found += compare.paired_difference(a, b).verdict == compare.SLOWER
        logs = [math.log(np.median(y) / np.median(x)) for x, y in zip(a, b)]
        mean = stats.log_ratio_test(float(np.mean(logs)), float(np.std(logs, ddof=1)) / math.sqrt(rounds), rounds - 1)
        found_by_mean += mean.p_value < 0.05 and mean.ratio > 1
        aa += called(compare.paired_difference(*sides(1.0)))
    assert found / trials > 0.9
    assert found_by_mean / trials < found / trials - 0.2
    assert aa / trials < 0.09  # 7.5% here: alpha, and trials where bursts outnumber the trim


def test_rounds_whose_wall_times_detect_only_wide_changes_point_to_cpu_time():
    from types import SimpleNamespace as Namespace

    def note(metric: str, detectable: float) -> str:
        c = Namespace(basis=f"{compare.ROUNDS}: 30 rounds", metric=metric,
                      rows=[Namespace(difference=Namespace(detectable=detectable))])
        return compare._basis_note(c)[0]

    assert "about ±24% here" in note("elapsed_ns", 24.0) and "`--metric cpu_ns`" in note("elapsed_ns", 24.0)
    assert "cpu_ns" not in note("elapsed_ns", 3.0)
    assert "cpu_ns" not in note("cpu_ns", 24.0)
