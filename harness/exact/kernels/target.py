"""numba kernels of the target tables: P(future points >= t) for every solver state and target t.

A state's vector ``P[off[s] + t]``, t = 0..len(s) - 1, holds the table's value at target t; below
0 the value is 1 (nothing more is needed) and from len(s) on it is 0 (more than the state can still
score, or beyond the table's ``tmax``: the recursion only ever lowers a target, so a table cut at
tmax is exact for every target up to tmax). The layout of states is the solver's
(:class:`harness.exact.kernels.solver.Layout`); the vectors are stored one after another in state order,
so a layer's vectors are one contiguous block.

Within a turn the target plays the role of the solver's upper slot: keep values are averages and
maxima taken target by target, so the solver's own :func:`~harness.exact.kernels.solver.turn_values`
(and, for the bot, :func:`~harness.exact.kernels.solver.turn_one` / ``keep_arg_one``) run unchanged on
(keeps, targets) arrays. Only the stop values differ: a box that adds x points (score, bonus
crossed, the roll's extra bonus) turns target t into t - x in the next state.
"""

from __future__ import annotations

from harness.util.jit import nb
import numpy as np

from harness.exact.kernels import solver as K
from harness.game.scoring import score_sheet


@nb.njit(cache=True, nogil=True)
def state_lengths(lay, item_mask, item_flag, extra, tmax, lens):
    """lens (states,) int64: min(most points a state can still score, tmax) + 1 for every state."""
    T = lay.threshold
    F = lay.n_flags
    nbx = lay.n_boxes
    for t in range(item_mask.shape[0]):
        mask = item_mask[t]
        flag = item_flag[t]
        um = lay.umask_of[mask]
        off = lay.base[mask * F + flag]
        low = 0
        up = 0
        n_open = 0
        for b in range(nbx):
            if (mask >> b) & 1:
                continue
            n_open += 1
            top = lay.box_vals[b, lay.box_nvals[b] - 1]
            if lay.is_upper[b]:
                up += top
            else:
                low += top
        ext = 0
        if extra > 0 and lay.key_box >= 0:
            if flag:
                ext = extra * n_open
            elif not (mask >> lay.key_box) & 1:
                ext = extra * (n_open - 1)
        for i in range(lay.nslot[um]):
            u = lay.ulist[um, i]
            most = low + up + ext
            if lay.bonus > 0 and um != lay.full_upper and u < T and u + up >= T:
                most += lay.bonus
            lens[off + i] = min(most, tmax) + 1


@nb.njit(cache=True, nogil=True)
def _next(lay, mask, flag, u, i, b, s):
    """(state index, points added: score + bonus crossed) of writing s in box b from slot i (subtotal u)."""
    F = lay.n_flags
    T = lay.threshold
    nf = flag
    if b == lay.key_box:
        nf = 1 if s > 0 else 0
    m2 = mask | (np.int64(1) << b)
    if lay.is_upper[b]:
        u2 = min(u + s, T)
        add = s + lay.bonus if (u < T and u2 >= T) else s
        return lay.base[m2 * F + nf] + lay.slot[lay.umask_of[m2], u2], add
    return lay.base[m2 * F + nf] + i, s


@nb.njit(cache=True, nogil=True)
def _max_shifted(acc, P, o, n, t0, x):
    """acc[j] = max(acc[j], value at target t0 + j - x of the vector P[o:o + n]) for j < len(acc)."""
    L = acc.shape[0]
    j1 = min(L, max(0, x - t0))  # target below 0: 1
    for j in range(j1):
        acc[j] = 1.0
    j2 = min(L, max(j1, x - t0 + n))
    base = o + t0 - x
    for j in range(j1, j2):
        acc[j] = max(acc[j], np.float64(P[base + j]))
    # from j2 on the next state cannot reach the target: 0, which acc (>= 0) already holds


@nb.njit(cache=True, nogil=True)
def _value(P, off, shift, g, t):
    """Value of state g at target t (1 below 0, 0 past its vector)."""
    if t < 0:
        return 1.0
    o = off[g] - shift
    if t >= off[g + 1] - off[g]:
        return 0.0
    return np.float64(P[o + t])


@nb.njit(cache=True, nogil=True)
def target_stop(lay, P, off, shift, mask, flag, u, i, rows, allowed, extras, t0, stop, cand):
    """Stop values stop (R, L) for targets t0..t0+L-1 of state (mask, flag, slot i with subtotal u):
    the best allowed box of P_next(t - score - bonus crossed - extra). P holds the next layer's
    vectors from ``off[state] - shift``. cand (sum of box_nvals + 1, L) is scratch: the value of
    each (open box, score) first (rolls share them, and the next layer is read once), then the best
    scratch in its last row (for rolls that may go anywhere and earn no extra)."""
    nbx = lay.n_boxes
    L = stop.shape[1]
    open_ = ((np.int64(1) << nbx) - 1) & ~mask
    Z = cand[cand.shape[0] - 1]
    for j in range(L):
        Z[j] = 0.0
    row0 = 0
    for b in range(nbx):
        if (open_ >> b) & 1:
            for v in range(lay.box_nvals[b]):
                c = cand[row0 + v]
                for j in range(L):
                    c[j] = 0.0
                g, x = _next(lay, mask, flag, u, i, b, lay.box_vals[b, v])
                _max_shifted(c, P, off[g] - shift, off[g + 1] - off[g], t0, x)
            c = cand[row0 + lay.box_vidx[b, 0]]
            for j in range(L):
                Z[j] = max(Z[j], c[j])
        row0 += lay.box_nvals[b]
    for r in range(stop.shape[0]):
        al = allowed[r]
        e = np.int64(extras[r])
        acc = stop[r]
        free = al == open_ and e == 0
        if free:
            for j in range(L):
                acc[j] = Z[j]
        else:
            for j in range(L):
                acc[j] = 0.0
        row0 = 0
        for b in range(nbx):
            rb = row0
            row0 += lay.box_nvals[b]
            if not (al >> b) & 1:
                continue
            s = np.int64(rows[r, b])
            if free and s == 0:
                continue
            if e == 0:
                c = cand[rb + lay.box_vidx[b, s]]
                for j in range(L):
                    acc[j] = max(acc[j], c[j])
            else:  # an extra bonus (a few rolls): read the next state shifted by it
                g, x = _next(lay, mask, flag, u, i, b, s)
                _max_shifted(acc, P, off[g] - shift, off[g + 1] - off[g], t0, x + e)


