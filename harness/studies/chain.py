"""The chain of levels of the depth of skill (:mod:`harness.studies.depth` gives the definitions):
the ladder's dials (:class:`Dial`, :data:`DIALS`), score rates and steps (:func:`score_rate`,
:func:`step_fraction`), the results (:class:`Level`, :class:`Chain`, :class:`DepthOfSkill`), and
:func:`chain`, the task that finds each level by root-finding on exact evaluations
(:func:`_root`, or :func:`_root_rounds` with several candidates in a level's first round).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Generator, Sequence

from harness.util import render as R
from harness.util.errors import UserError
from harness.exact.evaluate import Evaluation, versus
from harness.jobs.driver import Task

log = logging.getLogger(__name__)

#: The score rates of the two published kinds of chain: Garfield/Elias (60 %) and Robertie (75 %).
DEFAULT_RATES = (0.60, 0.75)
DEFAULT_WEAKEST = "random"
#: How close each step's exact score rate comes to p.
RATE_TOL = 1e-10
#: More levels than any chain has (a runaway guard).
MAX_LEVELS = 500
#: Root-finding evaluations per level before giving up (bisection alone needs about 45).
MAX_ITER = 80
#: What a chain not yet run will take (:func:`expected_levels`, :func:`per_level`): its length in
#: logit units, steps x logit(p) (generala 5.6, yahtzee 6.6, standard 6.9, scandinavian 7.1, at
#: both rates: the mean); the evaluations a level's root takes after the grid with one candidate a
#: round (3 or 4 measured); with ``candidates`` K > 1, the evaluations a level takes beyond that for
#: each candidate past the first, and its rounds in a row (scandinavian and generala at K = 2:
#: 3.68 evaluations and 2.68 rounds a level; benchmarks/BENCHMARKS.md, "Two candidates in a level's
#: first round").
CHAIN_LOGITS = 6.5
EVALS_PER_LEVEL = 3.4
EXTRA_EVALS_PER_CANDIDATE = 0.35
ROUNDS_PER_LEVEL_K = 2.7


@dataclass(frozen=True)
class Dial:
    """A monotone dial of the solver bot: ``grid`` its values from the strongest (the optimal bot)
    to the weakest, ``offset`` the shift of the interpolation variable x = log(value + offset)."""

    bot: str
    param: str
    grid: tuple[float, ...]
    offset: float

    @property
    def name(self) -> str:
        return f"{self.bot}:{self.param}"

    @property
    def top(self) -> float:
        return self.grid[0]

    @property
    def bottom(self) -> float:
        return self.grid[-1]

    def spec(self, v: float) -> str:
        return f"{self.bot}:{self.param}={float(v)!r}"

    def x(self, v: float) -> float:
        return math.log(v + self.offset)

    def value(self, x: float) -> float:
        return min(max(math.exp(x) - self.offset, self.top), self.bottom)


#: The dials a ladder can climb. Temperature: the softmax of the exact action values (points);
#: blunder: the chance of a uniformly random legal action at each decision.
DIALS: dict[str, Dial] = {
    "solver:temperature": Dial(
        "solver", "temperature", (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 1000.0), 0.5
    ),
    "solver:blunder": Dial("solver", "blunder", (0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0), 0.02),
}
DEFAULT_DIAL = "solver:temperature"


def dial_of(name: str) -> Dial:
    """The dial :data:`DIALS` names ``name``."""
    if name not in DIALS:
        raise UserError(f"unknown dial {name!r} (dials: {', '.join(DIALS)})")
    return DIALS[name]


def check_rates(rates: Sequence[float]) -> tuple[float, ...]:
    """Score rates of a chain's steps: each in (1/2, 1)."""
    out = tuple(float(p) for p in rates)
    if not out:
        raise UserError("give at least one score rate for the depth of skill")
    for p in out:
        if not 0.5 < p < 1.0:
            raise UserError(f"a depth-of-skill step's score rate must be above 0.5 and below 1, got {p:g}")
    return out


