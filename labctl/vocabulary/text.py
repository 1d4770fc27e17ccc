"""How labctl writes values for people, on a terminal and in a report: parameter values,
numbers, durations, markdown tables, the machine a run ran on (a metric's value in its unit is
labctl.vocabulary.metrics'). Text that came from outside (an experiment file, a peer's output, a stored
failure) goes through `printable` first, so no control character (an escape sequence, a
bidirectional override, a newline in a name) reaches a terminal or a report raw."""

from __future__ import annotations


def printable(text: object) -> str:
    """`text` with every character that is not printable (C0 and C1 controls, DEL, Unicode
    format characters such as U+202E) written as its escape (\\x1b, \\u202e): one visible line."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def show(value: object) -> str:
    """A parameter value as written in files and on the command line: true, 20 (not 20.0)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def cell(value: object) -> str:
    """A table cell: one line, no control character (labctl.vocabulary.text.printable), pipes escaped."""
    return printable(value).replace("|", "\\|")


def markdown_table(headers: list[str], rows: list[list[object]], right: set[int] = frozenset()) -> str:
    """A markdown table; `right`: the columns to align right (figures)."""
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def number(value: float) -> str:
    """A figure as people write it: 0.45, 12.3, 1,234, 17,354,483."""
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def percent(value: float) -> str:
    """A size in percent, as wide as it needs: 0.31%, 4.5%, 37%, 450%."""
    return f"{value:.0f}%" if abs(value) >= 10 else f"{value:.2g}%"


def format_duration(ns: float) -> str:
    """A duration in nanoseconds as people read it: 12.3 ms, 4.5 µs, 1.234 s."""
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def format_seconds(seconds: float) -> str:
    """A duration people plan by, rounded: 45 s, 12 min, 2.5 h (an estimate; what was measured is
    format_elapsed's)."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def code_of(context: dict) -> str | None:
    """The commit of the code that measured a run (from its context): the commit whose extension
    labctl history, bisect or ab built and loaded, where one did; else the `git describe` of the
    checkout labctl ran from; else the commit its extension was built from (recorded by the
    build); else None. "-dirty" where the tree had uncommitted changes."""
    built = context.get("commit")
    if isinstance(built, dict) and isinstance(built.get("sha"), str):
        return built["sha"][:10]
    return context.get("git_describe") or (context.get("build") or {}).get("commit") or None


def format_elapsed(seconds: float) -> str:
    """A duration that was measured, to the second, as people say it: 45 s, 1 min 33 s, 2 h 5 min
    (format_seconds rounds, for an estimate)."""
    whole = round(seconds)
    if whole < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{whole} s"
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s" if secs else f"{minutes} min"


def shorten(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut at the end of a word with an ellipsis where it is
    longer (within a word only when its first word is itself too long)."""
    if len(text) <= width:
        return text
    cut = text[:width - 1]
    space = cut.rfind(" ")
    if text[width - 1] != " " and space > 0:  # the cut falls inside a word: back to its start
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def machine_line(machine: dict) -> str:
    """A run's machine in words: its CPU, CPUs and cores, SMT and OS kernel."""
    return (f"{machine.get('cpu_model')}, {machine.get('logical_cpus')} logical CPUs "
            f"({machine.get('physical_cores')} cores, SMT {machine.get('smt')}), "
            f"kernel {machine.get('kernel')}")


def machine_short(machine: dict) -> str:
    """A run's machine in a table cell: its CPU and how many, and its host."""
    return f"{machine.get('cpu_model')} x{machine.get('logical_cpus')}, {machine.get('hostname')}"
