"""Game records: a stable JSON Lines notation for whole games, and reading and writing files of them.

A record holds one game (rule set and settings, seats, and for every turn the faces after each roll,
the dice kept before each reroll, the box written and its score); the manual's docs/records.md is
the reference. Human games fit it without any bot. This module reads files of records as
untrusted input and writes them: :func:`read_records` a whole source (a ``.jsonl`` /
``.jsonl.gz`` / ``.parquet`` file, lines of JSON, or a run directory played with ``--record``),
:class:`RecordStream` a batch at a time, each game checked and every bad one listed with its line;
:func:`write_records_jsonl` and :func:`write_records_parquet`.

It is also the public face of records, importing as they always were: the record itself
(:class:`GameRecord`, its JSON form: :mod:`harness.records.notation`), the conversions to and from
it (the engine's games: :func:`record_from_trace`; a run played with ``--record``:
:func:`records_of_run`; :mod:`harness.records.codec`), the checks against the rules
(:func:`validate_record`, :func:`check_seat_games`: :mod:`harness.records.validate`) and the
one-line-per-turn text form (:func:`format_turn`, :func:`parse_turn`, :func:`format_game`:
:mod:`harness.records.text`).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import queue
import sys
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generator, Iterable, Iterator, NamedTuple, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from harness.records.convert import arrays_of_records, numbers_of_records, record_from_trace
from harness.records.notation import FORMAT, MAX_SEATS, GameId, GameRecord, RecordError, Seat, Turn, json_problem
from harness.records.runs import RunGames, read_run, records_of_run
from harness.records.text import format_game, format_turn, parse_turn
from harness.records.validate import _load_rules, check_seat_games, validate_record
from harness.util.errors import UserError
from harness.util.progress import bar
from harness.game.rules import AllowedRules, RuleSet
from harness.records.rundir import read_parquet

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
    record when asked (:class:`harness.records.runs.RunGames`) and ``arrays`` holds the valid games as
    the analysis kernel's arrays (:class:`harness.records.runs.RunRecords`), which ``analyse`` and ``fit``
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
    #: the kernel's arrays of ``games`` (:func:`harness.records.convert.arrays_of_records`), when reading
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
                yield _Row(
                    f"line {n}",
                    None,
                    problem=f"a line of {size:,} bytes, over the limit of {limit:,} (--max-line-bytes); not read",
                    at=tell() if tell else pos,
                )
                continue
            if n == 1 and line.startswith(_BOM):
                line = line[len(_BOM) :]
            if not line.strip(_BLANK):
                continue
            at = tell() if tell else pos
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield _Row(
                    f"line {n}",
                    None,
                    problem=f"not UTF-8 text (byte 0x{line[exc.start]:02x} at byte {exc.start + 1} of the line)",
                    at=at,
                )
                continue
            yield _Row(f"line {n}", text.rstrip("\r\n"), at=at)
    except (OSError, EOFError, zlib.error) as exc:
        if n == 0:
            raise
        yield _Row(
            f"line {n + 1}",
            None,
            problem=f"the file cannot be read from here on ({getattr(exc, 'strerror', None) or exc})",
        )


def _read_lines(source: str | os.PathLike[str] | Iterable[str], limit: int) -> _Lines:
    """The source's name and rows; a file that cannot be opened is a :class:`UserError`."""
    if not isinstance(source, (str, os.PathLike)):

        def lines() -> Iterator[_Row]:
            for i, text in enumerate(source, 1):
                text = text.rstrip("\n")
                if len(text) > limit:
                    yield _Row(
                        f"line {i}",
                        None,
                        problem=f"a line of {len(text):,} characters, over the limit "
                        f"of {limit:,} (--max-line-bytes); not read",
                        at=i,
                    )
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
    if not (
        pa.types.is_string(col.type)
        or pa.types.is_large_string(col.type)
        or pa.types.is_binary(col.type)
        or pa.types.is_large_binary(col.type)
    ):
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
                yield _Row(
                    where,
                    None,
                    lineup,
                    f"a record of {len(data):,} bytes, over the limit of {limit:,} (--max-line-bytes); not read",
                    i + 1,
                )
                continue
            try:
                yield _Row(where, data.decode("utf-8"), lineup, at=i + 1)
            except UnicodeDecodeError as exc:
                yield _Row(
                    where,
                    None,
                    lineup,
                    f"not UTF-8 text (byte 0x{data[exc.start]:02x} at byte {exc.start + 1} of the record)",
                    i + 1,
                )

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


