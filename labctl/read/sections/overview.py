"""The report's sections on the run itself: what it is and how it went, the machines it ran on,
what did not run and why, and how to run it again."""

from __future__ import annotations

import shlex

from labctl.read.analysis import SHORT, _key
from labctl.read.sections.data import ReportData
from labctl.read.sections.markdown import blocks
from labctl.vocabulary.text import code_of, machine_line, markdown_table, printable, show

# A stored failure is a paragraph; its table cell keeps this much of it.
REASON_SHOWN = 300


def heading(run: ReportData) -> list[str]:
    """The run's name and description, the studies it reproduces, and how far it got."""
    row = run.row
    return blocks(
        f"# {printable(row.name)}: run {row.id}",
        *([printable(row.description)] if row.description else []),
        *(f"Reproduces {printable(study.citation)}" for study in run.catalogue.studies),
        f"Experiment `{printable(row.source)}`, run {row.id}, {printable(row.status)}, started {when(row.started_at)}"
        + (f", finished {when(row.finished_at)}" if row.finished_at else "") + ". "
        f"{row.points_done} of {row.points} points done, {row.points_failed} failed, "
        + (f"{row.points_skipped} skipped (cannot run here), " if row.points_skipped else "")
        + f"{row.samples} samples" + _verified(run),
        measured_at(row.context))


def measured_at(context: dict) -> str:
    """The sentence a report opens with: the commit it was measured at and the tree's state."""
    code = code_of(context)
    if not code:
        return ("**Measured at no known commit**: labctl was neither run from a git checkout nor "
                "built from one, so these figures cannot be tied to the code that made them.")
    if code.endswith("-dirty"):
        return (f"**Measured from a tree with uncommitted changes** (`{printable(code)}`): the "
                "code that made these figures is in no commit.")
    return f"Measured at commit `{printable(code)}`, a clean tree."


def _verified(run: ReportData) -> str:
    """What the samples' answers say, after their count: nothing to verify where there is none
    (every point failed, or none ran yet), never "every one verified"."""
    if run.samples.empty:
        return "."
    wrong = int((~run.samples["verified"]).sum())
    if not wrong:
        return ", every one verified against the kernel's expected answer."
    return f", **{wrong} of them with a wrong answer**."


def machines(run: ReportData) -> list[str]:
    """The machine the points ran on; where that is not the machine the run was swept from (a
    cluster's hosts), which it was; with several, a table of them, numbered m1, m2, ..."""
    swept_from = machine_line(run.row.machine)
    host = printable(run.row.machine.get("hostname"))
    if [machine.line for machine in run.machines] in ([], [swept_from]):
        return blocks(f"Machine: {printable(swept_from)}.")
    if not run.several:
        machine = run.machines[0]
        return blocks(f"Machine: {printable(machine.line)} (hosts {printable(', '.join(machine.hosts))}); "
                      f"swept from {host}: {printable(swept_from)}.")
    rows = [[machine.on, machine.line, ", ".join(machine.hosts), machine.samples["point"].nunique(),
             len(machine.samples)] for machine in run.machines]
    return blocks(f"The points ran on {len(run.machines)} kinds of machine (swept from {host}): their "
                  "figures are kept apart, each section names its machine.",
                  markdown_table(["", "machine", "hosts", "points", "samples"], rows, {3, 4}))


def warnings(run: ReportData) -> list[str]:
    """What the sweep warned of as it started (a busy machine, a frequency it cannot fix)."""
    return blocks(*(f"> warning at the start of the run: {printable(warning)}" for warning in run.row.warnings))


def pending(run: ReportData) -> list[str]:
    """The points not run yet, and what to do about them: wait while the run is running (its
    sweep is still at work: resuming it is refused), resume it otherwise."""
    count, row = len(run.points_in("pending")), run.row
    if not count:
        return []
    if row.status == "running":
        return blocks(f"> {count} points are not run yet: the run is still running (started "
                      f"{when(row.started_at)}); make the report again when it has ended.")
    command = shlex.join(["labctl", "sweep", "--resume", str(row.id), "--db", str(run.db)])
    return blocks(f"> {count} points were not run: finish them with `{printable(command)}`.")


def failures(run: ReportData) -> list[str]:
    """Each failed point, its parameters and why it failed."""
    failed = run.points_in("failed")
    if failed.empty:
        return []
    rows = []
    for _, point in failed.iterrows():
        params = {p.name: _key(point[p.name]) for p in run.catalogue.params(point["kernel"])
                  if p.name in point and _key(point[p.name]) is not None}
        reason = str(point["failure"] or "")
        rows.append([point["kernel"], " ".join(f"{SHORT.get(n, n)}={show(v)}" for n, v in params.items()),
                     point["failure_kind"] or "",
                     reason if len(reason) <= REASON_SHOWN else reason[:REASON_SHOWN - 3] + "..."])
    return blocks("## Failed points",
                  "Each failed point and why. A point that failed after some of its runs keeps the "
                  "samples it stored: the figures and tables above include them (see n).",
                  markdown_table(["kernel", "parameters", "failure", "reason"], rows))


def skipped(run: ReportData) -> list[str]:
    """The points this machine cannot run, by reason."""
    points = run.points_in("skipped")
    if points.empty:
        return []
    rows = [[reason, len(part), ", ".join(sorted(set(part["kernel"])))]
            for reason, part in points.groupby("failure", sort=True)]
    return blocks("## Skipped points",
                  "Points this machine cannot run (a runtime or an allocator is missing): never run, "
                  "not failed. Install what the reason names and run the experiment again.",
                  markdown_table(["reason", "points", "kernels"], rows, {1}))


def provenance(run: ReportData) -> list[str]:
    """The machine and the software the run was measured with, and the commands that run it
    again and rebuild this report."""
    row, context = run.row, run.row.context
    machine, build = row.machine, context.get("build") or {}
    facts = [
        ("CPU", f"{machine.get('cpu_model')}: {machine.get('logical_cpus')} logical CPUs, "
                f"{machine.get('physical_cores')} cores, SMT {machine.get('smt')}"),
        ("OS kernel", machine.get("kernel")),
        ("host", machine.get("hostname")),
        ("load at start", context.get("load_average")),
        ("memory available at start", f"{context.get('memory_available_kb')} kB"),
        ("frequency governor", context.get("governor")),
        ("Python", context.get("python")),
        ("labctl", f"{context.get('labctl')} ({code_of(context) or 'no known commit'})"),
        ("experiment file", context.get("experiment_git_describe") or "not in a git checkout"),
        ("extension build", " ".join(str(build.get(k, "")) for k in ("compiler", "flags")).strip()),
        ("seed of the point order", row.seed),
    ]
    again = run.command or shlex.join(["labctl", "report", str(row.id), "--db", str(run.db)])
    return [*blocks("## Machine and provenance",
                    markdown_table(["", ""], [[name, value] for name, value in facts if value not in (None, "")]),
                    "To run it again and rebuild this report:"),
            "```bash", printable(row.command), printable(again), "```", ""]


def when(stamp: str | None) -> str:
    """A stored time stamp as the report writes it: 2024-03-01 12:00:00 UTC."""
    return printable((stamp or "")[:19].replace("T", " ")) + " UTC"
