"""Exact values of every option of a position: the advisor's numbers and the luck/skill analysis's value functions.

Public API::

    from harness.decisions.positions import Advisor
    adv = Advisor(rules, cache_dir=None)            # the solved table of the rule set (harness.exact.solver)
    st = adv.state({"ones": 3, "twos": 6}, extra=0)  # -> State, validated (one column's sheet)
    pos = adv.position(st, [6, 6, 4, 4, 1], rolls_left=2)  # -> Position, validated (first roll inferred)
    advice = adv.advise(pos)                          # -> Advice: every legal option, best first
    adv.turn_start_value(st)                          # points + expected rest at the start of a turn
    adv.roll_value(pos)                               # value right after a roll (= the best option)
    adv.keep_value(st, keep, rerolls_left_after)      # expectation over the reroll of the other dice
    adv.box_value(st, roll, box, first)               # value of writing the roll in a box
    adv.after_box(st, roll, box, first)               # -> State of the next turn
    rp = position_from_record(record, seat=1, column=1, turn=4, roll=2, advisor=adv)  # a game record's decision
    rp.played(adv.advise(rp.position))                # -> the Option the player chose there

A position is one column's sheet (a :class:`State`: filled boxes, upper subtotal, key-box flag and
the points already on the sheet), the dice in hand, the rerolls left and whether the dice come
from the turn's first roll (servida). The *value* of an option is the points on the sheet plus
the expected rest of the game under optimal play; *regret* is the best value minus the option's.
With rerolls left the options are the keeps (every sub-multiset of the dice; keeping every die
is "stop", worth the best box); with none, the boxes the rules allow now (forced order, joker:
:func:`harness.game.scoring.score_options`, as the engine).

The numbers are the solver bot's own: each state's turn plan comes from the kernels the bot runs
(:func:`harness.exact.kernels.solver.stop_one` and :func:`~harness.exact.kernels.solver.turn_one`, the same
arithmetic in the same order), so an option's value minus the sheet's points is, bit for bit, the
number the bot's softmax draws from at temperature > 0 (a box's plus the roll's extra bonus,
common to every box), and ``options[0]`` of an :class:`Advice` is the option the T=0 bot plays
(its tie rule: :func:`~harness.exact.kernels.solver.keep_arg_one`, :func:`~harness.exact.kernels.solver.choose_boxes`).
Regret is computed on the solver's numbers before the sheet's points are added, so the bot's
option has regret 0 exactly. Turn plans are kept per state in an LRU cache, so analysing many
games computes each state's plan once. A game record's decision is a position through
:meth:`Advisor.state` (the sheet before the turn) and :meth:`Advisor.position` (dice, rerolls
left, first roll): :func:`position_from_record`.

The identities the analysis rests on (tested to 1e-9): ``turn_start_value(s)`` is the sum over
first rolls of P(roll) x ``roll_value``; ``keep_value`` is the sum over the reroll's outcomes of
P x ``roll_value`` after it; ``box_value`` is ``turn_start_value(after_box(...))``. With
``columns`` > 1 each column is its own game. Rule sets with ``saved_rolls`` are refused: the
table does not model rolls carried over, so its numbers would only look exact there.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from harness.exact.kernels import solver as K
from harness.game.dice import counts_of_faces
from harness.util.errors import UserError
from harness.records.record import validate_record
from harness.records.record import GameId, GameRecord
from harness.game.rules import RuleSet
from harness.game.scoring import context, score_options
from harness.exact.solver import Solution, solve
from harness.decisions.scale import TIE  # noqa: F401  (options within it of the best are ties)

#: Per-state turn plans kept by an :class:`Advisor` (scandinavian: about 15 KB each).
PLAN_CACHE = 2048


@dataclass(frozen=True)
class State:
    """One column at a point of the game.

    filled: bit mask of the filled boxes (sheet order); upper: upper subtotal (uncapped);
    flag: the key box holds a non-zero score; points: on the sheet so far (boxes, the upper bonus
    once earned, extra bonuses).
    """

    filled: int
    upper: int
    flag: bool
    points: int


@dataclass(frozen=True)
class Position:
    """A decision: ``state``, the dice in hand (``roll``, an index into ``rules.dice``), the
    rerolls left (0: the box decision) and whether the dice come from the turn's first roll."""

    state: State
    roll: int
    rolls_left: int
    first: bool


