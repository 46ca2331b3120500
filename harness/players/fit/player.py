"""One player's fit (:func:`fit_choices`): a model's maximum, its intervals, the goodness-of-fit
tests and the verdict, as a :class:`PlayerFit`; the minimum of evidence for an answer
(:func:`evidence`: :data:`MIN_DECISIONS`, :data:`MAX_HALF_WIDTH`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
from scipy.stats import chi2

from harness.decisions.analysis import DECISION_KINDS, rating
from harness.players.fit.data import Choices
from harness.players.fit.families import (
    FAMILY_DEFAULTS,
    FamilyLikelihood,
    _family_per_kind,
    family_intervals,
    family_mle,
)
from harness.players.fit.goodness import BIN_NAMES, POOR_P, Test, _regret_test
from harness.players.fit.profile import Estimate, intervals
from harness.players.fit.likelihood import Likelihood, Mle, mle
from harness.players.fit.models import MODELS, T_MAX, is_family, parse_model
from harness.players.fit.store import MAX_MEMORY, Blocks, _each, _total, as_blocks
from harness.util.render import plain, sig
from harness.util.sums import dot

#: The least evidence a fit needs to be an answer (``fit --min-decisions``): informative decisions
#: (about a dozen games). The goodness-of-fit tests flag ``greedy`` in every one of 10 records from
#: about 220 decisions (5 games) under the default model, and a temperature is known to +-10 % from
#: about 500 (benchmarks/BENCHMARKS.md, "Player models"): twice the first, the second.
MIN_DECISIONS = 500
#: ... and every parameter's interval no wider than this fraction of its estimate on either side
#: (``fit --max-half-width``: (hi - lo) / 2 <= MAX_HALF_WIDTH x max(estimate, RESOLUTION)).
MAX_HALF_WIDTH = 0.25
#: An estimate near 0 is measured against these instead (a temperature below 0.1 points plays
#: within about 0.01 points per decision of perfect; a blunder rate below 2 %).
RESOLUTION = {"temperature": 0.1, "blunder": 0.02, "keep_temperature": 0.1, "box_temperature": 0.1, "weight": 0.05}
#: The verdicts of a fit.
OK, POOR, TOO_LITTLE = "ok", "POOR", "too little data"


@dataclass(frozen=True)
class FitOptions:
    """How a fit is made (``fit``'s options): the intervals' ``confidence``; the least evidence for
    an answer (``min_decisions``, ``max_half_width``: :func:`evidence`); progress bars on stderr
    unless ``quiet``; the held-out split's seed when several models are compared
    (``holdout_seed``); the bytes of stored decisions kept in memory (``max_memory``:
    :class:`~harness.players.fit.store.DecisionStore`); and whether the players are also fitted
    pooled (``pooled``, when there are several). :func:`fit_choices` reads the first three."""

    confidence: float = 0.95
    min_decisions: int = MIN_DECISIONS
    max_half_width: float = MAX_HALF_WIDTH
    quiet: bool = True
    holdout_seed: int = 1
    max_memory: int = MAX_MEMORY
    pooled: bool = True


@dataclass(frozen=True)
class PlayerCounts:
    """What a player's (or a pool's) seat-games add to its fit, beyond its informative decisions:
    the ``seat_games``, the ``regret_per_game`` over them, and ``all_decisions``, every decision of
    them, one legal option included (None: the decisions fitted, for choices that are the whole
    record)."""

    seat_games: int = 0
    regret_per_game: float = math.nan
    all_decisions: int | None = None


def _spec(model: str, m: Mle) -> str:
    """The fitted bot as a spec; parameters at 0 are left out (``solver`` when all are)."""
    parts = [f"{name}={plain(getattr(m, name), 4)}" for name in MODELS[model] if getattr(m, name) > 0]
    return "solver" + (":" + ",".join(parts) if parts else "")


def evidence(
    decisions: int,
    params: Mapping[str, tuple[float, float, float]],
    min_decisions: int = MIN_DECISIONS,
    max_half_width: float = MAX_HALF_WIDTH,
) -> list[str]:
    """Why a fit of ``decisions`` informative decisions and parameter estimates {name: (value, lo,
    hi)} is too little data to be an answer (empty: it is enough): fewer than ``min_decisions``, or
    an interval wider than ``max_half_width`` x max(value, :data:`RESOLUTION`) on either side."""
    why = []
    if decisions < min_decisions:
        why.append(f"{decisions:,} decisions, fewer than {min_decisions:,}")
    for name, (value, lo, hi) in params.items():
        scale = max(value, RESOLUTION.get(name, 0.0)) if math.isfinite(value) else math.nan
        if not (math.isfinite(hi) and math.isfinite(lo) and (hi - lo) / 2 <= max_half_width * scale):
            why.append(
                f"the {name}'s interval [{sig(lo, 3)}, {sig(hi, 3)}] is wider than "
                f"±{100 * max_half_width:g} % of {sig(scale, 3)}"
            )
    return why


@dataclass(frozen=True)
class PlayerFit:
    """The fit of one player (or the pool): see :mod:`harness.players.fit`'s docstring for each figure."""

    player: str
    model: str
    params: dict[str, Estimate]
    temperature: float
    blunder: float
    decisions: int
    seat_games: int
    regret_per_game: float
    loglik: float
    agreement: float
    agreement_model: float
    by_kind: dict[str, dict[str, Any]]
    lr: Test | None
    regret_test: Test | None
    observed_bins: np.ndarray
    expected_bins: np.ndarray
    poor: bool
    notes: tuple[str, ...] = field(default=())
    #: why the fit is too little data to be an answer (:func:`evidence`; empty: enough)
    too_little: tuple[str, ...] = field(default=())
    #: the extended family's fitted (weight, keep temperature, box temperature, blunder) (None: a dial model)
    theta: tuple[float, ...] | None = None
    #: top-1 agreement: the share of decisions whose option played is the model's most likely (ties shared)
    top1: float = math.nan
    #: every decision of the player's seat-games, one legal option included (``decisions``: the
    #: informative ones, what the likelihood uses); the denominator of :attr:`regret_per_decision`
    all_decisions: int = 0

    @property
    def enough(self) -> bool:
        """Enough evidence for an answer (:data:`MIN_DECISIONS`, :data:`MAX_HALF_WIDTH`)."""
        return not self.too_little

    @property
    def verdict(self) -> str:
        """``too little data`` (below the minimum of evidence, whatever the tests say), ``POOR`` or ``ok``."""
        return TOO_LITTLE if self.too_little else POOR if self.poor else OK

    @property
    def spec(self) -> str | None:
        """The fitted bot as a strategy spec (None for a model of the extended family: no bot plays it)."""
        if is_family(self.model):
            return None
        return _spec(self.model, Mle(self.temperature, self.blunder, self.loglik))

    @property
    def regret_per_decision(self) -> float:
        """Regret summed over every decision / every decision (:attr:`all_decisions`): what
        ``analyse`` calls a player's regret per decision (model-free; nan without any decision)."""
        return self.regret_per_game * self.seat_games / self.all_decisions if self.all_decisions else math.nan

    @property
    def band(self) -> str | None:
        """The skill band of :attr:`regret_per_decision` (:func:`harness.decisions.analysis.rating`; None
        without any decision)."""
        return rating(self.regret_per_decision) if self.all_decisions else None

    @property
    def loglik_per_decision(self) -> float | None:
        return self.loglik / self.decisions if self.decisions else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "model": self.model,
            "spec": self.spec,
            "params": {k: v.to_dict() for k, v in self.params.items()},
            "decisions": self.decisions,
            "all_decisions": self.all_decisions,
            "seat_games": self.seat_games,
            "regret_per_game": self.regret_per_game,
            "regret_per_decision": self.regret_per_decision,
            "loglik": self.loglik,
            "loglik_per_decision": self.loglik_per_decision,
            "top_choice": {"observed": self.agreement, "model": self.agreement_model},
            "top1_agreement": self.top1,
            "by_kind": self.by_kind,
            "verdict": self.verdict,
            "too_little_data": list(self.too_little),
            "goodness_of_fit": {
                "poor": self.poor,
                "threshold_p": POOR_P,
                "lr_vs_per_kind": None if self.lr is None else self.lr.to_dict(),
                "regret_distribution": None if self.regret_test is None else self.regret_test.to_dict(),
                "regret_bins": list(BIN_NAMES),
                "observed": {k: self.observed_bins[i].tolist() for i, k in enumerate(DECISION_KINDS)},
                "expected": {k: self.expected_bins[i].tolist() for i, k in enumerate(DECISION_KINDS)},
            },
            "notes": list(self.notes),
        }


