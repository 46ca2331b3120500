"""The rule set as data: :class:`RuleSet` (boxes from a small vocabulary, :data:`KINDS`, the
effective settings) and its compiled score tables.

:func:`compile_rules` validates a parsed rule-set spec (a rule file's keys, or a rule set a record
carries inline), applies setting overrides (:mod:`harness.game.rulesettings`) and compiles the
score table ``(rolls, boxes)`` once; play and solving are table look-ups from then on. Reading rule
files is :mod:`harness.game.rulefiles`'; all of it is importable from :mod:`harness.game.rules`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property, cache
from itertools import product
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from harness.game.dice import FACES, Dice, dice
from harness.game.rulesettings import (
    DEFAULT_SETTINGS,
    SETTINGS,
    Origin,
    _check_settings,
    _origin,
    _parse_value,
    _setting_at,
    _shown,
    check_toml_settings,
    parse_overrides,
)
from harness.util.errors import UserError

#: Box kinds and the parameters each accepts (besides name/kind/servida/requires_key/joker_value).
KINDS: dict[str, dict[str, Any]] = {
    "upper": {"face": None},
    "n_of_a_kind": {"n": None, "score": "matching", "value": 0},
    "pairs": {"count": 1, "score": "matching", "value": 0},
    "full_house": {"value": 25, "five_alike": False},  # sum or flat: setting full_house_scoring
    "castle": {"score": "sum", "value": 0},
    "tower": {"score": "sum", "value": 0},
    "groups": {"sizes": None, "score": "matching", "value": 0},
    "straight": {"faces": None, "score": "flat", "value": 0},
    "run": {"length": None, "score": "flat", "value": 0},
    "chance": {},
    "yatzy": {"value": 50},
}
_COMMON = {"name", "kind", "label", "servida", "requires_key", "joker_value"}
_SCORE_MODES = ("matching", "sum", "flat")
_PAIR_KINDS = {"pairs"}


@dataclass(frozen=True)
class Box:
    """One box of the sheet: its name, kind and the kind's parameters (as given in TOML)."""

    name: str
    kind: str
    label: str
    params: tuple[tuple[str, Any], ...]
    servida: int | None = None
    requires_key: bool = False
    joker_value: int | None = None

    def param(self, key: str) -> Any:
        return dict(self.params)[key]

    @property
    def is_upper(self) -> bool:
        return self.kind == "upper"


