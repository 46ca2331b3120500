"""The greedy bot: the generic contract, then what is special about it: it plans keeps for the best
score of this turn only, and writes the best immediate score."""

from __future__ import annotations

from harness.play.replay import replay
from harness.game.rules import load_rules
from harness.testing import StrategyContract


class TestGreedy(StrategyContract):
    spec = "greedy"

    def test_first_box_is_the_best_immediate_score(self):
        from tests.test_rules import score

        for g in range(10):
            trace, _ = replay("standard", [], ["greedy"], 2, g)
            first = next(e for e in trace if e["event"] == "box")
            assert first["score"] == max(score(load_rules("standard"), first["dice"]).values())
