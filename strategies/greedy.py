"""Turn-greedy bots: the site's time-out policy, and greedy play that optimises keeps for this turn."""

from __future__ import annotations

import numpy as np

from harness.registry import register
from harness.rules import RuleSet
from harness.scoring import best_immediate, context
from strategies.kernels import best_gain_box
from harness.strategy import Policy, Sheets, Strategy, TurnView
from harness.turn import turn_policy


def best_gain(view: TurnView) -> np.ndarray:
    """(B,) the allowed box with the largest immediate gain (a bonus it completes included).

    Ties go to the box with the lowest maximum: the cheapest one to give up.
    """
    r = view.rules
    return best_gain_box(view.options, view.allowed, view.extra, view.upper, r.threshold, r.bonus_value,
                         r.upper_face, _cheapest_first(r))


def sheet_boxes(sheets: Sheets, box_of) -> np.ndarray:
    """(B, 2, R) the box ``box_of(options, allowed, extra, upper)`` (a batch rule, rows of a
    :class:`TurnView`) picks with each roll in hand in each state of ``sheets``."""
    b, _, n_rolls, nbx = sheets.options.shape
    upper = np.repeat(sheets.uppers.astype(np.int16), 2 * n_rolls)
    return box_of(sheets.options.reshape(-1, nbx), sheets.allowed.reshape(-1), sheets.extra.reshape(-1),
                  upper).reshape(b, 2, n_rolls)


def gain_boxes(sheets: Sheets) -> np.ndarray:
    """(B, 2, R) :func:`best_gain`'s box for every roll of every state of ``sheets``."""
    r = sheets.rules
    order = _cheapest_first(r)
    return sheet_boxes(sheets, lambda o, a, e, u: best_gain_box(o, a, e, u, r.threshold, r.bonus_value,
                                                                r.upper_face, order))


def _cheapest_first(rules: RuleSet) -> np.ndarray:
    return np.argsort(rules.box_max(), kind="stable").astype(np.int64)


def best_box(rules: RuleSet, value: np.ndarray) -> np.ndarray:
    """Argmax over boxes of value (B, NB); ties go to the box with the lowest maximum (cheapest to give up)."""
    order = _cheapest_first(rules)
    return order[np.argmax(value[:, order], axis=1)]


@register
class TimeoutBot(Strategy):
    name = "timeout"
    description = "never rerolls; writes the box with the largest immediate gain (the site's time-out policy)"
    classifier = {"stochastic": False, "lookahead": "none", "long_run_time": False}

    def keep(self, view: TurnView) -> np.ndarray:
        return self.rules.dice.roll_as_keep[view.roll]

    def choose(self, view: TurnView) -> np.ndarray:
        return best_gain(view)

    def policy(self, sheets: Sheets) -> Policy:
        d = self.rules.dice
        rr = self.rules.rolls_per_turn - 1
        return Policy(np.broadcast_to(d.roll_as_keep.astype(np.int32), (1, max(rr, 1), d.n_rolls)).copy(),
                      gain_boxes(sheets))


