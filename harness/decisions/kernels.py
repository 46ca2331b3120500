"""The numba kernel of the luck/skill analysis: every roll's luck and every decision's regret of
many recorded seat-games in one call (:mod:`harness.decisions.analysis` is its Python face and its reference).

:func:`walk` follows each seat-game turn by turn. At each turn start it works out the state's turn
plan with the solver bot's own kernels (:func:`harness.exact.kernels.solver.state_plan`: stop values and the
stage values of every keep), so each value is, bit for bit, the one :class:`harness.decisions.positions.Advisor`
gives, and each sum is accumulated in the same order as :meth:`harness.decisions.analysis.Analyser.seat` does.

Per seat-game (row n of ``sums``, columns :data:`SUMS`) it writes V(start), luck, regret, the final
points, the decisions, the errors, the regret split by kind and the largest single regret; with
``want`` it also writes one row per decision (see :func:`walk`), and with a non-empty ``d_myopic``
each option's myopic value (see :func:`myopic_stops`), with a non-empty ``d_paced`` its paced value
(the bonus pace of :mod:`harness.game.pace`).
"""

from __future__ import annotations

from harness.util.jit import nb
import numpy as np

from harness.game.pace import box_values, stop_values
from harness.exact.kernels.solver import state_plan, state_work, turn_one

#: Columns of the per-seat-game sums written by :func:`walk`.
SUMS = (
    "start",
    "luck",
    "regret",
    "final",
    "decisions",
    "errors",
    "keep_decisions",
    "box_decisions",
    "keep_regret",
    "box_regret",
    "upper_regret",
    "max_regret",
)
#: Decision kinds of the per-decision rows.
KEEP, BOX = 0, 1


@nb.njit(cache=True, nogil=True)
def _state_value(lay, V, mask, flag, upper):
    u = min(upper, lay.threshold)
    return V[lay.base[mask * lay.n_flags + flag] + lay.slot[lay.umask_of[mask], u]]


@nb.njit(cache=True, nogil=True)
def _box_future(lay, V, mask, flag, upper, b, s):
    """score + bonus crossed + V(next state) of writing score ``s`` in box ``b`` (the extra bonus
    not included), as :func:`harness.exact.kernels.solver.choose_boxes` computes it."""
    T = lay.threshold
    u = min(upper, T)
    nf = flag
    if b == lay.key_box:
        nf = 1 if s > 0 else 0
    m2 = mask | (np.int64(1) << b)
    b2 = lay.base[m2 * lay.n_flags + nf]
    if lay.is_upper[b]:
        u2 = min(u + s, T)
        add = s + lay.bonus if (u < T and u2 >= T) else s
        return add + V[b2 + lay.slot[lay.umask_of[m2], u2]]
    return s + V[b2 + lay.slot[lay.umask_of[mask], u]]


@nb.njit(cache=True, nogil=True)
def myopic_stops(rows, allowed, extras, out):
    """out (R,): the myopic value of stopping with each roll, the best score of an allowed box plus
    the roll's extra bonus (the upper bonus not counted): ``greedy``'s stop values
    (:func:`harness.game.scoring.best_immediate`), from a sheet's score rows."""
    for r in range(out.shape[0]):
        best = -1
        for b in range(rows.shape[1]):
            if (allowed[r] >> b) & 1 and rows[r, b] > best:
                best = rows[r, b]
        out[r] = best + extras[r]


@nb.njit(cache=True, nogil=True)
def _keep_row(out, d, Es, left, sub_keep, lo, hi, stop):
    """Row d of a keep decision's option values: out[d, a] the stage value Es[left] of the roll's
    sub-keep a (sub-keeps lo..hi-2), ``stop`` for the last option (keep all = stop), -inf past them."""
    for a in range(lo, hi - 1):
        out[d, a - lo] = Es[left, sub_keep[a]]
    out[d, hi - 1 - lo] = stop
    for a in range(hi - lo, out.shape[1]):
        out[d, a] = -np.inf


