"""numba kernels of the exact evaluation of solitaire bots (:mod:`harness.exact.evaluate`).

The forward pass of :func:`harness.exact.forward.forward_pass` needs, for every live state of a chunk, the
distribution of its turn's outcome (box, points, extra bonus) under the bot's policy:
:func:`policy_outcomes` pushes the probability of the first roll through the rerolls (each keep of
the policy, deterministic or a distribution over sub-keeps) and the box choice, once per distinct
policy row. The rest are the pieces a built-in bot needs to give its policy for a batch of states:
the score rows of each sheet (:func:`sheet_scores`) and the solver bot's keeps and boxes with
temperature and blunder (:func:`solver_policy`), computed from the very kernels and in the very
order of arithmetic of the bot's own decisions (:mod:`harness.exact.kernels.solver`), so that ties are
the bot's; its softmax probabilities are the bot's ratios of exponentials, each exponential taken
once per state and keep rather than once per roll, by :mod:`harness.exact.kernels.rows`'s exp (the
same bits on every machine; within one unit in the last place of the C library's, which the bot's
play draws with): equal to rounding, ~1e-16.
"""

from __future__ import annotations

from harness.util.jit import nb
import numpy as np

from harness.game.scoring import score_sheet
from harness.exact.kernels.rows import (
    LANES,
    exp_ieee,
    row_add,
    row_add_scaled,
    row_copy,
    row_exp_div,
    row_fill,
    row_mul,
    row_mul_add,
    soft_roll,
)
from harness.exact.kernels.solver import stop_values, successor, turn_codes, turn_values, upper_values


@nb.njit(cache=True, nogil=True)
def sheet_scores(ctx, masks, flags, servida, options, allowed, extras):
    """options (U, 2, R, NB) int16, allowed (U, 2, R) int64, extras (U, 2, R) int16 of every sheet
    (mask, flag) (index 1: the first roll). Without servida the first roll scores like any other: copied."""
    last_mask = np.int64(-1)
    last_flag = False
    no, yes = np.bool_(False), np.bool_(True)  # not literals: one specialisation of score_sheet
    zero, one = np.int64(0), np.int64(1)  # (and of _copy_row)
    for g in range(masks.shape[0]):
        mask = masks[g]
        flag = flags[g]
        if g > 0 and mask == last_mask and flag == last_flag:
            for fi in range(2):
                _copy_row(options, allowed, extras, g - 1, fi, g, fi)
            continue
        fl = np.int64(1) if flag else np.int64(0)  # the solver's kernels pass it as an int: one specialisation
        score_sheet(ctx, no, fl, mask, options[g, 0], allowed[g, 0], extras[g, 0])
        if servida:
            score_sheet(ctx, yes, fl, mask, options[g, 1], allowed[g, 1], extras[g, 1])
        else:
            _copy_row(options, allowed, extras, g, zero, g, one)
        last_mask = mask
        last_flag = flag


@nb.njit(cache=True, nogil=True)
def _copy_row(options, allowed, extras, g, fi, h, fj):
    """Sheet g's score rows of roll kind fi to sheet h, kind fj: element loops, as numba's
    broadcasting set-item takes seconds to compile."""
    for r in range(options.shape[2]):
        allowed[h, fj, r] = allowed[g, fi, r]
        extras[h, fj, r] = extras[g, fi, r]
        for b in range(options.shape[3]):
            options[h, fj, r, b] = options[g, fi, r, b]


#: Kinds of a policy's keep and box arrays for :func:`policy_outcomes`.
DET, PROB, VALUES = 0, 1, 2
#: A roll's total softmax weight, taken against a value of the whole state rather than the roll's
#: best, must lie in (TINY, HUGE) (far from exp's underflow near e^-708 and overflow near e^709);
#: a roll outside is taken against its own best value, as the bot does
TINY = 1e-250
HUGE = 1e250
#: States whose softmax keeps are worked out side by side (a row of :mod:`harness.exact.kernels.rows`)
SOFT_GROUP = LANES
#: States of one sheet whose softmax boxes are worked out side by side
SOFT_LANES = 64


@nb.njit(cache=True, nogil=True)
def _up_sums(dk, s):
    """s[k] += the sum of s over every keep holding k (k < n_small; s lives on whole rolls): the
    superset sums of the keep lattice, one face at a time."""
    for f in range(6):
        for k in range(dk.n_small - 1, -1, -1):
            s[k] += s[dk.add[k, f]]


