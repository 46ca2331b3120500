"""Game records: a stable JSON Lines notation for whole games, checked against the rule set's own scoring.

A record holds one game (rule set and settings, seats, and for every turn the faces after each roll,
the dice kept before each reroll, the box written and its score); the manual's docs/records.md is
the reference. Human games fit it without any bot. The record itself (:class:`GameRecord`, its JSON
form) and every conversion to and from it (the engine's games: :func:`record_from_trace`; a run
played with ``--record``: :func:`records_of_run`) are :mod:`harness.records.codec`'s, imported here as
they always were. This module checks records (:func:`validate_record` replays the sheet through
:func:`harness.game.scoring.score_options`, so a record and the engine can never disagree on a score;
:func:`check_seat_games`, the same checks over a run's arrays), reads and writes files of them
(:func:`read_records` whole, :class:`RecordStream` a batch at a time), and gives the
one-line-per-turn text form.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import queue
import re
import sys
import threading
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generator, Iterable, Iterator, NamedTuple, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from harness.records.codec import (FORMAT, MAX_SEATS, GameId, GameRecord, RecordError, RunGames, Seat, Turn, arrays_of_records,
                           json_problem, numbers_of_records, read_run, record_from_trace, record_rules,
                           records_of_run)
from harness.util.errors import UserError
from harness.util.progress import bar
from harness.game.rules import AllowedRules, RuleSet
from harness.records.rundir import read_parquet
from harness.game.scoring import Context, context, score_options, score_options_batch

# ---------------------------------------------------------------------------------------------
# validation against the rule set


def _load_rules(record: GameRecord, cache: dict[str, RuleSet] | None = None,
                allowed: AllowedRules | None = None) -> RuleSet:
    return record_rules(record.rules, record.settings, record.game, cache, spec=record.rules_spec, allowed=allowed)


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


class NoUsableGame(UserError):
    """A source holds no game that could be used: ``bad`` lists every game skipped, so that a
    command can show them all, then ``headline`` (``games.jsonl: no usable game (3 bad)``);
    the message is the headline with the first bad game's line."""

    def __init__(self, headline: str, bad: Sequence[BadGame] = ()) -> None:
        self.headline = headline
        self.bad = list(bad)
        first = f"; the first: {self.bad[0].message}" if self.bad else ""
        super().__init__(f"{headline[:-1]}{first})" if headline.endswith(")") else headline + first)


@dataclass(frozen=True)
class ReadResult:
    """Games read from one source: the valid ``games`` (with their ``lineups`` from Parquet, else
    None), and every game skipped in ``errors``. From a run directory, ``games`` builds each
    record when asked (:class:`harness.records.codec.RunGames`) and ``arrays`` holds the valid games as
    the analysis kernel's arrays (:class:`harness.records.codec.RunRecords`), which ``analyse`` and ``fit``
    use without building a record. From a file, ``places`` says on which line each game is.
    ``rules`` holds each game's rule set as reading loaded it (a record's name resolved as
    ``rules_dirs`` allows): the analysis, the fit and advise take it from there."""

    source: str
    games: Sequence[GameRecord]
    errors: list[BadGame]
    lineups: list[int | None]
    arrays: Any = None
    #: where each game is in the source (``line 3``, ``row 2``), when it is a file
    places: Sequence[str] | None = None
    #: each game's rule set, as reading loaded it (None: not loaded, for a result made by hand)
    rules: Sequence[RuleSet] | None = None
    #: the kernel's arrays of ``games`` (:func:`harness.records.codec.arrays_of_records`), when reading
    #: built them to check the games (a :class:`RecordStream`'s batch of one rule set), else None
    kernel: Any = None

    @property
    def summary(self) -> str:
        """``games.jsonl: 98 games read, 2 bad games skipped``."""
        return _summary(self.source, len(self.games), len(self.errors))


def _summary(source: str, n: int, bad: int) -> str:
    return f"{source}: {n:,} game{'s' * (n != 1)} read, {bad:,} bad game{'s' * (bad != 1)} skipped"


