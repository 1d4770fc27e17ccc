"""Writes tests/data/store_v5.db: a store of schema version 5 (a column per count), made by
labctl's own code of that version, for test_store's migration test. Run it against that code, not
this checkout's:

    mkdir -p /tmp/v5/labctl && for f in __init__ sample schema store studies text; do
        git show 70d334e:labctl/$f.py > /tmp/v5/labctl/$f.py; done
    PYTHONPATH=/tmp/v5 python tests/data/make_store_v5.py tests/data/store_v5.db

(An editable install of labctl imports its own checkout before PYTHONPATH: run it with a Python
that has psutil but not labctl.) It needs no extension: the plan is given as plain data. Its
values are in STORE_V5 below, which the test reads too."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from types import SimpleNamespace

# (measure, [{field: value} of each sample]): counts where the measure took them, None where it
# did not (or the machine could not), a 0 that is a count, and one too large for a double.
STORE_V5 = [
    ("instructions", [
        {"instructions": 104_040_705, "l1_misses": 1_234, "cache_misses": 56},
        {"instructions": 104_041_000, "l1_misses": 1_240, "cache_misses": None},
        {"instructions": 2**62 + 7, "l1_misses": None, "cache_misses": 0},
    ]),
    ("counters", [
        {"instructions": 98_000_001, "cycles": 51_000_000, "cache_misses": 4_100, "branch_misses": None,
         "task_clock_ns": 21_000_345, "context_switches": 0, "cpu_migrations": 1, "page_faults": 17,
         "unsupported": {"branch_misses": "not counted by this CPU"}},
    ]),
    ("time", [{}, {}]),
]


def main(path: Path) -> None:
    from labctl import store
    from labctl.vocabulary import sample
    from labctl.vocabulary.schema import Catalogue

    assert store.SCHEMA_VERSION == 5, "run it against labctl's code of schema version 5"
    points = [SimpleNamespace(key=f"k{i}", kernel="ping_pong", params={"messages": 1000 * (i + 1)},
                              env={}, cpus=None, repeats=len(samples), warmup=0, timeout_s=60.0,
                              rlimit_mb=None, measure=measure, skip="")
              for i, (measure, samples) in enumerate(STORE_V5)]
    plan = SimpleNamespace(name="v5", description="", source="v5.toml", text="", order="grid",
                           seed=None, catalogue=Catalogue(), points=points)
    path.unlink(missing_ok=True)
    with store.Store(path) as db:
        run = db.create_run(plan, "labctl sweep v5.toml", {"hostname": "h", "cpu_model": "c"}, {}, [])
        for point, (_, samples) in zip(db.points(run), STORE_V5):
            for repeat, values in enumerate(samples):
                db.add_sample(point.id, repeat, sample.Sample(
                    kernel="ping_pong", params=point.params, index=repeat, warmup=False,
                    elapsed_ns=1_000 + repeat, messages_processed=point.params["messages"],
                    answer="a", expected="a", verified=True, metrics={"round_trip_p50_ns": 250.0},
                    thread_cpu_ns=[900], pid=1, peak_rss_kb=2048, voluntary_switches=1,
                    involuntary_switches=0, measure=point.measure, **values))
            db.finish_point(point.id)
        db.end_run(run, "finished")
    small = sqlite3.connect(path)  # one small file: no WAL, small pages
    small.execute("PRAGMA journal_mode = DELETE")
    small.execute("PRAGMA page_size = 1024")
    small.execute("VACUUM")
    small.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
