"""The settings of a rule set: their names, types and defaults (:data:`SETTINGS`), and their values
parsed and checked, whether a rule file's ``[settings]`` gives them or overrides do (``--set
KEY=VALUE``, a record's ``rules.settings``, a run config), each message naming where a setting came
from. Compiling a rule set with them is :mod:`harness.game.ruleset`'s; all of it is importable from
:mod:`harness.game.rules`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from harness.util.errors import UserError

#: Setting name -> (type, description). Defaults come from each rule set's ``[settings]`` table.
SETTINGS: dict[str, tuple[type, str]] = {
    "upper_bonus_threshold": (int, "upper subtotal that earns the bonus (0..21 x dice)"),
    "upper_bonus_value": (int, "points of the upper bonus (0..100, step 5)"),
    "yatzy_scoring": (str, "'flat' or 'flat_plus_sum' (the yatzy value plus the dice)"),
    "full_house_scoring": (str, "'sum' (the dice of the house) or 'flat' (the box's flat value)"),
    "include_pairs": (bool, "false removes the pair boxes"),
    "forced": (bool, "boxes are filled strictly top to bottom"),
    "forced_bonus_threshold": (int, "bonus threshold used instead when forced is on"),
    "columns": (int, "complete scorecards per player in one match (1..6)"),
    "add_columns": (bool, "match winner by combined total (true) or best single column (false)"),
    "saved_rolls": (bool, "unused rolls carry over to later turns"),
}
DEFAULT_SETTINGS: dict[str, Any] = {
    "upper_bonus_threshold": 63,
    "upper_bonus_value": 0,
    "yatzy_scoring": "flat",
    "full_house_scoring": "flat",
    "include_pairs": True,
    "forced": False,
    "forced_bonus_threshold": 42,
    "columns": 1,
    "add_columns": True,
    "saved_rolls": False,
}


def _parse_value(key: str, raw: Any, kind: type, where: str) -> Any:
    if isinstance(raw, str) and kind is not str:
        text = raw.strip().lower()
        if kind is bool:
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise UserError(f"{where}: setting {key} must be true or false, got {_shown(raw)}")
        try:
            return int(text)
        except ValueError:
            raise UserError(f"{where}: setting {key} must be a whole number, got {_shown(raw)}") from None
    if kind is bool and not isinstance(raw, bool):
        raise UserError(f"{where}: setting {key} must be true or false, got {_shown(raw)}")
    if kind is int and (isinstance(raw, bool) or not isinstance(raw, int)):
        raise UserError(f"{where}: setting {key} must be a whole number, got {_shown(raw)}")
    if kind is str and not isinstance(raw, str):
        raise UserError(f"{where}: setting {key} must be a string, got {_shown(raw)}")
    return raw


def parse_setting(key: str, raw: Any, where: str = "--set") -> Any:
    """One known setting's value parsed to its type as the compiler parses it (``--set`` gives
    strings: ``true``, ``62``); :class:`UserError` naming ``where``."""
    return _parse_value(key, raw, SETTINGS[key][0], where)


#: Where setting overrides come from, for messages: a name (``--set``, a record's
#: ``rules.settings``) or a function of the setting's key (a run config's ``--set`` and file keys).
Origin = str | Callable[[str], str]


def _origin(origin: Origin, key: str) -> str:
    """The place a setting ``key`` came from: ``--set``, ``rules.settings``, ``bad.toml: settings``."""
    return origin(key) if callable(origin) else origin


def _setting_at(origin: Origin, key: str) -> str:
    """One setting where it came from: ``--set KEY`` (a flag), else ``PLACE.KEY``."""
    o = _origin(origin, key)
    return f"{o} {key}" if o.startswith("--") else f"{o}.{key}"


def parse_overrides(overrides: Mapping[str, Any] | Iterable[str] | None, where: Origin = "--set") -> dict[str, Any]:
    """``KEY=VALUE`` strings (or a mapping) -> dict of raw values; unknown keys are rejected,
    named as coming from ``where``."""
    if overrides is None:
        return {}
    if isinstance(overrides, Mapping):
        items = list(overrides.items())
    else:
        items = []
        for text in overrides:
            if "=" not in text:
                raise UserError(f"{_origin(where, '')}: expected KEY=VALUE, got {text!r}")
            key, value = text.split("=", 1)
            items.append((key.strip(), value.strip()))
    out = {}
    for key, value in items:
        if key not in SETTINGS:
            raise UserError(f"{_origin(where, key)}: unknown setting {_shown(key)} (settings: {', '.join(SETTINGS)})")
        out[key] = value
    return out


def check_toml_settings(settings: Mapping[str, Any], at: Callable[[str], str]) -> None:
    """Settings written in a file (TOML, or a rule set's JSON) have their file's types: a boolean
    is ``true``/``false`` and a number a number, not a string that reads as one (``--set`` on the
    command line gives strings, and is parsed). :class:`UserError` naming ``at(key)``."""
    for key, v in settings.items():
        kind = SETTINGS.get(key, (None,))[0] if isinstance(key, str) else None
        if kind in (bool, int) and isinstance(v, str):
            what = "true or false (a boolean" if kind is bool else "a whole number (an integer"
            example = "true" if kind is bool else "2"
            raise UserError(f"{at(key)} = {_shown(v)}: must be {what}, unquoted: {key} = {example}), not a string")


def _check_settings(s: dict[str, Any], n_dice: int, where: Callable[[str], str]) -> None:
    """The settings' ranges; ``where(key)`` names where a setting came from."""
    max_upper = 21 * n_dice

    def rng(key: str, lo: int, hi: int, step: int = 1) -> None:
        v = s[key]
        if not lo <= v <= hi or (v - lo) % step:
            extra = f", step {step}" if step > 1 else ""
            raise UserError(f"{where(key)}: setting {key}={v} is out of range {lo}..{hi}{extra}")

    rng("upper_bonus_threshold", 0, max_upper)
    rng("upper_bonus_value", 0, 100, 5)
    rng("forced_bonus_threshold", 0, max_upper)
    rng("columns", 1, 6)
    for key, allowed in (("yatzy_scoring", ("flat", "flat_plus_sum")), ("full_house_scoring", ("sum", "flat"))):
        if s[key] not in allowed:
            raise UserError(f"{where(key)}: setting {key}={_shown(s[key])} must be one of {', '.join(allowed)}")


def _shown(v: Any) -> str:
    """``repr(v)`` for a message, cut to 40 characters (a value may come from a game record)."""
    if isinstance(v, (list, dict)) and len(v) > 40:
        return f"a {'list' if isinstance(v, list) else 'table'} of {len(v)} items"
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = ["DEFAULT_SETTINGS", "SETTINGS", "Origin", "check_toml_settings", "parse_overrides", "parse_setting"]
