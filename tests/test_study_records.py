"""A study's differences cannot hide: every reference records what the study ran (its statistic,
and the parameters in which our points differ from it), and the report derives each difference
from that record and the run's own points."""

from __future__ import annotations

import pytest

from labctl.plan import experiment
from labctl.read.analysis import _key
from labctl.read.references import Comparison, Match, statistic
from labctl.vocabulary.schema import Figure, Reference, StudyRan

STUDIES = sorted(name for name, path in experiment.shipped_experiments().items()
                 if experiment.load(path).references)


def matched(plan: experiment.Plan, reference: Reference, figure: Figure) -> list[dict]:
    """The planned points a figure of ours stands for (as labctl.read.references matches samples)."""
    wanted = {**reference.where, **figure.params}
    return [point.params for point in plan.points if point.kernel == reference.kernel
            and all(_key(point.params.get(name)) == _key(value) for name, value in wanted.items())]


def test_the_studies_with_published_figures_are_all_checked():
    assert {"skynet_fibers", "theron_303", "sobjectizer_tales22", "machinate_shootout"} <= set(STUDIES)


@pytest.mark.parametrize("name", STUDIES)
def test_every_reference_records_the_studys_statistic(name):
    for reference in experiment.load(name).references:
        assert reference.study.statistic, reference.title


@pytest.mark.parametrize("name", STUDIES)
def test_a_parameter_the_default_scale_changes_is_recorded_with_the_studys_value(name):
    """`--scale full` runs a table at the study's sizes; where the default scale runs it at others,
    the reference must say what the study ran, or the report could not print the difference."""
    default, full = experiment.load(name), experiment.load(name, scale="full")
    for reference in default.references:
        for figure in (f for f in reference.figures if f.peer is None):
            ours, theirs = matched(default, reference, figure), matched(full, reference, figure)
            assert len(ours) == 1 and len(theirs) == 1, (reference.title, figure.label, ours, theirs)
            changed = {p for p in {*ours[0], *theirs[0]}
                       if _key(ours[0].get(p)) != _key(theirs[0].get(p))}
            unrecorded = changed - set(reference.study_params(figure))
            assert not unrecorded, (f"{name}: '{reference.title}', {figure.label}: the default scale "
                                    f"changes {sorted(unrecorded)}; record the study's value")


def test_the_differences_are_derived_from_the_record_and_the_points():
    """An oracle written out by hand: two figures, the study's table at 1M leaves and 32 threads,
    one figure's own thread count; our points at 100,000 leaves and 2 threads."""
    study = StudyRan({"leaves": 1_000_000, "threads": 32}, "best", 5, ("8 kB stacks",))
    stealing = Figure(1.0, {"dispatcher": "work_stealing"}, name="fiber, work stealing")
    alone = Figure(2.0, {"dispatcher": "one_thread"}, name="fiber, round robin", study={"threads": 1})
    reference = Reference("t", "s", "h", "skynet", "elapsed_ns", None, "s", True, {}, "", [stealing, alone],
                          study)
    comparison = Comparison(reference, [
        Match(stealing, value=1.0, params={"leaves": 100_000, "threads": 2, "dispatcher": "work_stealing"}),
        Match(alone, value=2.0, params={"leaves": 100_000, "dispatcher": "one_thread"})], "")
    assert [d.text() for d in comparison.differences()] == [
        "leaves: ours 100000, the study 1000000",
        "threads: ours 2, the study 32 (for fiber, work stealing)",
        "threads: ours does not apply, the study 1 (for fiber, round robin)",
    ]


@pytest.mark.parametrize("name, lower, expected", [
    ("best", True, 3.0), ("best", False, 9.0), ("min", False, 3.0), ("max", True, 9.0),
    ("mean", True, 5.5), ("median", True, 5.0), ("single", True, 5.0), ("", True, 5.0)])
def test_ours_is_the_studys_statistic_of_our_samples(name, lower, expected):
    assert statistic([5.0, 3.0, 9.0, 5.0], name, lower) == expected


