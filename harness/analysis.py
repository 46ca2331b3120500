"""Luck and skill, exact: every roll's luck and every decision's regret of a recorded game.

For one seat and one column of a game, with V the optimal values of :class:`harness.positions.Advisor`
(points on the sheet + the expected rest under optimal play)::

    final = V(start) + sum of luck - sum of regret        (exactly, up to float rounding)

* Before a turn's first roll the position is worth ``turn_start_value``; the roll moves it to the
  value of the dice in hand (``roll_value``): that difference is the roll's **luck**.
* A keep is worth ``keep_value`` (its expectation over the reroll); the best option of the
  position is worth ``roll_value``: the difference is the keep's **regret**. The reroll's luck is
  the value of the new dice minus that expectation.
* Stopping with rerolls left is a keep decision too (worth the best box), then the box decision:
  its regret is the best box's value minus the chosen box's; the box's value is the next turn's
  ``turn_start_value``, and a full sheet's is the column's final points.

Each luck term has mean zero given everything before it, whatever the player's policy (it is a
value minus its own expectation over the dice), so ``final - luck`` is an unbiased estimate of a
player's expected score with a much smaller variance; for the optimal bot every regret is 0 and
``final - luck`` is V(start) exactly. Several columns add up their own V(start). Rule sets with
``saved_rolls`` are refused (the table does not value banked rolls; :class:`Advisor` says so).

Public API::

    from harness.analysis import analyse_record, Analyser
    an = Analyser(rules)                            # one advisor (solved table, plan cache) per rule set
    seats = an.record(record)                       # -> [SeatAnalysis] for a harness.record.GameRecord
    s.start, s.luck, s.regret, s.final, s.decisions, s.errors, s.worst   # per seat
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from harness.errors import UserError
from harness.positions import TIE, Advisor, Position
from harness.record import GameRecord, Turn
from harness.rules import RuleSet

#: Decisions whose regret is above this are errors (the tie tolerance of the advisor).
ERROR = TIE


@dataclass(frozen=True)
class Decision:
    """One decision of a seat: where (column, turn from 1, roll from 1), what kind ("keep" or
    "box"), what was chosen and what was best (faces kept, ``"stop"``, or a box name), their
    values and the regret (best - chosen, >= 0)."""

    column: int
    turn: int
    roll: int
    kind: str
    chosen: Any
    best: Any
    value: float
    best_value: float
    regret: float
    upper: bool = False  # a box decision that wrote an upper box

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "turn": self.turn, "roll": self.roll, "kind": self.kind,
                "chosen": self.chosen, "best": self.best, "value": self.value, "best_value": self.best_value,
                "regret": self.regret}


@dataclass(frozen=True)
class SeatAnalysis:
    """One seat of one game: ``start`` (V at the start, columns added), ``luck`` and ``regret``
    (sums), ``final`` (points scored), ``decisions`` and ``errors`` (regret > :data:`ERROR`), the
    regret split by kind (``keep_regret``, ``box_regret``, of which ``upper_regret`` on upper
    boxes) and every decision when asked (``details``)."""

    seat: int
    label: str
    start: float
    luck: float
    regret: float
    final: int
    decisions: int
    errors: int
    keep_decisions: int
    box_decisions: int
    keep_regret: float
    box_regret: float
    upper_regret: float
    details: tuple[Decision, ...] = field(default=())

    @property
    def adjusted(self) -> float:
        """``final - luck`` (= ``start - regret``): the luck-adjusted score."""
        return self.final - self.luck

    @property
    def residual(self) -> float:
        """``final - (start + luck - regret)``: zero up to float rounding (the identity's check)."""
        return self.final - (self.start + self.luck - self.regret)


def _faces_key(faces: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted((int(f) for f in faces), reverse=True))


class Analyser:
    """Analyses the games of one rule set (one :class:`Advisor`, so turn plans are shared)."""

    def __init__(self, rules: RuleSet, cache_dir: Any = None, advisor: Advisor | None = None) -> None:
        self.rules = rules
        self.adv = advisor or Advisor(rules, cache_dir)

    def record(self, record: GameRecord, details: bool = False) -> list[SeatAnalysis]:
        """Every seat of a (valid, complete) game record; ``details`` keeps each decision."""
        out = []
        labels = [s.label for s in record.seats]
        for seat in range(len(record.seats)):
            turns = [t for t in record.turns if t.seat == seat]
            out.append(self.seat(turns, seat, labels[seat], details))
        return out

    def seat(self, turns: Sequence[Turn], seat: int = 0, label: str = "", details: bool = False) -> SeatAnalysis:
        """One seat's turns (every column, in play order)."""
        adv, rules = self.adv, self.rules
        rr = rules.rolls_per_turn - 1
        start = luck = regret = 0.0
        final = 0
        n_keep = n_box = errors = 0
        keep_regret = box_regret = upper_regret = 0.0
        kept: list[Decision] = []
        columns = sorted({t.column for t in turns})
        for col in columns:
            state = adv.state({})
            v = adv.turn_start_value(state)
            start += v
            for t in (x for x in turns if x.column == col):
                if len(t.rolls) > rr + 1:
                    raise UserError(f"seat {seat}, column {col} turn {t.turn}: {len(t.rolls)} rolls, more than "
                                    f"{rules.name}'s {rr + 1} (saved rolls are not analysed)")
                for i, dice in enumerate(t.rolls):
                    left = rr - i
                    first = i == 0
                    pos = adv.position(state, dice, left, first)
                    after = adv.roll_value(pos)
                    luck += after - v
                    if i < len(t.rolls) - 1:  # a keep, then the reroll
                        chosen = adv.keep_value(state, t.keeps[i], left - 1)
                        d = self._keep(pos, col, t, i, chosen, after, t.keeps[i]) if details else None
                        reg = after - chosen
                        v = chosen
                        n_keep += 1
                        keep_regret += reg
                    else:
                        if left > 0:  # stopped with rerolls left: a keep ("stop") decision first
                            stop = adv.roll_value(Position(state, pos.roll, 0, first))
                            reg = after - stop
                            if details:
                                kept.append(self._keep(pos, col, t, i, stop, after, "stop"))
                            regret += reg
                            errors += reg > ERROR
                            n_keep += 1
                            keep_regret += reg
                            after = stop
                        chosen = adv.box_value(state, pos.roll, t.box, first)
                        reg = after - chosen
                        b = rules.box_index(t.box)
                        is_upper = rules.boxes[b].is_upper
                        d = None
                        if details:
                            best = adv.advise(Position(state, pos.roll, 0, first)).options[0].box
                            d = Decision(col, t.turn, i + 1, "box", t.box, best, chosen, after, reg, is_upper)
                        n_box += 1
                        box_regret += reg
                        upper_regret += reg if is_upper else 0.0
                        state = adv.after_box(state, pos.roll, t.box, first)
                        v = adv.turn_start_value(state)  # = chosen (box_value is the next turn's start)
                    regret += reg
                    errors += reg > ERROR
                    if d is not None:
                        kept.append(d)
            final += state.points
        return SeatAnalysis(seat, label, start, luck, regret, final, n_keep + n_box, int(errors), n_keep, n_box,
                            keep_regret, box_regret, upper_regret, tuple(kept))

    def _keep(self, pos: Position, col: int, t: Turn, i: int, chosen: float, best_value: float,
              what: Any) -> Decision:
        best = self.adv.advise(pos).options[0]
        shown = "stop" if what == "stop" else list(_faces_key(what))
        return Decision(col, t.turn, i + 1, "keep", shown, "stop" if best.stop else list(best.keep or ()),
                        chosen, best_value, best_value - chosen)


def analyse_record(record: GameRecord, details: bool = False, cache_dir: Any = None) -> list[SeatAnalysis]:
    """:meth:`Analyser.record` with the record's own rule set."""
    return Analyser(record.load_rules(), cache_dir).record(record, details)


def turns_of_recording(rec: Any, rules: RuleSet, game: int, seat: int) -> list[Turn]:
    """The turns of row ``game`` (an index into the batch) and ``seat`` of an engine
    :class:`~harness.engine.Recording`, as record :class:`Turn` objects (columns and turns from 1)."""
    d, nb = rules.dice, rules.n_boxes
    out = []
    faces = d.roll_faces
    counts = d.keep_counts
    names = rules.box_names
    for t in range(rec.rolls.shape[2]):
        rolls = [r for r in rec.rolls[game, seat, t].tolist() if r >= 0]
        keeps = [k for k in rec.keeps[game, seat, t].tolist()[:len(rolls) - 1]]
        out.append(Turn(seat, t // nb + 1, t % nb + 1,
                        tuple(tuple(int(x) for x in faces[r]) for r in rolls),
                        tuple(tuple(int(f) for f in range(1, 7) for _ in range(int(counts[k][f - 1]))) for k in keeps),
                        names[int(rec.boxes[game, seat, t])], int(rec.scores[game, seat, t]),
                        int(rec.extras[game, seat, t]) or None))
    return out
