"""What the `labctl` command prints on a terminal: its two consoles, one-line errors, free text
wrapped to the output's width, the kernels and their runtimes, tables of points, the progress
bar of a sweep. Everything that came from outside (a file, a store, a peer) is escaped here
(labctl.text.printable) and never read as rich markup."""

from __future__ import annotations

import contextlib
import shlex
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from labctl import experiment, kernels, measures, runner, runtimes, stats, studies
from labctl.sample import COUNTS, Sample
from labctl.schema import Kernel
from labctl.store import PointRow, RunRow, Store, StoreError
from labctl.text import count_name, format_count, format_duration, format_seconds, machine_line, printable, show

if TYPE_CHECKING:
    import pandas as pd

# Exit codes (README: "Exit codes").
EXIT_FAILED = 1  # a kernel failed (wrong answer, crash, timeout), or a store or an output could not be written
EXIT_USAGE = 2  # bad input: unknown kernel or parameter, a bad value, a file that is not a store
EXIT_INTERRUPTED = 130  # Ctrl-C (or SIGTERM during a sweep)

# Piped output is 100 columns wide (rich would take 80): tables fit it, and free text that can
# be long is wrapped to it (wrapped); a line of a log (a path, a message) is never broken.
stdout = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 100)
stderr = Console(highlight=False, soft_wrap=True, stderr=True)


def fail(message: str, code: int) -> None:
    """One line on stderr, escaped, and the exit code."""
    click.echo(f"labctl: {printable(message)}", err=True)
    sys.exit(code)


def safe(value: object) -> str:
    """Text from outside for rich: no control character, no markup."""
    return escape(printable(value))


def open_store(path: str, create: bool = True) -> Store:
    try:
        return Store(path, create=create)
    except StoreError as error:  # a file that is no store (2), or one the system refuses (1)
        fail(str(error), error.code)


def load_plan(path: str, seed: int | None, scale: str = "default") -> experiment.Plan:
    try:
        return experiment.load(path, seed, scale)
    except experiment.ExperimentError as error:
        for line in str(error).splitlines():
            click.echo(f"labctl: {line}", err=True)
        sys.exit(EXIT_USAGE)


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


# -- kernels and runtimes -----------------------------------------------------------------------

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
        "params": [{"name": p.name, "type": p.type, "default": p.default, "default_for": dict(p.default_for),
                    "allowed": p.allowed(), "applies_to": list(p.applies_to), "runtimes": list(p.runtimes),
                    "help": p.help}
                   for p in kernel.params],
        "runtimes": [{"name": name, "available": not known[name].missing, "missing": known[name].missing}
                     for name in kernel.runtimes],
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


# -- points, samples and sweeps -----------------------------------------------------------------

def print_points(points: list[tuple[str, dict]], extra: dict[str, list[str]],
                 folding: frozenset[str] = frozenset({""})) -> None:
    """One table per kernel: its points, the parameters that vary among them, then `extra`
    columns (one value per point, in `points` order); its fixed parameters underneath. Where the
    table is too wide, only the `folding` columns fold onto more lines; no figure is cut."""
    from labctl.analysis import varying  # pandas: imported by the commands that print points

    for kernel in dict.fromkeys(kernel for kernel, _ in points):
        indices = [i for i, (k, _) in enumerate(points) if k == kernel]
        rows = [points[i][1] for i in indices]
        spec = kernels.catalogue().get(kernel) or Kernel(kernel, "", "", (), "", "", ())
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


def sample_line(sample: Sample, repeat: int) -> str:
    """One run of `labctl run`: its time, throughput, what it counted (the measure's), the
    kernel's metrics and its answer."""
    valgrind = sample.measure == measures.INSTRUCTIONS
    figures = [f"run {sample.index + 1}/{repeat}", f"{format_duration(sample.elapsed_ns):>9}"
               + (" (under valgrind)" if valgrind else ""),
               f"{stats.throughput(sample.messages_processed, sample.elapsed_ns) / 1e6:7.2f} M msgs/s"]
    figures += [f"{format_count(value, name)} {count_name(name)}" for name in COUNTS
                if (value := getattr(sample, name)) is not None]
    if sample.unsupported:
        figures.append(f"[yellow]unsupported here:[/yellow] {', '.join(map(count_name, sample.unsupported))}")
    if sample.schedule_dependent:
        figures.append("[yellow]schedule-dependent[/yellow]")
    for name, value in sample.metrics.items():
        figures.append(f"{name.removesuffix('_ns')} {format_duration(value)}"
                       if name.endswith("_ns") else f"{name} {show(round(value, 2))}")
    return "  " + "  ".join(figures) + f"  [green]ok[/green] {safe(sample.answer)}"