def test_a_study_with_no_number_of_its_own_sets_ours_beside_its_peers_results(tmp_path):
    """libcppa's posts print graphs for libcppa and prose for its peers (Erlang's 600 s, Theron's
    crash): ours is measured and shown beside them, never ranked, and a crash is printed as the
    result it is. The oracle is written out by hand."""
    from labctl.read.references import rank
    from labctl.read.sections.studies import published

    ours = Figure(None, {"dispatcher": "thread_pool"}, name="libcppa (a graph only)")
    erlang = Figure(600.0, {}, peer="Erlang")
    theron = Figure(None, {}, peer="Theron 3.03", outcome="crashed for more than 210 actors")
    reference = Reference("t", "s", "h", "actor_creation", "elapsed_ns", None, "s", True, {}, "",
                          [ours, erlang, theron], StudyRan({"depth": 19}, "mean", 5))
    comparison = rank(reference, [Match(ours, value=2e8, median=2e8, interval=(1.5e8, 2.5e8), samples=5,
                                        params={"depth": 18, "dispatcher": "thread_pool"}),
                                  Match(erlang), Match(theron)])
    assert comparison.ours == [] and len(comparison.measured) == 1
    assert comparison.verdict.startswith("The study prints no number for its own runtime here")
    lines = published(comparison, 0, tmp_path, [])
    assert "- depth: ours 18, the study 19" in lines
    table = [line for line in "\n".join(lines).splitlines() if line.startswith("| ")]
    assert "| 1 | **labctl dispatcher=thread_pool (this machine)** | 0.2 s |" in table
    assert "| 2 | Erlang (study) | 600 s |" in table
    assert table[-1] == "|  | Theron 3.03 (study) | crashed for more than 210 actors |"
    assert any("| no number (a graph only) |" in row for row in table)
    assert not list(tmp_path.iterdir())  # nothing to plot: one figure of ours, unranked


def test_the_studys_runtimes_run_here_are_ranked_with_ours_and_one_not_run_says_why(tmp_path):
    """A runtime of the study that the lab runs is a figure of ours with `runtime`: measured, ranked
    against the study's order, and named by its runtime in the absolute table; one the lab cannot
    run stays a peer with the reason. Oracle: the orders written out by hand (study: fibers 0.05 <
    Go 0.42 < Erlang 0.63 < pthread 54; here: fibers 0.9 µs < Erlang 4 µs < Go 5 µs < 60 µs, so
    Go vs Erlang alone reverses, of six pairs)."""
    from labctl.read.references import rank
    from labctl.read.sections.studies import published

    fibers = Figure(0.05, {"runtime": "boost_fiber", "threads": 2}, name="fiber (work stealing)")
    go = Figure(0.42, {"runtime": "go"}, name="Go go1.8.1")
    erlang = Figure(0.63, {"runtime": "erlang"}, name="Erlang erts-8.3")
    threads = Figure(54.0, {"dispatcher": "active_obj"}, name="pthread")  # the one ours stands for
    theron = Figure(0.7, {}, peer="Theron 3.03", not_run="not packaged in Debian 12")
    reference = Reference("t", "s", "h", "skynet", "elapsed_ns", "leaves", "µs", True, {}, "",
                          [fibers, go, erlang, threads, theron], StudyRan({"leaves": 1_000_000}, "min", None))

    def match(figure, ns, runtime):
        return Match(figure, value=ns, median=ns, interval=(ns * 0.99, ns * 1.01), samples=5,
                     params={"runtime": runtime, "leaves": 1_000_000})

    comparison = rank(reference, [match(fibers, 900.0, "boost_fiber"), match(go, 5000.0, "go"),
                                  match(erlang, 4000.0, "erlang"), match(threads, 60_000.0, "labctl"),
                                  Match(theron)])
    assert comparison.kind == "does not hold"
    assert len(comparison.agree) == 5 and len(comparison.reversed) == 1
    assert comparison.reversed[0].startswith("Go go1.8.1 vs Erlang erts-8.3")
    (tmp_path / "figures").mkdir()
    table = [line for line in "\n".join(published(comparison, 0, tmp_path, [])).splitlines()
             if line.startswith("| ")]
    assert "| 7 | **go (this machine)** | 5 µs |" in table
    assert "| 5 | **boost_fiber threads=2 (this machine)** | 0.9 µs |" in table
    assert "| 4 | Theron 3.03 (study; not run here: not packaged in Debian 12) | 0.7 µs |" in table


def test_a_peer_run_here_with_the_studys_only_number_is_set_beside_ours_not_ranked():
    """libcppa's mailbox post prints Erlang's 600 s and no number of libcppa's: with Erlang run
    here, both are measured, and still no order of the study's own runtime exists to check."""
    from labctl.read.references import rank

    ours = Figure(None, {"dispatcher": "thread_pool", "sender": "thread"}, name="libcppa (a graph only)")
    erlang = Figure(600.0, {"runtime": "erlang"}, name="Erlang (20 sender actors, 12 cores)")
    reference = Reference("t", "s", "h", "mailbox_n_to_1", "elapsed_ns", None, "s", True, {}, "",
                          [ours, erlang], StudyRan({"threads": 12}, "mean", 5))
    comparison = rank(reference, [Match(ours, value=2e9, median=2e9, samples=5),
                                  Match(erlang, value=9e9, median=9e9, samples=5)])
    assert comparison.kind == "beside its peers" and len(comparison.measured) == 2
    assert not comparison.agree and not comparison.reversed
