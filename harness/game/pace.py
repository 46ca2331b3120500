"""The bonus pace: the heuristic of a player who plays for the upper bonus (the ``bonus`` bot's, and
the ``paced`` player model's values in :mod:`harness.players.fit`).

A box is valued by its score now, minus what the box would be expected to earn on a later turn
spent on it (its opportunity cost: it scratches cheap boxes rather than expensive ones), plus
``weight`` x the upper bonus x the change in the chance of making the bonus. That chance is
tracked against the remaining open upper boxes: each is assumed to be worked on for one turn,
which makes "three of each" the pace. Stopping with a roll is worth its best box.

One implementation, shared: the bot (:mod:`strategies.bonus`, :mod:`strategies.kernels`) and the
analysis walk (:func:`harness.decisions.kernels.walk`, each option's paced value) call these.

Public API::

    from harness.game.pace import bonus_chance_table, opportunity, box_values, stop_values
    p, opp = bonus_chance_table(rules), opportunity(rules)      # the heuristic's two tables
    box_values(scores, allowed, extra, filled, upper, ..., p, opp, weight, out)  # one roll's box values
"""

from __future__ import annotations

import math
from functools import lru_cache

from harness.util.jit import nb
import numpy as np

from harness.game.rules import RuleSet
from harness.game.turn import turn_policy
from harness.util.sums import dot

#: The weight of the bonus chance in box values of the ``bonus`` bot's default (its ``weight``
#: parameter) and of the paced values the player models mix.
WEIGHT = 1.0


def bonus_chance_table(rules: RuleSet) -> np.ndarray:
    """(64, threshold+1) float64: P(the open upper faces still add >= need), indexed [open faces bitmask, need].

    Each open face f is assumed worked on for one turn: its count is Binomial(n, 1 - (5/6)^rolls),
    the count of f after keeping every f and rerolling the rest.
    """
    n, thr = rules.n_dice, rules.threshold
    # by products of IEEE multiplies, not pow() or scipy's pmf: the C library's pow and exp give
    # other last bits on another processor, and these bits decide the bonus bot's close choices
    q = 1.0 - _power(5.0 / 6.0, rules.rolls_per_turn)
    pmf = np.array([math.comb(n, c) * _power(q, c) * _power(1.0 - q, n - c) for c in range(n + 1)])
    table = np.zeros((64, thr + 1))
    for mask in range(64):
        # distribution of the points the open faces add, capped at thr (more is as thr)
        dist = np.zeros(thr + 1)
        dist[0] = 1.0
        for f in range(1, 7):
            if (mask >> (f - 1)) & 1:
                new = np.zeros(thr + 1)
                for c, p in enumerate(pmf):
                    pts = min(f * c, thr)
                    new[pts:thr] += p * dist[: thr - pts]
                    new[thr] += p * dist[thr - pts :].sum()
                dist = new
        table[mask] = np.cumsum(dist[::-1])[::-1]  # P(points >= need)
    return table


def _power(x: float, k: int) -> float:
    """x ** k for an integer k >= 0 as k - 1 multiplies in turn (the same bits everywhere)."""
    out = 1.0
    for _ in range(k):
        out *= x
    return out


@lru_cache(maxsize=32)
def opportunity(rules: RuleSet) -> np.ndarray:
    """(NB,) expected score of each box on a turn spent on it alone (its opportunity cost)."""
    d = rules.dice
    out = np.empty(rules.n_boxes)
    for b in range(rules.n_boxes):
        v_first, _, _, _ = turn_policy(d, rules.table_first[:, b], rules.table[:, b], rules.rolls_per_turn - 1)
        out[b] = dot(d.roll_prob, v_first)
    return out


@nb.njit(cache=True, nogil=True)
def box_values(scores, allowed, extra, filled, upper, threshold, bonus_value, upper_face, p_table, opp, weight, out):
    """Box values of the bonus pace for one roll: scores (NB,) -> out (NB,), -inf where not allowed.

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
def stop_values(
    rows, allowed, extras, filled, upper, threshold, bonus_value, upper_face, p_table, opp, weight, vals, out
):
    """out (R,): the value of stopping with each roll in one sheet state, its best box by
    :func:`box_values`, from the sheet's score rows (R, NB), allowed and extras (R,); vals (NB,)
    scratch."""
    for r in range(out.shape[0]):
        box_values(
            rows[r],
            allowed[r],
            extras[r],
            filled,
            upper,
            threshold,
            bonus_value,
            upper_face,
            p_table,
            opp,
            weight,
            vals,
        )
        out[r] = vals.max()
