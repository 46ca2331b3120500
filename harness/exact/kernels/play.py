"""numba kernels that play whole solitaire games for the solver bot, one seat at a time: from its T=0
decision tables (:func:`play_seat`), and at a temperature from its cached action values (:func:`soft_seat`).

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

from harness.exact.kernels.solver import order_of, plan_group, soft_pick, choose_boxes, soft_scratch
from harness.game.loop_kernels import counter_mixes, first_roll, next_roll
from harness.game.rng import DICE, STRATEGY, keyed, unit
from harness.game.scoring import score_options
from harness.util.jit import nb

# numba's on-disk cache is keyed on this file only: after an edit to harness/game/loop_kernels.py,
# harness/game/rng.py, harness/game/scoring.py or harness/exact/kernels/solver.py, touch this file too.


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


@nb.njit(inline="always")
def _soft_turn(
    dk, ev, sv, line, key, mixes, smix, t, roll, rr, n_dice, w, keep_counts, keep_size, lookup, temperature, blunder, X
):
    """One game's keeps of turn t from its state's cache line (a turn's keeps are all of one
    state): as :func:`harness.exact.kernels.solver.soft_keeps` draws each, on the uniforms of
    strategy step ``step``; returns (the roll in hand, whether it is the turn's first)."""
    first = True
    for step in range(rr):
        u0 = unit(keyed(key, smix[t, step, 0]))
        u1 = unit(keyed(key, smix[t, step, 1]))
        if u0 < blunder:
            lo = dk.sub_ptr[roll]
            k = dk.sub_ptr[roll + 1] - lo
            keep = np.int64(dk.sub_keep[lo + min(int(u1 * k), k - 1)])
        else:
            keep = np.int64(soft_pick(dk, ev, sv, line, roll, rr - step, first, temperature, u1, X))
        if keep == dk.roll_as_keep[roll]:
            break
        roll = next_roll(key, mixes, t, step, n_dice, keep, w, keep_counts, keep_size, lookup)
        first = False
    return roll, first


@nb.njit(cache=True, nogil=True)
def soft_seat(
    ctx,
    lay,
    dk,
    V,
    tags,
    ev,
    sv,
    keys,
    seat,
    n_dice,
    rolls_per_turn,
    lookup,
    radix,
    keep_counts,
    keep_size,
    temperature,
    blunder,
    choose_step,
    threshold,
    bonus_value,
    sheet,
    upper,
    extra,
    running,
):
    """:func:`play_seat` for the randomised solver (temperature > 0, any blunder rate), on a rule
    set whose rolls score their table rows in any open box (no key box, forced order or servida:
    :func:`harness.exact.kernels.solver.plan_group`): the keeps
    :func:`harness.exact.kernels.solver.soft_keeps` draws and the boxes ``choose_boxes`` draws,
    on the uniforms ``view.uniform(2)`` gives at each decision (:func:`harness.game.rng.uniforms`:
    strategy steps 0.. for the keeps, ``choose_step`` for the box), so the loop's games.

    A turn's keeps all come from one state's cache line (the state changes only with the box),
    so the games go a turn at a time in state order, each game's whole turn taken as soon as its
    state is in the cache: the states missing are planned PLAN_GROUP at a time (their stop values
    side by side, their turns in one call), then their games' turns played while the lines are
    at hand. Then the turn's boxes in one choose_boxes call. The cache lines are soft_keeps' own
    (the same values: the two fill them alike)."""
    nbx = ctx.n_boxes
    n = keys.shape[0]
    cap = tags.shape[0]
    w = np.empty(6, dtype=np.int64)
    for f in range(6):
        w[f] = radix**f
    rr = rolls_per_turn - 1
    mixes = counter_mixes(DICE, seat, nbx, rolls_per_turn, n_dice)
    smix = counter_mixes(STRATEGY, seat, nbx, choose_step + 1, 2)
    sc = soft_scratch(ctx, lay, dk)
    X, gidx, gm, gf, gu, glo = sc[3], sc[9], sc[10], sc[11], sc[12], sc[13]
    G = gidx.shape[0]
    mask = np.zeros(n, dtype=np.int64)
    flag = np.zeros(n, dtype=np.bool_)
    pts = np.zeros(n, dtype=np.int64)
    roll = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.bool_)
    idx = np.empty(n, dtype=np.int64)
    up64 = np.empty(n, dtype=np.int64)
    unif = np.empty((n, 2))
    opts = np.empty((n, nbx), dtype=np.int16)
    allowed = np.empty(n, dtype=np.int64)
    box = np.empty(n, dtype=np.int64)
    full = (np.int64(1) << nbx) - 1
    for g in range(n):
        upper[g] = 0
        extra[g] = 0
    for t in range(nbx):
        for g in range(n):
            roll[g] = first_roll(keys[g], mixes, t, n_dice, w, lookup)
            first[g] = True
            m = mask[g]
            u = min(np.int64(upper[g]), lay.threshold)
            idx[g] = lay.base[m * lay.n_flags + (1 if flag[g] else 0)] + lay.slot[lay.umask_of[m], u]
        if rr > 0:
            order = order_of(idx, V.shape[0])
            c = 0  # states in the group
            i = 0
            while i <= n:
                if i < n:
                    e = i + 1
                    while e < n and idx[order[e]] == idx[order[i]]:
                        e += 1
                    line = idx[order[i]] & (cap - 1)
                    hit = tags[line] == idx[order[i]]
                    clash = False
                    if not hit:
                        for a in range(c):
                            if gidx[a] & (cap - 1) == line:
                                clash = True
                else:
                    e, hit, clash = n, True, c > 0
                if clash or c == G or (i == n and c > 0):  # plan the group, then play its games' turns
                    plan_group(lay, dk, V, tags, ev, sv, sc, c)
                    for a in range(c):
                        ln = gidx[a] & (cap - 1)
                        for o in range(glo[a, 0], glo[a, 1]):
                            g = order[o]
                            roll[g], first[g] = _soft_turn(
                                dk,
                                ev,
                                sv,
                                ln,
                                keys[g],
                                mixes,
                                smix,
                                t,
                                roll[g],
                                rr,
                                n_dice,
                                w,
                                keep_counts,
                                keep_size,
                                lookup,
                                temperature,
                                blunder,
                                X,
                            )
                    c = 0
                if i == n:
                    break
                if hit:
                    for o in range(i, e):
                        g = order[o]
                        roll[g], first[g] = _soft_turn(
                            dk,
                            ev,
                            sv,
                            line,
                            keys[g],
                            mixes,
                            smix,
                            t,
                            roll[g],
                            rr,
                            n_dice,
                            w,
                            keep_counts,
                            keep_size,
                            lookup,
                            temperature,
                            blunder,
                            X,
                        )
                else:
                    g = order[i]
                    gidx[c] = idx[g]
                    gm[c] = mask[g]
                    gf[c] = 1 if flag[g] else 0
                    gu[c] = min(np.int64(upper[g]), lay.threshold)
                    glo[c, 0] = i
                    glo[c, 1] = e
                    c += 1
                i = e
        for g in range(n):
            # score_options on these rules: the roll's table row, the open boxes, no extra bonus
            tab = ctx.table_first if first[g] else ctx.table
            for b in range(nbx):
                opts[g, b] = tab[roll[g], b]
            allowed[g] = full & ~mask[g]
            up64[g] = upper[g]
            unif[g, 0] = unit(keyed(keys[g], smix[t, choose_step, 0]))
            unif[g, 1] = unit(keyed(keys[g], smix[t, choose_step, 1]))
        choose_boxes(lay, V, mask, flag, up64, opts, allowed, temperature, blunder, unif, box)
        for g in range(n):
            b = box[g]
            got = opts[g, b]
            sheet[g, b] = got
            mask[g] |= np.int64(1) << b
            if ctx.upper_face[b] > 0:
                upper[g] += got
            if b == ctx.key_box:
                flag[g] = got > 0
            pts[g] += got
            running[g, t] = pts[g] + (bonus_value if upper[g] >= threshold else 0) + extra[g]
