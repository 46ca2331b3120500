"""Game logs as the opponents a level is tuned against: the complete seat-games of the logs, per
player (:class:`LoggedGames`, :func:`read_logged`), and the score of a bot's exact final-score
distribution against the logged finals (:func:`per_game`, :func:`player_means`), with the checks
the tuning makes of the levels' distributions (:func:`dominance`). The tuning itself is
:mod:`harness.players.opponents`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from harness.decisions.skill import analyse_records
from harness.game.rules import RuleSet
from harness.records.record import BadGame
from harness.util.errors import UserError

#: Stochastic dominance is checked to this tolerance on the CDFs.
DOMINANCE_TOL = 1e-12


# ---------------------------------------------------------------------------------------------
# the logged games


@dataclass(frozen=True, eq=False)
class LoggedGames:
    """The complete seat-games of game logs: per player its ``labels`` entry, regret per decision
    and skill band; per game the ``player`` (index into ``labels``), the ``final`` score and the
    player's exact ``luck``. ``bad``: the games skipped (partial, unreadable)."""

    source: str
    rules: RuleSet
    labels: tuple[str, ...]
    regret_per_decision: np.ndarray
    bands: tuple[str, ...]
    player: np.ndarray
    final: np.ndarray
    luck: np.ndarray
    bad: tuple[BadGame, ...] = ()

    @property
    def games(self) -> int:
        return int(self.final.size)

    @property
    def players(self) -> int:
        return len(self.labels)

    def in_band(self, band: str | None) -> np.ndarray:
        """The players (indices) of ``band`` (None: every player)."""
        return np.array([i for i, b in enumerate(self.bands) if band is None or b == band], dtype=np.int64)

    def subset(self, players: Sequence[int] | np.ndarray) -> LoggedGames:
        """The games of ``players`` only (indices, renumbered in the order given)."""
        players = [int(p) for p in players]
        new = np.full(len(self.labels), -1, dtype=np.int64)
        new[players] = np.arange(len(players))
        keep = new[self.player] >= 0
        return LoggedGames(
            self.source,
            self.rules,
            tuple(self.labels[p] for p in players),
            self.regret_per_decision[players],
            tuple(self.bands[p] for p in players),
            new[self.player[keep]],
            self.final[keep],
            self.luck[keep],
            self.bad,
        )

    def split(self, seed: int) -> tuple[LoggedGames, LoggedGames]:
        """The players shuffled with ``seed``, the first half (rounded up) to tune and the rest to check."""
        order = np.random.default_rng(seed).permutation(self.players)
        half = -(-self.players // 2)
        return self.subset(np.sort(order[:half])), self.subset(np.sort(order[half:]))


def read_logged(source: Any, rules: RuleSet, cache_dir: Any = None) -> LoggedGames:
    """The logged games of ``source`` (a :class:`harness.records.record.RecordStream`, a read result or
    records) with each player's regret per decision and each game's exact luck
    (:func:`harness.decisions.skill.analyse_records`), checked to be games of ``rules`` (the levels' rule
    set). :class:`UserError` for logs of another rule set or of several, or a rule set whose
    ranking is not the total; :class:`harness.records.record.NoUsableGame` for logs without a game."""
    rep = analyse_records(source, worst=0, cache_dir=cache_dir)
    if len(rep.rules) > 1:
        raise UserError(
            f"{rep.source}: games of {len(rep.rules)} rule sets "
            f"({'; '.join(r['rules'] for r in rep.rules)}): levels are tuned on one"
        )
    (r,) = rep.rules
    if r["digest"] != rules.digest:
        raise UserError(
            f"{rep.source}: games of {r['rules']}, but the levels are for {rules.name}: "
            "name the logs' rule set in the levels file (rules = ..., settings = ...)"
        )
    if rules.columns > 1 and not rules.add_columns:
        raise UserError(
            f"rule set {rules.name}: the winner is the best column (add_columns = false), which the "
            "logs' totals do not give"
        )
    ps = rep.players
    return LoggedGames(
        rep.source,
        rules,
        tuple(p.label for p in ps),
        np.array([p.regret_per_decision for p in ps], dtype=np.float64),
        tuple(p.rating for p in ps),
        np.concatenate([np.full(p.games, i, dtype=np.int64) for i, p in enumerate(ps)]),
        np.rint(np.concatenate([p.finals for p in ps])).astype(np.int64),
        np.concatenate([p.lucks for p in ps]).astype(np.float64),
        tuple(rep.bad),
    )


# ---------------------------------------------------------------------------------------------
# the score of a distribution against logged finals


def rate_table(distribution: np.ndarray) -> np.ndarray:
    """``t[s] = P(B > s) + 1/2 P(B = s)`` for every score s of ``distribution`` (P(B = s))."""
    p = np.asarray(distribution, dtype=np.float64)
    above = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]])  # summed from the top: no cancellation
    return above + 0.5 * p


def per_game(distribution: np.ndarray, finals: np.ndarray) -> np.ndarray:
    """The bot's exact score against each logged final (0 against a final above its range)."""
    t = rate_table(distribution)
    f = np.asarray(finals, dtype=np.int64)
    out = np.zeros(f.size)
    inside = (f >= 0) & (f < t.size)
    out[inside] = t[f[inside]]
    out[f < 0] = 1.0
    return out


def player_means(y: np.ndarray, logs: LoggedGames) -> np.ndarray:
    """Per player, the mean of the per-game values ``y`` over that player's games."""
    n = np.bincount(logs.player, minlength=logs.players)
    return np.bincount(logs.player, weights=y, minlength=logs.players) / np.maximum(n, 1)


def beats_rank(share: float, players: int) -> int:
    """k = ceil(share x players): beating a share ``share`` of ``players`` is beating k of them."""
    return max(1, min(players, math.ceil(share * players - 1e-9)))


def dominance(dists: Sequence[np.ndarray], tol: float = DOMINANCE_TOL) -> int | None:
    """None when each distribution (in dial order) is stochastically dominated by the one before
    (each CDF at or above the previous one's, to ``tol``), or by the one after (each below): then
    any score rate against any finals is monotone over them. Otherwise the first index i where
    the order between ``dists[i]`` and ``dists[i + 1]`` is not that of the first step."""
    cdfs = []
    size = max((len(d) for d in dists), default=0)
    for d in dists:
        c = np.cumsum(np.pad(np.asarray(d, dtype=np.float64), (0, size - len(d))))
        cdfs.append(c)
    sign = 0
    for i in range(len(cdfs) - 1):
        diff = cdfs[i + 1] - cdfs[i]
        up, down = bool(np.all(diff >= -tol)), bool(np.all(diff <= tol))
        step = 0 if up and down else 1 if up else -1 if down else None
        if step is None or (step and sign and step != sign):
            return i
        sign = sign or step
    return None