@dataclass(frozen=True)
class Option:
    """One legal option: a keep (faces kept, highest first; every die = ``stop``) or a box.

    value: points on the sheet + expected rest under optimal play; regret: best value - value
    (>= 0); best: within :data:`TIE` of the best; index: the keep index (``rules.dice``) or box index.
    """

    keep: tuple[int, ...] | None
    box: str | None
    index: int
    value: float
    regret: float
    best: bool
    stop: bool = False

    def to_json(self) -> dict[str, Any]:
        head: dict[str, Any] = {"keep": list(self.keep)} if self.keep is not None else {"box": self.box}
        if self.keep is not None:
            head["stop"] = self.stop
        return head | {"value": self.value, "regret": self.regret, "best": self.best}


@dataclass(frozen=True)
class Advice:
    """Every option of a position, best first; ``options[0]`` is what the T=0 solver bot plays."""

    position: Position
    decision: str  # "keep" or "box"
    options: tuple[Option, ...]

    @property
    def value(self) -> float:
        """The position's value (its best option's)."""
        return self.options[0].value


class _Plan:
    """One state's turn plan: stop values (R,) on the first and later rolls, the stage values
    Es (rr+1, K) (Es[j, k]: keep k with j rerolls left) and Ms (rr+1, n_small) of the tie rule."""

    __slots__ = ("stop_f", "stop_l", "Es", "Ms")

    def __init__(self, stop_f: np.ndarray, stop_l: np.ndarray, Es: np.ndarray, Ms: np.ndarray) -> None:
        self.stop_f, self.stop_l, self.Es, self.Ms = stop_f, stop_l, Es, Ms