def expected_levels(p: float) -> float:
    """About how many levels a chain at score rate p has (:data:`CHAIN_LOGITS` / logit(p))."""
    return CHAIN_LOGITS / math.log(p / (1 - p))


def per_level(candidates: int = 1) -> tuple[float, float]:
    """(evaluations, rounds in a row) a level's root takes with ``candidates`` values in its first round."""
    if candidates <= 1:
        return EVALS_PER_LEVEL, EVALS_PER_LEVEL
    return EVALS_PER_LEVEL + EXTRA_EVALS_PER_CANDIDATE * (candidates - 1), ROUNDS_PER_LEVEL_K


def expected_rounds(p: float, candidates: int = 1, levels: float | None = None) -> float:
    """About how many rounds of requests a chain at p asks one after another: W and the grid, then its
    levels (``levels``, else :func:`expected_levels`)."""
    return 1.0 + per_level(candidates)[1] * (expected_levels(p) if levels is None else levels)


def score_rate(a: Evaluation, b: Evaluation) -> float:
    """A's exact score rate against B: P(A wins) + P(draw) / 2 (exactly 1/2 for a bot against itself)."""
    if a.bot == b.bot and a.digest == b.digest:
        return 0.5
    win, draw, _ = versus(a, b)
    return win + 0.5 * draw


def _logit(r: float) -> float:
    r = min(max(r, 1e-300), 1.0 - 1e-16)
    return math.log(r / (1.0 - r))


def step_fraction(r: float, p: float) -> float:
    """A gap of score rate r counted in steps of p: logit(r) / logit(p), at least 0."""
    if r <= 0.5:
        return 0.0
    if r >= 1.0:
        return math.inf
    return _logit(r) / _logit(p)


@dataclass(frozen=True)
class Level:
    """One level of a chain: ``value`` its dial value (None for the weakest bot), its exact mean and
    sd, and its exact score rate against the level below (NaN for level 0); ``iterations`` the
    evaluations its root took (0 when a grid value was the root or for level 0); ``exact``:
    its rate is p (False for a first step counted by its logit ratio)."""

    index: int
    value: float | None
    bot: str
    mean: float
    std: float
    rate: float
    p_win: float
    p_draw: float
    iterations: int = 0
    exact: bool = True
    #: rounds of evaluations at once its root took (None: one evaluation a round, ``candidates`` 1)
    rounds: int | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "level": self.index,
            "value": self.value,
            "bot": self.bot,
            "mean": self.mean,
            "std": self.std,
            "score_rate_vs_below": None if math.isnan(self.rate) else self.rate,
            "p_win": self.p_win,
            "p_draw": self.p_draw,
            "iterations": self.iterations,
            "exact": self.exact,
        }
        if self.rounds is not None:
            out["rounds"] = self.rounds
        return out


@dataclass(frozen=True)
class Chain:
    """The chain of levels at score rate ``p`` (see :mod:`harness.studies.depth`'s definitions)."""

    p: float
    weakest: str
    dial: str
    levels: tuple[Level, ...]
    first_fraction: float | None  # the first step counted by its logit ratio (W far below the dial)
    top_rate: float  # the top's exact score rate against the last level
    last_fraction: float
    evaluations: int  # distinct evaluations this chain asked for (grid and W included)

    @property
    def full_steps(self) -> int:
        return len(self.levels) - 1 - (self.first_fraction is not None)

    @property
    def steps(self) -> float:
        return self.full_steps + self.last_fraction + (self.first_fraction or 0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "p": self.p,
            "steps": self.steps,
            "full_steps": self.full_steps,
            "last_fraction": self.last_fraction,
            "first_fraction": self.first_fraction,
            "top_score_rate_vs_last": self.top_rate,
            "weakest": self.weakest,
            "dial": self.dial,
            "evaluations": self.evaluations,
            "levels": [lv.to_json() for lv in self.levels],
        }