@nb.njit(cache=True, nogil=True)
def _keep_stops(dk, keep_kind, keep_idx, keep_f, gk, blunder, mass, fin, km, v):
    """The keeps' part of a turn under keep row gk of a DET or PROB policy: fin[fi, r] the
    probability that the turn stops with roll r (fi = 1: on its first roll); mass, km, v are
    scratch. See :func:`policy_outcomes`; the blunder's uniform sub-keep goes through the keep
    lattice's superset sums (:func:`_up_sums`)."""
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
        if blunder > 0.0 and keep_kind == DET:
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
def _largest(a, g, j):
    """max(a[g, j, :]) through four running maxima (one chain of maxima waits on each compare: four
    overlap). The same number as one chain, the maximum of a set, but for a zero's sign; v less
    either zero differs at most in a zero's sign, whose exponential is 1 either way, so every
    weight exp((v - max) / T) is the same."""
    n = a.shape[2]
    t0 = a[g, j, 0]
    t1, t2, t3 = t0, t0, t0
    k = 0
    while k + 4 <= n:
        t0 = max(t0, a[g, j, k])
        t1 = max(t1, a[g, j, k + 1])
        t2 = max(t2, a[g, j, k + 2])
        t3 = max(t3, a[g, j, k + 3])
        k += 4
    while k < n:
        t0 = max(t0, a[g, j, k])
        k += 1
    return max(max(t0, t1), max(t2, t3))


@nb.njit(cache=True, nogil=True)
def _soft_stops(dk, keep_f, keep_row, g0, n, temperature, blunder, fin_all, X, Z, S, U, KM, MASS, FIN):
    """The keeps' part of a turn for states g0..g0+n-1 of a VALUES policy (a softmax over each
    roll's sub-keeps, mixed with the blunder's uniform sub-keep): fin_all[fi, r, g] (state-minor,
    so that each (fi, r) is one row of the states side by side, here and in :func:`_soft_boxes`) as
    :func:`_keep_stops`. The states sit side by side in (keeps, LANES) scratch arrays (FIN: (2 x
    rolls, LANES), where each roll stops), so every step but the exponentials' arguments is a
    whole-row operation of :mod:`harness.exact.kernels.rows`, each lane's arithmetic the one-state
    loop's; lanes past n carry harmless numbers (weights 1) and are never read out. Without a
    blunder (U all zeros) U's sums are skipped: a keep's mass X S + 0 is X S to the bit (X, S >= 0).

    One weight per keep, exp((v - the stage's largest value) / T) (the bot takes them per roll
    against the roll's best: the same ratios), LANES at once (:func:`harness.exact.kernels.rows.row_exp_div`);
    a roll's total weight is the sum over its sub-keeps (sub-multiset sums of the keep lattice,
    one face at a time) and a keep's mass the sum over the rolls holding it of their mass over
    their total (superset sums): about 6 operations a keep instead of the 4,368 (roll, sub-keep)
    pairs. A roll whose total leaves (TINY, HUGE) is taken against its own best, as the bot does.
    """
    n_rolls = MASS.shape[0]
    n_keeps = dk.add.shape[0]
    ns = dk.n_small
    rr = dk.rerolls
    sixth = 1.0 / 6.0
    for r in range(n_rolls):
        row_fill(MASS, r, dk.roll_prob[r])  # every lane: those past n carry harmless numbers
        row_fill(FIN, r, 0.0)  # FIN[fi * n_rolls + r]: fin_all[fi, r, g] of lane g - g0
        row_fill(FIN, n_rolls + r, 0.0)
    lanes = (np.int64(1) << n) - 1
    keep = 1.0 - blunder
    GK = np.empty(LANES, dtype=np.int64)  # each lane's keep row and its stage's largest value
    TOP = np.empty(LANES)
    for j in range(rr, -1, -1):
        fi = 1 if j == rr else 0
        if j == 0:  # no reroll left: every roll stops
            for r in range(n_rolls):
                row_add(FIN, fi * n_rolls + r, MASS, r)
            break
        for i in range(n):
            GK[i] = keep_row[g0 + i]
            TOP[i] = _largest(keep_f, GK[i], j - 1)
        for k in range(n_keeps):  # a row at a time (its lanes read from n states' rows: stores stay in one row)
            for i in range(n):
                X[k, i] = keep_f[GK[i], j - 1, k] - TOP[i]
            for i in range(n, LANES):
                X[k, i] = 0.0  # weight 1
        for k in range(n_keeps):
            row_exp_div(X, k, 0, temperature)
        for k in range(n_keeps):
            row_copy(Z, k, X, k)
        for k in range(ns):  # (a whole roll's S and U are written by soft_roll below; U is read only with a blunder)
            row_fill(S, k, 0.0)
            if blunder > 0.0:
                row_fill(U, k, 0.0)
        for f in range(6):  # Z[k]: the weight of k's sub-keeps (a whole roll's: its total)
            for k in range(n_keeps):
                q = dk.rem[k, f]
                if q >= 0:
                    row_add(Z, k, Z, q)
        far = False
        for r in range(n_rolls):  # U[kr] = m blunder / nsub; where TINY < tot < HUGE: S[kr] = m q, FIN += m X q + U
            kr = dk.roll_as_keep[r]
            nsub = dk.sub_ptr[r + 1] - dk.sub_ptr[r]
            bad = soft_roll(MASS, r, Z, X, kr, U, S, FIN, fi * n_rolls + r, blunder / nsub, keep, TINY, HUGE)
            far |= (bad & lanes) != 0
        for f in range(6):  # superset sums: S[k] (U[k]) the mass over the total of the rolls holding k
            for k in range(ns - 1, -1, -1):
                a = dk.add[k, f]
                row_add(S, k, S, a)
                if blunder > 0.0:
                    row_add(U, k, U, a)
        for k in range(n_keeps):
            if k >= ns:
                row_fill(KM, k, 0.0)
            elif blunder > 0.0:
                row_mul_add(KM, X, S, U, k)
            else:
                row_mul(KM, X, S, k)
        if far:  # rolls too far from the stage's best: against their own best, as the bot does
            for r in range(n_rolls):
                kr = dk.roll_as_keep[r]
                lo = dk.sub_ptr[r]
                nsub = dk.sub_ptr[r + 1] - lo
                for i in range(n):
                    if TINY < Z[kr, i] < HUGE:
                        continue
                    vals = keep_f[keep_row[g0 + i], j - 1]
                    m = MASS[r, i]
                    FIN[fi * n_rolls + r, i] += U[kr, i]
                    best = vals[dk.sub_keep[lo]]
                    for t in range(lo + 1, lo + nsub):
                        best = max(best, vals[dk.sub_keep[t]])
                    tot = 0.0
                    for t in range(lo, lo + nsub):
                        tot += exp_ieee((vals[dk.sub_keep[t]] - best) / temperature)
                    q = (1.0 - blunder) / tot
                    for t in range(lo, lo + nsub):
                        a = dk.sub_keep[t]
                        p = exp_ieee((vals[a] - best) / temperature) * q
                        if a == kr:
                            FIN[fi * n_rolls + r, i] += m * p
                        else:
                            KM[a, i] += m * p
        # rerolled dice arrive one at a time, each face with probability 1/6 (the solver's reroll, by rows)
        for k in range(ns):
            for f in range(6):
                row_add_scaled(KM, dk.add[k, f], KM, k, sixth)
        for r in range(n_rolls):
            row_copy(MASS, r, KM, dk.roll_as_keep[r])
    for fi in range(2):
        for r in range(n_rolls):
            for i in range(n):
                fin_all[fi, r, g0 + i] = FIN[fi * n_rolls + r, i]