@nb.njit(cache=True, nogil=True)
def score_buffers(n_rolls, nbx):
    """(rows, allowed, extras) of :func:`harness.game.scoring.score_sheet` for the later rolls and for the
    first roll (servida)."""
    return (
        np.empty((n_rolls, nbx), dtype=np.int16),
        np.empty(n_rolls, dtype=np.int64),
        np.empty(n_rolls, dtype=np.int16),
        np.empty((n_rolls, nbx), dtype=np.int16),
        np.empty(n_rolls, dtype=np.int64),
        np.empty(n_rolls, dtype=np.int16),
    )


@nb.njit(cache=True, nogil=True)
def target_items(ctx, lay, dk, P, off, shift, out, oshift, item_mask, item_flag, lo, hi, terminal):
    """Solve the vectors of items lo..hi-1 of one layer into ``out`` (from ``off[state] - oshift``),
    reading the next layer's vectors P (from ``off[state] - shift``), both float64.

    A full sheet's vector is [terminal] at target 0: 1 for P(points >= t), 1/2 for the tie-aware
    table P(points > t) + 1/2 P(points = t).
    """
    n_rolls = ctx.table.shape[0]
    n_keeps = dk.add.shape[0]
    nbx = lay.n_boxes
    full = (np.int64(1) << nbx) - 1
    no, yes = np.bool_(False), np.bool_(True)
    none = np.zeros((0, 0, 0))
    rows_l, al_l, ex_l, rows_f, al_f, ex_f = score_buffers(n_rolls, nbx)
    lmax = 1
    for t in range(lo, hi):
        o = lay.base[item_mask[t] * lay.n_flags + item_flag[t]]
        for i in range(lay.nslot[lay.umask_of[item_mask[t]]]):
            lmax = max(lmax, off[o + i + 1] - off[o + i])
    ebuf = np.empty(n_keeps * lmax)
    mbuf = np.empty(dk.n_small * lmax)
    sfbuf = np.empty(n_rolls * lmax)
    slbuf = np.empty(n_rolls * lmax)
    n_cand = 1
    for b in range(nbx):
        n_cand += lay.box_nvals[b]
    cbuf = np.empty(n_cand * lmax)
    p = dk.roll_prob
    ns = dk.n_small
    for t in range(lo, hi):
        mask = item_mask[t]
        flag = item_flag[t]
        um = lay.umask_of[mask]
        base = lay.base[mask * lay.n_flags + flag]
        if mask == full:
            for i in range(lay.nslot[um]):
                out[off[base + i] - oshift] = terminal
            continue
        score_sheet(ctx, no, flag, mask, rows_l, al_l, ex_l)
        if lay.servida:
            score_sheet(ctx, yes, flag, mask, rows_f, al_f, ex_f)
        for i in range(lay.nslot[um]):
            s = base + i
            L = off[s + 1] - off[s]
            u = np.int64(lay.ulist[um, i])
            stop_l = slbuf[: n_rolls * L].reshape((n_rolls, L))
            cand = cbuf[: n_cand * L].reshape((n_cand, L))
            target_stop(lay, P, off, shift, mask, flag, u, i, rows_l, al_l, ex_l, np.int64(0), stop_l, cand)
            if lay.servida:
                stop_f = sfbuf[: n_rolls * L].reshape((n_rolls, L))
                target_stop(lay, P, off, shift, mask, flag, u, i, rows_f, al_f, ex_f, np.int64(0), stop_f, cand)
            else:
                stop_f = stop_l
            E = ebuf[: n_keeps * L].reshape((n_keeps, L))
            M = mbuf[: ns * L].reshape((ns, L))
            K.turn_values(dk, np.int64(L), stop_f, stop_l, E, M, none, none)
            o = off[s] - oshift
            for j in range(L):
                out[o + j] = 0.0
            for r in range(n_rolls):
                er = E[ns + r]
                pr = p[r]
                for j in range(L):
                    out[o + j] += pr * er[j]


@nb.njit(cache=True, nogil=True)
def policy_tail_items(lay, oc, outp, row_of, item_mask, item_flag, lo, hi, P, off, shift, out, oshift):
    """P(points >= t) under a fixed policy for items lo..hi-1, from each state's turn-outcome
    distribution outp[row_of[t - lo] + i, o] (see :func:`harness.exact.kernels.solver.forward_items`,
    every slot live) and the next layer's vectors P. A full sheet's vector is [1]."""
    nbx = lay.n_boxes
    full = (np.int64(1) << nbx) - 1
    for t in range(lo, hi):
        mask = item_mask[t]
        flag = item_flag[t]
        um = lay.umask_of[mask]
        base = lay.base[mask * lay.n_flags + flag]
        for i in range(lay.nslot[um]):
            s = base + i
            o = off[s] - oshift
            L = off[s + 1] - off[s]
            if mask == full:
                out[o] = 1.0
                continue
            for j in range(L):
                out[o + j] = 0.0
            u = np.int64(lay.ulist[um, i])
            row = row_of[t - lo] + i
            for c in range(outp.shape[1]):
                q = outp[row, c]
                if q == 0.0:
                    continue
                g, x = _next(lay, mask, flag, u, i, oc.o_box[c], np.int64(oc.o_pts[c]))
                x += oc.o_extra[c]
                n = off[g + 1] - off[g]
                src = off[g] - shift
                for j in range(L):
                    tt = j - x
                    if tt < 0:
                        out[o + j] += q
                    elif tt < n:
                        out[o + j] += q * P[src + tt]
                    else:
                        break


# ---------------------------------------------------------------------------------------------
# the bots: one state against a weighting of targets


@nb.njit(cache=True, nogil=True)
def _dot(P, off, g, t0, w, nw):
    """sum_k w[k] * (value of state g at target t0 + k), k < nw."""
    o = off[g]
    n = off[g + 1] - o
    acc = 0.0
    k1 = min(nw, max(0, -t0))
    for k in range(k1):
        acc += w[k]
    k2 = min(nw, max(k1, n - t0))
    for k in range(k1, k2):
        acc += w[k] * np.float64(P[o + t0 + k])
    return acc


