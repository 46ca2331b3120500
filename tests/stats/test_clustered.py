"""clustered_mean (harness.stats.clustered): the CR1 sandwich by hand, singletons, a control variate, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.stats import clustered_mean, mean_ci


def test_singleton_clusters_give_the_ordinary_t_interval():
    y = np.array([0.2, 0.9, 0.4, 0.7, 0.1, 0.6])
    r = clustered_mean(y, np.arange(6), confidence=0.9)
    t = mean_ci(y, 0.9)
    assert (r.mean, r.lo, r.hi, r.clusters, r.beta, r.variance_reduction) == pytest.approx(
        (t.mean, t.lo, t.hi, 6, 0.0, 1.0), rel=1e-12
    )


def test_the_variance_is_the_cr1_sum_of_cluster_residuals():
    y = np.array([1.0, 2.0, 4.0, 3.0, 7.0, 5.0, 5.0])
    c = np.array(["a", "a", "b", "b", "b", "c", "d"])
    r = clustered_mean(y, c)
    m = y.mean()
    sums = [sum(y[c == k] - m) for k in "abcd"]
    var = 4 / 3 * sum(s * s for s in sums) / 49
    half = sps.t.ppf(0.975, 3) * math.sqrt(var)
    assert (r.mean, r.se, r.lo, r.hi, r.n, r.clusters) == pytest.approx((m, math.sqrt(var), m - half, m + half, 7, 4))


def test_a_control_variate_is_the_least_squares_line_at_the_known_mean():
    rng = np.random.default_rng(3)
    c = np.repeat(np.arange(20), 5)
    x = rng.normal(size=100) + rng.normal(size=20)[c]
    y = 0.5 - 0.3 * x + 0.1 * rng.normal(size=100)
    r = clustered_mean(y, c, control=x, known_mean=0.0)
    beta = np.polyfit(x, y, 1)[0]
    assert r.beta == pytest.approx(beta, rel=1e-10)
    assert r.mean == pytest.approx(y.mean() - beta * x.mean(), rel=1e-12)
    u = y - r.mean - beta * x
    sums = np.bincount(c, weights=u)
    assert r.se == pytest.approx(math.sqrt(20 / 19 * sums @ sums / 100**2), rel=1e-12)
    plain = clustered_mean(y, c)
    assert r.variance_reduction == pytest.approx(plain.se**2 / r.se**2, rel=1e-12) and r.variance_reduction > 5
    assert r.raw_mean == pytest.approx(y.mean())


def test_one_cluster_has_no_interval_and_no_data_no_mean():
    r = clustered_mean([1.0, 2.0], ["p", "p"])
    assert r.mean == 1.5 and math.isnan(r.lo) and r.clusters == 1
    assert math.isnan(clustered_mean([], []).mean)


def test_intervals_cover_when_games_of_a_player_are_correlated():
    """Players differ (a shared effect per player): the naive t interval over games undercovers,
    the cluster-robust one keeps about its level (400 replicates of 30 players x 10 games)."""
    rng = np.random.default_rng(11)
    c = np.repeat(np.arange(30), 10)
    hit_cr = hit_naive = 0
    for _ in range(400):
        y = rng.normal(size=30)[c] + rng.normal(size=300)
        r = clustered_mean(y, c)
        t = mean_ci(y)
        hit_cr += r.lo <= 0.0 <= r.hi
        hit_naive += t.lo <= 0.0 <= t.hi
    assert 0.91 <= hit_cr / 400 <= 0.99
    assert hit_naive / 400 < 0.7