@nb.njit(cache=True, nogil=True)
def _sheet_codes(oc, options, allowed, extras, sh, codes, n_al, half):
    """Each roll's allowed boxes of sheet ``sh`` as outcome codes (box, score): codes[fi, r, :n_al[fi, r]],
    half[fi, r] the offset of the codes with an extra bonus (0 without one); returns the mask of
    every box some roll may be written in."""
    any_al = np.int64(0)
    for fi in range(2):
        for r in range(codes.shape[1]):
            al = allowed[sh, fi, r]
            any_al |= al
            n = 0
            for b in range(codes.shape[2]):
                if (al >> b) & 1:
                    codes[fi, r, n] = oc.off[b] + oc.vidx[b, options[sh, fi, r, b]]
                    n += 1
            n_al[fi, r] = n
            half[fi, r] = oc.half if extras[sh, fi, r] > 0 else 0
    return any_al


@nb.njit(cache=True, nogil=True)
def _box_ref(oc, vb, fin0, fin1, codes):
    """The value of the state a softmax of its boxes is taken against: the first looked up (the
    first roll with mass, fin0 the later rolls' and fin1 the first roll's, and its first allowed box)."""
    r0 = 0
    while fin0[r0] == 0.0 and fin1[r0] == 0.0:
        r0 += 1
    c0 = codes[0 if fin0[r0] != 0.0 else 1, r0, 0]
    return vb[oc.o_box[c0], oc.o_pts[c0]]


@nb.njit(cache=True, nogil=True)
def _box_weights(oc, vb, fin0, fin1, codes, any_al, temperature, zc):
    """A state's softmax weight of each (open box, score) code, zc[c] = exp((value - ref) / T), against
    one value of the state (:func:`_box_ref`). Codes of boxes no roll may take are not written."""
    width = vb.shape[1]
    ref = _box_ref(oc, vb, fin0, fin1, codes)
    for c in range(oc.half):
        b = oc.o_box[c]
        if (any_al >> b) & 1 and oc.o_pts[c] < width:
            zc[c] = exp_ieee((vb[b, oc.o_pts[c]] - ref) / temperature)


@nb.njit(cache=True, nogil=True)
def _own_best_boxes(oc, vb, cr, nc, m, keep, u, temperature, out, hf):
    """A roll's softmax over its nc allowed (box, score) codes cr taken against the roll's own best
    value, as the bot does (its total weight against the state's reference left (TINY, HUGE)):
    out[code + hf] += mass m x (keep = 1 - blunder) x weight / total + u (the blunder's share)."""
    best = -np.inf
    for j in range(nc):
        best = max(best, vb[oc.o_box[cr[j]], oc.o_pts[cr[j]]])
    tot = 0.0
    for j in range(nc):
        tot += exp_ieee((vb[oc.o_box[cr[j]], oc.o_pts[cr[j]]] - best) / temperature)
    q = m * (keep / tot)
    for j in range(nc):
        w = exp_ieee((vb[oc.o_box[cr[j]], oc.o_pts[cr[j]]] - best) / temperature)
        out[cr[j] + hf] += w * q + u


