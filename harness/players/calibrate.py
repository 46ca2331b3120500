"""Difficulty calibration: find the parameter value of a bot that hits a target mean score or win rate.

The response f(v) is measured by playing games with the bot's parameter set to v:

* ``--target-mean X``: the bot alone at a one-seat table; f(v) = its mean final score. A
  solitaire table makes the figure independent of any opponent (scores of non-match-aware bots do
  not depend on the opponent anyway).
* ``--target-win-rate P --against REF``: the bot against REF at a two-seat table, both seatings
  (a gauntlet: every game index is a pair of games on identical dice); f(v) = the bot's score
  rate, win 1, draw 1/2, loss 0. Its interval uses the game pairs as the unit (pentanomial).
  If the bot's label equals REF's (e.g. ``solver`` at ``temperature=0`` against ``solver``), the
  two seats play identically on identical dice and f is exactly 1/2 with no games played.

Luck adjustment (default; ``--no-analyse`` turns it off): every evaluation is played with
``analyse = true``, so each seat-game carries its exact luck (:mod:`harness.decisions.analysis`, mean zero
whatever the policy). For ``--target-mean`` f(v) is then estimated by the mean of the
luck-adjusted score ``total - luck``: unbiased for the same expected score, with a much smaller
variance, so a much narrower interval for the same games. For ``--target-win-rate`` the score rate
is estimated with the luck difference as a control variate: per game pair, y = the bot's mean
score over both seatings and x = the mean over both seatings of (the bot's luck - the reference's
luck), and the regression estimator :func:`harness.stats.control_variate_mean` (coefficient
fitted on the same pairs). A rule set with ``saved_rolls`` cannot be analysed: plain estimates,
with a note.

Every evaluation plays the same seed and game indices (common random numbers), so the noise of
f is largely shared between evaluations and the measured curve is nearly smooth in v: differences
between values are measured much more precisely than each value alone, and a bracketing search
converges instead of chasing noise.

Search: the target must be bracketed by ``--lo``/``--hi`` (defaults: the parameter's declared
range); then Illinois-modified regula falsi (Dowell & Jarratt 1971) on g(v) = f(v) - target until
``|g| <= tol`` at an evaluated point, the bracket is narrower than ``xtol``, or ``--max-evals``.
The reported value is the root of the secant through the final bracket.

Uncertainty (``value_ci``): value +/- (h / |s| + |g_best| / |s|), where h is the CI half-width
of f at the evaluated point nearest the target (sampling error, delta method), g_best that point's
remaining miss (search error) and s the local slope of f. The slope is *not* the secant of the
final bracket: that bracket can be so narrow that the difference of its two responses is noise
(with few games a secant slope ten times too steep was seen, and an interval ten times too
narrow). s is the secant of the narrowest pair of evaluated points on either side of the target
whose responses differ by at least ``SLOPE_SIGNAL`` times the larger CI half-width, so its
relative error is at most about 1/``SLOPE_SIGNAL`` even without the help of common random
numbers; with no such pair, the widest bracket's secant, with a note. The interval is therefore
about the *true* response crossing the target, at the run's confidence level; with more games it
shrinks like 1/sqrt(games).

Exact (``Problem.exact``, ``calibrate --exact``): for a solitaire bot (and reference) f(v) is an
exact function of the dial, no game is played: :class:`ExactEvaluator` gives the mean of the bot's
exact score distribution (:func:`harness.exact.evaluate.evaluate`), or its exact score rate P(win) +
P(draw) / 2 against the reference's independent final (:func:`harness.exact.evaluate.versus`), each value
evaluated once (and cached on disk per spec). :func:`calibrate_exact` then finds the root of
f(v) - target by Brent's method (:func:`scipy.optimize.brentq`) to ``xtol`` in the dial (default
:data:`EXACT_XTOL`): the answer is an evaluated value, its ``value_ci`` the final bracket (two
evaluated values whose responses straddle the target, at most ``xtol`` from the answer), so the
dial that hits the target exactly lies in it; the exact response at the answer is its point's.
Values are played with every digit (specs carry the float's shortest exact form instead of 6
significant digits).

Any bot's dial (:mod:`harness.players.dials`): a built-in bot's float or integer parameter, or an
external engine's option declared in its hello (``--param opt.NAME``): float, integer or an ordered
choice. Engines are measured with the same statistics (the runner plays them: same seeded games
per value, the luck adjustment from the harness's exact values of every position). An integer or
choice dial is searched over whole numbers (a choice by its position in the list) until two
adjacent values bracket the target: the answer is that pair, each with its response and interval
(:attr:`Calibration.pair`), :attr:`Calibration.value` the one whose response is nearer the target.

Stopping: ``precision`` (``--precision P``) ends a float search once the value's interval is within
±P (the ``tol`` rule is then off unless given); an interval still wider at the end gets a note with
the games per evaluation that would bring its sampling part to ±P.

Faults (an engine's late, illegal or lost decisions) are counted per evaluated value
(:attr:`Point.faults`); a value whose games break the referee's limits (more corrupted games than
the engine allows) is *not usable* (:attr:`Point.usable`): it is listed, never used for the root,
the slope or the interval, and the search bisects the bracket instead (a bracket end that is not
usable stops the search with one line).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.util.specs import parse_spec

#: Default largest number of response evaluations (two of them are the bracket ends).
DEFAULT_MAX_EVALS = 12
#: The same for an exact search (Brent's method to :data:`EXACT_XTOL` takes about 10 on a smooth response).
DEFAULT_EXACT_MAX_EVALS = 40
#: Default tolerance of an exact search in the dial (absolute).
EXACT_XTOL = 1e-6


@dataclass(frozen=True)
class Problem:
    """What to calibrate: ``strategy`` spec (other parameters fixed), the ``param`` to tune, and a
    target: ``target_mean`` (points) or ``target_win_rate`` (0..1) against ``against``."""

    rules: str
    settings: tuple[str, ...]
    strategy: str
    param: str
    lo: float
    hi: float
    target_mean: float | None = None
    target_win_rate: float | None = None
    against: str | None = None
    games: int = 10_000
    seed: int = 1
    tol: float | None = None
    xtol: float | None = None
    max_evals: int = DEFAULT_MAX_EVALS
    confidence: float = 0.95
    chunk_size: int | None = None
    workers: int = 0
    #: play with analyse = true and measure the luck-adjusted response (module docstring)
    analyse: bool = True
    #: the response is exact (solitaire bots, no games; module docstring)
    exact: bool = False
    #: the dial's kind: float, integer or choice (then ``values``; ``lo``/``hi`` are positions in it)
    dial: str = "float"
    values: tuple[Any, ...] = ()
    #: stop once the value's interval is within +/- this (a float dial; module docstring)
    precision: float | None = None

    def played(self, value: float) -> Any:
        """What the spec carries at search position ``value`` (an int, a choice, or the float)."""
        if self.dial == "choice":
            return self.values[int(round(value))]
        if self.dial == "integer":
            return int(round(value))
        return float(value)

    def spec_at(self, value: float) -> str:
        """The bot's spec with the dial at ``value``."""
        return spec_with(self.strategy, self.param, self.played(value), self.digits)

    @property
    def kind(self) -> str:
        return "mean" if self.target_mean is not None else "win_rate"

    @property
    def target(self) -> float:
        return float(self.target_mean if self.target_mean is not None else self.target_win_rate)  # type: ignore[arg-type]

    @property
    def f_tol(self) -> float:
        """Stop when the response is this close to the target (points, or a rate)."""
        if self.tol is not None:
            return self.tol
        if self.precision is not None:
            return 0.0
        return 0.1 if self.kind == "mean" else 0.002

    @property
    def v_tol(self) -> float:
        if self.xtol is not None:
            return self.xtol
        return EXACT_XTOL if self.exact else 1e-4 * abs(self.hi - self.lo)

    @property
    def digits(self) -> int | None:
        """Significant digits of the dial in the specs played (None: every digit, an exact search)."""
        return None if self.exact else 6


