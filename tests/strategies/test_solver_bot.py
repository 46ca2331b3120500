"""The solver bot: the generic contract, optimal play against the exact figures, and its difficulty dial."""

from __future__ import annotations

import numpy as np
import pytest

from harness.game import registry
from harness.exact import solver
from harness.game.loop import play
from harness.stats import mean_ci
from harness.testing import StrategyContract, rules_named

MAXI = "maxi is solved in about an hour of CPU (benchmarks/BENCHMARKS.md), far beyond CI time"


class TestSolver(StrategyContract):
    spec = "solver"
    too_costly = {"maxi": MAXI}

    def test_simulated_mean_agrees_with_the_exact_expected_score(self):
        rules = rules_named("scandinavian")
        bots = [self.make(rules), self.make(rules)]
        res = play(rules, bots, np.arange(1000), seed=11)
        totals = res.total.reshape(-1)  # 2,000 columns of optimal play
        ci = mean_ci(totals.astype(np.float64), confidence=0.999)
        exact = solver.solve(rules).expected_score
        assert ci.lo <= exact <= ci.hi, (ci, exact)

    def test_ties_are_broken_the_same_way_every_time(self):
        rules = rules_named("standard")
        a = play(rules, [self.make(rules)], np.arange(50), seed=2).to_frame()
        b = play(rules, [self.make(rules)], np.arange(50), seed=2).to_frame()
        assert a.equals(b)

    def test_each_column_is_a_fresh_game(self):
        rules = rules_named("standard").with_settings({"columns": 2})
        res = play(rules, [self.make(rules)], np.arange(300), seed=4)
        cols = res.column_totals[:, 0, :]
        exact = solver.solve(rules).expected_score
        for c in range(2):
            ci = mean_ci(cols[:, c].astype(np.float64), confidence=0.999)
            assert ci.lo <= exact <= ci.hi

    def test_saved_rolls_turns_longer_than_the_table(self):
        rules = rules_named("forced").with_settings({"saved_rolls": True})
        bot = self.make(rules)
        res = play(rules, [bot], np.arange(600), seed=5)
        assert bot._extra_plans  # some turn had more than two rerolls in hand
        # spare rolls can only help: the mean clears the table's value (ordinary turns) by a margin
        ci = mean_ci(res.total[:, 0].astype(np.float64), confidence=0.999)
        assert ci.lo > solver.solve(rules).expected_score

    def test_stochastic_only_with_a_dial(self):
        rules = rules_named("standard")
        assert not registry.make("solver", rules).classifier["stochastic"]
        assert registry.make("solver:temperature=0.5", rules).classifier["stochastic"]
        assert registry.make("solver:blunder=0.1", rules).classifier["stochastic"]


class TestSolverDial(StrategyContract):
    spec = "solver:blunder=0.05,temperature=1.5"
    too_costly = {"maxi": MAXI}

    def test_dial_weakens_play(self):
        rules = rules_named("standard")
        games = np.arange(400)
        mean = {}
        for spec in ("solver", "solver:temperature=4", "solver:blunder=0.3", "solver:temperature=1000"):
            bot = registry.make(spec, rules)
            mean[spec] = play(rules, [bot], games, seed=9).total.mean()
        assert mean["solver"] > mean["solver:temperature=4"] > mean["solver:temperature=1000"]
        assert mean["solver"] > mean["solver:blunder=0.3"]
        # a huge temperature is close to uniformly random play
        rnd = play(rules, [registry.make("random", rules)], games, seed=9).total.mean()
        assert abs(mean["solver:temperature=1000"] - rnd) < 25

    def test_full_blunder_is_uniform_over_legal_actions(self):
        rules = rules_named("standard")
        bot = registry.make("solver:blunder=1", rules)
        res = play(rules, [bot], np.arange(200), seed=3)
        assert res.total.mean() < 120

    @pytest.mark.parametrize("bad", ["temperature=-1", "blunder=1.5", "blunder=-0.1", "temperature=nan"])
    def test_rejects_bad_parameters(self, bad):
        from harness.util.errors import UserError

        with pytest.raises(UserError, match=bad.split("=")[0]):
            registry.make(f"solver:{bad}", rules_named("standard"))
