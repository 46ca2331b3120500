"""Reading a run's records back: the records Parquet of a run played with ``--record``, chunk by
chunk through the manifest, as :class:`GameRecord` objects (:func:`records_of_run`) or as the
analysis kernel's arrays (:func:`read_run`, :class:`RunRecords`).

One function reads a run's records files: :func:`_run_columns` opens the chunks a caller wants
(checking that the lineup and games are in the run) and gives each as :class:`_Columns`, its file
checked against the manifest's sha256 and against the chunk's rows. :func:`records_of_run`,
:func:`read_run` and :meth:`RunRecords.record` all read through it. Reading a whole run as a
checked :class:`harness.records.record.ReadResult` (``read_records`` of a run directory) is
:mod:`harness.records.record`'s, on top of :func:`read_run`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

from harness.util.errors import UserError
from harness.game.rules import RuleSet, rules_dir
from harness.records.convert import KernelArrays, _faces_of, _optional_none, arrays_of_records, decode_faces
from harness.records.notation import _RECORD_FIELDS, TURN_FIELDS, GameRecord, Seat, Turn
from harness.records.rundir import (
    MANIFEST,
    ChunkRef,
    load_manifest,
    manifest_chunks,
    numpy_of,
    read_chunk,
    read_parquet,
    rules_of_manifest,
    settings_changed,
    sha256_bytes,
)


class NoRecords(UserError):
    """A run directory played without ``--record``: it holds no game records (``run``: the
    directory), though each of its games can be replayed (:mod:`harness.play.replay`)."""

    def __init__(self, message: str, run: Path) -> None:
        super().__init__(message)
        self.run = run


@dataclass(frozen=True)
class _Run:
    """What every record of a run shares, from its manifest."""

    path: Path
    rules: RuleSet
    rules_name: str
    settings: dict[str, Any]
    seed: int
    lineups: tuple[tuple[str, ...], ...]
    seats_of: tuple[tuple[Seat, ...], ...]
    chunks: tuple[Any, ...]  # rundir.Chunk, complete, sorted by (lineup, start)


def _run_rules_name(manifest: Mapping[str, Any], rules: RuleSet) -> str:
    """What a record of the run names its rules by: the built-in name when the run's rule file is
    the built-in one, else the rule file's path."""

    name = str(manifest["rules"]["name"])
    builtin = rules_dir() / f"{name}.toml"
    return name if builtin.is_file() and builtin.resolve() == Path(rules.source).resolve() else rules.source


def _open_run(run_dir: str | os.PathLike[str]) -> _Run:

    run = Path(run_dir)
    manifest = load_manifest(run)
    where = str(run / MANIFEST)
    rules, _ = rules_of_manifest(manifest, where)
    try:
        lineups = tuple(tuple(str(x) for x in lu) for lu in manifest["lineups"])
        specs = {str(e["label"]): str(e["spec"]) for e in manifest["entrants"]}
        seed = int(manifest["seed"])
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{where}: incomplete manifest ({exc})") from None
    chunks = manifest_chunks(manifest)
    if not chunks:
        raise UserError(f"{run}: no complete chunk yet, so no game records")
    if not any(c.records_sha256 for c in chunks):
        raise NoRecords(
            f"{run} was played without --record, so it has no game records "
            f"(play it again with: yatzy-harness run ... --record)",
            run,
        )
    seats_of = tuple(
        tuple(Seat(name=lab if lab != specs.get(lab) else None, spec=specs.get(lab)) for lab in lu) for lu in lineups
    )
    return _Run(
        run, rules, _run_rules_name(manifest, rules), settings_changed(rules), seed, lineups, seats_of, tuple(chunks)
    )


@dataclass(frozen=True)
class _Columns:
    """One chunk's records file as (b, S, T) arrays: the face codes of every roll and keep, the box
    (index into ``box_names``), :data:`TURN_FIELDS`, and the totals of the chunk's rows (b, S)."""

    path: Path
    lineup: int
    start: int
    rolls: np.ndarray  # (b, S, T, R) codes
    keeps: np.ndarray  # (b, S, T, R - 1) codes
    boxes: np.ndarray
    box_names: list[str]
    numbers: dict[str, np.ndarray]
    totals: np.ndarray


