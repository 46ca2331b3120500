"""numba kernels of the exact solver: value backward induction, the optimal-policy forward pass, bot look-ups.

A *state* is (filled mask, flag, upper subtotal capped at the threshold); states live in one flat
array, ordered by layer (number of filled boxes), and :class:`Layout` maps a state to its index:
``base[mask * n_flags + flag] + slot[umask_of[mask], u]``. Only upper subtotals reachable with the
filled upper boxes have a slot, and once every upper box is filled the subtotal no longer matters
(the bonus is counted when it is crossed), so those masks have a single slot.

The kernels of one (mask, flag) *item* work on all its upper slots at once: arrays are
``(rolls or keeps, nu)`` with the slot index innermost, so every inner loop is over contiguous
memory and LLVM vectorises it. Scores come from :func:`harness.game.scoring.score_options` only.

Within a turn the expectation over a reroll is built one die at a time
(``E(keep) = mean over faces f of E(keep + f)``) and the best sub-keep of a roll from the best
sub-keep of each one-die-smaller keep, which needs ~6 operations per keep instead of the
4,368 (five dice) transition terms of the direct sum. Stop values start from the best scratch (a
zero in any open box) and only visit the boxes a roll scores in.

The bot plans one state at a time (``*_one`` kernels on flat arrays, same arithmetic in the same
order, so its decisions are bit-identical to the forward pass's) and keeps the result in
direct-mapped caches. Kernels are few and flat on purpose: numba re-optimises every callee inside
each caller, so compile time grows with the depth of calls.

Tie rule (deterministic, shared by the solve, the forward pass and the bot): a box wins only if its
value is strictly larger than every earlier box's (sheet order); stopping wins ties against any keep;
among keeps of equal value the larger keep wins, then the one reached by removing the lowest face first.
"""

from __future__ import annotations

from typing import NamedTuple

from harness.util.jit import nb
import numpy as np

from harness.game.scoring import score_sheet
from harness.exact.kernels.rows import LANES, exp_ieee, row_exp_div  # the same bits on every CPU (its docstring)

NEG = -1.0e300
# Constant arguments are written np.bool_(...)/np.int64(...): a bare True/False/1 is typed as a
# literal and numba would compile a separate copy of the callee for each value.


class Layout(NamedTuple):
    """Where each state lives in the flat value array (NB boxes, NU upper sub-masks, F flags).

    base: (2**NB * F,) int64 first index of (mask, flag), -1 if no such state.
    umask_of: (2**NB,) int32 the upper boxes of a mask as a compact sub-mask.
    nslot: (NU,) int32 number of upper-subtotal slots of each upper sub-mask.
    slot: (NU, T+1) int32 slot of each capped subtotal u, -1 if unreachable.
    ulist: (NU, max slots) int32 subtotal of each slot.
    is_upper: (NB,) bool; box_max: (NB,) int32 (for score windows).
    box_vals: (NB, V) int64 every score of each box (box_nvals of them, 0 included);
    box_vidx: (NB, max score + 1) int32 position of a score in box_vals (-1 impossible);
    wrow: (NB,) int32 first row of each upper box in :func:`upper_values` (n_wrows rows).
    """

    base: np.ndarray
    umask_of: np.ndarray
    nslot: np.ndarray
    slot: np.ndarray
    ulist: np.ndarray
    is_upper: np.ndarray
    box_max: np.ndarray
    box_vals: np.ndarray
    box_nvals: np.ndarray
    box_vidx: np.ndarray
    wrow: np.ndarray
    n_wrows: int
    n_flags: int
    full_upper: int
    threshold: int
    bonus: int
    key_box: int
    n_boxes: int
    servida: bool


class DiceK(NamedTuple):
    """Dice tables for the one-die-at-a-time recursions (R rolls, K keeps; keeps sorted by size).

    add: (K, 6) int32 keep + one die of face f (-1 for full keeps); rem: (K, 6) int32 keep minus
    one die of face f (-1 if absent); n_small: keeps with fewer than n dice (indices 0..n_small-1);
    sub_ptr/sub_keep: the sub-keeps of each roll (CSR, from :class:`harness.game.dice.Dice`);
    sub_pos: (R, K) int16 position of a keep among a roll's sub-keeps (-1 if not one); faces: (K, 6)
    int32 the keeps rem[k, f] >= 0 in face order, packed to the front (n_faces (K,) int32 of them).
    """

    roll_prob: np.ndarray
    roll_as_keep: np.ndarray
    add: np.ndarray
    rem: np.ndarray
    sub_ptr: np.ndarray
    sub_keep: np.ndarray
    sub_pos: np.ndarray
    faces: np.ndarray
    n_faces: np.ndarray
    n_small: int
    rerolls: int


class Outcomes(NamedTuple):
    """Encoding of one turn's outcome (box, points, extra) as a small integer o (O outcomes).

    off: (NB,) int32 first code of each box; vidx: (NB, max points + 1) int32 code offset of each
    score of a box (-1 impossible); half: codes with the extra bonus are o + half;
    o_box, o_pts, o_extra: (O,) decode tables.
    """

    off: np.ndarray
    vidx: np.ndarray
    half: int
    o_box: np.ndarray
    o_pts: np.ndarray
    o_extra: np.ndarray


# ---------------------------------------------------------------------------------------------
# one item: stop values and the turn


@nb.njit(cache=True, nogil=True)
def upper_values(lay, V, mask, flag, ulist, nu):
    """W (rows, nu): value of writing each possible score in each open upper box, per slot.

    Row ``lay.wrow[b] + lay.box_vidx[b, s]`` holds ``s + bonus crossed + V(next state)`` for score s
    in upper box b; a turn's stop values only gather these (an upper box has n + 1 scores).
    """
    T = lay.threshold
    F = lay.n_flags
    W = np.empty((lay.n_wrows, nu))
    for b in range(lay.n_boxes):
        if not lay.is_upper[b] or (mask >> b) & 1:
            continue
        m2 = mask | (np.int64(1) << b)
        um2 = lay.umask_of[m2]
        for v in range(lay.box_nvals[b]):
            s = lay.box_vals[b, v]
            nf = flag
            if b == lay.key_box:
                nf = 1 if s > 0 else 0
            b2 = lay.base[m2 * F + nf]
            w = W[lay.wrow[b] + v]
            for i in range(nu):
                u = ulist[i]
                u2 = min(u + s, T)
                add = s + lay.bonus if (u < T and u2 >= T) else s
                w[i] = add + V[b2 + lay.slot[um2, u2]]
    return W


