"""Turn-greedy bots: the site's time-out policy, and greedy play that optimises keeps for this turn."""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.game.rules import RuleSet
from harness.game.scoring import best_immediate, context
from strategies.kernels import best_gain_box, immediate_stops, sheet_gain_boxes, turn_seat
from harness.game.strategy import Policy, Sheets, Strategy, TurnView, own_decisions, seat_player_pays
from harness.game.turn import batch_keeps, turn_policy
from harness.game.loop import answer_samples


def best_gain(view: TurnView) -> np.ndarray:
    """(B,) the allowed box with the largest immediate gain (a bonus it completes included).

    Ties go to the box with the lowest maximum: the cheapest one to give up.
    """
    r = view.rules
    return best_gain_box(
        view.options, view.allowed, view.extra, view.upper, r.threshold, r.bonus_value, r.upper_face, cheapest_first(r)
    )


def gain_boxes(sheets: Sheets) -> tuple[np.ndarray, np.ndarray]:
    """(boxes (N, F, R), row (B,)): :func:`best_gain`'s box for every roll (F = 2 with servida: index 1
    the first roll; else 1) of every state of ``sheets``, one row per sheet and what its upper
    subtotal can still cross (the subtotal matters only through the bonus an upper box completes)."""
    r = sheets.rules
    T = int(r.threshold)
    top = int(sheets.sheet_options.max(initial=0)) + 1  # no box scores this much: nothing to cross
    u = sheets.uppers.astype(np.int64)
    need = np.where(u < T, np.minimum(T - u, top), top)
    _, first, row = np.unique(sheets.sheet * (top + 1) + need, return_index=True, return_inverse=True)
    out = np.empty((len(first), 2 if r.has_servida else 1, r.dice.n_rolls), dtype=np.int64)
    sheet_gain_boxes(
        sheets.sheet_options,
        sheets.sheet_allowed,
        sheets.sheet_extra,
        sheets.sheet[first],
        u[first],
        T,
        r.bonus_value,
        r.upper_face,
        cheapest_first(r),
        out,
    )
    return out, row.reshape(-1)


def cheapest_first(rules: RuleSet) -> np.ndarray:
    return np.argsort(rules.box_max(), kind="stable").astype(np.int64)


def best_box(rules: RuleSet, value: np.ndarray) -> np.ndarray:
    """Argmax over boxes of value (B, NB); ties go to the box with the lowest maximum (cheapest to give up)."""
    order = cheapest_first(rules)
    return order[np.argmax(value[:, order], axis=1)]


#: The most boxes a turn-greedy bot's whole-game player plans for: its plans take 2**(NB + 1) x
#: rolls x (rerolls + 1) int16, touched only where a sheet is met (scandinavian: 99 MiB of address
#: space); maxi's 20 boxes would take gigabytes, so its games go through keep and choose.
SEAT_PLAYER_BOXES = 16


def turn_seat_player(bot: Strategy, plan: np.ndarray, planned: np.ndarray) -> Any:
    """The whole-game player of a turn-greedy bot (:func:`strategies.kernels.turn_seat`), or None
    past :data:`SEAT_PLAYER_BOXES`."""
    r, d = bot.rules, bot.rules.dice
    if r.n_boxes > SEAT_PLAYER_BOXES or not seat_player_pays(getattr(bot, "_seat_games", 0), turn_seat):
        return None
    ctx, order = context(r), cheapest_first(r)

    def player(
        keys: np.ndarray, seat: int, sheet: np.ndarray, upper: np.ndarray, extra: np.ndarray, running: np.ndarray
    ) -> None:
        turn_seat(
            ctx,
            keys,
            seat,
            d.n,
            r.rolls_per_turn,
            d.roll_lookup,
            d.radix,
            d.keep_counts,
            d.keep_size,
            d.roll_as_keep,
            d.trans_ptr,
            d.trans_roll,
            d.trans_prob,
            d.sub_ptr,
            d.sub_keep,
            bool(r.has_servida),
            plan,
            planned,
            order,
            int(r.threshold),
            int(r.bonus_value),
            sheet,
            upper,
            extra,
            running,
        )

    return player


