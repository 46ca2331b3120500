"""Moments, CoMoments and mean_ci (harness.stats.moments) against numpy and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from harness.stats import CoMoments, Moments, mean_ci

# No example database: keeps runs deterministic and leaves no files behind.
FAST = settings(max_examples=60, deadline=None, database=None)


def test_moments_of_matches_numpy():
    x = np.random.default_rng(1).normal(250.0, 40.0, size=1001)
    m = Moments.of(x)
    assert m.n == 1001
    assert m.mean == pytest.approx(x.mean(), rel=1e-13)
    assert m.var == pytest.approx(x.var(ddof=1), rel=1e-12)
    assert m.std == pytest.approx(x.std(ddof=1), rel=1e-12)
    assert m.sem == pytest.approx(x.std(ddof=1) / math.sqrt(1001), rel=1e-12)


def test_moments_small_n_and_empty_identity():
    e = Moments.empty()
    assert e.n == 0 and math.isnan(e.var)
    one = Moments.of(np.array([7]))
    assert one.mean == 7.0 and math.isnan(one.std)
    m = Moments.of(np.array([1, 2, 3, 4], dtype=np.uint8))  # no wraparound
    assert m.merge(e) == m and e.merge(m) == m
    assert m.var == pytest.approx(np.var([1, 2, 3, 4], ddof=1))


@FAST
@given(
    values=st.lists(st.integers(0, 1600), min_size=0, max_size=300),
    cuts=st.lists(st.integers(0, 300), max_size=8),
    offset=st.floats(-1e6, 1e6, allow_nan=False),
)
def test_moments_merge_of_chunks_equals_whole(values, cuts, offset):
    x = np.asarray(values, dtype=np.float64) + offset
    bounds = sorted({min(c, x.size) for c in cuts})
    chunks = np.split(x, bounds)
    merged = Moments.empty()
    for ch in chunks:
        merged = merged.merge(Moments.of(ch))
    whole = Moments.of(x)
    assert merged.n == whole.n
    assert merged.mean == pytest.approx(whole.mean, rel=1e-12, abs=1e-9)
    assert merged.m2 == pytest.approx(whole.m2, rel=1e-9, abs=1e-6)


def test_mean_ci_matches_scipy_t_interval():
    x = np.random.default_rng(2).integers(100, 350, size=57)
    r = mean_ci(x, confidence=0.9)
    lo, hi = sps.t.interval(0.9, df=56, loc=x.mean(), scale=sps.sem(x))
    assert (r.lo, r.hi) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))
    assert r.mean == pytest.approx(x.mean()) and r.n == 57 and r.confidence == 0.9
    assert r.std == pytest.approx(x.std(ddof=1))
    assert mean_ci(Moments.of(x), confidence=0.9) == r


def test_mean_ci_degenerate():
    r = mean_ci(np.array([5.0]))
    assert r.mean == 5.0 and math.isnan(r.lo) and math.isnan(r.hi)
    assert math.isnan(mean_ci(np.array([])).mean)
    with pytest.raises(ValueError):
        mean_ci(np.array([1.0, 2.0]), confidence=1.0)


def test_mean_ci_of_a_constant_bounded_sample():
    """A rate that never happened in n games (no draw in 300): [0, Clopper-Pearson's 0-of-n upper
    limit] instead of [0, 0]; a constant value inside the bounds widens towards both."""
    q = 1 - 0.025 ** (1 / 300)
    r = mean_ci(np.zeros(300), 0.95, (0.0, 1.0))
    assert (r.lo, r.hi) == (0.0, pytest.approx(q, rel=1e-12)) and q == pytest.approx(3.69 / 300, rel=0.01)
    h = mean_ci(np.full(300, 0.5), 0.95, (0.0, 1.0))
    assert (h.lo, h.hi) == (pytest.approx(0.5 - 0.5 * q, rel=1e-12), pytest.approx(0.5 + 0.5 * q, rel=1e-12))
    assert mean_ci(np.zeros(300)).hi == 0.0  # no bounds: unchanged
    x = np.array([0.0, 1.0, 0.0])
    assert mean_ci(x, 0.95, (0.0, 1.0)) == mean_ci(x, 0.95)  # values differ: the t interval


def test_comoments_streamed_in_blocks_match_numpy():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(1000, 3)) @ np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 2.0]]) + 100.0
    c = CoMoments.empty(3)
    for a, b in ((0, 7), (7, 500), (500, 501), (501, 1000)):
        c.add(x[a:b])
    assert c.n == 1000
    assert np.allclose(c.mean, x.mean(axis=0), rtol=1e-13)
    assert np.allclose(c.cm / 999, np.cov(x, rowvar=False), rtol=1e-10)
    assert c.get(2).var == pytest.approx(x[:, 2].var(ddof=1), rel=1e-10)
