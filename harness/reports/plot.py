"""Pictures: one function per plot of a :class:`~harness.reports.summary.RunSummary` (:data:`PLOTS`, written by
:func:`save_all_plots`), of a :class:`~harness.reports.compare.ComparisonResult` (:data:`COMPARE_PLOTS`), of an
analysis of game records (:data:`SKILL_PLOTS`), of a calibration and of difficulty levels;
:func:`save_plots` writes a set of them.

Every function returns a matplotlib ``Figure`` (Agg backend, no display needed) or ``None`` when
the picture does not apply (e.g. a head-to-head heatmap for a single entrant). Everything is drawn
from the streamed summaries (histograms, counts), never from raw rows.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

import matplotlib

matplotlib.use("Agg")  # files only: never needs a display, safe in workers and CI
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402

from harness.util.errors import UserError  # noqa: E402
from harness.reports.quality import RUN_METRICS, SHARES, change_text, definition  # noqa: E402
from harness.util.render import num  # noqa: E402
from harness.stats.common import z_crit  # noqa: E402

if TYPE_CHECKING:
    from harness.players.calibrate import Calibration
    from harness.reports.compare import ComparisonResult
    from harness.reports.summary import EntrantStats, LuckSection, RunSummary

DPI = 100
_COLORS = plt.get_cmap("tab10").colors


def _color(i: int) -> tuple[float, float, float]:
    return _COLORS[i % len(_COLORS)]


def _width(lo: int, hi: int) -> int:
    """A score bin width giving ~60-90 bins over [lo, hi] (Yatzy scores are spiky)."""
    return max(1, int(math.ceil((hi - lo + 1) / 80)))


def _bin_width(entrants: Sequence[EntrantStats]) -> int:
    """:func:`_width` over the entrants' joint score range."""
    return _width(min(e.hist.min for e in entrants), max(e.hist.max for e in entrants))


def _rebin(c: np.ndarray, width: int) -> np.ndarray:
    """Sums of consecutive runs of ``width`` counts (the last run padded with zeros)."""
    n_bins = int(math.ceil(c.size / width))
    return np.pad(c, (0, n_bins * width - c.size)).reshape(n_bins, width).sum(axis=1)


