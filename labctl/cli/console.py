"""What every `labctl` command prints with: its two consoles, one-line errors (Failed, which the
command group turns into the exit code), free text wrapped to the output's width, parameters,
tables of points, and the store and outputs a command opens. Everything that came from outside (a
file, a store, a peer) is escaped here (labctl.vocabulary.text.printable) and never read as rich markup.

Nothing here imports the extension or the run side: the commands that only read a store use it.
"""

from __future__ import annotations

import contextlib
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from labctl.store import Store, StoreError
from labctl.vocabulary import files
from labctl.vocabulary.schema import Catalogue, Kernel
from labctl.vocabulary.text import printable, show

if TYPE_CHECKING:
    from labctl.plan.experiment import Plan

# Exit codes (README: "Exit codes"), declared in labctl.vocabulary.exits; the commands take them from here.
from labctl.vocabulary.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE  # noqa: E402,F401

# Piped output is 100 columns wide (rich would take 80): tables fit it, and free text that can
# be long is wrapped to it (wrapped); a line of a log (a path, a message) is never broken.
stdout = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 100)
stderr = Console(highlight=False, soft_wrap=True, stderr=True)


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


def wrapped(line: str, indent: str = "", style: str | None = None, out: Console = stdout) -> None:
    """A line of free text, escaped, wrapped to the output's width under `indent`."""
    filled = textwrap.fill(printable(line), width=max(out.width, 40), initial_indent=indent,
                           subsequent_indent=indent + "    ", break_on_hyphens=False,
                           break_long_words=False)
    out.print(escape(filled), style=style)


def params_text(params: dict) -> str:
    """Parameters as name=value, escaped for rich."""
    return " ".join(f"{name}={safe(show(value))}" for name, value in params.items())


def print_points(points: list[tuple[str, dict]], extra: dict[str, list[str]], catalogue: Catalogue,
                 folding: frozenset[str] = frozenset({""})) -> None:
    """One table per kernel (its parameters as `catalogue` has them): its points, the parameters that vary among them, then `extra`
    columns (one value per point, in `points` order); its fixed parameters underneath. Where the
    table is too wide, only the `folding` columns fold onto more lines; no figure is cut."""
    from labctl.read.analysis import varying  # pandas: imported by the commands that print points

    for kernel in dict.fromkeys(kernel for kernel, _ in points):
        indices = [i for i, (k, _) in enumerate(points) if k == kernel]
        rows = [points[i][1] for i in indices]
        spec = catalogue.kernels.get(kernel) or Kernel(kernel, "", "", (), "", "", ())
        vary = varying(rows, spec, missing_varies=True) if spec.params else \
            [n for n in sorted({n for row in rows for n in row}) if len({repr(r.get(n)) for r in rows}) > 1]
        table = Table(box=None, padding=(0, 2 if len(extra) < 7 else 1), show_edge=False, pad_edge=False,
                      title=f"[bold]{safe(kernel)}[/bold]", title_justify="left")
        table.add_column("#", justify="right")
        for name in vary:
            table.add_column(name)
        for name in extra:
            table.add_column(name, justify="right", no_wrap=name not in folding, overflow="fold")
        for i, params in zip(indices, rows):
            table.add_row(str(i + 1), *[safe(show(params[n])) if n in params else "-" for n in vary],
                          *[values[i] for values in extra.values()])
        stdout.print(table)
        order = [p.name for p in spec.params] or sorted(rows[0])
        fixed = {n: rows[0][n] for n in order if n in rows[0] and n not in vary}
        stdout.print("  fixed: " + params_text(fixed) + "\n")


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
