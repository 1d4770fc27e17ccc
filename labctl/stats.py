"""Statistics of repeated samples: the figures every report and summary quotes."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    median: float
    minimum: float
    maximum: float
    count: int


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("no values to summarize")
    return Summary(statistics.median(values), min(values), max(values), len(values))


def throughput(messages: int, elapsed_ns: int) -> float:
    """Messages per second, derived from a sample (never stored twice)."""
    return messages * 1e9 / elapsed_ns if elapsed_ns > 0 else 0.0