@nb.njit(cache=True, nogil=True)
def stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, first, allowed, stop, box, rows, extras, want_box):
    """Value of stopping with each roll: best allowed box of (score + bonus crossed + V(next)) + extra.

    stop (R, nu) float64 is written for the nu upper subtotals ``ulist``, which are the slots
    ``sl`` (nu,) of the mask (all of them in the solve, the live ones in the forward pass, one when
    the bot plans a single state). rows (R, NB) int16, allowed (R,) int64 and extras (R,) int16 get
    each roll's scores, allowed boxes and extra bonus (:func:`harness.game.scoring.score_sheet`, a
    table at a time). With ``want_box`` also box (R, nu) int16 (argmax: the first strict maximum in
    sheet order). The values do not depend on ``want_box``: both ways take the maximum of the same
    candidate values, each computed as (score + bonus) + V(next) like the bot's box choice. Rows
    are indexed in place, never taken as views: a view in a loop costs two atomic reference counts
    (numba's), which here cost more than the loops' arithmetic.
    """
    n_rolls = ctx.table.shape[0]
    nbx = lay.n_boxes
    F = lay.n_flags
    open_ = ((np.int64(1) << nbx) - 1) & ~mask
    W = upper_values(lay, V, mask, flag, ulist, nu)
    # G[2b + (score > 0)]: V of the next state after lower box b (the flag may follow the score)
    G = np.empty((2 * nbx, nu))
    # Z: the best scratch (a zero in any open box); most rolls score in only a few open boxes
    Z = np.full(nu, NEG)
    dense = sl[0] == 0 and sl[nu - 1] == nu - 1  # slots 0..nu-1: a contiguous read
    for b in range(nbx):
        if not (open_ >> b) & 1:
            continue
        if lay.is_upper[b]:
            wr = lay.wrow[b] + lay.box_vidx[b, 0]
            for i in range(nu):
                if W[wr, i] > Z[i]:
                    Z[i] = W[wr, i]
            continue
        for z in range(2):
            nf = flag
            if b == lay.key_box:
                nf = z
            b2 = lay.base[(mask | (np.int64(1) << b)) * F + nf]
            gr = 2 * b + z
            if dense:
                for i in range(nu):
                    G[gr, i] = V[b2 + i]
            else:
                for i in range(nu):
                    G[gr, i] = V[b2 + sl[i]]
        for i in range(nu):
            if G[2 * b, i] > Z[i]:
                Z[i] = G[2 * b, i]
    score_sheet(ctx, first, flag, mask, rows, allowed, extras)
    for r in range(n_rolls):
        al = allowed[r]
        extra = extras[r]
        if want_box:
            for i in range(nu):
                stop[r, i] = NEG
                box[r, i] = -1
            for b in range(nbx):
                if not (al >> b) & 1:
                    continue
                s = np.int64(rows[r, b])
                if lay.is_upper[b]:
                    wr = lay.wrow[b] + lay.box_vidx[b, s]
                    for i in range(nu):
                        if W[wr, i] > stop[r, i]:
                            stop[r, i] = W[wr, i]
                            box[r, i] = b
                else:
                    fs = float(s)
                    gr = 2 * b + (1 if s > 0 else 0)
                    for i in range(nu):
                        val = fs + G[gr, i]
                        if val > stop[r, i]:
                            stop[r, i] = val
                            box[r, i] = b
        else:
            # free choice (no joker or forced order on this roll): start from the best scratch
            free = al == open_
            for i in range(nu):
                stop[r, i] = Z[i] if free else NEG
            for b in range(nbx):
                if not (al >> b) & 1:
                    continue
                s = np.int64(rows[r, b])
                if free and s == 0:
                    continue
                if lay.is_upper[b]:
                    wr = lay.wrow[b] + lay.box_vidx[b, s]
                    for i in range(nu):
                        if W[wr, i] > stop[r, i]:
                            stop[r, i] = W[wr, i]
                else:
                    fs = float(s)
                    gr = 2 * b + (1 if s > 0 else 0)
                    for i in range(nu):
                        val = fs + G[gr, i]
                        if val > stop[r, i]:
                            stop[r, i] = val
        for i in range(nu):
            stop[r, i] += extra


# From this many slots on, :func:`turn_values` and :func:`turn_args` take each keep's best sub-keep
# in one pass over its faces (:func:`_chain`): 2.6 to 4.2 times faster than the face-by-face loops
# from 96 to 256 slots (`python benchmarks/bench_turns.py`, benchmarks/BENCHMARKS.md "Exact
# evaluation"). Below, the face-by-face loops stay: the one pass was slower there in a trial, its
# vector loop not paying for its overlap checks on short rows.
WIDE = 96


@nb.njit(cache=True, nogil=True)
def _chain(V0, r0, k, M, A, qs, OV, ov, OA, oa, nu):
    """OV[ov], OA[oa] = the first strict maximum, slot by slot, of V0[r0] (keep k) and then M[q]
    (keep A[q]) for q in the tuple qs, in order: the running best stays in registers and each slot
    is stored once, so the loop vectorises (a select written back to the row it read becomes a
    masked store, slow on this machine's AMD cores). With OA empty only the values (A unread).
    Rows are indexed in place, never taken as views (see :func:`stop_values`)."""
    if OA.shape[0] == 0:
        for i in range(nu):
            v = V0[r0, i]
            for q in qs:
                x = M[q, i]
                v = x if x > v else v
            OV[ov, i] = v
        return
    for i in range(nu):
        v = V0[r0, i]
        a = k
        for q in qs:
            x = M[q, i]
            better = x > v
            v = x if better else v
            a = A[q, i] if better else a
        OV[ov, i] = v
        OA[oa, i] = a


@nb.njit(cache=True, nogil=True)
def _best_sub(dk, kk, V0, r0, M, A, OV, ov, OA, oa, nu):
    """:func:`_chain` over the faces of keep kk (``dk.faces``), the tuple of each length its own
    specialisation; V0[r0] the value of keeping kk itself."""
    f = dk.faces
    w = dk.n_faces[kk]
    k = np.int32(kk)
    if w == 0:
        for i in range(nu):
            OV[ov, i] = V0[r0, i]
        if OA.shape[0] > 0:
            for i in range(nu):
                OA[oa, i] = k
    elif w == 1:
        _chain(V0, r0, k, M, A, (f[kk, 0],), OV, ov, OA, oa, nu)
    elif w == 2:
        _chain(V0, r0, k, M, A, (f[kk, 0], f[kk, 1]), OV, ov, OA, oa, nu)
    elif w == 3:
        _chain(V0, r0, k, M, A, (f[kk, 0], f[kk, 1], f[kk, 2]), OV, ov, OA, oa, nu)
    elif w == 4:
        _chain(V0, r0, k, M, A, (f[kk, 0], f[kk, 1], f[kk, 2], f[kk, 3]), OV, ov, OA, oa, nu)
    elif w == 5:
        _chain(V0, r0, k, M, A, (f[kk, 0], f[kk, 1], f[kk, 2], f[kk, 3], f[kk, 4]), OV, ov, OA, oa, nu)
    else:
        _chain(V0, r0, k, M, A, (f[kk, 0], f[kk, 1], f[kk, 2], f[kk, 3], f[kk, 4], f[kk, 5]), OV, ov, OA, oa, nu)


@nb.njit(cache=True, nogil=True)
def _expect(add, ns, E, nu):
    """E[k] = the mean over the faces f of E[add[k, f]] for every keep k < ns, the largest first:
    the expectation over the rerolled dice, one die at a time."""
    sixth = 1.0 / 6.0
    for k in range(ns - 1, -1, -1):
        a0, a1, a2, a3, a4, a5 = add[k, 0], add[k, 1], add[k, 2], add[k, 3], add[k, 4], add[k, 5]
        for i in range(nu):
            E[k, i] = (E[a0, i] + E[a1, i] + E[a2, i] + E[a3, i] + E[a4, i] + E[a5, i]) * sixth


