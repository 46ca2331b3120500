"""The population picture of a fit of player models (``yatzy-harness fit --plot``,
:mod:`harness.players.fit`): the players' regret per decision by skill band, and each parameter's
estimate against it."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from harness.reports.plot.common import DPI, Figure, plt, series_color


def plot_population(d: Mapping[str, Any]) -> Figure | None:
    """The population picture of a fit (:meth:`harness.players.fit.FitReport.to_dict`): the players' regret
    per decision (a histogram, the edges of the rating scale's skill bands dashed: ``population``'s
    ``scale``) and, one panel per parameter of the last model fitted (the richest), each player's
    estimate with its interval against its regret per decision, coloured by band (one colour per
    band of the scale). None with fewer than two players."""
    pop = d.get("population")
    if not pop:
        return None
    fit = d["alternatives"][-1] if d.get("alternatives") else d
    players = {p["player"]: p for p in fit["players"]}
    order = [b["band"] for b in pop["scale"]]
    band_of = {x: order.index(b["band"]) for b in pop["bands"] for x in b["players"]}
    names = [x for x in players if x in band_of]
    params = list(players[names[0]]["params"]) if names else []
    fig, axes = plt.subplots(
        1, 1 + len(params), figsize=(4.2 * (1 + len(params)), 4.2), dpi=DPI, layout="constrained", squeeze=False
    )
    ax = axes[0, 0]
    rpd = np.array([players[x]["regret_per_decision"] for x in names])
    top = max(rpd.max(), 1e-9) * 1.05
    for b in pop["bands"]:
        mine = [players[x]["regret_per_decision"] for x in b["players"]]
        ax.hist(
            mine,
            bins=np.linspace(0, top, 25),
            color=series_color(order.index(b["band"])),
            alpha=0.8,
            label=f"{b['band']} ({len(mine)})",
        )
    for b in pop["scale"]:
        if b["below"] is not None and b["below"] < top:  # the edges within the players' range
            ax.axvline(b["below"], color="black", ls="--", lw=0.8)
    ax.set_xlim(0, top)
    ax.set_xlabel("regret per decision (points)")
    ax.set_ylabel("players")
    ax.set_title(f"{len(names)} players, skill bands of analyse's rating", fontsize="medium")
    ax.legend(fontsize="small")
    for ax, k in zip(axes[0, 1:], params):
        for x in names:
            e = players[x]["params"][k]
            lo, hi = e["ci"]
            v = e["value"]
            if v is None:
                continue
            lo = v if lo is None else lo
            hi = v if hi is None or not math.isfinite(hi) else hi
            ax.errorbar(
                [players[x]["regret_per_decision"]],
                [v],
                yerr=[[v - lo], [hi - v]],
                fmt="o",
                ms=4,
                color=series_color(band_of[x]),
                capsize=2,
            )
        ax.set_xlabel("regret per decision (points)")
        ax.set_ylabel(k.replace("_", " "))
        ax.set_title(
            f"{fit['model']}: {k.replace('_', ' ')} (95 % intervals)"
            if fit["confidence"] == 0.95
            else f"{fit['model']}: {k.replace('_', ' ')}",
            fontsize="medium",
        )
        ax.grid(alpha=0.3)
    return fig
