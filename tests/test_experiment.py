"""Experiment files: grid expansion, exclusions, order, and every kind of bad file refused
before anything runs, naming the file, the key and what is allowed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from labctl.plan import experiment
from labctl.plan.experiment import ExperimentError

ROOT = Path(__file__).resolve().parent.parent


def plan(text: str, seed: int | None = None) -> experiment.Plan:
    return experiment.parse(text, "exp.toml", seed)


def refused(text: str) -> str:
    with pytest.raises(ExperimentError) as caught:
        plan(text)
    message = str(caught.value)
    assert all(line.startswith("exp.toml: ") for line in message.splitlines()), message
    return message


BASE = 'name = "t"\norder = "grid"\n'


def test_every_combination_of_the_axes_is_a_point():
    p = plan(BASE + '''
[[grid]]
kernel = "skynet"
params = { leaves = 100 }
axes = { branching = [2, 3, 10], deregister = [false, true] }
''')
    assert len(p.points) == 6
    assert [(x.params["branching"], x.params["deregister"]) for x in p.points] == [
        (2, False), (2, True), (3, False), (3, True), (10, False), (10, True)]
    assert all(x.params["leaves"] == 100 and x.params["dispatcher"] == "one_thread" for x in p.points)


def test_exclude_rules_drop_matching_combinations():
    p = plan(BASE + '''
[[grid]]
kernel = "skynet"
axes = { branching = [2, 3, 10], deregister = [false, true] }
exclude = [ { branching = [2, 3], deregister = true }, { branching = 10, deregister = false } ]
''')
    assert [(x.params["branching"], x.params["deregister"]) for x in p.points] == [
        (2, False), (3, False), (10, True)]
    assert any("3 combinations excluded" in note for note in p.notes)


def test_parameters_that_do_not_apply_to_a_dispatcher_are_left_out_and_points_merge():
    p = plan(BASE + '''
[[grid]]
kernel = "ping_pong"
axes = { dispatcher = ["one_thread", "thread_pool"], threads = [1, 2], fifo = ["cooperation", "individual"] }
''')
    one_thread = [x for x in p.points if x.params["dispatcher"] == "one_thread"]
    pool = [x for x in p.points if x.params["dispatcher"] == "thread_pool"]
    assert len(one_thread) == 1 and "threads" not in one_thread[0].params
    assert len(pool) == 4
    assert any("left out" in note for note in p.notes)


def test_the_random_order_is_reproducible_from_its_seed():
    text = 'name = "t"\n[[grid]]\nkernel = "skynet"\naxes = { branching = [2, 3, 4, 5, 6, 7, 8] }\n'
    first, second = plan(text, seed=7), plan(text, seed=7)
    assert [x.key for x in first.points] == [x.key for x in second.points]
    assert first.seed == 7 and first.order == "random"
    assert sorted(x.key for x in first.points) == sorted(x.key for x in plan(text, seed=8).points)
    assert plan(text).seed is not None  # drawn, and recorded


def test_grid_settings_override_the_experiment_and_keys_identify_points():
    p = plan('name = "t"\nrepeats = 4\nwarmup = 2\ntimeout_s = 30\nrlimit_mb = 512\n' + '''
[[grid]]
kernel = "skynet"
repeats = 9
env = { LABCTL_FAULT = "none" }
cpus = "0"
[[grid]]
kernel = "ping_pong"
timeout_s = 5.5
rlimit_mb = 1024
''')
    point, other = sorted(p.points, key=lambda x: x.kernel != "skynet")
    assert (point.repeats, point.warmup, point.timeout_s, point.rlimit_mb) == (9, 2, 30, 512)
    assert (other.repeats, other.timeout_s, other.rlimit_mb) == (4, 5.5, 1024)
    assert point.env == {"LABCTL_FAULT": "none"}
    assert point.cpus == (sorted(os.sched_getaffinity(0))[0],)
    again = plan('name = "other"\n[[grid]]\nkernel = "skynet"\nrepeats = 1\nenv = { LABCTL_FAULT = "none" }\ncpus = "0"\n')
    assert again.points[0].key == point.key


def test_every_experiment_in_the_repository_is_valid():
    files = sorted((ROOT / "experiments").glob("*.toml"))
    assert files
    for path in files:
        assert experiment.load(path).points, path
        assert experiment.load(path, scale="full").points, path


def test_scale_full_merges_each_grids_full_table_over_its_params_and_axes():
    text = BASE + '''
[[grid]]
kernel = "skynet"
params = { leaves = 1000, branching = 10 }
axes = { dispatcher = ["thread_pool"], threads = [1, 2] }
full = { params = { leaves = 1_000_000 }, axes = { threads = [1, 2, 4, 8] } }

[[grid]]
kernel = "ping_pong"
'''
    default, full = plan(text), experiment.parse(text, "exp.toml", scale="full")
    assert [(p.params["leaves"], p.params["threads"]) for p in default.points[:2]] == [(1000, 1), (1000, 2)]
    assert [(p.params["leaves"], p.params["threads"]) for p in full.points[:4]] == [
        (1_000_000, 1), (1_000_000, 2), (1_000_000, 4), (1_000_000, 8)]
    assert all(p.params["branching"] == 10 for p in full.points[:4])
    assert default.points[2].key == full.points[4].key  # a grid without `full` is unchanged
    with pytest.raises(ExperimentError, match=r"unknown scale 'huge' \(scales: default, full\)"):
        experiment.parse(text, "exp.toml", scale="huge")


REFERENCE = BASE + '''
[[grid]]
kernel = "skynet"
axes = { dispatcher = ["one_thread", "thread_pool"] }

[[reference]]
title = "skynet per dispatcher"
source = "seeds/003, the pool table"
hardware = "8 cores"
kernel = "skynet"
unit = "s"
where = { leaves = 1_000_000 }
study = { statistic = "best", runs = 5, params = { leaves = 1_000_000 } }
'''


def test_a_reference_keeps_its_published_figures_and_what_they_correspond_to():
    p = plan(REFERENCE + '''figures = [ { dispatcher = "one_thread", value = 1.5, name = "one thread" },
            { dispatcher = "thread_pool", fifo = "individual", threads = 8, value = 14.5, name = "pool of 8", study = { threads = 16 } },
            { peer = "Go 1.8", value = 0.9 } ]
''')
    [ref] = p.references
    assert (ref.kernel, ref.metric, ref.unit, ref.lower_is_better, ref.where) == (
        "skynet", "elapsed_ns", "s", True, {"leaves": 1_000_000})
    assert [(f.value, f.params, f.peer) for f in ref.figures] == [
        (1.5, {"dispatcher": "one_thread"}, None),
        (14.5, {"dispatcher": "thread_pool", "fifo": "individual", "threads": 8}, None),
        (0.9, {}, "Go 1.8")]
    assert ref.figures[1].label == "dispatcher=thread_pool, fifo=individual, threads=8"
    assert (ref.figures[1].published_as, ref.figures[1].study) == ("pool of 8", {"threads": 16})
    assert (ref.study.statistic, ref.study.runs, ref.study.params) == ("best", 5, {"leaves": 1_000_000})
    assert ref.study_params(ref.figures[1]) == {"leaves": 1_000_000, "threads": 16}
    throughput = plan(REFERENCE.replace('unit = "s"', 'unit = "msgs/s"\nmetric = "msgs_per_s"')
                      + 'figures = [ { value = 1 } ]\n')
    assert throughput.references[0].lower_is_better is False


@pytest.mark.parametrize("figures, words", [
    ('[ { dispatcher = "one_thred", value = 1 } ]', ["reference[0].figures[0].dispatcher: 'one_thred' is not one_thread | "]),
    ('[ { leafs = 3, value = 1 } ]', ["reference[0].figures[0].leafs: unknown parameter of skynet"]),
    ('[ { leaves = "many", value = 1 } ]', ["reference[0].figures[0].leaves: must be an integer (1..100000000), got 'many'"]),
    ('[ { dispatcher = "one_thread", value = 0 } ]', ["reference[0].figures[0].value: Input should be greater than 0"]),
    ('[ { dispatcher = "one_thread" } ]', ["reference[0].figures: none gives a value: a reference records"]),
    ('[ { dispatcher = "one_thread", name = "a", outcome = "crashed" }, { peer = "Go", value = 1 } ]',
     ["reference[0].figures[0].outcome: only a peer's figure has an outcome"]),
    ('[ { dispatcher = "one_thread", name = "a" }, { peer = "Go", value = 1, outcome = "crashed" } ]',
     ["reference[0].figures[1]: a peer's figure gives a value or an outcome"]),
    ('[ { dispatcher = "one_thread", name = "a" }, { peer = "Go" } ]',
     ["reference[0].figures[1]: a peer's figure gives a value or an outcome"]),
    ('[ { dispatcher = "one_thread", name = "a" }, { peer = "Go", outcome = "" } ]',
     ["reference[0].figures[1].outcome: String should have at least 1 character"]),
    ('[ { dispatcher = "one_thread", name = "a", not_run = "no package" }, { peer = "Go", value = 1 } ]',
     ["reference[0].figures[0].not_run: only a peer's figure is not run here"]),
    ('[ { dispatcher = "one_thread", name = "a" }, { peer = "Go", value = 1, not_run = "" } ]',
     ["reference[0].figures[1].not_run: String should have at least 1 character"]),
    ('[ { peer = "Go", threads = 2, value = 1 } ]', ["reference[0].figures[0]: a peer's figure names no parameters of ours (got threads)"]),
    ('[ { peer = "Go", value = 1 } ]', ["reference[0].figures: no figure corresponds to a point of ours"]),
    ('[]', ["reference[0].figures: List should have at least 1 item"]),
    ('[ { dispatcher = "one_thread", value = 1 }, { peer = "Go", value = 1 } ]',
     ["reference[0].figures[0]: no name: where a table lists the study's other runtimes"]),
    ('[ { dispatcher = "one_thread", value = 1, study = { leafs = 2 } } ]',
     ["reference[0].figures[0].study.leafs: unknown parameter of skynet"]),
])
def test_a_bad_reference_is_refused_naming_the_key(figures, words):
    message = refused(REFERENCE + f"figures = {figures}\n")
    for word in words:
        assert word in message


def test_a_reference_records_what_the_study_ran():
    assert "reference[0].study: missing (required)" in refused(
        REFERENCE.replace('study = { statistic = "best", runs = 5, params = { leaves = 1_000_000 } }\n', "")
        + "figures = [ { value = 1 } ]\n")
    assert "reference[0].study.statistic:" in refused(
        REFERENCE.replace('statistic = "best"', 'statistic = "typical"') + "figures = [ { value = 1 } ]\n")
    assert "reference[0].study.params.leaves: must be an integer" in refused(
        REFERENCE.replace("params = { leaves = 1_000_000 }", 'params = { leaves = "1M" }')
        + "figures = [ { value = 1 } ]\n")


def test_a_reference_must_name_a_kernel_the_file_runs_and_say_where_it_comes_from():
    assert "reference[0].kernel: no grid of this file runs 'ping_pong'" in refused(
        REFERENCE.replace('kernel = "skynet"\nunit', 'kernel = "ping_pong"\nunit') + "figures = [ { value = 1 } ]\n")
    assert "reference[0].hardware: missing (required)" in refused(
        REFERENCE.replace('hardware = "8 cores"\n', "") + "figures = [ { value = 1 } ]\n")
    assert "reference[0].per: unknown parameter of skynet" in refused(
        REFERENCE + 'per = "leafs"\nfigures = [ { value = 1 } ]\n')


@pytest.mark.parametrize(
    "text, words",
    [
        ('name = "t"\n[[grid]\nkernel = "skynet"', ["not valid TOML"]),
        ('name = "t"\ncolour = "red"\n[[grid]]\nkernel = "skynet"', ["colour: unknown key"]),
        ('[[grid]]\nkernel = "skynet"', ["name: missing (required)"]),
        ('name = "t"', ["grid: missing (required)"]),
        ('name = "t"\ngrid = []', ["grid: List should have at least 1 item"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\nlevels = 3', ["grid[0].levels: unknown key"]),
        ('name = "t"\n[[grid]]\nparams = {}', ["grid[0].kernel: missing (required)"]),
        ('name = "t"\nrepeats = "three"\n[[grid]]\nkernel = "skynet"', ["repeats:", "'three'"]),
        ('name = "t"\nrepeats = 0\n[[grid]]\nkernel = "skynet"', ["repeats: Input should be greater than or equal to 1"]),
        ('name = "t"\norder = "shuffled"\n[[grid]]\nkernel = "skynet"', ["order:", "'random' or 'grid'"]),
        ('name = "t"\n[[grid]]\nkernel = "skynot"', ["grid[0].kernel: unknown kernel 'skynot' (kernels: actor_creation, chat, counting_actor, fan"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\nparams = { leafs = 1 }',
         ["grid[0].params.leafs: unknown parameter of skynet (parameters: runtime, leaves, branching"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\naxes = { leaves = [10, 0] }',
         ["grid[0].axes.leaves:", "must be integer from 1 to 100000000, got 0"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\naxes = { leaves = [] }', ["grid[0].axes.leaves: List should have at least 1 item"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\naxes = { leaves = [[1]] }', ["grid[0].axes.leaves[0]"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\nparams = { leaves = 5 }\naxes = { leaves = [1] }',
         ["grid[0].axes.leaves: also fixed in params"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\naxes = { branching = [2] }\nexclude = [ { branching = 2 } ]',
         ["grid[0]: empty grid: every combination is excluded"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\nexclude = [ { colour = 2 } ]',
         ["grid[0].exclude[0].colour: unknown parameter"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\naxes = { fifo = ["individual"] }',
         ["grid[0].axes.fifo: applies to none of the grid's points (it applies with runtime: labctl; dispatcher on labctl: thread_pool, work_stealing)"]),
        ('name = "t"\n[[grid]]\nkernel = "ping_pong"\nparams = { messages = 3 }', ["grid[0].params.messages:", "must be even"]),
        ('name = "t"\n[[grid]]\nkernel = "ping_pong"\nparams = { pin = "0-999" }', ["grid[0].params.pin:", "outside the allowed set"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\ncpus = "999"', ["grid[0].cpus: core 999 is outside"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\ncpus = "x"', ["grid[0].cpus: 'x' is not a core list"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\ncpus = "1-0"', ["grid[0].cpus: '1-0' is not a core list"]),
        # A huge range is refused before it is built.
        ('name = "t"\n[[grid]]\nkernel = "skynet"\ncpus = "0-99999999999"',
         ["grid[0].cpus: core 99999999999 is outside"]),
        # Settings are strict, and bounded to what their use can take.
        ('name = "t"\nrepeats = true\n[[grid]]\nkernel = "skynet"', ["repeats: Input should be a valid integer, got True"]),
        ('name = "t"\nwarmup = 1.0\n[[grid]]\nkernel = "skynet"', ["warmup: Input should be a valid integer, got 1.0"]),
        ('name = "t"\ntimeout_s = "60"\n[[grid]]\nkernel = "skynet"', ["timeout_s: Input should be a valid number, got '60'"]),
        ('name = "t"\ntimeout_s = inf\n[[grid]]\nkernel = "skynet"', ["timeout_s: Input should be a finite number, got inf"]),
        ('name = "t"\ntimeout_s = nan\n[[grid]]\nkernel = "skynet"', ["timeout_s: Input should be a finite number"]),
        ('name = "t"\ntimeout_s = 1e300\n[[grid]]\nkernel = "skynet"',
         ["timeout_s: Input should be less than or equal to 604800"]),
        ('name = "t"\nrlimit_mb = 0\n[[grid]]\nkernel = "skynet"', ["rlimit_mb: Input should be greater than or equal to 1, got 0"]),
        ('name = "t"\nrlimit_mb = -5\n[[grid]]\nkernel = "skynet"', ["rlimit_mb: Input should be greater than or equal to 1"]),
        ('name = "t"\nrlimit_mb = "lots"\n[[grid]]\nkernel = "skynet"', ["rlimit_mb: Input should be a valid integer, got 'lots'"]),
        ('name = "t"\nrlimit_mb = "300"\n[[grid]]\nkernel = "skynet"', ["rlimit_mb: Input should be a valid integer, got '300'"]),
        ('name = "t"\nrlimit_mb = 1.5\n[[grid]]\nkernel = "skynet"', ["rlimit_mb: Input should be a valid integer, got 1.5"]),
        ('name = "t"\nrlimit_mb = true\n[[grid]]\nkernel = "skynet"', ["rlimit_mb: Input should be a valid integer, got True"]),
        ('name = "t"\nrlimit_mb = 1099511627776\n[[grid]]\nkernel = "skynet"',
         ["rlimit_mb: Input should be less than or equal to 1073741824"]),
        ('name = "t"\n[[grid]]\nkernel = "skynet"\nrlimit_mb = 0', ["grid[0].rlimit_mb: Input should be greater than or equal to 1"]),
        ('name = "t"\nseed = 99999999999999999999\n[[grid]]\nkernel = "skynet"',
         ["seed: Input should be less than or equal to 9223372036854775807"]),
        ('name = "t"\nseed = "7"\n[[grid]]\nkernel = "skynet"', ["seed: Input should be a valid integer, got '7'"]),
        # A newline or carriage return quoted from the file is escaped: each problem is one line.
        (r'name = "t"' '\n[[grid]]\nkernel = "skynet"\n' r'params = { leaves = "a\rb" }',
         [r"grid[0].params.leaves:", r"got 'a\rb'"]),
        (r'name = "t"' '\n[[grid]]\n' r'kernel = "sky\nnet"', [r"unknown kernel 'sky\nnet'"]),
        (r'name = "t"' '\n[[grid]]\nkernel = "skynet"\n' r'env = { "a\nb" = 1 }', [r"grid[0].env.a\nb:"]),
    ],
)
def test_a_bad_file_is_refused_naming_the_key_and_what_is_allowed(text, words):
    message = refused(text)
    for word in words:
        assert word in message


def test_a_missing_file_is_refused_naming_the_shipped_experiments(tmp_path):
    with pytest.raises(ExperimentError, match="no such file.*experiments: .*quickstart"):
        experiment.load(tmp_path / "missing.toml")


def test_an_unreadable_file_is_refused(tmp_path):
    path = tmp_path / "locked.toml"
    path.write_text('name = "x"\n')
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads anything: a folder is what it cannot read as a file
        path = tmp_path / "folder.toml"
        path.mkdir()
        with pytest.raises(ExperimentError, match="not a regular file"):
            experiment.load(path)
        return
    with pytest.raises(ExperimentError, match="cannot read"):
        experiment.load(path)


@pytest.mark.parametrize("metric, fine", [
    ("elapsed_ns", True), ("msgs_per_s", True), ("instructions", True),  # a sample's, a count
    ("agents", True), ("ns_per_agent", True),  # skynet declares them
    ("round_trip_p50_ns", False),  # ping_pong's, not skynet's
    ("agent", False), ("", False)])
def test_a_reference_names_a_figure_its_kernel_records(metric, fine):
    """The oracle: skynet records the sample's figures and agents, ns_per_agent (what skynet.cpp
    pushes), nothing of ping_pong's; a reference naming another figure would match no sample."""
    text = (REFERENCE.replace('unit = "s"', f'unit = "s"\nmetric = "{metric}"')
            + 'figures = [ { dispatcher = "one_thread", value = 1 } ]\n')
    if fine:
        assert plan(text).references[0].metric == metric
        return
    with pytest.raises(ExperimentError, match=rf"reference\[0\]\.metric: '{metric}' is no figure skynet "
                                              r"records \(its figures: elapsed_ns, .*agents"):
        plan(text)


