"""SPRT bounds and GSPRTs (harness.stats.sprt) against hand values and the exact multinomial GLR."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from harness.stats import (
    Moments,
    score_from_elo,
    sprt_bounds,
    sprt_mean,
    sprt_pentanomial,
    sprt_trinomial,
)


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