#: A line of a records file longer than this (bytes, without its newline) is a bad game, skipped
#: without being held in memory. A record of a six-seat maxi game with every field is ~60 KB.
MAX_LINE_BYTES = 4 << 20
#: How much of an over-long line is read at a time while skipping to its end.
_PIECE = 1 << 16
_BOM = b"\xef\xbb\xbf"
#: JSON's whitespace: a line of nothing else is blank (not a game).
_BLANK = b" \t\r\n"
#: Free-form parts of a record (``meta``, the rules) nest at most this deep.
MAX_NESTING = 32


class _Row(NamedTuple):
    """One line (or Parquet row) of a source: where it is (``line 3``), its text, its lineup,
    ``problem``, why it is a bad game before it is parsed (its text is then None), and ``at``, how
    far through the source it ends (bytes of the file, or rows: a progress bar's position)."""

    where: str
    text: str | None
    lineup: Any = None
    problem: str | None = None
    at: int = 0


class _Lines(NamedTuple):
    """A source's name, its rows, and their extent in the rows' ``at`` (None: not known) and its unit."""

    name: str
    rows: Iterator[_Row]
    total: int | None
    unit: str


def _byte_lines(fh: Any, limit: int, tell: Callable[[], int] | None = None) -> Iterator[_Row]:
    """The lines of a binary file, read line by line in pieces of at most ``limit`` + 1 bytes:
    each decoded on its own (UTF-8; a byte-order mark at the start is skipped), a line over
    ``limit`` bytes skipped to its newline unread. Blank lines are not rows. A read that fails
    part-way (a damaged gzip stream) ends the rows with one that says so. A row's ``at`` is the
    bytes read so far (``tell()``, when given: a compressed file's own position)."""
    n = pos = 0
    try:
        while True:
            line = fh.readline(limit + 1)
            if not line:
                return
            n += 1
            pos += len(line)
            if len(line) > limit and not line.endswith(b"\n"):
                size = len(line)
                while line and not line.endswith(b"\n"):
                    line = fh.readline(_PIECE)
                    size += len(line)
                pos += size - limit - 1
                size -= line.endswith(b"\n")
                yield _Row(f"line {n}", None, problem=f"a line of {size:,} bytes, over the limit of {limit:,} "
                                                      "(--max-line-bytes); not read", at=tell() if tell else pos)
                continue
            if n == 1 and line.startswith(_BOM):
                line = line[len(_BOM):]
            if not line.strip(_BLANK):
                continue
            at = tell() if tell else pos
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield _Row(f"line {n}", None, problem=f"not UTF-8 text (byte 0x{line[exc.start]:02x} at byte "
                                                      f"{exc.start + 1} of the line)", at=at)
                continue
            yield _Row(f"line {n}", text.rstrip("\r\n"), at=at)
    except (OSError, EOFError, zlib.error) as exc:
        if n == 0:
            raise
        yield _Row(f"line {n + 1}", None, problem=f"the file cannot be read from here on "
                                                  f"({getattr(exc, 'strerror', None) or exc})")


def _read_lines(source: str | os.PathLike[str] | Iterable[str], limit: int) -> _Lines:
    """The source's name and rows; a file that cannot be opened is a :class:`UserError`."""
    if not isinstance(source, (str, os.PathLike)):
        def lines() -> Iterator[_Row]:
            for i, text in enumerate(source, 1):
                text = text.rstrip("\n")
                if len(text) > limit:
                    yield _Row(f"line {i}", None, problem=f"a line of {len(text):,} characters, over the limit "
                                                          f"of {limit:,} (--max-line-bytes); not read", at=i)
                elif text.strip():
                    yield _Row(f"line {i}", text, at=i)
        return _Lines("<lines>", lines(), None, "line")
    path = Path(source)
    name = str(path)
    if path.suffix == ".parquet":
        n, rows = _parquet_rows(path, limit)
        return _Lines(name, rows, n, "row")
    try:
        fh = gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")
        size = os.fstat(fh.fileno()).st_size
    except OSError as exc:
        raise UserError(f"cannot read game records {name}: {exc.strerror or exc}") from None
    raw = getattr(fh, "fileobj", None)  # a gzip file's compressed stream: how far through the file
    lines = _byte_lines(fh, limit, raw.tell if raw is not None else None)
    try:
        first = next(lines, None)  # a file that is no gzip stream at all fails here, as a whole
    except (OSError, EOFError, zlib.error) as exc:
        fh.close()
        raise UserError(f"cannot read game records {name}: {getattr(exc, 'strerror', None) or exc}") from None

    def rows() -> Iterator[_Row]:
        with fh:
            if first is not None:
                yield first
                yield from lines

    return _Lines(name, rows(), size, "B")


