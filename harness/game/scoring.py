"""Score options in context: the one place that applies servida, the joker and key-box rules.

The score table of a rule set is context-free; a few rules depend on the sheet (the forced joker,
Yahtzee's +100, Generala's servida and double generala, forced order). :func:`score_options` folds
them in for one roll and one sheet state. It is a numba kernel so that the engine (over a batch) and
the solver (over every state) share the very same code.
"""

from __future__ import annotations

from typing import NamedTuple

from harness.util.jit import nb
import numpy as np

from harness.game.rules import RuleSet


class Context(NamedTuple):
    """A rule set's scoring arrays, flat for numba (shapes: R rolls, NB boxes)."""

    table: np.ndarray  # (R, NB) int16
    table_first: np.ndarray  # (R, NB) int16
    upper_face: np.ndarray  # (NB,) int8
    requires_key: np.ndarray  # (NB,) bool
    joker_value: np.ndarray  # (NB,) int16
    yatzy_roll: np.ndarray  # (R,) bool
    yatzy_face: np.ndarray  # (R,) int8 face of an all-alike roll, else 0
    key_box: int
    joker: bool
    extra: int
    forced: bool
    n_boxes: int
    upper_mask: int


def context(rules: RuleSet) -> Context:
    """The numba-ready :class:`Context` of a rule set."""
    counts = rules.dice.roll_counts
    face = np.where(rules.yatzy_roll, np.argmax(counts, axis=1) + 1, 0).astype(np.int8)
    return Context(
        rules.table,
        rules.table_first,
        rules.upper_face,
        rules.requires_key,
        rules.joker_value,
        rules.yatzy_roll,
        face,
        int(rules.key_box),
        bool(rules.joker),
        int(rules.extra_yatzy_bonus),
        bool(rules.forced),
        int(rules.n_boxes),
        int(rules.upper_mask),
    )


@nb.njit(cache=True, nogil=True)
def score_options(ctx, r, first, flag, filled, out):
    """Scores of roll ``r`` in every box, written to ``out`` (NB,); returns (allowed mask, extra bonus).

    ``filled`` is the bit mask of filled boxes, ``flag`` whether the key box holds a non-zero score,
    ``first`` whether the dice were made on the turn's first roll. ``allowed`` has a bit for each box
    the player may fill now; ``extra`` is added to the total whatever box is chosen.
    A rule added here that changes rolls other than all-alike ones on a key-box sheet must also go
    into :func:`score_sheet`'s table-at-a-time path (tests compare the two on every rule set).
    """
    tab = ctx.table_first if first else ctx.table
    nbx = ctx.n_boxes
    for b in range(nbx):
        s = tab[r, b]
        if ctx.requires_key[b] and not flag:
            s = 0
        out[b] = s
    open_ = ((1 << nbx) - 1) & ~filled
    allowed = open_
    if ctx.forced:
        allowed = open_ & -open_
    extra = 0
    if ctx.key_box >= 0 and ctx.yatzy_roll[r]:
        if flag:
            extra = ctx.extra
        if ctx.joker and (filled >> ctx.key_box) & 1:
            for b in range(nbx):
                if ctx.joker_value[b] >= 0:
                    out[b] = ctx.joker_value[b]
            if not ctx.forced:
                face_box = -1
                for b in range(nbx):
                    if ctx.upper_face[b] == ctx.yatzy_face[r]:
                        face_box = b
                if face_box >= 0 and (open_ >> face_box) & 1:
                    allowed = 1 << face_box
                elif open_ & ~ctx.upper_mask:
                    allowed = open_ & ~ctx.upper_mask
    return allowed, extra


@nb.njit(cache=True, nogil=True)
def score_sheet(ctx, first, flag, filled, rows, allowed, extras):
    """:func:`score_options` of every roll for one sheet: rows (R, NB) int16, allowed (R,) int64,
    extras (R,) int16. The same values, computed a table at a time: only an all-alike roll on a
    sheet with a key box can differ from the plain table row (extra bonus, joker), and those few
    rolls go through :func:`score_options` itself."""
    tab = ctx.table_first if first else ctx.table
    n = tab.shape[0]
    nbx = ctx.n_boxes
    for r in range(n):  # element loops: numba's broadcasting set-item takes ~2.5 s to compile
        for b in range(nbx):
            rows[r, b] = tab[r, b]
    if not flag:
        for b in range(nbx):
            if ctx.requires_key[b]:
                for r in range(n):
                    rows[r, b] = 0
    open_ = ((1 << nbx) - 1) & ~filled
    base = open_ & -open_ if ctx.forced else open_
    for r in range(n):
        allowed[r] = base
        extras[r] = 0
    if ctx.key_box >= 0:
        for r in range(n):
            if ctx.yatzy_roll[r]:
                a, e = score_options(ctx, r, first, flag, filled, rows[r])
                allowed[r] = a
                extras[r] = e


@nb.njit(cache=True, nogil=True)
def score_options_batch(ctx, rolls, first, flags, filled):
    """Vectorised :func:`score_options`: rolls (B,) int16, first/flags (B,) bool, filled (B,) int64
    -> scores (B, NB) int16, allowed (B,) int64, extra (B,) int16."""
    n = rolls.shape[0]
    scores = np.empty((n, ctx.n_boxes), dtype=np.int16)
    allowed = np.empty(n, dtype=np.int64)
    extra = np.empty(n, dtype=np.int16)
    for i in range(n):
        a, e = score_options(ctx, rolls[i], first[i], flags[i], filled[i], scores[i])
        allowed[i] = a
        extra[i] = e
    return scores, allowed, extra


@nb.njit(cache=True, nogil=True)
def best_immediate(ctx, first, flag, filled):
    """(R,) float64: for every roll in one state, the best score (extra bonus included) of an allowed box."""
    n = ctx.table.shape[0]
    out = np.empty(n)
    row = np.empty(ctx.n_boxes, dtype=np.int16)
    for r in range(n):
        allowed, extra = score_options(ctx, r, first, flag, filled, row)
        best = -1
        for b in range(ctx.n_boxes):
            if (allowed >> b) & 1 and row[b] > best:
                best = row[b]
        out[r] = best + extra
    return out
