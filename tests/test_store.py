"""The results store: its schema, refusing files it does not own, concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess

import pytest

from labctl import experiment
from labctl.sample import Sample
from labctl.store import SCHEMA_VERSION, Store, StoreError

PLAN_TEXT = 'name = "t"\norder = "grid"\n[[grid]]\nkernel = "skynet"\naxes = { branching = [2, 3] }\n'


def make_run(store: Store) -> int:
    plan = experiment.parse(PLAN_TEXT, "t.toml")
    return store.create_run(plan, "labctl sweep t.toml", {"hostname": "h", "cpu_model": "c"},
                            {"load_average": [0, 0, 0]}, [])


SAMPLE = Sample(kernel="ping_pong", params={}, index=0, warmup=False, elapsed_ns=1000,
                messages_processed=10, answer="a", expected="a", verified=True, metrics={"m": 1.0},
                thread_cpu_ns=[5, 6], peak_rss_kb=100, voluntary_switches=1, involuntary_switches=2,
                pid=1)


def test_a_new_store_has_the_schema_and_its_version(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run = make_run(store)
        points = store.points(run)
        assert [p.params["branching"] for p in points] == [2, 3]
        assert all(p.status == "pending" for p in points)
    db = sqlite3.connect(tmp_path / "r.db")
    assert dict(db.execute("SELECT key, value FROM meta")) == {
        "application": "labctl", "schema_version": str(SCHEMA_VERSION)}
    assert {"runs", "points", "samples", "machines", "meta"} <= {
        row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_samples_are_kept_per_point_and_repeat(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run = make_run(store)
        point = store.points(run)[0]
        store.add_sample(point.id, 0, SAMPLE)
        store.add_sample(point.id, 1, SAMPLE)
        with pytest.raises(sqlite3.IntegrityError):
            store.add_sample(point.id, 1, SAMPLE)  # a repeat is stored once
        assert store.points(run)[0].samples_done == 2
        assert [s["repeat"] for s in store.samples(run)] == [0, 1]
        assert store.samples(run)[0]["metrics"] == {"m": 1.0}
        assert store.previous_elapsed(point.key) == [1000, 1000]


def test_runs_are_found_by_id_or_latest_and_bad_ids_are_refused(tmp_path):
    with Store(tmp_path / "r.db") as store:
        with pytest.raises(StoreError, match="no runs yet"):
            store.resolve_run("latest")
        first, second = make_run(store), make_run(store)
        assert store.resolve_run("latest") == second
        assert store.resolve_run(str(first)) == first
        with pytest.raises(StoreError, match="no run 99"):
            store.resolve_run("99")
        with pytest.raises(StoreError, match="give a run id"):
            store.resolve_run("yesterday")


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"my precious notes\n" * 10)
    with pytest.raises(StoreError, match="not a labctl store"):
        Store(path)
    assert path.read_bytes() == b"my precious notes\n" * 10


def test_a_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (name TEXT)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a labctl store"):
        Store(path)
    assert path.read_bytes() == before


def test_a_store_from_a_newer_labctl_is_refused(tmp_path):
    path = tmp_path / "r.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer than this labctl"):
        Store(path)


@pytest.mark.parametrize("version", ["0", "two", ""])
def test_a_store_with_a_bad_schema_version_is_refused_and_left_untouched(tmp_path, version):
    path = tmp_path / "r.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="no valid schema version"):
        Store(path)
    assert path.read_bytes() == before


def test_a_store_whose_tables_were_changed_is_refused(tmp_path):
    path = tmp_path / "r.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE samples DROP COLUMN pid")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=f"tables do not match schema version {SCHEMA_VERSION}"):
        Store(path)


# What undoes each migration (store.MIGRATIONS[version]): a store of an older version, made by
# undoing every migration from that version on.
UNDO = {
    1: ["ALTER TABLE points DROP COLUMN rlimit_mb"],
    2: ["ALTER TABLE runs DROP COLUMN catalogue"],
    3: [f"ALTER TABLE points DROP COLUMN {column}"  # where and when it ran
        for column in ("machine_id", "context", "started_at", "finished_at")],
}


def older_store(path, version: int) -> int:
    """A store of schema `version` holding one run with a sample; the run's id."""
    with Store(path) as store:
        run = make_run(store)
        store.add_sample(store.points(run)[0].id, 0, SAMPLE)
    db = sqlite3.connect(path)
    for undone in range(SCHEMA_VERSION - 1, version - 1, -1):
        for statement in UNDO[undone]:
            db.execute(statement)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
    db.commit()
    db.close()
    return run


def test_every_migration_has_its_undo_for_these_tests():
    assert set(UNDO) == set(range(1, SCHEMA_VERSION))


def test_a_store_of_schema_version_1_is_migrated_and_keeps_its_runs(tmp_path):
    # Version 1: points had no rlimit_mb column.
    path = tmp_path / "r.db"
    run = older_store(path, 1)
    with Store(path) as store:
        assert [p.rlimit_mb for p in store.points(run)] == [None, None]
        assert len(store.samples()) == 1
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)


