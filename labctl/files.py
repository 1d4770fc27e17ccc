"""Writing what a command outputs (an export, a comparison, a report folder) without losing
anything: written beside its destination and renamed into place, so an interruption leaves the
previous file whole; never onto a store (or its -wal and -shm); never over a file the user did
not ask to replace (`--force`); and a report folder is replaced only when labctl marked it as
its own and it holds nothing else."""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

# The file labctl leaves in every report folder it writes: which run of which experiment it
# holds. A folder without it, or with anything labctl did not write, is never replaced.
REPORT_MARKER = ".labctl-report"


class OutputError(Exception):
    """An output cannot be written where asked: the message names the option and the path. `code`
    is the exit code: 2 for a request labctl refuses, 1 for one the system refused."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_target(option: str, path: Path, stores: Iterable[Path] = (), force: bool = False) -> None:
    """Refuses an output path that is a store or beside-file of one, a folder, or an existing file
    (unless `force`). Raises OutputError."""
    for store in stores:
        for guarded in (store, Path(f"{store}-wal"), Path(f"{store}-shm"), Path(f"{store}-journal")):
            if path.absolute() == guarded.absolute() or _same_file(path, guarded):
                raise OutputError(f"{option} {path}: that is the store {store}"
                                  f"{'' if guarded == store else ' (' + guarded.name + ')'}; "
                                  "labctl never writes over a store")
    if path.is_dir():
        raise OutputError(f"{option} {path}: a folder; give a file name")
    if (path.exists() or path.is_symlink()) and not force:
        raise OutputError(f"{option} {path}: the file exists; give another name, or --force to "
                          "replace it")
    if not path.parent.is_dir():
        raise OutputError(f"{option} {path}: no folder {path.parent}; create it first")


def write_file(option: str, path: str | Path, write: Callable[[Path], None],
               stores: Iterable[Path] = (), force: bool = False) -> Path:
    """Writes a file through `write(temporary path)` beside `path`, then renames it into place.
    Raises OutputError; an error leaves neither a half-written file nor the temporary one."""
    path = Path(path)
    check_target(option, path, stores, force)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(handle)
    except OSError as error:
        raise _os_error(option, path, error) from None
    try:
        write(Path(temporary))
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except OSError as error:
        raise _os_error(option, path, error) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return path


def _os_error(option: str, path: Path, error: OSError) -> OutputError:
    why = {errno.EROFS: "a read-only file system", errno.EACCES: "permission denied",
           errno.EPERM: "not permitted", errno.ENOSPC: "no space left on the device"}.get(
        error.errno, error.strerror or str(error))
    return OutputError(f"{option} {path}: cannot write: {why}", code=1)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- report folders ---------------------------------------------------------------------------


def report_marker(folder: Path) -> dict | None:
    """What the marker of a report folder says (experiment, run, store), or None without one."""
    try:
        return json.loads((folder / REPORT_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def check_report_folder(option: str, folder: Path, experiment: str, stores: Iterable[Path] = ()) -> None:
    """Refuses a report folder labctl may not replace: the working folder or one holding it, a
    file, a folder that is not empty and not a report labctl marked, one holding anything labctl
    did not write there, or another experiment's report. Raises OutputError."""
    here = Path.cwd().resolve()
    target = folder.resolve()
    if target == here or target in here.parents:
        raise OutputError(f"{option} {folder}: the folder you are in (or one holding it); give a "
                          "folder of its own, such as reports/NAME")
    for store in stores:
        if store.resolve().is_relative_to(target):
            raise OutputError(f"{option} {folder}: it holds the store {store}; give a folder of its own")
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{option} {folder}: a file, not a folder")
    if not folder.is_dir() or not any(folder.iterdir()):
        return
    marker = report_marker(folder)
    if marker is None:
        raise OutputError(f"{option} {folder}: a folder that holds no report.md labctl wrote (no "
                          f"{REPORT_MARKER}); give an empty or new folder, or a previous report's")
    strangers = _not_a_reports(folder)
    if strangers:
        shown = ", ".join(sorted(strangers)[:5]) + (", ..." if len(strangers) > 5 else "")
        raise OutputError(f"{option} {folder}: besides the report it holds files labctl did not "
                          f"write ({shown}); move them, or give another folder")
    if marker.get("experiment") != experiment:
        raise OutputError(f"{option} {folder}: it holds the report of experiment "
                          f"{marker.get('experiment')!r} (run {marker.get('run')}), not of "
                          f"{experiment!r}; give another folder")


def _not_a_reports(folder: Path) -> list[str]:
    """Entries of a report folder that a report does not hold."""
    strangers = []
    for entry in folder.iterdir():
        if entry.name in (REPORT_MARKER, "report.md") and entry.is_file():
            continue
        if entry.name == "figures" and entry.is_dir():
            strangers += [f"figures/{f.name}" for f in entry.iterdir()
                          if not (f.is_file() and f.suffix in (".png", ".svg"))]
            continue
        strangers.append(entry.name)
    return strangers


def replace_folder(folder: Path, fill: Callable[[Path], None]) -> None:
    """Builds a folder beside `folder` through `fill(staging)`, then puts it in place of `folder`
    (which check_report_folder accepted), so an interruption leaves the previous one whole."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        fill(staging)
        mode = 0o777 & ~_umask()
        for path in [staging, *staging.rglob("*")]:
            os.chmod(path, mode if path.is_dir() else mode & 0o666)
        if folder.exists():
            previous = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.parent))
            previous.rmdir()
            folder.rename(previous)
            staging.rename(folder)
            shutil.rmtree(previous, ignore_errors=True)
        else:
            staging.rename(folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
