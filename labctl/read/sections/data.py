"""What a report reads, read once: the run's row and catalogue, its samples and points, and each
kind of machine it ran on with its kernels' point tables. Every section is a function of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from labctl.read import results
from labctl.read.analysis import Metric, counted, kernel_metric, machines, point_table
from labctl.store import RunRow
from labctl.vocabulary import metrics
from labctl.vocabulary.schema import Catalogue


@dataclass(frozen=True)
class View:
    """A kernel's points on one machine, in one measure: a kernel measured in more than one way
    gets a view per measure, so a time taken under valgrind is never plotted beside a native one."""

    on: str  # its machine's name where there are several (m1, m2, ...), else ""
    kernel: str
    metric: Metric  # analysis.kernel_metric: time where every run did the same work, else throughput
    table: pd.DataFrame  # analysis.point_table of the metric
    measure: str  # the measure, where the kernel was measured in more than one; else ""
    counts: tuple[tuple[Metric, pd.DataFrame], ...]  # each count its measure took, with its point table


@dataclass(frozen=True)
class Machine:
    """One kind of machine the run's points ran on, its samples and its views. Figures from two
    kinds are never pooled: a section per machine is written for each, naming it (`on`)."""

    on: str  # m1, m2, ... where the run has several kinds of machine, else ""
    line: str  # the machine in words (labctl.vocabulary.text.machine_line), "" where none is known
    hosts: tuple[str, ...]
    samples: pd.DataFrame
    views: tuple[View, ...]

    @property
    def timed(self) -> pd.DataFrame:
        """Its samples measured in time: what a floor bounds and what threads speed up."""
        return self.samples[self.samples["measure"] == metrics.TIME]

    def timed_views(self) -> dict[str, tuple[Metric, pd.DataFrame]]:
        """Each kernel's metric and point table in time (or in its one measure), by kernel."""
        return {view.kernel: (view.metric, view.table) for view in self.views
                if view.measure in ("", metrics.TIME)}


@dataclass(frozen=True)
class ReportData:
    """The run's data as every section reads it, and the two things sections add to: the figures
    written under `folder` (their paths, labctl.read.figures.save's list) and the verdicts of the
    published figures and claims they judged (verdicts.json)."""

    row: RunRow
    catalogue: Catalogue
    samples: pd.DataFrame
    points: pd.DataFrame
    machines: tuple[Machine, ...]  # in the order their samples first appear; none without samples
    folder: Path  # the report's folder, figures/ under it
    db: str | Path
    command: str | None  # the command that makes the report again, where the caller knows it
    figures: list[str] = field(default_factory=list)
    verdicts: dict[str, list[dict]] = field(default_factory=lambda: {"references": [], "claims": []})

    @classmethod
    def read(cls, row: RunRow, samples: pd.DataFrame, points: pd.DataFrame, folder: Path,
             db: str | Path, command: str | None, figures: list[str]) -> ReportData:
        """The data of the run `row`, from its samples and points (labctl.read.results)."""
        groups = machines(samples)
        several = len(groups) > 1
        found = tuple(Machine(f"m{number}" if several else "", line, tuple(hosts), part,
                              _views(part, f"m{number}" if several else ""))
                      for number, (line, hosts, part) in enumerate(groups, 1))
        return cls(row, results.catalogue_of(samples), samples, points, found, folder, db, command, figures)

    @property
    def several(self) -> bool:
        """Whether the run's points ran on more than one kind of machine."""
        return len(self.machines) > 1

    @property
    def views(self) -> list[View]:
        """Every machine's views, machine by machine."""
        return [view for machine in self.machines for view in machine.views]

    def each_machine(self) -> tuple[Machine, ...]:
        """The machines; a run without samples as one machine without any, so that what needs
        samples (the published figures) still says it found none."""
        return self.machines or (Machine("", "", (), self.samples, ()),)

    def points_in(self, status: str) -> pd.DataFrame:
        """The run's points in `status` (pending, done, failed, skipped)."""
        return self.points[self.points["status"] == status] if not self.points.empty else self.points


def _views(samples: pd.DataFrame, on: str) -> tuple[View, ...]:
    """One machine's views: each kernel in the order it first ran, then each of its measures."""
    found = []
    for kernel in dict.fromkeys(samples["kernel"]):
        of_kernel = samples[samples["kernel"] == kernel]
        taken = list(dict.fromkeys(of_kernel["measure"]))
        for measure in taken:
            measured = of_kernel[of_kernel["measure"] == measure]
            metric = kernel_metric(measured)
            found.append(View(on, kernel, metric, point_table(measured, metric),
                              measure if len(taken) > 1 else "",
                              tuple((count, point_table(measured, count)) for count in counted(measured))))
    return tuple(found)


# A section: the run's data -> its lines of markdown, [] where it does not apply.
Section = Callable[[ReportData], list[str]]
# A section written once for each kind of machine (labctl.read.report.each_machine).
MachineSection = Callable[[ReportData, Machine], list[str]]
