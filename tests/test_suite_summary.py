"""A suite's groups (`group` of a grid: Savina's micro, concurrency...): kept with the run's
catalogue, refused when a kernel is put in two, and summarised by the report, per group, as each
configuration's geometric mean of its median over the best one's, computed here again from the
store's samples."""

from __future__ import annotations

import math
import re
import statistics

import pytest

from labctl import _native, results
from labctl.read import analysis
from labctl.plan import experiment
from labctl.plan.experiment import ExperimentError
from labctl.vocabulary import schema

SUITE = '''
name = "tiny suite"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 60

[[grid]]
kernel = "ping_pong"
group = "micro"
params = { messages = 4000 }
axes = { dispatcher = ["one_thread", "active_obj"] }

[[grid]]
kernel = "counting_actor"
group = "micro"
params = { messages = 4000 }
axes = { dispatcher = ["one_thread", "active_obj"] }

[[grid]]
kernel = "skynet"
group = "trees"
params = { leaves = 2000 }
axes = { dispatcher = ["one_thread", "work_stealing"] }

[[grid]]
kernel = "thread_ring"
params = { actors = 8, hops = 1000, dispatcher = "one_thread" }
'''


def test_each_grouped_kernel_keeps_its_group_in_the_runs_catalogue():
    plan = experiment.parse(SUITE, "suite.toml")
    assert plan.catalogue.groups == {"ping_pong": "micro", "counting_actor": "micro", "skynet": "trees"}
    back = schema.Catalogue.from_json(plan.catalogue.to_json())
    assert back.groups == plan.catalogue.groups
    # A run stored before groups existed has none.
    assert schema.Catalogue.from_json({k: v for k, v in plan.catalogue.to_json().items() if k != "groups"}).groups == {}


def test_a_kernel_in_two_groups_is_refused_naming_both_grids():
    text = SUITE + '\n[[grid]]\nkernel = "skynet"\ngroup = "micro"\nparams = { leaves = 100 }\n'
    with pytest.raises(ExperimentError) as caught:
        experiment.parse(text, "suite.toml")
    assert str(caught.value) == ("suite.toml: grid[4].group: kernel 'skynet' is in group 'trees' in grid[2]; "
                                 "a kernel belongs to one group")


@pytest.mark.parametrize("group", ["", "a|b", "two\nlines", "x" * 41, " leading", "<b>"])
def test_a_group_name_that_would_break_the_report_is_refused(group):
    text = SUITE.replace('group = "trees"', f"group = {group!r}".replace("'", '"') if "\n" not in group
                         else 'group = "two\\nlines"')
    with pytest.raises(ExperimentError) as caught:
        experiment.parse(text, "suite.toml")
    assert "group" in str(caught.value)


def test_the_report_summarises_each_group_as_the_samples_say(tmp_path, labctl):
    (tmp_path / "suite.toml").write_text(SUITE)
    db = tmp_path / "suite.db"
    swept = labctl("sweep", str(tmp_path / "suite.toml"), "--db", str(db))
    assert swept.returncode == 0, swept.stderr
    reported = labctl("report", "1", "--db", str(db), "--out", str(tmp_path / "report"))
    assert reported.returncode == 0, reported.stderr
    text = (tmp_path / "report" / "report.md").read_text()
    section = text.split("## Across the suite", 1)[1].split("\n## ", 1)[0]

    # The oracle: each point's median from the samples, each configuration's ratio to the best of
    # its kernel, their geometric mean per group; thread_ring, in no group, in none.
    samples = results.load(db, 1)
    medians = {(kernel, dispatcher): statistics.median(part["elapsed_ns"])
               for (kernel, dispatcher), part in samples.groupby(["kernel", "dispatcher"])}
    expected = {}
    for group, kernels in {"micro": ["ping_pong", "counting_actor"], "trees": ["skynet"]}.items():
        dispatchers = {d for k, d in medians if k in kernels}
        ratios = {d: [medians[k, d] / min(medians[k, e] for e in dispatchers if (k, e) in medians)
                      for k in kernels if (k, d) in medians] for d in dispatchers}
        expected[group] = {f"labctl {d}": math.exp(sum(map(math.log, r)) / len(r)) for d, r in ratios.items()}
    for group, configurations in expected.items():
        table = section.split(f"### {group}", 1)[1].split("###", 1)[0]
        rows = re.findall(r"^\| *(\d+) \| ([^|]+?) +\| +([\d.]+)x \| (\d+) of (\d+) \|", table, re.MULTILINE)
        assert {name: float(mean) for _, name, mean, _, _ in rows} == pytest.approx(configurations, abs=0.006)
        assert all((ran, of) == (str(2 if group == "micro" else 1),) * 2 for _, _, _, ran, of in rows)
        assert [float(mean) for _, _, mean, _, _ in rows] == sorted(float(mean) for _, _, mean, _, _ in rows)
        assert float(rows[0][2]) == pytest.approx(min(configurations.values()), abs=0.006)
    assert "thread_ring" not in section


