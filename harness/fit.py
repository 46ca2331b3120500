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
    for p in rep.players: p.player, p.params["temperature"].value, p.params["temperature"].ci, p.poor, p.spec
    rep.to_dict()                                                           # what --json prints
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from harness import fit_kernels as FK
from harness.errors import UserError
from harness.positions import TIE

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
KINDS = ("keep", "box")
#: A player is a poor fit when a goodness-of-fit test gives p below this.
POOR_P = 1e-3


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
    """The informative decisions (two legal options or more) of a player or a pool, flat.

    ptr: (D + 1,) int64 decision d's options are r[ptr[d]:ptr[d + 1]]; r: (M,) float64 each legal
    option's regret (best value - its value; exactly 0 within :data:`TIE` of the best); rc: (D,)
    float64 the regret of the option played; u: (D,) float64 1 / n; kind: (D,) int8 0 keep, 1 box.
    """

    ptr: np.ndarray
    r: np.ndarray
    rc: np.ndarray
    u: np.ndarray
    kind: np.ndarray

    def __len__(self) -> int:
        return len(self.rc)

    @classmethod
    def of_arrays(cls, values: np.ndarray, n: np.ndarray, chosen: np.ndarray, kind: np.ndarray) -> Choices:
        """From a :class:`harness.analysis.DecisionTable`'s columns (values (D, W), -inf past n[d])."""
        n = np.asarray(n, dtype=np.int64)
        keep = n >= 2
        values, n, chosen, kind = values[keep], n[keep], np.asarray(chosen, np.int64)[keep], kind[keep]
        legal = np.arange(values.shape[1])[None, :] < n[:, None]
        v = np.where(legal, values, -np.inf)
        reg = v.max(axis=1, initial=-np.inf)[:, None] - v
        reg[legal & (reg <= TIE)] = 0.0
        rc = reg[np.arange(len(n)), chosen]
        if len(n) and not np.isfinite(rc).all():
            raise ValueError("a chosen option outside the legal ones")
        ptr = np.zeros(len(n) + 1, dtype=np.int64)
        np.cumsum(n, out=ptr[1:])
        return cls(ptr, np.ascontiguousarray(reg[legal]), np.ascontiguousarray(rc), 1.0 / n,
                   np.asarray(kind, dtype=np.int8))

    @classmethod
    def of_table(cls, table: Any, rows: np.ndarray | None = None) -> Choices:
        """The informative decisions of a :class:`~harness.analysis.DecisionTable` (``rows``: a
        boolean mask or indices of the decisions to keep)."""
        sel = slice(None) if rows is None else rows
        return cls.of_arrays(table.values[sel], table.n[sel], table.chosen[sel], table.kind[sel])

    def subset(self, mask: np.ndarray) -> Choices:
        idx = np.flatnonzero(mask)
        lens = (self.ptr[1:] - self.ptr[:-1])[idx]
        ptr = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        take = np.concatenate([np.arange(self.ptr[i], self.ptr[i + 1]) for i in idx]) if len(idx) else np.zeros(0, np.int64)
        return Choices(ptr, self.r[take], self.rc[idx], self.u[idx], self.kind[idx])


class Likelihood:
    """log L(T, blunder) of a :class:`Choices` and its profiles (the chosen options' softmax
    probabilities are cached per temperature)."""

    def __init__(self, ch: Choices) -> None:
        self.ch = ch
        self._q: dict[float, np.ndarray] = {}

    def q(self, t: float) -> np.ndarray:
        q = self._q.get(t)
        if q is None:
            if len(self._q) > 256:
                self._q.clear()
            q = np.empty(len(self.ch))
            FK.chosen_probs(self.ch.ptr, self.ch.r, self.ch.rc, float(t), q)
            self._q[t] = q
        return q

    def at(self, t: float, p: float) -> float:
        q = self.q(t)
        with np.errstate(divide="ignore"):
            return float(np.log(q + p * (self.ch.u - q)).sum())

    def best_blunder(self, t: float) -> tuple[float, float]:
        """(blunder, log L) maximising over the blunder rate at temperature t (concave in it)."""
        q, u = self.q(t), self.ch.u
        a = u - q
        if not len(q):
            return 0.0, 0.0

        def slope(p: float) -> float:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return float(np.sum(a / (q + p * a)))

        if np.any((q == 0) & (a > 0)):
            s0 = math.inf
        else:
            s0 = slope(0.0)
        if s0 <= 0:
            return 0.0, self.at(t, 0.0)
        if slope(1.0) >= 0:
            return 1.0, self.at(t, 1.0)
        from scipy.optimize import brentq

        lo, hi = (1e-15 if not math.isfinite(s0) else 0.0), 1.0
        if slope(lo) <= 0:
            return lo, self.at(t, lo)
        p = float(brentq(slope, lo, hi, xtol=1e-12, rtol=1e-12))
        return p, self.at(t, p)


