"""Game records: a stable JSON Lines notation for whole games, checked against the rule set's own scoring.

A record holds one game (rule set and settings, seats, and for every turn the faces after each roll,
the dice kept before each reroll, the box written and its score); README.md "Game records" is the
reference. Human games fit it without any bot; the engine's games convert to it
(:func:`record_from_trace`), and a run played with ``--record`` reads back as records
(:func:`records_of_run`). Validation replays the sheet through :func:`harness.scoring.score_options`,
so a record and the engine can never disagree on a score.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from harness.errors import UserError
from harness.rules import RuleSet, load_rules
from harness.scoring import Context, context, score_options
from harness.tournament import MAX_SEATS

#: The ``format`` field of every record this module writes and reads.
FORMAT = "yatzy-record/1"

GameId = str | int | float
_TOP_KEYS = ("format", "game", "rules", "seats", "seed", "turns", "totals", "complete", "meta")
_TURN_KEYS = ("seat", "column", "turn", "rolls", "keeps", "box", "score", "extra")


class RecordError(UserError):
    """One game is not a valid record; the message is one line naming the game, seat and turn."""


# ---------------------------------------------------------------------------------------------
# the data


@dataclass(frozen=True)
class Seat:
    """A player at the table: a person's ``name``, a bot ``spec`` (``solver:temperature=1``), or both."""

    name: str | None = None
    spec: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.spec or "?"

    def to_dict(self) -> dict[str, str]:
        return {k: v for k, v in (("name", self.name), ("spec", self.spec)) if v is not None}


@dataclass(frozen=True)
class Turn:
    """One turn of one seat. ``rolls``: the faces after each roll (1..``rolls_per_turn`` of them);
    ``keeps``: the dice kept before each reroll (``len(keeps) == len(rolls) - 1``); ``box`` and
    ``score``: what was written; ``extra``: the extra yatzy bonus the turn earned, when stated.
    ``column`` and ``turn`` count from 1, ``seat`` from 0."""

    seat: int
    column: int
    turn: int
    rolls: tuple[tuple[int, ...], ...]
    keeps: tuple[tuple[int, ...], ...]
    box: str
    score: int
    extra: int | None = None

    @property
    def first_roll(self) -> bool:
        """The box was written on the turn's first roll (servida)."""
        return len(self.rolls) == 1

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"seat": self.seat, "column": self.column, "turn": self.turn,
                             "rolls": [list(r) for r in self.rolls], "keeps": [list(k) for k in self.keeps],
                             "box": self.box, "score": self.score}
        if self.extra is not None:
            d["extra"] = self.extra
        return d

    @classmethod
    def from_dict(cls, raw: Any, where: str = "turn", seats: Sequence[Seat] = ()) -> Turn:
        """A turn from its JSON object; a wrong type or key raises :class:`RecordError` naming
        ``where`` (``game 17, turns[3]``), or the game, seat (named from ``seats``) and turn."""
        if not isinstance(raw, dict):
            raise RecordError(f"{where}: a turn must be a JSON object, got {_show(raw)}")
        unknown = [k for k in raw if k not in _TURN_KEYS]
        if unknown:
            raise RecordError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(_TURN_KEYS)})")
        for key in ("seat", "turn", "rolls", "keeps", "box", "score"):
            if key not in raw:
                raise RecordError(f"{where}: missing {key!r}")
        seat = _int(raw["seat"], f"{where}: seat")
        column = _int(raw.get("column", 1), f"{where}: column")
        turn = _int(raw["turn"], f"{where}: turn")
        game = where.rsplit(", turns[", 1)[0]
        name = f" ({seats[seat].label})" if 0 <= seat < len(seats) else ""
        at = f"{game}, seat {seat}{name}, column {column} turn {turn}"
        if not isinstance(raw["box"], str):
            raise RecordError(f"{at}: box must be a box name, got {_show(raw['box'])}")
        extra = raw.get("extra")
        return cls(seat, column, turn, _faces_list(raw["rolls"], f"{at}: rolls"),
                   _faces_list(raw["keeps"], f"{at}: keeps"), raw["box"], _int(raw["score"], f"{at}: score"),
                   None if extra is None else _int(extra, f"{at}: extra"))


