"""Checking game records against the rule set's own scoring: one record move by move
(:func:`validate_record`, which replays the sheet through :func:`harness.game.scoring.score_options`,
so a record and the engine can never disagree on a score), or many seat-games at once as the
analysis kernel's arrays (:func:`check_seat_games`, the same checks through the engine's batched
scoring). Both are also importable from :mod:`harness.records.record`.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from harness.game.rules import AllowedRules, RuleSet
from harness.game.scoring import Context, context, score_options, score_options_batch
from harness.records.notation import MAX_SEATS, GameRecord, RecordError, Turn, _faces, record_rules


def _load_rules(
    record: GameRecord, cache: dict[str, RuleSet] | None = None, allowed: AllowedRules | None = None
) -> RuleSet:
    return record_rules(record.rules, record.settings, record.game, cache, spec=record.rules_spec, allowed=allowed)


def _within(inner: Sequence[int], outer: Sequence[int]) -> bool:
    """``inner`` is a sub-multiset of ``outer``."""
    return not Counter(inner) - Counter(outer)


class _Sheet:
    """One seat's column as the engine keeps it: filled boxes, key-box flag, upper and lower sums."""

    def __init__(self) -> None:
        self.filled = 0
        self.flag = False
        self.upper = 0
        self.lower = 0
        self.extra = 0

    def total(self, rules: RuleSet) -> int:
        bonus = rules.bonus_value if self.upper >= rules.threshold else 0
        return self.upper + bonus + self.lower + self.extra


def validate_record(record: GameRecord, rules: RuleSet | None = None) -> tuple[int, ...]:
    """Check a record move by move against its rule set (``rules``, else loaded from the record);
    returns each seat's total (columns added). Raises :class:`RecordError`, one line naming the
    game, seat (number and name), column and turn, and the roll when it matters."""
    rules = _load_rules(record) if rules is None else rules
    seats = record.seats
    n_seats, nb, n_cols = len(seats), rules.n_boxes, rules.columns
    game = f"game {record.game}"
    if not 1 <= n_seats <= MAX_SEATS:
        raise RecordError(f"{game}: a table seats 1..{MAX_SEATS} players, got {n_seats}")
    ctx = context(rules)
    out = np.empty(nb, dtype=np.int16)
    n_turns = n_seats * nb * n_cols
    sheets = [_Sheet() for _ in range(n_seats)]
    done = [0] * n_seats  # totals of the columns finished
    saved = [0] * n_seats

    def who(s: int) -> str:
        return f"seat {s} ({seats[s].label})" if 0 <= s < n_seats else f"seat {s}"

    for i, t in enumerate(record.turns):
        at = f"{game}, {who(t.seat)}, column {t.column} turn {t.turn}"
        if i >= n_turns:
            raise RecordError(
                f"{at}: past the end of the game ({n_seats} seat(s) x {nb} boxes"
                f"{f' x {n_cols} columns' if n_cols > 1 else ''} = {n_turns} turns)"
            )
        col, tt, s = i // (n_seats * nb), (i // n_seats) % nb, i % n_seats
        if (t.seat, t.column, t.turn) != (s, col + 1, tt + 1):
            raise RecordError(
                f"{at}: out of play order: turn {i + 1} of the game is {who(s)}, column {col + 1} "
                f"turn {tt + 1} (every seat plays turn t before any seat plays t+1, seats in order)"
            )
        if tt == 0 and col > 0:
            done[s] += sheets[s].total(rules)
            sheets[s] = _Sheet()
            saved[s] = 0  # each column is a fresh game: rolls saved in one do not carry into the next
        _check_turn(rules, ctx, out, t, sheets[s], saved, at)
    if record.complete and len(record.turns) < n_turns:
        i = len(record.turns)
        col, tt, s = i // (n_seats * nb), (i // n_seats) % nb, i % n_seats
        raise RecordError(
            f"{game}: incomplete: {i} of {n_turns} turns, next {who(s)} column {col + 1} turn {tt + 1} "
            '(mark a partial game "complete": false)'
        )
    totals = tuple(done[s] + sheets[s].total(rules) for s in range(n_seats))
    if record.totals is not None:
        if len(record.totals) != n_seats:
            raise RecordError(f"{game}: totals has {len(record.totals)} entries for {n_seats} seat(s)")
        for s, (given, got) in enumerate(zip(record.totals, totals)):
            if given != got:
                raise RecordError(f"{game}, {who(s)}: total {given} but the turns add up to {got}")
    return totals


