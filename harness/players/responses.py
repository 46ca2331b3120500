"""The response f(v) of a calibration measured: by runs played and summarised (:class:`RunnerEvaluator`)
or exactly (:class:`ExactEvaluator`).

The search, its problem and the problem's checks are :mod:`harness.players.calibrate` (a light
module: ``calibrate --help`` reads its defaults); this one brings the registry, the runner, the run summaries and the exact
evaluation, which measuring needs.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from harness.exact.evaluate import evaluate, refusal, score_rate, versus
from harness.game.registry import make
from harness.game.rules import load_rules, parse_overrides
from harness.play.protocol.pool import reuse_engines
from harness.play.runconfig import RunConfig
from harness.play.runner import run
from harness.players.calibrate import ADJUSTED_MEAN, CONTROLLED_RATE, EXACT, PLAIN, Point, Problem
from harness.util import backends
from harness.util.errors import RunFailed
from harness.records.rundir import iter_windows, load_run
from harness.reports.summary import summarize
from harness.stats import CoMoments, Moments, control_variate_mean, mean_ci, pentanomial_moments
from harness.util.errors import UserError


# ---------------------------------------------------------------------------------------------
# evaluating the response with the runner


@contextlib.contextmanager
def sampling_session(workers: int) -> Iterator[None]:
    """Runs inside play on one set of local workers (``workers``, 0: every core), and engines'
    processes are kept between them (a value's options reach an engine in a newgame)."""
    with reuse_engines(), backends.held("local", workers or backends.cpu_count(), None):
        yield


def label_of(spec: str, rules: str, settings: tuple[str, ...]) -> str:
    return make(spec, load_rules(rules, list(settings))).label


class RunnerEvaluator:
    """Measures f(v) by playing a run directory per value under ``out`` with :func:`harness.play.runner.run`.

    Inside :meth:`session` every evaluation plays on the same worker processes (forked once, at the
    first evaluation's first chunk) and an engine's processes are kept running between values
    (:func:`harness.play.protocol.referee.reuse_engines`: a value's options reach the engine in a
    newgame); outside it each evaluation starts its own. An engine's faults are counted per value
    (:attr:`Point.faults`, from the run's manifest); a value whose run the referee stopped, or whose
    games are over the engine's share of corrupted games, is not usable (:attr:`Point.usable`).
    """

    def __init__(self, problem: Problem, out: Path, quiet: bool = True) -> None:
        self.p, self.out, self.quiet = problem, Path(out), quiet
        self.count = 0
        self.held = False
        self.ref_label = label_of(problem.against, problem.rules, problem.settings) if problem.against else None
        self.notes: list[str] = []
        self.analyse = problem.analyse
        if self.analyse:
            rules = load_rules(problem.rules, list(problem.settings))
            if rules.saved_rolls:
                self.analyse = False
                self.notes.append(
                    f"rule set {rules.name} has saved_rolls, which the solver's table does not value: "
                    "evaluations played without analyse, plain estimates"
                )

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Keep the runner's workers and the engines' processes across the evaluations inside."""
        self.held = True
        try:
            with sampling_session(self.p.workers):
                yield
        finally:
            self.held = False

    @property
    def estimator(self) -> str:
        """What f(v) is measured with (see the module docstring)."""
        if not self.analyse:
            return PLAIN
        return ADJUSTED_MEAN if self.p.kind == "mean" else CONTROLLED_RATE

    def __call__(self, value: float) -> Point:
        p = self.p
        spec = p.spec_at(value)
        played = None if p.dial == "float" else p.played(value)
        label = label_of(spec, p.rules, p.settings)
        if p.kind == "win_rate" and label == self.ref_label:
            # identical bots on identical dice in swapped seats: every pair scores exactly 1 of 2
            return Point(value, 0.5, 0.5, 0.5, 0, None, played=played)
        common: dict[str, Any] = {
            "rules": p.rules,
            "settings": parse_overrides(list(p.settings)),
            "games": p.games,
            "seed": p.seed,
            "workers": p.workers,
            "analyse": self.analyse,
        }
        # results do not depend on chunking (dice are keyed by game index), so cut the games into
        # enough chunks to keep every worker busy even for a one-lineup evaluation
        workers = p.workers or os.cpu_count() or 1
        common["chunk_size"] = p.chunk_size or max(500, -(-p.games // (2 * workers)))
        if p.kind == "mean":
            cfg = RunConfig(mode="run", seats=(spec,), **common)
        else:
            cfg = RunConfig(mode="gauntlet", candidate=spec, entrants=(p.against,), **common)
        d = self.out / f"eval-{self.count:02d}-{p.param}={played if played is not None else f'{value:.6g}'}"
        self.count += 1
        try:
            run(cfg, d, quiet=self.quiet or self.held)  # (a held pool's workers keep the first run's bar)
        except RunFailed as exc:
            faults = _faults(d, label)
            if faults is None:  # not the referee: a bot failed, a worker died
                raise
            why = str(exc).splitlines()[0].removeprefix("run stopped: ")
            return Point(
                value,
                math.nan,
                math.nan,
                math.nan,
                0,
                str(d),
                self.estimator,
                faults=faults,
                usable=False,
                why=why,
                played=played,
            )
        faults = _faults(d, label)
        why = _over_limits(spec, p, faults)
        pt = self._adjusted(value, label, d) if self.analyse else self._plain(value, label, d)
        return Point(**{**pt.__dict__, "faults": faults, "usable": not why, "why": why, "played": played})

    def _plain(self, value: float, label: str, d: Path) -> Point:
        p = self.p
        s = summarize(d, p.confidence)
        if p.kind == "mean":
            e = next(x for x in s.entrants if x.label == label)
            ci = mean_ci(e.per_game, p.confidence)
            return Point(value, ci.mean, ci.lo, ci.hi, s.info.games, str(d))
        pair = next(x for x in s.pairings if {x.a, x.b} == {label, self.ref_label})
        counts = list(pair.pentanomial or ())
        if pair.a != label:
            counts = counts[::-1]
        ci = mean_ci(pentanomial_moments(counts), p.confidence)
        return Point(value, ci.mean, ci.lo, ci.hi, s.info.games, str(d))

    def _adjusted(self, value: float, label: str, d: Path) -> Point:
        """f(v) from an analysed run's rows: the luck-adjusted mean, or the score rate with the
        luck difference as control variate (module docstring)."""
        p = self.p
        info = load_run(d)
        nl = len(info.lineups)
        if p.kind == "mean":
            seat = info.lineups[0].index(label)
            plain, adj = Moments.empty(), Moments.empty()
            for _, _, (w,) in iter_windows([(info, 0)], ["total", "luck"], info.games):
                t = w["total"][:, seat].astype(np.float64)
                plain, adj = plain.merge(Moments.of(t)), adj.merge(Moments.of(t - w["luck"][:, seat]))
            ci = mean_ci(adj, p.confidence)
            vr = plain.var / adj.var if adj.var > 1e-12 * max(1.0, plain.var) else math.inf
            return Point(value, ci.mean, ci.lo, ci.hi, info.games, str(d), ADJUSTED_MEAN, vr)
        # gauntlet: lineups (bot, ref) and (ref, bot) on the same game indices: a game pair per index
        co = CoMoments.empty(2)
        seats = [lu.index(label) for lu in info.lineups]
        for _, _, ws in iter_windows([(info, li) for li in range(nl)], ["outcome", "luck"], info.games):
            y = sum(w["outcome"][:, s].astype(np.float64) / 2 for w, s in zip(ws, seats)) / nl
            x = sum(w["luck"][:, s] - w["luck"][:, 1 - s] for w, s in zip(ws, seats)) / nl
            co.add(np.column_stack([y, x]))
        cv = control_variate_mean(co, 0, 1, 0.0, p.confidence)
        return Point(value, cv.mean, cv.lo, cv.hi, info.games, str(d), CONTROLLED_RATE, cv.variance_reduction, cv.beta)


def _faults(d: Path, label: str) -> dict[str, int] | None:
    """An engine's fault sums in run ``d`` (None: the bot is not an engine)."""
    try:
        manifest = json.loads((d / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    got = (manifest.get("faults") or {}).get(label)
    return None if got is None else {k: int(v) for k, v in got.items()}


def _over_limits(spec: str, p: Problem, faults: dict[str, int] | None) -> str:
    """Why an engine's games at this value break the referee's limits ("" when they do not)."""
    if not faults:
        return ""
    bot = make(spec, load_rules(p.rules, list(p.settings)))
    games, corrupted = faults.get("games", 0), faults.get("corrupted", 0)
    return getattr(bot, "disqualified", lambda *_: None)(games, corrupted) or ""


class ExactEvaluator:
    """Measures f(v) exactly (module docstring): the bot's exact mean, or its exact score rate
    against the reference; every value and the reference evaluated once (and cached on disk)."""

    estimator = EXACT
    analyse = False

    def __init__(self, problem: Problem, cache_dir: str | os.PathLike | None = None, evaluator: Any = None) -> None:
        """``evaluator``: a :class:`harness.jobs.driver.Evaluator` whose tasks evaluate (forked workers, a Dask
        cluster: :mod:`harness.jobs.cluster`); None: :func:`harness.exact.evaluate.evaluate` in this process."""
        self.p, self.cache_dir = problem, cache_dir
        self.rules = load_rules(problem.rules, list(problem.settings))
        self.notes: list[str] = []
        self.count = 0
        bots = [problem.spec_at(v) for v in (problem.lo, problem.hi)]
        why = refusal(self.rules, bots + ([problem.against] if problem.kind == "win_rate" and problem.against else []))
        if why:
            raise UserError(f"no exact calibration: {why}")
        if evaluator is not None:
            self._evaluate = lambda rules, spec, _cache: evaluator.many([(rules, spec)])[0]
        else:
            self._evaluate = evaluate
        self.ref = self._evaluate(self.rules, problem.against, cache_dir) if problem.kind == "win_rate" else None
        self.seen: dict[float, Point] = {}

    def __call__(self, value: float) -> Point:
        if value not in self.seen:
            p = self.p
            ev = self._evaluate(self.rules, p.spec_at(value), self.cache_dir)
            if self.ref is None:
                f = ev.mean
            else:
                win, draw, _ = versus(ev, self.ref)
                f = score_rate(win, draw)
            self.count += 1
            self.seen[value] = Point(value, f, f, f, 0, None, EXACT)
        return self.seen[value]