@dataclass(frozen=True)
class Point:
    """One evaluation: parameter ``value``, response ``f`` with its CI, games played, run directory;
    the ``estimator`` behind f (:data:`PLAIN`, :data:`ADJUSTED_MEAN` or :data:`CONTROLLED_RATE`),
    its variance-reduction factor against the plain estimate and, for a control variate, ``beta``."""

    value: float
    f: float
    lo: float
    hi: float
    games: int
    run_dir: str | None
    estimator: str = "plain"
    variance_reduction: float | None = None
    beta: float | None = None
    #: an engine's faults in these games: decisions, time, illegal, crash, stall, corrupted (games)
    faults: dict[str, int] | None = None
    #: False when the games broke the referee's limits (``why``): the point is not used for the root
    usable: bool = True
    why: str = ""
    #: what the spec carried (an integer or a choice; None: the float ``value``)
    played: Any = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "value": self.value,
            "response": self.f,
            "ci": [self.lo, self.hi],
            "games": self.games,
            "run_dir": self.run_dir,
            "estimator": self.estimator,
            "variance_reduction": self.variance_reduction,
            "beta": self.beta,
            "faults": self.faults,
            "usable": self.usable,
        }
        if self.why:
            out["why"] = self.why
        if self.played is not None:
            out["played"] = self.played
        return out


