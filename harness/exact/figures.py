"""Exact values beside sampled ones: what a run's figures equal when every bot at its tables is solitaire.

For solitaire bots (:mod:`harness.exact.evaluate`) every figure a run samples has an exact value: an
entrant's mean, standard deviation, percentiles, P(upper bonus), P(yatzy) and box means, and at a
table of independent finals each seat's P(win) (sole best) and P(draw) (shares the top). A pooled
figure (an entrant over every seat it holds, a pairing over both seatings) is the mean of its
rows, and every lineup plays the same games, so its exact value is the mean of its slots' exact
values. :class:`ExactTables` evaluates each bot of some lineups once (cached) and gives those
values; :func:`outside` says whether an exact value misses a sampled figure's interval, the alarm
``report`` and ``compare --exact`` raise.

Intervals for the alarm are taken over *games*, the independent unit: rows that share a game's dice
(one bot in several lineups of a tournament, a pairing's two seatings) count once per game, which
can only widen an interval (the mean of m correlated rows has at most one row's variance).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Mapping, Sequence

from harness.exact.evaluate import Evaluation, evaluate, seats
from harness.game.rules import RuleSet

#: Confidence of the intervals whose missing the exact value is flagged (``report``'s exact column).
ALARM_CONFIDENCE = 0.999


def outside(value: float | None, ci: Sequence[float | None] | None) -> bool:
    """Whether an exact ``value`` lies outside the interval ``ci`` (ends within float rounding,
    1e-9 relative, count as inside: a luck-adjusted optimal bot's interval is one point); False
    when either is missing."""
    if value is None or ci is None or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return False
    if any(isinstance(x, float) and math.isnan(x) for x in (value, ci[0], ci[1])):
        return False
    slack = 1e-9 * max(1.0, abs(value))
    return not (ci[0] - slack <= value <= ci[1] + slack)


@dataclass(frozen=True)
class ExactTables:
    """Exact figures of every bot of ``lineups`` on ``rules`` and of every seat of every lineup.

    ``evaluations``: label -> :class:`~harness.exact.evaluate.Evaluation`; ``outcomes[l][s]``: seat s of
    lineup l, (P(sole best), P(shares the top)) against the other seats' independent finals
    (NaN at a one-seat table, where there is no outcome).
    """

    rules: RuleSet
    lineups: tuple[tuple[str, ...], ...]
    evaluations: Mapping[str, Evaluation]
    outcomes: tuple[tuple[tuple[float, float], ...], ...]

    @classmethod
    def of(
        cls,
        rules: RuleSet,
        lineups: Sequence[Sequence[str]],
        cache_dir: str | os.PathLike | None = None,
        *,
        progress: bool = False,
    ) -> ExactTables:
        """Evaluate each bot once (from the cache when it can) and every seat's outcome."""
        lus = tuple(tuple(lu) for lu in lineups)
        evs: dict[str, Evaluation] = {}
        for label in dict.fromkeys(x for lu in lus for x in lu):
            evs[label] = evaluate(rules, label, cache_dir, progress=progress)
        nan = (math.nan, math.nan)
        outs = tuple(tuple(seats([evs[x] for x in lu])) if len(lu) >= 2 else (nan,) for lu in lus)
        return cls(rules, lus, evs, outs)

    def pooled(self, slots: Sequence[tuple[int, int]]) -> tuple[float, float, float] | None:
        """(win, draw, loss) of the slots ((lineup, seat) pairs) pooled, their mean over the slots
        at tables of two or more seats; None when there is none."""
        at = [self.outcomes[li][s] for li, s in slots if len(self.lineups[li]) >= 2]
        if not at:
            return None
        win = sum(w for w, _ in at) / len(at)
        draw = sum(d for _, d in at) / len(at)
        return win, draw, max(0.0, 1.0 - win - draw)
