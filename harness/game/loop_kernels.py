"""numba kernels for the engine's hot steps: throw dice and apply keeps for a whole batch.

They compute exactly the numbers of :mod:`harness.game.rng`: its counter layout, mixer and conversions
are compiled here from rng's own functions (nothing is copied), fused with the multiset look-up,
so a step costs one pass over the batch instead of a dozen numpy temporaries.
"""

from __future__ import annotations

from harness.util.jit import nb
import numpy as np

from harness.game.rng import DICE, STRATEGY, counter_base, counter_mix, face0, keyed, unit, word

# numba's on-disk cache is keyed on this file only: after an edit to harness/game/rng.py, touch this
# file too (or clear __pycache__), or stale kernels keep the old numbers. The layout must not
# change anyway: it is what makes a game replay identically.


@nb.njit(inline="always")
def _face(key, base, j):
    return np.int64(face0(word(key, base + np.uint64(j))))  # 0..5


@nb.njit(cache=True, nogil=True)
def counter_mixes(domain, seat, turns, steps, width):
    """(turns, steps, width) uint64: the half of :func:`harness.game.rng.word` that depends on the
    counter only, ``mix64(counter * golden)``, for (domain, seat, turn, step, j): shared by every
    game, so kernels that play whole games work it out once (a word is then one mix64 of the key
    xor this, the same number)."""
    out = np.empty((turns, steps, width), dtype=np.uint64)
    for t in range(turns):
        for s in range(steps):
            base = counter_base(domain, seat, t, s)
            for j in range(width):
                out[t, s, j] = counter_mix(base + np.uint64(j))
    return out


@nb.njit(inline="always")
def first_roll(key, mixes, turn, n, w, lookup):
    """One game's first roll of a turn (a roll index), as :func:`throw` makes it; ``mixes`` the
    seat's dice :func:`counter_mixes`, ``w`` (6,) the powers of the dice's radix. For kernels that
    play whole games (their module's cache is not told of an edit here: touch them too)."""
    code = 0
    for j in range(n):
        code += w[np.int64(face0(keyed(key, mixes[turn, 0, j])))]
    return np.int64(lookup[code])


@nb.njit(inline="always")
def next_roll(key, mixes, turn, step, n, k, w, keep_counts, keep_size, lookup):
    """One game's roll after keeping ``k`` (not the whole roll) after roll ``step``, as
    :func:`reroll` makes it."""
    code = 0
    for f in range(6):
        code += keep_counts[k, f] * w[f]
    for j in range(n - keep_size[k]):
        code += w[np.int64(face0(keyed(key, mixes[turn, step + 1, j])))]
    return np.int64(lookup[code])


@nb.njit(cache=True, nogil=True)
def throw(keys, seat, turn, n, lookup, radix):
    """First roll of a turn: (B,) roll indices from the fresh draw of ``n`` dice."""
    out = np.empty(keys.shape[0], dtype=np.int16)
    base = counter_base(DICE, seat, turn, 0)
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
def reroll(
    keys,
    idx,
    seat,
    turn,
    step,
    n,
    roll,
    keep,
    keep_counts,
    keep_size,
    roll_counts,
    roll_as_keep,
    lookup,
    radix,
    first,
    left,
    active,
):
    """Apply keeps ``keep`` (len(idx),) to the games ``idx`` of the batch, in place.

    A keep of every die stops that game's rolling; otherwise the n - k free dice take the first
    values of this roll's fresh draw. Updates roll, first, left, active; returns the position in
    ``idx`` of the first keep that is not a sub-multiset of its roll (-1 if all are legal).
    """
    base = counter_base(DICE, seat, turn, step + 1)
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
    """(B, width) float64 in [0, 1): the numbers of :func:`harness.game.rng.uniforms`."""
    out = np.empty((keys.shape[0], width))
    base = counter_base(STRATEGY, seat, turn, step)
    for i in range(keys.shape[0]):
        for j in range(width):
            out[i, j] = unit(word(keys[i], base + np.uint64(j)))
    return out


@nb.njit(cache=True, nogil=True)
def follow_leads(score, rnd, at, leader, changes, last_behind, deficit):
    """Fold round ``rnd``'s (B, S) ranking scores into the course of each game, in place
    (definitions: :mod:`harness.game.outcome`): ``leader`` (B,) the most recent sole leader (-1 none yet),
    ``changes`` (B,) lead changes, ``last_behind`` (B, S) the last round the seat was behind,
    ``deficit`` (B, S) points behind the highest score, written when ``rnd == at``."""
    b, s = score.shape
    for i in range(b):
        top = score[i, 0]
        arg = 0
        n_top = 1
        for j in range(1, s):
            v = score[i, j]
            if v > top:
                top, arg, n_top = v, j, 1
            elif v == top:
                n_top += 1
        for j in range(s):
            if score[i, j] < top:
                last_behind[i, j] = rnd
            if rnd == at:
                deficit[i, j] = top - score[i, j]
        if n_top == 1:
            if leader[i] >= 0 and leader[i] != arg:
                changes[i] += 1
            leader[i] = arg