@nb.njit(cache=True, nogil=True)
def _soft_boxes(
    oc,
    box_v,
    box_row,
    rows,
    g0,
    g1,
    fin_all,
    merge,
    codes,
    n_al,
    half,
    any_al,
    temperature,
    blunder,
    outp,
    ZC,
    FIN,
    TOT,
    Q,
    UU,
    OUT,
):
    """The box part of a turn for states g0..g1-1 of one sheet under a VALUES policy (keeps and boxes
    drawn by softmax, ``fin_all`` where each roll stops, from :func:`_soft_stops`): outp rows as
    :func:`policy_outcomes` writes them, the states side by side in (codes or rolls, lanes) scratch
    so that every step but the exponentials runs over contiguous lanes. Each state's arithmetic is
    the one-state loop's, in its order, so the rows are equal to the bit."""
    n = g1 - g0
    n_rolls = fin_all.shape[1]
    n_out = outp.shape[1]
    width = box_v.shape[2]
    for r in range(n_rolls):  # each (fi, r) a row of the states side by side, as fin_all holds them
        for i in range(n):
            a1 = fin_all[1, r, g0 + i]
            FIN[0, r, i] = fin_all[0, r, g0 + i] + a1 if merge else fin_all[0, r, g0 + i]
            FIN[1, r, i] = a1
    for i in range(n):
        g = g0 + i
        vb = box_v[box_row[g]]
        ref = _box_ref(oc, vb, FIN[0, :, i], FIN[1, :, i], codes)
        for c in range(oc.half):  # the weights' arguments, taken LANES states at a time below (as _box_weights)
            b = oc.o_box[c]
            if (any_al >> b) & 1 and oc.o_pts[c] < width:
                ZC[c, i] = vb[b, oc.o_pts[c]] - ref
        for o in range(n_out):
            OUT[o, i] = 0.0
    nl = (n + LANES - 1) // LANES * LANES
    for c in range(oc.half):
        if (any_al >> oc.o_box[c]) & 1 and oc.o_pts[c] < width:
            for i in range(n, nl):
                ZC[c, i] = 0.0  # lanes past n: weight 1, never read
            for c0 in range(0, nl, LANES):
                row_exp_div(ZC, c, c0, temperature)
    keep = 1.0 - blunder
    for fi in range(1 if merge else 2):
        for r in range(n_rolls):
            hf = half[fi, r]
            nc = n_al[fi, r]
            for i in range(n):
                TOT[i] = 0.0
            for j in range(nc):
                c = codes[fi, r, j]
                for i in range(n):
                    TOT[i] += ZC[c, i]
            far = 0
            ub = blunder / nc if nc > 0 else 0.0
            for i in range(n):
                m = FIN[fi, r, i]
                tot = TOT[i]
                ok = TINY < tot < HUGE
                UU[i] = m * ub
                # NaN: the lane adds nothing here (no mass, or a total too far from the reference)
                Q[i] = m * (keep / tot) if ok and m != 0.0 else np.nan
                far += 1 if m != 0.0 and not ok else 0
            for j in range(nc):
                c = codes[fi, r, j]
                for i in range(n):
                    OUT[c + hf, i] += ZC[c, i] * Q[i] + UU[i] if Q[i] == Q[i] else 0.0
            if far == 0:
                continue
            cr = codes[fi, r]
            for i in range(n):  # too far from the reference: against the roll's own best, as the bot does
                m = FIN[fi, r, i]
                if m == 0.0 or TINY < TOT[i] < HUGE:
                    continue
                _own_best_boxes(oc, box_v[box_row[g0 + i]], cr, nc, m, keep, UU[i], temperature, OUT[:, i], hf)
    for i in range(n):
        row = rows[g0 + i]
        for o in range(n_out):
            outp[row, o] = OUT[o, i]


