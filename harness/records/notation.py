"""The record notation: :class:`GameRecord` (``yatzy-record/1``), the typed object of JSON Lines
files and human logs, with its JSON form parsed and shape-checked.

A record holds one game: its rule set (a name with settings, or carried inline), its seats, and
for every turn the faces after each roll, the dice kept before each reroll, the box written and
the numbers of :data:`TURN_FIELDS` (the score, the extra bonus). This module reads and writes
that notation (:meth:`GameRecord.from_json`, :meth:`GameRecord.to_json`), checking keys and types
and naming the game, seat and turn of what is wrong (:class:`RecordError`); loading the rule set a
record names is :func:`record_rules`. The conversions from and to the other forms of a game are
:mod:`harness.records.convert`'s; checking the play against the rules is
:mod:`harness.records.validate`'s. Everything here is also importable from
:mod:`harness.records.codec` and :mod:`harness.records.record`.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from harness.util.errors import UserError
from harness.game.rules import INLINE_KEYS, AllowedRules, RuleSet, load_rules
from harness.game.tournament import MAX_SEATS

#: The ``format`` field of every record.
FORMAT = "yatzy-record/1"

GameId = str | int | float


class RecordError(UserError):
    """One game is not a valid record; the message is one line naming the game, seat and turn."""


def json_problem(text: str, exc: json.JSONDecodeError) -> str:
    """Why ``text`` (a record's line) is not JSON, in one line: "cut off" when the reader ran out of
    text inside the record (a log truncated, or read while still being written: the reader's own
    "Expecting ',' delimiter" would send one looking for a missing comma), else the reader's reason."""
    end = len(text.rstrip(" \t\r\n"))
    rest = text[exc.pos : end]
    short = end > 0 and (
        exc.pos >= end  # it wanted more: a value, a delimiter, a key, a closing bracket
        or exc.msg.startswith("Unterminated string")  # a string runs to the end (no newline can be in one)
        or (exc.msg.startswith("Invalid \\uXXXX escape") and len(rest) < 6)
        # the start of a literal or a number, cut: tr, nul, -, 1., 2e
        or (
            exc.msg in ("Expecting value", "Expecting ',' delimiter")
            and (any(w.startswith(rest) for w in ("true", "false", "null")) or re.fullmatch(r"[-+.\deE]+", rest))
        )
    )
    if short:
        return f"not valid JSON: cut off after column {end}, in the middle of the record"
    return f"not valid JSON ({exc.msg} at column {exc.colno})"


# ---------------------------------------------------------------------------------------------
# the fields of a turn


@dataclass(frozen=True)
class TurnField:
    """A per-turn number of a record, in every form.

    ``name``: the :class:`Turn` attribute, the JSON key and the Parquet column; ``arrow``: the
    Parquet type; ``recording``: the :class:`harness.game.loop.Recording` array (B, S, T) it comes
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
        d: dict[str, Any] = {
            "seat": self.seat,
            "column": self.column,
            "turn": self.turn,
            "rolls": [list(r) for r in self.rolls],
            "keeps": [list(k) for k in self.keeps],
            "box": self.box,
        }
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
    :func:`harness.records.validate.validate_record`.
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
        rules = (
            dict(self.rules_spec)
            if self.rules_spec is not None
            else {"name": self.rules, "settings": dict(self.settings)}
        )
        d: dict[str, Any] = {
            "format": FORMAT,
            "game": self.game,
            "rules": rules,
            "seats": [s.to_dict() for s in self.seats],
        }
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
        if (
            isinstance(game, bool)
            or not isinstance(game, (str, int, float))
            or (isinstance(game, float) and not math.isfinite(game))
        ):
            raise RecordError(f"'game' must be a string or a number (the game's id), got {_show(game)}")
        at = f"game {game}"
        if raw.get("format") != FORMAT:
            raise RecordError(f"{at}: format must be {FORMAT!r}, got {_show(raw.get('format'))}")
        unknown = [k for k in raw if k not in _TOP_KEYS]
        if unknown:
            raise RecordError(f"{at}: unknown key {unknown[0]!r} (keys: {', '.join(_TOP_KEYS)})")
        rules = raw.get("rules")
        if not isinstance(rules, dict) or not isinstance(rules.get("name"), str) or not rules["name"]:
            raise RecordError(
                f'{at}: rules must be {{"name": NAME, "settings": {{...}}}} or a rule set '
                f"(the keys of a rule file, name among them), got {_show(rules)}"
            )
        spec = None
        if set(rules) - {"name", "settings"}:  # a rule set carried inline: the keys of a rule file
            unknown = sorted(set(rules) - INLINE_KEYS)
            if unknown:
                raise RecordError(
                    f"{at}: rules: unknown key {_show(unknown[0])} (keys: name, settings; or, for a "
                    f"rule set carried inline, a rule file's: {', '.join(sorted(INLINE_KEYS))})"
                )
            spec, settings = rules, {}
        else:
            settings = rules.get("settings", {})
            if not isinstance(settings, dict):
                raise RecordError(f"{at}: rules.settings must be an object of setting overrides, got {_show(settings)}")
        seats = raw.get("seats")
        if not isinstance(seats, list) or not 1 <= len(seats) <= MAX_SEATS:
            raise RecordError(f"{at}: seats must be a list of 1..{MAX_SEATS} seats, got {_show(seats)}")
        parsed_seats = []
        for i, s in enumerate(seats):
            ok = (
                isinstance(s, dict)
                and set(s) <= {"name", "spec"}
                and (s.get("name") or s.get("spec"))
                and all(isinstance(v, str) for v in s.values())
            )
            if not ok:
                raise RecordError(
                    f'{at}: seat {i} must be {{"name": ...}}, {{"spec": ...}} or both (strings), got {_show(s)}'
                )
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
        return cls(
            game,
            rules["name"],
            tuple(parsed_seats),
            tuple(Turn.from_dict(t, f"{at}, turns[{i}]", parsed_seats) for i, t in enumerate(turns)),
            settings,
            seed,
            totals,
            complete,
            meta,
            spec,
        )

    def load_rules(self, allowed: AllowedRules | None = None) -> RuleSet:
        """The record's rule set with its settings (the rules' own checks refuse a setting that
        does not apply); :class:`RecordError` naming the game. ``allowed``: what a record read
        from a file may load (:class:`harness.game.rulefiles.AllowedRules`); None trusts the name, for a
        record made in Python."""
        return record_rules(self.rules, self.settings, self.game, spec=self.rules_spec, allowed=allowed)


def record_rules(
    name: str,
    settings: Mapping[str, Any],
    game: GameId,
    cache: dict[str, RuleSet] | None = None,
    *,
    spec: Mapping[str, Any] | None = None,
    allowed: AllowedRules | None = None,
) -> RuleSet:
    """The rule set a record names (``name`` with ``settings``) or carries (``spec``);
    :class:`RecordError` naming ``game``. With ``allowed`` (a record read from a file: untrusted),
    a name loads a built-in rule set or a file in an allowed directory only
    (:meth:`harness.game.rulefiles.AllowedRules.path_of`); without, any rule set or file by that name."""
    key = json.dumps([name, dict(settings), spec], sort_keys=True, default=str)
    if cache is not None and key in cache:
        return cache[key]
    try:
        # an override is named as the record gives it: rules.settings.KEY (not the flag --set)
        if spec is not None or allowed is not None:
            rules = (allowed or AllowedRules()).load(
                name, dict(settings), spec=spec, where="inline", origin="rules.settings"
            )
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
    """``json.dumps(v)`` as its first ``budget`` characters go, built from no more of ``v``
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


def _faces(faces: Sequence[int]) -> str:
    """Faces as a message or the text form shows them: ``6 6 2``, or ``nothing``."""
    return " ".join(map(str, faces)) if faces else "nothing"


__all__ = [
    "FORMAT",
    "MAX_NAME",
    "MAX_SEATS",
    "NUMBER_LIMIT",
    "TURN_FIELDS",
    "GameId",
    "GameRecord",
    "RecordError",
    "Seat",
    "Turn",
    "TurnField",
    "json_problem",
    "record_rules",
]