def read_records(
    source: str | os.PathLike[str] | Iterable[str],
    *,
    validate: bool = True,
    max_line_bytes: int = MAX_LINE_BYTES,
    rules_dirs: Iterable[str | os.PathLike[str]] = (),
) -> ReadResult:
    """Read game records from a ``.jsonl`` / ``.jsonl.gz`` / ``.parquet`` file, from lines of JSON,
    or from a run directory played with ``--record`` (:func:`records_of_run`: every lineup's games,
    ``lineups`` filled).

    A file is untrusted input: it is read line by line, each line decoded (UTF-8) and parsed on
    its own, so whatever a line holds it is either a game or one :class:`BadGame` naming its line
    and why: not UTF-8, over ``max_line_bytes``, not JSON (or nested or numbered past what JSON
    reading allows), not a record, a game id already read (of the same lineup), not valid play.
    A record may name a built-in rule set, carry its rule set inline, or name a rule file inside
    one of ``rules_dirs`` (:class:`harness.game.rulefiles.AllowedRules`); any other name is a bad game, and
    nothing outside those directories is opened. Every game is checked (:func:`validate_record`,
    unless ``validate=False``: shape and rule set only); a bad game is skipped and listed in
    ``errors`` as ``(game id, "SOURCE line N: message")``. A run directory's records are read
    through its manifest, rules included. Raises :class:`UserError` when the source cannot be
    read, :class:`NoUsableGame` (listing every bad game) when it holds no usable game. The whole
    source is held: :class:`RecordStream` reads a big one a batch at a time.
    """
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        return _read_run_checked(Path(source), validate)
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

    def __init__(
        self,
        source: str | os.PathLike[str] | Iterable[str],
        *,
        validate: bool = True,
        max_line_bytes: int = MAX_LINE_BYTES,
        rules_dirs: Iterable[str | os.PathLike[str]] = (),
        batch: int = BATCH,
        quiet: bool = True,
        on_bad: Callable[[BadGame], None] | None = None,
    ) -> None:
        self.validate, self.batch, self.quiet, self.on_bad = validate, max(1, int(batch)), quiet, on_bad
        self.games = 0
        self.errors: list[BadGame] = []
        self._walked = False
        self._run: ReadResult | None = None
        self._held: ReadResult | None = None
        #: what the first game read names its rules by: (name, settings), once it is read
        self.named: tuple[str, dict[str, Any]] | None = None
        if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
            self._run = _read_run_checked(Path(source), validate)
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
                        self.named = (
                            (part.arrays.rules_name, dict(part.arrays.settings))
                            if part.arrays is not None
                            else (part.games[0].rules, dict(part.games[0].settings))
                        )
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
            yield ReadResult(
                run.source,
                RunGames(part),
                run.errors if lo == 0 else [],
                part.lineup.tolist(),
                part,
                rules=_Repeated(run.rules[0], len(part)),
            )

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
    return ReadResult(
        name,
        [x.record for x in kept],
        [b for _, b in bad],
        [x.lineup for x in kept],
        places=[x.where for x in kept],
        rules=[x.rules for x in kept],
        kernel=kernel if good.all() else None,
    )  # every game checked in them, and kept


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


def write_records_parquet(
    path: str | os.PathLike[str], records: Sequence[GameRecord], lineups: Sequence[int] | None = None
) -> Path:
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
# a run's records (``yatzy-harness run --record``), read and checked


def _read_run_checked(run: Path, validate: bool) -> ReadResult:
    """:func:`read_records` of a run directory: the records Parquet read as arrays by the one
    reader of runs (:func:`harness.records.runs.read_run`), checked by :func:`check_seat_games`; only the games it
    flags become records, for :func:`validate_record` to name (or pass)."""

    runrec = read_run(run)
    errors: list[BadGame] = []
    rules = runrec.load_rules()  # the manifest's: the records name the run's own rule file
    suspect = ~runrec.regular
    if validate:
        extras = runrec.numbers["extra"]  # a run's record states an extra bonus when it is not 0
        rows = check_seat_games(
            rules,
            runrec.rolls,
            runrec.keeps,
            runrec.boxes,
            runrec.numbers["score"],
            np.where(extras == 0, -1, extras),
            runrec.totals,
        )
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
    return ReadResult(
        str(run), RunGames(runrec), errors, runrec.lineup.tolist(), runrec, rules=_Repeated(rules, len(runrec))
    )


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


__all__ = [
    "BATCH",
    "FORMAT",
    "MAX_LINE_BYTES",
    "BadGame",
    "GameRecord",
    "NoUsableGame",
    "ReadResult",
    "RecordError",
    "RecordStream",
    "Seat",
    "Turn",
    "format_game",
    "format_turn",
    "parse_turn",
    "read_records",
    "record_from_trace",
    "records_of_run",
    "validate_record",
    "write_records_jsonl",
    "write_records_parquet",
]
