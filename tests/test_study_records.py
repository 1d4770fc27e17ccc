"""A study's differences cannot hide: every reference records what the study ran (its statistic,
and the parameters in which our points differ from it), and the report derives each difference
from that record and the run's own points."""

from __future__ import annotations

import pytest

from labctl import experiment
from labctl.analysis import _key
from labctl.references import Comparison, Match, statistic
from labctl.schema import Figure, Reference, StudyRan

STUDIES = sorted(name for name, path in experiment.shipped_experiments().items()
                 if experiment.load(path).references)


def matched(plan: experiment.Plan, reference: Reference, figure: Figure) -> list[dict]:
    """The planned points a figure of ours stands for (as labctl.references matches samples)."""
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
