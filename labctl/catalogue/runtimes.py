"""The runtimes a kernel runs on, and the allocators a worker runs with.

- `labctl`: ours, the kernels of the native registry.
- Built in beside ours: `caf`, the same kernels written on CAF 0.17 (native/caf/), compiled in when
  libcaf-dev was there at build time.
- External: a folder holding a `peer.toml` (peers/go/, or any folder named in LABCTL_PEERS) that
  describes a program following labctl's protocol: it reads {"kernel", "params"} as JSON on stdin,
  runs the kernel once and prints one JSON line {"elapsed_ns", "messages", "answer", "metrics"?}.
  labctl builds it at first use into its cache, and verifies its answer and message count against
  what our kernel states they must be (labctl.catalogue.native.expect).

A runtime that cannot run here (CAF not built in, a tool missing from PATH, a broken peer.toml)
is still known, with the reason: `labctl kernels` shows it and a sweep skips its points with it.
"""

from __future__ import annotations

import ctypes
import fcntl
import glob
import hashlib
import json
import math
import os
import re
import resource
import selectors
import shutil
import signal
import string
import subprocess
import sys
import sysconfig
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated

import psutil
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from labctl.catalogue import native
from labctl.vocabulary import inputs, sample, shipped
from labctl.vocabulary.schema import OURS
from labctl.vocabulary.text import printable

CAF = "caf"


def native_name(runtime: str, kernel: str) -> str:
    """The extension's name of `kernel` on a runtime built into it: ours by the kernel's own
    name, another's as RUNTIME_KERNEL (caf_skynet); `kernel_of` reads it back."""
    return kernel if runtime == OURS else f"{runtime}_{kernel}"


def kernel_of(runtime: str, name: str) -> str:
    """The kernel an extension name of `runtime`'s names (native_name read back)."""
    return name if runtime == OURS else name.removeprefix(f"{runtime}_")


PEERS_ENV = "LABCTL_PEERS"  # more peer folders, separated by ':'
CACHE_ENV = "LABCTL_CACHE"  # where peers are built; default $XDG_CACHE_HOME/labctl or ~/.cache/labctl


@dataclass(frozen=True)
class Runtime:
    name: str
    summary: str
    kind: str  # native (in the extension) or external (a program)
    # kernel of ours -> the parameters of ours it takes; None: not known (a native runtime not
    # built in, whose schema is not compiled)
    kernels: dict[str, tuple[str, ...] | None]
    missing: str = ""  # why it cannot run here; empty when it can
    folder: Path | None = None  # an external runtime's peer folder
    manifest: PeerManifest | None = None