#: Estimators of the response (``Point.estimator``).
EXACT = "exact (forward pass of the bot's own choice probabilities, no games)"
PLAIN = "plain"
ADJUSTED_MEAN = "luck-adjusted mean (total − luck)"
CONTROLLED_RATE = "score rate, control variate luck difference (regression estimator over game pairs)"


@dataclass(frozen=True)
class Calibration:
    """The result: ``value`` with ``value_ci``, the final ``bracket``, every evaluated point."""

    problem: Problem
    value: float
    value_ci: tuple[float, float]
    sampling_error: float
    search_error: float
    slope: float
    bracket: tuple[float, float]
    points: tuple[Point, ...]
    converged: bool
    notes: tuple[str, ...] = field(default=())
    #: an integer or choice dial: the adjacent pair of values whose responses bracket the target
    pair: tuple[Point, Point] | None = None

    @property
    def half_width(self) -> float:
        return (self.value_ci[1] - self.value_ci[0]) / 2

    @property
    def spec(self) -> str:
        return self.problem.spec_at(self.value)

    @property
    def answer(self) -> Point | None:
        """The evaluated point at :attr:`value` (an exact search's answer always is one)."""
        return next((q for q in self.points if q.value == self.value), None)

    def to_dict(self) -> dict[str, Any]:
        p = self.problem
        out = {
            "strategy": p.strategy,
            "param": p.param,
            "rules": p.rules,
            "settings": list(p.settings),
            "target": {"kind": p.kind, "value": p.target, "against": p.against},
            "value": self.value,
            "value_ci": list(self.value_ci),
            "spec": self.spec,
            "dial": p.dial,
            "precision": p.precision,
            "sampling_error": self.sampling_error,
            "search_error": self.search_error,
            "slope": self.slope,
            "bracket": list(self.bracket),
            "converged": self.converged,
            "exact": p.exact,
            "games": None if p.exact else p.games,
            "seed": None if p.exact else p.seed,
            "confidence": p.confidence,
            "evaluations": [pt.to_dict() for pt in self.points],
            "notes": list(self.notes),
        }
        if p.exact:
            at = self.answer
            out |= {"xtol": p.v_tol, "response": at.f if at else None}
        if self.pair is not None:
            out["pair"] = [
                {"played": p.played(q.value), "spec": p.spec_at(q.value), "response": q.f, "ci": [q.lo, q.hi]}
                for q in self.pair
            ]
        return jsonable(out)


def spec_with(spec: str, param: str, value: float, digits: int | None = 6) -> str:
    """``spec`` with ``param`` set to ``value`` (``digits`` significant digits; None: the float's
    shortest exact form), other parameters kept."""
    name, params = parse_spec(spec)
    if isinstance(value, (bool, str)) or (isinstance(value, int) and not isinstance(value, bool)):
        params[param] = str(value)  # an integer or a choice, as it is
    else:
        params[param] = repr(float(value)) if digits is None else f"{value:.{digits}g}"
    return name + ":" + ",".join(f"{k}={_quoted(v)}" for k, v in params.items())


