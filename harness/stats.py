"""Statistics for comparing Yatzy bots and rule variants over millions of games.

Everything here is a pure function or a frozen dataclass: no I/O, no printing,
no global state. Large runs (10,000,000+ games) never need to be held in
memory: score summaries are built chunk by chunk with the streaming
accumulators :class:`Moments` (mean/variance) and :class:`IntHistogram`
(exact integer score distribution), which can be merged across chunks,
processes and machines in any order. Win/draw/loss style results are just
integer counts and are summed by the caller.

Contents
--------
* Summaries and intervals: :class:`Moments`, :func:`mean_ci`, :func:`wilson`,
  :func:`rate`, :func:`paired_difference`, :func:`paired_difference_from_moments`.
* Control variates: :class:`CoMoments`, :func:`control_variate_mean` (the
  regression estimator of a mean, with a control of known mean).
* Functions of means: :func:`delta_estimate` (delta-method interval of a smooth
  function of streamed means); multiple testing: :func:`holm`.
* Distributions: :class:`IntHistogram`, :func:`ks_2samp_counts`,
  :func:`anderson_ksamp_counts`.
* Sequential tests: :func:`sprt_bounds`, :func:`sprt_mean`,
  :func:`sprt_trinomial`, :func:`sprt_pentanomial`.
* Ratings: :func:`bradley_terry`, :func:`elo_from_score`,
  :func:`score_from_elo`, :func:`elo_ci_from_pentanomial`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt


def _scipy_stats() -> Any:
    """scipy.stats, imported on first use (it costs about a second, which every CLI command would pay)."""
    from scipy import stats

    return stats

__all__ = [
    "Moments",
    "VecMoments",
    "pentanomial_moments",
    "MeanCI",
    "mean_ci",
    "wilson",
    "Rate",
    "rate",
    "PairedDiff",
    "paired_difference",
    "paired_difference_from_moments",
    "CoMoments",
    "ControlVariateMean",
    "control_variate_mean",
    "Estimate",
    "delta_estimate",
    "holm",
    "IntHistogram",
    "DistTest",
    "ks_2samp_counts",
    "anderson_ksamp_counts",
    "sprt_bounds",
    "SPRTResult",
    "sprt_mean",
    "sprt_trinomial",
    "sprt_pentanomial",
    "SPRT_PSEUDO_COUNT",
    "SPRT_VAR_FLOOR_REL",
    "Ratings",
    "bradley_terry",
    "elo_from_score",
    "score_from_elo",
    "elo_ci_from_pentanomial",
    "ELO_PER_NAT",
]

#: Elo points per natural-log unit of strength: Elo uses 400*log10(gamma).
ELO_PER_NAT: float = 400.0 / math.log(10.0)

#: Pseudo-count given to empty outcome cells by the win/draw/loss SPRTs.
#: Same value as fishtest's ``LLRcalc.regularize`` (an empty cell gets 1e-3
#: games), so a run where every result is identical has a tiny but non-zero
#: variance instead of a division by zero.
SPRT_PSEUDO_COUNT: float = 1e-3

#: Relative variance floor of :func:`sprt_mean`: the variance used is at least
#: ``SPRT_VAR_FLOOR_REL * (mu1 - mu0)**2``.
SPRT_VAR_FLOOR_REL: float = 1e-6

#: Largest score an :class:`IntHistogram` accepts; guards against a stray huge
#: value silently allocating gigabytes in ``np.bincount``.
HIST_MAX_VALUE: int = 1 << 24


def _check_confidence(confidence: float) -> float:
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return confidence


def _z(confidence: float) -> float:
    """Two-sided standard normal critical value."""
    return float(_scipy_stats().norm.ppf(0.5 + 0.5 * _check_confidence(confidence)))


def _t_crit(confidence: float, df: int) -> float:
    """Two-sided Student t critical value."""
    return float(_scipy_stats().t.ppf(0.5 + 0.5 * _check_confidence(confidence), df))


def _as_1d_float(x: npt.ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    # Widen before arithmetic: unsigned or small int dtypes would wrap on
    # subtraction/squaring.
    return arr.astype(np.float64, copy=False)


# ---------------------------------------------------------------------------
# Moments
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Moments:
    """Streaming count/mean/sum-of-squared-deviations accumulator.

    ``m2`` is ``sum((x - mean)**2)``. The empty accumulator is
    ``Moments(0, 0.0, 0.0)`` (``Moments.empty()``) and is the identity of
    :meth:`merge`. Build one per chunk with :meth:`of` and fold them together;
    the result matches a single pass over the concatenated data up to
    floating-point rounding.
    """

    n: int
    mean: float
    m2: float

    def __post_init__(self) -> None:
        # Coerce numpy scalars so results serialise and compare as plain Python.
        object.__setattr__(self, "n", int(self.n))
        object.__setattr__(self, "mean", float(self.mean))
        object.__setattr__(self, "m2", float(self.m2))
        if self.n < 0:
            raise ValueError(f"n must be >= 0, got {self.n}")

    @classmethod
    def empty(cls) -> Moments:
        return cls(0, 0.0, 0.0)

    @classmethod
    def of(cls, values: npt.ArrayLike) -> Moments:
        """Moments of ``values`` (any shape, flattened; any real dtype).

        Two-pass (mean, then squared deviations) for accuracy; memory is a
        float64 copy of the chunk, so feed large runs in chunks.
        """
        x = np.asarray(values).astype(np.float64, copy=False).ravel()
        if x.size == 0:
            return cls.empty()
        mean = float(x.mean())
        d = x - mean
        return cls(int(x.size), mean, float(np.dot(d, d)))

    def merge(self, other: Moments) -> Moments:
        """Combine two disjoint samples.

        Chan, Golub & LeVeque (1979) pairwise update, which stays accurate
        when the chunks have very different means or sizes.
        """
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        m2 = self.m2 + other.m2 + delta * delta * (self.n * other.n / n)
        return Moments(n, mean, m2)

    def __add__(self, other: Moments) -> Moments:
        return self.merge(other)

    @property
    def var(self) -> float:
        """Sample variance (ddof=1); NaN when n < 2."""
        return self.m2 / (self.n - 1) if self.n >= 2 else math.nan

    @property
    def std(self) -> float:
        """Sample standard deviation (ddof=1); NaN when n < 2."""
        return math.sqrt(self.var) if self.n >= 2 else math.nan

    @property
    def sem(self) -> float:
        """Standard error of the mean, ``std / sqrt(n)``; NaN when n < 2."""
        return self.std / math.sqrt(self.n) if self.n >= 2 else math.nan


# ---------------------------------------------------------------------------
# Mean confidence interval
# ---------------------------------------------------------------------------


@dataclass
class VecMoments:
    """Streaming count/mean/M2 of M metrics observed together (float64 arrays of shape (M,)); mutable."""

    n: int
    mean: np.ndarray
    m2: np.ndarray

    @classmethod
    def empty(cls, m: int) -> VecMoments:
        return cls(0, np.zeros(m), np.zeros(m))

    def add(self, x: np.ndarray) -> None:
        """Fold a (B, M) block of observations (Chan et al. pairwise update, per column)."""
        b = x.shape[0]
        if b == 0:
            return
        mb = x.mean(axis=0)
        m2b = ((x - mb) ** 2).sum(axis=0)
        n = self.n + b
        delta = mb - self.mean
        self.mean = self.mean + delta * (b / n)
        self.m2 = self.m2 + m2b + delta * delta * (self.n * b / n)
        self.n = n

    def get(self, j: int) -> Moments:
        return Moments(self.n, float(self.mean[j]), float(self.m2[j]))


def pentanomial_moments(counts: npt.ArrayLike) -> Moments:
    """Moments of per-pair scores (0, .25, .5, .75, 1) from pentanomial counts (length 5).

    A pair of games on the same dice with seats swapped is one observation of the pair's mean
    score; its moments give the interval that respects the correlation inside a pair.
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.shape != (5,):
        raise ValueError(f"pentanomial counts must have length 5, got shape {c.shape}")
    n = int(c.sum())
    if n == 0:
        return Moments.empty()
    x = np.linspace(0.0, 1.0, 5)
    mean = float(np.dot(c, x) / n)
    return Moments(n, mean, float(np.dot(c, (x - mean) ** 2)))


