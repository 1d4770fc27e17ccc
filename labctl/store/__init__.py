"""The results store: SQLite, the only module that writes results.

A sweep writes its plan first, then each sample in its own transaction, so an interruption (Ctrl-C,
kill -9, power cut) loses at most the sample in flight and the run can be resumed. WAL mode and a
busy timeout let two sweeps write to one store at once.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import sqlite3
import stat
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

import psutil

from labctl.vocabulary import inputs, sample, schema
from labctl.vocabulary.point import Point
from labctl.vocabulary.schema import Catalogue
from labctl.vocabulary.text import printable


class Planned(Protocol):
    """What the store records of a plan before any point runs (labctl.plan.experiment.Plan is one):
    the store reads and writes plain data, and imports nothing above it."""

    name: str
    description: str
    source: str
    text: str
    order: str
    seed: int | None
    catalogue: Catalogue
    points: list[Point]  # in the order they run


SCHEMA_VERSION = 7
APPLICATION = "labctl"
# The keys of the commit a run's context records as "commit" (labctl.run.sysinfo reads them from
# LABCTL_COMMIT, labctl.read.series reads them back).
COMMIT_KEYS = ("sha", "subject", "date", "build")
BUSY_TIMEOUT_S = 60  # how long a writer waits for another process holding the store
TEXT_CHUNK = 10_000  # rows whose text _check_text decodes at once

SCHEMA = """
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE machines (
    id INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE,
    info TEXT NOT NULL                      -- JSON: CPU model, cores, SMT, kernel, ...
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    source TEXT NOT NULL,                   -- the experiment file
    experiment TEXT NOT NULL,               -- its content
    order_mode TEXT NOT NULL,
    seed INTEGER,
    command TEXT NOT NULL,                  -- to run it again
    machine_id INTEGER NOT NULL REFERENCES machines(id),
    context TEXT NOT NULL,                  -- JSON: load, memory, frequency, software at start
    warnings TEXT NOT NULL,                 -- JSON list
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,                   -- running, interrupted, finished
    pid INTEGER,                            -- of the process running it, while it runs
    host TEXT,
    catalogue TEXT                          -- JSON (labctl.vocabulary.schema.Catalogue): its kernels, studies
                                            -- and published figures (v3, NULL in older runs)
);
CREATE TABLE points (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    position INTEGER NOT NULL,              -- order of execution
    key TEXT NOT NULL,                      -- same kernel, parameters and setting: same key
    kernel TEXT NOT NULL,
    params TEXT NOT NULL,                   -- JSON, resolved
    env TEXT NOT NULL,                      -- JSON
    cpus TEXT,                              -- JSON list of OS CPUs for the worker, or NULL
    repeats INTEGER NOT NULL,
    warmup INTEGER NOT NULL,
    timeout_s REAL NOT NULL,
    status TEXT NOT NULL,                   -- pending, done, failed, skipped (cannot run here)
    failure_kind TEXT,
    failure TEXT,
    rlimit_mb INTEGER,                      -- the worker's address-space limit, or NULL (v2)
    machine_id INTEGER REFERENCES machines(id),  -- the host it ran on, NULL: the run's machine (v4)
    context TEXT,                           -- JSON: that host's state and labctl at the point's
                                            -- start (sysinfo.host_context), NULL: the run's (v4)
    started_at TEXT,                        -- its worker process's start and end, on the host's
    finished_at TEXT,                       -- clock, NULL: not run (or run before v4)
    measure TEXT,                           -- time, instructions or counters, NULL: time (v5)
    UNIQUE (run_id, position),
    UNIQUE (run_id, key)
);
CREATE TABLE samples (
    id INTEGER PRIMARY KEY,
    point_id INTEGER NOT NULL REFERENCES points(id),
    repeat INTEGER NOT NULL,
{sample_columns}
    recorded_at TEXT NOT NULL,
    UNIQUE (point_id, repeat)
);
CREATE INDEX samples_point ON samples (point_id);
CREATE INDEX points_run ON points (run_id);
""".replace("{sample_columns}", "\n".join(f"    {name} {kind}," for name, kind in sample.STORED))


# Version 5's samples table as it was made: a migration is frozen in time, whatever SCHEMA
# becomes after it.
_V4_SAMPLE_COLUMNS = ("id, point_id, repeat, elapsed_ns, messages_processed, answer, expected, "
                      "metrics, thread_cpu_ns, peak_rss_kb, voluntary_switches, "
                      "involuntary_switches, pid, recorded_at")
_V5_SAMPLES = """CREATE TABLE samples_v5 (
    id INTEGER PRIMARY KEY,
    point_id INTEGER NOT NULL REFERENCES points(id),
    repeat INTEGER NOT NULL,
    elapsed_ns INTEGER NOT NULL, messages_processed INTEGER NOT NULL, answer TEXT NOT NULL,
    expected TEXT NOT NULL, metrics TEXT NOT NULL, thread_cpu_ns TEXT NOT NULL,
    peak_rss_kb INTEGER, voluntary_switches INTEGER, involuntary_switches INTEGER, pid INTEGER,
    instructions INTEGER, l1_misses INTEGER, cache_misses INTEGER, cycles INTEGER,
    branch_misses INTEGER, task_clock_ns INTEGER, context_switches INTEGER,
    cpu_migrations INTEGER, page_faults INTEGER, unsupported TEXT NOT NULL DEFAULT '{}',
    schedule_dependent INTEGER,
    recorded_at TEXT NOT NULL,
    UNIQUE (point_id, repeat)
)"""
# Version 6 keeps a sample's counts as one JSON object, {name: integer}, in `counts`, not a column
# each: a new count (labctl.vocabulary.metrics) is a new name, not a table rebuild. A column per count would
# let SQL filter on one, but nothing reads them apart from their sample (the report and the gate
# read whole samples through labctl.read.results), and a table of (sample, name, value) rows would be a
# join on every read for nothing more. The migration moves each non-NULL count into the object
# (json_patch drops the members whose value is null: absent stays absent, never 0).
_V5_COUNTS = ("instructions", "l1_misses", "cache_misses", "cycles", "branch_misses",
              "task_clock_ns", "context_switches", "cpu_migrations", "page_faults")
_V5_KEPT = ("id, point_id, repeat, elapsed_ns, messages_processed, answer, expected, metrics, "
            "thread_cpu_ns, peak_rss_kb, voluntary_switches, involuntary_switches, pid")
_V6_SAMPLES = """CREATE TABLE samples_v6 (
    id INTEGER PRIMARY KEY,
    point_id INTEGER NOT NULL REFERENCES points(id),
    repeat INTEGER NOT NULL,
    elapsed_ns INTEGER NOT NULL, messages_processed INTEGER NOT NULL, answer TEXT NOT NULL,
    expected TEXT NOT NULL, metrics TEXT NOT NULL, thread_cpu_ns TEXT NOT NULL,
    peak_rss_kb INTEGER, voluntary_switches INTEGER, involuntary_switches INTEGER, pid INTEGER,
    counts TEXT NOT NULL DEFAULT '{}', unsupported TEXT NOT NULL DEFAULT '{}',
    schedule_dependent INTEGER,
    recorded_at TEXT NOT NULL,
    UNIQUE (point_id, repeat)
)"""
_V5_TO_V6 = (f"INSERT INTO samples_v6 ({_V5_KEPT}, counts, unsupported, schedule_dependent, recorded_at)"
             f" SELECT {_V5_KEPT}, json_patch('{{}}', json_object("
             + ", ".join(f"'{name}', {name}" for name in _V5_COUNTS)
             + ")), unsupported, schedule_dependent, recorded_at FROM samples")
# Version 7 keeps a latency kernel's histogram with its sample (sample.Sample.histogram), after
# schedule_dependent, so the table is made again with the column in its place.
_V6_KEPT = ("id, point_id, repeat, elapsed_ns, messages_processed, answer, expected, metrics, "
            "thread_cpu_ns, peak_rss_kb, voluntary_switches, involuntary_switches, pid, counts, "
            "unsupported, schedule_dependent, recorded_at")
_V7_SAMPLES = """CREATE TABLE samples_v7 (
    id INTEGER PRIMARY KEY,
    point_id INTEGER NOT NULL REFERENCES points(id),
    repeat INTEGER NOT NULL,
    elapsed_ns INTEGER NOT NULL, messages_processed INTEGER NOT NULL, answer TEXT NOT NULL,
    expected TEXT NOT NULL, metrics TEXT NOT NULL, thread_cpu_ns TEXT NOT NULL,
    peak_rss_kb INTEGER, voluntary_switches INTEGER, involuntary_switches INTEGER, pid INTEGER,
    counts TEXT NOT NULL DEFAULT '{}', unsupported TEXT NOT NULL DEFAULT '{}',
    schedule_dependent INTEGER, histogram TEXT NOT NULL DEFAULT '[]',
    recorded_at TEXT NOT NULL,
    UNIQUE (point_id, repeat)
)"""

# What takes a store of version N to N + 1. A column added by a migration goes last in SCHEMA's
# table too, so that migrated and new stores have the same layout; where it cannot (a sample's
# field goes before recorded_at), the migration rebuilds the table.
MIGRATIONS = {
    1: ["ALTER TABLE points ADD COLUMN rlimit_mb INTEGER"],
    2: ["ALTER TABLE runs ADD COLUMN catalogue TEXT"],
    3: ["ALTER TABLE points ADD COLUMN machine_id INTEGER REFERENCES machines(id)",
        "ALTER TABLE points ADD COLUMN context TEXT",
        "ALTER TABLE points ADD COLUMN started_at TEXT",
        "ALTER TABLE points ADD COLUMN finished_at TEXT"],
    # The measures (labctl.catalogue.measures): a point's measure, and a sample's counts.
    4: ["ALTER TABLE points ADD COLUMN measure TEXT",
        _V5_SAMPLES,
        f"INSERT INTO samples_v5 ({_V4_SAMPLE_COLUMNS}) SELECT {_V4_SAMPLE_COLUMNS} FROM samples",
        "DROP TABLE samples",
        "ALTER TABLE samples_v5 RENAME TO samples",
        "CREATE INDEX samples_point ON samples (point_id)"],
    # A sample's counts by name, in one JSON column (_V6_SAMPLES says why).
    5: [_V6_SAMPLES,
        _V5_TO_V6,
        "DROP TABLE samples",
        "ALTER TABLE samples_v6 RENAME TO samples",
        "CREATE INDEX samples_point ON samples (point_id)"],
    # A latency kernel's histogram with its sample (_V7_SAMPLES).
    6: [_V7_SAMPLES,
        f"INSERT INTO samples_v7 ({_V6_KEPT}) SELECT {_V6_KEPT} FROM samples",
        "DROP TABLE samples",
        "ALTER TABLE samples_v7 RENAME TO samples",
        "CREATE INDEX samples_point ON samples (point_id)"],
}


class StoreError(Exception):
    """The file cannot be used as a store: says why, and the file is left untouched. `code` is the
    exit code: 2 for a file that is no store (or damaged, or an unknown run), 1 for a store the
    system will not let labctl write (read-only, its folder missing or locked, a full disk)."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