@dataclass(frozen=True, eq=False)
class RuleSet:
    """A compiled rule set: boxes, effective settings and the score tables.

    Arrays (R rolls, NB boxes):
        table: (R, NB) int16 score of each roll in each box (context-free).
        table_first: (R, NB) int16 the same on the turn's first roll (servida); equal to
            ``table`` when the rule set has no servida.
        upper_face: (NB,) int8 face of each upper box, 0 for lower boxes.
        requires_key: (NB,) bool box scores only once the key box holds a non-zero score.
        joker_value: (NB,) int16 score under the forced joker, -1 = the table's score.
        yatzy_roll: (R,) bool all dice alike.
    """

    name: str
    title: str
    description: str
    source: str
    n_dice: int
    rolls_per_turn: int
    settings: Mapping[str, Any]
    boxes: tuple[Box, ...]
    threshold: int
    bonus_value: int
    key_box: int
    joker: bool
    extra_yatzy_bonus: int
    table: np.ndarray
    table_first: np.ndarray
    upper_face: np.ndarray
    requires_key: np.ndarray
    joker_value: np.ndarray
    yatzy_roll: np.ndarray
    spec: Mapping[str, Any] = field(repr=False)
    #: The ``--set`` overrides applied on top of the file's own settings (parsed values).
    overrides: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dice(self) -> Dice:
        return dice(self.n_dice)

    @property
    def n_boxes(self) -> int:
        return len(self.boxes)

    @property
    def box_names(self) -> list[str]:
        return [b.name for b in self.boxes]

    @property
    def forced(self) -> bool:
        return bool(self.settings["forced"])

    @property
    def columns(self) -> int:
        return int(self.settings["columns"])

    @property
    def add_columns(self) -> bool:
        return bool(self.settings["add_columns"])

    @property
    def saved_rolls(self) -> bool:
        return bool(self.settings["saved_rolls"])

    @cached_property
    def has_servida(self) -> bool:
        """The first roll scores otherwise than the later ones (a comparison of the two tables, made once)."""
        return not np.array_equal(self.table, self.table_first)

    @property
    def max_upper(self) -> int:
        return 21 * self.n_dice

    @property
    def upper_mask(self) -> int:
        return sum(1 << i for i, b in enumerate(self.boxes) if b.is_upper)

    def box_index(self, name: str) -> int:
        for i, b in enumerate(self.boxes):
            if b.name == name:
                return i
        raise UserError(f"rule set {self.name!r} has no box {name!r} (boxes: {', '.join(self.box_names)})")

    def box_max(self) -> np.ndarray:
        """(NB,) int the highest score each box can take (table, servida and joker included)."""
        return np.maximum(np.maximum(self.table.max(axis=0), self.table_first.max(axis=0)), self.joker_value)

    def perfect_score(self) -> int:
        """Highest possible total of one column without extra yatzy bonuses."""
        m = self.box_max().astype(int)
        upper = int(m[self.upper_face > 0].sum())
        bonus = self.bonus_value if upper >= self.threshold else 0
        return int(m.sum()) + bonus

    def max_total(self) -> int:
        """An upper bound of a player's total: every column perfect and every box but one scored
        with an extra yatzy bonus (scores are never negative, so 0 is the lower bound)."""
        return self.columns * (self.perfect_score() + max(self.n_boxes - 1, 0) * int(self.extra_yatzy_bonus))

    def with_settings(self, overrides: Mapping[str, Any] | Iterable[str]) -> RuleSet:
        """A new rule set from the same spec with settings changed (a dict or ``KEY=VALUE`` strings);
        the overrides this rule set already had are kept unless changed again."""
        return compile_rules(self.spec, {**self.overrides, **parse_overrides(overrides)}, source=self.source)

    @property
    def digest(self) -> str:
        """sha256 of everything that decides play and scoring (not of the file name)."""
        h = hashlib.sha256()
        h.update(
            json.dumps(
                {
                    "n_dice": self.n_dice,
                    "rolls": self.rolls_per_turn,
                    "threshold": self.threshold,
                    "bonus": self.bonus_value,
                    "key_box": self.key_box,
                    "joker": self.joker,
                    "extra": self.extra_yatzy_bonus,
                    "forced": self.forced,
                    "saved_rolls": self.saved_rolls,
                    "boxes": self.n_boxes,
                },
                sort_keys=True,
            ).encode()
        )
        for a in (self.table, self.table_first, self.upper_face, self.requires_key, self.joker_value):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()

    def summary(self) -> str:
        """One line of the facts the effective settings decide: dice, boxes, bonus, order, columns."""
        parts = [
            f"{self.n_dice} dice",
            f"{self.n_boxes} boxes",
            f"upper bonus {self.bonus_value} at {self.threshold}" if self.bonus_value else "no upper bonus",
        ]
        kinds = {b.kind for b in self.boxes}
        if "full_house" in kinds:
            flat = self.settings["full_house_scoring"] == "flat"
            parts.append("full house flat" if flat else "full house scores its dice")
        if "yatzy" in kinds and self.settings["yatzy_scoring"] == "flat_plus_sum":
            parts.append("yatzy adds the dice")
        if self.forced:
            parts.append("filled top to bottom")
        if self.columns > 1:
            parts.append(f"{self.columns} columns, {'totals added' if self.add_columns else 'best column counts'}")
        if self.saved_rolls:
            parts.append("unused rolls carry over")
        return ", ".join(parts)

    def describe(self) -> dict[str, Any]:
        """A JSON-able description from the effective settings (file settings plus ``--set``).

        ``description`` is the rule file's own text; ``summary``, ``settings``, ``bonus``, the box
        maxima and ``perfect_score`` are computed, and ``overrides`` lists what ``--set`` changed.
        """
        mx = self.box_max()
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "summary": self.summary(),
            "source": self.source,
            "dice": self.n_dice,
            "rolls_per_turn": self.rolls_per_turn,
            "settings": dict(self.settings),
            "overrides": dict(self.overrides),
            "bonus": {"threshold": self.threshold, "value": self.bonus_value},
            "boxes": [
                {
                    "name": b.name,
                    "label": b.label,
                    "kind": b.kind,
                    "section": "upper" if b.is_upper else "lower",
                    "max": int(mx[i]),
                }
                for i, b in enumerate(self.boxes)
            ],
            "perfect_score": self.perfect_score(),
        }


