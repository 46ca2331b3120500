"""Dice and keeps as multisets: enumeration, indexing and the reroll transition tables.

A roll of ``n`` six-sided dice is a multiset, stored as face counts ``(6,)``; order never matters
for scoring, so every roll and keep is an index into a fixed table (5 dice: 252 rolls, 462 keeps;
6 dice: 462 rolls, 924 keeps). Everything here is computed once per dice count and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations_with_replacement
from math import factorial

import numpy as np

FACES = 6


def _multisets(size: int) -> list[tuple[int, ...]]:
    """Face-count vectors of every multiset of ``size`` dice, in lexicographic order of sorted faces."""
    out = []
    for faces in combinations_with_replacement(range(1, FACES + 1), size):
        counts = [0] * FACES
        for f in faces:
            counts[f - 1] += 1
        out.append(tuple(counts))
    return out


def _code(counts: np.ndarray, base: int) -> np.ndarray:
    """Mixed-radix code of count vectors ``(..., 6)`` -> ``(...)`` int64, unique for counts < base."""
    weights = base ** np.arange(FACES, dtype=np.int64)
    return counts.astype(np.int64) @ weights


@dataclass(frozen=True, eq=False)
class Dice:
    """Rolls, keeps and transitions for ``n`` dice.

    Attributes (R rolls, K keeps, T transitions, S roll->keep links):
        n: number of dice.
        roll_counts: (R, 6) int8 face counts of each roll.
        roll_faces: (R, n) int8 sorted faces of each roll.
        roll_prob: (R,) float64 probability of each roll when all n dice are thrown.
        keep_counts: (K, 6) int8 face counts of each keep (0..n dice).
        keep_size: (K,) int8 number of dice kept.
        trans_ptr: (K+1,) int64 CSR pointers: keep k rerolls n-size dice into rolls
            trans_roll[trans_ptr[k]:trans_ptr[k+1]] with probabilities trans_prob[...].
        sub_ptr: (R+1,) int64 CSR pointers: the keeps available from roll r are
            sub_keep[sub_ptr[r]:sub_ptr[r+1]] (every sub-multiset, the whole roll last).
        roll_as_keep: (R,) int32 the keep index that keeps every die of roll r (= stop rolling).
    """

    n: int
    roll_counts: np.ndarray
    roll_faces: np.ndarray
    roll_prob: np.ndarray
    keep_counts: np.ndarray
    keep_size: np.ndarray
    trans_ptr: np.ndarray
    trans_roll: np.ndarray
    trans_prob: np.ndarray
    sub_ptr: np.ndarray
    sub_keep: np.ndarray
    roll_as_keep: np.ndarray
    _roll_lookup: np.ndarray
    _keep_lookup: np.ndarray

    @property
    def radix(self) -> int:
        """Base of the count code: a multiset's code is sum(counts[f] * radix**f)."""
        return self.n + 1

    @property
    def roll_lookup(self) -> np.ndarray:
        """((n+1)**6,) int16 roll index by count code (-1 where the counts do not sum to n)."""
        return self._roll_lookup

    @property
    def keep_lookup(self) -> np.ndarray:
        """((n+1)**6,) int16 keep index by count code (-1 where the counts exceed n)."""
        return self._keep_lookup

    @property
    def n_rolls(self) -> int:
        return len(self.roll_counts)

    @property
    def n_keeps(self) -> int:
        return len(self.keep_counts)

    def roll_index(self, counts: np.ndarray) -> np.ndarray:
        """Roll index of face counts ``(..., 6)`` summing to n -> ``(...)`` int16."""
        return self._roll_lookup[_code(counts, self.n + 1)]

    def keep_index(self, counts: np.ndarray) -> np.ndarray:
        """Keep index of face counts ``(..., 6)`` summing to at most n -> ``(...)`` int16."""
        return self._keep_lookup[_code(counts, self.n + 1)]

    def roll_index_of_faces(self, faces: np.ndarray) -> np.ndarray:
        """Roll index of dice faces ``(..., n)`` with values 1..6 -> ``(...)`` int16."""
        return self.roll_index(counts_of_faces(faces))

    def is_subset(self, keep: np.ndarray, roll: np.ndarray) -> np.ndarray:
        """Whether each keep ``(B,)`` is a sub-multiset of the matching roll ``(B,)`` -> (B,) bool."""
        return np.all(self.keep_counts[keep] <= self.roll_counts[roll], axis=-1)