@dataclass(frozen=True)
class GameRecord:
    """One whole game (or a partial one with ``complete=False``) in play order.

    ``rules`` is a built-in rule-set name or a rule-file path, ``settings`` the overrides of it
    (as ``--set`` takes them); ``totals`` (per seat, columns added) are checked when given;
    ``meta`` is free-form JSON (a site's date, table, ...) kept as is.
    """

    game: GameId
    rules: str
    seats: tuple[Seat, ...]
    turns: tuple[Turn, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    totals: tuple[int, ...] | None = None
    complete: bool = True
    meta: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"format": FORMAT, "game": self.game,
                             "rules": {"name": self.rules, "settings": dict(self.settings)},
                             "seats": [s.to_dict() for s in self.seats]}
        if self.seed is not None:
            d["seed"] = self.seed
        d["turns"] = [t.to_dict() for t in self.turns]
        if self.totals is not None:
            d["totals"] = list(self.totals)
        if not self.complete:
            d["complete"] = False
        if self.meta is not None:
            d["meta"] = dict(self.meta)
        return d

    def to_json(self) -> str:
        """The record as one line of JSON (a line of a ``.jsonl`` file)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> GameRecord:
        """Parse one record (one line of a ``.jsonl`` file); :class:`RecordError` when it is not one."""
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        return cls.from_dict(raw)

    @classmethod
    def from_dict(cls, raw: Any) -> GameRecord:
        """A record from its parsed JSON; checks the shape (keys and types), not the play."""
        if not isinstance(raw, dict):
            raise RecordError(f"a record must be a JSON object, got {_show(raw)}")
        game = raw.get("game")
        if isinstance(game, bool) or not isinstance(game, (str, int, float)) or (
                isinstance(game, float) and not math.isfinite(game)):
            raise RecordError(f"'game' must be a string or a number (the game's id), got {_show(game)}")
        at = f"game {game}"
        if raw.get("format") != FORMAT:
            raise RecordError(f"{at}: format must be {FORMAT!r}, got {_show(raw.get('format'))}")
        unknown = [k for k in raw if k not in _TOP_KEYS]
        if unknown:
            raise RecordError(f"{at}: unknown key {unknown[0]!r} (keys: {', '.join(_TOP_KEYS)})")
        rules = raw.get("rules")
        if not isinstance(rules, dict) or not isinstance(rules.get("name"), str) or not rules["name"]:
            raise RecordError(f"{at}: rules must be {{\"name\": NAME, \"settings\": {{...}}}}, got {_show(rules)}")
        if set(rules) - {"name", "settings"}:
            raise RecordError(f"{at}: rules: unknown key {sorted(set(rules) - {'name', 'settings'})[0]!r} "
                              f"(keys: name, settings)")
        settings = rules.get("settings", {})
        if not isinstance(settings, dict):
            raise RecordError(f"{at}: rules.settings must be an object of setting overrides, got {_show(settings)}")
        seats = raw.get("seats")
        if not isinstance(seats, list) or not 1 <= len(seats) <= MAX_SEATS:
            raise RecordError(f"{at}: seats must be a list of 1..{MAX_SEATS} seats, got {_show(seats)}")
        parsed_seats = []
        for i, s in enumerate(seats):
            ok = isinstance(s, dict) and set(s) <= {"name", "spec"} and (s.get("name") or s.get("spec")) and all(
                isinstance(v, str) for v in s.values())
            if not ok:
                raise RecordError(f"{at}: seat {i} must be {{\"name\": ...}}, {{\"spec\": ...}} or both "
                                  f"(strings), got {_show(s)}")
            parsed_seats.append(Seat(s.get("name"), s.get("spec")))
        turns = raw.get("turns")
        if not isinstance(turns, list):
            raise RecordError(f"{at}: turns must be a list, got {_show(turns)}")
        seed = raw.get("seed")
        if seed is not None:
            seed = _int(seed, f"{at}: seed")
        totals = raw.get("totals")
        if totals is not None:
            if not isinstance(totals, list):
                raise RecordError(f"{at}: totals must be a list of one total per seat, got {_show(totals)}")
            totals = tuple(_int(t, f"{at}: totals") for t in totals)
        complete = raw.get("complete", True)
        if not isinstance(complete, bool):
            raise RecordError(f"{at}: complete must be true or false, got {_show(complete)}")
        meta = raw.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise RecordError(f"{at}: meta must be an object, got {_show(meta)}")
        return cls(game, rules["name"], tuple(parsed_seats),
                   tuple(Turn.from_dict(t, f"{at}, turns[{i}]", parsed_seats) for i, t in enumerate(turns)),
                   settings, seed, totals, complete, meta)

    def load_rules(self) -> RuleSet:
        """The record's rule set with its settings (the rules' own checks refuse a setting that
        does not apply); :class:`RecordError` naming the game."""
        return _load_rules(self)

    def validate(self, rules: RuleSet | None = None) -> tuple[int, ...]:
        """:func:`validate_record`."""
        return validate_record(self, rules)


def _show(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, (set, tuple)) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _int(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise RecordError(f"{where} must be a whole number, got {_show(v)}")
    return v


def _faces_list(v: Any, where: str) -> tuple[tuple[int, ...], ...]:
    if not isinstance(v, list) or not all(isinstance(x, list) for x in v):
        raise RecordError(f"{where} must be a list of lists of faces, got {_show(v)}")
    out = []
    for x in v:
        if not all(isinstance(f, int) and not isinstance(f, bool) for f in x):
            raise RecordError(f"{where}: faces must be whole numbers, got {_show(x)}")
        out.append(tuple(x))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# validation against the rule set


def _load_rules(record: GameRecord, cache: dict[str, RuleSet] | None = None) -> RuleSet:
    key = json.dumps([record.rules, dict(record.settings)], sort_keys=True)
    if cache is not None and key in cache:
        return cache[key]
    try:
        rules = load_rules(record.rules, dict(record.settings))
    except UserError as exc:
        # the rules speak of "--set KEY" for an override; in a record the override is a setting
        raise RecordError(f"game {record.game}: rules {record.rules}: "
                          + str(exc).replace("--set ", "setting ", 1)) from None
    if cache is not None:
        cache[key] = rules
    return rules


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
    None), and every game skipped in ``errors``."""

    source: str
    games: list[GameRecord]
    errors: list[BadGame]
    lineups: list[int | None]

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


