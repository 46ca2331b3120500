"""Within-turn optimisation: the best keeps for any value of the dice at the end of the turn.

Given what stopping with each roll is worth (``term_first`` on the turn's first roll, ``term_later``
after a reroll), :func:`turn_policy` works backwards through the rerolls of one turn. Greedy play,
bonus-protecting play and the exact solver differ only in the stop values they pass in.
"""

from __future__ import annotations

from harness.util.jit import nb
import numpy as np

from harness.game.dice import Dice


@nb.njit(cache=True, nogil=True)
def keep_expectations(v_next, trans_ptr, trans_roll, trans_prob, out):
    """out[k] = expected ``v_next`` (R,) after rerolling the dice not in keep k; out (K,)."""
    for k in range(trans_ptr.shape[0] - 1):
        acc = 0.0
        for t in range(trans_ptr[k], trans_ptr[k + 1]):
            acc += trans_prob[t] * v_next[trans_roll[t]]
        out[k] = acc


@nb.njit(cache=True, nogil=True)
def best_keeps(stop, ek, sub_ptr, sub_keep, roll_as_keep, value, keep):
    """For each roll r: best of stopping (``stop[r]``) and each proper keep (``ek``).

    Ties go to stopping, then to the first keep in ``sub_keep`` order, so play is deterministic.
    Writes value (R,) and keep (R,) (``roll_as_keep[r]`` means stop).
    """
    for r in range(stop.shape[0]):
        best = stop[r]
        arg = roll_as_keep[r]
        for s in range(sub_ptr[r], sub_ptr[r + 1] - 1):  # the last sub-keep is the whole roll
            k = sub_keep[s]
            if ek[k] > best:
                best = ek[k]
                arg = k
        value[r] = best
        keep[r] = arg


@nb.njit(cache=True, nogil=True)
def turn_policy_kernel(
    term_first, term_later, rerolls, trans_ptr, trans_roll, trans_prob, sub_ptr, sub_keep, roll_as_keep
):
    n_rolls = term_later.shape[0]
    n_keeps = trans_ptr.shape[0] - 1
    values = np.empty((rerolls + 1, n_rolls))
    keeps = np.empty((rerolls + 1, n_rolls), dtype=np.int32)
    # element loops, not slice assignments: numba's array set-item with broadcasting takes ~3 s
    # to compile (a first run's wait), the loops a fraction of that; the same numbers
    for r in range(n_rolls):
        values[0, r] = term_later[r]
        keeps[0, r] = roll_as_keep[r]
    ek = np.empty(n_keeps)
    for j in range(1, rerolls + 1):
        keep_expectations(values[j - 1], trans_ptr, trans_roll, trans_prob, ek)
        best_keeps(term_later, ek, sub_ptr, sub_keep, roll_as_keep, values[j], keeps[j])
    v_first = np.empty(n_rolls)
    k_first = np.empty(n_rolls, dtype=np.int32)
    if rerolls == 0:
        for r in range(n_rolls):
            v_first[r] = term_first[r]
            k_first[r] = roll_as_keep[r]
    else:
        # ek holds keep_expectations(values[rerolls - 1]) from the loop's last stage (best_keeps
        # only reads it): the first roll's keeps come from the same expectations, not worked out again
        best_keeps(term_first, ek, sub_ptr, sub_keep, roll_as_keep, v_first, k_first)
    return v_first, k_first, values, keeps


def turn_policy(d: Dice, term_first: np.ndarray, term_later: np.ndarray, rerolls: int):
    """Optimal keeps for stop values over one turn with ``rerolls`` rerolls after the first roll.

    Returns ``(v_first, k_first, values, keeps)``: v_first/k_first (R,) value and keep with the
    turn's first roll in hand; values/keeps (rerolls+1, R) with j rerolls left after a reroll
    (keeps[0] is always stop). The turn's expected value is ``d.roll_prob @ v_first``.
    """
    return turn_policy_kernel(
        np.ascontiguousarray(term_first, dtype=np.float64),
        np.ascontiguousarray(term_later, dtype=np.float64),
        int(rerolls),
        d.trans_ptr,
        d.trans_roll,
        d.trans_prob,
        d.sub_ptr,
        d.sub_keep,
        d.roll_as_keep,
    )


@nb.njit(cache=True, nogil=True)
def turn_keeps(
    term_first, term_later, rerolls, trans_ptr, trans_roll, trans_prob, sub_ptr, sub_keep, roll_as_keep, out
):
    """The keeps of :func:`turn_policy` for a batch of stop values term_first / term_later (B, R):
    out (B, rerolls, R) int32, row j - 1 with j rerolls left after a reroll and row rerolls - 1 on
    the turn's first roll (every reroll still to come), rerolls >= 1. The same kernels in the same
    order as :func:`turn_policy_kernel`, so the same keeps to the last tie; the stage a turn never
    reaches (all rerolls left after a reroll) is skipped, and a row whose stop values equal the row
    before's bit for bit copies its keeps."""
    n, n_rolls = term_later.shape
    n_keeps = trans_ptr.shape[0] - 1
    values = np.empty((rerolls, n_rolls))
    keeps = np.empty(n_rolls, dtype=np.int32)
    v_first = np.empty(n_rolls)
    ek = np.empty(n_keeps)
    for g in range(n):
        if g > 0:
            same = True
            for r in range(n_rolls):
                if term_later[g, r] != term_later[g - 1, r] or term_first[g, r] != term_first[g - 1, r]:
                    same = False
                    break
            if same:
                for j in range(rerolls):
                    for r in range(n_rolls):
                        out[g, j, r] = out[g - 1, j, r]
                continue
        # element loops, not array set-items: numba's broadcasting set-item compiles its error
        # message's string formatting (about 3.4 s of CPU of this kernel's 4.6)
        for r in range(n_rolls):
            values[0, r] = term_later[g, r]
        for j in range(1, rerolls):
            keep_expectations(values[j - 1], trans_ptr, trans_roll, trans_prob, ek)
            best_keeps(term_later[g], ek, sub_ptr, sub_keep, roll_as_keep, values[j], keeps)
            for r in range(n_rolls):
                out[g, j - 1, r] = keeps[r]
        keep_expectations(values[rerolls - 1], trans_ptr, trans_roll, trans_prob, ek)
        best_keeps(term_first[g], ek, sub_ptr, sub_keep, roll_as_keep, v_first, keeps)
        for r in range(n_rolls):
            out[g, rerolls - 1, r] = keeps[r]


def batch_keeps(d: Dice, term_first: np.ndarray, term_later: np.ndarray, rerolls: int) -> np.ndarray:
    """(B, rerolls, R) int32 :func:`turn_keeps` of stop values (B, R) (see there)."""
    out = np.empty((len(term_later), rerolls, d.n_rolls), dtype=np.int32)
    turn_keeps(
        np.ascontiguousarray(term_first, dtype=np.float64),
        np.ascontiguousarray(term_later, dtype=np.float64),
        int(rerolls),
        d.trans_ptr,
        d.trans_roll,
        d.trans_prob,
        d.sub_ptr,
        d.sub_keep,
        d.roll_as_keep,
        out,
    )
    return out