@nb.njit(cache=True, nogil=True)
def turn_values(dk, nu, stop_f, stop_l, E, M, Es, Ms, narrow=None):
    """Optimal value of each first roll from the stop values (first roll / later roll).

    E (K, nu) and M (n_small, nu) are work arrays: E[k] the expected value of keeping k and
    rerolling the rest, M[k] the best E over the sub-keeps of k. Keeping a whole roll r is keep
    ``n_small + r``, so the rows E[n_small:] double as the value of each roll in hand; they hold the
    first-roll values on return. With Es (rr+1, K, nu) and Ms (rr+1, n_small, nu) not empty,
    stage j's E and M (j rerolls left) are saved there for :func:`keep_arg` and the bot. Rows are
    indexed in place, never taken as views (see :func:`stop_values`).
    ``narrow`` (any value but None, given as a constant): the face-by-face loops whatever the
    width, the same comparisons in the same order (so the same values); numba then prunes the
    one-pass branch and never compiles :func:`_best_sub` for the caller (the bot's policies,
    whose slots are one sheet's: fewer than ``WIDE``), seconds of a first evaluation's compiling.
    """
    n_rolls = stop_f.shape[0]
    ns = dk.n_small
    rr = dk.rerolls
    rem = dk.rem
    save = Es.shape[0] > 0
    no_a = np.empty((0, 0), dtype=np.int32)
    # an int64, not the literal 0: _best_sub and _chain then share turn_args' specialisation
    # (a literal argument compiles a function of its own, about 3 s of a first run's CPU)
    zero = np.int64(0)
    first_st = stop_f if rr == 0 else stop_l
    for r in range(n_rolls):
        for i in range(nu):
            E[ns + r, i] = first_st[r, i]
    for j in range(1, rr + 1):
        st = stop_f if j == rr else stop_l
        _expect(dk.add, ns, E, nu)
        for k in range(ns):
            if narrow is None and nu >= WIDE:  # one pass over the faces, as turn_args
                _best_sub(dk, k, E, k, M, no_a, M, k, no_a, zero, nu)
                continue
            for i in range(nu):
                M[k, i] = E[k, i]
            for f in range(6):
                q = rem[k, f]
                if q >= 0:
                    for i in range(nu):
                        m = M[q, i]
                        c = M[k, i]
                        M[k, i] = m if m > c else c
        if save:
            for k in range(E.shape[0]):
                for i in range(nu):
                    Es[j, k, i] = E[k, i]
            for k in range(ns):
                for i in range(nu):
                    Ms[j, k, i] = M[k, i]
        for r in range(n_rolls):
            kr = ns + r
            if narrow is None and nu >= WIDE:
                _best_sub(dk, kr, st, r, M, no_a, E, kr, no_a, zero, nu)
                continue
            for i in range(nu):
                E[kr, i] = st[r, i]
            for f in range(6):
                q = rem[kr, f]
                if q >= 0:
                    for i in range(nu):
                        m = M[q, i]
                        c = E[kr, i]
                        E[kr, i] = m if m > c else c


@nb.njit(cache=True, nogil=True)
def keep_arg(dk, Es, Ms, j, st, r, i):
    """The T=0 keep for roll r, slot i, with j rerolls left, from the saved stage values.

    Tie rule: stopping wins ties; otherwise the first face f (in order 1..6) whose one-die-smaller
    keep reaches the best value, and within a keep the keep itself before its sub-keeps (so among
    equal values the larger keep wins). Returns ``roll_as_keep[r]`` for stop.
    """
    rem = dk.rem
    kr = dk.roll_as_keep[r]
    best = st[r, i]
    k = -1
    for f in range(6):
        q = rem[kr, f]
        if q >= 0 and Ms[j, q, i] > best:
            best = Ms[j, q, i]
            k = q
    if k < 0:
        return kr
    # descend: M[k] is E[k] unless a one-die-smaller keep is strictly better
    while Es[j, k, i] != Ms[j, k, i]:
        m = Ms[j, k, i]
        for f in range(6):
            q = rem[k, f]
            if q >= 0 and Ms[j, q, i] == m:
                k = q
                break
    return k


# ---------------------------------------------------------------------------------------------
# backward induction


@nb.njit(cache=True, nogil=True)
def solve_items(ctx, lay, dk, V, out, item_mask, item_flag, lo, hi, full):
    """Solve items lo..hi-1 of one layer: write out (the same buffer as V) for every upper slot of
    each (mask, flag), reading only V of states with one more box filled (so the items of a layer
    never read each other and threads may split a layer). V is passed read-only so that every
    kernel reads one array type."""
    n_rolls = ctx.table.shape[0]
    n_keeps = dk.add.shape[0]
    no, yes = np.bool_(False), np.bool_(True)
    none = np.zeros((0, 0, 0))
    allowed = np.empty(n_rolls, dtype=np.int64)
    rows = np.empty((n_rolls, lay.n_boxes), dtype=np.int16)
    extras = np.empty(n_rolls, dtype=np.int16)
    for t in range(lo, hi):
        mask = item_mask[t]
        flag = item_flag[t]
        um = lay.umask_of[mask]
        nu = np.int64(lay.nslot[um])
        off = lay.base[mask * lay.n_flags + flag]
        if mask == full:
            for i in range(nu):
                out[off + i] = 0.0
            continue
        ulist = lay.ulist[um]
        sl = np.arange(nu)
        box = np.empty((n_rolls, nu), dtype=np.int16)
        stop_l = np.empty((n_rolls, nu))
        stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, no, allowed, stop_l, box, rows, extras, no)
        if lay.servida:
            stop_f = np.empty((n_rolls, nu))
            stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, yes, allowed, stop_f, box, rows, extras, no)
        else:
            stop_f = stop_l
        E = np.empty((n_keeps, nu))
        M = np.empty((dk.n_small, nu))
        turn_values(dk, nu, stop_f, stop_l, E, M, none, none)
        p = dk.roll_prob
        ns = dk.n_small
        # each slot's sum over the rolls in roll order, as a loop over rolls of vector adds across
        # the slots (the same additions in the same order per slot: bit for bit the same values)
        acc = np.zeros(nu)
        for r in range(n_rolls):
            pr = p[r]
            for i in range(nu):
                acc[i] += pr * E[ns + r, i]
        for i in range(nu):
            out[off + i] = acc[i]


# ---------------------------------------------------------------------------------------------
# forward pass of the optimal policy


@nb.njit(cache=True, nogil=True)
def item_plan(ctx, lay, dk, V, mask, flag, ulist, nu, sl):
    """The T=0 policy of one item: stop values with their box argmax, and each stage's E and M.

    ``ulist``/``nu``/``sl`` as in :func:`stop_values`. Returns (stop_f, stop_l (R, nu),
    box_f, box_l (R, nu) int16, rows_f, rows_l (R, NB) int16, extras_f, extras_l (R,) int16,
    Es (rr+1, K, nu), Ms (rr+1, n_small, nu)); keeps come from :func:`keep_arg`.
    """
    n_rolls = ctx.table.shape[0]
    n_keeps = dk.add.shape[0]
    rr = dk.rerolls
    nbx = lay.n_boxes
    no, yes = np.bool_(False), np.bool_(True)
    allowed = np.empty(n_rolls, dtype=np.int64)
    rows_l = np.empty((n_rolls, nbx), dtype=np.int16)
    extras_l = np.empty(n_rolls, dtype=np.int16)
    box_l = np.empty((n_rolls, nu), dtype=np.int16)
    stop_l = np.empty((n_rolls, nu))
    stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, no, allowed, stop_l, box_l, rows_l, extras_l, yes)
    if lay.servida:
        rows_f = np.empty((n_rolls, nbx), dtype=np.int16)
        extras_f = np.empty(n_rolls, dtype=np.int16)
        box_f = np.empty((n_rolls, nu), dtype=np.int16)
        stop_f = np.empty((n_rolls, nu))
        stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, yes, allowed, stop_f, box_f, rows_f, extras_f, yes)
    else:
        rows_f, extras_f, box_f, stop_f = rows_l, extras_l, box_l, stop_l
    E = np.empty((n_keeps, nu))
    M = np.empty((dk.n_small, nu))
    Es = np.zeros((rr + 1, n_keeps, nu))
    Ms = np.zeros((rr + 1, dk.n_small, nu))
    turn_values(dk, nu, stop_f, stop_l, E, M, Es, Ms)
    return stop_f, stop_l, box_f, box_l, rows_f, rows_l, extras_f, extras_l, Es, Ms


