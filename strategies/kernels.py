"""numba kernels for the heuristic bots: stop values of every roll in one sheet state."""

from __future__ import annotations

import numba as nb
import numpy as np

from harness.scoring import score_options


@nb.njit(cache=True, nogil=True)
def bonus_values(scores, allowed, extra, filled, upper, threshold, bonus_value, upper_face, p_table, opp, weight, out):
    """Box values of the bonus bot for one roll: scores (NB,) -> out (NB,), -inf where not allowed.

    value = score + extra - opportunity cost + weight * bonus * (P(bonus) after - P(bonus) now)
    """
    faces = 0
    for b in range(upper_face.shape[0]):
        if upper_face[b] > 0 and not (filled >> b) & 1:
            faces |= 1 << (upper_face[b] - 1)
    up_now = min(upper, threshold)
    p_now = p_table[faces, threshold - up_now]
    for b in range(scores.shape[0]):
        if not (allowed >> b) & 1:
            out[b] = -np.inf
            continue
        p_after = p_now
        if upper_face[b] > 0:
            up_after = min(up_now + scores[b], threshold)
            p_after = p_table[faces & ~(1 << (upper_face[b] - 1)), threshold - up_after]
        out[b] = scores[b] + extra - opp[b] + weight * bonus_value * (p_after - p_now)


@nb.njit(cache=True, nogil=True)
def bonus_stop_values(ctx, first, flag, filled, upper, threshold, bonus_value, p_table, opp, weight):
    """(R,) float64: the bonus bot's value of stopping with each roll in one sheet state."""
    n = ctx.table.shape[0]
    res = np.empty(n)
    row = np.empty(ctx.n_boxes, dtype=np.int16)
    vals = np.empty(ctx.n_boxes)
    for r in range(n):
        allowed, extra = score_options(ctx, r, first, flag, filled, row)
        bonus_values(row, allowed, extra, filled, upper, threshold, bonus_value, ctx.upper_face, p_table, opp,
                     weight, vals)
        res[r] = vals.max()
    return res


@nb.njit(cache=True, nogil=True)
def bonus_values_batch(scores, allowed, extra, filled, upper, threshold, bonus_value, upper_face, p_table, opp,
                       weight):
    """:func:`bonus_values` for a batch: scores (B, NB) -> (B, NB) float64."""
    out = np.empty(scores.shape)
    for i in range(scores.shape[0]):
        bonus_values(scores[i], allowed[i], extra[i], filled[i], upper[i], threshold, bonus_value, upper_face,
                     p_table, opp, weight, out[i])
    return out


@nb.njit(cache=True, nogil=True)
def best_gain_box(options, allowed, extra, upper, threshold, bonus_value, upper_face, order):
    """(B,) the allowed box with the largest immediate gain (points + extra + a bonus it completes).

    Ties go to the earliest box in ``order`` (boxes sorted by their maximum: the cheapest to give up).
    """
    out = np.empty(options.shape[0], dtype=np.int64)
    for i in range(options.shape[0]):
        best = -1.0e18
        arg = -1
        for b in order:
            if not (allowed[i] >> b) & 1:
                continue
            g = options[i, b] + extra[i]
            if upper_face[b] > 0 and upper[i] < threshold <= upper[i] + options[i, b]:
                g += bonus_value
            if g > best:
                best = g
                arg = b
        out[i] = arg
    return out


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