@dataclass(frozen=True)
class DepthOfSkill:
    """Chains of one rule set along one ladder, one per score rate."""

    rules: str
    weakest: str
    dial: Dial
    chains: tuple[Chain, ...]
    seconds: float = 0.0

    def ladder(self) -> str:
        d = self.dial
        return (
            f"{self.weakest}, then {d.name} from {d.bottom:g} (weakest) to {d.top:g} "
            f"({d.bot}{'' if d.top == 0 else f':{d.param}={d.top:g}'}, the top)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "ladder": self.ladder(),
            "weakest": self.weakest,
            "dial": self.dial.name,
            "rate_tolerance": RATE_TOL,
            "seconds": self.seconds,
            "chains": [c.to_json() for c in self.chains],
        }

    def tables(self) -> list[R.Table]:
        d = self.dial
        summary = R.Table(
            "Depth of skill (exact): steps from the weakest bot to the optimal one, each scoring p against the one below",
            ["p", "steps", "full steps", "last step", "top's score rate vs last level", "evaluations"],
            [
                [
                    R.pct(c.p, 0),
                    f"{c.steps:.2f}",
                    str(c.full_steps),
                    f"{c.last_fraction:.2f}",
                    R.pct(c.top_rate, 2),
                    str(c.evaluations),
                ]
                for c in self.chains
            ],
            [
                f"ladder: {self.ladder()}; every step's exact score rate (win 1, draw 1/2) is p to {RATE_TOL:g}",
                "last step: logit(top's score rate against the last level) / logit(p); evaluations: distinct "
                f"exact evaluations of the chain, its {len(d.grid)} grid values and the weakest bot included",
            ]
            + [
                f"p = {R.pct(c.p, 0)}: the dial's weakest end scores {R.pct(c.levels[1].rate, 1)} against "
                f"{self.weakest}, counted as {c.first_fraction:.2f} steps"
                for c in self.chains
                if c.first_fraction is not None
            ]
            + [
                f"p = {R.pct(c.p, 0)}, level {lv.index}: its score rate {lv.rate!r} is as near p as floats of the "
                f"dial allow, not within {RATE_TOL:g}"
                for c in self.chains
                for lv in c.levels[1 + (c.first_fraction is not None) :]
                if not lv.exact
            ],
        )
        out = [summary]
        for c in self.chains:
            out.append(
                R.Table(
                    f"Chain at p = {R.pct(c.p, 0)}",
                    ["level", "bot", d.param, "mean", "std", "score rate vs below"],
                    [
                        [
                            str(lv.index),
                            lv.bot if lv.value is None else d.bot,
                            R.MISSING if lv.value is None else f"{lv.value:.6g}",
                            f"{lv.mean:.3f}",
                            R.num(lv.std),
                            R.MISSING if math.isnan(lv.rate) else R.pct(lv.rate, 4),
                        ]
                        for lv in c.levels
                    ],
                )
            )
        return out


def _inverse_interpolation(fs: Sequence[float], xs: Sequence[float]) -> float:
    """Neville's scheme for the x where the polynomial through (f_i, x_i) has f = 0."""
    p = list(xs)
    n = len(p)
    for k in range(1, n):
        for i in range(n - k):
            p[i] = (-fs[i + k] * p[i] + fs[i] * p[i + 1]) / (fs[i] - fs[i + k])
    return p[0]


def _nearest(f: dict[float, float], a: float, b: float, p: float, dial: Dial) -> tuple[list[float], list[float]]:
    """The interpolation's points around the bracket [a, b]: (logit(rate) - logit(p), x) of the
    bracket's ends and the two known values nearest to it in x, distinct rates only."""
    xa, xb = dial.x(a), dial.x(b)
    order = sorted(f, key=lambda v: (v not in (a, b), max(xa - dial.x(v), dial.x(v) - xb, 0.0), v))
    near: list[float] = []
    for v in order:
        if all(f[u] != f[v] for u in near):
            near.append(v)
        if len(near) == 4:
            break
    lp = _logit(p)
    return [_logit(p + f[v]) - lp for v in near], [dial.x(v) for v in near]