def _binned(e: EntrantStats, width: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(left edges, share of rows per bin) over [lo, hi]: float64 arrays."""
    c = np.zeros(hi + 1, dtype=np.int64)
    c[: e.hist.counts.size] = e.hist.counts[: hi + 1]
    c = _rebin(c[lo:], width)
    return lo + width * np.arange(c.size), c / max(1, e.hist.n)


def _title(summary: RunSummary, what: str) -> str:
    info = summary.info
    return f"{what}\n{info.rules.name} rules, {info.games:,} games per lineup"


def _legend_label(e: EntrantStats) -> str:
    return f"{e.label} (mean {e.hist.mean:.1f})"


def plot_score_histograms(summary: RunSummary) -> Figure | None:
    """Overlaid step histograms of final scores, one per entrant (share of games per bin)."""
    ents = [e for e in summary.entrants if e.rows]
    if not ents:
        return None
    w = _bin_width(ents)
    lo = min(e.hist.min for e in ents) // w * w
    hi = max(e.hist.max for e in ents)
    fig, ax = plt.subplots(figsize=(9, 5), dpi=DPI, layout="constrained")
    for i, e in enumerate(ents):
        edges, share = _binned(e, w, lo, hi)
        ax.stairs(100 * share, np.append(edges, edges[-1] + w), color=_color(i), lw=1.6,
                  label=_legend_label(e))
    ax.set_xlabel("final score (points)")
    ax.set_ylabel(f"share of games (%) per {w}-point bin")
    ax.set_title(_title(summary, "Score distribution"))
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncols=min(3, len(ents)), fontsize="small")  # never over a peak
    return fig


def plot_score_cdfs(summary: RunSummary) -> Figure | None:
    """Empirical CDFs of final scores, one per entrant."""
    ents = [e for e in summary.entrants if e.rows]
    if not ents:
        return None
    fig, ax = plt.subplots(figsize=(9, 5), dpi=DPI, layout="constrained")
    for i, e in enumerate(ents):
        cdf = e.hist.cdf()
        v = e.hist.values
        keep = slice(e.hist.min, e.hist.max + 1)
        ax.step(v[keep], 100 * cdf[keep], where="post", color=_color(i), lw=1.6, label=_legend_label(e))
    ax.set_xlabel("final score (points)")
    ax.set_ylabel("games scoring at most x (%)")
    ax.set_ylim(0, 100)
    ax.set_title(_title(summary, "Cumulative score distribution"))
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return fig


def plot_score_violins(summary: RunSummary) -> Figure | None:
    """Violin silhouettes (binned histogram, lightly smoothed) with a box of the 25-75th
    percentiles, the median, whiskers at the 5th/95th percentiles and the mean."""
    ents = [e for e in summary.entrants if e.rows]
    if not ents:
        return None
    w = _bin_width(ents)
    lo = min(e.hist.min for e in ents) // w * w
    hi = max(e.hist.max for e in ents)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(ents) + 2), 5.5), dpi=DPI, layout="constrained")
    kernel = np.array([1, 2, 3, 2, 1], dtype=float)
    kernel /= kernel.sum()
    for i, e in enumerate(ents):
        edges, share = _binned(e, w, lo, hi)
        dens = np.convolve(share, kernel, mode="same")
        centres = edges + w / 2
        half = 0.4 * dens / dens.max()
        nz = np.flatnonzero(dens > 0)
        sl = slice(nz[0], nz[-1] + 1)
        ax.fill_betweenx(centres[sl], i - half[sl], i + half[sl], color=_color(i), alpha=0.35, lw=0)
        p5, p25, p50, p75, p95 = e.hist.percentiles(np.array([5, 25, 50, 75, 95], dtype=float))
        ax.add_patch(plt.Rectangle((i - 0.08, p25), 0.16, p75 - p25, fill=False, ec="black", lw=1.2))
        ax.plot([i - 0.08, i + 0.08], [p50, p50], color="black", lw=2)
        ax.plot([i, i], [p5, p25], color="black", lw=1)
        ax.plot([i, i], [p75, p95], color="black", lw=1)
        ax.plot([i], [e.hist.mean], marker="D", color="white", mec="black", ms=6)
    ax.set_xticks(range(len(ents)), [e.label for e in ents],
                  rotation=20 if len(ents) > 3 else 0, ha="right" if len(ents) > 3 else "center")
    ax.set_xlim(-0.6, len(ents) - 0.4)
    ax.set_ylabel("final score (points)")
    ax.set_title(_title(summary, "Score distribution per entrant"))
    ax.grid(axis="y", alpha=0.3)

    handles = [Patch(color="grey", alpha=0.35, label="density"),
               Rectangle((0, 0), 1, 1, fill=False, ec="black", label="25th-75th percentile"),
               Line2D([], [], color="black", lw=2, label="median"),
               Line2D([], [], color="black", lw=1, label="5th / 95th percentile"),
               Line2D([], [], marker="D", color="white", mec="black", lw=0, label="mean")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return fig


def plot_box_means(summary: RunSummary) -> Figure | None:
    """Grouped horizontal bars: mean points per box for each entrant, with 95 % CIs."""
    ents = [e for e in summary.entrants if e.rows]
    if not ents:
        return None
    from scipy import stats as sps  # scipy.stats costs ~1 s to import: only for this plot

    boxes = summary.info.box_names
    k, nb = len(ents), len(boxes)
    z = float(sps.norm.ppf(0.5 + summary.confidence / 2))
    fig, ax = plt.subplots(figsize=(9, max(4.0, 0.22 * nb * k + 1.8)), dpi=DPI, layout="constrained")
    h = 0.8 / k
    y = np.arange(nb)
    for i, e in enumerate(ents):
        ci = z * e.box_stds() / math.sqrt(max(1, e.rows))
        ax.barh(y - 0.4 + h * (i + 0.5), e.box_means(), height=h, xerr=ci, color=_color(i), label=e.label,
                error_kw={"elinewidth": 0.8, "capsize": 1.5})
    ax.set_yticks(y, [b.replace("_", " ") for b in boxes])
    ax.invert_yaxis()  # sheet order, top to bottom
    ax.set_xlabel(f"mean points in the box (bars: {100 * summary.confidence:.4g} % CI)")
    ax.set_title(_title(summary, "Mean score per box"))
    ax.grid(axis="x", alpha=0.3)
    fig.legend(loc="outside lower center", ncols=min(4, k), fontsize="small")
    return fig


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
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=9,
                        color="white" if abs(v - 50) > 30 else "black")
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
    ax.errorbar(elo, y, xerr=err, fmt="o", color=_color(0), ecolor="black", capsize=4)
    for i, x in enumerate(rows):  # a rating set by the prior (a sweep) is a bound: point the way it could go
        marker = {"lower": ">", "upper": "<"}.get(x.get("bound") or "")
        if marker:
            ax.plot(x["hi" if marker == ">" else "lo"], i, marker=marker, color="firebrick", ms=9, ls="none")
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    names = [x["name"] + (" (bound)" if x.get("bound") else "") for x in rows]
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    bounds = ";\nred arrow: a bound (won or lost every game against someone)" if any(x.get("bound") for x in rows) else ""
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
    ax.errorbar([diff], [0], xerr=[[half], [half]], fmt="o", color=_color(0), ecolor="black", capsize=4)
    marker = {"lower": ">", "upper": "<"}.get(r.bound(i) or "")  # a won (lost) every game: a bound
    if marker:
        ax.plot(diff + (half if marker == ">" else -half), 0, marker=marker, color="firebrick", ms=9, ls="none")
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_yticks([0], [f"{a} vs {b}" + (" (bound)" if marker else "")])
    ax.set_ylim(-1, 1)
    bound = ";\nred arrow: a bound (one entrant won every game)" if marker else ""
    ax.set_xlabel(f"Elo difference, {a} − {b} (bar: {100 * r.confidence:.4g} % CI; the ratings are ± half of it"
                  f"{bound})")
    ax.set_title(_title(summary, "Bradley-Terry rating of the one pairing"))
    ax.grid(axis="x", alpha=0.3)
    return fig


def plot_luck_adjusted(summary: RunSummary) -> Figure | None:
    """Per entrant, the plain mean score and the luck-adjusted mean (total - luck) with their CIs."""
    sec = next((x for x in summary.sections if x.key == "luck"), None)
    rows = sec.to_dict()["luck"] if sec is not None else []
    if not rows:
        return None
    k = len(rows)
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.6 * k + 1.6)), dpi=DPI, layout="constrained")
    y = np.arange(k)
    for off, key, ci, label, color in ((-0.15, "mean", "mean_ci", "mean score", _color(0)),
                                       (0.15, "adjusted_mean", "adjusted_ci", "luck-adjusted (total - luck)",
                                        _color(1))):
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
    ax.set_xlabel(f"luck of the game (points: the dice against their expectation; the first {sec.SCATTER:,} "
                  "games per entrant)")
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
        ax.stairs(share, edges, color=_color(i), lw=1.6,
                  label=f"{r['strategy']} (mean {r['regret_per_game']:.2f} a game, {r['rating']})")
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


# ---------------------------------------------------------------------------------------------
# game quality (harness.reports.quality): one panel per metric, a marker and its interval per side


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

#: The sides of a comparison: label and colour (BASE, CANDIDATE); a report has one side.
SIDE_COLORS = (_color(0), _color(1))


def _finite(x: Any) -> bool:
    return x is not None and math.isfinite(x)


def _errorbars(ax: Any, xs: Sequence[Any], cis: Sequence[Any], ys: np.ndarray, color: Any, scale: float,
               label: str | None = None, filled: Sequence[bool] | None = None) -> None:
    """Horizontal markers at ``xs`` (times ``scale``) on rows ``ys`` with their intervals ``cis``;
    a point without a value is left out, one without an interval drawn bare. ``filled``: a
    marker per point, solid where True (hollow otherwise)."""
    for i, (x, ci, y) in enumerate(zip(xs, cis, ys)):
        if not _finite(x):
            continue
        err = None
        if ci and _finite(ci[0]) and _finite(ci[1]):
            err = [[max(0.0, (x - ci[0]) * scale)], [max(0.0, (ci[1] - x) * scale)]]
        solid = True if filled is None else filled[i]
        ax.errorbar([x * scale], [y], xerr=err, fmt="o", ms=6, color=color, mfc=color if solid else "white",
                    ecolor=color, capsize=4, label=label)
        label = None  # one legend entry per series


#: A panel's axis counts as zoomed in when it magnifies its values by more than this against an axis
#: from 0 (its end farther from 0 over its span): 1.65 to 1.79 lead changes is 13 times, 0.72 to 22.6 %
#: of close games 1.03 times, as good as drawn from 0.
ZOOM = 1.25


def _zoom_note(ax: Any) -> str:
    """A second line for the x label of a panel whose axis is zoomed in (:data:`ZOOM`): the axis's
    ends. Each panel scales to its own interval, so without it 1.66 to 1.78 lead changes a game
    looked like a wide interval (issue 37)."""
    lo, hi = ax.get_xlim()  # the autoscaled limits, every marker and bar drawn
    if lo <= 0 <= hi or max(abs(lo), abs(hi)) <= ZOOM * (hi - lo):
        return ""
    return f"\n(zoomed: axis {lo:.3g} to {hi:.3g}, not from 0)"


def _quality_figure(panels: Sequence[tuple[str, list[str], list[list[tuple[Any, Any]]]]], options: Mapping[str, Any],
                    sides: Sequence[str], title: str, why: Mapping[str, str], row_height: float) -> Figure:
    """One axes per metric: ``(metric, row labels, per side the (value, interval) of each row)``,
    two columns when there are more than two; with two sides (BASE, CANDIDATE) each row holds
    both, BASE above, and a legend names them. The metrics ``why`` gives a reason for and that
    have no panel are named under the panels."""
    ncols = 2 if len(panels) > 2 else 1
    nrows = int(math.ceil(len(panels) / ncols))
    heights = [max(len(p[1]) for p in panels[r * ncols:(r + 1) * ncols]) + 1.2 for r in range(nrows)]
    fig = plt.figure(figsize=(12 if ncols == 2 else 7, 1.6 + row_height * sum(heights)), dpi=DPI,
                     layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, gridspec_kw={"height_ratios": heights}).ravel()
    offsets = np.linspace(-0.18, 0.18, len(sides)) if len(sides) > 1 else np.zeros(1)
    for ax, (metric, labels, per_side) in zip(axes, panels):
        scale = 100.0 if metric in SHARES else 1.0
        y = np.arange(len(labels))
        for k, (side, rows) in enumerate(zip(sides, per_side)):
            _errorbars(ax, [v for v, _ in rows], [ci for _, ci in rows], y + offsets[k], SIDE_COLORS[k], scale,
                       label=side)
        ax.set_yticks(y, labels)
        ax.set_ylim(len(labels) - 0.5, -0.5)  # first row on top
        if metric == "first_mover_edge":
            ax.axvline(0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(QUALITY_UNITS[metric] + _zoom_note(ax))
        # wrapped to the panel: a definition one line long ran into the next panel's title
        ax.set_title(textwrap.fill(f"{metric}: {definition(metric, options)}", 56), fontsize="small", loc="left")
        ax.grid(axis="x", alpha=0.3)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(title)
    skipped = [f"{m} ({r})" for m, r in why.items() if not any(p[0] == m for p in panels)]
    note = textwrap.fill("does not apply: " + "; ".join(skipped), 150) if skipped else None
    if len(sides) > 1:  # the note heads the legend: a supxlabel would sit on it
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=len(sides),
                   fontsize="small", title=note, title_fontsize="small")
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
        panels.append(("skill_share", [e["strategy"] for e in ents], [[(e["skill_share"], e["skill_share_ci"])
                                                                      for e in ents]]))
    if q["pairings"]:
        panels.append(("upset_rate", [f"{p['name']} (weaker: {p['weaker']})" for p in q["pairings"]],
                       [[(p["upset_rate"], p["upset_ci"]) for p in q["pairings"]]]))
    if not panels:
        return None
    return _quality_figure(panels, q["options"], ["the run"],
                           _title(summary, f"Game quality (bars: {100 * q['confidence']:.4g} % CI over game indices)"),
                           q["why"], 0.55)


#: Pictures of each report section (keyed by :attr:`harness.reports.summary.Section.key`): file name -> function.
PLOTS = {
    "entrants": {
        "score_histogram.png": plot_score_histograms,
        "score_cdf.png": plot_score_cdfs,
        "score_violin.png": plot_score_violins,
        "box_means.png": plot_box_means,
    },
    "luck": {
        "luck_adjusted.png": plot_luck_adjusted,
        "regret_per_game.png": plot_run_regret,
        "luck_vs_score.png": plot_run_luck_vs_score,
    },
    "head_to_head": {
        "head_to_head.png": plot_head_to_head,
        "ratings.png": plot_ratings,
    },
    "quality": {
        "quality.png": plot_quality,
    },
}


# ---------------------------------------------------------------------------------------------
# paired comparisons (``yatzy-harness compare``, :mod:`harness.reports.compare`)


def _sides(res: ComparisonResult) -> list[str]:
    return [f"BASE {res.base['path']}", f"CANDIDATE {res.candidate['path']}"]


def _compare_title(res: ComparisonResult, what: str) -> str:
    changed = ", ".join(f"{k} {a} -> {b}" for k, (a, b) in res.settings_changed.items())
    rules = res.base["rules"] if res.base["rules"] == res.candidate["rules"] else \
        f"{res.base['rules']} -> {res.candidate['rules']}"
    paired = "paired on the same dice" if res.paired else "UNPAIRED (different seeds)"
    return f"{what}\n{rules} rules{': ' + changed if changed else ''}; {res.games:,} games, {paired}"


def _group_name(h: Mapping[str, Any]) -> str:
    return h["base"] if h["base"] == h["candidate"] else f"{h['base']} -> {h['candidate']}"


#: A differences panel's rows: (label, the dict of one paired difference).
_Rows = list[tuple[str, Mapping[str, Any]]]


def _differences(res: ComparisonResult) -> tuple[_Rows, _Rows]:
    """The paired differences ``compare`` gives intervals for: (in points: the score, plain and
    luck-adjusted, and every box; in shares: the rates), as (label, its dict) in text order."""
    points = [("score, luck-adjusted" if res.luck.get("adjusted") else "score", res.score)]
    if res.luck.get("adjusted"):
        points.append(("score, plain", res.score_plain))
    points += [(f"box {b['box'].replace('_', ' ')}", b) for b in res.boxes]
    shares = [(label, x) for label, x in (("upper bonus rate", res.bonus_rate), ("yatzy rate", res.yatzy_rate),
                                          ("win rate", res.win_rate), ("draw rate", res.draw_rate)) if x]
    return points, shares


def _excludes_zero(ci: Sequence[Any]) -> bool:
    return bool(ci) and _finite(ci[0]) and _finite(ci[1]) and (ci[0] > 0 or ci[1] < 0)


def plot_comparison(res: ComparisonResult) -> Figure | None:
    """``compare.png``: on the left, per group of compared seats (one per bot when the seats hold
    several), BASE's and CANDIDATE's score distributions overlaid (share of the group's
    seat-games per bin); on the right, every paired difference (candidate − base) with its
    interval, in points (score and boxes) and in percentage points (rates). A solid marker's
    interval excludes 0."""
    hists = res.score_histograms
    if not hists:
        return None
    points, shares = _differences(res)
    k = len(hists)
    n_rows = len(points) + len(shares)
    fig = plt.figure(figsize=(14, max(5.5, 2.4 * k + 1.6, 0.3 * n_rows + 3.0)), dpi=DPI, layout="constrained")
    left, right = fig.subfigures(1, 2, width_ratios=[1.2, 1])
    lo = min(h["min"] for h in hists)
    hi = max(h["min"] + len(h["base_counts"]) - 1 for h in hists)
    w = _width(lo, hi)
    lo = lo // w * w
    axes = left.subplots(k, 1, sharex=True, squeeze=False)[:, 0]
    for ax, h in zip(axes, hists):
        top = 0.0
        for side, key, color in (("BASE", "base", SIDE_COLORS[0]), ("CANDIDATE", "candidate", SIDE_COLORS[1])):
            c = np.zeros(hi + 1 - lo, dtype=np.int64)
            counts = np.asarray(h[f"{key}_counts"], dtype=np.int64)
            c[h["min"] - lo:h["min"] - lo + counts.size] = counts
            share = 100 * _rebin(c, w) / max(1, h["rows"])
            edges = lo + w * np.arange(share.size + 1)
            ax.stairs(share, edges, color=color, lw=1.6, label=f"{side} (mean {h[f'{key}_mean']:.2f})")
            top = max(top, float(share.max()))
        ax.set_ylim(0, 1.35 * top if top > 0 else 1.0)  # headroom for the legend
        ax.set_ylabel(f"seat-games (%) per {w}-point bin")
        ax.set_title(f"{_group_name(h)}: {h['rows']:,} seat-games a run", fontsize="medium", loc="left")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize="small")
    axes[-1].set_xlabel("final score (points)")
    left.suptitle("Score distributions of the compared seats", fontsize="medium")

    conf = f"{100 * res.confidence:.4g} %"
    panels = [(points, 1.0, f"candidate − base (points; bars: {conf} CI)"),
              (shares, 100.0, f"candidate − base (percentage points; bars: {conf} CI)")]
    panels = [p for p in panels if p[0]]
    heights = [len(p[0]) + 1.5 for p in panels]
    daxes = right.subplots(len(panels), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
    for ax, (rows, scale, xlabel) in zip(daxes, panels):
        y = np.arange(len(rows))
        _errorbars(ax, [x["diff"] for _, x in rows], [x["diff_ci"] for _, x in rows], y, "black", scale,
                   filled=[_excludes_zero(x["diff_ci"]) for _, x in rows])
        ax.axvline(0, color="grey", lw=0.8, ls="--")
        ax.set_yticks(y, [label for label, _ in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
    sc = res.score
    right.suptitle(f"Paired differences (solid: the interval excludes 0)\nscore "
                   f"{num(sc['diff'], 3, sign=True, ci=sc['diff_ci'])} points; verdict {res.verdict.upper()}",
                   fontsize="medium")
    fig.suptitle(_compare_title(res, f"Compare {res.base['path']} -> {res.candidate['path']}"))
    return fig


def plot_compare_quality(res: ComparisonResult) -> Figure | None:
    """``compare_quality.png``: every game-quality metric both runs have (:mod:`harness.reports.quality`),
    BASE's and CANDIDATE's value with its interval side by side, one panel per metric; ``*`` marks
    a change significant family-wise (Holm)."""
    q = res.quality
    if not q or not q["metrics"]:
        return None
    by_metric: dict[str, list[Mapping[str, Any]]] = {}
    for r in q["metrics"]:
        by_metric.setdefault(r["metric"], []).append(r)
    panels = []
    for m, rows in by_metric.items():
        labels = [("the run" if r["scope"] == "run" else r["scope"]) + (" *" if r["significant"] else "")
                  + f"\ndiff {change_text(m, r['diff'], r['diff_ci'])}" for r in rows]
        panels.append((m, labels, [[(r["base"], r["base_ci"]) for r in rows],
                                   [(r["candidate"], r["candidate_ci"]) for r in rows]]))
    title = _compare_title(res, f"Game quality (bars: {100 * q['confidence']:.4g} % CI; * = change significant "
                                f"at {q['alpha']:.3g} family-wise, Holm)")
    return _quality_figure(panels, q["options"], _sides(res), title, q["why"], 0.75)


#: Pictures of ``yatzy-harness compare --out DIR``: file name -> function of a
#: :class:`~harness.reports.compare.ComparisonResult`.
COMPARE_PLOTS = {
    "compare.png": plot_comparison,
    "compare_quality.png": plot_compare_quality,
}


# ---------------------------------------------------------------------------------------------
# luck and skill of game records (``yatzy-harness analyse``, :mod:`harness.decisions.skill`)


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
        ax.stairs(share, edges, color=_color(i), lw=1.6,
                  label=f"{p.label} (zero regret: {100 * p.zero_regret / p.decisions:.1f} % of "
                        f"{p.decisions:,} decisions; mean {p.regret_per_decision:.3f})")
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
        ax.scatter(x, y, s=10 if x.size > 500 else 18, alpha=0.5 if x.size > 500 else 0.8, color=_color(i), lw=0,
                   label=f"{label} (mean {mean:.1f}, adjusted {adjusted:.1f})")
        span = np.array([x.min(), x.max()])
        ax.plot(span, adjusted + span, color=_color(i), lw=1, ls="--")
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


def save_plots(plots: Mapping[str, Callable[[Any], Figure | None]], what: Any, out_dir: str | Path) -> list[Path]:
    """Draw each of ``plots`` (file name -> function) of ``what`` and write the applicable ones as
    PNG into ``out_dir`` (made if missing); returns the paths written. A directory that cannot
    be made or written is a :class:`UserError` naming it."""
    out = Path(out_dir)
    written = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, fn in plots.items():
            fig = fn(what)
            if fig is None:
                continue
            path = out / name
            try:
                fig.savefig(path)
            finally:
                plt.close(fig)
            written.append(path)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename and str(exc.filename) != str(out) else ""
        raise UserError(f"cannot write the pictures to {out}: {where}{exc.strerror or exc}") from None
    return written


def save_all_plots(summary: RunSummary, out_dir: str | Path) -> list[Path]:
    """Write every applicable picture of the summary's sections as PNG into ``out_dir``; returns the paths written."""
    return save_plots({n: f for sec in summary.sections for n, f in PLOTS.get(sec.key, {}).items()}, summary, out_dir)


# ---------------------------------------------------------------------------------------------
# calibration (harness.players.calibrate) and difficulty levels (harness.players.levels)


#: Consecutive evaluations are joined by a line only when they are at most this share of the
#: evaluated range apart: a straight line through two or three far-apart points hides the curve.
DENSE = 0.1


def dense_segments(x: Sequence[float]) -> list[tuple[int, int]]:
    """(start, stop) index ranges of sorted ``x`` measured densely enough to draw a connecting
    curve through (neighbours at most :data:`DENSE` of the whole range apart, 3 points at least)."""
    x = np.asarray(x, dtype=float)
    if x.size < 3:
        return []
    span = float(x[-1] - x[0])
    if span <= 0:
        return []
    near = np.diff(x) <= DENSE * span
    out, start = [], None
    for i, ok in enumerate(near):
        if ok and start is None:
            start = i
        if not ok and start is not None:
            out.append((start, i + 1))
            start = None
    if start is not None:
        out.append((start, x.size))
    return [(a, b) for a, b in out if b - a >= 3]


def _curve(ax: Any, x: np.ndarray, y: np.ndarray) -> None:
    for a, b in dense_segments(x):
        ax.plot(x[a:b], y[a:b], color="tab:blue", lw=1, alpha=0.6)


def _bridges(ax: Any, x: np.ndarray, y: np.ndarray) -> None:
    """Dotted straight lines across the stretches :func:`_curve` leaves out (neighbours far apart),
    so that the response is followed over every evaluated value without passing for measured there."""
    dense = np.zeros(max(0, x.size - 1), dtype=bool)
    for a, b in dense_segments(x):
        dense[a:b - 1] = True
    for k, i in enumerate(np.flatnonzero(~dense)):
        ax.plot(x[i:i + 2], y[i:i + 2], color="tab:blue", lw=1, alpha=0.6, ls=":",
                label="straight between far-apart values (not measured)" if k == 0 else None)


def plot_response(cal: Calibration) -> Figure:
    """The response curve: evaluated points with CIs, the target, and the solution with its interval.
    The points are joined over the whole evaluated range: solid where they are dense enough to show
    the curve, dotted (a straight line, not a measurement) across the stretches between far-apart
    ones; the y axis names the estimator when it is not the plain mean or rate."""
    p = cal.problem
    pts = sorted((q for q in cal.points), key=lambda q: q.value)
    scale = 1.0 if p.kind == "mean" else 100.0
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100, layout="constrained")
    x = np.array([q.value for q in pts])
    y = np.array([q.f for q in pts]) * scale
    err = np.array([[q.f - q.lo for q in pts], [q.hi - q.f for q in pts]]) * scale
    _curve(ax, x, y)
    _bridges(ax, x, y)
    each = f"{p.games:,} games each" if p.kind == "mean" else f"{p.games:,} game pairs (seats swapped) each"
    ax.errorbar(x, y, yerr=err, fmt="o", color="tab:blue", ecolor="black", capsize=3,
                label="exact response (no games)" if p.exact else f"measured ({100 * p.confidence:.4g} % CI), {each}")
    unit = " points" if p.kind == "mean" else " %"
    ax.axhline(p.target * scale, color="tab:red", ls="--", lw=1, label=f"target {p.target * scale:g}{unit}")
    if math.isfinite(cal.value):
        xerr = None
        if all(math.isfinite(v) for v in cal.value_ci):
            xerr = [[cal.value - cal.value_ci[0]], [cal.value_ci[1] - cal.value]]
        ax.errorbar([cal.value], [p.target * scale], xerr=xerr, fmt="*", ms=14, color="tab:red",
                    ecolor="tab:red", capsize=5, label=f"{p.param} = {cal.value:.4g}")
    ax.set_xlabel(f"{p.param} (parameter of {p.strategy})")
    # loaded already: a Calibration comes from it
    from harness.players.calibrate import ADJUSTED_MEAN, CONTROLLED_RATE

    # the points' estimator: an analysed run's mean is total - luck (same expectation, a fraction of
    # the variance), which the axis must not call the mean score (issue 37)
    estimators = {q.estimator for q in pts}
    if p.kind == "mean":
        adjusted = ADJUSTED_MEAN in estimators
        ax.set_ylabel(("luck-adjusted mean final score (points; total − luck" + (")" if len(estimators) == 1 else
                                                                                "; some points plain)"))
                      if adjusted else "mean final score (points)")
        what = "luck-adjusted mean score" if adjusted else "mean score"
    else:
        ax.set_ylabel(f"score rate against {p.against} (%; win 1, draw 1/2"
                      + ("; luck difference as control variate)" if CONTROLLED_RATE in estimators else ")"))
        what = f"win rate against {p.against}"
    rules = Path(p.rules).stem if p.rules.endswith(".toml") else p.rules
    changed = f" ({', '.join(p.settings)})" if p.settings else ""
    how = f"exact, to {p.v_tol:g} in {p.param}" if p.exact else f"seed {p.seed}, same games at every value"
    ax.set_title(f"Calibration of {p.strategy} {p.param}: {what}\n{rules} rules{changed}, {how}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return fig


def plot_levels(d: Mapping[str, Any]) -> Figure:
    """The response curve(s) with every level's target, calibrated value and independent check."""
    kinds = [k for k in ("win_rate", "mean") if k in d["curves"]]
    fig, axes = plt.subplots(1, len(kinds), figsize=(7 * len(kinds), 5), dpi=100, layout="constrained", squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        scale = 100.0 if kind == "win_rate" else 1.0
        pts = d["curves"][kind]
        x = np.array([q["value"] for q in pts])
        y = np.array([q["response"] for q in pts]) * scale
        err = np.array([[q["response"] - q["ci"][0] for q in pts], [q["ci"][1] - q["response"] for q in pts]]) * scale
        _curve(ax, x, y)  # the points always; a line only where they are dense enough to show the curve
        ax.errorbar(x, y, yerr=err, fmt="o", ms=4, color="tab:blue", ecolor="black", capsize=2,
                    label="exact responses (no games)" if d.get("exact")
                    else f"measured, {d['games']:,} games each, seed {d['seed']}")
        for i, lv in ((i, r) for i, r in enumerate(d["levels"]) if r["target"]["kind"] == kind):
            c = f"C{(i + 1) % 10}"  # one colour per level across the panels
            t = lv["target"]["value"] * scale
            ax.axhline(t, color=c, ls="--", lw=0.8)
            lo, hi = lv["value_ci"]
            xerr = None if lo is None else [[lv["value"] - lo], [hi - lv["value"]]]
            ax.errorbar([lv["value"]], [t], xerr=xerr, fmt="*", ms=13, color=c, ecolor=c, capsize=4,
                        label=f"{lv['name']}: {d['param']} = {lv['value']:.4g}")
            ck = lv["check"]
            if ck is None:  # exact levels: the response at the value is the target, no check to draw
                continue
            ax.errorbar([lv["value"]], [ck["response"] * scale],
                        yerr=[[(ck["response"] - ck["ci"][0]) * scale], [(ck["ci"][1] - ck["response"]) * scale]],
                        fmt="D", ms=5, mfc="white", color=c, capsize=3)
        ax.set_xlabel(f"{d['param']} (parameter of {d['strategy']})")
        ax.set_ylabel(f"score rate against {d['against']} (%; win 1, draw 1/2)" if kind == "win_rate"
                      else "mean final score (points)")
        ax.set_title(f"Difficulty levels on {Path(d['rules']).stem} rules: " +
                     ("win rate" if kind == "win_rate" else "mean score") +
                     ("\n(stars: level, exact)" if d.get("exact")
                      else "\n(stars: calibrated level; diamonds: check on independent games)"), fontsize="medium")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="best")
    return fig


def plot_log_levels(d: Mapping[str, Any]) -> Figure:
    """Levels tuned against game logs (:meth:`harness.players.opponents.LogLevels.to_dict`): each level's
    exact response over the dial values evaluated, its target and its value with its interval
    (score rates in one panel, mean scores in another)."""
    groups = [[lv for lv in d["levels"] if (lv["target"]["kind"] == "mean") == mean] for mean in (False, True)]
    groups = [g for g in groups if g]
    fig, axes = plt.subplots(1, len(groups), figsize=(7 * len(groups), 5), dpi=DPI, layout="constrained",
                             squeeze=False)
    colour = {lv["name"]: _color(i) for i, lv in enumerate(d["levels"])}
    for ax, group in zip(axes[0], groups):
        mean = group[0]["target"]["kind"] == "mean"
        scale = 1.0 if mean else 100.0
        for lv in group:
            c = colour[lv["name"]]
            pts = d["curves"][lv["name"]]
            x = np.array([q["value"] for q in pts])
            ax.plot(x, np.array([q["response"] for q in pts]) * scale, "o-", ms=3, lw=1, color=c, alpha=0.7)
            t = lv["response"] * scale
            ax.axhline(t, color=c, ls="--", lw=0.8)
            lo, hi = lv["value_ci"]
            ok = lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi)
            kind = lv["target"]["kind"]
            what = {"mean": "mean", "beats": "ties the marginal player", "win_rate": "score rate"}[kind]
            ax.errorbar([lv["value"]], [t], xerr=[[lv["value"] - lo], [hi - lv["value"]]] if ok else None, fmt="*",
                        ms=13, color=c, ecolor=c, capsize=4,
                        label=f"{lv['name']} ({what}{', ' + lv['target']['band'] if lv['target']['band'] else ''}): "
                              f"{d['param']} = {lv['value']:.4g}")
        ax.set_xlabel(f"{d['param']} (parameter of {d['strategy']})")
        ax.set_ylabel("mean final score (points)" if mean else "score rate against the logged games (%)")
        ax.set_title(f"Levels against {Path(str(d['against_records']['source'])).name} on {Path(d['rules']).stem}"
                     "\n(exact responses; stars: levels, with the dial's interval)", fontsize="medium")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="best")
    return fig


