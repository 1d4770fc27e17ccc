"""The report's sections on the studies it reproduces: each set of published figures beside ours,
compared by ratio and ranking (labctl.read.references), and the studies' claims across benchmarks,
each judged on the same ratio of our points; their verdicts go to verdicts.json as well."""

from __future__ import annotations

from pathlib import Path

from labctl.read.analysis import Metric
from labctl.read.figures import plot_reference, save
from labctl.read.references import (
    TIE_RATIO,
    Comparison,
    Match,
    compare_reference,
    in_unit,
    judge_claim,
    rank,
    ranks,
)
from labctl.read.sections.data import Machine, ReportData
from labctl.read.sections.markdown import assignments, blocks, bullets, title
from labctl.vocabulary import metrics
from labctl.vocabulary.schema import OURS, RUNTIME, STATISTICS, Claim, Figure, Reference
from labctl.vocabulary.text import markdown_table, number, printable


def references(run: ReportData, machine: Machine) -> list[str]:
    """Each set of published figures beside ours: on one machine of several, those of the
    kernels it ran."""
    found = run.catalogue.references
    if machine.on:
        found = [r for r in found if r.kernel in set(machine.samples["kernel"])]
    if not found:
        return []
    lines = blocks(title("Published figures beside ours", machine.on),
                   "Each study measured on its own hardware, with its own sizes, so absolute values are not "
                   "comparable: each set of figures is compared relative to its own best (1.00 = the best; "
                   "2.00 = twice as slow as the best), and by ranking. A pair the study orders (more than "
                   f"{TIE_RATIO:.2f}x apart) agrees when ours is in the same order with 95% intervals apart.")
    for position, one in enumerate(found):
        comparison = (rank(one, [Match(f, problem="no samples") for f in one.figures]) if machine.samples.empty
                      else compare_reference(one, machine.samples))
        run.verdicts["references"].append(
            {"title": one.title, "kernel": one.kernel, "machine": machine.on, "verdict": comparison.kind,
             "agree": len(comparison.agree), "reversed": len(comparison.reversed),
             "unclear": len(comparison.unclear)})
        lines += published(comparison, position, run.folder, run.figures, machine.on)
    return lines


def claims(run: ReportData, machine: Machine) -> list[str]:
    """The study's statements across two of its benchmarks, each judged on the same ratio of our
    points (labctl.read.references.judge_claim)."""
    if not run.catalogue.claims:
        return []
    lines = blocks(title("The studies' claims across benchmarks", machine.on),
                   "A study's statement that relates two of its figures, as their ratio, beside the same "
                   "ratio of our points (each side the study's statistic of our samples).")
    for claim in run.catalogue.claims:
        judged = judge_claim(claim, machine.samples) if not machine.samples.empty else None
        run.verdicts["claims"].append({"title": claim.title, "machine": machine.on,
                                       "verdict": judged.kind if judged else "not judged",
                                       "ours": judged.ratio if judged else None, "study": claim.ratio})
        lines += blocks(f"### {printable(claim.title)}", f"Source: {printable(claim.source.rstrip('.'))}.",
                        judged.verdict if judged else "Not judged: no samples.")
        if judged and judged.ratio is not None:
            metric = metrics.lookup(claim.metric)
            rows = [[role, printable(assignments(point)), metric.format(value)]
                    for role, point, value in (("numerator", claim.numerator, judged.numerator),
                                               ("denominator", claim.denominator, judged.denominator))]
            lines += blocks(markdown_table(["", "our point", f"ours ({_statistic(claim)})"], rows, {2}))
        lines += blocks(f"Compared as: the study published {claim.study.described()}.")
        if claim.study.facts:
            lines += bullets("Also different", map(printable, claim.study.facts))
    return lines