class Advisor:
    """Exact option values of one rule set's positions (one column), from its solved table.

    ``cache_dir`` is the solver's (:func:`harness.exact.solver.solve`); the turn plans of the last
    ``plans`` states met are kept (least recently used dropped first). ``sol`` is the solution,
    ``ctx`` the rule set's scoring context (:func:`harness.game.scoring.context`).
    """

    def __init__(
        self,
        rules: RuleSet,
        cache_dir: str | os.PathLike[str] | None = None,
        *,
        plans: int = PLAN_CACHE,
        solution: Solution | None = None,
    ) -> None:
        if rules.saved_rolls:
            raise UserError(
                f"rule set {rules.name}: saved_rolls is on, and the solver's table does not model "
                "rolls carried over between turns, so it has no exact values for these positions"
            )
        self.rules = rules
        self.sol = solution if solution is not None else solve(rules, cache_dir)
        self.ctx = context(rules)
        self._lay = self.sol.plan.layout
        self._dk = self.sol.plan.dice
        self._rr = rules.rolls_per_turn - 1
        self._max_plans = int(plans)
        self._plans: OrderedDict[int, _Plan] = OrderedDict()

    # -- states and positions -------------------------------------------------------------------

    def state(self, scores: Mapping[str, int], extra: int = 0) -> State:
        """The :class:`State` of a sheet given as {box name: score} of its filled boxes, plus the
        points of extra bonuses already earned. Every score must be one the box can take."""
        rules, lay = self.rules, self._lay
        filled, upper, total = 0, 0, 0
        for name, raw in scores.items():
            b = rules.box_index(name)
            try:
                s = int(raw)
            except (TypeError, ValueError):
                raise UserError(f"box {name}: the score must be a whole number, got {raw!r}") from None
            can = lay.box_vals[b, : lay.box_nvals[b]].tolist()
            if s not in can:
                raise UserError(f"box {name} cannot score {s} in {rules.name} (possible: {_span(can)})")
            filled |= 1 << b
            total += s
            upper += s if rules.boxes[b].is_upper else 0
        key = rules.key_box
        flag = key >= 0 and (filled >> key) & 1 == 1 and int(scores[rules.box_names[key]]) > 0
        for b, box in enumerate(rules.boxes):
            if box.requires_key and (filled >> b) & 1 and int(scores[box.name]) > 0 and not flag:
                raise UserError(
                    f"box {box.name} scores only once {rules.box_names[key]} holds a score, "
                    f"but {rules.box_names[key]} is {'0' if (filled >> key) & 1 else 'open'}"
                )
        if rules.forced and filled & (filled + 1):
            first_open = next(b for b in range(rules.n_boxes) if not (filled >> b) & 1)
            raise UserError(
                f"{rules.name} fills boxes strictly top to bottom, but {rules.box_names[first_open]} "
                "is still open above a filled box"
            )
        extra = int(extra)
        if extra:
            unit = int(rules.extra_yatzy_bonus)
            if not unit:
                raise UserError(f"rule set {rules.name} has no extra yatzy bonus, got extra={extra}")
            most = unit * max(bin(filled).count("1") - 1, 0) if flag else 0
            if extra < 0 or extra % unit or extra > most:
                raise UserError(
                    f"extra={extra}: extra bonuses come in steps of {unit}, one a turn after "
                    f"{rules.box_names[key]} holds a score (at most {most} on this sheet)"
                )
        bonus = rules.bonus_value if upper >= rules.threshold else 0
        st = State(filled, upper, bool(flag), total + bonus + extra)
        self._index(st)  # every layout check
        return st

    def position(self, state: State, dice: Sequence[int] | int, rolls_left: int, first: bool | None = None) -> Position:
        """A validated :class:`Position`: ``dice`` are faces (or a roll index); ``first`` defaults to
        "this is the turn's first roll" (rerolls left = the rule set's all), which is the only choice
        with rerolls left; at the box decision it says whether the turn stopped on its first roll."""
        rules, rr = self.rules, self._rr
        if state.filled == (1 << rules.n_boxes) - 1:
            raise UserError("every box is filled: the column is over, there is no decision left")
        roll = self._roll_index(dice)
        left = int(rolls_left)
        if not 0 <= left <= rr:
            raise UserError(
                f"rolls left must be 0..{rr} in {rules.name} ({rules.rolls_per_turn} rolls a turn), got {rolls_left}"
            )
        if first is None:
            first = left == rr
        elif left > 0 and bool(first) != (left == rr):
            if first:
                raise UserError(
                    f"with {left} of {rr} rerolls left the dice come from a reroll: "
                    f"only the turn's first roll has all {rr} left"
                )
            raise UserError(f"with all {rr} rerolls left the dice come from the turn's first roll")
        elif rr == 0 and not first:
            raise UserError(f"{rules.name} has one roll a turn: the dice always come from the first roll")
        return Position(state, roll, left, bool(first))

    def after_box(self, state: State, roll: Sequence[int] | int, box: int | str, first: bool) -> State:
        """The state after writing ``roll`` in ``box`` (which must be allowed): the next turn's start."""
        row, b, extra = self._box_score(state, self._roll_index(roll), box, first)
        rules, s = self.rules, int(row[b])
        upper = state.upper + (s if rules.boxes[b].is_upper else 0)
        flag = (s > 0) if b == rules.key_box else state.flag
        crossed = rules.bonus_value if (state.upper < rules.threshold <= upper) else 0
        return State(state.filled | (1 << b), upper, bool(flag), state.points + s + extra + crossed)

    # -- values ---------------------------------------------------------------------------------

    def turn_start_value(self, state: State) -> float:
        """Points on the sheet + the expected rest of the game at the start of a turn (the table's
        value; a full sheet: the final score)."""
        return state.points + float(self.sol.values[self._index(state)])

    def roll_value(self, pos: Position) -> float:
        """The value of a position (right after a roll): its best option's value."""
        return pos.state.points + self._best_future(pos)

    def keep_value(self, state: State, keep: Sequence[int] | int, rerolls_left_after: int) -> float:
        """Expected value of keeping ``keep`` (faces, or a keep index) and rerolling the other dice,
        with ``rerolls_left_after`` rerolls left once they land (keeping every die rerolls none:
        the same dice with one reroll fewer, not "stop")."""
        after = int(rerolls_left_after)
        if not 0 <= after < self._rr:
            raise ValueError(f"rerolls left after a reroll must be 0..{self._rr - 1}, got {rerolls_left_after}")
        return state.points + float(self._plan(state).Es[after + 1, self._keep_index(keep)])

    def box_value(self, state: State, roll: Sequence[int] | int, box: int | str, first: bool) -> float:
        """The value of writing ``roll`` (faces or index) in ``box`` (name or index; allowed now)."""
        row, b, extra = self._box_score(state, self._roll_index(roll), box, first)
        return state.points + self._box_future(state, row, b, extra)

    # -- every option ---------------------------------------------------------------------------

    def advise(self, pos: Position) -> Advice:
        """Every legal option of ``pos`` with its value and regret, best first (the T=0 bot's
        option first among ties, then larger keeps / sheet order)."""
        if pos.rolls_left > 0:
            return self._keeps(pos)
        return self._boxes(pos)

    def _keeps(self, pos: Position) -> Advice:
        d, dk = self.rules.dice, self._dk
        plan = self._plan(pos.state)
        j, r = pos.rolls_left, pos.roll
        st = plan.stop_f if pos.first else plan.stop_l
        subs = d.sub_keep[d.sub_ptr[r] : d.sub_ptr[r + 1]]
        fut = np.append(plan.Es[j, subs[:-1]], st[r])  # the last sub-keep is the whole roll: stop
        choice = int(K.keep_arg_one(dk, plan.Es, plan.Ms, np.int64(j), st, np.int64(r)))
        top = float(fut.max())
        opts = []
        for k, f in zip(subs.tolist(), fut.tolist()):
            faces = tuple(int(x) for x in np.repeat(np.arange(6, 0, -1), d.keep_counts[k][::-1]))
            opts.append(Option(faces, None, k, pos.state.points + f, top - f, top - f <= TIE, k == subs[-1]))
        opts.sort(key=lambda o: (o.regret, o.index != choice, -len(o.keep), [-x for x in o.keep]))
        return Advice(pos, "keep", tuple(opts))

    def _boxes(self, pos: Position) -> Advice:
        st, r = pos.state, pos.roll
        row, allowed, extra = self._scores(st, r, pos.first)
        which = [b for b in range(self.rules.n_boxes) if (allowed >> b) & 1]
        fut = [self._box_future(st, row, b, extra) for b in which]
        choice = self._bot_box(st, row, allowed)
        top = max(fut)
        names = self.rules.box_names
        opts = [Option(None, names[b], b, st.points + f, top - f, top - f <= TIE) for b, f in zip(which, fut)]
        opts.sort(key=lambda o: (o.regret, o.index != choice, o.index))
        return Advice(pos, "box", tuple(opts))

    # -- internals ------------------------------------------------------------------------------

    def _index(self, state: State) -> int:
        try:
            return self.sol.index(state.filled, state.upper, state.flag)
        except ValueError:
            raise UserError(
                f"no such sheet in {self.rules.name}: filled={state.filled:#x} upper={state.upper} "
                f"flag={state.flag} cannot be reached"
            ) from None

    def _roll_index(self, dice: Sequence[int] | int) -> int:
        d = self.rules.dice
        if isinstance(dice, (int, np.integer)):
            if not 0 <= int(dice) < d.n_rolls:
                raise ValueError(f"roll index must be 0..{d.n_rolls - 1}, got {dice}")
            return int(dice)
        faces = list(dice)
        if len(faces) != d.n:
            raise UserError(f"{self.rules.name} plays {d.n} dice, got {len(faces)}: {_faces(faces)}")
        if any(not isinstance(f, (int, np.integer)) or not 1 <= f <= 6 for f in faces):
            raise UserError(f"dice must be whole numbers 1..6, got {_faces(faces)}")
        return int(d.roll_index_of_faces(np.array(faces)))

    def _keep_index(self, keep: Sequence[int] | int) -> int:
        d = self.rules.dice
        if isinstance(keep, (int, np.integer)):
            if not 0 <= int(keep) < d.n_keeps:
                raise ValueError(f"keep index must be 0..{d.n_keeps - 1}, got {keep}")
            return int(keep)
        faces = list(keep)
        if len(faces) > d.n or any(not isinstance(f, (int, np.integer)) or not 1 <= f <= 6 for f in faces):
            raise ValueError(f"a keep is at most {d.n} faces 1..6, got {faces}")
        padded = np.zeros(d.n, dtype=np.int8)
        padded[: len(faces)] = faces
        return int(d.keep_index(counts_of_faces(padded)))

    def _scores(self, state: State, r: int, first: bool) -> tuple[np.ndarray, int, int]:
        """:func:`harness.game.scoring.score_options` of roll r: (scores (NB,) int16, allowed mask, extra)."""
        row = np.empty(self.rules.n_boxes, dtype=np.int16)
        allowed, extra = score_options(
            self.ctx, np.int64(r), bool(first), bool(state.flag), np.int64(state.filled), row
        )
        return row, int(allowed), int(extra)

    def _box_score(self, state: State, r: int, box: int | str, first: bool) -> tuple[np.ndarray, int, int]:
        """(scores of the roll, box index, the roll's extra bonus); the box must be allowed now."""
        rules = self.rules
        b = rules.box_index(box) if isinstance(box, str) else int(box)
        row, allowed, extra = self._scores(state, r, first)
        if not 0 <= b < rules.n_boxes or not (allowed >> b) & 1:
            ok = [rules.box_names[i] for i in range(rules.n_boxes) if (allowed >> i) & 1]
            raise UserError(f"box {box} may not be filled now (allowed: {', '.join(ok)})")
        return row, b, extra

    def _box_future(self, state: State, row: np.ndarray, b: int, extra: int) -> float:
        """score + bonus crossed + V(next) + extra: the box's value computed as
        :func:`harness.exact.kernels.solver.choose_boxes` computes it, the extra (common to every box)
        added last as the stop values add it."""
        lay, V = self._lay, self.sol.values
        s = int(row[b])
        nf = (s > 0) if b == lay.key_box else state.flag
        u = min(state.upper, lay.threshold)
        m2 = state.filled | (1 << b)
        b2 = int(lay.base[m2 * lay.n_flags + int(nf)])
        if lay.is_upper[b]:
            u2 = min(u + s, lay.threshold)
            add = s + lay.bonus if (u < lay.threshold <= u2) else s
            val = add + V[b2 + lay.slot[lay.umask_of[m2], u2]]
        else:
            val = s + V[b2 + lay.slot[lay.umask_of[state.filled], u]]
        return float(val + extra)

    def _bot_box(self, state: State, row: np.ndarray, allowed: int) -> int:
        """The T=0 solver bot's box (:func:`harness.exact.kernels.solver.choose_boxes` on a batch of one)."""
        one = lambda v: np.array([v], dtype=np.int64)  # noqa: E731
        out = np.empty(1, dtype=np.int64)
        K.choose_boxes(
            self._lay,
            self.sol.values,
            one(state.filled),
            np.array([state.flag]),
            one(state.upper),
            row[None, :].copy(),
            one(allowed),
            0.0,
            0.0,
            np.zeros((1, 0)),
            out,
        )
        return int(out[0])

    def _best_future(self, pos: Position) -> float:
        plan = self._plan(pos.state)
        r, j = pos.roll, pos.rolls_left
        st = plan.stop_f if pos.first else plan.stop_l
        if j == 0:
            return float(st[r])
        d = self.rules.dice
        subs = d.sub_keep[d.sub_ptr[r] : d.sub_ptr[r + 1] - 1]
        return float(max(st[r], plan.Es[j, subs].max()))

    def keep_index(self, keep: Sequence[int] | int) -> int:
        """The index in ``rules.dice`` of a keep given as faces (or already an index)."""
        return self._keep_index(keep)

    def plan(self, state: State) -> _Plan:
        """The state's turn plan (``stop_f``, ``stop_l``, ``Es``, ``Ms``: what the T=0 bot's keep,
        :func:`harness.exact.kernels.solver.keep_arg_one`, decides from), from the LRU cache."""
        return self._plan(state)

    def _plan(self, state: State) -> _Plan:
        """The state's turn plan, as the bot's :func:`harness.exact.kernels.solver.state_plan` makes it."""
        idx = self._index(state)
        hit = self._plans.get(idx)
        if hit is not None:
            self._plans.move_to_end(idx)
            return hit
        if state.filled == (1 << self.rules.n_boxes) - 1:
            raise UserError("every box is filled: the column is over, there is no decision left")
        ctx, lay, dk, V = self.ctx, self._lay, self._dk, self.sol.values
        n_rolls, nbx, rr = ctx.table.shape[0], lay.n_boxes, self._rr
        mask, flag = np.int64(state.filled), np.int64(int(state.flag))
        u = np.int64(min(state.upper, lay.threshold))
        wv, nxt = np.empty(max(lay.n_wrows, 1)), np.empty(2 * nbx)

        def stops(first: bool) -> np.ndarray:
            rows = np.empty((n_rolls, nbx), dtype=np.int16)
            allowed = np.empty(n_rolls, dtype=np.int64)
            extras = np.empty(n_rolls, dtype=np.int16)
            K.score_rows(ctx, mask, flag, np.bool_(first), rows, allowed, extras)
            out = np.empty(n_rolls)
            K.stop_one(lay, V, mask, flag, u, rows, allowed, extras, wv, nxt, out)
            return out

        stop_l = stops(False)
        stop_f = stops(True) if lay.servida else stop_l
        E, M = np.empty(dk.add.shape[0]), np.empty(dk.n_small)
        Es, Ms = np.zeros((rr + 1, dk.add.shape[0])), np.zeros((rr + 1, dk.n_small))
        K.turn_one(dk, stop_f, stop_l, E, M, Es, Ms)
        plan = _Plan(stop_f, stop_l, Es, Ms)
        self._plans[idx] = plan
        if len(self._plans) > self._max_plans:
            self._plans.popitem(last=False)
        return plan


