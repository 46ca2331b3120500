"""An engine's options as its ``hello`` declares them: each one's type, default and range, the
values given to it checked and converted against that declaration, and its dials.

``hello.options`` is a list of objects (an empty object ``{}`` is read as no option):

``{"name": "mistakes", "type": "float", "default": 0, "min": 0, "max": 1, "differ": [0, 0.5]}``

``type`` is ``float``, ``integer`` or ``choice`` (then ``values``, the choices in order: easiest
to hardest, or the other way, as play changes in one direction) for a knob the harness
can tune (a *dial*), or ``string`` / ``boolean`` for a setting it only passes on. ``differ`` (one
option at most) names two values that play differently: ``engine check`` plays both and fails
when the answers are the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

#: Option types an engine may declare; the first three are dials (``calibrate --param opt.NAME``).
TYPES = ("float", "integer", "choice", "string", "boolean")
DIALS = ("float", "integer", "choice")


class OptionError(ValueError):
    """A declaration or a value that does not fit it (the message is one line)."""


@dataclass(frozen=True)
class Option:
    """One declared option: ``kind`` one of :data:`TYPES`; ``lo``/``hi`` the inclusive range of a
    float or integer; ``values`` the ordered choices; ``differ`` two values that play differently."""

    name: str
    kind: str
    default: Any = None
    lo: float | None = None
    hi: float | None = None
    values: tuple[Any, ...] = ()
    differ: tuple[Any, ...] = ()
    description: str = ""

    @property
    def dial(self) -> bool:
        return self.kind in DIALS

    def range_text(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(map(str, self.values))
        lo = "-inf" if self.lo is None else f"{self.lo:g}"
        hi = "inf" if self.hi is None else f"{self.hi:g}"
        return f"{self.kind} in [{lo}, {hi}]"

    def parse(self, raw: Any) -> Any:
        """``raw`` (a spec's text, or a JSON value) as this option's value; :class:`OptionError`
        when it is not one (out of range, not a choice, not a number)."""
        where = f"option {self.name}"
        if self.kind == "choice":
            for v in self.values:
                if v == raw or str(v) == str(raw):
                    return v
            raise OptionError(f"{where} = {raw!r} is not {self.range_text()}")
        if self.kind in ("float", "integer"):
            try:
                x = float(raw)
            except (TypeError, ValueError):
                raise OptionError(f"{where} = {raw!r} is not a number") from None
            if not math.isfinite(x):
                raise OptionError(f"{where} = {raw!r} is not finite")
            if self.kind == "integer":
                if x != int(x):
                    raise OptionError(f"{where} = {raw!r} is not a whole number")
                x = int(x)
            if (self.lo is not None and x < self.lo) or (self.hi is not None and x > self.hi):
                raise OptionError(f"{where} = {raw!r} is out of range: {self.range_text()}")
            return x
        if self.kind == "boolean":
            if isinstance(raw, bool):
                return raw
            if str(raw).lower() in ("true", "1", "yes", "false", "0", "no"):
                return str(raw).lower() in ("true", "1", "yes")
            raise OptionError(f"{where} = {raw!r} is not true or false")
        return raw if isinstance(raw, str) else str(raw)

    def index(self, value: Any) -> int:
        """A choice's position in :attr:`values`."""
        return self.values.index(self.parse(value))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.kind, "default": self.default}
        if self.lo is not None:
            out["min"] = self.lo
        if self.hi is not None:
            out["max"] = self.hi
        if self.values:
            out["values"] = list(self.values)
        if self.differ:
            out["differ"] = list(self.differ)
        return out


def _number(d: Mapping[str, Any], key: str, name: str) -> float | None:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise OptionError(f"option {name!r}: {key} = {v!r} is not a finite number")
    return float(v)


def declared(hello: Mapping[str, Any]) -> dict[str, Option]:
    """The options a ``hello`` reply declares, by name; :class:`OptionError` for a declaration that
    is not one (the message names the option and the key)."""
    raw = hello.get("options", [])
    if raw is None or raw == {}:
        return {}
    if not isinstance(raw, list):
        raise OptionError("'options' must be a list of objects (name, type, default, min, max)")
    out: dict[str, Option] = {}
    differs = 0
    for i, d in enumerate(raw):
        if not isinstance(d, dict) or not isinstance(d.get("name"), str) or not d["name"]:
            raise OptionError(f"options[{i}] must be an object with a non-empty 'name'")
        name = d["name"]
        kind = d.get("type", "string")
        if kind not in TYPES:
            raise OptionError(f"option {name!r}: type {kind!r} is not one of {', '.join(TYPES)}")
        values: tuple[Any, ...] = ()
        if kind == "choice":
            vs = d.get("values")
            if not isinstance(vs, list) or len(vs) < 2 or len(set(map(str, vs))) != len(vs):
                raise OptionError(f"option {name!r}: a choice needs 'values', at least two distinct, in order")
            values = tuple(vs)
        lo, hi = _number(d, "min", name), _number(d, "max", name)
        if lo is not None and hi is not None and lo > hi:
            raise OptionError(f"option {name!r}: min {lo:g} > max {hi:g}")
        opt = Option(name, kind, d.get("default"), lo, hi, values, (), str(d.get("description", "")))
        if d.get("default") is not None:
            opt.parse(d["default"])
        differ = d.get("differ")
        if differ is not None:
            if not isinstance(differ, list) or len(differ) != 2:
                raise OptionError(f"option {name!r}: 'differ' must be two values that play differently")
            pair = tuple(opt.parse(x) for x in differ)
            if pair[0] == pair[1]:
                raise OptionError(f"option {name!r}: the two values of 'differ' are the same")
            opt = Option(name, kind, opt.default, lo, hi, values, pair, opt.description)
            differs += 1
        if name in out:
            raise OptionError(f"option {name!r} is declared twice")
        out[name] = opt
    if differs > 1:
        raise OptionError("'differ' may be declared for one option only")
    return out


def check_values(options: Mapping[str, Option], given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` option values converted to their declared types; :class:`OptionError` (one line)
    for an option the engine does not declare or a value that does not fit."""
    out: dict[str, Any] = {}
    for name, raw in given.items():
        opt = options.get(name)
        if opt is None:
            have = ", ".join(options) or "none"
            raise OptionError(f"no option {name!r} (its hello declares: {have})")
        out[name] = opt.parse(raw)
    return out