@dataclass(frozen=True)
class MeanCI:
    """Mean with a two-sided Student-t confidence interval ``[lo, hi]``."""

    mean: float
    lo: float
    hi: float
    std: float
    n: int
    confidence: float


def mean_ci(x: npt.ArrayLike | Moments, confidence: float = 0.95) -> MeanCI:
    """Student-t confidence interval for the mean.

    ``x`` is a 1-D array of observations (any real dtype) or a :class:`Moments`
    built from them. ``std`` is the sample standard deviation (ddof=1).
    With n < 2 the interval (and std) is NaN; with n == 0 the mean is NaN too.
    """
    confidence = _check_confidence(confidence)
    m = x if isinstance(x, Moments) else Moments.of(x)
    if m.n == 0:
        return MeanCI(math.nan, math.nan, math.nan, math.nan, 0, confidence)
    if m.n < 2:
        return MeanCI(m.mean, math.nan, math.nan, math.nan, m.n, confidence)
    half = _t_crit(confidence, m.n - 1) * m.sem
    return MeanCI(m.mean, m.mean - half, m.mean + half, m.std, m.n, confidence)


# ---------------------------------------------------------------------------
# Proportions
# ---------------------------------------------------------------------------


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``k / n``.

    Returns ``(lo, hi)`` clipped to [0, 1]; ``n == 0`` gives ``(0.0, 1.0)``.
    """
    # Wilson (1927), "Probable inference, the law of succession, and
    # statistical inference", JASA 22:209-212. Chosen over the Wald interval
    # because win rates near 0 or 1 (strong vs weak bots) are common here and
    # Wald collapses to zero width there.
    k, n = int(k), int(n)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    z = _z(confidence)
    if n == 0:
        return (0.0, 1.0)
    z2 = z * z
    denom = n + z2
    centre = (k + z2 / 2.0) / denom
    half = (z / denom) * math.sqrt(k * (n - k) / n + z2 / 4.0)
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)


@dataclass(frozen=True)
class Rate:
    """A proportion ``k / n`` with its Wilson interval; ``rate`` is NaN if n == 0."""

    k: int
    n: int
    rate: float
    lo: float
    hi: float


def rate(k: int, n: int, confidence: float = 0.95) -> Rate:
    """Proportion ``k / n`` with a Wilson score interval (see :func:`wilson`)."""
    lo, hi = wilson(k, n, confidence)
    return Rate(int(k), int(n), int(k) / int(n) if n else math.nan, lo, hi)


# ---------------------------------------------------------------------------
# Paired differences
# ---------------------------------------------------------------------------


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


def paired_difference_from_moments(d: Moments, confidence: float = 0.95) -> PairedDiff:
    """Paired t analysis from streamed :class:`Moments` of the differences.

    The p-value is the two-sided one-sample t test of ``mean(d) == 0``
    (Student 1908), identical to ``scipy.stats.ttest_rel(b, a)``. Degenerate
    cases: n < 2 gives NaN interval and p-value; zero variance gives a
    zero-width interval and p = 1 if the mean is 0, else p = 0.
    """
    confidence = _check_confidence(confidence)
    if d.n < 2:
        mean = d.mean if d.n else math.nan
        return PairedDiff(mean, math.nan, math.nan, math.nan, d.n, confidence, math.nan)
    std = d.std
    if d.m2 <= 0.0:
        p = 1.0 if d.mean == 0.0 else 0.0
        return PairedDiff(d.mean, d.mean, d.mean, 0.0, d.n, confidence, p)
    sem = d.sem
    half = _t_crit(confidence, d.n - 1) * sem
    t_stat = d.mean / sem
    p = float(min(1.0, 2.0 * _scipy_stats().t.sf(abs(t_stat), d.n - 1)))
    return PairedDiff(d.mean, d.mean - half, d.mean + half, std, d.n, confidence, p)


def paired_difference(
    a: npt.ArrayLike, b: npt.ArrayLike, confidence: float = 0.95
) -> PairedDiff:
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


# ---------------------------------------------------------------------------
# Control variates
# ---------------------------------------------------------------------------


@dataclass
class CoMoments:
    """Streaming count, means and co-moment matrix of M metrics observed together; mutable.

    ``mean``: float64 (M,); ``cm``: float64 (M, M), ``sum((x - mean)(x - mean)^T)`` over the
    observations. Built block by block with :meth:`add` (Chan et al. pairwise update, as
    :class:`VecMoments`), so a long run never needs its rows in memory.
    """

    n: int
    mean: np.ndarray
    cm: np.ndarray

    @classmethod
    def empty(cls, m: int) -> CoMoments:
        return cls(0, np.zeros(m), np.zeros((m, m)))

    @classmethod
    def of(cls, x: npt.ArrayLike) -> CoMoments:
        """Co-moments of the rows of ``x``: (N, M) observations."""
        a = np.asarray(x, dtype=np.float64)
        c = cls.empty(a.shape[1])
        c.add(a)
        return c

    def add(self, x: np.ndarray) -> None:
        """Fold a (B, M) block of observations."""
        x = np.asarray(x, dtype=np.float64)
        b = x.shape[0]
        if b == 0:
            return
        mb = x.mean(axis=0)
        d = x - mb
        cmb = d.T @ d
        n = self.n + b
        delta = mb - self.mean
        self.mean = self.mean + delta * (b / n)
        self.cm = self.cm + cmb + np.outer(delta, delta) * (self.n * b / n)
        self.n = n

    def get(self, j: int) -> Moments:
        """The :class:`Moments` of metric ``j`` alone."""
        return Moments(self.n, float(self.mean[j]), float(self.cm[j, j]))


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


def control_variate_mean(c: CoMoments, y: int, x: int, known_mean: float = 0.0,
                         confidence: float = 0.95) -> ControlVariateMean:
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
    confidence = _check_confidence(confidence)
    n = c.n
    my = float(c.mean[y]) if n else math.nan
    nan = math.nan
    if n < 3:
        return ControlVariateMean(my, nan, nan, nan, n, confidence, nan, nan, my, nan)
    syy, sxx, sxy = float(c.cm[y, y]), float(c.cm[x, x]), float(c.cm[x, y])
    dx = float(c.mean[x]) - float(known_mean)
    stats = _scipy_stats()
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


# ---------------------------------------------------------------------------
# Functions of means (delta method) and multiple testing
# ---------------------------------------------------------------------------


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


def delta_estimate(c: CoMoments, value: float, grad: npt.ArrayLike, confidence: float = 0.95,
                   bounds: tuple[float, float] = (-math.inf, math.inf)) -> Estimate:
    """Interval of ``value = f(mean)``, a smooth function of the means of the metrics of ``c``,
    by the delta method: ``se^2 = grad' S grad / n`` with ``S`` the sample covariance of the
    observations (ddof 1) and ``grad`` (M,) the gradient of f at the sample means.

    Student t on n - 1 degrees of freedom, so for a single mean (``grad`` a unit vector) this is
    exactly :func:`mean_ci` (Cramér, *Mathematical Methods of Statistics*, 1946, 28.4; the
    observations must be independent: one per game). The interval is clipped to ``bounds`` (a
    share stays in [0, 1]); the p-value tests value = 0. Zero variance gives a zero-width
    interval and p = 1 if the value is 0, else 0. With n < 2 everything but the value is NaN.
    """
    confidence = _check_confidence(confidence)
    n = c.n
    nan = math.nan
    if n < 2 or not math.isfinite(value):
        return Estimate(value, nan, nan, nan, n, confidence, nan)
    g = np.asarray(grad, dtype=np.float64)
    var = float(g @ c.cm @ g) / (n - 1) / n
    lo_b, hi_b = bounds
    if var <= 0.0:
        p = 1.0 if value == 0.0 else 0.0
        return Estimate(value, max(lo_b, value), min(hi_b, value), 0.0, n, confidence, p)
    se = math.sqrt(var)
    half = _t_crit(confidence, n - 1) * se
    p = float(min(1.0, 2.0 * _scipy_stats().t.sf(abs(value / se), n - 1)))
    return Estimate(value, max(lo_b, value - half), min(hi_b, value + half), se, n, confidence, p)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979, *Scand. J. Statist.* 6:65-70): reject the
    hypotheses whose adjusted p-value is below alpha and the family-wise error rate is at most
    alpha, whatever the dependence between the tests. NaN p-values are kept as NaN and do not count
    as tests."""
    p = [float(x) for x in p_values]
    live = sorted((x, i) for i, x in enumerate(p) if not math.isnan(x))
    m = len(live)
    out = [math.nan] * len(p)
    running = 0.0
    for k, (x, i) in enumerate(live):
        running = max(running, min(1.0, (m - k) * x))
        out[i] = running
    return out


