"""Depth of skill, exact: how many steps of a fixed winning margin lie between a weak bot and the optimal one.

Robertie's *complexity number* counts the steps from a beginner to the best player in which each
step beats the one below 75 % of the time; Garfield and Elias's *skill chain* uses 60 %. For other
games both are estimates from human ratings. Here they are exact for a stated ladder of solitaire
bots (:mod:`harness.exact.evaluate`: two solitaire bots never interact, so every head-to-head is exact)::

    from harness.exact.depth import depth_of_skill
    d = depth_of_skill(rules)                    # p = 0.60 and 0.75, from `random` along solver:temperature
    d.chains[0].steps, d.chains[0].levels        # 13.79..., (Level(value=None, bot='random', ...), ...)

Definitions:

* **the ladder**: the weakest bot W (``random`` by default, any solitaire bot), then a dial of the
  solver bot (:data:`DIALS`; by default ``solver:temperature=T`` from T = 1000, nearly uniform
  play, down to T = 0, the optimal bot). A smaller T is a stronger level.
* **the chain**: level 0 is W; level i + 1 is the dial value whose exact score rate (win 1, draw
  1/2: :func:`harness.exact.evaluate.versus`) against level i is p, found by root-finding on exact
  evaluations to :data:`RATE_TOL` (a root floats cannot resolve that finely is kept with
  ``Level.exact`` False and said in the table); the chain stops when the top of the dial (the
  optimal bot) scores less than p against the last level.
* **steps**: the full steps plus the last, fractional one, logit(r) / logit(p) where r is the top's
  score rate against the last level (a step of p is logit(p) on the logistic, Elo, scale; r <= 1/2
  counts nothing). When the dial's weakest end already scores r > p against W, the first step is
  counted the same way (it may exceed 1) and the chain goes on from there.

Cost: every trial value is one exact evaluation (a forward pass over the solver's states, cached
per rule set and bot). A chain first asks for W and a fixed grid of dial values (:attr:`Dial.grid`,
shared by every p and every level: it brackets each root and starts the interpolation); a level
then costs three or four evaluations of a safeguarded inverse interpolation of logit(rate) in
x = log(value + offset) through the bracket's ends and the two known points nearest it (a
bisection when it would leave the bracket or stalls). A chain depends only on (rule set, W, dial, p): never on what was cached or on the order
chains are computed in. Chains are generators that yield the bot specs they need next
(:func:`chain`); :func:`drive` runs any number of them together (several p, several rule sets):
in this process each round's requests at once, and on workers (forked processes or a Dask
cluster, :mod:`harness.exact.cluster`) each chain resuming as soon as its own evaluations are in
(:class:`Evaluator`). With ``candidates`` K > 1 a level's root takes rounds of K evaluations at once
(:func:`_root_rounds`: fewer rounds in a row, more evaluations; the chain depends on K, never on
the workers).
"""

from __future__ import annotations

import hashlib
import logging
import math
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generator, Mapping, Sequence

from harness.util import render as R
from harness.exact.cluster import Tasks, evaluate_task, needs_table, solve_task
from harness.util.errors import UserError
from harness.exact.evaluate import Evaluation, evaluate, is_cached, refusal, solitaire_bot, versus
from harness.game.rules import RuleSet

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
    "solver:temperature": Dial("solver", "temperature", (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0,
                                                         1000.0), 0.5),
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
        out = {"level": self.index, "value": self.value, "bot": self.bot, "mean": self.mean, "std": self.std,
               "score_rate_vs_below": None if math.isnan(self.rate) else self.rate, "p_win": self.p_win,
               "p_draw": self.p_draw, "iterations": self.iterations, "exact": self.exact}
        if self.rounds is not None:
            out["rounds"] = self.rounds
        return out


