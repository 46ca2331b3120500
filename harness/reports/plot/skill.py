"""Pictures of the luck and skill of game records (``yatzy-harness analyse``,
:mod:`harness.decisions.skill`): the regret per decision, and luck against final score
(:func:`_luck_scatter`, which the report's luck pictures share)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from harness.reports.plot.common import DPI, Figure, plt, series_color


#: The scatter of luck against score draws at most this many games per player.
SCATTER_MAX = 5000


class PlayerSkillLike(Protocol):
    """What the pictures of game records draw of one player (:class:`harness.decisions.skill.PlayerSkill`)."""

    @property
    def label(self) -> str: ...
    @property
    def games(self) -> int: ...
    @property
    def mean(self) -> float: ...
    @property
    def adjusted_mean(self) -> float: ...
    @property
    def decisions(self) -> int: ...
    @property
    def zero_regret(self) -> int: ...
    @property
    def regret_per_decision(self) -> float: ...
    @property
    def regret_hist(self) -> np.ndarray: ...
    @property
    def finals(self) -> np.ndarray: ...
    @property
    def lucks(self) -> np.ndarray: ...


class SkillReportLike(Protocol):
    """What the pictures of game records draw of their analysis (:class:`harness.decisions.skill.SkillReport`;
    described here so that the pictures need not import the analysis that draws them)."""

    @property
    def source(self) -> str: ...
    @property
    def rules(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def games(self) -> int: ...
    @property
    def players(self) -> Sequence[PlayerSkillLike]: ...
    @property
    def regret_edges(self) -> np.ndarray: ...


def _skill_title(report: SkillReportLike, what: str) -> str:
    rules = ", ".join(r["rules"] for r in report.rules)
    return f"{what}\n{rules} rules, {report.games:,} games of {Path(report.source).name}"


def plot_regret_distribution(report: SkillReportLike) -> Figure | None:
    """Per player, a step histogram of the non-zero regrets per decision (log-scale x, share of all
    the player's decisions per bin); the legend gives the share of zero-regret decisions."""
    players = [p for p in report.players if p.decisions]
    if not players:
        return None
    edges = report.regret_edges
    fig, ax = plt.subplots(figsize=(9, 5), dpi=DPI, layout="constrained")
    for i, p in enumerate(players):
        share = 100 * p.regret_hist / p.decisions
        ax.stairs(
            share,
            edges,
            color=series_color(i),
            lw=1.6,
            label=f"{p.label} (zero regret: {100 * p.zero_regret / p.decisions:.1f} % of "
            f"{p.decisions:,} decisions; mean {p.regret_per_decision:.3f})",
        )
    hit = np.flatnonzero(sum(p.regret_hist for p in players))
    if hit.size:  # the decades that hold regrets, not the whole 1e-6 .. 1e3 span
        ax.set_xlim(edges[max(0, hit[0] - 2)], edges[min(edges.size - 1, hit[-1] + 3)])
    ax.set_xscale("log")
    ax.set_xlabel("regret of a decision (points, log scale; bins of 0.1 decade)")
    ax.set_ylabel("share of the player's decisions (%)")
    ax.set_title(_skill_title(report, "Regret per decision (non-zero regrets)"))
    ax.grid(alpha=0.3)
    # one player a row: two long labels side by side were wider than the figure (clipped at both edges)
    fig.legend(loc="outside lower center", ncols=1, fontsize="small")
    return fig


def _luck_scatter(ax: Any, players: Sequence[tuple[str, np.ndarray, np.ndarray, float, float]]) -> None:
    """Each player's (label, lucks, finals, mean, adjusted mean): its seat-games' luck (x) against
    final score (y), at most :data:`SCATTER_MAX` of them (a fixed random sample), and the line
    final = adjusted mean + luck."""
    rng = np.random.default_rng(0)
    for i, (label, x, y, mean, adjusted) in enumerate(players):
        if x.size > SCATTER_MAX:
            keep = np.sort(rng.choice(x.size, SCATTER_MAX, replace=False))
            x, y = x[keep], y[keep]
        ax.scatter(
            x,
            y,
            s=10 if x.size > 500 else 18,
            alpha=0.5 if x.size > 500 else 0.8,
            color=series_color(i),
            lw=0,
            label=f"{label} (mean {mean:.1f}, adjusted {adjusted:.1f})",
        )
        span = np.array([x.min(), x.max()])
        ax.plot(span, adjusted + span, color=series_color(i), lw=1, ls="--")
    ax.set_xlabel("luck of the game (points: the dice against their expectation)")
    ax.set_ylabel("final score (points)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")


def plot_luck_vs_score(report: SkillReportLike) -> Figure | None:
    """Per player, each seat-game's luck against its final score (:func:`_luck_scatter`)."""
    players = [p for p in report.players if p.games]
    if not players:
        return None
    fig, ax = plt.subplots(figsize=(8, 6), dpi=DPI, layout="constrained")
    _luck_scatter(ax, [(p.label, p.lucks, p.finals, p.mean, p.adjusted_mean) for p in players])
    ax.set_title(_skill_title(report, "Luck against final score (dashed: adjusted mean + luck)"))
    return fig


#: Pictures of ``yatzy-harness analyse``: file name -> function of a :class:`~harness.decisions.skill.SkillReport`.
SKILL_PLOTS = {
    "regret_per_decision.png": plot_regret_distribution,
    "luck_vs_score.png": plot_luck_vs_score,
}