def plot_held_out(d: Mapping[str, Any]) -> Figure:
    """The held-out check of levels tuned against game logs: per level and group (every player,
    each skill band), the score rate predicted on the tuning half against the one measured on the
    checking half, both with their intervals, on the diagonal when the prediction holds."""
    fig, ax = plt.subplots(figsize=(6.5, 6), dpi=DPI, layout="constrained")
    checks = [c for c in d["held_out"]["checks"] if c["predicted"] and c["measured"]]
    names = list(dict.fromkeys(c["level"] for c in checks))
    bands = list(dict.fromkeys(c["band"] or "all" for c in checks))
    marks = "os^Dv<>P"
    for c in checks:
        p, m = c["predicted"], c["measured"]
        x, y = 100 * p["score_rate"], 100 * m["score_rate"]
        err = [[100 * (v["score_rate"] - v["ci"][0])] if v["ci"][0] is not None else [0.0] for v in (p, m)]
        hi = [[100 * (v["ci"][1] - v["score_rate"])] if v["ci"][1] is not None else [0.0] for v in (p, m)]
        ax.errorbar([x], [y], xerr=[err[0], hi[0]], yerr=[err[1], hi[1]], fmt=marks[bands.index(c["band"] or "all")
                                                                                % len(marks)],
                    color=_color(names.index(c["level"])), ms=6, capsize=2, lw=0.8)
    ax.axline((50, 50), slope=1, color="grey", ls="--", lw=0.8)
    handles = [Line2D([], [], color=_color(i), lw=2, label=n) for i, n in enumerate(names)]
    handles += [Line2D([], [], color="black", ls="", marker=marks[i % len(marks)], label=b) for i, b in enumerate(bands)]
    ax.legend(handles=handles, fontsize="small", loc="best")
    ax.set_xlabel("predicted: score rate against the tuning half (%)")
    ax.set_ylabel("measured: score rate against the checking half (%)")
    ho = d["held_out"]
    ax.set_title(f"Held-out check: players split with seed {ho['seed']} ({len(ho['tuning_players'])} tune, "
                 f"{len(ho['checking_players'])} check)\none point per level (colour) and group (marker)",
                 fontsize="medium")
    ax.grid(alpha=0.3)
    return fig


