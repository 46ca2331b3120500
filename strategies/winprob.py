"""The win-probability bot: plays to win the game (beat every other sheet), not to score most.

``winprob`` sees every sheet at the table (:attr:`harness.game.strategy.TurnView.seats`) and values each
keep and box by its chance of winning, a tie counting as half a win:

* **Every opponent finished** (the last mover's last turns): the best final score B to beat is
  known, and the bot plays exactly optimally: it maximises P(X > d) + 1/2 P(X = d), X its points
  still to come and d = B - its points, from the tie-aware table of :mod:`harness.exact.target`
  (kind "tie": the recursion of the target table with a finished column worth 1/2 at d = 0).
  That objective is not a combination of two target maxima (max P(X >= d) and max P(X >= d + 1)
  may need different policies), which is why it has its own table. Exact for one best opponent;
  when two or more finished opponents share the best score a tie is worth less than 1/2 (1/3,
  1/4...), and the bot still counts it as 1/2.
* **Before that** each opponent's remaining score is modelled exactly as EV-optimal play from
  its current state (the "ev" table: P(points still to come >= y) under the solver's policy, the
  tail of the exact distribution), opponents independent of each other, which gives the
  distribution of the best final B. An option is valued at sum over b of P(B = b) x the tie-aware
  table's value at deficit b - (its points): within the current turn the keeps and the box are
  chosen for that mixture (one policy for every b), but from the next turn on the value is that of
  play knowing b. The approximation is optimistic (it credits later turns with knowledge of B they
  will not have), and it is exact as B is known. Against an opponent who does not play
  EV-optimally the model of that opponent is an approximation too.

Alone at the table (nobody to beat) it plays the solver's EV-optimal game. The difficulty dial as
the solver's: ``temperature=T`` draws each keep and box with probability proportional to
exp(value / T), values in percentage points of win probability, and ``blunder=P`` makes a
uniformly random legal decision with probability P. ``tmax`` caps the
deficits the tables resolve (default: the perfect sheet plus two extra bonuses; lower is cheaper
and weaker: a deficit above counts as lost).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.exact.kernels import target as TK
from harness.util.errors import UserError
from harness.game.rules import RuleSet
from harness.game.strategy import Param, Strategy, TurnView
from harness.exact.target import Aims, Player, default_tmax, target_table
from strategies.solver import SolverBot, random_boxes

#: Games whose weights are worked out at once (the weights take (games, tmax + 1) float64).
BLOCK = 2048


class WinProbBot(Strategy):
    name = "winprob"
    description = (
        "plays to win: maximises P(win) + 1/2 P(tie) against every other sheet (exact once the "
        "others have finished; before, each opponent modelled as EV-optimal play)"
    )
    params = (
        Param(
            "temperature",
            float,
            0.0,
            "softmax temperature in percentage points of win probability (0 = best play)",
            lo=0.0,
        ),
        Param("blunder", float, 0.0, "probability of a uniformly random legal action at each decision", lo=0.0, hi=1.0),
        Param(
            "tmax",
            int,
            0,
            "largest deficit the tables resolve (0 = the perfect sheet plus two extra "
            "bonuses; lower = cheaper tables, weaker play)",
            lo=0,
        ),
    )
    classifier = {"stochastic": False, "lookahead": "game", "long_run_time": False}
    sees_table = True

    def __init__(self, rules: RuleSet, **params: Any) -> None:
        super().__init__(rules, **params)
        if rules.columns > 1 or rules.saved_rolls:
            raise UserError(f"strategy 'winprob' needs one column without saved rolls (rule set {rules.name})")
        self.blunder = float(self.config["blunder"])
        self.temperature = float(self.config["temperature"])
        self.tmax = int(self.config["tmax"]) or default_tmax(rules)
        self.classifier = {**type(self).classifier, "stochastic": self.blunder > 0 or self.temperature > 0}
        self._player: Player | None = None
        self._alone = SolverBot(rules, blunder=self.blunder)  # alone: points, so no temperature

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_player", "_ev")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._player = None

    def prepare(self) -> None:
        """Load (or solve) the tie-aware and the EV-play tables; compile the kernels before workers fork."""
        if self._player is None:
            self._player = Player(target_table(self.rules, "tie", self.tmax), self.temperature)
            self._ev = target_table(self.rules, "ev", self.tmax)
            one = np.zeros((1, 1), dtype=np.int64)
            W = np.zeros((1, self.tmax + 1))
            lo, nws = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
            TK.best_final_weights(
                self._ev.plan.layout, self._ev.values, self._ev.off, one, one.astype(bool), one, one, W, lo, nws
            )
            z = one[0]
            if self.rules.rolls_per_turn > 1:
                self._player.keeps(z, z, z, z, np.full(1, self.rules.rolls_per_turn - 1), Aims(lo, W, nws))
            self._player.boxes(
                z, z, z, np.zeros((1, self.rules.n_boxes), np.int16), np.ones(1, np.int64), z, Aims(lo, W, nws)
            )
        self._alone.prepare()

    def solitaire_refusal(self) -> str | None:
        return (
            f"strategy {self.label!r} is not solitaire: it reads the other sheets at the table, so its "
            f"choices and its opponents' finals are not independent (sample it with `run`)"
        )

    # -- the model of the others ------------------------------------------------------------------

    def weights(self, view: TurnView, idx: slice) -> Aims:
        """The aims of games ``idx``: W[g, k] = P(best other final = my points + leads[g] + k)."""
        filled, upper, flag = view.seats
        me = view.seat
        others = [j for j in range(filled.shape[1]) if j != me]
        n = len(view.games[idx])
        W = np.zeros((n, self.tmax + 1))
        lo, nws = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        TK.best_final_weights(
            self._ev.plan.layout,
            self._ev.values,
            self._ev.off,
            np.ascontiguousarray(filled[idx][:, others], dtype=np.int64),
            np.ascontiguousarray(flag[idx][:, others], dtype=np.bool_),
            np.ascontiguousarray(upper[idx][:, others], dtype=np.int64),
            np.ascontiguousarray(view.totals[idx][:, others], dtype=np.int64),
            W,
            lo,
            nws,
        )
        return Aims(lo - view.totals[idx, me].astype(np.int64), W, nws)

    # -- decisions --------------------------------------------------------------------------------

    def keep(self, view: TurnView) -> np.ndarray:
        self.prepare()
        if view.totals.shape[1] == 1:
            return self._alone.keep(view)
        out = np.empty(len(view), dtype=np.int32)
        unif = view.uniform(2) if (self.temperature > 0 or self.blunder > 0) else np.zeros((len(view), 2))
        for a in range(0, len(view), BLOCK):
            s = slice(a, a + BLOCK)
            out[s] = self._player.keeps(
                view.filled[s],
                view.flag[s],
                view.upper[s],
                view.roll[s],
                view.rolls_left[s],
                self.weights(view, s),
                unif[s],
            )
        if self.blunder > 0:
            hit = unif[:, 0] < self.blunder
            if hit.any():
                out[hit] = self._alone.random_keeps(view.roll[hit].astype(np.int64), unif[hit, 1])
        return out

    def choose(self, view: TurnView) -> np.ndarray:
        self.prepare()
        if view.totals.shape[1] == 1:
            return self._alone.choose(view)
        out = np.empty(len(view), dtype=np.int64)
        unif = view.uniform(2) if self.temperature > 0 else np.zeros((len(view), 2))
        for a in range(0, len(view), BLOCK):
            s = slice(a, a + BLOCK)
            out[s] = self._player.boxes(
                view.filled[s],
                view.flag[s],
                view.upper[s],
                view.options[s],
                view.allowed[s],
                view.extra[s],
                self.weights(view, s),
                unif[s],
            )
        if self.blunder > 0:
            out = random_boxes(view, out, self.blunder)
        return out
