"""Logistic Elo helpers (harness.stats.elo)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.stats import elo_ci_from_pentanomial, elo_from_score, score_from_elo


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