# ---------------------------------------------------------------------------------------------
# scoring of one multiset in one box (compile time only; play uses the tables)


@cache
def _group_score(counts: tuple[int, ...], sizes: tuple[int, ...]) -> tuple[bool, int]:
    """Best assignment of distinct faces to group sizes: (fits, sum of the grouped dice)."""
    best = -1
    fits = [[f for f in range(FACES) if counts[f] >= s] for s in sizes]  # the faces each group can take
    for faces in product(*fits):
        if len(set(faces)) == len(faces):
            best = max(best, sum((f + 1) * s for f, s in zip(faces, sizes)))
    return best >= 0, max(best, 0)


def _score(box: Box, kind_params: dict[str, Any], counts: tuple[int, ...], settings: Mapping[str, Any]) -> int:
    """The score of the dice whose count of face f is ``counts[f - 1]`` (Python ints: compiling a
    rule set scores every multiset in every box, and numpy's scalar arithmetic made that 2x slower)."""
    total = sum((f + 1) * c for f, c in enumerate(counts))
    n = sum(counts)
    k, p = box.kind, kind_params
    mode = p.get("score", "flat")
    if k == "upper":
        face = p["face"]
        return face * counts[face - 1]
    if k == "chance":
        return total
    if k == "yatzy":
        if max(counts) != n:
            return 0
        return p["value"] + (total if settings["yatzy_scoring"] == "flat_plus_sum" else 0)
    if k == "straight":
        ok = all(counts[f - 1] >= 1 for f in p["faces"])
        return (p["value"] if mode == "flat" else sum(p["faces"])) if ok else 0
    if k == "run":
        L = p["length"]
        runs = [list(range(s, s + L)) for s in range(1, FACES - L + 2)]
        fit = [r for r in runs if all(counts[f - 1] >= 1 for f in r)]
        if not fit:
            return 0
        return p["value"] if mode == "flat" else max(sum(r) for r in fit)
    if k == "full_house":
        mode = "matching" if settings["full_house_scoring"] == "sum" else "flat"
        ok, s = _group_score(counts, (3, 2))
        if not ok and p["five_alike"] and max(counts) >= 5:
            ok, s = True, 5 * (counts.index(max(counts)) + 1)
    else:
        sizes = {
            "n_of_a_kind": lambda: (p["n"],),
            "pairs": lambda: (2,) * p["count"],
            "castle": lambda: (3, 3),
            "tower": lambda: (4, 2),
            "groups": lambda: tuple(p["sizes"]),
        }[k]()
        ok, s = _group_score(counts, sizes)
    if not ok:
        return 0
    return {"matching": s, "sum": total, "flat": p["value"]}[mode]


# ---------------------------------------------------------------------------------------------
# validation and compiling


#: Box kind -> (the setting that changes its score, the only value that keeps a fixed score).
_FIXED_BY = {"yatzy": ("yatzy_scoring", "flat"), "full_house": ("full_house_scoring", "flat")}


