"""The bonus-protecting bot: greedy within the turn, but it plays for the upper bonus.

It values a box by its score now, minus what the box would be expected to earn on a later turn
spent on it (so it scratches cheap boxes rather than expensive ones), plus the upper bonus times
the change in the chance of making the bonus. That chance is tracked against the remaining open
upper boxes: each is assumed to be worked on for one turn, which makes "three of each" the pace.
"""

from __future__ import annotations

from functools import cached_property, lru_cache

import numpy as np

from harness.registry import register
from harness.rules import RuleSet
from harness.strategy import Param, Policy, Sheets, TurnView
from harness.turn import turn_policy
from strategies.greedy import TurnPlanner, cheapest_first, best_box
from strategies.kernels import bonus_policy, bonus_stop_values, bonus_values_batch


def bonus_chance_table(rules: RuleSet) -> np.ndarray:
    """(64, threshold+1) float64: P(the open upper faces still add >= need), indexed [open faces bitmask, need].

    Each open face f is assumed worked on for one turn: its count is Binomial(n, 1 - (5/6)^rolls),
    the count of f after keeping every f and rerolling the rest.
    """
    n, thr = rules.n_dice, rules.threshold
    q = 1 - (5 / 6) ** rules.rolls_per_turn
    from scipy.stats import binom  # scipy.stats costs ~1 s to import: only when a bonus bot is made

    pmf = binom.pmf(np.arange(n + 1), n, q)
    table = np.zeros((64, thr + 1))
    for mask in range(64):
        # distribution of the points the open faces add, capped at thr (more is as good as thr)
        dist = np.zeros(thr + 1)
        dist[0] = 1.0
        for f in range(1, 7):
            if (mask >> (f - 1)) & 1:
                new = np.zeros(thr + 1)
                for c, p in enumerate(pmf):
                    pts = min(f * c, thr)
                    new[pts:thr] += p * dist[: thr - pts]
                    new[thr] += p * dist[thr - pts:].sum()
                dist = new
        table[mask] = np.cumsum(dist[::-1])[::-1]  # P(points >= need)
    return table


@lru_cache(maxsize=32)
def _opportunity(rules: RuleSet) -> np.ndarray:
    """(NB,) expected score of each box on a turn spent on it alone (its opportunity cost)."""
    d = rules.dice
    out = np.empty(rules.n_boxes)
    for b in range(rules.n_boxes):
        v_first, _, _, _ = turn_policy(d, rules.table_first[:, b], rules.table[:, b], rules.rolls_per_turn - 1)
        out[b] = d.roll_prob @ v_first
    return out


@register
class BonusBot(TurnPlanner):
    name = "bonus"
    description = ("greedy within the turn, but plays for the upper bonus: paces against three-of-each, "
                   "values upper boxes by their effect on the bonus chance, scratches cheap boxes")
    params = (Param("weight", float, 1.0, "weight of the bonus chance in box values (0 = no bonus play)", 0.0, 10.0),)
    classifier = {"stochastic": False, "lookahead": "turn+heuristic", "long_run_time": False}
    uses_upper = True

    @cached_property
    def _p(self) -> np.ndarray:
        return bonus_chance_table(self.rules)

    @cached_property
    def _opp(self) -> np.ndarray:
        return _opportunity(self.rules)

    def prepare(self) -> None:
        """The bonus-chance table (scipy.stats takes ~1 s to import) and the opportunity costs, made
        before workers fork; made on first use otherwise, so that an evaluation read from its
        cache never pays for them."""
        self._p, self._opp  # noqa: B018

    def stop_values(self, filled: int, upper: int, flag: bool, first: bool) -> np.ndarray:
        r = self.rules
        return bonus_stop_values(self._ctx, first, flag, filled, upper, r.threshold, float(r.bonus_value),
                                 self._p, self._opp, float(self.config["weight"]))

    def keep(self, view: TurnView) -> np.ndarray:
        view.upper = np.minimum(view.upper, self.rules.threshold)  # the pace is all that matters past the line
        return super().keep(view)

    def choose(self, view: TurnView) -> np.ndarray:
        r = self.rules
        values = bonus_values_batch(view.options, view.allowed, view.extra, view.filled, view.upper, r.threshold,
                                    float(r.bonus_value), r.upper_face, self._p, self._opp, float(self.config["weight"]))
        return best_box(r, values)

    def policy(self, sheets: Sheets) -> Policy:
        """Stop values and boxes of every state by :func:`strategies.kernels.bonus_policy` (the bot's
        box values, term by term), keeps from the stop values as :meth:`keep` plans them."""
        r = self.rules
        n, n_rolls = len(sheets), r.dice.n_rolls
        stops = np.empty((n, 2, n_rolls))
        boxes = np.empty((n, 2 if r.has_servida else 1, n_rolls), dtype=np.int64)
        bonus_policy(sheets.sheet_options, sheets.sheet_allowed, sheets.sheet_extra, sheets.sheet,
                     sheets.masks.astype(np.int64), sheets.uppers.astype(np.int64), r.threshold,
                     float(r.bonus_value), r.upper_face, self._p, self._opp, float(self.config["weight"]),
                     cheapest_first(r), bool(r.has_servida), stops, boxes)
        return Policy(self.plan_keeps(stops), boxes)
