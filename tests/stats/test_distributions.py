"""KS and Anderson-Darling tests (harness.stats.distributions) against scipy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from harness.stats import IntHistogram, anderson_ksamp_counts, ks_2samp_counts

# No example database: keeps runs deterministic and leaves no files behind.
FAST = settings(max_examples=60, deadline=None, database=None)


def test_ks_matches_scipy_asymptotic_large():
    rng = np.random.default_rng(6)
    a = rng.binomial(300, 0.50, size=30_000)
    b = rng.binomial(300, 0.505, size=25_000)
    ref = sps.ks_2samp(a, b, method="asymp")
    r = ks_2samp_counts(np.bincount(a), IntHistogram.of(b))
    assert r.statistic == ref.statistic
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
    assert r.p_value < 1e-6


def test_ks_same_distribution_not_significant():
    rng = np.random.default_rng(7)
    a = rng.binomial(300, 0.5, size=20_000)
    b = rng.binomial(300, 0.5, size=20_000)
    r = ks_2samp_counts(np.bincount(a), np.bincount(b))
    assert r.statistic == sps.ks_2samp(a, b, method="asymp").statistic
    assert r.p_value > 0.01
    same = ks_2samp_counts(np.bincount(a), np.bincount(a))
    assert same.statistic == 0.0 and same.p_value == 1.0


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy's own n_eff=0 case
@FAST
@given(
    a=st.lists(st.integers(0, 12), min_size=1, max_size=60),
    b=st.lists(st.integers(0, 12), min_size=1, max_size=60),
)
def test_ks_statistic_equals_scipy_with_ties(a, b):
    ref = sps.ks_2samp(a, b, method="asymp")
    r = ks_2samp_counts(np.bincount(a), np.bincount(b))
    assert r.statistic == ref.statistic
    if round(len(a) * len(b) / (len(a) + len(b))) >= 1:
        assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)
    assert 0.0 <= r.p_value <= 1.0


def test_ks_rejects_empty():
    with pytest.raises(ValueError):
        ks_2samp_counts(np.zeros(3, dtype=int), np.array([1, 2]))


def test_anderson_matches_scipy_on_raw():
    rng = np.random.default_rng(8)
    a = rng.binomial(50, 0.5, size=800)
    b = rng.binomial(50, 0.52, size=600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sps.anderson_ksamp([a, b], variant="midrank")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # our wrapper must not leak scipy's cap warning
        r = anderson_ksamp_counts(np.bincount(a), np.bincount(b))
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert r.p_value == pytest.approx(ref.pvalue)
    with pytest.raises(ValueError):
        anderson_ksamp_counts(np.bincount(a), np.bincount(b), max_n=100)