@nb.njit(cache=True, nogil=True)
def mixed_plan(ctx, lay, dk, P, off, V, lam, mask, flag, u, lead, w, nw, work):
    """One state's turn played for sum_k w[k] P(points >= lead + k) (a single target t: lead = t,
    w = [1]; against a distribution of scores to beat: the tie-aware table and its weights).

    The value of writing score s in box b is that sum in the next state, shifted by the points the
    box adds; keeps are then the solver's turn (:func:`harness.exact.kernels.solver.turn_one`) over these
    stop values. ``lam`` x the solver's value (points added + V(next state), V the solver's
    table) is added to every option, so that options of equal probability (a target secured, or
    out of reach) are told apart by the expected score (lam = 1e-12: below any difference of
    probability a float32 table can hold). Fills ``work`` (see :func:`mixed_work`): C (NB, V) box
    values per score, the stop values and the stage values Es, Ms of
    :func:`harness.exact.kernels.solver.keep_arg_one`.
    """
    (C, rows_l, al_l, ex_l, rows_f, al_f, ex_f, stop_f, stop_l, E, M, Es, Ms) = work
    nbx = lay.n_boxes
    um = lay.umask_of[mask]
    i = np.int64(lay.slot[um, u])
    for b in range(nbx):
        if (mask >> b) & 1:
            continue
        for v in range(lay.box_nvals[b]):
            g, x = _next(lay, mask, flag, u, i, b, lay.box_vals[b, v])
            C[b, v] = _dot(P, off, g, lead - x, w, nw) + lam * (x + V[g])
    score_sheet(ctx, np.bool_(False), flag, mask, rows_l, al_l, ex_l)
    _stops(lay, P, off, V, lam, mask, flag, u, i, lead, w, nw, C, rows_l, al_l, ex_l, stop_l)
    if lay.servida:
        score_sheet(ctx, np.bool_(True), flag, mask, rows_f, al_f, ex_f)
        _stops(lay, P, off, V, lam, mask, flag, u, i, lead, w, nw, C, rows_f, al_f, ex_f, stop_f)
    else:
        stop_f[:] = stop_l
    K.turn_one(dk, stop_f, stop_l, E, M, Es, Ms)


@nb.njit(cache=True, nogil=True)
def _stops(lay, P, off, V, lam, mask, flag, u, i, lead, w, nw, C, rows, allowed, extras, stop):
    nbx = lay.n_boxes
    for r in range(stop.shape[0]):
        al = allowed[r]
        e = np.int64(extras[r])
        best = -1.0
        for b in range(nbx):
            if not (al >> b) & 1:
                continue
            s = np.int64(rows[r, b])
            if e == 0:
                v = C[b, lay.box_vidx[b, s]]
            else:  # an extra bonus shifts every box alike
                g, x = _next(lay, mask, flag, u, i, b, s)
                v = _dot(P, off, g, lead - x - e, w, nw) + lam * (x + e + V[g])
            if v > best:
                best = v
        stop[r] = best


@nb.njit(cache=True, nogil=True)
def mixed_work(ctx, lay, dk):
    """Scratch arrays of :func:`mixed_plan`."""
    n_rolls = ctx.table.shape[0]
    nbx = lay.n_boxes
    nk = dk.add.shape[0]
    return (
        np.zeros((nbx, lay.box_vals.shape[1])),
        np.empty((n_rolls, nbx), dtype=np.int16),
        np.empty(n_rolls, dtype=np.int64),
        np.empty(n_rolls, dtype=np.int16),
        np.empty((n_rolls, nbx), dtype=np.int16),
        np.empty(n_rolls, dtype=np.int64),
        np.empty(n_rolls, dtype=np.int16),
        np.empty(n_rolls),
        np.empty(n_rolls),
        np.empty(nk),
        np.empty(dk.n_small),
        np.zeros((dk.rerolls + 1, nk)),
        np.zeros((dk.rerolls + 1, dk.n_small)),
    )


@nb.njit(cache=True, nogil=True)
def mixed_keeps(
    ctx, lay, dk, P, off, V, lam, masks, flags, uppers, rolls, stage, leads, W, nws, temperature, unif, out
):
    """Keeps for a batch, each game g played for sum_k W[g, k] P(points >= leads[g] + k), k < nws[g]
    (see :func:`mixed_plan`); stage (B,) rerolls left. Games with the same state and the same
    single target share one plan (sorted by state, then target). temperature > 0 (percentage
    points): each keep is drawn with probability proportional to exp(100 x value / temperature)
    with the uniform unif[g, 1], as the solver's softmax over its values."""
    work = mixed_work(ctx, lay, dk)
    stop_f, stop_l, Es, Ms = work[7], work[8], work[11], work[12]
    rr = dk.rerolls
    vals = np.empty(dk.sub_keep.shape[0])
    order = np.argsort((masks * 2 + flags) * 65536 + uppers * 1024 + (leads + 512))
    last_key = np.int64(-1)
    last_lead = np.int64(-(1 << 40))
    for g in order:
        mask = masks[g]
        flag = 1 if flags[g] else 0
        u = min(np.int64(uppers[g]), lay.threshold)
        key = (mask * 2 + flag) * 65536 + u
        single = nws[g] == 1 and W[g, 0] == 1.0
        if not (single and key == last_key and leads[g] == last_lead):
            mixed_plan(ctx, lay, dk, P, off, V, lam, mask, flag, u, leads[g], W[g], nws[g], work)
            last_key = key if single else np.int64(-1)
            last_lead = leads[g]
        j = stage[g]
        st = stop_f if j == rr else stop_l
        r = rolls[g]
        if temperature > 0.0:
            lo = dk.sub_ptr[r]
            n = dk.sub_ptr[r + 1] - lo
            for a in range(n - 1):  # the last sub-keep is the whole roll: stop
                vals[a] = 100.0 * Es[j, dk.sub_keep[lo + a]]
            vals[n - 1] = 100.0 * st[r]
            out[g] = dk.sub_keep[lo + K.softmax_pick(vals, n, temperature, unif[g, 1])]
        else:
            out[g] = K.keep_arg_one(dk, Es, Ms, j, st, r)


@nb.njit(cache=True, nogil=True)
def mixed_boxes(
    lay, P, off, V, lam, masks, flags, uppers, options, allowed, extras, leads, W, nws, temperature, unif, out
):
    """Box choices for a batch (weights and temperature as :func:`mixed_keeps`): the first strict
    maximum in sheet order, the solver's box rule."""
    nbx = lay.n_boxes
    vals = np.empty(nbx)
    which = np.empty(nbx, dtype=np.int64)
    for g in range(masks.shape[0]):
        mask = masks[g]
        flag = 1 if flags[g] else 0
        u = min(np.int64(uppers[g]), lay.threshold)
        i = np.int64(lay.slot[lay.umask_of[mask], u])
        best = -1.0
        arg = -1
        n = 0
        for b in range(nbx):
            if not (allowed[g] >> b) & 1:
                continue
            gi, x = _next(lay, mask, flag, u, i, b, np.int64(options[g, b]))
            v = _dot(P, off, gi, leads[g] - x - np.int64(extras[g]), W[g], nws[g]) + lam * (x + V[gi])
            vals[n] = 100.0 * v
            which[n] = b
            n += 1
            if v > best:
                best = v
                arg = b
        out[g] = which[K.softmax_pick(vals, n, temperature, unif[g, 1])] if temperature > 0.0 else arg


