"""Game records: a stable JSON Lines notation for whole games, checked against the rule set's own scoring.

A record holds one game (rule set and settings, seats, and for every turn the faces after each roll,
the dice kept before each reroll, the box written and its score); README.md "Game records" is the
reference. Human games fit it without any bot. The record itself (:class:`GameRecord`, its JSON
form) and every conversion to and from it (the engine's games: :func:`record_from_trace`; a run
played with ``--record``: :func:`records_of_run`) are :mod:`harness.codec`'s, imported here as
they always were. This module checks records (:func:`validate_record` replays the sheet through
:func:`harness.scoring.score_options`, so a record and the engine can never disagree on a score;
:func:`check_seat_games`, the same checks over a run's arrays), reads and writes files of them,
and gives the one-line-per-turn text form.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from harness.codec import (FORMAT, MAX_SEATS, GameId, GameRecord, RecordError, Seat, Turn, record_from_trace,
                           record_rules, records_of_run)
from harness.errors import UserError
from harness.rules import RuleSet
from harness.scoring import Context, context, score_options, score_options_batch

# ---------------------------------------------------------------------------------------------
# validation against the rule set


def _load_rules(record: GameRecord, cache: dict[str, RuleSet] | None = None) -> RuleSet:
    return record_rules(record.rules, record.settings, record.game, cache)


def _faces(faces: Sequence[int]) -> str:
    return " ".join(map(str, faces)) if faces else "nothing"


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
            raise RecordError(f"{at}: past the end of the game ({n_seats} seat(s) x {nb} boxes"
                              f"{f' x {n_cols} columns' if n_cols > 1 else ''} = {n_turns} turns)")
        col, tt, s = i // (n_seats * nb), (i // n_seats) % nb, i % n_seats
        if (t.seat, t.column, t.turn) != (s, col + 1, tt + 1):
            raise RecordError(f"{at}: out of play order: turn {i + 1} of the game is {who(s)}, column {col + 1} "
                              f"turn {tt + 1} (every seat plays turn t before any seat plays t+1, seats in order)")
        if tt == 0 and col > 0:
            done[s] += sheets[s].total(rules)
            sheets[s] = _Sheet()
            saved[s] = 0  # each column is a fresh game: rolls saved in one do not carry into the next
        _check_turn(rules, ctx, out, t, sheets[s], saved, at)
    if record.complete and len(record.turns) < n_turns:
        i = len(record.turns)
        col, tt, s = i // (n_seats * nb), (i // n_seats) % nb, i % n_seats
        raise RecordError(f"{game}: incomplete: {i} of {n_turns} turns, next {who(s)} column {col + 1} turn {tt + 1} "
                          "(mark a partial game \"complete\": false)")
    totals = tuple(done[s] + sheets[s].total(rules) for s in range(n_seats))
    if record.totals is not None:
        if len(record.totals) != n_seats:
            raise RecordError(f"{game}: totals has {len(record.totals)} entries for {n_seats} seat(s)")
        for s, (given, got) in enumerate(zip(record.totals, totals)):
            if given != got:
                raise RecordError(f"{game}, {who(s)}: total {given} but the turns add up to {got}")
    return totals


def _check_turn(rules: RuleSet, ctx: Context, out: np.ndarray, t: Turn, sheet: _Sheet, saved: list[int],
                at: str) -> None:
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
        raise RecordError(f"{at}: {len(t.rolls)} roll(s) need {len(t.rolls) - 1} keep(s), one before each "
                          f"reroll; got {len(t.keeps)}")
    for j, k in enumerate(t.keeps):
        if not _within(k, t.rolls[j]):
            raise RecordError(f"{at}: kept {_faces(k)} but roll {j + 1} was {_faces(t.rolls[j])}")
        if len(k) == n:
            raise RecordError(f"{at}: kept every die of roll {j + 1}, which ends the turn's rolling, "
                              f"but roll {j + 2} follows")
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


# ---------------------------------------------------------------------------------------------
# reading and writing many games


class BadGame(NamedTuple):
    """A game that was skipped: its id (None when unreadable) and one line saying where and why."""

    game: GameId | None
    message: str


@dataclass(frozen=True)
class ReadResult:
    """Games read from one source: the valid ``games`` (with their ``lineups`` from Parquet, else
    None), and every game skipped in ``errors``. From a run directory, ``games`` builds each
    record when asked (:class:`harness.codec.RunGames`) and ``arrays`` holds the valid games as
    the analysis kernel's arrays (:class:`harness.codec.RunRecords`), which ``analyse`` and ``fit``
    use without building a record."""

    source: str
    games: Sequence[GameRecord]
    errors: list[BadGame]
    lineups: list[int | None]
    arrays: Any = None

    @property
    def summary(self) -> str:
        """``games.jsonl: 98 games read, 2 bad games skipped``."""
        n, bad = len(self.games), len(self.errors)
        return (f"{self.source}: {n:,} game{'s' * (n != 1)} read, "
                f"{bad:,} bad game{'s' * (bad != 1)} skipped")


def _read_lines(source: str | os.PathLike[str] | Iterable[str]) -> tuple[str, list[tuple[str, str, int | None]]]:
    """(name of the source, [(where, text, lineup)])."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        name = str(path)
        try:
            if path.suffix == ".parquet":
                return name, _parquet_rows(path)
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
                lines = fh.read().splitlines()
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read game records {name}: {getattr(exc, 'strerror', None) or exc}") from None
    else:
        name = "<lines>"
        lines = [line.rstrip("\n") for line in source]
    return name, [(f"line {i}", text, None) for i, text in enumerate(lines, 1) if text.strip()]


