"""The run side: a plan's points run in worker processes, here or on a Dask cluster, with the
machine's metadata, and each sample written to the store (runner.py, worker.py, cluster.py)."""