def fit_choices(
    ch: Choices | Blocks,
    model: str,
    player: str = "",
    *,
    counts: PlayerCounts = PlayerCounts(),
    options: FitOptions = FitOptions(),
    step: Callable[[], None] | None = None,
) -> PlayerFit:
    """Fit ``model`` to one player's (or a pool's) decisions, with intervals at ``options.confidence``,
    goodness of fit and the verdict (``too little data`` below ``options.min_decisions`` or
    ``options.max_half_width``: :func:`evidence`); ``counts``: its seat-games' figures
    (:class:`PlayerCounts`). ``step`` is called after each of the fit's :data:`STEPS` stages (a
    progress bar)."""

    confidence, min_decisions, max_half_width = options.confidence, options.min_decisions, options.max_half_width
    seat_games, regret_per_game, all_decisions = counts.seat_games, counts.regret_per_game, counts.all_decisions
    tick = step or (lambda: None)
    model = parse_model(model)
    ch = as_blocks(ch)
    decisions = ch.decisions
    kinds = sum(bool(len(ch.where(kind=k))) for k in range(len(DECISION_KINDS)))
    theta = None
    if is_family(model):
        ch = ch.mixing(model)
        flik = FamilyLikelihood(ch)
        if len(ch):
            theta, top = family_mle(flik, model)
        else:
            theta, top = FAMILY_DEFAULTS.copy(), 0.0
        m = Mle(math.nan, float(theta[3]), top)
        tick()
        params = (
            family_intervals(flik, model, theta, top, confidence)
            if len(ch)
            else {k: Estimate(k, math.nan, math.nan, math.nan) for k in MODELS[model]}
        )
        tick()
        # the richer model: the same model fitted separately to keep and to box decisions
        rich = _family_per_kind(ch, model, theta)
        shared = sum(not k.endswith("temperature") for k in MODELS[model])
        df = shared if kinds == 2 else 0
        top1 = flik.top1(float(theta[0]))
    else:
        lik = Likelihood(ch)
        m = mle(lik, model)
        tick()
        params = (
            intervals(lik, model, m, confidence)
            if len(ch)
            else {k: Estimate(k, math.nan, math.nan, math.nan) for k in MODELS[model]}
        )
        tick()
        # the richer model: (T, blunder) fitted separately to keep and to box decisions
        rich = 0.0
        for k in range(len(DECISION_KINDS)):
            mine = ch.where(kind=k)
            if len(mine):
                rich += mle(Likelihood(mine), "solver:temperature,blunder").loglik
        df = 2 * kinds - len(MODELS[model])
        top1 = FamilyLikelihood(ch).top1(0.0)
    notes = []
    tick()
    lr = None
    if df > 0:
        stat = max(0.0, 2 * (rich - m.loglik))
        lr = Test(stat, df, float(chi2.sf(stat, df)))
    rt, observed, expected, mean = _regret_test(ch, m.temperature, m.blunder, theta)
    tick()
    by_kind = {}
    tally = _tally(ch)
    for k, name in enumerate(DECISION_KINDS):
        nk = ch.where(kind=k).decisions
        by_kind[name] = {
            "decisions": nk,
            "regret_per_decision": float(tally[k, 0]) / nk if nk else None,
            "regret_per_decision_model": float(mean[k]) if nk else None,
        }
    poor = any(t is not None and t.p < POOR_P for t in (lr, rt))
    for k in ("temperature", "keep_temperature", "box_temperature"):
        if k in params and math.isinf(params[k].hi):
            notes.append(
                f"the {k.replace('_', ' ')}'s interval reaches {T_MAX:g} points: play indistinguishable from random"
            )
    if len(ch) == 0:
        notes.append("no decision with a choice: nothing to fit")
    agree = float(tally[:, 1].sum()) / decisions if len(ch) else math.nan
    agree_model = float(expected[:, 0].sum() / decisions) if len(ch) else math.nan
    too_little = evidence(
        decisions, {k: (e.value, e.lo, e.hi) for k, e in params.items()}, min_decisions, max_half_width
    )
    return PlayerFit(
        player,
        model,
        params,
        m.temperature,
        m.blunder,
        decisions,
        seat_games,
        regret_per_game,
        m.loglik,
        agree,
        agree_model,
        by_kind,
        lr,
        rt,
        observed,
        expected,
        poor,
        tuple(notes),
        tuple(too_little),
        None if theta is None else tuple(float(x) for x in theta),
        top1,
        decisions if all_decisions is None else all_decisions,
    )


def _tally(ch: Blocks) -> np.ndarray:
    """(kinds, 2): per decision kind, the regret of the options played summed over the decisions,
    and the decisions playing a best option (regret 0)."""

    def one(i: int, c: Choices) -> np.ndarray:
        out = np.zeros((len(DECISION_KINDS), 2))
        rc = c.rc.astype(np.float64)
        for k in range(len(DECISION_KINDS)):
            m = c.kind == k
            out[k] = dot(c.w[m], rc[m]), dot(c.w[m], rc[m] == 0.0)
        return out

    parts = _each(ch, one, 1)
    return np.array([[_total(x[k, j] for x in parts) for j in range(2)] for k in range(len(DECISION_KINDS))])


#: The stages of :func:`fit_choices` (its ``step`` calls): the maximum, the intervals, the per-kind
#: fits, the regret check.
STEPS = 4
