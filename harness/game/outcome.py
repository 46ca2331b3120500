"""Who won a game: the one home of the win rule, its ``outcome`` codes and the pairwise points.

The definitions used everywhere (engine rows, ``run``'s summary, ``report``, ``compare``):

* A seat's *ranking score* is its total, or its best column when a rule set plays several
  columns without adding them (:func:`rank_column`).
* **win**: the seat's ranking score is the game's highest and no other seat has it (a sole win);
  **draw**: the highest score is shared (two-, three-way... ties alike); **loss**: otherwise.
  Win, draw and loss rates of a seat therefore sum to 100 %, at any table size.
* **points** (head to head, Elo, ratings, calibration targets): between two seats of one game,
  1 to the higher ranking score, ½ each when equal. At a two-seat table a seat's points are
  win + ½ draw.

At a one-seat table there is nobody to beat: outcomes are recorded (the lone seat "wins") but no
summary shows a win rate for it.

The course of a game (followed by the engine, :class:`harness.game.loop.Leads`, and kept as per-game
aggregates in the rows; read by the game-quality metrics of :mod:`harness.reports.quality`):

* A **round** is one turn of every seat; a rule set with NB boxes and C columns plays C x NB
  rounds, numbered from 1. After each round every seat's ranking score *so far* is compared: its
  running total (upper bonus counted once earned, extra yatzy bonuses included), or its best
  column so far when columns are not added.
* The **leader** after a round is the seat with the sole highest score; when the highest score is
  shared, nobody leads (the lead is shared).
* A **lead change** is a round after which a leader differs from the most recent leader before it.
  Rounds with a shared lead are skipped, neither a change nor a reset: A leads, shared, B leads is
  one change; A leads, shared, A leads is none. The first leader is no change.
* A seat is **behind** after a round when its score is below the highest. ``last_behind`` is the
  last round after which it was behind (0: never). The game's **decisive round** is its winner's
  ``last_behind + 1``: the first round from which the final winner is never behind again (1: never
  behind at all); a shared win counts each co-winner's with an equal weight.
* ``deficit`` is the points a seat is behind the highest score after round
  :func:`deficit_round` (10, or the second-last round of a shorter game); 0 when it leads or shares
  the lead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from harness.game.rules import RuleSet

#: ``outcome`` column codes: twice a two-seat game's points (loss 0, draw ½, win 1).
LOSS, DRAW, WIN = 0, 1, 2

#: What the tables say the words mean (one line, for report and summary headers).
DEFINITION = "win = sole highest score, draw = highest score shared, loss = otherwise"


def rank_column(rules: RuleSet) -> str:
    """The row column that decides who wins: ``total``, or ``best_column`` when columns are not added."""
    return "best_column" if rules.columns > 1 and not rules.add_columns else "total"


def ranking_scores(total: np.ndarray, column_totals: np.ndarray, add_columns: bool) -> np.ndarray:
    """(B, S) ranking scores from totals (B, S) and per-column totals (B, S, C)."""
    return total if add_columns or column_totals.shape[2] == 1 else column_totals.max(axis=2)


def outcomes(rank: np.ndarray) -> np.ndarray:
    """(B, S) int8 outcome codes (:data:`WIN`, :data:`DRAW`, :data:`LOSS`) from (B, S) ranking scores."""
    top = rank.max(axis=1, keepdims=True)
    best = rank == top
    shared = best.sum(axis=1, keepdims=True) > 1
    return np.where(best, np.where(shared, DRAW, WIN), LOSS).astype(np.int8)


def pair_points(rank_a: np.ndarray, rank_b: np.ndarray) -> tuple[int, int, int]:
    """(a's wins, draws, b's wins) between two seats over a block of games ((B,) ranking scores each)."""
    diff = np.sign(rank_a.astype(np.int32) - rank_b.astype(np.int32))
    wins, draws = int(np.count_nonzero(diff > 0)), int(np.count_nonzero(diff == 0))
    return wins, draws, len(diff) - wins - draws


def wdl_counts(outcome: np.ndarray) -> np.ndarray:
    """(3,) int64 counts (wins, draws, losses) of a block of outcome codes."""
    c = np.bincount(outcome.reshape(-1).astype(np.intp), minlength=3)
    return np.array([c[WIN], c[DRAW], c[LOSS]], dtype=np.int64)


#: The round after which each seat's ``deficit`` is recorded (comebacks are counted from it).
DEFICIT_ROUND = 10


def deficit_round(rounds: int) -> int:
    """The round after which ``deficit`` is taken in a game of ``rounds`` rounds: :data:`DEFICIT_ROUND`,
    or the second-last round when the game is shorter (at least round 1)."""
    return max(1, min(DEFICIT_ROUND, rounds - 1))
