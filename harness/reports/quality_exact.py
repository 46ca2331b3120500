"""Exact game quality of two solitaire players (harness.exact.evaluate): the metrics that depend only
on their final scores (:func:`exact_pair`) and the comeback rate from the course of their games
(:func:`exact_course`); which stay sampled and why is :data:`SAMPLED_METRICS`. The definitions
are the sampled ones of :mod:`harness.reports.quality`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.reports.quality import QualityOptions
from harness.util.errors import UserError
from harness.util.render import Table, num, pct
from harness.util.sums import convolve

#: The metrics of two solitaire players computed exactly: from their final-score distributions
#: (:func:`exact_pair`), and from the course of their games (:func:`exact_course`, each player's
#: running total after the deficit round jointly with the final).
EXACT_METRICS = ("close_games", "draw_rate", "upset_rate")
COURSE_METRICS = ("comeback_rate",)
#: Those that stay sampled, with the reason. What each metric needs of two independent players A and
#: B (D_r = X_r - Y_r, their difference after round r): comebacks only (D_d, D_R), from each player's
#: joint of (X_d, X_R); a lead change between consecutive rounds only (D_r, D_{r+1}), from each
#: player's joint of (X_r, X_{r+1}); but a lead that changes across a tied round needs the totals of
#: three rounds and more (D_{r-1}, D_r = 0, D_{r+1}) and the decisive round (the last round the
#: winner trails) the whole path of D. On scandinavian (1,398,272 states, 15 rounds) each player's
#: joint of three rounds' totals is about 10^11 products (a state's score window x the points of
#: its last turn x the points of its next) and the path's is the pair of both players' chains, 10^10
#: state pairs a layer: neither is computed.
SAMPLED_METRICS = {
    "lead_changes": (
        "a lead that changes across a tied round needs three rounds' joint totals (and more for "
        "several tied rounds): sampled; the exact bounds count the changes between consecutive "
        "rounds, and those plus a bound on the changes across a tied round from two rounds' joints"
    ),
    "decisive_round": (
        "the last round the final winner trails depends on the whole path of the difference of "
        "the two running totals, jointly over every round: sampled"
    ),
}


@dataclass(frozen=True)
class ExactPair:
    """Exact game quality of two independent (solitaire) players A and B at two seats, with the
    definitions above: ``close_games`` P(|A - B| <= close_margin) (a draw is close), ``draw_rate``
    P(A = B), ``upset_rate`` the weaker's (lower exact mean; A on a tie) P(win) + P(draw) / 2."""

    a: str
    b: str
    weaker: str
    close_margin: int
    close_games: float
    draw_rate: float
    upset_rate: float

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "weaker": self.weaker,
            "close_margin": self.close_margin,
            "close_games": self.close_games,
            "draw_rate": self.draw_rate,
            "upset_rate": self.upset_rate,
        }


def exact_pair(a: Any, b: Any, options: QualityOptions = QualityOptions()) -> ExactPair:
    """:class:`ExactPair` of two :class:`harness.exact.evaluate.Evaluation` (their ranking-score
    distributions and means)."""
    pa, pb = np.asarray(a.ranking, dtype=np.float64), np.asarray(b.ranking, dtype=np.float64)
    diff = convolve(pa, pb[::-1])  # P(A - B = k) at index k + len(pb) - 1
    zero = len(pb) - 1
    m = options.close_margin
    close = float(diff[max(zero - m, 0) : zero + m + 1].sum())
    draw = float(diff[zero])
    a_wins = float(diff[zero + 1 :].sum())
    b_wins = max(0.0, 1.0 - a_wins - draw)
    a_weaker = a.mean <= b.mean
    upset = (a_wins if a_weaker else b_wins) + 0.5 * draw
    return ExactPair(a.bot, b.bot, a.bot if a_weaker else b.bot, m, close, draw, upset)


def exact_quality_table(pairs: Sequence[ExactPair], course_note: str | None = None) -> Table:
    """``evaluate``'s table of :class:`ExactPair`; ``course_note`` says where the course metrics are
    (default: that they are sampled)."""
    m = pairs[0].close_margin if pairs else QualityOptions().close_margin
    return Table(
        "Game quality at two seats (exact, from the two final-score distributions)",
        ("A", "B", f"close games (<= {m} points)", "draws", "upset rate", "weaker"),
        tuple((p.a, p.b, pct(p.close_games, 2), pct(p.draw_rate, 3), pct(p.upset_rate, 2), p.weaker) for p in pairs),
        (
            "upset rate: the weaker bot's (lower exact mean) score rate, win 1, draw 1/2",
            course_note
            or "lead changes, decisive round and comebacks follow the course of a game: sampled "
            "(run, report), or exactly where they can be with --course",
        ),
    )


