"""Turn-greedy bots: the site's time-out policy, and greedy play that optimises keeps for this turn."""

from __future__ import annotations

import numpy as np

from harness.registry import register
from harness.rules import RuleSet
from harness.scoring import best_immediate, context, state_options
from harness.strategy import Strategy, TurnView
from harness.turn import turn_policy


def immediate_gain(view: TurnView) -> np.ndarray:
    """(B, NB) float64: what each allowed box adds to the total now (bonus crossing included), -inf if not allowed."""
    rules = view.rules
    gain = view.options.astype(np.float64) + view.extra[:, None]
    up = rules.upper_face > 0
    crosses = (view.upper[:, None] < rules.threshold) & (view.upper[:, None] + view.options >= rules.threshold)
    gain += np.where(up[None, :] & crosses, rules.bonus_value, 0)
    return np.where(view.allowed_matrix(), gain, -np.inf)


def best_box(rules: RuleSet, value: np.ndarray) -> np.ndarray:
    """Argmax over boxes of value (B, NB); ties go to the box with the lowest maximum (cheapest to give up)."""
    order = np.argsort(rules.box_max(), kind="stable")
    return order[np.argmax(value[:, order], axis=1)]


@register
class TimeoutBot(Strategy):
    name = "timeout"
    description = "never rerolls; writes the box with the largest immediate gain (the site's time-out policy)"

    def keep(self, view: TurnView) -> np.ndarray:
        return self.rules.dice.roll_as_keep[view.roll]

    def choose(self, view: TurnView) -> np.ndarray:
        return best_box(self.rules, immediate_gain(view))


class TurnPlanner(Strategy):
    """Base for bots that pick keeps by :func:`turn_policy` on per-state stop values.

    Subclasses give ``stop_values(filled, upper, flag, first)`` -> (R,) value of stopping with each
    roll; plans are cached per (state, rerolls left) for the life of the instance.
    """

    uses_upper = False

    def __init__(self, rules: RuleSet, **params) -> None:
        super().__init__(rules, **params)
        self._ctx = context(rules)
        self._plans: dict[tuple[int, int, bool, int, bool], np.ndarray] = {}

    def stop_values(self, filled: int, upper: int, flag: bool, first: bool) -> np.ndarray:
        raise NotImplementedError

    def box_values(self, filled: int, flag: bool, first: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every roll in one state: (R, NB) scores, (R,) allowed masks, (R,) extra bonus."""
        return state_options(self._ctx, first, flag, filled)

    def _keep_table(self, filled: int, upper: int, flag: bool, rerolls: int, first: bool) -> np.ndarray:
        """(R,) keep for each roll in one state, with ``rerolls`` rerolls left (cached)."""
        key = (filled, upper, flag, rerolls, first)
        table = self._plans.get(key)
        if table is None:
            tf = self.stop_values(filled, upper, flag, True)
            tl = self.stop_values(filled, upper, flag, False)
            _, k_first, _, keeps = turn_policy(self.rules.dice, tf, tl, rerolls)
            # after a reroll the later-roll tables serve any turn length; saved rolls can make
            # ``rerolls`` exceed rolls_per_turn - 1
            self._plans[(filled, upper, flag, rerolls, True)] = k_first
            self._plans[(filled, upper, flag, rerolls, False)] = keeps[rerolls]
            table = k_first if first else keeps[rerolls]
        return table

    def keep(self, view: TurnView) -> np.ndarray:
        upper = view.upper.astype(np.int64) if self.uses_upper else np.zeros(len(view), dtype=np.int64)
        key = (view.filled | (upper << 32) | (view.flag.astype(np.int64) << 40)
               | (view.rolls_left.astype(np.int64) << 41) | (view.first.astype(np.int64) << 56))
        uniq, inv = np.unique(key, return_inverse=True)
        tables = np.empty((len(uniq), self.rules.dice.n_rolls), dtype=np.int32)
        for g, k in enumerate(uniq.tolist()):
            tables[g] = self._keep_table(k & 0xFFFFFFFF, (k >> 32) & 0xFF, bool((k >> 40) & 1),
                                         (k >> 41) & 0x7FFF, bool(k >> 56))
        return tables[inv.reshape(-1), view.roll]


@register
class GreedyBot(TurnPlanner):
    name = "greedy"
    description = ("keeps that maximise the expected best box score this turn (no bonus, no look-ahead), "
                   "then the box with the largest immediate gain")
    classifier = {"stochastic": False, "lookahead": "turn", "long_run_time": False}

    def stop_values(self, filled: int, upper: int, flag: bool, first: bool) -> np.ndarray:
        return best_immediate(self._ctx, first, flag, filled)

    def choose(self, view: TurnView) -> np.ndarray:
        return best_box(self.rules, immediate_gain(view))