def chain(
    p: float,
    weakest: str = DEFAULT_WEAKEST,
    dial: Dial = DIALS[DEFAULT_DIAL],
    tol: float = RATE_TOL,
    candidates: int = 1,
) -> Task:
    """The chain of levels at score rate ``p`` (a task for :func:`harness.jobs.driver.drive`; returns a
    :class:`Chain`); each level's root by :func:`_root`, or with ``candidates`` > 1 by :func:`_root_rounds` (that many
    evaluations at once in its first round)."""
    got = yield [weakest, *[dial.spec(v) for v in dial.grid]]
    w = got[0]
    known: dict[float, Evaluation] = dict(zip(dial.grid, got[1:]))
    levels = [Level(0, None, w.bot, w.mean, w.std, math.nan, math.nan, math.nan)]

    def level(v: float, below: Evaluation, iterations: int, exact: bool = True, rounds: int | None = None) -> Level:
        ev = known[v]
        win, draw, _ = versus(ev, below)
        return Level(len(levels), v, ev.bot, ev.mean, ev.std, win + 0.5 * draw, win, draw, iterations, exact, rounds)

    below, below_v = w, None
    first = None
    r_bottom = score_rate(known[dial.bottom], w)
    if r_bottom > p:  # the whole dial is more than a step above W
        first = step_fraction(r_bottom, p)
        levels.append(level(dial.bottom, w, 0, exact=False))
        below, below_v = known[dial.bottom], dial.bottom
    while True:
        r_top = score_rate(known[dial.top], below)
        if r_top < p or below_v == dial.top:
            break
        if len(levels) > MAX_LEVELS:
            raise RuntimeError(f"depth of skill: more than {MAX_LEVELS} levels at p = {p}")
        if candidates > 1:
            v, n, ok, rounds = yield from _root_rounds(p, below, below_v, known, dial, tol, candidates)
            levels.append(level(v, below, n, ok, rounds))
        else:
            v, n, ok = yield from _root(p, below, below_v, known, dial, tol)
            levels.append(level(v, below, n, ok))
        below, below_v = known[v], v
    evaluations = len({e.bot for e in known.values()} | {w.bot})
    return Chain(p, w.bot, dial.name, tuple(levels), first, r_top, step_fraction(r_top, p), evaluations)


def _root(
    p: float, below: Evaluation, below_v: float | None, known: dict[float, Evaluation], dial: Dial, tol: float
) -> Generator[list[str], list[Evaluation], tuple[float, int, bool]]:
    """The dial value scoring p against ``below`` (at value ``below_v`` of the dial, or None):
    returns (value, evaluations it took, its rate is within ``tol`` of p)."""
    f = {v: score_rate(ev, below) - p for v, ev in known.items() if below_v is None or v <= below_v}
    if below_v is not None:
        f[below_v] = 0.5 - p  # a bot against itself scores 1/2: the bracket's weak end
    # the bracket: a the weakest value that still scores >= p, b the next weaker known value
    a = max(v for v, fv in f.items() if fv >= 0.0)
    if f[a] == 0.0:
        return a, 0, True
    b = min(v for v in f if v > a)
    n = 0
    last = math.inf
    slow = False
    while n < MAX_ITER:
        xa, xb = dial.x(a), dial.x(b)
        guess = _inverse_interpolation(*_nearest(f, a, b, p, dial))
        bisect = slow or not xa < guess < xb
        if bisect:
            guess = 0.5 * (xa + xb)
        v = dial.value(guess)
        if not a < v < b:  # the bracket is as floats allow: the nearer end, flagged
            best = a if abs(f[a]) <= abs(f[b]) else b
            return best, n, abs(f[best]) <= tol
        (ev,) = yield [dial.spec(v)]
        n += 1
        known[v] = ev
        f[v] = score_rate(ev, below) - p
        log.debug(
            "p=%s against %s: %s=%r scores %+.3e from p%s",
            p,
            below.bot,
            dial.param,
            v,
            f[v],
            " (bisection)" if bisect else "",
        )
        if abs(f[v]) <= tol:
            return v, n, True
        if f[v] > 0.0:
            a = v
        else:
            b = v
        # an interpolation that did not cut the last distance from p by 4 is followed by a bisection
        slow = not bisect and abs(f[v]) > 0.25 * last
        last = abs(f[v])
    raise RuntimeError(f"depth of skill: no root within {MAX_ITER} evaluations at p = {p} against {below.bot}")


