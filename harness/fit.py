"""Player models fitted to recorded games: maximum likelihood of the solver bot's dial (the ``fit`` command).

The ``solver`` bot's dial defines its choice probabilities exactly (:mod:`strategies.solver`,
:func:`harness.solver_kernels.soft_keeps` and ``choose_boxes``): at every decision (each keep,
``stop`` included, and each box) with n legal options of exact values v_a,

    P(a) = blunder / n + (1 - blunder) x exp(v_a / T) / sum_b exp(v_b / T)

the same rule, with the same temperature T (points), for keep and box decisions; a blunder is a
uniformly random legal option (sub-keeps of the roll, stop included; allowed boxes). T = 0 is
the argmax. The values are those of :func:`harness.analysis.decision_table`, the very numbers the
bot's softmax sees, so a record's likelihood under (T, blunder) is exact and the fitted spec
plays like the fit says. Decisions with one legal option carry no information and are left out.

Ties. The T = 0 bot breaks exact ties by a fixed rule (stop first, larger keeps first; the first
box in sheet order); the model uses the limit of the softmax instead, an equal share among the
options tied for best (regret <= :data:`harness.positions.TIE`), so that the likelihood is
continuous in T down to 0 and the three models are nested. About 1 % of decisions have a tie;
the recovery tests show no measurable bias from it.

Models (``--model``): ``solver:temperature`` (blunder 0), ``solver:blunder`` (T = 0) and
``solver:temperature,blunder``. Fit: T on [0, :data:`T_MAX`] searched in log T (a grid, then
Brent's method, then the T = 0 limit), blunder on [0, 1] (for a fixed T the log-likelihood is
concave in it: the root of its derivative). Intervals: profile likelihood, {theta: 2 (l_max -
l_profile(theta)) <= chi2_1 quantile}; an end at the parameter's bound (T = 0, blunder 0 or 1,
T >= T_MAX) is reported as that bound.

Goodness of fit, both at the fitted parameters (a player is flagged ``poor`` when either p-value is
below :data:`POOR_P`; a bot of the family is flagged about 0.2 % of the time):

* a likelihood-ratio test against the richer model "(T, blunder) fitted separately to keep and to
  box decisions" (df = 4 - parameters of the model, or 2 - parameters with one decision kind).
  A player whose keeps and boxes are not equally good (a greedy bot: fair keeps, poor boxes) fails it.
* the regret distribution: per decision kind, the number of decisions whose regret falls in each
  bin of :data:`REGRET_BINS`, against the number the model predicts (each decision's model
  probabilities summed); X^2 = d' S^+ d with S the exact covariance of the predicted counts (a sum of
  multinomials), df = rank of S (the parameters' estimation is not subtracted: conservative);
  adjacent bins are merged until each expects :data:`MIN_EXPECTED` decisions.

Also per player: decisions used, log-likelihood per decision, top-choice agreement (share of
decisions with regret 0) observed and predicted, mean regret per decision by kind observed and
predicted, and the fitted spec (``solver:temperature=1.02``) ready for ``--seats``. The pooled fit
treats every selected player's decisions as one player. The *median player* is the player with the
median regret per seat-game (model-free; the lower median for an even count): ``calibrate --levels
--against FIT.json`` tunes against that player's fitted spec.

Public API::

    from harness.fit import fit_table, fit_records, Choices, fit_choices
    rep = fit_records(read_records("games.jsonl"), "solver:temperature")   # -> FitReport
    rep = fit_records(RecordStream("big.jsonl"), "solver:temperature")    # a log of any size, a batch at a time
    for p in rep.players: p.player, p.params["temperature"].value, p.params["temperature"].ci, p.poor, p.spec
    rep.to_dict()                                                           # what --json prints
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import chi2

from harness import fit_kernels as FK
from harness import registry
from harness.analysis import DECISION_KINDS, Analyser, DecisionTable, decision_batches
from harness.codec import arrays_of_recording
from harness.engine import play
from harness.errors import UserError
from harness.jsonable import jsonable
from harness.positions import TIE
from harness.render import MISSING, Table, ci_level, count, num, pct, plain, sig, statistic
from harness.render import text as render_text
from harness.progress import bar
from harness.record import GameRecord, ReadResult, RecordStream
from harness.solver import n_threads, run_blocks, split_range

#: The models ``fit`` knows: name -> the solver parameters it fits (the others stay 0).
MODELS: dict[str, tuple[str, ...]] = {
    "solver:temperature": ("temperature",),
    "solver:blunder": ("blunder",),
    "solver:temperature,blunder": ("temperature", "blunder"),
}
#: Temperatures are searched in [T_MIN, T_MAX] (log scale) and at 0; beyond T_MAX play is uniform
#: to within the noise of any record.
T_MIN = 1e-3
T_MAX = 1e3
#: Regret bins of the goodness-of-fit check (points): 0 (a best option), (0, 0.5], (0.5, 2], (2, 8], > 8.
REGRET_BINS = (0.0, 0.5, 2.0, 8.0)
BIN_NAMES = ("0", "(0, 0.5]", "(0.5, 2]", "(2, 8]", "> 8")
#: A player is a poor fit when a goodness-of-fit test gives p below this.
POOR_P = 1e-3
#: The least evidence a fit needs to be an answer (``fit --min-decisions``): informative decisions
#: (about a dozen games). The goodness-of-fit tests flag ``greedy`` in every one of 10 records from
#: about 220 decisions (5 games) under the default model, and a temperature is known to +-10 % from
#: about 500 (benchmarks/BENCHMARKS.md, "Player models"): twice the first, the second.
MIN_DECISIONS = 500
#: ... and every parameter's interval no wider than this fraction of its estimate on either side
#: (``fit --max-half-width``: (hi - lo) / 2 <= MAX_HALF_WIDTH x max(estimate, RESOLUTION)).
MAX_HALF_WIDTH = 0.25
#: An estimate near 0 is measured against these instead (a temperature below 0.1 points plays
#: within about 0.01 points per decision of perfect; a blunder rate below 2 %).
RESOLUTION = {"temperature": 0.1, "blunder": 0.02}
#: The verdicts of a fit.
OK, POOR, TOO_LITTLE = "ok", "POOR", "too little data"
#: Games walked per batch when a fit reads its records (the per-option table of a batch only).
BATCH_GAMES = 2000


def parse_model(text: str) -> str:
    """The canonical model name of ``text`` (parameter order free); UserError naming the models."""
    name, _, params = text.replace(" ", "").partition(":")
    ps = [x for x in params.split(",") if x]
    if name == "solver" and ps and len(set(ps)) == len(ps) and set(ps) <= {"temperature", "blunder"}:
        return "solver:" + ",".join(x for x in ("temperature", "blunder") if x in ps)
    raise UserError(f"unknown model {text!r}: the models are {', '.join(MODELS)}")


# ---------------------------------------------------------------------------------------------
# the data of a fit


@dataclass(frozen=True)
class Choices:
    """The informative decisions (two legal options or more) of a player or a pool, flat, identical
    decisions merged into one row with their count.

    ptr: (D0 + 1,) int64 and r: (M,) float32 (or float64) the options of a store of D0 rows: row j's
    are r[ptr[j]:ptr[j + 1]], each legal option's regret (best value - its value; exactly 0 within
    :data:`TIE` of the best) in ascending order; rows: (D,) int64 which rows of the store these are
    (None: all of them, in order); per row of these: rc (D,) the regret of the option played (r's
    type), u (D,) float64 1 / n, kind (D,) int8 0 keep, 1 box, w (D,) float64 the number of decisions
    it stands for (None: 1 each; any number type). ``len`` is the rows, :attr:`decisions` the decisions. A player's
    decisions and their subsets share the store's options (:meth:`subset` copies no option).
    """

    ptr: np.ndarray
    r: np.ndarray
    rc: np.ndarray
    u: np.ndarray
    kind: np.ndarray
    rows: np.ndarray | None = None
    w: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.rows is None:
            object.__setattr__(self, "rows", np.arange(len(self.rc), dtype=np.int64))
        if self.w is None:
            object.__setattr__(self, "w", np.ones(len(self.rc)))

    def __len__(self) -> int:
        return len(self.rc)

    @property
    def decisions(self) -> int:
        """The decisions these rows stand for (each row's count added)."""
        return int(self.w.sum())

    @classmethod
    def of_arrays(cls, values: np.ndarray, n: np.ndarray, chosen: np.ndarray, kind: np.ndarray,
                  dtype: Any = np.float32) -> Choices:
        """From a :class:`harness.analysis.DecisionTable`'s columns (values (D, W), -inf past n[d]);
        ``dtype`` of the stored regrets."""
        b = ChoicesBuilder(dtype=dtype)
        b.add(values, n, chosen, kind, np.zeros(len(n), np.int32))
        return b.choices()

    @classmethod
    def of_table(cls, table: DecisionTable, rows: np.ndarray | None = None, dtype: Any = np.float32) -> Choices:
        """The informative decisions of a :class:`~harness.analysis.DecisionTable` (``rows``: a
        boolean mask or indices of the decisions to keep)."""
        sel = slice(None) if rows is None else rows
        return cls.of_arrays(table.values[sel], table.n[sel], table.chosen[sel], table.kind[sel], dtype)

    def subset(self, mask: np.ndarray) -> Choices:
        """The rows where ``mask`` (D,) bool is true (their options are not copied)."""
        mask = np.asarray(mask, dtype=bool)
        if mask.all():
            return self
        return Choices(self.ptr, self.r, self.rc[mask], self.u[mask], self.kind[mask], self.rows[mask], self.w[mask])

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.ptr, self.r, self.rc, self.u, self.kind, self.rows, self.w))


