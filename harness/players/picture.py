"""The calibration's picture (``calibrate``'s ``calibration.png``) and the difficulty levels'
(``calibrate --levels``'s ``levels.png``, and against game logs its ``held_out.png``): the
response curve with its target and solution, each level's target, value and check. Drawn here,
in the players layer, with the reports' plot helpers (:mod:`harness.reports.plot.common`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib.lines import Line2D

from harness.players.calibrate import ADJUSTED_MEAN, CONTROLLED_RATE, Calibration
from harness.reports.plot.common import DPI, Figure, plt, series_color

__all__ = ["DENSE", "dense_segments", "plot_held_out", "plot_levels", "plot_log_levels", "plot_response", "plt"]

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
        dense[a : b - 1] = True
    for k, i in enumerate(np.flatnonzero(~dense)):
        ax.plot(
            x[i : i + 2],
            y[i : i + 2],
            color="tab:blue",
            lw=1,
            alpha=0.6,
            ls=":",
            label="straight between far-apart values (not measured)" if k == 0 else None,
        )


def plot_response(cal: Calibration) -> Figure:
    """The response curve: evaluated points with CIs, the target, and the solution with its interval.
    The points are joined over the whole evaluated range: solid where they are dense enough to show
    the curve, dotted (a straight line, not a measurement) across the stretches between far-apart
    ones; the y axis names the estimator when it is not the plain mean or rate."""
    p = cal.problem
    pts = sorted((q for q in cal.points if q.usable), key=lambda q: q.value)  # (others have no response)
    scale = 1.0 if p.kind == "mean" else 100.0
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100, layout="constrained")
    x = np.array([q.value for q in pts])
    y = np.array([q.f for q in pts]) * scale
    err = np.array([[q.f - q.lo for q in pts], [q.hi - q.f for q in pts]]) * scale
    _curve(ax, x, y)
    _bridges(ax, x, y)
    each = f"{p.games:,} games each" if p.kind == "mean" else f"{p.games:,} game pairs (seats swapped) each"
    ax.errorbar(
        x,
        y,
        yerr=err,
        fmt="o",
        color="tab:blue",
        ecolor="black",
        capsize=3,
        label="exact response (no games)" if p.exact else f"measured ({100 * p.confidence:.4g} % CI), {each}",
    )
    unit = " points" if p.kind == "mean" else " %"
    ax.axhline(p.target * scale, color="tab:red", ls="--", lw=1, label=f"target {p.target * scale:g}{unit}")
    if p.dial != "float":  # an integer or choice dial: the pair of values bracketing the target
        ax.set_xticks([q.value for q in pts], [str(p.played(q.value)) for q in pts])
    elif math.isfinite(cal.value):
        xerr = None
        if all(math.isfinite(v) for v in cal.value_ci):
            xerr = [[cal.value - cal.value_ci[0]], [cal.value_ci[1] - cal.value]]
        ax.errorbar(
            [cal.value],
            [p.target * scale],
            xerr=xerr,
            fmt="*",
            ms=14,
            color="tab:red",
            ecolor="tab:red",
            capsize=5,
            label=f"{p.param} = {cal.value:.4g}",
        )
    ax.set_xlabel(f"{p.param} (parameter of {p.strategy})")
    # the points' estimator: an analysed run's mean is total - luck (same expectation, a fraction of
    # the variance), which the axis must not call the mean score (issue 37)
    estimators = {q.estimator for q in pts}
    if p.kind == "mean":
        adjusted = ADJUSTED_MEAN in estimators
        ax.set_ylabel(
            (
                "luck-adjusted mean final score (points; total − luck"
                + (")" if len(estimators) == 1 else "; some points plain)")
            )
            if adjusted
            else "mean final score (points)"
        )
        what = "luck-adjusted mean score" if adjusted else "mean score"
    else:
        ax.set_ylabel(
            f"score rate against {p.against} (%; win 1, draw 1/2"
            + ("; luck difference as control variate)" if CONTROLLED_RATE in estimators else ")")
        )
        what = f"win rate against {p.against}"
    rules = Path(p.rules).stem if p.rules.endswith(".toml") else p.rules
    changed = f" ({', '.join(p.settings)})" if p.settings else ""
    how = f"exact, to {p.v_tol:g} in {p.param}" if p.exact else f"seed {p.seed}, same games at every value"
    ax.set_title(f"Calibration of {p.strategy} {p.param}: {what}\n{rules} rules{changed}, {how}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return fig


def _squeeze_outlier(ax: Any, x: np.ndarray) -> str:
    """When one far value (a bracket's end, evaluated once) would leave most of a panel empty, the
    axis runs linearly up to the next value and logarithmically beyond; the label's note says so.
    On the README's exact ladder the mean panel's points lay between 0 and 1.2 with one at 10."""
    xs = np.unique(x)
    if len(xs) < 3 or xs[0] < 0 or xs[-1] - xs[0] <= 4 * (xs[-2] - xs[0]) or xs[-2] <= 0:
        return ""
    ax.set_xscale("symlog", linthresh=float(xs[-2]), linscale=2.0)
    ticks = sorted({*np.linspace(xs[0], xs[-2], 4).round(2), float(xs[-1])})
    ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
    ax.minorticks_off()
    return f"\n(axis linear to {xs[-2]:.3g}, logarithmic beyond)"


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
        ax.errorbar(
            x,
            y,
            yerr=err,
            fmt="o",
            ms=4,
            color="tab:blue",
            ecolor="black",
            capsize=2,
            label="exact responses (no games)"
            if d.get("exact")
            else f"measured, {d['games']:,} games each, seed {d['seed']}",
        )
        for i, lv in ((i, r) for i, r in enumerate(d["levels"]) if r["target"]["kind"] == kind):
            c = f"C{(i + 1) % 10}"  # one colour per level across the panels
            t = lv["target"]["value"] * scale
            ax.axhline(t, color=c, ls="--", lw=0.8)
            lo, hi = lv["value_ci"]
            xerr = None if lo is None else [[lv["value"] - lo], [hi - lv["value"]]]
            ax.errorbar(
                [lv["value"]],
                [t],
                xerr=xerr,
                fmt="*",
                ms=13,
                color=c,
                ecolor=c,
                capsize=4,
                label=f"{lv['name']}: {d['param']} = {lv['value']:.4g}",
            )
            ck = lv["check"]
            if ck is None:  # exact levels: the response at the value is the target, no check to draw
                continue
            ax.errorbar(
                [lv["value"]],
                [ck["response"] * scale],
                yerr=[[(ck["response"] - ck["ci"][0]) * scale], [(ck["ci"][1] - ck["response"]) * scale]],
                fmt="D",
                ms=5,
                mfc="white",
                color=c,
                capsize=3,
            )
        ax.set_xlabel(f"{d['param']} (parameter of {d['strategy']})" + _squeeze_outlier(ax, x))
        ax.set_ylabel(
            f"score rate against {d['against']} (%; win 1, draw 1/2)"
            if kind == "win_rate"
            else "mean final score (points)"
        )
        ax.set_title(
            f"Difficulty levels on {Path(d['rules']).stem} rules: "
            + ("win rate" if kind == "win_rate" else "mean score")
            + (
                "\n(stars: level, exact)"
                if d.get("exact")
                else "\n(stars: calibrated level; diamonds: check on independent games)"
            ),
            fontsize="medium",
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="best")
    return fig


def plot_log_levels(d: Mapping[str, Any]) -> Figure:
    """Levels tuned against game logs (:meth:`harness.players.opponents.LogLevels.to_dict`): each level's
    exact response over the dial values evaluated, its target and its value with its interval
    (score rates in one panel, mean scores in another)."""
    groups = [[lv for lv in d["levels"] if (lv["target"]["kind"] == "mean") == mean] for mean in (False, True)]
    groups = [g for g in groups if g]
    fig, axes = plt.subplots(1, len(groups), figsize=(7 * len(groups), 5), dpi=DPI, layout="constrained", squeeze=False)
    colour = {lv["name"]: series_color(i) for i, lv in enumerate(d["levels"])}
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
            ax.errorbar(
                [lv["value"]],
                [t],
                xerr=[[lv["value"] - lo], [hi - lv["value"]]] if ok else None,
                fmt="*",
                ms=13,
                color=c,
                ecolor=c,
                capsize=4,
                label=f"{lv['name']} ({what}{', ' + lv['target']['band'] if lv['target']['band'] else ''}): "
                f"{d['param']} = {lv['value']:.4g}",
            )
        ax.set_xlabel(f"{d['param']} (parameter of {d['strategy']})")
        ax.set_ylabel("mean final score (points)" if mean else "score rate against the logged games (%)")
        ax.set_title(
            f"Levels against {Path(str(d['against_records']['source'])).name} on {Path(d['rules']).stem}"
            "\n(exact responses; stars: levels, with the dial's interval)",
            fontsize="medium",
        )
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
        ax.errorbar(
            [x],
            [y],
            xerr=[err[0], hi[0]],
            yerr=[err[1], hi[1]],
            fmt=marks[bands.index(c["band"] or "all") % len(marks)],
            color=series_color(names.index(c["level"])),
            ms=6,
            capsize=2,
            lw=0.8,
        )
    ax.axline((50, 50), slope=1, color="grey", ls="--", lw=0.8)
    handles = [Line2D([], [], color=series_color(i), lw=2, label=n) for i, n in enumerate(names)]
    handles += [
        Line2D([], [], color="black", ls="", marker=marks[i % len(marks)], label=b) for i, b in enumerate(bands)
    ]
    ax.legend(handles=handles, fontsize="small", loc="best")
    ax.set_xlabel("predicted: score rate against the tuning half (%)")
    ax.set_ylabel("measured: score rate against the checking half (%)")
    ho = d["held_out"]
    ax.set_title(
        f"Held-out check: players split with seed {ho['seed']} ({len(ho['tuning_players'])} tune, "
        f"{len(ho['checking_players'])} check)\none point per level (colour) and group (marker)",
        fontsize="medium",
    )
    ax.grid(alpha=0.3)
    return fig
