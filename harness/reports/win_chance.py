"""The chance to win of each seat of a game under review, exact under a stated model: every seat
plays the rest of the game EV-optimally from where it stands, the seats independently (see
:mod:`harness.reports.review`, which shows it step by step).

A seat between turns has the distribution of its points still to come of the "ev" target table
(:func:`harness.exact.target.target_table`); a seat in the middle of its turn has the mixture over
the rest of the turn under the same policy (:class:`WinModel`). :func:`win_model` makes the model
from the solver cache, or builds the table when it is small enough.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from harness.exact.kernels import solver as K
from harness.decisions.positions import Advisor, State
from harness.exact.target import TargetTable, default_tmax, offsets, table_path, target_table
from harness.util.sums import convolve, dot

__all__ = ["WinModel", "win_model"]


class WinModel:
    """Each seat's distribution of points still to come in its column under EV-optimal play, from
    the start of a turn (the "ev" table's vector) or from the middle of one (the solver bot's keeps
    and box from there, then the table), and the chances to win of a table of seats.

    A pmf here is a float64 array p with p[y] = P(y points still to come in the column)."""

    def __init__(self, adv: Advisor, table: TargetTable) -> None:
        if table.kind != "ev":
            raise ValueError(f"the win model needs the 'ev' table, got {table.kind!r}")
        self.adv, self.tab = adv, table
        rules = adv.rules
        self.rules = rules
        self.d = rules.dice
        self.dk = adv.sol.plan.dice
        self.lay = adv.sol.plan.layout
        self.rr = rules.rolls_per_turn - 1
        self._sizes = np.diff(self.d.trans_ptr)
        self._start: dict[int, np.ndarray] = {}
        # the current sheet's box decisions, (state, first) -> every roll's (box, score, extra bonus),
        # and its next states, (state, box, score, extra) -> State: every step of a turn asks again
        # (a third of the win chances' time, about 0.03 s a game)
        self._sheet: dict[tuple[State, bool], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._next: dict[tuple[State, int, int, int], State] = {}
        self.fresh = self.at_start(adv.state({}))
        self._powers = [np.ones(1)]

    # -- one seat ---------------------------------------------------------------------------------

    def at_start(self, st: State) -> np.ndarray:
        """The pmf of points still to come from the start of a turn in ``st`` (a full column: [1])."""
        g = self.tab.index(st.filled, st.upper, st.flag)
        hit = self._start.get(g)
        if hit is None:
            v = np.asarray(self.tab.values[self.tab.off[g] : self.tab.off[g + 1]], dtype=np.float64)
            hit = np.append(v[:-1] - v[1:], v[-1:])  # P(Y = y) = P(Y >= y) - P(Y >= y + 1)
            self._start[g] = hit
        return hit

    def after_roll(self, st: State, roll: int, rolls_left: int, first: bool) -> np.ndarray:
        """The pmf from the dice ``roll`` (a roll index) in hand with ``rolls_left`` rerolls left."""
        p = np.zeros(self.d.n_rolls)
        p[roll] = 1.0
        return self._turn(st, p, rolls_left, first)

    def after_keep(self, st: State, keep: int, rolls_left_after: int) -> np.ndarray:
        """The pmf after keeping ``keep`` (a keep index) and rerolling the other dice, which land
        with ``rolls_left_after`` rerolls left."""
        q = np.zeros(self.d.n_keeps)
        q[keep] = 1.0
        return self._turn(st, self._reroll(q), rolls_left_after, False)

    def _reroll(self, q: np.ndarray) -> np.ndarray:
        """Keeps' probabilities (K,) -> the rolls' after rerolling the other dice (R,)."""
        d = self.d
        return np.bincount(d.trans_roll, weights=np.repeat(q, self._sizes) * d.trans_prob, minlength=d.n_rolls)

    def _turn(self, st: State, p: np.ndarray, j: int, first: bool) -> np.ndarray:
        """The pmf of the column's rest from rolls ``p`` (R,) in hand with ``j`` rerolls left:
        the bot's keep of each roll (stopping moves it to the box), rerolls, then its box."""
        plan = self.adv.plan(st)
        dk = self.dk
        done = {False: np.zeros_like(p), True: np.zeros_like(p)}
        while j > 0:
            stops = plan.stop_f if first else plan.stop_l
            q = np.zeros(self.d.n_keeps)
            rolls, jj = np.flatnonzero(p), np.int64(j)
            keeps = np.array([K.keep_arg_one(dk, plan.Es, plan.Ms, jj, stops, r) for r in rolls], dtype=np.int64)
            stop = keeps == dk.roll_as_keep[rolls]
            done[first][rolls[stop]] += p[rolls[stop]]
            np.add.at(q, keeps[~stop], p[rolls[~stop]])  # one by one in roll order, as a loop would add them
            p, first, j = self._reroll(q), False, j - 1
        done[first] += p
        out = np.zeros(0)
        for fl, mass in done.items():
            rolls = np.flatnonzero(mass)
            if rolls.size:
                out = _add(out, self._boxes(st, rolls, mass[rolls], fl))
        return out

    def _decisions(self, st: State, first: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per roll in ``st``: the bot's box, its score and the extra bonus, each (R,) int64."""
        key = (st, first)
        hit = self._sheet.get(key)
        if hit is None:
            adv, lay, nb = self.adv, self.lay, self.rules.n_boxes
            n = adv.ctx.table.shape[0]
            rows = np.empty((n, nb), dtype=np.int16)
            allowed = np.empty(n, dtype=np.int64)
            extras = np.empty(n, dtype=np.int16)
            K.score_rows(adv.ctx, np.int64(st.filled), np.int64(int(st.flag)), np.bool_(first), rows, allowed, extras)
            one = np.ones(n, dtype=np.int64)
            box = np.empty(n, dtype=np.int64)
            K.choose_boxes(
                lay,
                adv.sol.values,
                one * st.filled,
                np.full(n, st.flag),
                one * st.upper,
                rows,
                allowed,
                0.0,
                0.0,
                np.zeros((n, 0)),
                box,
            )
            if all(k[0] != st for k in self._sheet):
                self._sheet.clear()
                self._next.clear()
            hit = self._sheet[key] = (box, rows[np.arange(n), box].astype(np.int64), extras.astype(np.int64))
        return hit

    def _boxes(self, st: State, rolls: np.ndarray, mass: np.ndarray, first: bool) -> np.ndarray:
        """The pmf of the rest after the bot writes each of ``rolls`` (with probabilities ``mass``):
        the rolls grouped by what they lead to (box, score, extra bonus), in the order of their
        first roll, each group's mass summed in roll order."""
        box, score, extra = self._decisions(st, first)
        b, s, x = box[rolls], score[rolls], extra[rolls]
        codes = (b * (int(score.max()) + 1) + s) * (int(extra.max()) + 1) + x
        _, at, which = np.unique(codes, return_index=True, return_inverse=True)
        w = np.zeros(len(at))
        np.add.at(w, which, mass)  # one by one in the order of the rolls, as a running sum would
        out = np.zeros(0)
        for g in np.argsort(at).tolist():
            i = int(at[g])
            key = (st, int(b[i]), int(s[i]), int(x[i]))
            nxt = self._next.get(key)
            if nxt is None:  # the next state depends on the box, its score and the extra bonus only
                nxt = self._next[key] = self.adv.after_box(st, int(rolls[i]), key[1], first)
            out = _add(out, self.at_start(nxt), nxt.points - st.points, float(w[g]))
        return out

    # -- the table ----------------------------------------------------------------------------------

    def fresh_columns(self, m: int) -> np.ndarray:
        """The pmf of ``m`` whole columns still to play (independent, each from an empty sheet)."""
        while len(self._powers) <= m:
            self._powers.append(convolve(self._powers[-1], self.fresh))
        return self._powers[m]

    @staticmethod
    def shares(finals: Sequence[tuple[int, np.ndarray]]) -> np.ndarray:
        """Each seat's chance to win, (S,): ``finals`` holds per seat (points so far, pmf of the
        points still to come). A top shared by k seats counts 1/k to each."""
        top = max(a + len(p) for a, p in finals)
        pmf = np.zeros((len(finals), top))
        for i, (a, p) in enumerate(finals):
            pmf[i, a : a + len(p)] = p
        below = np.cumsum(pmf, axis=1) - pmf  # P(F_j < x)
        out = np.empty(len(finals))
        for i in range(len(finals)):
            ties = np.zeros((len(finals), top))  # ties[m, x]: P(every other <= x, m of them = x)
            ties[0] = 1.0
            for j in range(len(finals)):
                if j != i:
                    ties[1:] = ties[1:] * below[j] + ties[:-1] * pmf[j]
                    ties[0] *= below[j]
            share = (ties / np.arange(1, len(finals) + 1)[:, None]).sum(axis=0)
            out[i] = dot(pmf[i], share)
        return out


def _add(acc: np.ndarray, p: np.ndarray, shift: int = 0, w: float = 1.0) -> np.ndarray:
    """``acc + w * p`` shifted right by ``shift`` (growing ``acc`` as needed)."""
    n = shift + len(p)
    if len(acc) < n:
        acc = np.append(acc, np.zeros(n - len(acc)))
    acc[shift:n] += w * p
    return acc


def win_model(
    adv: Advisor, cache_dir: Any = None, *, build_up_to: int = 3 << 30, hint: str = ""
) -> tuple[WinModel | None, str | None]:
    """The :class:`WinModel` of ``adv``'s rule set, from the "ev" table in the solver cache, or
    built when it is missing and at most ``build_up_to`` bytes; else (None, why not, then ``hint``)."""
    rules = adv.rules
    tmax = default_tmax(rules)
    path = table_path(rules, "ev", tmax, cache_dir)
    if not path.exists():
        size = 4 * int(offsets(rules, adv.sol.plan, tmax)[-1])
        if size > build_up_to:
            return None, (
                f"win chances are not shown: {rules.name}'s EV-play table (the 'ev' target table, "
                f"{_size(size)}) is not in the solver cache, and tables above {_size(build_up_to)} "
                f"are not built here{hint}"
            )
    return WinModel(adv, target_table(rules, "ev", tmax, cache_dir, max_bytes=max(build_up_to, 1))), None


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
