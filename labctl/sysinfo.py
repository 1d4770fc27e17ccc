"""What a run records about the machine it ran on, and the warnings it prints when the machine
is not in a state to give stable figures (as `pyperf system show` does)."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from pathlib import Path

import labctl
from labctl import _native

SYS_CPU = Path("/sys/devices/system/cpu")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _topology() -> dict:
    """Physical cores and SMT from sysfs: CPUs sharing (package, core_id) are SMT siblings."""
    cores = set()
    logical = 0
    for cpu in sorted(SYS_CPU.glob("cpu[0-9]*")):
        package = _read(cpu / "topology" / "physical_package_id")
        core = _read(cpu / "topology" / "core_id")
        if package is None or core is None:
            continue
        logical += 1
        cores.add((package, core))
    logical = logical or os.cpu_count() or 1
    physical = len(cores) or logical
    return {
        "logical_cpus": logical,
        "physical_cores": physical,
        "packages": len({package for package, _ in cores}) or 1,
        "smt": logical > physical,
    }


def _memory_kb() -> dict:
    info = {}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("MemTotal", "MemAvailable"):
                info[key] = int(value.split()[0])
    except OSError:
        pass
    return info


def git_describe(directory: Path) -> str | None:
    """`git describe --tags --dirty` of the checkout holding `directory`, if it is in one."""
    try:
        result = subprocess.run(["git", "-C", str(directory), "describe", "--tags", "--dirty", "--always"],
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def machine() -> dict:
    """Facts that do not change between runs on one machine: the machine's identity."""
    return {
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
        **_topology(),
        "hypervisor": "hypervisor" in (_read(Path("/proc/cpuinfo")) or ""),
        "memory_total_kb": _memory_kb().get("MemTotal"),
        "os": platform.platform(),
        "kernel": platform.release(),
        "architecture": platform.machine(),
    }


def frequency() -> dict:
    """How the CPU frequency is governed, where sysfs shows it."""
    cpufreq = SYS_CPU / "cpu0" / "cpufreq"
    return {
        "governor": _read(cpufreq / "scaling_governor"),
        "frequency_khz": _read(cpufreq / "scaling_cur_freq"),
        "frequency_min_khz": _read(cpufreq / "scaling_min_freq"),
        "frequency_max_khz": _read(cpufreq / "scaling_max_freq"),
        "boost": _read(SYS_CPU / "cpufreq" / "boost"),
        "cpuidle_driver": _read(SYS_CPU / "cpuidle" / "current_driver"),
    }


def run_context(experiment_file: str | None = None) -> dict:
    """The state at the start of a run and the software that runs it: labctl's own checkout (an
    editable install) and the experiment file's, where they are git checkouts."""
    load1, load5, load15 = os.getloadavg()
    return {
        "load_average": [round(load1, 2), round(load5, 2), round(load15, 2)],
        "memory_available_kb": _memory_kb().get("MemAvailable"),
        "cpus_allowed": sorted(os.sched_getaffinity(0)),
        **frequency(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "labctl": labctl.__version__,
        "git_describe": git_describe(Path(labctl.__file__).resolve().parent),
        "experiment_git_describe": git_describe(Path(experiment_file).resolve().parent)
        if experiment_file else None,
        "build": dict(_native.build_info()),
    }


def warnings(context: dict) -> list[str]:
    """What makes figures on this machine less stable right now: warnings, not refusals."""
    found = []
    cpus = len(context["cpus_allowed"])
    load = context["load_average"][0]
    if load > 0.2 * cpus:
        found.append(f"the machine is busy: load average {load:.2f} over {cpus} CPUs; "
                     "other work will disturb the figures")
    governor = context.get("governor")
    if governor is None:
        found.append("CPU frequency scaling is not visible here (no cpufreq in sysfs, e.g. a virtual "
                     "machine): cannot check that the frequency is fixed")
    elif governor != "performance":
        found.append(f"CPU frequency governor is '{governor}', not 'performance': the frequency "
                     "varies with load")
    if context.get("boost") == "1":
        found.append("CPU boost (turbo) is on: the frequency depends on temperature and load")
    return found
