"""`labctl publish`: the store as a static site in a folder (labctl.read.site). Reads the store only."""

from __future__ import annotations

import click

from labctl.cli.commands.options import db_option, output_option, store_failures
from labctl.cli.console import fail, safe, stdout
from labctl.store import Store, StoreError
from labctl.vocabulary import files

DEFAULT_FOLDER = "site"


@click.command("publish")
@output_option("The site's folder (default: site): new, empty, or a site labctl published, "
               "which is replaced.")
@db_option
@store_failures
def publish_command(output: str | None, db: str) -> None:
    """Write the store as a static site into a folder (--output, default site): its runs (points and report), each
    experiment's history over commits with the changes found, the regressions, and each
    experiment's two latest runs compared. Plain files with relative links, read from file:// or
    any static host."""
    from labctl.read import site

    try:
        Store(db, create=False).close()
    except StoreError as error:
        fail(f"--db {error}; give a store written by `labctl sweep`", error.code)
    try:
        published = site.write(db, output or DEFAULT_FOLDER, progress=lambda line: stdout.print(safe(line)),
                               option="--output")
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
