"""`labctl kernels`: the catalogue, a line per kernel (what it measures, the study it comes
from); `--describe KERNEL`, one kernel in full (its parameters and their defaults, its metrics);
and the runtimes and allocators the kernels run on here (and why one cannot)."""

from __future__ import annotations

import click

from labctl.catalogue import kernels, runtimes, studies
from labctl.cli.console import EXIT_USAGE, fail, print_json, safe, stdout, wrapped
from labctl.vocabulary import metrics
from labctl.vocabulary.schema import Kernel
from labctl.vocabulary.text import shorten


@click.command("kernels")
@click.option("--describe", "describe", metavar="KERNEL",
              help="One kernel in full: what it measures and verifies, its studies, its parameters "
                   "(default, allowed values, where each applies), its metrics and runtimes.")
@click.option("--json", "as_json", is_flag=True, help="The catalogue (or the KERNEL described) as one JSON document.")
def kernels_command(describe: str | None, as_json: bool) -> None:
    """List the kernels, a line each (what it measures, its study), and the runtimes and
    allocators they run on; `--describe KERNEL` for one kernel's parameters."""
    try:
        selected = [kernels.get(describe)] if describe is not None else list(kernels.catalogue().values())
    except kernels.ParamError as error:
        fail(f"--describe: {error}", EXIT_USAGE)
    if as_json:
        print_json([kernel_json(k) for k in selected])
    else:
        print_kernels(selected, describe is not None)


def print_kernels(selected: list[Kernel], describe: bool) -> None:
    """One kernel in full (`describe`), or each kernel on a line; then their runtimes."""
    if describe:
        for kernel in selected:
            _print_description(kernel)
    else:
        _print_listing(selected)
    _print_runtimes(selected)


def measures(kernel: Kernel) -> str:
    """What a kernel measures, in a few words: its summary's last clause (after its last colon),
    else its summary."""
    _, colon, tail = kernel.summary.rpartition(": ")
    return tail if colon and len(tail) >= 12 else kernel.summary


def study_label(kernel: Kernel) -> str:
    """The study a kernel comes from, as a reference is cited in text: Arena 2024, Imam and
    Sarkar 2014, Blessing et al. 2019 (+N: as many more studies)."""
    if not kernel.sources:
        return "-"
    study = studies.catalogue()[kernel.sources[0][0]]
    names = [name.strip() for part in study.author.split(" and ") for name in part.split(",") if name.strip()]
    surnames = [name.split()[-1] for name in names]
    who = surnames[0] if len(surnames) == 1 else " and ".join(surnames) if len(surnames) == 2 else f"{surnames[0]} et al."
    more = f" +{len(kernel.sources) - 1}" if len(kernel.sources) > 1 else ""
    return f"{who} {study.year}{more}"


def _print_listing(selected: list[Kernel]) -> None:
    """A line per kernel, as wide as the output: its name, what it measures (cut at a word where
    the line is too narrow for all of it) and its study."""
    name_width = max(len("kernel"), *(len(k.name) for k in selected))
    labels = {k.name: study_label(k) for k in selected}
    study_width = max(len("study"), *(len(label) for label in labels.values()))
    room = max(stdout.width - name_width - study_width - 4, 20)
    said = {k.name: shorten(measures(k), room) for k in selected}
    room = min(room, max(len("measures"), *(len(text) for text in said.values())))
    stdout.print(f"[bold]{'kernel':<{name_width}}  {'measures':<{room}}  study[/bold]")
    for kernel in selected:
        stdout.print(f"{safe(kernel.name):<{name_width}}  {safe(said[kernel.name]):<{room}}  "
                     f"{safe(labels[kernel.name])}")
    wrapped("`labctl kernels --describe KERNEL`: its parameters, defaults, metrics and studies; "
            "`labctl run KERNEL --help`: its parameters as options")


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


def _print_description(kernel: Kernel) -> None:
    """A kernel in full: what it does, its studies, what it verifies, then each parameter (its
    default, allowed values, where it applies, and what it means) and the kernel's own metrics."""
    wrapped(f"{kernel.name}: {kernel.summary}", style="bold")
    stdout.print()
    wrapped(kernel.description)
    stdout.print("\n[bold]Studies:[/bold]")
    for key, part in kernel.sources:
        wrapped(f"{part}, in {studies.catalogue()[key].citation}", "  ")
    wrapped(f"Verifies: {kernel.verifies}")
    stdout.print("\n[bold]Parameters[/bold] (name = default  (allowed values; where it applies)):")
    for p in kernel.params:
        scope = f"; with {p.scope()}" if p.scope() != "all" else ""
        wrapped(f"{p.name} = {p.default_text()}  ({p.allowed()}{scope})", "  ", style="cyan")
        wrapped(p.help, "      ")
    stdout.print("\n[bold]Metrics[/bold] (its own, beside every sample's time, messages and counts):")
    for name in kernel.metrics:
        metric = metrics.lookup(name)
        said = [metric.unit] if metric.unit else []
        said += [f"{metric.better} is better"] if metric.better else []
        wrapped(f"{name}  {metric.words}" + (f" ({', '.join(said)})" if said else ""), "  ")
    if not kernel.metrics:
        stdout.print("  none")


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
        offers = "" if len(selected) == 1 else \
            f"; kernels: {', '.join(on)}" if 0 < len(on) <= 3 else f"; {len(on) or 'no'} kernels"
        wrapped(f"{name}  {runtime.summary}; {state}{offers}", "  ",
                style="red" if runtime.missing else None)
    stdout.print("[bold]Allocators[/bold] (`allocator = ...`, on runtimes labctl and caf)")
    for name in runtimes.ALLOCATORS:
        why = runtimes.allocator_missing(name)
        wrapped(f"{name}  " + (f"unavailable: {why}" if why else "available"), "  ",
                style="red" if why else None)


command = kernels_command