class PeerManifest(BaseModel):
    """peer.toml: an external runtime."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]  # runtime = "<name>"
    summary: Annotated[str, Field(min_length=1)]
    requires: list[str] = []  # programs that must be on PATH to build and run it
    # Shared libraries its build links, by file name (libboost_fiber.so: the link a -dev package
    # installs), looked for where the dynamic linker looks: without one the runtime is missing,
    # its points skipped, instead of a build that fails at first use.
    libraries: list[Annotated[str, Field(pattern=r"^lib[A-Za-z0-9_+.-]+\.so[0-9.]*$")]] = []
    # Other files its build needs, each an absolute path or glob pattern at least one file must
    # match (tokio's crate as Debian installs it: /usr/share/cargo/registry/tokio-1.*/Cargo.toml):
    # without one the runtime is missing, as without a library.
    files: list[Annotated[str, Field(pattern=r"^/")]] = []
    install: str = ""  # how to get them, shown when one is missing
    # Run in the peer's folder at first use, to build into {build}; none: nothing to build.
    # {folder}: the peer's folder, {build}: its build folder, {cache}: labctl's cache.
    build: list[str] = []
    build_env: dict[str, str] = {}
    command: Annotated[list[str], Field(min_length=1)]  # runs one sample
    kernels: Annotated[dict[str, list[str]], Field(min_length=1)]  # kernel -> parameters of ours
    # A choice of ours it takes only some values of (Boost.Fiber's three schedulers of our six
    # dispatchers): parameter -> those values; any other is refused before the program runs.
    choices: dict[str, Annotated[list[str | int], Field(min_length=1)]] = {}

    @field_validator("build", "command")
    @classmethod
    def _places_only(cls, words: list[str]) -> list[str]:
        for word in words:
            _check_places(word)
        return words

    @field_validator("build_env")
    @classmethod
    def _places_only_in_values(cls, env: dict[str, str]) -> dict[str, str]:
        for value in env.values():
            _check_places(value)
        return env


# What {...} may name in a peer's build, build_env and command.
PLACES = ("folder", "build", "cache")
# A peer.toml is a few lines; past this it is refused unread (every command reads every one).
MAX_MANIFEST_BYTES = 64 * 1024
MAX_REASON = 500  # characters of why a runtime cannot run, as `labctl kernels` and the store show it


def _check_places(word: str) -> None:
    """A word of a command names only the places labctl fills in, bare ({{ and }} for braces): no
    format spec, conversion, attribute or index, which str.format would obey ({folder:>99999999}
    pads a path to 100 MB in every worker)."""
    allowed = ", ".join("{" + p + "}" for p in PLACES)
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(word)
                  if name is not None]
    except ValueError as error:
        raise ValueError(f"{word[:100]!r}: {error} (write {{{{ and }}}} for a brace)") from None
    for name, spec, conversion in fields:
        if name not in PLACES:
            raise ValueError(f"{word[:100]!r} names {{{name[:40]}}}; a word may name only {allowed} "
                             "(write {{ and }} for a brace)")
        if spec or conversion:
            raise ValueError(f"{word[:100]!r} formats {{{name}}}; a place is written bare: {allowed}")


def peer_folders() -> list[Path]:
    """The folders holding peers: the ones shipped with labctl, then those of LABCTL_PEERS."""
    ours = shipped.folder("peers")
    extra = [Path(p) for p in os.environ.get(PEERS_ENV, "").split(os.pathsep) if p]
    return ([ours] if ours else []) + extra


@cache
def runtimes() -> dict[str, Runtime]:
    """Every runtime labctl knows on this machine, ours first, by name."""
    registry = native.kernels()
    ours = {k["name"]: tuple(p["name"] for p in k["params"]) for k in registry if k["runtime"] == OURS}
    found = {OURS: Runtime(OURS, "labctl's own actor runtime (native/runtime/)", "native", ours)}
    info = native.build_info()
    caf = {kernel_of(CAF, k["name"]): tuple(p["name"] for p in k["params"])
           for k in registry if k["runtime"] == CAF}
    if not caf:  # not built in: its kernels are known by name, their parameters are not
        caf = {kernel_of(CAF, name): None for name in info["caf_kernels"].split()}
    found[CAF] = Runtime(CAF, "CAF 0.17 (Debian's libcaf-dev), built into the extension", "native",
                         {k: v for k, v in caf.items() if k in ours},
                         f"not built in: {info['caf_missing']}" if info["caf_missing"] else "")
    expects = {k["name"] for k in registry if k["runtime"] == OURS and k["expects"]}
    values = {k["name"]: {p["name"]: tuple(p["choices"]) for p in k["params"]}
              for k in registry if k["runtime"] == OURS}
    for folder in peer_folders():
        for manifest_path in sorted(folder.glob("*/peer.toml")) if folder.is_dir() else []:
            runtime = _external(manifest_path, ours, expects, values)
            if runtime.name not in found:  # the first of a name wins, as on PATH
                found[runtime.name] = runtime
    return found


def _external(path: Path, ours: dict[str, tuple[str, ...]], expects: set[str],
              values: dict[str, dict[str, tuple]]) -> Runtime:
    """The runtime a peer.toml describes; a broken one is a runtime that cannot run, saying why.
    `expects`: the kernels of ours that state their expectation, the only ones it may implement;
    `values`: kernel -> parameter -> its choices (empty: not a choice), which its `choices` must
    be drawn from."""
    folder = path.parent
    try:
        # Read by every command that knows the runtimes, a run on ours included: bounded, and
        # never blocking on a FIFO, so one bad peer.toml costs its own runtime only.
        manifest = PeerManifest.model_validate(inputs.load_toml(path, "a peer.toml", MAX_MANIFEST_BYTES))
    except (inputs.InputError, ValidationError) as error:
        if isinstance(error, ValidationError):
            detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        else:
            detail = str(error).removeprefix(f"{path}: ")
        return Runtime(folder.name, f"peer in {folder}", "external", {},
                       printable(f"{path} is not a valid peer manifest: {detail}"[:MAX_REASON]), folder)
    problems = []
    for kernel, params in manifest.kernels.items():
        if kernel not in ours:
            problems.append(f"kernels.{kernel}: not a kernel of labctl")
        elif kernel not in expects:
            problems.append(f"kernels.{kernel}: labctl cannot verify an external {kernel} "
                            "(the kernel states no expectation)")
        else:
            problems += [f"kernels.{kernel}: '{p}' is not a parameter of {kernel}"
                         for p in params if p not in ours[kernel]]
    for param, allowed in manifest.choices.items():
        takers = [k for k, params in manifest.kernels.items() if param in params and param in ours.get(k, ())]
        if not takers:
            problems.append(f"choices.{param}: none of its kernels takes '{param}'")
        for kernel in takers:
            offered = values[kernel][param]
            if not offered:
                problems.append(f"choices.{param}: '{param}' of {kernel} is not a choice")
            problems += [f"choices.{param}: {value!r} is not a value of {kernel}'s '{param}' "
                         f"(its values: {', '.join(map(str, offered))})"
                         for value in allowed if offered and value not in offered]
    lacking = []
    if missing := [tool for tool in manifest.requires if shutil.which(tool) is None]:
        lacking.append(f"{', '.join(missing)} not found on PATH")
    if absent := [library for library in manifest.libraries if find_shared_library(library) is None]:
        lacking.append(f"{', '.join(absent)} not found")
    if unmatched := [pattern for pattern in manifest.files if not _matches_a_file(pattern)]:
        lacking.append(f"{', '.join(unmatched)} not found")
    why = ""
    if problems:
        why = f"{path}: " + "; ".join(problems)
    elif lacking:
        why = "; ".join(lacking) + (f" ({manifest.install})" if manifest.install else "")
    kernels = {k: tuple(v) for k, v in manifest.kernels.items() if k in ours}
    return Runtime(manifest.name, manifest.summary, "external", kernels, why, folder, manifest)


def _matches_a_file(pattern: str) -> bool:
    """Whether a regular file (or a link to one) is at `pattern`, an absolute path or glob."""
    return any(os.path.isfile(path) for path in glob.iglob(pattern))


# --- allocators ---------------------------------------------------------------------------------

# name -> (the library LD_PRELOAD loads, the Debian package that has it); system: none.
ALLOCATORS = {
    "system": None,
    "jemalloc": ("jemalloc", "libjemalloc.so.2", "libjemalloc2"),
    "tcmalloc": ("tcmalloc_minimal", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"),
}


@cache
def allocator_library(name: str) -> str | None:
    """The library to preload for an allocator (None for the system's), where the dynamic
    linker's own search finds it; raises LookupError saying how to install it."""
    if ALLOCATORS[name] is None:
        return None
    _, soname, package = ALLOCATORS[name]
    found = find_shared_library(soname)
    if found is None:
        raise LookupError(f"allocator {name}: {soname} not found (apt-get install {package})")
    return found


def find_shared_library(soname: str) -> str | None:
    """The file the dynamic linker loads for `soname`, searched as it searches: LD_LIBRARY_PATH,
    its cache (`ldconfig -p`), then the default folders. Only a file that is there, of this
    process's word size, counts: a cache can still name a library that is gone."""
    folders = [folder for folder in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if folder]
    candidates = [os.path.join(folder, soname) for folder in folders]
    ldconfig = shutil.which("ldconfig") or shutil.which("ldconfig", path="/sbin:/usr/sbin")
    if ldconfig:
        try:
            listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            listing = ""
        for line in listing.splitlines():
            entry, _, path = line.strip().partition(" => ")
            if entry.split(" ", 1)[0] == soname:
                candidates.append(path.strip())
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    candidates += [os.path.join(folder, soname) for folder in
                   (f"/lib/{multiarch}", f"/usr/lib/{multiarch}", "/lib64", "/usr/lib64", "/lib", "/usr/lib")]
    word = 2 if sys.maxsize > 2**32 else 1  # ELF class: 2 for 64-bit
    for candidate in candidates:
        try:
            with open(candidate, "rb") as library:
                header = library.read(5)
        except OSError:
            continue
        if header[:4] == b"\x7fELF" and header[4] == word:
            return os.path.realpath(candidate)
    return None


def allocator_missing(name: str) -> str:
    """Why the allocator cannot be used here; empty when it can."""
    try:
        allocator_library(name)
    except LookupError as error:
        return str(error)
    return ""


def allocator_env(name: str | None, preload: str = "") -> dict[str, str]:
    """The worker's environment for an allocator: LD_PRELOAD of its library before the others
    (`preload`). Empty for the system's, or one missing here (the worker then says why)."""
    if not name or allocator_missing(name) or allocator_library(name) is None:
        return {}
    return {"LD_PRELOAD": f"{allocator_library(name)} {preload}".strip()}


def check_allocator(name: str | None) -> None:
    """In the worker: the allocator asked for is the one loaded (LD_PRELOAD can fail silently)."""
    library = allocator_library(name) if name else None
    if library is None:
        return
    stem = ALLOCATORS[name][0]
    if not any(f"lib{stem}" in os.path.basename(m.path) for m in psutil.Process().memory_maps(grouped=True)):
        raise RuntimeError(f"allocator {name}: {library} is not loaded in the worker "
                           f"(LD_PRELOAD={os.environ.get('LD_PRELOAD', '')!r})")


# --- external programs --------------------------------------------------------------------------


class ProtocolError(Exception):
    """An external program broke the protocol: no reply, garbage, or a malformed reply."""


class ExternalFailure(Exception):
    """An external program failed: it exited non-zero (kind failure) or died (kind crash)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def cache_folder() -> Path:
    """Where peers are built: CACHE_ENV, else $XDG_CACHE_HOME/labctl or ~/.cache/labctl; made
    absolute here, once, against the folder labctl was started in (a build step runs in the
    peer's build folder, where a relative path would name another place)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).absolute()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return (Path(base) / "labctl").absolute()


def _fingerprint(folder: Path) -> str:
    """Of every file of a peer's folder: a change to any rebuilds it."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with open(path, "rb") as file:  # streamed: a peer's folder may hold a large file
            digest.update(hashlib.file_digest(file, "sha256").digest() + b"\0")
    return digest.hexdigest()[:16]


def _expand(words: list[str], **places: Path) -> list[str]:
    return [word.format(**{k: str(v) for k, v in places.items()}) for word in words]


def build(runtime: Runtime) -> Path:
    """Builds an external runtime into the cache once per version of its folder, and returns the
    build folder. Concurrent builds are serialised by a lock; a failed build leaves nothing.
    Raises ExternalFailure with the build's output."""
    manifest = runtime.manifest
    cache = cache_folder()
    target = cache / "peers" / f"{manifest.name}-{_fingerprint(runtime.folder)}"
    if not manifest.build or target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_dir():  # built while this one waited
            return target
        staging = target.with_name(f"{target.name}.building")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        command = _expand(manifest.build, folder=runtime.folder, build=staging, cache=cache)
        env = {**os.environ, **{k: v.format(folder=runtime.folder, build=staging, cache=cache)
                                for k, v in manifest.build_env.items()}}
        try:
            done = subprocess.run(command, cwd=runtime.folder, env=env, capture_output=True, text=True)
        except OSError as error:
            shutil.rmtree(staging, ignore_errors=True)
            raise ExternalFailure("failure", f"{manifest.name}: cannot build ({' '.join(command)}): "
                                             f"{error}") from None
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            output = (done.stderr or done.stdout).strip()[-2000:]
            raise ExternalFailure("failure", f"{manifest.name}: build failed ({' '.join(command)}, "
                                             f"exit {done.returncode}): {output}")
        staging.rename(target)
    return target


# What labctl keeps of an external program's output: its reply is one line of a few kilobytes,
# and of stderr only the last line is shown. A program printing without end would otherwise grow
# the worker's memory until the point's time ran out, or the machine's memory did.
MAX_STDOUT = 1 << 20
MAX_STDERR = 64 * 1024  # the tail kept


def _collect(process: subprocess.Popen, request: bytes) -> tuple[bytes, bytes, bool, resource.struct_rusage]:
    """Writes the request to the program and reads its stdout and stderr until it closes them:
    at most MAX_STDOUT bytes of stdout (past it, the program is killed and `flooded` is true)
    and the last MAX_STDERR bytes of stderr. Waits for the program to end and returns its own
    resource use (wait4's: its peak RSS, not the largest of every child the worker reaped, a
    build's compiler among them)."""
    try:
        process.stdin.write(request)  # a few hundred bytes: fits the pipe, never blocks
        process.stdin.close()
    except BrokenPipeError:  # it ended, or closed stdin, without reading: its output says why
        pass
    stdout, stderr, flooded = bytearray(), bytearray(), False
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        selector.register(process.stderr, selectors.EVENT_READ)
        while selector.get_map() and not flooded:
            for key, _ in selector.select():
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.fileobj is process.stdout:
                    stdout += chunk
                    flooded = len(stdout) > MAX_STDOUT
                else:
                    stderr += chunk
                    del stderr[:-MAX_STDERR]
    if flooded:
        process.kill()
    process.stdout.close()
    process.stderr.close()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    return bytes(stdout), bytes(stderr), flooded, usage


def _die_with_parent() -> None:
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class ExternalRun:
    """One sample of an external program, as it reported it, with its resource use."""

    elapsed_ns: int
    messages: int
    answer: str
    metrics: dict[str, float] = field(default_factory=dict)
    pid: int = 0
    peak_rss_kb: int = 0
    voluntary_switches: int = 0
    involuntary_switches: int = 0
    cpu_ns: int = 0  # user + system time of the whole process
    # Its memory, where it reported both: its resident set just before the kernel's set-up (KiB)
    # and the agents (goroutines, processes, tasks) its phase made.
    rss_before_kb: int | None = None
    agents_created: int | None = None
    histogram: list[list[int]] = field(default_factory=list)  # a latency kernel's (sample.Sample)


def run_external(runtime: Runtime, kernel: str, params: dict, reserved: Collection[str] = ()) -> ExternalRun:
    """Runs one sample of `kernel` on an external runtime: the request on stdin, one JSON line
    back. Raises ExternalFailure or ProtocolError. No time limit of its own: the worker runs
    under the point's, and the program dies with it. `reserved`: names its metrics may not
    take (the kernel's parameters)."""
    folder = build(runtime)
    command = _expand(runtime.manifest.command, folder=runtime.folder, build=folder, cache=cache_folder())
    request = json.dumps({"kernel": kernel, "params": params})
    name = runtime.name
    try:
        process = subprocess.Popen(command, cwd=runtime.folder, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   preexec_fn=_die_with_parent)
    except OSError as error:
        raise ExternalFailure("failure", f"{name}: cannot start {' '.join(command)}: {error}") from None
    stdout, stderr, flooded, usage = _collect(process, request.encode())
    if flooded:
        raise ProtocolError(f"{name}: printed more than {MAX_STDOUT // (1 << 20)} MiB on stdout, not one "
                            f"JSON line (stdout began {stdout[:200].decode(errors='replace')!r}); "
                            "labctl killed it")
    # Its last line of stderr says why, escaped and bounded: it goes to the store and the screen.
    tail = [printable(line)[:300] for line in stderr.decode(errors="replace").strip().splitlines()[-1:]] or [""]
    if process.returncode < 0:
        try:
            cause = signal.Signals(-process.returncode).name
        except ValueError:
            cause = f"signal {-process.returncode}"
        raise ExternalFailure("crash", f"{name}: {kernel} killed by {cause}" + (f" ({tail[0]})" if tail[0] else ""))
    if process.returncode != 0:
        raise ExternalFailure("failure", f"{name}: {kernel} exited with status {process.returncode}"
                                         + (f": {tail[0]}" if tail[0] else ""))
    reply = _parse_reply(name, stdout, reserved)
    reply.pid = process.pid
    reply.peak_rss_kb = usage.ru_maxrss
    reply.voluntary_switches = usage.ru_nvcsw
    reply.involuntary_switches = usage.ru_nivcsw
    reply.cpu_ns = int((usage.ru_utime + usage.ru_stime) * 1e9)
    return reply


# What an external program's reply may hold (docs/runtimes.md: "External runtimes: the protocol"):
# anything else fails the point as `protocol`, never reaches the store or the analysis.
MAX_INTEGER = 2**63 - 1  # the store's integers
MAX_ANSWER = 1000
MAX_METRICS = 32
MAX_METRIC = 1e300
MAX_BUCKETS = 10_000  # a histogram of 2 significant digits up to 2^63 has 7,168
METRIC_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _parse_reply(name: str, stdout: bytes, reserved: Collection[str] = ()) -> ExternalRun:
    """The reply of one run; `reserved`: names no metric may take (the kernel's parameters, and
    the sample's own fields, which are always reserved)."""
    reserved = {*sample.COLUMNS, *reserved}
    shown = stdout[:200].decode(errors="replace")
    lines = [line for line in stdout.decode(errors="replace").splitlines() if line.strip()]
    if len(lines) != 1:
        raise ProtocolError(f"{name}: printed {len(lines)} lines on stdout, not one JSON line "
                            f"(stdout began {shown!r})")
    deep = object()  # stands for a reply too deep to parse
    try:
        reply = json.loads(lines[0])
    except ValueError:
        raise ProtocolError(f"{name}: printed a line that is not JSON: {lines[0][:200]!r}") from None
    except RecursionError:  # json recurses once per level: [[[[... ten thousand deep
        reply = deep
    if reply is deep or inputs.depth(reply) > inputs.MAX_DEPTH:  # whatever printed it would recurse too
        raise ProtocolError(f"{name}: printed JSON nested more than {inputs.MAX_DEPTH} deep: "
                            f"{lines[0][:100]!r}")
    if not isinstance(reply, dict):
        raise ProtocolError(f"{name}: printed {lines[0][:200]!r}, not a JSON object")

    def integer(key: str, low: int) -> int:
        value = reply.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_INTEGER:
            raise ProtocolError(printable(f"{name}: '{key}' must be an integer from {low} to "
                                          f"{MAX_INTEGER}, got {value!r}"[:300]))
        return value

    unknown = set(reply) - {"elapsed_ns", "messages", "answer", "metrics", "rss_before_kb", "agents_created",
                            "histogram"}
    if unknown:
        raise ProtocolError(printable(f"{name}: unknown keys in its reply: {', '.join(sorted(unknown))}"[:300]))
    elapsed = integer("elapsed_ns", 1)
    messages = integer("messages", 0)
    answer = reply.get("answer")
    if not isinstance(answer, str):
        raise ProtocolError(printable(f"{name}: 'answer' must be a string, got {answer!r}"[:300]))
    if len(answer) > MAX_ANSWER:
        raise ProtocolError(f"{name}: 'answer' is {len(answer)} characters long; at most {MAX_ANSWER}")
    metrics = reply.get("metrics", {})
    if not isinstance(metrics, dict) or len(metrics) > MAX_METRICS:
        raise ProtocolError(printable(f"{name}: 'metrics' must be an object of at most {MAX_METRICS} "
                                      f"numbers, got {metrics!r}"[:300]))
    for key, value in metrics.items():
        if not METRIC_NAME.fullmatch(key) or key in reserved:
            raise ProtocolError(printable(
                f"{name}: metric name {key!r} is not allowed (lower-case letters, digits and _, "
                f"at most 64, and none of labctl's columns or any kernel's parameters)"[:300]))
        if value is None:  # not measured (a latency of no probe): absent, never 0
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or abs(value) > MAX_METRIC:
            raise ProtocolError(printable(f"{name}: metric {key!r} must be a finite number of at "
                                          f"most {MAX_METRIC:g} in size, or null, got {value!r}"[:300]))
    histogram = reply.get("histogram", [])

    def bucket(b: object) -> bool:
        return isinstance(b, list) and len(b) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in b) and 0 <= b[0] <= MAX_INTEGER \
            and 1 <= b[1] <= MAX_INTEGER

    if not isinstance(histogram, list) or len(histogram) > MAX_BUCKETS or not all(map(bucket, histogram)):
        raise ProtocolError(printable(f"{name}: 'histogram' must be a list of at most {MAX_BUCKETS} [value, count] "
                                      f"pairs of integers (values from 0, counts from 1), got {histogram!r}"[:300]))
    return ExternalRun(elapsed, messages, answer,
                       {k: float(v) for k, v in metrics.items() if v is not None},
                       histogram=histogram,
                       rss_before_kb=integer("rss_before_kb", 0) if "rss_before_kb" in reply else None,
                       agents_created=integer("agents_created", 0) if "agents_created" in reply else None)
