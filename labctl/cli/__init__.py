"""The `labctl` command group. Each command is a module of labctl.cli.commands, imported only when
it runs (asv's layout): `labctl report` loads the store side and never the extension. A command
ends by returning, or by raising console.Failed, which this group turns into its exit code
(README: "Exit codes"); nothing below it ends the process.
"""

from __future__ import annotations

import importlib
import sys

import click

from labctl import __version__
from labctl.catalogue.native import ExtensionMissing
from labctl.cli.console import EXIT_FAILED, EXIT_INTERRUPTED, Failed
from labctl.store import StoreError
from labctl.vocabulary.text import printable

# Each command's module under labctl.cli.commands, in the order `labctl --help` lists them.
COMMANDS = ("kernels", "run", "experiments", "plan", "sweep", "runs", "show", "fingerprint", "report",
            "export", "gate", "compare", "calibrate", "ab", "history", "bisect", "publish")


def _exit(message: str, code: int) -> None:
    for line in message.splitlines() or [""]:
        click.echo(f"labctl: {printable(line)}", err=True)
    sys.exit(code)


class _Labctl(click.Group):
    """The command group: commands loaded by name; a command's failure, a missing extension and
    Ctrl-C anywhere a command does not handle it itself end labctl with its code and one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return importlib.import_module(f"labctl.cli.commands.{name}").command

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except Failed as failed:
            _exit(str(failed), failed.code)
        except ExtensionMissing as missing:
            _exit(str(missing), EXIT_FAILED)
        except StoreError as error:  # a store found damaged where the command reads it
            _exit(str(error), error.code)
        except (KeyboardInterrupt, click.Abort):
            _exit("interrupted", EXIT_INTERRUPTED)


@click.group(cls=_Labctl, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="labctl")
def main() -> None:
    """A performance lab for actor runtimes: verified benchmark kernels on a fast C++ actor
    runtime, each run in its own worker process."""
