"""Run summaries: stream a run's chunks once through per-section accumulators into a :class:`RunSummary`.

A report is made of *sections*. Each section is one accumulator class here: it names the row
columns it needs, folds every :class:`Window` of games, and gives its part of ``summary.json``
and its tables (:class:`harness.util.render.Table`, built from that JSON, so Markdown, HTML and the
terminal agree; :mod:`harness.util.render` decides how they look); its pictures are listed under its
key in :data:`harness.reports.plot.PLOTS`. A new report section is one accumulator in :data:`SECTIONS`,
its tables and, optionally, its plots.

Statistical choices (the "why" behind the numbers):

* An entrant's mean CI is computed over *games*, not rows: for each game index the entrant's
  totals over every (lineup, seat) it holds are averaged first. In a tournament the same entrant
  sees the same dice in the same seat of every lineup, so its rows are not independent; games are.
  The reported ``std`` is the per-row spread of scores (from the exact histogram).
* Win/draw/loss follow :mod:`harness.game.outcome` (win = sole highest score, draw = highest score
  shared, at any table size; they sum to 100 %). Rates carry Wilson intervals over games. For
  seat-swapped lineups (A,B)+(B,A) the game pairs on identical dice are counted as a pentanomial
  (the pair's points 0, .5, 1, 1.5, 2 for A), whose Elo interval respects the correlation.
* Head-to-head: every pair of seats holding different entrants is one comparison of their ranking
  scores (points: 1 to the higher, ½ each when equal). Bradley-Terry ratings with intervals come
  from that matrix (:func:`harness.stats.bradley_terry`, with its one-virtual-draw prior, so an
  entrant that won or lost every game against another still gets a finite rating, flagged as a bound).
* Yatzy rate: share of rows whose yatzy-kind box (the first box of kind ``yatzy`` that does not
  need the key box: ``yatzy``, ``maxi_yatzy``, ``generala``) scored > 0; with several columns, in
  any column. Bonus rate: share of rows with a non-zero upper bonus.

One module per section, each naming its topic; this package re-exports their public names:

* :mod:`~harness.reports.summary.base`: the :class:`Section` contract, the :class:`Window` of games, :class:`SummaryOptions`;
* :mod:`~harness.reports.summary.entrants`: score distribution, rates, outcomes, per-box means (``entrants``);
* :mod:`~harness.reports.summary.pairings`: win/draw/loss of each pairing, the Elo of swapped seats (``pairings``);
* :mod:`~harness.reports.summary.ratings`: head to head and Bradley-Terry ratings (``head_to_head``);
* :mod:`~harness.reports.summary.luck`: luck and skill of a run played with ``--analyse`` (``luck``);
* :mod:`~harness.reports.summary.exact`: exact values beside the sampled ones, the depth of skill (``exact``, ``depth``);
* :mod:`~harness.reports.summary.game_quality`: the game-quality metrics (``quality``);
* :mod:`~harness.reports.summary.faults`: the referee's faults of external engines (``faults``);
* :mod:`~harness.reports.summary.stream`: the one pass, :data:`SECTIONS`, :class:`RunSummary`, :func:`summarize`.
"""

from harness.reports.summary.base import Section, SummaryOptions, Window, yatzy_box
from harness.reports.summary.entrants import EntrantSection, EntrantStats, entrant_dict
from harness.reports.summary.exact import EXACT_AUTO_STATES, EXACT_MODES, DepthSection, ExactSection
from harness.reports.summary.faults import FaultSection
from harness.reports.summary.game_quality import QualitySection
from harness.reports.summary.luck import LuckSection
from harness.reports.summary.pairings import PairingSection, PairingStats, pairing_dict
from harness.reports.summary.ratings import HeadToHeadSection
from harness.reports.summary.stream import SECTIONS, RunSummary, SectionT, summarize

__all__ = [
    "EXACT_AUTO_STATES",
    "EXACT_MODES",
    "SECTIONS",
    "DepthSection",
    "EntrantSection",
    "EntrantStats",
    "ExactSection",
    "FaultSection",
    "HeadToHeadSection",
    "LuckSection",
    "PairingSection",
    "PairingStats",
    "QualitySection",
    "RunSummary",
    "Section",
    "SectionT",
    "SummaryOptions",
    "Window",
    "entrant_dict",
    "pairing_dict",
    "summarize",
    "yatzy_box",
]
