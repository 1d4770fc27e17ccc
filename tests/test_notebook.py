"""notebooks/analysis.ipynb, executed on stores the test makes: every cell runs, the report's
figure comes out as an image and the pivot as a table; every median is one configuration's, shown
in the unit people read (never raw nanoseconds in scientific notation); one point's samples come
out as a figure with its median and interval; a run is compared with the run before it, or the
notebook says why not; a run without a threads axis says so instead of failing; and the notebook
is committed without outputs."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import labctl

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "analysis.ipynb"

THREADS = '''
name = "notebook"
repeats = 3
warmup = 0
timeout_s = 60
[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
axes = { dispatcher = ["one_thread", "thread_pool", "work_stealing"], threads = [1, 2] }
[[grid]]
kernel = "ping_pong"
params = { messages = 10000 }
axes = { dispatcher = ["one_thread", "thread_pool", "work_stealing"], threads = [1, 2] }
'''

# A kernel of neither grid above, on one_thread alone: no threads column at all.
NO_THREADS = '''
name = "ring"
repeats = 2
warmup = 0
[[grid]]
kernel = "thread_ring"
params = { actors = 5, hops = 1000, dispatcher = "one_thread" }
'''


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Run 1: two kernels over three dispatchers and threads 1..2; run 2: thread_ring alone."""
    from conftest import run_labctl

    folder = tmp_path_factory.mktemp("notebook")
    db = folder / "r.db"
    for name, text in (("threads.toml", THREADS), ("ring.toml", NO_THREADS)):
        (folder / name).write_text(text)
        result = run_labctl("sweep", str(folder / name), "--db", str(db))
        assert result.returncode == 0, result.stderr
    return db


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    """Two stores of the one-point ring experiment: `one.db` with a run, `two.db` with two."""
    from conftest import run_labctl

    folder = tmp_path_factory.mktemp("ring")
    (folder / "ring.toml").write_text(NO_THREADS)
    for db in ("one.db", "two.db", "two.db"):
        result = run_labctl("sweep", str(folder / "ring.toml"), "--db", str(folder / db))
        assert result.returncode == 0, result.stderr
    return folder


def execute(db: Path, run: str, tmp_path: Path, monkeypatch,
            base: str | None = None) -> dict[str, nbformat.NotebookNode]:
    """Runs every cell of the notebook on `run` of `db` (against `base`, if given) and returns its
    code cells by id; a cell that raises fails the test with its traceback. A last cell, added
    here, prints where the kernel imported labctl from."""
    monkeypatch.setenv("LABCTL_DB", str(db))
    monkeypatch.setenv("LABCTL_RUN", run)
    if base is None:
        monkeypatch.delenv("LABCTL_BASE", raising=False)
    else:
        monkeypatch.setenv("LABCTL_BASE", base)
    # "python3" is this interpreter, whatever kernel specs the machine holds elsewhere (a user's
    # python3 pointing to another Python, or none in a bare venv): JUPYTER_PATH comes first.
    from ipykernel.kernelspec import write_kernel_spec

    if not (tmp_path / "jupyter").exists():  # a second notebook in one test: the same spec
        write_kernel_spec(tmp_path / "jupyter" / "kernels" / "python3")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    probe = nbformat.v4.new_code_cell("import labctl; print(labctl.__file__)")
    probe.id = "probe"
    notebook.cells.append(probe)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    return {cell.id: cell for cell in notebook.cells if cell.cell_type == "code"}


def text(cell: nbformat.NotebookNode) -> str:
    return "".join(output.get("text", "") for output in cell.outputs)


def data(cell: nbformat.NotebookNode, mime: str) -> list[str]:
    return [output["data"][mime] for output in cell.outputs if mime in output.get("data", {})]


def shown(cell: nbformat.NotebookNode) -> str:
    """All a cell prints and displays, as text and HTML."""
    return text(cell) + "".join(data(cell, "text/html")) + "".join(data(cell, "text/markdown"))


