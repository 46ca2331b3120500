"""The rating scale and the costliest decisions: the names the analysis gives, with no kernels.

Shared by ``analyse``, the run report's luck section and the levels: a regret per decision named by
its :data:`SCALE` band, a decision that gave points away (regret above :data:`ERROR`) described as a
:class:`Worst`. :mod:`harness.decisions.analysis` computes the regrets (its kernels load numba);
this module only names them, so a report or a levels file reads it without loading the analysis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from harness.records.notation import GameId, Turn

#: Options whose value is within this of the best are ties (marked ``best``; the advisor's
#: :data:`harness.decisions.positions.TIE`).
TIE = 1e-9
#: Decisions whose regret is above this are errors (the tie tolerance of the advisor).
ERROR = TIE


@dataclass(frozen=True)
class Band:
    """A named band of the rating scale: mean regret per decision below ``below`` points."""

    name: str
    below: float
    example: str


#: The rating scale (mean regret per decision, points), best first; the last band is open.
SCALE: tuple[Band, ...] = (
    Band("perfect", 0.001, "solver"),
    Band("expert", 0.1, "solver:temperature=0.25"),
    Band("strong", 0.4, "solver:temperature=0.5, bonus"),
    Band("intermediate", 1.0, "solver:temperature=1, solver:blunder=0.1"),
    Band("casual", 2.0, "greedy, solver:temperature=2"),
    Band("beginner", 4.0, "(no built-in bot: between greedy and random play)"),
    Band("random", math.inf, "random, timeout"),
)


def rating(regret_per_decision: float) -> str:
    """The :data:`SCALE` band holding ``regret_per_decision`` (points)."""
    for b in SCALE:
        if regret_per_decision < b.below:
            return b.name
    return SCALE[-1].name


class Rated:
    """A mixin for a tally of ``regret`` over ``decisions`` (a player's, a seat's): the regret per
    decision and its :data:`SCALE` band."""

    regret: float
    decisions: int

    @property
    def regret_per_decision(self) -> float:
        return self.regret / max(1, self.decisions)

    @property
    def rating(self) -> str:
        return rating(self.regret_per_decision)


def keep_text(x: Any) -> str:
    if x == "stop":
        return "stop"
    if isinstance(x, (list, tuple)):
        return "keep " + (" ".join(map(str, sorted(x))) or "nothing")  # sorted as the dice are shown
    return f"-> {x}"


@dataclass(frozen=True)
class Worst:
    """One costly decision: where (game id, lineup of a run or None, seat, column, turn, roll, all
    from 1 but the seat), the dice in hand, what was played and what was best, and the cost."""

    game: GameId
    lineup: int | None
    seat: int
    column: int
    turn: int
    roll: int
    dice: tuple[int, ...]
    kind: str
    played: Any
    best: Any
    regret: float

    def text(self) -> str:
        """``game 3 seat 1 column 1 turn 5 roll 1: 1 4 4 6 6 keep 6 6, best keep 4 4 6 6 (-1.51)``."""
        lu = f"lineup {self.lineup} " if self.lineup is not None else ""
        return (
            f"{lu}game {self.game} seat {self.seat} column {self.column} turn {self.turn} roll {self.roll}: "
            f"{' '.join(map(str, self.dice))} {keep_text(self.played)}, best {keep_text(self.best)} "
            f"(-{self.regret:.2f})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "lineup": self.lineup,
            "seat": self.seat,
            "column": self.column,
            "turn": self.turn,
            "roll": self.roll,
            "dice": list(self.dice),
            "kind": self.kind,
            "played": self.played,
            "best": self.best,
            "regret": self.regret,
        }


def worst_of(d: Any, turns: Sequence[Turn], seat: int, game: GameId, lineup: int | None) -> Worst:
    """The :class:`Worst` of decision ``d`` (a :class:`harness.decisions.analysis.Decision`) of a seat whose ``turns`` hold the dice."""
    t = next((x for x in turns if (x.column, x.turn) == (d.column, d.turn)), None)
    dice = tuple(t.rolls[d.roll - 1]) if t is not None and d.roll <= len(t.rolls) else ()
    return Worst(game, lineup, seat, d.column, d.turn, d.roll, dice, d.kind, d.chosen, d.best, d.regret)