def _check_turn(
    rules: RuleSet, ctx: Context, out: np.ndarray, t: Turn, sheet: _Sheet, saved: list[int], at: str
) -> None:
    n = rules.n_dice
    if not t.rolls:
        raise RecordError(f"{at}: no roll")
    for j, r in enumerate(t.rolls):
        if len(r) != n:
            raise RecordError(f"{at}: roll {j + 1} has {len(r)} dice ({_faces(r)}), {rules.name} plays {n}")
        bad = [f for f in r if not 1 <= f <= 6]
        if bad:
            raise RecordError(f"{at}: roll {j + 1} has face {bad[0]} (faces are 1..6)")
    # mirrors the engine: rolls_per_turn, plus with saved_rolls every roll left unused earlier in the column
    bank = saved[t.seat] if rules.saved_rolls else 0
    allowed = rules.rolls_per_turn + bank
    if len(t.rolls) > allowed:
        why = f" ({rules.rolls_per_turn} + {bank} saved)" if rules.saved_rolls else ""
        raise RecordError(f"{at}: {len(t.rolls)} rolls, but the turn allows {allowed}{why}")
    if len(t.keeps) != len(t.rolls) - 1:
        raise RecordError(
            f"{at}: {len(t.rolls)} roll(s) need {len(t.rolls) - 1} keep(s), one before each reroll; got {len(t.keeps)}"
        )
    for j, k in enumerate(t.keeps):
        if not _within(k, t.rolls[j]):
            raise RecordError(f"{at}: kept {_faces(k)} but roll {j + 1} was {_faces(t.rolls[j])}")
        if len(k) == n:
            raise RecordError(
                f"{at}: kept every die of roll {j + 1}, which ends the turn's rolling, but roll {j + 2} follows"
            )
        if not _within(k, t.rolls[j + 1]):
            raise RecordError(f"{at}: roll {j + 2} ({_faces(t.rolls[j + 1])}) does not hold the kept {_faces(k)}")
    if rules.saved_rolls:
        saved[t.seat] = allowed - len(t.rolls)

    names = rules.box_names
    if t.box not in names:
        raise RecordError(f"{at}: unknown box {t.box!r} ({rules.name} boxes: {', '.join(names)})")
    b = names.index(t.box)
    if (sheet.filled >> b) & 1:
        raise RecordError(f"{at}: box {t.box} is already filled in column {t.column}")
    last = t.rolls[-1]
    roll = int(rules.dice.roll_index_of_faces(np.array(last)))
    may, extra = score_options(ctx, roll, t.first_roll, sheet.flag, sheet.filled, out)
    if not (may >> b) & 1:
        ok = [names[x] for x in range(len(names)) if (may >> x) & 1]
        if rules.forced:
            raise RecordError(f"{at}: forced order: {ok[0]} comes next, not {t.box}")
        raise RecordError(f"{at}: {t.box} may not take {_faces(last)} now: the joker rule allows {', '.join(ok)}")
    want = int(out[b])
    if t.score != want:
        how = " made on the first roll" if t.first_roll and rules.has_servida else ""
        raise RecordError(f"{at}: {t.box} scores {want} for {_faces(last)}{how}, the record says {t.score}")
    if t.extra is not None and t.extra != int(extra):
        raise RecordError(f"{at}: extra bonus {int(extra)} for {_faces(last)}, the record says {t.extra}")
    sheet.filled |= 1 << b
    if b == rules.key_box:
        sheet.flag = want > 0
    if rules.boxes[b].is_upper:
        sheet.upper += want
    else:
        sheet.lower += want
    sheet.extra += int(extra)


