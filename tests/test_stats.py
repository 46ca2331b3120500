"""Tests for harness.stats against hand-computed values and scipy/numpy references."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats as sps

from harness.stats import (
    ELO_PER_NAT,
    CoMoments,
    control_variate_mean,
    IntHistogram,
    Moments,
    anderson_ksamp_counts,
    bradley_terry,
    elo_ci_from_pentanomial,
    elo_from_score,
    ks_2samp_counts,
    mean_ci,
    paired_difference,
    paired_difference_from_moments,
    rate,
    score_from_elo,
    sprt_bounds,
    sprt_mean,
    sprt_pentanomial,
    sprt_trinomial,
    wilson,
)

# No example database: keeps runs deterministic and leaves no files behind.
FAST = settings(max_examples=60, deadline=None, database=None)


# ---------------------------------------------------------------------------
# Moments / mean_ci
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Wilson / rate
# ---------------------------------------------------------------------------


def test_wilson_reference_value():
    # Hand computation, z = 1.959964: centre = (8 + z^2/2)/(10 + z^2) = 0.71674,
    # half = z/(10 + z^2) * sqrt(8*2/10 + z^2/4) = 0.22658.
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.49016, abs=5e-5)
    assert hi == pytest.approx(0.94332, abs=5e-5)


@pytest.mark.parametrize("k,n,conf", [(8, 10, 0.95), (3, 70, 0.99), (500, 1000, 0.9), (1, 2, 0.8)])
def test_wilson_solves_score_equation(k, n, conf):
    # Wilson's interval is the set of p with |phat - p| <= z sqrt(p(1-p)/n):
    # the roots of (1 + z^2/n) p^2 - (2 phat + z^2/n) p + phat^2 = 0.
    z = sps.norm.ppf(0.5 + conf / 2)
    ph = k / n
    roots = np.sort(np.roots([1 + z * z / n, -(2 * ph + z * z / n), ph * ph]).real)
    assert wilson(k, n, conf) == (pytest.approx(roots[0], abs=1e-12), pytest.approx(roots[1], abs=1e-12))


def test_wilson_edges_and_rate():
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(0, 20)
    assert lo == 0.0 and 0 < hi < 0.2
    lo, hi = wilson(20, 20)
    assert hi == 1.0 and 0.8 < lo < 1
    with pytest.raises(ValueError):
        wilson(5, 4)
    r = rate(8, 10)
    assert (r.k, r.n, r.rate) == (8, 10, 0.8) and (r.lo, r.hi) == wilson(8, 10)
    assert math.isnan(rate(0, 0).rate)


# ---------------------------------------------------------------------------
# Paired differences
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# IntHistogram
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Distribution tests
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# SPRT
# ---------------------------------------------------------------------------


def test_sprt_bounds_formula():
    lo, hi = sprt_bounds(0.05, 0.1)
    assert lo == pytest.approx(math.log(0.1 / 0.95))
    assert hi == pytest.approx(math.log(0.9 / 0.05))
    assert sprt_bounds() == pytest.approx((-2.944438979, 2.944438979))
    with pytest.raises(ValueError):
        sprt_bounds(0.6, 0.5)


def test_sprt_mean_llr_formula_and_decisions():
    d = Moments(n=100, mean=0.4, m2=99 * 4.0)  # var = 4
    r = sprt_mean(d, 0.0, 1.0)
    assert r.llr == pytest.approx(100 * 1.0 * (0.8 - 1.0) / 8.0)  # = -2.5
    assert r.decision == "continue" and r.n == 100 and (r.h0, r.h1) == (0.0, 1.0)
    rng = np.random.default_rng(9)
    good = Moments.of(rng.normal(1.0, 10.0, size=5000))
    null = Moments.of(rng.normal(0.0, 10.0, size=5000))
    assert sprt_mean(good, 0.0, 1.0).decision == "H1"
    assert sprt_mean(null, 0.0, 1.0).decision == "H0"


def test_sprt_mean_degenerate_variance():
    zeros = Moments.of(np.zeros(50))
    r = sprt_mean(zeros, 0.0, 1.0)
    assert math.isfinite(r.llr) and r.decision == "H0"
    ones = Moments.of(np.ones(50))
    r = sprt_mean(ones, 0.0, 1.0)
    assert math.isfinite(r.llr) and r.decision == "H1"
    assert sprt_mean(Moments.of(np.ones(1)), 0.0, 1.0).decision == "continue"


def test_sprt_pentanomial_hand_value():
    # x = pair score / 2 in {0,.25,.5,.75,1}; counts 10,20,40,25,5 (N=100):
    # mean = 48.75/100 = 0.4875, E[x^2] = 30.3125/100, var = 0.06546875.
    # s0 = 0.5, s1 = 1/(1+10^(-10/400)) = 0.51438718;
    # LLR = 100 (s1-s0)(2*0.4875 - s0 - s1) / (2 var) = -0.43277951.
    r = sprt_pentanomial([10, 20, 40, 25, 5], 0.0, 10.0)
    assert r.llr == pytest.approx(-0.43277951, abs=1e-7)
    assert r.n == 100 and r.estimate == pytest.approx(0.4875) and r.decision == "continue"


def _exact_gsprt(counts, scores, s0, s1):
    """Exact multinomial GLR (profile likelihood, Lagrange multiplier form)."""
    c = np.asarray(counts, float)
    ph = c / c.sum()

    def loglik_at(s):
        a = scores - s
        f = lambda x: np.sum(ph * a / (1 + x * a))  # noqa: E731
        x = optimize.brentq(f, -1 / a.max() + 1e-12, -1 / a.min() - 1e-12, xtol=1e-15)
        p = ph / (1 + x * a)
        return np.sum(c * np.log(p))

    return loglik_at(s1) - loglik_at(s0)


def test_sprt_pentanomial_close_to_exact_glr():
    counts = [400, 1800, 3500, 2000, 500]
    r = sprt_pentanomial(counts, 0.0, 5.0)
    exact = _exact_gsprt(counts, np.linspace(0, 1, 5), score_from_elo(0.0), score_from_elo(5.0))
    assert r.llr == pytest.approx(exact, rel=0.02)
    assert abs(r.llr) > 1


def test_sprt_pentanomial_synthetic_decisions():
    rng = np.random.default_rng(10)

    def pairs(elo, n):
        p = score_from_elo(elo)
        games = rng.binomial(1, p, size=(n, 2)).sum(axis=1)  # 0, 1 or 2 wins
        return np.bincount(games * 2, minlength=5)

    assert sprt_pentanomial(pairs(40.0, 20_000), 0.0, 20.0).decision == "H1"
    assert sprt_pentanomial(pairs(-20.0, 20_000), 0.0, 20.0).decision == "H0"


def test_sprt_pentanomial_degenerate_regularised():
    allwin = sprt_pentanomial([0, 0, 0, 0, 50], 0.0, 5.0)
    assert math.isfinite(allwin.llr) and allwin.decision == "H1"
    alldraw = sprt_pentanomial([0, 0, 50, 0, 0], 0.0, 5.0)
    assert math.isfinite(alldraw.llr) and alldraw.decision == "H0"
    empty = sprt_pentanomial([0, 0, 0, 0, 0], 0.0, 5.0)
    assert empty.llr == 0.0 and empty.decision == "continue"
    with pytest.raises(ValueError):
        sprt_pentanomial([1, 2, 3], 0.0, 5.0)


def test_sprt_trinomial_hand_value_and_decisions():
    # 60 W, 20 D, 20 L: mean = 0.7, E[x^2] = 0.65, var = 0.16; s0 = .5,
    # s1 = score(50) = 0.571463; LLR = 100 * 0.071463 * (1.4 - 1.071463) / 0.32
    r = sprt_trinomial(60, 20, 20, 0.0, 50.0)
    s1 = 1 / (1 + 10 ** (-50 / 400))
    assert r.llr == pytest.approx(100 * (s1 - 0.5) * (1.4 - 0.5 - s1) / 0.32, rel=1e-12)
    assert r.llr == pytest.approx(7.3370, abs=1e-3)
    assert r.decision == "H1" and r.n == 100
    assert sprt_trinomial(300, 400, 300, 0.0, 50.0).decision == "H0"
    assert sprt_trinomial(0, 0, 30, 0.0, 50.0).decision == "H0"


# ---------------------------------------------------------------------------
# Elo helpers
# ---------------------------------------------------------------------------


def test_elo_score_helpers():
    assert score_from_elo(0.0) == 0.5
    assert elo_from_score(0.75) == pytest.approx(400 * math.log10(3))
    e = np.array([-300.0, -7.5, 0.0, 120.0])
    np.testing.assert_allclose(elo_from_score(score_from_elo(e)), e, atol=1e-9)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    with pytest.raises(ValueError):
        elo_from_score(1.2)


def test_elo_ci_from_pentanomial():
    elo, lo, hi = elo_ci_from_pentanomial([10, 20, 40, 25, 5])
    half = sps.norm.ppf(0.975) * math.sqrt(0.06546875 / 100)
    assert elo == pytest.approx(elo_from_score(0.4875))
    assert lo == pytest.approx(elo_from_score(0.4875 - half))
    assert hi == pytest.approx(elo_from_score(0.4875 + half))


# ---------------------------------------------------------------------------
# Bradley-Terry
# ---------------------------------------------------------------------------


def _expected_table(elos, games):
    elos = np.asarray(elos, float)
    p = score_from_elo(elos[:, None] - elos[None, :])
    w = games * p
    np.fill_diagonal(w, 0.0)
    return w


def test_bradley_terry_two_players_gap_and_se():
    n = 1_000_000
    w = _expected_table([100.0, -100.0], n)
    r = bradley_terry(["A", "B"], w)
    assert r.elo[0] == pytest.approx(100.0, abs=0.01)
    assert r.elo[1] == pytest.approx(-100.0, abs=0.01)
    # Var(theta_A - theta_B) = 1/(n p q); each rating is half the difference.
    p = score_from_elo(200.0)
    assert r.se[0] == pytest.approx(0.5 * ELO_PER_NAT / math.sqrt(n * p * (1 - p)), rel=1e-3)
    assert r.lo[0] == pytest.approx(r.elo[0] - sps.norm.ppf(0.975) * r.se[0])


def test_bradley_terry_recovers_known_strengths():
    true = np.array([150.0, -40.0, 60.0, -170.0, 0.0])
    true -= true.mean()
    rng = np.random.default_rng(11)
    games = 4000
    k = true.size
    w = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            won = rng.binomial(games, score_from_elo(true[i] - true[j]))
            w[i, j], w[j, i] = won, games - won
    names = [f"bot{i}" for i in range(k)]
    r = bradley_terry(names, w)
    assert np.argsort(r.elo).tolist() == np.argsort(true).tolist()
    assert np.all(np.abs(r.elo - true) < 4 * r.se)
    assert r.elo.mean() == pytest.approx(0.0, abs=1e-9)
    table = r.table()
    assert [row["name"] for row in table] == [names[i] for i in np.argsort(-true)]
    assert table[0]["rank"] == 1


def test_bradley_terry_symmetric_table_is_zero():
    w = np.full((4, 4), 37.5)
    np.fill_diagonal(w, 0.0)
    r = bradley_terry(list("abcd"), w)
    np.testing.assert_allclose(r.elo, 0.0, atol=1e-9)
    assert np.all(r.se > 0)


def test_bradley_terry_undefeated_is_finite():
    w = np.array([[0.0, 10.0, 10.0], [0.0, 0.0, 6.0], [0.0, 4.0, 0.0]])
    r = bradley_terry(["champ", "mid", "low"], w)
    assert np.all(np.isfinite(r.elo)) and np.all(np.isfinite(r.se))
    assert r.table()[0]["name"] == "champ"
    assert r.elo[1] > r.elo[2]


def test_bradley_terry_validation():
    with pytest.raises(ValueError):
        bradley_terry(["a", "b"], np.zeros((3, 3)))
    with pytest.raises(ValueError):
        bradley_terry(["a", "b"], np.eye(2))
    one = bradley_terry(["solo"], np.zeros((1, 1)))
    assert one.elo.tolist() == [0.0]


# ---------------------------------------------------------------------------
# CoMoments / control_variate_mean


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


def test_control_variate_mean_is_the_least_squares_intercept():
    """The estimate, interval and p-value equal an ordinary least-squares fit of y on (x - mu_x):
    the intercept, its textbook standard error s sqrt((X'X)^-1_00), Student t on n - 2 df."""
    rng = np.random.default_rng(5)
    n, mu_x = 300, 2.0
    x = mu_x + rng.normal(size=n)
    y = 0.4 + 1.5 * (x - mu_x) + rng.normal(scale=0.8, size=n)
    r = control_variate_mean(CoMoments.of(np.column_stack([y, x])), 0, 1, known_mean=mu_x, confidence=0.9)
    design = np.column_stack([np.ones(n), x - mu_x])
    coef, rss, *_ = np.linalg.lstsq(design, y, rcond=None)
    s2 = float(rss[0]) / (n - 2)
    se = math.sqrt(s2 * np.linalg.inv(design.T @ design)[0, 0])
    half = sps.t.ppf(0.95, n - 2) * se
    assert r.mean == pytest.approx(coef[0], rel=1e-12) and r.beta == pytest.approx(coef[1], rel=1e-12)
    assert (r.lo, r.hi) == pytest.approx((coef[0] - half, coef[0] + half), rel=1e-10)
    assert r.p_value == pytest.approx(2 * sps.t.sf(abs(coef[0] / se), n - 2), rel=1e-9)
    assert r.std == pytest.approx(math.sqrt(s2), rel=1e-12)
    assert r.raw_mean == pytest.approx(y.mean(), rel=1e-12)
    assert r.variance_reduction == pytest.approx(y.var(ddof=1) / s2, rel=1e-12)


def test_constant_control_gives_the_plain_t_interval():
    y = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    r = control_variate_mean(CoMoments.of(np.column_stack([y, np.zeros(5)])), 0, 1)
    p = paired_difference(np.zeros(5), y)
    assert (r.mean, r.lo, r.hi, r.p_value, r.beta, r.variance_reduction) == \
        pytest.approx((p.mean, p.lo, p.hi, p.p_value, 0.0, 1.0))
    short = control_variate_mean(CoMoments.of(np.array([[1.0, 2.0], [2.0, 1.0]])), 0, 1)
    assert short.raw_mean == 1.5 and math.isnan(short.lo) and math.isnan(short.beta)


def test_control_variate_interval_covers_at_its_level_and_reduces_the_variance():
    """400 independent data sets (fixed seeds) of n = 200 win-like 0/1 outcomes whose probability
    rises with a mean-zero control (corr ~0.6): the 95 % interval must contain the true mean in
    between 92 % and 98 % of them. With correct intervals the count of misses is
    Binomial(400, 0.05): outside [8, 32] misses with probability < 0.3 %; intervals that ignored the
    fitted beta or used the plain variance would miss the band (too wide: > 98 %; wrong centre:
    < 92 %). The seeds are fixed, so the outcome is deterministic. The average variance reduction
    must be near 1 / (1 - rho^2) for the data's rho."""
    covered, vrs, rho2 = 0, [], []
    for k in range(400):
        rng = np.random.default_rng(10_000 + k)
        x = rng.normal(size=200)
        p = 1.0 / (1.0 + np.exp(-1.8 * x))  # E[p] = 1/2 by symmetry
        y = (rng.uniform(size=200) < p).astype(float)
        r = control_variate_mean(CoMoments.of(np.column_stack([y, x])), 0, 1)
        covered += r.lo <= 0.5 <= r.hi
        vrs.append(r.variance_reduction)
        rho2.append(np.corrcoef(y, x)[0, 1] ** 2)
    assert 0.92 <= covered / 400 <= 0.98, covered
    assert np.mean(vrs) == pytest.approx(np.mean(1 / (1 - np.array(rho2))), rel=0.05)
    assert np.mean(vrs) > 1.4


def test_delta_estimate_of_one_mean_is_the_t_interval_and_of_a_ratio_matches_the_textbook():
    from harness.stats import CoMoments, delta_estimate

    rng = np.random.default_rng(3)
    x = rng.normal(5.0, 2.0, size=(400, 2))
    c = CoMoments.of(x)
    e = delta_estimate(c, float(x[:, 0].mean()), [1.0, 0.0])
    m = mean_ci(x[:, 0])
    assert (e.value, e.lo, e.hi) == pytest.approx((m.mean, m.lo, m.hi), rel=1e-12)
    # ratio of means: se^2 = var(a - R b) / (n mean(b)^2)
    a, b = x[:, 0], x[:, 1] + 10
    c = CoMoments.of(np.column_stack([a, b]))
    r = a.mean() / b.mean()
    e = delta_estimate(c, r, [1 / b.mean(), -r / b.mean()])
    assert e.se == pytest.approx(np.std(a - r * b, ddof=1) / np.sqrt(400) / b.mean(), rel=1e-10)
    assert delta_estimate(c, 0.5, [0.0, 0.0], bounds=(0.0, 1.0)).hi == 0.5  # no variance: zero width
    assert delta_estimate(c, 0.99, [1.0, 0.0], bounds=(0.0, 1.0)).hi == 1.0  # clipped to the bounds


def test_holm_adjusted_p_values():
    from harness.stats import holm

    # Holm (1979): sorted p times (m, m-1, ...), made monotone; NaN is no test
    assert holm([0.01, 0.04, 0.03, math.nan, 0.005]) == pytest.approx([0.03, 0.06, 0.06, math.nan, 0.02], nan_ok=True)
    assert holm([0.5, 0.9]) == [1.0, 1.0] and holm([]) == []
