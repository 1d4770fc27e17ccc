"""What every `labctl` command prints with: its two consoles (a terminal's width, else COLUMNS,
else 100), one-line errors (Failed, which the command group turns into the exit code), free text
wrapped to the output's width, parameters, tables that fit the width with nothing cut
(print_rows; print_points, a table of points per kernel), one JSON document for --json
(print_json), and the store and outputs a command opens. Everything that came from outside (a
file, a store, a peer) is escaped here (labctl.vocabulary.text.printable) and never read as rich markup.

Nothing here imports the extension or the run side: the commands that only read a store use it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from labctl.store import Store, StoreError
from labctl.vocabulary import files
from labctl.vocabulary.schema import Catalogue, Kernel
from labctl.vocabulary.text import printable, show

if TYPE_CHECKING:
    from labctl.plan.experiment import Plan

# Exit codes (README: "Exit codes"), declared in labctl.vocabulary.exits; the commands take them from here.
from labctl.vocabulary.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE  # noqa: E402,F401

# Piped output is as wide as COLUMNS says, else 100 columns (rich would take 80): tables fit it,
# and free text that can be long is wrapped to it (wrapped); a line of a log (a path, a message)
# is never broken.
PIPED_WIDTH = 100


def _width(stream) -> int | None:
    """The width to print to `stream`: a terminal's own (None: rich asks it), else COLUMNS, else
    PIPED_WIDTH."""
    if stream.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) >= 20 else PIPED_WIDTH


stdout = Console(highlight=False, soft_wrap=True, width=_width(sys.stdout))
stderr = Console(highlight=False, soft_wrap=True, stderr=True, width=_width(sys.stderr))


class Failed(Exception):
    """A command that cannot go on: its message (one line, or one per problem) and exit code.
    The command group prints it and exits with the code; nothing below it ends the process."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def fail(message: str, code: int) -> None:
    """Ends the command: `message` on stderr, escaped, one line per line, and the exit code."""
    raise Failed(message, code)


def safe(value: object) -> str:
    """Text from outside for rich: no control character, no markup."""
    return escape(printable(value))


def open_store(path: str, create: bool = True) -> Store:
    try:
        return Store(path, create=create)
    except StoreError as error:  # a file that is no store (2), or one the system refuses (1)
        fail(str(error), error.code)


def load_plan(path: str, seed: int | None, scale: str = "default") -> Plan:
    """An experiment file (or a shipped experiment's name) expanded; each problem of a bad one is
    a line of the error (exit 2)."""
    from labctl.plan import experiment

    try:
        return experiment.load(path, seed, scale)
    except experiment.ExperimentError as error:
        fail(str(error), EXIT_USAGE)


@contextlib.contextmanager
def past_runs(db: str) -> Iterator[Store | None]:
    """The store at `db` for estimates from its past runs, or None if there is none (a warning
    if the file is not one)."""
    store = None
    if Path(db).exists():
        try:
            store = Store(db, create=False)
        except StoreError as error:
            stderr.print(f"[yellow]warning:[/yellow] {safe(error)}; the estimate leaves it out")
    try:
        yield store
    finally:
        if store:
            store.close()


def wrapped(line: str, indent: str = "", style: str | None = None, out: Console = stdout,
            markup: bool = False) -> None:
    """A line of free text, escaped, wrapped to the output's width under `indent`; with `markup`,
    `line` is rich markup whose text is escaped already (safe()), wrapped as the text it shows."""
    if markup:
        line = Text.from_markup(line).plain
    filled = textwrap.fill(printable(line), width=max(out.width, 40), initial_indent=indent,
                           subsequent_indent=indent + "    ", break_on_hyphens=False,
                           break_long_words=False)
    out.print(escape(filled), style=style)


def params_text(params: dict) -> str:
    """Parameters as name=value, escaped for rich."""
    return " ".join(f"{name}={safe(show(value))}" for name, value in params.items())