class TimeoutBot(Strategy):
    name = "timeout"
    description = "never rerolls; writes the box with the largest immediate gain (the site's time-out policy)"
    classifier = {"stochastic": False, "lookahead": "none", "long_run_time": False}

    def warm_kernels(self) -> None:
        answer_samples(self)

    def keep(self, view: TurnView) -> np.ndarray:
        return self.rules.dice.roll_as_keep[view.roll]

    def expect_games(self, games: int) -> None:
        self._seat_games = max(getattr(self, "_seat_games", 0), int(games))

    def seat_player(self) -> Any:
        """Whole games in one kernel call: every turn stops at its first roll, the box of :func:`best_gain`."""
        if not own_decisions(self, TimeoutBot):
            return None
        return turn_seat_player(self, np.zeros((0, 1, 1), dtype=np.int16), np.zeros(0, dtype=bool))

    def choose(self, view: TurnView) -> np.ndarray:
        return best_gain(view)

    def policy(self, sheets: Sheets) -> Policy:
        d = self.rules.dice
        rr = self.rules.rolls_per_turn - 1
        boxes, row = gain_boxes(sheets)
        return Policy(
            np.broadcast_to(d.roll_as_keep.astype(np.int32), (1, max(rr, 1), d.n_rolls)).copy(), boxes, box_row=row
        )


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
        state.pop("_seat_plan", None)  # the whole-game player's plans: the same
        state.pop("_seat_planned", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._plans = TurnPlanner._shared.setdefault((type(self), self.rules.digest, self.label), {})

    def stop_values(self, filled: int, upper: int, flag: bool, first: bool) -> np.ndarray:
        raise NotImplementedError

    def warm_kernels(self) -> None:
        answer_samples(self)

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
        key = (
            view.filled
            | (upper << 32)
            | (view.flag.astype(np.int64) << 40)
            | (view.rolls_left.astype(np.int64) << 41)
            | (view.first.astype(np.int64) << 56)
        )
        uniq, inv = np.unique(key, return_inverse=True)
        tables = np.empty((len(uniq), self.rules.dice.n_rolls), dtype=np.int16)
        for g, k in enumerate(uniq.tolist()):
            tables[g] = self._keep_table(
                k & 0xFFFFFFFF, (k >> 32) & 0xFF, bool((k >> 40) & 1), (k >> 41) & 0x7FFF, bool(k >> 56)
            )
        return tables[inv.reshape(-1), view.roll]

    def plan_keeps(self, stops: np.ndarray) -> np.ndarray:
        """(N, rr, R) the keeps :meth:`keep` answers in N states with stop values ``stops`` (N, 2, R)
        (index 1: the turn's first roll, used with servida): the tables of :meth:`_keep_table`
        (first roll: ``rr`` rerolls left at row rr - 1; after a reroll: j of them at row j - 1),
        worked out by :func:`harness.game.turn.turn_keeps`, the kernels of ``turn_policy``."""
        d, rr = self.rules.dice, self.rules.rolls_per_turn - 1
        if rr == 0:
            return np.broadcast_to(d.roll_as_keep.astype(np.int32), (len(stops), 1, d.n_rolls)).copy()
        return batch_keeps(d, stops[:, 1] if self._servida else stops[:, 0], stops[:, 0], rr)


class GreedyBot(TurnPlanner):
    name = "greedy"
    description = (
        "keeps that maximise the expected best box score this turn (no bonus, no look-ahead), "
        "then the box with the largest immediate gain"
    )
    classifier = {"stochastic": False, "lookahead": "turn", "long_run_time": False}

    def stop_values(self, filled: int, upper: int, flag: bool, first: bool) -> np.ndarray:
        return best_immediate(self._ctx, first, flag, filled)

    def expect_games(self, games: int) -> None:
        self._seat_games = max(getattr(self, "_seat_games", 0), int(games))

    def seat_player(self) -> Any:
        """Whole games in one kernel call: the keeps :meth:`keep` plans, each sheet's worked out
        once in the process (the kernel's own plan table), and the box of :func:`best_gain`; for
        long runs or once compiled (:func:`harness.game.strategy.seat_player_pays`)."""
        r = self.rules
        if (
            r.rolls_per_turn < 2
            or r.n_boxes > SEAT_PLAYER_BOXES
            or not own_decisions(self, GreedyBot, "stop_values", "_keep_table")
            or not seat_player_pays(getattr(self, "_seat_games", 0), turn_seat)
        ):
            return None
        if getattr(self, "_seat_plan", None) is None:
            # np.zeros maps pages lazily: only the sheets met take memory
            self._seat_plan = np.zeros((2 ** (r.n_boxes + 1), r.rolls_per_turn, r.dice.n_rolls), dtype=np.int16)
            self._seat_planned = np.zeros(2 ** (r.n_boxes + 1), dtype=bool)
        return turn_seat_player(self, self._seat_plan, self._seat_planned)

    def choose(self, view: TurnView) -> np.ndarray:
        return best_gain(view)

    def policy(self, sheets: Sheets) -> Policy:
        """Keeps per sheet (greedy's stop values ignore the upper subtotal), boxes by :func:`gain_boxes`."""
        opts = sheets.sheet_options
        stops = np.empty(opts.shape[:3])
        immediate_stops(opts, sheets.sheet_allowed, sheets.sheet_extra, stops)
        boxes, row = gain_boxes(sheets)
        return Policy(self.plan_keeps(stops), boxes, keep_row=sheets.sheet, box_row=row)
