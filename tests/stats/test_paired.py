"""Paired differences (harness.stats.paired) against scipy's ttest_rel."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from harness.stats import Moments, paired_difference, paired_difference_from_moments


def test_paired_difference_matches_ttest_rel():
    rng = np.random.default_rng(3)
    a = rng.integers(150, 300, size=400)
    b = a + rng.integers(-20, 25, size=400)
    r = paired_difference(a, b, confidence=0.95)
    d = (b - a).astype(float)
    tt = sps.ttest_rel(b, a)
    assert r.p_value == pytest.approx(tt.pvalue, rel=1e-9)
    lo, hi = sps.t.interval(0.95, df=399, loc=d.mean(), scale=sps.sem(d))
    assert r.lo == pytest.approx(lo, rel=1e-12) and r.hi == pytest.approx(hi, rel=1e-12)
    assert r.mean == pytest.approx(d.mean()) and r.n == 400
    # Streaming version from chunked moments gives the same answer.
    m = Moments.of(d[:123]).merge(Moments.of(d[123:]))
    s = paired_difference_from_moments(m)
    assert s.p_value == pytest.approx(r.p_value, rel=1e-9)
    assert s.lo == pytest.approx(r.lo, rel=1e-12)


def test_paired_difference_unsigned_no_wraparound():
    a = np.array([5, 5, 5, 6], dtype=np.uint16)
    b = np.array([3, 4, 3, 3], dtype=np.uint16)
    assert paired_difference(a, b).mean == pytest.approx(-2.0)


def test_paired_difference_errors_and_degenerate():
    with pytest.raises(ValueError, match="equal-length"):
        paired_difference(np.zeros(3), np.zeros(4))
    same = paired_difference(np.arange(10), np.arange(10))
    assert same.p_value == 1.0 and same.std == 0.0 and same.lo == same.hi == 0.0
    shifted = paired_difference(np.arange(10), np.arange(10) + 2)
    assert shifted.p_value == 0.0 and shifted.mean == 2.0