def print_points(points: list[tuple[str, dict]], extra: dict[str, list[str]], catalogue: Catalogue) -> None:
    """One table per kernel (its parameters as `catalogue` has them): its points, the parameters
    that vary among them, then `extra` columns (one value per point, in `points` order, rich
    markup allowed); its fixed parameters underneath (print_rows: nothing cut, a point's
    parameters beside or under its figures where the table is too wide)."""
    from labctl.read.analysis import varying  # pandas: imported by the commands that print points

    for kernel in dict.fromkeys(kernel for kernel, _ in points):
        indices = [i for i, (k, _) in enumerate(points) if k == kernel]
        rows = [points[i][1] for i in indices]
        spec = catalogue.kernels.get(kernel) or Kernel(kernel, "", "", (), "", "", ())
        vary = varying(rows, spec, missing_varies=True) if spec.params else \
            [n for n in sorted({n for row in rows for n in row}) if len({repr(r.get(n)) for r in rows}) > 1]
        stdout.print(f"[bold]{safe(kernel)}[/bold]")
        headers = ["#", *vary, *extra]
        cells = [[str(i + 1), *[safe(show(params[n])) if n in params else "-" for n in vary],
                  *[values[i] for values in extra.values()]] for i, params in zip(indices, rows)]
        print_rows(headers, cells, right={0, *range(1 + len(vary), len(headers))},
                   aside=set(range(1, 1 + len(vary))), label="{name}={value}")
        order = [p.name for p in spec.params] or sorted(rows[0])
        fixed = {n: rows[0][n] for n in order if n in rows[0] and n not in vary}
        wrapped("  fixed: " + params_text(fixed), markup=True)
        stdout.print()


_GAP = 2  # spaces between the columns of a table
_ASIDE_MIN = 30  # the narrowest the columns set aside may be beside the others, before they go under


def print_rows(headers: list[str], cells: list[list[str]], right: set[int] = frozenset(),
               aside: set[int] = frozenset(), label: str = "{name} {value}") -> None:
    """A table whose cells (rich markup, escaped) are never cut or folded within a word, at any
    width. It is a table where it fits the output. Where it does not, the `aside` columns leave
    it: each row's are written as `label`s (an empty cell or '-' left out), wrapped at spaces,
    beside the rest of the row where there is room (_ASIDE_MIN) and on lines under it otherwise.
    Where even the rest is too wide, each row is its first cell, then every cell as a label."""
    width = stdout.width
    if _table_width(headers, cells) <= width:
        _print_table(headers, cells, right)
        return
    kept = [i for i in range(len(headers)) if i not in aside]
    main_headers = [headers[i] for i in kept]
    main_cells = [[row[i] for i in kept] for row in cells]
    main_right = {n for n, i in enumerate(kept) if i in right}
    asides = ["  ".join(_label(label, headers[i], row[i]) for i in sorted(aside) if row[i] not in ("", "-"))
              for row in cells]
    main_width = _table_width(main_headers, main_cells)
    if main_width > width:
        for row in cells:
            _print_items([f"{escape(headers[0])} {row[0]}"] + [_label(label, headers[i], row[i])
                          for i in range(1, len(headers)) if row[i] not in ("", "-")], "    ")
        return
    widths = _widths(main_headers, main_cells)
    beside = width - main_width - _GAP >= _ASIDE_MIN
    if beside:
        column = main_width + _GAP
        header = _line(_bold(main_headers), widths, main_right)
        if "{name}" not in label:  # the cells beside do not name their columns: the header does
            header += " " * (column - _row_width(main_headers, widths)) + \
                "[bold]" + escape(", ".join(headers[i] for i in sorted(aside))) + "[/bold]"
        stdout.print(header)
        for row, text in zip(main_cells, asides):
            lines = _fill(text, width - column) or [""]
            stdout.print((_line(row, widths, main_right) + " " * (column - _row_width(row, widths))
                          + lines[0]).rstrip())
            for more in lines[1:]:
                stdout.print(" " * column + more)
        return
    indent = " " * (widths[0] + _GAP)
    stdout.print(_line(_bold(main_headers), widths, main_right))
    for row, text in zip(main_cells, asides):
        stdout.print(_line(row, widths, main_right))
        for line in _fill(text, width - len(indent)):
            stdout.print(indent + line, style="dim")