@nb.njit(cache=True, nogil=True)
def forward_items(ctx, lay, dk, oc, V, item_mask, item_flag, lo, hi, row_of, live, outp, P, start):
    """Outcome distribution of one turn under the T=0 policy, for the live slots of items lo..hi-1.

    A slot is live when its state's probability P[state - start] is non-zero; the j-th live slot
    of item t adds to outp[row_of[t - lo] + j, o] the probability that its turn ends with outcome
    code o (see :class:`Outcomes`). Items not ``live[t - lo]`` are skipped.
    """
    for t in range(lo, hi):
        if not live[t - lo]:
            continue
        mask = item_mask[t]
        flag = item_flag[t]
        row0 = row_of[t - lo]
        um = lay.umask_of[mask]
        nall = lay.nslot[um]
        off = lay.base[mask * lay.n_flags + flag]
        sl = np.empty(nall, dtype=np.int64)
        n_live = 0
        for i in range(nall):
            if P[off + i - start] > 0.0:
                sl[n_live] = i
                n_live += 1
        if n_live == 0:
            continue
        nu = np.int64(n_live)
        ulist = np.empty(nu, dtype=np.int32)
        for i in range(nu):
            ulist[i] = lay.ulist[um, sl[i]]
        n_rolls = ctx.table.shape[0]
        n_keeps = dk.add.shape[0]
        rr = dk.rerolls
        (stop_f, stop_l, box_f, box_l, rows_f, rows_l, extras_f, extras_l, Es, Ms) = item_plan(
            ctx, lay, dk, V, mask, flag, ulist, nu, sl
        )
        mass = np.empty((n_rolls, nu))
        fin_f = np.zeros((n_rolls, nu))
        fin_l = np.zeros((n_rolls, nu))
        km = np.zeros((n_keeps, nu))
        for r in range(n_rolls):
            for i in range(nu):
                mass[r, i] = dk.roll_prob[r]
        for j in range(rr, -1, -1):
            fin = fin_f if j == rr else fin_l
            if j == 0:  # no reroll left: every roll stops
                for r in range(n_rolls):
                    for i in range(nu):
                        fin[r, i] += mass[r, i]
                break
            st = stop_f if j == rr else stop_l
            for k in range(n_keeps):
                for i in range(nu):
                    km[k, i] = 0.0
            for r in range(n_rolls):
                kr = dk.roll_as_keep[r]
                for i in range(nu):
                    m = mass[r, i]
                    if m != 0.0:
                        a = keep_arg(dk, Es, Ms, j, st, r, i)
                        if a == kr:
                            fin[r, i] += m
                        else:
                            km[a, i] += m
            reroll(dk, km, mass, nu)
        add_outcomes(oc, fin_f, box_f, rows_f, extras_f, outp, row0, 0, nu)
        add_outcomes(oc, fin_l, box_l, rows_l, extras_l, outp, row0, 0, nu)


@nb.njit(cache=True, nogil=True)
def reroll(dk, km, mass, n):
    """The mass of each kept set of dice km (K, n) rerolled, the dice arriving one at a time with
    each face 1/6: mass (R, n) of each roll after the reroll (km is consumed)."""
    sixth = 1.0 / 6.0
    for k in range(dk.n_small):
        for f in range(6):
            a = dk.add[k, f]
            for i in range(n):
                km[a, i] += km[k, i] * sixth
    for r in range(mass.shape[0]):
        kr = dk.roll_as_keep[r]
        for i in range(n):
            mass[r, i] = km[kr, i]


@nb.njit(cache=True, nogil=True)
def successor(lay, oc, mask, flag, u, i, o):
    """(next state, points added, bonus crossed) of turn outcome o from slot i (subtotal u) of
    (mask, flag): the box's score, its extra bonus, the upper bonus if the box completes it."""
    T = lay.threshold
    F = lay.n_flags
    b = oc.o_box[o]
    s = np.int64(oc.o_pts[o])
    nf = flag
    if b == lay.key_box:
        nf = 1 if s > 0 else 0
    m2 = mask | (np.int64(1) << b)
    cross = False
    g2 = lay.base[m2 * F + nf]  # read once, before the branches: read in each, it cost a reference count a call
    if lay.is_upper[b]:
        u2 = min(u + s, T)
        cross = u < T and u2 >= T
        g2 += lay.slot[lay.umask_of[m2], u2]
    else:
        g2 += i
    return g2, s + oc.o_extra[o] + (lay.bonus if cross else 0), cross


@nb.njit(cache=True, nogil=True)
def add_outcomes(oc, fin, box, rows, extras, outp, row0, c0, nu):
    """outp[row0 + i, code of (box, score, extra)] += fin[r, c0 + i] (box box[r, c0 + i]) for every
    final roll r, i < nu: each row's sums in roll order, eight columns at a time so that their rows
    of outp stay in the first-level cache."""
    for ib in range(0, nu, 8):
        ie = min(nu, ib + 8)
        for r in range(fin.shape[0]):
            half = oc.half if extras[r] > 0 else 0
            for i in range(ib, ie):
                m = fin[r, c0 + i]
                if m != 0.0:
                    b = box[r, c0 + i]
                    outp[row0 + i, oc.off[b] + oc.vidx[b, rows[r, b]] + half] += m


@nb.njit(cache=True, nogil=True)
def layer_windows(lay, item_mask, item_flag, lo, hi, start, cap, extra_max, bonus0, wlo, wlen):
    """A priori score windows [wlo, wlo + wlen) of every state of items lo..hi-1 (layer-local index
    = state index - start), clipped at cap: the accumulated score of a state always lies inside."""
    T = lay.threshold
    for t in range(lo, hi):
        mask = item_mask[t]
        um = lay.umask_of[mask]
        nu = lay.nslot[um]
        off = lay.base[mask * lay.n_flags + item_flag[t]]
        up_max = 0
        low_max = 0
        k = 0
        for b in range(lay.n_boxes):
            if (mask >> b) & 1:
                k += 1
                if lay.is_upper[b]:
                    up_max += lay.box_max[b]
                else:
                    low_max += lay.box_max[b]
        ext = extra_max * max(k - 1, 0)
        for i in range(nu):
            u = lay.ulist[um, i]
            if T == 0:
                a = 0
                z = up_max + low_max + ext
            elif um == lay.full_upper:
                # every upper box filled: subtotals merged, the bonus already counted
                a = 0
                z = up_max + lay.bonus + low_max + ext
            elif u < T:
                # below the threshold the subtotal is exact
                a = u
                z = u + low_max + ext
            else:
                a = T + lay.bonus
                z = up_max + lay.bonus + low_max + ext
            a = min(a + bonus0, cap)
            z = min(z + bonus0, cap)
            wlo[off + i - start] = a
            wlen[off + i - start] = z - a + 1


@nb.njit(cache=True, nogil=True)
def push_part(
    t,
    nthreads,
    lay,
    oc,
    item_mask,
    item_flag,
    lo,
    hi,
    row_of,
    live,
    outp,
    start,
    P,
    S1,
    S2,
    wlo,
    woff,
    D,
    start2,
    P2,
    S12,
    S22,
    wlo2,
    woff2,
    D2,
    want_dist,
    B2,
):
    """Move the probability of items lo..hi-1 along their turn outcomes to the next layer.

    Moments P (probability of the state), S1 = E[S; state], S2 = E[S^2; state] and, with
    ``want_dist``, the score distribution windows D. Successor state g2 is written only by thread
    g2 % nthreads, so parts run on threads without races; B2 collects the probability of crossing
    the bonus per successor state (summed after the layer, so the total does not depend on the
    number of threads).
    """
    F = lay.n_flags
    n_out = outp.shape[1]
    for it in range(lo, hi):
        if not live[it - lo]:
            continue
        mask = item_mask[it]
        flag = item_flag[it]
        um = lay.umask_of[mask]
        nu = lay.nslot[um]
        off = lay.base[mask * F + flag]
        row = row_of[it - lo] - 1
        for i in range(nu):
            loc = off + i - start
            p0 = P[loc]
            if p0 == 0.0:
                continue
            row += 1  # rows are the live slots only (see forward_item)
            u = lay.ulist[um, i]
            a0 = 0
            j_lo = 0
            j_hi = 0
            if want_dist:
                # the source window's non-zero part
                a0 = woff[loc]
                n0 = woff[loc + 1] - a0
                j_lo = n0
                for j in range(n0):
                    if D[a0 + j] != 0.0:
                        j_lo = j
                        break
                j_hi = j_lo
                for j in range(n0 - 1, j_lo - 1, -1):
                    if D[a0 + j] != 0.0:
                        j_hi = j + 1
                        break
            for o in range(n_out):
                p = outp[row, o]
                if p == 0.0:
                    continue
                g2, x, cross = successor(lay, oc, mask, flag, u, i, o)
                if nthreads > 1 and g2 % nthreads != t:
                    continue
                l2 = g2 - start2
                P2[l2] += p * p0
                S12[l2] += p * (S1[loc] + x * p0)
                S22[l2] += p * (S2[loc] + 2.0 * x * S1[loc] + x * x * p0)
                if cross:
                    B2[l2] += p * p0
                if want_dist:
                    b0 = woff2[l2]
                    n2 = woff2[l2 + 1] - b0
                    shift = wlo[loc] + x - wlo2[l2]
                    # cells landing inside the successor's window, then the rest lumped into its top
                    # cell (only a window that ends at the cap can overflow)
                    # (indexed in place, unsigned: a slice costs two atomic reference counts a
                    # successor, and a signed index a check for negative indices that stops the
                    # loop's vectorisation)
                    j_mid = min(j_hi, n2 - shift)
                    s0 = a0 + j_lo
                    d0 = b0 + shift + j_lo
                    for j in range(j_mid - j_lo):
                        D2[np.uint64(d0 + j)] += p * D[np.uint64(s0 + j)]
                    if j_mid < j_hi:
                        rest = 0.0
                        for j in range(max(j_mid, j_lo), j_hi):
                            rest += D[a0 + j]
                        D2[b0 + n2 - 1] += p * rest