# ---------------------------------------------------------------------------
# Integer histograms
# ---------------------------------------------------------------------------


def _int_values(values: npt.ArrayLike) -> np.ndarray:
    """Validate and flatten integer-valued scores to an int64 array."""
    arr = np.asarray(values).ravel()
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.floor(arr)):
            raise ValueError("histogram values must be integers")
    elif arr.dtype.kind not in "iub":
        raise TypeError(f"histogram values must be integers, got dtype {arr.dtype}")
    lo, hi = arr.min(), arr.max()
    if lo < 0:
        raise ValueError(f"histogram values must be >= 0, got {lo}")
    if hi > HIST_MAX_VALUE:
        raise ValueError(f"histogram value {hi} exceeds HIST_MAX_VALUE={HIST_MAX_VALUE}")
    return arr.astype(np.int64, copy=False)


def _rank_inverted_cdf(n: int, q: np.ndarray) -> np.ndarray:
    """0-based order-statistic index of the inverted-CDF quantile.

    Mirrors numpy's own arithmetic for ``method="inverted_cdf"`` (virtual
    index ``n*q - 1``, rounded up unless it is exactly integral, clipped at 0)
    so that float rounding of ``n*q`` lands on the same order statistic.
    """
    idx = n * q - 1.0
    prev = np.floor(idx)
    rank = np.where(idx - prev == 0, prev, prev + 1).astype(np.int64)
    return np.clip(rank, 0, n - 1)


