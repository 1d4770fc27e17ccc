"""Options every command spells the same way (asv's common_args.py), and what a command that
reads a store does when the store fails under it."""

from __future__ import annotations

import functools
import math
import sqlite3

import click

from labctl.cli.console import EXIT_FAILED, EXIT_USAGE, fail
from labctl.store import explain, failure_kind
from labctl.vocabulary.schema import SCALES

DEFAULT_DB = "results.db"


class _AsciiNumber:
    """A number written in ASCII. Python's int() and float() take any script's digits ("３",
    "٣"), which kernel parameters, experiment files and the store refuse: every numeric option
    refuses them too, so that one spelling of a number is taken everywhere."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.isascii():
            self.fail(f"{value!r} is not a number written in ASCII digits", param, ctx)
        return super().convert(value, param, ctx)


class IntRange(_AsciiNumber, click.IntRange):
    """click.IntRange, in ASCII digits only."""


class FloatRange(_AsciiNumber, click.FloatRange):
    """click.FloatRange, in ASCII digits only."""


db_option = click.option("--db", default=DEFAULT_DB, show_default=True, type=click.Path(),  # a folder: the store says so in one line
                         help="The results store (an SQLite file).")
seed_option = click.option("--seed", type=IntRange(-2**63, 2**63 - 1),  # SQLite's integers
                           help="Seed of the random order (default: the file's, or one derived from its text).")
scale_option = click.option("--scale", type=click.Choice(SCALES), default="default",
                            show_default=True, help="full: the study's sizes (each grid's `full` table); long.")
# labctl history and labctl bisect: the repository whose commits are built, and the build cache.
repo_option = click.option("--repo", default=".", show_default=True, type=click.Path(),
                           help="The git repository whose commits are built (labctl's own, or a fork).")
cache_option = click.option("--cache", type=click.Path(),
                            help="The build cache (default: ~/.cache/labctl): each commit's extension, "
                                 "kept, shared by labctl history and labctl bisect.")
force_option = click.option("--force", is_flag=True,
                            help="Replace --output if it is an existing regular file (never a store, "
                                 "a link, a folder, a FIFO or a device).")


def output_option(help_text: str):
    # A path, unchecked by click: labctl.vocabulary.files checks it (a folder, a link, a device, a store) and
    # refuses in one line naming the option, where click's check prints a usage of three.
    return click.option("--output", "-o", "output", type=click.Path(), help=help_text)


def old_spelling(name: str, dest: str, **kwargs):
    """An option's former name, still taken and not shown."""
    return click.option(name, dest, hidden=True, **kwargs)


def percent(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """A percentage >= 0 (a click callback), refused in one line otherwise."""
    if value is None:
        return None
    try:
        number = float(value) if value.isascii() else math.nan
    except ValueError:
        number = math.nan
    if not number >= 0 or math.isinf(number):
        fail(f"{ctx.info_name}: {param.opts[0]} takes a percentage >= 0, got '{value}'", EXIT_USAGE)
    return number


def store_failures(command):
    """Reports a store that fails mid-command (damaged, read-only, disk full, locked too long) in
    one line naming it: exit 2 for a damaged file (bad input, like a foreign one), 1 otherwise.
    Every sample already written stays."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except sqlite3.DatabaseError as error:
            db = kwargs["db"]
            fail(f"{db}: {explain(error, db)}", EXIT_USAGE if failure_kind(error) == "damaged" else EXIT_FAILED)

    return wrapper
