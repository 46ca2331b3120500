"""Wilson intervals and rates (harness.stats.proportions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.stats import rate, wilson


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
