"""The results store: its schema, refusing files it does not own, concurrent writers."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import runpy
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from labctl import results
from labctl import store as store_module
from labctl.plan import experiment
from labctl.store import SCHEMA_VERSION, Store, StoreError
from labctl.vocabulary import metrics, sample
from labctl.vocabulary.point import Point
from labctl.vocabulary.sample import Sample

DATA = Path(__file__).parent / "data"

PLAN_TEXT = 'name = "t"\norder = "grid"\n[[grid]]\nkernel = "skynet"\naxes = { branching = [2, 3] }\n'


def make_run(store: Store) -> int:
    plan = experiment.parse(PLAN_TEXT, "t.toml")
    return store.create_run(plan, "labctl sweep t.toml", {"hostname": "h", "cpu_model": "c"},
                            {"load_average": [0, 0, 0]}, [])


SAMPLE = Sample(kernel="ping_pong", params={}, index=0, warmup=False, elapsed_ns=1000,
                messages_processed=10, answer="a", expected="a", metrics={"m": 1.0},
                thread_cpu_ns=[5, 6], peak_rss_kb=100, voluntary_switches=1, involuntary_switches=2,
                pid=1)


def test_a_new_store_has_the_schema_and_its_version(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run = make_run(store)
        points = store.points(run)
        assert [p.point.params["branching"] for p in points] == [2, 3]
        assert all(p.status == "pending" for p in points)
    db = sqlite3.connect(tmp_path / "r.db")
    assert dict(db.execute("SELECT key, value FROM meta")) == {
        "application": "labctl", "schema_version": str(SCHEMA_VERSION)}
    assert {"runs", "points", "samples", "machines", "meta"} <= {
        row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_stored_point_is_the_planned_point_and_its_request_the_same_again(tmp_path):
    # One record from the plan to the store to the worker: what comes back is equal, field by field.
    text = PLAN_TEXT.replace('order = "grid"', 'order = "grid"\nwarmup = 2\nrlimit_mb = 512\nmeasure = "counters"')
    text = text.replace("[[grid]]", '[[grid]]\nenv = { A = "1" }\ncpus = "0"\nrepeats = 4')
    plan = experiment.parse(text, "t.toml")
    with Store(tmp_path / "r.db") as store:
        run = store.create_run(plan, "labctl sweep t.toml", {"hostname": "h"}, {}, [])
        stored = store.points(run)
    assert [row.point for row in stored] == plan.points
    assert [row.key for row in stored] == [point.key for point in plan.points]
    first = plan.points[0]
    assert (first.repeats, first.warmup, first.rlimit_mb, first.measure, first.env) == (4, 2, 512, "counters", {"A": "1"})
    assert Point.from_json(json.loads(json.dumps(first.to_json()))) == first


def test_a_sample_is_verified_where_its_answer_is_the_expected_one_in_the_worker_and_the_frame(tmp_path):
    wrong = Sample.from_json({**SAMPLE.to_json(), "answer": "b"})
    assert SAMPLE.verified and not wrong.verified
    assert SAMPLE.to_json()["verified"] and not wrong.to_json()["verified"]  # `labctl run --json`
    with Store(tmp_path / "r.db") as store:  # the store keeps no verdict: a changed answer reads as wrong
        run = make_run(store)
        store.add_sample(store.points(run)[0].id, 0, SAMPLE)
        store.add_sample(store.points(run)[1].id, 0, wrong)
    assert list(results.load(tmp_path / "r.db", run)["verified"]) == [True, False]


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
    4: ["ALTER TABLE points DROP COLUMN measure",  # the measures: a point's, and a sample's counts
        *(f"ALTER TABLE samples DROP COLUMN {name}" for name in (
            "instructions", "l1_misses", "cache_misses", "cycles", "branch_misses", "task_clock_ns",
            "context_switches", "cpu_migrations", "page_faults", "unsupported", "schedule_dependent"))],
    5: [store_module._V5_SAMPLES,  # the counts back into a column each
        "INSERT INTO samples_v5 SELECT id, point_id, repeat, elapsed_ns, messages_processed, answer,"
        " expected, metrics, thread_cpu_ns, peak_rss_kb, voluntary_switches, involuntary_switches,"
        " pid, " + ", ".join(f"json_extract(counts, '$.{name}')" for name in (
            "instructions", "l1_misses", "cache_misses", "cycles", "branch_misses", "task_clock_ns",
            "context_switches", "cpu_migrations", "page_faults"))
        + ", unsupported, schedule_dependent, recorded_at FROM samples",
        "DROP TABLE samples", "ALTER TABLE samples_v5 RENAME TO samples",
        "CREATE INDEX samples_point ON samples (point_id)"],
    6: [store_module._V6_SAMPLES,  # no histogram
        f"INSERT INTO samples_v6 SELECT {store_module._V6_KEPT} FROM samples",
        "DROP TABLE samples", "ALTER TABLE samples_v6 RENAME TO samples",
        "CREATE INDEX samples_point ON samples (point_id)"],
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
        assert [p.point.rlimit_mb for p in store.points(run)] == [None, None]
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
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)


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


def test_a_store_of_schema_version_4_is_migrated_its_samples_kept_without_counts(tmp_path):
    # Version 4: no measures. Its samples keep every value, measured in time and counting nothing;
    # the samples table is rebuilt so that recorded_at stays its last column.
    with Store(tmp_path / "new.db") as store:  # the same run, made by this version
        made = make_run(store)
        store.add_sample(store.points(made)[0].id, 0, SAMPLE)
        before = store.samples(made)
    path = tmp_path / "r.db"
    run = older_store(path, 4)
    with Store(path) as store:
        point = store.points(run)[0]
        assert [p.point.measure for p in store.points(run)] == ["time", "time"]
        [kept] = store.samples(run)
        assert kept == {**before[0], "recorded_at": kept["recorded_at"]}
        assert kept["counts"] == {} and kept["unsupported"] == {} and kept["schedule_dependent"] is None
        counted = Sample.from_json({**SAMPLE.to_json(), "counts": {"instructions": 12345},
                                    "unsupported": {"cycles": "none here"}, "schedule_dependent": False})
        store.add_sample(point.id, 1, counted)
        assert [s["counts"] for s in store.samples(run)] == [{}, {"instructions": 12345}]
    db = sqlite3.connect(path)
    columns = [row[1] for row in db.execute("PRAGMA table_info(samples)")]
    assert columns[-1] == "recorded_at" and "counts" in columns
    assert db.execute("SELECT name FROM sqlite_master WHERE name = 'samples_point'").fetchone()


def test_a_store_of_schema_version_6_is_migrated_its_samples_kept_with_no_histogram(tmp_path):
    # Version 6: a sample kept no histogram; the table is made again with it before recorded_at.
    path = tmp_path / "r.db"
    run = older_store(path, 6)
    with Store(path) as store:
        [kept] = store.samples(run)
        assert kept["histogram"] == [] and kept["elapsed_ns"] == SAMPLE.elapsed_ns
        latency = Sample.from_json({**SAMPLE.to_json(), "histogram": [[600, 3], [2**40, 1]]})
        store.add_sample(store.points(run)[0].id, 1, latency)
        assert [s["histogram"] for s in store.samples(run)] == [[], [[600, 3], [2**40, 1]]]
    db = sqlite3.connect(path)
    columns = [row[1] for row in db.execute("PRAGMA table_info(samples)")]
    assert columns[-2:] == ["histogram", "recorded_at"]
    assert db.execute("SELECT name FROM sqlite_master WHERE name = 'samples_point'").fetchone()


@pytest.mark.parametrize("damaged", ['{"600": 3}', '[[600]]', '[[600, 0]]', '[[-1, 3]]', '[[600, 1.5]]', '[[600, true]]'])
def test_a_damaged_histogram_is_named_when_read(tmp_path, damaged):
    path = tmp_path / "r.db"
    with Store(path) as store:
        run = make_run(store)
        store.add_sample(store.points(run)[0].id, 0, SAMPLE)
    db = sqlite3.connect(path)
    db.execute("UPDATE samples SET histogram = ?", (damaged,))
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="its histogram is damaged"), Store(path) as store:
        store.samples(run)


# The store tests/data/store_v5.db holds, as tests/data/make_store_v5.py wrote it with labctl's
# code of schema version 5 (a column per count): (measure, the counts of each sample).
STORE_V5 = runpy.run_path(str(DATA / "make_store_v5.py"))["STORE_V5"]


def test_a_store_written_by_schema_version_5_keeps_every_count_exactly_and_none_stays_absent(tmp_path):
    path = tmp_path / "r.db"
    shutil.copy(DATA / "store_v5.db", path)  # the fixture itself is never migrated
    with Store(path) as store:
        [run] = store.runs()
        kept = store.samples(run.id)
        assert [p.point.measure for p in store.points(run.id)] == [measure for measure, _ in STORE_V5]
    expected = [values for _, samples in STORE_V5 for values in samples]
    assert [s["counts"] for s in kept] == [
        {name: value for name, value in values.items() if name in metrics.COUNTS and value is not None}
        for values in expected]
    assert kept[2]["counts"]["instructions"] == 2**62 + 7  # exact: an integer, never a double
    assert kept[3]["counts"]["context_switches"] == 0  # a count of 0 is a count, not absent
    assert kept[3]["unsupported"] == {"branch_misses": "not counted by this CPU"}
    assert all(s["metrics"] == {"round_trip_p50_ns": 250.0} for s in kept)
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    columns = [row[1] for row in db.execute("PRAGMA table_info(samples)")]
    assert not set(columns) & set(metrics.COUNTS) and columns[-1] == "recorded_at"
    assert db.execute("SELECT name FROM sqlite_master WHERE name = 'samples_point'").fetchone()
    db.close()
    # The analysis API gives the columns it gave before: a nullable integer column per count.
    frame = results.load(path, run.id)
    assert list(frame.columns[:len(sample.COLUMNS)]) == sample.COLUMNS
    for name in metrics.COUNTS:
        assert str(frame[name].dtype) == "Int64"
        assert [None if v is pd.NA else int(v) for v in frame[name]] == [values.get(name) for values in expected]


def test_a_count_the_schema_never_saw_is_stored_and_read_back_without_a_migration(tmp_path):
    # Counts are kept by name: a new one (a line of labctl.vocabulary.metrics' registry) changes no table.
    assert "l2_misses" not in metrics.COUNTS
    with Store(tmp_path / "r.db") as store:
        run = make_run(store)
        point = store.points(run)[0]
        layout = store_module._layout(store.db)
        store.add_sample(point.id, 0, Sample.from_json({**SAMPLE.to_json(), "counts": {"l2_misses": 7, "instructions": 9}}))
        store.add_sample(point.id, 1, SAMPLE)
        assert [s["counts"] for s in store.samples(run)] == [{"instructions": 9, "l2_misses": 7}, {}]
        assert store_module._layout(store.db) == layout
    frame = results.load(tmp_path / "r.db", run)
    assert str(frame["l2_misses"].dtype) == "Int64" and list(frame["l2_misses"].astype(object).fillna(-1)) == [7, -1]
    assert list(frame.columns[:len(sample.COLUMNS)]) == sample.COLUMNS  # its column after the rest


def test_a_point_measured_otherwise_is_another_point_and_time_keeps_the_old_keys():
    plan = experiment.parse(PLAN_TEXT, "t.toml")
    counted = experiment.parse(PLAN_TEXT.replace('order = "grid"', 'order = "grid"\nmeasure = "counters"'), "t.toml")
    assert [p.measure for p in counted.points] == ["counters", "counters"]
    assert {p.key for p in plan.points}.isdisjoint(p.key for p in counted.points)
    # The key of a point measured in time is what it was before there were measures.
    point = plan.points[0]
    old = hashlib.sha256(json.dumps([point.kernel, point.params, point.env, point.cpus],
                                    sort_keys=True).encode()).hexdigest()[:16]
    assert point.key == old


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
