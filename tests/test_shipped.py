"""What an installed labctl carries with it: the experiment files, runnable by name; the studies
cited by their publications, never by a path outside the repository; and optional runtimes and
allocators found the way the machine really finds them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from labctl.catalogue import runtimes, studies
from labctl.plan import experiment

ROOT = Path(__file__).resolve().parent.parent
STUDY_EXPERIMENTS = ("sobjectizer_tales22", "theron_303", "libcppa_2012", "skynet_fibers",
                     "machinate_shootout")


def test_nothing_in_the_repository_points_outside_it():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                             check=True).stdout.decode().split("\0")
    offenders = []
    for name in filter(None, tracked):
        path = ROOT / name
        if path.suffix in (".png", ".svg", ".ipynb") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "shared" + "/seeds" in text or "../" + "shared" in text:
            offenders.append(name)
    assert offenders == []


def test_every_shipped_experiment_loads_by_name_and_cites_known_studies():
    shipped = experiment.shipped_experiments()
    assert {"quickstart", "runtimes", *STUDY_EXPERIMENTS} <= set(shipped)
    for name in shipped:
        plan = experiment.load(name, seed=1)
        assert plan.source == name and plan.points
        for study in plan.studies:
            assert study.url.startswith(("http://", "https://")) and study.title and study.year
    for name in STUDY_EXPERIMENTS:
        assert experiment.load(name).studies, f"{name} cites no study"


@pytest.mark.parametrize("scale", ["default", "full"])
@pytest.mark.parametrize("name", STUDY_EXPERIMENTS)
def test_every_published_figure_stands_for_exactly_one_point_at_both_scales(name, scale):
    plan = experiment.load(name, scale=scale)
    for reference in plan.references:
        for figure in reference.figures:
            if figure.peer is not None:
                continue
            wanted = {**reference.where, **figure.params}
            matching = [point for point in plan.points if point.kernel == reference.kernel
                        and all(key in point.params and point.params[key] == value
                                for key, value in wanted.items())]
            assert len(matching) == 1, (reference.title, wanted, len(matching))


def test_a_path_wins_over_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("quickstart").write_text('name = "mine"\n[[grid]]\nkernel = "skynet"\n'
                                  'params = { leaves = 10 }\n', encoding="utf-8")
    assert experiment.load("quickstart").name == "mine"


def test_an_unknown_study_key_names_the_known_ones():
    with pytest.raises(experiment.ExperimentError, match="unknown study 'nope'.*theron_303"):
        experiment.parse('name = "a"\nstudy = "nope"\n[[grid]]\nkernel = "skynet"\n', "a.toml")


def test_an_experiment_may_cite_a_publication_labctl_does_not_know():
    plan = experiment.parse('name = "a"\n[[study]]\ntitle = "My runtime"\nauthor = "Me"\nyear = 2026\n'
                            'url = "https://example.org/mine"\n[[grid]]\nkernel = "skynet"\n', "a.toml")
    [study] = plan.studies
    assert study.citation == '"My runtime", Me, 2026. https://example.org/mine'


def test_every_study_of_the_table_is_cited_by_a_kernel_or_an_experiment():
    from labctl.catalogue import kernels

    cited = {key for k in kernels.catalogue().values() for key, _ in k.sources}
    cited |= {s.key for name in experiment.shipped_experiments() for s in experiment.load(name).studies}
    assert set(studies.catalogue()) == cited


def test_labctl_experiments_lists_name_study_points_and_estimate(labctl, tmp_path):
    result = labctl("experiments", "--db", str(tmp_path / "none.db"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    row = next(line for line in lines if line.startswith("theron_303 "))
    assert "Ashton Mason, 2012" in row and " 17 " in row and "~" in row  # never run: a guess
    assert not (tmp_path / "none.db").exists()


def test_the_quickstarts_estimate_is_within_twice_or_half_of_its_committed_run():
    """With no store to go by, the estimate of the main job is a guess; on the machine of its
    committed report (2 quiet cores) it lies within a factor 2 of what the run took, the report's
    start to finish (12 s at load 1; the guess is 11 s). A busy machine's slowdown is not in it:
    the run took 59 s at load 1.7 and 110 s at load 11, where its two points that pass one
    message at a time between spinning threads park and wake for each."""
    import re
    from datetime import datetime

    from labctl.run import runner

    report = (Path(__file__).resolve().parent.parent / "reports" / "quickstart" / "report.md").read_text()
    started, finished = (datetime.strptime(t, "%Y-%m-%d %H:%M:%S") for t in re.search(
        r"started (\S+ \S+) UTC, finished (\S+ \S+) UTC", report).groups())
    took = (finished - started).total_seconds()
    guess = runner.estimate(experiment.load("quickstart", seed=0))
    assert guess.is_guess and took / 2 <= guess.seconds <= took * 2, (guess.seconds, took)
    assert "plus about 0.3 s to start its worker" in guess.text()


def test_plan_and_sweep_take_a_name_and_an_unknown_name_lists_the_known(labctl, tmp_path):
    planned = labctl("plan", "quickstart", "--db", str(tmp_path / "r.db"))
    assert planned.returncode == 0 and "quickstart" in planned.stdout
    for command in ("plan", "sweep"):
        result = labctl(command, "quickstat", "--db", str(tmp_path / "r.db"))
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "quickstat: no such file" in result.stderr and "quickstart" in result.stderr
    assert not (tmp_path / "r.db").exists()


def test_sweep_file_resume_run_is_taken_when_file_is_the_runs_own(labctl, tmp_path):
    db = str(tmp_path / "r.db")
    mine = tmp_path / "mine.toml"
    other = tmp_path / "other.toml"
    text = 'name = "mine"\nrepeats = 1\nwarmup = 0\n[[grid]]\nkernel = "skynet"\nparams = { leaves = 100 }\n'
    mine.write_text(text, encoding="utf-8")
    other.write_text(text.replace("100", "200"), encoding="utf-8")
    first = labctl("sweep", str(mine), "--db", db, env={"LABCTL_FAULT": "crash"})
    assert first.returncode == 1
    resumed = labctl("sweep", str(mine), "--resume", "1", "--retry-failed", "--db", db)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming mine" in resumed.stdout
    refused = labctl("sweep", str(other), "--resume", "1", "--db", db)
    assert refused.returncode == 2
    assert str(mine) in refused.stderr and str(other) in refused.stderr


def test_resuming_never_creates_a_store(labctl, tmp_path):
    result = labctl("sweep", "--resume", "1", "--db", str(tmp_path / "none.db"))
    assert result.returncode == 2 and "no such store" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_library_the_linker_cache_names_but_that_is_gone_is_missing(tmp_path, monkeypatch):
    libm = runtimes.find_shared_library("libm.so.6")
    assert libm is not None  # glibc's: always there
    shutil.copy(libm, tmp_path / "libcopy.so.1")
    (tmp_path / "libtext.so.1").write_text("not a library")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    assert runtimes.find_shared_library("libcopy.so.1") == str(tmp_path / "libcopy.so.1")
    assert runtimes.find_shared_library("libtext.so.1") is None
    assert runtimes.find_shared_library("libgone.so.1") is None


@pytest.mark.parametrize("scale, threads", [("default", {1, 2}), ("full", {1, 2, 4, 8, 16})])
def test_scaling_sweeps_six_kernels_over_threads_on_every_pool_beside_the_floors(scale, threads):
    from labctl.catalogue import kernels

    plan = experiment.load("scaling", scale=scale)
    swept = ["skynet", "ping_pong", "one_to_many", "thread_ring", "producer_consumer", "counting_actor"]
    # every dispatcher that takes `threads` is a pool here
    pools = {d for d in kernels.get("skynet").param("dispatcher").choices
             if d in kernels.get("skynet").param("threads").applies_to}
    for kernel in swept:
        points = [p.params for p in plan.points if p.kernel == kernel]
        assert any(p["dispatcher"] == "one_thread" for p in points), kernel
        for pool in pools:
            assert {p["threads"] for p in points if p["dispatcher"] == pool} == threads, (kernel, pool)
    floors = {name for name, spec in kernels.catalogue().items() if spec.floor_of}
    assert floors and floors <= {p.kernel for p in plan.points}
