"""README.md and docs/ against the code: the README stays one screen with CI's two set-up commands,
every link between the pages leads somewhere, and the tables that list kernels, dispatchers and
Debian packages list what the extension and CI have."""

from __future__ import annotations

import re
from pathlib import Path

from labctl import _native

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def section(path: Path, heading: str) -> str:
    """The text under `heading` (any level) up to the next heading of that level or above."""
    text = path.read_text(encoding="utf-8")
    match = re.search(rf"^(#+) {re.escape(heading)}$", text, re.MULTILINE)
    assert match, f"{path.name} has no heading '{heading}'"
    body = text[match.end():]
    end = re.search(rf"^#{{1,{len(match.group(1))}}} ", body, re.MULTILINE)
    return body[:end.start()] if end else body


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a page (outside fenced code)."""
    found, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        fenced ^= line.startswith("```")
        heading = re.match(r"#+ (.*)", line)
        if heading and not fenced:
            found.add(re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-"))
    return found


def backticked_first_cells(table: str) -> list[str]:
    return re.findall(r"^\| `([a-z0-9_]+)` \|", table, re.MULTILINE)


def test_readme_is_one_screen_under_300_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) < 300


def test_readme_keeps_both_set_up_commands_as_ci_extracts_them():
    # The pattern of readme_command in .ci/run, which runs what it finds.
    text = README.read_text(encoding="utf-8")
    for name in ("main", "test"):
        match = re.search(rf"<!-- setup:{name} -->\s*```[a-z]*\n(.*?)\n```", text, re.DOTALL)
        assert match and match.group(1).strip().startswith("pip install "), name


def test_every_relative_link_of_readme_and_docs_reaches_a_file_and_its_heading():
    pages = [README, *sorted(DOCS.glob("*.md"))]
    assert len(pages) > 1
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            destination = (page.parent / path).resolve() if path else page
            if not destination.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and anchor not in anchors(destination):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_kernels_table_has_a_row_for_each_kernel_of_ours_and_no_other():
    ours = {k["name"] for k in _native.kernels() if k["runtime"] == "labctl"}
    assert sorted(backticked_first_cells(section(DOCS / "kernels.md", "The kernels"))) == sorted(ours)


def test_the_dispatcher_row_names_every_registered_dispatcher():
    table = section(DOCS / "kernels.md", "The dispatcher parameters")
    row = next(line for line in table.splitlines() if line.startswith("| `dispatcher` |"))
    listed = re.findall(r"`([a-z_]+)`", row.split("|")[2])
    assert sorted(listed) == sorted(d["name"] for d in _native.dispatchers())


def test_the_install_section_names_every_optional_debian_package_ci_installs():
    packages = re.search(r"^packages=\(([^)]*)\)", (ROOT / ".ci" / "run").read_text(), re.MULTILINE)
    assert packages
    install = section(README, "Install")
    assert [p for p in packages.group(1).split() if p not in install] == []