def _parquet_rows(path: Path, limit: int) -> tuple[int, Iterator[_Row]]:
    """The number of rows of a Parquet file of records, and the rows (decoded one at a time)."""
    try:
        table = read_parquet(path)
    except Exception as exc:  # pyarrow raises many types for a file that is not Parquet
        raise UserError(f"cannot read game records {path}: {exc}") from None
    if "record" not in table.column_names:
        raise UserError(f"{path}: no 'record' column (columns: {', '.join(table.column_names)})")
    col = table.column("record")
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_binary(col.type)
            or pa.types.is_large_binary(col.type)):
        raise UserError(f"{path}: the 'record' column holds {col.type}, not the records' JSON text")
    records = col.cast(pa.large_binary()).to_pylist()  # bytes: each row decoded on its own, as a line is
    if "lineup" in table.column_names:
        lu = table.column("lineup")
        if not pa.types.is_integer(lu.type):
            raise UserError(f"{path}: the 'lineup' column holds {lu.type}, not whole numbers")
        lineups = lu.to_pylist()
    else:
        lineups = [None] * len(records)

    def rows() -> Iterator[_Row]:
        for i, (data, lineup) in enumerate(zip(records, lineups)):
            where = f"row {i}"
            data = data or b""
            if len(data) > limit:
                yield _Row(where, None, lineup, f"a record of {len(data):,} bytes, over the limit of {limit:,} "
                                                "(--max-line-bytes); not read", i + 1)
                continue
            try:
                yield _Row(where, data.decode("utf-8"), lineup, at=i + 1)
            except UnicodeDecodeError as exc:
                yield _Row(where, None, lineup, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at byte "
                                                f"{exc.start + 1} of the record)", i + 1)

    return len(records), rows()