_FLOOR = -1e300  # -inf for the optimisers


def _finite(x: float) -> float:
    return x if x > _FLOOR else _FLOOR


def _max_over_t(f: Callable[[float], float], center: float | None = None) -> tuple[float, float]:
    """(T, f(T)) maximising f over T in {0} and [T_MIN, T_MAX]: a grid in log T (around log
    ``center`` when given, widened while the best point is at its edge), then Brent's method
    between the best point's neighbours."""
    from scipy.optimize import minimize_scalar

    lo, hi = math.log(T_MIN), math.log(T_MAX)
    if center is None or center <= 0:
        grid = np.linspace(lo, hi, 25)
    else:
        c = min(max(math.log(center), lo), hi)
        grid = np.clip(c + np.linspace(-1.0, 1.0, 7), lo, hi)
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


def _crossing(f: Callable[[float], float], inside: float, outside: float, level: float, tol: float) -> float:
    """The x between ``inside`` (f >= level) and ``outside`` (f < level) where f crosses level (bisection)."""
    a, b = inside, outside
    for _ in range(200):
        if abs(b - a) <= tol:
            break
        m = (a + b) / 2
        if f(m) >= level:
            a = m
        else:
            b = m
    return (a + b) / 2


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
    from scipy.stats import chi2

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
            lo = math.exp(_crossing(g, x0, math.log(T_MIN), level, 1e-5))
        if g(math.log(T_MAX)) >= level:
            hi = math.inf
        else:
            hi = math.exp(_crossing(g, x0, math.log(T_MAX), level, 1e-5))
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
            if prof_p(end) >= level:
                bounds.append(end)
            else:
                bounds.append(_crossing(prof_p, m.blunder, end, level, 1e-6))
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
    parts = [f"{name}={_num(getattr(m, name))}" for name in MODELS[model] if getattr(m, name) > 0]
    return "solver" + (":" + ",".join(parts) if parts else "")


def _num(x: float) -> str:
    """4 significant digits, plain notation for the spec (0.000123 not 1.23e-04)."""
    if x == 0:
        return "0"
    s = f"{x:.4g}"
    if "e" in s:
        s = f"{x:.{max(0, 3 - math.floor(math.log10(abs(x))))}f}".rstrip("0").rstrip(".")
    return s


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
                "by_kind": self.by_kind,
                "goodness_of_fit": {
                    "poor": self.poor, "threshold_p": POOR_P,
                    "lr_vs_per_kind": None if self.lr is None else self.lr.to_dict(),
                    "regret_distribution": None if self.regret_test is None else self.regret_test.to_dict(),
                    "regret_bins": list(BIN_NAMES),
                    "observed": {k: self.observed_bins[i].tolist() for i, k in enumerate(KINDS)},
                    "expected": {k: self.expected_bins[i].tolist() for i, k in enumerate(KINDS)}},
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


