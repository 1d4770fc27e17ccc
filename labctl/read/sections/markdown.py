"""The pieces of markdown the report's sections share: a section's title on one machine of
several, paragraphs, lists, parameters as name=value, figures that may be missing, a plot."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

from labctl.read.figures import save
from labctl.read.sections.data import ReportData
from labctl.vocabulary.text import printable, show


def title(words: str, on: str = "") -> str:
    """A section's heading; on one machine of several, it names the machine."""
    return f"## {words}" + (f" on {on}" if on else "")


def blocks(*texts: str) -> list[str]:
    """Markdown blocks (a heading, a paragraph, a table), each followed by its blank line."""
    return [line for text in texts for line in (text, "")]


def bullets(lead: str, items: Iterable[str]) -> list[str]:
    """A list under its lead-in line (`lead:`), as blocks."""
    return [f"{lead}:", "", *(f"- {item}" for item in items), ""]


def assignments(params: Mapping[str, object], separator: str = ", ") -> str:
    """Parameters as they are written on the command line: leaves=1000, threads=2."""
    return separator.join(f"{name}={show(value)}" for name, value in params.items())


def named(kernel: str, scenario: str) -> str:
    """A benchmark by its kernel and scenario (`chat directories=1`), for a title or a cell."""
    return printable(f"{kernel} {scenario}".strip())


def or_dash(value: float | None, shown: Callable[[float], str]) -> str:
    """A figure as `shown` writes it, "-" where there is none (None or NaN)."""
    return "-" if value is None or math.isnan(value) else shown(value)


def times(value: float | None) -> str:
    """A ratio as a multiple: 1.85x."""
    return or_dash(value, lambda v: f"{v:.2f}x")


def share(value: float | None) -> str:
    """A fraction as a percentage: 93%."""
    return or_dash(value, lambda v: f"{v:.0%}")


def figure(run: ReportData, plot, name: str, alt: str, svg: bool = False) -> list[str]:
    """Saves `plot` into the report's figures (labctl.read.figures.save) and shows it, as blocks."""
    path = save(plot, run.folder, name, run.figures, svg=svg)
    return blocks(f"![{alt}]({printable(path)})")