@dataclass(frozen=True, eq=False)
class IntHistogram:
    """Exact histogram of non-negative integer scores; immutable.

    ``counts``: int64 array, shape (max_value + 1,), ``counts[v]`` = number of
    observations equal to ``v``. The array is copied and made read-only.

    Immutable by design: :meth:`add` and :meth:`merge` return a new histogram
    (cost O(max_value + chunk), negligible for Yatzy's ~0..1600 range), so a
    histogram can be shared between threads and used as a dict value safely.
    Typical streaming use::

        h = IntHistogram.empty()
        for chunk in chunks:
            h = h.add(chunk)

    Equality compares the distributions, ignoring trailing zero counts.

    Quantile definition: the inverted empirical CDF ("lower", Hyndman & Fan
    1996 definition 1), i.e. the smallest observed value ``v`` with
    ``#(x <= v) >= n*q`` (the minimum for q = 0). This is exactly
    ``np.quantile(raw, q, method="inverted_cdf")`` /
    ``np.percentile(raw, p, method="inverted_cdf")``; results are always
    observed integer scores, never interpolated.
    """

    counts: np.ndarray

    def __post_init__(self) -> None:
        c = np.array(self.counts, dtype=np.int64, copy=True).ravel()
        if c.size and c.min() < 0:
            raise ValueError("histogram counts must be >= 0")
        c.setflags(write=False)
        object.__setattr__(self, "counts", c)

    # -- construction -------------------------------------------------------

    @classmethod
    def empty(cls) -> IntHistogram:
        return cls(np.zeros(0, dtype=np.int64))

    @classmethod
    def of(cls, values: npt.ArrayLike) -> IntHistogram:
        """Histogram of integer-valued ``values`` (any shape; ints or integral floats)."""
        return cls.empty().add(values)

    def add(self, values: npt.ArrayLike) -> IntHistogram:
        """New histogram with ``values`` (any shape, integer-valued, >= 0) added."""
        v = _int_values(values)
        if v.size == 0:
            return self
        return self.merge(IntHistogram(np.bincount(v)))

    def merge(self, other: IntHistogram) -> IntHistogram:
        """New histogram of the union of both samples."""
        a, b = self.counts, other.counts
        size = max(a.size, b.size)
        out = np.zeros(size, dtype=np.int64)
        out[: a.size] += a
        out[: b.size] += b
        return IntHistogram(out)

    def __add__(self, other: IntHistogram) -> IntHistogram:
        return self.merge(other)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IntHistogram):
            return NotImplemented
        return bool(np.array_equal(np.trim_zeros(self.counts, "b"),
                                   np.trim_zeros(other.counts, "b")))

    __hash__ = None  # type: ignore[assignment]

    # -- summaries ----------------------------------------------------------

    @property
    def values(self) -> np.ndarray:
        """Score values indexed like ``counts``: int64, shape (len(counts),)."""
        return np.arange(self.counts.size, dtype=np.int64)

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def moments(self) -> Moments:
        """Exact :class:`Moments` of the histogrammed data."""
        n = self.n
        if n == 0:
            return Moments.empty()
        v = self.values.astype(np.float64)
        c = self.counts.astype(np.float64)
        # Integer sum is exact for any realistic run (n*max < 9.2e18).
        mean = float(np.dot(self.counts, self.values)) / n
        d = v - mean
        return Moments(n, mean, float(np.dot(c, d * d)))

    @property
    def mean(self) -> float:
        """Mean score; NaN when empty."""
        n = self.n
        return float(np.dot(self.counts, self.values)) / n if n else math.nan

    @property
    def var(self) -> float:
        """Sample variance (ddof=1); NaN when n < 2."""
        return self.moments().var

    @property
    def std(self) -> float:
        """Sample standard deviation (ddof=1); NaN when n < 2."""
        return self.moments().std

    @property
    def min(self) -> int:
        nz = np.flatnonzero(self.counts)
        if nz.size == 0:
            raise ValueError("empty histogram has no min")
        return int(nz[0])

    @property
    def max(self) -> int:
        nz = np.flatnonzero(self.counts)
        if nz.size == 0:
            raise ValueError("empty histogram has no max")
        return int(nz[-1])

    def cdf(self) -> np.ndarray:
        """Empirical CDF ``F[v] = P(X <= v)``: float64, shape (len(counts),)."""
        n = self.n
        if n == 0:
            raise ValueError("empty histogram has no CDF")
        return np.cumsum(self.counts) / n

    def quantile(self, q: npt.ArrayLike) -> Any:
        """Inverted-CDF quantile(s) for ``q`` in [0, 1] (see class docstring).

        Scalar ``q`` returns an ``int``; array ``q`` returns an int64 array of
        the same shape.
        """
        n = self.n
        if n == 0:
            raise ValueError("quantile of an empty histogram")
        qa = np.asarray(q, dtype=np.float64)
        if np.any(~((qa >= 0.0) & (qa <= 1.0))):
            raise ValueError("quantiles must be in [0, 1]")
        rank = _rank_inverted_cdf(n, qa)
        # Value holding the order statistic of 0-based rank r is the first v
        # with cumulative count > r.
        out = np.searchsorted(np.cumsum(self.counts), rank, side="right").astype(np.int64)
        return int(out) if out.ndim == 0 else out

    def percentiles(self, qs: npt.ArrayLike) -> Any:
        """Inverted-CDF percentile(s) for ``qs`` in [0, 100].

        Divides by 100 exactly as ``np.percentile`` does before ranking, so
        results agree with ``np.percentile(raw, qs, method="inverted_cdf")``.
        Scalar in, ``int`` out; array in, int64 array out.
        """
        qa = np.true_divide(np.asarray(qs, dtype=np.float64), 100)
        if np.any(~((qa >= 0.0) & (qa <= 1.0))):
            raise ValueError("percentiles must be in [0, 100]")
        return self.quantile(qa)