def runs_summary(samples: list[Sample]) -> str:
    """The median of `labctl run`'s runs, with the fastest and the slowest; of each count too,
    with its spread ((max - min) / median)."""
    lines = []
    s = stats.summarize([sample.elapsed_ns for sample in samples])
    under = " under valgrind" if samples[0].measure == measures.INSTRUCTIONS else ""
    lines.append(f"  median {format_duration(s.median)}{under}  (min {format_duration(s.minimum)}, "
                 f"max {format_duration(s.maximum)}, {s.count} runs)")
    for name in COUNTS:
        values = [value for sample in samples if (value := getattr(sample, name)) is not None]
        if len(values) == len(samples):
            c = stats.summarize(values)
            spread = (c.maximum - c.minimum) / c.median * 100 if c.median else 0.0
            lines.append(f"  median {format_count(c.median, name)} {count_name(name)}  (min "
                         f"{format_count(c.minimum, name)}, max {format_count(c.maximum, name)}, "
                         f"spread {spread:.3g}%, {c.count} runs)")
    return "\n".join(lines)


def print_experiments(shipped: dict[str, Path], store: Store | None) -> None:
    """The shipped experiments: name, the studies each reproduces, its points and its estimated
    time (from the runs in `store`, else a guess)."""
    table = Table(box=None, padding=(0, 2), show_edge=False, pad_edge=False)
    for column in ("name", "study", "points", "estimate"):
        table.add_column(column, justify="right" if column in ("points", "estimate") else "left")
    for name, path in shipped.items():
        try:
            plan = experiment.load(path, seed=0)
        except experiment.ExperimentError as error:
            table.add_row(safe(name), f"[red]cannot be read:[/red] {safe(error)}", "", "")
            continue
        cited = "; ".join(f"{s.title} ({s.author}, {s.year})" for s in plan.studies) or "-"
        guess = runner.estimate(plan.points, store)
        table.add_row(safe(name), safe(cited), str(len(plan.points)),
                      ("~" if guess.is_guess else "") + format_seconds(guess.seconds))
    stdout.print(table)
    stdout.print("estimate: from the runs in the store where it has them; ~ marks a guess from "
                 "the kernels' sizes")


def print_plan(plan: experiment.Plan, db: str, store: Store | None) -> None:
    """The points a plan expands to, what expansion left out, and the time they will take."""
    samples = sum(p.repeats for p in plan.points)
    order = f"random (seed {plan.seed})" if plan.order == "random" else "as written"
    stdout.print(f"[bold]{safe(plan.name)}[/bold]: {safe(plan.description)}  "
                 f"({safe(plan.source)}{', scale full' if plan.scale == 'full' else ''})")
    stdout.print(f"{len(plan.points)} points, {samples} measured samples; order {order}")
    extra = {"warmup+repeats": [f"{p.warmup}+{p.repeats}" for p in plan.points]}
    if any(p.measure != measures.TIME for p in plan.points):
        extra["measure"] = [p.measure for p in plan.points]
    print_points([(p.kernel, p.params) for p in plan.points], extra)
    for note in plan.notes:
        stdout.print(f"note: {safe(note)}")
    stdout.print(safe(runner.estimate(plan.points, store).text(db)))


def print_runs(runs: list[RunRow]) -> None:
    """The runs of a store, a row each."""
    columns = ("run", "name", "status", "started", "points", "failed", "samples", "machine", "file")
    rows = [(str(r.id), safe(r.name), r.status, r.started_at[:16].replace("T", " "),
             f"{r.points_done}/{r.points}", str(r.points_failed), str(r.samples),
             safe(f"{r.machine.get('cpu_model')} x{r.machine.get('logical_cpus')}"), safe(r.source))
            for r in runs]
    # Nothing is cut in a narrow terminal: the machine and the file (a path of any length) fold
    # onto more lines, and every other column keeps the width of its longest value.
    folding = {"machine", "file"}
    table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    for i, column in enumerate(columns):
        if column in folding:
            table.add_column(column, overflow="fold")
        else:
            table.add_column(column, no_wrap=True,
                             min_width=max([len(column)] + [len(row[i]) for row in rows]))
    for row in rows:
        table.add_row(*row)
    stdout.print(table)


