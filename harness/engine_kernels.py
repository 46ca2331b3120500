"""numba kernels for the engine's hot steps: throw dice and apply keeps for a whole batch.

They compute exactly the numbers of :mod:`harness.rng` (same counter layout, same SplitMix64
finaliser, wrapping uint64 arithmetic), fused with the multiset look-up, so a step costs one pass
over the batch instead of a dozen numpy temporaries.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@nb.njit(inline="always")
def _mix64(x):
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


@nb.njit(inline="always")
def _face(key, base, j):
    c = _mix64((base + np.uint64(j)) * _GOLDEN)
    h = _mix64(key ^ c)
    return np.int64(((h >> np.uint64(11)) * np.uint64(6)) >> np.uint64(53))  # 0..5


@nb.njit(inline="always")
def _base(domain, seat, turn, step):
    return np.uint64((((domain * 16 + seat) * 4096 + turn) * 256 + step) * 64)


@nb.njit(cache=True, nogil=True)
def throw(keys, seat, turn, n, lookup, radix):
    """First roll of a turn: (B,) roll indices from the fresh draw of ``n`` dice."""
    out = np.empty(keys.shape[0], dtype=np.int16)
    base = _base(1, seat, turn, 0)
    w = np.empty(6, dtype=np.int64)
    for f in range(6):
        w[f] = radix**f
    for i in range(keys.shape[0]):
        code = 0
        for j in range(n):
            code += w[_face(keys[i], base, j)]
        out[i] = lookup[code]
    return out


@nb.njit(cache=True, nogil=True)
def reroll(keys, idx, seat, turn, step, n, roll, keep, keep_counts, keep_size, roll_counts, roll_as_keep,
           lookup, radix, first, left, active):
    """Apply keeps ``keep`` (len(idx),) to the games ``idx`` of the batch, in place.

    A keep of every die stops that game's rolling; otherwise the n - k free dice take the first
    values of this roll's fresh draw. Updates roll, first, left, active; returns the position in
    ``idx`` of the first keep that is not a sub-multiset of its roll (-1 if all are legal).
    """
    base = _base(1, seat, turn, step + 1)
    w = np.empty(6, dtype=np.int64)
    for f in range(6):
        w[f] = radix**f
    n_keeps = keep_counts.shape[0]
    for t in range(idx.shape[0]):
        i = idx[t]
        k = keep[t]
        r = roll[i]
        if k < 0 or k >= n_keeps:
            return t
        for f in range(6):
            if keep_counts[k, f] > roll_counts[r, f]:
                return t
        if k == roll_as_keep[r]:
            active[i] = False
            continue
        code = 0
        for f in range(6):
            code += keep_counts[k, f] * w[f]
        for j in range(n - keep_size[k]):
            code += w[_face(keys[i], base, j)]
        roll[i] = lookup[code]
        first[i] = False
        left[i] -= 1
        active[i] = left[i] > 0
    return -1


@nb.njit(cache=True, nogil=True)
def uniforms(keys, seat, turn, step, width):
    """(B, width) float64 in [0, 1): the numbers of :func:`harness.rng.uniforms`."""
    out = np.empty((keys.shape[0], width))
    base = _base(2, seat, turn, step)
    for i in range(keys.shape[0]):
        for j in range(width):
            c = _mix64((base + np.uint64(j)) * _GOLDEN)
            h = _mix64(keys[i] ^ c)
            out[i, j] = np.float64(h >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    return out