@dataclass(frozen=True)
class ExactCourse:
    """The course-of-game metrics of two independent (solitaire) players A and B at two seats, with
    report's definitions (:mod:`harness.game.outcome`): ``comeback_rate`` exact (the share of games won,
    a draw counting 1/2 to each, by a seat ``comeback_deficit`` or more points behind after round
    ``deficit_round``); lead changes between exact bounds, ``lead_changes_lo`` the expected number
    of changes between two consecutive rounds and ``lead_changes_hi`` that plus a bound on those
    across a tied round, from the events of two consecutive rounds each implies (a lead or a tie
    before the tie, the other lead after it; see :data:`SAMPLED_METRICS`)."""

    a: str
    b: str
    comeback_deficit: int
    deficit_round: int
    comeback_rate: float
    lead_changes_lo: float
    lead_changes_hi: float

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "comeback_deficit": self.comeback_deficit,
            "deficit_round": self.deficit_round,
            "comeback_rate": self.comeback_rate,
            "lead_changes_bounds": [self.lead_changes_lo, self.lead_changes_hi],
            "sampled": dict(SAMPLED_METRICS),
        }


def _before(m: np.ndarray, axis: int) -> np.ndarray:
    """Sums over the indices below each one along ``axis`` (exclusive cumulative sums)."""
    c = np.cumsum(m, axis=axis)
    return np.concatenate(
        [np.zeros_like(np.take(c, [0], axis=axis)), np.take(c, range(c.shape[axis] - 1), axis=axis)], axis=axis
    )


def _after(m: np.ndarray, axis: int) -> np.ndarray:
    """Sums over the indices above each one along ``axis``."""
    return np.flip(_before(np.flip(m, axis), axis), axis)


def _from(m: np.ndarray, axis: int) -> np.ndarray:
    """Sums over each index and those above it along ``axis``."""
    return np.flip(np.cumsum(np.flip(m, axis), axis=axis), axis)


def _comebacks(a: np.ndarray, b: np.ndarray, c: int) -> float:
    """A's comebacks: P(A wins, B leads by c or more after the deficit round) + 1/2 P(a draw, the
    same), ``a``, ``b`` the players' joints P(X_d = s, X_R = f)."""
    n = len(a)
    ge = _from(b, 0)  # [t, f] = P(Y_d >= t, Y_R = f)
    lt = _before(ge, 1)  # [t, f] = P(Y_d >= t, Y_R < f)
    s = np.arange(n)
    ok = s + c < n
    rows = np.minimum(s + c, n - 1)
    return float(((lt[rows] + 0.5 * ge[rows]) * a)[ok].sum())


def exact_course(a: Any, b: Any, options: QualityOptions = QualityOptions()) -> ExactCourse:
    """:class:`ExactCourse` of two :class:`harness.exact.course.Course` of one rule set.

    For independent players every figure is a sum over one player's joint of the other's cumulative
    joint: P(D_r > 0, D_{r+1} < 0) = sum over (s, v) of P(X_r = s, X_{r+1} = v) P(Y_r < s, Y_{r+1} > v),
    and likewise the comebacks over (X_d, X_R)."""
    if (a.digest, a.rounds, a.cells) != (b.digest, b.rounds, b.cells):
        raise UserError(f"the courses of {a.bot} and {b.bot} are of different rule sets")
    lo = ties = 0.0
    before = None  # the pairs of rounds (r - 1, r)
    for r in range(1, a.rounds):
        pa, pb = a.pair(r), b.pair(r)
        lo += float((pa * _after(_before(pb, 0), 1)).sum() + (pa * _before(_after(pb, 0), 1)).sum())
        if before is not None:
            # a change after round r + 1 across a tie after round r: a lead after it (B's or A's), and
            # before it A's or B's lead after round r - 1, or a tie then too (the leader from earlier).
            # Of two consecutive rounds' events: each change is a lead after the tie; one to B's lead
            # came from A's lead or a tie before, one to A's from B's or a tie; and each kind of
            # change is at most its lead before and its lead after
            qa, qb = before
            a_led = float((qa * _before(qb, 0)).sum())  # P(D_r-1 > 0, D_r = 0)
            b_led = float((qa * _after(qb, 0)).sum())
            tied = float((qa * qb).sum())  # P(D_r-1 = 0, D_r = 0)
            b_leads = float((pa * _after(pb, 1)).sum())  # P(D_r = 0, D_r+1 < 0)
            a_leads = float((pa * _before(pb, 1)).sum())
            ties += min(
                a_leads + b_leads,
                min(b_leads, a_led + tied) + min(a_leads, b_led + tied),
                min(b_leads, a_led) + min(a_leads, b_led) + tied,
            )
        before = pa, pb
    c = options.comeback_deficit
    fa, fb = a.final_joint(), b.final_joint()
    return ExactCourse(a.bot, b.bot, c, a.deficit_round, _comebacks(fa, fb, c) + _comebacks(fb, fa, c), lo, lo + ties)


def exact_course_table(pairs: Sequence[ExactCourse]) -> Table:
    c, d = (pairs[0].comeback_deficit, pairs[0].deficit_round) if pairs else (QualityOptions().comeback_deficit, 0)
    return Table(
        "The course of a game at two seats (exact, from each bot's running totals round by round)",
        ("A", "B", f"comeback rate ({c}+ behind after round {d})", "lead changes (exact bounds)"),
        tuple(
            (p.a, p.b, pct(p.comeback_rate, 3), f"{num(p.lead_changes_lo, 4)} .. {num(p.lead_changes_hi, 4)}")
            for p in pairs
        ),
        (
            "comeback rate: won (a draw 1/2) by a seat that trailed by the deficit after the round, exact",
            f"lead changes: {SAMPLED_METRICS['lead_changes']}",
            f"decisive round: {SAMPLED_METRICS['decisive_round']}",
        ),
    )