def print_show(row: RunRow, points: list[PointRow], samples: pd.DataFrame, db: str) -> None:
    """A run: its machine, each point's median with its interval and spread, its failures."""
    from labctl import analysis

    stdout.print(f"[bold]run {row.id}[/bold]: {safe(row.name)} ({safe(row.source)}), "
                 f"{row.status}, started {row.started_at[:19].replace('T', ' ')} UTC")
    groups = analysis.machines(samples)
    elsewhere = [machine for machine, _, _ in groups] not in ([], [machine_line(row.machine)])
    stdout.print(safe(f"{'swept from' if elsewhere else 'machine'}: {machine_line(row.machine)}; "
                      f"load {row.context.get('load_average')}; "
                      f"labctl {row.context.get('labctl')} {row.context.get('git_describe') or ''}; experiment "
                      f"{row.context.get('experiment_git_describe') or 'not in a git checkout'}"))
    for warning in row.warnings:
        stdout.print(f"[yellow]warning at start:[/yellow] {safe(warning)}")
    for machine, hosts, part in groups:
        if len(groups) > 1 or elsewhere:
            stdout.print(f"\n[bold]on {safe(machine)}[/bold] (hosts: {safe(', '.join(hosts))}; "
                         f"{part['point'].nunique()} points)")
        _print_medians(part, points)
    for p in points:
        if p.status in ("failed", "skipped"):
            status = f"[red]failed[/red] ({safe(p.failure_kind)})" if p.status == "failed" else "[yellow]skipped[/yellow]"
            stdout.print(f"{status} {safe(p.kernel)} {params_text(p.params)}: {safe(p.failure or '')}")
    pending = [p for p in points if p.status == "pending"]
    if pending:
        stdout.print(f"{len(pending)} points not run yet: `labctl sweep --resume {row.id} --db {safe(shlex.quote(db))}`")


def _print_medians(samples: pd.DataFrame, points: list[PointRow]) -> None:
    """The medians of the points of `samples` (one machine's), a table per kernel: the time, and
    each count the points' measures took (instructions, cache misses...)."""
    from labctl import analysis

    table = analysis.point_table(samples, analysis.TIME).sort_values("position")
    measured = {p.id: p for p in points}
    counts = {metric.column: analysis.point_table(samples, metric).set_index("point")
              for metric in analysis.counted(samples)}
    columns = {name: [] for name in ("n", "median", "95% CI", "cv", "msgs/s",
                                     *(count_name(name) for name in counts), "")}
    for _, point in table.iterrows():
        columns["n"].append(str(point["n"]))
        columns["median"].append(format_duration(point["median"]))
        low, high = point["ci_low"], point["ci_high"]
        columns["95% CI"].append(f"{format_duration(low)}..{format_duration(high)}"
                                 if low == low and low is not None else "(n<3)")  # NaN: none
        columns["cv"].append(f"{point['cv'] * 100:.1f}%")
        columns["msgs/s"].append(f"{point['rate_median'] / 1e6:.2f} M")
        for name, medians in counts.items():
            columns[count_name(name)].append(format_count(medians.loc[point["point"], "median"], name)
                                             if point["point"] in medians.index else "-")
        flags = ["[yellow]noisy[/yellow]"] if point["noisy"] else []
        if point["measure"] == measures.INSTRUCTIONS:
            flags.append("time under valgrind")
        if point["schedule_dependent"]:
            flags.append("[yellow]schedule-dependent[/yellow]")
        columns[""].append(", ".join(flags))
    print_points([(measured[p].kernel, measured[p].params) for p in table["point"]], columns,
                 frozenset({"", "95% CI"}))
    if counts:
        stdout.print("counts: medians over the measured phase (`labctl export` has every sample; "
                     "`unsupported` says why a counter is missing here)")


def print_gate(db: str, run: str, baseline: str | None, update: bool, threshold: float) -> None:
    """`labctl gate` once its run is stored: writes the baseline from it (`update`), or judges it
    against the baseline, prints the table and ends labctl with 1 where a point fails."""
    from labctl import gate

    try:
        with Store(db, create=False) as store:
            run_id = store.resolve_run(run)
            source = store.run(run_id).source
    except StoreError as error:
        fail(str(error), error.code)
    try:
        path = Path(baseline) if baseline else gate.baseline_path(experiment.locate(source))
    except experiment.ExperimentError as error:
        fail(f"gate: run {run_id}'s experiment is not here ({error}); give --baseline FILE", EXIT_USAGE)
    try:
        if update:
            gate.write(gate.record(db, run_id), path)
            stdout.print(f"run {run_id}: wrote the baseline {safe(path)}; commit it with the "
                         "change that moved the counts")
            return
        result = gate.check(db, run_id, gate.read(path), path, threshold)
    except gate.GateError as error:
        fail(f"gate: {error}", EXIT_FAILED)
    except OSError as error:
        fail(f"gate: --baseline {path}: cannot write: {error.strerror or error}", EXIT_FAILED)
    click.echo(gate.markdown(result))
    for row in result.failed:
        click.echo(f"labctl: gate: {printable(gate.label(row))}: {row.verdict}"
                   + (f" ({row.change:+.2f}% instructions)" if row.change is not None else "")
                   + (f" ({printable(row.note)})" if row.note and row.change is None else ""), err=True)
    if result.failed:
        sys.exit(EXIT_FAILED)
