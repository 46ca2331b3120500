"""Logistic Elo: expected score from Elo and back, and the Elo interval of pentanomial counts.

The logistic Elo curve ``1 / (1 + 10^(-elo/400))``, as fishtest's ``L_``
(``server/fishtest/stats/LLRcalc.py`` of github.com/official-stockfish/fishtest). The interval of
:func:`elo_ci_from_pentanomial` takes game pairs as the independent unit, as fishtest's
pentanomial model (Michel Van den Bergh's notes on normalized Elo,
https://www.cantate.be/Fishtest/normalized_elo_practical.pdf).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.stats.common import z_crit
from harness.util.sums import dot


#: Elo points per natural-log unit of strength: Elo uses 400*log10(gamma).
ELO_PER_NAT: float = 400.0 / math.log(10.0)


def score_from_elo(elo: npt.ArrayLike) -> Any:
    """Expected score ``1 / (1 + 10^(-elo/400))`` (logistic Elo).

    Scalar in, ``float`` out; array in, float64 array out.
    """
    e = np.asarray(elo, dtype=np.float64)
    if e.ndim == 0:  # the C library's pow: numpy's picks a vector kernel by CPU, another last bit
        try:
            return 1.0 / (1.0 + math.pow(10.0, -float(e) / 400.0))
        except OverflowError:  # 10^x beyond the floats: numpy's inf, a score of 0
            return 0.0
    return 1.0 / (1.0 + np.power(10.0, -e / 400.0))


def elo_from_score(s: npt.ArrayLike) -> Any:
    """Inverse of :func:`score_from_elo`: ``-400 log10(1/s - 1)``.

    ``s = 0`` and ``s = 1`` map to ``-inf``/``+inf``; outside [0, 1] raises.
    Scalar in, ``float`` out; array in, float64 array out.
    """
    sa = np.asarray(s, dtype=np.float64)
    if np.any(~((sa >= 0.0) & (sa <= 1.0))):
        raise ValueError("score must be in [0, 1]")
    if sa.ndim == 0:  # the C library's log10, as in score_from_elo
        s = float(sa)
        return 400.0 * (_log10(s) - _log10(1.0 - s))
    with np.errstate(divide="ignore"):
        return 400.0 * (np.log10(sa) - np.log10(1.0 - sa))


def _log10(x: float) -> float:
    return math.log10(x) if x > 0.0 else -math.inf


def elo_ci_from_pentanomial(counts: Sequence[int], confidence: float = 0.95) -> tuple[float, float, float]:
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
    mean = dot(c, scores) / float(n)
    var = dot(c, (scores - mean) ** 2) / float(n)
    half = z_crit(confidence) * math.sqrt(var / n)
    clip = lambda x: min(1.0, max(0.0, x))  # noqa: E731
    return (elo_from_score(mean), elo_from_score(clip(mean - half)), elo_from_score(clip(mean + half)))
