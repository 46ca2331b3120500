"""Playing to win: the ``solver:target=T`` and ``winprob`` bots under the generic contract.

Their exact play is tested against brute force and the tables in tests/test_target.py (tiny rule
sets). Their tables on the five-dice rule sets take minutes to solve (scandinavian: a table of
1 GiB; benchmarks/BENCHMARKS.md, "Playing to win"), so the contract plays them on generala and
forced, whose tables (2 MiB and 0.2 MiB) solve in seconds, through the same code.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.game import registry
from harness.game.loop import play
from harness.util.errors import UserError
from harness.testing import StrategyContract, rules_named

MAXI = "maxi's value table alone takes about an hour of CPU and its target tables would need 67 GiB"
COSTLY = {
    name: f"{name}'s target tables take minutes of CPU each (BENCHMARKS.md, 'Playing to win')"
    for name in ("scandinavian", "standard", "yahtzee")
} | {"maxi": MAXI}


class TestTargetBot(StrategyContract):
    spec = "solver:target=170"
    too_costly = COSTLY
    home = "generala"

    def test_plays_for_the_target(self):
        rules = rules_named("generala")
        games = np.arange(300)
        ev = play(rules, [registry.make("solver", rules)], games, seed=1).total[:, 0]
        # a target far above the mean: gambling reaches it more often than EV play
        T = int(np.percentile(ev, 90))
        tgt = play(rules, [registry.make(f"solver:target={T}", rules)], games, seed=1).total[:, 0]
        assert (tgt >= T).mean() > (ev >= T).mean()

    def test_parameters(self):
        rules = rules_named("generala")
        assert registry.make("solver:target=100,temperature=1", rules).classifier["stochastic"]
        assert registry.make("solver:target=100,blunder=0.1", rules).classifier["stochastic"]
        assert not registry.make("solver:target=100", rules).classifier["stochastic"]
        with pytest.raises(UserError, match="one column"):
            registry.make("solver:target=100", rules.with_settings({"columns": 2}))


class TestWinProb(StrategyContract):
    spec = "winprob"
    too_costly = COSTLY
    home = "generala"

    def test_alone_it_plays_the_solver(self):
        rules = rules_named("generala")
        games = np.arange(50)
        a = play(rules, [registry.make("winprob", rules)], games, seed=2).to_frame()
        b = play(rules, [registry.make("solver", rules)], games, seed=2).to_frame()
        assert (a.total.to_numpy() == b.total.to_numpy()).all()

    def test_beats_the_solver_head_to_head(self):
        # generala's tables are small; seat-swapped pairs on the same dice
        rules = rules_named("generala")
        games = np.arange(3000)
        w, s = registry.make("winprob", rules), registry.make("solver", rules)
        first = play(rules, [w, s], games, seed=3).outcome[:, 0]
        second = play(rules, [s, w], games, seed=3).outcome[:, 1]
        rate = np.concatenate([first, second]).mean() / 2  # outcome: 2 win, 1 draw
        assert rate > 0.5

    def test_the_dial_weakens_it(self):
        rules = rules_named("generala")
        games = np.arange(2000)
        rate = {}
        for spec in ("winprob", "winprob:temperature=20", "winprob:blunder=0.3"):
            res = play(rules, [registry.make(spec, rules), registry.make("solver", rules)], games, seed=4)
            rate[spec] = res.outcome[:, 0].mean() / 2
        assert rate["winprob"] > rate["winprob:temperature=20"] and rate["winprob"] > rate["winprob:blunder=0.3"]

    def test_parameters(self):
        rules = rules_named("generala")
        assert registry.make("winprob:temperature=1", rules).classifier["stochastic"]
        assert registry.make("winprob:blunder=0.1", rules).classifier["stochastic"]
        assert not registry.make("winprob", rules).classifier["stochastic"]
        with pytest.raises(UserError, match="one column"):
            registry.make("winprob", rules.with_settings({"columns": 2}))


class TestWinProbDial(StrategyContract):
    spec = "winprob:temperature=2,blunder=0.05"
    too_costly = COSTLY
    home = "generala"


class TestTargetDial(StrategyContract):
    spec = "solver:target=170,temperature=2,blunder=0.05"
    too_costly = COSTLY
    home = "generala"
