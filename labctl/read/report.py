"""`labctl report`: a run as a folder holding report.md and its figures, readable on GitHub as is.

For each kernel: a figure of its metric against the numeric parameter that varies (threads first),
one line per configuration with its 95% interval as error bars; a heat map where two numeric parameters
vary; bars where none does; a table of medians with their spread, noisy points flagged. Then the
failed points with their reasons, the machine and the command to rerun, and, where the experiment
carries published figures, those figures beside ours, compared as ratios and rankings; and where the
store holds a previous run of the experiment, each kernel set against it (labctl.read.compare).

The report is SECTIONS, in order: each a function of the run's data, read once from the store
(labctl.read.sections.data.ReportData: labctl.read.results and the run's catalogue), returning its lines;
the sections live in labctl.read.sections, a module per role. A report needs no extension. The
analysis is labctl.read.analysis', the figures labctl.read.figures', the published figures
labctl.read.references'.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from labctl import __version__
from labctl.read import results
from labctl.read.sections import across, kernels, overview, previous, studies, threads
from labctl.read.sections.data import MachineSection, ReportData, Section
from labctl.store import Store, now
from labctl.vocabulary import files


@dataclass
class Written:
    """What a report wrote: its folder, and its figures' paths in it."""

    folder: Path
    figures: list[str]


def write(db: str | Path, run: int | str, out: str | Path | None = None,
          command: str | None = None, option: str = "--output") -> Written:
    """Writes the report of `run` into the folder `out` (default reports/<experiment name>) and
    returns what it wrote. The folder is built beside its destination and renamed into place, so
    an interrupted report leaves the previous one whole; a folder that is not a report labctl
    wrote of this experiment, or holds anything but the files its marker lists, unchanged
    (files.check_report_folder), is refused untouched. `option` is how the user named the folder
    (--output, --out), for the errors. Raises files.OutputError or StoreError."""
    with Store(db, create=False) as store:
        run_id = store.resolve_run(run)
        row = store.run(run_id)
    out = Path(out) if out is not None else Path("reports") / slug(row.name)

    def check() -> None:
        files.check_report_folder(option, out, row.name, stores=[Path(db)])

    check()
    samples = results.load(db, run_id)
    points = results.points(db, run_id)
    figures: list[str] = []

    def fill(staging: Path) -> None:
        (staging / "figures").mkdir()
        data = ReportData.read(row, samples, points, staging, db, command, figures)
        (staging / "report.md").write_text(_markdown(data), encoding="utf-8")
        # The verdicts as data, for what quotes them (docs/studies.md, checked by a test).
        (staging / VERDICTS_FILE).write_text(
            json.dumps({"experiment": row.name, "run": row.id, **data.verdicts}, indent=1) + "\n", encoding="utf-8")
        # Every file written, with its size and hash: the next report replaces this folder only
        # while it holds these and nothing else, unchanged (a user's figures/mine.png, or an edit
        # to report.md, is refused, never deleted).
        marker = {"experiment": row.name, "run": row.id, "store": str(db), "written": now(),
                  "labctl": __version__, "files": files.manifest(staging),
                  "folders": files.subfolders(staging)}
        (staging / files.REPORT_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")

    try:
        files.replace_folder(out, fill, check)
    except OSError as error:
        raise files.OutputError(f"{option} {out}: cannot write: {error.strerror or error}", code=1) from None
    return Written(out, figures)


# The verdicts of a report's references and claims, as data, beside report.md.
VERDICTS_FILE = "verdicts.json"

# A folder name's bytes are bounded (255 on Linux): a long experiment name is cut, and the cut
# one gets the hash of the whole, so the default folder always has a name the system takes, with
# room for the staging folder's suffix beside it.
SLUG_LENGTH = 100


def slug(name: str) -> str:
    """A folder name for an experiment name: its letters, digits and -_. as they are; a name that
    needs others replaced, or is longer than SLUG_LENGTH, is cut and gets a short hash of itself,
    so two names never share a folder."""
    kept = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name).strip("._")
    if kept == name and kept and len(kept) <= SLUG_LENGTH:
        return kept
    kept = kept[:SLUG_LENGTH].rstrip("._")
    return f"{kept or 'report'}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def each_machine(*sections: MachineSection) -> Section:
    """Sections written once for each kind of machine the run ran on, machine by machine (m1's,
    then m2's): figures from two kinds of machine are never pooled."""
    def written(data: ReportData) -> list[str]:
        return [line for machine in data.each_machine() for section in sections for line in section(data, machine)]

    return written


# The report, in order: each section a function of the run's data (labctl.read.sections.data), its
# lines or none.
SECTIONS: tuple[Section, ...] = (
    overview.heading, overview.machines, overview.warnings, overview.pending,
    kernels.summary, previous.against_previous, kernels.measures,
    each_machine(across.suite, threads.scaling, across.runtimes, across.floors, threads.turns, kernels.costs,
                 kernels.latency_under_load, across.fingerprints),
    kernels.kernels,
    overview.failures, overview.skipped,
    each_machine(studies.references, studies.claims),
    overview.provenance,
)


def _markdown(data: ReportData) -> str:
    """The report: every section's lines, in order."""
    return "\n".join(line for section in SECTIONS for line in section(data)).rstrip() + "\n"