def test_a_store_of_schema_version_2_is_migrated_and_its_runs_analysed_without_their_catalogue(tmp_path):
    # Version 2: runs did not keep their catalogue; their points still tell their parameters.
    path = tmp_path / "r.db"
    run = older_store(path, 2)
    with Store(path) as store:
        catalogue = store.catalogue(run)
    [kernel] = catalogue.kernels.values()
    assert kernel.name == "skynet" and not catalogue.references
    branching = kernel.param("branching")
    assert branching.type == "integer" and not branching.configuration
    assert kernel.param("dispatcher").configuration


def test_a_store_of_schema_version_3_is_migrated_and_its_points_ran_on_the_runs_machine(tmp_path):
    # Version 3: points did not record the host they ran on, nor when.
    path = tmp_path / "r.db"
    run = older_store(path, 3)
    with Store(path) as store:
        point = store.points(run)[0]
        assert (point.machine, point.context, point.started_at, point.finished_at) == (None,) * 4
        [sample] = store.samples(run)
        assert sample["machine"] == {"hostname": "h", "cpu_model": "c"}  # the run's
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("4",)


def test_a_point_records_the_host_it_started_on_and_keeps_the_machine_of_its_samples(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run = make_run(store)
        first, second = (p.id for p in store.points(run))
        store.start_point(first, {"hostname": "h", "cpu_model": "c"}, None, "2025-01-01T00:00:00.000+00:00")
        away = {"hostname": "node7", "cpu_model": "other"}
        store.start_point(second, away, {"load_average": [1, 1, 1], "worker": "tcp://node7:1"},
                          "2025-01-01T00:00:01.000+00:00")
        store.add_sample(second, 0, SAMPLE)
        store.finish_point(second, "2025-01-01T00:00:02.000+00:00")
        # Retried on the run's machine: the point keeps the machine its sample came from.
        store.start_point(second, {"hostname": "h", "cpu_model": "c"}, None, "2025-01-01T00:00:03.000+00:00")
        local, remote = store.points(run)
        assert local.machine is None and local.started_at.startswith("2025-01-01T00:00:00")
        assert remote.machine == away and remote.context is None
        assert (remote.started_at, remote.finished_at) == ("2025-01-01T00:00:03.000+00:00", None)
        assert store.samples(run)[0]["machine"] == away


def test_a_folder_is_refused_as_a_store(tmp_path):
    with pytest.raises(StoreError, match="a folder, not a store file"):
        Store(tmp_path)


def test_a_missing_store_is_not_created_when_reading(tmp_path):
    with pytest.raises(StoreError, match="no such store"):
        Store(tmp_path / "none.db", create=False)
    assert not (tmp_path / "none.db").exists()


def test_a_run_is_claimed_only_when_no_live_process_runs_it(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run = make_run(store)  # running, by this process
        with pytest.raises(StoreError, match=f"run {run} is being run by process {os.getpid()}"):
            store.claim_run(run)
        store.end_run(run, "interrupted")
        store.claim_run(run)
        assert store.run(run).status == "running"
        dead = subprocess.Popen(["true"])
        dead.wait()
        store.db.execute("UPDATE runs SET pid = ? WHERE id = ?", (dead.pid, run))
        store.claim_run(run)  # its process is gone: interrupted, whatever the row says


def _claim(path: str, run: int, claimed, done) -> None:
    claimed.wait()
    try:
        Store(path).claim_run(run)
        code = 0
    except StoreError:
        code = 3
    done.wait()  # alive until every process has tried: a claim held by a dead process is void
    os._exit(code)


def test_of_processes_claiming_one_run_at_once_one_gets_it(tmp_path):
    path = str(tmp_path / "r.db")
    with Store(path) as store:
        run = make_run(store)
        store.end_run(run, "interrupted")
    context = multiprocessing.get_context("fork")
    claimed, done = context.Barrier(4), context.Barrier(4)
    claimers = [context.Process(target=_claim, args=(path, run, claimed, done)) for _ in range(4)]
    for claimer in claimers:
        claimer.start()
    for claimer in claimers:
        claimer.join(60)
    assert sorted(c.exitcode for c in claimers) == [0, 3, 3, 3]


def _writer(path: str, count: int) -> None:
    with Store(path) as store:
        run = make_run(store)
        point = store.points(run)[0]
        for repeat in range(count):
            store.add_sample(point.id, repeat, SAMPLE)


def test_two_processes_write_to_one_store_at_once(tmp_path):
    path = str(tmp_path / "r.db")
    Store(path).close()
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_writer, args=(path, 200)) for _ in range(2)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(120)
        assert w.exitcode == 0
    with Store(path) as store:
        assert len(store.runs()) == 2
        assert len(store.samples()) == 400


def _open_at(path: str, barrier) -> None:
    barrier.wait()
    Store(path).close()


def test_processes_that_create_one_new_store_together_all_get_it(tmp_path):
    # Two sweeps started at once on a fresh --db both find no file; one creates the tables, the
    # other must then use them, not fail on "table already exists".
    context = multiprocessing.get_context("fork")
    for attempt in range(10):
        path = str(tmp_path / f"r{attempt}.db")
        barrier = context.Barrier(4)
        openers = [context.Process(target=_open_at, args=(path, barrier)) for _ in range(4)]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join(60)
            assert opener.exitcode == 0
        with Store(path) as store:
            assert store.runs() == []
