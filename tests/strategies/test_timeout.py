"""The time-out bot: the generic contract, then what is special about it: it never rerolls and writes
the box with the largest immediate gain (the site's policy for a player whose clock ran out)."""

from __future__ import annotations

from harness.play.replay import replay
from harness.game.rules import load_rules
from harness.testing import StrategyContract


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
