"""Writing what a command outputs (an export, a comparison, a baseline, a report folder) without
losing anything: written beside its destination and renamed into place, so an interruption leaves
the previous file whole; never onto a store (or its -wal and -shm); only ever in place of a regular
file, and of one the user asked to replace (`--force`); and a report folder is replaced only when
it holds nothing but the files labctl recorded writing there, unchanged."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

# The file labctl leaves in every report folder it writes: which run of which experiment it
# holds, and each file it wrote there with its size and hash. A folder without it, or holding
# anything else, or any of those files changed, is never replaced.
REPORT_MARKER = ".labctl-report"
# A marker is a few hundred bytes per figure; anything far larger is not one labctl wrote, and
# is not read whole into memory to find out.
MARKER_LIMIT = 4 << 20
# How many changed or added files a refusal names.
SHOWN = 5


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


def kind(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    for test, words in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                        (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def _lstat(option: str, path: Path) -> os.stat_result | None:
    """The path's own status (a link's, not its target's), None where nothing is there. Raises
    OutputError for a path the system cannot even look at."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            raise OutputError(f"{option} {path}: a name too long for the file system; give a "
                              "shorter one") from None
        if error.errno == errno.ENOTDIR:
            raise OutputError(f"{option} {path}: a file stands where a folder of that path should "
                              "be; give a path in a folder") from None
        raise _os_error(option, path, error) from None


def _guard_stores(option: str, path: Path, stores: Iterable[Path]) -> None:
    for store in stores:
        for guarded in (store, Path(f"{store}-wal"), Path(f"{store}-shm"), Path(f"{store}-journal")):
            if path.absolute() == guarded.absolute() or _same_file(path, guarded):
                raise OutputError(f"{option} {path}: that is the store {store}"
                                  f"{'' if guarded == store else ' (' + guarded.name + ')'}; "
                                  "labctl never writes over a store")


# What an SQLite database file begins with (https://www.sqlite.org/fileformat.html): a labctl store
# is one, wherever it is and whatever its name.
SQLITE_HEADER = b"SQLite format 3\x00"
BESIDE_FILES = ("-wal", "-shm", "-journal")  # what SQLite keeps beside a database


def _is_database(path: Path) -> bool:
    """Whether the regular file at `path` is an SQLite database, read from its first bytes."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def _guard_databases(option: str, path: Path) -> None:
    """Refuses a regular file that is an SQLite database (a labctl store, named by --db or not),
    or a file SQLite keeps beside one, whatever --force says."""
    if _is_database(path):
        raise OutputError(f"{option} {path}: an SQLite database (a labctl store, or another's); "
                          "labctl never writes over one, even with --force")
    for suffix in BESIDE_FILES:
        if path.name.endswith(suffix) and _is_database(path.with_name(path.name[:-len(suffix)])):
            raise OutputError(f"{option} {path}: the {suffix[1:]} file of the SQLite database "
                              f"{path.name[:-len(suffix)]}; labctl never writes over one, even with --force")


def check_target(option: str, path: Path, stores: Iterable[Path] = (), force: bool = False) -> None:
    """Refuses an output path that is a store or beside-file of one (a store named by --db, or
    any SQLite database, recognised by its content); anything but a regular file
    (a symbolic link, a folder, a FIFO, a device, a socket), even with `force`: labctl never writes
    through a link nor puts a file in place of something that is not one; an existing file unless
    `force`; a path in a missing folder (exit 1, as a folder that cannot be written). Raises
    OutputError."""
    _guard_stores(option, path, stores)
    status = _lstat(option, path)
    if status is not None:
        if stat.S_ISLNK(status.st_mode):
            raise OutputError(f"{option} {path}: a symbolic link; labctl never writes through one "
                              "nor replaces it (even with --force); give the file's own path")
        if stat.S_ISDIR(status.st_mode):
            raise OutputError(f"{option} {path}: a folder; give a file name")
        if not stat.S_ISREG(status.st_mode):
            raise OutputError(f"{option} {path}: {kind(status.st_mode)}, not a regular file; labctl "
                              "replaces only regular files (even with --force)")
    _guard_databases(option, path)
    if status is not None:
        if not force:
            raise OutputError(f"{option} {path}: the file exists; give another name, or --force to "
                              "replace it")
    parent = path.parent
    try:
        if not stat.S_ISDIR(os.stat(parent).st_mode):
            raise OutputError(f"{option} {path}: {parent} is not a folder")
    except FileNotFoundError:
        raise OutputError(f"{option} {path}: no folder {parent}; create it first", code=1) from None
    except OSError as error:
        raise _os_error(option, path, error) from None


def write_file(option: str, path: str | Path, write: Callable[[Path], None],
               stores: Iterable[Path] = (), force: bool = False) -> Path:
    """Writes a file through `write(temporary path)` beside `path`, then renames it into place.
    Raises OutputError; an error leaves neither a half-written file nor the temporary one."""
    path = Path(path)
    check_target(option, path, stores, force)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name[:200]}.", dir=path.parent)
        os.close(handle)
    except OSError as error:
        raise _os_error(option, path, error) from None
    try:
        write(Path(temporary))
        os.chmod(temporary, 0o666 & ~_umask())
        # Again, just before the rename: what stands there now (a link or a FIFO made while
        # `write` ran) is what the rename would replace.
        check_target(option, path, stores, force)
        os.replace(temporary, path)
    except OSError as error:
        raise _os_error(option, path, error) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return path


def _os_error(option: str, path: Path, error: OSError) -> OutputError:
    if error.errno == errno.ENAMETOOLONG:
        return OutputError(f"{option} {path}: a name too long for the file system; give a shorter one")
    why = {errno.EROFS: "a read-only file system", errno.EACCES: "permission denied",
           errno.EPERM: "not permitted", errno.ENOSPC: "no space left on the device"}.get(
        error.errno, error.strerror or str(error))
    return OutputError(f"{option} {path}: cannot write: {why}", code=1)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- report folders ---------------------------------------------------------------------------


def read_regular(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes, or None where `path` is anything else (a link, a FIFO: opened
    without blocking and without following) or larger than `limit`."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
            return None
        with os.fdopen(handle, "rb", closefd=False) as opened:
            return opened.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(handle)


def report_marker(folder: Path) -> dict | None:
    """What the marker of a report folder says (experiment, run, store, files), or None without a
    marker labctl could have written (missing, not a regular file, too large, not a JSON object)."""
    return read_marker(folder / REPORT_MARKER)


def read_marker(path: Path) -> dict | None:
    """A marker file labctl writes in a folder it made (a report's, a site's), as a JSON object,
    or None where it could not be one (missing, not a regular file, too large, not an object)."""
    data = read_regular(path, MARKER_LIMIT)
    if data is None:
        return None
    try:
        marker = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return marker if isinstance(marker, dict) else None


def digest(path: Path) -> str:
    """A file's sha256, read without following a link or blocking on a FIFO."""
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(handle, "rb") as opened:
        return hashlib.file_digest(opened, "sha256").hexdigest()