def published(comparison: Comparison, position: int, folder: Path, figures: list[str], on: str = "") -> list[str]:
    """One set of published figures beside ours: what is compared, the verdict and what it
    compares, the table of both sides relative to their best, what is reversed or within noise,
    a figure of both orders, and the study's other runtimes with ours by absolute value."""
    ref = comparison.reference
    metric = metrics.lookup(ref.metric).directed(ref.lower_is_better)
    per = f" per {_singular(ref.per)}" if ref.per else ""
    lines = blocks(f"### {printable(ref.title)}",
                   f"Source: {printable(ref.source.rstrip('.'))}. Hardware: {printable(ref.hardware.rstrip('.'))}. "
                   f"Compared: {ref.kernel}'s `{ref.metric}`{per}, {'lower' if ref.lower_is_better else 'higher'} "
                   "is better" + (f"; our points with {assignments(ref.where)}" if ref.where else "") + ".")
    if ref.note:
        lines += blocks(f"Note: {printable(ref.note)}")
    lines += blocks(comparison.verdict) + _beside_the_verdict(comparison)
    lines += blocks(markdown_table(["our configuration", "the study's name", "published", "study / its best",
                                    f"ours{per} ({_statistic(ref)})", "our median [95%]", "ours / our best",
                                    "rank in study", "rank here"], _rows(comparison, metric), {3, 6, 7, 8}))
    if comparison.tau is not None:
        lines += blocks(f"Kendall's tau between the two orders: {comparison.tau:.2f} (1: the same order).")
    for lead, items in (("Reversed here", comparison.reversed), ("Within noise here", comparison.unclear)):
        if items:
            lines += bullets(lead, items)
    if len(comparison.ours) >= 2:
        path = save(plot_reference(comparison), folder, "-".join(filter(None, (on, f"published-{position + 1}"))),
                    figures)
        lines += blocks(f"![{printable(ref.title)}: published vs ours]({path})")
    peers = [m for m in comparison.matches if m.figure.peer is not None]
    if peers and comparison.measured:
        lines += _peer_ranking(comparison, peers, metric)
    return lines


def _rows(comparison: Comparison, metric: Metric) -> list[list]:
    """A row per figure of the study's own runtime: published, relative to the study's best, ours
    with its interval, relative to our best, and both ranks; a figure with nothing to rank says
    what it has."""
    ref, ours = comparison.reference, comparison.ours
    pick = min if ref.lower_is_better else max
    best_study = pick(m.figure.value for m in ours) if ours else None
    best_here = pick(m.value for m in ours) if ours else None
    study_rank = ranks([m.figure.value for m in ours], ref.lower_is_better)
    here_rank = ranks([m.value for m in ours], ref.lower_is_better)
    rows = []
    for match in comparison.matches:
        if match.figure.peer is not None:
            continue
        published = (f"{number(match.figure.value)} {ref.unit}" if match.figure.published
                     else "no number (a graph only)")
        name = printable(match.figure.name) if match.figure.name else ""
        if match.value is None:
            rows.append([match.figure.label, name, published, "", match.problem or "", "", "", "", ""])
            continue
        interval = (f" [{metric.format(match.interval[0])} .. {metric.format(match.interval[1])}]"
                    if match.interval else " (n<3)")
        measured = [metric.format(match.value), metric.format(match.median) + interval]
        if not match.figure.published:  # measured, with nothing of the study's to rank it against
            rows.append([match.figure.label, name, published, "", *measured, "", "", ""])
            continue
        index = ours.index(match)
        study_relative = (match.figure.value / best_study if ref.lower_is_better
                          else best_study / match.figure.value)
        rows.append([match.figure.label, name, published, f"{study_relative:.2f}", *measured,
                     f"{match.relative(best_here, ref.lower_is_better):.2f}", study_rank[index], here_rank[index]])
    return rows


def _statistic(ref: Reference | Claim) -> str:
    """Our figure's statistic, named for the table's header: the study's where it is recorded."""
    return ref.study.statistic if ref.study.statistic and ref.study.statistic != "single" else "median"