@nb.njit(cache=True, nogil=True)
def best_final_weights(lay, P, off, masks, flags, uppers, points, W, lo, nws):
    """The distribution of the best final score among opponents, each playing on from its state
    (masks, flags, uppers (B, S') with its points on the sheet) with P(points still to come >= y)
    the vectors of table P (the "ev" table: EV-optimal play), independently of each other:
    writes W[g, k] = P(best final = lo[g] + k), k < nws[g], with cells of mass below 1e-12 trimmed
    from both ends (they are too small to change a decision)."""
    n_opp = masks.shape[1]
    width = W.shape[1]
    for g in range(masks.shape[0]):
        a = np.int64(-(1 << 40))
        z = np.int64(-(1 << 40))
        for j in range(n_opp):
            u = min(np.int64(uppers[g, j]), lay.threshold)
            f = 1 if flags[g, j] else 0
            s = lay.base[masks[g, j] * lay.n_flags + f] + lay.slot[lay.umask_of[masks[g, j]], u]
            a = max(a, np.int64(points[g, j]))
            z = max(z, np.int64(points[g, j]) + off[s + 1] - off[s] - 1)
        n = min(z - a + 1, width)
        prev = 0.0
        for k in range(n):
            # P(best <= a + k) = product over opponents of P(points_j + Y_j <= a + k)
            cdf = 1.0
            for j in range(n_opp):
                u = min(np.int64(uppers[g, j]), lay.threshold)
                f = 1 if flags[g, j] else 0
                s = lay.base[masks[g, j] * lay.n_flags + f] + lay.slot[lay.umask_of[masks[g, j]], u]
                y = a + k + 1 - np.int64(points[g, j])  # P(Y >= y) is the chance of passing a + k
                cdf *= 1.0 - _value(P, off, np.int64(0), s, y)
            W[g, k] = cdf - prev
            prev = cdf
        if n < width:
            W[g, n:] = 0.0
        k0 = 0
        while k0 < n - 1 and W[g, k0] < 1e-12:
            k0 += 1
        k1 = n
        while k1 > k0 + 1 and W[g, k1 - 1] < 1e-12:
            k1 -= 1
        for k in range(k1 - k0):
            W[g, k] = W[g, k0 + k]
        for k in range(k1 - k0, n):
            W[g, k] = 0.0
        lo[g] = a + k0
        nws[g] = k1 - k0


# ---------------------------------------------------------------------------------------------
# the exact evaluation of target play: every state at every target its points so far leave


@nb.njit(cache=True, nogil=True)
def _one_value(P, off, V, lam, g, t0, x):
    """:func:`_dot` with the single weight 1 at target t0 in state g, plus lam x (x + V[g]) (x the
    points the option adds): the value :func:`mixed_plan` and :func:`mixed_boxes` give one option
    of a single-target bot, the same operations in the same order."""
    o = off[g]
    acc = 0.0
    if t0 < 0:
        acc += 1.0
    elif t0 < off[g + 1] - o:
        acc += 1.0 * np.float64(P[o + t0])
    return acc + lam * (x + V[g])


@nb.njit(cache=True, nogil=True)
def _one_values(P, off, V, lam, g, t0, x, c):
    """c[i] = :func:`_one_value` (P, off, V, lam, g, t0 + i, x) for i < len(c), the same operations
    (1, the entry or 0, plus lam x (x + V[g])) in three loops LLVM vectorises."""
    o = off[g]
    n = off[g + 1] - o
    w = lam * (x + V[g])
    L = c.shape[0]
    i1 = min(L, max(0, -t0))  # targets below 0: 1
    for i in range(i1):
        c[i] = 1.0 + w
    i2 = min(L, max(i1, n - t0))
    base = o + t0
    for i in range(i1, i2):
        c[i] = np.float64(P[base + i]) + w
    for i in range(i2, L):  # past the vector: 0
        c[i] = 0.0 + w


@nb.njit(cache=True, nogil=True)
def live_cells(D, woff, live, jlo, jhi):
    """The first and last non-zero cell jlo, jhi (inclusive) of each live state's score window
    (states ``live``, layer-local, windows D[woff[s]:woff[s + 1]]); -1, -2 for none."""
    for q in range(live.shape[0]):
        s = live[q]
        a = woff[s]
        n = woff[s + 1] - a
        jlo[q] = -1
        jhi[q] = -2
        for j in range(n):
            if D[a + j] != 0.0:
                jlo[q] = j
                break
        for j in range(n - 1, -1, -1):
            if D[a + j] != 0.0:
                jhi[q] = j
                break


@nb.njit(cache=True, nogil=True)
def _box_chain(C, qs, bs, acc, arg, ca, cb, first):
    """acc[i], arg[i] = the first strict maximum of (acc[i], arg[i]) (-1, -1 if first) and C[qs[t], i]
    (its outcome bs[t]) for t in order, i in [ca, cb): the running best stays in registers and each column
    is stored once (see :func:`harness.exact.kernels.solver._chain`)."""
    for i in range(ca, cb):
        v = -1.0 if first else acc[i]
        a = np.int64(-1) if first else arg[i]
        for t in range(len(qs)):
            x = C[qs[t], i]
            better = x > v
            v = x if better else v
            a = bs[t] if better else a
        acc[i] = v
        arg[i] = a


@nb.njit(cache=True, nogil=True)
def _roll_classes(rows, al, ex, first, table):
    """first[r] = the first roll with the same options as roll r (the same allowed boxes, each
    scoring the same), r itself if none, -1 for a roll with an extra bonus: rolls with the same
    options have the same stop values and box. table: scratch, longer than twice the rolls."""
    n_rolls, nbx = rows.shape
    size = table.shape[0]
    for h in range(size):
        table[h] = -1
    for r in range(n_rolls):
        if ex[r] != 0:
            first[r] = -1
            continue
        h = np.uint64(al[r])
        for b in range(nbx):
            if (al[r] >> b) & 1:
                h = h * np.uint64(1000003) + np.uint64(rows[r, b] + 1)
        slot = np.int64(h % np.uint64(size))
        first[r] = r
        while table[slot] >= 0:
            o = table[slot]
            same = al[o] == al[r]
            for b in range(nbx):
                if same and (al[r] >> b) & 1 and rows[o, b] != rows[r, b]:
                    same = False
            if same:
                first[r] = o
                break
            slot = (slot + 1) % size
        if first[r] == r:
            table[slot] = r


