"""Everything after the store reads only the store: on a machine without the compiled extension
(a laptop that received a results.db from a lab machine), labctl.results loads it, compare
compares two runs and report writes the report, published figures and all."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EXPERIMENT = '''
name = "away"
study = "boost_fiber"
repeats = 3
warmup = 0
order = "grid"
[[grid]]
kernel = "skynet"
params = { leaves = 1000 }
axes = { dispatcher = ["one_thread", "work_stealing"] }
[[reference]]
title = "per leaf"
source = "a test's own figures"
hardware = "h"
kernel = "skynet"
per = "leaves"
unit = "us"
study = { statistic = "median" }
figures = [ { dispatcher = "one_thread", value = 1.0 }, { dispatcher = "work_stealing", value = 2.0 } ]
'''

# The analysis with labctl._native made impossible to import.
WITHOUT_EXTENSION = textwrap.dedent('''
    import sys

    class NoExtension:
        def find_spec(self, name, path=None, target=None):
            if name == "labctl._native" or name.startswith("labctl._native."):
                raise ImportError("labctl._native is blocked in this test")

    sys.meta_path.insert(0, NoExtension())
    db, out = sys.argv[1], sys.argv[2]
    from labctl import results
    from labctl.read import compare, report

    frame = results.load(db, 1)
    assert len(frame) == 6 and results.param_columns(frame)[:3] == ["runtime", "leaves", "branching"]
    assert str(frame["leaves"].dtype) == "Int64"
    catalogue = results.catalogue(db, 1)
    assert catalogue.studies[0].key == "boost_fiber" and catalogue.references[0].title == "per leaf"
    comparison = compare.compare(compare.load(db, 1), compare.load(db, 2))
    assert len(comparison.rows) == 2
    print(compare.markdown(comparison))
    written = report.write(db, 2, out)
    assert "labctl._native" not in sys.modules
    print("report", written.folder, len(written.figures))
''')


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("away")
    (folder / "away.toml").write_text(EXPERIMENT)
    db = folder / "results.db"
    for _ in range(2):
        done = subprocess.run([sys.executable, "-P", "-m", "labctl", "sweep", str(folder / "away.toml"),
                               "--db", str(db)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    return db


def test_a_store_is_loaded_compared_and_reported_without_the_extension(store, tmp_path):
    out = tmp_path / "report"
    result = subprocess.run([sys.executable, "-P", "-c", WITHOUT_EXTENSION, str(store), str(out)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "| one_thread |" in result.stdout and "report" in result.stdout
    text = (out / "report.md").read_text()
    assert "## Published figures beside ours" in text and "### per leaf" in text
    assert 'Reproduces "Boost.Fiber: Performance", Oliver Kowalke' in text
    assert "a tree of `leaves` leaf agents" in text  # the kernel's summary, as the run stored it