def manifest(folder: Path) -> dict[str, dict]:
    """Each regular file under `folder` (its marker aside) by its path there: its size and hash,
    what a report's marker records so that a later report can tell the folder is unchanged
    (with its folders, subfolders(), which may be empty)."""
    files = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if relative != REPORT_MARKER and path.is_file() and not path.is_symlink():
            files[relative] = {"size": path.stat().st_size, "sha256": digest(path)}
    return files


def subfolders(folder: Path) -> list[str]:
    """Each folder under `folder` by its path there."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_dir() and not p.is_symlink())


def _changes(folder: Path, listed: dict, made: list) -> list[str]:
    """What in a marked report folder is not as labctl recorded writing it (the files `listed`,
    the folders `made`): files added (or anything not a regular file) and files changed, up to
    SHOWN + 1 of them, in name order. A recorded file that is gone is no change: nothing of the
    user's is lost by replacing it."""
    folders = {"/".join(name.split("/")[:i]) for name in listed for i in range(1, name.count("/") + 1)}
    folders |= {name for name in made if isinstance(name, str)}
    found: list[str] = []

    def walk(here: Path, prefix: str) -> None:
        for entry in sorted(os.scandir(here), key=lambda e: e.name):
            if len(found) > SHOWN:
                return
            relative = prefix + entry.name
            if relative == REPORT_MARKER:
                continue  # read already: a regular file, or there would be no marker
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode) and relative in folders:
                walk(Path(entry.path), relative + "/")
                continue
            record = listed.get(relative)
            if not isinstance(record, dict):
                found.append(f"{relative}{'/' if stat.S_ISDIR(mode) else ''} (added)")
            elif (not stat.S_ISREG(mode) or record.get("size") != entry.stat(follow_symlinks=False).st_size
                  or record.get("sha256") != digest(Path(entry.path))):
                found.append(f"{relative} (changed)")

    walk(folder, "")
    return found


def _not_a_reports(folder: Path) -> list[str]:
    """Entries of a report folder that a report does not hold, by name only: what can be told of a
    folder whose marker predates the list of files (labctl 0.x before issue 31)."""
    strangers = []
    for entry in os.scandir(folder):
        mode = entry.stat(follow_symlinks=False).st_mode
        if entry.name in (REPORT_MARKER, "report.md") and stat.S_ISREG(mode):
            continue
        if entry.name == "figures" and stat.S_ISDIR(mode):
            strangers += [f"figures/{f.name}" for f in os.scandir(entry.path)
                          if not (f.is_file(follow_symlinks=False) and Path(f.name).suffix in (".png", ".svg"))]
            continue
        strangers.append(entry.name)
    return strangers