@nb.njit(cache=True, nogil=True)
def _free_stops(lay, oc, C, crow, rows, al, first, st, bx, ca, cb, cand, codes):
    """Stop values st[:, ca:cb] of a single-target bot, and the outcome it writes bx[:, ca:cb] (its
    code, :class:`harness.exact.kernels.solver.Outcomes`: the box and its score), for the rolls without an
    extra bonus of one sheet (rows, al; ``first`` from :func:`_roll_classes`) at columns whose option
    values C[:, ca:cb] hold per (open box, score): the box is the first strict maximum in sheet
    order, as the bot's :func:`_stops` and :func:`mixed_boxes`. A roll with the options of an
    earlier one copies its stops. The boxes are taken four at a time (:func:`_box_chain`; a short
    block repeats its first box, which cannot win twice); cand, codes (NB,) int64 scratch."""
    nbx = lay.n_boxes
    for r in range(st.shape[0]):
        f = first[r]
        if f < 0:
            continue
        if f != r:
            sf, bf, sr, br = st[f], bx[f], st[r], bx[r]
            for i in range(ca, cb):
                sr[i] = sf[i]
                br[i] = bf[i]
            continue
        n = 0
        for b in range(nbx):
            if (al[r] >> b) & 1:
                v = lay.box_vidx[b, np.int64(rows[r, b])]
                cand[n] = crow[b] + v
                codes[n] = oc.off[b] + v
                n += 1
        if n == 0:
            for i in range(ca, cb):
                st[r, i] = -1.0
                bx[r, i] = -1
        for t in range(0, n, 4):
            t1 = t + 1 if t + 1 < n else t
            t2 = t + 2 if t + 2 < n else t
            t3 = t + 3 if t + 3 < n else t
            _box_chain(
                C,
                (cand[t], cand[t1], cand[t2], cand[t3]),
                (codes[t], codes[t1], codes[t2], codes[t3]),
                st[r],
                bx[r],
                ca,
                cb,
                t == 0,
            )


@nb.njit(cache=True, nogil=True)
def _extra_stops(lay, oc, P, off, V, lam, mask, flag, u, i_slot, lead0, rows, al, ex, st, bx, c0, L):
    """:func:`_free_stops` for the rolls with an extra bonus (a few) of one state, targets lead0 + i
    at columns c0 + i, i < L: the stop value scores the bonus in the expected-score tie-break (the
    bot's stop values) and the box is chosen without it (the bot's box choice); bx holds its
    outcome code with the extra bonus."""
    nbx = lay.n_boxes
    for r in range(st.shape[0]):
        e = np.int64(ex[r])
        if e == 0:
            continue
        for i in range(L):  # an extra bonus shifts every box alike
            best = -1.0
            best_box = -1.0
            arg = -1
            for b in range(nbx):
                if not (al[r] >> b) & 1:
                    continue
                g2, x = _next(lay, mask, flag, u, i_slot, b, np.int64(rows[r, b]))
                v = _one_value(P, off, V, lam, g2, lead0 + i - x - e, x + e)
                if v > best:
                    best = v
                v = _one_value(P, off, V, lam, g2, lead0 + i - x - e, x)
                if v > best_box:
                    best_box = v
                    arg = oc.off[b] + oc.vidx[b, rows[r, b]] + oc.half
            st[r, c0 + i] = best
            bx[r, c0 + i] = arg


@nb.njit(cache=True, nogil=True)
def _tally(fin, code, outp, row0, c0, nu):
    """outp[row0 + i, code[r, c0 + i]] += fin[r, c0 + i] for every final roll r, i < nu: each row's
    sums in roll order. fin and code are read row by row: blocks of columns (as
    :func:`harness.exact.kernels.solver.add_outcomes` takes them) were slower here, where a row of fin is
    up to ``TARGET_COLUMNS`` long."""
    for r in range(fin.shape[0]):
        for i in range(nu):
            m = fin[r, c0 + i]
            if m != 0.0:
                outp[row0 + i, code[r, c0 + i]] += m


# target_outcomes works out the turns of several states at once, up to this many (state, target)
# columns side by side: the keep lattice and the reroll pushes do not depend on the state, and
# :func:`harness.exact.kernels.solver.turn_args` is fastest on wide rows (benchmarks/BENCHMARKS.md,
# "Exact evaluation")
TARGET_COLUMNS = 256


@nb.njit(cache=True, nogil=True)
def _state_at(q, st_mask, st_flag, st_u, st_slot, c_lo, c_n):
    """(mask, flag, upper subtotal, slot, number of targets, first target) of state q of a list."""
    return (st_mask[q], st_flag[q], np.int64(st_u[q]), np.int64(st_slot[q]), np.int64(c_n[q]), np.int64(c_lo[q]))


@nb.njit(cache=True, nogil=True)
def _state_sheet(ctx, lay, mask, flag, rows_l, al_l, ex_l, rows_f, al_f, ex_f):
    """The sheet's scores of every roll (later rolls; first roll for servida) for (mask, flag)."""
    score_sheet(ctx, np.bool_(False), flag, mask, rows_l, al_l, ex_l)
    if lay.servida:
        score_sheet(ctx, np.bool_(True), flag, mask, rows_f, al_f, ex_f)


