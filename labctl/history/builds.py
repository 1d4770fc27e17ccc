"""Each commit's compiled extension, built once and kept (`labctl history`, `labctl bisect`).

A build is keyed by what it is made of: the git trees of native/ and cmake/ and the blob of
CMakeLists.txt at the commit, with the compiler, the Python it is built for and this recipe's
version. Commits that change no C++ (a test, a doc, the Python side) share their parent's key,
so a history of twenty commits builds as many times as the runtime changed, and a cached key
costs nothing. A build that fails is cached too (its log kept): a commit that does not build is
a fact of the history, not a reason to try again (`rebuild=True` does).

The source is checked out in one git worktree per repository under the cache, moved from commit
to commit (`git checkout --detach`), and built in one CMake build folder beside it: a commit
next to one already built recompiles only the files that differ (ninja's timestamps: a checkout
touches exactly the files it changes), where a worktree per commit would build all ~90 of them
from scratch (about 80 s on 2 cores). The recipe is the package's (Release, the extension
target only, CAF when found, its symbols not stripped); its flags, compiler and Python are each
build's key, so builds taken in the same cache compare.

Layout of a cache (default ~/.cache/labctl, or $XDG_CACHE_HOME/labctl):
    builds/KEY/_native<suffix>.so   the extension (absent for a failed build)
    builds/KEY/build.json           {"key", "ok", "seconds", "commit", "error"}
    builds/KEY/build.log            the configure and build output
    work/REPO/src, work/REPO/build  the worktree and the build folder of a repository
    work/REPO/lock                  held while a build uses them
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

RECIPE = 2  # bump when the way a build is made changes: every key changes with it
# What a build is made of at a commit (a path absent at a commit counts as absent).
SOURCES = ("native", "cmake", "CMakeLists.txt")
# The commands a build needs, and the Python packages: `pip install 'labctl[history]'`.
TOOLS = ("git", "cmake", "ninja")
LOG_TAIL = 40  # lines of a failed build's log kept in its error
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


class BuildError(RuntimeError):
    """A build that cannot be attempted here (no git, no cmake, not a repository...): unlike
    a commit that fails to build, this stops the command."""


@dataclass(frozen=True)
class Build:
    """A commit's build: `path` is its extension, None when the commit does not build (`error`
    says why, from its log). `cached`: taken from the cache, not built now."""

    key: str
    commit: str
    path: Path | None
    error: str
    seconds: float
    cached: bool
    log: Path

    @property
    def ok(self) -> bool:
        return self.path is not None


def default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "labctl"


def git(repo: Path, *args: str, check: bool = True) -> str:
    """`git -C repo ARGS`, its output stripped. Raises BuildError with git's message."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=False, timeout=300)
    except FileNotFoundError:
        raise BuildError("git not found on PATH") from None
    if check and done.returncode != 0:
        raise BuildError(f"git {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def missing_tools() -> list[str]:
    """What a build needs and this machine lacks: commands, and pybind11."""
    lacking = [tool for tool in TOOLS if shutil.which(tool) is None]
    try:
        import pybind11  # noqa: F401
    except ImportError:
        lacking.append("pybind11")
    return lacking


def _compiler() -> str:
    compiler = os.environ.get("CXX") or "c++"
    try:
        done = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False,
                              timeout=60)
    except OSError:
        return compiler
    return done.stdout.splitlines()[0] if done.stdout else compiler


def key(repo: Path, commit: str) -> str:
    """The build key of `commit`: what its extension is made of (SOURCES' objects at the commit)
    and what makes it (compiler, Python, recipe)."""
    objects = {}
    for source in SOURCES:
        objects[source] = git(repo, "rev-parse", "--verify", "--quiet", f"{commit}:{source}", check=False) or None
    made = {"objects": objects, "compiler": _compiler(), "python": SUFFIX, "recipe": RECIPE}
    return hashlib.sha256(json.dumps(made, sort_keys=True).encode()).hexdigest()[:20]