def test_a_claim_names_a_figure_both_its_kernels_record():
    text = BASE + '''
[[grid]]
kernel = "skynet"

[[grid]]
kernel = "ping_pong"

[[claim]]
title = "t"
source = "s"
metric = "round_trip_p50_ns"
numerator = { kernel = "ping_pong" }
denominator = { kernel = "skynet" }
ratio = 1.0

[claim.study]
statistic = "best"
'''
    with pytest.raises(ExperimentError, match=r"claim\[0\]\.metric: 'round_trip_p50_ns' is no figure skynet records"):
        plan(text)
    assert plan(text.replace("round_trip_p50_ns", "elapsed_ns")).claims[0].metric == "elapsed_ns"


NAMED = '''
name = "named"
repeats = 1
warmup = 0
[[grid]]
kernel = "skynet"
scenario = "small"
params = { leaves = 100 }
axes = { dispatcher = ["one_thread", "work_stealing"] }
full = { params = { leaves = 200 } }
[[grid]]
kernel = "skynet"
scenario = "large"
params = { leaves = 1000, dispatcher = "one_thread" }
'''


@pytest.mark.parametrize("scale, small", [("default", 100), ("full", 200)])
def test_a_grids_scenario_names_the_kernels_own_parameters_it_fixes_at_the_scale_planned(scale, small):
    plan = experiment.parse(NAMED, "named.toml", scale=scale)
    assert [(s.kernel, s.name, s.params) for s in plan.catalogue.scenarios] == [
        ("skynet", "small", {"leaves": small}), ("skynet", "large", {"leaves": 1000})]  # not the dispatcher
    assert plan.catalogue.scenario("skynet", {"leaves": 1000, "dispatcher": "work_stealing"}) == "large"
    assert plan.catalogue.scenario("skynet", {"leaves": 7}) is None
    again = type(plan.catalogue).from_json(plan.catalogue.to_json())
    assert again.scenarios == plan.catalogue.scenarios