@dataclass(frozen=True)
class Chain:
    """The chain of levels at score rate ``p`` (see the module's definitions)."""

    p: float
    weakest: str
    dial: str
    levels: tuple[Level, ...]
    first_fraction: float | None   # the first step counted by its logit ratio (W far below the dial)
    top_rate: float                # the top's exact score rate against the last level
    last_fraction: float
    evaluations: int               # distinct evaluations this chain asked for (grid and W included)

    @property
    def full_steps(self) -> int:
        return len(self.levels) - 1 - (self.first_fraction is not None)

    @property
    def steps(self) -> float:
        return self.full_steps + self.last_fraction + (self.first_fraction or 0.0)

    def to_json(self) -> dict[str, Any]:
        return {"p": self.p, "steps": self.steps, "full_steps": self.full_steps, "last_fraction": self.last_fraction,
                "first_fraction": self.first_fraction, "top_score_rate_vs_last": self.top_rate,
                "weakest": self.weakest, "dial": self.dial, "evaluations": self.evaluations,
                "levels": [lv.to_json() for lv in self.levels]}


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
        return (f"{self.weakest}, then {d.name} from {d.bottom:g} (weakest) to {d.top:g} "
                f"({d.bot}{'' if d.top == 0 else f':{d.param}={d.top:g}'}, the top)")

    def to_json(self) -> dict[str, Any]:
        return {"rules": self.rules, "ladder": self.ladder(), "weakest": self.weakest, "dial": self.dial.name,
                "rate_tolerance": RATE_TOL, "seconds": self.seconds, "chains": [c.to_json() for c in self.chains]}

    def tables(self) -> list[R.Table]:
        d = self.dial
        summary = R.Table(
            "Depth of skill (exact): steps from the weakest bot to the optimal one, each scoring p against the one below",
            ["p", "steps", "full steps", "last step", "top's score rate vs last level", "evaluations"],
            [[R.pct(c.p, 0), f"{c.steps:.2f}", str(c.full_steps), f"{c.last_fraction:.2f}", R.pct(c.top_rate, 2),
              str(c.evaluations)] for c in self.chains],
            [f"ladder: {self.ladder()}; every step's exact score rate (win 1, draw 1/2) is p to {RATE_TOL:g}",
             "last step: logit(top's score rate against the last level) / logit(p); evaluations: distinct "
             f"exact evaluations of the chain, its {len(d.grid)} grid values and the weakest bot included"]
            + [f"p = {R.pct(c.p, 0)}: the dial's weakest end scores {R.pct(c.levels[1].rate, 1)} against "
               f"{self.weakest}, counted as {c.first_fraction:.2f} steps" for c in self.chains
               if c.first_fraction is not None]
            + [f"p = {R.pct(c.p, 0)}, level {lv.index}: its score rate {lv.rate!r} is as near p as floats of the "
               f"dial allow, not within {RATE_TOL:g}" for c in self.chains
               for lv in c.levels[1 + (c.first_fraction is not None):] if not lv.exact])
        out = [summary]
        for c in self.chains:
            out.append(R.Table(f"Chain at p = {R.pct(c.p, 0)}", ["level", "bot", d.param, "mean", "std",
                                                                 "score rate vs below"],
                               [[str(lv.index), lv.bot if lv.value is None else d.bot,
                                 R.MISSING if lv.value is None else f"{lv.value:.6g}", f"{lv.mean:.3f}", R.num(lv.std),
                                 R.MISSING if math.isnan(lv.rate) else R.pct(lv.rate, 4)] for lv in c.levels]))
        return out


# ---------------------------------------------------------------------------------------------
# evaluations on demand


class NotCached(Exception):
    """An :class:`Evaluator` with ``cached_only`` was asked for an evaluation the cache lacks."""


Request = tuple[RuleSet, str]
#: A task: a generator that yields the bot specs it needs next and receives their evaluations.
Task = Generator[list[str], list[Evaluation], Any]


def _evaluate_one(rules: RuleSet, spec: str) -> Evaluation:
    return evaluate(rules, spec)


