"""The solver's dial as a likelihood: log L(temperature, blunder) of a player's decisions
(:class:`Likelihood`, the chosen options' probabilities cached per temperature, in memory or in a
scratch file: :class:`_Probs`), the blunder rate's maximum at a temperature (concave in it) and the
maximum over the temperature (:func:`_max_over_t`): the maximum-likelihood fit :func:`mle`."""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np
from scipy.optimize import brentq, minimize_scalar

import harness.players.fit.kernels as FK
from harness.players.fit.data import Choices
from harness.players.fit.models import MODELS, T_MAX, T_MIN
from harness.players.fit.store import Blocks, _Scratch, _each, _read, _total, _write, as_blocks


class _Probs:
    """The chosen options' probabilities at one temperature of each block of a :class:`Blocks`,
    with the blocks' 1 / n and counts: (q, u, w) per block, in memory (u and w the block's own
    arrays), or for spilled decisions in a scratch file (24 bytes a row; ``fd``: one to reuse),
    read back :data:`WINDOW_BYTES` at a time."""

    #: A spilled cache is read back this many bytes at a time at most (the blocks it holds, whole).
    WINDOW_BYTES = 4 << 20

    def __init__(self, ch: Blocks, fd: int | None = None) -> None:
        self.ch = ch
        self.fd = fd if fd is not None or not ch.spilled or ch.scratch is None else ch.scratch.file()
        self.at = np.concatenate([[0], np.cumsum(ch.lengths, dtype=np.int64)]) * 24
        self.mem: list[Any] = [None] * len(ch.parts)

    def put(self, i: int, q: np.ndarray, c: Choices) -> None:
        if self.fd is None:
            self.mem[i] = (q, c.u, c.w)
        else:
            _write(self.fd, np.stack([q, c.u, c.w.astype(np.float64)]).tobytes(), int(self.at[i]))

    def __iter__(self) -> Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        if self.fd is None:
            yield from self.mem
            return
        i, n = 0, len(self.ch.parts)
        while i < n:
            j = i + 1
            while j < n and self.at[j + 1] - self.at[i] <= self.WINDOW_BYTES:
                j += 1
            buf = _read(self.fd, int(self.at[j] - self.at[i]), int(self.at[i]))
            for k in range(i, j):
                x = np.frombuffer(buf, np.float64, 3 * self.ch.lengths[k], int(self.at[k] - self.at[i]))
                x = x.reshape(3, -1)
                yield x[0], x[1], x[2]
            i = j


def _release(scratch: _Scratch, fds: list[int]) -> None:
    for fd in fds:
        scratch.release(fd)