@nb.njit(cache=True, nogil=True)
def walk(ctx, lay, dk, V, sheet, games, sums, want, rows_out, with_myopic, with_paced):
    """Analyse N seat-games: rolls (N, T, R) int16 roll indices (-1 once a turn stopped), keeps
    (N, T, R) int16 the keep index after roll i (read for i < the turn's last roll only), boxes
    (N, T) int8 the box written (T = columns x n_boxes turns; a column ends early at its first turn
    with no roll: a partial game). sums (N, len(SUMS)) float64 is written.

    With ``want`` each decision also gets a row d (in play order; returns how many): d_vals (D, W)
    the option values as the solver bot's softmax sees them (keeps: the roll's sub-keeps in
    ``dk.sub_keep`` order, the last = stop; boxes: the allowed boxes in sheet order, extra bonus
    left out), -inf past d_n[d] options; d_chosen the option played; d_kind :data:`KEEP` or
    :data:`BOX`; d_row the seat-game; d_turn, d_roll where; d_regret its regret (as in ``sums``);
    d_upper a box decision that wrote an upper box. With ``want`` False the d_ arrays may be empty.

    d_myopic (D, W), when not empty (and ``want``), gets each option's *myopic* value, in the
    columns of d_vals: the best box score reachable this turn from the option, what ``greedy``
    maximises. A box: its score plus the upper bonus if it completes it (the roll's extra bonus,
    common to every box, left out like in d_vals), minus box_tie[box] (NB,), a small amount that
    breaks ties between boxes of equal gain the way greedy does (well below a point: the gains are
    whole points). Stop: the best allowed box's score plus the
    roll's extra bonus (:func:`myopic_stops`). A keep: the expectation over the reroll of the
    best such stop value reachable by the end of the turn, the keeps that follow chosen to
    maximise it (:func:`harness.exact.kernels.solver.turn_one` on the myopic stop values: greedy's turn
    plan). -inf past d_n[d].

    d_paced (D, W), when not empty (and ``want``), gets each option's *paced* value likewise, the
    value to a player who plays for the upper bonus as the ``bonus`` bot does (:mod:`harness.game.pace`
    with its tables p_table, opp and ``pace_weight``; upper_face (NB,)): a box, its
    :func:`harness.game.pace.box_values` value (the extra bonus included: common to every box), lowered
    by ``pace_tie`` when it ties (within ``tie``) with the bot's box, the first best in ``order``
    (the bot's tie rule: the cheapest box to give up first); stop, the best box's value
    (:func:`harness.game.pace.stop_values`); a keep, the expectation over the reroll of the stop value
    at the end of the turn, the keeps after it chosen to maximise it (the bot's turn plan).

    The arguments after the solver's (ctx, lay, dk, V) come in tuples: ``sheet`` (n_boxes, threshold,
    bonus_value, tie), ``games`` (rolls, keeps, boxes), then sums and want, ``rows_out`` (d_vals, d_n,
    d_chosen, d_kind, d_row, d_turn, d_roll, d_regret, d_upper), ``with_myopic`` (d_myopic, box_tie)
    and ``with_paced`` (d_paced, p_table, opp, upper_face, pace_weight, order, pace_tie).
    """
    n_boxes, threshold, bonus_value, tie = sheet
    rolls, keeps, boxes = games
    d_vals, d_n, d_chosen, d_kind, d_row, d_turn, d_roll, d_regret, d_upper = rows_out
    d_myopic, box_tie = with_myopic
    d_paced, p_table, opp, upper_face, pace_weight, order, pace_tie = with_paced
    rr = dk.rerolls
    nb_ = n_boxes
    T = rolls.shape[1]
    work = state_work(ctx, lay, dk)
    rows_l, al_l, ex_l, rows_f, al_f, ex_f = work[0], work[1], work[2], work[3], work[4], work[5]
    stop_f, stop_l, Es = work[10], work[11], work[12]
    mine = want and d_myopic.shape[0] > 0
    n_rolls = stop_f.shape[0]
    g_f, g_l = np.empty(n_rolls), np.empty(n_rolls)  # the myopic stop values and turn plan
    g_E, g_M = np.empty(dk.add.shape[0]), np.empty(dk.n_small)
    g_Es, g_Ms = np.zeros((rr + 1, dk.add.shape[0])), np.zeros((rr + 1, dk.n_small))
    paced = want and d_paced.shape[0] > 0
    h_f, h_l = np.empty(n_rolls), np.empty(n_rolls)  # the paced stop values and turn plan
    h_E, h_M = np.empty(dk.add.shape[0]), np.empty(dk.n_small)
    h_Es, h_Ms = np.zeros((rr + 1, dk.add.shape[0])), np.zeros((rr + 1, dk.n_small))
    h_box = np.empty(nb_)
    ncol = T // nb_
    d = 0
    neg = -np.inf
    for n in range(rolls.shape[0]):
        start = 0.0
        luck = 0.0
        regret = 0.0
        final = 0
        n_keep = 0
        n_box = 0
        errors = 0
        keep_regret = 0.0
        box_regret = 0.0
        upper_regret = 0.0
        max_regret = 0.0
        last = np.int64(-1)
        for c in range(ncol):
            mask = np.int64(0)
            upper = np.int64(0)
            flag = np.int64(0)
            points = np.int64(0)
            v = points + _state_value(lay, V, mask, flag, upper)
            start += v
            for t in range(c * nb_, (c + 1) * nb_):
                if rolls[n, t, 0] < 0:
                    break
                last = state_plan(ctx, lay, dk, V, mask, flag, min(upper, lay.threshold), work, last)
                if mine:
                    myopic_stops(rows_l, al_l, ex_l, g_l)
                    if lay.servida:
                        myopic_stops(rows_f, al_f, ex_f, g_f)
                    else:
                        g_f[:] = g_l
                    turn_one(dk, g_f, g_l, g_E, g_M, g_Es, g_Ms)
                if paced:
                    stop_values(
                        rows_l,
                        al_l,
                        ex_l,
                        mask,
                        upper,
                        threshold,
                        bonus_value,
                        upper_face,
                        p_table,
                        opp,
                        pace_weight,
                        h_box,
                        h_l,
                    )
                    if lay.servida:
                        stop_values(
                            rows_f,
                            al_f,
                            ex_f,
                            mask,
                            upper,
                            threshold,
                            bonus_value,
                            upper_face,
                            p_table,
                            opp,
                            pace_weight,
                            h_box,
                            h_f,
                        )
                    else:
                        h_f[:] = h_l
                    turn_one(dk, h_f, h_l, h_E, h_M, h_Es, h_Ms)
                nr = 0
                while nr < rolls.shape[2] and rolls[n, t, nr] >= 0:
                    nr += 1
                for i in range(nr):
                    r = np.int64(rolls[n, t, i])
                    left = rr - i
                    first = i == 0
                    st = stop_f if first else stop_l
                    lo = dk.sub_ptr[r]
                    hi = dk.sub_ptr[r + 1]
                    best = st[r]
                    if left > 0:
                        for a in range(lo, hi - 1):
                            e = Es[left, dk.sub_keep[a]]
                            if e > best:
                                best = e
                    after = points + best
                    luck += after - v
                    if i < nr - 1 or left > 0:  # a keep decision: reroll, or stop with rerolls left
                        if i < nr - 1:
                            k = np.int64(keeps[n, t, i])
                            chosen = points + Es[left, k]
                            v = chosen
                        else:
                            k = np.int64(dk.sub_keep[hi - 1])
                            chosen = points + st[r]
                        reg = after - chosen
                        regret += reg
                        errors += reg > tie
                        n_keep += 1
                        keep_regret += reg
                        max_regret = max(max_regret, reg)
                        if want:
                            _keep_row(d_vals, d, Es, left, dk.sub_keep, lo, hi, st[r])
                            if mine:
                                _keep_row(d_myopic, d, g_Es, left, dk.sub_keep, lo, hi, g_f[r] if first else g_l[r])
                            if paced:
                                _keep_row(d_paced, d, h_Es, left, dk.sub_keep, lo, hi, h_f[r] if first else h_l[r])
                            d_n[d] = hi - lo
                            d_chosen[d] = dk.sub_pos[r, k]
                            d_kind[d] = KEEP
                            d_row[d], d_turn[d], d_roll[d], d_regret[d], d_upper[d] = n, t, i, reg, False
                            d += 1
                        if i < nr - 1:
                            continue
                        after = chosen
                    # the box decision
                    fs = first and lay.servida  # state_plan scores the first roll apart only with servida
                    rows = rows_f if fs else rows_l
                    allowed = al_f[r] if fs else al_l[r]
                    extra = np.int64(ex_f[r] if fs else ex_l[r])
                    b = np.int64(boxes[n, t])
                    s = np.int64(rows[r, b])
                    chosen = points + (_box_future(lay, V, mask, flag, upper, b, s) + extra)
                    reg = after - chosen
                    regret += reg
                    errors += reg > tie
                    n_box += 1
                    box_regret += reg
                    is_up = lay.is_upper[b]
                    if is_up:
                        upper_regret += reg
                    max_regret = max(max_regret, reg)
                    if paced:
                        box_values(
                            rows[r],
                            allowed,
                            extra,
                            mask,
                            upper,
                            threshold,
                            bonus_value,
                            upper_face,
                            p_table,
                            opp,
                            pace_weight,
                            h_box,
                        )
                        top = -1
                        for bb in order:  # the bot's box: the first best in its order
                            if (allowed >> bb) & 1 and (top < 0 or h_box[bb] > h_box[top]):
                                top = bb
                        for bb in range(nb_):
                            if bb != top and (allowed >> bb) & 1 and h_box[bb] >= h_box[top] - tie:
                                h_box[bb] -= pace_tie
                    if want:
                        m = 0
                        for bb in range(nb_):
                            if (allowed >> bb) & 1:
                                sb = np.int64(rows[r, bb])
                                d_vals[d, m] = _box_future(lay, V, mask, flag, upper, bb, sb)
                                if mine:
                                    crosses = lay.is_upper[bb] and upper < lay.threshold <= upper + sb
                                    d_myopic[d, m] = (sb + lay.bonus if crosses else sb) - box_tie[bb]
                                if paced:
                                    d_paced[d, m] = h_box[bb]
                                if bb == b:
                                    d_chosen[d] = m
                                m += 1
                        for a in range(m, d_vals.shape[1]):
                            d_vals[d, a] = neg
                            if mine:
                                d_myopic[d, a] = neg
                            if paced:
                                d_paced[d, a] = neg
                        d_n[d] = m
                        d_kind[d] = BOX
                        d_row[d], d_turn[d], d_roll[d], d_regret[d], d_upper[d] = n, t, i, reg, is_up
                        d += 1
                    # the next turn's state
                    old = upper
                    if is_up:
                        upper += s
                    if b == lay.key_box:
                        flag = 1 if s > 0 else 0
                    crossed = bonus_value if (old < threshold <= upper) else 0
                    points += s + extra + crossed
                    mask |= np.int64(1) << b
                    v = points + _state_value(lay, V, mask, flag, upper)
            final += points
        out = sums[n]
        out[0], out[1], out[2], out[3] = start, luck, regret, final
        out[4], out[5], out[6], out[7] = n_keep + n_box, errors, n_keep, n_box
        out[8], out[9], out[10], out[11] = keep_regret, box_regret, upper_regret, max_regret
    return d
