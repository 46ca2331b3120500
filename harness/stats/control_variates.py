"""Control variates: the regression estimator of a mean, with a control of known mean.

Cochran, *Sampling Techniques*, 3rd ed. (1977), ch. 7 (the regression estimator); Glasserman,
*Monte Carlo Methods in Financial Engineering* (2004), ch. 4, 4.1.1 (control variates with an
estimated coefficient).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.stats.common import check_confidence, scipy_stats
from harness.stats.moments import CoMoments
from harness.stats.paired import paired_difference_from_moments


@dataclass(frozen=True)
class ControlVariateMean:
    """A mean estimated with a control variate (:func:`control_variate_mean`).

    ``mean`` with its t interval ``[lo, hi]`` and two-sided ``p_value`` (H0: mean = 0);
    ``std``: the residual standard deviation per observation (what the interval uses);
    ``beta``: the fitted coefficient; ``raw_mean``: the plain sample mean of y;
    ``variance_reduction``: var(y) / residual variance (1 / (1 - rho^2) for large n).
    """

    mean: float
    lo: float
    hi: float
    std: float
    n: int
    confidence: float
    p_value: float
    beta: float
    raw_mean: float
    variance_reduction: float


#: Below this variance (per observation) a control is treated as constant: no coefficient is fitted.
CV_MIN_VAR: float = 1e-20


def control_variate_mean(
    c: CoMoments, y: int, x: int, known_mean: float = 0.0, confidence: float = 0.95
) -> ControlVariateMean:
    """Regression (control-variate) estimator of the mean of metric ``y`` of ``c``, with metric
    ``x`` as the control, whose true mean ``known_mean`` is known.

    ``beta = S_xy / S_xx`` is fitted on the same data (least squares), the estimate is
    ``mean(y) - beta (mean(x) - known_mean)``: the least-squares line's value at the known mean.
    Its standard error is that of the fitted line at ``known_mean``,
    ``s sqrt(1/n + (mean(x) - known_mean)^2 / S_xx)`` with ``s^2`` the residual variance on
    ``n - 2`` degrees of freedom, and the interval is Student t on ``n - 2`` degrees of freedom
    (Cochran, *Sampling Techniques*, 3rd ed., ch. 7, the regression estimator; Glasserman,
    *Monte Carlo Methods in Financial Engineering*, 4.1.1, control variates with an estimated
    coefficient). Fitting beta costs one degree of freedom and a bias of order 1/n, negligible
    for the thousands of games compared here. A constant control (``S_xx / n <=``
    :data:`CV_MIN_VAR`) fits nothing: the plain mean and its t interval (``beta = 0``).
    With n < 3 everything but the raw mean is NaN.
    """
    confidence = check_confidence(confidence)
    n = c.n
    my = float(c.mean[y]) if n else math.nan
    nan = math.nan
    if n < 3:
        return ControlVariateMean(my, nan, nan, nan, n, confidence, nan, nan, my, nan)
    syy, sxx, sxy = float(c.cm[y, y]), float(c.cm[x, x]), float(c.cm[x, y])
    dx = float(c.mean[x]) - float(known_mean)
    stats = scipy_stats()
    if sxx <= CV_MIN_VAR * n:
        plain = paired_difference_from_moments(c.get(y), confidence)
        return ControlVariateMean(my, plain.lo, plain.hi, plain.std, n, confidence, plain.p_value, 0.0, my, 1.0)
    beta = sxy / sxx
    est = my - beta * dx
    rss = max(syy - sxy * sxy / sxx, 0.0)
    s2 = rss / (n - 2)
    vy = syy / (n - 1)
    vr = vy / s2 if s2 > 0 else math.inf
    se = math.sqrt(s2 * (1.0 / n + dx * dx / sxx))
    if se == 0.0:
        p = 1.0 if est == 0.0 else 0.0
        return ControlVariateMean(est, est, est, 0.0, n, confidence, p, beta, my, vr)
    half = float(stats.t.ppf(0.5 + 0.5 * confidence, n - 2)) * se
    p = float(min(1.0, 2.0 * stats.t.sf(abs(est / se), n - 2)))
    return ControlVariateMean(est, est - half, est + half, math.sqrt(s2), n, confidence, p, beta, my, vr)