def _check_fixed_scores(
    parsed: list[tuple[Box, dict[str, Any]]],
    settings: Mapping[str, Any],
    over: Mapping[str, Any],
    name: Any,
    where: str,
    origin: Origin = "--set",
) -> None:
    """Refuse a scoring setting that contradicts a box's fixed servida or joker score.

    A servida or joker score is a fixed number written next to the box's plain value (generala 50 /
    servida 60; yahtzee's joker full house 25); scoring the plain box by the dice instead would let
    it pass its servida (five sixes 80 > 60) or differ from its joker. No combination is defined.
    """
    for box, params in parsed:
        if box.kind not in _FIXED_BY or (box.servida is None and box.joker_value is None):
            continue
        key, fits = _FIXED_BY[box.kind]
        if settings[key] == fits:
            continue
        fixed = [f"{params['value']}"] + [
            f"{label} {v}" for label, v in (("servida", box.servida), ("joker", box.joker_value)) if v is not None
        ]
        at = (
            f"{_setting_at(origin, key)}={settings[key]}"
            if key in over
            else f"{where} [settings] {key}={settings[key]!r}"
        )
        raise UserError(
            f"{at}: not allowed on rule set {name!r} (box {box.name!r} has fixed scores "
            f"{' / '.join(fixed)}; only {key}={fits} fits)"
        )


#: The most points a box's value, servida, joker value or the extra bonus may be.
MAX_POINTS = 1000


def _is_whole(v: Any, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _box_from_spec(i: int, raw: Any, where: str) -> tuple[Box, dict[str, Any]]:
    w = f"{where}: boxes[{i}]"
    if not isinstance(raw, dict):
        raise UserError(f"{w} must be a table")
    name, kind = raw.get("name"), raw.get("kind")
    if not isinstance(name, str) or not name.isidentifier() or name != name.lower():
        raise UserError(f"{w}: name must be a snake_case identifier, got {_shown(name)}")
    if not isinstance(kind, str) or kind not in KINDS:
        raise UserError(f"{w} ({name}): unknown kind {_shown(kind)} (kinds: {', '.join(KINDS)})")
    allowed = set(KINDS[kind]) | _COMMON
    for key in raw:
        if key not in allowed:
            raise UserError(
                f"{w} ({name}): unknown key {_shown(key)} for kind {kind} (keys: {', '.join(sorted(allowed))})"
            )
    params = {}
    for key, default in KINDS[kind].items():
        if key not in raw and default is None:
            raise UserError(f"{w} ({name}): kind {kind} needs key {key!r}")
        params[key] = raw.get(key, default)
    if "score" in params and params["score"] not in _SCORE_MODES:
        raise UserError(f"{w} ({name}): score must be one of {', '.join(_SCORE_MODES)}, got {_shown(params['score'])}")
    # every value is checked for its type and range before it is used: a rule set may come from
    # a game record (inline), which is untrusted input
    for key in ("servida", "joker_value"):
        if key in raw and not _is_whole(raw[key], 0, MAX_POINTS):
            raise UserError(f"{w} ({name}): {key} must be a whole number 0..{MAX_POINTS}, got {_shown(raw[key])}")
    for key in ("requires_key", "five_alike"):
        if key in raw and not isinstance(raw[key], bool):
            raise UserError(f"{w} ({name}): {key} must be true or false, got {_shown(raw[key])}")
    if "value" in params and not _is_whole(params["value"], 0, MAX_POINTS):
        raise UserError(f"{w} ({name}): value must be a whole number 0..{MAX_POINTS}, got {_shown(params['value'])}")
    for key, lo, hi in (("n", 1, 8), ("count", 1, 4), ("length", 1, 6)):
        if key in params and not _is_whole(params[key], lo, hi):
            raise UserError(f"{w} ({name}): {key} must be a whole number {lo}..{hi}, got {_shown(params[key])}")
    if kind == "upper" and not _is_whole(params["face"], 1, 6):
        raise UserError(f"{w} ({name}): face must be 1..6")
    if kind == "straight" and (
        not isinstance(params["faces"], list)
        or not params["faces"]
        or not all(_is_whole(f, 1, 6) for f in params["faces"])
        or len(set(params["faces"])) != len(params["faces"])
    ):
        raise UserError(f"{w} ({name}): faces must be a list of distinct faces 1..6")
    if kind == "groups" and (
        not isinstance(params["sizes"], list)
        or not 1 <= len(params["sizes"]) <= 6
        or not all(_is_whole(n, 1, 8) for n in params["sizes"])
    ):
        raise UserError(f"{w} ({name}): sizes must be a list of 1..6 group sizes (1..8 dice each)")
    if "label" in raw and not isinstance(raw["label"], str):
        raise UserError(f"{w} ({name}): label must be a string, got {_shown(raw['label'])}")
    box = Box(
        name=name,
        kind=kind,
        label=str(raw.get("label", name.replace("_", " ").capitalize())),
        params=tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items())),
        servida=raw.get("servida"),
        requires_key=bool(raw.get("requires_key", False)),
        joker_value=raw.get("joker_value"),
    )
    return box, params


