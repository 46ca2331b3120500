"""IntHistogram (harness.stats.histogram): quantiles, streaming, validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.stats import IntHistogram

# No example database: keeps runs deterministic and leaves no files behind.
FAST = settings(max_examples=60, deadline=None, database=None)


QS = np.array([0, 0.1, 1, 5, 10, 25, 33.3, 50, 66.7, 75, 90, 95, 99, 99.9, 100])


@FAST
@given(values=st.lists(st.integers(0, 60), min_size=1, max_size=200))
def test_histogram_percentiles_match_numpy_inverted_cdf(values):
    x = np.asarray(values)
    h = IntHistogram.of(x)
    expected = np.percentile(x, QS, method="inverted_cdf")
    np.testing.assert_array_equal(h.percentiles(QS), expected)
    qf = np.linspace(0, 1, 41)
    np.testing.assert_array_equal(h.quantile(qf), np.quantile(x, qf, method="inverted_cdf"))


def test_histogram_percentiles_large_scores():
    x = np.random.default_rng(4).normal(240, 60, size=20_000).clip(0, 1600).astype(np.int64)
    h = IntHistogram.of(x)
    np.testing.assert_array_equal(h.percentiles(QS), np.percentile(x, QS, method="inverted_cdf"))
    assert h.quantile(0.5) == int(np.quantile(x, 0.5, method="inverted_cdf"))
    assert isinstance(h.percentiles(50.0), int)


def test_histogram_streaming_summaries():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 400, size=10_000)
    h = IntHistogram.empty()
    for chunk in np.array_split(x, 7):
        h = h.add(chunk)
    assert h == IntHistogram.of(x)
    assert h == IntHistogram.of(x[:5000]).merge(IntHistogram.of(x[5000:]))
    assert h.n == 10_000
    assert h.mean == pytest.approx(x.mean(), rel=1e-13)
    assert h.std == pytest.approx(x.std(ddof=1), rel=1e-12)
    assert (h.min, h.max) == (x.min(), x.max())
    cdf = h.cdf()
    assert cdf.shape == h.counts.shape and cdf[-1] == 1.0
    assert cdf[200] == pytest.approx(np.mean(x <= 200))


def test_histogram_validation_and_immutability():
    with pytest.raises(ValueError):
        IntHistogram.of(np.array([1, -2]))
    with pytest.raises(ValueError):
        IntHistogram.of(np.array([1.5]))
    assert IntHistogram.of(np.array([2.0, 3.0])) == IntHistogram(np.array([0, 0, 1, 1, 0, 0]))
    h = IntHistogram.of(np.array([1, 2]))
    with pytest.raises(ValueError):
        h.counts[0] = 5
    h2 = h.add(np.array([2]))
    assert h.n == 2 and h2.n == 3
    with pytest.raises(ValueError):
        IntHistogram.empty().quantile(0.5)
