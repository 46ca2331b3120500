"""The engine protocol's messages: the rule set as data, columnar decision batches, answers checked.

Every message is one JSON object (one line over stdio, one body over HTTP) with a ``type``. A
decision request carries a *batch* of positions as columns (arrays with one entry per position),
so one round trip serves many games; ``docs/engines.md`` is the reference and
``harness/play/protocol/schema.json`` the schema. Here: building requests from the engine's
:class:`~harness.game.strategy.TurnView` (the hot path, numpy to JSON bytes through orjson), reading an
engine's answer into keep or box indices with every entry checked against the harness's own rules,
and the reverse (a request read back into positions) for the serving side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from itertools import permutations, repeat
from importlib import resources
from typing import Any, Mapping

import numpy as np
import orjson

from harness.util.errors import UserError
from harness.game.rng import game_keys
from harness.game.rules import RuleSet
from harness.game.scoring import context, score_options_batch
from harness.game.strategy import CHOOSE_STEP, TurnView

#: What can go wrong with one decision (the referee's fault kinds): an answer after the budget,
#: an answer that is not a legal option (or no readable answer at all), an engine that died,
#: an engine that stopped answering (killed and restarted).
FAULT_KINDS = ("time", "illegal", "crash", "stall")

#: Largest batch one request carries (the serving side refuses more; the referee never sends more).
MAX_BATCH = 100_000

_OPT = orjson.OPT_SERIALIZE_NUMPY


def dumps(obj: Any) -> bytes:
    """One message as compact JSON bytes (numpy arrays as nested lists), without the newline."""
    return orjson.dumps(obj, option=_OPT)


def loads(data: bytes | str) -> Any:
    """A message read from JSON (raises ``orjson.JSONDecodeError``, a ``ValueError``)."""
    return orjson.loads(data)


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The protocol's JSON Schema (``harness/play/protocol/schema.json``, package data)."""
    return json.loads(resources.files("harness.play.protocol").joinpath("schema.json").read_text())


def rules_ref(rules: RuleSet) -> dict[str, Any]:
    """How a request names its rule set: the name and the settings changed from the file's own."""
    return {"name": rules.name, "settings": dict(rules.overrides.items())}


def describe_rules(rules: RuleSet) -> dict[str, Any]:
    """The rule set as data for an engine (``newgame``'s ``rules``): every box with its kind and
    parameters, the settings, the context rules (key box, joker, extra bonus, forced order) and the
    score table of every roll in every box, so an engine need not implement the scoring kinds.

    ``rolls`` lists every roll as a string of faces in ascending order, in the harness's order;
    ``scores[r][b]`` is roll r's context-free score in box b (``scores_first`` on the turn's first
    roll, only when it differs: servida). The context rules are applied on top as documented.
    """
    key = rules.boxes[rules.key_box].name if rules.key_box >= 0 else None
    out: dict[str, Any] = {
        "name": rules.name,
        "settings": dict(rules.settings),
        "overrides": dict(rules.overrides),
        "dice": rules.n_dice,
        "rolls_per_turn": rules.rolls_per_turn,
        "columns": rules.columns,
        "add_columns": rules.add_columns,
        "forced": rules.forced,
        "saved_rolls": rules.saved_rolls,
        "bonus": {"threshold": int(rules.threshold), "value": int(rules.bonus_value)},
        "key_box": key,
        "joker": bool(rules.joker),
        "extra_yatzy_bonus": int(rules.extra_yatzy_bonus),
        "boxes": [
            {
                "name": b.name,
                "kind": b.kind,
                "section": "upper" if b.is_upper else "lower",
                "face": int(rules.upper_face[i]) or None,
                "params": dict(b.params),
                "requires_key": bool(b.requires_key),
                "joker_value": b.joker_value,
            }
            for i, b in enumerate(rules.boxes)
        ],
        "rolls": list(codec(rules).roll_text),
        "scores": rules.table,
    }
    if rules.has_servida:
        out["scores_first"] = rules.table_first
    return out