def _bracket(f: dict[float, float]) -> tuple[float, float]:
    """(a, b): the weakest value still scoring >= p and the next weaker known value."""
    a = max(v for v, fv in f.items() if fv >= 0.0)
    return a, min((v for v in f if v > a), default=a)


def _root_rounds(
    p: float, below: Evaluation, below_v: float | None, known: dict[float, Evaluation], dial: Dial, tol: float, k: int
) -> Generator[list[str], list[Evaluation], tuple[float, int, bool, int]]:
    """:func:`_root` with ``k`` evaluations asked at once where they save a round (a cluster evaluates
    them side by side, so a level takes fewer rounds in a row). The first round asks the
    interpolation's guess g and k - 1 values beside it, at multiples of a quarter of its error
    estimate e (the distance between the guesses through the four and the three nearest points):
    g - e/4, g + e/4, g - e/2, ... Their rates, within about 1e-4 of p, put two or more points near
    the root, so the next round's single guess usually lands within ``tol`` (one round earlier than
    a guess from one near point and three far ones). Later rounds ask that one guess; when the guess
    leaves the bracket or did not cut the distance from p by 4, the round asks k values cutting the
    bracket into k + 1 equal parts. Returns (value, evaluations, exact, rounds). Which values are
    tried depends on p, the ladder, the rates known and k only: never on the workers or the order
    they answer in, so every k gives one chain; different k may stop at different values whose
    rates are all within ``tol`` of p."""
    f = {v: score_rate(ev, below) - p for v, ev in known.items() if below_v is None or v <= below_v}
    if below_v is not None:
        f[below_v] = 0.5 - p
    a, b = _bracket(f)
    if f[a] == 0.0:
        return a, 0, True, 0
    n = rounds = 0
    slow = False
    last = math.inf
    while n < MAX_ITER:
        xa, xb = dial.x(a), dial.x(b)
        fs, xs = _nearest(f, a, b, p, dial)
        guess = _inverse_interpolation(fs, xs)
        section = slow or not xa < guess < xb
        m = k if rounds == 0 or section else 1
        if section:
            xs_try = [xa + (xb - xa) * (j + 1) / (m + 1) for j in range(m)]
        else:
            e = abs(guess - _inverse_interpolation(fs[:3], xs[:3])) if len(fs) >= 4 else 0.25 * (xb - xa)
            e = max(e, 1e-12 * (xb - xa))
            xs_try = [guess] + [guess + sign * 0.25 * e * j for j in range(1, m) for sign in (-1.0, 1.0)][: m - 1]
        vs = []
        for x in xs_try:
            v = dial.value(x)
            if a < v < b and v not in vs and v not in f:
                vs.append(v)
        if not vs:  # the bracket is as floats allow: the nearer end, flagged
            best = a if abs(f[a]) <= abs(f[b]) else b
            return best, n, abs(f[best]) <= tol, rounds
        got = yield [dial.spec(v) for v in vs]
        n += len(vs)
        rounds += 1
        for v, ev in zip(vs, got):
            known[v] = ev
            f[v] = score_rate(ev, below) - p
        hits = [v for v in vs if abs(f[v]) <= tol]
        if hits:
            best = min(hits, key=lambda v: (abs(f[v]), v))
            return best, n, True, rounds
        # a round of guesses that did not cut the distance from p by 4 is followed by a section
        now = min(abs(f[v]) for v in vs)
        slow = not section and now > 0.25 * last
        last = min(last, now)
        a, b = _bracket(f)
    raise RuntimeError(f"depth of skill: no root within {MAX_ITER} evaluations at p = {p} against {below.bot}")