# ---------------------------------------------------------------------------
# Two-sample distribution tests on histograms
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DistTest:
    """Result of a two-sample distribution test."""

    statistic: float
    p_value: float
    method: str


def _hist_counts(h: npt.ArrayLike | IntHistogram, name: str) -> np.ndarray:
    c = h.counts if isinstance(h, IntHistogram) else np.asarray(h)
    if c.ndim != 1:
        raise ValueError(f"{name} must be 1-D counts, got shape {c.shape}")
    if c.size and (c.dtype.kind not in "iub" and not np.all(c == np.floor(c))):
        raise ValueError(f"{name} must hold integer counts")
    c = c.astype(np.int64)
    if c.size and c.min() < 0:
        raise ValueError(f"{name} counts must be >= 0")
    if c.sum() == 0:
        raise ValueError(f"{name} is empty")
    return c


def _pad_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    size = max(a.size, b.size)
    return np.pad(a, (0, size - a.size)), np.pad(b, (0, size - b.size))


def ks_2samp_counts(
    counts_a: npt.ArrayLike | IntHistogram, counts_b: npt.ArrayLike | IntHistogram
) -> DistTest:
    """Two-sample, two-sided Kolmogorov–Smirnov test from integer histograms.

    ``counts_a``, ``counts_b``: int arrays (shape (La,), (Lb,); ``counts[v]`` is
    the number of observations equal to ``v``) or :class:`IntHistogram`.

    The statistic ``D = max_v |F_a(v) - F_b(v)|`` is computed with the same
    arithmetic as ``scipy.stats.ks_2samp`` and equals its statistic on the raw
    data. The p-value is Smirnov's asymptotic one, exactly as scipy's
    ``method="asymp"``: ``kstwo.sf(D, round(n_a*n_b/(n_a+n_b)))`` (n_eff is
    floored at 1). For small samples scipy's default exact mode differs.

    Ties: scores are discrete, so the null distribution of D is stochastically
    smaller than the continuous one the p-value assumes; the p-value is
    therefore conservative (too large), never anti-conservative.
    """
    a = _hist_counts(counts_a, "counts_a")
    b = _hist_counts(counts_b, "counts_b")
    a, b = _pad_pair(a, b)
    n1, n2 = int(a.sum()), int(b.sum())
    # Between observed values both ECDFs are flat, so evaluating at every
    # integer gives the same maximum as scipy's evaluation at the data points.
    diffs = np.cumsum(a) / n1 - np.cumsum(b) / n2
    d = float(max(np.clip(-diffs.min(), 0.0, 1.0), diffs.max()))
    # Smirnov (1939) / scipy's effective sample size for the two-sample case.
    m, n = sorted([float(n1), float(n2)], reverse=True)
    en = m * n / (m + n)
    # scipy would pass n_eff = 0 (NaN p) for two single observations; 1 keeps
    # the p-value defined and changes nothing for any sample worth testing.
    p = float(np.clip(_scipy_stats().kstwo.sf(d, max(1.0, np.round(en))), 0.0, 1.0))
    return DistTest(d, p, "ks_2samp asymptotic (kstwo, n_eff=round(n1*n2/(n1+n2)))")


def anderson_ksamp_counts(
    counts_a: npt.ArrayLike | IntHistogram,
    counts_b: npt.ArrayLike | IntHistogram,
    max_n: int = 2_000_000,
) -> DistTest:
    """Two-sample Anderson–Darling test (Scholz & Stephens 1987, midrank/ties).

    Expands both histograms to raw data and calls
    ``scipy.stats.anderson_ksamp(..., variant="midrank")``, so it is meant for
    moderate samples only: raises ``ValueError`` when ``n_a + n_b > max_n``.
    The p-value is scipy's table interpolation, clipped to [0.001, 0.25]
    (scipy's warning about the clipping is suppressed; treat 0.001 as
    "<= 0.001" and 0.25 as ">= 0.25"). More sensitive than KS to tail
    differences.
    """
    a = _hist_counts(counts_a, "counts_a")
    b = _hist_counts(counts_b, "counts_b")
    total = int(a.sum() + b.sum())
    if total > max_n:
        raise ValueError(f"anderson_ksamp_counts needs raw data; n={total} > max_n={max_n}")
    xa = np.repeat(np.arange(a.size), a)
    xb = np.repeat(np.arange(b.size), b)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="p-value (capped|floored)")
        res = _scipy_stats().anderson_ksamp([xa, xb], variant="midrank")
    return DistTest(float(res.statistic), float(res.pvalue), "anderson_ksamp midrank")


