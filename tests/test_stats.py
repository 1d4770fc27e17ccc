"""Statistics: medians, bootstrap intervals, spread and the noise flag."""

from __future__ import annotations

import pytest

from labctl.vocabulary import stats


def test_summary_of_known_values():
    s = stats.summarize([10, 12, 11, 13, 9])
    assert (s.count, s.median, s.minimum, s.maximum, s.mean) == (5, 11, 9, 13, 11)
    assert s.cv == pytest.approx(0.1437, abs=1e-3)
    assert s.ci_low <= s.median <= s.ci_high
    assert 9 <= s.ci_low and s.ci_high <= 13


def test_no_interval_below_three_samples():
    s = stats.summarize([5.0, 7.0])
    assert s.ci_low is None and s.ci_high is None
    assert stats.summarize([5.0]).cv == 0


def test_identical_samples_have_a_zero_width_interval():
    s = stats.summarize([4, 4, 4, 4])
    assert (s.ci_low, s.ci_high) == (4, 4) and not s.noisy


def test_the_interval_is_reproducible():
    values = [1.0, 1.3, 0.9, 1.1, 1.2, 1.05, 0.95]
    assert stats.median_interval(values) == stats.median_interval(values)


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
def test_the_intervals_are_scipys_percentile_bootstrap_to_the_bit(confidence):
    # labctl resamples by hand to spare each command scipy.stats' import; scipy is the oracle.
    import warnings

    import numpy as np
    from scipy.stats import bootstrap

    def ratio(x, y, axis=-1):
        return np.median(y, axis=axis) / np.median(x, axis=axis)

    generator = np.random.default_rng(7)
    for trial in range(20):
        a = generator.lognormal(size=int(generator.integers(3, 40))) * 1e6
        if trial % 3 == 0:
            a = np.round(a / 1e5)  # ties
        b = generator.lognormal(size=int(generator.integers(3, 40)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            median = bootstrap((a,), np.median, confidence_level=confidence, n_resamples=stats.BOOTSTRAP_RESAMPLES,
                               method="percentile", random_state=np.random.default_rng(0)).confidence_interval
            quotient = bootstrap((a, b), ratio, confidence_level=confidence, n_resamples=stats.BOOTSTRAP_RESAMPLES,
                                 method="percentile", random_state=np.random.default_rng(0)).confidence_interval
        assert stats.median_interval(list(a), confidence) == (float(median.low), float(median.high))
        assert stats.ratio_interval(list(a), list(b), confidence) == (float(quotient.low), float(quotient.high))


def test_a_wide_spread_is_flagged_noisy():
    assert not stats.summarize([100, 101, 99, 100]).noisy
    assert stats.summarize([100, 150, 70, 100]).noisy


def test_throughput_is_derived_from_messages_and_elapsed():
    assert stats.throughput(2_000_000, 1_000_000_000) == 2e6
    assert stats.throughput(10, 0) == 0


def test_an_empty_sample_is_an_error():
    with pytest.raises(ValueError):
        stats.summarize([])


def test_a_trimmed_mean_of_one_to_ten_drops_two_a_side_and_winsorizes_its_variance():
    # By hand: kept 3..8, mean 5.5; winsorized 3,3,3,4,5,6,7,8,8,8 has a sum of squares about
    # 5.5 of 42.5, so s_w^2 = 42.5 / 9 and the error is sqrt(9 s_w^2 / (6 * 5)) = sqrt(42.5 / 30).
    center, scale, df = stats.trimmed(range(1, 11))
    assert center == 5.5 and df == 5
    assert scale == pytest.approx((42.5 / 30) ** 0.5)


def test_a_trimmed_mean_of_four_is_the_mean_with_students_error():
    center, scale, df = stats.trimmed([1.0, 2.0, 4.0, 5.0])
    assert (center, df) == (3.0, 3)
    assert scale == pytest.approx(((1 + 4 + 1 + 4) / 3) ** 0.5 / 2)


def test_a_trimmed_mean_is_unmoved_by_a_burst_in_a_fifth_of_the_values():
    quiet = [0.05, 0.04, 0.06, 0.05, 0.05, 0.04, 0.06, 0.05, 0.05, 0.05]
    burst = quiet[:8] + [-0.7, 0.6]
    assert stats.trimmed(burst)[0] == pytest.approx(stats.trimmed(quiet)[0], abs=0.002)
