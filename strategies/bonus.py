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
from typing import Any

import numpy as np

from harness.game.pace import WEIGHT, bonus_chance_table, opportunity
from harness.game.scoring import context
from harness.game.strategy import Param, Policy, Sheets, TurnView, own_decisions, seat_player_pays
from strategies.bonus_kernels import bonus_seat
from strategies.greedy import SEAT_PLAYER_BOXES, TurnPlanner, cheapest_first, best_box
from strategies.kernels import bonus_policy, bonus_stop_values, bonus_values_batch

#: Seat-games from which the bonus bot's whole-game player pays for compiling its kernel (about
#: 4 s of CPU once per machine against 50-100 us saved a seat-game: ten times the greedy bot's
#: :data:`harness.game.strategy.SEAT_PLAYER_GAMES`' worth); below, and until a longer run has
#: compiled it, games go decision by decision.
BONUS_SEAT_GAMES = 100_000


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
    #: states whose plans the whole-game player keeps, 2 x rolls x rerolls bytes each (1,008 with
    #: three rolls a turn), touched as they are planned; when all are taken, all are given up.
    #: 10^6 scandinavian games met 341,245 states (336 MiB of plans): none given up, 0.34 plans a
    #: game; with 2**18 slots the table was given up twice (0.76 a game), with 2**17 16 times (2.19)
    seat_plans = 1 << 19

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

    def expect_games(self, games: int) -> None:
        self._seat_games = max(getattr(self, "_seat_games", 0), int(games))

    def seat_player(self) -> Any:
        """Whole games in one kernel call (:func:`strategies.bonus_kernels.bonus_seat`): the keeps
        :meth:`keep` plans, each state's worked out once in the process and kept in the kernel's
        own table of :attr:`seat_plans` states, and the box :meth:`choose` takes; from
        :data:`BONUS_SEAT_GAMES` announced seat-games or once compiled."""
        r, d = self.rules, self.rules.dice
        games = getattr(self, "_seat_games", 0)
        if (
            r.rolls_per_turn < 2
            or r.n_boxes > SEAT_PLAYER_BOXES
            or not own_decisions(self, BonusBot, "stop_values", "_keep_table")
            or not (games >= BONUS_SEAT_GAMES or seat_player_pays(games, bonus_seat))
        ):
            return None
        if getattr(self, "_seat_plan", None) is None:
            # np.zeros maps pages lazily: only the states met take memory
            n_states = 2 ** (r.n_boxes + 1) * (int(r.threshold) + 1)
            self._seat_plan = (
                np.zeros(n_states, dtype=np.int32),
                np.zeros(self.seat_plans, dtype=np.int64),
                np.zeros((self.seat_plans, r.rolls_per_turn - 1, d.n_rolls), dtype=np.int16),
                np.zeros(1, dtype=np.int64),
            )
        slot_of, slot_key, plans, used = self._seat_plan
        ctx, order, p, opp = context(r), cheapest_first(r), self._p, self._opp
        weight = float(self.config["weight"])

        def player(
            keys: np.ndarray, seat: int, sheet: np.ndarray, upper: np.ndarray, extra: np.ndarray, running: np.ndarray
        ) -> None:
            bonus_seat(
                ctx,
                keys,
                seat,
                d.n,
                r.rolls_per_turn,
                d.roll_lookup,
                d.radix,
                d.keep_counts,
                d.keep_size,
                d.roll_as_keep,
                d.trans_ptr,
                d.trans_roll,
                d.trans_prob,
                d.sub_ptr,
                d.sub_keep,
                bool(r.has_servida),
                order,
                int(r.threshold),
                int(r.bonus_value),
                p,
                opp,
                weight,
                slot_of,
                slot_key,
                plans,
                used,
                sheet,
                upper,
                extra,
                running,
            )

        return player

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
