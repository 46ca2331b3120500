"""Depth of skill, exact: how many steps of a fixed winning margin lie between a weak bot and the optimal one.

Robertie's *complexity number* counts the steps from a beginner to the best player in which each
step beats the one below 75 % of the time; Garfield and Elias's *skill chain* uses 60 %. For other
games both are estimates from human ratings. Here they are exact for a stated ladder of solitaire
bots (:mod:`harness.exact.evaluate`: two solitaire bots never interact, so every head-to-head is exact)::

    from harness.studies.depth import depth_of_skill
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
cluster, :mod:`harness.jobs.cluster`) each chain resuming as its own evaluations are in
(:class:`Evaluator`). With ``candidates`` K > 1 a level's first round asks K evaluations at once
(:func:`harness.studies.chain._root_rounds`: fewer rounds in a row, a few more evaluations; the chain
depends on K, never on the workers).

The chains themselves (the dials, levels, root-finding) are in :mod:`harness.studies.chain`, the
evaluations on demand (:class:`Evaluator`, :func:`drive`) in :mod:`harness.jobs.driver`; this
module gives the entry points, and their public names are importable from here as before.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.util import render as R
from harness.exact.evaluate import refusal
from harness.exact.solver import build_plan
from harness.studies.steps import steps_table
from harness.game.rules import RuleSet, rules_dir
from harness.studies.chain import (
    DEFAULT_DIAL,
    DEFAULT_RATES,
    DEFAULT_WEAKEST,
    DIALS,
    MAX_ITER,
    MAX_LEVELS,
    RATE_TOL,
    Chain,
    DepthOfSkill,
    Dial,
    Level,
    chain,
    check_rates,
    dial_of,
    expected_rounds,
    score_rate,
    step_fraction,
)
from harness.jobs.driver import Evaluator, NotCached, Request, Task, drive, fetch
from harness.jobs.driver import _tag  # noqa: F401  (tests/test_cluster.py names tasks' keys by it)

__all__ = [
    "DEFAULT_DIAL",
    "DEFAULT_RATES",
    "DEFAULT_WEAKEST",
    "DIALS",
    "MAX_ITER",
    "MAX_LEVELS",
    "MODES",
    "RATE_TOL",
    "AUTO_STATES",
    "Chain",
    "DepthOfSkill",
    "DepthRequest",
    "Dial",
    "Evaluator",
    "Level",
    "NotCached",
    "Request",
    "Task",
    "chain",
    "chains_for",
    "check_rates",
    "compute_command",
    "depth_if_cheap",
    "depth_of_skill",
    "dial_of",
    "drive",
    "expected_rounds",
    "fetch",
    "not_cached_note",
    "score_rate",
    "side_by_side",
    "side_by_side_lines",
    "step_fraction",
    "steps_table",
]


@dataclass(frozen=True)
class DepthRequest:
    """The depth of skill asked for: a chain per score rate (none: no depth), from ``weakest`` up
    ``dial``, ``candidates`` evaluations at once in each level's first round (:func:`depth_of_skill`)."""

    rates: tuple[float, ...] = ()
    weakest: str = DEFAULT_WEAKEST
    dial: str = DEFAULT_DIAL
    candidates: int = 1


def chains_for(rates: Sequence[float], weakest: str, dial: Dial, candidates: int = 1) -> list[Task]:
    return [chain(p, weakest, dial, candidates=candidates) for p in check_rates(rates)]


def depth_of_skill(
    rules: RuleSet,
    rates: Sequence[float] = DEFAULT_RATES,
    weakest: str = DEFAULT_WEAKEST,
    dial: str = DEFAULT_DIAL,
    evaluator: Evaluator | None = None,
    candidates: int = 1,
) -> DepthOfSkill:
    """The exact chains of ``rules`` at each score rate, along ``weakest`` then ``dial`` (see the
    module's definitions); evaluations through ``evaluator`` (default: in this process), each
    level's root with ``candidates`` evaluations at once in its first round
    (:func:`harness.studies.chain._root_rounds`; 1: one at a time, :func:`harness.studies.chain._root`)."""
    t0 = time.perf_counter()
    d = dial_of(dial)
    rates = check_rates(rates)
    tasks = chains_for(rates, weakest, d, candidates)
    chains = drive(
        [(rules, t) for t in tasks], evaluator or Evaluator(), [expected_rounds(p, candidates) for p in rates]
    )
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


def depth_if_cheap(
    rules: RuleSet,
    mode: str = "auto",
    rates: Sequence[float] = DEFAULT_RATES,
    weakest: str = DEFAULT_WEAKEST,
    dial: str = DEFAULT_DIAL,
    evaluator: Evaluator | None = None,
) -> tuple[DepthOfSkill | None, str | None]:
    """(the depth of skill of ``rules``, None) as ``mode`` allows (:data:`MODES`), or (None, why
    not: a one-line note; None with mode "off"). The auto rule first walks the chains from the
    cache alone, which gives the very chains a computation would (a chain depends only on the rule
    set, the ladder and p)."""
    d, why, states = _depth_or_states(rules, mode, rates, weakest, dial, evaluator)
    if states is not None:
        why = not_cached_note([(rules, states)], rates, weakest, dial)
    return d, why


def _depth_or_states(
    rules: RuleSet, mode: str, rates: Sequence[float], weakest: str, dial: str, evaluator: Evaluator | None
) -> tuple[DepthOfSkill | None, str | None, int | None]:
    """:func:`depth_if_cheap`'s (depth, why not, None), but (None, None, the solver's states) for a
    depth of skill that auto mode leaves uncomputed, so that one note can name several rule sets."""
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


def compute_command(
    rules: RuleSet, rates: Sequence[float] = DEFAULT_RATES, weakest: str = DEFAULT_WEAKEST, dial: str = DEFAULT_DIAL
) -> str:
    """The command that computes the depth of skill of ``rules`` on its own (and caches it, for every
    later report and compare of the rule set): ``yatzy-harness evaluate RULES [--set ...] --depth``,
    the rule set by its built-in name or its file, the ladder's flags when they are not the defaults."""
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


def not_cached_note(
    sides: Sequence[tuple[RuleSet, int]],
    rates: Sequence[float] = DEFAULT_RATES,
    weakest: str = DEFAULT_WEAKEST,
    dial: str = DEFAULT_DIAL,
) -> str:
    """One line for rule sets (with their solver states) whose depth of skill auto mode leaves
    uncomputed: the cost, and the commands that compute it, here (--depth) or once for good."""

    def named(r: RuleSet) -> str:
        return " ".join([r.name, *(f"{k}={v}" for k, v in r.overrides.items())])

    sizes = "; ".join(f"{named(r)}: {n:,} solver states" for r, n in sides)
    each = " each" if len(sides) > 1 else ""
    commands = "; ".join(compute_command(r, rates, weakest, dial) for r, _ in sides)
    return (
        f"depth of skill not cached ({sizes}; dozens of softmax evaluations{each}, a minute to hours of CPU): "
        f"--depth computes it, or once for every later report and compare: {commands} "
        "(--no-depth silences this)"
    )


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
