"""Game-quality metrics: how a rule set plays as a game designer sees it (skill, upsets, leads, close games).

Every metric is a function of the means of one per-game observation vector ``z`` (a game index
is the unit: in a tournament all lineups of game g share its dice, so its rows are correlated;
games are independent). :class:`QualityModel` lays ``z`` out for a run and fills it from a
window of rows; the means are streamed in a :class:`harness.stats.CoMoments`, never the rows; each
metric's interval is the delta method on those means (:func:`harness.stats.delta_estimate`;
for a plain mean it is the Student-t interval). ``report`` shows one run's metrics
(:class:`harness.reports.summary.QualitySection`), ``compare`` two runs' side by side
(:class:`QualityComparison`: differences on the same games, Holm-corrected).

Definitions (the course of a game -- rounds, leader, lead change, behind, deficit -- is defined
in :mod:`harness.game.outcome`; a game's *winners* are the seats with the highest ranking score, each
counted with weight 1/k when k share it: "ties half" at two seats):

* ``skill_share`` (per entrant, runs played with ``--analyse``): Var(regret) / (Var(luck) +
  Var(regret)) over the entrant's seat-games; 0 for the optimal bot (its regret is 0 in every
  game), near 1 when the spread of its results comes from its own play rather than the dice.
* ``adjusted_mean`` (per entrant): the luck-adjusted mean score (total - luck); the plain mean
  when the run was not analysed.
* ``upset_rate`` (per pairing of two different entrants): the share of their meetings the weaker
  entrant (the one with the lower adjusted mean over the run) wins, ties half; a meeting is a pair
  of seats of one game, so at tables of more than two it counts who scored higher of the two.
* ``first_mover_edge``: seat 0's share of the wins (ties split) minus its fair share 1/S, over the
  lineups where seat order is balanced: lineups of equal bots, and complete sets of rotations of
  one lineup (a seat-swapped pair (A, B) + (B, A) at two seats). Positive: moving first pays.
* ``lead_changes``: mean number of lead changes per game.
* ``decisive_round``: mean decisive round (the first round from which the final winner is never
  behind again; 1 = never behind).
* ``close_games``: share of games whose winning margin (highest ranking score minus the next
  seat's) is at most ``close_margin`` points (5); a draw has margin 0 and counts as close.
* ``comeback_rate``: share of games won by a seat that trailed by ``comeback_deficit`` points (30)
  or more after round :func:`harness.game.outcome.deficit_round` (10).

The per-run metrics are over the lineups of two or more seats (each game's lineups averaged).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.util.errors import UserError
from harness.game.outcome import deficit_round, rank_column
from harness.util.render import MISSING, Table, ci_level, count, interval, num, p_value, pct, pts, sig, table_lines
from harness.records.rundir import RunInfo, chunk_columns
from harness.stats import CoMoments, Estimate, delta_estimate, holm, wilson

#: Row columns the engine records for the course of a game (:class:`harness.game.outcome.Leads`).
ROUND_COLUMNS = ("lead_changes", "last_behind", "deficit")

#: The per-run metrics, in report order.
RUN_METRICS = ("first_mover_edge", "lead_changes", "decisive_round", "close_games", "comeback_rate")

#: Every metric name as it appears in ``report --json`` and ``compare --json`` (under ``quality``).
METRICS = ("skill_share", "upset_rate") + RUN_METRICS

#: Which metrics are shares (printed as %).
SHARES = {"skill_share", "upset_rate", "first_mover_edge", "close_games", "comeback_rate"}

#: Shares of games in which something happens: when no game varies (none or all), the interval is
#: Wilson's for 0 or n events in n games instead of the delta method's zero width.
EVENT_RATES = {"upset_rate", "close_games", "comeback_rate"}


@dataclass(frozen=True)
class QualityOptions:
    """Report-time thresholds: a close game is won by at most ``close_margin`` points; a comeback is
    a win by a seat ``comeback_deficit`` or more points behind after the deficit round."""

    close_margin: int = 5
    comeback_deficit: int = 30

    def __post_init__(self) -> None:
        if self.close_margin < 0:
            raise UserError(f"--close-margin must be >= 0 points, got {self.close_margin}")
        if self.comeback_deficit < 1:
            raise UserError(f"--comeback-deficit must be >= 1 point, got {self.comeback_deficit}")


def run_analysed(info: RunInfo) -> bool:
    """Whether the run was played with ``analyse = true`` (rows carry luck and regret)."""
    return bool((info.manifest.get("config") or {}).get("analyse"))


@dataclass(frozen=True)
class Item:
    """One metric as a function of the mean of ``z``: its value and gradient there."""

    metric: str
    scope: str  # "run", or the entrant's label, or the pairing's name
    value: float
    grad: np.ndarray
    bounds: tuple[float, float]
    extra: Mapping[str, Any]


class QualityModel:
    """The layout of a run's per-game observation vector ``z`` and the metrics defined on its mean.

    ``columns``: the row columns available in every chunk (default: read from the run);
    ``use_luck``: use ``luck``/``regret`` when present (``compare --no-analyse`` does not).
    """

    def __init__(
        self,
        info: RunInfo,
        options: QualityOptions = QualityOptions(),
        columns: set[str] | None = None,
        use_luck: bool = True,
    ) -> None:
        self.info, self.options = info, options
        #: the entrant order pairings are named in (compare names both runs' in BASE's)
        self.order: tuple[str, ...] = tuple(info.entrants)
        have = chunk_columns(info) if columns is None else set(columns)
        self.rcol = rank_column(info.rules)
        self.rounds = info.rules.columns * info.rules.n_boxes
        self.deficit_round = deficit_round(self.rounds)
        self.eidx = info.entrant_index()
        self.luck = use_luck and {"luck", "regret"} <= have
        self.course = set(ROUND_COLUMNS) <= have
        self.multi = [li for li, lu in enumerate(info.lineups) if len(lu) >= 2]
        self.units = _balanced_groups(info.lineups)
        self.present = sorted({e for row in self.eidx for e in row})
        self.slots = {
            e: [(li, s) for li, row in enumerate(self.eidx) for s, x in enumerate(row) if x == e] for e in self.present
        }
        pairs: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        for li, row in enumerate(self.eidx):
            for s in range(len(row)):
                for t in range(s + 1, len(row)):
                    a, b = row[s], row[t]
                    if a != b:
                        pairs.setdefault((min(a, b), max(a, b)), []).append((li, s, t) if a < b else (li, t, s))
        self.pairs = pairs
        self.why: dict[str, str] = {}
        if not {"luck", "regret"} <= have:
            self.why["skill_share"] = "needs luck and regret: play the run with --analyse"
        elif not use_luck:
            self.why["skill_share"] = "luck not used (--no-analyse)"
        if not pairs:
            self.why["upset_rate"] = "no two different entrants meet at a table"
        if not self.multi:
            for m in RUN_METRICS:
                self.why[m] = "no table of two or more seats"
        else:
            if not self.units:
                self.why["first_mover_edge"] = (
                    "no lineup of equal bots and no complete set of seat rotations (e.g. (A, B) and (B, A))"
                )
            if not self.course:
                for m in ("lead_changes", "decisive_round", "comeback_rate"):
                    self.why[m] = (
                        "the rows have no lead_changes/last_behind/deficit columns (played before they existed)"
                    )
        names: list[str] = []
        for e in self.present:
            names.append(f"adj:{e}")
            if self.luck:
                names += [f"l:{e}", f"r:{e}", f"l2:{e}", f"r2:{e}"]
        names += [f"pts:{a}:{b}" for a, b in pairs]
        names += [m for m in RUN_METRICS if m not in self.why]
        self.names = names
        self.pos = {n: i for i, n in enumerate(names)}

    def applies(self, metric: str) -> bool:
        return metric not in self.why

    def columns(self) -> list[str]:
        cols = ["total", self.rcol]
        if self.luck:
            cols += ["luck", "regret"]
        if self.course:
            cols += list(ROUND_COLUMNS)
        return list(dict.fromkeys(cols))

    def observe(self, data: Sequence[Mapping[str, np.ndarray]], games: int) -> np.ndarray:
        """(games, M) float64: ``z`` of each game of a window (``data[l][column]``: (games, S_l)).

        Seats are few and games many: every step is a whole-column operation over the games
        (a reduction along a row of 2..8 seats is several times slower in numpy)."""
        z = np.zeros((len(self.names), games))  # rows contiguous; returned transposed
        pos = self.pos
        for e in self.present:
            k = len(self.slots[e])
            for li, s in self.slots[e]:
                d = data[li]
                tot = d["total"][:, s].astype(np.float64)
                if self.luck:
                    lk, rg = d["luck"][:, s], d["regret"][:, s]
                    z[pos[f"adj:{e}"]] += (tot - lk) / k
                    z[pos[f"l:{e}"]] += lk / k
                    z[pos[f"r:{e}"]] += rg / k
                    z[pos[f"l2:{e}"]] += lk * lk / k
                    z[pos[f"r2:{e}"]] += rg * rg / k
                else:
                    z[pos[f"adj:{e}"]] += tot / k
        for (a, b), places in self.pairs.items():
            j = pos[f"pts:{a}:{b}"]
            for li, s, t in places:
                rank = data[li][self.rcol]
                z[j] += 0.5 * (1.0 + np.sign(rank[:, s].astype(np.int32) - rank[:, t])) / len(places)
        won = {li: self._winners(data[li][self.rcol]) for li in self.multi}
        m = len(self.multi)
        close, course = "close_games" in pos, "lead_changes" in pos
        for li in self.multi:
            d = data[li]
            _, flags, share, margin = won[li]
            if close:
                z[pos["close_games"]] += (margin <= self.options.close_margin) / m
            if course:
                z[pos["lead_changes"]] += d["lead_changes"][:, 0] / m
                lb, df = d["last_behind"], d["deficit"]
                for s, f in enumerate(flags):
                    w = np.where(f, share, 0.0) / m
                    z[pos["decisive_round"]] += w * (lb[:, s] + 1)
                    z[pos["comeback_rate"]] += w * (df[:, s] >= self.options.comeback_deficit)
        if "first_mover_edge" in pos:
            j = pos["first_mover_edge"]
            u = len(self.units)
            for group in self.units:
                seats = len(self.info.lineups[group[0]])
                for li in group:
                    _, flags, share, _ = won[li]
                    z[j] += np.where(flags[0], share, 0.0) / len(group) / u
                z[j] -= 1.0 / seats / u
        return z.T

    @staticmethod
    def _winners(rank: np.ndarray) -> tuple[np.ndarray, list[np.ndarray], np.ndarray, np.ndarray]:
        """Of (B, S) ranking scores: the highest (B,), each seat's "has it" flag (S x (B,)), the
        share 1/k of each of the k seats that have it (B,), and the winning margin (B,) (0 for a
        shared win)."""
        cols = [rank[:, s].astype(np.int32) for s in range(rank.shape[1])]
        top = cols[0].copy()
        for c in cols[1:]:
            np.maximum(top, c, out=top)
        flags = [c == top for c in cols]
        k = np.sum(flags, axis=0)
        second = np.full(top.shape, np.iinfo(np.int32).min, dtype=np.int32)
        for c in cols:
            np.maximum(second, np.where(c < top, c, second), out=second)
        margin = np.where(k > 1, 0, top - second)
        return top, flags, 1.0 / k, margin

    def weaker(self, mean: np.ndarray) -> dict[tuple[int, int], int]:
        """For each pairing (a, b), the entrant with the lower adjusted mean (a on a tie)."""
        return {(a, b): (a if mean[self.pos[f"adj:{a}"]] <= mean[self.pos[f"adj:{b}"]] else b) for a, b in self.pairs}

    def items(self, mean: np.ndarray, weaker: Mapping[tuple[int, int], int] | None = None) -> list[Item]:
        """Every metric that applies, with its value and gradient at ``mean`` (M,); ``weaker``
        overrides which entrant of a pairing is the underdog (compare uses BASE's for both runs)."""
        pos, n = self.pos, len(self.names)
        names = self.info.entrants
        out: list[Item] = []

        def unit(j: int, sign: float = 1.0) -> np.ndarray:
            g = np.zeros(n)
            g[j] = sign
            return g

        for m in RUN_METRICS:
            if m in pos:
                out.append(Item(m, "run", float(mean[pos[m]]), unit(pos[m]), _BOUNDS[m], {}))
        if self.luck:
            for e in self.present:
                a1, b1, a2, b2 = (float(mean[pos[f"{p}:{e}"]]) for p in ("l", "r", "l2", "r2"))
                vl, vr = max(a2 - a1 * a1, 0.0), max(b2 - b1 * b1, 0.0)
                v = vl + vr
                g = np.zeros(n)
                if v > 0:
                    # f = vr / (vl + vr): df/dvl = -vr/v^2, df/dvr = vl/v^2; dvl/da1 = -2 a1, dvl/da2 = 1
                    g[pos[f"l:{e}"]], g[pos[f"l2:{e}"]] = 2 * a1 * vr / v**2, -vr / v**2
                    g[pos[f"r:{e}"]], g[pos[f"r2:{e}"]] = -2 * b1 * vl / v**2, vl / v**2
                out.append(
                    Item(
                        "skill_share",
                        names[e],
                        vr / v if v > 0 else math.nan,
                        g,
                        (0.0, 1.0),
                        {"var_luck": vl, "var_regret": vr},
                    )
                )
        under = self.weaker(mean) if weaker is None else weaker
        for a, b in self.pairs:
            j = pos[f"pts:{a}:{b}"]
            low = under[(a, b)]
            p = float(mean[j])
            value, g = (p, unit(j)) if low == a else (1.0 - p, unit(j, -1.0))
            out.append(
                Item(
                    "upset_rate",
                    pair_name(names[a], names[b], self.order),
                    value,
                    g,
                    (0.0, 1.0),
                    {
                        "weaker": names[low],
                        "stronger": names[b if low == a else a],
                        "gap": abs(float(mean[pos[f"adj:{a}"]] - mean[pos[f"adj:{b}"]])),
                    },
                )
            )
        return out

    def summary(self, c: CoMoments, confidence: float) -> dict[str, Any]:
        """The ``quality`` part of ``summary.json`` from the streamed co-moments of ``z``."""
        out: dict[str, Any] = {
            # games as everywhere in a report: games played in the run, every lineup's; the intervals'
            # unit is the game index (each index is played once by every lineup, on the same dice)
            "confidence": confidence,
            "games": c.n * len(self.info.lineups),
            "game_indices": c.n,
            "lineups": len(self.info.lineups),
            "analysed": self.luck,
            "options": self.option_dict(),
            "applies": {m: m not in self.why for m in METRICS},
            "why": dict(self.why),
        }
        for m in RUN_METRICS:
            out[m] = None
        mean = c.mean if c.n else np.zeros(len(self.names))
        by_entrant: dict[str, dict[str, Any]] = {}
        for e in self.present:
            est = delta_estimate(
                c, float(mean[self.pos[f"adj:{e}"]]), _unit(len(self.names), self.pos[f"adj:{e}"]), confidence
            )
            by_entrant[self.info.entrants[e]] = {
                "strategy": self.info.entrants[e],
                "seat_games": c.n * len(self.slots[e]),
                "adjusted_mean": est.value,
                "adjusted_ci": [est.lo, est.hi],
                "adjusted_is": "total - luck" if self.luck else "total (not analysed)",
                "skill_share": None,
                "skill_share_ci": None,
            }
        pairings = []
        for it in self.items(mean):
            est = estimate(c, it, confidence)
            if it.scope == "run":
                out[it.metric] = {"value": est.value, "ci": [est.lo, est.hi], "game_indices": c.n}
            elif it.metric == "skill_share":
                by_entrant[it.scope].update(skill_share=est.value, skill_share_ci=[est.lo, est.hi], **it.extra)
            else:
                pairings.append(
                    {
                        "name": it.scope,
                        **it.extra,
                        "upset_rate": est.value,
                        "upset_ci": [est.lo, est.hi],
                        "game_indices": c.n,
                    }
                )
        out["entrants"] = list(by_entrant.values())
        out["pairings"] = pairings
        return out

    def option_dict(self) -> dict[str, Any]:
        return {
            "close_margin": self.options.close_margin,
            "comeback_deficit": self.options.comeback_deficit,
            "deficit_round": self.deficit_round,
            "rounds": self.rounds,
        }


_BOUNDS: dict[str, tuple[float, float]] = {
    "first_mover_edge": (-1.0, 1.0),
    "lead_changes": (0.0, math.inf),
    "decisive_round": (1.0, math.inf),
    "close_games": (0.0, 1.0),
    "comeback_rate": (0.0, 1.0),
}


def estimate(c: CoMoments, it: Item, confidence: float) -> Estimate:
    """``it``'s interval on the co-moments ``c`` (delta method; Wilson for an event rate that is 0 or
    1 in every game: skill_share of the optimal bot stays exactly [0, 0], its regret is 0 by
    construction, not by chance)."""
    est = delta_estimate(c, it.value, it.grad, confidence, it.bounds)
    if it.metric in EVENT_RATES and est.se == 0.0 and it.value in (0.0, 1.0) and c.n >= 1:
        lo, hi = wilson(int(it.value) * c.n, c.n, confidence)
        return Estimate(it.value, lo, hi, 0.0, c.n, confidence, est.p_value)
    return est


def _unit(n: int, j: int) -> np.ndarray:
    g = np.zeros(n)
    g[j] = 1.0
    return g


def pair_name(a: str, b: str, order: Sequence[str] = ()) -> str:
    """A pairing's name, its entrants in ``order`` (the run's entrants, as every table of report
    and compare lists them; labels not in it after, sorted)."""
    rank = {x: i for i, x in enumerate(order)}
    x, y = sorted((a, b), key=lambda lab: (rank.get(lab, len(rank)), lab))
    return f"{x} vs {y}"


def _balanced_groups(lineups: Sequence[tuple[str, ...]]) -> list[list[int]]:
    """Groups of lineup indices in which seat 0 is fair game: the distinct cyclic rotations of one
    lineup, all present (a lineup of equal bots is its own group; (A, B) with (B, A) is one)."""
    index: dict[tuple[str, ...], int] = {}
    for i, lu in enumerate(lineups):
        index.setdefault(tuple(lu), i)
    used: set[int] = set()
    out = []
    for i, lu in enumerate(lineups):
        if len(lu) < 2 or i in used or index[tuple(lu)] != i:
            continue
        rots = list(dict.fromkeys(tuple(lu[k:]) + tuple(lu[:k]) for k in range(len(lu))))
        if all(r in index and index[r] not in used for r in rots):
            group = [index[r] for r in rots]
            used.update(group)
            out.append(group)
    return out


class QualityAccumulator:
    """One run's metrics, streamed: :meth:`add` a window, then :meth:`summary`."""

    def __init__(self, model: QualityModel) -> None:
        self.model = model
        self.co = CoMoments.empty(len(model.names))

    def add(self, data: Sequence[Mapping[str, np.ndarray]], games: int) -> None:
        self.co.add(self.model.observe(data, games))

    def summary(self, confidence: float) -> dict[str, Any]:
        return self.model.summary(self.co, confidence)


# ---------------------------------------------------------------------------------------------
# two runs


class QualityComparison:
    """The metrics of two runs on the same games, side by side, with their paired differences.

    Both models must be built on the same available columns (the runs' common ones). The
    observation of game g is ``(z_base, z_candidate)``; each difference's interval is the delta
    method on their joint means, so pairing on the same dice shrinks it like any paired
    difference (on different seeds the cross terms are noise around 0 and it is the unpaired one).
    Per-entrant and per-pairing metrics are matched by label; an upset is the underdog of BASE's
    run in both.
    """

    def __init__(self, base: QualityModel, cand: QualityModel) -> None:
        self.base, self.cand = base, cand
        # one pairing name in both runs: BASE's entrant order, then the candidate's other entrants
        cand.order = base.order + tuple(e for e in cand.order if e not in base.order)
        self.co = CoMoments.empty(len(base.names) + len(cand.names))

    def columns(self) -> list[str]:
        return list(dict.fromkeys(self.base.columns() + self.cand.columns()))

    def add(
        self, base: Sequence[Mapping[str, np.ndarray]], cand: Sequence[Mapping[str, np.ndarray]], games: int
    ) -> None:
        self.co.add(np.hstack([self.base.observe(base, games), self.cand.observe(cand, games)]))

    def result(self, confidence: float) -> dict[str, Any]:
        """``compare --json``'s ``quality``: one row per metric both runs have, with each run's value
        and interval, the difference (candidate - base) with its interval and p-value, the Holm-adjusted
        p-value and whether the change is significant at 1 - confidence, family-wise."""
        nb = len(self.base.names)
        co = self.co
        mean = co.mean if co.n else np.zeros(co.mean.shape)
        mb, mc = mean[:nb], mean[nb:]
        sub_b = CoMoments(co.n, mb, co.cm[:nb, :nb])
        sub_c = CoMoments(co.n, mc, co.cm[nb:, nb:])
        weaker_b = self.base.weaker(mb)
        # the candidate's entrant indices may differ: map BASE's underdog by label
        cidx = {self.cand.info.entrants[e]: e for e in self.cand.present}
        bnames = self.base.info.entrants
        weaker_c = {}
        for (a, b), low in weaker_b.items():
            if bnames[a] in cidx and bnames[b] in cidx:
                ca, cb = cidx[bnames[a]], cidx[bnames[b]]
                key = (min(ca, cb), max(ca, cb))
                if key in self.cand.pairs:
                    weaker_c[key] = cidx[bnames[low]]
        own_c = self.cand.weaker(mc)
        notes = []
        for key, low in weaker_c.items():
            if own_c[key] != low:
                cn = self.cand.info.entrants
                notes.append(
                    f"upset_rate {pair_name(cn[key[0]], cn[key[1]], self.cand.order)}: the underdog of BASE "
                    f"({cn[low]}) is the favourite in CANDIDATE; both rates are of BASE's underdog"
                )
        for key in self.cand.pairs:
            weaker_c.setdefault(key, own_c[key])
        items_b = {(it.metric, it.scope): it for it in self.base.items(mb)}
        items_c = {(it.metric, it.scope): it for it in self.cand.items(mc, weaker_c)}
        rows = []
        for key, ib in items_b.items():
            ic = items_c.get(key)
            if ic is None:
                continue
            eb, ec = estimate(sub_b, ib, confidence), estimate(sub_c, ic, confidence)
            d = delta_estimate(co, ic.value - ib.value, np.concatenate([-ib.grad, ic.grad]), confidence)
            row = {
                "metric": key[0],
                "scope": key[1],
                "base": eb.value,
                "base_ci": [eb.lo, eb.hi],
                "candidate": ec.value,
                "candidate_ci": [ec.lo, ec.hi],
                "diff": d.value,
                "diff_ci": [d.lo, d.hi],
                "p_value": d.p_value,
            }
            if key[0] == "upset_rate":
                row["weaker"] = ib.extra["weaker"]
            rows.append(row)
        for row, p in zip(rows, holm([r["p_value"] for r in rows])):
            row["p_holm"] = p
            row["significant"] = bool(p < 1.0 - confidence) if not math.isnan(p) else False
        only = sorted({f"{k[0]} ({k[1]})" for k in items_b} ^ {f"{k[0]} ({k[1]})" for k in items_c})
        if only:
            notes.append("in one run only, not compared: " + ", ".join(only))
        why = dict({**self.cand.why, **self.base.why}.items())
        return {
            "correction": "Holm (family-wise error rate)",
            "alpha": 1.0 - confidence,
            "confidence": confidence,
            "games": co.n,
            "options": self.base.option_dict(),
            "metrics": rows,
            "why": why,
            "notes": notes,
        }


# ---------------------------------------------------------------------------------------------
# rendering


_DEFS = {
    "first_mover_edge": "seat 0's win share (ties split) minus 1/seats, over balanced lineups",
    "lead_changes": "times the sole leader changes after a round, per game",
    "decisive_round": "first round from which the winner is never behind again (1 = never behind)",
    "close_games": "won by at most {close_margin} points (a draw counts)",
    "comeback_rate": "won by a seat {comeback_deficit}+ points behind after round {deficit_round}",
    "skill_share": "Var(regret) / (Var(luck) + Var(regret)) over seat-games",
    "upset_rate": "the weaker entrant's (lower adjusted mean) share of the meetings, ties half",
}


def definition(metric: str, options: Mapping[str, Any]) -> str:
    return _DEFS[metric].format(**options)


def _value(metric: str, x: Any, signed: bool = False) -> str:
    """A metric's value (``signed``: a difference): shares in %, differences of shares (and the
    first-mover edge, itself one) in percentage points, counts and rounds as numbers."""
    if metric in SHARES:
        return pts(x) if signed or metric == "first_mover_edge" else pct(x, 2)
    return num(x, 3, sign=signed)


def _interval(metric: str, ci: Sequence[Any] | None, signed: bool = False) -> str:
    """A metric's interval in the unit of :func:`_value` (the adjusted mean, in points, to 2
    decimals); "" when the games cannot give one (fewer than two)."""
    if not ci or ci[0] is None:
        return ""
    if metric in SHARES:
        return interval(ci, 2, sign=signed or metric == "first_mover_edge", scale=100)
    return interval(ci, 2 if metric == "adjusted" else 3, sign=signed)


def _with(value: str, ci: str) -> str:
    """A value and its interval in one cell (the value alone without one)."""
    return f"{value} {ci}" if ci else value


def change_text(metric: str, diff: Any, ci: Sequence[Any] | None) -> str:
    """A paired difference of ``metric`` with its interval, as ``compare`` prints it (percentage
    points for shares)."""
    return _with(_value(metric, diff, True), _interval(metric, ci, True))


def tables(d: Mapping[str, Any]) -> list[Table]:
    """The report's game-quality tables from ``summary.json``'s ``quality``."""
    q = d.get("quality")
    if not q:
        return []
    conf = ci_level(q["confidence"])
    opts = q["options"]
    out: list[Table] = []
    rows = []
    for m in RUN_METRICS:
        x = q.get(m)
        if x is None:
            rows.append([m, MISSING, "", f"does not apply: {q['why'].get(m, '')}"])
        else:
            rows.append([m, _value(m, x["value"]), _interval(m, x["ci"]), definition(m, opts)])
    per = (
        f"; {count(q['game_indices'])} per lineup x {q['lineups']} lineups, one observation per game index"
        if q.get("lineups", 1) > 1
        else ""
    )
    title = (
        f"Game quality ({conf} CI over game indices, {count(q['games'])} games{per}; tables of 2+ seats; "
        f"{opts['rounds']} rounds a game; harness.reports.quality)"
    )
    out.append(Table(title, ["metric", "value", "interval", "definition"], rows))
    rows = []
    for e in q["entrants"]:
        rows.append(
            [
                e["strategy"],
                count(e["seat_games"]),
                _with(_value("skill_share", e["skill_share"]), _interval("skill_share", e["skill_share_ci"])),
                num(e.get("var_luck"), 1),
                num(e.get("var_regret"), 1),
                _with(num(e["adjusted_mean"]), _interval("adjusted", e["adjusted_ci"])),
            ]
        )
    why = q["why"].get("skill_share")
    out.append(
        Table(
            f"Skill share per entrant ({definition('skill_share', opts)}; adjusted mean = total - luck"
            + (f"; skill_share does not apply: {why}, so the mean is plain" if why else "")
            + ")",
            ["entrant", "seat-games", "skill_share", "Var(luck)", "Var(regret)", "adjusted mean"],
            rows,
        )
    )
    if q["pairings"]:
        rows = [
            [
                p["name"],
                p["weaker"],
                num(p["gap"]),
                _value("upset_rate", p["upset_rate"]),
                _interval("upset_rate", p["upset_ci"]),
            ]
            for p in q["pairings"]
        ]
        out.append(
            Table(
                f"Upsets ({definition('upset_rate', opts)})",
                ["pairing", "weaker", "mean gap", "upset_rate", "interval"],
                rows,
            )
        )
    return out


def compare_lines(q: Mapping[str, Any]) -> list[str]:
    """``compare``'s text block for ``quality``: one line per metric, base -> candidate, the
    difference with its interval, Holm-adjusted p; ``*`` marks a significant change."""
    if not q or not q["metrics"]:
        return []
    rows = []
    for r in q["metrics"]:
        m = r["metric"]
        name = m if r["scope"] == "run" else f"{m} ({r['scope']})"
        flag = " *" if r["significant"] else ""
        rows.append(
            [
                name,
                _value(m, r["base"]),
                _value(m, r["candidate"]),
                _value(m, r["diff"], True),
                _interval(m, r["diff_ci"], True),
                p_value(r["p_holm"]) + flag,
            ]
        )
    o = q["options"]
    title = (
        f"game quality (paired on the same games; close = won by <= {o['close_margin']}, comeback = "
        f"{o['comeback_deficit']}+ behind after round {o['deficit_round']}; p-values Holm-corrected for "
        f"{len(rows)} tests, * = significant at {sig(q['alpha'])} family-wise):"
    )
    notes = [f"{m}: does not apply ({why})" for m, why in sorted(q["why"].items())]
    notes += [f"note: {n}" for n in q["notes"]]
    head = ["metric", "base", "candidate", "diff", f"{ci_level(q['confidence'])} CI", "p (Holm)"]
    return ["", *table_lines(Table(title, head, rows, notes))]
