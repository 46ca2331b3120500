"""numba kernels for the heuristic bots: stop values of every roll in one sheet state."""

from __future__ import annotations

from harness.util.jit import nb
import numpy as np

from harness.game.pace import box_values as bonus_values, stop_values
from harness.game.loop_kernels import counter_mixes
from harness.game.rng import DICE, STRATEGY, face0, mix64, unit
from harness.game.scoring import best_immediate, score_options, score_sheet
from harness.game.turn import turn_policy_kernel


@nb.njit(cache=True, nogil=True)
def bonus_stop_values(ctx, first, flag, filled, upper, threshold, bonus_value, p_table, opp, weight):
    """(R,) float64: the bonus bot's value of stopping with each roll in one sheet state
    (:func:`harness.game.pace.stop_values` of the sheet's score rows)."""
    n = ctx.table.shape[0]
    res = np.empty(n)
    rows = np.empty((n, ctx.n_boxes), dtype=np.int16)
    allowed = np.empty(n, dtype=np.int64)
    extras = np.empty(n, dtype=np.int16)
    # the sheet's rows a table at a time (the same values as score_options roll by roll, a third
    # of the time: half of a bonus bot's plan was its stop values)
    score_sheet(ctx, first, np.int64(1) if flag else np.int64(0), filled, rows, allowed, extras)
    stop_values(
        rows,
        allowed,
        extras,
        filled,
        upper,
        threshold,
        bonus_value,
        ctx.upper_face,
        p_table,
        opp,
        weight,
        np.empty(ctx.n_boxes),
        res,
    )
    return res


@nb.njit(cache=True, nogil=True)
def bonus_values_batch(scores, allowed, extra, filled, upper, threshold, bonus_value, upper_face, p_table, opp, weight):
    """:func:`harness.game.pace.box_values` for a batch: scores (B, NB) -> (B, NB) float64."""
    out = np.empty(scores.shape)
    for i in range(scores.shape[0]):
        bonus_values(
            scores[i],
            allowed[i],
            extra[i],
            filled[i],
            upper[i],
            threshold,
            bonus_value,
            upper_face,
            p_table,
            opp,
            weight,
            out[i],
        )
    return out


@nb.njit(cache=True, nogil=True)
def gain_box(options, allowed, extra, upper, threshold, bonus_value, upper_face, order):
    """The allowed box with the largest immediate gain (points + extra + a bonus it completes) for one
    roll: options (NB,). Ties go to the earliest box in ``order`` (boxes sorted by their maximum:
    the cheapest to give up)."""
    best = -1.0e18
    arg = -1
    for b in order:
        if not (allowed >> b) & 1:
            continue
        g = options[b] + extra
        if upper_face[b] > 0 and upper < threshold <= upper + options[b]:
            g += bonus_value
        if g > best:
            best = g
            arg = b
    return arg


@nb.njit(inline="always")
def _gain_box(options, allowed, extra, upper, threshold, bonus_value, upper_face, order):
    """:func:`gain_box`, the same box, as one maximum over keys ``gain * 64 + (63 - position in
    order)`` (so the largest gain, then the earliest in ``order``, as gain_box's first strict
    maximum): no chain of compare-and-branch, a reduction the compiler vectorises (gain_box took
    half of the time-out bot's whole game). At most 64 boxes."""
    top = np.int64(-(1 << 62))
    for i in range(order.shape[0]):
        b = order[i]
        s = np.int64(options[b])
        cross = (upper_face[b] > 0) & (upper < threshold) & (threshold <= upper + s)
        key = ((s + extra + (bonus_value if cross else 0)) << 6) | (63 - i)
        top = max(top, key if (allowed >> b) & 1 else np.int64(-(1 << 62)))
    return order[63 - (top & 63)]


@nb.njit(cache=True, nogil=True)
def best_gain_box(options, allowed, extra, upper, threshold, bonus_value, upper_face, order):
    """(B,) :func:`gain_box` of every row: options (B, NB), allowed, extra and upper (B,)."""
    out = np.empty(options.shape[0], dtype=np.int64)
    for i in range(options.shape[0]):
        out[i] = gain_box(options[i], allowed[i], extra[i], upper[i], threshold, bonus_value, upper_face, order)
    return out