def counts_of_faces(faces: np.ndarray) -> np.ndarray:
    """Face counts ``(..., 6)`` int8 of dice faces ``(..., m)`` (values 1..6; 0 = no die)."""
    faces = np.asarray(faces)
    onehot = faces[..., :, None] == np.arange(1, FACES + 1, dtype=faces.dtype)
    return onehot.sum(axis=-2, dtype=np.int8)


def multiset_probability(counts: tuple[int, ...]) -> float:
    """Probability that throwing sum(counts) fair dice gives exactly these face counts."""
    m = sum(counts)
    ways = factorial(m)
    for c in counts:
        ways //= factorial(c)
    return ways / FACES**m


@cache
def dice(n: int) -> Dice:
    """The cached :class:`Dice` tables for ``n`` dice (1..8)."""
    if not 1 <= n <= 8:
        raise ValueError(f"dice count must be 1..8, got {n}")
    base = n + 1
    rolls = np.array(_multisets(n), dtype=np.int8)
    keeps = np.array([c for size in range(n + 1) for c in _multisets(size)], dtype=np.int8)
    roll_lookup = np.full(base**FACES, -1, dtype=np.int16)
    roll_lookup[_code(rolls, base)] = np.arange(len(rolls), dtype=np.int16)
    keep_lookup = np.full(base**FACES, -1, dtype=np.int16)
    keep_lookup[_code(keeps, base)] = np.arange(len(keeps), dtype=np.int16)
    roll_faces = np.array(
        [np.repeat(np.arange(1, FACES + 1), c) for c in rolls.astype(np.int64)], dtype=np.int8
    ).reshape(len(rolls), n)
    roll_prob = np.array([multiset_probability(tuple(c)) for c in rolls.tolist()])

    outcomes = {m: np.array(_multisets(m), dtype=np.int8) for m in range(n + 1)}
    outcome_prob = {m: np.array([multiset_probability(tuple(c)) for c in o.tolist()]) for m, o in outcomes.items()}
    ptr = [0]
    t_roll: list[np.ndarray] = []
    t_prob: list[np.ndarray] = []
    for k in keeps:
        m = n - int(k.sum())
        t_roll.append(roll_lookup[_code(outcomes[m] + k, base)])
        t_prob.append(outcome_prob[m])
        ptr.append(ptr[-1] + len(outcomes[m]))

    sub_ptr = [0]
    sub_keep: list[int] = []
    fits = np.all(keeps[None, :, :] <= rolls[:, None, :], axis=2)  # (R, K)
    size = keeps.sum(axis=1)
    for r in range(len(rolls)):
        subs = np.flatnonzero(fits[r])
        subs = subs[np.argsort(size[subs] == n, kind="stable")]  # whole roll (= stop) last
        sub_keep.extend(subs.tolist())
        sub_ptr.append(len(sub_keep))

    return Dice(
        n=n,
        roll_counts=rolls,
        roll_faces=roll_faces,
        roll_prob=roll_prob,
        keep_counts=keeps,
        keep_size=keeps.sum(axis=1).astype(np.int8),
        trans_ptr=np.array(ptr, dtype=np.int64),
        trans_roll=np.concatenate(t_roll).astype(np.int32),
        trans_prob=np.concatenate(t_prob),
        sub_ptr=np.array(sub_ptr, dtype=np.int64),
        sub_keep=np.array(sub_keep, dtype=np.int32),
        roll_as_keep=keep_lookup[_code(rolls, base)].astype(np.int32),
        _roll_lookup=roll_lookup,
        _keep_lookup=keep_lookup,
    )
