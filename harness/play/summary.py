"""The lines ``yatzy-harness run`` prints at its end: each entrant's mean score with a 95 % interval
and its win and draw rates, from the manifest's exact sums."""

from __future__ import annotations

import math
from typing import Any, Mapping

from harness.game.outcome import DEFINITION

__all__ = ["summary_lines"]


def summary_lines(manifest: Mapping[str, Any]) -> list[str]:
    """One line per entrant from the manifest's exact sums: mean score with a 95 % interval, win and
    draw rates (:mod:`harness.game.outcome`'s definitions; none at a one-seat table), then what they mean.

    (A normal interval: n is in the thousands; the full statistics are ``yatzy-harness report``'s.)
    """

    rows = []
    width = max([len(e["label"]) for e in manifest["entrants"]] + [5])
    solo = all(len(lu) < 2 for lu in manifest["lineups"])
    for e in manifest["entrants"]:
        n, s, ss, wins, draws = manifest["totals"][e["label"]]
        if n == 0:
            rows.append(f"  {e['label']:<{width}}  no games")
            continue
        mean = s / n
        var = (ss * n - s * s) / (n * (n - 1)) if n > 1 else float("nan")  # exact integers until here
        half = 1.959964 * math.sqrt(var / n)
        outcome = "" if solo else f"   win {100 * wins / n:5.1f} %  draw {100 * draws / n:4.1f} %"
        rows.append(f"  {e['label']:<{width}}  mean {mean:7.2f} ± {half:.2f}{outcome}   ({n:,} seats)")
    if not solo:
        rows.append(f"  ({DEFINITION})")
    return rows