@nb.njit(cache=True, nogil=True)
def sheet_gain_boxes(options, allowed, extra, sheet, upper, threshold, bonus_value, upper_face, order, out):
    """out (N, F, R): :func:`gain_box` of every roll of N states, state g on sheet row sheet[g] of
    options (U, 2, R, NB), allowed and extra (U, 2, R), with upper subtotal upper[g]; F = 1 reads
    the later rolls' scores (index 0) for both. A roll on which no allowed upper box can complete
    the bonus takes its sheet's box without the bonus (worked out once per run of states of one
    sheet): the subtotal matters to :func:`gain_box` only through that bonus."""
    n_f, n_rolls = out.shape[1], out.shape[2]
    nbx = options.shape[3]
    base = np.empty((n_f, n_rolls), dtype=np.int64)
    last = -1
    for g in range(out.shape[0]):
        sh = sheet[g]
        if sh != last:
            for f in range(n_f):
                for r in range(n_rolls):
                    base[f, r] = gain_box(
                        options[sh, f, r],
                        allowed[sh, f, r],
                        extra[sh, f, r],
                        threshold,
                        threshold,
                        bonus_value,
                        upper_face,
                        order,
                    )
            last = sh
        u = upper[g]
        for f in range(n_f):
            for r in range(n_rolls):
                cross = False
                if u < threshold:
                    al = allowed[sh, f, r]
                    for b in range(nbx):
                        if upper_face[b] > 0 and (al >> b) & 1 and u + options[sh, f, r, b] >= threshold:
                            cross = True
                            break
                out[g, f, r] = (
                    gain_box(
                        options[sh, f, r],
                        allowed[sh, f, r],
                        extra[sh, f, r],
                        u,
                        threshold,
                        bonus_value,
                        upper_face,
                        order,
                    )
                    if cross
                    else base[f, r]
                )


@nb.njit(cache=True, nogil=True)
def immediate_stops(options, allowed, extra, out):
    """out (U, 2, R) float64: the best score (extra bonus included) of an allowed box for every roll of
    every sheet (options (U, 2, R, NB)): :func:`harness.game.scoring.best_immediate` from the score rows."""
    for u in range(options.shape[0]):
        for f in range(2):
            for r in range(options.shape[2]):
                best = -1
                for b in range(options.shape[3]):
                    if (allowed[u, f, r] >> b) & 1 and options[u, f, r, b] > best:
                        best = options[u, f, r, b]
                out[u, f, r] = best + extra[u, f, r]


@nb.njit(cache=True, nogil=True)
def bonus_policy(
    options,
    allowed,
    extra,
    sheet,
    masks,
    uppers,
    threshold,
    bonus_value,
    upper_face,
    p_table,
    opp,
    weight,
    order,
    servida,
    stops,
    boxes,
):
    """The bonus bot's stop values stops (N, 2, R) and boxes (N, F, R) for N states (state g: sheet
    row sheet[g] of options (U, 2, R, NB), allowed and extra (U, 2, R), filled boxes masks[g],
    upper subtotal uppers[g]); F = 2 with ``servida``, else 1 (the first roll scores like any
    other). Every value is :func:`harness.game.pace.box_values`'s, term by term in its order (only the open faces
    and P(bonus) now are taken once per state): stops the best of them (:func:`bonus_stop_values`),
    boxes the first best in ``order`` (the bot's ``best_box``)."""
    for g in range(masks.shape[0]):
        sh = sheet[g]
        filled = masks[g]
        faces = 0
        for b in range(upper_face.shape[0]):
            if upper_face[b] > 0 and not (filled >> b) & 1:
                faces |= 1 << (upper_face[b] - 1)
        up_now = min(uppers[g], threshold)
        p_now = p_table[faces, threshold - up_now]
        for f in range(2 if servida else 1):
            for r in range(options.shape[2]):
                al = allowed[sh, f, r]
                e = extra[sh, f, r]
                best = -np.inf
                arg = -1
                for b in order:
                    if not (al >> b) & 1:
                        continue
                    s = options[sh, f, r, b]
                    p_after = p_now
                    if upper_face[b] > 0:
                        up_after = min(up_now + s, threshold)
                        p_after = p_table[faces & ~(1 << (upper_face[b] - 1)), threshold - up_after]
                    v = s + e - opp[b] + weight * bonus_value * (p_after - p_now)
                    if v > best:
                        best = v
                        arg = b
                stops[g, f, r] = best
                boxes[g, f, r] = arg
        if not servida:  # the first roll scores like any other
            for r in range(options.shape[2]):
                stops[g, 1, r] = stops[g, 0, r]