@dataclass(frozen=True, eq=False)
class Codec:
    """A rule set's text forms: rolls and keeps as strings of faces, and their indices back."""

    rules: RuleSet

    @cached_property
    def roll_text(self) -> np.ndarray:
        """(R,) object: each roll's faces in ascending order as a string (``"11346"``)."""
        return np.array(["".join(map(str, f)) for f in self.rules.dice.roll_faces.tolist()], dtype=object)

    @cached_property
    def keep_index(self) -> dict[str, int]:
        """Every keep's faces in ascending order (``""`` for none) -> its keep index."""
        d = self.rules.dice
        return {
            "".join(str(f + 1) * int(c) for f, c in enumerate(row)): k for k, row in enumerate(d.keep_counts.tolist())
        }

    @cached_property
    def any_order(self) -> dict[str, int]:
        """:attr:`keep_index` for the faces of every keep in every order (6**0 + ... + 6**n strings),
        so an answer's keeps are looked up without sorting them."""
        out: dict[str, int] = {}
        for text, k in self.keep_index.items():
            for perm in set(permutations(text)):
                out["".join(perm)] = k
        return out

    @cached_property
    def keep_text(self) -> np.ndarray:
        out = np.empty(self.rules.dice.n_keeps, dtype=object)
        for text, k in self.keep_index.items():
            out[k] = text
        return out

    @cached_property
    def box_index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.rules.box_names)}

    @cached_property
    def roll_any_order(self) -> dict[str, int]:
        """Every roll's faces in every order (6**n strings: 7,776 for five dice) -> its roll index,
        so a batch's dice are read with one look-up each (a 10,000-position batch: about 2 ms of
        the interpreter instead of 70, time a server's cheap requests wait for)."""
        d = self.rules.dice
        n = self.rules.n_dice
        rolls = [t for t in self.keep_index if len(t) == n]
        index = d.roll_index(d.keep_counts[[self.keep_index[t] for t in rolls]]).tolist()
        return {"".join(p): int(r) for t, r in zip(rolls, index) for p in set(permutations(t))}

    def roll_of(self, text: str) -> int:
        """The roll index of a string of faces in any order; -1 when it is not a roll of these dice."""
        return self.roll_any_order.get(text, -1) if isinstance(text, str) else -1


@lru_cache(maxsize=64)
def codec(rules: RuleSet) -> Codec:
    return Codec(rules)


def sheet_columns(view: TurnView) -> np.ndarray:
    """(B, NB) int16 the scores written in the view's column, -1 where a box is open."""
    nb = view.rules.n_boxes
    filled = ((view.filled[:, None] >> np.arange(nb, dtype=np.int64)) & 1).astype(bool)
    return np.where(filled, view.sheet, np.int16(-1)).astype(np.int16)


_CONTEXTS: dict[int, tuple[RuleSet, Any]] = {}


def scoring_context(rules: RuleSet) -> Any:
    """The rule set's scoring context (:func:`harness.game.scoring.context`), made once per rule set object."""
    got = _CONTEXTS.get(id(rules))
    if got is None or got[0] is not rules:
        got = _CONTEXTS[id(rules)] = (rules, context(rules))
    return got[1]


def view_from(pos: Positions, first: np.ndarray) -> TurnView:
    """The engine's :class:`TurnView` of positions given as the protocol gives them (the inverse of
    :func:`sheet_columns`): ``pos`` holds positions of one decision (one seat, column, turn and step:
    :meth:`Positions.take` of a group), ``first`` (n,) bool whether each roll is its turn's first. A
    box choice's options come from the rules. Empty sheets' boxes, upper subtotal and key-box flag as
    the engine keeps them."""
    rules = pos.rules
    nb = rules.n_boxes
    column, turn = int(pos.column[0]) - 1, int(pos.turn[0]) - 1
    step = internal_step(pos.kind, int(pos.step[0]))
    sheets = pos.sheet
    filled_bits = sheets >= 0
    filled = (filled_bits.astype(np.int64) << np.arange(nb, dtype=np.int64)).sum(axis=1)
    sheet = np.where(filled_bits, sheets, 0).astype(np.int16)
    upper = np.where(rules.upper_face > 0, sheet, 0).sum(axis=1).astype(np.int16)
    flag = sheet[:, rules.key_box] > 0 if rules.key_box >= 0 else np.zeros(len(sheet), dtype=bool)
    roll = np.asarray(pos.roll, dtype=np.int16)
    first = np.ascontiguousarray(first, dtype=bool)
    rolls_left = pos.rolls_left if pos.kind == "keep" else np.zeros(len(pos), dtype=np.int64)
    common = dict(
        rules=rules,
        seat=int(pos.seat[0]),
        turn=column * nb + turn,
        column=column,
        step=step,
        games=pos.game,
        keys=pos.keys,
        roll=roll,
        rolls_left=np.asarray(rolls_left, dtype=np.int16),
        first=first,
        filled=filled,
        upper=upper,
        flag=flag,
        sheet=sheet,
        totals=np.asarray(pos.totals, dtype=np.int32),
        saved=np.zeros(len(sheet), dtype=np.int16),
    )
    if step != CHOOSE_STEP:
        return TurnView(**common)
    scores, allowed, extra = score_options_batch(scoring_context(rules), roll, first, flag, filled)
    return TurnView(options=scores, allowed=allowed, extra=extra, **common)


