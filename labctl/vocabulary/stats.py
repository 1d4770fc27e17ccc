"""Statistics of repeated samples: the figures every summary, table and report quotes.

Medians with a 95% bootstrap interval, the coefficient of variation, and a noise flag when
the spread is too wide to trust a difference smaller than it. For two samples: the ratio of their
medians with its bootstrap interval, and a rank test of whether they differ. Throughput is derived
from elapsed time and messages, never stored.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# A point whose samples vary by more than this (standard deviation over mean) is flagged noisy.
NOISE_CV = 0.10
# Below this many samples there is no interval: a median of two values is not an estimate.
MIN_SAMPLES_FOR_INTERVAL = 3
# Resamples of every bootstrap; the generator is seeded, so a report is reproducible.
BOOTSTRAP_RESAMPLES = 2000
# The rank test's exact distribution up to this many samples a side (without ties); its cost
# grows fast past it (seconds at 300), where the normal approximation is as good.
EXACT_RANK_TEST_UP_TO = 50


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
    data = np.asarray(values, dtype=float)
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    return _bootstrap((data,), np.median, confidence)


def ratio_interval(a: Sequence[float], b: Sequence[float],
                   confidence: float = 0.95) -> tuple[float, float] | None:
    """A percentile-bootstrap interval of median(b) / median(a), each sample resampled on its
    own (they are independent runs); seeded like median_interval. None below 3 values a side,
    or when the median of `a` is 0."""
    if min(len(a), len(b)) < MIN_SAMPLES_FOR_INTERVAL:
        return None
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if np.median(first) == 0:
        return None
    if np.all(first == first[0]) and np.all(second == second[0]):
        return float(second[0] / first[0]), float(second[0] / first[0])

    def ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.median(y, axis=axis) / np.median(x, axis=axis)

    return _bootstrap((first, second), ratio, confidence)


def _bootstrap(samples: tuple[np.ndarray, ...], statistic: Callable,
               confidence: float) -> tuple[float, float]:
    """scipy.stats.bootstrap(samples, statistic, method="percentile") with a generator seeded 0,
    to the bit (tests/test_stats.py holds it to scipy's): the same resamples, each sample's in
    turn, and the same quantiles of their statistics. Written here because importing scipy.stats
    takes 1.5-3 s, which every `labctl show` and `run` paid for one interval."""
    rng = np.random.default_rng(0)
    resamples = [sample[rng.integers(0, len(sample), (BOOTSTRAP_RESAMPLES, len(sample)))]
                 for sample in samples]
    with np.errstate(divide="ignore", invalid="ignore"):
        estimates = np.sort(statistic(*resamples, axis=-1))
    alpha = (1 - confidence) / 2
    return _quantile(estimates, alpha), _quantile(estimates, 1 - alpha)


def _quantile(ordered: np.ndarray, p: float) -> float:
    """The p-quantile of sorted values, interpolated linearly (Hyndman and Fan's type 7, numpy's
    and scipy's default), in scipy.stats.quantile's arithmetic."""
    position = p * len(ordered) + (1 - p)  # 1-based
    below = math.floor(position) - 1
    fraction = position % 1 if below >= 0 else 0.0
    last = len(ordered) - 1
    return float((1 - fraction) * ordered[min(max(below, 0), last)]
                 + fraction * ordered[min(max(below + 1, 0), last)])


def rank_test(a: Sequence[float], b: Sequence[float]) -> float:
    """The two-sided p-value of the Mann-Whitney U test: how likely samples this far apart in
    rank are if both come from one distribution. Ranks need no normal distribution (timings are
    skewed, with outliers). Exact for small samples without ties, the normal approximation
    otherwise."""
    from scipy import stats as scipy_stats

    exact = (max(len(a), len(b)) <= EXACT_RANK_TEST_UP_TO
             and len(set(a) | set(b)) == len(a) + len(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # all values equal: p is 1, with a warning
        result = scipy_stats.mannwhitneyu(a, b, alternative="two-sided",
                                          method="exact" if exact else "asymptotic")
    return 1.0 if math.isnan(result.pvalue) else float(result.pvalue)


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest p-value rank_test can give for these sample sizes (every value of one sample
    below every value of the other): 2 / C(n_a + n_b, n_a). At 3 against 3 it is 0.1, so no
    difference can be significant at 0.05, however large."""
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


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


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of p-values tested together: the i-th smallest is multiplied
    by (m - i) and the results made non-decreasing, so that calling every adjusted p below alpha
    "different" keeps the chance of even one false call among the m at alpha or less, whatever
    their dependence. In the order given."""
    m = len(p_values)
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


TRIM = 0.2  # the share trimmed from each end by `trimmed`: Wilcox's usual choice for Yuen's test


def trimmed(values: Sequence[float], trim: float = TRIM) -> tuple[float, float, int]:
    """Yuen's trimmed mean of `values`, its standard error and degrees of freedom: (center,
    scale, df) for log_ratio_test. g = floor(trim * n) values are dropped from each end; the
    error comes from the winsorized variance (the g values at each end set to the nearest kept
    one): sqrt((n - 1) s_w^2 / (h (h - 1))) with h = n - 2g kept, df = h - 1 (Wilcox,
    "Introduction to Robust Estimation and Hypothesis Testing", 4.2 and 4.5). With g = 0 it is
    the mean and Student's standard error. A round that a burst of load hit on one side only
    (a log ratio of 0.5 among ratios of 1.0) moves the mean and widens Student's interval by as
    much as the burst; here it is among the trimmed."""
    data = np.sort(np.asarray(values, dtype=float))
    n = len(data)
    g = int(math.floor(trim * n))
    h = n - 2 * g
    if h < 2:
        raise ValueError(f"a trimmed mean of {n} values needs at least 2 kept")
    center = float(np.mean(data[g:n - g]))
    winsorized = np.clip(data, data[g], data[n - g - 1])
    scale = math.sqrt((n - 1) * float(np.var(winsorized, ddof=1)) / (h * (h - 1)))
    return center, scale, h - 1


@dataclass(frozen=True)
class LogRatioTest:
    """A t-test of log ratios of medians (Student's or Yuen's): the ratio it estimates, its 95%
    interval, p."""

    ratio: float
    low: float
    high: float
    p_value: float


def log_ratio_test(center: float, scale: float, df: int, confidence: float = 0.95) -> LogRatioTest:
    """The test of `center`, a log ratio of medians (or a mean of them), against 0, where
    `scale` is its standard error with `df` degrees of freedom: p of Student's t, two-sided, and
    the interval center +- t * scale, as ratios. A scale of 0 (no noise at all) gives p 0 for
    any change and 1 for none."""
    from scipy import stats as scipy_stats

    if scale <= 0 or not math.isfinite(scale):
        p = 1.0 if center == 0 else 0.0
        return LogRatioTest(math.exp(center), math.exp(center), math.exp(center), p)
    t = abs(center) / scale
    p = float(2 * scipy_stats.t.sf(t, df))
    half = float(scipy_stats.t.ppf(0.5 + confidence / 2, df)) * scale
    return LogRatioTest(math.exp(center), math.exp(center - half), math.exp(center + half), p)


def detectable(scale: float, df: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest change, in percent, that a log ratio test of this standard error finds with
    probability `power` at level `alpha` (two-sided): (t_(1 - alpha/2) + t_power) * scale."""
    from scipy import stats as scipy_stats

    if scale <= 0 or not math.isfinite(scale):
        return 0.0
    t = float(scipy_stats.t.ppf(1 - alpha / 2, df) + scipy_stats.t.ppf(power, df))
    return (math.exp(t * scale) - 1) * 100