# ---------------------------------------------------------------------------
# Sequential probability ratio tests
# ---------------------------------------------------------------------------


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's SPRT log-likelihood-ratio bounds ``(lower, upper)``.

    ``lower = log(beta / (1 - alpha))`` (accept H0), ``upper =
    log((1 - beta) / alpha)`` (accept H1) -- Wald (1945), "Sequential tests of
    statistical hypotheses", Ann. Math. Stat. 16:117-186.
    """
    alpha, beta = float(alpha), float(beta)
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(f"need 0 < alpha, beta and alpha + beta < 1; got {alpha}, {beta}")
    return (math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha))


@dataclass(frozen=True)
class SPRTResult:
    """State of a sequential test after ``n`` observations.

    ``llr`` > 0 favours H1. ``decision`` is "H1" once ``llr >= upper``, "H0"
    once ``llr <= lower``, otherwise "continue". ``h0``/``h1`` are the
    hypotheses in the test's own units (score difference for
    :func:`sprt_mean`, logistic Elo for the win/draw/loss tests) and
    ``estimate`` is the observed mean in the same units as the LLR formula
    uses (mean difference, or mean score per game in [0, 1]). ``n`` counts
    observations: games for :func:`sprt_mean`/:func:`sprt_trinomial`, game
    *pairs* for :func:`sprt_pentanomial`.
    """

    llr: float
    lower: float
    upper: float
    decision: Literal["H0", "H1", "continue"]
    n: int
    h0: float
    h1: float
    alpha: float
    beta: float
    estimate: float


def _decide(llr: float, lower: float, upper: float) -> Literal["H0", "H1", "continue"]:
    if llr >= upper:
        return "H1"
    if llr <= lower:
        return "H0"
    return "continue"


def _gsprt_normal(n: float, mean: float, var: float, m0: float, m1: float) -> float:
    # Generalised SPRT with a Brownian-motion (normal) approximation of the
    # per-observation LLR: Van den Bergh, "A simple approximation of the
    # GSPRT" (cantate.be/Fishtest/GSPRT_approximation.pdf), the formula behind
    # fishtest's LLRcalc.LLR_alt2: LLR = n (m1-m0)(2*mean - m0 - m1) / (2 var).
    return n * (m1 - m0) * (2.0 * mean - m0 - m1) / (2.0 * var)


def sprt_mean(
    d: Moments, mu0: float, mu1: float, alpha: float = 0.05, beta: float = 0.05
) -> SPRTResult:
    """GSPRT for the mean of paired score differences (H0: mu0 vs H1: mu1).

    ``d`` holds streamed :class:`Moments` of per-game differences
    (candidate - baseline). Normal approximation with the variance estimated
    from the data (sample variance, ddof=1):
    ``LLR = n (mu1-mu0)(2*mean - mu0 - mu1) / (2 var)``.

    Regularisation: the variance used is
    ``max(var, SPRT_VAR_FLOOR_REL * (mu1 - mu0)**2)``, so identical bots
    (every difference 0) give a large finite LLR towards whichever hypothesis
    is nearer instead of dividing by zero. With n < 2 there is no variance
    estimate; the LLR is 0 and the decision "continue".
    """
    mu0, mu1 = float(mu0), float(mu1)
    if mu0 == mu1:
        raise ValueError("mu0 and mu1 must differ")
    lower, upper = sprt_bounds(alpha, beta)
    if d.n < 2:
        llr = 0.0
    else:
        var = max(d.var, SPRT_VAR_FLOOR_REL * (mu1 - mu0) ** 2)
        llr = _gsprt_normal(d.n, d.mean, var, mu0, mu1)
    return SPRTResult(llr, lower, upper, _decide(llr, lower, upper), d.n, mu0, mu1,
                      float(alpha), float(beta), d.mean if d.n else math.nan)


def _sprt_outcomes(
    counts: Sequence[float], elo0: float, elo1: float, alpha: float, beta: float
) -> SPRTResult:
    """Shared GSPRT for equally spaced outcome categories scored 0..1."""
    c = np.asarray(counts, dtype=np.float64)
    if np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ValueError("outcome counts must be finite and >= 0")
    elo0, elo1 = float(elo0), float(elo1)
    if elo0 == elo1:
        raise ValueError("elo0 and elo1 must differ")
    lower, upper = sprt_bounds(alpha, beta)
    n = int(round(c.sum()))
    if n == 0:
        return SPRTResult(0.0, lower, upper, "continue", 0, elo0, elo1,
                          float(alpha), float(beta), math.nan)
    # Per-game score of each category: pair totals 0..2 are halved so the
    # mean is directly comparable with score_from_elo.
    scores = np.linspace(0.0, 1.0, c.size)
    # fishtest LLRcalc.regularize: empty cells get a tiny pseudo-count so the
    # variance is never zero when all results are identical.
    creg = np.where(c == 0, SPRT_PSEUDO_COUNT, c)
    p = creg / creg.sum()
    mean = float(np.dot(p, scores))
    var = float(np.dot(p, (scores - mean) ** 2))
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    llr = _gsprt_normal(float(c.sum()), mean, var, s0, s1)
    raw_mean = float(np.dot(c, scores) / c.sum())
    return SPRTResult(llr, lower, upper, _decide(llr, lower, upper), n, elo0, elo1,
                      float(alpha), float(beta), raw_mean)


def sprt_trinomial(
    wins: int, draws: int, losses: int, elo0: float, elo1: float,
    alpha: float = 0.05, beta: float = 0.05,
) -> SPRTResult:
    """GSPRT on independent games, H0: ``elo0`` vs H1: ``elo1`` (logistic Elo).

    Per-game score is 1/0.5/0 for win/draw/loss; with ``s = 1/(1+10^(-elo/400))``
    and ``var`` the per-game score variance (population, after regularisation),
    ``LLR = N (s1-s0)(2*mean - s0 - s1) / (2 var)``. Empty outcome cells get a
    pseudo-count of :data:`SPRT_PSEUDO_COUNT` for the mean/variance only
    (as fishtest does); N is the real number of games.
    """
    return _sprt_outcomes([losses, draws, wins], elo0, elo1, alpha, beta)


def sprt_pentanomial(
    counts: Sequence[int], elo0: float, elo1: float,
    alpha: float = 0.05, beta: float = 0.05,
) -> SPRTResult:
    """GSPRT on paired games, H0: ``elo0`` vs H1: ``elo1`` (logistic Elo).

    ``counts``: length 5, numbers of game pairs in which the candidate scored
    0, 0.5, 1, 1.5, 2 points out of 2 (fishtest's LL, LD, LW+DD, DW, WW).
    Pairs (e.g. both seats on the same dice) are the independent unit, which
    captures the correlation inside a pair (fishtest's pentanomial model,
    Van den Bergh's "normalized Elo" notes). With pair score halved to a per-game
    score x in {0, .25, .5, .75, 1}, ``mean``/``var`` its mean and population
    variance over pairs and N the number of pairs:
    ``LLR = N (s1-s0)(2*mean - s0 - s1) / (2 var)``, ``s = 1/(1+10^(-elo/400))``.
    Empty cells get a pseudo-count of :data:`SPRT_PSEUDO_COUNT` for the
    mean/variance only, as fishtest does.
    """
    if len(counts) != 5:
        raise ValueError(f"pentanomial counts must have length 5, got {len(counts)}")
    return _sprt_outcomes(counts, elo0, elo1, alpha, beta)


# ---------------------------------------------------------------------------
# Elo helpers
# ---------------------------------------------------------------------------


def score_from_elo(elo: npt.ArrayLike) -> Any:
    """Expected score ``1 / (1 + 10^(-elo/400))`` (logistic Elo).

    Scalar in, ``float`` out; array in, float64 array out.
    """
    e = np.asarray(elo, dtype=np.float64)
    out = 1.0 / (1.0 + np.power(10.0, -e / 400.0))
    return float(out) if out.ndim == 0 else out


def elo_from_score(s: npt.ArrayLike) -> Any:
    """Inverse of :func:`score_from_elo`: ``-400 log10(1/s - 1)``.

    ``s = 0`` and ``s = 1`` map to ``-inf``/``+inf``; outside [0, 1] raises.
    Scalar in, ``float`` out; array in, float64 array out.
    """
    sa = np.asarray(s, dtype=np.float64)
    if np.any(~((sa >= 0.0) & (sa <= 1.0))):
        raise ValueError("score must be in [0, 1]")
    with np.errstate(divide="ignore"):
        out = 400.0 * (np.log10(sa) - np.log10(1.0 - sa))
    return float(out) if out.ndim == 0 else out


def elo_ci_from_pentanomial(
    counts: Sequence[int], confidence: float = 0.95
) -> tuple[float, float, float]:
    """Logistic-Elo estimate and normal CI ``(elo, lo, hi)`` from pentanomial counts.

    Mean per-game score over pairs, its standard error from the variance of
    pair scores (pairs are the independent unit), interval built on the score
    scale and mapped through :func:`elo_from_score` (clipped to [0, 1], so a
    perfect record gives ``inf``). No regularisation is applied.
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.shape != (5,) or np.any(c < 0):
        raise ValueError("pentanomial counts must be 5 non-negative numbers")
    n = c.sum()
    if n == 0:
        raise ValueError("no game pairs")
    scores = np.linspace(0.0, 1.0, 5)
    mean = float(np.dot(c, scores) / n)
    var = float(np.dot(c, (scores - mean) ** 2) / n)
    half = _z(confidence) * math.sqrt(var / n)
    clip = lambda x: min(1.0, max(0.0, x))  # noqa: E731
    return (elo_from_score(mean), elo_from_score(clip(mean - half)),
            elo_from_score(clip(mean + half)))


# ---------------------------------------------------------------------------
# Bradley–Terry ratings
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Ratings:
    """Bradley–Terry ratings on the Elo scale, mean rating 0.

    ``elo``, ``lo``, ``hi``, ``se``: float64, shape (K,), in ``names`` order.
    ``se`` is each rating's standard error relative to the field mean;
    ``cov`` (float64, shape (K, K), Elo^2) is the full covariance, so the SE of
    a difference is ``sqrt(cov[i,i] + cov[j,j] - 2 cov[i,j])``.
    ``lo``/``hi`` are normal intervals ``elo -/+ z * se``.
    ``sweeps``: (winner, loser) pairs where the winner took every point of
    their games (perfect separation): the maximum-likelihood gap is infinite,
    so the finite figure rests on the prior; the winner's rating is then a
    lower bound and the loser's an upper bound.
    """

    names: tuple[str, ...]
    elo: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    se: np.ndarray
    cov: np.ndarray
    confidence: float
    sweeps: tuple[tuple[str, str], ...] = ()

    def bound(self, i: int) -> str | None:
        """"lower", "upper", "both" or None: what the prior, not the games, fixes of entrant i."""
        name = self.names[i]
        won = any(a == name for a, _ in self.sweeps)
        lost = any(b == name for _, b in self.sweeps)
        return "both" if won and lost else "lower" if won else "upper" if lost else None

    def table(self) -> list[dict[str, Any]]:
        """Rows ``{rank, name, elo, lo, hi, se, bound, note}`` sorted by Elo, best first."""
        order = sorted(range(len(self.names)), key=lambda i: (-self.elo[i], self.names[i]))
        rows = []
        for r, i in enumerate(order):
            name = self.names[i]
            beat = sorted(b for a, b in self.sweeps if a == name)
            lost = sorted(a for a, b in self.sweeps if b == name)
            note = "; ".join(([f"won every game against {', '.join(beat)}"] if beat else [])
                             + ([f"lost every game against {', '.join(lost)}"] if lost else []))
            rows.append({
                "rank": r + 1,
                "name": name,
                "elo": float(self.elo[i]),
                "lo": float(self.lo[i]),
                "hi": float(self.hi[i]),
                "se": float(self.se[i]),
                "bound": self.bound(i),
                "note": note or None,
            })
        return rows


def bradley_terry(
    names: Sequence[str],
    wins: npt.ArrayLike,
    confidence: float = 0.95,
    *,
    prior: float = 0.5,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> Ratings:
    """Bradley–Terry ratings from a matrix of points.

    ``wins``: float array, shape (K, K), ``wins[i, j]`` = points of ``i``
    against ``j`` (wins + 0.5 * draws), zero diagonal; ``wins[i,j] +
    wins[j,i]`` is the number of games between them.

    * Prior: ``prior`` points are added to *both* ``wins[i,j]`` and
      ``wins[j,i]`` for every pair i != j, i.e. the default 0.5 is one virtual
      drawn game per pair (the usual fix for separation, as in BayesElo's
      virtual draws). It keeps an undefeated (or winless) entrant finite and
      makes the comparison graph connected; it shrinks ratings slightly towards
      0, negligibly once pairs have played thousands of games. Pairs where one
      side took every point are listed in ``Ratings.sweeps``: their gap is set
      by the prior, not by the games.
    * Fitting: the posterior mode, by Newton's method on the log-strengths
      (the log-likelihood is concave; the Hessian is minus the Fisher
      information below) with step halving, from Hunter's (2004) MM update as
      the starting point. Newton converges quadratically even when strengths
      differ by factors of 10^4 (a sweep over 20,000 games), where MM alone
      needs millions of iterations. Stops when the largest step is below
      ``tol``.
    * Anchor: ratings are ``400 log10(strength)`` re-centred to mean 0.
    * Errors: Fisher information of the log-strengths (including the prior's
      virtual games), ``I_ii = sum_j n_ij p_ij p_ji``, ``I_ij = -n_ij p_ij p_ji``;
      it is singular along the all-ones direction, and its Moore–Penrose
      pseudo-inverse is the covariance under the sum-to-zero anchor. Draws are
      treated as half a win, so SEs are slightly conservative when draws are
      common.

    Raises ``RuntimeError`` if Newton has not converged after ``max_iter`` steps
    (it does not happen for any finite matrix with the prior; a guard only).
    """
    confidence = _check_confidence(confidence)
    names_t = tuple(str(x) for x in names)
    k = len(names_t)
    if k == 0:
        raise ValueError("need at least one entrant")
    if len(set(names_t)) != k:
        raise ValueError("names must be unique")
    w = np.array(wins, dtype=np.float64)
    if w.shape != (k, k):
        raise ValueError(f"wins must have shape ({k}, {k}), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("wins must be finite and >= 0")
    if np.any(np.diag(w) != 0):
        raise ValueError("wins must have a zero diagonal")
    if not prior > 0:
        raise ValueError("prior must be > 0 (otherwise the MLE may not exist)")
    if k == 1:
        z = np.zeros(1)
        return Ratings(names_t, z, z.copy(), z.copy(), z.copy(), np.zeros((1, 1)), confidence)

    sweeps = tuple((names_t[i], names_t[j]) for i in range(k) for j in range(k)
                   if i != j and w[i, j] > 0 and w[j, i] == 0)
    off = 1.0 - np.eye(k)
    w = w + prior * off
    games = w + w.T
    total = w.sum(axis=1)

    def loglik(theta: np.ndarray) -> float:
        # sum_ij w_ij log p_ij with p_ij = 1 / (1 + exp(theta_j - theta_i))
        return float(-(w * np.logaddexp(0.0, theta[None, :] - theta[:, None])).sum())

    def fisher(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        info_off = games * p * p.T
        return p, np.diag(info_off.sum(axis=1)) - info_off

    # Hunter (2004) eq. (3), one MM step from equal strengths: a good start for Newton
    denom = (games / 2.0).sum(axis=1)
    theta = np.log(total) - np.log(denom)
    theta -= theta.mean()
    ll = loglik(theta)
    for _ in range(max_iter):
        p, info = fisher(theta)
        grad = total - (games * p).sum(axis=1)
        step = np.linalg.pinv(info) @ grad
        step -= step.mean()  # strengths are only defined up to a common factor
        t = 1.0
        while True:  # step halving keeps every iterate an ascent (the log-likelihood is concave)
            cand = theta + t * step
            cand_ll = loglik(cand)
            if cand_ll >= ll - 1e-12 * abs(ll) or t < 1e-8:
                break
            t *= 0.5
        theta, ll = cand, cand_ll
        if float(np.max(np.abs(t * step))) < tol:
            break
    else:
        raise RuntimeError(f"Bradley-Terry fit did not converge in {max_iter} Newton steps")

    _, info = fisher(theta)
    cov = np.linalg.pinv(info) * ELO_PER_NAT**2
    cov = 0.5 * (cov + cov.T)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    elo = ELO_PER_NAT * (theta - theta.mean())
    half = _z(confidence) * se
    return Ratings(names_t, elo, elo - half, elo + half, se, cov, confidence, sweeps)
