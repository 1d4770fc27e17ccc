"""`labctl kernels`: the catalogue, each kernel with its parameters and defaults, and the
runtimes and allocators it runs on here (and why one cannot)."""

from __future__ import annotations

import json

import click
from rich.table import Table

from labctl.catalogue import kernels, runtimes, studies
from labctl.cli.console import EXIT_USAGE, fail, stdout, wrapped
from labctl.vocabulary.schema import Kernel


@click.command("kernels")
@click.option("--describe", "describe", metavar="KERNEL", help="Everything about one kernel.")
@click.option("--json", "as_json", is_flag=True, help="The catalogue as JSON.")
def kernels_command(describe: str | None, as_json: bool) -> None:
    """List the kernels with their parameters and defaults, and the runtimes they run on."""
    try:
        selected = [kernels.get(describe)] if describe is not None else list(kernels.catalogue().values())
    except kernels.ParamError as error:
        fail(str(error), EXIT_USAGE)
    if as_json:
        click.echo(json.dumps([kernel_json(k) for k in selected], indent=2))
    else:
        print_kernels(selected, describe is not None)


def print_kernels(selected: list[Kernel], describe: bool) -> None:
    """Each kernel (in full with `describe`) with its parameters, then its runtimes."""
    for kernel in selected:
        if describe:
            _print_description(kernel)
        else:
            wrapped(f"{kernel.name}  {kernel.summary}", style="bold")
            stdout.print(_params_table(kernel))
    _print_runtimes(selected)


def kernel_json(kernel: Kernel) -> dict:
    known = runtimes.runtimes()
    return {
        "name": kernel.name, "summary": kernel.summary, "description": kernel.description,
        "source": kernel.source,
        "studies": [{"part": part, **studies.catalogue()[key].to_dict()} for key, part in kernel.sources],
        "verifies": kernel.verifies,
        "metrics": list(kernel.metrics),  # its own figures, beside every sample's (labctl.vocabulary.metrics)
        "params": [{"name": p.name, "type": p.type, "default": p.default, "default_for": dict(p.default_for),
                    "allowed": p.allowed(), "applies_to": list(p.applies_to), "runtimes": list(p.runtimes),
                    "help": p.help}
                   for p in kernel.params],
        "runtimes": [{"name": name, "available": not known[name].missing, "missing": known[name].missing}
                     for name in kernel.runtimes]
        # A peer whose peer.toml cannot be read: which kernels it offers is unknown, so it is
        # listed under each, unavailable, with why (as `labctl kernels` lists it).
        + [{"name": runtime.name, "available": False, "missing": runtime.missing}
           for runtime in known.values()
           if runtime.kind == "external" and runtime.manifest is None and runtime.name not in kernel.runtimes],
    }


def _params_table(kernel: Kernel) -> Table:
    table = Table(box=None, padding=(0, 2), show_edge=False, pad_edge=False)
    for column in ("parameter", "default", "allowed", "with"):
        table.add_column(column, style="cyan" if column == "parameter" else None)
    for p in kernel.params:
        table.add_row(p.name, p.default_text(), p.allowed(), p.scope())
    return table


def _print_description(kernel: Kernel) -> None:
    wrapped(f"{kernel.name}: {kernel.summary}", style="bold")
    stdout.print()
    wrapped(kernel.description)
    stdout.print("\n[bold]Studies:[/bold]")
    for key, part in kernel.sources:
        wrapped(f"{part}, in {studies.catalogue()[key].citation}", "  ")
    wrapped(f"Verifies: {kernel.verifies}")
    stdout.print("\n[bold]Parameters:[/bold]")
    for p in kernel.params:
        scope = f"; with {p.scope()}" if p.scope() != "all" else ""
        wrapped(f"{p.name} = {p.default_text()}  ({p.allowed()}{scope})", "  ", style="cyan")
        wrapped(p.help, "      ")


def _print_runtimes(selected: list[Kernel]) -> None:
    """The runtimes and allocators of the kernels listed, and why any cannot run here; every
    runtime labctl knows when every kernel is listed (a broken peer too, saying why)."""
    known = runtimes.runtimes()
    stdout.print("\n[bold]Runtimes[/bold] (`runtime = ...`)")
    names = dict.fromkeys(r for k in selected for r in k.runtimes)
    if len(selected) > 1:
        names.update(dict.fromkeys(known))
    for name in names:
        runtime = known[name]
        on = [k.name for k in selected if name in k.runtimes]
        state = "unavailable: " + runtime.missing if runtime.missing else "available"
        wrapped(f"{name}  {runtime.summary}; {state}", "  ", style="red" if runtime.missing else None)
        wrapped(f"kernels: {', '.join(on) or 'none'}"
                + (f"; peer folder {runtime.folder}" if runtime.folder else ""), "      ")
    stdout.print("[bold]Allocators[/bold] (`allocator = ...`, on runtimes labctl and caf)")
    for name in runtimes.ALLOCATORS:
        why = runtimes.allocator_missing(name)
        wrapped(f"{name}  " + (f"unavailable: {why}" if why else "available"), "  ",
                style="red" if why else None)


command = kernels_command
