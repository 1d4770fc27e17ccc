"""The committed reports say what they were built from: none from a tree with uncommitted
changes or from no known commit, and reports/README.md, their index, is current (it marks each
report made before the runtime's last change)."""

from __future__ import annotations

import shutil

import pytest
import reports_index

pytestmark = pytest.mark.skipif(not (reports_index.ROOT / ".git").exists() or not shutil.which("git"),
                                reason="not a git checkout")


@pytest.mark.parametrize("folder", sorted(p.name for p in reports_index.REPORTS.iterdir()
                                          if (p / "report.md").is_file()))
def test_a_committed_report_comes_from_a_clean_tree_at_a_known_commit(folder):
    report = (reports_index.REPORTS / folder / "report.md").read_text(encoding="utf-8")
    describe = reports_index.commit_of(report)
    assert describe is not None, f"reports/{folder} names no commit: make it again from a checkout"
    assert not describe.endswith("-dirty"), (
        f"reports/{folder} was made from a tree with uncommitted changes ({describe}): commit, "
        "then make it again")


def test_the_index_of_the_committed_reports_is_current():
    assert reports_index.INDEX.read_text(encoding="utf-8") == reports_index.build(), (
        "reports/README.md is stale: run `python tests/reports_index.py` and commit it")


def test_the_index_parses_what_the_report_writes():
    assert reports_index.commit_of("| labctl | 0.1.0 (ab12cd3-dirty) |\n") == "ab12cd3-dirty"
    assert reports_index.commit_of("| labctl | 0.1.0 (no known commit) |\n") is None
    assert reports_index.commit_of("| labctl | 512 |\n") is None
    assert reports_index.runtime_since("0000000") .startswith("unknown")
