"""Counter-based randomness: every die is a pure function of (root seed, game, seat, turn, roll, die).

No generator state is carried between games, so the dice of game ``i`` are the same whatever the
batch size, worker count, backend or bots (common random numbers, DESIGN.md decision 3), and a
single game can be replayed alone. The mixer is SplitMix64's finaliser (Steele et al. 2014,
"Fast splittable pseudorandom number generators"); it is our own code in plain uint64 arithmetic, so
the streams do not change with the numpy version either.
"""

from __future__ import annotations

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31, _S11 = (np.uint64(k) for k in (30, 27, 31, 11))

#: Stream domains: dice never share numbers with a strategy's own coin flips.
DICE, STRATEGY = 1, 2

MAX_SEED = 2**64 - 1


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of uint64 array ``x`` (a bijection with good avalanche)."""
    x = x ^ (x >> _S30)
    x = x * _M1
    x = x ^ (x >> _S27)
    x = x * _M2
    return x ^ (x >> _S31)


def game_keys(seed: int, games: np.ndarray) -> np.ndarray:
    """Per-game keys ``(B,)`` uint64 from the root seed and game indices ``(B,)`` int64."""
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"seed must be 0..2**64-1, got {seed}")
    with np.errstate(over="ignore"):
        s = mix64(np.array([seed], dtype=np.uint64))
        g = np.asarray(games, dtype=np.int64).astype(np.uint64)
        return mix64(s ^ ((g + np.uint64(1)) * _GOLDEN))


def _counter(domain: int, seat: int, turn: int, step: int, width: int) -> np.ndarray:
    base = (((domain * 16 + seat) * 4096 + turn) * 256 + step) * 64
    return np.uint64(base) + np.arange(width, dtype=np.uint64)


def bits(keys: np.ndarray, domain: int, seat: int, turn: int, step: int, width: int) -> np.ndarray:
    """``(B, width)`` uint64 random words for each game key at one (seat, turn, step)."""
    with np.errstate(over="ignore"):
        c = mix64(_counter(domain, seat, turn, step, width) * _GOLDEN)
        return mix64(keys[:, None] ^ c[None, :])


def draw_faces(keys: np.ndarray, seat: int, turn: int, roll: int, n: int) -> np.ndarray:
    """The fresh draw of ``n`` dice ``(B, n)`` int8 (faces 1..6) for (seat, turn, roll) of each game.

    A reroll of m dice takes the first m values, so streams stay aligned across strategies.
    """
    h = bits(keys, DICE, seat, turn, roll, n)
    return (((h >> _S11) * np.uint64(6)) >> np.uint64(53)).astype(np.int8) + 1


def uniforms(keys: np.ndarray, seat: int, turn: int, step: int, width: int) -> np.ndarray:
    """``(B, width)`` float64 uniforms in [0, 1) for a strategy at (seat, turn, step) of each game."""
    h = bits(keys, STRATEGY, seat, turn, step, width)
    return (h >> _S11).astype(np.float64) * (1.0 / 2**53)