def _label(label: str, name: str, value: str) -> str:
    """A cell with its column's name (a column with none: the cell alone)."""
    return label.format(name=escape(name), value=value) if name else value


def _fill(text: str, width: int) -> list[str]:
    """Markup `text` in lines of at most `width` (wider only for a word wider than that), broken
    at spaces; each line markup again."""
    plain = Text.from_markup(text).plain
    return [escape(line) for line in textwrap.wrap(plain, width=max(width, 10), break_long_words=False,
                                                   break_on_hyphens=False)]


def _cell_width(cell: str) -> int:
    """The width a cell (rich markup) takes on a terminal."""
    return Text.from_markup(cell).cell_len


def _widths(headers: list[str], cells: list[list[str]]) -> list[int]:
    return [max([len(header)] + [_cell_width(row[i]) for row in cells]) for i, header in enumerate(headers)]


def _table_width(headers: list[str], cells: list[list[str]]) -> int:
    widths = [w for w in _widths(headers, cells) if w]
    return sum(widths) + _GAP * (len(widths) - 1)


def _row_width(row: list[str], widths: list[int]) -> int:
    return _cell_width(_line(row, widths, set(range(len(row)))))


def _line(cells: list[str], widths: list[int], right: set[int]) -> str:
    parts = []
    for i, (cell, width) in enumerate(zip(cells, widths)):
        if not width:
            continue
        pad = " " * (width - _cell_width(cell))
        parts.append(pad + cell if i in right else cell + pad)
    return (" " * _GAP).join(parts).rstrip()


def _bold(headers: list[str]) -> list[str]:
    return [f"[bold]{escape(h)}[/bold]" if h else "" for h in headers]


def _print_table(headers: list[str], cells: list[list[str]], right: set[int]) -> None:
    """A table on one line per row, every cell whole, the headers in bold."""
    widths = _widths(headers, cells)
    stdout.print(_line(_bold(headers), widths, right))
    for row in cells:
        stdout.print(_line(row, widths, right))


def _print_items(items: list[str], indent: str) -> None:
    """Items (rich markup) on lines no wider than the output, none broken, the lines after the
    first under `indent`."""
    lines: list[list[str]] = [[]]
    used = 0
    for item in items:
        width = _cell_width(item)
        if lines[-1] and used + _GAP + width > stdout.width:
            lines.append([])
            used = len(indent)
        used += (_GAP if lines[-1] else 0) + width
        lines[-1].append(item)
    for n, line in enumerate(lines):
        stdout.print((indent if n else "") + "  ".join(line))


def jsonable(value: object) -> object:
    """`value` as JSON takes it: numpy's numbers as Python's, tuples as lists, and NaN or
    infinity (a figure that has no value) as null."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict, str)):
        value = value.item()  # a numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def print_json(data: object) -> None:
    """One JSON document on stdout (--json): a listing a program reads, unescaped and unwrapped."""
    click.echo(json.dumps(jsonable(data), indent=1, ensure_ascii=False, allow_nan=False))


def write_output(output: str, stores: list[str], force: bool, write: Callable[[Path], None] | None = None) -> None:
    """Checks --output (with no `write`), or writes it beside and renames it into place: never
    onto a store, nor onto anything labctl did not write unless --force (labctl.vocabulary.files)."""
    try:
        if write is None:
            files.check_target("--output", Path(output), [Path(s) for s in stores], force)
        else:
            files.write_file("--output", output, write, [Path(s) for s in stores], force)
    except files.OutputError as error:
        fail(str(error), error.code)
