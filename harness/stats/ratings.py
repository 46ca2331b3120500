"""Bradley-Terry ratings on the Elo scale, with standard errors, from a matrix of points.

Bradley & Terry (1952), "Rank analysis of incomplete block designs: I. The method of paired
comparisons", *Biometrika* 39:324-345. Fitted by Newton's method on the log-strengths, started
from one MM step of Hunter (2004), "MM algorithms for generalized Bradley-Terry models", *Ann.
Statist.* 32:384-406; the prior of virtual draws is BayesElo's (Rémi Coulom).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.stats.common import check_confidence, z_crit
from harness.stats.elo import ELO_PER_NAT


@dataclass(frozen=True, eq=False)
class Ratings:
    """Bradley–Terry ratings on the Elo scale, mean rating 0.

    ``elo``, ``lo``, ``hi``, ``se``: float64, shape (K,), in ``names`` order.
    ``se`` is each rating's standard error relative to the field mean;
    ``cov`` (float64, shape (K, K), Elo^2) is the full covariance, so the SE of
    a difference is ``sqrt(cov[i,i] + cov[j,j] - 2 cov[i,j])``.
    ``lo``/``hi`` are normal intervals ``elo -/+ z * se``.
    ``sweeps``: (winner, loser) pairs where the winner took every point of
    their games (perfect separation).
    ``bounds``: per entrant, what the prior rather than the games fixes of its
    rating (:func:`separation_bounds`): None where the games identify it.
    """

    names: tuple[str, ...]
    elo: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    se: np.ndarray
    cov: np.ndarray
    confidence: float
    sweeps: tuple[tuple[str, str], ...] = ()
    bounds: tuple[str | None, ...] = ()

    def bound(self, i: int) -> str | None:
        """ "lower", "upper", "both" or None: what the prior, not the games, fixes of entrant i."""
        return self.bounds[i] if self.bounds else None

    def table(self) -> list[dict[str, Any]]:
        """Rows ``{rank, name, elo, lo, hi, se, bound, note}`` sorted by Elo, best first."""
        order = sorted(range(len(self.names)), key=lambda i: (-self.elo[i], self.names[i]))
        rows = []
        for r, i in enumerate(order):
            name = self.names[i]
            beat = sorted(b for a, b in self.sweeps if a == name)
            lost = sorted(a for a, b in self.sweeps if b == name)
            note = "; ".join(
                ([f"won every game against {', '.join(beat)}"] if beat else [])
                + ([f"lost every game against {', '.join(lost)}"] if lost else [])
            )
            rows.append(
                {
                    "rank": r + 1,
                    "name": name,
                    "elo": float(self.elo[i]),
                    "lo": float(self.lo[i]),
                    "hi": float(self.hi[i]),
                    "se": float(self.se[i]),
                    "bound": self.bound(i),
                    "note": note or None,
                }
            )
        return rows


def separation_bounds(wins: np.ndarray) -> tuple[str | None, ...]:
    """Which ratings the games leave to the prior (Ford 1957: the maximum-likelihood ratings of a
    group are finite exactly when, for every split of it in two, each side scored against the other).

    ``wins[i, j] > 0``: i scored against j. Entrants that reach each other through such points form a
    group whose gaps the games fix. When one group is larger than every other (and holds two or
    more), it is the reference: an entrant outside it that the reference scored against (directly or
    through others) but that never scored back is below it, its rating an upper bound ("upper"); one
    that scored against the reference but never conceded back is above it ("lower"); one that neither
    reaches it nor is reached rests on the prior alone ("both"). So when three bots each beat
    ``random`` in every game but took points off each other, only ``random``'s rating is a bound.
    With no such group (a gauntlet, where the entrants meet only the candidate), each entrant is
    marked by its own sweeps: "lower" if it won every game against someone, "upper" if it lost every
    game to someone, "both" if both.
    """
    w = np.asarray(wins)
    k = len(w)
    reach = (w > 0) | np.eye(k, dtype=bool)
    for m in range(k):  # transitive closure (Warshall): reach[i, j]: a chain of points from i to j
        reach |= reach[:, m : m + 1] & reach[m : m + 1, :]
    same = reach & reach.T
    groups = {tuple(np.flatnonzero(row)) for row in same}
    sizes = sorted((len(g) for g in groups), reverse=True)
    if sizes[0] >= 2 and (len(sizes) == 1 or sizes[1] < sizes[0]):
        main = int(np.argmax(same.sum(axis=1)))
        out: list[str | None] = []
        for i in range(k):
            up, down = bool(reach[i, main]), bool(reach[main, i])
            out.append(None if up and down else "lower" if up else "upper" if down else "both")
        return tuple(out)
    won = [any(w[i, j] > 0 and w[j, i] == 0 for j in range(k) if j != i) for i in range(k)]
    lost = [any(w[j, i] > 0 and w[i, j] == 0 for j in range(k) if j != i) for i in range(k)]
    return tuple("both" if a and b else "lower" if a else "upper" if b else None for a, b in zip(won, lost))


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
    confidence = check_confidence(confidence)
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

    sweeps = tuple(
        (names_t[i], names_t[j]) for i in range(k) for j in range(k) if i != j and w[i, j] > 0 and w[j, i] == 0
    )
    bounds = separation_bounds(w)
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
    half = z_crit(confidence) * se
    return Ratings(names_t, elo, elo - half, elo + half, se, cov, confidence, sweeps, bounds)
