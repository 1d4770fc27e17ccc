"""Reading a file labctl was handed (an experiment, a peer's peer.toml, a gate baseline): a regular
file only, bounded in size and in nesting, so that no input can hang a command, exhaust its memory
or its stack; every refusal is one line naming the file (InputError).

A FIFO would block the first read for ever, a device can be endless (/dev/zero), a file of
gigabytes is read whole by tomllib, and `[[[[...` ten thousand deep is a RecursionError in
tomllib and json: each is refused here, once, for every reader.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tomllib
from pathlib import Path

# How deep a document may nest (tables in tables, lists in lists). labctl's own files nest five
# deep at most (an experiment: grid, a grid, axes, an axis, its values); 32 leaves room for any
# sensible file and stays far below the interpreter's recursion limit, so that whatever walks an
# accepted document (pydantic, json.dumps, the store) cannot overflow either.
MAX_DEPTH = 32


# What a point's settings may be, wherever they are read from (an experiment file, the command
# line, a store on resume): bounds that keep every accepted value usable where it goes (a timeout
# past what the platform can wait for, a limit past what setrlimit takes).
MAX_REPEATS = 10_000
MAX_WARMUP = 1_000
MAX_TIMEOUT_S = 7 * 24 * 3600
MAX_RLIMIT_MB = 2**30  # 1 PiB


class InputError(ValueError):
    """A file labctl cannot take as input: one line, starting with the file's path."""


def kind(mode: int) -> str:
    """What a file that is not a regular one is, in words: a FIFO, a character device..."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_bounded(path: str | Path, what: str, max_bytes: int) -> bytes:
    """The bytes of `path`, a regular file (a symlink to one is followed) of at most `max_bytes`.
    `what` names the file's role in the errors ("an experiment file"). Never blocks: the type is
    checked before the file is opened (opening a device can act on it) and again on the opened
    descriptor, which is opened non-blocking (a FIFO swapped in between opens at once and is
    refused). Raises InputError."""
    path = Path(path)
    try:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            raise InputError(f"{path}: {kind(before.st_mode)}, not a regular file ({what} is a file)")
        if before.st_size > max_bytes:
            raise InputError(f"{path}: {before.st_size} bytes; {what} is at most {max_bytes} bytes")
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read it: {error.strerror or error}") from None
    try:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode):
            raise InputError(f"{path}: {kind(opened.st_mode)}, not a regular file ({what} is a file)")
        chunks, size = [], 0
        while size <= max_bytes:  # one byte past the bound tells a file that grew since stat
            chunk = os.read(descriptor, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise InputError(f"{path}: cannot read it: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    if size > max_bytes:
        raise InputError(f"{path}: more than {max_bytes} bytes; {what} is at most {max_bytes} bytes")
    return b"".join(chunks)


def decode(data: bytes, where: str, what: str) -> str:
    """UTF-8 text, or InputError naming the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{where}: not UTF-8 text (byte {error.start} is {data[error.start]:#04x}); "
                         f"{what} is UTF-8") from None


def read_text(path: str | Path, what: str, max_bytes: int) -> str:
    """read_bounded, decoded as UTF-8. Raises InputError."""
    return decode(read_bounded(path, what, max_bytes), str(path), what)


def depth(value: object) -> int:
    """How deep a parsed document nests (a scalar: 0, [1]: 1, {"a": [1]}: 2), walked without
    recursion: it is asked of documents that may be too deep to recurse into."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        level += 1
        deepest = max(deepest, level)
        stack.extend((child, level) for child in item)
    return deepest


def _shallow(document: object, where: str) -> object:
    if depth(document) > MAX_DEPTH:
        raise InputError(f"{where}: nested more than {MAX_DEPTH} deep (tables or lists within each other)")
    return document


def parse_toml(text: str, where: str) -> dict:
    """A TOML document no deeper than MAX_DEPTH. `where`: the file, as errors name it. Raises
    InputError."""
    try:
        return _shallow(tomllib.loads(text), where)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{where}: not valid TOML: {error}") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise InputError(f"{where}: nested more than {MAX_DEPTH} deep (tables or lists within each other)") from None


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str | bytes, where: str) -> object:
    """A JSON document no deeper than MAX_DEPTH, with no NaN or Infinity (Python's json takes them;
    JSON has none, and no figure of labctl's may be one). Raises InputError."""
    try:
        return _shallow(json.loads(text, parse_constant=_no_constant), where)
    except RecursionError:  # the C scanner recurses once per level too
        raise InputError(f"{where}: nested more than {MAX_DEPTH} deep (objects or arrays within each other)") from None
    except ValueError as error:  # JSONDecodeError, a NaN, a number too long to convert
        raise InputError(f"{where}: not valid JSON: {error}") from None


def finite(value: object) -> bool:
    """A JSON or TOML number that is a real figure: not a boolean, not NaN or infinite."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and (isinstance(value, int) or math.isfinite(value)))


def load_toml(path: str | Path, what: str, max_bytes: int) -> dict:
    """A bounded TOML file. Raises InputError."""
    return parse_toml(read_text(path, what, max_bytes), str(path))


def load_json(path: str | Path, what: str, max_bytes: int) -> object:
    """A bounded JSON file. Raises InputError."""
    return parse_json(read_text(path, what, max_bytes), str(path))