def plot_exact_distributions(evaluations: Sequence[Any]) -> Figure:
    """The exact final-score distributions of several bots (:class:`harness.exact.evaluate.Evaluation`), overlaid."""
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=DPI)
    for i, e in enumerate(evaluations):
        p = np.asarray(e.distribution)
        nz = np.flatnonzero(p > 1e-9)
        if nz.size:
            s = np.arange(nz[0], nz[-1] + 1)
            ax.plot(s, p[s], color=_color(i), lw=1.2, label=f"{e.bot} (mean {e.mean:.1f})")
    ax.set_xlabel("final score")
    ax.set_ylabel("P(score)")
    ax.set_title(f"Exact score distributions, {evaluations[0].rules}" if evaluations else "Exact score distributions")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_depth(depth: Any) -> Figure:
    """The chains of a :class:`harness.exact.chain.DepthOfSkill`: each level's exact mean and dial value."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.5), dpi=DPI, layout="constrained")
    for i, c in enumerate(depth.chains):
        lv = c.levels
        ax.plot([x.index for x in lv], [x.mean for x in lv], "o-", color=_color(i), ms=4,
                label=f"p = {100 * c.p:.0f} %: {c.steps:.2f} steps")
        dial = [x for x in lv if x.value is not None]
        bx.plot([x.index for x in dial], [x.value for x in dial], "o-", color=_color(i), ms=4,
                label=f"p = {100 * c.p:.0f} %")
    ax.set_xlabel("level (0 = the weakest bot)")
    ax.set_ylabel("exact mean final score")
    ax.set_title(f"Depth of skill, {depth.rules}: each level scores p against the one below", fontsize="medium")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    param = depth.dial.param
    bx.set_xlabel("level")
    bx.set_ylabel(f"{param} of the level ({depth.dial.name})")
    if param == "temperature":
        bx.set_yscale("symlog", linthresh=0.5)
    bx.set_title(textwrap.fill(f"the ladder: {depth.ladder()}", 70), fontsize="small")
    bx.legend(fontsize="small")
    bx.grid(alpha=0.3)
    return fig


#: A sweep's figures: file stem -> (y label, what each series is).
SWEEP_PLOTS = {"sweep_means": "exact mean final score", "sweep_p_bonus": "P(upper bonus) (%)",
               "sweep_head_to_head": "A's exact score rate against B (%)", "sweep_depth": "depth of skill (steps)"}


def _sweep_series(sweep: Any) -> dict[str, list[tuple[str, list[float]]]]:
    """Per figure of :data:`SWEEP_PLOTS`, its series (label, value at every cell)."""
    cells = sweep.cells
    out: dict[str, list[tuple[str, list[float]]]] = {
        "sweep_means": [(b, [c.evaluations[i].mean for c in cells]) for i, b in enumerate(sweep.bots)],
        "sweep_p_bonus": [(b, [100 * c.evaluations[i].p_bonus for c in cells]) for i, b in enumerate(sweep.bots)],
        "sweep_head_to_head": [(f"{a} vs {b}", [100 * (c.pairs()[k][2] + 0.5 * c.pairs()[k][3]) for c in cells])
                               for k, (a, b, *_) in enumerate(cells[0].pairs())],
        "sweep_depth": [(f"p = {100 * p:.0f} %", [c.depth.chains[k].steps for c in cells])
                        for k, p in enumerate(sweep.rates)],
    }
    return {k: v for k, v in out.items() if v}


def plot_sweep(sweep: Any) -> dict[str, Figure]:
    """The figures of a :class:`harness.exact.sweep.Sweep` against its setting (lines; a heat map per
    series for two settings), by file stem."""
    figs = {}
    axes = sweep.axes
    title = f"{sweep.rules}: exact figures against {' and '.join(a.key for a in axes)}"
    for stem, series in _sweep_series(sweep).items():
        if len(axes) == 1:
            a = axes[0]
            x = list(a.values) if a.numeric else list(range(len(a.values)))
            fig, ax = plt.subplots(figsize=(8, 4.5), dpi=DPI, layout="constrained")
            for i, (label, y) in enumerate(series):
                ax.plot(x, y, "o-", ms=3, color=_color(i), label=label)
            if stem == "sweep_means":
                for i, b in enumerate(sweep.bots):
                    m = np.array([c.evaluations[i].mean for c in sweep.cells])
                    s = np.array([c.evaluations[i].std for c in sweep.cells])
                    ax.fill_between(x, m - s, m + s, color=_color(i), alpha=0.12, lw=0)
            if not a.numeric:
                ax.set_xticks(x, [str(v).lower() if isinstance(v, bool) else str(v) for v in a.values])
            ax.set_xlabel(a.key)
            ax.set_ylabel(SWEEP_PLOTS[stem] + (" (band: ± 1 sd)" if stem == "sweep_means" else ""))
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
            ax.set_title(title, fontsize="medium")
        else:
            a, b = axes
            n = len(series)
            fig, grid = plt.subplots(1, n, figsize=(5.5 * n, 4.5), dpi=DPI, layout="constrained", squeeze=False)
            for ax, (label, y) in zip(grid[0], series):
                z = np.array(y).reshape(len(a.values), len(b.values))
                im = ax.imshow(z, origin="lower", aspect="auto", cmap="viridis")
                ax.set_xticks(range(len(b.values)), [str(v) for v in b.values], rotation=90 if len(b.values) > 8 else 0)
                ax.set_yticks(range(len(a.values)), [str(v) for v in a.values])
                ax.set_xlabel(b.key)
                ax.set_ylabel(a.key)
                ax.set_title(label, fontsize="medium")
                fig.colorbar(im, ax=ax, label=SWEEP_PLOTS[stem])
            fig.suptitle(title, fontsize="medium")
        figs[stem] = fig
    return figs


# ---------------------------------------------------------------------------------------------
# player models (harness.players.fit)


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
    fig, axes = plt.subplots(1, 1 + len(params), figsize=(4.2 * (1 + len(params)), 4.2), dpi=DPI,
                             layout="constrained", squeeze=False)
    ax = axes[0, 0]
    rpd = np.array([players[x]["regret_per_decision"] for x in names])
    top = max(rpd.max(), 1e-9) * 1.05
    for b in pop["bands"]:
        mine = [players[x]["regret_per_decision"] for x in b["players"]]
        ax.hist(mine, bins=np.linspace(0, top, 25), color=_color(order.index(b["band"])), alpha=0.8,
                label=f"{b['band']} ({len(mine)})")
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
            ax.errorbar([players[x]["regret_per_decision"]], [v], yerr=[[v - lo], [hi - v]], fmt="o", ms=4,
                        color=_color(band_of[x]), capsize=2)
        ax.set_xlabel("regret per decision (points)")
        ax.set_ylabel(k.replace("_", " "))
        ax.set_title(f"{fit['model']}: {k.replace('_', ' ')} (95 % intervals)"
                     if fit["confidence"] == 0.95 else f"{fit['model']}: {k.replace('_', ' ')}", fontsize="medium")
        ax.grid(alpha=0.3)
    return fig
