"""The contract every bot honours, as a test class to inherit: a plugin's tests and the built-in bots' run it.

Shipped in the package (not a pytest plugin, which would import numba into every pytest session of
an environment), so a plugin's own repository runs it with ``from harness.testing import
StrategyContract`` (docs/write-a-bot.md). It needs pytest, which a test run has.
"""

from __future__ import annotations

import pickle
from functools import cache

import numpy as np
import pandas as pd
import pytest

from harness.game import registry
from harness.game.loop import play
from harness.game.rules import RuleSet, builtin_rule_sets, load_rules
from harness.game.strategy import Strategy, TurnView

#: The classifier keys every bot declares, with the type of each value.
CLASSIFIER_KEYS: dict[str, type] = {"stochastic": bool, "lookahead": str, "long_run_time": bool}


def classifier_problems(cls: type[Strategy], classifier: object = None) -> list[str]:
    """What is wrong with a bot's classifier: [] when ``cls`` declares its own (not inherited from a
    base class) with every key of :data:`CLASSIFIER_KEYS` holding a value of the right type.

    ``classifier`` checks an instance's value instead (a bot may refine it from its parameters),
    still requiring the class's own declaration.
    """
    who = f"{cls.__module__}.{cls.__qualname__}"
    if "classifier" not in vars(cls):
        inherited = next((b for b in cls.__mro__[1:] if "classifier" in vars(b)), None)
        source = f"inherits {inherited.__qualname__}'s" if inherited else "has no classifier"
        return [f"{who} does not declare its own classifier ({source}); set the class attribute"]
    c = vars(cls)["classifier"] if classifier is None else classifier
    if not isinstance(c, dict):
        return [f"{who}.classifier is a {type(c).__name__}, expected a dict"]
    problems = [f"{who}.classifier lacks {key!r}" for key in CLASSIFIER_KEYS if key not in c]
    problems += [
        f"{who}.classifier[{key!r}] = {c[key]!r} is not a {t.__name__}"
        for key, t in CLASSIFIER_KEYS.items()
        if key in c and type(c[key]) is not t
    ]
    if isinstance(c.get("lookahead"), str) and not c["lookahead"].strip():
        problems.append(f"{who}.classifier['lookahead'] is empty")
    return problems


@cache
def rules_named(name: str) -> RuleSet:
    return load_rules(name)


class StrategyContract:
    """Generic checks: deterministic for a seed, every rule set, legal moves, batch-independent, picklable,
    and a classifier of its own that the bot lives up to."""

    spec: str = ""
    opponent: str = "timeout"
    games: int = 24
    #: rule sets this bot cannot play in CI time, with the reason (checked, never silently skipped)
    too_costly: dict[str, str] = {}
    #: the rule set of the checks that need only one (determinism, batches, pickling, classifier):
    #: one the bot can play in CI time
    home: str = "scandinavian"

    def make(self, rules: RuleSet) -> Strategy:
        bot = registry.make(self.spec, rules)
        bot.prepare()
        return bot

    def play(
        self, name: str, games: np.ndarray | None = None, seed: int = 7, bot: Strategy | None = None
    ) -> pd.DataFrame:
        rules = rules_named(name)
        bot = bot or self.make(rules)
        games = np.arange(self.games) if games is None else games
        return play(rules, [bot, registry.make(self.opponent, rules)], games, seed).to_frame()

    @pytest.mark.parametrize("name", builtin_rule_sets())
    def test_plays_every_rule_set_legally(self, name: str) -> None:
        if name in self.too_costly:
            assert self.too_costly[name], "say why"
            return
        # the engine validates every answer (only dice it has, only open boxes) and raises otherwise
        df = self.play(name)
        mine = df[df.seat == 0]
        rules = rules_named(name)
        assert len(mine) == self.games
        assert (mine[rules.box_names].to_numpy() <= rules.box_max() * rules.columns).all()

    def test_deterministic_for_a_seed(self) -> None:
        a = self.play(self.home, seed=3)
        b = self.play(self.home, seed=3)
        pd.testing.assert_frame_equal(a, b)

    def test_does_not_depend_on_the_batch(self) -> None:
        whole = self.play(self.home, games=np.arange(40, 64))
        rules = rules_named(self.home)
        bot = self.make(rules)
        parts = pd.concat(
            [self.play(self.home, games=np.arange(s, min(s + 7, 64)), bot=bot) for s in range(40, 64, 7)],
            ignore_index=True,
        )
        pd.testing.assert_frame_equal(whole, parts)

    def test_clone_and_pickle_play_identically(self) -> None:
        rules = rules_named(self.home)
        bot = self.make(rules)
        clone = pickle.loads(pickle.dumps(bot))
        pd.testing.assert_frame_equal(self.play(self.home, bot=bot), self.play(self.home, bot=clone))

    def test_label_round_trips_through_the_registry(self) -> None:
        rules = rules_named(self.home)
        bot = self.make(rules)
        assert registry.make(bot.label, rules).label == bot.label
        assert bot.label.split(":")[0] == type(bot).name
        assert type(bot).description

    def strategy_class(self) -> type[Strategy]:
        return registry.get(self.spec.split(":")[0])

    def test_classifier_is_declared(self) -> None:
        cls = self.strategy_class()
        problems = classifier_problems(cls)
        assert not problems, "; ".join(problems)
        bot = registry.make(self.spec, rules_named(self.home))
        problems = classifier_problems(cls, bot.classifier)
        assert not problems, "; ".join(problems)

    def test_respects_its_classifier(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # a bot that says it is not stochastic must not consult its random numbers (view.uniform);
        # one that says it is must
        rules = rules_named(self.home)
        bot = self.make(rules)

        def mine() -> pd.DataFrame:  # alone at the table: an opponent may be stochastic itself
            # keep and choose themselves: a whole-game player draws its numbers in its kernel
            return play(rules, [bot], np.arange(self.games), 7, seat_players=False).to_frame()

        plain = mine()
        seen = []
        for u in (0.0, 1.0 - 2**-53):
            monkeypatch.setattr(TurnView, "uniform", lambda view, width=1, u=u: np.full((len(view), width), u))
            seen.append(mine())
        if bot.classifier["stochastic"]:
            assert not (seen[0].equals(plain) and seen[1].equals(plain)), "stochastic, but ignores view.uniform"
        else:
            for frame in seen:
                pd.testing.assert_frame_equal(frame, plain)