def protocol_turn(view: TurnView) -> tuple[int, int, int]:
    """(column, turn, step) of a view as the protocol numbers them: column and turn from 1 (turn
    within the column), step the roll a keep answers (1 after the first roll), 0 for the box."""
    nb = view.rules.n_boxes
    column = view.turn // nb
    step = 0 if view.step == CHOOSE_STEP else view.step + 1
    return column + 1, view.turn - column * nb + 1, step


def internal_step(kind: str, step: int) -> int:
    """The engine's rng step of a protocol step (keeps: step - 1; the box: :data:`CHOOSE_STEP`)."""
    return CHOOSE_STEP if kind == "box" else step - 1


def key_text(keys: np.ndarray) -> list[str]:
    """Game keys (B,) uint64 as 16 hex digits each (JSON numbers past 2**53 are not exact everywhere)."""
    h = np.ascontiguousarray(keys, dtype=">u8").tobytes().hex()
    return [h[i : i + 16] for i in range(0, len(h), 16)]


def key_values(text: Any, n: int) -> np.ndarray:
    """(n,) uint64 game keys from their hex form (a :class:`UserError` naming what is wrong)."""
    if not isinstance(text, list) or len(text) != n or not all(isinstance(x, str) and len(x) == 16 for x in text):
        raise UserError(f"'key' must be a list of {n} game keys of 16 hex digits")
    try:
        return np.frombuffer(bytes.fromhex("".join(text)), dtype=">u8").astype(np.uint64)
    except ValueError:
        raise UserError("'key' must hold hex digits only") from None


def request(
    rid: int, view: TurnView, kind: str, *, budget_ms: float, at: np.ndarray | None = None, table: bool = False
) -> bytes:
    """The ``decide`` message for the positions ``at`` (indices into the view; all when None).

    Columns, one entry per position: ``game`` (the game's index), ``key`` (its random key: 16 hex
    digits, what the harness's own bots seed their choices from), ``seat``, ``column``, ``turn``, ``step``, ``dice``
    (a string of faces), ``rolls_left``, ``sheet`` (scores of the column, -1 open), ``totals``
    (every seat's running total); for a box choice ``options`` (each box's score for these dice,
    -1 where the box may not be chosen), ``extra`` (bonus points earned whatever the box) and
    ``first`` (the dice were made on the turn's first roll: servida); with
    ``table``, every seat's ``seats_filled`` (bit masks) and ``seats_upper`` (upper subtotals).
    """
    idx = slice(None) if at is None else at
    games = view.games[idx]
    n = len(games)
    column, turn, step = protocol_turn(view)
    msg: dict[str, Any] = {
        "type": "decide",
        "id": rid,
        "kind": kind,
        "rules": rules_ref(view.rules),
        "budget_ms": round(float(budget_ms), 3),
        "n": n,
        "game": games,
        "key": key_text(view.keys[idx]),
        "seat": np.full(n, view.seat, np.int16),
        "column": np.full(n, column, np.int16),
        "turn": np.full(n, turn, np.int16),
        "step": np.full(n, step, np.int16),
        "dice": codec(view.rules).roll_text[view.roll[idx]].tolist(),
        "rolls_left": np.ascontiguousarray(view.rolls_left[idx]),
        "sheet": np.ascontiguousarray(sheet_columns(view)[idx]),
        "totals": np.ascontiguousarray(view.totals[idx]),
    }
    if kind == "box":
        allowed = view.allowed_matrix()[idx]
        msg["options"] = np.where(allowed, view.options[idx], np.int16(-1)).astype(np.int16)
        msg["extra"] = np.ascontiguousarray(view.extra[idx])
        msg["first"] = np.ascontiguousarray(view.first[idx])
    if table and view.seats is not None:
        msg["seats_filled"] = np.ascontiguousarray(view.seats[0][idx])
        msg["seats_upper"] = np.ascontiguousarray(view.seats[1][idx])
    return dumps(msg)


class Unreadable(ValueError):
    """An engine's reply that is not a readable answer to the request (names what is wrong)."""


@dataclass(frozen=True)
class Answer:
    """An engine's answer read against its request: ``choice`` (n,) int64 keep or box indices,
    -1 where the entry is not a legal option; ``problem`` what is wrong with the first such entry."""

    choice: np.ndarray
    problem: str = ""

    @property
    def illegal(self) -> np.ndarray:
        return self.choice < 0