def check_seat_games(
    rules: RuleSet,
    rolls: np.ndarray,
    keeps: np.ndarray,
    boxes: np.ndarray,
    scores: np.ndarray,
    extras: np.ndarray,
    totals: np.ndarray,
) -> np.ndarray:
    """(N,) bool: True where :func:`validate_record` finds nothing wrong with a seat-game given as
    the analysis kernel's arrays (:class:`harness.records.runs.RunRecords`: rolls, keeps (N, T, R) roll and
    keep indices, the rolls of a turn first and the keeps before each reroll, boxes (N, T) box
    indices, scores and extra bonuses (N, T), the seat's total (N,); an extra bonus or a total
    below 0 is one the record does not state, and is not checked).

    The checks of :func:`validate_record` on every turn at once, through the engine's own batched
    scoring (:func:`harness.game.scoring.score_options_batch`): rolls allowed (saved rolls banked), each
    keep within its roll and the next one and not every die, a box not yet filled and allowed
    (forced order, joker), its score, the extra bonus when stated, the total. A seat-game found
    False is given to :func:`validate_record`, which names what is wrong (``read_records``)."""
    d = rules.dice
    n, nb = d.n, rules.n_boxes
    count, n_turns, width = rolls.shape
    ctx = context(rules)
    idx = np.arange(count)
    n_rolls = (rolls >= 0).sum(axis=2)
    is_upper = np.array([b.is_upper for b in rules.boxes])
    ok = np.ones(count, dtype=bool)
    done = np.zeros(count, dtype=np.int64)

    def column_total() -> np.ndarray:
        return upper + np.where(upper >= rules.threshold, rules.bonus_value, 0) + lower + extra

    for t in range(n_turns):
        if t % nb == 0:  # a fresh column: a fresh sheet, no rolls saved
            if t:
                done += column_total()
            filled = np.zeros(count, dtype=np.int64)
            flag = np.zeros(count, dtype=bool)
            upper, lower, extra, saved = (np.zeros(count, dtype=np.int64) for _ in range(4))
        nr = n_rolls[:, t]
        allowed = rules.rolls_per_turn + (saved if rules.saved_rolls else 0)
        ok &= (nr >= 1) & (nr <= allowed)
        for j in range(width - 1):
            k, r0, r1 = (np.maximum(a, 0) for a in (keeps[:, t, j], rolls[:, t, j], rolls[:, t, j + 1]))
            kc = d.keep_counts[k]
            good = (
                (keeps[:, t, j] >= 0)
                & (d.keep_size[k] < n)
                & (kc <= d.roll_counts[r0]).all(axis=1)
                & (kc <= d.roll_counts[r1]).all(axis=1)
            )
            ok &= (j >= nr - 1) | good
        if rules.saved_rolls:
            saved = allowed - nr
        last = np.maximum(rolls[idx, t, np.maximum(nr - 1, 0)], 0).astype(np.int16)
        box = boxes[:, t].astype(np.int64)
        b = np.clip(box, 0, nb - 1)
        got, may, bonus = score_options_batch(ctx, last, nr == 1, flag, filled)
        want = got[idx, b].astype(np.int64)
        ok &= (box == b) & ((filled >> b) & 1 == 0) & ((may >> b) & 1 == 1) & (scores[:, t] == want)
        ok &= (extras[:, t] < 0) | (extras[:, t] == bonus)
        filled |= np.int64(1) << b
        if rules.key_box >= 0:
            flag = np.where(b == rules.key_box, want > 0, flag)
        upper += np.where(is_upper[b], want, 0)
        lower += np.where(is_upper[b], 0, want)
        extra += bonus
    if n_turns:
        done += column_total()
    totals = np.asarray(totals)
    return ok & ((totals < 0) | (totals == done))


__all__ = ["check_seat_games", "validate_record"]