def _beside_the_verdict(comparison: Comparison) -> list[str]:
    """What the verdict compares, derived from what the study ran (labctl.vocabulary.schema.StudyRan) and
    this run's points: the statistic on each side, every parameter whose value differs, and
    what differs that is no parameter of ours."""
    study = comparison.reference.study
    if not study.statistic:
        return blocks("Compared as: the study's statistic and sizes are not recorded in this run's "
                      "catalogue (stored before references recorded them); ours are medians.")
    counts = sorted({m.samples for m in comparison.measured})
    samples = " or ".join(map(str, counts)) if counts else "no"
    ours = (f"the median of our {samples} samples, as the study's kind of figure is not known"
            if study.statistic == "single" else
            f"{STATISTICS[study.statistic]} of our {samples} samples, as the study's")
    lines = blocks(f"Compared as: the study published {study.described()}; ours is {ours}.")
    differences = comparison.differences()
    if differences:
        lines += bullets("Differences from the study (its values recorded with the reference, ours this run's)",
                         (printable(d.text()) for d in differences))
    elif comparison.measured:
        lines += blocks("Differences from the study: none among the parameters it records "
                        f"({', '.join(study.params) or 'none'}).")
    if study.facts:
        lines += bullets("Also different, and no parameter of ours", map(printable, study.facts))
    return lines


def _singular(name: str) -> str:
    """leaves -> leaf, hops -> hop: a parameter that counts things, as one of them."""
    for plural, one in (("ves", "f"), ("ies", "y"), ("s", "")):
        if name.endswith(plural):
            return name[: -len(plural)] + one
    return name


def _peer_ranking(comparison: Comparison, peers: list[Match], metric: Metric) -> list[str]:
    """The study's runtimes and ours in one list by value: absolute values from two machines, so
    an indication of the order of magnitude only."""
    ref = comparison.reference
    entries = [(m.figure.value, _published_peer(m.figure)) for m in peers if m.figure.published]
    entries += [(m.figure.value, f"{m.figure.published_as} (study)") for m in comparison.ours]
    converted = [(in_unit(m.value, metric, ref.unit), m) for m in comparison.measured]
    if any(value is None for value, _ in converted):
        return blocks(f"The study's other runtimes are given in {ref.unit}, which our `{ref.metric}` does "
                      "not convert to: not ranked.")
    entries += [(value, f"**{_measured_here(m)} (this machine)**") for value, m in converted]
    entries.sort(key=lambda e: e[0] if ref.lower_is_better else -e[0])
    rows = [[place, name, f"{number(value)} {ref.unit}"] for place, (value, name) in enumerate(entries, 1)]
    # A result that is no figure (a crash) has no place in the order: it follows it, in words.
    rows += [["", printable(_published_peer(m.figure)), printable(m.figure.outcome)]
             for m in peers if m.figure.outcome]
    sizes = ("" if ref.per else " Our sizes are this run's, which may be smaller than the study's "
             "(`--scale full` runs the study's).")
    return blocks("The study's runtimes with ours, by absolute value (two different machines: an "
                  f"indication of the order of magnitude, not a measurement).{sizes}",
                  markdown_table(["rank", "runtime", ref.unit], rows, {0, 2}))


def _published_peer(figure: Figure) -> str:
    """A runtime of the study known from its figure alone: Theron 3.03 (study; not run here: why)."""
    return f"{figure.peer} (study" + (f"; not run here: {figure.not_run})" if figure.not_run else ")")


def _measured_here(match: Match) -> str:
    """A point of this run by its runtime, then the rest of its figure's parameters: `erlang
    threads=2`, `labctl dispatcher=one_thread`."""
    runtime = match.params.get(RUNTIME) or match.figure.params.get(RUNTIME) or OURS
    rest = assignments({name: value for name, value in match.figure.params.items() if name != RUNTIME})
    return f"{runtime} {rest}".strip()
