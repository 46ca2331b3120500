"""The random bot: keeps each die with probability one half, fills a uniformly random allowed box."""

from __future__ import annotations

import numpy as np

from harness.registry import register
from harness.strategy import Strategy, TurnView
from strategies.kernels import random_boxes, random_keeps


@register
class RandomBot(Strategy):
    name = "random"
    description = "random keeps (each die kept with probability 1/2), random open box"
    classifier = {"stochastic": True, "lookahead": "none", "long_run_time": False}

    def keep(self, view: TurnView) -> np.ndarray:
        d = self.rules.dice
        return random_keeps(d.roll_faces, view.roll, view.uniform(d.n), d.keep_lookup, d.radix)

    def choose(self, view: TurnView) -> np.ndarray:
        return random_boxes(view.allowed, view.uniform(1)[:, 0], self.rules.n_boxes)
