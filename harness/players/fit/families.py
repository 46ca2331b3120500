"""The extended family (models ``kinds``, ``mixed`` and ``paced``): its likelihood with the
kernel's exact gradient (:class:`FamilyLikelihood`), its maximum by SLSQP (:func:`family_max`,
:func:`family_mle`), its profile-likelihood intervals (:func:`family_intervals`) and the richer
model of its likelihood-ratio test, fitted per decision kind (:func:`_family_per_kind`)."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.optimize import minimize
from scipy.stats import chi2

import harness.players.fit.kernels as FK
from harness.players.fit.data import Choices
from harness.players.fit.profile import Estimate, _crossing
from harness.players.fit.models import FAMILY, MODELS, T_MAX, T_MIN
from harness.players.fit.store import Blocks, _each, _total, as_blocks
from harness.util.sums import dot


class FamilyLikelihood:
    """log L and its gradient under the extended family (:func:`harness.players.fit.kernels.family_loglik`)
    of a :class:`Choices` (or :class:`Blocks`): theta = (weight, keep temperature, box temperature,
    blunder), the temperatures > 0. Choices without myopic values take weight 0 only."""

    def __init__(self, ch: Choices | Blocks) -> None:
        self.ch = as_blocks(ch)
        self.myopic = self.ch.myopic

    def _g(self, c: Choices) -> tuple[np.ndarray, np.ndarray]:
        # without myopic values the weight is 0 and g is never read: r stands in for it
        return (c.g, c.gc) if self.myopic else (c.r, c.rc)

    def at(self, theta: Sequence[float]) -> tuple[float, np.ndarray]:
        weight, tk, tb, p = (float(x) for x in theta)
        if weight and not self.myopic:
            raise ValueError("a weight on the myopic values needs decisions with their myopic values")

        def one(i: int, c: Choices) -> tuple[float, np.ndarray]:
            grad = np.zeros(4)
            g, gc = self._g(c)
            ll = FK.family_loglik(c.ptr, c.r, g, c.rows, c.rc, gc, c.kind, c.u, c.w, weight, tk, tb, p, grad)
            return float(ll), grad

        parts = _each(self.ch, one)
        return _total(v[0] for v in parts), np.array([_total(v[1][j] for v in parts) for j in range(4)])

    def top1(self, weight: float) -> float:
        """The share of decisions whose option played is the model's most likely (ties shared)."""
        if not len(self.ch):
            return math.nan

        def one(i: int, c: Choices) -> float:
            out = np.empty(len(c))
            g, gc = self._g(c)
            FK.top_share(c.ptr, c.r, g, c.rows, c.rc, gc, float(weight), out)
            return dot(c.w, out)

        return _total(_each(self.ch, one)) / self.ch.decisions


_LOG_T = (math.log(T_MIN), math.log(T_MAX))


def _to_coord(name: str, x: float) -> float:
    """The optimiser's coordinate of a parameter: log T for the temperatures, the value otherwise."""
    return math.log(min(max(x, T_MIN), T_MAX)) if name.endswith("temperature") else x


def _of_coord(name: str, c: float) -> float:
    return math.exp(c) if name.endswith("temperature") else c


def _bounds(name: str) -> tuple[float, float]:
    return _LOG_T if name.endswith("temperature") else (0.0, 1.0)


def family_max(
    lik: FamilyLikelihood, free: Sequence[str], start: np.ndarray, starts: Sequence[np.ndarray] = ()
) -> tuple[np.ndarray, float]:
    """(theta, log L) maximising over the ``free`` parameters of :data:`FAMILY` (the others stay at
    ``start``'s values): SLSQP from ``start`` and from each of ``starts``, in the coordinates of
    :func:`_to_coord` (temperatures in log T on [T_MIN, T_MAX]; weight and blunder on [0, 1]),
    with the kernel's exact gradient."""
    idx = [FAMILY.index(k) for k in free]
    start = np.asarray(start, dtype=float)
    if not idx:
        return start.copy(), lik.at(start)[0]
    temps = [j for j, k in zip(idx, free) if k.endswith("temperature")]

    def unpack(c: np.ndarray) -> np.ndarray:
        th = start.copy()
        for j, k, x in zip(idx, free, c):
            th[j] = _of_coord(k, float(x))
        return th

    def f(c: np.ndarray) -> tuple[float, np.ndarray]:
        th = unpack(c)
        ll, grad = lik.at(th)
        grad = grad.copy()
        for j in temps:
            grad[j] *= th[j]  # d/d log T
        if not math.isfinite(ll):
            return 1e300, np.zeros(len(idx))
        return -ll, -np.nan_to_num(grad[idx], posinf=1e300, neginf=-1e300)

    best_th, best_ll = start.copy(), -math.inf
    for s in (start, *starts):
        c0 = np.array([_to_coord(k, float(s[j])) for j, k in zip(idx, free)])
        # SLSQP, not L-BFGS-B: scipy's L-BFGS-B calls the threaded BLAS at every step, which on a
        # loaded machine took 6 times the CPU (11.0 s against 1.8 s for fit_table(..., "all") of two
        # players of 30 games; the same estimates and interval ends to 4 digits)
        res = minimize(
            f, c0, jac=True, method="SLSQP", bounds=[_bounds(k) for k in free], options={"ftol": 1e-13, "maxiter": 500}
        )
        c = np.array([min(max(x, lo), hi) for x, (lo, hi) in zip(res.x, (_bounds(k) for k in free))])
        for i, k in enumerate(free):  # an optimiser's 1e-17 for a bound of a weight or blunder rate
            if not k.endswith("temperature"):
                c[i] = 0.0 if c[i] < 1e-12 else 1.0 if c[i] > 1 - 1e-12 else c[i]
        th = unpack(c)
        ll = lik.at(th)[0]
        if ll > best_ll:
            best_th, best_ll = th, ll
    return best_th, best_ll