def test_the_notebook_draws_the_reports_figure_and_slices_the_run(store, tmp_path, monkeypatch):
    cells = execute(store, "1", tmp_path, monkeypatch)
    assert text(cells["probe"]).strip() == labctl.__file__, "the kernel ran another labctl"
    assert "store " in text(cells["store"]) and ", run 1" in text(cells["store"])
    assert "30 samples of 10 points; kernels: ping_pong, skynet; 0 with a wrong answer" in \
        text(cells["samples"])
    # the report's line figure, one per kernel, as images
    images = data(cells["figure"], "image/png")
    assert len(images) == 2 and all(len(image) > 5000 for image in images)
    # medians per configuration: a table per kernel, a row per point, grouped by every varying
    # parameter (skynet's 5 points: one_thread, and two dispatchers at threads 1 and 2)
    assert ("skynet: 5 configurations, by dispatcher, threads, max_demands_at_once; interval of "
            "the time per run") in text(cells["by"])
    by = data(cells["by"], "text/html")
    assert len(by) == 2 and "work_stealing" in by[0] and by[1].count("<tr") == 1 + 5
    assert "6 samples of 2 points with {'dispatcher': 'thread_pool', 'threads': 2}" in \
        text(cells["filter"])
    pivots = data(cells["pivot"], "text/html")
    assert len(pivots) == 2 and all("<table" in p and "thread_pool" in p and ">none<" in p for p in pivots)
    assert "95% interval" in text(cells["interval"]) and "over 3 samples" in text(cells["interval"])
    assert "of 10 points are noisy (cv > 10%)" in text(cells["noise"])
    assert "<table" in data(cells["noise"], "text/html")[0]
    # times and rates in their units, never raw nanoseconds in scientific notation
    for name in ("samples", "by", "filter", "pivot", "interval", "noise"):
        assert re.search(r"\d (ns|µs|ms|s)\b|M msgs/s", shown(cells[name])), name
        assert not re.search(r"\de[+-]\d", shown(cells[name])), name
    assert " M msgs/s" in shown(cells["pivot"]) and " ms" in shown(cells["by"])
    # one point's samples, drawn with their median and interval
    [distribution] = data(cells["distribution"], "image/png")
    assert len(distribution) > 5000
    # run 1 has no run before it
    assert "no run before run 1 in this store to compare it with" in text(cells["compare"])


def test_a_run_without_threads_says_so_instead_of_drawing(store, tmp_path, monkeypatch):
    cells = execute(store, "latest", tmp_path, monkeypatch)
    assert "kernels: thread_ring" in text(cells["samples"])
    assert not data(cells["figure"], "image/png")
    assert "thread_ring: no numeric parameter varies in this run, so no line figure" in text(cells["figure"])
    assert "does not have both 'dispatcher' and 'threads'" in text(cells["pivot"])
    assert "0 samples of 0 points" in text(cells["filter"])
    assert "of 1 points are noisy" in text(cells["noise"])


def test_a_run_is_compared_with_the_run_before_it_or_the_one_named(ring, tmp_path, monkeypatch):
    cells = execute(ring / "two.db", "latest", tmp_path, monkeypatch)
    [table] = data(cells["compare"], "text/markdown")
    assert table.startswith("## Run 2 (B) against run 1 (A): elapsed_ns, lower is better")
    assert "| n A/B | median A | median B | B/A (95% CI) |" in table
    assert re.search(r"\| 2/2 \| [\d.]+ (µs|ms) \| [\d.]+ (µs|ms) \|", table)
    named = execute(ring / "two.db", "1", tmp_path, monkeypatch, base="2")
    assert "## Run 1 (B) against run 2 (A)" in data(named["compare"], "text/markdown")[0]


def test_a_store_of_one_run_says_there_is_nothing_to_compare(ring, tmp_path, monkeypatch):
    cells = execute(ring / "one.db", "latest", tmp_path, monkeypatch)
    assert text(cells["compare"]).startswith(
        "this store holds one run only (run 1): nothing to compare it with")
    assert not data(cells["compare"], "text/markdown")
    assert data(cells["distribution"], "image/png")  # 2 samples: no interval, still drawn
    assert "none (fewer than 3 samples)" in text(cells["interval"])


def test_the_notebook_is_committed_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.id for cell in code] == ["store", "samples", "figure", "by", "filter", "pivot",
                                          "interval", "distribution", "noise", "compare"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
