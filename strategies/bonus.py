"""The bonus-protecting bot: greedy within the turn, but it plays for the upper bonus.

It values a box by its score now, minus what the box would be expected to earn on a later turn
spent on it (so it scratches cheap boxes rather than expensive ones), plus the upper bonus times
the change in the chance of making the bonus. That chance is tracked against the remaining open
upper boxes: each is assumed to be worked on for one turn, which makes "three of each" the pace.
The heuristic's tables and box values are :mod:`harness.game.pace` (shared with the ``paced`` player
model of :mod:`harness.players.fit`).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from harness.game.pace import WEIGHT, bonus_chance_table, opportunity
from harness.game.strategy import Param, Policy, Sheets, TurnView
from strategies.greedy import TurnPlanner, cheapest_first, best_box
from strategies.kernels import bonus_policy, bonus_stop_values, bonus_values_batch


class BonusBot(TurnPlanner):
    name = "bonus"
    description = (
        "greedy within the turn, but plays for the upper bonus: paces against three-of-each, "
        "values upper boxes by their effect on the bonus chance, scratches cheap boxes"
    )
    params = (
        Param("weight", float, WEIGHT, "weight of the bonus chance in box values (0 = no bonus play)", 0.0, 10.0),
    )
    classifier = {"stochastic": False, "lookahead": "turn+heuristic", "long_run_time": False}
    uses_upper = True

    @cached_property
    def _p(self) -> np.ndarray:
        return bonus_chance_table(self.rules)

    @cached_property
    def _opp(self) -> np.ndarray:
        return opportunity(self.rules)

    def prepare(self) -> None:
        """The bonus-chance table (scipy.stats takes ~1 s to import) and the opportunity costs, made
        before workers fork; made on first use otherwise, so that an evaluation read from its
        cache never pays for them."""
        self._p, self._opp  # noqa: B018

    def stop_values(self, filled: int, upper: int, flag: bool, first: bool) -> np.ndarray:
        r = self.rules
        return bonus_stop_values(
            self._ctx,
            first,
            flag,
            filled,
            upper,
            r.threshold,
            float(r.bonus_value),
            self._p,
            self._opp,
            float(self.config["weight"]),
        )

    def keep(self, view: TurnView) -> np.ndarray:
        view.upper = np.minimum(view.upper, self.rules.threshold)  # the pace is all that matters past the line
        return super().keep(view)

    def choose(self, view: TurnView) -> np.ndarray:
        r = self.rules
        values = bonus_values_batch(
            view.options,
            view.allowed,
            view.extra,
            view.filled,
            view.upper,
            r.threshold,
            float(r.bonus_value),
            r.upper_face,
            self._p,
            self._opp,
            float(self.config["weight"]),
        )
        return best_box(r, values)

    def policy(self, sheets: Sheets) -> Policy:
        """Stop values and boxes of every state by :func:`strategies.kernels.bonus_policy` (the bot's
        box values, term by term), keeps from the stop values as :meth:`keep` plans them."""
        r = self.rules
        n, n_rolls = len(sheets), r.dice.n_rolls
        stops = np.empty((n, 2, n_rolls))
        boxes = np.empty((n, 2 if r.has_servida else 1, n_rolls), dtype=np.int64)
        bonus_policy(
            sheets.sheet_options,
            sheets.sheet_allowed,
            sheets.sheet_extra,
            sheets.sheet,
            sheets.masks.astype(np.int64),
            sheets.uppers.astype(np.int64),
            r.threshold,
            float(r.bonus_value),
            r.upper_face,
            self._p,
            self._opp,
            float(self.config["weight"]),
            cheapest_first(r),
            bool(r.has_servida),
            stops,
            boxes,
        )
        return Policy(self.plan_keeps(stops), boxes)