def _dice_codes(limit: int) -> dict[int, tuple[int, ...]]:
    """:func:`harness.worker.faces_code` inverted for every multiset of up to ``limit`` dice
    (0: no dice)."""
    out: dict[int, tuple[int, ...]] = {0: ()}
    level = [()]
    for _ in range(limit):
        level = [f + (x,) for f in level for x in range(f[-1] if f else 1, 7)]
        out.update((int("".join(map(str, f))), f) for f in level)
    return out


def _run_rules_name(manifest: Mapping[str, Any], rules: RuleSet) -> str:
    """What a record of the run names its rules by: the built-in name when the run's rule file is
    the built-in one, else the rule file's path."""
    from harness.rules import rules_dir

    name = str(manifest["rules"]["name"])
    builtin = rules_dir() / f"{name}.toml"
    return name if builtin.is_file() and builtin.resolve() == Path(rules.source).resolve() else rules.source


def records_of_run(run_dir: str | os.PathLike[str], *, lineup: int | None = None,
                   games: Iterable[int] | None = None) -> Iterator[tuple[int, GameRecord]]:
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
    import pyarrow as pa
    import pyarrow.parquet as pq

    from harness.rundir import (MANIFEST, ChunkRef, load_manifest, manifest_chunks, read_chunk,
                                rules_of_manifest, settings_changed, sha256_bytes)

    run = Path(run_dir)
    manifest = load_manifest(run)
    where = str(run / MANIFEST)
    rules, _ = rules_of_manifest(manifest, where)
    try:
        lineups = [[str(x) for x in lu] for lu in manifest["lineups"]]
        specs = {str(e["label"]): str(e["spec"]) for e in manifest["entrants"]}
        seed = int(manifest["seed"])
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{where}: incomplete manifest ({exc})") from None
    chunks = manifest_chunks(manifest)
    if not chunks:
        raise UserError(f"{run}: no complete chunk yet, so no game records")
    if not any(c.records_sha256 for c in chunks):
        raise UserError(f"{run} was played without --record, so it has no game records "
                        f"(play it again with: yatzy-harness run ... --record)")
    if lineup is not None and not 0 <= lineup < len(lineups):
        have = "lineup 0 only" if len(lineups) == 1 else f"lineups 0..{len(lineups) - 1}"
        raise UserError(f"lineup {lineup} is not in run {run}: it has {have}")
    wanted = None if games is None else sorted({int(g) for g in games})
    if wanted is not None:
        for li in range(len(lineups)) if lineup is None else [lineup]:
            have_games = {g for c in chunks if c.lineup == li for g in range(c.start, c.stop)}
            missing = [g for g in wanted if g not in have_games]
            if missing:
                n = max(have_games, default=-1) + 1
                span = f"games 0..{n - 1}" if len(have_games) == n else f"{len(have_games):,} games"
                raise UserError(f"game {missing[0]} is not in run {run}: lineup {li} has {span}")
    rules_name = _run_rules_name(manifest, rules)
    settings = settings_changed(rules)
    nb, n_cols = rules.n_boxes, rules.columns
    n_turns = nb * n_cols
    codes = _dice_codes(rules.n_dice)
    resume = f"yatzy-harness run --resume {run}"
    seats_of = [tuple(Seat(name=lab if lab != specs.get(lab) else None, spec=specs.get(lab)) for lab in lu)
                for lu in lineups]
    for c in chunks:
        if lineup is not None and c.lineup != lineup:
            continue
        pick = range(c.start, c.stop) if wanted is None else [g for g in wanted if c.start <= g < c.stop]
        if not pick:
            continue
        path = run / c.records_file
        if c.records_sha256 is None:
            raise UserError(f"{path}: the manifest has no checksum for this chunk's records; "
                            f"replay it with: {resume}")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UserError(f"{path}: cannot read ({exc.strerror or exc}); replay it with: {resume}") from None
        if sha256_bytes(data) != c.records_sha256:
            raise UserError(f"{path}: damaged (its sha256 differs from the manifest's); replay it with: {resume}")
        try:
            table = pq.read_table(pa.BufferReader(data))
        except Exception as exc:  # pyarrow raises many types for a file that is not Parquet
            raise UserError(f"{path}: cannot read: {exc}") from None
        n_seats = len(lineups[c.lineup])
        b = c.stop - c.start
        if table.num_rows != b * n_seats * n_turns:
            raise UserError(f"{path}: {table.num_rows} rows, expected {b} games x {n_seats} seats x {n_turns} turns")
        col = {k: table.column(k).to_numpy().reshape(b, n_seats, n_turns)
               for k in table.column_names if k != "box"}
        order = (col["game"] == c.start + np.arange(b)[:, None, None]).all() \
            and (col["seat"] == np.arange(n_seats)[None, :, None]).all() \
            and ((col["column"].astype(np.int64) - 1) * nb + col["turn"] - 1 == np.arange(n_turns)).all()
        if not order:
            raise UserError(f"{path}: rows are not games {c.start}..{c.stop - 1} in (game, seat, turn) order")
        box_col = table.column("box").combine_chunks()
        box_names = box_col.dictionary.to_pylist()
        boxes = box_col.indices.to_numpy().reshape(b, n_seats, n_turns)
        n_rolls = sum(k.startswith("roll_") for k in col)
        rows = read_chunk(ChunkRef(c.lineup, c.start, c.stop, run / c.file, c.sha256), ["game", "total"])
        if rows.num_rows != b * n_seats or (rows.column("game").to_numpy() != np.repeat(np.arange(c.start, c.stop),
                                                                                     n_seats)).any():
            raise UserError(f"{run / c.file}: rows are not games {c.start}..{c.stop - 1} x {n_seats} seats")
        totals_of = rows.column("total").to_numpy().reshape(b, n_seats)
        for g in pick:
            i = g - c.start
            rolls = np.stack([col[f"roll_{j + 1}"][i] for j in range(n_rolls)], axis=-1)
            keeps = np.stack([col[f"keep_{j + 1}"][i] for j in range(n_rolls - 1)], axis=-1) if n_rolls > 1 \
                else np.zeros((n_seats, n_turns, 0), dtype=np.int64)
            turns = []
            for t in range(n_turns):
                for s in range(n_seats):
                    try:
                        r = tuple(codes[x] for x in rolls[s, t].tolist() if x)
                        k = tuple(codes[x] for x in keeps[s, t, :len(r) - 1].tolist())
                    except KeyError as exc:
                        raise UserError(f"{path}: game {g} seat {s}: {exc.args[0]} is not a dice code") from None
                    extra = int(col["extra"][i, s, t])
                    turns.append(Turn(s, t // nb + 1, t % nb + 1, r, k, box_names[boxes[i, s, t]],
                                      int(col["score"][i, s, t]), extra or None))
            yield c.lineup, GameRecord(g, rules_name, seats_of[c.lineup], tuple(turns), dict(settings), seed,
                                       tuple(int(x) for x in totals_of[i]))