# ---------------------------------------------------------------------------------------------
# a decision of a game record


@dataclass(frozen=True)
class RecordPosition:
    """A decision of a recorded game: the position just after roll ``roll`` (from 1) of one seat's
    turn, the column's sheet before the turn (``scores``: {box: score} of the filled boxes;
    ``extra``: the extra-bonus points on it), the dice, and what the player did there: ``keep``,
    the dice kept for the next roll, or None when the turn stopped here and ``box`` was written."""

    game: GameId
    seat: int
    label: str
    column: int
    turn: int
    roll: int
    position: Position
    scores: Mapping[str, int]
    extra: int
    dice: tuple[int, ...]
    keep: tuple[int, ...] | None
    box: str

    @property
    def box_position(self) -> Position:
        """The box decision that followed this roll when the turn stopped here (0 rerolls left)."""
        return Position(self.position.state, self.position.roll, 0, self.position.first)

    def played(self, advice: Advice) -> Option:
        """The option of ``advice`` (this position's, or :attr:`box_position`'s) the player chose:
        the keep, ``stop`` when the turn stopped with rerolls left, or the box."""
        if advice.decision == "box":
            hit = [o for o in advice.options if o.box == self.box]
        elif self.keep is None:
            hit = [o for o in advice.options if o.stop]
        else:
            kept = tuple(sorted(self.keep, reverse=True))
            hit = [o for o in advice.options if o.keep == kept and not o.stop]
        if len(hit) != 1:
            raise ValueError("this advice is not of this record's position")
        return hit[0]


