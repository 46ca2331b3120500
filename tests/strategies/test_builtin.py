"""Across the built-in bots: their strength order, and a contract test module for every one of them.

What is special about each bot is in its own module (test_random.py, test_timeout.py, ...).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np

from harness.game import registry
from harness.game.loop import play
from harness.testing import StrategyContract, rules_named


def test_bots_order_random_timeout_greedy_bonus_on_scandinavian():
    rules = rules_named("scandinavian")
    bots = [registry.make(n, rules) for n in ("random", "timeout", "greedy", "bonus")]
    res = play(rules, bots, np.arange(1500), 2024)
    means = res.total.mean(axis=0)
    assert means[0] < means[1] < means[2] < means[3]
    assert means[3] - means[2] > 20  # playing for the bonus is worth a lot on a 50-point bonus


def test_every_registered_strategy_has_a_contract_test():
    import tests.strategies as pkg

    covered = set()
    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name.startswith("test_"):
            m = importlib.import_module(f"tests.strategies.{mod.name}")
            covered |= {
                c.spec.split(":")[0]
                for _, c in inspect.getmembers(m, inspect.isclass)
                if issubclass(c, StrategyContract) and c.spec
            }
    builtin = {n for n, c in registry.available().items() if c.__module__.startswith("strategies.")}
    assert builtin <= covered, f"no contract test for {builtin - covered}"