@nb.njit(cache=True, nogil=True)
def target_outcomes(ctx, lay, dk, oc, table, play, states, lo, hi, outp):
    """Turn outcome distributions of a single-target bot (:meth:`Player.keeps` / :meth:`Player.boxes`
    with one target and weight 1, its blunder as the solver bot's) for entries lo..hi-1 of a list:
    entry q, a state (mask st_mask[q], flag st_flag[q], upper subtotal st_u[q] at slot st_slot[q]),
    played for each target c_lo[q] + i, i < c_n[q], into outp[row0[q] + i, o] (rows start at zero).
    A state may come as several entries, one per run of targets (:func:`mass_runs`).

    The arguments come in tuples: ``table`` (P, off) the target table (each state's vector of
    probabilities in P from off[g]), ``play`` (V, lam, temperature, blunder) the bot's mixed values
    and its play, ``states`` (st_mask, st_flag, st_u, st_slot, c_lo, c_n, row0) the list.

    A target below 0 plays as -1 (every option is worth 1: only the expected score decides) and one
    past the state's vector as its length (every option is worth 0): the caller folds targets into
    that range. The targets play the part of the solver's upper slots: option values per target
    (:func:`_one_value`), stop values and the box argmax (as its outcome code) over (rolls,
    targets) arrays (:func:`_free_stops`, :func:`_extra_stops`), then the solver's turn over (keeps, targets)
    arrays: at temperature 0 :func:`~harness.exact.kernels.solver.turn_args` (every stage's keep of every
    roll and target, the bot's :func:`~harness.exact.kernels.solver.keep_arg_one` to the last tie), with
    a temperature :func:`~harness.exact.kernels.solver.turn_values` and each roll's softmax; the turn's
    mass is pushed through the keeps and the box choice as
    :func:`harness.exact.kernels.solver.forward_items` does.
    Consecutive states share these arrays, up to ``TARGET_COLUMNS`` columns (a state with more
    targets alone): each column is worked out as if alone, so the outcomes do not depend on the
    grouping. temperature > 0 (percentage points): softmax over 100 x value, as the bot's.
    """
    P, off = table
    V, lam, temperature, blunder = play
    st_mask, st_flag, st_u, st_slot, c_lo, c_n, row0 = states
    n_rolls = ctx.table.shape[0]
    n_keeps = dk.add.shape[0]
    ns = dk.n_small
    rr = dk.rerolls
    nbx = lay.n_boxes
    F = lay.n_flags
    soft = temperature > 0.0
    crow = np.zeros(nbx, dtype=np.int64)
    n_cand = 0
    for b in range(nbx):
        crow[b] = n_cand
        n_cand += lay.box_nvals[b]
    lmax = TARGET_COLUMNS
    for q in range(lo, hi):
        lmax = max(lmax, c_n[q])
    rows_l, al_l, ex_l, rows_f, al_f, ex_f = score_buffers(n_rolls, nbx)
    cbuf = np.empty(max(n_cand, 1) * lmax)
    sfbuf = np.empty(n_rolls * lmax)
    slbuf = np.empty(n_rolls * lmax)
    bfbuf = np.empty(n_rolls * lmax, dtype=np.int32)  # outcome codes
    blbuf = np.empty(n_rolls * lmax, dtype=np.int32)
    ebuf = np.empty(n_keeps * lmax)
    mbuf = np.empty(ns * lmax)
    abuf = np.empty(ns * lmax, dtype=np.int32)
    argbuf = np.empty(rr * n_rolls * lmax, dtype=np.int32)
    esbuf = np.zeros((rr + 1) * n_keeps * lmax if soft else 0)
    msbuf = np.zeros((rr + 1) * ns * lmax if soft else 0)
    massbuf = np.empty(n_rolls * lmax)
    ffbuf = np.empty(n_rolls * lmax)
    flbuf = np.empty(n_rolls * lmax)
    kmbuf = np.empty(n_keeps * lmax)
    vals = np.empty(max(dk.sub_keep.shape[0], nbx))
    col = np.empty(hi - lo + 1, dtype=np.int64)
    cand = np.empty(nbx, dtype=np.int64)
    codes = np.empty(nbx, dtype=np.int64)
    first_l = np.empty(n_rolls, dtype=np.int64)
    first_f = np.empty(n_rolls, dtype=np.int64)
    table = np.empty(4 * n_rolls, dtype=np.int64)
    q0 = lo
    while q0 < hi:
        # the group: states q0..q1-1, state q in columns col[q - q0] .. col[q - q0 + 1] - 1
        W = np.int64(c_n[q0])
        q1 = q0 + 1
        while q1 < hi and W + c_n[q1] <= TARGET_COLUMNS:
            W += c_n[q1]
            q1 += 1
        col[0] = 0
        for q in range(q0, q1):
            col[q - q0 + 1] = col[q - q0] + c_n[q]
        C = cbuf[: max(n_cand, 1) * W].reshape((max(n_cand, 1), W))
        stop_l = slbuf[: n_rolls * W].reshape((n_rolls, W))
        box_l = blbuf[: n_rolls * W].reshape((n_rolls, W))
        if lay.servida:
            stop_f = sfbuf[: n_rolls * W].reshape((n_rolls, W))
            box_f = bfbuf[: n_rolls * W].reshape((n_rolls, W))
        else:
            stop_f, box_f = stop_l, box_l
        # option values per state, stop values per run of states on one sheet
        run = q0
        for q in range(q0, q1 + 1):
            if q == q1 or st_mask[q] * F + st_flag[q] != st_mask[run] * F + st_flag[run]:
                ca, cb = col[run - q0], col[q - q0]
                _free_stops(lay, oc, C, crow, rows_l, al_l, first_l, stop_l, box_l, ca, cb, cand, codes)
                if lay.servida:
                    _free_stops(lay, oc, C, crow, rows_f, al_f, first_f, stop_f, box_f, ca, cb, cand, codes)
                run = q
            if q == q1:
                break
            mask, flag, u, i_slot, L, lead0 = _state_at(q, st_mask, st_flag, st_u, st_slot, c_lo, c_n)
            c0 = col[q - q0]
            if run == q:
                _state_sheet(ctx, lay, mask, flag, rows_l, al_l, ex_l, rows_f, al_f, ex_f)
                _roll_classes(rows_l, al_l, ex_l, first_l, table)
                if lay.servida:
                    _roll_classes(rows_f, al_f, ex_f, first_f, table)
            for b in range(nbx):
                if (mask >> b) & 1:
                    continue
                for v in range(lay.box_nvals[b]):
                    g2, x = _next(lay, mask, flag, u, i_slot, b, lay.box_vals[b, v])
                    _one_values(P, off, V, lam, g2, lead0 - x, x, C[crow[b] + v, c0 : c0 + L])
            _extra_stops(
                lay, oc, P, off, V, lam, mask, flag, u, i_slot, lead0, rows_l, al_l, ex_l, stop_l, box_l, c0, L
            )
            if lay.servida:
                _extra_stops(
                    lay, oc, P, off, V, lam, mask, flag, u, i_slot, lead0, rows_f, al_f, ex_f, stop_f, box_f, c0, L
                )
        E = ebuf[: n_keeps * W].reshape((n_keeps, W))
        M = mbuf[: ns * W].reshape((ns, W))
        Es = esbuf[: (rr + 1) * n_keeps * W].reshape((rr + 1, n_keeps, W)) if soft else esbuf.reshape((0, 0, 0))
        Ms = msbuf[: (rr + 1) * ns * W].reshape((rr + 1, ns, W)) if soft else msbuf.reshape((0, 0, 0))
        args = argbuf[: rr * n_rolls * W].reshape((rr, n_rolls, W))
        if soft:
            K.turn_values(dk, W, stop_f, stop_l, E, M, Es, Ms)
        else:
            K.turn_args(dk, W, stop_f, stop_l, E, M, abuf[: ns * W].reshape((ns, W)), args)
        # the turn: every roll's mass through the keeps of each stage (as forward_items)
        mass = massbuf[: n_rolls * W].reshape((n_rolls, W))
        # the rolls that stop, by the roll they stop on (the first roll's apart under servida, where
        # it scores differently)
        fin_l = flbuf[: n_rolls * W].reshape((n_rolls, W))
        fin_f = ffbuf[: n_rolls * W].reshape((n_rolls, W)) if lay.servida else fin_l
        km = kmbuf[: n_keeps * W].reshape((n_keeps, W))
        for r in range(n_rolls):
            for i in range(W):
                mass[r, i] = dk.roll_prob[r]
                fin_f[r, i] = 0.0
                fin_l[r, i] = 0.0
        for j in range(rr, -1, -1):
            fin = fin_f if j == rr else fin_l
            if j == 0:  # no reroll left: every roll stops
                for r in range(n_rolls):
                    for i in range(W):
                        fin[r, i] += mass[r, i]
                break
            st = stop_f if j == rr else stop_l
            for k in range(n_keeps):
                for i in range(W):
                    km[k, i] = 0.0
            if not soft and blunder == 0.0:
                # each (roll, target) moves its whole mass to its keep, without branches: a stop lands
                # in the roll's own keep, which no other roll has and no reroll reads, and goes to fin
                # from there (adding the 0.0 of the other rolls changes no sum)
                for r in range(n_rolls):
                    ar = args[j - 1, r]
                    mr = mass[r]
                    for i in range(W):
                        km[ar[i], i] += mr[i]
                for r in range(n_rolls):
                    kr = dk.roll_as_keep[r]
                    for i in range(W):
                        fin[r, i] += km[kr, i]
                        km[kr, i] = 0.0
                K.reroll(dk, km, mass, W)
                continue
            for r in range(n_rolls):
                kr = dk.roll_as_keep[r]
                slo = dk.sub_ptr[r]
                n = dk.sub_ptr[r + 1] - slo
                for i in range(W):
                    m = mass[r, i]
                    if m == 0.0:
                        continue
                    if soft:
                        for a in range(n - 1):  # the last sub-keep is the whole roll: stop
                            vals[a] = 100.0 * Es[j, dk.sub_keep[slo + a], i]
                        vals[n - 1] = 100.0 * st[r, i]
                        top = vals[0]
                        for a in range(1, n):
                            top = max(top, vals[a])
                        tot = 0.0
                        for a in range(n):
                            vals[a] = np.exp((vals[a] - top) / temperature)
                            tot += vals[a]
                        for a in range(n):
                            p = (1.0 - blunder) * (vals[a] / tot) + blunder / n
                            k = dk.sub_keep[slo + a]
                            if k == kr:
                                fin[r, i] += m * p
                            else:
                                km[k, i] += m * p
                        continue
                    a = args[j - 1, r, i]
                    for t in range(n):  # the blunder: every sub-keep alike
                        k = dk.sub_keep[slo + t]
                        p = blunder / n + (1.0 - blunder if k == a else 0.0)
                        if k == kr:
                            fin[r, i] += m * p
                        else:
                            km[k, i] += m * p
            K.reroll(dk, km, mass, W)
        # the box: Player.boxes' choice (the first strict maximum, or the softmax of the values), the
        # blunder's uniform allowed box
        if not soft and blunder == 0.0:
            # each (roll, column)'s outcome is in box_l (box_f: the first roll's under servida); the
            # group's states in consecutive rows (as the caller gives them) are one tally
            run = q0
            for q in range(q0, q1 + 1):
                if q < q1 and row0[q] - row0[run] == col[q - q0] - col[run - q0]:
                    continue
                ca, cb = col[run - q0], col[q - q0]
                _tally(fin_l, box_l, outp, row0[run], ca, cb - ca)
                if lay.servida:
                    _tally(fin_f, box_f, outp, row0[run], ca, cb - ca)
                run = q
            q0 = q1
            continue
        last_sheet = np.int64(-1)
        for q in range(q0, q1):
            mask, flag, u, i_slot, L, lead0 = _state_at(q, st_mask, st_flag, st_u, st_slot, c_lo, c_n)
            c0 = col[q - q0]
            if mask * F + flag != last_sheet:
                _state_sheet(ctx, lay, mask, flag, rows_l, al_l, ex_l, rows_f, al_f, ex_f)
                last_sheet = mask * F + flag
            for fi in range(2 if lay.servida else 1):
                fin = fin_f if fi == 1 else fin_l
                srv = lay.servida and fi == 1
                rows = rows_f if srv else rows_l
                al = al_f if srv else al_l
                ex = ex_f if srv else ex_l
                bx = box_f if srv else box_l
                for r in range(n_rolls):
                    e = np.int64(ex[r])
                    half = oc.half if e > 0 else 0
                    for i in range(L):
                        m = fin[r, c0 + i]
                        if m == 0.0:
                            continue
                        arg = bx[r, c0 + i]
                        row = row0[q] + i
                        n = 0
                        for b in range(nbx):
                            if not (al[r] >> b) & 1:
                                continue
                            if soft:
                                s = np.int64(rows[r, b])
                                if e == 0:
                                    v = C[crow[b] + lay.box_vidx[b, s], c0 + i]
                                else:
                                    g2, x = _next(lay, mask, flag, u, i_slot, b, s)
                                    v = _one_value(P, off, V, lam, g2, lead0 + i - x - e, x)
                                vals[n] = 100.0 * v
                            n += 1
                        tot = 0.0
                        if soft:
                            top = vals[0]
                            for a in range(1, n):
                                top = max(top, vals[a])
                            for a in range(n):
                                vals[a] = np.exp((vals[a] - top) / temperature)
                                tot += vals[a]
                        a = 0
                        for b in range(nbx):
                            if not (al[r] >> b) & 1:
                                continue
                            o = oc.off[b] + oc.vidx[b, rows[r, b]] + half
                            if soft:
                                p = (1.0 - blunder) * (vals[a] / tot) + blunder / n
                            else:
                                p = blunder / n + (1.0 - blunder if o == arg else 0.0)
                            a += 1
                            outp[row, o] += m * p
        q0 = q1