@nb.njit(cache=True, nogil=True)
def random_keeps(roll_faces, roll, u, keep_counts_lookup, radix):
    """(B,) keep indices keeping die j of each roll when u[i, j] < 1/2."""
    out = np.empty(roll.shape[0], dtype=np.int32)
    n = roll_faces.shape[1]
    for i in range(roll.shape[0]):
        code = 0
        for j in range(n):
            if u[i, j] < 0.5:
                code += radix ** (roll_faces[roll[i], j] - 1)
        out[i] = keep_counts_lookup[code]
    return out


@nb.njit(cache=True, nogil=True)
def random_boxes(allowed, u, n_boxes):
    """(B,) the k-th allowed box, k = floor(u * number allowed): uniform over the allowed boxes."""
    out = np.empty(allowed.shape[0], dtype=np.int64)
    for i in range(allowed.shape[0]):
        count = 0
        for b in range(n_boxes):
            count += (allowed[i] >> b) & 1
        k = min(int(u[i] * count), count - 1)
        for b in range(n_boxes):
            if (allowed[i] >> b) & 1:
                if k == 0:
                    out[i] = b
                    break
                k -= 1
    return out


@nb.njit(cache=True, nogil=True)
def uniform_boxes(allowed, n_boxes, out):
    """out[..., b] = 1 / (number allowed) for every allowed box b of allowed (...) int64 masks:
    :func:`random_boxes`'s distribution. allowed is flattened to (N,), out to (N, n_boxes)."""
    for i in range(allowed.shape[0]):
        count = 0
        for b in range(n_boxes):
            count += (allowed[i] >> b) & 1
        for b in range(n_boxes):
            out[i, b] = 1.0 / count if (allowed[i] >> b) & 1 else 0.0


@nb.njit(cache=True, nogil=True)
def seat_mixes(seat, turns, rolls, n_dice, coins, choose_step):
    """(M (turns * per,) uint64, per): the counter half (:func:`harness.game.loop_kernels.counter_mixes`)
    of every word one game at seat ``seat`` may draw, each turn's ``per`` words side by side: the
    dice of its ``rolls`` rolls (n_dice words a roll), and with ``coins`` the random bot's coins
    (n_dice words a reroll, strategy steps 0..) and its box's word (strategy step ``choose_step``).
    A game's words are then one vector pass (:func:`_game_words`) before its turns are played."""
    dice = counter_mixes(DICE, seat, turns, rolls, n_dice)
    n_coin = rolls - 1 if coins else 0
    per = rolls * n_dice + n_coin * n_dice + (1 if coins else 0)
    M = np.empty(turns * per, dtype=np.uint64)
    strat = counter_mixes(STRATEGY, seat, turns, choose_step + 1 if coins else 1, n_dice if coins else 1)
    for t in range(turns):
        o = t * per
        for s in range(rolls):
            for j in range(n_dice):
                M[o + s * n_dice + j] = dice[t, s, j]
        o += rolls * n_dice
        for s in range(n_coin):
            for j in range(n_dice):
                M[o + s * n_dice + j] = strat[t, s, j]
        if coins:
            M[t * per + per - 1] = strat[t, choose_step, 0]
    return M, per


@nb.njit(inline="always")
def _game_words(key, M, W):
    """W[i] = the word of game ``key`` at counter half M[i] (:func:`harness.game.rng.keyed`): one
    loop the compiler vectorises, instead of one word at a time where the game needs it."""
    for i in range(M.shape[0]):
        W[i] = mix64(key ^ M[i])


@nb.njit(inline="always")
def _roll_of(W, o, n_dice, w, lookup):
    """The first roll of a turn from its dice words W[o:o + n_dice] (as ``first_roll``)."""
    code = 0
    for j in range(n_dice):
        code += w[np.int64(face0(W[o + j]))]
    return np.int64(lookup[code])


