"""The pictures of a run's report: which each section draws (:data:`PLOTS`, keyed by
:attr:`harness.reports.summary.Section.key`) and :func:`save_all_plots`, which writes them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.reports.plot.common import save_plots
from harness.reports.plot.game_quality import plot_quality
from harness.reports.plot.luck import plot_luck_adjusted, plot_run_luck_vs_score, plot_run_regret
from harness.reports.plot.ratings import plot_head_to_head, plot_ratings
from harness.reports.plot.scores import plot_box_means, plot_score_cdfs, plot_score_histograms, plot_score_violins

if TYPE_CHECKING:
    from harness.reports.summary import RunSummary

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


def save_all_plots(summary: RunSummary, out_dir: str | Path) -> list[Path]:
    """Write every applicable picture of the summary's sections as PNG into ``out_dir``; returns the paths written."""
    return save_plots({n: f for sec in summary.sections for n, f in PLOTS.get(sec.key, {}).items()}, summary, out_dir)
