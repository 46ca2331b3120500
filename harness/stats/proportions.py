"""Binomial proportions (win rates and the like) with Wilson score intervals.

Wilson (1927), "Probable inference, the law of succession, and statistical inference",
*JASA* 22:209-212.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.stats.common import z_crit


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
    if n == 0:
        return (0.0, 1.0)
    return wilson_share(k / n, n, confidence)


def wilson_share(share: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson interval of a proportion ``share`` observed on ``n`` trials, ``n`` possibly an
    effective count (rows that share dice count as fewer independent trials); see :func:`wilson`."""
    if not 0.0 <= share <= 1.0 or n <= 0:
        raise ValueError(f"need 0 <= share <= 1 and n > 0, got share={share}, n={n}")
    z = z_crit(confidence)
    z2 = z * z
    k = share * n
    denom = n + z2
    centre = (k + z2 / 2.0) / denom
    half = (z / denom) * math.sqrt(max(k * (n - k) / n, 0.0) + z2 / 4.0)
    lo = 0.0 if share == 0.0 else max(0.0, centre - half)
    hi = 1.0 if share == 1.0 else min(1.0, centre + half)
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
