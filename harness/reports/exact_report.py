"""An exact evaluation of solitaire bots, what ``yatzy-harness evaluate`` asks of the library: each
bot's exact figures and every head-to-head (:mod:`harness.exact.evaluate`), the game quality of
each pair and, where it can be exact, the course of their game (:mod:`harness.exact.course`,
:mod:`harness.reports.quality`), and the exact depth of skill (:mod:`harness.studies.depth`), as one
:class:`ExactEvaluation` with its tables, its JSON and its files.

It sits in the reports layer, not the exact one, because the game quality of a pair is a report's
(:mod:`harness.reports.quality`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Sequence

from harness.exact.course import course as course_of
from harness.exact.course import refusal as course_refusal
from harness.studies.depth import DepthOfSkill, DepthRequest, Evaluator, depth_of_skill
from harness.exact.evaluate import HeadToHead, Limits, head_to_head
from harness.game.rules import RuleSet
from harness.reports.quality import QualityOptions
from harness.reports.quality_exact import (
    ExactCourse,
    ExactPair,
    exact_course,
    exact_course_table,
    exact_pair,
    exact_quality_table,
)
from harness.util import render
from harness.util.jsonable import jsonable


@dataclass(frozen=True)
class Execution:
    """Where and how an exact evaluation's figures are computed.

    With ``open_tasks`` (a context manager of :func:`harness.jobs.cluster.open_tasks`'s tasks) the
    evaluations run as tasks (forked workers or a Dask cluster), with a progress bar over them
    (``task_progress``) or a call of ``on_evaluated(rules, spec, evaluation)`` as each is done; else
    in this process, within ``limits`` (``progress``: the forward passes' bars, the courses' too).
    ``cache_dir``: the solver's cache (None: the default)."""

    cache_dir: str | Path | None = None
    progress: bool = False
    limits: Limits = Limits()
    open_tasks: Callable[[], ContextManager[Any]] | None = None
    task_progress: bool = False
    on_evaluated: Callable[[RuleSet, str, Any], None] | None = None


@dataclass(frozen=True)
class ExactEvaluation:
    """What an exact evaluation found: the head-to-heads (None without bots), the depth of skill
    (None unless asked for), the quality of every pair, the exact courses and the note on them."""

    rules: RuleSet
    h2h: HeadToHead | None
    depth: DepthOfSkill | None
    quality: list[ExactPair]
    courses: list[ExactCourse]
    #: why the course of a game is not here (or that it is below); None when not asked for
    course_note: str | None
    #: whether the course of a game was asked for
    course_asked: bool = False

    def tables(self) -> list[Any]:
        """The tables of the text and Markdown renderings, in order."""
        return (
            (self.h2h.tables() if self.h2h else [])
            + ([exact_quality_table(self.quality, self.course_note)] if self.quality else [])
            + ([exact_course_table(self.courses)] if self.courses else [])
            + (self.depth.tables() if self.depth else [])
        )

    def to_json(self) -> dict[str, Any]:
        """``evaluate --json``."""
        return {
            **(self.h2h.to_json() if self.h2h else {"rules": self.rules.name}),
            **({"quality": [q.to_json() for q in self.quality]} if self.quality else {}),
            **({"course": [c.to_json() for c in self.courses]} if self.courses else {}),
            **(
                {"course_refused": self.course_note}
                if self.course_asked and not self.courses and self.course_note
                else {}
            ),
            **({"depth": self.depth.to_json()} if self.depth else {}),
        }

    def write(self, out: Path) -> None:
        """``evaluate.json``, ``evaluate.md`` and the plots (distributions, depth) into ``out``."""
        # matplotlib loads only when there is a plot to draw
        from harness.reports.plot import plot_depth, plot_exact_distributions

        (out / "evaluate.json").write_text(json.dumps(jsonable(self.to_json()), indent=2))
        (out / "evaluate.md").write_text(
            render.markdown(self.tables(), f"Exact evaluation, {self.rules.name}", [self.rules.summary()])
        )
        if self.h2h:
            plot_exact_distributions(self.h2h.evaluations).savefig(out / "distributions.png")
        if self.depth:
            plot_depth(self.depth).savefig(out / "depth.png")


def evaluate_exactly(
    rules: RuleSet,
    bots: Sequence[str],
    *,
    seats: int = 2,
    quality: QualityOptions = QualityOptions(),
    course: bool = False,
    depth: DepthRequest | None = None,
    execution: Execution = Execution(),
    out: Path | None = None,
) -> ExactEvaluation:
    """Evaluate ``bots`` exactly on ``rules`` (every head-to-head, ``seats`` for the tables against
    copies), each pair's game quality and, with ``course``, the course of their game (or why it
    cannot be exact), and the depth of skill if ``depth`` asks for it, as ``execution`` says (in
    this process or as tasks); written into ``out`` if given. ``depth`` needs ``execution.open_tasks``."""
    x = execution
    cache_dir, progress, open_tasks = x.cache_dir, x.progress, x.open_tasks
    h2h = dos = None
    if open_tasks is not None:
        with open_tasks() as tasks:
            ev = Evaluator(tasks=tasks, on_done=x.on_evaluated, progress=x.task_progress)
            try:
                if bots:
                    h2h = HeadToHead(rules.name, tuple(ev.many([(rules, b) for b in bots])), seats)
                if depth:
                    dos = depth_of_skill(rules, depth.rates, depth.weakest, depth.dial, ev, depth.candidates)
            finally:
                ev.close()
    elif bots:
        h2h = head_to_head(rules, list(bots), seats, cache_dir, progress=progress, limits=x.limits)
    pairs = (
        [exact_pair(a, b, quality) for i, a in enumerate(h2h.evaluations) for b in h2h.evaluations[i + 1 :]]
        if h2h
        else []
    )
    courses, course_note = [], None
    if course and len(bots) >= 2:
        why = next((w for w in (course_refusal(rules, b) for b in bots) if w), None)
        if why:
            course_note = f"the course of a game is sampled (run, report): {why}"
        else:
            cs = [course_of(rules, b, cache_dir, progress=progress) for b in bots]
            courses = [exact_course(a, b, quality) for i, a in enumerate(cs) for b in cs[i + 1 :]]
            course_note = "the course of a game: below"
    res = ExactEvaluation(rules, h2h, dos, pairs, courses, course_note, course)
    if out is not None:
        res.write(out)
    return res
