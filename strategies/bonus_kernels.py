"""numba kernels of the bonus bot's whole games (:meth:`strategies.bonus.BonusBot.seat_player`).

The bot's plans depend on the upper subtotal, so it meets far more states than the greedy bot
(scandinavian: 164k in 10^5 games, 341k in 10^6): a plan has to be cheap as well as kept.
A plan here is the keeps :meth:`strategies.greedy.TurnPlanner._keep_table` plans, with the same
numbers in the same order, worked out with less waste:

- the stop values (:func:`harness.game.pace.stop_values`) with the state's open upper faces and
  P(bonus) now taken once per state, not once per roll, and only the allowed boxes visited;
- the stage a turn never reaches without saved rolls (every reroll left after a reroll) is not
  worked out (as :func:`harness.game.turn.turn_keeps`).
"""

from __future__ import annotations

from harness.util.jit import nb
import numpy as np

from harness.game.scoring import score_options, score_sheet
from harness.game.turn import best_keeps, keep_expectations
from strategies.kernels import _game_words, _needs_key, _open, _plain, _reroll, _roll_of, _write_box, seat_mixes


@nb.njit(inline="always")
def _pace(filled, upper, threshold, upper_face, p_table, opp, wb):
    """A state's pace: (open upper faces bitmask, subtotal capped at the threshold, P(bonus) now,
    as :func:`harness.game.pace.box_values` works them out; threshold, wb, p_table, opp)."""
    faces = np.int64(0)
    for b in range(upper_face.shape[0]):
        if upper_face[b] > 0 and not (filled >> b) & 1:
            faces |= np.int64(1) << (np.int64(upper_face[b]) - 1)
    up_now = min(upper, threshold)
    return faces, up_now, p_table[faces, threshold - up_now], threshold, wb, p_table, opp


@nb.njit(cache=True, nogil=True)
def _stops(ctx, first, flag, filled, pace, w, out):
    """out (R,): the bot's value of stopping with each roll in one state of pace ``pace``: its best
    allowed box's value, :func:`harness.game.pace.box_values`' expression term by term (``wb`` is
    its ``weight * bonus_value``, the same product: the expression multiplies left to right), so
    the numbers of :func:`strategies.kernels.bonus_stop_values` (the largest: equal values have
    equal bits, as none is -0.0). Written out with int64 integers: through a helper (its arrays'
    reference counts) and with the int8 faces and int16 scores mixed in, the loop took three to
    four times as long. w: scratch (rows (R, NB) int16, allowed (R,) int64, extras (R,) int16)."""
    rows, allowed, extras = w
    # flag as int64: score_sheet as bonus_stop_values compiles it (one compile less)
    score_sheet(ctx, first, np.int64(1) if flag else np.int64(0), filled, rows, allowed, extras)
    faces, up_now, p_now, threshold, wb, p_table, opp = pace
    nbx = ctx.n_boxes
    uf = ctx.upper_face
    for r in range(out.shape[0]):
        best = -np.inf
        e = np.int64(extras[r])
        a = allowed[r]
        for b in range(nbx):
            if (a >> b) & 1:
                s = np.int64(rows[r, b])
                p_after = p_now
                f = np.int64(uf[b])
                if f > 0:
                    up_after = min(up_now + s, threshold)
                    p_after = p_table[faces & ~(np.int64(1) << (f - 1)), threshold - up_after]
                v = s + e - opp[b] + wb * (p_after - p_now)
                if v > best:
                    best = v
        out[r] = best


@nb.njit(cache=True, nogil=True)
def bonus_plan(ctx, servida, flag, filled, pace, dice, w, plan):
    """plan (rr, R): the keeps of one state (filled boxes, key-box flag; its :func:`_pace`), row 0
    on the turn's first roll, row j after a reroll with j rerolls left (1 <= j < rr): those of
    :meth:`TurnPlanner._keep_table` (the same stop values, :func:`harness.game.turn.turn_policy_kernel`'s
    sums and ties). dice: (trans_ptr, trans_roll, trans_prob, sub_ptr, sub_keep, roll_as_keep);
    w: scratch (the score rows of :func:`_stops`, then stop values (2, R), values (rr, R), keep
    expectations (K,), keeps (R,) int32, values (R,))."""
    trans_ptr, trans_roll, trans_prob, sub_ptr, sub_keep, roll_as_keep = dice
    sheet_w, tt, values, ek, keeps, v_first = w
    rr = plan.shape[0]
    tl = tt[0]
    _stops(ctx, np.bool_(False), flag, filled, pace, sheet_w, tl)
    tf = tl
    if servida:  # the first roll scores differently with servida only
        tf = tt[1]
        _stops(ctx, np.bool_(True), flag, filled, pace, sheet_w, tf)
    for r in range(tl.shape[0]):
        values[0, r] = tl[r]
    for j in range(1, rr):
        keep_expectations(values[j - 1], trans_ptr, trans_roll, trans_prob, ek)
        best_keeps(tl, ek, sub_ptr, sub_keep, roll_as_keep, values[j], keeps)
        for r in range(tl.shape[0]):
            plan[j, r] = keeps[r]
    keep_expectations(values[rr - 1], trans_ptr, trans_roll, trans_prob, ek)
    best_keeps(tf, ek, sub_ptr, sub_keep, roll_as_keep, v_first, keeps)
    for r in range(tl.shape[0]):
        plan[0, r] = keeps[r]


