"""`labctl run KERNEL`: one point in a worker process, its samples printed as they come."""

from __future__ import annotations

import json

import click

from labctl.catalogue import kernels
from labctl.cli.commands.options import FloatRange, IntRange, old_spelling
from labctl.cli.console import EXIT_FAILED, EXIT_USAGE, fail, params_text, safe, stdout
from labctl.plan import experiment
from labctl.run import runner
from labctl.vocabulary import metrics, stats
from labctl.vocabulary.point import Point
from labctl.vocabulary.sample import Sample
from labctl.vocabulary.schema import Param
from labctl.vocabulary.text import format_duration


class _RunCommand(click.Command):
    """`labctl run`, whose --help after a KERNEL lists that kernel's parameters as options."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # --help is eager: click answers it before KERNEL is parsed, so the kernel is read here.
        if args and not args[0].startswith("-"):
            ctx.meta["labctl.kernel"] = args[0]
        return super().parse_args(ctx, args)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        name = ctx.meta.get("labctl.kernel")
        if name is None:
            formatter.write_paragraph()
            formatter.write_text("`labctl run KERNEL --help` lists KERNEL's parameters.")
            return
        try:
            spec = kernels.get(name)
        except kernels.ParamError as error:
            fail(str(error), EXIT_USAGE)
        with formatter.section(f"Parameters of {spec.name} (--name VALUE; `labctl kernels --describe "
                               f"{spec.name}` says more)"):
            formatter.write_dl([(f"--{p.name} {p.type.upper()}", kernel_option_help(p)) for p in spec.params])


def kernel_option_help(param: Param) -> str:
    """A kernel parameter's line in `run KERNEL --help`: what it means, its default, allowed
    values and where it applies."""
    scope = f"; with {param.scope()}" if param.scope() != "all" else ""
    return f"{param.help} [default: {param.default_text()}; {param.allowed()}{scope}]"


@click.command("run", cls=_RunCommand, context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("kernel")
@click.option("--repeats", default=1, show_default=True, type=IntRange(1, 1000),
              help="Measured runs (an experiment's `repeats`).")
@old_spelling("--repeat", "repeat", type=IntRange(1, 1000))
@click.option("--warmup", default=0, show_default=True, type=IntRange(0, 1000),
              help="Runs before the measured ones, in the same worker process, not reported.")
@click.option("--timeout", default=600.0, show_default=True,
              type=FloatRange(min=0.1, max=experiment.MAX_TIMEOUT_S),
              help="Seconds the whole point may take before its worker is killed.")
@click.option("--measure", type=click.Choice(metrics.MEASURES), default=metrics.TIME, show_default=True,
              help="time: the clock; instructions: counted by valgrind's callgrind (the same every "
                   "run; 70-200x slower); counters: the CPU's and the kernel's perf_event counters.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per sample on stdout.")
@click.option("--quiet", "-q", is_flag=True,
              help="Print only errors and the last line: the median of the runs (the run, if one).")
@click.pass_context
def run_command(ctx: click.Context, kernel: str, repeats: int, repeat: int | None, warmup: int,
                timeout: float, measure: str, as_json: bool, quiet: bool) -> None:
    """Run KERNEL in a worker process and print its samples.

    Kernel parameters follow as --name value (see `labctl kernels`), e.g.
    `labctl run skynet --dispatcher thread_pool --threads 2 --repeats 5`.
    """
    repeats = repeat or repeats
    try:
        spec = kernels.get(kernel)
        params = kernels.point(spec.name, kernels.parse_args(spec.name, ctx.args), measure).params
    except kernels.ParamError as error:
        fail(f"--measure: {str(error).removeprefix(spec.name + ': ')}" if error.param == "measure"
             else str(error), EXIT_USAGE)
    point = Point(kernel=spec.name, params=params, repeats=repeats, warmup=warmup, timeout_s=timeout,
                  measure=measure)
    if not as_json and not quiet:
        stdout.print(f"[bold]{spec.name}[/bold]  " + params_text(params).replace(" ", "  ")
                     + (f"  (measure: {measure})" if measure != metrics.TIME else ""))
    taken = []
    try:
        for sample in runner.run_point(point):
            if sample.warmup:
                continue
            taken.append(sample)
            if as_json:
                click.echo(json.dumps(sample.to_json()))
            elif not quiet or repeats == 1:
                stdout.print(sample_line(sample, repeats))
    except runner.PointFailed as error:
        fail(f"{spec.name} failed: {error}", EXIT_USAGE if error.kind == "param" else EXIT_FAILED)
    if not as_json and len(taken) > 1:
        stdout.print(runs_summary(taken))


def sample_line(sample: Sample, repeat: int) -> str:
    """One run of `labctl run`: its time, throughput, what it counted (the measure's), the
    kernel's metrics and its answer."""
    valgrind = sample.measure == metrics.INSTRUCTIONS
    figures = [f"run {sample.index + 1}/{repeat}", f"{format_duration(sample.elapsed_ns):>9}"
               + (" (under valgrind)" if valgrind else ""),
               f"{stats.throughput(sample.messages_processed, sample.elapsed_ns) / 1e6:7.2f} M msgs/s"]
    figures += [f"{metrics.lookup(name).format(value)} {metrics.lookup(name).words}"
                for name, value in _counts(sample).items()]
    if sample.unsupported:
        figures.append("[yellow]unsupported here:[/yellow] "
                       + ", ".join(metrics.lookup(name).words for name in sample.unsupported))
    if sample.schedule_dependent:
        figures.append("[yellow]schedule-dependent[/yellow]")
    figures += [f"[yellow]{words}[/yellow]" for words in metrics.refusals(sample.metrics)]
    figures += [f"{name} {metrics.lookup(name).format(value)}" for name, value in sample.metrics.items()]
    return "  " + "  ".join(figures) + f"  [green]ok[/green] {safe(sample.answer)}"


def _counts(sample: Sample) -> dict[str, int]:
    """A sample's counts in the registry's order."""
    return {name: sample.counts[name] for name in metrics.COUNTS if name in sample.counts}


def runs_summary(samples: list[Sample]) -> str:
    """The median of `labctl run`'s runs, with the fastest and the slowest; of each count too,
    with its spread ((max - min) / median)."""
    lines = []
    s = stats.summarize([sample.elapsed_ns for sample in samples])
    under = " under valgrind" if samples[0].measure == metrics.INSTRUCTIONS else ""
    lines.append(f"  median {format_duration(s.median)}{under}  (min {format_duration(s.minimum)}, "
                 f"max {format_duration(s.maximum)}, {s.count} runs)")
    for name in _counts(samples[0]):
        values = [sample.counts[name] for sample in samples if name in sample.counts]
        if len(values) == len(samples):
            metric, c = metrics.lookup(name), stats.summarize(values)
            spread = (c.maximum - c.minimum) / c.median * 100 if c.median else 0.0
            lines.append(f"  median {metric.format(c.median)} {metric.words}  (min {metric.format(c.minimum)}, "
                         f"max {metric.format(c.maximum)}, spread {spread:.3g}%, {c.count} runs)")
    return "\n".join(lines)

command = run_command