#: The extended family's fixed values where a model does not fit a parameter.
FAMILY_DEFAULTS = np.array([0.0, 1.0, 1.0, 0.0])


def family_mle(lik: FamilyLikelihood, model: str) -> tuple[np.ndarray, float]:
    """The maximum-likelihood theta of a model of the extended family, from several starts (the
    log-likelihood need not be concave in the weight)."""
    free = MODELS[model]
    start = FAMILY_DEFAULTS.copy()
    start[3] = 0.02 if "blunder" in free else 0.0
    starts = []
    if "weight" in free:
        for w0 in (0.1, 0.5, 0.95):
            s = start.copy()
            s[0] = w0
            starts.append(s)
        start = starts.pop(0)
    return family_max(lik, free, start, starts)


def family_intervals(
    lik: FamilyLikelihood, model: str, theta: np.ndarray, top: float, confidence: float
) -> dict[str, Estimate]:
    """Profile-likelihood intervals of each parameter of a model of the extended family at its
    maximum (theta, top): the others maximised again at each point of a profile (warm-started
    from the point before). A temperature at the T_MIN floor is reported as 0 (and an interval end
    there as 0), an end at T_MAX as inf."""
    free = MODELS[model]
    level = top - chi2.ppf(confidence, 1) / 2
    out: dict[str, Estimate] = {}
    for name in free:
        j = FAMILY.index(name)
        rest = [k for k in free if k != name]
        state = {"theta": theta.copy()}

        def prof(c: float) -> float:
            th = state["theta"].copy()
            th[j] = _of_coord(name, c)
            th, ll = family_max(lik, rest, th)
            state["theta"] = th
            return ll

        c0 = _to_coord(name, float(theta[j]))
        ends = []
        for end in _bounds(name):
            state["theta"] = theta.copy()
            v = prof(end) if end != c0 else top
            if v >= level:
                ends.append(end)
                continue
            state["theta"] = theta.copy()
            tol = 1e-5 if name.endswith("temperature") else 1e-6
            ends.append(_crossing(lambda c: v if c == end else prof(c), c0, end, level, tol, top))
        lo, hi = (_of_coord(name, c) for c in ends)
        value = float(theta[j])
        if name.endswith("temperature"):
            floor = T_MIN * (1 + 1e-6)
            value = 0.0 if value <= floor else value
            lo = 0.0 if lo <= floor else lo
            hi = math.inf if hi >= T_MAX * (1 - 1e-6) else hi
        out[name] = Estimate(name, value, lo, hi)
    return out


def _family_per_kind(ch: Blocks, model: str, theta: np.ndarray) -> float:
    """log L of ``model`` fitted separately to keep and to box decisions (its weight and blunder
    rate per kind too): the richer model of the likelihood-ratio test. Each kind's maximum starts
    from the joint fit ``theta`` and, with a weight, also from the far end of the weight's range."""
    total = 0.0
    for k, temp in enumerate(("keep_temperature", "box_temperature")):
        mine = ch.where(kind=k)
        if len(mine):
            free = [x for x in MODELS[model] if not x.endswith("temperature") or x == temp]
            starts = []
            if "weight" in free:
                other = theta.copy()
                other[0] = 0.05 if theta[0] > 0.5 else 0.95
                starts.append(other)
            total += family_max(FamilyLikelihood(mine), free, theta, starts)[1]
    return total
