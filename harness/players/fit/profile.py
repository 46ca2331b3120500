"""Profile-likelihood intervals: {theta: 2 (l_max - l_profile(theta)) <= chi2_1 quantile}, each
end found where a profile crosses its level (:func:`_crossing`), as an :class:`Estimate`; those of
the solver's dial (:func:`intervals`; the extended family's are
:func:`harness.players.fit.families.family_intervals`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy.optimize import brentq
from scipy.stats import chi2

from harness.players.fit.likelihood import Likelihood, Mle, _finite, _max_over_t
from harness.players.fit.models import MODELS, T_MAX, T_MIN


def _crossing(
    f: Callable[[float], float], inside: float, outside: float, level: float, tol: float, top: float | None = None
) -> float:
    """The x between ``inside`` (the maximum of f, ``top`` when known) and ``outside`` (f < level)
    where f crosses level, to ``tol``.

    Near its maximum a log-likelihood profile is close to a parabola, so its signed root deviance
    s(x) = sqrt(2 (top - f(x))) is close to a line: one small step from the maximum and a linear
    extrapolation of s put a point just past the crossing, and Brent's method on s finishes in the
    close bracket. About 6 evaluations of f where bisection from the bounds took 20 (each is a
    likelihood pass, and a blunder profile's a maximisation over T)."""
    seen: dict[float, float] = {}
    if top is not None:
        seen[inside] = top

    def fx(x: float) -> float:  # brentq asks for the ends again: each x evaluated once
        if x not in seen:
            seen[x] = _finite(f(x))
        return seen[x]

    top = fx(inside)
    if top <= level:
        return inside
    if fx(outside) >= level:  # a profile's inner maximum found higher this time: no crossing inside
        return outside
    target = math.sqrt(2 * (top - level))

    def h(x: float) -> float:
        return math.sqrt(2 * max(0.0, top - fx(x))) - target

    a, b = inside, outside
    x = inside + (outside - inside) * 1e-3
    for _ in range(64):
        if h(x) >= 0:
            b = x
            break
        a = x
        s = h(x) + target
        # past the crossing if s is a line (10 % beyond its extrapolation), else 16 times further
        x = inside + (x - inside) * (1.1 * target / s if s > 0 else 16.0)
        if (x - outside) * (outside - inside) >= 0:  # beyond the outer end: bracket with it
            break
    return float(brentq(h, a, b, xtol=tol, rtol=4 * np.finfo(float).eps))


@dataclass(frozen=True)
class Estimate:
    """A fitted parameter: ``value`` and its profile-likelihood interval [lo, hi] (hi may be inf)."""

    name: str
    value: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": [self.lo, self.hi]}


def intervals(lik: Likelihood, model: str, m: Mle, confidence: float) -> dict[str, Estimate]:
    """Profile-likelihood intervals of each parameter of ``model`` at its maximum ``m``."""

    level = m.loglik - chi2.ppf(confidence, 1) / 2
    params = MODELS[model]
    out: dict[str, Estimate] = {}
    if "temperature" in params:
        free = "blunder" in params
        prof = (lambda t: lik.best_blunder(t)[1]) if free else (lambda t: lik.at(t, 0.0))
        g = lambda x: prof(math.exp(x))  # noqa: E731
        x0 = math.log(max(m.temperature, T_MIN))
        if prof(0.0) >= level:
            lo = 0.0
        elif g(math.log(T_MIN)) >= level:
            lo = T_MIN
        else:
            lo = math.exp(_crossing(g, x0, math.log(T_MIN), level, 1e-5, m.loglik))
        if g(math.log(T_MAX)) >= level:
            hi = math.inf
        else:
            hi = math.exp(_crossing(g, x0, math.log(T_MAX), level, 1e-5, m.loglik))
        out["temperature"] = Estimate("temperature", m.temperature, lo, hi)
    if "blunder" in params:
        if "temperature" in params:
            state = {"t": m.temperature}

            def prof_p(p: float) -> float:
                t, v = _max_over_t(lambda t: lik.at(t, p), center=state["t"] or None)
                state["t"] = t
                return v
        else:

            def prof_p(p: float) -> float:
                return lik.at(0.0, p)

        bounds = []
        for end in (0.0, 1.0):
            if "temperature" in params:
                state["t"] = m.temperature
            v = prof_p(end)
            if v >= level:
                bounds.append(end)
                continue
            if "temperature" in params:  # the walk from the maximum starts at its temperature
                state["t"] = m.temperature
            bounds.append(_crossing(lambda p: v if p == end else prof_p(p), m.blunder, end, level, 1e-6, m.loglik))
        out["blunder"] = Estimate("blunder", m.blunder, bounds[0], bounds[1])
    return out
