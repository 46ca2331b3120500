"""What an exact job will cost before it starts: its evaluations counted, the cached ones found, the CPU of the rest.

``sweep --dry-run`` prints :func:`estimate_sweep`. The count is exact for the bots' evaluations
(one per bot and cell) and the value tables to solve; a depth of skill's chain is counted from the
cache when every evaluation it needs is there (it is then walked, :class:`harness.jobs.driver.Evaluator`
with ``cached_only``), else estimated: the dial's grid and the weakest bot, then
:data:`harness.studies.chain.EVALS_PER_LEVEL` evaluations (a few more with ``--candidates`` K > 1:
:func:`harness.studies.chain.per_level`) for each of its levels: as the sweep's cached
chains at the same rate have, else about :data:`harness.studies.chain.CHAIN_LOGITS` / logit(p).

CPU: ``SECONDS[kind] = (a, b)``, a + b x solver states seconds for one evaluation of each kind
(softmax: a temperature above 0, whose policy takes an exponential per option; plain: every other
bot; solve: a value table), measured on one thread of the 2-core development machine on generala
at bonus thresholds 3, 6 and 12 (9,792 to 32,352 states; ``benchmarks/bench_dask.py costs``;
fitted again after the kernels lost their views' reference counts and took their own exp,
2026-12-03, load average 1.5). Scandinavian's 1.4 M states cost a little more per state (a softmax
evaluation 16.3 s, 11.6 us a state against generala's 10.3, with 15 boxes open where generala has
11): :data:`PER_STATE_BOXES` and :data:`BOX_POWER` scale b by the boxes. Below :data:`MIN_STATES`
(forced's 150 states) the fixed part a is far too large, and an evaluation is counted in proportion
to its states instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from harness.exact import solver as S
from harness.studies.chain import expected_levels, expected_rounds, per_level
from harness.studies.depth import DepthRequest, Evaluator, NotCached, chain, dial_of, drive
from harness.exact.evaluate import is_cached
from harness.studies.sweep import cell_rules

#: (a seconds, b seconds per solver state) of one evaluation or solve on one thread (module docstring).
SECONDS: dict[str, tuple[float, float]] = {
    "softmax": (0.16, 10.3e-6),
    "plain": (0.05, 2.6e-6),
    "solver": (0.11, 1.2e-6),
    "solve": (0.07, 1.5e-6),
}
#: The boxes of the rule sets ``SECONDS`` was measured on; b grows as (boxes / this) ** BOX_POWER
#: (the options per state grow with the boxes; scandinavian's softmax evaluation, 11.6 us a state
#: against generala's 10.3, gives 0.4: (15 / 11) ** 0.4 = 1.13; greedy's 1.06, a solve's 0.98).
PER_STATE_BOXES = 11
BOX_POWER = 0.4
#: A task's fixed cost on a worker beyond the evaluation itself (the bot's set-up, the table's read,
#: the cache file's write): the reduced sweep's softmax tasks took 0.54 s at 17,088 states where one
#: process evaluating them in a row takes 0.34 s (benchmarks/BENCHMARKS.md, issue 39's section).
TASK_SECONDS = 0.2
#: The smallest rule set the fits were checked on (generala without a bonus, 3,072 states: a softmax
#: evaluation 0.19 s, the fit 0.20 s): below it an evaluation costs in proportion to its states, its
#: fixed part included. Forced's evaluations (138 to 162 states) take about 8 ms each, where a + b x
#: states says 0.37 s: its README sweep, 285 evaluations, took 2.2 s where the fits said 158 s
#: (benchmarks/BENCHMARKS.md, "The dry run of a rule set smaller than the fits").
MIN_STATES = 3072


def evaluation_seconds(kind: str, states: int, boxes: int = PER_STATE_BOXES) -> float:
    """The model's CPU seconds of one evaluation (or solve) of ``kind`` over ``states`` solver states,
    as a task on a worker (an evaluation's :data:`TASK_SECONDS` included; in proportion to the
    states below :data:`MIN_STATES`)."""
    if states < MIN_STATES:
        return evaluation_seconds(kind, MIN_STATES, boxes) * states / MIN_STATES
    a, b = SECONDS[kind]
    return a + b * states * (boxes / PER_STATE_BOXES) ** BOX_POWER + (TASK_SECONDS if kind != "solve" else 0.0)


def kind_of(spec: str) -> str:
    """ "softmax", "solver" or "plain": the cost class of a bot spec."""
    name, _, params = spec.partition(":")
    for item in params.split(","):
        k, _, v = item.partition("=")
        if k.strip() == "temperature":
            try:
                if float(v) > 0:
                    return "softmax"
            except ValueError:
                pass
    return "solver" if name == "solver" else "plain"


@dataclass(frozen=True)
class Estimate:
    """What a job needs: ``evaluations`` distinct ones (``estimated`` of them a guess of the
    chains' lengths), ``cached`` of them already in the cache, ``solves`` value tables to solve,
    ``cpu`` the model's CPU seconds of what is not cached, ``critical`` the longest run of
    evaluations that must follow each other (a chain's levels, one root at a time) in seconds."""

    evaluations: int
    #: how many of ``evaluations`` are a guess (the levels of chains not in the cache)
    estimated: int
    cached: int
    solves: int
    cpu: float
    critical: float
    cells: int

    def to_json(self) -> dict[str, Any]:
        return {
            "evaluations": self.evaluations,
            "of_them_estimated": self.estimated,
            "cached": self.cached,
            "table_solves": self.solves,
            "cpu_seconds": round(self.cpu, 1),
            "critical_path_seconds": round(self.critical, 1),
            "cells": self.cells,
        }

    def lines(self, workers: int = 1) -> list[str]:
        wall = max(self.cpu / max(workers, 1), self.critical)
        return [
            f"dry run: {self.cells} cells, {self.evaluations} evaluations"
            + (
                f" (about: {self.estimated} of them for depth-of-skill chains not in the cache)"
                if self.estimated
                else ""
            )
            + f", {self.cached} cached; {self.solves} value tables to solve",
            f"about {self.cpu / 60:.1f} CPU-minutes (cost model of harness.studies.cost, measured on the 2-core "
            f"development machine); on {workers} single-threaded worker{'s' if workers != 1 else ''} about "
            f"{wall / 60:.1f} minutes, the longest chain's levels {self.critical / 60:.1f} minutes in a row",
        ]


def estimate_sweep(
    rules: str, axes: Sequence[Any], fixed: dict[str, Any], bots: Sequence[str], depth: DepthRequest = DepthRequest()
) -> Estimate:
    """What :func:`harness.studies.sweep.sweep` with these arguments will evaluate (module docstring).
    A chain not in the cache is counted as the same rate's chains of the sweep's cells that
    are (their mean number of levels), else by :func:`harness.studies.chain.expected_levels`: chains
    differ by rule set far more than by a setting (forced's are about half scandinavian's)."""
    rates, weakest, dial, candidates = depth.rates, depth.weakest, depth.dial, depth.candidates
    d = dial_of(dial)
    evals = per_level(candidates)[0]
    n = cached = estimated = solves = 0
    cpu = critical = 0.0
    cells = cell_rules(rules, axes, fixed)
    todo: list[tuple[int, int, int]] = []  # (states, boxes, evaluations walked) of cells whose chains are not cached
    levels: dict[float, list[int]] = {p: [] for p in rates}  # the levels of the cached chains, by rate
    for _, rs in cells:
        states = S.build_plan(rs).n_states
        boxes = rs.n_boxes
        ev = Evaluator(cached_only=True)
        bot_keys = {ev.key(rs, s): s for s in bots}
        grid_keys = {ev.key(rs, s): s for s in [weakest, *[d.spec(v) for v in d.grid]]} if rates else {}
        specs = {**grid_keys, **bot_keys}
        if any(kind_of(s) != "plain" for s in specs.values()) and not S.cache_path(rs).exists():
            solves += 1
            cpu += evaluation_seconds("solve", states, boxes)
        for s in specs.values():
            n += 1
            if is_cached(rs, s):
                cached += 1
            else:
                cpu += evaluation_seconds(kind_of(s), states, boxes)
        if not rates:
            continue
        try:
            chains = drive([(rs, chain(p, weakest, d, candidates=candidates)) for p in rates], ev)
        except NotCached:
            chains = None
        walked = len(set(ev.memo) - set(specs))  # the levels' evaluations found in the cache
        n += walked
        cached += walked
        if chains is None:
            todo.append((states, boxes, walked))
            continue
        for p, c in zip(rates, chains):
            levels[p].append(len(c.levels) - 1)
    # not every evaluation of these cells' chains is cached: their levels estimated
    expect = {p: sum(got) / len(got) if got else expected_levels(p) for p, got in levels.items()}
    for states, boxes, walked in todo:
        soft = evaluation_seconds("softmax", states, boxes)
        left = max(int(round(sum(evals * expect[p] for p in rates))) - walked, 0)
        n += left
        estimated += left
        cpu += left * soft
        # the longest chain: its levels one after another (the grid comes first, in parallel)
        critical = max(critical, soft * max(expected_rounds(p, candidates, expect[p]) for p in rates))
    return Estimate(n, estimated, cached, solves, cpu, critical, len(cells))


__all__ = [
    "BOX_POWER",
    "Estimate",
    "MIN_STATES",
    "PER_STATE_BOXES",
    "SECONDS",
    "TASK_SECONDS",
    "estimate_sweep",
    "evaluation_seconds",
    "kind_of",
]