# ---------------------------------------------------------------------------------------------
# the bot: cached per-state decisions


@nb.njit(cache=True, nogil=True)
def turn_one(dk, stop_f, stop_l, E, M, Es, Ms):
    """:func:`turn_values` for one state (the bot) on flat arrays: stop_f/stop_l (R,), E (K,),
    M (n_small,), Es (rr+1, K), Ms (rr+1, n_small). Every value is computed in the same order as in
    :func:`turn_values`, so the bot's decisions are the forward pass's to the last bit."""
    n_rolls = stop_f.shape[0]
    ns = dk.n_small
    rr = dk.rerolls
    rem = dk.rem
    add = dk.add
    sixth = 1.0 / 6.0
    first_st = stop_f if rr == 0 else stop_l
    for r in range(n_rolls):
        E[ns + r] = first_st[r]
    for j in range(1, rr + 1):
        st = stop_f if j == rr else stop_l
        for k in range(ns - 1, -1, -1):
            E[k] = (E[add[k, 0]] + E[add[k, 1]] + E[add[k, 2]] + E[add[k, 3]] + E[add[k, 4]] + E[add[k, 5]]) * sixth
        for k in range(ns):
            m = E[k]
            for f in range(6):
                q = rem[k, f]
                if q >= 0 and M[q] > m:
                    m = M[q]
            M[k] = m
        for k in range(E.shape[0]):
            Es[j, k] = E[k]
        for k in range(ns):
            Ms[j, k] = M[k]
        for r in range(n_rolls):
            kr = ns + r
            c = st[r]
            for f in range(6):
                q = rem[kr, f]
                if q >= 0 and M[q] > c:
                    c = M[q]
            E[kr] = c


@nb.njit(cache=True, nogil=True)
def keep_arg_one(dk, Es, Ms, j, st, r):
    """:func:`keep_arg` for one state (flat Es (rr+1, K), Ms (rr+1, n_small), st (R,))."""
    rem = dk.rem
    kr = dk.roll_as_keep[r]
    best = st[r]
    k = -1
    for f in range(6):
        q = rem[kr, f]
        if q >= 0 and Ms[j, q] > best:
            best = Ms[j, q]
            k = q
    if k < 0:
        return kr
    while Es[j, k] != Ms[j, k]:
        m = Ms[j, k]
        for f in range(6):
            q = rem[k, f]
            if q >= 0 and Ms[j, q] == m:
                k = q
                break
    return k


@nb.njit(cache=True, nogil=True)
def score_rows(ctx, mask, flag, first, rows, allowed, extras):
    """:func:`harness.game.scoring.score_options` of every roll in one sheet: rows (R, NB) int16,
    allowed (R,) int64, extras (R,) int16 (shared by every upper subtotal of the mask)."""
    score_sheet(ctx, first, flag, mask, rows, allowed, extras)


@nb.njit(cache=True, nogil=True)
def stop_one(lay, V, mask, flag, u, rows, allowed, extras, wv, nxt, stop):
    """:func:`stop_values` for one state (the bot) from its :func:`score_rows`: stop (R,), the same
    candidate values in the same order. wv (n_wrows,) and nxt (2 NB,) are scratch arrays."""
    nbx = lay.n_boxes
    F = lay.n_flags
    T = lay.threshold
    open_ = ((np.int64(1) << nbx) - 1) & ~mask
    s0 = lay.slot[lay.umask_of[mask], u]
    Z = NEG
    for b in range(nbx):
        if not (open_ >> b) & 1:
            continue
        m2 = mask | (np.int64(1) << b)
        if lay.is_upper[b]:
            um2 = lay.umask_of[m2]
            for v in range(lay.box_nvals[b]):
                s = lay.box_vals[b, v]
                nf = flag
                if b == lay.key_box:
                    nf = 1 if s > 0 else 0
                u2 = min(u + s, T)
                add = s + lay.bonus if (u < T and u2 >= T) else s
                wv[lay.wrow[b] + v] = add + V[lay.base[m2 * F + nf] + lay.slot[um2, u2]]
            z = wv[lay.wrow[b] + lay.box_vidx[b, 0]]
        else:
            for zz in range(2):
                nf = flag
                if b == lay.key_box:
                    nf = zz
                nxt[2 * b + zz] = V[lay.base[m2 * F + nf] + s0]
            z = nxt[2 * b]
        if z > Z:
            Z = z
    for r in range(stop.shape[0]):
        al = allowed[r]
        free = al == open_
        acc = Z if free else NEG
        for b in range(nbx):
            if not (al >> b) & 1:
                continue
            s = np.int64(rows[r, b])
            if free and s == 0:
                continue
            if lay.is_upper[b]:
                val = wv[lay.wrow[b] + lay.box_vidx[b, s]]
            else:
                val = float(s) + nxt[2 * b + (1 if s > 0 else 0)]
            if val > acc:
                acc = val
        stop[r] = acc + extras[r]


@nb.njit(cache=True, nogil=True)
def state_work(ctx, lay, dk):
    """Scratch arrays of the bot's kernels."""
    n_rolls = ctx.table.shape[0]
    nbx = lay.n_boxes
    return (
        np.empty((n_rolls, nbx), dtype=np.int16),
        np.empty(n_rolls, dtype=np.int64),
        np.empty(n_rolls, dtype=np.int16),
        np.empty((n_rolls, nbx), dtype=np.int16),
        np.empty(n_rolls, dtype=np.int64),
        np.empty(n_rolls, dtype=np.int16),
        np.empty(max(lay.n_wrows, 1)),
        np.empty(2 * nbx),
        np.empty(dk.add.shape[0]),
        np.empty(dk.n_small),
        np.empty(n_rolls),
        np.empty(n_rolls),
        np.zeros((dk.rerolls + 1, dk.add.shape[0])),
        np.zeros((dk.rerolls + 1, dk.n_small)),
    )


@nb.njit(cache=True, nogil=True)
def state_plan(ctx, lay, dk, V, mask, flag, u, work, last_sheet):
    """Stop values and stage values of one state into ``work`` (see :func:`state_work`): the score rows
    are worked out again only when the sheet (mask, flag) differs from ``last_sheet``."""
    rows_l, al_l, ex_l, rows_f, al_f, ex_f, wv, nxt, E, M, stop_f, stop_l, Es, Ms = work
    sheet = mask * lay.n_flags + flag
    if sheet != last_sheet:
        score_rows(ctx, mask, flag, np.bool_(False), rows_l, al_l, ex_l)
        if lay.servida:
            score_rows(ctx, mask, flag, np.bool_(True), rows_f, al_f, ex_f)
    stop_one(lay, V, mask, flag, u, rows_l, al_l, ex_l, wv, nxt, stop_l)
    if lay.servida:
        stop_one(lay, V, mask, flag, u, rows_f, al_f, ex_f, wv, nxt, stop_f)
    else:
        for r in range(stop_l.shape[0]):  # not stop_f[:] = stop_l: a broadcasting set-item compiles slowly
            stop_f[r] = stop_l[r]
    turn_one(dk, stop_f, stop_l, E, M, Es, Ms)
    return sheet


