"""Pictures of a run's head to head and Bradley-Terry ratings (the report's ``head_to_head``
section): the heatmap of each entrant's score against each other, and the ratings with their
intervals (of two entrants, their one Elo difference)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from harness.reports.plot.common import DPI, Figure, _title, plt, series_color
from harness.stats.common import z_crit

if TYPE_CHECKING:
    from harness.reports.summary import RunSummary


def plot_head_to_head(summary: RunSummary) -> Figure | None:
    """Heatmap of each row entrant's score share against each column entrant (win 1, draw 1/2)."""
    k = len(summary.entrants)
    if k < 2 or summary.h2h_games.sum() == 0:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(summary.h2h_games > 0, summary.h2h_points / np.maximum(summary.h2h_games, 1), np.nan)
    names = [e.label for e in summary.entrants]
    size = max(4.5, 0.9 * k + 2.5)
    fig, ax = plt.subplots(figsize=(size + 1.2, size), dpi=DPI, layout="constrained")
    im = ax.imshow(100 * share, cmap="RdBu", vmin=0, vmax=100)
    for i in range(k):
        for j in range(k):
            if np.isfinite(share[i, j]):
                v = 100 * share[i, j]
                ax.text(
                    j,
                    i,
                    f"{v:.1f}",
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if abs(v - 50) > 30 else "black",
                )
    ax.set_xticks(range(k), names, rotation=30, ha="right")
    ax.set_yticks(range(k), names)
    ax.set_xlabel("opponent")
    ax.set_ylabel("entrant")
    fig.colorbar(im, ax=ax, label="entrant's score against opponent (%)", shrink=0.8)
    ax.set_title(_title(summary, "Head to head"))
    return fig


def plot_ratings(summary: RunSummary) -> Figure | None:
    """Bradley-Terry ratings (Elo scale, mean 0) with their confidence intervals, the entrants in
    the run's order from the top (as every table and ``luck_adjusted.png`` list them); of two
    entrants, their one Elo difference (:func:`_one_pairing`)."""
    r = summary.ratings
    if r is None:
        return None
    if len(r.names) == 2:
        return _one_pairing(summary)
    rank = {label: i for i, label in enumerate(summary.info.entrants)}
    rows = sorted(r.table(), key=lambda x: rank.get(x["name"], len(rank)))
    k = len(rows)
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.45 * k + 1.6)), dpi=DPI, layout="constrained")
    y = np.arange(k)
    elo = np.array([x["elo"] for x in rows])
    err = np.array([[x["elo"] - x["lo"] for x in rows], [x["hi"] - x["elo"] for x in rows]])
    ax.errorbar(elo, y, xerr=err, fmt="o", color=series_color(0), ecolor="black", capsize=4)
    for i, x in enumerate(rows):  # a rating set by the prior (a sweep) is a bound: point the way it could go
        marker = {"lower": ">", "upper": "<"}.get(x.get("bound") or "")
        if marker:
            ax.plot(x["hi" if marker == ">" else "lo"], i, marker=marker, color="firebrick", ms=9, ls="none")
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    names = [x["name"] + (" (bound)" if x.get("bound") else "") for x in rows]
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    bounds = (
        ";\nred arrow: a bound (won or lost every game against someone)" if any(x.get("bound") for x in rows) else ""
    )
    ax.set_xlabel(f"rating (Elo points, field mean 0; bars: {100 * r.confidence:.4g} % CI{bounds})")
    ax.set_title(_title(summary, "Bradley-Terry ratings"))
    ax.grid(axis="x", alpha=0.3)
    return fig


def _one_pairing(summary: RunSummary) -> Figure:
    """The ratings of two entrants: one number, their Elo difference (first entrant minus second, as
    the pairings table gives it), with its interval. Their two ratings are that number's halves
    mirrored about 0, and drawn as two points they only said it twice (issue 37)."""
    r = summary.ratings
    a, b = sorted(r.names, key=list(summary.info.entrants).index)
    i, j = r.names.index(a), r.names.index(b)
    diff = float(r.elo[i] - r.elo[j])
    half = z_crit(r.confidence) * math.sqrt(max(0.0, r.cov[i, i] + r.cov[j, j] - 2 * r.cov[i, j]))
    fig, ax = plt.subplots(figsize=(8, 2.8), dpi=DPI, layout="constrained")
    ax.errorbar([diff], [0], xerr=[[half], [half]], fmt="o", color=series_color(0), ecolor="black", capsize=4)
    marker = {"lower": ">", "upper": "<"}.get(r.bound(i) or "")  # a won (lost) every game: a bound
    if marker:
        ax.plot(diff + (half if marker == ">" else -half), 0, marker=marker, color="firebrick", ms=9, ls="none")
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_yticks([0], [f"{a} vs {b}" + (" (bound)" if marker else "")])
    ax.set_ylim(-1, 1)
    bound = ";\nred arrow: a bound (one entrant won every game)" if marker else ""
    ax.set_xlabel(
        f"Elo difference, {a} − {b} (bar: {100 * r.confidence:.4g} % CI; the ratings are ± half of it{bound})"
    )
    ax.set_title(_title(summary, "Bradley-Terry rating of the one pairing"))
    ax.grid(axis="x", alpha=0.3)
    return fig