def _read_run(run: Path, validate: bool) -> ReadResult:
    """:func:`read_records` of a run directory."""
    games: list[GameRecord] = []
    lineups: list[int | None] = []
    errors: list[BadGame] = []
    cache: dict[str, RuleSet] = {}
    for lineup, rec in records_of_run(run):
        if validate:
            try:
                validate_record(rec, _load_rules(rec, cache))
            except UserError as exc:
                errors.append(BadGame(rec.game, f"{run} lineup {lineup}: {exc}"))
                continue
        games.append(rec)
        lineups.append(lineup)
    if not games:
        raise UserError(f"{run}: no usable game ({len(errors)} bad; the first: {errors[0].message})")
    return ReadResult(str(run), games, errors, lineups)


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
# from the engine


def record_from_trace(trace: Sequence[Mapping[str, Any]], *, rules_name: str, rules: RuleSet,
                      seats: Sequence[str], game: GameId, seed: int | None = None,
                      totals: Sequence[int] | None = None) -> GameRecord:
    """The record of one game from :func:`harness.replay.replay`'s trace.

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
            extra = int(e.get("extra", 0))
            turns.append(Turn(int(e["seat"]), int(e["column"]) + 1, int(e["turn"]) + 1, tuple(rolls),
                              tuple(keeps), str(e["box"]), int(e["score"]), extra or None))
    complete = len(turns) == len(seats) * rules.n_boxes * rules.columns
    return GameRecord(game, rules_name, tuple(Seat(spec=s) for s in seats), tuple(turns),
                      dict(rules.overrides), seed, tuple(int(x) for x in totals) if totals is not None and complete
                      else None, complete)


# ---------------------------------------------------------------------------------------------
# command line (``yatzy-harness records FILE``)


def _cmd_records(args: argparse.Namespace) -> int:
    res = read_records(args.file)
    for bad in res.errors:
        print(bad.message, file=sys.stderr)
    if args.text:
        for rec in res.games:
            print(format_game(rec))
    print(res.summary, file=sys.stderr if args.text else sys.stdout)
    return 1 if res.errors else 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    from harness.console import examples

    p = sub.add_parser("records", help="check a file of game records and show them as text",
                       description="Read game records (.jsonl, .jsonl.gz or .parquet, or a run directory "
                                   "played with --record), check every game against its rule set, list each "
                                   "bad game on one line (exit 1 if any).",
                       epilog=examples("yatzy-harness records games.jsonl",
                                       "yatzy-harness records games.jsonl.gz --text",
                                       "yatzy-harness records results/sg --text"))
    p.add_argument("file", metavar="FILE", help="a .jsonl, .jsonl.gz or .parquet file of game records, "
                                                "or a run directory played with --record")
    p.add_argument("--text", action="store_true", help="print every valid game, one line per turn")
    p.set_defaults(func=_cmd_records)


__all__ = ["FORMAT", "BadGame", "GameRecord", "ReadResult", "RecordError", "Seat", "Turn", "format_game",
           "format_turn", "parse_turn", "read_records", "record_from_trace", "records_of_run", "validate_record",
           "write_records_jsonl", "write_records_parquet"]