@nb.njit(cache=True, nogil=True)
def policy_outcomes(
    dk,
    oc,
    options,
    allowed,
    extras,
    same_first,
    sheet,
    keep_kind,
    keep_idx,
    keep_f,
    keep_row,
    box_kind,
    box_idx,
    box_p,
    box_v,
    box_row,
    temperature,
    blunder,
    rows,
    outp,
):
    """Turn outcome distribution of every state g under a bot's policy: outp[rows[g], o] = P(outcome o).

    options (U, 2, R, NB), allowed / extras (U, 2, R) are per sheet, sheet (B,) each state's row
    there; ``same_first``: the first roll scores like the later ones (no servida). Keeps (row
    keep_row[g]): keep_kind DET, keep_idx (N, rr, R) the keep; PROB, keep_f (N, rr, S) each
    sub-keep's probability; VALUES, keep_f (N, rr, K) each keep's value (a whole roll's:
    stopping), drawn by softmax at ``temperature``. Boxes (row box_row[g]; a second axis of 1
    serves the first roll and the later ones): DET, box_idx (N, 2 or 1, R); PROB, box_p (N, 2 or
    1, R, NB); VALUES, box_v (N, NB, W) the value of writing score s in box b at [b, s], drawn by
    softmax. DET and VALUES choices are mixed with a uniform sub-keep / allowed box at the
    ``blunder`` rate (see :class:`harness.game.strategy.Policy`). outp's rows start at zero.

    The keeps' part of a turn (where each roll stops, :func:`_keep_stops`) depends only on the keep
    row: it is worked out once for a run of states with the same row; a state with the keep row,
    box row and sheet of the state before it has its outcome row copied; when the first roll
    scores and chooses like the later ones, a roll's box is chosen once for both. A softmax takes
    each exponential once per keep (or per box and score) against one value of the state (its
    largest keep value; its first box value) rather than once per roll against the roll's best: the
    same ratios, equal to the last bits (a roll whose total weight comes out near exp's underflow
    or overflow that way, outside (TINY, HUGE), is taken against its own best, as the bot does).
    Under a softmax of both keeps and boxes the states are worked out side by side, to the bit as
    one at a time: the keeps SOFT_GROUP states at a time (:func:`_soft_stops`), the boxes up to
    SOFT_LANES states of one sheet at a time (:func:`_soft_boxes`).
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
    v = np.empty(n_keeps)
    if keep_kind == VALUES:  # every state's stops at once, SOFT_GROUP states side by side
        fin_all = np.empty((2, n_rolls, rows.shape[0]))
        G = SOFT_GROUP
        X = np.empty((n_keeps, G))
        Z = np.empty((n_keeps, G))
        S = np.empty((n_keeps, G))
        U = np.empty((n_keeps, G))
        KM = np.empty((n_keeps, G))
        MASS = np.empty((n_rolls, G))
        FIN = np.empty((2 * n_rolls, G))
        for g0 in range(0, rows.shape[0], G):
            _soft_stops(
                dk,
                keep_f,
                keep_row,
                g0,
                min(G, rows.shape[0] - g0),
                temperature,
                blunder,
                fin_all,
                X,
                Z,
                S,
                U,
                KM,
                MASS,
                FIN,
            )
    else:
        fin_all = np.empty((2, n_rolls, 1))
    # per sheet: each roll's allowed boxes as outcome codes (box, score) and their number
    codes = np.empty((2, n_rolls, nbx), dtype=np.int64)
    n_al = np.empty((2, n_rolls), dtype=np.int64)
    half = np.empty((2, n_rolls), dtype=np.int64)
    zc = np.empty(oc.half)  # softmax weight of each (box, score) code
    if keep_kind == VALUES and box_kind == VALUES:  # the states of one sheet side by side
        L = SOFT_LANES
        ZC = np.empty((oc.half, L))
        FIN = np.empty((2, n_rolls, L))
        TOT = np.empty(L)
        Q = np.empty(L)
        UU = np.empty(L)
        OUT = np.empty((n_out, L))
        g0 = np.int64(0)  # not the literal 0: a literal compiles _soft_boxes a second time
        while g0 < rows.shape[0]:
            sh = sheet[g0]
            g1 = g0 + 1
            while g1 < rows.shape[0] and sheet[g1] == sh and g1 - g0 < L:
                g1 += 1
            any_al = _sheet_codes(oc, options, allowed, extras, sh, codes, n_al, half)
            _soft_boxes(
                oc,
                box_v,
                box_row,
                rows,
                g0,
                g1,
                fin_all,
                merge,
                codes,
                n_al,
                half,
                any_al,
                temperature,
                blunder,
                outp,
                ZC,
                FIN,
                TOT,
                Q,
                UU,
                OUT,
            )
            g0 = g1
        return
    any_al = np.int64(0)
    last_k = -1
    last_sh = -1
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
        if keep_kind == VALUES or gk != last_k:
            last_k = gk
            if keep_kind == VALUES:
                for fi in range(2):
                    for r in range(n_rolls):
                        fin[fi, r] = fin_all[fi, r, g]
            else:
                _keep_stops(dk, keep_kind, keep_idx, keep_f, gk, blunder, mass, fin, km, v)
            if merge:
                for r in range(n_rolls):
                    fin[0, r] += fin[1, r]
        if sh != last_sh:
            last_sh = sh
            any_al = _sheet_codes(oc, options, allowed, extras, sh, codes, n_al, half)
        if box_kind == VALUES:
            vb = box_v[gb]
            _box_weights(oc, vb, fin[0], fin[1], codes, any_al, temperature, zc)
        for fi in range(1 if merge else 2):
            fb = fi if nfb == 2 else 0
            for r in range(n_rolls):
                m = fin[fi, r]
                if m == 0.0:
                    continue
                hf = half[fi, r]
                n = n_al[fi, r]
                cr = codes[fi, r]
                if box_kind == PROB:
                    i = 0
                    for b in range(nbx):
                        if (allowed[sh, fi, r] >> b) & 1:
                            p = box_p[gb, fb, r, b]
                            if p != 0.0:
                                outp[row, cr[i] + hf] += m * p
                            i += 1
                    continue
                if box_kind == DET:
                    a = box_idx[gb, fb, r]
                    c = oc.off[a] + oc.vidx[a, options[sh, fi, r, a]]
                    if blunder > 0.0:
                        u = m * (blunder / n)
                        for i in range(n):
                            outp[row, cr[i] + hf] += u
                        m *= 1.0 - blunder
                    outp[row, c + hf] += m
                    continue
                tot = 0.0
                for i in range(n):
                    tot += zc[cr[i]]
                u = m * (blunder / n)
                if TINY < tot < HUGE:
                    q = m * ((1.0 - blunder) / tot)
                    for i in range(n):
                        outp[row, cr[i] + hf] += zc[cr[i]] * q + u
                    continue
                # too far from the reference: against the roll's own best, as the bot does
                _own_best_boxes(oc, vb, cr, n, m, 1.0 - blunder, u, temperature, outp[row], hf)


def solver_policy(ctx, lay, dk, V, masks, flags, uppers, soft, codes, keep_vals, boxes, box_vals):
    """The solver bot's keeps and boxes for every state, stage and roll, from the solver's own item
    kernels run over each run of states of one sheet (their upper slots side by side, as the
    forward pass of :func:`harness.exact.kernels.solver.forward_items` does): the values of the bot's
    per-state plan bit for bit, so ties break as the bot's.

    Not ``soft`` (temperature 0): codes (B, rr, R) uint8 the T=0 keep as its position among the
    roll's sub-keeps (:func:`harness.exact.kernels.solver.turn_codes`, the bot's keep_arg_one to the last
    tie), boxes (B, F, R) the first strict maximum in sheet order (the argmax of
    :func:`harness.exact.kernels.solver.stop_values`, :func:`harness.exact.kernels.solver.choose_boxes`'s rule;
    F = 2 with servida, else 1: the first roll scores like any other). ``soft``: the values the
    bot's softmax draws from, keep_vals (B, rr, K) (a keep's E with j rerolls left at row j - 1, a
    whole roll's the stop value, as :func:`harness.exact.kernels.solver.soft_keeps`) and box_vals
    (B, NB, W) the value of writing score s in open box b (score + bonus crossed + V(next state),
    :func:`harness.exact.kernels.solver.choose_boxes`'s) at [b, s] (other entries are never read).

    Two kernels, one a kind (:func:`soft_policy`, :func:`hard_policy`), called from Python: one
    kernel with both branches compiled both (15 s of a first exact evaluation's CPU) where a
    command needs one, or needs the other much later."""
    if soft:
        soft_policy(ctx, lay, dk, V, masks, flags, uppers, keep_vals, box_vals)
    else:
        hard_policy(ctx, lay, dk, V, masks, flags, uppers, codes, boxes)


@nb.njit(cache=True, nogil=True)
def _sheet_run(lay, masks, flags, uppers, g0):
    """The states g0..g1-1 of one sheet (mask, flag), consecutive: (g1, flag, their capped upper
    subtotals, their slots)."""
    n = masks.shape[0]
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
        u = min(np.int64(uppers[g0 + i]), lay.threshold)
        ulist[i] = u
        sl[i] = lay.slot[um, u]
    return g1, flag, ulist, sl


@nb.njit(cache=True, nogil=True)
def _stop_work(ctx):
    """Scratch of :func:`_sheet_stops`: (allowed (R,) int64, rows (R, NB) int16, extras (R,) int16)."""
    n_rolls = ctx.table.shape[0]
    return (
        np.empty(n_rolls, dtype=np.int64),
        np.empty((n_rolls, ctx.n_boxes), dtype=np.int16),
        np.empty(n_rolls, dtype=np.int16),
    )


@nb.njit(cache=True, nogil=True)
def _sheet_stops(ctx, lay, V, mask, flag, ulist, sl, want_box, work):
    """(stop_f, stop_l (R, nu), box_f, box_l (R, nu) int16) of the slots ``sl`` of one sheet:
    :func:`harness.exact.kernels.solver.stop_values` of the later rolls and, with servida, of the
    first (else the same arrays); the boxes only ``want_box``."""
    allowed, rows, extras = work
    n_rolls = ctx.table.shape[0]
    nu = np.int64(ulist.shape[0])
    box_l = np.empty((n_rolls, nu), dtype=np.int16)
    box_f = np.empty((n_rolls, nu), dtype=np.int16) if lay.servida else box_l
    stop_l = np.empty((n_rolls, nu))
    stop_f = np.empty((n_rolls, nu)) if lay.servida else stop_l
    stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, np.bool_(False), allowed, stop_l, box_l, rows, extras, want_box)
    if lay.servida:
        stop_values(
            ctx, lay, V, mask, flag, ulist, nu, sl, np.bool_(True), allowed, stop_f, box_f, rows, extras, want_box
        )
    return stop_f, stop_l, box_f, box_l


@nb.njit(cache=True, nogil=True)
def soft_policy(ctx, lay, dk, V, masks, flags, uppers, keep_vals, box_vals):
    """:func:`solver_policy` with ``soft``: keep_vals and box_vals."""
    n_rolls = ctx.table.shape[0]
    n_keeps = dk.add.shape[0]
    rr = dk.rerolls
    ns = dk.n_small
    nbx = lay.n_boxes
    F = lay.n_flags
    work = _stop_work(ctx)
    n = masks.shape[0]
    g0 = np.int64(0)
    while g0 < n:
        mask = masks[g0]
        g1, flag, ulist, sl = _sheet_run(lay, masks, flags, uppers, g0)
        nu = np.int64(g1 - g0)
        stop_f, stop_l, _, _ = _sheet_stops(ctx, lay, V, mask, flag, ulist, sl, np.bool_(False), work)
        E = np.empty((n_keeps, nu))
        M = np.empty((ns, nu))
        # not zeroed: turn_values writes every stage j >= 1 read below (index 0 is neither written nor read)
        Es = np.empty((rr + 1, n_keeps, nu))
        Ms = np.empty((rr + 1, ns, nu))
        turn_values(dk, nu, stop_f, stop_l, E, M, Es, Ms, True)  # narrow: one sheet's slots
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
        g0 = g1


@nb.njit(cache=True, nogil=True)
def hard_policy(ctx, lay, dk, V, masks, flags, uppers, codes, boxes):
    """:func:`solver_policy` without ``soft``: codes and boxes."""
    n_rolls = ctx.table.shape[0]
    n_keeps = dk.add.shape[0]
    rr = dk.rerolls
    ns = dk.n_small
    work = _stop_work(ctx)
    nf = boxes.shape[1]
    n = masks.shape[0]
    g0 = np.int64(0)  # not the literal 0: a literal compiles turn_codes a second time
    while g0 < n:
        mask = masks[g0]
        g1, flag, ulist, sl = _sheet_run(lay, masks, flags, uppers, g0)
        nu = np.int64(g1 - g0)
        stop_f, stop_l, box_f, box_l = _sheet_stops(ctx, lay, V, mask, flag, ulist, sl, np.bool_(True), work)
        E = np.empty((n_keeps, nu))
        M = np.empty((ns, nu))
        if rr > 0:
            A = np.empty((ns, nu), dtype=np.int32)
            turn_codes(dk, nu, stop_f, stop_l, E, M, A, codes, g0, True)  # narrow, as soft_policy
        for i in range(nu):
            for r in range(n_rolls):
                boxes[g0 + i, 0, r] = box_l[r, i]
                if nf == 2:
                    boxes[g0 + i, 1, r] = box_f[r, i]
        g0 = g1


@nb.njit(cache=True, nogil=True)
def _box_value(lay, wv, nxt, b, s):
    """The solver's value of writing s in open box b (:func:`harness.exact.kernels.solver.choose_boxes`'s
    score + bonus crossed + V(next state)), from :func:`harness.exact.kernels.solver.stop_one`'s tables."""
    if lay.is_upper[b]:
        return wv[lay.wrow[b] + lay.box_vidx[b, s]]
    return float(s) + nxt[2 * b + (1 if s > 0 else 0)]


# ---------------------------------------------------------------------------------------------
# the course of a game (harness.exact.course): a turn's points with the points before it and after it


@nb.njit(cache=True, nogil=True)
def live_slots(lay, item_mask, item_flag, lo, hi, row_of, live, start, P):
    """(item, slot, outcome row) of every live slot (P > 0) of items lo..hi-1 that are ``live``, in
    row order (rows and items as in :func:`harness.exact.kernels.solver.push_part`)."""
    F = lay.n_flags
    n = 0
    for it in range(lo, hi):
        if live[it - lo]:
            off = lay.base[item_mask[it] * F + item_flag[it]] - start
            for i in range(lay.nslot[lay.umask_of[item_mask[it]]]):
                n += P[off + i] != 0.0
    items = np.empty(n, np.int64)
    slots = np.empty(n, np.int64)
    rows = np.empty(n, np.int64)
    k = 0
    for it in range(lo, hi):
        if live[it - lo]:
            off = lay.base[item_mask[it] * F + item_flag[it]] - start
            row = row_of[it - lo]
            for i in range(lay.nslot[lay.umask_of[item_mask[it]]]):
                if P[off + i] != 0.0:
                    items[k], slots[k], rows[k] = it, i, row
                    row += 1
                    k += 1
    return items, slots, rows


@nb.njit(cache=True, nogil=True)
def course_steps(lay, oc, item_mask, item_flag, lo, hi, row_of, live, outp, start, P, wlo, woff, D, J):
    """J[s, x] += P(the state's points so far are s and its turn adds x) over the live slots of
    items lo..hi-1 (rows and windows as in :func:`harness.exact.kernels.solver.push_part`): the joint of
    a layer's running total and the next round's points (bonus crossed and extra bonus counted)."""
    q = np.zeros(J.shape[1])
    items, slots, rows = live_slots(lay, item_mask, item_flag, lo, hi, row_of, live, start, P)
    for n in range(len(items)):
        mask, flag, i = item_mask[items[n]], item_flag[items[n]], slots[n]
        loc = lay.base[mask * lay.n_flags + flag] + i - start
        u = lay.ulist[lay.umask_of[mask], i]
        x_lo = J.shape[1]
        x_hi = -1
        for o in range(outp.shape[1]):
            p = outp[rows[n], o]
            if p != 0.0:
                _, x, _ = successor(lay, oc, mask, flag, u, i, o)
                q[x] += p
                x_lo = min(x_lo, x)
                x_hi = max(x_hi, x)
        a0 = woff[loc]
        s0 = wlo[loc]
        for j in range(woff[loc + 1] - a0):
            w = D[a0 + j]
            if w != 0.0:
                for x in range(x_lo, x_hi + 1):
                    J[s0 + j, x] += w * q[x]
        for x in range(x_lo, x_hi + 1):
            q[x] = 0.0


@nb.njit(cache=True, nogil=True)
def rest_lengths(lay, item_mask, item_flag, lo, hi, start, extra_max, wlen):
    """wlen[state - start] = 1 + the most points the rest of the game can add from each state of
    items lo..hi-1: its open boxes' best scores, an extra bonus each, the upper bonus while it can
    still be crossed."""
    T = lay.threshold
    for t in range(lo, hi):
        mask = item_mask[t]
        um = lay.umask_of[mask]
        off = lay.base[mask * lay.n_flags + item_flag[t]]
        most = 0
        upper_open = False
        for b in range(lay.n_boxes):
            if not (mask >> b) & 1:
                most += lay.box_max[b] + extra_max
                if lay.is_upper[b]:
                    upper_open = True
        for i in range(lay.nslot[um]):
            bonus = lay.bonus if (T > 0 and upper_open and lay.ulist[um, i] < T) else 0
            wlen[off + i - start] = 1 + most + bonus


@nb.njit(cache=True, nogil=True)
def course_rest(lay, oc, item_mask, item_flag, lo, hi, row_of, live, outp, start, P, foff, fbase, R, start2, foff2, R2):
    """R[foff[state] - fbase + t] = P(the rest of the game adds t points | the state) for the live
    slots of items lo..hi-1, from each turn outcome's points and its successor's row of R2 (the next
    layer, windows foff2 from its first state ``start2``). Each state writes its own row."""
    items, slots, rows = live_slots(lay, item_mask, item_flag, lo, hi, row_of, live, start, P)
    for n in range(len(items)):
        mask, flag, i = item_mask[items[n]], item_flag[items[n]], slots[n]
        loc = lay.base[mask * lay.n_flags + flag] + i - start
        u = lay.ulist[lay.umask_of[mask], i]
        f0 = foff[loc] - fbase
        nf = foff[loc + 1] - foff[loc]
        for o in range(outp.shape[1]):
            p = outp[rows[n], o]
            if p == 0.0:
                continue
            g2, x, _ = successor(lay, oc, mask, flag, u, i, o)
            l2 = g2 - start2
            b0 = foff2[l2]
            if x + foff2[l2 + 1] - b0 > nf:
                raise AssertionError("course_rest: a successor's rest outgrows its state's window")
            for t in range(foff2[l2 + 1] - b0):
                R[f0 + x + t] += p * R2[b0 + t]


@nb.njit(cache=True, nogil=True)
def course_outer(lay, item_mask, item_flag, lo, hi, start, P, wlo, woff, D, foff, fbase, R, K):
    """K[s, t] += P(the state, points so far s) P(the rest adds t | the state) over the live states
    of items lo..hi-1: the joint of a layer's running total and the points still to come."""
    every = np.ones(hi - lo, dtype=np.bool_)
    items, slots, _ = live_slots(lay, item_mask, item_flag, lo, hi, np.zeros(hi - lo, np.int64), every, start, P)
    for n in range(len(items)):
        loc = lay.base[item_mask[items[n]] * lay.n_flags + item_flag[items[n]]] + slots[n] - start
        a0 = woff[loc]
        s0 = wlo[loc]
        f0 = foff[loc] - fbase
        nf = foff[loc + 1] - foff[loc]
        for j in range(woff[loc + 1] - a0):
            w = D[a0 + j]
            if w != 0.0:
                for t in range(nf):
                    K[s0 + j, t] += w * R[f0 + t]
