"""Intervals of smooth functions of streamed means (shares, rates, ratios) by the delta method.

Cramér, *Mathematical Methods of Statistics* (1946), 28.4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.stats.common import check_confidence, scipy_stats, t_crit
from harness.stats.moments import CoMoments
from harness.util.sums import dot, vecmat


@dataclass(frozen=True)
class Estimate:
    """A value with its two-sided interval ``[lo, hi]``, standard error, n and p-value (H0: value = 0)."""

    value: float
    lo: float
    hi: float
    se: float
    n: int
    confidence: float
    p_value: float


def delta_estimate(
    c: CoMoments,
    value: float,
    grad: npt.ArrayLike,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> Estimate:
    """Interval of ``value = f(mean)``, a smooth function of the means of the metrics of ``c``,
    by the delta method: ``se^2 = grad' S grad / n`` with ``S`` the sample covariance of the
    observations (ddof 1) and ``grad`` (M,) the gradient of f at the sample means.

    Student t on n - 1 degrees of freedom, so for a single mean (``grad`` a unit vector) this is
    exactly :func:`mean_ci` (Cramér, *Mathematical Methods of Statistics*, 1946, 28.4; the
    observations must be independent: one per game). The interval is clipped to ``bounds`` (a
    share stays in [0, 1]); the p-value tests value = 0. Zero variance gives a zero-width
    interval and p = 1 if the value is 0, else 0. With n < 2 everything but the value is NaN.
    """
    confidence = check_confidence(confidence)
    n = c.n
    nan = math.nan
    if n < 2 or not math.isfinite(value):
        return Estimate(value, nan, nan, nan, n, confidence, nan)
    g = np.asarray(grad, dtype=np.float64)
    var = dot(vecmat(g, c.cm), g) / (n - 1) / n
    lo_b, hi_b = bounds
    if var <= 0.0:
        p = 1.0 if value == 0.0 else 0.0
        return Estimate(value, max(lo_b, value), min(hi_b, value), 0.0, n, confidence, p)
    se = math.sqrt(var)
    half = t_crit(confidence, n - 1) * se
    p = float(min(1.0, 2.0 * scipy_stats().t.sf(abs(value / se), n - 1)))
    return Estimate(value, max(lo_b, value - half), min(hi_b, value + half), se, n, confidence, p)