class Likelihood:
    """log L(T, blunder) of a :class:`Choices` (or :class:`Blocks`) and its profiles (the chosen
    options' softmax probabilities are cached per temperature: :class:`_Probs`)."""

    #: The cache of chosen-option probabilities holds at most this many bytes (and 2 temperatures at least).
    CACHE_BYTES = 16 << 20
    #: ... and for spilled decisions, this many temperatures (scratch files) at most.
    CACHE_FILES = 8

    def __init__(self, ch: Choices | Blocks) -> None:
        self.ch = as_blocks(ch)
        self._q: dict[float, _Probs] = {}
        self._most = min(257, max(2, self.CACHE_BYTES // max(1, 8 * len(self.ch))))
        self._fds: list[int] = []  # the scratch files of a spilled cache (each reused when its temperature goes)
        if self.ch.spilled and self.ch.scratch is not None:
            self._most = min(self._most, self.CACHE_FILES)
            weakref.finalize(self, _release, self.ch.scratch, self._fds)

    def q(self, t: float) -> _Probs:
        q = self._q.get(t)
        if q is None:
            fd = None
            if len(self._q) >= self._most:
                fd = self._q.pop(next(iter(self._q))).fd
            q = _Probs(self.ch, fd)
            if q.fd is not None and fd is None:
                self._fds.append(q.fd)

            def one(i: int, c: Choices) -> None:
                out = np.empty(len(c))
                FK.chosen_probs(c.ptr, c.r, c.rows, c.rc, float(t), out)
                q.put(i, out, c)

            _each(self.ch, one)
            self._q[t] = q
        return q

    def at(self, t: float, p: float) -> float:
        if p >= 1.0:  # every choice uniform: the temperature does not matter (no pass over the options)
            return _total(_each(self.ch, lambda i, c: float(FK.loglik(c.u, c.u, c.w, 1.0)), 1))
        return _total(float(FK.loglik(q, u, w, float(p))) for q, u, w in self.q(t))

    def best_blunder(self, t: float) -> tuple[float, float]:
        """(blunder, log L) maximising over the blunder rate at temperature t (concave in it)."""
        if not len(self.ch):
            return 0.0, 0.0
        tabs = self.q(t)

        def slope(p: float) -> float:
            return _total(float(FK.blunder_slope(q, u, w, float(p))) for q, u, w in tabs)

        if any(np.any((q == 0) & (u - q > 0)) for q, u, _ in tabs):
            s0 = math.inf
        else:
            s0 = slope(0.0)
        if s0 <= 0:
            return 0.0, self.at(t, 0.0)
        if slope(1.0) >= 0:
            return 1.0, self.at(t, 1.0)

        lo, hi = (1e-15 if not math.isfinite(s0) else 0.0), 1.0
        if slope(lo) <= 0:
            return lo, self.at(t, lo)
        p = float(brentq(slope, lo, hi, xtol=1e-12, rtol=1e-12))
        return p, self.at(t, p)


_FLOOR = -1e300  # -inf for the optimisers


def _finite(x: float) -> float:
    return x if x > _FLOOR else _FLOOR


def _max_over_t(f: Callable[[float], float], center: float | None = None) -> tuple[float, float]:
    """(T, f(T)) maximising f over T in {0} and [T_MIN, T_MAX]: a grid in log T (25 points; or 3,
    0.25 apart, around log ``center`` when given: a profile's walk starts from the temperature of
    its last point), widened while the best point is at its edge, then Brent's method between the
    best point's neighbours."""

    lo, hi = math.log(T_MIN), math.log(T_MAX)
    if center is None or center <= 0:
        grid = np.linspace(lo, hi, 25)
    else:
        c = min(max(math.log(center), lo), hi)
        grid = np.clip(c + np.linspace(-0.25, 0.25, 3), lo, hi)
    vals = {float(x): _finite(f(math.exp(x))) for x in grid}
    while True:
        xs = sorted(vals)
        i = max(range(len(xs)), key=lambda j: vals[xs[j]])
        if 0 < i < len(xs) - 1 or (i == 0 and xs[0] <= lo) or (i == len(xs) - 1 and xs[-1] >= hi):
            break
        step = 1.0
        nxt = max(xs[0] - step, lo) if i == 0 else min(xs[-1] + step, hi)
        vals[nxt] = _finite(f(math.exp(nxt)))
    a, b = xs[max(i - 1, 0)], xs[min(i + 1, len(xs) - 1)]
    best_x, best_v = xs[i], vals[xs[i]]
    if b > a:
        res = minimize_scalar(
            lambda x: -_finite(f(math.exp(x))), bounds=(a, b), method="bounded", options={"xatol": 1e-5}
        )
        if -res.fun > best_v:
            best_x, best_v = float(res.x), float(-res.fun)
    t0 = _finite(f(0.0))
    if t0 >= best_v:
        return 0.0, t0
    return math.exp(best_x), best_v


@dataclass(frozen=True)
class Mle:
    temperature: float
    blunder: float
    loglik: float


def mle(lik: Likelihood, model: str) -> Mle:
    """The maximum-likelihood (T, blunder) of ``model`` (the parameters it does not fit are 0)."""
    params = MODELS[model]
    if not len(lik.ch):
        return Mle(0.0, 0.0, 0.0)
    if params == ("blunder",):
        p, ll = lik.best_blunder(0.0)
        return Mle(0.0, p, ll)
    if params == ("temperature",):
        t, ll = _max_over_t(lambda t: lik.at(t, 0.0))
        return Mle(t, 0.0, ll)
    t, ll = _max_over_t(lambda t: lik.best_blunder(t)[1])
    p, ll = lik.best_blunder(t)
    return Mle(t, p, ll)
