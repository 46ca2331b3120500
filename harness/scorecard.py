"""A scorecard that keeps the dice written in each box; every total is derived from them.

Because the dice are kept (not the points), a card can be re-scored under changed settings, as the
site does when a setting changes mid-match (seed 003). Scoring goes through
:func:`harness.scoring.score_options`, so a card and the engine can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from harness.errors import UserError
from harness.rules import RuleSet
from harness.scoring import context, score_options


@dataclass(frozen=True)
class Entry:
    """Dice written in one box, in the order the boxes were filled."""

    box: str
    dice: tuple[int, ...]
    first_roll: bool = False


@dataclass(frozen=True)
class Totals:
    """Derived figures of one card: per-box points and the sums of the sheet."""

    boxes: Mapping[str, int | None]
    upper: int
    bonus: int
    lower: int
    extra: int
    total: int
    complete: bool


@dataclass
class Scorecard:
    """One column of one player: the entries written so far (box, dice, made on the first roll)."""

    rules: RuleSet
    entries: list[Entry] = field(default_factory=list)

    def write(self, box: str, dice: Sequence[int], first_roll: bool = False) -> int:
        """Write ``dice`` into ``box`` (it must be open and allowed now); returns the points it scored."""
        self.rules.box_index(box)
        if any(e.box == box for e in self.entries):
            raise UserError(f"box {box!r} is already filled")
        entry = Entry(box, tuple(int(x) for x in dice), bool(first_roll))
        _check_dice(self.rules, entry.dice)
        self.entries.append(entry)
        try:
            return self.totals().boxes[box]  # type: ignore[return-value]
        except UserError:
            self.entries.pop()
            raise

    def totals(self) -> Totals:
        """Re-derive every figure from the entries, in the order they were written."""
        rules = self.rules
        ctx = context(rules)
        out = np.empty(rules.n_boxes, dtype=np.int16)
        points: dict[str, int | None] = {name: None for name in rules.box_names}
        filled, flag, extra = 0, False, 0
        for e in self.entries:
            b = rules.box_index(e.box)
            roll = int(rules.dice.roll_index_of_faces(np.array(e.dice)))
            allowed, ext = score_options(ctx, roll, e.first_roll, flag, filled, out)
            if not (allowed >> b) & 1:
                raise UserError(f"box {e.box!r} may not take {list(e.dice)} now (filled boxes or the joker rule)")
            points[e.box] = int(out[b])
            extra += int(ext)
            filled |= 1 << b
            if b == rules.key_box:
                flag = out[b] > 0
        upper = sum(v or 0 for b, v in zip(rules.boxes, points.values()) if b.is_upper)
        lower = sum(v or 0 for b, v in zip(rules.boxes, points.values()) if not b.is_upper)
        bonus = rules.bonus_value if upper >= rules.threshold else 0
        return Totals(points, upper, bonus, lower, extra, upper + bonus + lower + extra,
                      all(v is not None for v in points.values()))

    def rescore(self, rules: RuleSet) -> Scorecard:
        """The same dice on a card under other rules or settings (box names must exist there)."""
        card = Scorecard(rules, list(self.entries))
        card.totals()
        return card


def _check_dice(rules: RuleSet, faces: tuple[int, ...]) -> None:
    if len(faces) != rules.n_dice or any(not 1 <= f <= 6 for f in faces):
        raise UserError(f"need {rules.n_dice} dice with faces 1..6, got {list(faces)}")


@dataclass(frozen=True)
class Standing:
    """A player's place in a match: rank 1 is the winner; equal totals share a rank."""

    player: str
    score: int
    columns: tuple[int, ...]
    rank: int


def standings(rules: RuleSet, cards: Mapping[str, Sequence[Scorecard]]) -> list[Standing]:
    """Rank players by combined total (``add_columns``) or by their best column, ties shared."""
    rows = []
    for player, cols in cards.items():
        totals = tuple(c.totals().total for c in cols)
        rows.append((player, sum(totals) if rules.add_columns else max(totals), totals))
    rows.sort(key=lambda r: -r[1])
    out = []
    for player, score, totals in rows:
        rank = 1 + sum(1 for _, s, _ in rows if s > score)
        out.append(Standing(player, score, totals, rank))
    return out
