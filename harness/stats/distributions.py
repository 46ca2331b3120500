"""Two-sample tests on integer score histograms: Kolmogorov-Smirnov and Anderson-Darling.

Both ask whether two score distributions differ anywhere, not only in the mean. Kolmogorov-Smirnov:
the two-sample statistic (Kolmogorov 1933; Smirnov 1939) computed exactly from the histograms, with
the asymptotic p-value of ``scipy.stats.ks_2samp(method="asymp")``. Anderson-Darling: the k-sample
test of Scholz & Stephens (1987), "K-sample Anderson-Darling tests", *JASA* 82:918-924, in its
midrank version for ties, through ``scipy.stats.anderson_ksamp``; more sensitive in the tails.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.stats.common import scipy_stats
from harness.stats.histogram import IntHistogram


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


def ks_2samp_counts(counts_a: npt.ArrayLike | IntHistogram, counts_b: npt.ArrayLike | IntHistogram) -> DistTest:
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
    p = float(np.clip(scipy_stats().kstwo.sf(d, max(1.0, np.round(en))), 0.0, 1.0))
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
        res = scipy_stats().anderson_ksamp([xa, xb], variant="midrank")
    return DistTest(float(res.statistic), float(res.pvalue), "anderson_ksamp midrank")
