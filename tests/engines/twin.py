"""In process, what the null engine (``null_engine.py``) answers: keep every die, the first allowed box."""

from __future__ import annotations

import numpy as np

from harness.game.strategy import Strategy, TurnView


class NullTwin(Strategy):
    """The null engine's answers as a built-in bot, to compare engine play with in-process play."""

    name = "null-twin"

    def keep(self, view: TurnView) -> np.ndarray:
        return self.rules.dice.roll_as_keep[view.roll]

    def choose(self, view: TurnView) -> np.ndarray:
        return np.argmax(view.allowed_matrix(), axis=1)
