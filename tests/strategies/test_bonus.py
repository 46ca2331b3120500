"""The bonus bot: the generic contract, then what is special about it: a ``weight`` parameter and the
table of chances of making the upper bonus that it paces itself against."""

from __future__ import annotations

import numpy as np

from harness.game import registry
from harness.testing import StrategyContract, rules_named


class TestBonus(StrategyContract):
    spec = "bonus"

    def test_weight_parameter(self):
        rules = rules_named("scandinavian")
        assert registry.make("bonus:weight=0.5", rules).label == "bonus:weight=0.5"
        assert registry.make("bonus:weight=1.0", rules).label == "bonus"

    def test_bonus_chance_table(self):
        from strategies.bonus import bonus_chance_table

        p = bonus_chance_table(rules_named("scandinavian"))
        assert p.shape == (64, 64)
        assert np.allclose(p[:, 0], 1)  # nothing needed: certain
        assert p[0, 1] == 0  # no open faces, something needed: impossible
        assert (np.diff(p, axis=1) <= 1e-12).all()  # needing more is never likelier
        q = 1 - (5 / 6) ** 3  # a face worked for one turn: Binomial(5, q) dice show it
        from scipy.stats import binom

        assert abs(p[0b000001, 3] - binom.sf(2, 5, q)) < 1e-12  # ones alone: three or more ones
        assert abs(p[0b100000, 24] - binom.pmf(4, 5, q) - binom.pmf(5, 5, q)) < 1e-12
        assert 0.01 < p[63, 63] < 0.2  # three of each, one turn per face, is a hard pace
