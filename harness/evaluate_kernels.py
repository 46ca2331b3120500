"""numba kernels of the exact evaluation of solitaire bots (:mod:`harness.evaluate`).

The forward pass of :func:`harness.solver.forward_pass` needs, for every live state of a chunk, the
distribution of its turn's outcome (box, points, extra bonus) under the bot's policy:
:func:`policy_outcomes` pushes the probability of the first roll through the rerolls (each keep of
the policy, deterministic or a distribution over sub-keeps) and the box choice, once per distinct
policy row. The rest are the pieces a built-in bot needs to give its policy for a batch of states:
the score rows of each sheet (:func:`sheet_scores`) and the solver bot's keeps and boxes with
temperature and blunder (:func:`solver_policy`), computed from the very kernels and in the very
order of arithmetic of the bot's own decisions (:mod:`harness.solver_kernels`), so that ties are
the bot's; its softmax probabilities are the bot's ratios of exponentials, each exponential taken
once per state and keep rather than once per roll (equal to rounding, ~1e-16).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from harness.scoring import score_sheet
from harness.solver_kernels import stop_values, turn_codes, turn_values, upper_values


@nb.njit(cache=True, nogil=True)
def sheet_scores(ctx, masks, flags, servida, options, allowed, extras):
    """options (U, 2, R, NB) int16, allowed (U, 2, R) int64, extras (U, 2, R) int16 of every sheet
    (mask, flag) (index 1: the first roll). Without servida the first roll scores like any other: copied."""
    last_mask = np.int64(-1)
    last_flag = False
    for g in range(masks.shape[0]):
        mask = masks[g]
        flag = flags[g]
        if g > 0 and mask == last_mask and flag == last_flag:
            options[g] = options[g - 1]
            allowed[g] = allowed[g - 1]
            extras[g] = extras[g - 1]
            continue
        score_sheet(ctx, False, flag, mask, options[g, 0], allowed[g, 0], extras[g, 0])
        if servida:
            score_sheet(ctx, True, flag, mask, options[g, 1], allowed[g, 1], extras[g, 1])
        else:
            options[g, 1] = options[g, 0]
            allowed[g, 1] = allowed[g, 0]
            extras[g, 1] = extras[g, 0]
        last_mask = mask
        last_flag = flag


#: Kinds of a policy's keep and box arrays for :func:`policy_outcomes`.
DET, PROB, VALUES = 0, 1, 2
#: A roll's total softmax weight, taken against a value of the whole state rather than the roll's
#: best, must lie in (TINY, HUGE) (far from exp's underflow near e^-708 and overflow near e^709);
#: a roll outside is taken against its own best value, as the bot does
TINY = 1e-250
HUGE = 1e250


@nb.njit(cache=True, nogil=True)
def _up_sums(dk, s):
    """s[k] += the sum of s over every keep holding k (k < n_small; s lives on whole rolls): the
    superset sums of the keep lattice, one face at a time."""
    for f in range(6):
        for k in range(dk.n_small - 1, -1, -1):
            s[k] += s[dk.add[k, f]]


@nb.njit(cache=True, nogil=True)
def _keep_stops(dk, keep_kind, keep_idx, keep_f, gk, temperature, blunder, mass, fin, km, x, z, s, v):
    """The keeps' part of a turn under keep row gk: fin[fi, r] the probability that the turn stops
    with roll r (fi = 1: on its first roll); mass, km, x, z, s, v are scratch. See :func:`policy_outcomes`.

    A softmax and the blunder's uniform sub-keep go through sums over the keep lattice rather than
    over every (roll, sub-keep) pair: a roll's total weight is the sum of its sub-keeps' weights
    (sub-multiset sums, one face at a time), and a keep's mass the sum over the rolls holding it of
    their mass over their total (superset sums), about 6 operations a keep instead of 4,368 pairs.
    """
    n_rolls = mass.shape[0]
    n_keeps = dk.add.shape[0]
    ns = dk.n_small
    rr = dk.rerolls
    sixth = 1.0 / 6.0
    for r in range(n_rolls):
        mass[r] = dk.roll_prob[r]
        fin[0, r] = 0.0
        fin[1, r] = 0.0
    for j in range(rr, -1, -1):
        fi = 1 if j == rr else 0
        if j == 0:  # no reroll left: every roll stops
            for r in range(n_rolls):
                fin[fi, r] += mass[r]
            break
        for k in range(n_keeps):
            km[k] = 0.0
            s[k] = 0.0
            v[k] = 0.0
        if keep_kind == PROB:
            for r in range(n_rolls):
                m = mass[r]
                if m == 0.0:
                    continue
                kr = dk.roll_as_keep[r]
                for i in range(dk.sub_ptr[r], dk.sub_ptr[r + 1]):
                    p = keep_f[gk, j - 1, i]
                    if p == 0.0:
                        continue
                    a = dk.sub_keep[i]
                    if a == kr:
                        fin[fi, r] += m * p
                    else:
                        km[a] += m * p
        elif keep_kind == DET:
            for r in range(n_rolls):
                m = mass[r]
                if m == 0.0:
                    continue
                kr = dk.roll_as_keep[r]
                a = keep_idx[gk, j - 1, r]
                if blunder > 0.0:
                    n = dk.sub_ptr[r + 1] - dk.sub_ptr[r]
                    v[kr] = m * (blunder / n)  # the uniform sub-keep: spread below
                    fin[fi, r] += v[kr]
                    m *= 1.0 - blunder
                if a == kr:
                    fin[fi, r] += m
                else:
                    km[a] += m
        else:
            vals = keep_f[gk, j - 1]
            top = vals[0]
            for k in range(n_keeps):
                top = max(top, vals[k])
            for k in range(n_keeps):
                x[k] = np.exp((vals[k] - top) / temperature)
                z[k] = x[k]
            for f in range(6):  # z[k]: the weight of k's sub-keeps (a whole roll's: its total)
                for k in range(n_keeps):
                    q = dk.rem[k, f]
                    if q >= 0:
                        z[k] += z[q]
            for r in range(n_rolls):
                m = mass[r]
                if m == 0.0:
                    continue
                kr = dk.roll_as_keep[r]
                lo = dk.sub_ptr[r]
                n = dk.sub_ptr[r + 1] - lo
                tot = z[kr]
                if blunder > 0.0:
                    v[kr] = m * (blunder / n)
                    fin[fi, r] += v[kr]
                if tot > TINY:
                    q = (1.0 - blunder) / tot
                    s[kr] = m * q
                    fin[fi, r] += m * (x[kr] * q)
                    continue
                # far below the state's best: against the roll's own best, as the bot does
                best = vals[dk.sub_keep[lo]]
                for i in range(lo + 1, lo + n):
                    best = max(best, vals[dk.sub_keep[i]])
                tot = 0.0
                for i in range(lo, lo + n):
                    tot += np.exp((vals[dk.sub_keep[i]] - best) / temperature)
                q = (1.0 - blunder) / tot
                for i in range(lo, lo + n):
                    a = dk.sub_keep[i]
                    p = np.exp((vals[a] - best) / temperature) * q
                    if a == kr:
                        fin[fi, r] += m * p
                    else:
                        km[a] += m * p
            _up_sums(dk, s)
            for k in range(ns):
                km[k] += x[k] * s[k]
        if blunder > 0.0 and keep_kind != PROB:
            _up_sums(dk, v)
            for k in range(ns):
                km[k] += v[k]
        # rerolled dice arrive one at a time, each face with probability 1/6
        for k in range(ns):
            for f in range(6):
                km[dk.add[k, f]] += km[k] * sixth
        for r in range(n_rolls):
            mass[r] = km[dk.roll_as_keep[r]]


@nb.njit(cache=True, nogil=True)
def policy_outcomes(dk, oc, options, allowed, extras, same_first, sheet, keep_kind, keep_idx, keep_f, keep_row,
                    box_kind, box_idx, box_p, box_v, box_row, temperature, blunder, rows, outp):
    """Turn outcome distribution of every state g under a bot's policy: outp[rows[g], o] = P(outcome o).

    options (U, 2, R, NB), allowed / extras (U, 2, R) are per sheet, sheet (B,) each state's row
    there; ``same_first``: the first roll scores like the later ones (no servida). Keeps (row
    keep_row[g]): keep_kind DET, keep_idx (N, rr, R) the keep; PROB, keep_f (N, rr, S) each
    sub-keep's probability; VALUES, keep_f (N, rr, K) each keep's value (a whole roll's:
    stopping), drawn by softmax at ``temperature``. Boxes (row box_row[g]; a second axis of 1
    serves the first roll and the later ones): DET, box_idx (N, 2 or 1, R); PROB, box_p (N, 2 or
    1, R, NB); VALUES, box_v (N, NB, W) the value of writing score s in box b at [b, s], drawn by
    softmax. DET and VALUES choices are mixed with a uniform sub-keep / allowed box at the
    ``blunder`` rate (see :class:`harness.strategy.Policy`). outp's rows start at zero.

    The keeps' part of a turn (where each roll stops, :func:`_keep_stops`) depends only on the keep
    row: it is worked out once for a run of states with the same row; a state with the keep row,
    box row and sheet of the state before it has its outcome row copied; when the first roll
    scores and chooses like the later ones, a roll's box is chosen once for both. A softmax takes
    each exponential once per keep (or per box and score) against one value of the state (its
    largest keep value; its first box value) rather than once per roll against the roll's best: the
    same ratios, equal to the last bits (a roll whose total weight comes out near exp's underflow
    or overflow that way, outside (TINY, HUGE), is taken against its own best, as the bot does).
    """
    n_rolls = options.shape[2]
    n_keeps = dk.add.shape[0]
    nbx = options.shape[3]
    n_out = outp.shape[1]
    nfb = box_p.shape[1] if box_kind == PROB else box_idx.shape[1]
    merge = same_first and (box_kind == VALUES or nfb == 1)
    mass = np.empty(n_rolls)
    fin = np.zeros((2, n_rolls))
    km = np.zeros(n_keeps)
    x = np.empty(n_keeps)
    z = np.empty(n_keeps)
    s = np.empty(n_keeps)
    v = np.empty(n_keeps)
    zc = np.empty((box_v.shape[1], box_v.shape[2]))
    have = np.zeros(zc.shape, dtype=np.bool_)
    which = np.empty(nbx, dtype=np.int64)
    last_k = -1
    for g in range(rows.shape[0]):
        gk = keep_row[g]
        gb = box_row[g]
        sh = sheet[g]
        row = rows[g]
        if g > 0 and gk == keep_row[g - 1] and gb == box_row[g - 1] and sh == sheet[g - 1]:
            prev = rows[g - 1]
            for o in range(n_out):
                outp[row, o] = outp[prev, o]
            continue
        if gk != last_k:
            last_k = gk
            _keep_stops(dk, keep_kind, keep_idx, keep_f, gk, temperature, blunder, mass, fin, km, x, z, s, v)
            if merge:
                for r in range(n_rolls):
                    fin[0, r] += fin[1, r]
        ref = np.nan  # the softmax's reference value: the state's first value looked up
        if box_kind == VALUES:
            have[:] = False
        cur = np.int64(-1)
        n = 0
        for fi in range(1 if merge else 2):
            fb = fi if nfb == 2 else 0
            for r in range(n_rolls):
                m = fin[fi, r]
                if m == 0.0:
                    continue
                half = oc.half if extras[sh, fi, r] > 0 else 0
                opt = options[sh, fi, r]
                if box_kind == PROB:
                    for b in range(nbx):
                        p = box_p[gb, fb, r, b]
                        if p != 0.0:
                            outp[row, oc.off[b] + oc.vidx[b, opt[b]] + half] += m * p
                    continue
                if allowed[sh, fi, r] != cur:  # the allowed boxes as a list (most rolls share one)
                    cur = allowed[sh, fi, r]
                    n = 0
                    for b in range(nbx):
                        if (cur >> b) & 1:
                            which[n] = b
                            n += 1
                if box_kind == DET:
                    a = box_idx[gb, fb, r]
                    if blunder > 0.0:
                        u = m * (blunder / n)
                        for i in range(n):
                            b = which[i]
                            outp[row, oc.off[b] + oc.vidx[b, opt[b]] + half] += u
                        m *= 1.0 - blunder
                    outp[row, oc.off[a] + oc.vidx[a, opt[a]] + half] += m
                    continue
                vb = box_v[gb]
                if ref != ref:
                    ref = vb[which[0], opt[which[0]]]
                tot = 0.0
                for i in range(n):
                    b = which[i]
                    sc = opt[b]
                    if not have[b, sc]:
                        zc[b, sc] = np.exp((vb[b, sc] - ref) / temperature)
                        have[b, sc] = True
                    tot += zc[b, sc]
                u = m * (blunder / n)
                if TINY < tot < HUGE:
                    q = m * ((1.0 - blunder) / tot)
                    for i in range(n):
                        b = which[i]
                        outp[row, oc.off[b] + oc.vidx[b, opt[b]] + half] += zc[b, opt[b]] * q + u
                    continue
                # too far from the reference: against the roll's own best, as the bot does
                best = -np.inf
                for i in range(n):
                    best = max(best, vb[which[i], opt[which[i]]])
                tot = 0.0
                for i in range(n):
                    tot += np.exp((vb[which[i], opt[which[i]]] - best) / temperature)
                q = m * ((1.0 - blunder) / tot)
                for i in range(n):
                    b = which[i]
                    outp[row, oc.off[b] + oc.vidx[b, opt[b]] + half] += (
                        np.exp((vb[b, opt[b]] - best) / temperature) * q + u)


@nb.njit(cache=True, nogil=True)
def solver_policy(ctx, lay, dk, V, masks, flags, uppers, soft, codes, keep_vals, boxes, box_vals):
    """The solver bot's keeps and boxes for every state, stage and roll, from the solver's own item
    kernels run over each run of states of one sheet (their upper slots side by side, as the
    forward pass of :func:`harness.solver_kernels.forward_items` does): the values of the bot's
    per-state plan bit for bit, so ties break as the bot's.

    Not ``soft`` (temperature 0): codes (B, rr, R) uint8 the T=0 keep as its position among the
    roll's sub-keeps (:func:`harness.solver_kernels.turn_codes`, the bot's keep_arg_one to the last
    tie), boxes (B, F, R) the first strict maximum in sheet order (the argmax of
    :func:`harness.solver_kernels.stop_values`, :func:`harness.solver_kernels.choose_boxes`'s rule;
    F = 2 with servida, else 1: the first roll scores like any other). ``soft``: the values the
    bot's softmax draws from, keep_vals (B, rr, K) (a keep's E with j rerolls left at row j - 1, a
    whole roll's the stop value, as :func:`harness.solver_kernels.soft_keeps`) and box_vals
    (B, NB, W) the value of writing score s in open box b (score + bonus crossed + V(next state),
    :func:`harness.solver_kernels.choose_boxes`'s) at [b, s] (other entries are never read).
    """
    n_rolls = ctx.table.shape[0]
    n_keeps = dk.add.shape[0]
    rr = dk.rerolls
    ns = dk.n_small
    nbx = lay.n_boxes
    F = lay.n_flags
    T = lay.threshold
    no, yes = np.bool_(False), np.bool_(True)
    row = np.empty(nbx, dtype=np.int16)
    rows = np.empty((n_rolls, nbx), dtype=np.int16)
    extras = np.empty(n_rolls, dtype=np.int16)
    nf = boxes.shape[1]
    none = np.zeros((0, 0, 0))
    n = masks.shape[0]
    g0 = 0
    while g0 < n:
        mask = masks[g0]
        flag = 1 if flags[g0] else 0
        g1 = g0 + 1
        while g1 < n and masks[g1] == mask and (1 if flags[g1] else 0) == flag:
            g1 += 1
        nu = np.int64(g1 - g0)
        um = lay.umask_of[mask]
        ulist = np.empty(nu, dtype=np.int32)
        sl = np.empty(nu, dtype=np.int64)
        for i in range(nu):
            u = min(np.int64(uppers[g0 + i]), T)
            ulist[i] = u
            sl[i] = lay.slot[um, u]
        box_l = np.empty((n_rolls, nu), dtype=np.int16)
        box_f = np.empty((n_rolls, nu), dtype=np.int16) if lay.servida else box_l
        stop_l = np.empty((n_rolls, nu))
        stop_f = np.empty((n_rolls, nu)) if lay.servida else stop_l
        stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, no, row, stop_l, box_l, rows, extras, not soft)
        if lay.servida:
            stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, yes, row, stop_f, box_f, rows, extras, not soft)
        E = np.empty((n_keeps, nu))
        M = np.empty((ns, nu))
        if soft:
            Es = np.zeros((rr + 1, n_keeps, nu))
            Ms = np.zeros((rr + 1, ns, nu))
            turn_values(dk, nu, stop_f, stop_l, E, M, Es, Ms)
            for i in range(nu):
                g = g0 + i
                for j in range(1, rr + 1):
                    st = stop_f if j == rr else stop_l
                    for k in range(ns):
                        keep_vals[g, j - 1, k] = Es[j, k, i]
                    for r in range(n_rolls):
                        keep_vals[g, j - 1, dk.roll_as_keep[r]] = st[r, i]
            W = upper_values(lay, V, mask, flag, ulist, nu)
            for b in range(nbx):
                if (mask >> b) & 1:
                    continue
                m2 = mask | (np.int64(1) << b)
                for v in range(lay.box_nvals[b]):
                    s = lay.box_vals[b, v]
                    if lay.is_upper[b]:
                        w = W[lay.wrow[b] + v]
                        for i in range(nu):
                            box_vals[g0 + i, b, s] = w[i]
                    else:
                        nfl = flag
                        if b == lay.key_box:
                            nfl = 1 if s > 0 else 0
                        b2 = lay.base[m2 * F + nfl]
                        for i in range(nu):
                            box_vals[g0 + i, b, s] = float(s) + V[b2 + sl[i]]
        else:
            if rr > 0:
                A = np.empty((ns, nu), dtype=np.int32)
                turn_codes(dk, nu, stop_f, stop_l, E, M, A, codes, g0)
            for i in range(nu):
                for r in range(n_rolls):
                    boxes[g0 + i, 0, r] = box_l[r, i]
                    if nf == 2:
                        boxes[g0 + i, 1, r] = box_f[r, i]
        g0 = g1


@nb.njit(cache=True, nogil=True)
def _box_value(lay, wv, nxt, b, s):
    """The solver's value of writing s in open box b (:func:`harness.solver_kernels.choose_boxes`'s
    score + bonus crossed + V(next state)), from :func:`harness.solver_kernels.stop_one`'s tables."""
    if lay.is_upper[b]:
        return wv[lay.wrow[b] + lay.box_vidx[b, s]]
    return float(s) + nxt[2 * b + (1 if s > 0 else 0)]
