"""Paired comparison of two runs (a rule change, or bot A against bot B) with a CI-friendly exit code.

Pairing: BASE and CANDIDATE are matched row by row on (lineup, game, seat). Lineups are matched by
position (lineup 0 with lineup 0, ...), so both runs need the same number of lineups and seats per
lineup; with the same seed, every matched row saw the same dice (common random numbers), and the
comparison measures the change alone. Runs with different seeds are refused unless
``--unpaired`` (the differences are then between independent games: valid, only noisier, and
the output says so). Boxes present in one rule set only are listed, not silently dropped.

Which rows are compared ("focus"): the seats whose entrant label differs between the runs (bot A
in a seat of BASE against bot B in the same seat of CANDIDATE); if no label differs (same bots,
e.g. a rule change), every seat. ``--entrant LABEL`` picks the seats that hold LABEL in either run.

The unit of every interval and test is the *game index*: for game g the focus rows' differences
are averaged into one number d_g (in a tournament all lineups share game g's dice, so their rows
are correlated; games are independent). Reported: the mean paired difference of final scores with
a t interval and p-value, both runs' means, a two-sample KS test on the focus rows' score
histograms (the histograms themselves are in ``score_histograms``, per group of focus seats), the
per-box mean differences, the change of win and draw rates (:mod:`harness.game.outcome`), of
upper-bonus rate and of yatzy rate, each paired with its interval; and the SPRT verdict.

Intervals are Student t intervals over games, with two exceptions for rare figures (a box, the
draw rate) in small runs, where the t interval was measured to miss the exact value far more
often than stated (benchmarks/BENCHMARKS.md, "Sampled statistics against the exact truth"). A
paired difference whose per-game value is 0 in most games takes its variance from the k games
that moved it, so its t quantile has k - 1 degrees of freedom (n - 1 when every game moved). A
figure whose per-game value is bounded (a total, a box's score, a 0/1 rate: :func:`value_limits`)
and that no game or one game moved gets the interval the bounds allow,
:func:`harness.stats.moments.rare_interval` (about ±3.7 / n of the range at 95 % when no game of n
moved it), and p = 1; so does a side whose every game gave the same value (no draw at all).

Luck adjustment: when both runs were played with ``analyse = true`` (rows carry each seat-game's
exact ``luck``, :mod:`harness.decisions.analysis`), the score's interval, p-value and SPRT use the paired
difference of luck-adjusted scores ``total - luck`` instead of the plain totals. Each luck term has
mean zero given the past whatever the policy, so each run's adjusted mean is an unbiased estimate
of its expected score, also across a rule change (each run is adjusted with its own rule set's
table); only the variance shrinks (the output gives the factor, var(plain) / var(adjusted), of
the per-game difference). The plain difference stays in the output (``score_plain``). Win and
draw rates use the luck difference as a control variate: per game x_g = candidate - base of the
focus seats' luck edge (the seat's luck minus the mean luck of the other seats at its table; mean
zero), and the regression estimator :func:`harness.stats.control_variate_mean` with the
coefficient fitted on the same games. When only one run has luck, the comparison is plain, with
a note. ``compare`` turns the analysis on for the configs it plays (``--no-analyse`` to play
without it) unless a rule set cannot be analysed (``saved_rolls``: then plain, with a note).

Game quality (:mod:`harness.reports.quality`): skill share, upset rate, first-mover edge, lead changes,
decisive round, close games and comebacks of each run over all its seats, side by side, with
the paired difference of each (delta method on the joint per-game means), its p-value and the
Holm-adjusted one (family-wise error rate at 1 - confidence over the metrics compared); JSON under
``quality``. They inform and do not enter the verdict.

SPRT: :func:`harness.stats.sprt_mean` on the d_g, H0: delta = mu0 (default 0) against H1: delta =
mu1 (default 1 point). Two-sided by default: the mirrored H1' delta = 2*mu0 - mu1 is tested too,
each side at alpha/2. Verdict and exit code:

* 0 "no change": every side accepts H0 (the change is nearer mu0 than mu1, at the requested
  error rates);
* 1 "change": a side accepts H1;
* 2 "inconclusive": no decision with the games played (or fewer than ``--min-games`` paired
  games, default 100: the SPRT's variance comes from the data, and a change that only shows in
  rare games can look like zero variance in a small sample; or fewer than :data:`MIN_MOVED`
  games whose totals differ between the runs: a variance from so few games made the SPRT decide
  wrongly at its first looks, measured against the exact difference in
  benchmarks/BENCHMARKS.md). When the totals differ in no game at all (identical play so far),
  the verdict is "no change" once the bound on a change that none of n games showed
  (:func:`harness.stats.moments.rare_interval` of the total, at confidence 1 - 2 beta) lies
  nearer mu0 than mu1 (and its mirror): e.g. with mu1 = 1, after about 2,240 scandinavian
  games. A usage error also exits 2 (through
  :class:`~harness.util.errors.UserError`, one line on stderr, no JSON on stdout): in CI, treat 2 as
  "not proven either way" and read stderr/the JSON to tell the two apart.

The code, by topic: the settings and the paired statistics (:mod:`harness.reports.paired`), the
comparison of two run directories (:mod:`harness.reports.comparison`), playing run configs into
them (:mod:`harness.reports.compare_play`) and the terminal rendering
(:mod:`harness.reports.compare_text`). This module gives the public names of all four.
"""

from __future__ import annotations

from harness.reports.compare_play import Playing, compare, config_of, is_run_dir
from harness.reports.compare_text import EXACT_MARK, RATE_LINES, body_lines, compare_text, exact_beside, header_lines
from harness.reports.comparison import Comparison, ComparisonResult, compare_runs
from harness.reports.paired import (
    ADJUSTED,
    CONTROL,
    DEFAULT_MIN_GAMES,
    DEFAULT_MU0,
    DEFAULT_MU1,
    EXIT_CHANGE,
    EXIT_INCONCLUSIVE,
    EXIT_NO_CHANGE,
    MIN_MOVED,
    CompareSettings,
    PairedAccumulator,
    Slot,
    match_slots,
    run_has_luck,
    score_histograms,
    value_limits,
    variance_reduction,
)

__all__ = [
    "ADJUSTED",
    "CONTROL",
    "DEFAULT_MIN_GAMES",
    "DEFAULT_MU0",
    "DEFAULT_MU1",
    "EXACT_MARK",
    "EXIT_CHANGE",
    "EXIT_INCONCLUSIVE",
    "EXIT_NO_CHANGE",
    "MIN_MOVED",
    "RATE_LINES",
    "CompareSettings",
    "Comparison",
    "ComparisonResult",
    "PairedAccumulator",
    "Playing",
    "Slot",
    "body_lines",
    "compare",
    "compare_runs",
    "compare_text",
    "config_of",
    "exact_beside",
    "header_lines",
    "is_run_dir",
    "match_slots",
    "run_has_luck",
    "score_histograms",
    "value_limits",
    "variance_reduction",
]