class Evaluator:
    """Evaluations of (rule set, bot spec), each (rule-set digest, bot label) once: in this process,
    on ``executor`` (forked workers; the cache directory reaches them through the environment, see
    :mod:`harness.util.cache`), or on ``tasks`` (:mod:`harness.exact.cluster`: forked workers or a Dask
    cluster, results taken in the order they complete). Before a rule set's evaluations, a value
    table they read and the cache lacks is solved once, as a task of its own, into the shared
    cache. ``on_done(rules, spec, evaluation)`` is called as each one arrives; ``progress`` draws a
    bar over the evaluations with the CPU time left at the measured cost of one (``expected``: how
    many the job will ask for, when known)."""

    def __init__(self, executor: Any = None,
                 on_done: Callable[[RuleSet, str, Evaluation], None] | None = None, *,
                 cached_only: bool = False, tasks: Tasks | None = None, progress: bool = False,
                 expected: int | None = None) -> None:
        self.tasks = tasks if tasks is not None else Tasks(executor) if executor is not None else None
        self.executor = executor
        self.on_done = on_done
        #: evaluate nothing: an evaluation not in the cache raises :class:`NotCached`
        self.cached_only = cached_only
        self.memo: dict[tuple[str, str], Evaluation] = {}
        self._labels: dict[tuple[str, str], str] = {}
        self._tables: set[str] = set()
        self.progress = progress
        self.expected = expected
        self._bar: Any = None
        self._submitted = 0
        #: seconds of the evaluations computed (not read from the cache), and how many: on a
        #: single-threaded worker their CPU time
        self.cpu = 0.0
        self.computed = 0
        #: seconds of each table solve a task did
        self.solve_seconds: list[float] = []

    def key(self, rules: RuleSet, spec: str) -> tuple[str, str]:
        """(digest, label): ``solver:temperature=1`` and ``solver:temperature=1.0`` are one bot. A bot
        that cannot be evaluated exactly there is refused here, before any evaluation is started."""
        k = (rules.digest, spec)
        if k not in self._labels:
            self._labels[k] = solitaire_bot(rules, spec).label
        return rules.digest, self._labels[k]

    def get(self, rules: RuleSet, spec: str) -> Evaluation:
        return self.memo[self.key(rules, spec)]

    def many(self, requests: Sequence[Request]) -> list[Evaluation]:
        todo: dict[tuple[str, str], Request] = {}
        for rules, spec in requests:
            key = self.key(rules, spec)
            if key not in self.memo and key not in todo:
                if self.cached_only and not is_cached(rules, spec):
                    raise NotCached(spec)
                todo[key] = (rules, spec)
        if todo:
            self._show(len(todo))
        if self.tasks is None or (len(todo) <= 1 and not self.tasks.remote):
            for key, (rules, spec) in todo.items():
                self._done(key, rules, spec, _evaluate_one(rules, spec))
        else:
            self._on_tasks(todo)
        return [self.get(rules, spec) for rules, spec in requests]

    def _on_tasks(self, todo: dict[tuple[str, str], Request]) -> None:
        tasks = self.tasks
        assert tasks is not None
        tables = {}
        for (digest, _), (rules, spec) in todo.items():
            if digest not in self._tables and digest not in tables and needs_table(rules, spec):
                tables[digest] = rules
        futures: dict[Any, Any] = {}
        try:
            if tables:  # solved once each, in parallel, before any evaluation reads them
                futures = {tasks.submit(solve_task, rules, key=f"solve-{d[:20]}-{time.time_ns()}"): d
                           for d, rules in tables.items()}
                for fut in tasks.as_completed(list(futures)):
                    self.solve_seconds.append(fut.result())
            self._tables.update(tables)  # (a rule set only plain bots asked for is not marked: its table may be needed later)
            futures = {tasks.submit(evaluate_task, rules, spec, key=f"evaluate-{key[0][:20]}-{_tag(key[1])}-"
                                    f"{time.time_ns()}"): key for key, (rules, spec) in todo.items()}
            for fut in tasks.as_completed(list(futures)):
                key = futures[fut]
                rules, spec = todo[key]
                self._done(key, rules, spec, fut.result())
        except BaseException:  # Ctrl-C, or a task that failed for good: nothing else is left running
            tasks.cancel([f for f in futures if not f.done()])
            raise

    def drive(self, jobs: Sequence[tuple[RuleSet, Task]]) -> list[Any]:
        """:func:`drive` on this evaluator's tasks without rounds: every evaluation a job asks for is
        submitted at once (after its rule set's table solve, if one is needed), and a job resumes
        when its own evaluations are in, in whatever order they complete."""
        tasks = self.tasks
        assert tasks is not None
        results: list[Any] = [None] * len(jobs)
        wants: dict[int, list[tuple[str, str]]] = {}     # job -> the keys it waits for
        asked: dict[int, list[str]] = {}
        flying: dict[Any, tuple[str, Any]] = {}          # future -> ("solve", digest) or ("evaluate", key)
        in_flight: set[tuple[str, str]] = set()
        solving: dict[str, list[tuple[tuple[str, str], Request]]] = {}  # digest -> evaluations held back
        reqs: dict[tuple[str, str], Request] = {}

        def submit(key: tuple[str, str], req: Request) -> None:
            rules, spec = req
            if key in self.memo or key in in_flight:
                return
            in_flight.add(key)
            reqs[key] = req
            digest = key[0]
            if digest in solving:
                solving[digest].append((key, req))
                return
            if digest not in self._tables and needs_table(rules, spec):
                solving[digest] = [(key, req)]
                flying[tasks.submit(solve_task, rules, key=f"solve-{digest[:20]}-{time.time_ns()}")] = \
                    ("solve", digest)
                return
            self._show(1)
            flying[tasks.submit(evaluate_task, rules, spec, key=f"evaluate-{digest[:20]}-{_tag(key[1])}-"
                                f"{time.time_ns()}")] = ("evaluate", key)

        def step(i: int, answer: list[Evaluation] | None) -> None:
            rules, gen = jobs[i]
            try:
                specs = next(gen) if answer is None else gen.send(answer)
            except StopIteration as stop:
                results[i] = stop.value
                wants.pop(i, None)
                return
            asked[i] = specs
            wants[i] = [self.key(rules, sp) for sp in specs]
            for key, sp in zip(wants[i], specs):
                submit(key, (rules, sp))

        def resume_ready() -> None:
            moved = True
            while moved:
                moved = False
                for i in [i for i, keys in wants.items() if all(k in self.memo for k in keys)]:
                    step(i, [self.memo[k] for k in wants[i]])
                    moved = True

        try:
            for i in range(len(jobs)):
                step(i, None)
            resume_ready()
            while flying:
                done, _ = tasks.wait_any(list(flying))
                for fut in done:
                    what, ref = flying.pop(fut)
                    if what == "solve":
                        self.solve_seconds.append(fut.result())
                        self._tables.add(ref)
                        for key, req in solving.pop(ref):
                            in_flight.discard(key)
                            submit(key, req)
                        continue
                    ev = fut.result()
                    in_flight.discard(ref)
                    self._done(ref, *reqs[ref], ev)
                resume_ready()
        except BaseException:  # Ctrl-C, or a task that failed for good: nothing else is left running
            tasks.cancel([f for f in flying if not f.done()])
            raise
        return results

    def _done(self, key: tuple[str, str], rules: RuleSet, spec: str, ev: Evaluation) -> None:
        self.memo[key] = ev
        if not ev.cached:
            self.cpu += ev.seconds
            self.computed += 1
        if self._bar is not None:
            self._bar.update()
            self._bar.set_postfix_str(self.cpu_left(), refresh=False)
        if self.on_done is not None:
            self.on_done(rules, spec, ev)

    def _show(self, n: int) -> None:
        if not self.progress:
            return
        if self._bar is None:
            from harness.util.progress import bar

            self._bar = bar(self.expected, "exact evaluations", "eval", quiet=False)
        self._submitted += n
        if self._submitted > (self._bar.total or 0):
            self._bar.total = self._submitted
            self._bar.refresh()

    def cpu_left(self) -> str:
        """The CPU time the evaluations still to come need, at the mean cost of those computed."""
        if not self.computed or self._bar is None:
            return ""
        left = max(0, (self._bar.total or 0) - self._bar.n)
        return f"~{left * self.cpu / self.computed / 60:.1f} CPU-min left"

    def close(self) -> None:
        """Erase the progress bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _tag(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()[:12]


def drive(tasks: Sequence[tuple[RuleSet, Task]], evaluator: Evaluator) -> list[Any]:
    """Run tasks together (so several chains and rule sets share the workers) and return their
    results. On an evaluator with tasks (:mod:`harness.exact.cluster`) each task resumes as soon as its
    own requests are evaluated (:meth:`Evaluator.drive`): a chain never waits for another's
    evaluations. Otherwise in rounds: every task's pending requests evaluated at once, then each
    task resumes. Either way a task's result depends only on its own evaluations."""
    if evaluator.tasks is not None and not evaluator.cached_only:
        return evaluator.drive(tasks)
    results: list[Any] = [None] * len(tasks)
    pending: dict[int, list[str]] = {}

    def step(i: int, answer: list[Evaluation] | None) -> None:
        gen = tasks[i][1]
        try:
            pending[i] = next(gen) if answer is None else gen.send(answer)
        except StopIteration as stop:
            results[i] = stop.value

    for i in range(len(tasks)):
        step(i, None)
    while pending:
        asked = dict(pending)
        pending.clear()
        evaluator.many([(tasks[i][0], s) for i, specs in asked.items() for s in specs])
        for i, specs in asked.items():
            step(i, [evaluator.get(tasks[i][0], s) for s in specs])
    return results