def _read_columns(run: _Run, c: Any) -> _Columns:
    """Chunk ``c``'s records file, checked against the manifest's sha256 and against its rows."""
    rules = run.rules
    nb = rules.n_boxes
    n_turns = nb * rules.columns
    resume = f"yatzy-harness run --resume {run.path}"
    path = run.path / c.records_file
    if c.records_sha256 is None:
        raise UserError(f"{path}: the manifest has no checksum for this chunk's records; replay it with: {resume}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc}); replay it with: {resume}") from None
    if sha256_bytes(data) != c.records_sha256:
        raise UserError(f"{path}: damaged (its sha256 differs from the manifest's); replay it with: {resume}")
    try:
        table = read_parquet(pa.BufferReader(data))
    except Exception as exc:  # pyarrow raises many types for a file that is not Parquet
        raise UserError(f"{path}: cannot read: {exc}") from None
    n_seats = len(run.lineups[c.lineup])
    b = c.stop - c.start
    if table.num_rows != b * n_seats * n_turns:
        raise UserError(f"{path}: {table.num_rows} rows, expected {b} games x {n_seats} seats x {n_turns} turns")
    col = {k: numpy_of(table.column(k)).reshape(b, n_seats, n_turns) for k in table.column_names if k != "box"}
    order = (
        (col["game"] == c.start + np.arange(b)[:, None, None]).all()
        and (col["seat"] == np.arange(n_seats)[None, :, None]).all()
        and ((col["column"].astype(np.int64) - 1) * nb + col["turn"] - 1 == np.arange(n_turns)).all()
    )
    if not order:
        raise UserError(f"{path}: rows are not games {c.start}..{c.stop - 1} in (game, seat, turn) order")
    box_col = table.column("box").combine_chunks()
    n_rolls = sum(k.startswith("roll_") for k in col)
    rows = read_chunk(ChunkRef(c.lineup, c.start, c.stop, run.path / c.file, c.sha256), ["game", "total"])
    if (
        rows.num_rows != b * n_seats
        or (numpy_of(rows.column("game")) != np.repeat(np.arange(c.start, c.stop), n_seats)).any()
    ):
        raise UserError(f"{run.path / c.file}: rows are not games {c.start}..{c.stop - 1} x {n_seats} seats")
    missing = [f.name for f in TURN_FIELDS if f.name not in col and f.in_record and not f.optional]
    if missing:
        raise UserError(f"{path}: no column {missing[0]!r}; replay it with: {resume}")
    # a field the file does not have (written before the field was added) reads as 0
    numbers = {
        f.name: col[f.name] if f.name in col else np.zeros((b, n_seats, n_turns), np.dtype(f.arrow))
        for f in TURN_FIELDS
    }
    return _Columns(
        path,
        c.lineup,
        c.start,
        np.stack([col[f"roll_{j + 1}"] for j in range(n_rolls)], axis=-1),
        np.stack([col[f"keep_{j + 1}"] for j in range(n_rolls - 1)], axis=-1)
        if n_rolls > 1
        else np.zeros((b, n_seats, n_turns, 0), dtype=np.int64),
        numpy_of(box_col.indices).reshape(b, n_seats, n_turns),
        box_col.dictionary.to_pylist(),
        numbers,
        numpy_of(rows.column("total")).reshape(b, n_seats),
    )


def _record_of(run: _Run, cols: _Columns, i: int) -> GameRecord:
    """The record of game ``cols.start + i``: the run's rules and the settings it changed, seed,
    seats and the totals of the run's own rows. :class:`UserError` for a code that is no dice."""
    nb = run.rules.n_boxes
    g = cols.start + i
    n_seats, n_turns = cols.boxes.shape[1:]
    rolls, keeps = cols.rolls[i], cols.keeps[i]
    rc, _, rok = decode_faces(rolls, run.rules.n_dice)
    kc, _, kok = decode_faces(keeps, run.rules.n_dice)
    turns = []
    for t in range(n_turns):
        for s in range(n_seats):
            hit = np.flatnonzero(rolls[s, t])
            cut = slice(None, len(hit) - 1)
            bad = [int(rolls[s, t, x]) for x in hit.tolist() if not rok[s, t, x]] or [
                int(keeps[s, t, x]) for x in range(keeps.shape[2])[cut] if not kok[s, t, x]
            ]
            if bad:  # rolls first, then keeps, as they are read
                raise UserError(f"{cols.path}: game {g} seat {s}: {bad[0]} is not a dice code")
            numbers = {f.name: int(cols.numbers[f.name][i, s, t]) for f in _RECORD_FIELDS}
            turns.append(
                Turn(
                    s,
                    t // nb + 1,
                    t % nb + 1,
                    tuple(_faces_of(rc[s, t, x]) for x in hit.tolist()),
                    tuple(_faces_of(kc[s, t, x]) for x in range(keeps.shape[2])[cut]),
                    cols.box_names[cols.boxes[i, s, t]],
                    **_optional_none(numbers),
                )
            )
    return GameRecord(
        g,
        run.rules_name,
        run.seats_of[cols.lineup],
        tuple(turns),
        dict(run.settings),
        run.seed,
        tuple(int(x) for x in cols.totals[i]),
    )