_TOP_KEYS = {
    "name",
    "title",
    "description",
    "dice",
    "rolls",
    "settings",
    "boxes",
    "key_box",
    "joker",
    "extra_yatzy_bonus",
    "_source",
}
#: The keys of a rule set carried inline (in a game record): a rule file's.
INLINE_KEYS = (_TOP_KEYS - {"_source"}) | {"extends"}


def compile_rules(
    spec: Mapping[str, Any],
    overrides: Mapping[str, Any] | Iterable[str] | None = None,
    source: str | None = None,
    origin: Origin = "--set",
) -> RuleSet:
    """Validate a parsed rule-set spec, apply overrides and compile its score tables. ``origin``
    names where the overrides came from in messages (``--set``, a record's ``rules.settings``)."""
    where = source or str(spec.get("_source", spec.get("name", "<rules>")))
    for key in spec:
        if key not in _TOP_KEYS:
            # a rule file's keys, extends included (resolved before this point, so never seen here)
            near = difflib.get_close_matches(str(key), sorted(INLINE_KEYS), n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            raise UserError(f"{where}: unknown key {key!r} ({hint}keys: {', '.join(sorted(INLINE_KEYS))})")
    n_dice = spec.get("dice", 5)
    if not _is_whole(n_dice, 1, 8):
        raise UserError(f"{where}: dice must be 1..8, got {_shown(n_dice)}")
    rolls = spec.get("rolls", 3)
    if not _is_whole(rolls, 1, 10):
        raise UserError(f"{where}: rolls must be 1..10, got {_shown(rolls)}")
    for key in ("name", "title", "description"):
        if key in spec and not isinstance(spec[key], str):
            raise UserError(f"{where}: {key} must be a string, got {_shown(spec[key])}")
    file_settings = spec.get("settings", {})
    if not isinstance(file_settings, dict):
        raise UserError(f"{where}: [settings] must be a table of KEY = VALUE, got {_shown(file_settings)}")
    for key in file_settings:
        if key not in SETTINGS:
            raise UserError(f"{where}: [settings] unknown setting {key!r} (settings: {', '.join(SETTINGS)})")
    check_toml_settings(file_settings, lambda key: f"{where} [settings] {key}")
    settings = dict(DEFAULT_SETTINGS)
    for key, raw in file_settings.items():
        settings[key] = _parse_value(key, raw, SETTINGS[key][0], f"{where} [settings]")
    over = parse_overrides(overrides, origin)
    for key, raw in over.items():
        settings[key] = _parse_value(key, raw, SETTINGS[key][0], _origin(origin, key))
    _check_settings(settings, n_dice, lambda key: _origin(origin, key) if key in over else where)

    raw_boxes = spec.get("boxes")
    if not isinstance(raw_boxes, list) or not raw_boxes:
        raise UserError(f"{where}: needs a non-empty [[boxes]] list")
    if len(raw_boxes) > 30:
        raise UserError(f"{where}: at most 30 boxes, got {len(raw_boxes)}")
    parsed = [_box_from_spec(i, rb, where) for i, rb in enumerate(raw_boxes)]
    kinds = {b.kind for b, _ in parsed}
    for key, needs in (
        ("include_pairs", _PAIR_KINDS),
        ("full_house_scoring", {"full_house"}),
        ("yatzy_scoring", {"yatzy"}),
    ):
        if key in over and not kinds & needs:
            raise UserError(
                f"{_setting_at(origin, key)}: does not apply to rule set {spec.get('name')!r} "
                f"(it has no {'/'.join(sorted(needs))} box)"
            )
    _check_fixed_scores(parsed, settings, over, spec.get("name"), where, origin)
    if not settings["include_pairs"]:
        parsed = [(b, p) for b, p in parsed if b.kind not in _PAIR_KINDS]
    names = [b.name for b, _ in parsed]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise UserError(f"{where}: duplicate box names: {', '.join(sorted(dup))}")
    if len(parsed) > 30:
        raise UserError(f"{where}: at most 30 boxes, got {len(parsed)}")

    d = dice(n_dice)
    nb = len(parsed)
    table = np.zeros((d.n_rolls, nb), dtype=np.int16)
    counts = [tuple(int(c) for c in row) for row in d.roll_counts]
    for j, (box, params) in enumerate(parsed):
        for r in range(d.n_rolls):
            table[r, j] = _score(box, params, counts[r], settings)
    table_first = table.copy()
    for j, (box, _) in enumerate(parsed):
        if box.servida is not None:
            table_first[:, j] = np.where(table[:, j] > 0, box.servida, 0)

    key_name = spec.get("key_box")
    key_box = -1
    if key_name is not None:
        if not isinstance(key_name, str) or key_name not in names:
            raise UserError(f"{where}: key_box {_shown(key_name)} is not a box")
        key_box = names.index(key_name)
    joker = spec.get("joker", False)
    if not isinstance(joker, bool):
        raise UserError(f"{where}: joker must be true or false, got {_shown(joker)}")
    extra = spec.get("extra_yatzy_bonus", 0)
    if not _is_whole(extra, 0, MAX_POINTS):
        raise UserError(f"{where}: extra_yatzy_bonus must be a whole number 0..{MAX_POINTS}, got {_shown(extra)}")
    requires = np.array([b.requires_key for b, _ in parsed], dtype=bool)
    if (joker or extra or requires.any()) and key_box < 0:
        raise UserError(f"{where}: joker, extra_yatzy_bonus and requires_key need key_box")
    forced = settings["forced"]
    return RuleSet(
        name=str(spec.get("name", Path(where).stem)),
        title=str(spec.get("title", spec.get("name", ""))),
        description=str(spec.get("description", "")),
        source=where,
        n_dice=n_dice,
        rolls_per_turn=rolls,
        settings=settings,
        boxes=tuple(b for b, _ in parsed),
        threshold=settings["forced_bonus_threshold"] if forced else settings["upper_bonus_threshold"],
        bonus_value=settings["upper_bonus_value"],
        key_box=key_box,
        joker=joker,
        extra_yatzy_bonus=extra,
        table=table,
        table_first=table_first,
        upper_face=np.array([p["face"] if b.kind == "upper" else 0 for b, p in parsed], dtype=np.int8),
        requires_key=requires,
        joker_value=np.array([-1 if b.joker_value is None else b.joker_value for b, _ in parsed], dtype=np.int16),
        yatzy_roll=d.roll_counts.max(axis=1) == n_dice,
        spec=dict(spec),
        overrides={k: settings[k] for k in over},
    )


__all__ = ["INLINE_KEYS", "KINDS", "MAX_POINTS", "Box", "RuleSet", "compile_rules"]
