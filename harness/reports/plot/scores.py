"""Pictures of a run's score distributions (the report's ``entrants`` section): histograms,
cumulative distributions, violins per entrant, and the mean score per box."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from harness.reports.plot.common import DPI, Figure, _rebin, _title, _width, plt, series_color

if TYPE_CHECKING:
    from harness.reports.summary import EntrantStats, RunSummary


def _bin_width(entrants: Sequence[EntrantStats]) -> int:
    """:func:`_width` over the entrants' joint score range."""
    return _width(min(e.hist.min for e in entrants), max(e.hist.max for e in entrants))


def _score_bins(entrants: Sequence[EntrantStats]) -> tuple[int, int, int]:
    """(bin width, lo, hi): :func:`_bin_width` and the entrants' joint score range, ``lo`` on a bin edge."""
    w = _bin_width(entrants)
    return w, min(e.hist.min for e in entrants) // w * w, max(e.hist.max for e in entrants)


def _binned(e: EntrantStats, width: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(left edges, share of rows per bin) over [lo, hi]: float64 arrays."""
    c = np.zeros(hi + 1, dtype=np.int64)
    c[: e.hist.counts.size] = e.hist.counts[: hi + 1]
    c = _rebin(c[lo:], width)
    return lo + width * np.arange(c.size), c / max(1, e.hist.n)


def _legend_label(e: EntrantStats) -> str:
    return f"{e.label} (mean {e.hist.mean:.1f})"


def plot_score_histograms(summary: RunSummary) -> Figure | None:
    """Overlaid step histograms of final scores, one per entrant (share of games per bin)."""
    ents = [e for e in summary.entrants if e.rows]
    if not ents:
        return None
    w, lo, hi = _score_bins(ents)
    fig, ax = plt.subplots(figsize=(9, 5), dpi=DPI, layout="constrained")
    for i, e in enumerate(ents):
        edges, share = _binned(e, w, lo, hi)
        ax.stairs(100 * share, np.append(edges, edges[-1] + w), color=series_color(i), lw=1.6, label=_legend_label(e))
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
        ax.step(v[keep], 100 * cdf[keep], where="post", color=series_color(i), lw=1.6, label=_legend_label(e))
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
    w, lo, hi = _score_bins(ents)
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
        ax.fill_betweenx(centres[sl], i - half[sl], i + half[sl], color=series_color(i), alpha=0.35, lw=0)
        p5, p25, p50, p75, p95 = e.hist.percentiles(np.array([5, 25, 50, 75, 95], dtype=float))
        ax.add_patch(plt.Rectangle((i - 0.08, p25), 0.16, p75 - p25, fill=False, ec="black", lw=1.2))
        ax.plot([i - 0.08, i + 0.08], [p50, p50], color="black", lw=2)
        ax.plot([i, i], [p5, p25], color="black", lw=1)
        ax.plot([i, i], [p75, p95], color="black", lw=1)
        ax.plot([i], [e.hist.mean], marker="D", color="white", mec="black", ms=6)
    ax.set_xticks(
        range(len(ents)),
        [e.label for e in ents],
        rotation=20 if len(ents) > 3 else 0,
        ha="right" if len(ents) > 3 else "center",
    )
    ax.set_xlim(-0.6, len(ents) - 0.4)
    ax.set_ylabel("final score (points)")
    ax.set_title(_title(summary, "Score distribution per entrant"))
    ax.grid(axis="y", alpha=0.3)

    handles = [
        Patch(color="grey", alpha=0.35, label="density"),
        Rectangle((0, 0), 1, 1, fill=False, ec="black", label="25th-75th percentile"),
        Line2D([], [], color="black", lw=2, label="median"),
        Line2D([], [], color="black", lw=1, label="5th / 95th percentile"),
        Line2D([], [], marker="D", color="white", mec="black", lw=0, label="mean"),
    ]
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
        ax.barh(
            y - 0.4 + h * (i + 0.5),
            e.box_means(),
            height=h,
            xerr=ci,
            color=series_color(i),
            label=e.label,
            error_kw={"elinewidth": 0.8, "capsize": 1.5},
        )
    ax.set_yticks(y, [b.replace("_", " ") for b in boxes])
    ax.invert_yaxis()  # sheet order, top to bottom
    ax.set_xlabel(f"mean points in the box (bars: {100 * summary.confidence:.4g} % CI)")
    ax.set_title(_title(summary, "Mean score per box"))
    ax.grid(axis="x", alpha=0.3)
    fig.legend(loc="outside lower center", ncols=min(4, k), fontsize="small")
    return fig
