"""The random bot: the generic contract, then what is special about it: it is the only built-in that
plays by its random numbers, and its box choice is uniform over the open boxes."""

from __future__ import annotations

import numpy as np
from scipy.stats import chisquare

from harness.game.loop import play
from harness.testing import StrategyContract, rules_named


class TestRandom(StrategyContract):
    spec = "random"

    def test_stochastic_but_seeded(self):
        a = self.play("scandinavian", seed=1)["total"].to_numpy()
        b = self.play("scandinavian", seed=2)["total"].to_numpy()
        assert not np.array_equal(a, b)

    def test_box_choice_is_uniform_over_open_boxes(self):
        from strategies.random_ import RandomBot

        class FirstChoice(RandomBot):
            name = "random-first-choice"

            def choose(self, view):
                box = super().choose(view)
                if view.turn == 0:
                    self.first = box
                return box

        rules = rules_named("scandinavian")
        bot = FirstChoice(rules)
        res = play(rules, [bot], np.arange(3000), 1)
        counts = np.bincount(bot.first, minlength=rules.n_boxes)
        assert chisquare(counts).pvalue > 1e-4  # 200 expected per box
        assert res.total.mean() < 80
