"""Player models fitted to recorded games by maximum likelihood: the solver bot's dial, an extended family (``fit``).

The ``solver`` bot's dial defines its choice probabilities exactly (:mod:`strategies.solver`,
:func:`harness.exact.kernels.solver.soft_keeps` and ``choose_boxes``): at every decision (each keep,
``stop`` included, and each box) with n legal options of exact values v_a,

    P(a) = blunder / n + (1 - blunder) x exp(v_a / T) / sum_b exp(v_b / T)

the same rule, with the same temperature T (points), for keep and box decisions; a blunder is a
uniformly random legal option (sub-keeps of the roll, stop included; allowed boxes). T = 0 is
the argmax. The values are those of :func:`harness.decisions.analysis.decision_table`, the very numbers the
bot's softmax sees, so a record's likelihood under (T, blunder) is exact and the fitted spec
plays like the fit says. Decisions with one legal option carry no information and are left out.

Ties. The T = 0 bot breaks exact ties by a fixed rule (stop first, larger keeps first; the first
box in sheet order); the model uses the limit of the softmax instead, an equal share among the
options tied for best (regret <= :data:`harness.decisions.positions.TIE`), so that the likelihood is
continuous in T down to 0 and the three models are nested. About 1 % of decisions have a tie;
the recovery tests show no measurable bias from it.

Models (``--model``): ``solver:temperature`` (blunder 0), ``solver:blunder`` (T = 0) and
``solver:temperature,blunder``. Fit: T on [0, :data:`T_MAX`] searched in log T (a grid, then
Brent's method, then the T = 0 limit), blunder on [0, 1] (for a fixed T the log-likelihood is
concave in it: the root of its derivative). Intervals: profile likelihood, {theta: 2 (l_max -
l_profile(theta)) <= chi2_1 quantile}; an end at the parameter's bound (T = 0, blunder 0 or 1,
T >= T_MAX) is reported as that bound.

Goodness of fit, both at the fitted parameters (a player is flagged ``poor`` when either p-value is
below :data:`POOR_P`; a bot of the family is flagged about 0.2 % of the time):

* a likelihood-ratio test against the richer model "(T, blunder) fitted separately to keep and to
  box decisions" (df = 4 - parameters of the model, or 2 - parameters with one decision kind).
  A player whose keeps and boxes are not equally good (a greedy bot: fair keeps, poor boxes) fails it.
* the regret distribution: per decision kind, the number of decisions whose regret falls in each
  bin of :data:`REGRET_BINS`, against the number the model predicts (each decision's model
  probabilities summed); X^2 = d' S^+ d with S the exact covariance of the predicted counts (a sum of
  multinomials), df = rank of S (the parameters' estimation is not subtracted: conservative);
  adjacent bins are merged until each expects :data:`MIN_EXPECTED` decisions.

Also per player: decisions used, log-likelihood per decision, top-choice agreement (share of
decisions with regret 0) observed and predicted, top-1 agreement (the share of decisions whose
option played is the model's most likely; ties shared: 1/k for one of k), mean regret per decision
by kind observed and predicted, and the fitted spec (``solver:temperature=1.02``) ready for
``--seats``. The pooled fit treats every selected player's decisions as one player. The *median
player* is the player with the median regret per seat-game (model-free; the lower median for an
even count): ``calibrate --levels --against FIT.json`` tunes against that player's fitted spec.

The extended family (models ``kinds``, ``mixed`` and ``paced``; no bot plays them, so they have no spec)
contains players the dial cannot explain. Each option has its exact value v_a and its *myopic
value* m_a, the best box score reachable this turn from the option, what ``greedy`` maximises
(:attr:`harness.decisions.analysis.DecisionTable.myopic`, computed by the analysis kernel next to the exact
values): a box, its score plus the upper bonus if it completes it (less 0.01 point per place in
the boxes sorted by their highest score: greedy's tie rule, the cheapest box to give up first,
:attr:`harness.decisions.analysis.Analyser.MYOPIC_TIE`); stop, the best allowed box's score plus the roll's
extra bonus; a keep, the expectation over the reroll of that stop value at
the end of the turn, the keeps that follow chosen to maximise it. With regrets r_a = max v - v_a
and g_a = max m - m_a (each exactly 0 within :data:`TIE`)::

    x_a = (1 - weight) r_a + weight g_a
    P(a) = blunder / n + (1 - blunder) x exp(-x_a / T_kind) / sum_b exp(-x_b / T_kind)

with T_kind the keep temperature for keep decisions and the box temperature for box decisions.
``kinds`` fits (keep_temperature, box_temperature, blunder) at weight 0, ``mixed`` all four.
``paced`` is ``mixed`` with each option's *paced value* in place of its myopic value: its value
to a player who plays for the upper bonus as the ``bonus`` bot does
(:attr:`harness.decisions.analysis.DecisionTable.paced`, :mod:`harness.game.pace`: a box, its score plus the
roll's extra bonus, less its opportunity cost, plus the upper bonus times the change in the chance
of making it; ties with the bot's box broken by its rule, :attr:`harness.decisions.analysis.Analyser.PACED_TIE`;
stop, the best box's value; a keep, the expectation over the reroll of that stop value at the end
of the turn under the bot's own turn plan), so that ``bonus`` is ``paced`` at weight 1,
temperatures 0, as ``greedy`` is ``mixed`` there. Fit:
SLSQP with the kernel's exact gradient, the temperatures in log T on [T_MIN, T_MAX], weight and
blunder on [0, 1], from several starts in the weight (:func:`family_mle`); intervals by profile
likelihood, the other parameters maximised again at each point (:func:`family_intervals`); a
temperature at the T_MIN floor is reported as 0. The likelihood-ratio test's richer model is the
same model fitted separately to keeps and boxes (weight and blunder per kind too: df 2 for
``mixed``, 1 for ``kinds``); the regret test is the same, on the exact regrets.

Several models (``fit_records(..., "all")`` or ``"dial+mixed"``) are also compared player by
player on held-out games: each player's seat-games are split in halves by a seeded hash
(:func:`fold`), every model is fitted to one half and judged on the other by its log-likelihood per
decision and its top-1 agreement (:class:`ModelChoice`; the chosen model has the best
log-likelihood). The population picture (:meth:`FitReport.population`) groups players in the skill
bands of :data:`harness.decisions.analysis.SCALE` (the rating ``analyse`` gives, the bands a levels file's
``band = "NAME"`` targets: :mod:`harness.players.opponents`) of their regret per decision exactly as
``analyse`` computes it (regret summed over every decision / every decision, one legal option
included; model-free), with their fitted parameters.

The package has one module per topic (inside the package each imports the others by their own
paths); the package gives the public names below, and a test or benchmark that replaces a name
patches the topic module that looks it up (``monkeypatch.setattr(fit.report, "BATCH_GAMES", 7)``):

* :mod:`~harness.players.fit.models`: the models' names and parameters, ``--model``'s parsing;
* :mod:`~harness.players.fit.data`: a player's decisions as :class:`Choices`, and their builder;
* :mod:`~harness.players.fit.store`: decisions in blocks, in memory within a budget or in a scratch
  file (:class:`DecisionStore`, :class:`Blocks`), and the passes over them;
* :mod:`~harness.players.fit.likelihood`: the dial's likelihood and its maximum (:func:`mle`);
* :mod:`~harness.players.fit.profile`: profile-likelihood intervals (:func:`intervals`);
* :mod:`~harness.players.fit.families`: the extended family's likelihood, maximum and intervals;
* :mod:`~harness.players.fit.goodness`: the goodness-of-fit tests;
* :mod:`~harness.players.fit.player`: one player's fit and its verdict (:func:`fit_choices`);
* :mod:`~harness.players.fit.choice`: model choice on held-out games;
* :mod:`~harness.players.fit.report`: many players' fit from a table or records (:class:`FitReport`,
  :func:`fit_records`), the population picture;
* :mod:`~harness.players.fit.files`: a fit file read back: its text, a reference player for ``calibrate``;
* :mod:`~harness.players.fit.kernels`: the numba kernels.

Public API::

    from harness.players.fit import fit_table, fit_records, Choices, fit_choices
    rep = fit_records(read_records("games.jsonl"), "solver:temperature")   # -> FitReport
    rep = fit_records(RecordStream("big.jsonl"), "solver:temperature")    # a log of any size, a batch at a time
    for p in rep.players: p.player, p.params["temperature"].value, p.params["temperature"].ci, p.poor, p.spec
    rep.to_dict()                                                           # what --json prints
    rep = fit_records(RecordStream("big.jsonl"), "all")                      # dial, kinds, paced, mixed; rep.choice per player
    rep = fit_records(stream, "solver:temperature", options=FitOptions(confidence=0.99, quiet=False))  # fit's options
    rep.model_fit("mixed").player("greedy").params["weight"]; rep.population()["bands"]
"""