def position_from_record(
    record: GameRecord, seat: int, column: int, turn: int, roll: int, advisor: Advisor | None = None
) -> RecordPosition:
    """The decision of ``record`` (a :class:`harness.records.notation.GameRecord`) just after roll ``roll``
    of ``seat``'s turn ``turn`` in ``column`` (seat from 0, the others from 1, as records count).

    The sheet before the turn is rebuilt from the seat's earlier turns in that column (each column
    is its own game); the rerolls left follow from the rules and ``roll``. ``advisor`` is one of
    the record's rule set (default: a new one, which loads the solved table); the record is
    validated against it first. :class:`UserError` (one line) for a seat, column, turn or roll
    not in the record, and for rule sets with ``saved_rolls`` (as :class:`Advisor`).
    """
    adv = advisor if advisor is not None else Advisor(record.load_rules())
    rules = adv.rules
    validate_record(record, rules)
    game = f"game {record.game}"
    seats = record.seats
    if not 0 <= seat < len(seats):
        names = ", ".join(s.label for s in seats)
        raise UserError(f"seat {seat} is not in {game}: it has seats 0..{len(seats) - 1} ({names})")
    label = seats[seat].label
    if not 1 <= column <= rules.columns:
        raise UserError(
            f"column {column} is not in {game}: {rules.name} plays {rules.columns} column{'s' * (rules.columns != 1)}"
        )
    mine = [t for t in record.turns if t.seat == seat and t.column == column]
    at = f"{game}, seat {seat} ({label}), column {column}"
    found = [t for t in mine if t.turn == turn]
    if not found:
        have = f"turns 1..{len(mine)}" if mine else "no turn"
        raise UserError(f"turn {turn} is not in {at}: the record has {have} there")
    t = found[0]
    if not 1 <= roll <= len(t.rolls):
        raise UserError(
            f"roll {roll} is not in {at} turn {turn}: the turn has {len(t.rolls)} roll{'s' * (len(t.rolls) != 1)}"
        )
    state = adv.state({})
    scores: dict[str, int] = {}
    for before in mine:
        if before.turn >= turn:
            break
        state = adv.after_box(state, before.rolls[-1], before.box, len(before.rolls) == 1)
        scores[before.box] = before.score
    bonus = rules.bonus_value if state.upper >= rules.threshold else 0
    extra = state.points - sum(scores.values()) - bonus
    rr = rules.rolls_per_turn - 1
    pos = adv.position(state, t.rolls[roll - 1], rr - (roll - 1), roll == 1)
    keep = t.keeps[roll - 1] if roll < len(t.rolls) else None
    return RecordPosition(
        record.game, seat, label, column, turn, roll, pos, scores, extra, tuple(t.rolls[roll - 1]), keep, t.box
    )


def _faces(faces: Sequence[Any]) -> str:
    return " ".join(str(f) for f in faces) or "none"


def _span(values: list[int]) -> str:
    shown = values if len(values) <= 12 else [*values[:10], "...", values[-1]]
    return ", ".join(map(str, shown))