def _nests_within(v: Any, limit: int) -> bool:
    """``v`` (parsed JSON) has no list or object nested more than ``limit`` deep (walked without recursion)."""
    stack = [(v, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (list, dict)):
            if d > limit:
                return False
            stack.extend((y, d + 1) for y in (x.values() if isinstance(x, dict) else x))
    return True


def _parse(text: str) -> Any:
    """A line's JSON, or :class:`RecordError` saying in one line why it is none (also for what
    the JSON reader refuses beyond the grammar: nesting deeper than it recurses, a number of more
    digits than Python converts)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(json_problem(text, exc)) from None
    except RecursionError:
        raise RecordError("not a record: lists or objects nested too deep to read") from None
    except ValueError as exc:  # the int conversion limit (sys.get_int_max_str_digits)
        if "digits" in str(exc):
            raise RecordError(f"not a record: a number of more than {sys.get_int_max_str_digits():,} digits") from None
        raise RecordError(f"not valid JSON ({exc})") from None


def _game_id(raw: Any) -> GameId | None:
    """The id a parsed line gives, if it gives one a record may have."""
    if isinstance(raw, dict):
        g = raw.get("game")
        if (isinstance(g, (str, int)) and not isinstance(g, bool)) or (isinstance(g, float) and math.isfinite(g)):
            return g
    return None


def read_records(source: str | os.PathLike[str] | Iterable[str], *, validate: bool = True,
                 max_line_bytes: int = MAX_LINE_BYTES,
                 rules_dirs: Iterable[str | os.PathLike[str]] = ()) -> ReadResult:
    """Read game records from a ``.jsonl`` / ``.jsonl.gz`` / ``.parquet`` file, from lines of JSON,
    or from a run directory played with ``--record`` (:func:`records_of_run`: every lineup's games,
    ``lineups`` filled).

    A file is untrusted input: it is read line by line, each line decoded (UTF-8) and parsed on
    its own, so whatever a line holds it is either a game or one :class:`BadGame` naming its line
    and why: not UTF-8, over ``max_line_bytes``, not JSON (or nested or numbered past what JSON
    reading allows), not a record, a game id already read (of the same lineup), not valid play.
    A record may name a built-in rule set, carry its rule set inline, or name a rule file inside
    one of ``rules_dirs`` (:class:`harness.game.rules.AllowedRules`); any other name is a bad game, and
    nothing outside those directories is opened. Every game is checked (:func:`validate_record`,
    unless ``validate=False``: shape and rule set only); a bad game is skipped and listed in
    ``errors`` as ``(game id, "SOURCE line N: message")``. A run directory's records are read
    through its manifest, rules included. Raises :class:`UserError` when the source cannot be
    read, :class:`NoUsableGame` (listing every bad game) when it holds no usable game. The whole
    source is held: :class:`RecordStream` reads a big one a batch at a time.
    """
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        return _read_run(Path(source), validate)
    stream = RecordStream(source, validate=validate, max_line_bytes=max_line_bytes, rules_dirs=rules_dirs)
    games: list[GameRecord] = []
    rule_sets: list[RuleSet] = []
    lineups: list[int | None] = []
    places: list[str] = []
    for part in stream:
        games += part.games
        lineups += part.lineups
        places += part.places or ()
        rule_sets += part.rules or ()
    return ReadResult(stream.source, games, stream.errors, lineups, places=places, rules=rule_sets)


#: Games a :class:`RecordStream` reads at a time: checked together, handed on as one batch.
BATCH = 2000
#: The progress bar of a stream moves at least every this many rows read.
_BAR_ROWS = 256


class _Read(NamedTuple):
    """A line read as a record, not yet checked against its rules: its order among the source's
    bad games and games (``seq``), place, lineup, record and rule set."""

    seq: int
    where: str
    lineup: Any
    record: GameRecord
    rules: RuleSet


class RecordStream:
    """:func:`read_records` a batch at a time, for a log too big to hold.

    Iterating it (once) gives each batch of up to ``batch`` consecutive games as a
    :class:`ReadResult` (from a run directory, a stretch of its arrays' games), each game checked as
    :func:`read_records` checks it; each bad game is in its batch's ``errors`` and in
    :attr:`errors`, in the source's order. After the walk: :attr:`games` (the count of valid games)
    and :attr:`summary`; the walk ends with :class:`NoUsableGame` (:class:`UserError` for a source
    without a line) when no game was usable. A source that cannot be opened is a
    :class:`UserError` at once. ``quiet=False`` draws a progress bar on stderr (bytes of the file,
    rows of a Parquet file, games of a run), moved as the records are read and the batches taken;
    ``on_bad`` is called with each bad game as its batch is done (a command lists them as they come).

    The checks of a batch are vectorised: :func:`check_seat_games` over its records' arrays, a rule
    set at a time, and :func:`validate_record` only for the games it flags (naming what is wrong,
    or passing a game that the arrays cannot hold as it is: a partial one, turns out of order).

    Memory: one batch of records (about 20 KB a two-seat game while it is held), the game ids seen
    (a second line with one is a bad game) and the bad games' messages.
    """

    def __init__(self, source: str | os.PathLike[str] | Iterable[str], *, validate: bool = True,
                 max_line_bytes: int = MAX_LINE_BYTES, rules_dirs: Iterable[str | os.PathLike[str]] = (),
                 batch: int = BATCH, quiet: bool = True, on_bad: Callable[[BadGame], None] | None = None) -> None:
        self.validate, self.batch, self.quiet, self.on_bad = validate, max(1, int(batch)), quiet, on_bad
        self.games = 0
        self.errors: list[BadGame] = []
        self._walked = False
        self._run: ReadResult | None = None
        self._held: ReadResult | None = None
        #: what the first game read names its rules by: (name, settings), once it is read
        self.named: tuple[str, dict[str, Any]] | None = None
        if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
            self._run = _read_run(Path(source), validate)
            self.source, self._total, self._unit = self._run.source, len(self._run.arrays), "game"
        else:
            self._allowed = AllowedRules.of(rules_dirs)
            lines = _read_lines(source, max_line_bytes)
            self.source, self._rows, self._total, self._unit = lines

    @classmethod
    def of(cls, source: RecordStream | ReadResult | Iterable[GameRecord]) -> RecordStream:
        """``source`` as a stream: itself, or games already read (a :class:`ReadResult`, or records
        made in Python) as its one batch."""
        if isinstance(source, RecordStream):
            return source
        if not isinstance(source, ReadResult):
            recs = list(source)
            source = ReadResult("<records>", recs, [], [None] * len(recs))
        out = cls.__new__(cls)
        out.validate, out.batch, out.quiet, out.on_bad = True, max(1, len(source.games)), True, None
        out.games, out.errors, out._walked, out._run, out._held, out.named = 0, [], False, None, source, None
        out.source, out._total, out._unit = source.source, len(source.games), "game"
        return out

    @property
    def held(self) -> ReadResult | None:
        """The games already read that this stream hands on (:meth:`of`), or None."""
        return self._held

    @property
    def summary(self) -> str:
        """``games.jsonl: 98 games read, 2 bad games skipped`` (after the walk)."""
        return _summary(self.source, self.games, len(self.errors))

    def __iter__(self) -> Iterator[ReadResult]:
        if self._walked:
            raise RuntimeError(f"{self.source}: a record stream is read once")
        self._walked = True
        scale = {"unit_scale": True, "unit_divisor": 1024} if self._unit == "B" else {"unit_scale": True}
        with bar(self._total, "reading records", self._unit, quiet=self.quiet, **scale) as shown:
            if self._held is not None:
                parts: Iterator[ReadResult] = iter([self._held])
            else:
                parts = self._run_parts() if self._run is not None else _ahead(self._file_parts(shown))
            for part in parts:
                self.games += len(part.games)
                self.errors += part.errors
                for b in part.errors if self.on_bad is not None else ():
                    self.on_bad(b)
                shown.set_postfix_str(f"{self.games:,} games, {len(self.errors):,} bad")
                if self._unit == "game":
                    shown.update(len(part.games))
                if part.games:
                    if self.named is None:
                        self.named = ((part.arrays.rules_name, dict(part.arrays.settings)) if part.arrays is not None
                                      else (part.games[0].rules, dict(part.games[0].settings)))
                    yield part
        if not self.games:
            if not self.errors:
                raise UserError(f"{self.source}: no game records")
            raise _no_usable(self.source, self.errors)

    def _run_parts(self) -> Iterator[ReadResult]:
        run = self._run
        assert run is not None
        arrays = run.arrays
        for lo in range(0, len(arrays), self.batch):
            hi = min(lo + self.batch, len(arrays))
            keep = np.zeros(len(arrays), dtype=bool)
            keep[lo:hi] = True
            part = arrays.select(keep)
            yield ReadResult(run.source, RunGames(part), run.errors if lo == 0 else [], part.lineup.tolist(), part,
                             rules=_Repeated(run.rules[0], len(part)))

    def _file_parts(self, shown: Any) -> Iterator[ReadResult]:
        name, allowed, validate = self.source, self._allowed, self.validate
        cache: dict[str, RuleSet] = {}
        first_on: dict[tuple[Any, GameId], str] = {}  # (lineup, game id) -> where it was first
        read: list[_Read] = []
        bad: list[tuple[int, BadGame]] = []
        for seq, row in enumerate(self._rows):
            if seq % _BAR_ROWS == 0:
                shown.update(row.at - shown.n)
            if row.problem is not None:
                bad.append((seq, BadGame(None, f"{name} {row.where}: {row.problem}")))
                continue
            game_id: GameId | None = None
            try:
                raw = _parse(row.text or "")
                game_id = _game_id(raw)
                if game_id is not None:
                    # a game is its id (of its lineup): a second line with it is not a second game
                    first = first_on.setdefault((row.lineup, game_id), row.where)
                    if first != row.where:
                        of = f" of lineup {row.lineup}" if row.lineup is not None else ""
                        raise RecordError(f"duplicate game id {game_id}{of}, first on {first}")
                rec = _from_dict(raw)
                rules = _load_rules(rec, cache, allowed)
            except UserError as exc:
                bad.append((seq, BadGame(game_id, f"{name} {row.where}: {exc}")))
                continue
            except RecursionError:  # past the nesting checks: still one bad game, not a lost file
                bad.append((seq, BadGame(game_id, f"{name} {row.where}: not a record: nested too deep to read")))
                continue
            read.append(_Read(seq, row.where, row.lineup, rec, rules))
            if len(read) >= self.batch:
                yield _checked(name, read, bad, validate)
                read, bad = [], []
                shown.update(row.at - shown.n)
        yield _checked(name, read, bad, validate)
        shown.update(shown.total - shown.n if shown.total is not None else 0)


def _ahead(parts: Generator[Any, None, None]) -> Iterator[Any]:
    """``parts``, each read one ahead on a thread of its own: the next batch is parsed and checked
    (Python, holding the GIL) while the caller's numba kernels (which release it) walk this one.
    What the reading raises is raised here, in its place; a caller that stops early stops it."""
    out: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(item: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for part in parts:
                if not put(("part", part)):
                    break
            else:
                put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, raised there
            put(("raise", exc))
        finally:
            parts.close()  # the file is closed by the thread that reads it

    reader = threading.Thread(target=read, name="yatzy-records", daemon=True)
    reader.start()
    try:
        while True:
            kind, item = out.get()
            if kind == "part":
                yield item
            elif kind == "raise":
                raise item
            else:
                return
    finally:
        stop.set()
        reader.join()


def _checked(name: str, read: Sequence[_Read], bad: list[tuple[int, BadGame]], validate: bool) -> ReadResult:
    """A batch of a :class:`RecordStream`: the records ``read`` checked against their rules, and
    the bad games among them and ``bad`` (the lines that were no record) in the source's order."""
    good, kernel = _fast_checks(read) if validate else (np.ones(len(read), dtype=bool), None)
    kept: list[_Read] = []
    for item, ok in zip(read, good.tolist()):
        if not ok:
            try:
                validate_record(item.record, item.rules)  # names what is wrong, or passes what the arrays cannot hold
            except UserError as exc:
                bad.append((item.seq, BadGame(item.record.game, f"{name} {item.where}: {exc}")))
                continue
        kept.append(item)
    bad.sort(key=lambda x: x[0])
    return ReadResult(name, [x.record for x in kept], [b for _, b in bad], [x.lineup for x in kept],
                      places=[x.where for x in kept], rules=[x.rules for x in kept],
                      kernel=kernel if good.all() else None)  # every game checked in them, and kept


_FACES = frozenset(range(1, 7))


def _plain(rec: GameRecord, rules: RuleSet) -> bool:
    """A complete record that the kernel's arrays hold as it is (every turn in play order, rolls of
    the rule set's dice, fewer dice kept, known boxes, no stated number below 0): what
    :func:`check_seat_games` can check. Any other goes to :func:`validate_record`."""
    n_seats, nb, n = len(rec.seats), rules.n_boxes, rules.n_dice
    if not rec.complete or not 1 <= n_seats <= MAX_SEATS or len(rec.turns) != n_seats * nb * rules.columns:
        return False
    if rec.totals is not None and (len(rec.totals) != n_seats or min(rec.totals) < 0):
        return False
    names = rules.box_names
    for i, t in enumerate(rec.turns):
        if (t.seat, t.column, t.turn) != (i % n_seats, i // (n_seats * nb) + 1, (i // n_seats) % nb + 1):
            return False
        if t.box not in names or (t.extra is not None and t.extra < 0) or len(t.keeps) != len(t.rolls) - 1:
            return False
        for r in t.rolls:
            if len(r) != n or not _FACES.issuperset(r):
                return False
        for k in t.keeps:
            if len(k) >= n or not _FACES.issuperset(k):
                return False
    return True


def _fast_checks(read: Sequence[_Read]) -> tuple[np.ndarray, Any]:
    """(len(read),) bool: True for a game :func:`check_seat_games` finds valid (:func:`_plain`
    ones, a rule set at a time); False for the others, which :func:`validate_record` then judges.
    And the kernel's arrays of all of them when they are :func:`_plain` games of one rule set."""
    ok = np.zeros(len(read), dtype=bool)
    groups: dict[int, list[int]] = {}
    for i, item in enumerate(read):
        if _plain(item.record, item.rules):
            groups.setdefault(id(item.rules), []).append(i)
    kernel = None
    for idx in groups.values():
        rules = read[idx[0]].rules
        recs = [read[i].record for i in idx]
        arrays = arrays_of_records(recs, rules)
        numbers, totals = numbers_of_records(recs, rules)
        rows = check_seat_games(rules, *arrays[:3], numbers["score"], numbers["extra"], totals)
        starts = np.cumsum([0] + [len(r.seats) for r in recs[:-1]])
        ok[idx] = np.logical_and.reduceat(rows, starts)
        kernel = arrays if len(idx) == len(read) else None
    return ok, kernel


def _no_usable(name: str, errors: Sequence[BadGame]) -> NoUsableGame:
    n = len(errors)
    return NoUsableGame(f"{name}: no usable game ({n:,} bad)", errors)


def _from_dict(raw: Any) -> GameRecord:
    """:meth:`GameRecord.from_dict`, with the free-form parts' nesting bounded first."""
    if isinstance(raw, dict):
        for key in ("meta", "rules"):
            if not _nests_within(raw.get(key), MAX_NESTING):
                at = f"game {raw['game']}: " if _game_id(raw) is not None else ""
                raise RecordError(f"{at}{key} nests lists or objects more than {MAX_NESTING} deep")
    return GameRecord.from_dict(raw)


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
    the analysis kernel's arrays (:class:`harness.records.codec.RunRecords`: rolls, keeps (N, T, R) roll and
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


def _read_run(run: Path, validate: bool) -> ReadResult:
    """:func:`read_records` of a run directory: the records Parquet read as arrays
    (:func:`harness.records.codec.read_run`), checked by :func:`check_seat_games`; only the games it
    flags become records, for :func:`validate_record` to name (or pass)."""

    runrec = read_run(run)
    errors: list[BadGame] = []
    rules = runrec.load_rules()  # the manifest's: the records name the run's own rule file
    suspect = ~runrec.regular
    if validate:
        extras = runrec.numbers["extra"]  # a run's record states an extra bonus when it is not 0
        rows = check_seat_games(rules, runrec.rolls, runrec.keeps, runrec.boxes, runrec.numbers["score"],
                                np.where(extras == 0, -1, extras), runrec.totals)
        suspect = suspect | ~np.logical_and.reduceat(rows, runrec.ptr[:-1])
    bad = np.zeros(len(runrec), dtype=bool)
    for i in np.flatnonzero(suspect).tolist():
        rec = runrec.record(i)
        try:
            if validate:
                validate_record(rec, rules)
            if not runrec.regular[i]:
                runrec.patch(i, rec, rules)
        except UserError as exc:
            errors.append(BadGame(rec.game, f"{run} lineup {int(runrec.lineup[i])}: {exc}"))
            bad[i] = True
        except (KeyError, ValueError, IndexError):  # validate=False: a game the arrays cannot hold
            bad[i] = True
    if bad.any():
        runrec = runrec.select(~bad)
    if not len(runrec):
        raise _no_usable(str(run), errors)
    return ReadResult(str(run), RunGames(runrec), errors, runrec.lineup.tolist(), runrec,
                      rules=_Repeated(rules, len(runrec)))


class _Repeated(Sequence[RuleSet]):
    """One rule set for each of ``n`` games (a run's)."""

    def __init__(self, rules: RuleSet, n: int) -> None:
        self.item, self.n = rules, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.item] * len(range(self.n)[i])
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return self.item

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
# from the engine: harness.records.codec.record_from_trace (a trace) and records_of_run (a run), imported above


__all__ = ["BATCH", "FORMAT", "MAX_LINE_BYTES", "BadGame", "GameRecord", "NoUsableGame", "ReadResult", "RecordError",
           "RecordStream", "Seat", "Turn", "format_game", "format_turn", "parse_turn", "read_records", "record_from_trace", "records_of_run",
           "validate_record", "write_records_jsonl", "write_records_parquet"]
