"""Sequential probability ratio tests: Wald's bounds, GSPRTs on score differences and outcomes.

* Wald (1945), "Sequential tests of statistical hypotheses", *Ann. Math. Stat.* 16:117-186: the
  stopping bounds.
* The generalised SPRT with a Brownian-motion (normal) approximation of the log-likelihood ratio:
  Michel Van den Bergh, "A simple approximation of the GSPRT"
  (https://www.cantate.be/Fishtest/GSPRT_approximation.pdf), fishtest's ``LLR_alt2``; the
  pseudo-count of empty cells is fishtest's ``regularize`` (both in
  ``server/fishtest/stats/LLRcalc.py`` of github.com/official-stockfish/fishtest).
* Game pairs as the independent unit (the pentanomial model): Van den Bergh's notes on normalized
  Elo (https://www.cantate.be/Fishtest/normalized_elo_practical.pdf).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from harness.stats.elo import score_from_elo
from harness.stats.moments import Moments
from harness.util.sums import dot


#: Pseudo-count given to empty outcome cells by the win/draw/loss SPRTs.
#: Same value as fishtest's ``LLRcalc.regularize`` (an empty cell gets 1e-3
#: games), so a run where every result is identical has a tiny but non-zero
#: variance instead of a division by zero.
SPRT_PSEUDO_COUNT: float = 1e-3

#: Relative variance floor of :func:`sprt_mean`: the variance used is at least
#: ``SPRT_VAR_FLOOR_REL * (mu1 - mu0)**2``.
SPRT_VAR_FLOOR_REL: float = 1e-6


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


def sprt_mean(d: Moments, mu0: float, mu1: float, alpha: float = 0.05, beta: float = 0.05) -> SPRTResult:
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
    return SPRTResult(
        llr,
        lower,
        upper,
        _decide(llr, lower, upper),
        d.n,
        mu0,
        mu1,
        float(alpha),
        float(beta),
        d.mean if d.n else math.nan,
    )


def _sprt_outcomes(counts: Sequence[float], elo0: float, elo1: float, alpha: float, beta: float) -> SPRTResult:
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
        return SPRTResult(0.0, lower, upper, "continue", 0, elo0, elo1, float(alpha), float(beta), math.nan)
    # Per-game score of each category: pair totals 0..2 are halved so the
    # mean is directly comparable with score_from_elo.
    scores = np.linspace(0.0, 1.0, c.size)
    # fishtest LLRcalc.regularize: empty cells get a tiny pseudo-count so the
    # variance is never zero when all results are identical.
    creg = np.where(c == 0, SPRT_PSEUDO_COUNT, c)
    p = creg / creg.sum()
    mean = dot(p, scores)
    var = dot(p, (scores - mean) ** 2)
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    llr = _gsprt_normal(float(c.sum()), mean, var, s0, s1)
    raw_mean = dot(c, scores) / float(c.sum())
    return SPRTResult(llr, lower, upper, _decide(llr, lower, upper), n, elo0, elo1, float(alpha), float(beta), raw_mean)


def sprt_trinomial(
    wins: int,
    draws: int,
    losses: int,
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
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
    counts: Sequence[int],
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
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