@nb.njit(inline="always")
def _reroll(W, o, n_dice, k, w, keep_counts, keep_size, lookup):
    """The roll after keeping ``k``, the fresh dice from words W[o:] (as ``next_roll``)."""
    code = 0
    for f in range(6):
        code += keep_counts[k, f] * w[f]
    for j in range(n_dice - keep_size[k]):
        code += w[np.int64(face0(W[o + j]))]
    return np.int64(lookup[code])


@nb.njit(inline="always")
def _plain(ctx, roll, flag, needs_key):
    """Whether :func:`score_options` gives roll ``roll`` its table row as it is, the open boxes
    allowed and no extra bonus (no all-alike roll on a sheet with a key box, no box waiting for
    the key box): then the whole-game kernels read the table instead of calling it."""
    return not (ctx.key_box >= 0 and ctx.yatzy_roll[roll]) and (flag or not needs_key)


@nb.njit(inline="always")
def _open(ctx, mask):
    """The boxes :func:`score_options` allows on sheet ``mask`` (the first open one when forced)."""
    open_ = ((np.int64(1) << ctx.n_boxes) - 1) & ~mask
    return open_ & -open_ if ctx.forced else open_


@nb.njit(cache=True, nogil=True)
def _needs_key(ctx):
    """Whether some box scores only once the key box holds a score."""
    for b in range(ctx.n_boxes):
        if ctx.requires_key[b]:
            return True
    return False


@nb.njit(inline="always")
def _write_box(ctx, g, t, box, got, e, mask, up, flag, ex, pts, threshold, bonus_value, sheet, running):
    """Game g writes ``got`` in ``box`` on turn t (extra bonus ``e``): its sheet and running total,
    as the loop's sheets hold them (the bonus counted from the turn its threshold is reached);
    returns the game's new (mask, upper, flag, extra, points)."""
    sheet[g, box] = got
    mask |= np.int64(1) << box
    if ctx.upper_face[box] > 0:
        up += got
    if box == ctx.key_box:
        flag = got > 0
    ex += e
    pts += got
    running[g, t] = pts + (bonus_value if up >= threshold else 0) + ex
    return mask, up, flag, ex, pts


@nb.njit(cache=True, nogil=True)
def random_seat(
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
    roll_faces,
    keep_lookup,
    choose_step,
    threshold,
    bonus_value,
    sheet,
    upper,
    extra,
    running,
):
    """The random bot's whole games at seat ``seat`` (one column, no saved rolls): the keeps of
    :func:`random_keeps` and boxes of :func:`random_boxes` on the uniforms ``view.uniform`` gives
    (:func:`harness.game.rng.uniforms`), the dice of the engine's kernels. Writes what
    :func:`harness.exact.kernels.play.play_seat` writes (see there).

    The same numbers, cheaper: a game's words in one vector pass (:func:`seat_mixes`); a coin
    ``unit(word) < 1/2`` is the word's top bit clear, added without a branch (a coin is a branch
    the processor cannot predict); the k-th allowed box walks the set bits; plain rolls read the
    score table (:func:`_plain`)."""
    nbx = ctx.n_boxes
    w = np.empty(6, dtype=np.int64)
    for f in range(6):
        w[f] = radix**f
    row = np.empty(nbx, dtype=np.int16)
    rr = rolls_per_turn - 1
    M, per = seat_mixes(seat, nbx, rolls_per_turn, n_dice, True, choose_step)
    W = np.empty_like(M)
    half = np.uint64(1) << np.uint64(63)  # unit(h) < 0.5 exactly when h < 2**63
    cd = rolls_per_turn * n_dice
    needs_key = _needs_key(ctx)
    for g in range(keys.shape[0]):
        _game_words(keys[g], M, W)
        mask = np.int64(0)
        flag = False
        up = 0
        ex = 0
        pts = 0
        for t in range(nbx):
            o = t * per
            roll = _roll_of(W, o, n_dice, w, lookup)
            first = True
            for step in range(rr):
                code = 0
                oc = o + cd + step * n_dice
                for j in range(n_dice):
                    code += w[roll_faces[roll, j] - 1] * np.int64(W[oc + j] < half)
                k = keep_lookup[code]
                if k == roll_as_keep[roll]:
                    break
                roll = _reroll(W, o + (step + 1) * n_dice, n_dice, k, w, keep_counts, keep_size, lookup)
                first = False
            plain = _plain(ctx, roll, flag, needs_key)
            if plain:
                allowed, e = _open(ctx, mask), 0
            else:
                allowed, e = score_options(ctx, roll, first, flag, mask, row)
            count = 0
            a = allowed
            while a:
                a &= a - 1
                count += 1
            k = min(int(unit(W[o + per - 1]) * count), count - 1)
            a = allowed
            for _ in range(k):  # the k-th allowed box: drop the k lowest set bits
                a &= a - 1
            a &= -a
            box = 0
            while a > 1:
                a >>= 1
                box += 1
            got = (ctx.table_first if first else ctx.table)[roll, box] if plain else row[box]
            mask, up, flag, ex, pts = _write_box(
                ctx, g, t, box, got, e, mask, up, flag, ex, pts, threshold, bonus_value, sheet, running
            )
        upper[g] = up
        extra[g] = ex