@nb.njit(inline="always")
def _best_box(opts, allowed, e, order, upper_face, pace):
    """The bot's box (:meth:`strategies.bonus.BonusBot.choose`): the first best value in ``order``,
    each as :func:`_stops` works it out."""
    faces, up_now, p_now, threshold, wb, p_table, opp = pace
    e = np.int64(e)
    best = -np.inf
    arg = -1
    for b in order:
        if (allowed >> b) & 1:
            s = np.int64(opts[b])
            p_after = p_now
            f = np.int64(upper_face[b])
            if f > 0:
                up_after = min(up_now + s, threshold)
                p_after = p_table[faces & ~(np.int64(1) << (f - 1)), threshold - up_after]
            v = s + e - opp[b] + wb * (p_after - p_now)
            if v > best:
                best = v
                arg = b
    return arg


@nb.njit(cache=True, nogil=True)
def bonus_seat(
    ctx,
    keys,
    seat,
    n_dice,
    rolls_per_turn,
    lookup,
    radix,
    keep_counts,
    keep_size,
    roll_as_keep,
    trans_ptr,
    trans_roll,
    trans_prob,
    sub_ptr,
    sub_keep,
    servida,
    order,
    threshold,
    bonus_value,
    p_table,
    opp,
    weight,
    slot_of,
    slot_key,
    plans,
    used,
    sheet,
    upper,
    extra,
    running,
):
    """The bonus bot's whole games at seat ``seat`` (one column, no saved rolls, at least one
    reroll): its keeps and boxes, the dice of the engine's kernels. Writes what
    :func:`harness.exact.kernels.play.play_seat` writes.

    Plans are kept across calls: state (filled boxes, key-box flag, upper subtotal capped at the
    threshold) ``s = (up * 2**NB + filled) * 2 + flag`` has its keeps in plans[slot_of[s] - 1]
    (rr, R) int16 (:func:`bonus_plan`; slot_of[s] = 0: not planned), slot_key[i] the state of slot
    i and used[0] the slots taken; when every slot is taken they are all given up (the hot states,
    the first turns', are planned again at once)."""
    nbx = ctx.n_boxes
    w = np.empty(6, dtype=np.int64)
    for f in range(6):
        w[f] = radix**f
    n_rolls = roll_as_keep.shape[0]
    rr = rolls_per_turn - 1
    row = np.empty(nbx, dtype=np.int16)
    sheet_w = (
        np.empty((n_rolls, nbx), dtype=np.int16),
        np.empty(n_rolls, dtype=np.int64),
        np.empty(n_rolls, dtype=np.int16),
    )
    plan_w = (
        sheet_w,
        np.empty((2, n_rolls)),
        np.empty((rr, n_rolls)),
        np.empty(trans_ptr.shape[0] - 1),
        np.empty(n_rolls, dtype=np.int32),
        np.empty(n_rolls),
    )
    wb = weight * np.float64(bonus_value)  # box_values' weight * bonus_value, the same product
    dice = (trans_ptr, trans_roll, trans_prob, sub_ptr, sub_keep, roll_as_keep)
    n_sheets = np.int64(1) << (nbx + 1)
    M, per = seat_mixes(seat, nbx, rolls_per_turn, n_dice, False, 0)
    W = np.empty_like(M)
    needs_key = _needs_key(ctx)
    for g in range(keys.shape[0]):
        _game_words(keys[g], M, W)
        mask = np.int64(0)
        flag = np.bool_(False)  # not a literal: one compile of bonus_plan, not two
        up = 0
        ex = 0
        pts = 0
        for t in range(nbx):
            o = t * per
            roll = _roll_of(W, o, n_dice, w, lookup)
            first = True
            pace = _pace(mask, up, threshold, ctx.upper_face, p_table, opp, wb)
            s = pace[1] * n_sheets + mask * 2 + (1 if flag else 0)
            slot = slot_of[s] - 1
            if slot < 0:
                if used[0] == plans.shape[0]:
                    for i in range(used[0]):
                        slot_of[slot_key[i]] = 0
                    used[0] = 0
                slot = used[0]
                used[0] += 1
                slot_of[s] = slot + 1
                slot_key[slot] = s
                bonus_plan(ctx, servida, flag, mask, pace, dice, plan_w, plans[slot])
            left = rr
            for step in range(rr):
                k = plans[slot, 0 if first else left, roll]
                if k == roll_as_keep[roll]:
                    break
                roll = _reroll(W, o + (step + 1) * n_dice, n_dice, k, w, keep_counts, keep_size, lookup)
                first = False
                left -= 1
            if _plain(ctx, roll, flag, needs_key):
                tab = ctx.table_first if first else ctx.table
                for b in range(nbx):
                    row[b] = tab[roll, b]
                allowed, e = _open(ctx, mask), 0
            else:
                allowed, e = score_options(ctx, roll, first, flag, mask, row)
            box = _best_box(row, allowed, e, order, ctx.upper_face, pace)  # one call site: one inlined copy
            got = row[box]
            mask, up, flag, ex, pts = _write_box(
                ctx, g, t, box, got, e, mask, up, flag, ex, pts, threshold, bonus_value, sheet, running
            )
        upper[g] = up
        extra[g] = ex
