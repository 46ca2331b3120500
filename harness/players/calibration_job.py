"""A calibration job, what ``yatzy-harness calibrate`` asks of the library: the problem with its
defaults filled in and checked (:func:`calibration_problem`), then the search run, its picture drawn
and ``calibration.json`` written (:func:`run_calibration`, a :class:`CalibrationRun`).

The search itself is :mod:`harness.players.calibrate`; the command only parses, reports progress
through the callbacks given here and renders the result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from harness.players.calibrate import (DEFAULT_EXACT_MAX_EVALS, DEFAULT_MAX_EVALS, Calibration, Point, Problem,
                                       calibrate, calibrate_exact, check_problem, default_bracket)
from harness.players.responses import ExactEvaluator, RunnerEvaluator
from harness.players.fit import reference_of
from harness.players.picture import plot_response, plt
from harness.util.errors import UserError


def calibration_problem(rules: str, settings: tuple[str, ...], strategy: str, param: str, *,
                        lo: float | None = None, hi: float | None = None, target_mean: float | None = None,
                        target_win_rate: float | None = None, against: str | None = None, games: int | None = None,
                        seed: int | None = None, tol: float | None = None, xtol: float | None = None,
                        max_evals: int | None = None, confidence: float = 0.95, chunk_size: int | None = None,
                        workers: int = 0, analyse: bool = True, exact: bool = False) -> Problem:
    """The :class:`~harness.players.calibrate.Problem` of a calibration, checked: the reference
    ``against`` resolved (a bot spec, or a fit file's player: :func:`harness.players.fit.reference_of`),
    10,000 games and seed 1 unless given, the bracket the parameter's declared range where ``lo`` or
    ``hi`` is not given, and the most evaluations the search's default."""
    if against:
        against = reference_of(against)[0]
    games = 10_000 if games is None else games
    seed = 1 if seed is None else seed
    if lo is None or hi is None:
        dlo, dhi = default_bracket(strategy, param)
        lo = dlo if lo is None else lo
        hi = dhi if hi is None else hi
        if lo is None or hi is None:
            raise UserError(f"{strategy}:{param} has no declared range: give --lo and --hi")
    max_evals = max_evals or (DEFAULT_EXACT_MAX_EVALS if exact else DEFAULT_MAX_EVALS)
    problem = Problem(rules=rules, settings=tuple(settings), strategy=strategy, param=param, lo=float(lo),
                      hi=float(hi), target_mean=target_mean, target_win_rate=target_win_rate, against=against,
                      games=games, seed=seed, tol=tol, xtol=xtol, max_evals=max_evals, confidence=confidence,
                      chunk_size=chunk_size, workers=workers, analyse=analyse, exact=exact)
    check_problem(problem)
    return problem


@dataclass(frozen=True)
class CalibrationRun:
    """A finished calibration: the search's :class:`~harness.players.calibrate.Calibration`, the
    estimator of its responses, and what was written (``data`` is ``calibration.json``)."""

    calibration: Calibration
    estimator: str
    data: dict[str, Any]
    png: Path
    json: Path

    @property
    def problem(self) -> Problem:
        return self.calibration.problem


def run_calibration(problem: Problem, out: Path, *, quiet: bool = True, evaluator: Any = None,
                    on_start: Callable[[str, bool], None] | None = None,
                    on_point: Callable[[Point], None] | None = None) -> CalibrationRun:
    """Calibrate ``problem`` into ``out`` (its evaluation runs, ``calibration.png`` and
    ``calibration.json``). The responses are exact with ``problem.exact`` (on ``evaluator``'s tasks,
    a :class:`harness.studies.depth.Evaluator`, if given), else measured by runs played under ``out``
    (``quiet``: no progress bar of their games). ``on_start(estimator, adjusted)`` is called once
    the evaluator is made, ``on_point`` with every point evaluated."""
    ev = ExactEvaluator(problem, evaluator=evaluator) if problem.exact else RunnerEvaluator(problem, out, quiet=quiet)
    if on_start:
        on_start(ev.estimator, bool(ev.analyse or problem.exact))
    cal = (calibrate_exact if problem.exact else calibrate)(problem, ev, on_point)
    fig = plot_response(cal)
    png = out / "calibration.png"
    fig.savefig(png)
    plt.close(fig)
    d = cal.to_dict()
    d["estimator"] = ev.estimator
    d["notes"] = list(ev.notes) + d["notes"]
    d["files"] = [str(png), str(out / "calibration.json")]
    (out / "calibration.json").write_text(json.dumps(d, indent=2) + "\n")
    return CalibrationRun(cal, ev.estimator, d, png, out / "calibration.json")
