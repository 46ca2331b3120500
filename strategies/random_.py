"""The random bot: keeps each die with probability one half, fills a uniformly random allowed box."""

from __future__ import annotations

import numpy as np

from harness.dice import counts_of_faces
from harness.registry import register
from harness.strategy import Strategy, TurnView


@register
class RandomBot(Strategy):
    name = "random"
    description = "random keeps (each die kept with probability 1/2), random open box"
    classifier = {"stochastic": True, "lookahead": "none", "long_run_time": False}

    def keep(self, view: TurnView) -> np.ndarray:
        d = self.rules.dice
        faces = d.roll_faces[view.roll]
        kept = np.where(view.uniform(d.n) < 0.5, faces, 0)
        return d.keep_index(counts_of_faces(kept))

    def choose(self, view: TurnView) -> np.ndarray:
        allowed = view.allowed_matrix()
        # a uniform pick among the allowed boxes: the k-th allowed one, k = floor(u * count)
        count = allowed.sum(axis=1)
        k = np.minimum((view.uniform(1)[:, 0] * count).astype(np.int64), count - 1)
        rank = np.cumsum(allowed, axis=1) - 1
        return np.argmax(allowed & (rank == k[:, None]), axis=1)
