"""numba kernels of the exact evaluation of solitaire bots (:mod:`harness.evaluate`).

The forward pass of :func:`harness.solver.forward_pass` needs, for every live state of a chunk, the
distribution of its turn's outcome (box, points, extra bonus) under the bot's policy:
:func:`policy_outcomes` pushes the probability of the first roll through the rerolls (each keep of
the policy, deterministic or a distribution over sub-keeps) and the box choice. The rest are the
pieces a built-in bot needs to give its policy for a batch of states: the score rows of each state
(:func:`sheet_scores`) and the solver bot's keeps and boxes with temperature and blunder, computed
from the very kernels and in the very order of arithmetic of the bot's own decisions
(:mod:`harness.solver_kernels`), so that probabilities and ties are the bot's.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from harness.scoring import score_sheet
from harness.solver_kernels import keep_arg_one, state_plan, state_work


@nb.njit(cache=True, nogil=True)
def sheet_scores(ctx, masks, flags, servida, options, allowed, extras):
    """options (B, 2, R, NB) int16, allowed (B, 2, R) int64, extras (B, 2, R) int16 of every state
    (index 1: the first roll). Without servida the first roll scores like any other: copied."""
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


@nb.njit(cache=True, nogil=True)
def policy_outcomes(dk, oc, options, extras, det_keep, keep_idx, keep_prob, det_box, box_idx, box_prob,
                    rows, outp):
    """Turn outcome distribution of every state g under a bot's policy: outp[rows[g], o] += P(outcome o).

    det_keep: keeps from keep_idx (B or 1, rr, R) int, else keep_prob (B or 1, rr, S) float64;
    det_box: boxes from box_idx (B or 1, 2, R) int, else box_prob (B or 1, 2, R, NB) float64.
    """
    n_rolls = options.shape[2]
    n_keeps = dk.add.shape[0]
    nbx = options.shape[3]
    rr = dk.rerolls
    sixth = 1.0 / 6.0
    mass = np.empty(n_rolls)
    fin = np.zeros((2, n_rolls))
    km = np.zeros(n_keeps)
    for g in range(options.shape[0]):
        gk = g if (keep_idx.shape[0] if det_keep else keep_prob.shape[0]) > 1 else 0
        gb = g if (box_idx.shape[0] if det_box else box_prob.shape[0]) > 1 else 0
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
            for r in range(n_rolls):
                m = mass[r]
                if m == 0.0:
                    continue
                kr = dk.roll_as_keep[r]
                if det_keep:
                    a = keep_idx[gk, j - 1, r]
                    if a == kr:
                        fin[fi, r] += m
                    else:
                        km[a] += m
                else:
                    for s in range(dk.sub_ptr[r], dk.sub_ptr[r + 1]):
                        p = keep_prob[gk, j - 1, s]
                        if p == 0.0:
                            continue
                        a = dk.sub_keep[s]
                        if a == kr:
                            fin[fi, r] += m * p
                        else:
                            km[a] += m * p
            # rerolled dice arrive one at a time, each face with probability 1/6
            for k in range(dk.n_small):
                for f in range(6):
                    km[dk.add[k, f]] += km[k] * sixth
            for r in range(n_rolls):
                mass[r] = km[dk.roll_as_keep[r]]
        row = rows[g]
        for fi in range(2):
            for r in range(n_rolls):
                m = fin[fi, r]
                if m == 0.0:
                    continue
                half = oc.half if extras[g, fi, r] > 0 else 0
                if det_box:
                    b = box_idx[gb, fi, r]
                    outp[row, oc.off[b] + oc.vidx[b, options[g, fi, r, b]] + half] += m
                else:
                    for b in range(nbx):
                        p = box_prob[gb, fi, r, b]
                        if p == 0.0:
                            continue
                        outp[row, oc.off[b] + oc.vidx[b, options[g, fi, r, b]] + half] += m * p


@nb.njit(cache=True, nogil=True)
def solver_keeps(ctx, lay, dk, V, masks, flags, uppers, temperature, blunder, det, prob):
    """The solver bot's keeps for every state, stage and roll.

    temperature 0: det (B, rr, R) int32 the T=0 keep (:func:`harness.solver_kernels.policy_keeps`'s,
    the same plan and tie rule); with blunder > 0 also prob (B, rr, S): 1 - blunder on that keep plus
    blunder spread evenly over the roll's sub-keeps. temperature > 0: prob only, the softmax of
    :func:`harness.solver_kernels.soft_keeps` (values exp((v - max) / T), the stop value for the
    whole roll) mixed with the blunder as above.
    """
    n_rolls = ctx.table.shape[0]
    rr = dk.rerolls
    work = state_work(ctx, lay, dk)
    stop_f, stop_l, Es, Ms = work[10], work[11], work[12], work[13]
    w = np.empty(dk.sub_keep.shape[0])
    last = np.int64(-1)
    for g in range(masks.shape[0]):
        mask = masks[g]
        flag = 1 if flags[g] else 0
        u = min(np.int64(uppers[g]), lay.threshold)
        last = state_plan(ctx, lay, dk, V, mask, flag, u, work, last)
        for j in range(1, rr + 1):
            st = stop_f if j == rr else stop_l
            for r in range(n_rolls):
                lo = dk.sub_ptr[r]
                n = dk.sub_ptr[r + 1] - lo
                if temperature <= 0.0:
                    a = keep_arg_one(dk, Es, Ms, j, st, r)
                    det[g, j - 1, r] = a
                    if blunder > 0.0:
                        for i in range(n):
                            prob[g, j - 1, lo + i] = blunder / n
                        prob[g, j - 1, lo + dk.sub_pos[r, a]] += 1.0 - blunder
                    continue
                for i in range(n - 1):
                    w[i] = Es[j, dk.sub_keep[lo + i]]
                w[n - 1] = st[r]
                top = w[0]
                for i in range(1, n):
                    top = max(top, w[i])
                tot = 0.0
                for i in range(n):
                    w[i] = np.exp((w[i] - top) / temperature)
                    tot += w[i]
                for i in range(n):
                    prob[g, j - 1, lo + i] = (1.0 - blunder) * (w[i] / tot) + blunder / n


@nb.njit(cache=True, nogil=True)
def solver_boxes(lay, V, masks, flags, uppers, options, allowed, temperature, blunder, out):
    """The solver bot's box probabilities out (B, 2, R, NB) with temperature > 0 or blunder > 0:
    the values of :func:`harness.solver_kernels.choose_boxes` (score + bonus crossed + V(next)),
    their softmax (or the first strict maximum at T = 0) mixed with a uniform allowed box."""
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
        for fi in range(2):
            for r in range(options.shape[2]):
                al = allowed[g, fi, r]
                n = 0
                for b in range(nbx):
                    out[g, fi, r, b] = 0.0
                    if (al >> b) & 1:
                        which[n] = b
                        n += 1
                for a in range(n):
                    b = which[a]
                    s = np.int64(options[g, fi, r, b])
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
                for a in range(n):
                    out[g, fi, r, which[a]] = blunder / n
                if temperature > 0.0:
                    top = vals[0]
                    for a in range(1, n):
                        top = max(top, vals[a])
                    tot = 0.0
                    for a in range(n):
                        vals[a] = np.exp((vals[a] - top) / temperature)
                        tot += vals[a]
                    for a in range(n):
                        out[g, fi, r, which[a]] += (1.0 - blunder) * (vals[a] / tot)
                else:
                    best = vals[0]
                    arg = 0
                    for a in range(1, n):
                        if vals[a] > best:
                            best = vals[a]
                            arg = a
                    out[g, fi, r, which[arg]] += 1.0 - blunder
