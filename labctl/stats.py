"""Statistics of repeated samples: the figures every summary, table and report quotes.

Medians with a 95% bootstrap interval (scipy), the coefficient of variation, and a noise flag when
the spread is too wide to trust a difference smaller than it. Throughput is derived from elapsed
time and messages, never stored.
"""

from __future__ import annotations

import statistics
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# A point whose samples vary by more than this (standard deviation over mean) is flagged noisy.
NOISE_CV = 0.10
# Below this many samples there is no interval: a median of two values is not an estimate.
MIN_SAMPLES_FOR_INTERVAL = 3


@dataclass(frozen=True)
class Summary:
    count: int
    median: float
    minimum: float
    maximum: float
    mean: float
    cv: float  # standard deviation / mean; 0 for a single sample
    ci_low: float | None  # 95% bootstrap interval of the median; None below 3 samples
    ci_high: float | None

    @property
    def noisy(self) -> bool:
        return self.cv > NOISE_CV


def median_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """A percentile-bootstrap interval of the median (seeded, so a report is reproducible)."""
    if len(values) < MIN_SAMPLES_FOR_INTERVAL:
        return None
    from scipy import stats as scipy_stats  # imported when needed: it is slow to import

    data = np.asarray(values, dtype=float)
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on small, tied samples; the interval stands
        result = scipy_stats.bootstrap((data,), np.median, confidence_level=confidence,
                                       n_resamples=2000, method="percentile",
                                       random_state=np.random.default_rng(0))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("no values to summarize")
    mean = statistics.fmean(values)
    cv = statistics.stdev(values) / mean if len(values) > 1 and mean else 0.0
    interval = median_interval(values)
    return Summary(
        count=len(values),
        median=statistics.median(values),
        minimum=min(values),
        maximum=max(values),
        mean=mean,
        cv=cv,
        ci_low=interval[0] if interval else None,
        ci_high=interval[1] if interval else None,
    )


def throughput(messages: int, elapsed_ns: int) -> float:
    """Messages per second of one sample."""
    return messages * 1e9 / elapsed_ns if elapsed_ns > 0 else 0.0


def duration(ns: float) -> str:
    """A time in nanoseconds, in the unit that suits it: 1.234 s, 56.7 ms, 8.9 µs, 120 ns."""
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"