# -- what is read back: validated as strictly as what is read from a file ----------------------


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number")


def _number(value: object, nan: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return nan or math.isfinite(value)


def _whole(value: object, low: int = -2**63, high: int = 2**63 - 1) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _mapping(keys=lambda k: True, values=lambda v: True):
    return lambda found: isinstance(found, dict) and all(isinstance(k, str) and keys(k) and values(v)
                                                         for k, v in found.items())


# Each JSON column: what it must hold, in words and as a check; whether NaN may be in it (a
# kernel metric's NaN reads as absent; a count's cannot be).
_JSON = {
    "params": ("an object of parameter values", _mapping(values=lambda v: isinstance(v, (str, bool)) or _number(v)), False),
    "env": ("an object of strings", _mapping(values=lambda v: isinstance(v, str)), False),
    "cpus": ("a list of CPU numbers", lambda v: isinstance(v, list) and all(_whole(c, 0, 1 << 20) for c in v), False),
    "machine": ("an object", _mapping(), False),
    "context": ("an object", _mapping(), True),
    "warnings": ("a list of strings", lambda v: isinstance(v, list) and all(isinstance(w, str) for w in v), False),
    "counts": ("an object of whole numbers", _mapping(values=_whole), False),
    "thread_cpu_ns": ("a list of whole numbers", lambda v: isinstance(v, list) and all(_whole(t) for t in v), False),
    "metrics": ("an object of numbers", _mapping(values=lambda v: _number(v, nan=True)), True),
    "unsupported": ("an object of strings", _mapping(values=lambda v: isinstance(v, str)), False),
    "histogram": ("a list of [value, count] pairs of whole numbers",
                  lambda v: isinstance(v, list) and all(isinstance(b, list) and len(b) == 2 and _whole(b[0], 0)
                                                        and _whole(b[1], 1) for b in v), False),
}


def damaged(path: Path, where: str, column: str, text: object) -> StoreError:
    """The one line that says a value read back from a store is not what labctl wrote there."""
    shown = printable(str(text))
    return StoreError(f"{path}: {where}: its {column} is damaged (expected {_JSON[column][0] if column in _JSON else column}, "
                      f"found {shown[:60]}{'...' if len(shown) > 60 else ''}); the store was changed "
                      "outside labctl", 2)


def _decode(path: Path, where: str, column: str, text: object) -> object:
    """A JSON column read back from a store, checked (_JSON); StoreError where it is damaged."""
    wanted, valid, nan = _JSON[column]
    try:
        value = json.loads(text) if nan else json.loads(text, parse_constant=_refuse_constant)
    except (TypeError, ValueError, RecursionError):
        raise damaged(path, where, column, text) from None
    if not valid(value):
        raise damaged(path, where, column, text)
    return value


def failure_kind(error: sqlite3.Error) -> str:
    """What an SQLite error met while using a store is about: damaged, readonly, full (or another
    write that failed), read (an I/O error reading), busy, cantopen or other. By SQLite's error
    code, not its words, which change between versions."""
    code = getattr(error, "sqlite_errorname", None) or ""
    if code.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or _undecodable(error):
        return "damaged"
    if code.startswith("SQLITE_READONLY"):
        return "readonly"
    if code in ("SQLITE_IOERR_READ", "SQLITE_IOERR_SHORT_READ"):
        return "read"
    if code == "SQLITE_FULL" or code.startswith("SQLITE_IOERR"):
        return "full"
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return "busy"
    if code.startswith("SQLITE_CANTOPEN"):
        return "cantopen"
    return "other"


def _undecodable(error: sqlite3.Error) -> bool:
    """Python's sqlite3 met a TEXT value that is not UTF-8. SQLite stores text as given and checks
    nothing (quick_check passes); the module raises a plain OperationalError with no SQLite code,
    so only its words tell."""
    return isinstance(error, sqlite3.OperationalError) and str(error).startswith("Could not decode to UTF-8")


def explain(error: sqlite3.Error, path: str | Path) -> str:
    """The error in words a user can act on, after the store's path."""
    name = Path(path).name
    if _undecodable(error):
        column = str(error).split("column ", 1)[-1].split(" with text", 1)[0]
        return f"a damaged store: a text value of column {column} is not UTF-8; refusing to touch it"
    return {
        "damaged": f"a damaged SQLite file ({error}); refusing to touch it",
        "readonly": f"cannot write to it: the file or its folder is read-only ({error})",
        "read": f"cannot read it ({error}): the file may be damaged, or its device failing",
        "full": f"cannot write to it ({error}): the disk may be full, or the file over a size limit",
        "busy": f"another process held it for more than {BUSY_TIMEOUT_S} s ({error})",
        "cantopen": f"cannot open it ({error}): is the file readable, and its folder there and "
                    f"writable? SQLite keeps {name}-wal and {name}-shm beside it",
    }.get(failure_kind(error), str(error))


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class RunRow:
    id: int
    name: str
    source: str
    status: str
    started_at: str
    finished_at: str | None
    seed: int | None
    command: str
    machine: dict
    context: dict
    warnings: list[str]
    points: int
    points_done: int
    points_failed: int
    samples: int
    description: str = ""
    experiment: str = ""  # the experiment file's text as it was when the run started
    points_skipped: int = 0  # a runtime or allocator this machine lacks: never run


@dataclass(frozen=True)
class Round:
    """A finished run that is one side of one round of an interleaved comparison (`labctl ab`,
    `labctl calibrate`): its context's "interleaved" object (labctl.run.sysinfo.ROUND_KEYS)."""

    run: int
    group: str
    side: str  # A or B
    round: int
    same_build: bool  # an A/A calibration: both sides one build


def round_of(context: dict) -> dict | None:
    """A run context's interleaved round (ROUND_KEYS), or None where it is none."""
    found = context.get("interleaved")
    return found if isinstance(found, dict) and isinstance(found.get("group"), str) else None


@dataclass(frozen=True)
class PointRow:
    """A point of a stored run: the point as its plan made it, and how far it got."""

    id: int
    position: int
    key: str  # as stored when the run started: what another run's point is matched by
    point: Point  # its whole plan; `repeats` and `skip` as planned
    status: str  # pending, done, failed or skipped
    failure_kind: str | None
    failure: str | None
    samples_done: int
    machine: dict | None = None  # the host it ran on (sysinfo.machine); None: the run's machine
    context: dict | None = None  # that host's state and labctl at its start; None: the run's
    started_at: str | None = None  # its worker process's start and end, on the host's clock
    finished_at: str | None = None


class Store:
    """A connection to a results store. Opening a file that is not a labctl store, a damaged one,
    or a store of a newer schema, raises StoreError and changes nothing."""

    def __init__(self, path: str | Path, create: bool = True):
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(f"{self.path}: a folder, not a store file")
        try:
            mode = self.path.stat().st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):  # SQLite would block on a FIFO, or fail on I/O
            raise StoreError(f"{self.path}: {inputs.kind(mode)}, not a regular file (a store is a file)")
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists and not create:
            raise StoreError(f"{self.path}: an empty file, not a store (a sweep into it makes one)"
                             if mode is not None else f"{self.path}: no such store")
        if exists:
            self._check_header()
        self.db = None
        try:
            self._open(exists)
        except BaseException:
            if self.db is not None:  # now, so that SQLite removes the -wal and -shm it made
                self.db.close()
            raise

    def _open(self, exists: bool) -> None:
        try:
            self.db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
            self.db.execute("PRAGMA foreign_keys = ON")
            if not exists:
                self._create()
            else:
                self._check_pages()
                self._check_text()
            self._check_schema()
            self._use_wal()
            # FULL: a committed sample survives a power cut, not just a crash.
            self.db.execute("PRAGMA synchronous = FULL")
        except sqlite3.DatabaseError as error:
            kind = failure_kind(error)
            code = 1 if kind in ("cantopen", "readonly", "full", "read", "busy") else 2
            if not exists and kind == "cantopen":
                raise StoreError(f"{self.path}: cannot create a store there ({error}): is its "
                                 "folder there and writable?", code) from None
            raise StoreError(f"{self.path}: {explain(error, self.path)}", code) from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- schema ------------------------------------------------------------------------------

    def _use_wal(self) -> None:
        """WAL lets readers and one writer work at once. The mode is kept in the file, so only
        the first opener switches it. The switch needs an exclusive lock and fails at once with
        'locked' instead of waiting (SQLite calls no busy handler for it), so it is retried
        while a concurrent opener finishes."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self.db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _check_header(self) -> None:
        try:
            with open(self.path, "rb") as f:
                header = f.read(16)
        except OSError as error:
            raise StoreError(f"{self.path}: cannot read it: {error.strerror or error}", 1) from None
        if header != b"SQLite format 3\x00":
            raise StoreError(f"{self.path}: not a labctl store (not an SQLite database); "
                             "refusing to touch it")

    def _create(self) -> None:
        with self._transaction():
            # Another process may have created the store between our look at the file and this
            # transaction (two sweeps started together); then there is nothing to create.
            if self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                return
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    self.db.execute(statement)
            self.db.execute("INSERT INTO meta VALUES ('application', ?)", (APPLICATION,))
            self.db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def _check_schema(self) -> None:
        try:
            rows = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as error:
            if "no such table" in str(error):
                raise StoreError(f"{self.path}: an SQLite database, but not a labctl store; "
                                 "refusing to touch it") from None
            if failure_kind(error) == "other":  # a file SQLite can read, but not as it should
                raise StoreError(f"{self.path}: a damaged SQLite file ({error}); refusing to "
                                 "touch it") from None
            raise StoreError(f"{self.path}: {explain(error, self.path)}",
                             1 if failure_kind(error) != "damaged" else 2) from None
        if rows.get("application") != APPLICATION:
            raise StoreError(f"{self.path}: an SQLite database, but not a labctl store; "
                             "refusing to touch it")
        version = rows.get("schema_version", "")
        if not (version.isascii() and version.isdigit()) or int(version) < 1:
            raise StoreError(f"{self.path}: a labctl store with no valid schema version "
                             f"({version!r}); it is damaged, refusing to touch it")
        version = int(version)
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: store schema version {version} is newer than this "
                             f"labctl's ({SCHEMA_VERSION}); upgrade labctl")
        if version < SCHEMA_VERSION:
            version = self._migrate()
        if _layout(self.db) != _expected_layout():
            raise StoreError(f"{self.path}: a labctl store whose tables do not match schema version "
                             f"{version}; it was changed outside labctl, or is damaged")

    def _check_pages(self) -> None:
        """Refuses a damaged file before anything reads or writes it. Reads and writes can
        succeed on a file with damaged pages elsewhere (a sweep would add to it; `runs` would
        leave runs out), so only a check of every page tells. It reads the whole file once:
        a quarter of a second for 500,000 samples."""
        problems = [row[0] for row in self.db.execute("PRAGMA quick_check(1)")]
        if problems != ["ok"]:
            first = next((line for line in "\n".join(problems).splitlines()
                          if line and not line.startswith("***")), "?")
            raise StoreError(f"{self.path}: a damaged SQLite file (quick_check: {first}); refusing "
                             "to touch it")

    def _check_text(self, samples: bool = False) -> None:
        """Refuses a store holding a text value that is not UTF-8 (written by another program:
        SQLite stores text as given, and quick_check passes it). Python's sqlite3 fails to read
        it wherever it is met, so `runs` or `report` would fail on a store a sweep still appends
        to. Every table is checked when the store is opened but samples, the bulk of it, which
        are checked where a run starts to append (`samples`): 1-2 s for 500,000 samples, once per
        sweep; a command that only reads meets a damaged sample where it reads it, and says
        damaged too (failure_kind). The text of TEXT_CHUNK rows at a time is joined in SQLite and
        decoded at once, a column at a time (with a newline between values, none that is not
        UTF-8 becomes so)."""
        def name(identifier: str) -> str:
            return '"' + identifier.replace('"', '""') + '"'

        tables = {table: [row[1] for row in self.db.execute(f"PRAGMA table_info({name(table)})")]
                  for (table,) in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
                  if (table == "samples") == samples}
        factory, self.db.text_factory = self.db.text_factory, bytes
        try:
            for table, columns in tables.items():
                for column in self._undecodable_columns(name(table), [name(c) for c in columns], columns):
                    raise StoreError(printable(f"{self.path}: a damaged store: a value of {table}.{column} "
                                               "is text that is not UTF-8; refusing to touch it"))
        finally:
            self.db.text_factory = factory

    def _undecodable_columns(self, table: str, quoted: list[str], columns: list[str]):
        """The columns of `table` (a quoted name) holding text that is not UTF-8: the first found."""
        def decodes(data: bytes | None) -> bool:
            try:
                data is None or data.decode("utf-8")
            except UnicodeDecodeError:
                return False
            return True

        if not quoted:
            return
        texts = ", ".join(f"group_concat(CASE WHEN typeof({c}) = 'text' THEN {c} END, char(10))" for c in quoted)
        start = -2**63
        while True:
            # A parameter, not a literal: -9223372036854775808 in SQL is a minus applied to a
            # number too large for an integer, a float, and rowid >= a float scans every row.
            try:
                end, *values = self.db.execute(
                    f"SELECT max(rowid), {texts} FROM (SELECT rowid, * FROM {table} WHERE rowid >= :start "
                    f"ORDER BY rowid LIMIT {TEXT_CHUNK})", {"start": start}).fetchone()
            except sqlite3.OperationalError as error:
                if "rowid" not in str(error):
                    raise
                end, values = None, self.db.execute(f"SELECT {texts} FROM {table}").fetchone()  # WITHOUT ROWID
            yield from (column for column, value in zip(columns, values) if not decodes(value))
            if end is None or end >= 2**63 - 1:
                return
            start = end + 1

    def _migrate(self) -> int:
        """Brings an older store up to SCHEMA_VERSION, one version at a time, in one transaction
        (another process may be migrating it too: the version is read again under the lock)."""
        with self._transaction():
            version = int(self.db.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
            while version < SCHEMA_VERSION:
                for statement in MIGRATIONS[version]:
                    self.db.execute(statement)
                version += 1
            self.db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
        return version

    def _transaction(self):
        return _Transaction(self.db)

    # -- writing -----------------------------------------------------------------------------

    def machine_id(self, info: dict) -> int:
        fingerprint = hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()[:16]
        with self._transaction():
            self.db.execute("INSERT OR IGNORE INTO machines (fingerprint, info) VALUES (?, ?)",
                            (fingerprint, json.dumps(info, sort_keys=True)))
            return self.db.execute("SELECT id FROM machines WHERE fingerprint = ?",
                                   (fingerprint,)).fetchone()[0]

    def create_run(self, plan: Planned, command: str, machine: dict, context: dict,
                   warnings: list[str]) -> int:
        """Records the run and its whole plan in one transaction, before any point runs. Raises
        StoreError for a store with damaged text, which no run is added to."""
        self._check_text(samples=True)
        machine_id = self.machine_id(machine)
        with self._transaction():
            cursor = self.db.execute(
                "INSERT INTO runs (name, description, source, experiment, order_mode, seed, command,"
                " machine_id, context, warnings, started_at, status, pid, host, catalogue)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (plan.name, plan.description, plan.source, plan.text, plan.order, plan.seed, command,
                 machine_id, json.dumps(context), json.dumps(warnings), now(), os.getpid(),
                 machine.get("hostname"), json.dumps(plan.catalogue.to_json())))
            run_id = cursor.lastrowid
            self.db.executemany(
                "INSERT INTO points (run_id, position, key, kernel, params, env, cpus, repeats,"
                " warmup, timeout_s, rlimit_mb, measure, status, failure_kind, failure)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, position, p.key, p.kernel, json.dumps(p.params, sort_keys=True),
                  json.dumps(p.env, sort_keys=True), json.dumps(list(p.cpus)) if p.cpus else None,
                  p.repeats, p.warmup, p.timeout_s, p.rlimit_mb, p.measure,
                  "skipped" if p.skip else "pending", "unavailable" if p.skip else None, p.skip or None)
                 for position, p in enumerate(plan.points)])
        return run_id

    def claim_run(self, run_id: int) -> None:
        """Marks a run as being run by this process (a resumed run). Raises StoreError if a live
        process runs it: the check and the claim are one transaction, so of two processes
        resuming one run at once, one gets it and the other is refused; and for a store with
        damaged text, which no sample is added to."""
        self._check_text(samples=True)
        with self._transaction():
            status, pid, host = self.db.execute("SELECT status, pid, host FROM runs WHERE id = ?",
                                                (run_id,)).fetchone()
            if _live_status(status, pid, host) == "running":
                raise StoreError(f"run {run_id} is being run by process {pid} on {host}; wait for "
                                 "it or stop it")
            self.db.execute("UPDATE runs SET status = 'running', pid = ?, host = ?, finished_at = NULL"
                            " WHERE id = ?", (os.getpid(), socket.gethostname(), run_id))

    def add_sample(self, point_id: int, repeat: int, measured: sample.Sample) -> None:
        """One sample, in its own transaction: committed (and synced) when this returns."""
        names = [name for name, _ in sample.STORED]
        values = [getattr(measured, name) for name in names]
        values = [json.dumps(v, sort_keys=True) if n in sample.JSON_FIELDS else v for n, v in zip(names, values)]
        with self._transaction():
            self.db.execute(
                f"INSERT INTO samples (point_id, repeat, {', '.join(names)}, recorded_at)"
                f" VALUES (?, ?, {', '.join('?' for _ in names)}, ?)", (point_id, repeat, *values, now()))

    def start_point(self, point_id: int, machine: dict | None, context: dict | None,
                    started_at: str) -> None:
        """A point's worker process starts on a host: records the host's machine (NULL where it
        is the run's own), its state and labctl (`context`) and the time. A point that already
        has samples (retried or resumed elsewhere) keeps the machine they came from."""
        machine_id = self.machine_id(machine) if machine is not None else None
        with self._transaction():
            (run_machine,) = self.db.execute(
                "SELECT r.machine_id FROM runs r JOIN points p ON p.run_id = r.id WHERE p.id = ?",
                (point_id,)).fetchone()
            self.db.execute(
                "UPDATE points SET machine_id = CASE WHEN EXISTS (SELECT 1 FROM samples s"
                " WHERE s.point_id = points.id) THEN machine_id ELSE ? END,"
                " context = ?, started_at = ?, finished_at = NULL WHERE id = ?",
                (None if machine_id == run_machine else machine_id,
                 json.dumps(context, sort_keys=True) if context is not None else None,
                 started_at, point_id))

    def finish_point(self, point_id: int, finished_at: str | None = None) -> None:
        with self._transaction():
            self.db.execute("UPDATE points SET status = 'done', failure_kind = NULL, failure = NULL,"
                            " finished_at = COALESCE(?, finished_at) WHERE id = ?",
                            (finished_at, point_id))

    def fail_point(self, point_id: int, kind: str, message: str, finished_at: str | None = None) -> None:
        with self._transaction():
            self.db.execute("UPDATE points SET status = 'failed', failure_kind = ?, failure = ?,"
                            " finished_at = COALESCE(?, finished_at) WHERE id = ?",
                            (kind, message, finished_at, point_id))

    def end_run(self, run_id: int, status: str) -> None:
        with self._transaction():
            self.db.execute("UPDATE runs SET status = ?, finished_at = ?, pid = NULL WHERE id = ?",
                            (status, now(), run_id))

    # -- reading -----------------------------------------------------------------------------

    def resolve_run(self, ident: str | int) -> int:
        """A run id from an id or `latest`; StoreError naming the runs there are."""
        if str(ident) == "latest":
            row = self.db.execute("SELECT MAX(id) FROM runs").fetchone()
            if row[0] is None:
                raise StoreError(f"{self.path}: no runs yet")
            return row[0]
        try:
            if not str(ident).isascii():  # int() would take any script's digits
                raise ValueError(ident)
            run_id = int(ident)
        except ValueError:
            raise StoreError(f"run '{ident}': give a run id (see `labctl runs`) or 'latest'") from None
        if not 0 < run_id < 2**63:  # SQLite's integers are 64-bit
            raise StoreError(f"{self.path}: no run {run_id} (see `labctl runs`)")
        if self.db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
            raise StoreError(f"{self.path}: no run {run_id} (see `labctl runs`)")
        return run_id

    def runs(self) -> list[RunRow]:
        rows = self.db.execute(
            "SELECT r.id, r.name, r.source, r.status, r.started_at, r.finished_at, r.seed, r.command,"
            " m.info, r.context, r.warnings, r.pid, r.host,"
            " (SELECT COUNT(*) FROM points p WHERE p.run_id = r.id),"
            " (SELECT COUNT(*) FROM points p WHERE p.run_id = r.id AND p.status = 'done'),"
            " (SELECT COUNT(*) FROM points p WHERE p.run_id = r.id AND p.status = 'failed'),"
            " (SELECT COUNT(*) FROM samples s JOIN points p ON s.point_id = p.id WHERE p.run_id = r.id),"
            " r.description, r.experiment,"
            " (SELECT COUNT(*) FROM points p WHERE p.run_id = r.id AND p.status = 'skipped')"
            " FROM runs r JOIN machines m ON r.machine_id = m.id ORDER BY r.id").fetchall()
        result = []
        for row in rows:
            (id_, name, source, status, started, finished, seed, command, machine, context,
             warnings, pid, host, points, done, failed, samples, description, experiment, skipped) = row
            where = f"run {id_}"
            result.append(RunRow(id_, name, source, _live_status(status, pid, host), started, finished,
                                 seed, command, _decode(self.path, where, "machine", machine),
                                 _decode(self.path, where, "context", context),
                                 _decode(self.path, where, "warnings", warnings), points, done, failed,
                                 samples, description, experiment, skipped))
        return result

    def run(self, run_id: int) -> RunRow:
        return next(r for r in self.runs() if r.id == run_id)

    def rounds(self, group: str | None = None) -> list[Round]:
        """The finished runs of interleaved comparisons (of `group`, or all), oldest first."""
        found = []
        for row in self.runs():
            mine = round_of(row.context)
            if mine and row.status == "finished" and group in (None, mine["group"]):
                found.append(Round(row.id, mine["group"], str(mine.get("side")), mine.get("round"),
                                   bool(mine.get("same_build"))))
        return found

    def catalogue(self, run_id: int) -> Catalogue:
        """What the run's analysis needs besides its samples (labctl.vocabulary.schema.Catalogue), as the
        run stored it; for a run of a store older than v3, what its points show of it."""
        row = self.db.execute("SELECT catalogue FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row and row[0]:
            return Catalogue.from_json(json.loads(row[0]))
        return schema.inferred((p.point.kernel, p.point.params) for p in self.points(run_id))

    def points(self, run_id: int) -> list[PointRow]:
        rows = self.db.execute(
            "SELECT p.id, p.position, p.key, p.kernel, p.params, p.env, p.cpus, p.repeats, p.warmup,"
            " p.timeout_s, p.status, p.failure_kind, p.failure,"
            " (SELECT COUNT(*) FROM samples s WHERE s.point_id = p.id), p.rlimit_mb,"
            " m.info, p.context, p.started_at, p.finished_at, p.measure"
            " FROM points p LEFT JOIN machines m ON m.id = p.machine_id"
            " WHERE p.run_id = ? ORDER BY p.position", (run_id,)).fetchall()
        found = []
        for (id_, position, key, kernel, params, env, cpus, repeats, warmup, timeout_s, status, kind,
             failure, done, rlimit_mb, machine, context, started_at, finished_at, measure) in rows:
            where = f"point {id_} of run {run_id}"
            for column, value, valid in (
                    ("repeats", repeats, _whole(repeats, 1, inputs.MAX_REPEATS)),
                    ("warmup", warmup, _whole(warmup, 0, inputs.MAX_WARMUP)),
                    ("timeout_s", timeout_s, _number(timeout_s) and 0 < timeout_s <= inputs.MAX_TIMEOUT_S),
                    ("rlimit_mb", rlimit_mb, rlimit_mb is None or _whole(rlimit_mb, 1, inputs.MAX_RLIMIT_MB))):
                if not valid:
                    raise StoreError(f"{self.path}: {where}: its {column} is damaged (found "
                                     f"{printable(str(value))[:60]}); the store was changed outside labctl", 2)
            point = Point(kernel=kernel, params=_decode(self.path, where, "params", params), repeats=repeats,
                          warmup=warmup, timeout_s=timeout_s, env=_decode(self.path, where, "env", env),
                          cpus=tuple(_decode(self.path, where, "cpus", cpus)) if cpus else None,
                          rlimit_mb=rlimit_mb, measure=measure or "time",
                          skip=(failure or "") if status == "skipped" else "")
            found.append(PointRow(
                id_, position, key, point, status, kind, failure, done,
                _decode(self.path, where, "machine", machine) if machine else None,
                _decode(self.path, where, "context", context) if context else None, started_at,
                finished_at))
        return found

    def samples(self, run_id: int | None = None) -> list[dict]:
        """Every sample (of one run, or all), with its run and point: the fields of
        sample.STORED (`counts`: {name: integer}, a count not taken absent), and run, run_name,
        point, position, point_key, kernel, params, measure, repeat, recorded_at and machine (the
        info of its point's machine, else of its run's)."""
        names = [name for name, _ in sample.STORED]
        query = (
            "SELECT r.id, r.name, p.id, p.position, p.key, p.kernel, p.params, COALESCE(p.measure, 'time'),"
            " s.repeat, s.recorded_at, m.info, "
            + ", ".join(f"s.{name}" for name in names)
            + " FROM samples s JOIN points p ON s.point_id = p.id JOIN runs r ON p.run_id = r.id"
            " JOIN machines m ON m.id = COALESCE(p.machine_id, r.machine_id)")
        args: tuple = ()
        if run_id is not None:
            query += " WHERE r.id = ?"
            args = (run_id,)
        query += " ORDER BY r.id, p.position, s.repeat"
        columns = ("run", "run_name", "point", "position", "point_key", "kernel", "params", "measure",
                   "repeat", "recorded_at", "machine", *names)
        result = []
        for row in self.db.execute(query, args):
            found = dict(zip(columns, row))
            where = f"a sample of point {found['point']} (run {found['run']})"
            for name in ("params", "machine", *sample.JSON_FIELDS):
                found[name] = _decode(self.path, where, name, found[name])
            if found["schedule_dependent"] is not None:
                found["schedule_dependent"] = bool(found["schedule_dependent"])
            result.append(found)
        return result

    def previous_elapsed(self, key: str) -> list[int]:
        """Elapsed times recorded for a point key in any run: the basis of time estimates."""
        return [row[0] for row in self.db.execute(
            "SELECT s.elapsed_ns FROM samples s JOIN points p ON s.point_id = p.id WHERE p.key = ?",
            (key,))]

    def previous_samples(self, kernel: str) -> list[tuple[dict, int, int, str]]:
        """(parameters, elapsed ns, messages, measure) of every sample of `kernel` in any run:
        what a time estimate scales to another size (or measure)."""
        return [(json.loads(params), elapsed, messages, measure or "time")
                for params, elapsed, messages, measure in self.db.execute(
                    "SELECT p.params, s.elapsed_ns, s.messages_processed, p.measure FROM samples s"
                    " JOIN points p ON s.point_id = p.id WHERE p.kernel = ?", (kernel,))]


def _layout(db: sqlite3.Connection) -> dict[str, list[str]]:
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {table: [column[1] for column in db.execute(f"PRAGMA table_info({table})")]
            for table in sorted(tables)}


def _expected_layout() -> dict[str, list[str]]:
    reference = sqlite3.connect(":memory:")
    reference.executescript(SCHEMA)
    layout = _layout(reference)
    reference.close()
    return layout


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error): takes the write lock up front, so two
    writers wait for each other instead of failing half-way."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            try:
                self.db.execute("COMMIT")
            except sqlite3.Error:
                self._rollback()  # a failed COMMIT (disk full) can leave the transaction open
                raise
        else:
            self._rollback()

    def _rollback(self) -> None:
        # SQLite may have rolled back already (a full disk does), and a failing ROLLBACK must not
        # hide the error that caused it.
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass


def _live_status(status: str, pid: int | None, host: str | None) -> str:
    """A run marked running whose process is gone (kill -9, power cut) was interrupted."""
    if status != "running" or pid is None:
        return status
    if host != socket.gethostname():
        return status
    return status if psutil.pid_exists(pid) else "interrupted"
