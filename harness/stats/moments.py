"""Streaming means, variances and co-moments of scores, and the Student t interval of a mean.

:class:`Moments` (one metric), :class:`VecMoments` (M metrics, variances only) and
:class:`CoMoments` (M metrics with their covariances) fold chunks of a run together with the
pairwise update of Chan, Golub & LeVeque (1979), "Updating formulae and a pairwise algorithm for
computing sample variances" (Stanford report STAN-CS-79-773), so a run of millions of games never
has to be held in memory; they merge across chunks, processes and machines in any order. The
interval of :func:`mean_ci` is Student's t (Student 1908, "The probable error of a mean",
*Biometrika* 6:1-25).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.stats.common import check_confidence, scipy_stats, t_crit
from harness.util.sums import dot, vecmat


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
        return cls(int(x.size), mean, dot(d, d))

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
        cmb = np.stack([vecmat(d[:, j], d) for j in range(d.shape[1])])  # d.T @ d, in a fixed order
        n = self.n + b
        delta = mb - self.mean
        self.mean = self.mean + delta * (b / n)
        self.cm = self.cm + cmb + np.outer(delta, delta) * (self.n * b / n)
        self.n = n

    def get(self, j: int) -> Moments:
        """The :class:`Moments` of metric ``j`` alone."""
        return Moments(self.n, float(self.mean[j]), float(self.cm[j, j]))


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
    mean = dot(c, x) / n
    return Moments(n, mean, dot(c, (x - mean) ** 2))


@dataclass(frozen=True)
class MeanCI:
    """Mean with a two-sided Student-t confidence interval ``[lo, hi]``."""

    mean: float
    lo: float
    hi: float
    std: float
    n: int
    confidence: float


def is_constant(m: Moments, bounds: tuple[float, float]) -> bool:
    """Whether every observation of ``m`` (n >= 1) had the same value, up to float rounding on the
    scale of ``bounds``."""
    return m.n >= 1 and m.m2 <= m.n * (1e-12 * (bounds[1] - bounds[0])) ** 2


def rare_interval(usual: float, k: int, n: int, bounds: tuple[float, float], confidence: float) -> tuple[float, float]:
    """Interval for the mean of a variable known to lie in ``bounds`` = (a, b) that took a value
    other than ``usual`` in only ``k`` of ``n`` observations: ``[usual - (usual - a) q, usual + (b -
    usual) q]``, where q is the Clopper-Pearson upper limit for k events in n (Clopper & Pearson
    1934, *Biometrika* 26:404-413; for k = 0, ``1 - ((1 - confidence) / 2) ** (1 / n)``, about
    3.7 / n at 95 %): at that confidence another value has probability at most q, and lies in
    [a, b]. Valid whatever those few values were; a t interval from them is not (with all n equal
    it has zero width, with one or two it follows their sign)."""
    a, b = float(bounds[0]), float(bounds[1])
    alpha = 1.0 - check_confidence(confidence)
    if k == 0:
        q = 1.0 - (0.5 * alpha) ** (1.0 / n)
    else:
        q = 1.0 if k >= n else float(scipy_stats().beta.ppf(1.0 - 0.5 * alpha, k + 1, n - k))
    return usual - (usual - a) * q, usual + (b - usual) * q


def mean_ci(x: npt.ArrayLike | Moments, confidence: float = 0.95, bounds: tuple[float, float] | None = None) -> MeanCI:
    """Student-t confidence interval for the mean.

    ``x`` is a 1-D array of observations (any real dtype) or a :class:`Moments`
    built from them. ``std`` is the sample standard deviation (ddof=1).
    With n < 2 the interval (and std) is NaN; with n == 0 the mean is NaN too.
    ``bounds`` = (a, b): every value is known to lie in [a, b] (a rate: (0, 1)); a sample whose
    values are all equal then gets :func:`rare_interval` (k = 0) instead of a zero-width interval.
    """
    confidence = check_confidence(confidence)
    m = x if isinstance(x, Moments) else Moments.of(x)
    if m.n == 0:
        return MeanCI(math.nan, math.nan, math.nan, math.nan, 0, confidence)
    if m.n < 2:
        return MeanCI(m.mean, math.nan, math.nan, math.nan, m.n, confidence)
    if bounds is not None and is_constant(m, bounds):
        return MeanCI(m.mean, *rare_interval(m.mean, 0, m.n, bounds, confidence), m.std, m.n, confidence)
    half = t_crit(confidence, m.n - 1) * m.sem
    return MeanCI(m.mean, m.mean - half, m.mean + half, m.std, m.n, confidence)