@nb.njit(cache=True, nogil=True)
def policy_keeps(ctx, lay, dk, V, tags, codes, masks, flags, uppers, rolls, stage, out):
    """T=0 keeps for a batch, from a direct-mapped cache of per-state keep tables.

    masks/uppers (B,) int64, flags (B,) bool, rolls (B,) int16, stage (B,) int16 rerolls left
    (``rerolls`` = on the first roll); writes out (B,) int32. tags (C,) int64 state index held
    by each cache line (-1 empty); codes (C, rr, R) uint8 keep position within the roll's sub-keeps.
    Games are visited sorted by sheet, so a sheet's score rows are worked out once per batch.
    """
    cap = tags.shape[0]
    n_rolls = ctx.table.shape[0]
    rr = dk.rerolls
    work = state_work(ctx, lay, dk)
    stop_f, stop_l, Es, Ms = work[10], work[11], work[12], work[13]
    order = np.argsort(masks * 2 + flags)
    last = np.int64(-1)
    for g in order:
        mask = masks[g]
        flag = 1 if flags[g] else 0
        u = min(np.int64(uppers[g]), lay.threshold)
        idx = lay.base[mask * lay.n_flags + flag] + lay.slot[lay.umask_of[mask], u]
        line = idx & (cap - 1)
        if tags[line] != idx:
            last = state_plan(ctx, lay, dk, V, mask, flag, u, work, last)
            for j in range(1, rr + 1):
                st = stop_f if j == rr else stop_l
                for r in range(n_rolls):
                    # stored as its position among the roll's sub-keeps (fits a byte)
                    codes[line, j - 1, r] = dk.sub_pos[r, keep_arg_one(dk, Es, Ms, j, st, r)]
            tags[line] = idx
        r = rolls[g]
        out[g] = dk.sub_keep[dk.sub_ptr[r] + codes[line, stage[g] - 1, r]]


@nb.njit(cache=True, nogil=True)
def turn_args(dk, nu, stop_f, stop_l, E, M, A, args, narrow=None):
    """:func:`turn_values` that also writes the T=0 keep of every stage, roll and slot: args[j - 1,
    r, i] (rr, R, nu) int32 the keep (``roll_as_keep[r]`` for stop) with j rerolls left.

    A (n_small, nu) int32 tracks which sub-keep reaches M; following the strict improvements in
    face order picks exactly :func:`keep_arg`'s keep (stop on ties, then the first face, the keep
    itself before its sub-keeps), and the values are computed as in :func:`turn_values`. From
    ``WIDE`` slots on, each keep's faces are taken in one pass (:func:`_best_sub`), the same
    comparisons in the same order; ``narrow`` as in :func:`turn_values`.
    """
    n_rolls = stop_f.shape[0]
    ns = dk.n_small
    rr = dk.rerolls
    rem = dk.rem
    first_st = stop_f if rr == 0 else stop_l
    for r in range(n_rolls):
        for i in range(nu):
            E[ns + r, i] = first_st[r, i]
    for j in range(1, rr + 1):
        st = stop_f if j == rr else stop_l
        arg = args[j - 1]
        _expect(dk.add, ns, E, nu)
        if narrow is None and nu >= WIDE:
            for k in range(ns):
                _best_sub(dk, k, E, k, M, A, M, k, A, k, nu)
            for r in range(n_rolls):
                _best_sub(dk, ns + r, st, r, M, A, E, ns + r, arg, r, nu)
            continue
        for k in range(ns):
            for i in range(nu):
                M[k, i] = E[k, i]
                A[k, i] = k
            for f in range(6):
                q = rem[k, f]
                if q >= 0:
                    for i in range(nu):
                        m = M[q, i]
                        better = m > M[k, i]
                        M[k, i] = m if better else M[k, i]
                        A[k, i] = A[q, i] if better else A[k, i]
        for r in range(n_rolls):
            kr = ns + r
            for i in range(nu):
                E[kr, i] = st[r, i]
                arg[r, i] = kr
            for f in range(6):
                q = rem[kr, f]
                if q >= 0:
                    for i in range(nu):
                        m = M[q, i]
                        better = m > E[kr, i]
                        E[kr, i] = m if better else E[kr, i]
                        arg[r, i] = A[q, i] if better else arg[r, i]


@nb.njit(cache=True, nogil=True)
def turn_codes(dk, nu, stop_f, stop_l, E, M, A, codes, off, narrow=None):
    """:func:`turn_args` with each keep written as its position among roll r's sub-keeps:
    codes[off + i, j - 1, r] (one state's row of codes is contiguous); ``narrow`` as there."""
    n_rolls = stop_f.shape[0]
    args = np.empty((dk.rerolls, n_rolls, nu), dtype=np.int32)
    turn_args(dk, nu, stop_f, stop_l, E, M, A, args, narrow)
    for j in range(dk.rerolls):
        for i in range(nu):
            ci = codes[off + i, j]
            for r in range(n_rolls):
                ci[r] = dk.sub_pos[r, args[j, r, i]]


@nb.njit(cache=True, nogil=True)
def policy_items(ctx, lay, dk, V, item_mask, item_flag, lo, hi, codes, boxes):
    """The T=0 keeps of every state of items lo..hi-1 into codes (states, rr, R) uint8 (see
    :func:`turn_codes`): what :func:`policy_keeps` caches per state, for all upper slots at once.
    And the T=0 box of every state and roll into boxes (states, F, R) uint8 (F = 2 with servida:
    index 1 on the turn's first roll): :func:`choose_boxes`'s first strict maximum of the same
    candidate values, which :func:`stop_values` takes with ``want_box`` (its values do not
    depend on it, so the keeps are the same)."""
    n_rolls = ctx.table.shape[0]
    n_keeps = dk.add.shape[0]
    no, yes = np.bool_(False), np.bool_(True)
    allowed = np.empty(n_rolls, dtype=np.int64)
    rows = np.empty((n_rolls, lay.n_boxes), dtype=np.int16)
    extras = np.empty(n_rolls, dtype=np.int16)
    full = (np.int64(1) << lay.n_boxes) - 1
    for t in range(lo, hi):
        mask = item_mask[t]
        flag = item_flag[t]
        if mask == full:
            continue
        um = lay.umask_of[mask]
        nu = np.int64(lay.nslot[um])
        off = lay.base[mask * lay.n_flags + flag]
        ulist = lay.ulist[um]
        sl = np.arange(nu)
        box = np.empty((n_rolls, nu), dtype=np.int16)
        stop_l = np.empty((n_rolls, nu))
        stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, no, allowed, stop_l, box, rows, extras, yes)
        _put_boxes(box, boxes, off, 0, nu)
        if lay.servida:
            stop_f = np.empty((n_rolls, nu))
            stop_values(ctx, lay, V, mask, flag, ulist, nu, sl, yes, allowed, stop_f, box, rows, extras, yes)
            _put_boxes(box, boxes, off, 1, nu)
        else:
            stop_f = stop_l
        E = np.empty((n_keeps, nu))
        M = np.empty((dk.n_small, nu))
        A = np.empty((dk.n_small, nu), dtype=np.int32)
        turn_codes(dk, nu, stop_f, stop_l, E, M, A, codes, off)


@nb.njit(cache=True, nogil=True)
def _put_boxes(box, boxes, off, f, nu):
    """box (R, nu) int16 into boxes[off + i, f, r] (one state's row is contiguous)."""
    for i in range(nu):
        bi = boxes[off + i, f]
        for r in range(box.shape[0]):
            bi[r] = box[r, i]


