"""The mean of per-observation values that come in clusters (several games of one player), with a
cluster-robust interval and, optionally, a control variate of known mean.

The observations of one cluster are not independent draws: several games of one player share the
player. The variance of the mean is then estimated from the clusters' sums of residuals, the
cluster-robust ("sandwich") variance of Liang & Zeger (1986), *Biometrika* 73:13-22, with the
small-sample factor G / (G - 1) of the CR1 form (Cameron & Miller 2015, "A practitioner's guide
to cluster-robust inference", *J. Human Resources* 50:317-372, section II.C), and the interval is
Student t on G - 1 degrees of freedom (G clusters), as Cameron & Miller recommend for few clusters.
With every observation its own cluster this is the ordinary t interval of the mean.

A control ``x`` of known mean ``m`` (a player's exact luck: mean zero whatever the player's
policy) enters as the regression estimator of :mod:`harness.stats.control_variates`:
``mean(y) - beta (mean(x) - m)`` with ``beta`` the least-squares slope of y on x over the
observations. Its influence per observation is ``u_i = y_i - estimate - beta (x_i - m)``, and the
same cluster-robust variance of the mean of u gives its interval (the error of the fitted beta is
of a smaller order). ``variance_reduction`` is the cluster-robust variance of the plain mean over
that of the controlled estimate, both on the same clusters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.stats.common import check_confidence, t_crit
from harness.stats.control_variates import CV_MIN_VAR
from harness.util.sums import dot


@dataclass(frozen=True)
class ClusteredMean:
    """A mean over clustered observations (:func:`clustered_mean`): ``mean`` with its t interval
    ``[lo, hi]`` and standard error ``se``; ``n`` observations in ``clusters`` clusters; ``beta``
    (0 without a control), ``raw_mean`` (the plain mean) and ``variance_reduction`` (1 without a
    control; ``inf`` when the controlled residuals do not vary)."""

    mean: float
    lo: float
    hi: float
    se: float
    n: int
    clusters: int
    confidence: float
    beta: float
    raw_mean: float
    variance_reduction: float


def _cr1(u: np.ndarray, codes: np.ndarray, g: int) -> float:
    """The CR1 variance of the mean of residuals ``u`` (summing to zero) in ``g`` clusters."""
    sums = np.bincount(codes, weights=u, minlength=g)
    n = u.size
    return g / (g - 1) * dot(sums, sums) / (n * n)


def clustered_mean(
    y: npt.ArrayLike,
    cluster: npt.ArrayLike,
    control: npt.ArrayLike | None = None,
    known_mean: float = 0.0,
    confidence: float = 0.95,
) -> ClusteredMean:
    """The mean of ``y`` with a cluster-robust interval (module docstring), ``cluster`` the label
    of each observation's cluster (any hashable values of one array), and ``control`` (of known
    mean ``known_mean``) as control variate when given. With fewer than 2 clusters the interval
    is NaN (one cluster says nothing of the spread between clusters)."""
    confidence = check_confidence(confidence)
    yv = np.asarray(y, dtype=np.float64).reshape(-1)
    _, codes = np.unique(np.asarray(cluster).reshape(-1), return_inverse=True)
    if codes.size != yv.size:
        raise ValueError(f"{yv.size} observations but {codes.size} cluster labels")
    n = yv.size
    g = int(codes.max()) + 1 if n else 0
    raw = float(yv.mean()) if n else math.nan
    nan = math.nan
    if n == 0:
        return ClusteredMean(nan, nan, nan, nan, 0, 0, confidence, 0.0, nan, 1.0)
    est, beta, u = raw, 0.0, yv - raw
    if control is not None:
        xv = np.asarray(control, dtype=np.float64).reshape(-1)
        if xv.size != n:
            raise ValueError(f"{n} observations but {xv.size} control values")
        dx = xv - xv.mean()
        sxx = dot(dx, dx)
        if sxx > CV_MIN_VAR * n:  # a constant control fits nothing
            beta = dot(dx, yv - raw) / sxx
            est = raw - beta * (float(xv.mean()) - float(known_mean))
            u = yv - est - beta * (xv - float(known_mean))
    if g < 2:
        return ClusteredMean(est, nan, nan, nan, n, g, confidence, beta, raw, nan)
    var = _cr1(u, codes, g)
    plain = _cr1(yv - raw, codes, g) if control is not None else var
    vr = 1.0 if control is None or beta == 0.0 else (plain / var if var > 0 else math.inf)
    se = math.sqrt(max(var, 0.0))
    half = t_crit(confidence, g - 1) * se
    return ClusteredMean(est, est - half, est + half, se, n, g, confidence, beta, raw, vr)