def _parquet_rows(path: Path) -> list[tuple[str, str, int | None]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises many types for a file that is not Parquet
        raise UserError(f"cannot read game records {path}: {exc}") from None
    if "record" not in table.column_names:
        raise UserError(f"{path}: no 'record' column (columns: {', '.join(table.column_names)})")
    records = table.column("record").to_pylist()
    lineups = table.column("lineup").to_pylist() if "lineup" in table.column_names else [None] * len(records)
    return [(f"row {i}", text or "", lu) for i, (text, lu) in enumerate(zip(records, lineups))]


def read_records(source: str | os.PathLike[str] | Iterable[str], *, validate: bool = True) -> ReadResult:
    """Read game records from a ``.jsonl`` / ``.jsonl.gz`` / ``.parquet`` file, from lines of JSON,
    or from a run directory played with ``--record`` (:func:`records_of_run`: every lineup's games,
    ``lineups`` filled).

    Every game is checked (:func:`validate_record`, unless ``validate=False``: shape only); a bad
    game is skipped and listed in ``errors`` as ``(game id, "SOURCE line N: message")``. Raises
    :class:`UserError` when the source cannot be read or holds no usable game.
    """
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        return _read_run(Path(source), validate)
    name, rows = _read_lines(source)
    games: list[GameRecord] = []
    lineups: list[int | None] = []
    errors: list[BadGame] = []
    cache: dict[str, RuleSet] = {}
    for where, text, lineup in rows:
        game_id: GameId | None = None
        try:
            raw = json.loads(text)
            if isinstance(raw, dict) and isinstance(raw.get("game"), (str, int, float)) \
                    and not isinstance(raw["game"], bool):
                game_id = raw["game"]
            rec = GameRecord.from_dict(raw)
            if validate:
                validate_record(rec, _load_rules(rec, cache))
        except json.JSONDecodeError as exc:
            errors.append(BadGame(None, f"{name} {where}: not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        except UserError as exc:
            errors.append(BadGame(game_id, f"{name} {where}: {exc}"))
            continue
        games.append(rec)
        lineups.append(lineup)
    if not games:
        if not errors:
            raise UserError(f"{name}: no game records")
        raise UserError(f"{name}: no usable game ({len(errors)} bad; the first: {errors[0].message})")
    return ReadResult(name, games, errors, lineups)


def write_records_jsonl(path: str | os.PathLike[str], records: Iterable[GameRecord]) -> Path:
    """Write one record a line (gzip-compressed when ``path`` ends in ``.gz``); returns the path."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "wt", encoding="utf-8", newline="\n") as fh:  # type: ignore[operator]
        for r in records:
            fh.write(r.to_json() + "\n")
    return p


def write_records_parquet(path: str | os.PathLike[str], records: Sequence[GameRecord],
                          lineups: Sequence[int] | None = None) -> Path:
    """One row per game: ``game`` (int64 when every id is a whole number, else string), ``lineup``
    (int32, when given) and ``record`` (the record's JSON line, which is what is read back)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = [r.game for r in records]
    if all(isinstance(g, int) and not isinstance(g, bool) for g in ids):
        game_col = pa.array(ids, type=pa.int64())
    else:
        game_col = pa.array([str(g) for g in ids], type=pa.string())
    cols = {"game": game_col}
    if lineups is not None:
        if len(lineups) != len(records):
            raise ValueError(f"{len(lineups)} lineups for {len(records)} records")
        cols["lineup"] = pa.array(list(lineups), type=pa.int32())
    cols["record"] = pa.array([r.to_json() for r in records], type=pa.string())
    p = Path(path)
    pq.write_table(pa.table(cols), p)
    return p


# ---------------------------------------------------------------------------------------------
# a run's records (``yatzy-harness run --record``)


def check_seat_games(rules: RuleSet, rolls: np.ndarray, keeps: np.ndarray, boxes: np.ndarray, scores: np.ndarray,
                     extras: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """(N,) bool: True where :func:`validate_record` finds nothing wrong with a seat-game given as
    the analysis kernel's arrays (:class:`harness.codec.RunRecords`: rolls, keeps (N, T, R) roll and
    keep indices, the rolls of a turn first and the keeps before each reroll, boxes (N, T) box
    indices, scores and extra bonuses (N, T), the seat's total (N,)).

    The checks of :func:`validate_record` on every turn at once, through the engine's own batched
    scoring (:func:`harness.scoring.score_options_batch`): rolls allowed (saved rolls banked), each
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
            good = (keeps[:, t, j] >= 0) & (d.keep_size[k] < n) & (kc <= d.roll_counts[r0]).all(axis=1) \
                & (kc <= d.roll_counts[r1]).all(axis=1)
            ok &= (j >= nr - 1) | good
        if rules.saved_rolls:
            saved = allowed - nr
        last = np.maximum(rolls[idx, t, np.maximum(nr - 1, 0)], 0).astype(np.int16)
        box = boxes[:, t].astype(np.int64)
        b = np.clip(box, 0, nb - 1)
        got, may, bonus = score_options_batch(ctx, last, nr == 1, flag, filled)
        want = got[idx, b].astype(np.int64)
        ok &= (box == b) & ((filled >> b) & 1 == 0) & ((may >> b) & 1 == 1) & (scores[:, t] == want)
        ok &= (extras[:, t] == 0) | (extras[:, t] == bonus)  # a record states the extra bonus when not 0
        filled |= np.int64(1) << b
        if rules.key_box >= 0:
            flag = np.where(b == rules.key_box, want > 0, flag)
        upper += np.where(is_upper[b], want, 0)
        lower += np.where(is_upper[b], 0, want)
        extra += bonus
    if n_turns:
        done += column_total()
    return ok & (np.asarray(totals) == done)


def _read_run(run: Path, validate: bool) -> ReadResult:
    """:func:`read_records` of a run directory: the records Parquet read as arrays
    (:func:`harness.codec.read_run`), checked by :func:`check_seat_games`; only the games it
    flags become records, for :func:`validate_record` to name (or pass)."""
    from harness.codec import RunGames, read_run

    runrec = read_run(run)
    errors: list[BadGame] = []
    cache: dict[str, RuleSet] = {}
    suspect = ~runrec.regular
    if validate:
        try:
            rules = runrec.load_rules(cache)
        except UserError:
            suspect = np.ones(len(runrec), dtype=bool)  # every game names the error below
        else:
            rows = check_seat_games(rules, runrec.rolls, runrec.keeps, runrec.boxes, runrec.numbers["score"],
                                    runrec.numbers["extra"], runrec.totals)
            suspect = suspect | ~np.logical_and.reduceat(rows, runrec.ptr[:-1])
    bad = np.zeros(len(runrec), dtype=bool)
    for i in np.flatnonzero(suspect).tolist():
        rec = runrec.record(i)
        try:
            if validate:
                validate_record(rec, _load_rules(rec, cache))
            if not runrec.regular[i]:
                runrec.patch(i, rec, _load_rules(rec, cache))
        except UserError as exc:
            errors.append(BadGame(rec.game, f"{run} lineup {int(runrec.lineup[i])}: {exc}"))
            bad[i] = True
        except (KeyError, ValueError, IndexError):  # validate=False: a game the arrays cannot hold
            bad[i] = True
    if bad.any():
        runrec = runrec.select(~bad)
    if not len(runrec):
        raise UserError(f"{run}: no usable game ({len(errors)} bad; the first: {errors[0].message})")
    return ReadResult(str(run), RunGames(runrec), errors, runrec.lineup.tolist(), runrec)

# ---------------------------------------------------------------------------------------------
# the text form: one line per turn

_SEGMENT = re.compile(r"^\s*([1-9](?:\s+[1-9])*)\s+keep\s+(nothing|-|[1-9](?:\s+[1-9])*)\s*$")
_LAST = re.compile(r"^\s*([1-9](?:\s+[1-9])*)\s*->\s*([A-Za-z_][A-Za-z0-9_]*)\s+(-?\d+)(?:\s+\+(\d+))?\s*$")


def format_turn(turn: Turn) -> str:
    """``6 6 2 4 1 keep 6 6 | 6 6 6 3 5 keep 6 6 6 | 6 6 6 6 2 -> sixes 24`` (`` +100`` for an
    extra bonus when the turn states one)."""
    parts = [f"{_faces(r)} keep {_faces(k)}" for r, k in zip(turn.rolls, turn.keeps)]
    last = f"{_faces(turn.rolls[-1]) if turn.rolls else ''} -> {turn.box} {turn.score}"
    if turn.extra is not None:
        last += f" +{turn.extra}"
    return " | ".join([*parts, last])


def parse_turn(text: str, *, seat: int = 0, column: int = 1, turn: int = 1) -> Turn:
    """The :class:`Turn` that :func:`format_turn` wrote as ``text`` (``keep -`` is read as
    ``keep nothing``); :class:`UserError` naming the part that does not read."""
    *parts, last = text.split("|")
    rolls, keeps = [], []
    for part in parts:
        m = _SEGMENT.match(part)
        if not m:
            raise UserError(f"turn text {text.strip()!r}: cannot read {part.strip()!r} "
                            "(expected FACES keep FACES, or keep nothing)")
        rolls.append(tuple(int(f) for f in m.group(1).split()))
        keeps.append(() if m.group(2) in ("nothing", "-") else tuple(int(f) for f in m.group(2).split()))
    m = _LAST.match(last)
    if not m:
        raise UserError(f"turn text {text.strip()!r}: cannot read {last.strip()!r} (expected FACES -> BOX SCORE)")
    rolls.append(tuple(int(f) for f in m.group(1).split()))
    return Turn(seat, column, turn, tuple(rolls), tuple(keeps), m.group(2), int(m.group(3)),
                None if m.group(4) is None else int(m.group(4)))


def format_game(record: GameRecord) -> str:
    """A record for people: a header line, one line per turn, the totals."""
    settings = ", ".join(f"{k}={v}" for k, v in record.settings.items())
    seats = " vs ".join(s.label + (f" ({s.spec})" if s.name and s.spec else "") for s in record.seats)
    head = f"game {record.game}, rules {record.rules}{f' ({settings})' if settings else ''}"
    head += (f", seed {record.seed}" if record.seed is not None else "") + f": {seats}"
    width = max((len(s.label) for s in record.seats), default=0)
    lines = [head]
    for t in record.turns:
        label = record.seats[t.seat].label if 0 <= t.seat < len(record.seats) else "?"
        lines.append(f"column {t.column} turn {t.turn:>2} seat {t.seat} {label:<{width}}  {format_turn(t)}")
    if record.totals is not None:
        lines.append("totals: " + ", ".join(f"{s.label} {v}" for s, v in zip(record.seats, record.totals)))
    if not record.complete:
        lines.append("(partial game)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# from the engine: harness.codec.record_from_trace (a trace) and records_of_run (a run), imported above


__all__ = ["FORMAT", "BadGame", "GameRecord", "ReadResult", "RecordError", "Seat", "Turn", "format_game",
           "format_turn", "parse_turn", "read_records", "record_from_trace", "records_of_run", "validate_record",
           "write_records_jsonl", "write_records_parquet"]