def fetch(specs: Sequence[str]) -> Task:
    """A task that asks for ``specs`` at once and returns their evaluations."""
    got = yield list(specs)
    return got


# ---------------------------------------------------------------------------------------------
# the chain


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


def chain(p: float, weakest: str = DEFAULT_WEAKEST, dial: Dial = DIALS[DEFAULT_DIAL],
          tol: float = RATE_TOL, candidates: int = 1) -> Task:
    """The chain of levels at score rate ``p`` (a task for :func:`drive`; returns a :class:`Chain`);
    each level's root by rounds of ``candidates`` evaluations at once (:func:`_root`)."""
    got = yield [weakest, *[dial.spec(v) for v in dial.grid]]
    w = got[0]
    known: dict[float, Evaluation] = dict(zip(dial.grid, got[1:]))
    levels = [Level(0, None, w.bot, w.mean, w.std, math.nan, math.nan, math.nan)]

    def level(v: float, below: Evaluation, iterations: int, exact: bool = True, rounds: int | None = None) -> Level:
        ev = known[v]
        win, draw, _ = versus(ev, below)
        return Level(len(levels), v, ev.bot, ev.mean, ev.std, win + 0.5 * draw, win, draw, iterations, exact,
                     rounds)

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


def _root(p: float, below: Evaluation, below_v: float | None, known: dict[float, Evaluation], dial: Dial,
          tol: float) -> Generator[list[str], list[Evaluation], tuple[float, int, bool]]:
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
        if not a < v < b:  # the bracket is as narrow as floats allow: the nearer end, flagged
            best = a if abs(f[a]) <= abs(f[b]) else b
            return best, n, abs(f[best]) <= tol
        (ev,) = yield [dial.spec(v)]
        n += 1
        known[v] = ev
        f[v] = score_rate(ev, below) - p
        log.debug("p=%s against %s: %s=%r scores %+.3e from p%s", p, below.bot, dial.param, v, f[v],
                  " (bisection)" if bisect else "")
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