class Cache:
    """The builds of one repository's commits, in a cache folder."""

    def __init__(self, repo: Path, folder: Path | None = None):
        self.repo = Path(repo).resolve()
        top = git(self.repo, "rev-parse", "--show-toplevel")
        self.repo = Path(top)
        # Absolute here, once, against the folder labctl was started in: git and CMake run in
        # the repository and the build folder, where a relative path would name another place
        # (a checkout inside the user's repository, a compiler pointed at a missing folder).
        self.folder = (Path(folder) if folder is not None else default_cache()).absolute()
        if self.folder.is_symlink() or (self.folder.exists() and not self.folder.is_dir()):
            raise BuildError(f"--cache {self.folder}: not a folder; give a folder of its own (made if missing)")
        common = Path(git(self.repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
        self.work = self.folder / "work" / hashlib.sha256(str(common).encode()).hexdigest()[:16]

    def build(self, commit: str, rebuild: bool = False, starting: Callable[[], None] | None = None) -> Build:
        """`commit`'s extension: from the cache, or built now (`rebuild`: a cached failure is
        tried again; `starting` is called as a build begins, to say so). A commit that fails to
        build gives a Build with no path; a machine that cannot build at all raises BuildError."""
        build_key = key(self.repo, commit)
        found = self._read(build_key, commit)
        if found is not None and (found.ok or not rebuild):
            return found
        lacking = missing_tools()
        if lacking:
            raise BuildError(f"building a commit's extension needs {', '.join(lacking)}: "
                             "pip install 'labctl[history]' (cmake, ninja, pybind11), with git and "
                             "a C++20 compiler")
        self.work.mkdir(parents=True, exist_ok=True)
        with open(self.work / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another history on this repository waits here
            found = self._read(build_key, commit)
            if found is not None and (found.ok or not rebuild):
                return found
            if starting is not None:
                starting()
            return self._make(build_key, commit)

    def _read(self, build_key: str, commit: str) -> Build | None:
        folder = self.folder / "builds" / build_key
        try:
            record = json.loads((folder / "build.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        library = folder / f"_native{SUFFIX}"
        ok = bool(record.get("ok")) and library.is_file()
        if record.get("ok") and not ok:
            return None  # a record without its library: built again
        return Build(build_key, commit, library if ok else None, str(record.get("error") or ""),
                     float(record.get("seconds") or 0), True, folder / "build.log")

    def _make(self, build_key: str, commit: str) -> Build:
        folder = self.folder / "builds" / build_key
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "build.log"
        started = time.monotonic()
        # The build folder inside the checkout, as deep as pip's (build/{wheel_tag}): the compile
        # commands then name the sources by the same relative paths as the installed extension's
        # build, so that a compiler cache (ccache with CCACHE_BASEDIR) serves both. `git clean`
        # below keeps it, so that a commit's build is incremental on the last one.
        source = self.work / "src"
        build = source / "build" / "history"
        with open(log, "w", encoding="utf-8") as out:
            self._checkout(source, commit)
            import pybind11

            steps = [["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja",
                      "-DCMAKE_BUILD_TYPE=Release", "-DLABCTL_BUILD_EXTENSION=ON",
                      "-DLABCTL_RECORD_COMMIT=OFF",  # the commit is the history's (COMMIT_ENV)
                      f"-DPython_EXECUTABLE={sys.executable}", f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
                      # pybind11 strips a Release module; its symbols stay, so that callgrind names
                      # the functions bisect reports (the code is the same either way).
                      f"-DCMAKE_STRIP={shutil.which('true') or 'true'}"],
                     # ninja itself, not `cmake --build`: it is the one that must stop with us.
                     ["ninja", "-C", str(build), "_native", "-j", str(os.cpu_count() or 1)]]
            failed = ""
            for step in steps:
                out.write(f"$ {' '.join(step)}\n")
                out.flush()
                done = _run_step(step, out)
                if done.returncode != 0:
                    failed = f"`{' '.join(step[:2])}` exited {done.returncode}"
                    break
        seconds = time.monotonic() - started
        built = sorted(build.glob(f"_native{SUFFIX}")) if not failed else []
        if not failed and not built:
            failed = f"the build made no _native{SUFFIX}"
        error = ""
        if failed:
            error = f"{failed}: " + _first_error(log)
            if not _sources_failed(log, source):
                # Not the commit's sources (a compiler gone, a full disk, a build killed): a
                # failure of this machine's or labctl's, never stored as the commit's property.
                raise BuildError(f"building {commit[:10]} failed, not in its sources: {error} "
                                 f"(log: {log}); nothing was recorded for the commit")
        else:
            shutil.copy2(built[0], folder / f".native{SUFFIX}.tmp")  # whole, then in place
            os.replace(folder / f".native{SUFFIX}.tmp", folder / f"_native{SUFFIX}")
        record = {"key": build_key, "ok": not failed, "seconds": round(seconds, 1), "commit": commit,
                  "error": error}
        (folder / "build.json.tmp").write_text(json.dumps(record, indent=1), encoding="utf-8")
        os.replace(folder / "build.json.tmp", folder / "build.json")
        return Build(build_key, commit, None if failed else folder / f"_native{SUFFIX}", error,
                     seconds, False, log)

    def _checkout(self, source: Path, commit: str) -> None:
        """The worktree at `commit`: made the first time, moved after (only the files that differ
        are written, so the build folder beside it stays valid)."""
        if not self._ours(source):
            # Absent, or left by a repository deleted since (a clone made again at the same
            # path has the same key but no record of this worktree): made again.
            shutil.rmtree(source, ignore_errors=True)
            # --force: the path may still be registered from a cache deleted since; the
            # repository's other worktrees are left as they are (no prune).
            git(self.repo, "worktree", "add", "--detach", "--force", str(source), commit)
            return
        git(source, "checkout", "--detach", "--force", commit)
        git(source, "clean", "-fdq", "--exclude=/build/")

    def _ours(self, source: Path) -> bool:
        """Whether `source` is a worktree that this repository knows."""
        if not (source / ".git").exists():
            return False
        common = git(source, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False)
        return bool(common) and Path(common) == Path(git(self.repo, "rev-parse", "--path-format=absolute",
                                                         "--git-common-dir"))


def _run_step(step: list[str], out) -> subprocess.CompletedProcess:
    """A build step, stopped with labctl however labctl ends: the kernel sends it SIGTERM when
    labctl's process dies (even by SIGKILL: prctl's PR_SET_PDEATHSIG, Linux), and so does an
    interruption; ninja, on SIGTERM, stops the compilers it started and exits. Without this a
    killed `labctl history` left ninja compiling the rest of the build on its own."""
    process = subprocess.Popen(step, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    try:
        return subprocess.CompletedProcess(step, process.wait())
    except BaseException:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        raise


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies (a no-op where prctl is not Linux's)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _sources_failed(log: Path, source: Path) -> bool:
    """Whether a failed build's log blames the commit's own sources: a compiler error in a file
    of the checkout, or CMake's error in its CMakeLists.txt or cmake/ files."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    inside = re.escape(str(source))
    return bool(re.search(rf"^(?:In file included from )?(?:{inside}/|\.\./)\S+:\d+(?::\d+)?: (?:fatal )?error:", text, re.M)
                or re.search(rf"^CMake Error at (?:{inside}/)?(?:CMakeLists\.txt|cmake/)", text, re.M))


def _first_error(log: Path) -> str:
    """The first compiler error of a build log, else its last line."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    for line in lines:
        if "error:" in line or "Error" in line and "CMake" in line:
            return line.strip()[:300]
    return (lines[-1].strip() if lines else "")[:300]