@nb.njit(cache=True, nogil=True)
def table_keeps(lay, dk, codes, masks, flags, uppers, rolls, stage, out):
    """T=0 keeps for a batch from the whole policy table of :func:`policy_items` (see
    :func:`policy_keeps` for the arguments)."""
    for g in range(masks.shape[0]):
        mask = masks[g]
        flag = 1 if flags[g] else 0
        u = min(np.int64(uppers[g]), lay.threshold)
        idx = lay.base[mask * lay.n_flags + flag] + lay.slot[lay.umask_of[mask], u]
        r = rolls[g]
        out[g] = dk.sub_keep[dk.sub_ptr[r] + codes[idx, stage[g] - 1, r]]


@nb.njit(cache=True, nogil=True)
def softmax_pick(vals, n, temperature, u):
    """Index drawn with probability proportional to exp(vals / temperature) over vals[:n]."""
    top = vals[0]
    for a in range(1, n):
        top = max(top, vals[a])
    tot = 0.0
    for a in range(n):
        vals[a] = exp_ieee((vals[a] - top) / temperature)
        tot += vals[a]
    x = u * tot
    acc = 0.0
    for a in range(n):
        acc += vals[a]
        if x < acc:
            return a
    # u * tot rounds up to tot: the last action with non-zero weight
    for a in range(n - 1, -1, -1):
        if vals[a] > 0.0:
            return a
    return n - 1


#: States the randomised bot's whole-game player plans side by side (:func:`plan_group`): their
#: stop values a vector lane each, their turns in one :func:`turn_values` call, the states as its slots.
PLAN_GROUP = 16


@nb.njit(cache=True, nogil=True)
def _score_rows_of(ctx, lay):
    """(R, NB) int64: the row of :func:`_group_stops`' candidates that roll r's score in box b
    takes (boxes side by side, each box's scores in ``box_vals`` order); and the number of rows."""
    n_rolls = ctx.table.shape[0]
    nbx = lay.n_boxes
    row0 = np.zeros(nbx + 1, dtype=np.int64)
    for b in range(nbx):
        row0[b + 1] = row0[b] + lay.box_nvals[b]
    ridx = np.empty((n_rolls, nbx), dtype=np.int64)
    for r in range(n_rolls):
        for b in range(nbx):
            ridx[r, b] = row0[b] + lay.box_vidx[b, ctx.table[r, b]]
    return ridx, row0[nbx]


@nb.njit(cache=True, nogil=True)
def _group_stops(lay, V, gm, gf, gu, n, ridx, cand, Z, stop):
    """:func:`stop_one` of the n states (gm, gf, gu)[:n] side by side, columns of stop (R, G),
    on a rule set whose every roll scores its table row in any open box (no key box, forced
    order or servida). Each candidate value is computed as there; a closed box's, and a zero
    score's (which stop_one skips), is NEG, never larger; then each roll takes the first strict
    maximum over the boxes in sheet order starting from the best scratch Z, as stop_one does:
    the same comparisons of the same values, a state a vector lane."""
    nbx = lay.n_boxes
    F = lay.n_flags
    T = lay.threshold
    for c in range(n):
        mask = gm[c]
        flag = gf[c]
        u = gu[c]
        s0 = lay.slot[lay.umask_of[mask], u]
        z_best = NEG
        row = 0
        for b in range(nbx):
            nv = lay.box_nvals[b]
            if (mask >> b) & 1:
                for v in range(nv):
                    cand[row + v, c] = NEG
                row += nv
                continue
            m2 = mask | (np.int64(1) << b)
            b2 = lay.base[m2 * F + flag]
            if lay.is_upper[b]:
                um2 = lay.umask_of[m2]
                for v in range(nv):
                    s = lay.box_vals[b, v]
                    u2 = min(u + s, T)
                    add = s + lay.bonus if (u < T and u2 >= T) else s
                    cand[row + v, c] = add + V[b2 + lay.slot[um2, u2]]
                z = cand[row + lay.box_vidx[b, 0], c]
            else:
                z = V[b2 + s0]
                for v in range(nv):
                    cand[row + v, c] = float(lay.box_vals[b, v]) + z
            if z > z_best:
                z_best = z
            cand[row + lay.box_vidx[b, 0], c] = NEG
            row += nv
        Z[c] = z_best
    for r in range(stop.shape[0]):
        for c in range(n):
            stop[r, c] = Z[c]
        for b in range(nbx):
            w = ridx[r, b]
            for c in range(n):
                x = cand[w, c]
                a = stop[r, c]
                stop[r, c] = x if x > a else a
        for c in range(n):
            stop[r, c] += 0.0  # stop_one's extra bonus (none here)


@nb.njit(cache=True, nogil=True)
def plan_group(lay, dk, V, tags, ev, sv, sc, n):
    """The n states gidx[:n] of the scratch ``sc`` (:func:`soft_scratch`; (gm, gf, gu)[:n] their
    sheets and capped subtotals) into their cache lines (see :func:`soft_keeps`), on a rule set
    :func:`_group_stops` takes: their stop values side by side, then their turns in one
    :func:`turn_values` (the states as its slots: each value computed as :func:`turn_one` computes
    it, in the same order), so each line holds what :func:`state_plan` makes of its state."""
    ridx, cand, Z, _, stop, E, M, Es, Ms, gidx, gm, gf, gu, _ = sc
    cap = tags.shape[0]
    ns = dk.n_small
    _group_stops(lay, V, gm, gf, gu, n, ridx, cand, Z, stop)
    turn_values(dk, n, stop, stop, E, M, Es, Ms, np.bool_(True))  # first-roll stops are the same
    for c in range(n):
        line = gidx[c] & (cap - 1)
        for j in range(1, dk.rerolls + 1):
            for k in range(ns):
                ev[line, j - 1, k] = Es[j, k, c]
        for f in range(sv.shape[1]):
            for q in range(stop.shape[0]):
                sv[line, f, q] = stop[q, c]
        tags[line] = gidx[c]