def records_of_run(
    run_dir: str | os.PathLike[str], *, lineup: int | None = None, games: Any = None
) -> Iterator[tuple[int, GameRecord]]:
    """The game records of a run played with ``--record``: ``(lineup, record)`` for every game of
    every complete chunk in the manifest (lineup by lineup, games in order), or of ``lineup`` and
    ``games`` (game indices) only.

    Each ``records/`` file is checked against the manifest's sha256 first. A record names the run's
    rules (its built-in name, else the rule file's path) with the settings the run changed, the
    run's seed, its seats (``Seat(spec=...)``, plus ``name`` when the run's label differs from the
    spec) and the totals of the run's own rows (``chunks/``), so validating a record checks it
    against the run's results. Turns are in play order; the keep that kept every die (stop) is
    not a keep of the record. :class:`UserError` (one line) for a run without records, a lineup or
    game not in the run, or a damaged file (naming it and ``yatzy-harness run --resume DIR``).
    """
    run = _open_run(run_dir)
    for cols, pick in _run_columns(run, lineup, games):
        for g in pick:
            yield cols.lineup, _record_of(run, cols, g - cols.start)


def _run_columns(run: _Run, lineup: int | None = None, games: Any = None) -> Iterator[tuple[_Columns, Sequence[int]]]:
    """The one reader of a run's records files: every complete chunk of the run (lineup by lineup,
    games in order), or of ``lineup`` and the chunks holding ``games`` (game indices), as
    ``(columns, games of the chunk wanted)``, each file read and checked by :func:`_read_columns`.
    A lineup or a game not in the run is a :class:`UserError` before any file is read."""
    chunks = run.chunks
    if lineup is not None and not 0 <= lineup < len(run.lineups):
        have = "lineup 0 only" if len(run.lineups) == 1 else f"lineups 0..{len(run.lineups) - 1}"
        raise UserError(f"lineup {lineup} is not in run {run.path}: it has {have}")
    wanted = None if games is None else sorted({int(g) for g in games})
    if wanted is not None:
        for li in range(len(run.lineups)) if lineup is None else [lineup]:
            spans = [(c.start, c.stop) for c in chunks if c.lineup == li]
            missing = [g for g in wanted if not any(a <= g < b for a, b in spans)]
            if missing:
                have_games = {g for a, b in spans for g in range(a, b)}
                n = max(have_games, default=-1) + 1
                span = f"games 0..{n - 1}" if len(have_games) == n else f"{len(have_games):,} games"
                raise UserError(f"game {missing[0]} is not in run {run.path}: lineup {li} has {span}")
    for c in chunks:
        if lineup is not None and c.lineup != lineup:
            continue
        if wanted is None:
            yield _read_columns(run, c), range(c.start, c.stop)
            continue
        pick = [g for g in wanted if c.start <= g < c.stop]
        if pick:
            yield _read_columns(run, c), pick


def run_rules(run_dir: str | os.PathLike[str]) -> RuleSet:
    """The rule set of a run played with ``--record`` (from its manifest), which its records name."""
    return _open_run(run_dir).rules