def _shown(names: list[str]) -> str:
    return ", ".join(sorted(names)[:SHOWN]) + (", ..." if len(names) > SHOWN else "")


def check_output_folder(option: str, folder: Path, stores: Iterable[Path], example: str) -> bool:
    """What every folder labctl replaces must be: not the working folder or one holding it, not a
    store nor one holding it, not a link, nothing but a folder. Returns whether it holds anything
    (then the caller judges it by its marker; `example` names a folder of its own in the errors).
    Raises OutputError."""
    _guard_stores(option, folder, stores)
    here = Path.cwd().resolve()
    target = folder.resolve()
    if target == here or target in here.parents:
        raise OutputError(f"{option} {folder}: the folder you are in (or one holding it); give a "
                          f"folder of its own, such as {example}")
    for store in stores:
        if store.resolve().is_relative_to(target):
            raise OutputError(f"{option} {folder}: it holds the store {store}; give a folder of its own")
    status = _lstat(option, folder)
    if status is None:
        return False
    if stat.S_ISLNK(status.st_mode):
        raise OutputError(f"{option} {folder}: a symbolic link; labctl never writes through one nor "
                          "replaces it; give the folder's own path")
    if stat.S_ISREG(status.st_mode):
        raise OutputError(f"{option} {folder}: a file, not a folder")
    if not stat.S_ISDIR(status.st_mode):
        raise OutputError(f"{option} {folder}: {kind(status.st_mode)}, not a folder")
    try:
        return any(folder.iterdir())
    except OSError as error:
        raise _os_error(option, folder, error) from None


def check_unchanged(option: str, folder: Path, marker: dict, listed: dict, what: str) -> None:
    """Refuses a folder labctl wrote (`marker` lists its files and folders, `listed` the files
    with their sizes and digests) that holds anything added or changed since. Raises OutputError."""
    try:
        made = marker.get("folders") if isinstance(marker.get("folders"), list) else []
        changed = _changes(folder, listed, made)
    except OSError as error:  # a subfolder it cannot read: cannot tell, so not replaced
        raise _os_error(option, folder, error) from None
    if changed:
        raise OutputError(f"{option} {folder}: changed or added since labctl wrote this {what}: "
                          f"{_shown(changed)}; move them, or give another folder")


def check_report_folder(option: str, folder: Path, experiment: str, stores: Iterable[Path] = ()) -> None:
    """Refuses a report folder labctl may not replace: what no output folder may be
    (check_output_folder), a folder that is not empty and not a report labctl marked, another
    experiment's report, and one holding anything but the files its marker lists, unchanged. A
    marker from before markers listed their files cannot tell a user's figures/mine.png from
    labctl's: such a folder is replaced only when it holds nothing but report.md, the marker and
    figures/*.png|svg. Raises OutputError."""
    if not check_output_folder(option, folder, stores, "reports/NAME"):
        return
    marker = report_marker(folder)
    if marker is None:
        raise OutputError(f"{option} {folder}: a folder that holds no report.md labctl wrote (no "
                          f"{REPORT_MARKER}); give an empty or new folder, or a previous report's")
    listed = marker.get("files")
    if isinstance(listed, dict):
        check_unchanged(option, folder, marker, listed, "report")
    else:
        try:
            strangers = _not_a_reports(folder)
        except OSError as error:
            raise _os_error(option, folder, error) from None
        if strangers:
            raise OutputError(f"{option} {folder}: besides the report it holds files labctl did not "
                              f"write ({_shown(strangers)}); its marker predates labctl's list of "
                              "the files it writes; move them, or give another folder")
    if marker.get("experiment") != experiment:
        raise OutputError(f"{option} {folder}: it holds the report of experiment "
                          f"{marker.get('experiment')!r} (run {marker.get('run')}), not of "
                          f"{experiment!r}; give another folder")


def replace_folder(folder: Path, fill: Callable[[Path], None], check: Callable[[], None] | None = None) -> None:
    """Builds a folder beside `folder` through `fill(staging)`, then puts it in place of `folder`
    (which check_report_folder accepted). `check` runs again just before the swap, so a file the
    user added while the report was made is found. An interruption leaves the previous one whole."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name[:200]}.", dir=folder.parent))
    try:
        fill(staging)
        mode = 0o777 & ~_umask()
        for path in [staging, *staging.rglob("*")]:
            os.chmod(path, mode if path.is_dir() else mode & 0o666)
        if check is not None:
            check()
        if folder.exists():
            previous = Path(tempfile.mkdtemp(prefix=f".{folder.name[:200]}.old.", dir=folder.parent))
            previous.rmdir()
            folder.rename(previous)
            staging.rename(folder)
            shutil.rmtree(previous, ignore_errors=True)
        else:
            staging.rename(folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
