"""The solver's state layout and dice tables: which states a rule set has and where each one lives
in the flat value array (:class:`Plan`, :func:`build_plan`), the one-die-at-a-time dice tables of
the kernels (:func:`dice_tables`), and :class:`Solution`, a value table over that layout.

:mod:`harness.exact.solver` solves, caches and loads the tables; this module only lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.exact.kernels import solver as K
from harness.util.errors import UserError
from harness.game.dice import Dice
from harness.game.rules import RuleSet

#: Largest sheet the solver accepts (2**24 masks: the layout alone would take several GiB beyond).
MAX_BOXES = 24


@dataclass(frozen=True, eq=False)
class Plan:
    """The state layout of a rule set (see :mod:`harness.exact.kernels.solver`).

    item_mask, item_flag: (I,) int64 work items (one per (mask, flag)), ordered by layer;
    layer_items, layer_states: (NB+2,) int64 where each layer's items / states start.
    bonus0: bonus earned before play (threshold 0).
    """

    layout: K.Layout
    dice: K.DiceK
    item_mask: np.ndarray
    item_flag: np.ndarray
    layer_items: np.ndarray
    layer_states: np.ndarray
    n_states: int
    bonus0: int

    @property
    def full_mask(self) -> int:
        return (1 << self.layout.n_boxes) - 1

    def states(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(mask, flag, slot, upper subtotal) of every state, (states,) int64: what the layout packs
        into a state's index."""
        lay = self.layout
        item = np.repeat(np.arange(len(self.item_mask)), lay.nslot[lay.umask_of[self.item_mask]].astype(np.int64))
        mask, flag = self.item_mask[item], self.item_flag[item]
        slot = np.arange(self.n_states) - lay.base[self.item_mask * lay.n_flags + self.item_flag][item]
        return mask, flag, slot, lay.ulist[lay.umask_of[mask], slot].astype(np.int64)


def dice_tables(d: Dice, rerolls: int) -> K.DiceK:
    """The one-die-at-a-time tables of :class:`harness.exact.kernels.solver.DiceK`."""
    kc = d.keep_counts.astype(np.int64)
    n_small = int(np.sum(d.keep_size < d.n))
    if not (np.all(np.diff(d.keep_size) >= 0) and np.array_equal(d.roll_as_keep, n_small + np.arange(d.n_rolls))):
        raise AssertionError("the kernels need keeps sorted by size, the whole rolls last in roll order")
    add = np.full((d.n_keeps, 6), -1, dtype=np.int32)
    rem = np.full((d.n_keeps, 6), -1, dtype=np.int32)
    eye = np.eye(6, dtype=np.int64)
    for f in range(6):
        small = d.keep_size < d.n
        add[small, f] = d.keep_index(kc[small] + eye[f])
        has = kc[:, f] > 0
        rem[has, f] = d.keep_index(kc[has] - eye[f])
    sub_pos = np.full((d.n_rolls, d.n_keeps), -1, dtype=np.int16)
    for r in range(d.n_rolls):
        subs = d.sub_keep[d.sub_ptr[r] : d.sub_ptr[r + 1]]
        sub_pos[r, subs] = np.arange(len(subs))
    faces = np.full((d.n_keeps, 6), -1, dtype=np.int32)
    n_faces = np.sum(rem >= 0, axis=1).astype(np.int32)
    for k in range(d.n_keeps):
        faces[k, : n_faces[k]] = rem[k][rem[k] >= 0]
    return K.DiceK(
        d.roll_prob.astype(np.float64),
        d.roll_as_keep.astype(np.int32),
        add,
        rem,
        d.sub_ptr.astype(np.int64),
        d.sub_keep.astype(np.int32),
        sub_pos,
        faces,
        n_faces,
        n_small,
        int(rerolls),
    )


def _box_values(rules: RuleSet, b: int) -> np.ndarray:
    """Every score box b can take (0 included: a box may always be scratched)."""
    vals = np.concatenate([rules.table[:, b], rules.table_first[:, b], [0]])
    if rules.joker_value[b] >= 0:
        vals = np.append(vals, rules.joker_value[b])
    return np.unique(vals.astype(np.int64))


_PLANS: dict[str, Plan] = {}


def build_plan(rules: RuleSet) -> Plan:
    """Work out which states exist and where each one lives in the value array (once per rule set
    and process: the solution and each target table of a rule set share one, ~0.03 s each)."""
    hit = _PLANS.get(rules.digest)
    if hit is None:
        hit = _PLANS[rules.digest] = _build_plan(rules)
    return hit


