"""A calibration job, what ``yatzy-harness calibrate`` asks of the library: the problem with its
defaults filled in and checked (:func:`calibration_problem`), then the search run, its picture drawn
and ``calibration.json`` written (:func:`run_calibration`, a :class:`CalibrationRun`).

The search itself is :mod:`harness.players.calibrate`; the command only parses, reports progress
through the callbacks given here and renders the result.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from harness.players.calibrate import (
    DEFAULT_EXACT_MAX_EVALS,
    DEFAULT_MAX_EVALS,
    Calibration,
    Point,
    Problem,
    calibrate,
    calibrate_exact,
    check_problem,
)
from harness.players.dials import dial_of
from harness.players.responses import ExactEvaluator, RunnerEvaluator
from harness.players.fit import reference_of
from harness.players.picture import plot_response, plt
from harness.util.errors import UserError


def calibration_problem(draft: Problem) -> Problem:
    """The :class:`~harness.players.calibrate.Problem` of a calibration, checked: the reference
    ``against`` resolved (a bot spec, or a fit file's player: :func:`harness.players.fit.reference_of`),
    the dial's kind read from the bot (an engine's from its hello: :mod:`harness.players.dials`), the
    bracket the dial's declared range where ``draft.lo`` or ``draft.hi`` is NaN (not given; a choice
    dial always spans its values), and the most evaluations the search's default where
    ``draft.max_evals`` is 0."""
    against = reference_of(draft.against)[0] if draft.against else None
    dial = dial_of(draft.strategy, draft.param, draft.rules, draft.settings)
    lo, hi = draft.lo, draft.hi
    if dial.kind == "choice":
        if not (math.isnan(lo) and math.isnan(hi)):
            raise UserError(
                f"{draft.strategy}:{draft.param} is a choice of {', '.join(map(str, dial.values))}: "
                "its bracket is every value in order (drop --lo/--hi)"
            )
    lo = dial.lo if math.isnan(lo) else lo
    hi = dial.hi if math.isnan(hi) else hi
    if lo is None or hi is None:
        raise UserError(f"{draft.strategy}:{draft.param} has no declared range: give --lo and --hi")
    max_evals = draft.max_evals or (DEFAULT_EXACT_MAX_EVALS if draft.exact else DEFAULT_MAX_EVALS)
    problem = replace(
        draft, against=against, lo=float(lo), hi=float(hi), max_evals=max_evals, dial=dial.kind, values=dial.values
    )
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


def run_calibration(
    problem: Problem,
    out: Path,
    *,
    quiet: bool = True,
    evaluator: Any = None,
    on_start: Callable[[str, bool], None] | None = None,
    on_point: Callable[[Point], None] | None = None,
) -> CalibrationRun:
    """Calibrate ``problem`` into ``out`` (its evaluation runs, ``calibration.png`` and
    ``calibration.json``). The responses are exact with ``problem.exact`` (on ``evaluator``'s tasks,
    a :class:`harness.studies.depth.Evaluator`, if given), else measured by runs played under ``out``
    (``quiet``: no progress bar of their games). ``on_start(estimator, adjusted)`` is called once
    the evaluator is made, ``on_point`` with every point evaluated."""
    ev = ExactEvaluator(problem, evaluator=evaluator) if problem.exact else RunnerEvaluator(problem, out, quiet=quiet)
    if on_start:
        on_start(ev.estimator, bool(ev.analyse or problem.exact))
    if problem.exact:
        cal = calibrate_exact(problem, ev, on_point)
    else:
        with ev.session():  # one set of workers and engine processes for every evaluated value
            cal = calibrate(problem, ev, on_point)
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
