"""Exact, mergeable histograms of integer scores (:class:`IntHistogram`), inverted-CDF quantiles.

Quantiles follow Hyndman & Fan (1996), "Sample quantiles in statistical packages", *The American
Statistician* 50:361-365, definition 1 (numpy's ``method="inverted_cdf"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.stats.common import check_confidence, scipy_stats
from harness.stats.moments import Moments
from harness.util.sums import dot


#: Largest score an :class:`IntHistogram` accepts; guards against a stray huge
#: value silently allocating gigabytes in ``np.bincount``.
HIST_MAX_VALUE: int = 1 << 24

#: The percentiles reported of every score distribution, exact (``solve``) or sampled (``report``).
PERCENTILES: tuple[int, ...] = (1, 5, 25, 50, 75, 95, 99)


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
        return bool(np.array_equal(np.trim_zeros(self.counts, "b"), np.trim_zeros(other.counts, "b")))

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
        return Moments(n, mean, dot(c, d * d))

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

    def quantile_interval(self, q: float, confidence: float = 0.95, n: int | None = None) -> tuple[float, float]:
        """Distribution-free interval for the population's inverted-CDF ``q``-quantile (0 < q < 1).

        The order statistics ``X_(l)`` and ``X_(u)`` (1-based), with ``l`` the binomial(n, q)
        quantile at (1 - confidence) / 2 and ``u`` one above the quantile at (1 + confidence) / 2:
        for any distribution, discrete ones included, ``P(X_(l) <= xi_q) >= P(Bin(n, q) >= l)`` and
        ``P(X_(u) >= xi_q) >= P(Bin(n, q) < u)``, so the interval holds ``xi_q`` with probability at
        least ``confidence`` (David & Nagaraja, *Order Statistics*, 3rd ed., 2003, section 7.1).
        An end with no order statistic (``l`` = 0, ``u`` > n) is -inf / +inf.

        ``n``: the number of independent observations when it is fewer than the histogram's count
        (rows that share dice, e.g. one bot in several lineups of a tournament): the ranks are then
        taken as the fractions l / n and u / n of the count, the interval of n observations.
        """
        total = self.n
        if total == 0:
            raise ValueError("quantile interval of an empty histogram")
        if not 0.0 < q < 1.0:
            raise ValueError(f"q must be in (0, 1), got {q!r}")
        m = total if n is None else int(n)
        if not 1 <= m <= total:
            raise ValueError(f"need 1 <= n <= {total}, got {n!r}")
        alpha = 1.0 - check_confidence(confidence)
        binom = scipy_stats().binom
        lo_rank = int(binom.ppf(alpha / 2, m, q))
        hi_rank = int(binom.ppf(1.0 - alpha / 2, m, q)) + 1
        cum = np.cumsum(self.counts)

        def value(rank: int) -> int:  # X_(rank) of m observations, as a fraction of the count
            r = math.ceil(rank * total / m - 1e-9)
            return int(np.searchsorted(cum, r, side="left"))

        lo = -math.inf if lo_rank < 1 else value(lo_rank)
        hi = math.inf if hi_rank > m else value(hi_rank)
        return float(lo), float(hi)
