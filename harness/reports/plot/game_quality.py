"""Pictures of game quality (:mod:`harness.reports.quality`; the report's ``quality`` section):
one panel per metric, a marker and its interval per side. :func:`_quality_figure` also draws
``compare``'s two sides (:mod:`harness.reports.plot.compare`)."""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from harness.reports.plot.common import DPI, SIDE_COLORS, Figure, _errorbars, _finite, _title, plt
from harness.reports.quality import RUN_METRICS, SHARES, definition

if TYPE_CHECKING:
    from harness.reports.summary import RunSummary


#: Axis label of each game-quality metric (shares drawn in %).
QUALITY_UNITS = {
    "first_mover_edge": "seat 0's win share − 1/seats (percentage points)",
    "lead_changes": "lead changes per game",
    "decisive_round": "round (1 = the winner never behind)",
    "close_games": "share of games (%)",
    "comeback_rate": "share of games (%)",
    "skill_share": "share of the variance of results (%)",
    "upset_rate": "share of the meetings (%)",
}


#: A panel's axis counts as zoomed in when it magnifies its values by more than this against an axis
#: from 0 (its end farther from 0 over its span): 1.65 to 1.79 lead changes is 13 times, 0.72 to 22.6 %
#: of close games 1.03 times, as drawn from 0.
ZOOM = 1.25


def _zoom_note(ax: Any) -> str:
    """A second line for the x label of a panel whose axis is zoomed in (:data:`ZOOM`): the axis's
    ends. Each panel scales to its own interval, so without it 1.66 to 1.78 lead changes a game
    looked like a wide interval (issue 37)."""
    lo, hi = ax.get_xlim()  # the autoscaled limits, every marker and bar drawn
    if lo <= 0 <= hi or max(abs(lo), abs(hi)) <= ZOOM * (hi - lo):
        return ""
    return f"\n(zoomed: axis {lo:.3g} to {hi:.3g}, not from 0)"


def _quality_figure(
    panels: Sequence[tuple[str, list[str], list[list[tuple[Any, Any]]]]],
    options: Mapping[str, Any],
    sides: Sequence[str],
    title: str,
    why: Mapping[str, str],
    row_height: float,
) -> Figure:
    """One axes per metric: ``(metric, row labels, per side the (value, interval) of each row)``,
    two columns when there are more than two; with two sides (BASE, CANDIDATE) each row holds
    both, BASE above, and a legend names them. The metrics ``why`` gives a reason for and that
    have no panel are named under the panels."""
    ncols = 2 if len(panels) > 2 else 1
    # one-row panels side by side, two a row; a panel of several rows (per entrant, per pairing) across
    # the width in a subfigure of its own, so its long labels do not squeeze the columns above it
    small = [p for p in panels if len(p[1]) == 1] if ncols == 2 else []
    big = [p for p in panels if len(p[1]) > 1] if ncols == 2 else list(panels)
    small_rows = int(math.ceil(len(small) / 2))
    heights = [2.2] * small_rows + [len(p[1]) + 1.2 for p in big]
    fig = plt.figure(figsize=(12 if ncols == 2 else 7, 1.6 + row_height * sum(heights)), dpi=DPI, layout="constrained")
    parts = [x for x in (small_rows and 2.2 * small_rows, sum(heights[small_rows:])) if x]
    subs = list(np.atleast_1d(fig.subfigures(len(parts), 1, height_ratios=parts))) if len(parts) > 1 else [fig]
    axes = []
    if small:
        axes += list(subs[0].subplots(small_rows, 2, squeeze=False).ravel())
        for ax in axes[len(small) :]:
            ax.set_visible(False)
        axes = axes[: len(small)]
    if big:
        axes += list(
            np.atleast_1d(
                subs[-1]
                .subplots(len(big), 1, squeeze=False, gridspec_kw={"height_ratios": heights[small_rows:]})
                .ravel()
            )
        )
    panels = small + big
    offsets = np.linspace(-0.18, 0.18, len(sides)) if len(sides) > 1 else np.zeros(1)
    for ax, (metric, labels, per_side) in zip(axes, panels):
        scale = 100.0 if metric in SHARES else 1.0
        y = np.arange(len(labels))
        for k, (side, rows) in enumerate(zip(sides, per_side)):
            _errorbars(
                ax, [v for v, _ in rows], [ci for _, ci in rows], y + offsets[k], SIDE_COLORS[k], scale, label=side
            )
        ax.set_yticks(y, labels)
        ax.set_ylim(len(labels) - 0.5, -0.5)  # first row on top
        if metric == "first_mover_edge":
            ax.axvline(0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(QUALITY_UNITS[metric] + _zoom_note(ax))
        # wrapped to the panel: a definition one line long ran into the next panel's title
        ax.set_title(textwrap.fill(f"{metric}: {definition(metric, options)}", 56), fontsize="small", loc="left")
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(title)
    skipped = [f"{m} ({r})" for m, r in why.items() if not any(p[0] == m for p in panels)]
    note = textwrap.fill("does not apply: " + "; ".join(skipped), 150) if skipped else None
    if len(sides) > 1:  # the note heads the legend: a supxlabel would sit on it
        fig.legend(
            *axes[0].get_legend_handles_labels(),
            loc="outside lower center",
            ncols=len(sides),
            fontsize="small",
            title=note,
            title_fontsize="small",
        )
    elif note:
        fig.supxlabel(note, fontsize="small")
    return fig


def plot_quality(summary: RunSummary) -> Figure | None:
    """The report's game-quality metrics (:class:`harness.reports.summary.QualitySection`), one panel per
    metric that applies: the run's value with its interval, per entrant (skill share) and per
    pairing (upset rate); the metrics that do not apply are named under the panels."""
    sec = next((x for x in summary.sections if x.key == "quality"), None)
    if sec is None:
        return None
    q = sec.to_dict()["quality"]
    panels = []
    for m in RUN_METRICS:
        if q.get(m):
            panels.append((m, ["the run"], [[(q[m]["value"], q[m]["ci"])]]))
    ents = [e for e in q["entrants"] if _finite(e.get("skill_share"))]
    if ents:
        panels.append(
            ("skill_share", [e["strategy"] for e in ents], [[(e["skill_share"], e["skill_share_ci"]) for e in ents]])
        )
    if q["pairings"]:
        panels.append(
            (
                "upset_rate",
                [f"{p['name']} (weaker: {p['weaker']})" for p in q["pairings"]],
                [[(p["upset_rate"], p["upset_ci"]) for p in q["pairings"]]],
            )
        )
    if not panels:
        return None
    return _quality_figure(
        panels,
        q["options"],
        ["the run"],
        _title(summary, f"Game quality (bars: {100 * q['confidence']:.4g} % CI over game indices)"),
        q["why"],
        0.55,
    )