def _build_plan(rules: RuleSet) -> Plan:
    nbx = rules.n_boxes
    if nbx > MAX_BOXES:
        raise UserError(f"rule set {rules.name!r}: the solver handles at most {MAX_BOXES} boxes, got {nbx}")
    bonus0 = 0
    if rules.bonus_value == 0:
        T, bonus = 0, 0  # the upper subtotal never matters
    elif rules.threshold == 0:
        T, bonus, bonus0 = 0, 0, int(rules.bonus_value)  # earned before the first roll
    else:
        T, bonus = int(rules.threshold), int(rules.bonus_value)
    upidx = np.flatnonzero(rules.upper_face > 0)
    n_up = len(upidx)
    n_um = 1 << n_up
    full_um = n_um - 1
    reach: list[np.ndarray] = []
    up_vals = [_box_values(rules, b) for b in upidx]
    for um in range(n_um):
        s = np.zeros(1, dtype=np.int64)
        for j, vals in enumerate(up_vals):
            if (um >> j) & 1:
                s = np.unique(np.minimum(s[:, None] + vals[None, :], T))
        reach.append(s if um != full_um else np.zeros(1, dtype=np.int64))
    nslot = np.array([len(s) for s in reach], dtype=np.int32)
    slot = np.full((n_um, T + 1), -1, dtype=np.int32)
    ulist = np.zeros((n_um, int(nslot.max())), dtype=np.int32)
    for um, s in enumerate(reach):
        slot[um, s] = np.arange(len(s))
        ulist[um, : len(s)] = s
    slot[full_um, :] = 0  # every upper box filled: one state whatever the subtotal

    masks = np.arange(1 << nbx, dtype=np.int64)
    umask_of = np.zeros(1 << nbx, dtype=np.int32)
    for j, b in enumerate(upidx):
        umask_of |= (((masks >> b) & 1) << j).astype(np.int32)
    if rules.forced:
        valid = (1 << np.arange(nbx + 1, dtype=np.int64)) - 1  # strictly top to bottom: prefixes only
    else:
        valid = masks
    pop = np.zeros(len(valid), dtype=np.int64)
    for b in range(nbx):
        pop += (valid >> b) & 1
    order = np.lexsort((valid, pop))
    valid, pop = valid[order], pop[order]
    F = 2 if rules.key_box >= 0 else 1
    if F == 2:
        has_key = ((valid >> rules.key_box) & 1).astype(bool)
        reps = 1 + has_key
        item_mask = np.repeat(valid, reps)
        item_pop = np.repeat(pop, reps)
        item_flag = np.zeros(len(item_mask), dtype=np.int64)
        starts = np.cumsum(reps) - reps
        item_flag[starts[has_key] + 1] = 1
    else:
        item_mask, item_pop = valid, pop
        item_flag = np.zeros(len(item_mask), dtype=np.int64)
    sizes = nslot[umask_of[item_mask]].astype(np.int64)
    offsets = np.cumsum(sizes) - sizes
    base = np.full((1 << nbx) * F, -1, dtype=np.int64)
    base[item_mask * F + item_flag] = offsets
    layer_items = np.searchsorted(item_pop, np.arange(nbx + 2)).astype(np.int64)
    layer_states = np.append(offsets, offsets[-1] + sizes[-1])[layer_items]
    vals = [_box_values(rules, b) for b in range(nbx)]
    box_nvals = np.array([len(v) for v in vals], dtype=np.int32)
    box_vals = np.zeros((nbx, int(box_nvals.max())), dtype=np.int64)
    box_vidx = np.full((nbx, int(max(v.max() for v in vals)) + 1), -1, dtype=np.int32)
    for b, v in enumerate(vals):
        box_vals[b, : len(v)] = v
        box_vidx[b, v] = np.arange(len(v))
    is_upper = rules.upper_face > 0
    wrow = np.zeros(nbx, dtype=np.int32)
    n_wrows = 0
    for b in np.flatnonzero(is_upper):
        wrow[b] = n_wrows
        n_wrows += len(vals[b])
    layout = K.Layout(
        base,
        umask_of,
        nslot,
        slot,
        ulist,
        is_upper,
        rules.box_max().astype(np.int32),
        box_vals,
        box_nvals,
        box_vidx,
        wrow,
        n_wrows,
        F,
        full_um,
        T,
        bonus,
        int(rules.key_box),
        nbx,
        bool(rules.has_servida),
    )
    return Plan(
        layout,
        dice_tables(rules.dice, rules.rolls_per_turn - 1),
        item_mask,
        item_flag,
        layer_items,
        layer_states,
        int(sizes.sum()),
        bonus0,
    )


@dataclass(frozen=True, eq=False)
class Solution:
    """The solved value table of one rule set.

    values: (states,) float64 expected future score from the start of a turn in each state
    (see :class:`Plan` for the layout); ``expected_score`` includes a bonus earned before play.
    """

    rules: RuleSet
    plan: Plan
    values: np.ndarray
    expected_score: float
    seconds: float
    cached: bool
    path: Path | None = field(default=None)

    @property
    def states(self) -> int:
        return self.plan.n_states

    def index(self, filled: int, upper: int, flag: bool = False) -> int:
        """Flat index of a state (``upper`` uncapped is fine)."""
        lay = self.plan.layout
        if lay.base[filled * lay.n_flags + int(bool(flag))] < 0:
            raise ValueError(f"no state with filled={filled:#x} flag={flag} in {self.rules.name}")
        u = min(int(upper), lay.threshold)
        s = lay.slot[lay.umask_of[filled], u]
        if s < 0:
            raise ValueError(f"upper subtotal {upper} cannot be reached with filled={filled:#x}")
        return int(lay.base[filled * lay.n_flags + int(bool(flag))] + s)

    def value(self, filled: int, upper: int = 0, flag: bool = False) -> float:
        """Expected future score (boxes still open, a bonus still to cross, extras) under optimal play."""
        return float(self.values[self.index(filled, upper, flag)])
