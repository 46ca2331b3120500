"""Counter-based randomness: every die is a pure function of (root seed, game, seat, turn, roll, die).

No generator state is carried between games, so the dice of game ``i`` are the same whatever the
batch size, worker count, backend or bots (common random numbers, DESIGN.md decision 3), and a
single game can be replayed alone. The mixer is SplitMix64's finaliser (Steele et al. 2014,
"Fast splittable pseudorandom number generators"); it is our own code in plain uint64 arithmetic, so
the streams do not change with the numpy version either.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

# The stream layout, defined here only. The functions below run as plain numpy here and, being
# register_jitable, compile into :mod:`harness.game.loop_kernels` too: the reference and the kernels
# cannot drift apart.
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31, _S11, _S53 = (np.uint64(k) for k in (30, 27, 31, 11, 53))
_SIX = np.uint64(6)
_INV53 = 1.0 / 2**53

#: Stream domains: dice never share numbers with a strategy's own coin flips.
DICE, STRATEGY = 1, 2

#: Counter layout: how many values each field of (domain, seat, turn, step, index) can take. A
#: field past its size would alias another stream's numbers, silently (so they are generous).
SEATS, TURNS, STEPS, WIDTH = 16, 4096, 256, 64

MAX_SEED = 2**64 - 1


@register_jitable
def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of uint64 ``x``, array or scalar (a bijection with good avalanche).

    Plain operators only: numba compiles the same code for the kernels.
    """
    x = x ^ (x >> _S30)
    x = x * _M1
    x = x ^ (x >> _S27)
    x = x * _M2
    return x ^ (x >> _S31)


@register_jitable
def counter_base(domain: int, seat: int, turn: int, step: int) -> np.uint64:
    """The counter of index 0 of the stream at (domain, seat, turn, step); index j adds j.

    (domain, seat, turn, step, j) is one mixed-radix number with digit sizes
    (-, :data:`SEATS`, :data:`TURNS`, :data:`STEPS`, :data:`WIDTH`).
    """
    return np.uint64((((domain * SEATS + seat) * TURNS + turn) * STEPS + step) * WIDTH)


@register_jitable
def word(key: np.ndarray, counter: np.ndarray) -> np.ndarray:
    """The random uint64 word of a game key at a counter (broadcasting; wraps modulo 2**64)."""
    return mix64(key ^ mix64(counter * _GOLDEN))


@register_jitable
def counter_mix(counter: np.ndarray) -> np.ndarray:
    """The part of :func:`word` that depends on the counter only: ``word(key, c) == keyed(key, counter_mix(c))``."""
    return mix64(counter * _GOLDEN)


@register_jitable
def keyed(key: np.ndarray, mixed: np.ndarray) -> np.ndarray:
    """:func:`word` from a :func:`counter_mix`: the same number."""
    return mix64(key ^ mixed)


@register_jitable
def face0(h: np.ndarray) -> np.ndarray:
    """A die face 0..5 (uint64) from a random word: the top 53 bits times 6, unbiased to 2**-53."""
    return ((h >> _S11) * _SIX) >> _S53


@register_jitable
def unit(h: np.ndarray) -> np.ndarray:
    """A float64 in [0, 1) from a random word: its top 53 bits, exactly."""
    return (h >> _S11) * _INV53


def game_keys(seed: int, games: np.ndarray) -> np.ndarray:
    """Per-game keys ``(B,)`` uint64 from the root seed and game indices ``(B,)`` int64."""
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"seed must be 0..2**64-1, got {seed}")
    with np.errstate(over="ignore"):
        s = mix64(np.array([seed], dtype=np.uint64))
        g = np.asarray(games, dtype=np.int64).astype(np.uint64)
        return mix64(s ^ ((g + np.uint64(1)) * _GOLDEN))


def _counter(domain: int, seat: int, turn: int, step: int, width: int) -> np.ndarray:
    return counter_base(domain, seat, turn, step) + np.arange(width, dtype=np.uint64)


def bits(keys: np.ndarray, domain: int, seat: int, turn: int, step: int, width: int) -> np.ndarray:
    """``(B, width)`` uint64 random words for each game key at one (seat, turn, step)."""
    with np.errstate(over="ignore"):
        return word(keys[:, None], _counter(domain, seat, turn, step, width)[None, :])


def draw_faces(keys: np.ndarray, seat: int, turn: int, roll: int, n: int) -> np.ndarray:
    """The fresh draw of ``n`` dice ``(B, n)`` int8 (faces 1..6) for (seat, turn, roll) of each game.

    A reroll of m dice takes the first m values, so streams stay aligned across strategies.
    """
    return face0(bits(keys, DICE, seat, turn, roll, n)).astype(np.int8) + 1


def uniforms(keys: np.ndarray, seat: int, turn: int, step: int, width: int) -> np.ndarray:
    """``(B, width)`` float64 uniforms in [0, 1) for a strategy at (seat, turn, step) of each game."""
    return unit(bits(keys, STRATEGY, seat, turn, step, width))
