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


def _rare_coverage(p: float, n: int, bounds) -> float:
    """Exact coverage of paired_difference_from_moments's 95 % interval when each of n paired
    differences is 1 with probability p, else 0 (a rare figure a change moves up): every count k of
    ones enumerated, no sampling."""
    pmf = sps.binom.pmf(np.arange(n + 1), n, p)
    hit = 0.0
    for k in range(n + 1):
        r = paired_difference_from_moments(Moments(n, k / n, k * (1 - k / n)), 0.95, bounds)
        hit += pmf[k] * (r.lo <= p <= r.hi)
    return hit


def test_bounded_differences_that_never_moved_get_the_interval_the_bounds_allow():
    """A sample of identical differences of a bounded figure: its interval is the Clopper-Pearson
    bound on an unseen change, not zero width (which missed rare figures' exact differences in most
    small comparisons, benchmarks/BENCHMARKS.md)."""
    q = 1 - 0.025 ** (1 / 200)
    r = paired_difference_from_moments(Moments(200, 0.0, 0.0), 0.95, (-1.0, 1.0))
    assert (r.lo, r.hi, r.p_value) == (pytest.approx(-q, rel=1e-12), pytest.approx(q, rel=1e-12), 1.0)
    # a constant non-zero difference: p is the level at which the interval's end reaches 0
    c = paired_difference_from_moments(Moments(10, 0.5, 0.0), 0.95, (-1.0, 1.0))
    assert c.p_value == pytest.approx(2 * (1 / 1.5) ** 10, rel=1e-12)
    at = paired_difference_from_moments(Moments(10, 0.5, 0.0), 1 - c.p_value, (-1.0, 1.0))
    assert at.lo == pytest.approx(0.0, abs=1e-12) and c.lo > 0
    # unbounded (e.g. a luck-adjusted score, constant because it is exact): zero width as before
    assert paired_difference_from_moments(Moments(200, 2.0, 0.0)).lo == 2.0
    # the coverage this buys, exactly: a figure moved in 0.5 % of games, 200 games
    assert _rare_coverage(0.005, 200, None) == pytest.approx(0.6325, abs=1e-4)  # zero width at k = 0
    assert _rare_coverage(0.005, 200, (-1.0, 1.0)) >= 0.95
