"""The game codec: every form a played game takes, and every conversion between them, in one place.

A game is held in five forms:

* the engine's :class:`harness.game.engine.Recording`: (B, S, T, R) dice and keep *indices* of the rule
  set's :class:`harness.game.dice.Dice`, boxes, scores, extra bonuses (what ``run --record`` and
  ``run --analyse`` start from);
* the trace of :func:`harness.game.engine.play` (``trace=``): one dict per roll, keep and box (replay);
* a run's records Parquet (``RUN/records/part-*.parquet``): one row per (game, seat, turn), dice
  as *face codes* (:func:`faces_code`), schema :data:`RECORD_KEYS` + rolls + keeps + box +
  :data:`TURN_FIELDS`;
* :class:`GameRecord` (``yatzy-record/1``): the typed object of JSON Lines files and human logs;
* the arrays the analysis kernel walks (:func:`harness.decisions.kernels.walk`): rolls, keeps (N, T,
  R) int16 and boxes (N, T) int8, a row per seat-game (:func:`arrays_of_records`,
  :meth:`RunRecords.arrays`, :func:`arrays_of_recording`).

The conversions::

    Recording -> records Parquet      records_parquet(rec, rules, games, lineup)
    Recording -> Turn objects         turns_of_recording(rec, rules, game, seat)
    Recording -> kernel arrays        arrays_of_recording(rec)
    trace     -> GameRecord           record_from_trace(trace, ...)
    records Parquet -> GameRecord     records_of_run(run_dir, lineup=, games=), RunRecords.record(i)
    records Parquet -> kernel arrays  read_run(run_dir).arrays(lo, hi)   (vectorised: no Turn objects)
    GameRecord -> kernel arrays       arrays_of_records(records, rules)
    GameRecord <-> JSON               GameRecord.to_json / from_json (to_dict / from_dict)

No other module knows the face code or the records Parquet layout. A per-turn number that a
record carries (a score, the extra bonus) is declared once, in :data:`TURN_FIELDS`, with its
:class:`Turn` attribute and JSON key, its Parquet column and type, the :class:`Recording` array
and the trace key it comes from; every conversion above walks that table. Checking a record
against the rules is :mod:`harness.records.record`'s (``validate_record``, and ``check_seat_games`` over
the arrays of a run).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from harness.game.dice import dice
from harness.util.errors import UserError
from harness.game.rules import INLINE_KEYS, AllowedRules, RuleSet, load_rules, rules_dir
from harness.records.rundir import (MANIFEST, ChunkRef, load_manifest, manifest_chunks, numpy_of, read_chunk,
                            read_parquet, rules_of_manifest, settings_changed, sha256_bytes)
from harness.game.tournament import MAX_SEATS

#: The ``format`` field of every record.
FORMAT = "yatzy-record/1"

GameId = str | int | float


class RecordError(UserError):
    """One game is not a valid record; the message is one line naming the game, seat and turn."""


class NoRecords(UserError):
    """A run directory played without ``--record``: it holds no game records (``run``: the
    directory), though each of its games can be replayed (:mod:`harness.play.replay`)."""

    def __init__(self, message: str, run: Path) -> None:
        super().__init__(message)
        self.run = run


def json_problem(text: str, exc: json.JSONDecodeError) -> str:
    """Why ``text`` (a record's line) is not JSON, in one line: "cut off" when the reader ran out of
    text inside the record (a log truncated, or read while still being written: the reader's own
    "Expecting ',' delimiter" would send one looking for a missing comma), else the reader's reason."""
    end = len(text.rstrip(" \t\r\n"))
    rest = text[exc.pos:end]
    short = end > 0 and (
        exc.pos >= end  # it wanted more: a value, a delimiter, a key, a closing bracket
        or exc.msg.startswith("Unterminated string")  # a string runs to the end (no newline can be in one)
        or (exc.msg.startswith("Invalid \\uXXXX escape") and len(rest) < 6)
        # the start of a literal or a number, cut: tr, nul, -, 1., 2e
        or (exc.msg in ("Expecting value", "Expecting ',' delimiter")
            and (any(w.startswith(rest) for w in ("true", "false", "null")) or re.fullmatch(r"[-+.\deE]+", rest))))
    if short:
        return f"not valid JSON: cut off after column {end}, in the middle of the record"
    return f"not valid JSON ({exc.msg} at column {exc.colno})"


# ---------------------------------------------------------------------------------------------
# the fields of a turn


@dataclass(frozen=True)
class TurnField:
    """A per-turn number of a record, in every form.

    ``name``: the :class:`Turn` attribute, the JSON key and the Parquet column; ``arrow``: the
    Parquet type; ``recording``: the :class:`harness.game.engine.Recording` array (B, S, T) it comes
    from; ``trace``: its key in the trace's ``box`` event (default: ``name``); ``optional``: the
    record leaves it out (``None``) when it is 0, and a JSON turn may leave it out; ``in_record``:
    False for a column of the Parquet only (a :class:`Turn` derives it). A records file written
    before a field was added reads it as 0."""

    name: str
    arrow: str
    recording: str
    trace: str | None = None
    optional: bool = False
    in_record: bool = True

    @property
    def trace_key(self) -> str:
        return self.trace or self.name


#: The per-turn numbers after the dice and the box, in Parquet column order.
TURN_FIELDS: tuple[TurnField, ...] = (
    TurnField("score", "int16", "scores"),
    TurnField("extra", "int16", "extras", optional=True),
    TurnField("first_roll", "bool", "first", in_record=False),  # = len(rolls) == 1
)
_RECORD_FIELDS = tuple(f for f in TURN_FIELDS if f.in_record)

_TOP_KEYS = ("format", "game", "rules", "seats", "seed", "turns", "totals", "complete", "meta")
_TURN_KEYS = ("seat", "column", "turn", "rolls", "keeps", "box", *(f.name for f in _RECORD_FIELDS))
_TURN_KEY_SET = frozenset(_TURN_KEYS)
_TURN_REQUIRED = ("seat", "turn", "rolls", "keeps", "box", *(f.name for f in _RECORD_FIELDS if not f.optional))


# ---------------------------------------------------------------------------------------------
# the typed record (JSON Lines, human logs)


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
    ``column`` and ``turn`` count from 1, ``seat`` from 0. The numbers after ``box`` are
    :data:`TURN_FIELDS`."""

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
                             "box": self.box}
        for f in _RECORD_FIELDS:
            v = getattr(self, f.name)
            if v is not None or not f.optional:
                d[f.name] = v
        return d

    @classmethod
    def from_dict(cls, raw: Any, where: str = "turn", seats: Sequence[Seat] = ()) -> Turn:
        """A turn from its JSON object; a wrong type or key raises :class:`RecordError` naming
        ``where`` (``game 17, turns[3]``), or the game, seat (named from ``seats``) and turn."""
        if not isinstance(raw, dict):
            raise RecordError(f"{where}: a turn must be a JSON object, got {_show(raw)}")
        if not _TURN_KEY_SET.issuperset(raw):
            unknown = [k for k in raw if k not in _TURN_KEY_SET]
            raise RecordError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(_TURN_KEYS)})")
        for key in _TURN_REQUIRED:
            if key not in raw:
                raise RecordError(f"{where}: missing {key!r}")
        seat = _int(raw["seat"], f"{where}: seat")
        column = _int(raw.get("column", 1), f"{where}: column")
        turn = _int(raw["turn"], f"{where}: turn")

        def at() -> str:  # where the turn is, for a message (built only for one)
            game = where.rsplit(", turns[", 1)[0]
            name = f" ({seats[seat].label})" if 0 <= seat < len(seats) else ""
            return f"{game}, seat {seat}{name}, column {column} turn {turn}"

        if not isinstance(raw["box"], str):
            raise RecordError(f"{at()}: box must be a box name, got {_show(raw['box'])}")
        rolls, keeps = _faces_list(raw["rolls"], at, "rolls"), _faces_list(raw["keeps"], at, "keeps")
        numbers = {}
        for f in _RECORD_FIELDS:
            v = raw.get(f.name)
            if v is None and f.optional:
                numbers[f.name] = None
            elif type(v) is int and -NUMBER_LIMIT <= v <= NUMBER_LIMIT:
                numbers[f.name] = v
            else:
                numbers[f.name] = _int(raw[f.name], f"{at()}: {f.name}", NUMBER_LIMIT)
        return cls(seat, column, turn, rolls, keeps, raw["box"], **numbers)


@dataclass(frozen=True)
class GameRecord:
    """One whole game (or a partial one with ``complete=False``) in play order.

    ``rules`` is a built-in rule-set name or a rule-file path, ``settings`` the overrides of it
    (as ``--set`` takes them); or the record carries its rule set inline, ``rules_spec`` (the keys
    of a rule file, ``name`` among them; ``rules`` is then that name and ``settings`` empty).
    ``totals`` (per seat, columns added) are checked when given; ``meta`` is free-form JSON (a
    site's date, table, ...) kept as is. Checking the play against the rules:
    :func:`harness.records.record.validate_record`.
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
    rules_spec: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        rules = dict(self.rules_spec) if self.rules_spec is not None else {"name": self.rules,
                                                                           "settings": dict(self.settings)}
        d: dict[str, Any] = {"format": FORMAT, "game": self.game, "rules": rules,
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
            raise RecordError(json_problem(text, exc)) from None
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
            raise RecordError(f"{at}: rules must be {{\"name\": NAME, \"settings\": {{...}}}} or a rule set "
                              f"(the keys of a rule file, name among them), got {_show(rules)}")
        spec = None
        if set(rules) - {"name", "settings"}:  # a rule set carried inline: the keys of a rule file
            unknown = sorted(set(rules) - INLINE_KEYS)
            if unknown:
                raise RecordError(f"{at}: rules: unknown key {_show(unknown[0])} (keys: name, settings; or, for a "
                                  f"rule set carried inline, a rule file's: {', '.join(sorted(INLINE_KEYS))})")
            spec, settings = rules, {}
        else:
            settings = rules.get("settings", {})
            if not isinstance(settings, dict):
                raise RecordError(f"{at}: rules.settings must be an object of setting overrides, "
                                  f"got {_show(settings)}")
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
            for key, v in s.items():
                bad = _unprintable(v)
                if bad:
                    raise RecordError(f"{at}: seat {i} {key} {bad}")
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
            totals = tuple(_int(t, f"{at}: totals", NUMBER_LIMIT) for t in totals)
        complete = raw.get("complete", True)
        if not isinstance(complete, bool):
            raise RecordError(f"{at}: complete must be true or false, got {_show(complete)}")
        meta = raw.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise RecordError(f"{at}: meta must be an object, got {_show(meta)}")
        return cls(game, rules["name"], tuple(parsed_seats),
                   tuple(Turn.from_dict(t, f"{at}, turns[{i}]", parsed_seats) for i, t in enumerate(turns)),
                   settings, seed, totals, complete, meta, spec)

    def load_rules(self, allowed: AllowedRules | None = None) -> RuleSet:
        """The record's rule set with its settings (the rules' own checks refuse a setting that
        does not apply); :class:`RecordError` naming the game. ``allowed``: what a record read
        from a file may load (:class:`harness.game.rules.AllowedRules`); None trusts the name, for a
        record made in Python."""
        return record_rules(self.rules, self.settings, self.game, spec=self.rules_spec, allowed=allowed)


def record_rules(name: str, settings: Mapping[str, Any], game: GameId, cache: dict[str, RuleSet] | None = None, *,
                 spec: Mapping[str, Any] | None = None, allowed: AllowedRules | None = None) -> RuleSet:
    """The rule set a record names (``name`` with ``settings``) or carries (``spec``);
    :class:`RecordError` naming ``game``. With ``allowed`` (a record read from a file: untrusted),
    a name loads a built-in rule set or a file in an allowed directory only
    (:meth:`harness.game.rules.AllowedRules.path_of`); without, any rule set or file by that name."""
    key = json.dumps([name, dict(settings), spec], sort_keys=True, default=str)
    if cache is not None and key in cache:
        return cache[key]
    try:
        # an override is named as the record gives it: rules.settings.KEY (not the flag --set)
        if spec is not None or allowed is not None:
            rules = (allowed or AllowedRules()).load(name, dict(settings), spec=spec, where="inline",
                                                     origin="rules.settings")
        else:
            rules = load_rules(name, dict(settings), origin="rules.settings")
    except UserError as exc:
        what = f"rules {name} (inline)" if spec is not None else f"rules {name}"
        msg = str(exc)  # a rule set's messages start with its place: here, the record's inline rules
        msg = msg.removeprefix("inline: ") if msg.startswith("inline: ") else msg.removeprefix("inline ")
        raise RecordError(f"game {game}: {what}: {msg}") from None
    if cache is not None:
        cache[key] = rules
    return rules


#: Longest seat name or spec a record may give (a name is printed in every table of its player).
MAX_NAME = 200


def _unprintable(v: str) -> str | None:
    """Why a seat's name or spec cannot be shown as it is, or None: too long, or a control or
    format character (a terminal escape, a line break, a right-to-left override: printed raw, a
    name could clear the screen or disguise another player's line)."""
    if len(v) > MAX_NAME:
        return f"is {len(v):,} characters long (at most {MAX_NAME})"
    for ch in v:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp"):
            return f"holds the control character U+{ord(ch):04X}"
    return None


def _show(v: Any) -> str:
    """A value of a record in a message: its JSON, cut to 40 characters."""
    text = _brief(v, 41) if not isinstance(v, (set, tuple)) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _brief(v: Any, budget: int) -> str:
    """``json.dumps(v)`` as far as its first ``budget`` characters go, built from no more of ``v``
    than that needs (each level of nesting costs one of the budget): a value read from a file may
    be megabytes long or nested a thousand deep."""
    if budget <= 0:
        return "..."
    if isinstance(v, (list, dict)):
        items = v.items() if isinstance(v, dict) else ((None, x) for x in v)
        parts: list[str] = []
        used = 1
        for k, x in items:
            if used >= budget:
                parts.append("...")
                break
            part = _brief(x, budget - used)
            if k is not None:
                part = f"{_brief(str(k), budget - used)}: {part}"
            parts.append(part)
            used += len(part) + 2
        inner = ", ".join(parts)
        return f"[{inner}]" if isinstance(v, list) else f"{{{inner}}}"
    if isinstance(v, str):
        return json.dumps(v[:budget])
    return json.dumps(v)


#: The largest magnitude a record's scores and totals may have: they are held as int64.
NUMBER_LIMIT = 2**63 - 1


def _int(v: Any, where: str, limit: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise RecordError(f"{where} must be a whole number, got {_show(v)}")
    if limit is not None and not -limit <= v <= limit:
        raise RecordError(f"{where} is out of range (at most {limit:,} in size), got {_show(v)}")
    return v


def _faces_list(v: Any, at: Callable[[], str], what: str) -> tuple[tuple[int, ...], ...]:
    """A turn's ``rolls`` or ``keeps`` (``what``): lists of whole numbers; ``at()`` names the turn."""
    if not isinstance(v, list) or not _LIST_ONLY.issuperset(map(type, v)):
        if not isinstance(v, list) or not all(isinstance(x, list) for x in v):
            raise RecordError(f"{at()}: {what} must be a list of lists of faces, got {_show(v)}")
    out = []
    for x in v:
        if not _INT_ONLY.issuperset(map(type, x)):  # bool is no int here
            if not all(isinstance(f, int) and not isinstance(f, bool) for f in x):
                raise RecordError(f"{at()}: {what}: faces must be whole numbers, got {_show(x)}")
        out.append(tuple(x))
    return tuple(out)


_LIST_ONLY, _INT_ONLY = frozenset({list}), frozenset({int})


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
RECORD_KEYS: tuple[tuple[str, str], ...] = (("lineup", "int16"), ("game", "int64"), ("seat", "int8"),
                                           ("column", "int8"), ("turn", "int16"))
#: Parquet writer settings of a records file: fixed, so that its bytes depend only on its rows.
PARQUET_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 1, "use_dictionary": True,
                                   "write_statistics": True, "row_group_size": 1 << 22}


def records_parquet(rec: Any, rules: RuleSet, games: np.ndarray, lineup: int) -> bytes:
    """The records file of one chunk (the engine's :class:`~harness.game.engine.Recording` ``rec`` of
    games ``games`` (B,) of lineup ``lineup``): one row per (game, seat, turn), in that order;
    ``column`` and ``turn`` count from 1, as ``replay`` does. Columns: :data:`RECORD_KEYS`, the
    rolls, keeps and box, :data:`TURN_FIELDS`."""

    d = rules.dice
    b, s, t, r = rec.rolls.shape
    roll_code = faces_code(d.roll_faces)
    keep_faces = np.zeros((d.n_keeps, d.n), dtype=np.int64)
    for k in range(d.n_keeps):
        f = np.repeat(np.arange(1, 7), d.keep_counts[k])
        keep_faces[k, :len(f)] = f
    keep_code = faces_code(keep_faces)
    n = b * s * t
    nb = rules.n_boxes
    turn = np.tile(np.arange(t), b * s)
    keys = {"lineup": np.full(n, lineup), "game": np.repeat(np.asarray(games), s * t),
            "seat": np.tile(np.repeat(np.arange(s), t), b), "column": turn // nb + 1, "turn": turn % nb + 1}
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
    :class:`~harness.game.engine.Recording`, as record :class:`Turn` objects (columns and turns from 1;
    the stop keep is no keep of the record)."""
    d, nb = rules.dice, rules.n_boxes
    out = []
    names = rules.box_names
    for t in range(rec.rolls.shape[2]):
        rolls = [r for r in rec.rolls[game, seat, t].tolist() if r >= 0]
        keeps = rec.keeps[game, seat, t].tolist()[:len(rolls) - 1]
        numbers = {f.name: int(getattr(rec, f.recording)[game, seat, t]) for f in _RECORD_FIELDS}
        out.append(Turn(seat, t // nb + 1, t % nb + 1, tuple(_faces_of(d.roll_counts[r]) for r in rolls),
                        tuple(_faces_of(d.keep_counts[k]) for k in keeps), names[int(rec.boxes[game, seat, t])],
                        **_optional_none(numbers)))
    return out


def _optional_none(numbers: dict[str, int]) -> dict[str, int | None]:
    """A record states an optional field only when it is not 0."""
    return {f.name: (numbers[f.name] or None) if f.optional else numbers[f.name] for f in _RECORD_FIELDS}


def record_from_trace(trace: Sequence[Mapping[str, Any]], *, rules_name: str, rules: RuleSet,
                      seats: Sequence[str], game: GameId, seed: int | None = None,
                      totals: Sequence[int] | None = None) -> GameRecord:
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
            turns.append(Turn(int(e["seat"]), int(e["column"]) + 1, int(e["turn"]) + 1, tuple(rolls),
                              tuple(keeps), str(e["box"]), **_optional_none(numbers)))
    complete = len(turns) == len(seats) * rules.n_boxes * rules.columns
    return GameRecord(game, rules_name, tuple(Seat(spec=s) for s in seats), tuple(turns),
                      dict(rules.overrides), seed, tuple(int(x) for x in totals) if totals is not None and complete
                      else None, complete)


# ---------------------------------------------------------------------------------------------
# the kernel's arrays


KernelArrays = tuple[np.ndarray, np.ndarray, np.ndarray, list[Any], np.ndarray, list[str]]


def arrays_of_recording(rec: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An engine :class:`~harness.game.engine.Recording` (B games, S seats) as the kernel's rolls,
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


@lru_cache(maxsize=None)
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
    none): what :func:`harness.records.record.check_seat_games` checks."""
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


# ---------------------------------------------------------------------------------------------
# reading a run's records


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
        raise NoRecords(f"{run} was played without --record, so it has no game records "
                        f"(play it again with: yatzy-harness run ... --record)", run)
    seats_of = tuple(tuple(Seat(name=lab if lab != specs.get(lab) else None, spec=specs.get(lab)) for lab in lu)
                     for lu in lineups)
    return _Run(run, rules, _run_rules_name(manifest, rules), settings_changed(rules), seed, lineups, seats_of,
                tuple(chunks))


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
    order = (col["game"] == c.start + np.arange(b)[:, None, None]).all() \
        and (col["seat"] == np.arange(n_seats)[None, :, None]).all() \
        and ((col["column"].astype(np.int64) - 1) * nb + col["turn"] - 1 == np.arange(n_turns)).all()
    if not order:
        raise UserError(f"{path}: rows are not games {c.start}..{c.stop - 1} in (game, seat, turn) order")
    box_col = table.column("box").combine_chunks()
    n_rolls = sum(k.startswith("roll_") for k in col)
    rows = read_chunk(ChunkRef(c.lineup, c.start, c.stop, run.path / c.file, c.sha256), ["game", "total"])
    if rows.num_rows != b * n_seats or (numpy_of(rows.column("game")) != np.repeat(np.arange(c.start, c.stop),
                                                                                 n_seats)).any():
        raise UserError(f"{run.path / c.file}: rows are not games {c.start}..{c.stop - 1} x {n_seats} seats")
    missing = [f.name for f in TURN_FIELDS if f.name not in col and f.in_record and not f.optional]
    if missing:
        raise UserError(f"{path}: no column {missing[0]!r}; replay it with: {resume}")
    # a field the file does not have (written before the field was added) reads as 0
    numbers = {f.name: col[f.name] if f.name in col else np.zeros((b, n_seats, n_turns), np.dtype(f.arrow))
               for f in TURN_FIELDS}
    return _Columns(path, c.lineup, c.start, np.stack([col[f"roll_{j + 1}"] for j in range(n_rolls)], axis=-1),
                    np.stack([col[f"keep_{j + 1}"] for j in range(n_rolls - 1)], axis=-1) if n_rolls > 1
                    else np.zeros((b, n_seats, n_turns, 0), dtype=np.int64),
                    numpy_of(box_col.indices).reshape(b, n_seats, n_turns), box_col.dictionary.to_pylist(),
                    numbers, numpy_of(rows.column("total")).reshape(b, n_seats))


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
                int(keeps[s, t, x]) for x in range(keeps.shape[2])[cut] if not kok[s, t, x]]
            if bad:  # rolls first, then keeps, as they are read
                raise UserError(f"{cols.path}: game {g} seat {s}: {bad[0]} is not a dice code")
            numbers = {f.name: int(cols.numbers[f.name][i, s, t]) for f in _RECORD_FIELDS}
            turns.append(Turn(s, t // nb + 1, t % nb + 1, tuple(_faces_of(rc[s, t, x]) for x in hit.tolist()),
                              tuple(_faces_of(kc[s, t, x]) for x in range(keeps.shape[2])[cut]),
                              cols.box_names[cols.boxes[i, s, t]], **_optional_none(numbers)))
    return GameRecord(g, run.rules_name, run.seats_of[cols.lineup], tuple(turns), dict(run.settings), run.seed,
                      tuple(int(x) for x in cols.totals[i]))


def records_of_run(run_dir: str | os.PathLike[str], *, lineup: int | None = None,
                   games: Any = None) -> Iterator[tuple[int, GameRecord]]:
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
    chunks = run.chunks
    if lineup is not None and not 0 <= lineup < len(run.lineups):
        have = "lineup 0 only" if len(run.lineups) == 1 else f"lineups 0..{len(run.lineups) - 1}"
        raise UserError(f"lineup {lineup} is not in run {run.path}: it has {have}")
    wanted = None if games is None else sorted({int(g) for g in games})
    if wanted is not None:
        for li in range(len(run.lineups)) if lineup is None else [lineup]:
            have_games = {g for c in chunks if c.lineup == li for g in range(c.start, c.stop)}
            missing = [g for g in wanted if g not in have_games]
            if missing:
                n = max(have_games, default=-1) + 1
                span = f"games 0..{n - 1}" if len(have_games) == n else f"{len(have_games):,} games"
                raise UserError(f"game {missing[0]} is not in run {run.path}: lineup {li} has {span}")
    for c in chunks:
        if lineup is not None and c.lineup != lineup:
            continue
        pick = range(c.start, c.stop) if wanted is None else [g for g in wanted if c.start <= g < c.stop]
        if not pick:
            continue
        cols = _read_columns(run, c)
        for g in pick:
            yield c.lineup, _record_of(run, cols, g - c.start)


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
        sizes = np.diff(self.ptr[lo:hi + 1])
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
        chunk = next(c for c in self.run.chunks if c.lineup == lu and c.start <= g < c.stop)
        cols = self._cache.get("columns")
        if cols is None or (cols.lineup, cols.start) != (chunk.lineup, chunk.start):
            cols = self._cache["columns"] = _read_columns(self.run, chunk)
        return _record_of(self.run, cols, g - chunk.start)

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
        return RunRecords(self.run, self.game[keep], self.lineup[keep], ptr, self.rolls[rows], self.keeps[rows],
                          self.boxes[rows], {k: v[rows] for k, v in self.numbers.items()}, self.totals[rows],
                          self.regular[keep], {new_of[i]: r for i, r in self._records.items() if i in new_of})


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
    for c in run.chunks:
        cols = _read_columns(run, c)
        b, s, t = cols.boxes.shape
        r = cols.rolls.shape[3]
        counts, size, ok = decode_faces(cols.rolls, d.n)
        present = cols.rolls != 0
        n_rolls = present.sum(axis=-1)
        full = ok & (size == d.n)
        rolls = np.where(present & full, d.roll_index(counts), -1).astype(np.int16)
        regular = ((full | ~present).all(axis=-1) & (n_rolls >= 1)
                   & (present == (np.arange(r) < n_rolls[..., None])).all(axis=-1))
        kcounts, _, kok = decode_faces(cols.keeps, d.n)
        asked = np.arange(r - 1) < (n_rolls - 1)[..., None]
        keeps = np.full((b, s, t, r), -1, dtype=np.int16)
        keeps[..., :r - 1] = np.where(asked & kok, d.keep_index(kcounts), -1)
        regular &= (kok | ~asked).all(axis=-1)
        box_of = np.array([rules.box_names.index(x) if x in rules.box_names else -1 for x in cols.box_names] or [-1],
                          dtype=np.int8)
        boxes = box_of[cols.boxes]
        regular &= boxes >= 0
        games_ok = regular.all(axis=(1, 2))
        for i in np.flatnonzero(~games_ok).tolist():
            irregular[first + i] = _record_of(run, cols, i)  # the code that is no dice raises here, as before
        parts.append({"game": np.arange(c.start, c.stop, dtype=np.int64), "lineup": np.full(b, c.lineup),
                      "sizes": np.full(b, s), "rolls": rolls.reshape(b * s, t, r),
                      "keeps": keeps.reshape(b * s, t, r), "boxes": boxes.reshape(b * s, t),
                      "totals": cols.totals.reshape(b * s).astype(np.int64), "regular": games_ok,
                      **{f"n:{k}": v.reshape(b * s, t) for k, v in cols.numbers.items()}})
        first += b

    def cat(key: str) -> np.ndarray:
        return np.concatenate([p[key] for p in parts])

    ptr = np.zeros(first + 1, dtype=np.int64)
    np.cumsum(cat("sizes"), out=ptr[1:])
    return RunRecords(run, cat("game"), cat("lineup"), ptr, cat("rolls"), cat("keeps"), cat("boxes"),
                      {f.name: cat(f"n:{f.name}") for f in TURN_FIELDS}, cat("totals"), cat("regular"), irregular)


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


__all__ = ["FORMAT", "MAX_SEATS", "PARQUET_OPTIONS", "RECORD_KEYS", "TURN_FIELDS", "GameRecord", "NoRecords", "RecordError",
           "RunGames", "RunRecords", "Seat", "Turn", "TurnField", "arrays_of_recording", "arrays_of_records",
           "decode_faces", "faces_code", "json_problem", "numbers_of_records", "read_run", "record_from_trace", "record_rules", "records_of_run",
           "records_parquet", "run_rules", "turns_of_recording"]
