"""Built-in bots: the generic contract for each, then what is special about each one."""

from __future__ import annotations

import numpy as np

from harness import registry
from harness.engine import play
from harness.replay import replay
from harness.rules import load_rules
from tests.strategies.contract import StrategyContract, rules_named


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
        from scipy.stats import chisquare
        assert chisquare(counts).pvalue > 1e-4  # 200 expected per box
        assert res.total.mean() < 80


class TestTimeout(StrategyContract):
    spec = "timeout"
    opponent = "random"

    def test_never_rerolls_and_takes_the_largest_gain(self):
        trace, _ = replay("scandinavian", [], ["timeout"], 5, 0)
        assert all(e["stop"] for e in trace if e["event"] == "keep")
        assert all(e["roll"] == 0 for e in trace if e["event"] == "roll")
        first = next(e for e in trace if e["event"] == "box")
        from tests.test_rules import score
        s = score(load_rules("scandinavian"), first["dice"])
        assert first["score"] == max(s.values())


class TestGreedy(StrategyContract):
    spec = "greedy"

    def test_first_box_is_the_best_immediate_score(self):
        from tests.test_rules import score
        for g in range(10):
            trace, _ = replay("standard", [], ["greedy"], 2, g)
            first = next(e for e in trace if e["event"] == "box")
            assert first["score"] == max(score(load_rules("standard"), first["dice"]).values())


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


def test_bots_order_random_timeout_greedy_bonus_on_scandinavian():
    rules = rules_named("scandinavian")
    bots = [registry.make(n, rules) for n in ("random", "timeout", "greedy", "bonus")]
    res = play(rules, bots, np.arange(1500), 2024)
    means = res.total.mean(axis=0)
    assert means[0] < means[1] < means[2] < means[3]
    assert means[3] - means[2] > 20  # playing for the bonus is worth a lot on a 50-point bonus


def test_every_registered_strategy_has_a_contract_test():
    import inspect
    import tests.strategies as pkg
    import pkgutil, importlib
    covered = set()
    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name.startswith("test_"):
            m = importlib.import_module(f"tests.strategies.{mod.name}")
            covered |= {c.spec.split(":")[0] for _, c in inspect.getmembers(m, inspect.isclass)
                        if issubclass(c, StrategyContract) and c.spec}
    builtin = {n for n, c in registry.available().items() if c.__module__.startswith("strategies.")}
    assert builtin <= covered, f"no contract test for {builtin - covered}"
