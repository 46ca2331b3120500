"""What every picture shares: matplotlib set up once (the Agg backend, before pyplot), the
resolution (:data:`DPI`), the series colours, score bins, a run's title, markers with their
intervals, and the one writer of a set of pictures (:func:`save_plots`).

This is the one module of the plots that sets matplotlib up: every other imports ``plt`` from here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")  # files only: never needs a display, safe in workers and CI
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from harness.util.errors import UserError  # noqa: E402

if TYPE_CHECKING:
    from harness.reports.summary import RunSummary

DPI = 100
_COLORS = plt.get_cmap("tab10").colors


def series_color(i: int) -> tuple[float, float, float]:
    """The ``i``-th series' colour (tab10, cycled)."""
    return _COLORS[i % len(_COLORS)]


def _width(lo: int, hi: int) -> int:
    """A score bin width giving ~60-90 bins over [lo, hi] (Yatzy scores are spiky)."""
    return max(1, int(math.ceil((hi - lo + 1) / 80)))


def _rebin(c: np.ndarray, width: int) -> np.ndarray:
    """Sums of consecutive runs of ``width`` counts (the last run padded with zeros)."""
    n_bins = int(math.ceil(c.size / width))
    return np.pad(c, (0, n_bins * width - c.size)).reshape(n_bins, width).sum(axis=1)


def _title(summary: RunSummary, what: str) -> str:
    info = summary.info
    return f"{what}\n{info.rules.name} rules, {info.games:,} games per lineup"


#: The sides of a comparison: label and colour (BASE, CANDIDATE); a report has one side.
SIDE_COLORS = (series_color(0), series_color(1))


def _finite(x: Any) -> bool:
    return x is not None and math.isfinite(x)


def _errorbars(
    ax: Any,
    xs: Sequence[Any],
    cis: Sequence[Any],
    ys: np.ndarray,
    color: Any,
    scale: float,
    label: str | None = None,
    filled: Sequence[bool] | None = None,
) -> None:
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
        ax.errorbar(
            [x * scale],
            [y],
            xerr=err,
            fmt="o",
            ms=6,
            color=color,
            mfc=color if solid else "white",
            ecolor=color,
            capsize=4,
            label=label,
        )
        label = None  # one legend entry per series


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
