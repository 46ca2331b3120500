"""Bradley-Terry ratings (harness.stats.ratings)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.stats import ELO_PER_NAT, bradley_terry, score_from_elo


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