def _regret_test(ch: Choices, t: float, p: float) -> tuple[Test | None, np.ndarray, np.ndarray, np.ndarray]:
    """The regret-distribution check at (t, p): (test, observed (2, B), expected (2, B), each
    decision's model mean regret (D,))."""
    from scipy.stats import chi2

    edges = np.array(REGRET_BINS)
    nb = len(edges) + 1
    probs = np.empty((len(ch), nb))
    mean = np.empty(len(ch))
    FK.option_bins(ch.ptr, ch.r, float(t), float(p), edges, probs, mean)
    obs_bin = np.searchsorted(edges, ch.rc, side="left")
    observed = np.zeros((len(KINDS), nb))
    expected = np.zeros((len(KINDS), nb))
    stat, df = 0.0, 0
    for k in range(len(KINDS)):
        m = ch.kind == k
        if not m.any():
            continue
        observed[k] = np.bincount(obs_bin[m], minlength=nb)
        expected[k] = probs[m].sum(axis=0)
        # adjacent bins merged until each expects MIN_EXPECTED decisions (the chi-square
        # approximation fails for rare cells: one decision where 0.04 are expected is not p = 1e-14)
        g = _groups(expected[k])
        pk = probs[m] @ g.T
        cov = np.diag(g @ expected[k]) - pk.T @ pk
        w, vec = np.linalg.eigh(cov)
        keep = w > max(1e-9 * w.max(initial=0.0), 1e-12)
        z = vec[:, keep].T @ (g @ (observed[k] - expected[k]))
        stat += float(np.sum(z * z / w[keep]))
        df += int(keep.sum())
    test = Test(stat, df, float(chi2.sf(stat, df))) if df else None
    return test, observed, expected, mean


def fit_choices(ch: Choices, model: str, player: str = "", confidence: float = 0.95, seat_games: int = 0,
                regret_per_game: float = math.nan) -> PlayerFit:
    """Fit ``model`` to one player's (or a pool's) decisions, with intervals and goodness of fit."""
    from scipy.stats import chi2

    model = parse_model(model)
    lik = Likelihood(ch)
    m = mle(lik, model)
    params = intervals(lik, model, m, confidence) if len(ch) else {
        k: Estimate(k, math.nan, math.nan, math.nan) for k in MODELS[model]}
    notes = []
    # the richer model: (T, blunder) fitted separately to keep and to box decisions
    rich, kinds = 0.0, 0
    for k in range(len(KINDS)):
        mk = ch.kind == k
        if mk.any():
            rich += mle(Likelihood(ch.subset(mk)), "solver:temperature,blunder").loglik
            kinds += 1
    df = 2 * kinds - len(MODELS[model])
    lr = None
    if df > 0:
        stat = max(0.0, 2 * (rich - m.loglik))
        lr = Test(stat, df, float(chi2.sf(stat, df)))
    rt, observed, expected, mean = _regret_test(ch, m.temperature, m.blunder)
    by_kind = {}
    for k, name in enumerate(KINDS):
        mk = ch.kind == k
        nk = int(mk.sum())
        by_kind[name] = {"decisions": nk,
                         "regret_per_decision": float(ch.rc[mk].mean()) if nk else None,
                         "regret_per_decision_model": float(mean[mk].mean()) if nk else None}
    poor = any(t is not None and t.p < POOR_P for t in (lr, rt))
    if "temperature" in params and math.isinf(params["temperature"].hi):
        notes.append(f"the temperature's interval reaches {T_MAX:g} points: play indistinguishable from random")
    if len(ch) == 0:
        notes.append("no decision with a choice: nothing to fit")
    agree = float(np.mean(ch.rc == 0.0)) if len(ch) else math.nan
    agree_model = float(expected[:, 0].sum() / len(ch)) if len(ch) else math.nan
    return PlayerFit(player, model, params, m.temperature, m.blunder, len(ch), seat_games, regret_per_game,
                     m.loglik, agree, agree_model, by_kind, lr, rt, observed, expected, poor, tuple(notes))


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

    def player(self, name: str) -> PlayerFit:
        for p in self.players:
            if p.player == name:
                return p
        raise UserError(f"no player {name!r} in the fit (players: {', '.join(p.player for p in self.players)})")

    def to_dict(self) -> dict[str, Any]:
        from harness.jsonable import jsonable

        return jsonable({
            "format": "yatzy-fit/1", "source": self.source, "rules": self.rules, "model": self.model,
            "confidence": self.confidence, "games": self.games, "median_player": self.median,
            "players": [p.to_dict() for p in self.players],
            "pooled": None if self.pooled is None else self.pooled.to_dict(),
            "bad_games": list(self.bad)})