@nb.njit(cache=True, nogil=True)
def turn_seat(
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
    plan,
    planned,
    order,
    threshold,
    bonus_value,
    sheet,
    upper,
    extra,
    running,
):
    """Whole games at seat ``seat`` (one column, no saved rolls) of the turn-greedy bots: the box
    of :func:`gain_box`, and with ``plan`` the greedy bot's keeps (else every turn stops at its
    first roll: the time-out bot). plan (2**NB * 2, rr + 1, R) int16 and planned (2**NB * 2,) bool
    hold each sheet's keeps once worked out, as :meth:`strategies.greedy.TurnPlanner._keep_table`
    works them out (:func:`harness.game.turn.turn_policy_kernel` on
    :func:`harness.game.scoring.best_immediate`): row 0 the turn's first roll, row j after a
    reroll with j rerolls left. Writes what :func:`harness.exact.kernels.play.play_seat` writes.
    A game's dice words in one vector pass, plain rolls from the score table, as :func:`random_seat`."""
    nbx = ctx.n_boxes
    w = np.empty(6, dtype=np.int64)
    for f in range(6):
        w[f] = radix**f
    row = np.empty(nbx, dtype=np.int16)
    rr = rolls_per_turn - 1 if plan.shape[0] > 0 else 0
    M, per = seat_mixes(seat, nbx, rr + 1, n_dice, False, 0)
    W = np.empty_like(M)
    needs_key = _needs_key(ctx)
    for g in range(keys.shape[0]):
        _game_words(keys[g], M, W)
        mask = np.int64(0)
        flag = False
        up = 0
        ex = 0
        pts = 0
        for t in range(nbx):
            o = t * per
            roll = _roll_of(W, o, n_dice, w, lookup)
            first = True
            if rr > 0:
                s = mask * 2 + (1 if flag else 0)
                if not planned[s]:
                    # np.bool_: a bare True/False is a literal type, one more compile of the callee each
                    tl = best_immediate(ctx, np.bool_(False), flag, mask)
                    tf = best_immediate(ctx, np.bool_(True), flag, mask) if servida else tl
                    _, k_first, _, keeps = turn_policy_kernel(
                        tf, tl, rr, trans_ptr, trans_roll, trans_prob, sub_ptr, sub_keep, roll_as_keep
                    )
                    for r in range(k_first.shape[0]):
                        plan[s, 0, r] = k_first[r]
                        for j in range(1, rr + 1):
                            plan[s, j, r] = keeps[j, r]
                    planned[s] = True
                left = rr
                for step in range(rr):
                    k = plan[s, 0 if first else left, roll]
                    if k == roll_as_keep[roll]:
                        break
                    roll = _reroll(W, o + (step + 1) * n_dice, n_dice, k, w, keep_counts, keep_size, lookup)
                    first = False
                    left -= 1
            if _plain(ctx, roll, flag, needs_key):
                opts = (ctx.table_first if first else ctx.table)[roll]
                e = 0
                box = _gain_box(opts, _open(ctx, mask), e, up, threshold, bonus_value, ctx.upper_face, order)
                got = opts[box]
            else:
                allowed, e = score_options(ctx, roll, first, flag, mask, row)
                box = _gain_box(row, allowed, e, up, threshold, bonus_value, ctx.upper_face, order)
                got = row[box]
            mask, up, flag, ex, pts = _write_box(
                ctx, g, t, box, got, e, mask, up, flag, ex, pts, threshold, bonus_value, sheet, running
            )
        upper[g] = up
        extra[g] = ex