class _Buffer:
    """A 1-d array grown by half at a time with ``ndarray.resize`` (``realloc``: a large block is
    usually moved by remapping its pages, not copied, so growing seldom holds two copies);
    :meth:`view` of what is filled, once everything has been added (no view lives while it grows)."""

    def __init__(self, dtype: Any, capacity: int = 1024) -> None:
        self.a = np.zeros(max(capacity, 16), dtype=dtype)
        self.n = 0
        self.viewed = False

    def reserve(self, need: int) -> np.ndarray:
        """Room for ``need`` items in all (the array, to be filled by the caller)."""
        if need > len(self.a):
            self.a.resize(max(need, len(self.a) + len(self.a) // 2), refcheck=False)
        return self.a

    def view(self) -> np.ndarray:
        self.viewed = True
        return self.a[:self.n]


class ChoicesBuilder:
    """The store of :class:`Choices` built batch by batch (``fit`` streams a big log through it):
    only what the likelihood needs is kept, the informative decisions' option regrets in CSR form,
    sorted and of ``dtype`` (float32: 4 bytes an option), identical decisions of a player merged
    into one row and a count (:func:`harness.fit_kernels.merge`, a hash table of the rows), and each
    player's summed regret over every decision (the model-free regret per game). ``add`` takes a
    batch of a :class:`~harness.analysis.DecisionTable`'s columns and each decision's player code.

    Memory: per row, its options (4 bytes each, 16.6 on average on scandinavian) and 33 bytes
    (ptr, rc, kind, player, count, hash), plus 16 to 32 of hash table while the store is built
    (dropped when the fit starts); nothing per merged decision (benchmarks/BENCHMARKS.md, "Big logs")."""

    def __init__(self, capacity: int = 1024, dtype: Any = np.float32) -> None:
        self.dtype = np.dtype(dtype)
        self.bits_type = np.dtype(f"u{self.dtype.itemsize}")
        self.r = _Buffer(self.bits_type, capacity * 16)
        self.ptr = _Buffer(np.int64, capacity + 1)
        self.ptr.n = 1
        self.rc = _Buffer(self.bits_type, capacity)
        self.kind = _Buffer(np.int8, capacity)
        self.who = _Buffer(np.int32, capacity)  # player of each row
        self.w = _Buffer(np.int64, capacity)  # decisions of each row
        self.hashes = _Buffer(np.uint64, capacity)
        self.table = np.full(1 << max(4, (2 * capacity - 1).bit_length()), -1, np.int64)
        self.regret = np.zeros(0)  # per player code: best value - chosen value over every decision, as the sums count it

    @property
    def rows(self) -> int:
        return self.kind.n

    def add(self, values: np.ndarray, n: np.ndarray, chosen: np.ndarray, kind: np.ndarray, who: np.ndarray) -> None:
        if self.ptr.viewed:
            raise RuntimeError("a store takes no decisions once its choices were asked for")
        n = np.asarray(n, dtype=np.int64)
        chosen = np.asarray(chosen, np.int64)
        who = np.asarray(who, np.int32)
        legal = np.arange(values.shape[1])[None, :] < n[:, None]
        best = np.where(legal, values, -np.inf).max(axis=1)
        if len(who):
            top = int(who.max()) + 1
            if top > len(self.regret):
                self.regret = np.concatenate([self.regret, np.zeros(top - len(self.regret))])
            self.regret[:top] += np.bincount(who, weights=best - values[np.arange(len(n)), chosen], minlength=top)
        keep = n >= 2
        values, n, chosen, kind, legal = values[keep], n[keep], chosen[keep], kind[keep], legal[keep]
        v = np.where(legal, values, -np.inf)
        reg = v.max(axis=1, initial=-np.inf)[:, None] - v  # +inf past the legal options
        reg[legal & (reg <= TIE)] = 0.0
        rc = reg[np.arange(len(n)), chosen]
        if len(n) and not np.isfinite(rc).all():
            raise ValueError("a chosen option outside the legal ones")
        reg.sort(axis=1)  # ascending: the legal options stay first, the kernels stop at the cut
        opts = reg.astype(self.dtype)[legal].view(self.bits_type)
        bptr = np.zeros(len(n) + 1, np.int64)
        np.cumsum(n, out=bptr[1:])
        need = self.rows + len(n)
        if 2 * need > len(self.table):
            self.table = np.full(1 << (2 * need - 1).bit_length(), -1, np.int64)
            FK.rehash(self.table, self.hashes.a, self.rows)
        rows, m = FK.merge(bptr, opts, rc.astype(self.dtype).view(self.bits_type), np.asarray(kind, np.int8),
                           who[keep], self.table, self.hashes.reserve(need), self.ptr.reserve(need + 1),
                           self.r.reserve(self.r.n + len(opts)), self.rc.reserve(need), self.kind.reserve(need),
                           self.who.reserve(need), self.w.reserve(need), self.rows, self.r.n)
        for b in (self.kind, self.rc, self.who, self.w, self.hashes):
            b.n = rows
        self.ptr.n, self.r.n = rows + 1, m

    def choices(self, players: Sequence[int] | None = None) -> Choices:
        """The informative decisions of ``players`` (codes; None: every decision), in order. Once
        asked, the store takes no more decisions (its hash table is dropped)."""
        self.table, self.hashes.a = np.zeros(0, np.int64), np.zeros(0, np.uint64)
        ptr = self.ptr.view()
        ch = Choices(ptr, self.r.view().view(self.dtype), self.rc.view().view(self.dtype), 1.0 / np.diff(ptr),
                     self.kind.view(), None, self.w.view())
        if players is None:
            return ch
        return ch.subset(np.isin(self.who.view(), np.asarray(players, np.int32)))

    def regret_sum(self, players: Sequence[int]) -> float:
        """The summed regret of every decision of ``players``."""
        return float(sum(self.regret[c] for c in players if c < len(self.regret)))

    @property
    def nbytes(self) -> int:
        """The store's bytes (buffers as allocated, hash table included)."""
        return sum(b.a.nbytes for b in (self.r, self.ptr, self.rc, self.kind, self.who, self.w, self.hashes)) + \
            self.table.nbytes


class Likelihood:
    """log L(T, blunder) of a :class:`Choices` and its profiles (the chosen options' softmax
    probabilities are cached per temperature)."""

    #: The cache of chosen-option probabilities holds at most this many bytes (and 2 temperatures at least).
    CACHE_BYTES = 16 << 20
    #: From this many rows a pass is split between the cores (the kernel releases the GIL).
    PARALLEL_ROWS = 20_000

    def __init__(self, ch: Choices) -> None:
        self.ch = ch
        self._q: dict[float, np.ndarray] = {}
        self._most = min(257, max(2, self.CACHE_BYTES // max(1, 8 * len(ch))))

    def q(self, t: float) -> np.ndarray:
        q = self._q.get(t)
        if q is None:
            if len(self._q) >= self._most:
                self._q.pop(next(iter(self._q)))
            ch, q = self.ch, np.empty(len(self.ch))

            def part(a: int, b: int) -> None:
                FK.chosen_probs(ch.ptr, ch.r, ch.rows[a:b], ch.rc[a:b], float(t), q[a:b])

            threads = n_threads() if len(ch) >= self.PARALLEL_ROWS else 1
            run_blocks(part, split_range(0, len(ch), threads), threads)
            self._q[t] = q
        return q

    def at(self, t: float, p: float) -> float:
        if p >= 1.0:  # every choice uniform: the temperature does not matter (no pass over the options)
            return float(FK.loglik(self.ch.u, self.ch.u, self.ch.w, 1.0))
        q = self.q(t)
        return float(FK.loglik(q, self.ch.u, self.ch.w, float(p)))

    def best_blunder(self, t: float) -> tuple[float, float]:
        """(blunder, log L) maximising over the blunder rate at temperature t (concave in it)."""
        q, u, w = self.q(t), self.ch.u, self.ch.w
        a = u - q
        if not len(q):
            return 0.0, 0.0

        def slope(p: float) -> float:
            return float(FK.blunder_slope(q, u, w, float(p)))

        if np.any((q == 0) & (a > 0)):
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
        res = minimize_scalar(lambda x: -_finite(f(math.exp(x))), bounds=(a, b), method="bounded",
                              options={"xatol": 1e-5})
        if -res.fun > best_v:
            best_x, best_v = float(res.x), float(-res.fun)
    t0 = _finite(f(0.0))
    if t0 >= best_v:
        return 0.0, t0
    return math.exp(best_x), best_v


def _crossing(f: Callable[[float], float], inside: float, outside: float, level: float, tol: float,
              top: float | None = None) -> float:
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


@dataclass(frozen=True)
class Test:
    """A goodness-of-fit statistic with its degrees of freedom and p-value."""

    statistic: float
    df: int
    p: float

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "df": self.df, "p": self.p}


def _spec(model: str, m: Mle) -> str:
    """The fitted bot as a spec; parameters at 0 are left out (``solver`` when all are)."""
    parts = [f"{name}={plain(getattr(m, name), 4)}" for name in MODELS[model] if getattr(m, name) > 0]
    return "solver" + (":" + ",".join(parts) if parts else "")


def evidence(decisions: int, params: Mapping[str, tuple[float, float, float]], min_decisions: int = MIN_DECISIONS,
             max_half_width: float = MAX_HALF_WIDTH) -> list[str]:
    """Why a fit of ``decisions`` informative decisions and parameter estimates {name: (value, lo,
    hi)} is too little data to be an answer (empty: it is enough): fewer than ``min_decisions``, or
    an interval wider than ``max_half_width`` x max(value, :data:`RESOLUTION`) on either side."""
    why = []
    if decisions < min_decisions:
        why.append(f"{decisions:,} decisions, fewer than {min_decisions:,}")
    for name, (value, lo, hi) in params.items():
        scale = max(value, RESOLUTION.get(name, 0.0)) if math.isfinite(value) else math.nan
        if not (math.isfinite(hi) and math.isfinite(lo) and (hi - lo) / 2 <= max_half_width * scale):
            why.append(f"the {name}'s interval [{sig(lo, 3)}, {sig(hi, 3)}] is wider than "
                       f"±{100 * max_half_width:g} % of {sig(scale, 3)}")
    return why


@dataclass(frozen=True)
class PlayerFit:
    """The fit of one player (or the pool): see the module docstring for each figure."""

    player: str
    model: str
    params: dict[str, Estimate]
    temperature: float
    blunder: float
    decisions: int
    seat_games: int
    regret_per_game: float
    loglik: float
    agreement: float
    agreement_model: float
    by_kind: dict[str, dict[str, Any]]
    lr: Test | None
    regret_test: Test | None
    observed_bins: np.ndarray
    expected_bins: np.ndarray
    poor: bool
    notes: tuple[str, ...] = field(default=())
    #: why the fit is too little data to be an answer (:func:`evidence`; empty: enough)
    too_little: tuple[str, ...] = field(default=())

    @property
    def enough(self) -> bool:
        """Enough evidence for an answer (:data:`MIN_DECISIONS`, :data:`MAX_HALF_WIDTH`)."""
        return not self.too_little

    @property
    def verdict(self) -> str:
        """``too little data`` (below the minimum of evidence, whatever the tests say), ``POOR`` or ``ok``."""
        return TOO_LITTLE if self.too_little else POOR if self.poor else OK

    @property
    def spec(self) -> str:
        return _spec(self.model, Mle(self.temperature, self.blunder, self.loglik))

    @property
    def loglik_per_decision(self) -> float | None:
        return self.loglik / self.decisions if self.decisions else None

    def to_dict(self) -> dict[str, Any]:
        return {"player": self.player, "model": self.model, "spec": self.spec,
                "params": {k: v.to_dict() for k, v in self.params.items()},
                "decisions": self.decisions, "seat_games": self.seat_games, "regret_per_game": self.regret_per_game,
                "loglik": self.loglik, "loglik_per_decision": self.loglik_per_decision,
                "top_choice": {"observed": self.agreement, "model": self.agreement_model},
                "by_kind": self.by_kind, "verdict": self.verdict, "too_little_data": list(self.too_little),
                "goodness_of_fit": {
                    "poor": self.poor, "threshold_p": POOR_P,
                    "lr_vs_per_kind": None if self.lr is None else self.lr.to_dict(),
                    "regret_distribution": None if self.regret_test is None else self.regret_test.to_dict(),
                    "regret_bins": list(BIN_NAMES),
                    "observed": {k: self.observed_bins[i].tolist() for i, k in enumerate(DECISION_KINDS)},
                    "expected": {k: self.expected_bins[i].tolist() for i, k in enumerate(DECISION_KINDS)}},
                "notes": list(self.notes)}


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


#: The regret check walks the decisions in blocks of this many (its per-decision bins stay small).
BLOCK = 1 << 18


def _regret_test(ch: Choices, t: float, p: float) -> tuple[Test | None, np.ndarray, np.ndarray, np.ndarray]:
    """The regret-distribution check at (t, p): (test, observed (2, B), expected (2, B), the model's
    mean regret per decision of each kind (2,), nan for a kind without decisions)."""

    edges = np.array(REGRET_BINS)
    nb = len(edges) + 1
    nk = len(DECISION_KINDS)
    observed = np.zeros((nk, nb))
    expected = np.zeros((nk, nb))
    second = np.zeros((nk, nb, nb))  # sum over decisions of p p' (p: the decision's bin probabilities)
    regret = np.zeros(nk)
    for lo in range(0, len(ch), BLOCK):
        hi = min(lo + BLOCK, len(ch))
        probs = np.empty((hi - lo, nb))
        mean = np.empty(hi - lo)
        FK.option_bins(ch.ptr, ch.r, ch.rows[lo:hi], float(t), float(p), edges, probs, mean)
        obs_bin = np.searchsorted(edges, ch.rc[lo:hi], side="left")
        kind, w = ch.kind[lo:hi], ch.w[lo:hi]
        for k in range(nk):
            m = kind == k
            if m.any():
                pm, wm = probs[m], w[m]
                observed[k] += np.bincount(obs_bin[m], weights=wm, minlength=nb)
                expected[k] += wm @ pm
                second[k] += pm.T @ (pm * wm[:, None])
                regret[k] += wm @ mean[m]
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


def fit_choices(ch: Choices, model: str, player: str = "", confidence: float = 0.95, seat_games: int = 0,
                regret_per_game: float = math.nan, *, min_decisions: int = MIN_DECISIONS,
                max_half_width: float = MAX_HALF_WIDTH, step: Callable[[], None] | None = None) -> PlayerFit:
    """Fit ``model`` to one player's (or a pool's) decisions, with intervals, goodness of fit and
    the verdict (``too little data`` below ``min_decisions`` or ``max_half_width``: :func:`evidence`).
    ``step`` is called after each of the fit's :data:`STEPS` stages (a progress bar)."""

    tick = step or (lambda: None)
    model = parse_model(model)
    lik = Likelihood(ch)
    m = mle(lik, model)
    tick()
    decisions = ch.decisions
    params = intervals(lik, model, m, confidence) if len(ch) else {
        k: Estimate(k, math.nan, math.nan, math.nan) for k in MODELS[model]}
    tick()
    notes = []
    # the richer model: (T, blunder) fitted separately to keep and to box decisions
    rich, kinds = 0.0, 0
    for k in range(len(DECISION_KINDS)):
        mk = ch.kind == k
        if mk.any():
            rich += mle(Likelihood(ch.subset(mk)), "solver:temperature,blunder").loglik
            kinds += 1
    tick()
    df = 2 * kinds - len(MODELS[model])
    lr = None
    if df > 0:
        stat = max(0.0, 2 * (rich - m.loglik))
        lr = Test(stat, df, float(chi2.sf(stat, df)))
    rt, observed, expected, mean = _regret_test(ch, m.temperature, m.blunder)
    tick()
    by_kind = {}
    for k, name in enumerate(DECISION_KINDS):
        mk = ch.kind == k
        nk = int(ch.w[mk].sum())
        by_kind[name] = {"decisions": nk,
                         "regret_per_decision": float(ch.w[mk] @ ch.rc[mk].astype(np.float64)) / nk if nk else None,
                         "regret_per_decision_model": float(mean[k]) if nk else None}
    poor = any(t is not None and t.p < POOR_P for t in (lr, rt))
    if "temperature" in params and math.isinf(params["temperature"].hi):
        notes.append(f"the temperature's interval reaches {T_MAX:g} points: play indistinguishable from random")
    if len(ch) == 0:
        notes.append("no decision with a choice: nothing to fit")
    agree = float(ch.w @ (ch.rc == 0.0)) / decisions if len(ch) else math.nan
    agree_model = float(expected[:, 0].sum() / decisions) if len(ch) else math.nan
    too_little = evidence(decisions, {k: (e.value, e.lo, e.hi) for k, e in params.items()}, min_decisions,
                          max_half_width)
    return PlayerFit(player, model, params, m.temperature, m.blunder, decisions, seat_games, regret_per_game,
                     m.loglik, agree, agree_model, by_kind, lr, rt, observed, expected, poor, tuple(notes),
                     tuple(too_little))


#: The stages of :func:`fit_choices` (its ``step`` calls): the maximum, the intervals, the per-kind
#: fits, the regret check.
STEPS = 4


# ---------------------------------------------------------------------------------------------
# many players


@dataclass(frozen=True)
class FitReport:
    """Every player's fit, the pooled fit, the median player, and the games skipped."""

    source: str
    rules: str
    model: str
    confidence: float
    games: int
    players: tuple[PlayerFit, ...]
    pooled: PlayerFit | None
    median: str | None
    bad: tuple[str, ...] = field(default=())
    min_decisions: int = MIN_DECISIONS
    max_half_width: float = MAX_HALF_WIDTH

    def player(self, name: str) -> PlayerFit:
        for p in self.players:
            if p.player == name:
                return p
        raise UserError(f"no player {name!r} in the fit (players: {', '.join(p.player for p in self.players)})")

    def to_dict(self) -> dict[str, Any]:

        return jsonable({
            "format": "yatzy-fit/1", "source": self.source, "rules": self.rules, "model": self.model,
            "confidence": self.confidence, "games": self.games, "median_player": self.median,
            "evidence": {"min_decisions": self.min_decisions, "max_half_width": self.max_half_width,
                         "resolution": RESOLUTION},
            "players": [p.to_dict() for p in self.players],
            "pooled": None if self.pooled is None else self.pooled.to_dict(),
            "bad_games": list(self.bad)})


def fit_table(table: DecisionTable, model: str, *, player: str | None = None, confidence: float = 0.95,
              source: str = "", rules: str = "", games: int = 0, pooled: bool = True,
              bad: Sequence[str] = (), min_decisions: int = MIN_DECISIONS, max_half_width: float = MAX_HALF_WIDTH,
              quiet: bool = True) -> FitReport:
    """Fit ``model`` to every player of a :class:`harness.analysis.DecisionTable` (or ``player``
    alone), and to all of them pooled (when more than one)."""
    store = _Store()
    store.add(table)
    return store.fit(model, player=player, confidence=confidence, source=source, rules=rules, games=games,
                     pooled=pooled, bad=bad, min_decisions=min_decisions, max_half_width=max_half_width,
                     quiet=quiet)


class _Store:
    """The players' decisions of a fit, added a :class:`~harness.analysis.DecisionTable` (a batch
    of games) at a time: a :class:`ChoicesBuilder` and the players' seat-games."""

    def __init__(self) -> None:
        self.b = ChoicesBuilder(1 << 16)
        self.code: dict[str, int] = {}
        self.seat_games: dict[str, int] = {}

    def add(self, table: DecisionTable) -> None:
        for x in table.labels:
            self.code.setdefault(x, len(self.code))
            self.seat_games[x] = self.seat_games.get(x, 0) + 1
        codes = np.array([self.code[x] for x in table.labels], dtype=np.int32)
        who = codes[np.asarray(table.seatgame)] if len(codes) else np.zeros(len(table), np.int32)
        self.b.add(table.values, table.n, table.chosen, table.kind, who)

    def fit(self, model: str, *, player: str | None, confidence: float, source: str, rules: str, games: int,
            pooled: bool, bad: Sequence[str], min_decisions: int, max_half_width: float, quiet: bool) -> FitReport:

        model = parse_model(model)
        names = list(self.code)
        if player is not None:
            if player not in names:
                raise UserError(f"no player {player!r} in the records (players: {', '.join(names)})")
            names = [player]
        pool = pooled and len(names) > 1
        opts = {"min_decisions": min_decisions, "max_half_width": max_half_width}
        per_game = {x: self.b.regret_sum([self.code[x]]) / self.seat_games[x] for x in names}
        with bar(STEPS * (len(names) + pool), "fitting", "step", quiet=quiet) as shown:
            fits = []
            for name in names:
                shown.set_postfix_str(name, refresh=False)
                fits.append(fit_choices(self.b.choices([self.code[name]]), model, name, confidence,
                                        self.seat_games[name], per_game[name], **opts, step=shown.update))
            together = None
            if pool:
                shown.set_postfix_str("(pooled)", refresh=False)
                codes = [self.code[x] for x in names]
                sgs = sum(self.seat_games[x] for x in names)
                together = fit_choices(self.b.choices(None if len(names) == len(self.code) else codes), model,
                                       "(pooled)", confidence, sgs, self.b.regret_sum(codes) / sgs, **opts,
                                       step=shown.update)
        # the median player: among the players with enough evidence (a fit below it is no answer)
        ranked = sorted((f.player for f in fits if f.enough), key=lambda x: (per_game[x], x))
        median = ranked[(len(ranked) - 1) // 2] if ranked else None
        return FitReport(source, rules, model, confidence, games, tuple(fits), together, median, tuple(bad),
                         min_decisions, max_half_width)


def fit_records(source: ReadResult | RecordStream | Iterable[GameRecord], model: str, *, player: str | None = None,
                confidence: float = 0.95, cache_dir: Any = None, min_decisions: int = MIN_DECISIONS,
                max_half_width: float = MAX_HALF_WIDTH, quiet: bool = True) -> FitReport:
    """Fit ``model`` to game records: a :class:`harness.record.ReadResult`, a
    :class:`harness.record.RecordStream` (a log of any size, read a batch at a time: memory does not
    grow with the records held) or records of one rule set. The records are walked
    :data:`BATCH_GAMES` games at a time and only what the likelihood needs is kept
    (:class:`ChoicesBuilder`: the distinct decisions, about 110 bytes each); ``quiet=False`` shows
    progress bars on stderr (a stream draws its own while it is read)."""
    model = parse_model(model)
    stream = RecordStream.of(source)
    held = stream.held
    if held is not None and not len(held.games):
        raise UserError(f"{held.source}: no game records to fit")
    store = _Store()
    games = 0
    with bar(None if held is None else len(held.games), "decisions", "game", quiet=quiet or held is None,
             unit_scale=True) as shown:
        for n, table in decision_batches(stream, BATCH_GAMES, cache_dir=cache_dir):
            store.add(table)
            games += n
            shown.update(n)
    assert stream.named is not None
    rules_name, settings = stream.named
    rules = rules_name + "".join(f" {k}={v}" for k, v in sorted(settings.items()))
    return store.fit(model, player=player, confidence=confidence, source=stream.source, rules=rules, games=games,
                     pooled=True, bad=[b.message for b in stream.errors], min_decisions=min_decisions,
                     max_half_width=max_half_width, quiet=quiet)


def play_table(analyser: Analyser, specs: Sequence[str], games: int | np.ndarray, seed: int) -> DecisionTable:
    """The :class:`~harness.analysis.DecisionTable` of bots ``specs`` playing ``games`` games (a
    count, or the game indices) at one table with ``seed``, straight from the engine's recording
    (no records written; for tests and benchmarks). Each seat-game is labelled with its bot's label."""

    rules = analyser.rules
    idx = np.arange(games, dtype=np.int64) if np.isscalar(games) else np.asarray(games, dtype=np.int64)
    bots = [registry.make(s, rules) for s in specs]
    rec = play(rules, bots, idx, seed, record=True).recording
    b, s = rec.boxes.shape[:2]
    _, d = analyser.walk(*arrays_of_recording(rec), decisions=True)
    return DecisionTable(**d, labels=tuple(bot.label for _ in range(b) for bot in bots),
                         games=tuple(int(g) for g in idx for _ in range(s)),
                         seats=np.tile(np.arange(s, dtype=np.int16), b))


# ---------------------------------------------------------------------------------------------
# text


def _evidence_of(d: Mapping[str, Any]) -> tuple[int, float]:
    """(min_decisions, max_half_width) a fit file was made with (the defaults for an older file)."""
    e = d.get("evidence") or {}
    return int(e.get("min_decisions", MIN_DECISIONS)), float(e.get("max_half_width", MAX_HALF_WIDTH))


def _too_little(p: Mapping[str, Any], d: Mapping[str, Any]) -> list[str]:
    """Why player ``p`` of fit file ``d`` is too little data (its own list, or :func:`evidence` of
    its figures for a file written before the verdict was)."""
    if "too_little_data" in p:
        return list(p["too_little_data"])
    params = {k: (math.nan if e["value"] is None else e["value"], math.nan if e["ci"][0] is None else e["ci"][0],
                  math.inf if e["ci"][1] is None else e["ci"][1]) for k, e in p["params"].items()}
    return evidence(int(p["decisions"]), params, *_evidence_of(d))


def _verdict(p: Mapping[str, Any], d: Mapping[str, Any]) -> str:
    return TOO_LITTLE if _too_little(p, d) else POOR if p["goodness_of_fit"]["poor"] else OK


def _test(t: Mapping[str, Any] | None) -> str:
    return MISSING if t is None else statistic(t["statistic"], t["df"], t["p"])


def tables(d: Mapping[str, Any]) -> list[Table]:
    """The report's tables (:class:`harness.render.Table`) from :meth:`FitReport.to_dict`."""
    params = MODELS[d["model"]]
    rows, gof = [], []
    every = list(d["players"]) + ([d["pooled"]] if d["pooled"] else [])
    for p in every:
        ests = []
        for k in params:
            e = p["params"][k]  # an upper end of None is beyond T_MAX: infinite
            ests.append(sig(e["value"], 3, ci=(e["ci"][0], math.inf if e["ci"][1] is None else e["ci"][1])))
        top = p["top_choice"]
        fit = _verdict(p, d)
        rows.append([p["player"], count(p["seat_games"]), count(p["decisions"]), *ests,
                     num(p["loglik_per_decision"], 3),
                     MISSING if top["observed"] is None else f"{pct(top['observed'])} / {pct(top['model'])}",
                     fit, p["spec"]])
        g = p["goodness_of_fit"]
        kinds = []
        for k in DECISION_KINDS:
            x = p["by_kind"][k]
            kinds.append(MISSING if x["regret_per_decision"] is None else
                         f"{num(x['regret_per_decision'], 3)} / {num(x['regret_per_decision_model'], 3)}")
        gof.append([p["player"], _test(g["lr_vs_per_kind"]), _test(g["regret_distribution"]), *kinds])
    conf = ci_level(d["confidence"])
    return [
        Table(f"Model {d['model']}: P(option) = blunder/n + (1 - blunder) x softmax(value / temperature) over the n "
              f"legal options; maximum likelihood, {conf} profile-likelihood intervals",
              ["player", "games", "decisions", *params, "loglik/decision", "top choice (obs / model)", "fit", "spec"],
              rows),
        Table(f"Goodness of fit (POOR when a test gives p < {sig(POOR_P, 6)}): likelihood ratio against (temperature, "
              "blunder) fitted separately to keeps and boxes; observed vs predicted regret distribution (bins 0, "
              "0.5, 2, 8 points, per kind)",
              ["player", "LR vs per-kind", "regret distribution X2", "keep regret/decision (obs / model)",
               "box regret/decision (obs / model)"], gof)]


def evidence_line(min_decisions: int, max_half_width: float) -> str:
    """The minimum of evidence, in words (fit's output header)."""
    return (f"A fit is an answer (ok or POOR) from {min_decisions:,} decisions and with every interval within "
            f"±{100 * max_half_width:g} % of its estimate (of {sig(RESOLUTION['temperature'], 3)} for a temperature, "
            f"{sig(RESOLUTION['blunder'], 3)} for a blunder rate, when the estimate is below); else: too little "
            "data (never the median player, never a calibrate reference)")


def text(d: Mapping[str, Any]) -> str:
    n, bad = d["games"], len(d["bad_games"])
    out = render_text(tables(d), [f"Source: {d['source']} ({count(n)} game{'s' * (n != 1)}, {count(bad)} "
                                  f"bad game{'s' * (bad != 1)} skipped); rules {d['rules']}",
                                  evidence_line(*_evidence_of(d))])
    short = [(p["player"], _too_little(p, d)) for p in list(d["players"]) + ([d["pooled"]] if d["pooled"] else [])]
    short = [(x, why) for x, why in short if why]
    if short:
        out += "\n\ntoo little data:\n" + "\n".join(f"  {x}: {'; '.join(why)}" for x, why in short)
    if d["median_player"] is None and d["players"]:
        out += "\n\nno median player: every player's fit is too little data"
    elif d["median_player"] is not None and len(d["players"]) > 1:
        med = next(p for p in d["players"] if p["player"] == d["median_player"])
        out += (f"\n\nmedian player (by regret per game, {num(med['regret_per_game'])}): {med['player']}, "
                f"fitted {med['spec']}")
    return out


# ---------------------------------------------------------------------------------------------
# fitted model files (calibrate --against FILE.json)


def reference_of(ref: str) -> tuple[str, str | None]:
    """A reference player for ``calibrate``: a strategy spec as is, or ``FIT.json`` (the file
    ``fit --out`` writes: its median player's fitted spec) or ``FIT.json#PLAYER`` (that player's).
    Returns (spec, where it came from or None)."""
    path, sep, who = ref.partition("#")
    if not path.endswith(".json"):
        return ref, None
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read the fitted model {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a fit file (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not a fit file (invalid JSON: {exc.msg})") from None
    if not isinstance(d, dict) or d.get("format") != "yatzy-fit/1":
        raise UserError(f"{path}: not a fit file (write one with: yatzy-harness fit RECORDS --out {path})")
    name = who if sep else d.get("median_player")
    if name is None:
        raise UserError(f"{path}: no median player, every player's fit is too little data (fit more games, "
                        f"or name one: {path}#PLAYER)")
    for p in d.get("players", []):
        if p.get("player") == name:
            why = _too_little(p, d)
            if why:
                raise UserError(f"{path}: player {name!r} is too little data for a reference ({'; '.join(why)})")
            if p["goodness_of_fit"]["poor"]:
                raise UserError(f"{path}: player {name!r} is a poor fit of {d['model']}: its spec does not play like it")
            return p["spec"], f"{path}#{name}" + ("" if sep else " (median player)")
    names = ", ".join(str(p.get("player")) for p in d.get("players", []))
    raise UserError(f"{path}: no player {name!r} (players: {names})")


__all__ = ["MAX_HALF_WIDTH", "MIN_DECISIONS", "MODELS", "RESOLUTION", "Choices", "ChoicesBuilder", "Estimate",
           "FitReport", "Likelihood", "PlayerFit", "evidence", "fit_choices", "fit_records", "fit_table", "mle", "parse_model", "reference_of", "text"]
