"""`labctl publish OUT`: the store as a static site in the folder OUT (labctl.site). Reads the
store only."""

from __future__ import annotations

import click

from labctl import files
from labctl.commands.options import db_option, store_failures
from labctl.console import fail, safe, stdout
from labctl.store import Store, StoreError


@click.command("publish")
@click.argument("out", type=click.Path())
@db_option
@store_failures
def publish_command(out: str, db: str) -> None:
    """Write the store as a static site into the folder OUT: its runs (points and report), each
    experiment's history over commits with the changes found, the regressions, and each
    experiment's two latest runs compared. Plain files with relative links, read from file:// or
    any static host. OUT must be new, empty, or a site labctl published (it is replaced)."""
    from labctl import site

    try:
        Store(db, create=False).close()
    except StoreError as error:
        fail(f"--db {error}; give a store written by `labctl sweep`", error.code)
    try:
        published = site.write(db, out, progress=lambda line: stdout.print(safe(line)))
    except files.OutputError as error:
        fail(str(error), error.code)
    except StoreError as error:
        fail(f"--db {error}", error.code)
    counts = [(len(published.pages), "page"), (published.runs, "run"), (published.histories, "history"),
              (published.plots, "history plot"), (published.regressions, "regression"),
              (published.comparisons, "comparison")]
    stdout.print(f"{safe(published.folder / 'index.html')}: "
                 + ", ".join(f"{n} {word if n == 1 else _plural(word)}" for n, word in counts))


def _plural(word: str) -> str:
    return word[:-1] + "ies" if word.endswith("y") else word + "s"


command = publish_command