class TurnPlanner(Strategy):
    """Base for bots that pick keeps by :func:`turn_policy` on per-state stop values.

    Subclasses give ``stop_values(filled, upper, flag, first)`` -> (R,) value of stopping with each
    roll; plans are cached per (state, rerolls left) for the life of the instance.
    """

    uses_upper = False
    #: plans kept per shared cache (~0.6 KB each) before it is cleared
    max_plans = 400_000
    _shared: dict[tuple[type, str, str], dict[tuple[int, int, bool, int, bool], np.ndarray]] = {}

    def __init__(self, rules: RuleSet, **params) -> None:
        super().__init__(rules, **params)
        self._ctx = context(rules)
        self._servida = rules.has_servida
        # instances with the same rules and parameters share plans (two greedy seats plan once)
        self._plans = TurnPlanner._shared.setdefault((type(self), rules.digest, self.label), {})

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_plans"]  # a cache: not shipped to workers, rebuilt (and shared) there
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._plans = TurnPlanner._shared.setdefault((type(self), self.rules.digest, self.label), {})

    def stop_values(self, filled: int, upper: int, flag: bool, first: bool) -> np.ndarray:
        raise NotImplementedError

    def _keep_table(self, filled: int, upper: int, flag: bool, rerolls: int, first: bool) -> np.ndarray:
        """(R,) keep for each roll in one state, with ``rerolls`` rerolls left (cached)."""
        key = (filled, upper, flag, rerolls, first)
        table = self._plans.get(key)
        if table is None:
            tl = self.stop_values(filled, upper, flag, False)
            # the first roll only scores differently with servida (generala)
            tf = self.stop_values(filled, upper, flag, True) if self._servida else tl
            _, k_first, _, keeps = turn_policy(self.rules.dice, tf, tl, rerolls)
            if len(self._plans) > self.max_plans:
                # bounded memory: a state space like the bonus bot's (sheet x upper subtotal) would
                # otherwise grow the cache to gigabytes; recent states are re-planned on demand
                self._plans.clear()
            k_first, keeps = k_first.astype(np.int16), keeps.astype(np.int16)
            # one pass serves the first roll and every later roll of the turn; saved rolls can
            # make ``rerolls`` exceed rolls_per_turn - 1
            self._plans[(filled, upper, flag, rerolls, True)] = k_first
            for j in range(1, rerolls + 1):
                self._plans.setdefault((filled, upper, flag, j, False), keeps[j])
            table = self._plans[key]
        return table

    def keep(self, view: TurnView) -> np.ndarray:
        upper = view.upper.astype(np.int64) if self.uses_upper else np.zeros(len(view), dtype=np.int64)
        key = (view.filled | (upper << 32) | (view.flag.astype(np.int64) << 40)
               | (view.rolls_left.astype(np.int64) << 41) | (view.first.astype(np.int64) << 56))
        uniq, inv = np.unique(key, return_inverse=True)
        tables = np.empty((len(uniq), self.rules.dice.n_rolls), dtype=np.int16)
        for g, k in enumerate(uniq.tolist()):
            tables[g] = self._keep_table(k & 0xFFFFFFFF, (k >> 32) & 0xFF, bool((k >> 40) & 1),
                                         (k >> 41) & 0x7FFF, bool(k >> 56))
        return tables[inv.reshape(-1), view.roll]

    def policy_keeps(self, sheets: Sheets) -> np.ndarray:
        """(B, rr, R) the keeps :meth:`keep` answers in each state of ``sheets``: the tables of
        :meth:`_keep_table` (first roll: ``rr`` rerolls left; after a reroll: j of them). States whose
        stop values are bit-identical share one plan (``turn_policy`` is a function of them)."""
        d, rr = self.rules.dice, self.rules.rolls_per_turn - 1
        out = np.empty((len(sheets), max(rr, 1), d.n_rolls), dtype=np.int32)
        if rr == 0:
            out[:] = d.roll_as_keep
            return out
        uppers = sheets.uppers if self.uses_upper else np.zeros(len(sheets), dtype=np.int64)
        key = (sheets.masks | (uppers.astype(np.int64) << 32) | (sheets.flags.astype(np.int64) << 40))
        uniq, first_of, inv = np.unique(key, return_index=True, return_inverse=True)
        tables = np.empty((len(uniq), max(rr, 1), d.n_rolls), dtype=np.int32)
        by_stops: dict[bytes, np.ndarray] = {}
        for g, k in enumerate(uniq.tolist()):
            filled, upper, flag = k & 0xFFFFFFFF, (k >> 32) & 0xFF, bool((k >> 40) & 1)
            plans = self._plans
            if (filled, upper, flag, rr, True) in plans and all((filled, upper, flag, j, False) in plans
                                                               for j in range(1, rr)):
                tables[g, rr - 1] = plans[(filled, upper, flag, rr, True)]
                for j in range(1, rr):
                    tables[g, j - 1] = plans[(filled, upper, flag, j, False)]
                continue
            tl = self.stop_values(filled, upper, flag, False)
            tf = self.stop_values(filled, upper, flag, True) if self._servida else tl
            sig = tl.tobytes() + tf.tobytes()
            got = by_stops.get(sig)
            if got is None:
                _, k_first, _, keeps = turn_policy(d, tf, tl, rr)
                got = np.concatenate([keeps[1:rr], k_first[None]]).astype(np.int32)
                by_stops[sig] = got
            tables[g] = got
        return tables[inv.reshape(-1)]


@register
class GreedyBot(TurnPlanner):
    name = "greedy"
    description = ("keeps that maximise the expected best box score this turn (no bonus, no look-ahead), "
                   "then the box with the largest immediate gain")
    classifier = {"stochastic": False, "lookahead": "turn", "long_run_time": False}

    def stop_values(self, filled: int, upper: int, flag: bool, first: bool) -> np.ndarray:
        return best_immediate(self._ctx, first, flag, filled)

    def choose(self, view: TurnView) -> np.ndarray:
        return best_gain(view)

    def policy(self, sheets: Sheets) -> Policy:
        return Policy(self.policy_keeps(sheets), gain_boxes(sheets))
