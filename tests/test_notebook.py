"""notebooks/analysis.ipynb, executed on a store the test makes: every cell runs, the report's
figure comes out as an image and the pivot as a table; a run without a threads axis says so instead
of failing; and the notebook is committed without outputs."""

from __future__ import annotations

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


def execute(db: Path, run: str, tmp_path: Path, monkeypatch) -> dict[str, nbformat.NotebookNode]:
    """Runs every cell of the notebook on `run` of `db` and returns its code cells by id; a cell
    that raises fails the test with its traceback. A last cell, added here, prints where the
    kernel imported labctl from."""
    monkeypatch.setenv("LABCTL_DB", str(db))
    monkeypatch.setenv("LABCTL_RUN", run)
    # "python3" is this interpreter, whatever kernel specs the machine holds elsewhere (a user's
    # python3 pointing to another Python, or none in a bare venv): JUPYTER_PATH comes first.
    from ipykernel.kernelspec import write_kernel_spec

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


def test_the_notebook_draws_the_reports_figure_and_slices_the_run(store, tmp_path, monkeypatch):
    cells = execute(store, "1", tmp_path, monkeypatch)
    assert text(cells["probe"]).strip() == labctl.__file__, "the kernel ran another labctl"
    assert "store " in text(cells["store"]) and ", run 1" in text(cells["store"])
    assert "30 samples of 10 points; kernels: ping_pong, skynet; 0 with a wrong answer" in \
        text(cells["samples"])
    # the report's line figure, one per kernel, as images
    images = data(cells["figure"], "image/png")
    assert len(images) == 2 and all(len(image) > 5000 for image in images)
    # medians by dispatcher, the filter, the pivot dispatcher x threads, an interval, the noise
    assert "work_stealing" in data(cells["by"], "text/html")[0]
    assert "6 samples of 2 points with {'dispatcher': 'thread_pool', 'threads': 2}" in \
        text(cells["filter"])
    [pivot] = data(cells["pivot"], "text/html")
    assert "<table" in pivot and "thread_pool" in pivot and ">none<" in pivot
    assert "95% interval" in text(cells["interval"]) and "over 3 samples" in text(cells["interval"])
    assert "of 10 points are noisy (cv > 10%)" in text(cells["noise"])
    assert "<table" in data(cells["noise"], "text/html")[0]


def test_a_run_without_threads_says_so_instead_of_drawing(store, tmp_path, monkeypatch):
    cells = execute(store, "latest", tmp_path, monkeypatch)
    assert "kernels: thread_ring" in text(cells["samples"])
    assert not data(cells["figure"], "image/png")
    assert "thread_ring: no numeric parameter varies in this run, so no line figure" in text(cells["figure"])
    assert "does not have both 'dispatcher' and 'threads'" in text(cells["pivot"])
    assert "0 samples of 0 points" in text(cells["filter"])
    assert "of 1 points are noisy" in text(cells["noise"])


def test_the_notebook_is_committed_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.id for cell in code] == ["store", "samples", "figure", "by", "filter", "pivot",
                                          "interval", "noise"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
