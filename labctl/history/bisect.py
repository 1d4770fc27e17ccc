"""`labctl bisect`: the first commit between GOOD and BAD where a point's figure moves, found by
measuring as few commits as the range allows, and the functions whose counts moved with it.

The range is GOOD's first-parent line to BAD: N commits counting GOOD. GOOD is measured first,
as the reference; a commit "moves" when its median is more than the threshold away from GOOD's
(either way). The search is a binary search for the first moving commit among the N-1 after
GOOD, with a virtual commit after BAD that moves by definition: its answer is one of N
outcomes (one of the N-1 commits, or none moved), found in ceil(log2 N) measurements, so
ceil(log2 N) + 1 with GOOD's. It assumes what bisection always assumes: once moved, the figure
stays moved (a change undone within the range can be missed; `labctl history` shows such).

Instruction counts repeat to a few parts per million, and to 0.13% where a runtime's waits are
counted (they follow the machine's load), so a commit's verdict is exact for any threshold far
above that (the default 2%, the gate's). Time is noisy: the verdict of a commit
is only as good as the threshold is wide against the samples' spread, which is printed beside
each measurement and warned about when the threshold is within twice the reference's spread.

A commit that does not build is skipped, as `git bisect skip` does: its nearest neighbour toward
BAD is measured instead (toward GOOD when there is none), and if the answer lies next to
commits that could not be measured, the result says the first move is among them.

Attribution: the first moving commit and the one before it are run once more under callgrind
with per-function costs (labctl.history.profiles), and the functions whose own instruction counts moved
most are named.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from labctl import history
from labctl.catalogue import kernels
from labctl.history import builds, profiles
from labctl.vocabulary import metrics, text

THRESHOLD = 2.0  # percent, as the gate's


class BisectError(ValueError):
    """A bisection that cannot be run as asked: the message names the option."""


@dataclass
class Probe:
    """A measured commit: its samples of the figure, their median, and whether it moved."""

    sha: str
    subject: str
    values: list[float] = field(default_factory=list)
    error: str = ""  # why it could not be measured (does not build, the point failed)
    built: bool = False  # built for this bisection (not taken from the cache)
    params: dict = field(default_factory=dict)  # the point as this commit's extension resolved it
    build: builds.Build | None = None
    moved: bool | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else math.nan

    @property
    def spread(self) -> float:
        """(max - min) / median of its samples, in percent."""
        return (max(self.values) - min(self.values)) / self.median * 100 if self.values and self.median else 0.0


@dataclass
class Result:
    good: Probe
    bad: str
    commits: int  # N: the range's commits, GOOD counted
    probes: list[Probe]  # in the order measured, GOOD first
    first: Probe | None  # the first moving commit; None: nothing moved
    parent: Probe | None  # the measured commit before it (GOOD or a commit of the range)
    unmeasured: list[str] = field(default_factory=list)  # commits next to the answer that did not build
    functions: list[tuple[str, int, int]] = field(default_factory=list)  # (name, before, after)

    @property
    def bound(self) -> int:
        """The most measurements the range may take: ceil(log2 N) + 1."""
        return math.ceil(math.log2(self.commits)) + 1 if self.commits > 1 else 1


def search(good: str, line: list[str], probe: Callable[[str], Probe], threshold: float) -> tuple[Probe, list[Probe], int | None, list[str]]:
    """The binary search over `line` (the commits after `good`, oldest first) with `probe`
    measuring one commit: (GOOD's probe, every probe in order, the index in `line` of the first
    moving commit or None, the commits next to it that could not be measured)."""
    reference = probe(good)
    if not reference.values:
        raise BisectError(f"GOOD {good[:10]} cannot be measured: {reference.error}")
    probes = [reference]

    def moved(p: Probe) -> bool:
        return abs(p.median / reference.median - 1) * 100 > threshold

    measured: dict[int, Probe] = {}
    lo, hi = -1, len(line)  # lo: known not moved (GOOD); hi: known moved (past BAD: virtual)
    unmeasurable: set[int] = set()
    while hi - lo > 1:
        mid = (lo + hi) // 2
        # A commit that cannot be measured: the nearest one that can, toward BAD, then GOOD.
        order = [i for i in range(mid, hi)] + [i for i in range(mid - 1, lo, -1)]
        chosen = None
        for index in order:
            if index in unmeasurable:
                continue
            p = probe(line[index])
            probes.append(p)
            if p.values:
                p.moved = moved(p)
                measured[index], chosen = p, index
                break
            unmeasurable.add(index)
        if chosen is None:  # nothing between lo and hi can be measured
            break
        if measured[chosen].moved:
            hi = chosen
        else:
            lo = chosen
    first = hi if hi < len(line) else None
    around = sorted(i for i in unmeasurable if lo < i < hi)
    return reference, probes, first, [line[i] for i in around]


def run(repo: Path, good: str, bad: str, kernel: str, args: list[str], cache: builds.Cache,
        measure: str = metrics.INSTRUCTIONS, repeats: int = 3, threshold: float = THRESHOLD,
        say: Callable[[str], None] = print) -> Result:
    """Bisects GOOD..BAD of `repo` for the first commit where KERNEL with `args` (its parameters
    as `labctl run` takes them) moves by more than `threshold` percent in `measure`'s figure."""
    # Everything that can be checked before the first build (minutes): the point, as this
    # labctl's extension resolves it (the kernel and every parameter; GOOD's may differ, not
    # often), then the commits.
    if kernel.startswith("-"):
        raise BisectError(f"KERNEL: none given ({kernel} is a parameter: the kernel comes after GOOD "
                          "and BAD, before its parameters)")
    try:
        kernels.resolve(kernel, kernels.parse_args(kernel, args))
    except kernels.ParamError as error:
        raise BisectError(f"KERNEL {error}") from None
    good_sha = _commit(repo, good, "GOOD")
    bad_sha = _commit(repo, bad, "BAD")
    line = builds.git(repo, "rev-list", "--first-parent", "--reverse", f"{good_sha}..{bad_sha}", "--").split()
    if not line:
        raise BisectError(f"BAD {bad} is not after GOOD {good} on BAD's first-parent line: nothing to bisect")
    if good_sha not in builds.git(repo, "rev-list", "--first-parent", bad_sha, "--").split():
        raise BisectError(f"GOOD {good} is not on BAD's first-parent line (git log --first-parent {bad})")
    figure = "instructions" if measure == metrics.INSTRUCTIONS else "elapsed_ns"
    say(f"bisecting {len(line) + 1} commits ({good_sha[:10]}..{bad_sha[:10]}, GOOD counted) for "
        f"{kernel} moving {threshold:g}% in {figure}: at most "
        f"{math.ceil(math.log2(len(line) + 1)) + 1} measurements")

    def probe(sha: str) -> Probe:
        subject = builds.git(repo, "show", "-s", "--format=%s", sha)
        build = cache.build(sha)
        p = Probe(sha, subject, built=not build.cached, build=build)
        if not build.ok:
            p.error = f"does not build: {build.error}"
        else:
            p.values, p.params, p.error = point_values(build, history.describe(repo, sha, build.key), kernel, args,
                                             measure, repeats, figure)
        say(f"  {sha[:10]} {text.shorten(text.printable(subject), 50)}: " + (f"{p.median:,.0f} ({len(p.values)} samples, spread "
                                                  f"{p.spread:.3f}%)" if p.values else p.error))
        return p

    reference, probes, first, around = search(good_sha, line, probe, threshold)
    if measure != metrics.INSTRUCTIONS and threshold < 2 * reference.spread:
        say(f"warning: the threshold ({threshold:g}%) is within twice GOOD's spread "
            f"({reference.spread:.2f}%): a commit's verdict may be noise; raise --threshold or --repeats")
    by_sha = {p.sha: p for p in probes}
    result = Result(reference, bad_sha, len(line) + 1, probes, None, None, around)
    if first is not None:
        result.first = by_sha[line[first]]
        before = [i for i in range(first - 1, -1, -1) if line[i] in by_sha and by_sha[line[i]].values]
        result.parent = by_sha[line[before[0]]] if before else reference
        say(f"profiling {result.parent.sha[:10]} and {result.first.sha[:10]} under callgrind, function by function")
        try:
            counts = [profiles.profile(kernel, p.params, {history.NATIVE_ENV: str(p.build.path)})
                      for p in (result.parent, result.first)]
        except (RuntimeError, ValueError, OSError, subprocess.SubprocessError) as error:
            say(f"warning: no per-function counts: {error}")
        else:
            result.functions = profiles.moved(*counts)
    return result