def _quoted(value: str) -> str:
    """A spec value as it must be written to parse back (quoted when it holds a comma or a space)."""
    if any(c in value for c in ", ") and not (len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"):
        return f"'{value}'" if '"' in value else f'"{value}"'
    return value


def round_value(v: float) -> float:
    """The value actually played (specs carry 6 significant digits)."""
    return float(f"{v:.6g}")


def check_problem(p: Problem) -> None:
    """Validate the strategy, parameter and target with clear messages (before playing anything)."""
    name = parse_spec(p.strategy)[0]
    dial = declared_param(p.strategy, p.param, p.rules, p.settings)
    if dial.kind != p.dial:
        raise UserError(f"{name}:{p.param} is a {dial.kind} dial, the problem says {p.dial}")
    if (p.target_mean is None) == (p.target_win_rate is None):
        raise UserError("give exactly one of --target-mean X or --target-win-rate P")
    if p.target_win_rate is not None:
        if not 0.0 < p.target_win_rate < 1.0:
            raise UserError(f"--target-win-rate must be in (0, 1), got {p.target_win_rate}")
        if not p.against:
            raise UserError("--target-win-rate needs --against SPEC (the reference bot)")
    if not math.isfinite(p.lo) or not math.isfinite(p.hi) or p.lo >= p.hi:
        raise UserError(f"need --lo < --hi, got lo={p.lo}, hi={p.hi}")
    if dial.discrete and (p.lo != int(p.lo) or p.hi != int(p.hi)):
        raise UserError(
            f"{name}:{p.param} is an integer dial: --lo and --hi must be whole numbers, got {p.lo:g}, {p.hi:g}"
        )
    for which, v in (("lo", p.lo), ("hi", p.hi)):
        if (dial.lo is not None and v < dial.lo) or (dial.hi is not None and v > dial.hi):
            raise UserError(f"--{which} {v} is outside {name}:{p.param}'s range {dial.lo}..{dial.hi}")
    if p.games < 2:
        raise UserError(f"--games must be >= 2, got {p.games}")
    if p.max_evals < 3:
        raise UserError(f"--max-evals must be >= 3, got {p.max_evals}")
    if p.precision is not None and not (p.precision > 0 and math.isfinite(p.precision)):
        raise UserError(f"--precision must be a positive number, got {p.precision}")
    if p.exact and dial.discrete:
        raise UserError(f"--exact searches float dials; {name}:{p.param} is a {dial.kind} dial (drop --exact)")
    if p.exact and dial.source == "engine":
        raise UserError(
            "--exact evaluates the harness's own bots: an engine's option is measured by games (drop --exact)"
        )


def declared_param(strategy: str, param: str, rules: str = "scandinavian", settings: tuple[str, ...] = ()):
    """The dial ``param`` of ``strategy`` (:func:`harness.players.dials.dial_of`)."""
    # the registry (numba) and maybe an engine's handshake, on first check: `calibrate --help` reads this module
    from harness.players.dials import dial_of

    return dial_of(strategy, param, rules, settings)


def default_bracket(
    strategy: str, param: str, rules: str = "scandinavian", settings: tuple[str, ...] = ()
) -> tuple[float | None, float | None]:
    """The dial's declared range (None where it has none; a choice: its first and last position)."""
    x = declared_param(strategy, param, rules, settings)
    return x.lo, x.hi


# ---------------------------------------------------------------------------------------------
# the search


def calibrate(
    problem: Problem, evaluate: Callable[[float], Point], progress: Callable[[Point], None] | None = None
) -> Calibration:
    """Bracketing search for f(v) = target (module docstring); ``evaluate(v)`` measures one point."""
    check_problem(problem)
    if problem.dial != "float":
        return _calibrate_discrete(problem, evaluate, progress)
    target, tol = problem.target, problem.f_tol
    points, ev = _recorded(evaluate, round_value, progress)

    a, b = _ends(problem, ev)
    ga, gb = a.f - target, b.f - target
    if ga == 0 or gb == 0:
        best = a if ga == 0 else b
        return _finish(problem, best, a, b, points, True)
    side = 0  # which end was kept last: Illinois halves the kept end's g to avoid one-sided stalls
    converged = False
    bad: set[float] = set()  # values the referee's limits rule out
    misses = 0
    while len(points) < problem.max_evals:
        if abs(b.value - a.value) <= problem.v_tol:
            converged = True
            break
        v = (a.value * gb - b.value * ga) / (gb - ga)
        v = round_value(min(max(v, min(a.value, b.value)), max(a.value, b.value)))
        while v in bad:  # never the same ruled-out value twice: halfway towards the kept end instead
            v = round_value((a.value + v) / 2)
        if v in (a.value, b.value):  # rounding collapsed the step: the bracket is as specs allow
            converged = True
            break
        c = ev(v)
        if not c.usable:
            bad.add(v)
            misses += 1
            if misses >= 2:  # two values in a row the referee's limits rule out: stop here
                break
            continue
        misses = 0
        gc = c.f - target
        if abs(gc) <= tol:
            converged = True
            a, ga, b, gb = (a, ga, c, gc) if (gc > 0) != (ga > 0) else (c, gc, b, gb)
            break
        if (gc > 0) == (gb > 0):
            b, gb = c, gc
            if side == -1:
                ga /= 2
            side = -1
        else:
            a, ga = c, gc
            if side == 1:
                gb /= 2
            side = 1
        if problem.precision is not None and len(points) >= 3:
            now = _finish(problem, _best(points, target), a, b, points, True)
            if now.half_width <= problem.precision:
                converged = True
                break
    return _finish(problem, _best(points, target), a, b, points, converged)


def _best(points: Sequence[Point], target: float) -> Point:
    return min((q for q in points if q.usable), key=lambda q: abs(q.f - target))


def _recorded(
    evaluate: Callable[[float], Point], value: Callable[[float], float], progress: Callable[[Point], None] | None
) -> tuple[list[Point], Callable[[float], Point]]:
    """(the points evaluated so far, the search's evaluation): each position ``value(v)`` evaluated,
    kept, and told to ``progress``."""
    points: list[Point] = []

    def ev(v: float) -> Point:
        pt = evaluate(value(v))
        points.append(pt)
        if progress:
            progress(pt)
        return pt

    return points, ev


def _ends(problem: Problem, ev: Callable[[float], Point]) -> tuple[Point, Point]:
    """The bracket's two ends measured: usable, and their responses on either side of the target."""
    a, b = ev(problem.lo), ev(problem.hi)
    for which, q in (("--lo", a), ("--hi", b)):
        if not q.usable:
            raise UserError(
                f"the games at {which} {_shown(problem, q.value)} broke the referee's limits ({q.why}): "
                "that value cannot be measured; narrow the bracket or fix the engine"
            )
    ga, gb = a.f - problem.target, b.f - problem.target
    if ga != 0 and gb != 0 and (ga > 0) == (gb > 0):
        unit = "points" if problem.kind == "mean" else ""
        raise UserError(
            f"target {problem.target:g} is not bracketed: response at --lo {_shown(problem, a.value)} is "
            f"{a.f:.4g}{unit and ' '}{unit}, at --hi {_shown(problem, b.value)} it is {b.f:.4g}; widen "
            "--lo/--hi (or check the target)"
        )
    return a, b


def _shown(problem: Problem, value: float) -> str:
    v = problem.played(value)
    return f"{v:g}" if isinstance(v, float) else str(v)


def _calibrate_discrete(
    problem: Problem, evaluate: Callable[[float], Point], progress: Callable[[Point], None] | None
) -> Calibration:
    """An integer or choice dial (module docstring): regula falsi on whole positions until two
    adjacent values bracket the target; the answer is that pair."""
    target = problem.target
    points, ev = _recorded(evaluate, lambda v: float(int(round(v))), progress)

    a, b = _ends(problem, ev)
    ga, gb = a.f - target, b.f - target
    notes: list[str] = []
    bad: set[float] = set()
    while abs(b.value - a.value) > 1 and ga != 0 and gb != 0 and len(points) < problem.max_evals:
        lo, hi = min(a.value, b.value), max(a.value, b.value)
        v = round((a.value * gb - b.value * ga) / (gb - ga))
        v = min(max(v, lo + 1), hi - 1)
        free = [x for x in range(int(lo) + 1, int(hi)) if x not in bad]
        if not free:
            break
        v = min(free, key=lambda x: abs(x - v))
        c = ev(v)
        if not c.usable:
            bad.add(c.value)
            continue
        gc = c.f - target
        if (gc > 0) == (ga > 0) and gc != 0:
            a, ga = c, gc
        else:
            b, gb = c, gc
    pair = (a, b) if a.value < b.value else (b, a)
    best = min(pair, key=lambda q: abs(q.f - target))
    converged = abs(b.value - a.value) <= 1 or ga == 0 or gb == 0
    if not converged:
        notes.append(
            f"stopped after {len(points)} evaluations before two adjacent values bracketed the target"
            + (" (values in between broke the referee's limits)" if bad else "")
        )
    slope = (pair[1].f - pair[0].f) / (pair[1].value - pair[0].value) if pair[1].value != pair[0].value else math.nan
    return Calibration(
        problem,
        best.value,
        (pair[0].value, pair[1].value),
        math.nan,
        0.0,
        slope,
        (pair[0].value, pair[1].value),
        tuple(points),
        converged,
        tuple(notes),
        pair,
    )


def calibrate_exact(
    problem: Problem, evaluate: Callable[[float], Point], progress: Callable[[Point], None] | None = None
) -> Calibration:
    """The root of f(v) = target for an exact response (module docstring): Brent's method to
    ``problem.v_tol`` in the dial; ``evaluate(v)`` gives f(v) exactly (its interval a point)."""
    from scipy.optimize import brentq  # scipy (~0.5 s) only for an exact search

    check_problem(problem)
    target = problem.target
    points: list[Point] = []
    seen: dict[float, Point] = {}

    def ev(v: float) -> Point:
        v = float(v)
        if v not in seen:
            seen[v] = evaluate(v)
            points.append(seen[v])
            if progress:
                progress(seen[v])
        return seen[v]

    a, b = ev(problem.lo), ev(problem.hi)
    ga, gb = a.f - target, b.f - target
    notes: list[str] = []
    converged = True
    if ga == 0 or gb == 0:
        value = a.value if ga == 0 else b.value
    elif (ga > 0) == (gb > 0):
        unit = " points" if problem.kind == "mean" else ""
        raise UserError(
            f"target {target:g} is not bracketed: the exact response at --lo {a.value:g} is "
            f"{a.f:.6g}{unit}, at --hi {b.value:g} it is {b.f:.6g}; widen --lo/--hi (or check the target)"
        )
    else:
        # brentq counts its evaluations after the two ends; its rtol at float precision leaves xtol in charge
        value, res = brentq(
            lambda v: ev(v).f - target,
            problem.lo,
            problem.hi,
            xtol=problem.v_tol,
            maxiter=max(1, problem.max_evals - 2),
            full_output=True,
            disp=False,
        )
        value = ev(value).value
        converged = bool(res.converged)
        if not converged:
            notes.append(f"stopped after {len(points)} evaluations before the bracket was {problem.v_tol:g} wide")
    at = seen[value]
    # the final bracket: the answer and the nearest evaluated value whose response is on the other
    # side of the target (none needed when the answer hits it)
    other = [q for q in points if q is not at and (q.f - target) * (at.f - target) <= 0]
    side = min(other, key=lambda q: abs(q.value - value)) if other and at.f != target else at
    bracket = (min(value, side.value), max(value, side.value))
    near = side if side is not at else min((q for q in points if q is not at), key=lambda q: abs(q.value - value))
    slope = (near.f - at.f) / (near.value - at.value)
    ordered = sorted(points, key=lambda q: q.value)
    steps = np.diff([q.f for q in ordered])
    if steps.size and not (np.all(steps >= 0) or np.all(steps <= 0)):
        notes.append(
            "the exact response is not monotone over the evaluated values: another value may hit the target too"
        )
    search = max(value - bracket[0], bracket[1] - value)
    return Calibration(problem, value, bracket, 0.0, search, slope, bracket, tuple(points), converged, tuple(notes))


#: How many CI half-widths two responses must differ by before their secant is trusted as the slope.
SLOPE_SIGNAL = 4.0


def local_slope(points: Sequence[Point], target: float) -> float | None:
    """Slope of f near the target: the secant of the narrowest pair of evaluated points on either
    side of the target whose responses differ by >= SLOPE_SIGNAL x the larger CI half-width
    (module docstring); None when no pair qualifies."""
    best: tuple[float, float] | None = None
    for q in points:
        for r in points:
            if not (q.f > target > r.f) or q.value == r.value:
                continue
            noise = max(q.hi - q.lo, r.hi - r.lo) / 2
            if not math.isfinite(noise) or q.f - r.f < SLOPE_SIGNAL * noise:
                continue
            width = abs(q.value - r.value)
            if best is None or width < best[0]:
                best = (width, (q.f - r.f) / (q.value - r.value))
    return None if best is None else best[1]


def _finish(problem: Problem, best: Point, a: Point, b: Point, all_points: list[Point], converged: bool) -> Calibration:
    target = problem.target
    notes = [
        f"{problem.param}={_shown(problem, q.value)} is not used for the root: {q.why}"
        for q in all_points
        if not q.usable
    ]
    points = [q for q in all_points if q.usable]
    fa, fb = a.f, b.f
    if a.value == b.value or fa == fb:
        slope = math.nan
        value = best.value
    else:
        slope = (fb - fa) / (b.value - a.value)
        value = a.value + (target - fa) / slope
        value = min(max(value, min(a.value, b.value)), max(a.value, b.value))
    if best.f == target:
        value = best.value
    local = local_slope(points, target)
    if local is None:
        notes.append(
            f"no two evaluated points on either side of the target differ by {SLOPE_SIGNAL:g} x their "
            "interval: the slope (and so the value's interval) comes from the widest bracket"
        )
        wide = [(q, r) for q in points for r in points if q.f > target > r.f and q.value != r.value]
        if wide:
            q, r = max(wide, key=lambda qr: abs(qr[0].value - qr[1].value))
            slope = (q.f - r.f) / (q.value - r.value)
    else:
        slope = local
    half = (best.hi - best.lo) / 2 if math.isfinite(best.hi - best.lo) else math.nan
    if slope and math.isfinite(slope):
        samp = half / abs(slope)
        search = abs(best.f - target) / abs(slope)
    else:
        samp = search = math.nan
    ordered = sorted(points, key=lambda q: q.value)
    fs = np.array([q.f for q in ordered])
    steps = np.diff(fs)
    if steps.size and not (np.all(steps >= 0) or np.all(steps <= 0)):
        notes.append(
            "the measured response is not monotone over the evaluated values "
            "(differences within the noise, or a non-monotone parameter): check the curve"
        )
    if not converged:
        notes.append(f"stopped after {len(points)} evaluations before reaching tol={problem.f_tol:g}")
    unc = samp + search
    lo, hi = (value - unc, value + unc) if math.isfinite(unc) else (math.nan, math.nan)
    if problem.precision is not None and not unc <= problem.precision:
        more = (
            f"; its sampling part alone (±{samp:.2g}) needs about {math.ceil(problem.games * (samp / problem.precision) ** 2):,} "
            "games per evaluation"
            if math.isfinite(samp) and samp > problem.precision
            else ""
        )
        notes.append(f"the value's interval ±{unc:.2g} is wider than --precision {problem.precision:g}{more}")
    return Calibration(
        problem,
        value,
        (lo, hi),
        samp,
        search,
        slope,
        (min(a.value, b.value), max(a.value, b.value)),
        tuple(all_points),
        converged,
        tuple(notes),
    )
