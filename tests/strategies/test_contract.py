"""The contract's own checks can fail: toy bots that break them are reported."""

from __future__ import annotations

import pytest

from harness.game.strategy import Strategy
from strategies.greedy import TimeoutBot
from strategies.random_ import RandomBot
from harness.testing import StrategyContract, classifier_problems


class Undeclared(Strategy):  # relies on the base class's default classifier
    name = "toy-undeclared"
    description = "a bot that forgot its classifier"


class InheritsRandom(RandomBot):  # a new bot must say what it is, even if its parent did
    name = "toy-inherits"


class Sloppy(Strategy):
    name = "toy-sloppy"
    classifier = {"stochastic": "no", "lookahead": ""}


class Declared(Strategy):
    name = "toy-declared"
    classifier = {"stochastic": False, "lookahead": "none", "long_run_time": False, "extra": 1}


class ClaimsDeterministic(RandomBot):
    name = "toy-claims-deterministic"
    classifier = {"stochastic": False, "lookahead": "none", "long_run_time": False}


class ClaimsStochastic(TimeoutBot):
    name = "toy-claims-stochastic"
    classifier = {"stochastic": True, "lookahead": "none", "long_run_time": False}


def contract_for(cls: type[Strategy]) -> StrategyContract:
    class Probe(StrategyContract):  # not collected: the name does not start with Test
        spec = cls.name

        def strategy_class(self):
            return cls

        def make(self, rules):  # toys stay out of the registry
            return cls(rules)

    return Probe()


def test_an_undeclared_classifier_is_reported():
    assert classifier_problems(Undeclared) == [
        f"{__name__}.Undeclared does not declare its own classifier (inherits Strategy's); set the class attribute"
    ]
    assert "inherits RandomBot's" in classifier_problems(InheritsRandom)[0]


def test_the_contract_test_fails_for_an_undeclared_classifier():
    with pytest.raises(AssertionError, match="does not declare its own classifier"):
        contract_for(Undeclared).test_classifier_is_declared()


def test_missing_keys_and_wrong_types_are_reported():
    problems = classifier_problems(Sloppy)
    assert any("lacks 'long_run_time'" in p for p in problems)
    assert any("['stochastic'] = 'no' is not a bool" in p for p in problems)
    assert any("['lookahead'] is empty" in p for p in problems)
    assert "is a list" in classifier_problems(Declared, [])[0]  # an instance's value is checked too


def test_a_declared_classifier_passes():
    assert classifier_problems(Declared) == []
    assert classifier_problems(RandomBot) == []


@pytest.mark.parametrize(
    "cls,message", [(ClaimsDeterministic, "DataFrame"), (ClaimsStochastic, "ignores view.uniform")]
)
def test_a_bot_that_misstates_its_randomness_is_caught(cls, message, monkeypatch):
    with pytest.raises(AssertionError, match=message):
        contract_for(cls).test_respects_its_classifier(monkeypatch)
