"""Pictures of an analysed run's luck and skill (the report's ``luck`` section, runs played with
``--analyse``): luck-adjusted means, the regret per game, and luck against final score."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from harness.reports.plot.common import DPI, Figure, _title, plt, series_color
from harness.reports.plot.skill import _luck_scatter

if TYPE_CHECKING:
    from harness.reports.summary import LuckSection, RunSummary


def plot_luck_adjusted(summary: RunSummary) -> Figure | None:
    """Per entrant, the plain mean score and the luck-adjusted mean (total - luck) with their CIs."""
    sec = next((x for x in summary.sections if x.key == "luck"), None)
    rows = sec.to_dict()["luck"] if sec is not None else []
    if not rows:
        return None
    k = len(rows)
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.6 * k + 1.6)), dpi=DPI, layout="constrained")
    y = np.arange(k)
    for off, key, ci, label, color in (
        (-0.15, "mean", "mean_ci", "mean score", series_color(0)),
        (0.15, "adjusted_mean", "adjusted_ci", "luck-adjusted (total - luck)", series_color(1)),
    ):
        m = np.array([r[key] for r in rows])
        err = np.array([[r[key] - r[ci][0] for r in rows], [r[ci][1] - r[key] for r in rows]])
        ax.errorbar(m, y + off, xerr=np.clip(err, 0, None), fmt="o", color=color, capsize=4, label=label)
    ax.set_yticks(y, [r["strategy"] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(f"points (bars: {100 * summary.confidence:.4g} % CI over games)")
    ax.set_title(_title(summary, "Luck-adjusted means"))
    ax.legend(loc="best", fontsize="small")
    ax.grid(axis="x", alpha=0.3)
    return fig


def _luck_section(summary: RunSummary) -> LuckSection | None:
    return next((x for x in summary.sections if x.key == "luck"), None)


def plot_run_luck_vs_score(summary: RunSummary) -> Figure | None:
    """Per entrant of an analysed run, its first seat-games' luck against final score."""
    sec = _luck_section(summary)
    rows = {r["strategy"]: r for r in sec.to_dict()["luck"]} if sec is not None else {}
    players = []
    for e, label in enumerate(summary.info.entrants):
        pts = sec.scatter_points(e) if label in rows else np.zeros((0, 2))
        if len(pts):
            players.append((label, pts[:, 0], pts[:, 1], rows[label]["mean"], rows[label]["adjusted_mean"]))
    if not players:
        return None
    fig, ax = plt.subplots(figsize=(8, 6), dpi=DPI, layout="constrained")
    _luck_scatter(ax, players)
    ax.set_title(_title(summary, "Luck against final score (dashed: adjusted mean + luck)"))
    ax.set_xlabel(
        f"luck of the game (points: the dice against their expectation; the first {sec.SCATTER:,} games per entrant)"
    )
    return fig


def plot_run_regret(summary: RunSummary) -> Figure | None:
    """Per entrant of an analysed run, the distribution of its regret per game (share of games per
    1-point bin, the first bin [0, 1) drawn from x = 0). Every bar is drawn whole: when one entrant's
    bin (the optimal bot's spike at 0, 100 % of its games) towers over the others' the share axis
    is logarithmic, so the spike and the others' tails are both visible."""
    sec = _luck_section(summary)
    rows = sec.to_dict()["luck"] if sec is not None else []
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(9, 5), dpi=DPI, layout="constrained")
    top, high, rest, low = 0.0, 0.0, 0.0, math.inf
    for i, r in enumerate(rows):
        h = r["regret_histogram"]
        counts, edges = np.array(h["counts"], dtype=float), np.array(h["edges"])
        share = 100 * counts / max(1.0, counts.sum())
        ax.stairs(
            share,
            edges,
            color=series_color(i),
            lw=1.6,
            label=f"{r['strategy']} (mean {r['regret_per_game']:.2f} a game, {r['rating']})",
        )
        hit = np.flatnonzero(counts)
        top = max(top, edges[min(edges.size - 1, hit[-1] + 2)] if hit.size else 1.0)
        high = max(high, float(share.max()))
        if r["regret_per_game"] >= 1.0:
            rest = max(rest, float(share.max()))
        if hit.size:
            low = min(low, float(share[hit].min()))
    ax.set_xlim(-0.02 * max(top, 1.0) - 0.5, top)  # the bin at 0 clear of the axis
    if rest > 0 and high > 3 * rest:  # a near-perfect entrant's spike would flatten the rest
        ax.set_yscale("log")
        ax.set_ylim(max(low / 2, 1e-4), 1.6 * high)
        ax.set_ylabel("share of the entrant's games (%, log scale)")
    else:
        ax.set_ylim(0, 1.15 * high if high > 0 else 1.0)
        ax.set_ylabel("share of the entrant's games (%)")
    ax.set_xlabel("regret of a game (points lost to decisions against optimal play; 1-point bins from 0)")
    ax.set_title(_title(summary, "Regret per game"))
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize="small")
    return fig
