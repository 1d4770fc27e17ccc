"""What a sample is: the fields every sample of every kernel has, on every runtime, as the worker
reports them, the store keeps them and labctl.results gives them as columns. Metric names a
kernel or an external program reports may not be any of these names."""

from __future__ import annotations

# The columns labctl.results gives every sample, before the parameters and metrics of its kernel.
COLUMNS = ["run", "run_name", "point", "position", "point_key", "kernel", "repeat",
           "elapsed_ns", "messages_processed", "msgs_per_s", "answer", "expected", "verified",
           "cpu_ns", "thread_cpu_ns", "peak_rss_kb", "voluntary_switches",
           "involuntary_switches", "recorded_at"]
# The columns labctl.results.points gives every point besides its parameters.
POINT_COLUMNS = ["point", "position", "kernel", "env", "cpus", "repeats", "samples", "status",
                 "failure_kind", "failure"]
