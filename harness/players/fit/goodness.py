"""Goodness of fit, at the fitted parameters: the regret-distribution check (:func:`_regret_test`:
observed against predicted regret bins per decision kind, adjacent bins merged by
:func:`_groups`), the :class:`Test` it and the likelihood-ratio test give, and the p-value below
which a player is a poor fit (:data:`POOR_P`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import chi2

import harness.players.fit.kernels as FK
from harness.decisions.analysis import DECISION_KINDS
from harness.players.fit.store import Blocks
from harness.util.sums import dot, vecmat

#: Regret bins of the goodness-of-fit check (points): 0 (a best option), (0, 0.5], (0.5, 2], (2, 8], > 8.
REGRET_BINS = (0.0, 0.5, 2.0, 8.0)
BIN_NAMES = ("0", "(0, 0.5]", "(0.5, 2]", "(2, 8]", "> 8")
#: A player is a poor fit when a goodness-of-fit test gives p below this.
POOR_P = 1e-3


@dataclass(frozen=True)
class Test:
    """A goodness-of-fit statistic with its degrees of freedom and p-value."""

    statistic: float
    df: int
    p: float

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "df": self.df, "p": self.p}


#: Regret bins are merged with their neighbours until each expects at least this many decisions.
MIN_EXPECTED = 5.0


def _groups(expected: np.ndarray) -> np.ndarray:
    """(G, B) 0/1 matrix merging adjacent bins, left to right, until each group expects at least
    :data:`MIN_EXPECTED` (a short last group joins the one before)."""
    groups: list[list[int]] = [[]]
    acc = 0.0
    for j, e in enumerate(expected):
        groups[-1].append(j)
        acc += e
        if acc >= MIN_EXPECTED:
            groups.append([])
            acc = 0.0
    if not groups[-1]:
        groups.pop()
    elif len(groups) > 1:
        last = groups.pop()
        groups[-1] += last
    g = np.zeros((len(groups), len(expected)))
    for i, js in enumerate(groups):
        g[i, js] = 1.0
    return g


def _regret_test(
    ch: Blocks, t: float, p: float, theta: np.ndarray | None = None
) -> tuple[Test | None, np.ndarray, np.ndarray, np.ndarray]:
    """The regret-distribution check at (t, p) (or at the extended family's ``theta``): (test,
    observed (2, B), expected (2, B), the model's mean regret per decision of each kind (2,), nan
    for a kind without decisions). Walks the decisions a block at a time, in order."""

    edges = np.array(REGRET_BINS)
    nb = len(edges) + 1
    nk = len(DECISION_KINDS)
    observed = np.zeros((nk, nb))
    expected = np.zeros((nk, nb))
    second = np.zeros((nk, nb, nb))  # sum over decisions of p p' (p: the decision's bin probabilities)
    regret = np.zeros(nk)
    for i in range(len(ch.parts)):
        c = ch.load(i)
        probs = np.empty((len(c), nb))
        mean = np.empty(len(c))
        if theta is None:
            FK.option_bins(c.ptr, c.r, c.rows, float(t), float(p), edges, probs, mean)
        else:
            FK.family_bins(
                c.ptr, c.r, c.r if c.g is None else c.g, c.rows, c.kind, *(float(x) for x in theta), edges, probs, mean
            )
        obs_bin = np.searchsorted(edges, c.rc, side="left")
        kind, w = c.kind, c.w
        for k in range(nk):
            m = kind == k
            if m.any():
                pm, wm = probs[m], w[m]
                observed[k] += np.bincount(obs_bin[m], weights=wm, minlength=nb)
                expected[k] += vecmat(wm, pm)
                second[k] += pm.T @ (pm * wm[:, None])
                regret[k] += dot(wm, mean[m])
    stat, df = 0.0, 0
    counts = observed.sum(axis=1)
    for k in range(nk):
        if not counts[k]:
            continue
        # adjacent bins merged until each expects MIN_EXPECTED decisions (the chi-square
        # approximation fails for rare cells: one decision where 0.04 are expected is not p = 1e-14)
        g = _groups(expected[k])
        cov = np.diag(g @ expected[k]) - g @ second[k] @ g.T
        w, vec = np.linalg.eigh(cov)
        keep = w > max(1e-9 * w.max(initial=0.0), 1e-12)
        z = vec[:, keep].T @ (g @ (observed[k] - expected[k]))
        stat += float(np.sum(z * z / w[keep]))
        df += int(keep.sum())
    test = Test(stat, df, float(chi2.sf(stat, df))) if df else None
    with np.errstate(invalid="ignore", divide="ignore"):
        return test, observed, expected, regret / counts
