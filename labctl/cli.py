"""The `labctl` command: argument parsing and printing only; the work is done by the modules it
calls (kernels, runner, stats).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import click
from rich.console import Console
from rich.table import Table

from labctl import __version__, kernels, runner, stats

EXIT_USAGE = 2  # bad input: unknown kernel or parameter, bad value
EXIT_FAILED = 1  # a kernel failed: wrong answer, crash, timeout

stdout = Console(highlight=False, soft_wrap=True)


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit code 2."""


def fail(message: str, code: int) -> None:
    click.echo(f"labctl: {message}", err=True)
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="labctl")
def main() -> None:
    """A performance lab for actor runtimes: verified benchmark kernels on a fast C++ actor
    runtime, each run in its own worker process."""


@main.command("kernels")
@click.option("--describe", "describe", metavar="KERNEL", help="Everything about one kernel.")
@click.option("--json", "as_json", is_flag=True, help="The catalogue as JSON.")
def kernels_command(describe: str | None, as_json: bool) -> None:
    """List the kernels with their parameters and defaults."""
    catalogue = kernels.catalogue()
    if describe is not None:
        try:
            selected = [kernels.get(describe)]
        except kernels.ParamError as error:
            fail(str(error), EXIT_USAGE)
    else:
        selected = list(catalogue.values())
    if as_json:
        click.echo(json.dumps([_kernel_json(k) for k in selected], indent=2))
        return
    for kernel in selected:
        if describe is not None:
            _print_description(kernel)
        else:
            stdout.print(f"[bold]{kernel.name}[/bold]  {kernel.summary}")
            stdout.print(_params_table(kernel))


def _kernel_json(kernel: kernels.Kernel) -> dict:
    return {
        "name": kernel.name,
        "summary": kernel.summary,
        "description": kernel.description,
        "source": kernel.source,
        "verifies": kernel.verifies,
        "params": [
            {
                "name": p.name,
                "type": p.type,
                "default": p.default,
                "allowed": p.allowed(),
                "applies_to": list(p.applies_to),
                "help": p.help,
            }
            for p in kernel.params
        ],
    }


def _params_table(kernel: kernels.Kernel) -> Table:
    table = Table(box=None, padding=(0, 2), show_edge=False, pad_edge=False)
    for column in ("parameter", "default", "allowed", "with"):
        table.add_column(column, style="cyan" if column == "parameter" else None)
    for p in kernel.params:
        table.add_row(p.name, _show(p.default), p.allowed(), ", ".join(p.applies_to) or "all")
    return table


def _print_description(kernel: kernels.Kernel) -> None:
    stdout.print(f"[bold]{kernel.name}[/bold]: {kernel.summary}\n")
    stdout.print(kernel.description + "\n")
    stdout.print(f"[bold]Study:[/bold] {kernel.source}")
    stdout.print(f"[bold]Verifies:[/bold] {kernel.verifies}\n")
    stdout.print("[bold]Parameters:[/bold]")
    for p in kernel.params:
        scope = f"; with {', '.join(p.applies_to)}" if p.applies_to else ""
        stdout.print(f"  [cyan]{p.name}[/cyan] = {_show(p.default)}  ({p.allowed()}{scope})")
        stdout.print(f"      {p.help}")


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_kernel_args(args: Sequence[str]) -> dict[str, str]:
    """`--name value` and `--name=value` pairs; dashes in names read as underscores."""
    given: dict[str, str] = {}
    i = 0
    while i < len(args):
        token = args[i]
        if not token.startswith("--") or token == "--":
            raise UsageError(f"unexpected argument '{token}' (parameters are given as --name value)")
        name, equals, value = token[2:].partition("=")
        name = name.replace("-", "_")
        if not equals:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise UsageError(f"parameter '{name}' needs a value (--{name} VALUE)")
            value = args[i + 1]
            i += 1
        if name in given:
            raise UsageError(f"parameter '{name}' given twice")
        given[name] = value
        i += 1
    return given


@main.command(
    "run",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument("kernel")
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1, 1000),
              help="Measured runs.")
@click.option("--warmup", default=0, show_default=True, type=click.IntRange(0, 1000),
              help="Runs before the measured ones, in the same worker process, not reported.")
@click.option("--timeout", default=600.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds the whole point may take before its worker is killed.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per sample on stdout.")
@click.pass_context
def run_command(ctx: click.Context, kernel: str, repeat: int, warmup: int, timeout: float,
                as_json: bool) -> None:
    """Run KERNEL in a worker process and print its samples.

    Kernel parameters follow as --name value (see `labctl kernels`), e.g.
    `labctl run skynet --dispatcher thread_pool --threads 2 --repeat 5`.
    """
    try:
        spec = kernels.get(kernel)
        given = parse_kernel_args(ctx.args)
        params = kernels.resolve(spec.name, given)
    except (UsageError, kernels.ParamError) as error:
        prefix = "" if isinstance(error, kernels.ParamError) else f"{kernel}: "
        fail(prefix + str(error), EXIT_USAGE)

    point = runner.Point(
        kernel=spec.name,
        params={name: value for name, value in params.items() if value is not None},
        repeat=repeat,
        warmup=warmup,
        timeout_s=timeout,
    )
    if not as_json:
        stdout.print(f"[bold]{spec.name}[/bold]  " + "  ".join(
            f"{name}={_show(value)}" for name, value in params.items() if value is not None))
    elapsed: list[float] = []
    try:
        for sample in runner.run_point(point):
            if sample["warmup"]:
                continue
            elapsed.append(sample["elapsed_ns"])
            if as_json:
                click.echo(json.dumps(sample))
            else:
                stdout.print(_sample_line(sample, repeat))
    except runner.PointFailed as error:
        fail(f"{spec.name} failed: {error}", EXIT_USAGE if error.kind == "param" else EXIT_FAILED)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    if not as_json and len(elapsed) > 1:
        s = stats.summarize(elapsed)
        stdout.print(f"  median {_duration(s.median)}  (min {_duration(s.minimum)}, "
                     f"max {_duration(s.maximum)}, {s.count} runs)")


def _sample_line(sample: dict, repeat: int) -> str:
    figures = [
        f"run {sample['index'] + 1}/{repeat}",
        f"{_duration(sample['elapsed_ns']):>9}",
        f"{stats.throughput(sample['messages'], sample['elapsed_ns']) / 1e6:7.2f} M msgs/s",
    ]
    for name, value in sample["metrics"].items():
        figures.append(f"{name.removesuffix('_ns')} {_duration(value)}" if name.endswith("_ns")
                       else f"{name} {_show(round(value, 2))}")
    return "  " + "  ".join(figures) + f"  [green]ok[/green] {sample['answer']}"


def _duration(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"