CAF_BUILT_IN = any(k["name"] == "caf_ping_pong" for k in _native.kernels())

RUNTIMES_SUITE = '''
name = "two runtimes"
order = "grid"
repeats = 3
warmup = 0
timeout_s = 60

[[grid]]
kernel = "ping_pong"
group = "micro"
params = { messages = 4000 }
axes = { runtime = ["labctl", "caf"], dispatcher = ["one_thread", "thread_pool", "active_obj"], threads = [1, 2] }

[[grid]]
kernel = "counting_actor"
group = "micro"
params = { messages = 4000, runtime = "labctl" }
axes = { dispatcher = ["one_thread", "thread_pool"], threads = [1, 2] }
'''


@pytest.mark.skipif(not CAF_BUILT_IN, reason="labctl._native was built without CAF (libcaf-dev)")
def test_the_report_ranks_the_runtimes_of_each_group_at_each_thread_count(tmp_path, labctl):
    (tmp_path / "suite.toml").write_text(RUNTIMES_SUITE)
    db = tmp_path / "suite.db"
    assert labctl("sweep", str(tmp_path / "suite.toml"), "--db", str(db)).returncode == 0
    assert labctl("report", "1", "--db", str(db), "--out", str(tmp_path / "report")).returncode == 0
    section = (tmp_path / "report" / "report.md").read_text().split("## Across the suite", 1)[1].split("\n## ", 1)[0]

    # The oracle: per thread count, each runtime's best point median on each kernel (ours'
    # one_thread counts at 1 thread; active_obj, a thread per agent, at none), over the best
    # runtime's; their geometric mean over the kernels each ran (CAF: ping_pong alone).
    samples = results.load(db, 1)
    samples["at"] = samples["threads"].where(samples["dispatcher"] != "one_thread", 1)
    samples = samples[samples["at"].notna() & (samples["dispatcher"] != "active_obj")]
    medians = samples.groupby(["at", "kernel", "runtime", "point"])["elapsed_ns"].median()
    best = medians.groupby(level=["at", "kernel", "runtime"]).min()
    for threads in (1, 2):
        at = best.loc[threads]
        ratios: dict[str, list[float]] = {}
        for (kernel, runtime), value in at.items():
            ratios.setdefault(runtime, []).append(value / at.loc[kernel].min())
        table = section.split(f"Runtimes at {threads} thread", 1)[1].split("\n\n", 2)[1]
        rows = re.findall(r"^\| (\d) \| (\w+) \| ([\d.]+)x \| (\d) of 2 \| ([^|]+) \|", table, re.MULTILINE)
        assert [runtime for _, runtime, _, _, _ in rows] == ["labctl", "caf"]  # ran both kernels, first
        assert {r: float(mean) for _, r, mean, _, _ in rows} == pytest.approx(
            {r: math.exp(sum(map(math.log, v)) / len(v)) for r, v in ratios.items()}, abs=0.006)
        assert [ran for _, _, _, ran, _ in rows] == ["2", "1"]
        assert rows[1][4].strip() == "-" and rows[0][4].strip().endswith(f"of {threads}")  # CAF counts no busy threads

    # Told apart only past the noise: on ping_pong alone (both runtimes ran it), CAF is within noise
    # of ours where every median's 95% interval spans a factor of 10,000, and told apart where the
    # intervals are points (unless the two medians are equal, which they are not).
    ping_pong = samples[samples["kernel"] == "ping_pong"]
    metric = analysis.kernel_metric(ping_pong)
    table = analysis.point_table(ping_pong, metric)
    for factor, tied in ((100.0, True), (1.0, False)):
        widened = table.assign(ci_low=table["median"] / factor, ci_high=table["median"] * factor)
        for ranked in analysis.runtime_suite({"ping_pong": (metric, widened)}, {"ping_pong": "micro"}):
            assert ranked.table["within_noise"].tolist() == [False, tied], (factor, ranked.table)
    assert "~1" not in section  # the sweep's own: CAF ran one kernel of two, ours both: never tied