@dataclass(frozen=True, eq=False)
class RunRecords:
    """Every game of a run played with ``--record``, as the kernel's arrays (a row per seat-game,
    games lineup by lineup and in order, seats in order), read straight from the records Parquet.

    Per game: ``game`` (G,) its index, ``lineup`` (G,), ``ptr`` (G + 1,) its rows
    ``ptr[i]:ptr[i + 1]``; per row: ``rolls``, ``keeps`` (N, T, R) int16 (the keeps before each
    reroll, as :func:`arrays_of_records` gives them: a stop is no keep), ``boxes`` (N, T) int8,
    ``numbers`` {name: (N, T)} of :data:`TURN_FIELDS` and ``totals`` (N,) of the run's rows.
    ``regular`` (G,): False for a game whose file holds something the arrays cannot say (a code
    that is no roll of the rule set, a gap between rolls, an unknown box); such a game is read as
    a :class:`GameRecord` (:meth:`record`) and, once valid, put in with :meth:`patch`.
    """

    run: _Run
    game: np.ndarray
    lineup: np.ndarray
    ptr: np.ndarray
    rolls: np.ndarray
    keeps: np.ndarray
    boxes: np.ndarray
    numbers: Mapping[str, np.ndarray]
    totals: np.ndarray
    regular: np.ndarray
    _records: dict[int, GameRecord] = field(default_factory=dict, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.game)

    @property
    def source(self) -> str:
        return str(self.run.path)

    @property
    def rules_name(self) -> str:
        """What the records name their rules by (:class:`GameRecord` ``rules``)."""
        return self.run.rules_name

    @property
    def settings(self) -> dict[str, Any]:
        """The settings the run changed (:class:`GameRecord` ``settings``)."""
        return self.run.settings

    @property
    def seed(self) -> int:
        return self.run.seed

    def labels(self, i: int) -> tuple[str, ...]:
        """The seat labels of game ``i``."""
        return tuple(s.label for s in self.run.seats_of[int(self.lineup[i])])

    def load_rules(self, cache: dict[str, RuleSet] | None = None) -> RuleSet:
        """The run's rule set, from its manifest (what the records name: the run directory is the
        user's own, so its rule file is read wherever it is)."""
        return self.run.rules

    def arrays(self, lo: int = 0, hi: int | None = None) -> KernelArrays:
        """Games ``lo..hi-1`` as :func:`arrays_of_records` gives them: rolls, keeps, boxes, and per
        row the game id, seat and label."""
        hi = len(self) if hi is None else hi
        a, b = int(self.ptr[lo]), int(self.ptr[hi])
        lus = self.lineup[lo:hi]
        sizes = np.diff(self.ptr[lo : hi + 1])
        games = np.repeat(self.game[lo:hi], sizes).tolist()
        seats = (np.arange(b - a) - np.repeat(self.ptr[lo:hi] - a, sizes)).astype(np.int16)
        labels_of = [[s.label for s in seats_] for seats_ in self.run.seats_of]
        labels = [labels_of[lu][s] for lu, s in zip(np.repeat(lus, sizes).tolist(), seats.tolist())]
        return self.rolls[a:b], self.keeps[a:b], self.boxes[a:b], games, seats, labels

    def record(self, i: int) -> GameRecord:
        """Game ``i`` as a :class:`GameRecord` (its chunk's file read again, the last one kept)."""
        got = self._records.get(i)
        if got is not None:
            return got
        lu, g = int(self.lineup[i]), int(self.game[i])
        cols = self._cache.get("columns")
        if cols is None or cols.lineup != lu or not cols.start <= g < cols.start + len(cols.boxes):
            cols, _ = next(_run_columns(self.run, lu, [g]))
            self._cache["columns"] = cols
        return _record_of(self.run, cols, g - cols.start)

    def patch(self, i: int, record: GameRecord, rules: RuleSet) -> None:
        """Put game ``i``'s (valid) ``record`` into the arrays: the rows of a game not
        :attr:`regular`."""
        rolls, keeps, boxes, *_ = arrays_of_records([record], rules)
        a, b = int(self.ptr[i]), int(self.ptr[i + 1])
        w = min(rolls.shape[2], self.rolls.shape[2])
        for dst, src in ((self.rolls, rolls), (self.keeps, keeps)):
            dst[a:b] = -1
            dst[a:b, :, :w] = src[:, :, :w]
        self.boxes[a:b] = boxes
        self._records[i] = record
        self.regular[i] = True

    def select(self, keep: np.ndarray) -> RunRecords:
        """The games where ``keep`` (G,) bool is true."""
        keep = np.asarray(keep, dtype=bool)
        sizes = np.diff(self.ptr)
        rows = np.repeat(keep, sizes)
        ptr = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
        np.cumsum(sizes[keep], out=ptr[1:])
        old = np.flatnonzero(keep)
        new_of = {int(o): n for n, o in enumerate(old)}
        return RunRecords(
            self.run,
            self.game[keep],
            self.lineup[keep],
            ptr,
            self.rolls[rows],
            self.keeps[rows],
            self.boxes[rows],
            {k: v[rows] for k, v in self.numbers.items()},
            self.totals[rows],
            self.regular[keep],
            {new_of[i]: r for i, r in self._records.items() if i in new_of},
        )


