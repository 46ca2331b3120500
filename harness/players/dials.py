"""A bot's dials: the parameters ``calibrate`` can tune, from a built-in bot's declared parameters or
an external engine's ``hello`` (``--param opt.NAME``).

A dial is a float (searched by regula falsi), an integer or an ordered choice (searched over whole
numbers, the choice's position in its list: the answer is the adjacent pair of values that brackets
the target). An engine's options are known only from its handshake, so the engine is started once
per (spec, rule set) and process to read them (:func:`dial_of`). The registry loads with this
module: :mod:`harness.players.calibrate` (which ``calibrate --help`` reads) imports it when a problem
is checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from harness.game.registry import get, make
from harness.game.rules import load_rules
from harness.util.errors import UserError
from harness.util.specs import parse_spec

#: An engine option's dial name starts with this (``opt.mistakes``), as in the spec.
OPTION_PREFIX = "opt."


@dataclass(frozen=True)
class Dial:
    """A tunable parameter: ``kind`` float, integer or choice; ``lo``/``hi`` its declared range (a
    choice: 0 and the last position); ``values`` a choice's values in order."""

    name: str
    kind: str
    lo: float | None
    hi: float | None
    values: tuple[Any, ...] = ()
    default: Any = None
    #: "engine" for an engine's option (declared in its hello), "" for a built-in bot's parameter
    source: str = ""

    @property
    def discrete(self) -> bool:
        return self.kind in ("integer", "choice")

    def played(self, value: float) -> Any:
        """What the spec carries for search position ``value``: an int, a choice, or the float."""
        if self.kind == "choice":
            return self.values[int(round(value))]
        if self.kind == "integer":
            return int(round(value))
        return float(value)


def dial_of(strategy: str, param: str, rules: str = "scandinavian", settings: tuple[str, ...] = ()) -> Dial:
    """The dial ``param`` of ``strategy``; a one-line :class:`UserError` naming the parameters (or
    the engine's options) there are, or saying why this one cannot be tuned."""
    name, params = parse_spec(strategy)
    cls = get(name)
    if param.startswith(OPTION_PREFIX) and getattr(cls, "refereed", False):
        base = ",".join(f"{k}={_quote(v)}" for k, v in params.items() if k != param)
        return _engine_dial(name + (":" + base if base else ""), param[len(OPTION_PREFIX) :], rules, tuple(settings))
    declared = {x.name: x for x in cls.params}
    if param not in declared:
        hint = " (an engine's options are opt.NAME)" if getattr(cls, "refereed", False) else ""
        raise UserError(
            f"strategy {name!r} has no parameter {param!r} (parameters: {', '.join(declared) or 'none'}){hint}"
        )
    x = declared[param]
    if x.type is float:
        return Dial(param, "float", x.lo, x.hi, default=x.default)
    if x.type is int:
        return Dial(param, "integer", x.lo, x.hi, default=x.default)
    raise UserError(
        f"strategy {name!r}: parameter {param} is {x.type.__name__}; calibrate tunes float and integer "
        "parameters (and an engine's float, integer and choice options)"
    )


def _quote(v: str) -> str:
    return f'"{v}"' if any(c in v for c in ", =") and not (v[:1] == v[-1:] and v[:1] in "\"'") else v


@lru_cache(maxsize=32)
def _engine_dial(spec: str, option: str, rules: str, settings: tuple[str, ...]) -> Dial:
    """The engine's declaration of ``option``, read from its hello (the engine started once)."""
    bot = make(spec, load_rules(rules, list(settings)))
    declared = bot.declared_options()  # type: ignore[attr-defined]
    if option not in declared:
        raise UserError(
            f"engine {bot.label} has no option {option!r} (its hello declares: {', '.join(declared) or 'none'})"
        )
    o = declared[option]
    if not o.dial:
        raise UserError(
            f"engine {bot.label}: option {option} is a {o.kind}; calibrate tunes float, integer and choice options"
        )
    if o.kind == "choice":
        return Dial(OPTION_PREFIX + option, "choice", 0.0, float(len(o.values) - 1), o.values, o.default, "engine")
    return Dial(OPTION_PREFIX + option, o.kind, o.lo, o.hi, (), o.default, "engine")
