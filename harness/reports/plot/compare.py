"""Pictures of a paired comparison (``yatzy-harness compare``, :mod:`harness.reports.compare`):
both runs' score distributions with every paired difference (:func:`plot_comparison`), and
their game quality side by side (:func:`plot_compare_quality`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from harness.reports.plot.common import DPI, SIDE_COLORS, Figure, _errorbars, _finite, _rebin, _width, plt
from harness.reports.plot.game_quality import _quality_figure
from harness.reports.quality import change_text
from harness.util.render import num

if TYPE_CHECKING:
    from harness.reports.compare import ComparisonResult


def _sides(res: ComparisonResult) -> list[str]:
    return [f"BASE {res.base['path']}", f"CANDIDATE {res.candidate['path']}"]


def _compare_title(res: ComparisonResult, what: str) -> str:
    changed = ", ".join(f"{k} {a} -> {b}" for k, (a, b) in res.settings_changed.items())
    rules = (
        res.base["rules"]
        if res.base["rules"] == res.candidate["rules"]
        else f"{res.base['rules']} -> {res.candidate['rules']}"
    )
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
    shares = [
        (label, x)
        for label, x in (
            ("upper bonus rate", res.bonus_rate),
            ("yatzy rate", res.yatzy_rate),
            ("win rate", res.win_rate),
            ("draw rate", res.draw_rate),
        )
        if x
    ]
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
            c[h["min"] - lo : h["min"] - lo + counts.size] = counts
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
    panels = [
        (points, 1.0, f"candidate − base (points; bars: {conf} CI)"),
        (shares, 100.0, f"candidate − base (percentage points; bars: {conf} CI)"),
    ]
    panels = [p for p in panels if p[0]]
    heights = [len(p[0]) + 1.5 for p in panels]
    daxes = right.subplots(len(panels), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
    for ax, (rows, scale, xlabel) in zip(daxes, panels):
        y = np.arange(len(rows))
        _errorbars(
            ax,
            [x["diff"] for _, x in rows],
            [x["diff_ci"] for _, x in rows],
            y,
            "black",
            scale,
            filled=[_excludes_zero(x["diff_ci"]) for _, x in rows],
        )
        ax.axvline(0, color="grey", lw=0.8, ls="--")
        ax.set_yticks(y, [label for label, _ in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
    sc = res.score
    right.suptitle(
        f"Paired differences (solid: the interval excludes 0)\nscore "
        f"{num(sc['diff'], 3, sign=True, ci=sc['diff_ci'])} points; verdict {res.verdict.upper()}",
        fontsize="medium",
    )
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
        labels = [
            ("the run" if r["scope"] == "run" else r["scope"])
            + (" *" if r["significant"] else "")
            + f"\ndiff {change_text(m, r['diff'], r['diff_ci'])}"
            for r in rows
        ]
        panels.append(
            (
                m,
                labels,
                [[(r["base"], r["base_ci"]) for r in rows], [(r["candidate"], r["candidate_ci"]) for r in rows]],
            )
        )
    title = _compare_title(
        res,
        f"Game quality (bars: {100 * q['confidence']:.4g} % CI; * = change significant "
        f"at {q['alpha']:.3g} family-wise, Holm)",
    )
    return _quality_figure(panels, q["options"], _sides(res), title, q["why"], 0.75)


#: Pictures of ``yatzy-harness compare --out DIR``: file name -> function of a
#: :class:`~harness.reports.compare.ComparisonResult`.
COMPARE_PLOTS = {
    "compare.png": plot_comparison,
    "compare_quality.png": plot_compare_quality,
}