def point_values(build: builds.Build, commit: dict, kernel: str, args: list[str], measure: str,
                 repeats: int, figure: str) -> tuple[list[float], dict, str]:
    """The figure's samples of one point run with a commit's extension (`labctl run --json` in a
    process that loads it) and the point's parameters as it resolved them, or ([], {}, why) when
    the point fails there."""
    env = {**os.environ, history.NATIVE_ENV: str(build.path), history.COMMIT_ENV: json.dumps(commit)}
    # One warm-up run, as the gate's: a process's first phase pays for first touches (0.1% more).
    command = [sys.executable, "-m", "labctl", "run", kernel, "--json", "--measure", measure,
               "--repeats", str(repeats), "--warmup", "1", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    values, params = [], {}
    for line in done.stdout.splitlines():
        try:
            sample = json.loads(line)
        except ValueError:
            continue
        params = sample.get("params") or params
        value = (sample.get("counts") or {}).get(figure) if figure != "elapsed_ns" else sample.get("elapsed_ns")
        if isinstance(value, (int, float)):
            values.append(float(value))
    if done.returncode != 0 or not values:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return [], {}, why[:300]
    return values, params, ""


def _commit(repo: Path, name: str, option: str) -> str:
    try:
        return builds.git(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
    except builds.BuildError:
        raise BisectError(f"{option} {name}: not a commit of {repo}") from None