def answer_id(obj: Any) -> Any:
    """The ``id`` a reply answers (None when it has none)."""
    return obj.get("id") if isinstance(obj, dict) else None


def read_answer(obj: Any, rid: int, view: TurnView, kind: str, at: np.ndarray | None = None) -> Answer:
    """Check a decoded reply against request ``rid`` for positions ``at`` of ``view``.

    Raises :class:`Unreadable` when the reply as a whole is not an answer to it (wrong type or id,
    an engine's ``error``, games not echoed in order, wrong length); otherwise every entry is
    checked on its own: a keep must be a sub-multiset of the dice, a box one the rules allow.
    """
    if not isinstance(obj, dict):
        raise Unreadable(f"expected a JSON object, got {type(obj).__name__}")
    kind_got = obj.get("type")
    if kind_got == "error":
        raise Unreadable(f"the engine answered an error: {str(obj.get('message', ''))[:200]}")
    if kind_got != "answer":
        raise Unreadable(f"expected an answer, got type {str(kind_got)[:40]!r}")
    if obj.get("id") != rid:
        raise Unreadable(f"answer to request {str(obj.get('id'))[:40]}, expected {rid}")
    idx = slice(None) if at is None else at
    games = view.games[idx]
    n = len(games)
    echo = obj.get("game")
    if not isinstance(echo, list) or len(echo) != n:
        raise Unreadable(f"'game' must echo the request's {n} game keys in order")
    try:
        same = np.array_equal(np.asarray(echo, dtype=np.int64), games)
    except (TypeError, ValueError, OverflowError):
        same = False
    if not same:
        raise Unreadable("'game' does not echo the request's game keys in order (an answer for other games)")
    got = obj.get(kind)
    if not isinstance(got, list) or len(got) != n:
        raise Unreadable(f"'{kind}' must be a list of {n} entries")
    rules = view.rules
    if kind == "keep":
        lut = codec(rules).any_order
        try:  # at C speed: every entry a string (a list or a number in there is unhashable or unknown)
            choice = np.fromiter(map(lut.get, got, repeat(-1)), dtype=np.int64, count=n)
        except TypeError:
            choice = np.fromiter((lut.get(x, -1) if isinstance(x, str) else -1 for x in got), dtype=np.int64, count=n)
        ok = choice >= 0
        roll = view.roll[idx]
        ok[ok] = rules.dice.is_subset(choice[ok], roll[ok])
        what = "a keep must be a string of faces among the dice rolled"
    else:
        names = codec(rules).box_index
        try:  # box indices, at C speed (a bool, float or name in there falls back to one entry at a time)
            arr = np.array(got)
            if arr.dtype.kind != "i":
                raise TypeError
            choice = arr.astype(np.int64)
        except (TypeError, ValueError, OverflowError):
            choice = np.fromiter(
                (x if type(x) is int and -1 <= x < 64 else names.get(x, -1) if isinstance(x, str) else -1 for x in got),
                dtype=np.int64,
                count=n,
            )
        ok = (choice >= 0) & (choice < rules.n_boxes)
        allowed = view.allowed[idx]
        ok[ok] = ((allowed[ok] >> choice[ok]) & 1).astype(bool)
        what = "a box must be one the rules allow now (its option is not -1)"
    if ok.all():
        return Answer(choice)
    i = int(np.flatnonzero(~ok)[0])
    choice = np.where(ok, choice, -1)
    return Answer(choice, f"game {int(games[i])}: {str(got[i])[:40]!r} is not a legal {kind}: {what}")


# ---------------------------------------------------------------------------------------------
# the serving side: a request read back into positions


@dataclass(frozen=True)
class Positions:
    """A ``decide`` request read and checked (n positions of one rule set): the columns as arrays.

    kind "keep" or "box"; game (n,) int64; keys (n,) uint64; seat, column, turn, step, rolls_left
    (n,) int64; roll (n,) int64 roll indices; sheet (n, NB) int16 (-1 open); totals (n, S) int64.
    """

    rules: RuleSet
    kind: str
    game: np.ndarray
    keys: np.ndarray
    seat: np.ndarray
    column: np.ndarray
    turn: np.ndarray
    step: np.ndarray
    roll: np.ndarray
    rolls_left: np.ndarray
    sheet: np.ndarray
    totals: np.ndarray

    def __len__(self) -> int:
        return len(self.game)

    def take(self, idx: np.ndarray) -> Positions:
        """The positions at ``idx``."""
        return replace(self, **{f: getattr(self, f)[idx] for f in _POSITION_ARRAYS})


