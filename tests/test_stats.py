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


def test_a_wide_spread_is_flagged_noisy():
    assert not stats.summarize([100, 101, 99, 100]).noisy
    assert stats.summarize([100, 150, 70, 100]).noisy


def test_throughput_is_derived_from_messages_and_elapsed():
    assert stats.throughput(2_000_000, 1_000_000_000) == 2e6
    assert stats.throughput(10, 0) == 0


def test_an_empty_sample_is_an_error():
    with pytest.raises(ValueError):
        stats.summarize([])