from __future__ import annotations

from harness.players.fit import (
    choice,
    data,
    families,
    files,
    goodness,
    likelihood,
    models,
    player,
    profile,
    report,
    store,
)
from harness.players.fit.choice import Holdout, ModelChoice, fold, holdout
from harness.players.fit.data import Choices, ChoicesBuilder
from harness.players.fit.families import FamilyLikelihood, family_intervals, family_mle
from harness.players.fit.files import reference_of, text
from harness.players.fit.likelihood import Likelihood, mle
from harness.players.fit.models import ALL_MODELS, FAMILY, MIXES, MODELS, mixes, parse_model, parse_models
from harness.players.fit.player import (
    MAX_HALF_WIDTH,
    MIN_DECISIONS,
    RESOLUTION,
    TOO_LITTLE,
    FitOptions,
    PlayerCounts,
    PlayerFit,
    evidence,
    fit_choices,
)
from harness.players.fit.profile import Estimate
from harness.players.fit.report import FitOrigin, FitReport, fit_records, fit_table, play_table
from harness.players.fit.store import MAX_MEMORY, Blocks, DecisionStore

__all__ = [
    "ALL_MODELS",
    "FAMILY",
    "MAX_HALF_WIDTH",
    "MAX_MEMORY",
    "MIN_DECISIONS",
    "MIXES",
    "MODELS",
    "RESOLUTION",
    "TOO_LITTLE",
    "Blocks",
    "Choices",
    "ChoicesBuilder",
    "DecisionStore",
    "Estimate",
    "FamilyLikelihood",
    "FitOptions",
    "FitOrigin",
    "FitReport",
    "Holdout",
    "Likelihood",
    "ModelChoice",
    "PlayerCounts",
    "PlayerFit",
    "choice",
    "data",
    "evidence",
    "families",
    "family_intervals",
    "family_mle",
    "files",
    "fit_choices",
    "fit_records",
    "fit_table",
    "fold",
    "goodness",
    "holdout",
    "likelihood",
    "mixes",
    "mle",
    "models",
    "parse_model",
    "parse_models",
    "play_table",
    "player",
    "profile",
    "reference_of",
    "report",
    "store",
    "text",
]
