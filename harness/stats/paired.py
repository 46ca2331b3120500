"""Paired differences (two bots on the same dice): mean difference, t interval and paired t test.

Student (1908), "The probable error of a mean", *Biometrika* 6:1-25: the one-sample t test on the
per-pair differences, as ``scipy.stats.ttest_rel``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.stats.common import check_confidence, scipy_stats, t_crit
from harness.stats.moments import Moments, is_constant, rare_interval


def _as_1d_float(x: npt.ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    # Widen before arithmetic: unsigned or small int dtypes would wrap on
    # subtraction/squaring.
    return arr.astype(np.float64, copy=False)


@dataclass(frozen=True)
class PairedDiff:
    """Mean paired difference ``b - a`` with t interval and two-sided p-value."""

    mean: float
    lo: float
    hi: float
    std: float
    n: int
    confidence: float
    p_value: float


#: Fewest non-zero differences of a bounded figure for a t interval; with fewer (no game moved
#: it, or one), :func:`~harness.stats.moments.rare_interval`.
MOVED_MIN = 2


def paired_difference_from_moments(
    d: Moments, confidence: float = 0.95, bounds: tuple[float, float] | None = None, moved: int | None = None
) -> PairedDiff:
    """Paired t analysis from streamed :class:`Moments` of the differences.

    The p-value is the two-sided one-sample t test of ``mean(d) == 0``
    (Student 1908), identical to ``scipy.stats.ttest_rel(b, a)``. Degenerate
    cases: n < 2 gives NaN interval and p-value; zero variance gives a
    zero-width interval and p = 1 if the mean is 0, else p = 0.

    Sparse differences (a rare figure that a change moves in a few games): ``moved`` is how many
    differences are not 0. The variance then comes from those ``moved`` games only (the others
    are exact zeros), so the t quantile has ``moved - 1`` degrees of freedom rather than n - 1
    (the same when every game moved). ``bounds`` = (a, b), a < 0 < b: every difference is known
    to lie in [a, b] (of two rates: (-1, 1)); with fewer than :data:`MOVED_MIN` games moved, the
    interval is :func:`~harness.stats.moments.rare_interval` around 0 and p = 1, and when every
    difference is the same non-zero value, ``rare_interval`` around it and p the smallest
    ``1 - confidence`` at which it excludes 0. Measured against exact differences
    (benchmarks/BENCHMARKS.md), t intervals with n - 1 degrees of freedom had zero width with no
    game moved and followed the sign of the few that did, missing far more often than stated.
    """
    confidence = check_confidence(confidence)
    if d.n < 2:
        mean = d.mean if d.n else math.nan
        return PairedDiff(mean, math.nan, math.nan, math.nan, d.n, confidence, math.nan)
    std = d.std
    if bounds is not None and (moved is not None and moved < MOVED_MIN or is_constant(d, bounds) and d.mean == 0.0):
        lo, hi = rare_interval(0.0, moved or 0, d.n, bounds, confidence)
        return PairedDiff(d.mean, lo, hi, std, d.n, confidence, 1.0)
    if bounds is not None and is_constant(d, bounds):
        lo, hi = rare_interval(d.mean, 0, d.n, bounds, confidence)
        a, b = float(bounds[0]), float(bounds[1])
        # the interval holds 0 while q >= c / (c - a) (c > 0), i.e. while 1 - confidence <= 2 (-a / (c - a)) ** n
        r = -a / (d.mean - a) if d.mean > 0 else b / (b - d.mean)
        return PairedDiff(d.mean, lo, hi, std, d.n, confidence, min(1.0, 2.0 * max(r, 0.0) ** d.n))
    if d.m2 <= 0.0:
        p = 1.0 if d.mean == 0.0 else 0.0
        return PairedDiff(d.mean, d.mean, d.mean, 0.0, d.n, confidence, p)
    df = d.n - 1 if moved is None else max(1, min(moved, d.n) - 1)
    sem = d.sem
    half = t_crit(confidence, df) * sem
    t_stat = d.mean / sem
    p = float(min(1.0, 2.0 * scipy_stats().t.sf(abs(t_stat), df)))
    return PairedDiff(d.mean, d.mean - half, d.mean + half, std, d.n, confidence, p)


def paired_difference(a: npt.ArrayLike, b: npt.ArrayLike, confidence: float = 0.95) -> PairedDiff:
    """Paired comparison of ``b - a`` matched by index.

    ``a``, ``b``: 1-D arrays of equal length, shape (n,), any real dtype
    (e.g. scores of two bots on the same dice seeds). Positive mean means
    ``b`` scores higher. For streaming use :func:`paired_difference_from_moments`
    on ``Moments.of(b_chunk - a_chunk)`` merged over chunks.
    """
    fa = _as_1d_float(a, "a")
    fb = _as_1d_float(b, "b")
    if fa.shape != fb.shape:
        raise ValueError(
            f"paired_difference needs equal-length arrays matched by index, "
            f"got len(a)={fa.shape[0]} and len(b)={fb.shape[0]}"
        )
    return paired_difference_from_moments(Moments.of(fb - fa), confidence)
