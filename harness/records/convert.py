"""The conversions between a game's forms: the face code, a run's records Parquet written from the
engine's recording, the recording and the trace as records, and records as the kernel's arrays.

The forms and the table of conversions are :mod:`harness.records.codec`'s docstring; the record
itself is :mod:`harness.records.notation`'s and reading a run's records back is
:mod:`harness.records.runs`'. No other module knows the face code or the records Parquet layout.
Every per-turn number goes through :data:`harness.records.notation.TURN_FIELDS`.
"""

from __future__ import annotations

import io
from functools import cache
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from harness.game.dice import dice
from harness.game.rules import RuleSet
from harness.records.notation import _RECORD_FIELDS, TURN_FIELDS, GameId, GameRecord, Seat, Turn

# ---------------------------------------------------------------------------------------------
# the face code


def faces_code(faces: np.ndarray) -> np.ndarray:
    """Dice as the decimal number of their faces in ascending order: (6, 6, 2, 4, 1) -> 12466;
    no dice -> 0. ``faces``: (N, n) int faces, 0 for an absent die (sorted away)."""
    f = np.sort(np.asarray(faces, dtype=np.int64), axis=1)
    code = np.zeros(len(f), dtype=np.int64)
    for j in range(f.shape[1]):
        code = np.where(f[:, j] > 0, code * 10 + f[:, j], code)
    return code