def read_run(run_dir: str | os.PathLike[str]) -> RunRecords:
    """Every game of a run played with ``--record`` as :class:`RunRecords`, decoded from the
    records Parquet in whole-chunk numpy operations (no :class:`Turn` objects). The checks and
    their messages are :func:`records_of_run`'s (a game whose file holds a code that is no dice is
    a :class:`UserError`, as there)."""
    run = _open_run(run_dir)
    rules = run.rules
    d = rules.dice
    parts: list[dict[str, Any]] = []
    irregular: dict[int, GameRecord] = {}
    first = 0
    for cols, _ in _run_columns(run):
        b, s, t = cols.boxes.shape
        r = cols.rolls.shape[3]
        counts, size, ok = decode_faces(cols.rolls, d.n)
        present = cols.rolls != 0
        n_rolls = present.sum(axis=-1)
        full = ok & (size == d.n)
        rolls = np.where(present & full, d.roll_index(counts), -1).astype(np.int16)
        regular = (
            (full | ~present).all(axis=-1)
            & (n_rolls >= 1)
            & (present == (np.arange(r) < n_rolls[..., None])).all(axis=-1)
        )
        kcounts, _, kok = decode_faces(cols.keeps, d.n)
        asked = np.arange(r - 1) < (n_rolls - 1)[..., None]
        keeps = np.full((b, s, t, r), -1, dtype=np.int16)
        keeps[..., : r - 1] = np.where(asked & kok, d.keep_index(kcounts), -1)
        regular &= (kok | ~asked).all(axis=-1)
        box_of = np.array(
            [rules.box_names.index(x) if x in rules.box_names else -1 for x in cols.box_names] or [-1], dtype=np.int8
        )
        boxes = box_of[cols.boxes]
        regular &= boxes >= 0
        games_ok = regular.all(axis=(1, 2))
        for i in np.flatnonzero(~games_ok).tolist():
            irregular[first + i] = _record_of(run, cols, i)  # the code that is no dice raises here, as before
        parts.append(
            {
                "game": np.arange(cols.start, cols.start + b, dtype=np.int64),
                "lineup": np.full(b, cols.lineup),
                "sizes": np.full(b, s),
                "rolls": rolls.reshape(b * s, t, r),
                "keeps": keeps.reshape(b * s, t, r),
                "boxes": boxes.reshape(b * s, t),
                "totals": cols.totals.reshape(b * s).astype(np.int64),
                "regular": games_ok,
                **{f"n:{k}": v.reshape(b * s, t) for k, v in cols.numbers.items()},
            }
        )
        first += b

    def cat(key: str) -> np.ndarray:
        return np.concatenate([p[key] for p in parts])

    ptr = np.zeros(first + 1, dtype=np.int64)
    np.cumsum(cat("sizes"), out=ptr[1:])
    return RunRecords(
        run,
        cat("game"),
        cat("lineup"),
        ptr,
        cat("rolls"),
        cat("keeps"),
        cat("boxes"),
        {f.name: cat(f"n:{f.name}") for f in TURN_FIELDS},
        cat("totals"),
        cat("regular"),
        irregular,
    )


class RunGames(Sequence[GameRecord]):
    """The games of :class:`RunRecords` as a sequence of :class:`GameRecord`, each built when it is
    asked for (``read_records`` of a run directory: its ``games``)."""

    def __init__(self, runrec: RunRecords) -> None:
        self.runrec = runrec

    def __len__(self) -> int:
        return len(self.runrec)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.runrec.record(j) for j in range(len(self))[i]]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self.runrec.record(i % n)

    def __iter__(self) -> Iterator[GameRecord]:
        for i in range(len(self)):
            yield self.runrec.record(i)

    def __repr__(self) -> str:
        return f"RunGames({self.runrec.source!r}, {len(self)} games)"


__all__ = ["NoRecords", "RunGames", "RunRecords", "read_run", "records_of_run", "run_rules"]
