"""Model choice on held-out games: each player's seat-games split in halves by a seeded hash
(:func:`fold`), every model fitted to one half and judged on the other (:func:`holdout`,
:class:`Holdout`), the best held-out log-likelihood per decision chosen (:class:`ModelChoice`)."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from harness.players.fit.data import Choices
from harness.players.fit.families import FamilyLikelihood, family_mle
from harness.players.fit.likelihood import Likelihood, mle
from harness.players.fit.models import is_family
from harness.players.fit.store import Blocks


@dataclass(frozen=True)
class Holdout:
    """One model's held-out figures for one player: fitted (maximum likelihood, no intervals) to
    the player's training games, judged on the others: log-likelihood per decision and top-1
    agreement (:attr:`harness.players.fit.player.PlayerFit.top1`) there."""

    model: str
    loglik_per_decision: float
    top1: float

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "loglik_per_decision": self.loglik_per_decision, "top1_agreement": self.top1}


@dataclass(frozen=True)
class ModelChoice:
    """The model choice of one player: every model's :class:`Holdout`, the decisions of each half
    (seat-games split by :func:`fold`) and the chosen model, the best held-out log-likelihood per
    decision (a tie to the model listed first, the simpler)."""

    player: str
    train_decisions: int
    test_decisions: int
    models: tuple[Holdout, ...]

    @property
    def chosen(self) -> str | None:
        scored = [h for h in self.models if math.isfinite(h.loglik_per_decision)]
        if not scored or not self.test_decisions:
            return None
        return max(scored, key=lambda h: h.loglik_per_decision).model  # max keeps the first of equals

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "train_decisions": self.train_decisions,
            "test_decisions": self.test_decisions,
            "models": [h.to_dict() for h in self.models],
            "chosen": self.chosen,
        }


def holdout(train: Choices | Blocks, test: Choices | Blocks, model: str) -> Holdout:
    """``model`` fitted to ``train`` and judged on ``test`` (:class:`Holdout`)."""
    if not len(train) or not len(test):
        return Holdout(model, math.nan, math.nan)
    if is_family(model):
        theta, _ = family_mle(FamilyLikelihood(train.mixing(model)), model)
        lik = FamilyLikelihood(test.mixing(model))
        return Holdout(model, lik.at(theta)[0] / test.decisions, lik.top1(float(theta[0])))
    m = mle(Likelihood(train), model)
    return Holdout(
        model, Likelihood(test).at(m.temperature, m.blunder) / test.decisions, FamilyLikelihood(test).top1(0.0)
    )


def fold(seed: int, game: Any, seat: int) -> int:
    """The half (0 trains, 1 tests) of seat ``seat`` of game ``game`` in the held-out split of
    ``seed``: a bit of a hash of the three (each seat-game on its own, whatever the order or the
    batches the records come in)."""
    return hashlib.blake2b(f"{seed}/{game}/{seat}".encode(), digest_size=1).digest()[0] & 1
