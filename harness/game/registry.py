"""The strategy registry: every bot is found through the ``yatzy_harness.strategies`` entry points.

The built-in bots (``strategies/``, and the ``engine`` entrant) are declared in this project's own
``pyproject.toml``, exactly as a third-party package adds its bots without touching ours::

    [project.entry-points."yatzy_harness.strategies"]
    mybot = "mypackage.bots:MyBot"

The entry point names a :class:`~harness.game.strategy.Strategy` subclass (or a module whose import
registers its bots with :func:`register`). Nothing in ``strategies/`` imports this module, so there
is no import loop between the registry and the bots.
"""

from __future__ import annotations

import logging
import tomllib
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from harness.util.errors import UserError
from harness.game.rules import RuleSet
from harness.game.strategy import Strategy
from harness.util.specs import parse_spec

ENTRY_POINT_GROUP = "yatzy_harness.strategies"
log = logging.getLogger(__name__)

_REGISTRY: dict[str, type[Strategy]] = {}
_loaded = False


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator: add a strategy under ``cls.name`` (a name may be registered once)."""
    if not cls.name or not isinstance(cls.name, str):
        raise TypeError(f"{cls.__qualname__} needs a class attribute 'name'")
    other = _REGISTRY.get(cls.name)
    if other is not None and other is not cls:
        raise ValueError(f"strategy name {cls.name!r} is taken by {other.__module__}.{other.__qualname__}")
    _REGISTRY[cls.name] = cls
    return cls


def _entry_points() -> list[EntryPoint]:
    """The group's entry points: the built-ins' as this checkout's ``pyproject.toml`` declares them
    (so a checkout run without installing, or installed before a bot was added, has every one),
    then every installed distribution's (the built-ins' again, and third-party plugins)."""
    eps: list[EntryPoint] = []
    project = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if project.is_file():
        try:
            declared = tomllib.loads(project.read_text(encoding="utf-8"))["project"]["entry-points"][ENTRY_POINT_GROUP]
        except (KeyError, tomllib.TOMLDecodeError, OSError):
            declared = {}
        eps += [EntryPoint(name, value, ENTRY_POINT_GROUP) for name, value in declared.items()]
    return eps + list(entry_points(group=ENTRY_POINT_GROUP))


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for ep in _entry_points():
        if ep.name in _REGISTRY and _REGISTRY[ep.name].__module__ == ep.value.partition(":")[0]:
            continue  # the checkout's declaration and the installed metadata name the same class
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plugin must not take the built-ins down with it
            log.warning("strategy plugin %s (%s) failed to load: %s", ep.name, ep.value, exc)
            continue
        if isinstance(obj, type) and issubclass(obj, Strategy):
            register(obj)


def reload_plugins() -> None:
    """Look at the entry points again (after installing a plugin in a running process)."""
    global _loaded
    _loaded = False
    _load()


def available() -> dict[str, type[Strategy]]:
    """Every registered strategy by name, sorted."""
    _load()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> type[Strategy]:
    """The strategy class registered as ``name``."""
    reg = available()
    if name not in reg:
        raise UserError(f"unknown strategy {name!r} (strategies: {', '.join(reg)})")
    return reg[name]


def make(spec: str, rules: RuleSet) -> Strategy:
    """A strategy instance from ``name`` or ``name:key=value,...`` for a rule set."""
    name, params = parse_spec(spec)
    return get(name)(rules, **params)


def describe() -> list[dict[str, Any]]:
    """JSON-able list of every strategy: name, description, classifier, parameters."""
    return [
        {
            "name": n,
            "description": c.description,
            "classifier": dict(c.classifier),
            "module": c.__module__,
            "params": [p.describe() for p in c.params],
        }
        for n, c in available().items()
    ]
