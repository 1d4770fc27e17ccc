"""The report's "Against the previous run": where the store holds an earlier finished run of the
same experiment, each kernel of this run set against it, point by point, by labctl.read.compare."""

from __future__ import annotations

from labctl.read import compare
from labctl.read.sections.data import ReportData
from labctl.read.sections.markdown import blocks
from labctl.store import Store, round_of
from labctl.vocabulary.metrics import TIME, Metric, lookup
from labctl.vocabulary.text import markdown_table, printable


def previous_run(run: ReportData) -> int | None:
    """The latest finished run of the store, before this one, of the same experiment (by name)."""
    with Store(run.db, create=False) as store:
        earlier = [row.id for row in store.runs()
                   if row.name == run.row.name and row.id < run.row.id and row.status == "finished"
                   and not round_of(row.context)]
    return max(earlier, default=None)


def against_previous(run: ReportData) -> list[str]:
    """A row per kernel of this run: its points compared with the previous run's (compare's
    verdicts, calibrated where the store holds an A/A calibration of them), how many faster,
    slower and neither, and the geometric mean of its medians' ratios."""
    before = previous_run(run) if run.views else None
    if before is None:
        return []
    earlier, this = compare.load(run.db, before), compare.load(run.db, run.row.id)
    # Each kernel by its report's metric (time where every run did the same work, else throughput).
    by_metric: dict[str, list[str]] = {}
    for view in run.views:
        if view.measure in ("", TIME) and view.kernel not in by_metric.get(view.metric.name, []):
            by_metric.setdefault(view.metric.name, []).append(view.kernel)
    rows, bases = [], set()
    for metric, kernels in by_metric.items():
        try:
            found = compare.compare(earlier, this, metric)
        except compare.CompareError:
            continue  # a metric the previous run does not have: nothing to set this against
        bases.add(found.basis)
        for kernel in kernels:
            mine = [row.difference for row in found.rows if row.kernel == kernel]
            if mine:
                rows.append(_row(kernel, lookup(metric), mine))
    if not rows:
        return []
    silent = all(row[6] == row[2] for row in rows)  # every point without a verdict
    return blocks("## Against the previous run",
                  f"Each kernel's points set against the same points of run {before}, the previous run of "
                  f"this experiment in the store (`labctl compare {before} {run.row.id}`; verdicts on "
                  f"{printable(', '.join(sorted(bases)))}, adjusted over each metric's points). Faster and slower "
                  "are this run's; the ratio is the geometric mean, over the kernel's points, of this "
                  "run's median over the previous one's.",
                  *(["Two runs of a few samples each, on the rank test alone, cannot be told apart "
                     "among this many points: an A/A calibration of this experiment (`labctl calibrate`) "
                     "into this store lets the next report judge one run against the other."]
                    if silent and bases == {compare.RANKS} else []),
                  markdown_table(["kernel", "metric", "points", "faster", "slower", "no significant difference",
                                  "no verdict", "this run / previous", "in short"], rows, {2, 3, 4, 5, 6, 7}))


def _row(kernel: str, metric: Metric, differences: list[compare.Difference]) -> list[str]:
    """A kernel's row: its verdicts counted, the geometric mean of its ratios, and the kernel in short."""
    faster = sum(d.verdict == compare.FASTER for d in differences)
    slower = sum(d.verdict == compare.SLOWER for d in differences)
    none = sum(d.verdict in compare.WITHOUT_VERDICT for d in differences)
    same = len(differences) - faster - slower - none
    mean = compare.geometric_mean(d.ratio for d in differences)
    if faster and not slower:
        short = f"faster at {faster} of {len(differences)} points"
    elif slower and not faster:
        short = f"slower at {slower} of {len(differences)} points"
    elif faster and slower:
        short = f"mixed: {faster} faster, {slower} slower"
    elif none == len(differences):
        short = f"no verdict: {differences[0].text}"
    else:
        short = "no significant change"
    return [printable(kernel), printable(metric.words), str(len(differences)), str(faster), str(slower),
            str(same), str(none), "-" if mean is None else f"{mean:.2f}x", short]