@pytest.mark.parametrize("text, words", [
    ('[[grid]]\nkernel = "skynet"\nscenario = "s"\naxes = { leaves = [1, 2] }\n', "varies leaves on an axis"),
    ('[[grid]]\nkernel = "skynet"\nscenario = "s"\nparams = { leaves = 1 }\n'
     '[[grid]]\nkernel = "skynet"\nscenario = "s"\nparams = { leaves = 2 }\n', "'s' names another work of skynet"),
    ('[[grid]]\nkernel = "skynet"\nscenario = "s"\nparams = { leaves = 1 }\n'
     '[[grid]]\nkernel = "skynet"\nscenario = "t"\nparams = { leaves = 1, dispatcher = "one_thread" }\n',
     "names the same work of skynet 's'"),
    ('[[grid]]\nkernel = "skynet"\nscenario = "<b>x</b>"\n', "grid.0.scenario"),
    ('[[grid]]\nkernel = "skynet"\nscenario = ""\n', "grid.0.scenario"),
])
def test_a_scenario_that_is_not_one_name_for_one_work_is_refused(text, words):
    with pytest.raises(experiment.ExperimentError) as raised:
        experiment.parse('name = "x"\n' + text, "x.toml")
    assert words in str(raised.value).replace("[", ".").replace("]", "")