def _root_rounds(p: float, below: Evaluation, below_v: float | None, known: dict[float, Evaluation], dial: Dial,
                 tol: float, k: int) -> Generator[list[str], list[Evaluation], tuple[float, int, bool, int]]:
    """:func:`_root` by rounds of ``k`` evaluations asked at once (a cluster evaluates them side by
    side, so a level takes fewer rounds in a row): each round the interpolation's guess g and k - 1
    values around it, at multiples of twice its error estimate e (the distance between the guesses
    through the four and the three nearest points), g - 2e, g + 2e, g - 4e, ...; or, when the
    guess leaves the bracket or the last round did not narrow it fourfold, k values cutting the
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
    while n < MAX_ITER:
        xa, xb = dial.x(a), dial.x(b)
        fs, xs = _nearest(f, a, b, p, dial)
        guess = _inverse_interpolation(fs, xs)
        if slow or not xa < guess < xb:
            xs_try = [xa + (xb - xa) * (j + 1) / (k + 1) for j in range(k)]
        else:
            e = abs(guess - _inverse_interpolation(fs[:3], xs[:3])) if len(fs) >= 4 else 0.25 * (xb - xa)
            e = max(e, 1e-12 * (xb - xa))
            xs_try = [guess] + [guess + sign * 2.0 * e * m for m in range(1, k) for sign in (-1.0, 1.0)][:k - 1]
        vs = []
        for x in xs_try:
            v = dial.value(x)
            if a < v < b and v not in vs and v not in f:
                vs.append(v)
        if not vs:  # the bracket is as narrow as floats allow: the nearer end, flagged
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
        width = xb - xa
        a, b = _bracket(f)
        slow = dial.x(b) - dial.x(a) > 0.25 * width
    raise RuntimeError(f"depth of skill: no root within {MAX_ITER} evaluations at p = {p} against {below.bot}")


# ---------------------------------------------------------------------------------------------
# entry points


def chains_for(rates: Sequence[float], weakest: str, dial: Dial, candidates: int = 1) -> list[Task]:
    return [chain(p, weakest, dial, candidates=candidates) for p in check_rates(rates)]


def depth_of_skill(rules: RuleSet, rates: Sequence[float] = DEFAULT_RATES, weakest: str = DEFAULT_WEAKEST,
                   dial: str = DEFAULT_DIAL, evaluator: Evaluator | None = None, candidates: int = 1) -> DepthOfSkill:
    """The exact chains of ``rules`` at each score rate, along ``weakest`` then ``dial`` (see the
    module's definitions); evaluations through ``evaluator`` (default: in this process), each
    level's root by rounds of ``candidates`` evaluations at once (:func:`_root_rounds`; 1: one at a
    time, :func:`_root`)."""
    t0 = time.perf_counter()
    d = dial_of(dial)
    tasks = chains_for(rates, weakest, d, candidates)
    chains = drive([(rules, t) for t in tasks], evaluator or Evaluator())
    return DepthOfSkill(rules.name, chains[0].weakest, d, tuple(chains), time.perf_counter() - t0)


#: ``depth`` modes of ``report`` and ``compare``: "on" computes the depth of skill (cached for next
#: time), "auto" only when every evaluation it needs is cached or the rule set has at most
#: :data:`AUTO_STATES` solver states, "off" leaves it out.
MODES = ("auto", "on", "off")
#: With "auto", a depth of skill not cached is computed only on rule sets of at most this many solver
#: states: its dozens of softmax evaluations take seconds there (forced, 150 states: 24 evaluations
#: for one rate in 6.9 s of CPU), but over a minute on generala's 3,072 (benchmarks/BENCHMARKS.md,
#: "What a depth of skill costs") and hours on scandinavian's 1.4 M.
AUTO_STATES = 500


def depth_if_cheap(rules: RuleSet, mode: str = "auto", rates: Sequence[float] = DEFAULT_RATES,
                   weakest: str = DEFAULT_WEAKEST, dial: str = DEFAULT_DIAL,
                   evaluator: Evaluator | None = None) -> tuple[DepthOfSkill | None, str | None]:
    """(the depth of skill of ``rules``, None) as ``mode`` allows (:data:`MODES`), or (None, why
    not: a one-line note; None with mode "off"). The auto rule first walks the chains from the
    cache alone, which gives the very chains a computation would (a chain depends only on the rule
    set, the ladder and p)."""
    d, why, states = _depth_or_states(rules, mode, rates, weakest, dial, evaluator)
    if states is not None:
        why = not_cached_note([(rules, states)], rates, weakest, dial)
    return d, why


def _depth_or_states(rules: RuleSet, mode: str, rates: Sequence[float], weakest: str, dial: str,
                     evaluator: Evaluator | None) -> tuple[DepthOfSkill | None, str | None, int | None]:
    """:func:`depth_if_cheap`'s (depth, why not, None), but (None, None, the solver's states) for a
    depth of skill that auto mode leaves uncomputed, so that one note can name several rule sets."""
    from harness.exact.solver import build_plan

    if mode not in MODES:
        raise ValueError(f"depth mode must be one of {MODES}, got {mode!r}")
    if mode == "off":
        return None, None, None
    why = refusal(rules, [weakest, dial_of(dial).spec(dial_of(dial).top)])
    if why:
        return None, f"no depth of skill: {why}", None
    states = build_plan(rules).n_states
    if mode == "auto" and states > AUTO_STATES:
        try:
            return depth_of_skill(rules, rates, weakest, dial, Evaluator(cached_only=True)), None, None
        except NotCached:
            return None, None, states
    return depth_of_skill(rules, rates, weakest, dial, evaluator), None, None


def compute_command(rules: RuleSet, rates: Sequence[float] = DEFAULT_RATES, weakest: str = DEFAULT_WEAKEST,
                    dial: str = DEFAULT_DIAL) -> str:
    """The command that computes the depth of skill of ``rules`` on its own (and caches it, for every
    later report and compare of the rule set): ``yatzy-harness evaluate RULES [--set ...] --depth``,
    the rule set by its built-in name or its file, the ladder's flags when they are not the defaults."""
    from harness.game.rules import rules_dir

    builtin = rules_dir() / f"{rules.name}.toml"
    same = builtin.is_file() and Path(rules.source).is_file() and builtin.resolve() == Path(rules.source).resolve()
    words = ["yatzy-harness", "evaluate", rules.name if same else str(rules.source)]
    for key, value in rules.overrides.items():
        words += ["--set", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    words.append("--depth")
    if tuple(rates) != tuple(DEFAULT_RATES):
        words += ["--rates", ",".join(f"{p:g}" for p in rates)]
    if weakest != DEFAULT_WEAKEST:
        words += ["--weakest", weakest]
    if dial != DEFAULT_DIAL:
        words += ["--dial", dial]
    return shlex.join(words)


def not_cached_note(sides: Sequence[tuple[RuleSet, int]], rates: Sequence[float] = DEFAULT_RATES,
                    weakest: str = DEFAULT_WEAKEST, dial: str = DEFAULT_DIAL) -> str:
    """One line for rule sets (with their solver states) whose depth of skill auto mode leaves
    uncomputed: the cost, and the commands that compute it, here (--depth) or once for good."""
    def named(r: RuleSet) -> str:
        return " ".join([r.name, *(f"{k}={v}" for k, v in r.overrides.items())])

    sizes = "; ".join(f"{named(r)}: {n:,} solver states" for r, n in sides)
    each = " each" if len(sides) > 1 else ""
    commands = "; ".join(compute_command(r, rates, weakest, dial) for r, _ in sides)
    return (f"depth of skill not cached ({sizes}; dozens of softmax evaluations{each}, a minute to hours of CPU): "
            f"--depth computes it, or once for every later report and compare: {commands} "
            "(--no-depth silences this)")


def steps_table(depths: Sequence[tuple[str, Mapping[str, Any]]]) -> R.Table:
    """The steps of one or more depths of skill (:meth:`DepthOfSkill.to_json`) side by side, one row
    per score rate (``report``: the run's rule set; ``compare``: BASE's and CANDIDATE's, and the change)."""
    rates = list(dict.fromkeys(c["p"] for _, d in depths for c in d["chains"]))
    rows = []
    for p in rates:
        got = [next((c["steps"] for c in d["chains"] if c["p"] == p), None) for _, d in depths]
        row = [R.pct(p, 0), *[R.MISSING if x is None else f"{x:.2f}" for x in got]]
        if len(depths) == 2:
            row.append(R.MISSING if None in got else f"{got[1] - got[0]:+.2f}")
        rows.append(row)
    head = ["p", *[name for name, _ in depths]] + (["change"] if len(depths) == 2 else [])
    ladders = list(dict.fromkeys(d["ladder"] for _, d in depths))
    return R.Table("Depth of skill (exact): steps from the weakest bot to the optimal one, each scoring p against "
                   "the one below (harness.exact.depth)", head, rows,
                   [f"ladder: {'; '.join(ladders)}; the last step fractional; a different ladder gives a different "
                    "chain (published figures for other games are estimates from human play: docs/findings.md)"])


def side_by_side(base: RuleSet, candidate: RuleSet, mode: str = "auto") -> dict[str, Any]:
    """``compare``'s depth of skill: BASE's and CANDIDATE's rule sets, each as :func:`depth_if_cheap`
    allows (JSON: :meth:`DepthOfSkill.to_json`, or ``{"available": false, "why": ...}``), one
    computation when both sides play the same rules."""
    out: dict[str, Any] = {}
    uncached: list[tuple[str, RuleSet, int]] = []
    for name, rules in (("base", base), ("candidate", candidate)):
        if name == "candidate" and candidate.digest == base.digest:
            out[name] = out["base"]
            continue
        d, why, states = _depth_or_states(rules, mode, DEFAULT_RATES, DEFAULT_WEAKEST, DEFAULT_DIAL, None)
        if states is not None:
            uncached.append((name, rules, states))
        out[name] = d.to_json() if d is not None else {"available": False, "why": why}
    # both sides' costs and commands in one note (each side holds it): the note is said once
    note = not_cached_note([(r, n) for _, r, n in uncached]) if uncached else None
    for name, _, _ in uncached:
        out[name]["why"] = note
    return out


def side_by_side_lines(d: Mapping[str, Any]) -> list[str]:
    """:func:`side_by_side`'s text block: the steps of both sides and their change (a side without
    its depth of skill: a note saying why)."""
    have = [(f"{which.upper()} ({x['rules']})", x) for which, x in d.items() if x.get("available") is not False]
    whys: dict[str, list[str]] = {}
    for which, x in d.items():
        if x.get("available") is False and x.get("why"):
            whys.setdefault(x["why"], []).append(which.upper())
    notes = [f"{' and '.join(sides)}: {why}" for why, sides in whys.items()]
    if not have:
        return ["", *notes] if notes else []
    t = steps_table(have)
    return ["", *R.table_lines(R.Table(t.title, t.header, t.rows, [*t.notes, *notes]))]