@nb.njit(cache=True, nogil=True)
def target_push(
    t,
    nthreads,
    lay,
    oc,
    off,
    target,
    run_shift,
    live,
    jlo,
    jhi,
    st_mask,
    st_flag,
    st_u,
    st_slot,
    start,
    c_lo,
    row0,
    outp,
    wlo,
    woff,
    D,
    start2,
    P2,
    wlo2,
    woff2,
    D2,
):
    """Move the probability of every live (state, score) cell of a chunk along the outcomes of the
    target its points leave (target - (score - run_shift), folded into [-1, vector length] as
    :func:`target_outcomes` was asked): next layer's P2 and score windows D2, thread t writing the
    successors g2 with g2 % nthreads == t (each sum in the sources' order, whatever the threads).
    The outcomes' masses are :func:`target_mass`'s."""
    n_out = outp.shape[1]
    mine = np.empty(n_out, dtype=np.int64)  # the state's outcomes whose successor is this thread's
    succ = np.empty(n_out, dtype=np.int64)
    adds = np.empty(n_out, dtype=np.int64)
    for q in range(live.shape[0]):
        loc = live[q]
        mask = st_mask[q]
        flag = st_flag[q]
        u = np.int64(st_u[q])
        i_slot = np.int64(st_slot[q])
        n_vec = off[start + loc + 1] - off[start + loc]
        n_mine = 0
        for o in range(n_out):
            if (mask >> oc.o_box[o]) & 1:  # a box already written: never an outcome here
                continue
            g2, add, cross = K.successor(lay, oc, mask, flag, u, i_slot, o)
            if g2 % nthreads == t:
                mine[n_mine] = o
                succ[n_mine] = g2 - start2
                adds[n_mine] = add
                n_mine += 1
        for j in range(jlo[q], jhi[q] + 1):
            p0 = D[woff[loc] + j]
            if p0 == 0.0:
                continue
            s = wlo[loc] + j
            row = target_row(target, run_shift, s, n_vec, row0[q], c_lo[q])
            for a in range(n_mine):
                p = outp[row, mine[a]]
                if p == 0.0:
                    continue
                l2 = succ[a]
                w = p * p0
                P2[l2] += w
                cell = s + adds[a] - wlo2[l2]
                n2 = woff2[l2 + 1] - woff2[l2]
                D2[woff2[l2] + min(cell, n2 - 1)] += w


