"""numba kernel that plays whole solitaire games from the solver's T=0 decision tables, one seat at a time.

The batched loop (:func:`harness.game.loop.play`) asks a bot for each decision of B games and
writes its answers with numpy; for a bot whose every decision is a table look-up that is most of
the time. :func:`play_seat` instead plays each game of the batch from its first roll to its last
box in one pass: the dice of :mod:`harness.game.rng` (the same counters, words and faces as
:func:`harness.game.loop_kernels.throw` and ``reroll``), the keep and the box from their
one-byte tables (:func:`harness.exact.solver.policy_table`, :func:`harness.exact.solver.box_table`),
the points from :func:`harness.game.scoring.score_options`, so every game is the loop's, roll for
roll. A seat's decisions depend on its own sheet and dice only, so seats are played one after the
other and games one after the other: the order does not change a number.
"""

from __future__ import annotations

import numpy as np

from harness.game.loop_kernels import counter_mixes, first_roll, next_roll
from harness.game.rng import DICE
from harness.game.scoring import score_options
from harness.util.jit import nb

# numba's on-disk cache is keyed on this file only: after an edit to harness/game/loop_kernels.py,
# harness/game/rng.py or harness/game/scoring.py, touch this file too.


@nb.njit(cache=True, nogil=True)
def play_seat(
    ctx,
    lay,
    keys,
    seat,
    n_dice,
    rolls_per_turn,
    lookup,
    radix,
    keep_counts,
    keep_size,
    roll_as_keep,
    sub_ptr,
    sub_keep,
    codes,
    boxes,
    threshold,
    bonus_value,
    sheet,
    upper,
    extra,
    running,
):
    """Play seat ``seat`` of the games with keys ``keys`` (B,) uint64, one column without saved rolls.

    codes (states, rr, R) uint8 the keep's position among the roll's sub-keeps with j rerolls
    left at row j - 1; boxes (states, F, R) uint8 the box (index 1 with servida on the first
    roll). Writes sheet (B, NB) int16 (zeros on entry), upper (B,) int16 the upper subtotal,
    extra (B,) int32 extra bonus points, running (B, NB) int32 the column total after each turn
    (the bonus counted from the turn its threshold is reached), as the loop's sheets hold them.

    The games go in lockstep, a step at a time over the batch, and each step's table look-ups
    have a loop of their own: the tables are large (scandinavian: 1 GiB), so nearly every look-up
    misses the caches, and look-ups of different games, independent of each other, then overlap
    in the processor instead of waiting one after the other (a game's own look-ups cannot: each
    depends on the last). Measured: 9.5 us a seat-game game by game, see benchmarks/BENCHMARKS.md.
    """
    nbx = ctx.n_boxes
    F = lay.n_flags
    T = lay.threshold
    servida = boxes.shape[1] > 1
    n = keys.shape[0]
    w = np.empty(6, dtype=np.int64)
    for f in range(6):
        w[f] = radix**f
    row = np.empty(nbx, dtype=np.int16)
    rr = rolls_per_turn - 1
    mixes = counter_mixes(DICE, seat, nbx, rolls_per_turn, n_dice)
    mask = np.zeros(n, dtype=np.int64)
    flag = np.zeros(n, dtype=np.int64)
    pts = np.zeros(n, dtype=np.int64)
    idx = np.empty(n, dtype=np.int64)
    roll = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.bool_)
    live = np.empty(n, dtype=np.int64)  # the games still rolling, in order
    code = np.empty(n, dtype=np.int64)
    for g in range(n):
        upper[g] = 0
        extra[g] = 0
    for t in range(nbx):
        for g in range(n):
            roll[g] = first_roll(keys[g], mixes, t, n_dice, w, lookup)
            first[g] = True
            m = mask[g]
            idx[g] = lay.base[m * F + flag[g]] + lay.slot[lay.umask_of[m], min(np.int64(upper[g]), T)]
            live[g] = g
        n_live = n if rr > 0 else 0
        for step in range(rr):
            left = rr - step
            for a in range(n_live):  # the look-ups alone
                g = live[a]
                code[a] = codes[idx[g], left - 1, roll[g]]
            kept = 0
            for a in range(n_live):
                g = live[a]
                r = roll[g]
                k = sub_keep[sub_ptr[r] + code[a]]
                if k == roll_as_keep[r]:
                    continue
                roll[g] = next_roll(keys[g], mixes, t, step, n_dice, k, w, keep_counts, keep_size, lookup)
                first[g] = False
                live[kept] = g
                kept += 1
            n_live = kept
        for g in range(n):  # the look-ups alone
            code[g] = boxes[idx[g], 1 if (servida and first[g]) else 0, roll[g]]
        for g in range(n):
            m = mask[g]
            allowed, e = score_options(ctx, roll[g], first[g], flag[g] == 1, m, row)
            b = code[g]
            got = row[b]
            sheet[g, b] = got
            mask[g] = m | (np.int64(1) << b)
            if ctx.upper_face[b] > 0:
                upper[g] += got
            if b == ctx.key_box:
                flag[g] = 1 if got > 0 else 0
            extra[g] += e
            pts[g] += got
            running[g, t] = pts[g] + (bonus_value if upper[g] >= threshold else 0) + extra[g]