_POSITION_ARRAYS = ("game", "keys", "seat", "column", "turn", "step", "roll", "rolls_left", "sheet", "totals")


def _column(msg: Mapping[str, Any], key: str, n: int, lo: int, hi: int, width: int | None = None) -> np.ndarray:
    raw = msg.get(key)
    shape = (n,) if width is None else (n, width)
    try:
        arr = np.asarray(raw, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise UserError(
            f"'{key}' must be {'a list' if width is None else 'a list of lists'} of whole numbers"
        ) from None
    if arr.shape != shape and not (width is None and arr.ndim == 0):
        raise UserError(f"'{key}' must have shape {list(shape)}, got {list(arr.shape)}")
    if arr.ndim == 0:
        arr = np.full(n, int(arr), dtype=np.int64)
    if arr.size and (arr.min() < lo or arr.max() > hi):
        raise UserError(f"'{key}' must hold values {lo}..{hi}")
    return arr


def read_positions(msg: Mapping[str, Any], rules: RuleSet, *, max_batch: int = MAX_BATCH) -> Positions:
    """A ``decide`` request's positions, every column checked against ``rules`` (a :class:`UserError`
    naming the first bad field). ``seat``, ``column``, ``turn``, ``step`` and ``rolls_left`` may be
    one number for the whole batch. Sheets must be consistent: a box a position fills is not open."""
    kind = msg.get("kind")
    if kind not in ("keep", "box"):
        raise UserError('\'kind\' must be "keep" or "box"')
    dice = msg.get("dice")
    if not isinstance(dice, list) or not dice:
        raise UserError("'dice' must be a non-empty list of strings of faces")
    n = len(dice)
    if n > max_batch:
        raise UserError(f"a batch holds at most {max_batch:,} positions, got {n:,}")
    c = codec(rules)
    roll = np.fromiter((c.roll_of(x) for x in dice), dtype=np.int64, count=n)
    if (roll < 0).any():
        i = int(np.flatnonzero(roll < 0)[0])
        raise UserError(f"'dice'[{i}] must be {rules.n_dice} faces 1..6, got {str(dice[i])[:20]!r}")
    nb = rules.n_boxes
    game = _column(msg, "game", n, 0, 2**53)
    if "key" in msg:
        keys = key_values(msg["key"], n)
    else:  # a caller that has no keys names the seed its game indices are keyed by
        seed = msg.get("seed", 0)
        if type(seed) is not int or not 0 <= seed < 2**64:
            raise UserError("'seed' must be a whole number 0..2**64-1 (or give 'key')")
        keys = game_keys(seed, game)
    seat = _column(msg, "seat", n, 0, 7)
    turn = _column(msg, "turn", n, 1, nb)
    column = _column(msg, "column", n, 1, rules.columns) if "column" in msg else np.ones(n, np.int64)
    rr = rules.rolls_per_turn - 1
    most = rr * nb if rules.saved_rolls else rr
    if kind == "keep":
        step = _column(msg, "step", n, 1, most)
        rolls_left = _column(msg, "rolls_left", n, 1, most)
    else:
        step = _column(msg, "step", n, 0, 0) if "step" in msg else np.zeros(n, np.int64)
        rolls_left = _column(msg, "rolls_left", n, 0, 0) if "rolls_left" in msg else np.zeros(n, np.int64)
    sheet = _column(msg, "sheet", n, -1, 1000, nb)
    open_boxes = (sheet < 0).sum(axis=1)
    if ((nb - open_boxes) != turn - 1).any():
        i = int(np.flatnonzero((nb - open_boxes) != turn - 1)[0])
        raise UserError(
            f"position {i}: turn {int(turn[i])} of a column needs {int(turn[i]) - 1} filled boxes, "
            f"its sheet has {int(nb - open_boxes[i])}"
        )
    totals = msg.get("totals")
    if totals is None:
        totals_arr = np.zeros((n, int(seat.max()) + 1), np.int64)
    else:
        width = len(totals[0]) if isinstance(totals, list) and totals and isinstance(totals[0], list) else 0
        if not 1 <= width <= 8:
            raise UserError("'totals' must be a list of lists of every seat's running total")
        totals_arr = _column(msg, "totals", n, 0, 100_000, width)
        if (seat >= width).any():
            raise UserError("'seat' must index a seat of 'totals'")
    return Positions(
        rules, kind, game, keys, seat, column, turn, step, roll, rolls_left, sheet.astype(np.int16), totals_arr
    )