@nb.njit(cache=True, nogil=True)
def successor_marks(lay, oc, st_mask, st_flag, st_u, st_slot, start2, marks):
    """marks[g2 - start2] = True for every next-layer state g2 an outcome of the given states leads
    to: the states :func:`target_push` may add to (a block's partial copy of the next layer holds
    only their score windows). An outcome whose successor is not in the next layer is one the
    rules never allow there (forced order's other boxes): it carries no probability."""
    n2 = marks.shape[0]
    for q in range(st_mask.shape[0]):
        mask = st_mask[q]
        for o in range(oc.o_box.shape[0]):
            if (mask >> oc.o_box[o]) & 1:
                continue
            g2, add, cross = K.successor(lay, oc, mask, st_flag[q], np.int64(st_u[q]), np.int64(st_slot[q]), o)
            if 0 <= g2 - start2 < n2:
                marks[g2 - start2] = True


@nb.njit(cache=True, nogil=True)
def target_row(target, run_shift, s, n_vec, row0, c_lo):
    """The (state, target) row of :func:`target_outcomes` of a cell whose running total is s: the
    target its points leave, folded into [-1, n_vec] (where the choices no longer change)."""
    tt = target - (s - run_shift)
    c = -1 if tt < 0 else (n_vec if tt >= n_vec else tt)
    return row0 + c - c_lo


@nb.njit(cache=True, nogil=True)
def row_mass(off, target, run_shift, live, jlo, jhi, start, c_lo, row0, wlo, woff, D, m):
    """m[row] = the probability of each (state, target) row of a chunk: the sum, in score order, of
    the live cells :func:`target_row` folds into it (m has a slot for every row; set here)."""
    for row in range(m.shape[0]):
        m[row] = 0.0
    for q in range(live.shape[0]):
        loc = live[q]
        n_vec = off[start + loc + 1] - off[start + loc]
        for j in range(jlo[q], jhi[q] + 1):
            m[target_row(target, run_shift, wlo[loc] + j, n_vec, row0[q], c_lo[q])] += D[woff[loc] + j]


@nb.njit(cache=True, nogil=True)
def mass_runs(m, c_lo, c_n, row0, run_q, run_lo, run_n, run_row):
    """The runs of consecutive (state, target) rows of a chunk with probability (m, from
    :func:`row_mass`): run k is state run_q[k]'s targets run_lo[k] .. run_lo[k] + run_n[k] - 1, in
    rows run_row[k] onwards. Rows without carry none to push, so :func:`target_outcomes` need not
    work them out (their outcomes stay 0 and are never read). The run arrays have room for every
    row; returns the number of runs."""
    n_runs = 0
    for q in range(c_n.shape[0]):
        i = 0
        while i < c_n[q]:
            if m[row0[q] + i] == 0.0:
                i += 1
                continue
            i0 = i
            while i < c_n[q] and m[row0[q] + i] != 0.0:
                i += 1
            run_q[n_runs] = q
            run_lo[n_runs] = c_lo[q] + i0
            run_n[n_runs] = i - i0
            run_row[n_runs] = row0[q] + i0
            n_runs += 1
    return n_runs


@nb.njit(cache=True, nogil=True)
def target_mass(lay, oc, st_u, c_n, row0, outp, m, vec, pbonus):
    """Add to vec[o] the probability of each turn outcome o of a chunk's live (state, score) cells,
    and to pbonus[0] the probability of crossing the upper bonus, on one thread: each (state,
    target) row's mass m (:func:`row_mass`, the cells folded into it as :func:`target_push` folds
    them) times its outcomes, the rows in order, so the sums do not depend on the threads that
    pushed the chunk."""
    n_out = outp.shape[1]
    T = lay.threshold
    for q in range(c_n.shape[0]):
        u = np.int64(st_u[q])
        for row in range(row0[q], row0[q] + c_n[q]):
            w0 = m[row]
            if w0 == 0.0:
                continue
            for o in range(n_out):
                p = outp[row, o]
                if p == 0.0:
                    continue
                w = p * w0
                vec[o] += w
                if lay.is_upper[oc.o_box[o]] and u < T and u + oc.o_pts[o] >= T:
                    pbonus[0] += w