@nb.njit(cache=True, nogil=True)
def soft_pick(dk, ev, sv, line, r, j, first, temperature, u, X):
    """The softmax draw among roll r's sub-keeps from cache line ``line``, j rerolls left: as
    :func:`softmax_pick` over their values, the exponentials LANES at once (the same bits,
    :func:`harness.exact.kernels.rows.row_exp_div`); X (rows, LANES) scratch for every sub-keep."""
    lo = dk.sub_ptr[r]
    n = dk.sub_ptr[r + 1] - lo
    # the last sub-keep is the whole roll: its value is stopping
    for a in range(n - 1):
        X[a // LANES, a % LANES] = ev[line, j - 1, dk.sub_keep[lo + a]]
    X[(n - 1) // LANES, (n - 1) % LANES] = sv[line, 1 if (first and sv.shape[1] > 1) else 0, r]
    top = X[0, 0]
    for a in range(1, n):
        top = max(top, X[a // LANES, a % LANES])
    for a in range(n):
        X[a // LANES, a % LANES] -= top
    for a in range(n, (n + LANES - 1) // LANES * LANES):
        X[a // LANES, a % LANES] = 0.0  # unread lanes
    for k in range((n + LANES - 1) // LANES):
        row_exp_div(X, k, np.int64(0), temperature)
    tot = 0.0
    for a in range(n):
        tot += X[a // LANES, a % LANES]
    x = u * tot
    acc = 0.0
    for a in range(n):
        acc += X[a // LANES, a % LANES]
        if x < acc:
            return dk.sub_keep[lo + a]
    # u * tot rounds up to tot: the last action with non-zero weight
    for a in range(n - 1, -1, -1):
        if X[a // LANES, a % LANES] > 0.0:
            return dk.sub_keep[lo + a]
    return dk.sub_keep[lo + n - 1]


@nb.njit(cache=True, nogil=True)
def order_of(keys, top):
    """The positions of keys (B,) int64 in 0..top - 1 in increasing order of their keys (ties in
    position order): an LSD radix sort, 11 bits a pass, a tenth of np.argsort's time on a batch."""
    n = keys.shape[0]
    order = np.arange(n)
    tmp = np.empty(n, dtype=np.int64)
    count = np.empty(2049, dtype=np.int64)
    shift = 0
    while (np.int64(1) << shift) < top:
        for d in range(2049):  # not count[:] = 0: a broadcasting set-item compiles slowly
            count[d] = 0
        for i in range(n):
            count[((keys[order[i]] >> shift) & 2047) + 1] += 1
        for d in range(2048):
            count[d + 1] += count[d]
        for i in range(n):
            k = (keys[order[i]] >> shift) & 2047
            tmp[count[k]] = order[i]
            count[k] += 1
        order, tmp = tmp, order
        shift += 11
    return order


@nb.njit(cache=True, nogil=True)
def soft_scratch(ctx, lay, dk):
    """The scratch arrays of :func:`harness.exact.kernels.play.soft_seat`: those of
    :func:`plan_group` (the candidates' rows, candidates, best scratch, stop values, the turn's),
    :func:`soft_pick`'s, and the group's states (index, mask, flag, capped subtotal, the range of
    their games in the turn's order)."""
    n_rolls = ctx.table.shape[0]
    n_keeps = dk.add.shape[0]
    rr = dk.rerolls
    G = PLAN_GROUP
    ridx, n_cand = _score_rows_of(ctx, lay)
    most = 1
    for r in range(n_rolls):
        most = max(most, dk.sub_ptr[r + 1] - dk.sub_ptr[r])
    return (
        ridx,
        np.empty((n_cand, G)),
        np.empty(G),
        np.empty(((most + LANES - 1) // LANES, LANES)),  # a roll's sub-keeps' weights (soft_pick)
        np.empty((n_rolls, G)),
        np.empty((n_keeps, G)),
        np.empty((dk.n_small, G)),
        np.empty((rr + 1, n_keeps, G)),
        np.empty((rr + 1, dk.n_small, G)),
        np.empty(G, dtype=np.int64),
        np.empty(G, dtype=np.int64),
        np.empty(G, dtype=np.int64),
        np.empty(G, dtype=np.int64),
        np.empty((G, 2), dtype=np.int64),
    )


@nb.njit(cache=True, nogil=True)
def soft_keeps(
    ctx, lay, dk, V, tags, ev, sv, masks, flags, uppers, rolls, stage, first, temperature, blunder, unif, out
):
    """Keeps for a batch with temperature > 0 (and any blunder rate).

    Action values come from a direct-mapped cache: ev (C, rr, n_small) expected value of each keep
    smaller than a roll with j rerolls left at row j - 1 (a roll's largest sub-keep is the roll
    itself, valued by stopping), sv (C, S, R) stop values (0 = later roll, 1 = first roll; S = 1
    when the two are the same, without servida). unif (B, 2) uniforms: [0] decides a blunder, [1]
    picks the action (uniformly for a blunder, else by softmax). Long runs play whole games
    instead (:func:`harness.exact.kernels.play.soft_seat`, the same lines and draws).
    """
    cap = tags.shape[0]
    n_rolls = ctx.table.shape[0]
    rr = dk.rerolls
    ns = dk.n_small
    work = state_work(ctx, lay, dk)
    stop_f, stop_l, Es = work[10], work[11], work[12]
    vals = np.empty(dk.sub_keep.shape[0])
    order = np.argsort(masks * 2 + flags)
    last = np.int64(-1)
    for g in order:
        mask = masks[g]
        flag = 1 if flags[g] else 0
        u = min(np.int64(uppers[g]), lay.threshold)
        r = rolls[g]
        lo = dk.sub_ptr[r]
        n = dk.sub_ptr[r + 1] - lo
        if unif[g, 0] < blunder:
            out[g] = dk.sub_keep[lo + min(int(unif[g, 1] * n), n - 1)]
            continue
        idx = lay.base[mask * lay.n_flags + flag] + lay.slot[lay.umask_of[mask], u]
        line = idx & (cap - 1)
        if tags[line] != idx:
            last = state_plan(ctx, lay, dk, V, mask, flag, u, work, last)
            for j in range(1, rr + 1):
                for k in range(ns):
                    ev[line, j - 1, k] = Es[j, k]
            for q in range(n_rolls):
                sv[line, 0, q] = stop_l[q]
            if sv.shape[1] > 1:
                for q in range(n_rolls):
                    sv[line, 1, q] = stop_f[q]
            tags[line] = idx
        j = stage[g]
        # the last sub-keep is the whole roll: its value is stopping
        for a in range(n - 1):
            vals[a] = ev[line, j - 1, dk.sub_keep[lo + a]]
        vals[n - 1] = sv[line, 1 if (first[g] and sv.shape[1] > 1) else 0, r]
        out[g] = dk.sub_keep[lo + softmax_pick(vals, n, temperature, unif[g, 1])]


@nb.njit(cache=True, nogil=True)
def choose_boxes(lay, V, masks, flags, uppers, options, allowed, temperature, blunder, unif, out):
    """Box choices for a batch: value of box b = score + bonus crossed + V(next state).

    options (B, NB) int16, allowed (B,) int64; T=0: the first strict maximum in sheet order;
    T>0: drawn with probability proportional to exp(value / T); with probability ``blunder``
    (unif[:, 0]) a uniformly random allowed box (unif[:, 1]). unif may be (B, 0) when both are 0.
    """
    nbx = lay.n_boxes
    T = lay.threshold
    F = lay.n_flags
    vals = np.empty(nbx)
    which = np.empty(nbx, dtype=np.int64)
    for g in range(masks.shape[0]):
        mask = masks[g]
        flag = 1 if flags[g] else 0
        u = min(np.int64(uppers[g]), T)
        um = lay.umask_of[mask]
        n = 0
        for b in range(nbx):
            if (allowed[g] >> b) & 1:
                which[n] = b
                n += 1
        if blunder > 0.0 and unif[g, 0] < blunder:
            out[g] = which[min(int(unif[g, 1] * n), n - 1)]
            continue
        for a in range(n):
            b = which[a]
            s = np.int64(options[g, b])
            nf = flag
            if b == lay.key_box:
                nf = 1 if s > 0 else 0
            m2 = mask | (np.int64(1) << b)
            b2 = lay.base[m2 * F + nf]
            if lay.is_upper[b]:
                u2 = min(u + s, T)
                add = s + lay.bonus if (u < T and u2 >= T) else s
                vals[a] = add + V[b2 + lay.slot[lay.umask_of[m2], u2]]
            else:
                vals[a] = s + V[b2 + lay.slot[um, u]]
        if temperature > 0.0:
            out[g] = which[softmax_pick(vals, n, temperature, unif[g, 1])]
        else:
            best = vals[0]
            arg = 0
            for a in range(1, n):
                if vals[a] > best:
                    best = vals[a]
                    arg = a
            out[g] = which[arg]


@nb.njit(cache=True, nogil=True)
def state_stops(ctx, lay, V, mask, flag, u):
    """Stop values (first roll, later roll) (R,) of one state, for turns longer than the table's."""
    n_rolls = ctx.table.shape[0]
    nbx = lay.n_boxes
    ul = np.zeros(1, dtype=np.int32)
    ul[0] = u
    allowed = np.empty(n_rolls, dtype=np.int64)
    rows = np.empty((n_rolls, nbx), dtype=np.int16)
    extras = np.empty(n_rolls, dtype=np.int16)
    box = np.empty((n_rolls, 1), dtype=np.int16)
    sf = np.empty((n_rolls, 1))
    sl = np.empty((n_rolls, 1))
    s1 = np.zeros(1, dtype=np.int64)
    s1[0] = lay.slot[lay.umask_of[mask], u]
    no, yes, one = np.bool_(False), np.bool_(True), np.int64(1)
    stop_values(ctx, lay, V, mask, flag, ul, one, s1, yes, allowed, sf, box, rows, extras, no)
    stop_values(ctx, lay, V, mask, flag, ul, one, s1, no, allowed, sl, box, rows, extras, no)
    return sf[:, 0].copy(), sl[:, 0].copy()