def fit_table(table: Any, model: str, *, player: str | None = None, confidence: float = 0.95,
              source: str = "", rules: str = "", games: int = 0, pooled: bool = True,
              bad: Sequence[str] = ()) -> FitReport:
    """Fit ``model`` to every player of a :class:`harness.analysis.DecisionTable` (or ``player``
    alone), and to all of them pooled (when more than one)."""
    model = parse_model(model)
    labels = np.asarray(table.labels, dtype=object)
    names = list(dict.fromkeys(table.labels))
    if player is not None:
        if player not in names:
            raise UserError(f"no player {player!r} in the records (players: {', '.join(names)})")
        names = [player]
    sg_of = np.asarray(table.seatgame)
    who = labels[sg_of] if len(labels) else np.empty(0, object)
    n = np.asarray(table.n)
    values = table.values
    best = np.where(np.arange(values.shape[1])[None, :] < n[:, None], values, -np.inf).max(axis=1)
    regret = best - values[np.arange(len(n)), np.asarray(table.chosen, np.int64)]
    fits = []
    per_game = {}
    for name in names:
        rows = who == name
        sgs = np.flatnonzero(labels == name)
        per_game[name] = float(regret[rows].sum() / len(sgs)) if len(sgs) else math.nan
        fits.append(fit_choices(Choices.of_table(table, rows), model, name, confidence, len(sgs), per_game[name]))
    pool = None
    if pooled and len(names) > 1:
        rows = np.isin(who, names)
        sgs = int(np.isin(labels, names).sum())
        pool = fit_choices(Choices.of_table(table, rows), model, "(pooled)", confidence, sgs,
                           float(regret[rows].sum() / sgs) if sgs else math.nan)
    ranked = sorted(names, key=lambda x: (per_game[x], x))
    median = ranked[(len(ranked) - 1) // 2] if ranked else None
    return FitReport(source, rules, model, confidence, games, tuple(fits), pool, median, tuple(bad))


def fit_records(source: Any, model: str, *, player: str | None = None, confidence: float = 0.95,
                cache_dir: Any = None) -> FitReport:
    """Fit ``model`` to game records: a :class:`harness.record.ReadResult` or records of one rule set."""
    from harness.analysis import decision_table
    from harness.record import ReadResult

    model = parse_model(model)
    loaded = None  # the records' rule set as reading loaded it (what a record read from a file may name)
    if isinstance(source, ReadResult) and source.arrays is not None:
        # a run directory: its arrays straight to the kernel, no record built
        name, recs, bad = source.source, source.arrays, [b.message for b in source.errors]
        rules_name, settings = recs.rules_name, recs.settings
    else:
        if isinstance(source, ReadResult):
            name, recs, bad = source.source, list(source.games), [b.message for b in source.errors]
            loaded = source.rules[0] if source.rules else None
        else:
            name, recs, bad = "<records>", list(source), []
        rules_name, settings = (recs[0].rules, recs[0].settings) if recs else ("", {})
    if not len(recs):
        raise UserError(f"{name}: no game records to fit")
    table = decision_table(recs, cache_dir=cache_dir, rules=loaded)
    rules = rules_name + "".join(f" {k}={v}" for k, v in sorted(settings.items()))
    return fit_table(table, model, player=player, confidence=confidence, source=name, rules=rules,
                     games=len(recs), bad=bad)


def play_table(analyser: Any, specs: Sequence[str], games: int | np.ndarray, seed: int) -> Any:
    """The :class:`~harness.analysis.DecisionTable` of bots ``specs`` playing ``games`` games (a
    count, or the game indices) at one table with ``seed``, straight from the engine's recording
    (no records written; for tests and benchmarks). Each seat-game is labelled with its bot's label."""
    from harness import registry
    from harness.analysis import DecisionTable
    from harness.codec import arrays_of_recording
    from harness.engine import play

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


def _interval(e: Estimate, pct: bool = False) -> str:
    if math.isnan(e.value):
        return "–"

    def f(x: float) -> str:
        if math.isinf(x):
            return "inf"
        return f"{x:.3g}"
    return f"{f(e.value)} [{f(e.lo)}, {f(e.hi)}]"


def _p(t: Mapping[str, Any] | None) -> str:
    if t is None:
        return "–"
    p = t["p"]
    ps = "<1e-300" if p is None or p < 1e-300 else (f"{p:.2g}" if p < 0.01 else f"{p:.2f}")
    return f"{t['statistic']:.1f} (df {t['df']}, p {ps})"


def tables(d: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The report's tables (title, header, rows) from :meth:`FitReport.to_dict`."""
    params = MODELS[d["model"]]
    rows, gof = [], []
    every = list(d["players"]) + ([d["pooled"]] if d["pooled"] else [])
    for p in every:
        ests = []
        for k in params:
            e = p["params"][k]
            ests.append(_interval(Estimate(k, e["value"] if e["value"] is not None else math.nan,
                                           e["ci"][0] if e["ci"][0] is not None else math.nan,
                                           math.inf if e["ci"][1] is None else e["ci"][1]), pct=k == "blunder"))
        lpd = p["loglik_per_decision"]
        top = p["top_choice"]
        fit = "POOR" if p["goodness_of_fit"]["poor"] else "ok"
        rows.append([p["player"], f"{p['seat_games']:,}", f"{p['decisions']:,}", *ests,
                     "–" if lpd is None else f"{lpd:.3f}",
                     "–" if top["observed"] is None else f"{100 * top['observed']:.1f} % / {100 * top['model']:.1f} %",
                     fit, p["spec"]])
        g = p["goodness_of_fit"]
        kinds = []
        for k in KINDS:
            x = p["by_kind"][k]
            kinds.append("–" if x["regret_per_decision"] is None else
                         f"{x['regret_per_decision']:.3f} / {x['regret_per_decision_model']:.3f}")
        gof.append([p["player"], _p(g["lr_vs_per_kind"]), _p(g["regret_distribution"]), *kinds])
    conf = f"{100 * d['confidence']:.4g} %"
    return [
        (f"Model {d['model']}: P(option) = blunder/n + (1 - blunder) x softmax(value / temperature) over the n "
         f"legal options; maximum likelihood, {conf} profile-likelihood intervals",
         ["player", "games", "decisions", *params, "loglik/decision", "top choice (obs / model)", "fit", "spec"], rows),
        (f"Goodness of fit (POOR when a test gives p < {POOR_P:g}): likelihood ratio against (temperature, "
         "blunder) fitted separately to keeps and boxes; observed vs predicted regret distribution (bins 0, "
         "0.5, 2, 8 points, per kind)",
         ["player", "LR vs per-kind", "regret distribution X2", "keep regret/decision (obs / model)",
          "box regret/decision (obs / model)"], gof)]


def text(d: Mapping[str, Any]) -> str:
    n, bad = d["games"], len(d["bad_games"])
    out = [f"Source: {d['source']} ({n:,} game{'s' * (n != 1)}, {bad:,} bad game{'s' * (bad != 1)} skipped); "
           f"rules {d['rules']}"]
    for title, head, rows in tables(d):
        widths = [max(len(x) for x in col) for col in zip(head, *rows)]
        out += ["", title]
        out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
    if d["median_player"] is not None and len(d["players"]) > 1:
        med = next(p for p in d["players"] if p["player"] == d["median_player"])
        out += ["", f"median player (by regret per game, {med['regret_per_game']:.2f}): {med['player']}, "
                    f"fitted {med['spec']}"]
    return "\n".join(out)


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
    for p in d.get("players", []):
        if p.get("player") == name:
            if p["goodness_of_fit"]["poor"]:
                raise UserError(f"{path}: player {name!r} is a poor fit of {d['model']}: its spec does not play like it")
            return p["spec"], f"{path}#{name}" + ("" if sep else " (median player)")
    names = ", ".join(str(p.get("player")) for p in d.get("players", []))
    raise UserError(f"{path}: no player {name!r} (players: {names})")


__all__ = ["MODELS", "Choices", "Estimate", "FitReport", "Likelihood", "PlayerFit", "fit_choices", "fit_records",
           "fit_table", "mle", "parse_model", "reference_of", "text"]
