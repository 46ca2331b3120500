"""The random bot: keeps each die with probability one half, fills a uniformly random allowed box."""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from harness.game.loop import answer_samples
from harness.game.scoring import context
from harness.game.strategy import CHOOSE_STEP, Policy, Sheets, Strategy, TurnView, own_decisions, seat_player_pays
from strategies.kernels import random_boxes, random_keeps, random_seat, uniform_boxes


class RandomBot(Strategy):
    name = "random"
    description = "random keeps (each die kept with probability 1/2), random open box"
    classifier = {"stochastic": True, "lookahead": "none", "long_run_time": False}
    _keep_probs: np.ndarray | None = None  # the policy's keep probabilities, worked out once

    def warm_kernels(self) -> None:
        answer_samples(self)

    def expect_games(self, games: int) -> None:
        self._seat_games = max(getattr(self, "_seat_games", 0), int(games))

    def seat_player(self) -> Any:
        """Whole games in one kernel call (:func:`strategies.kernels.random_seat`): the keeps and
        boxes of :meth:`keep` and :meth:`choose` on the same uniforms; for long runs or once
        compiled (:func:`harness.game.strategy.seat_player_pays`)."""
        if not own_decisions(self, RandomBot) or not seat_player_pays(getattr(self, "_seat_games", 0), random_seat):
            return None
        r, d = self.rules, self.rules.dice
        ctx = context(r)

        def player(
            keys: np.ndarray, seat: int, sheet: np.ndarray, upper: np.ndarray, extra: np.ndarray, running: np.ndarray
        ) -> None:
            random_seat(
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
                d.roll_faces,
                d.keep_lookup,
                CHOOSE_STEP,
                int(r.threshold),
                int(r.bonus_value),
                sheet,
                upper,
                extra,
                running,
            )

        return player

    def keep(self, view: TurnView) -> np.ndarray:
        d = self.rules.dice
        return random_keeps(d.roll_faces, view.roll, view.uniform(d.n), d.keep_lookup, d.radix)

    def choose(self, view: TurnView) -> np.ndarray:
        return random_boxes(view.allowed, view.uniform(1)[:, 0], self.rules.n_boxes)

    def policy(self, sheets: Sheets) -> Policy:
        """Each die kept with probability 1/2: a keep of counts k from a roll of counts c has
        probability prod_f C(c_f, k_f) / 2^n, the same in every state (one keep row); the box is
        uniform over the allowed ones, which the sheet alone gives (one box row per sheet)."""
        if self._keep_probs is None:
            d = self.rules.dice
            rr = max(self.rules.rolls_per_turn - 1, 1)
            probs = np.empty(len(d.sub_keep))
            for r in range(d.n_rolls):
                lo, hi = d.sub_ptr[r], d.sub_ptr[r + 1]
                c, k = d.roll_counts[r].astype(np.int64), d.keep_counts[d.sub_keep[lo:hi]].astype(np.int64)
                probs[lo:hi] = (
                    np.prod([[comb(int(cf), int(kf)) for cf, kf in zip(c, row)] for row in k], axis=1) / 2**d.n
                )
            self._keep_probs = probs.reshape(1, 1, -1).repeat(rr, axis=1)
        nbx = self.rules.n_boxes
        allowed = sheets.sheet_allowed[:, :1]  # the first roll allows what any roll allows
        box = np.empty(allowed.shape + (nbx,))
        uniform_boxes(allowed.reshape(-1), nbx, box.reshape(-1, nbx))
        return Policy(self._keep_probs, box, box_row=sheets.sheet)
