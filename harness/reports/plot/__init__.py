"""Pictures: one function per plot of a :class:`~harness.reports.summary.RunSummary` (:data:`PLOTS`, written by
:func:`save_all_plots`), of a :class:`~harness.reports.compare.ComparisonResult` (:data:`COMPARE_PLOTS`), of an
analysis of game records (:data:`SKILL_PLOTS`), of exact figures and of a fit's population;
:func:`save_plots` writes a set of them. The calibration's and the difficulty levels' pictures are
drawn in the players layer (:mod:`harness.players.picture`), with these helpers.

Every function returns a matplotlib ``Figure`` (Agg backend, no display needed) or ``None`` when
the picture does not apply (e.g. a head-to-head heatmap for a single entrant). Everything is drawn
from the streamed summaries (histograms, counts), never from raw rows.

One module per kind of picture, each naming its topic:

* :mod:`~harness.reports.plot.common`: matplotlib's set-up (Agg, once), DPI, colours, bins, markers, :func:`save_plots`;
* :mod:`~harness.reports.plot.scores`: a run's score distributions and mean score per box;
* :mod:`~harness.reports.plot.ratings`: a run's head to head and Bradley-Terry ratings;
* :mod:`~harness.reports.plot.luck`: an analysed run's luck-adjusted means, regret and luck;
* :mod:`~harness.reports.plot.game_quality`: game quality, one panel per metric;
* :mod:`~harness.reports.plot.run`: which pictures each report section draws (:data:`PLOTS`);
* :mod:`~harness.reports.plot.compare`: a paired comparison's pictures (:data:`COMPARE_PLOTS`);
* :mod:`~harness.reports.plot.skill`: the luck and skill of game records (:data:`SKILL_PLOTS`);
* :mod:`~harness.reports.plot.exact`: exact distributions, depth of skill, sweeps;
* :mod:`~harness.reports.plot.population`: a fit's population of players.
"""

from harness.reports.plot.common import DPI, SIDE_COLORS, Figure, plt, save_plots, series_color
from harness.reports.plot.compare import COMPARE_PLOTS, plot_compare_quality, plot_comparison
from harness.reports.plot.exact import SWEEP_PLOTS, plot_depth, plot_exact_distributions, plot_sweep
from harness.reports.plot.game_quality import QUALITY_UNITS, ZOOM, plot_quality
from harness.reports.plot.luck import plot_luck_adjusted, plot_run_luck_vs_score, plot_run_regret
from harness.reports.plot.population import plot_population
from harness.reports.plot.ratings import plot_head_to_head, plot_ratings
from harness.reports.plot.run import PLOTS, save_all_plots
from harness.reports.plot.scores import plot_box_means, plot_score_cdfs, plot_score_histograms, plot_score_violins
from harness.reports.plot.skill import (
    SCATTER_MAX,
    SKILL_PLOTS,
    PlayerSkillLike,
    SkillReportLike,
    plot_luck_vs_score,
    plot_regret_distribution,
)

__all__ = [
    "COMPARE_PLOTS",
    "DPI",
    "PLOTS",
    "QUALITY_UNITS",
    "SCATTER_MAX",
    "SIDE_COLORS",
    "SKILL_PLOTS",
    "SWEEP_PLOTS",
    "ZOOM",
    "Figure",
    "PlayerSkillLike",
    "SkillReportLike",
    "plot_box_means",
    "plot_compare_quality",
    "plot_comparison",
    "plot_depth",
    "plot_exact_distributions",
    "plot_head_to_head",
    "plot_luck_adjusted",
    "plot_luck_vs_score",
    "plot_population",
    "plot_quality",
    "plot_ratings",
    "plot_regret_distribution",
    "plot_run_luck_vs_score",
    "plot_run_regret",
    "plot_score_cdfs",
    "plot_score_histograms",
    "plot_score_violins",
    "plot_sweep",
    "plt",
    "save_all_plots",
    "save_plots",
    "series_color",
]
