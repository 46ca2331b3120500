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


def test_only_the_entrant_outside_the_field_that_scored_against_each_other_is_a_bound():
    """Three bots take points off each other and each beats ``random`` in every game: their gaps are
    fixed by the games, so only random's rating is a bound (an upper one); it used to mark all four."""
    names = ["solver", "bonus", "greedy", "random"]
    w = np.array([[0, 60, 70, 100], [40, 0, 65, 100], [30, 35, 0, 100], [0, 0, 0, 0]], float)
    r = bradley_terry(names, w)
    assert [r.bound(i) for i in range(4)] == [None, None, None, "upper"]
    assert [row["bound"] for row in r.table()] == [None, None, None, "upper"]


def test_a_gauntlet_marks_each_entrant_by_its_own_sweeps():
    """No group of two or more that scored against each other: each entrant's mark is its own
    sweeps' (greedy and bonus never meet; each beat random in every game)."""
    w = np.array([[0, 0, 100], [0, 0, 100], [0, 0, 0]], float)
    r = bradley_terry(["greedy", "bonus", "random"], w)
    assert [r.bound(i) for i in range(3)] == ["lower", "lower", "upper"]


def test_a_group_above_the_reference_is_a_lower_bound_and_an_unconnected_one_rests_on_the_prior():
    # a and b score against each other and c; d sweeps a; e and f play only each other
    names = ["a", "b", "c", "d", "e", "f"]
    w = np.zeros((6, 6))
    w[0, 1], w[1, 0], w[0, 2], w[2, 0], w[1, 2], w[2, 1] = 5, 5, 5, 5, 5, 5
    w[3, 0] = 10
    w[4, 5], w[5, 4] = 3, 3
    r = bradley_terry(names, w)
    assert [r.bound(i) for i in range(6)] == [None, None, None, "lower", "both", "both"]
