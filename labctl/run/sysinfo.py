"""What a run records about the machine it ran on, and the warnings it prints when the machine
is not in a state to give stable figures (as `pyperf system show` does)."""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path

import psutil

import labctl
from labctl import store
from labctl.catalogue import measures, native

# The commit a history's extension was built from ({"sha", "subject", "date", "build"}: the
# build cache's key), set by `labctl history` and `labctl bisect` for the sweeps they start and
# recorded in each run's context as "commit" (labctl.history).
COMMIT_ENV = "LABCTL_COMMIT"
# The round of an interleaved comparison a sweep is (labctl.history.rounds: `labctl ab`, `labctl
# calibrate`): a JSON object with ROUND_KEYS, recorded in the run's context under "interleaved".
ROUND_ENV = "LABCTL_ROUND"
ROUND_KEYS = {"group": str, "side": str, "round": int, "rounds": int, "build": str, "same_build": bool}
COMMIT_KEYS = store.COMMIT_KEYS

SYS_CPU = Path("/sys/devices/system/cpu")

# The machine's identity as this host should report it, where what labctl reads is wrong: a JSON
# object whose keys replace those of machine() (`{"hostname": "node7"}` for a container whose
# host name is a random id; `{"cpu_model": "AMD EPYC 7763"}` for a virtual machine whose
# /proc/cpuinfo names a generic CPU). Set in the environment of the host's Dask worker (or of a
# local sweep); docs/cluster.md.
MACHINE_ENV = "LABCTL_MACHINE"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str:
    """The CPU's model name: /proc/cpuinfo's, which psutil does not give."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _topology() -> dict:
    """Logical CPUs and physical cores (psutil); packages from sysfs, which psutil does not give."""
    logical = psutil.cpu_count(logical=True) or 1
    physical = psutil.cpu_count(logical=False) or logical
    packages = {_read(cpu / "topology" / "physical_package_id") for cpu in SYS_CPU.glob("cpu[0-9]*")}
    return {
        "logical_cpus": logical,
        "physical_cores": physical,
        "packages": len(packages - {None}) or 1,
        "smt": logical > physical,
    }


def git_describe(directory: Path) -> str | None:
    """`git describe --tags --dirty` of the checkout holding `directory`, if it is in one."""
    try:
        result = subprocess.run(["git", "-C", str(directory), "describe", "--tags", "--dirty", "--always"],
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def machine() -> dict:
    """Facts that do not change between runs on one machine: the machine's identity (the store
    tells machines apart by all of them, and kinds of machine by the CPU's and the OS kernel's),
    with those MACHINE_ENV names replaced. ValueError for a MACHINE_ENV that is not an object of
    these keys with plain values."""
    return {**_read_machine(), **machine_override()}


def machine_override() -> dict:
    """The facts MACHINE_ENV replaces: {} where it is not set."""
    return _env_object(MACHINE_ENV, lambda facts: all(
        key in MACHINE_KEYS and isinstance(value, (str, int, bool)) for key, value in facts.items()),
        f"a JSON object of some of {', '.join(MACHINE_KEYS)}, each a string, number or boolean") or {}


def _env_object(name: str, valid, wanted: str) -> dict | None:
    """The JSON object in the environment variable `name`, None where it is not set; ValueError
    naming the variable and what it must be (`wanted`) where it is not one `valid` accepts."""
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not valid(value):
        raise ValueError(f"{name}: must be {wanted}")
    return value


def _read_machine() -> dict:
    return {
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
        **_topology(),
        # The CPU flag a hypervisor sets (/proc/cpuinfo: psutil has no answer).
        "hypervisor": "hypervisor" in (_read(Path("/proc/cpuinfo")) or ""),
        "memory_total_kb": psutil.virtual_memory().total // 1024,
        "os": platform.platform(),
        "kernel": platform.release(),
        "architecture": platform.machine(),
    }


MACHINE_KEYS = ("hostname", "cpu_model", "logical_cpus", "physical_cores", "packages", "smt", "hypervisor",
                "memory_total_kb", "os", "kernel", "architecture")


def frequency() -> dict:
    """The CPU frequency (psutil) and how it is governed (sysfs: psutil does not say)."""
    cpufreq = SYS_CPU / "cpu0" / "cpufreq"
    now = psutil.cpu_freq() if hasattr(psutil, "cpu_freq") else None
    khz = (lambda mhz: str(int(mhz * 1000)) if mhz else None)
    return {
        "governor": _read(cpufreq / "scaling_governor"),
        "frequency_khz": khz(now.current) if now else None,
        "frequency_min_khz": khz(now.min) if now else None,
        "frequency_max_khz": khz(now.max) if now else None,
        "boost": _read(SYS_CPU / "cpufreq" / "boost"),
        "cpuidle_driver": _read(SYS_CPU / "cpuidle" / "current_driver"),
    }


def run_context(experiment_file: str | None = None) -> dict:
    """The state at the start of a run and the software that runs it: labctl's own checkout (an
    editable install) and the experiment file's, where they are git checkouts."""
    return {**host_context(),
            "experiment_git_describe": git_describe(Path(experiment_file).resolve().parent)
            if experiment_file else None,
            **({"interleaved": round_} if (round_ := round_context()) else {})}


def round_context() -> dict | None:
    """The round of an interleaved comparison this sweep is (ROUND_ENV); None for a plain sweep.
    A value that is not the object labctl.history.rounds writes is refused."""
    found = _env_object(ROUND_ENV, lambda value: all(type(value.get(k)) is t for k, t in ROUND_KEYS.items()),
                        "a JSON object with " + ", ".join(f"{k} ({t.__name__})" for k, t in ROUND_KEYS.items()))
    return {k: found[k] for k in ROUND_KEYS} if found is not None else None


def commit_context() -> dict | None:
    """The commit this process's extension was built from (COMMIT_ENV), for a run's context;
    None outside a history. A value that is not the object history writes is refused."""
    commit = _env_object(COMMIT_ENV, lambda value: all(isinstance(value.get(k), str) for k in COMMIT_KEYS),
                         f"a JSON object with the strings {', '.join(COMMIT_KEYS)}")
    return {k: commit[k] for k in COMMIT_KEYS} if commit is not None else None


def host_context() -> dict:
    """The state of this host now (load, memory, the CPUs this process may use, the frequency)
    and the labctl that runs here (its version, checkout and the extension's build): what a run
    records at its start, and a point run on a cluster's host records at the point's."""
    load1, load5, load15 = psutil.getloadavg()
    return {
        "load_average": [round(load1, 2), round(load5, 2), round(load15, 2)],
        "memory_available_kb": psutil.virtual_memory().available // 1024,
        "cpus_allowed": sorted(psutil.Process().cpu_affinity()),
        **frequency(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "labctl": labctl.__version__,
        "git_describe": git_describe(Path(labctl.__file__).resolve().parent),
        "build": native.build_info(),
        # What an instruction count depends on besides the code: the C library, and valgrind.
        "libc": " ".join(platform.libc_ver()).strip() or None,
        "valgrind": measures.valgrind_version(),
        **({"commit": commit} if (commit := commit_context()) else {}),
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
