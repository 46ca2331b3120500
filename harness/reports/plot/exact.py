"""Pictures of exact figures (:mod:`harness.exact`): several bots' exact score distributions
(``evaluate``), the depth of skill's chains, and a sweep's figures against its setting (``sweep``)."""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

import numpy as np

from harness.reports.plot.common import DPI, Figure, plt, series_color


def plot_exact_distributions(evaluations: Sequence[Any]) -> Figure:
    """The exact final-score distributions of several bots (:class:`harness.exact.evaluate.Evaluation`), overlaid."""
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=DPI)
    for i, e in enumerate(evaluations):
        p = np.asarray(e.distribution)
        nz = np.flatnonzero(p > 1e-9)
        if nz.size:
            s = np.arange(nz[0], nz[-1] + 1)
            ax.plot(s, p[s], color=series_color(i), lw=1.2, label=f"{e.bot} (mean {e.mean:.1f})")
    ax.set_xlabel("final score")
    ax.set_ylabel("P(score)")
    ax.set_title(f"Exact score distributions, {evaluations[0].rules}" if evaluations else "Exact score distributions")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_depth(depth: Any) -> Figure:
    """The chains of a :class:`harness.studies.chain.DepthOfSkill`: each level's exact mean and dial value."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.5), dpi=DPI, layout="constrained")
    for i, c in enumerate(depth.chains):
        lv = c.levels
        ax.plot(
            [x.index for x in lv],
            [x.mean for x in lv],
            "o-",
            color=series_color(i),
            ms=4,
            label=f"p = {100 * c.p:.0f} %: {c.steps:.2f} steps",
        )
        dial = [x for x in lv if x.value is not None]
        bx.plot(
            [x.index for x in dial],
            [x.value for x in dial],
            "o-",
            color=series_color(i),
            ms=4,
            label=f"p = {100 * c.p:.0f} %",
        )
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
SWEEP_PLOTS = {
    "sweep_means": "exact mean final score",
    "sweep_p_bonus": "P(upper bonus) (%)",
    "sweep_head_to_head": "A's exact score rate against B (%)",
    "sweep_depth": "depth of skill (steps)",
}


def _sweep_series(sweep: Any) -> dict[str, list[tuple[str, list[float]]]]:
    """Per figure of :data:`SWEEP_PLOTS`, its series (label, value at every cell)."""
    cells = sweep.cells
    out: dict[str, list[tuple[str, list[float]]]] = {
        "sweep_means": [(b, [c.evaluations[i].mean for c in cells]) for i, b in enumerate(sweep.bots)],
        "sweep_p_bonus": [(b, [100 * c.evaluations[i].p_bonus for c in cells]) for i, b in enumerate(sweep.bots)],
        "sweep_head_to_head": [
            (f"{a} vs {b}", [100 * (c.pairs()[k][2] + 0.5 * c.pairs()[k][3]) for c in cells])
            for k, (a, b, *_) in enumerate(cells[0].pairs())
        ],
        "sweep_depth": [
            (f"p = {100 * p:.0f} %", [c.depth.chains[k].steps for c in cells]) for k, p in enumerate(sweep.rates)
        ],
    }
    return {k: v for k, v in out.items() if v}


def plot_sweep(sweep: Any) -> dict[str, Figure]:
    """The figures of a :class:`harness.studies.sweep.Sweep` against its setting (lines; a heat map per
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
                ax.plot(x, y, "o-", ms=3, color=series_color(i), label=label)
            if stem == "sweep_means":
                for i, _b in enumerate(sweep.bots):
                    m = np.array([c.evaluations[i].mean for c in sweep.cells])
                    s = np.array([c.evaluations[i].std for c in sweep.cells])
                    ax.fill_between(x, m - s, m + s, color=series_color(i), alpha=0.12, lw=0)
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