def decode_faces(codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`faces_code` inverted: for face codes ``(...)``, the face counts ``(..., 6)`` int8, the
    number of dice ``(...)`` and whether each is a code at all (of at most ``n`` dice, faces 1..6 in
    ascending order; 0 is no dice). Where it is not, counts and size are 0."""
    c = np.asarray(codes, dtype=np.int64)
    ok = c >= 0
    rest = np.where(ok, c, 0)
    counts = np.zeros(c.shape + (6,), dtype=np.int8)
    size = np.zeros(c.shape, dtype=np.int8)
    prev = np.full(c.shape, 6, dtype=np.int64)  # read from the last digit: faces never increase
    for _ in range(n):
        digit = rest % 10
        die = rest > 0
        ok &= ~die | ((digit >= 1) & (digit <= prev))
        for f in range(6):
            counts[..., f] += die & (digit == f + 1)
        size += die
        prev = np.where(die, digit, prev)
        rest //= 10
    ok &= rest == 0
    counts[~ok] = 0
    size[~ok] = 0
    return counts, size, ok


def _faces_of(counts: Sequence[int]) -> tuple[int, ...]:
    """Face counts (6,) -> the faces in ascending order (Python ints)."""
    return tuple(f + 1 for f in range(6) for _ in range(int(counts[f])))


# ---------------------------------------------------------------------------------------------
# a run's records Parquet: the schema, and the engine's recording written as it


#: The records file's first columns (name, Parquet type): which row is which. Then
#: ``roll_1..roll_R`` int32 the dice after each roll (:func:`faces_code`: 12466 is 1 2 4 6 6; 0 =
#: not rolled), ``keep_1..keep_{R-1}`` int32 the dice kept after that roll (0 = none kept, -1 = no
#: keep asked; keeping the whole roll stops the turn, so that keep is not a record's), ``box``
#: (dictionary of the rule set's box names, int8 indices), then :data:`TURN_FIELDS`.
RECORD_KEYS: tuple[tuple[str, str], ...] = (
    ("lineup", "int16"),
    ("game", "int64"),
    ("seat", "int8"),
    ("column", "int8"),
    ("turn", "int16"),
)
#: Parquet writer settings of a records file: fixed, so that its bytes depend only on its rows.
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 1,
    "use_dictionary": True,
    "write_statistics": True,
    "row_group_size": 1 << 22,
}


def records_parquet(rec: Any, rules: RuleSet, games: np.ndarray, lineup: int) -> bytes:
    """The records file of one chunk (the engine's :class:`~harness.game.loop.Recording` ``rec`` of
    games ``games`` (B,) of lineup ``lineup``): one row per (game, seat, turn), in that order;
    ``column`` and ``turn`` count from 1, as ``replay`` does. Columns: :data:`RECORD_KEYS`, the
    rolls, keeps and box, :data:`TURN_FIELDS`."""

    d = rules.dice
    b, s, t, r = rec.rolls.shape
    roll_code = faces_code(d.roll_faces)
    keep_faces = np.zeros((d.n_keeps, d.n), dtype=np.int64)
    for k in range(d.n_keeps):
        f = np.repeat(np.arange(1, 7), d.keep_counts[k])
        keep_faces[k, : len(f)] = f
    keep_code = faces_code(keep_faces)
    n = b * s * t
    nb = rules.n_boxes
    turn = np.tile(np.arange(t), b * s)
    keys = {
        "lineup": np.full(n, lineup),
        "game": np.repeat(np.asarray(games), s * t),
        "seat": np.tile(np.repeat(np.arange(s), t), b),
        "column": turn // nb + 1,
        "turn": turn % nb + 1,
    }
    cols: dict[str, Any] = {name: pa.array(keys[name].astype(np.dtype(kind))) for name, kind in RECORD_KEYS}
    rolls = rec.rolls.reshape(n, r)
    keeps = rec.keeps.reshape(n, r)
    for i in range(r):
        ri = rolls[:, i]
        cols[f"roll_{i + 1}"] = pa.array(np.where(ri >= 0, roll_code[np.maximum(ri, 0)], 0).astype(np.int32))
    for i in range(r - 1):
        ki = keeps[:, i]
        cols[f"keep_{i + 1}"] = pa.array(np.where(ki >= 0, keep_code[np.maximum(ki, 0)], -1).astype(np.int32))
    names = pa.array(rules.box_names, pa.string())
    cols["box"] = pa.DictionaryArray.from_arrays(pa.array(rec.boxes.reshape(n).astype(np.int8)), names)
    for f in TURN_FIELDS:
        cols[f.name] = pa.array(getattr(rec, f.recording).reshape(n).astype(np.dtype(f.arrow)))
    buf = io.BytesIO()
    pq.write_table(pa.table(cols), buf, **PARQUET_OPTIONS)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# the engine's recording and trace as records


def turns_of_recording(rec: Any, rules: RuleSet, game: int, seat: int) -> list[Turn]:
    """The turns of row ``game`` (an index into the batch) and ``seat`` of an engine
    :class:`~harness.game.loop.Recording`, as record :class:`Turn` objects (columns and turns from 1;
    the stop keep is no keep of the record)."""
    d, nb = rules.dice, rules.n_boxes
    out = []
    names = rules.box_names
    for t in range(rec.rolls.shape[2]):
        rolls = [r for r in rec.rolls[game, seat, t].tolist() if r >= 0]
        keeps = rec.keeps[game, seat, t].tolist()[: len(rolls) - 1]
        numbers = {f.name: int(getattr(rec, f.recording)[game, seat, t]) for f in _RECORD_FIELDS}
        out.append(
            Turn(
                seat,
                t // nb + 1,
                t % nb + 1,
                tuple(_faces_of(d.roll_counts[r]) for r in rolls),
                tuple(_faces_of(d.keep_counts[k]) for k in keeps),
                names[int(rec.boxes[game, seat, t])],
                **_optional_none(numbers),
            )
        )
    return out


def _optional_none(numbers: dict[str, int]) -> dict[str, int | None]:
    """A record states an optional field only when it is not 0."""
    return {f.name: (numbers[f.name] or None) if f.optional else numbers[f.name] for f in _RECORD_FIELDS}


def record_from_trace(
    trace: Sequence[Mapping[str, Any]],
    *,
    rules_name: str,
    rules: RuleSet,
    seats: Sequence[str],
    game: GameId,
    seed: int | None = None,
    totals: Sequence[int] | None = None,
) -> GameRecord:
    """The record of one game from :func:`harness.play.replay.replay`'s trace.

    ``rules_name`` is what the rules were loaded by (a built-in name or a path: what the record
    names), ``rules`` the loaded rule set (its ``--set`` overrides become the record's settings),
    ``seats`` the bot specs. Keeping every die (``stop``) is not a reroll, so it is no keep.
    A trace cut short by a failing bot gives the turns it finished, marked incomplete.
    """
    turns: list[Turn] = []
    rolls: list[tuple[int, ...]] = []
    keeps: list[tuple[int, ...]] = []
    for e in trace:
        if e["event"] == "roll":
            if e["roll"] == 0:
                rolls, keeps = [], []
            rolls.append(tuple(int(f) for f in e["dice"]))
        elif e["event"] == "keep":
            if not e["stop"]:
                keeps.append(tuple(int(f) for f in e["keep"]))
        elif e["event"] == "box":
            numbers = {f.name: int(e.get(f.trace_key, 0)) for f in _RECORD_FIELDS}
            turns.append(
                Turn(
                    int(e["seat"]),
                    int(e["column"]) + 1,
                    int(e["turn"]) + 1,
                    tuple(rolls),
                    tuple(keeps),
                    str(e["box"]),
                    **_optional_none(numbers),
                )
            )
    complete = len(turns) == len(seats) * rules.n_boxes * rules.columns
    return GameRecord(
        game,
        rules_name,
        tuple(Seat(spec=s) for s in seats),
        tuple(turns),
        dict(rules.overrides),
        seed,
        tuple(int(x) for x in totals) if totals is not None and complete else None,
        complete,
    )


# ---------------------------------------------------------------------------------------------
# the kernel's arrays


KernelArrays = tuple[np.ndarray, np.ndarray, np.ndarray, list[Any], np.ndarray, list[str]]


def arrays_of_recording(rec: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An engine :class:`~harness.game.loop.Recording` (B games, S seats) as the kernel's rolls,
    keeps (B x S, T, R) and boxes (B x S, T), a row per (game, seat)."""
    b, s = rec.boxes.shape[:2]
    return tuple(a.reshape(b * s, *a.shape[2:]) for a in (rec.rolls, rec.keeps, rec.boxes))  # type: ignore[return-value]


def arrays_of_records(records: Sequence[GameRecord], rules: RuleSet) -> KernelArrays:
    """Game records (validated, of ``rules``) as the kernel's arrays, a row per (game, seat):
    rolls, keeps (N, T, R) int16, boxes (N, T) int8 (T = columns x NB turns, turn ``(column - 1) x
    NB + turn - 1``; R the most rolls of a turn of the records; missing turns of a partial game
    stay -1), and per row the game id, the seat and the seat's label."""
    d, nb = rules.dice, rules.n_boxes
    n_t = rules.columns * nb
    width = max((len(t.rolls) for r in records for t in r.turns), default=1)
    rows, where = _rows_of(records)
    rolls = np.full((len(rows), n_t, width), -1, np.int16)
    keeps = np.full((len(rows), n_t, width), -1, np.int16)
    boxes = np.full((len(rows), n_t), -1, np.int8)
    roll_of, keep_of = _multiset_index(d.n)
    box_of = {name: i for i, name in enumerate(rules.box_names)}
    r_at, r_ix, k_at, k_ix, b_at, b_ix = [], [], [], [], [], []  # flat places in the arrays, and the indices
    for i, rec in enumerate(records):
        for t in rec.turns:
            at = where[(i, t.seat)] * n_t + (t.column - 1) * nb + t.turn - 1
            for j, faces in enumerate(t.rolls):
                r_at.append(at * width + j)
                r_ix.append(roll_of[tuple(sorted(faces))])
            for j, faces in enumerate(t.keeps):
                k_at.append(at * width + j)
                k_ix.append(keep_of[tuple(sorted(faces))])
            b_at.append(at)
            b_ix.append(box_of[t.box])
    rolls.reshape(-1)[r_at] = r_ix
    keeps.reshape(-1)[k_at] = k_ix
    boxes.reshape(-1)[b_at] = b_ix
    games = [records[i].game for i, _ in rows]
    seats = np.array([s for _, s in rows], dtype=np.int16)
    labels = [records[i].seats[s].label for i, s in rows]
    return rolls, keeps, boxes, games, seats, labels


@cache
def _multiset_index(n: int) -> tuple[dict[tuple[int, ...], int], dict[tuple[int, ...], int]]:
    """{sorted faces: roll index} of every roll of ``n`` dice, and {sorted faces: keep index} of
    every keep (0..n dice): :class:`harness.game.dice.Dice`'s numbering, looked up by the faces."""
    d = dice(n)

    def faces(counts: np.ndarray) -> tuple[int, ...]:
        return tuple(f + 1 for f in range(6) for _ in range(int(counts[f])))

    return ({faces(c): i for i, c in enumerate(d.roll_counts)}, {faces(c): i for i, c in enumerate(d.keep_counts)})


def _rows_of(records: Sequence[GameRecord]) -> tuple[list[tuple[int, int]], dict[tuple[int, int], int]]:
    """The (game, seat) of each row of the kernel's arrays, and the row of each."""
    rows = [(i, s) for i, r in enumerate(records) for s in range(len(r.seats))]
    return rows, {key: n for n, key in enumerate(rows)}


def numbers_of_records(records: Sequence[GameRecord], rules: RuleSet) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """What game records state beside their dice and boxes, in the rows of :func:`arrays_of_records`:
    {name: (N, T) int64} of each number of :data:`TURN_FIELDS` a record carries (-1 where an optional
    one is not stated, and in missing turns), and each seat's total (N,) (-1 when the record gives
    none): what :func:`harness.records.validate.check_seat_games` checks."""
    n_t = rules.columns * rules.n_boxes
    rows, where = _rows_of(records)
    numbers = {f.name: np.full((len(rows), n_t), -1, np.int64) for f in _RECORD_FIELDS}
    totals = np.full(len(rows), -1, np.int64)
    for i, rec in enumerate(records):
        for t in rec.turns:
            n, tt = where[(i, t.seat)], (t.column - 1) * rules.n_boxes + t.turn - 1
            for f in _RECORD_FIELDS:
                v = getattr(t, f.name)
                if v is not None:
                    numbers[f.name][n, tt] = v
        if rec.totals is not None:
            for seat, v in enumerate(rec.totals):
                totals[where[(i, seat)]] = v
    return numbers, totals


__all__ = [
    "PARQUET_OPTIONS",
    "RECORD_KEYS",
    "KernelArrays",
    "arrays_of_recording",
    "arrays_of_records",
    "decode_faces",
    "faces_code",
    "numbers_of_records",
    "record_from_trace",
    "records_parquet",
    "turns_of_recording",
]
