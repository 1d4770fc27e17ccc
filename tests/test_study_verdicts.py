"""docs/studies.md against the committed reports: every verdict the page quotes (the study's
ranking holds, does not hold, with how many pairs agree, are reversed, are within noise) is the
one its report's verdicts.json records, and the page quotes every verdict of every report it
links. The reports' data is the oracle; the page is written by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from labctl.read.references import VERDICTS
from labctl.read.report import VERDICTS_FILE

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "studies.md"
REPORTS = ROOT / "reports"

# - **title**: does not hold (2 agree, 1 reversed, 0 within noise) ...
BULLET = re.compile(r"^- \*\*(?P<title>.+?)\*\*: (?P<verdict>" + "|".join(sorted(VERDICTS, key=len, reverse=True))
                    + r")(?: \((?P<agree>\d+) agree, (?P<reversed>\d+) reversed, (?P<unclear>\d+) within noise\))?"
                    + r"(?P<rest>.*)$")


# The verdicts that rest on pairs the study orders, whose counts the page quotes.
PAIRED = ("holds", "holds where we can tell", "cannot tell", "does not hold")


def quoted() -> dict[str, list[re.Match]]:
    """The page's verdict bullets under each study's heading, by the report folder it links."""
    found: dict[str, list[re.Match]] = {}
    for part in re.split(r"^## ", PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]:
        linked = re.search(r"\(\.\./reports/([\w.-]+)/report\.md\)", part)
        if linked:
            found[linked.group(1)] = [m for line in part.splitlines() if (m := BULLET.match(line))]
    return found


def recorded(study: str) -> list[dict]:
    data = json.loads((REPORTS / study / VERDICTS_FILE).read_text(encoding="utf-8"))
    return data["references"] + data["claims"]


STUDIES = sorted(path.parent.name for path in REPORTS.glob(f"*/{VERDICTS_FILE}")
                 if recorded(path.parent.name))


def test_the_page_covers_every_committed_report_with_verdicts():
    assert {"sobjectizer_tales22", "theron_303", "skynet_fibers", "machinate_shootout",
            "libcppa_2012"} <= set(STUDIES)
    assert set(STUDIES) <= set(quoted()), "docs/studies.md has no section linking each report"


@pytest.mark.parametrize("study", STUDIES)
def test_each_verdict_the_page_quotes_is_its_reports(study):
    page = {m.group("title"): m for m in quoted()[study]}
    for entry in recorded(study):
        assert entry["title"] in page, f"docs/studies.md does not quote {study}'s '{entry['title']}'"
        bullet = page.pop(entry["title"])
        assert bullet.group("verdict") == entry["verdict"], entry["title"]
        if "agree" in entry and entry["verdict"] in PAIRED:
            counts = tuple(int(bullet.group(k)) if bullet.group(k) else None
                           for k in ("agree", "reversed", "unclear"))
            assert counts == (entry["agree"], entry["reversed"], entry["unclear"]), entry["title"]
    assert not page, f"docs/studies.md quotes verdicts {study}'s report does not have: {sorted(page)}"


@pytest.mark.parametrize("study", STUDIES)
def test_the_verdicts_file_is_the_reports_own(study):
    """verdicts.json and report.md were written together: each reference's verdict sentence in
    report.md says the counts the file records."""
    text = (REPORTS / study / "report.md").read_text(encoding="utf-8")
    for entry in recorded(study):
        section = text.split(f"### {entry['title']}\n", 1)
        assert len(section) == 2, entry["title"]
        verdict = section[1].split("\n### ", 1)[0]
        if "ours" in entry:  # a claim
            if entry["verdict"] != "not judged":
                assert f"**{entry['verdict'].capitalize()} here**" in verdict, entry["title"]
        elif entry["verdict"] == "does not hold":
            checked = entry["agree"] + entry["reversed"] + entry["unclear"]
            assert f"{entry['reversed']} of {checked} ordered pairs are reversed" in verdict
        elif entry["verdict"] == "holds":
            assert f"all {entry['agree']} ordered pairs agree" in verdict
        elif entry["verdict"] == "holds where we can tell":
            assert f"{entry['agree']} of " in verdict and f"{entry['unclear']} within noise" in verdict


@pytest.mark.parametrize("study", STUDIES)
def test_a_report_made_on_a_busy_machine_is_said_to_be_so(study):
    """The page says the studies ran on a quiet machine; a report that warns otherwise must be
    named as busy in its own section."""
    text = (REPORTS / study / "report.md").read_text(encoding="utf-8")
    if "the machine is busy" in text:
        section = re.split(r"^## ", PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)
        mine = next(part for part in section if f"../reports/{study}/report.md" in part)
        assert "busy" in mine, f"{study}'s report warns the machine was busy; docs/studies.md does not say so"
