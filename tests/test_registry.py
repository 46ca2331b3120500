"""The strategy registry: built-ins, parameters, and a plugin found through its entry point."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from harness.game import registry
from harness.game.loop import play
from harness.util.errors import UserError
from harness.game.rules import load_rules

PLUGIN = textwrap.dedent('''
    """A third-party bot: always stops at once and writes its lowest allowed box."""
    import numpy as np
    from harness.game.strategy import Param, Strategy

    class LazyBot(Strategy):
        name = "lazy-plugin"
        description = "stops at once, fills the first allowed box"
        params = (Param("patience", int, 0, "ignored", 0, 3),)

        def keep(self, view):
            return self.rules.dice.roll_as_keep[view.roll]

        def choose(self, view):
            return np.argmax(view.allowed_matrix(), axis=1)
''')


@pytest.fixture
def plugin_dist(tmp_path, monkeypatch):
    """A tiny installed distribution: a module plus a dist-info declaring the entry point."""
    (tmp_path / "lazy_plugin.py").write_text(PLUGIN)
    info = tmp_path / "lazy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lazy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[yatzy_harness.strategies]\nlazy = lazy_plugin:LazyBot\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.reload_plugins()
    yield tmp_path
    monkeypatch.undo()
    registry._REGISTRY.pop("lazy-plugin", None)
    sys.modules.pop("lazy_plugin", None)
    registry.reload_plugins()


def test_plugin_registers_through_its_entry_point_and_plays(plugin_dist):
    rules = load_rules("scandinavian")
    bot = registry.make("lazy-plugin:patience=2", rules)
    assert bot.label == "lazy-plugin:patience=2"
    res = play(rules, [bot, registry.make("greedy", rules)], np.arange(10), 1)
    assert (res.total[:, 0] < res.total[:, 1]).mean() > 0.5


def test_plugin_is_listed_by_the_cli(plugin_dist):
    env = dict(os.environ, PYTHONPATH=str(plugin_dist) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", "strategies"], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert "lazy-plugin" in out and "greedy" in out


def test_builtins_and_bad_specs():
    assert {"random", "timeout", "greedy", "bonus"} <= set(registry.available())
    rules = load_rules("standard")
    with pytest.raises(UserError, match="unknown strategy 'grredy'"):
        registry.make("grredy", rules)
    with pytest.raises(UserError, match="unknown parameter 'wieght'"):
        registry.make("bonus:wieght=2", rules)
    with pytest.raises(UserError, match="must be float"):
        registry.make("bonus:weight=heavy", rules)
    with pytest.raises(UserError, match="out of range"):
        registry.make("bonus:weight=-1", rules)
    with pytest.raises(UserError, match=r"temperature=-1.0 is out of range: must be >= 0.0$"):
        registry.make("solver:temperature=-1", rules)  # an open range reads as >=, never "0.0..None"
    with pytest.raises(UserError, match="expected key=value"):
        registry.make("bonus:weight", rules)


def test_per_game_adapter_plays_like_the_batch_bot():
    from harness.game.strategy import PerGameStrategy

    class PlainTimeout(PerGameStrategy):
        name = "plain-timeout"

        def keep_dice(self, state):
            return state.dice  # keep everything: stop

        def choose_box(self, state):
            best = max(state.options.values())
            return next(b for b, v in state.options.items() if v == best)

    rules = load_rules("standard")
    a = play(rules, [PlainTimeout(rules)], np.arange(40), 3)
    b = play(rules, [registry.make("timeout", rules)], np.arange(40), 3)
    # same dice, same keeps; box ties may differ, so compare the first-turn-independent part: totals are close
    assert abs(a.total.mean() - b.total.mean()) < 15
    assert np.array_equal(a.total, play(rules, [PlainTimeout(rules)], np.arange(40), 3).total)


def test_built_in_bots_come_through_the_plugins_entry_points_and_import_no_registry():
    import ast
    import tomllib
    from pathlib import Path

    root = Path(registry.__file__).resolve().parents[2]
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["entry-points"][
        registry.ENTRY_POINT_GROUP
    ]
    assert set(declared) <= set(registry.available())  # (other tests of this process register more)
    import strategies.greedy  # noqa: F401  (every built-in module, loaded through the entry points)

    built_in = {c.name for c in registry.available().values() if c.__module__.startswith("strategies.")}
    assert built_in <= set(declared)  # every bot of strategies/ is declared, none registered on import
    for path in (root / "strategies").glob("*.py"):
        names = {n.module for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom)}
        assert "harness.game.registry" not in names, f"{path.name} imports the registry (an import loop)"
