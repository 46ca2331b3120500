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
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence, TypeVar

import numpy as np

from harness.reports import quality
from harness.util.jsonable import jsonable
from harness.game.outcome import DEFINITION, pair_points, rank_column, wdl_counts
from harness.reports.quality import QualityAccumulator, QualityModel, QualityOptions
from harness.util.render import Table, ci_level, count, interval, num, pct, times
from harness.game.rules import RuleSet
from harness.records.rundir import RunInfo, chunk_columns, iter_windows, load_run, settings_changed
from harness.stats import (
    PERCENTILES,
    IntHistogram,
    Moments,
    Ratings,
    bradley_terry,
    elo_ci_from_pentanomial,
    elo_from_score,
    mean_ci,
    rate,
)


def yatzy_box(rules: RuleSet) -> str | None:
    """Name of the rule set's yatzy-kind box (not one that needs the key box), or None."""
    for b in rules.boxes:
        if b.kind == "yatzy" and not b.requires_key:
            return b.name
    return None


@dataclass(frozen=True)
class Window:
    """Games ``a..b-1`` of every lineup: ``data[l][column]`` is a (b-a, S_l) array of lineup l."""

    a: int
    b: int
    data: list[dict[str, np.ndarray]]

    @property
    def games(self) -> int:
        return self.b - self.a


class Section:
    """One part of a report: an accumulator over windows, then its JSON and its tables."""

    #: Key of the section's pictures in :data:`harness.reports.plot.PLOTS`.
    key: ClassVar[str]

    def __init__(self, info: RunInfo, confidence: float) -> None:
        self.info, self.confidence = info, confidence
        self.eidx = info.entrant_index()
        self.k = len(info.entrants)

    @staticmethod
    def applies(info: RunInfo) -> bool:
        """Whether this section has something to say about the run (its columns exist)."""
        return True

    def columns(self) -> list[str]:
        """Row columns this section reads."""
        raise NotImplementedError

    def add(self, w: Window) -> None:
        """Fold one window of games."""
        raise NotImplementedError

    def finish(self) -> None:
        """Called once after the last window (fits, final objects)."""

    def to_dict(self) -> dict[str, Any]:
        """This section's keys of ``summary.json``."""
        raise NotImplementedError

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        """This section's tables, rendered from the whole summary dict."""
        return []

    def notes(self) -> list[str]:
        """Lines for the report's notes (after :meth:`finish`)."""
        return []

    @classmethod
    def build(cls, info: RunInfo, confidence: float, options: SummaryOptions,
              built: Sequence[Section]) -> Section | None:
        """The section of a run given the summary's options and the sections built before it
        (None: it does not apply with these options)."""
        return cls(info, confidence)


# ---------------------------------------------------------------------------------------------
# entrants: score distribution, rates, outcomes, per-box means


@dataclass(frozen=True, eq=False)
class EntrantStats:
    """Streamed summary of one entrant's rows.

    ``hist``: exact histogram of totals; ``per_game``: moments of the entrant's per-game mean
    total (the unit for the mean's CI); ``box_sum``/``box_sumsq``: (NB,) int64 sums of each box
    and of its square; ``played``: rows at tables of two or more seats (where outcomes mean
    something) and ``wins``/``draws``/``losses`` among them.
    """

    label: str
    hist: IntHistogram
    per_game: Moments
    bonus: int
    yatzy: int
    played: int
    wins: int
    draws: int
    losses: int
    box_sum: np.ndarray
    box_sumsq: np.ndarray

    @property
    def rows(self) -> int:
        return self.hist.n

    def box_means(self) -> np.ndarray:
        return self.box_sum / max(1, self.rows)

    def box_stds(self) -> np.ndarray:
        n = self.rows
        if n < 2:
            return np.full(self.box_sum.shape, math.nan)
        var = (self.box_sumsq - self.box_sum.astype(np.float64) ** 2 / n) / (n - 1)
        return np.sqrt(np.clip(var, 0.0, None))


class EntrantSection(Section):
    """Per entrant: score histogram and per-game mean, bonus and yatzy rates, W/D/L, box sums."""

    key = "entrants"

    def __init__(self, info: RunInfo, confidence: float) -> None:
        super().__init__(info, confidence)
        k, nb = self.k, len(info.box_names)
        self.ybox = yatzy_box(info.rules)
        self.slots = np.zeros(k, dtype=np.int64)  # (lineup, seat) places each entrant holds, per game
        for row in self.eidx:
            for e in row:
                self.slots[e] += 1
        self.hists = [IntHistogram.empty() for _ in range(k)]
        self.per_game = [Moments.empty() for _ in range(k)]
        self.bonus = np.zeros(k, np.int64)
        self.yatzy = np.zeros(k, np.int64)
        self.played = np.zeros(k, np.int64)
        self.wdl = np.zeros((k, 3), np.int64)
        self.box_sum = np.zeros((k, nb), np.int64)
        self.box_sq = np.zeros((k, nb), np.int64)
        self.stats: tuple[EntrantStats, ...] = ()

    def columns(self) -> list[str]:
        return ["total", "bonus", "outcome"] + ([self.ybox] if self.ybox else []) + list(self.info.box_names)

    def add(self, w: Window) -> None:
        k, boxes = self.k, self.info.box_names
        csum = np.zeros((k, w.games))
        parts: list[list[np.ndarray]] = [[] for _ in range(k)]
        for li, d in enumerate(w.data):
            row = self.eidx[li]
            bx = np.stack([d[n] for n in boxes], axis=2).astype(np.int64)  # (B, S, NB)
            bsum, bsq = bx.sum(axis=0), (bx * bx).sum(axis=0)
            for s, e in enumerate(row):
                x = d["total"][:, s]
                parts[e].append(x)
                csum[e] += x
                self.bonus[e] += int(np.count_nonzero(d["bonus"][:, s]))
                if self.ybox is not None:
                    self.yatzy[e] += int(np.count_nonzero(d[self.ybox][:, s]))
                self.box_sum[e] += bsum[s]
                self.box_sq[e] += bsq[s]
                if len(row) >= 2:
                    self.played[e] += w.games
                    self.wdl[e] += wdl_counts(d["outcome"][:, s])
        for e in range(k):
            if parts[e]:
                self.hists[e] = self.hists[e].add(np.concatenate(parts[e]))
                self.per_game[e] = self.per_game[e].merge(Moments.of(csum[e] / self.slots[e]))

    def finish(self) -> None:
        self.stats = tuple(
            EntrantStats(self.info.entrants[e], self.hists[e], self.per_game[e], int(self.bonus[e]),
                         int(self.yatzy[e]), int(self.played[e]), int(self.wdl[e, 0]), int(self.wdl[e, 1]),
                         int(self.wdl[e, 2]), self.box_sum[e].copy(), self.box_sq[e].copy())
            for e in range(self.k) if self.slots[e] > 0)

    def to_dict(self) -> dict[str, Any]:
        boxes = self.info.box_names
        return {"entrants": [entrant_dict(e, boxes, self.confidence) for e in self.stats]}

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        conf = ci_level(d["confidence"])
        rows = []
        for e in d["entrants"]:
            p = e["percentiles"]
            rows.append([e["strategy"], count(e["games"]), num(e["mean"], ci=e["mean_ci"]),
                         num(e["std"]), " / ".join(str(p[str(k)]) for k in PERCENTILES),
                         pct(e["bonus_rate"], ci=e["bonus_ci"]), pct(e["yatzy_rate"], ci=e["yatzy_ci"]),
                         pct(e["win_rate"]), pct(e["draw_rate"]), pct(e["loss_rate"])])
        out = [Table(f"Entrants (mean with {conf} CI over games; {DEFINITION})",
                     ["entrant", "games", "mean score", "std", "percentiles 1/5/25/50/75/95/99", "upper bonus",
                      "yatzy", "win", "draw", "loss"], rows)]
        if d["entrants"]:
            boxes = list(d["entrants"][0]["box_means"])
            rows = [[b] + [num(e["box_means"][b]) for e in d["entrants"]] for b in boxes]
            out.append(Table("Mean score per box (points)", ["box"] + [e["strategy"] for e in d["entrants"]], rows))
        return out


def entrant_dict(e: EntrantStats, boxes: Sequence[str], confidence: float) -> dict[str, Any]:
    """One entrant's JSON summary (see the module docstring for the definitions)."""
    ci = mean_ci(e.per_game, confidence)
    n = e.rows
    pcts = e.hist.percentiles(np.array(PERCENTILES, dtype=float))
    br, yr = rate(e.bonus, n, confidence), rate(e.yatzy, n, confidence)
    w, d, l = (rate(x, e.played, confidence) for x in (e.wins, e.draws, e.losses))
    return {
        "strategy": e.label,
        "games": n,
        "mean": e.hist.mean,
        "mean_ci": [ci.lo, ci.hi],
        "std": e.hist.std,
        "min": e.hist.min,
        "max": e.hist.max,
        "percentiles": {str(p): int(v) for p, v in zip(PERCENTILES, pcts)},
        "bonus_rate": br.rate, "bonus_ci": [br.lo, br.hi],
        "yatzy_rate": yr.rate, "yatzy_ci": [yr.lo, yr.hi],
        "played": e.played, "wins": e.wins, "draws": e.draws, "losses": e.losses,
        "win_rate": w.rate, "win_ci": [w.lo, w.hi],
        "draw_rate": d.rate, "draw_ci": [d.lo, d.hi],
        "loss_rate": l.rate, "loss_ci": [l.lo, l.hi],
        "box_means": {b: float(m) for b, m in zip(boxes, e.box_means())},
        "box_std": {b: float(s) for b, s in zip(boxes, e.box_stds())},
    }


# ---------------------------------------------------------------------------------------------
# pairings: W/D/L of each pair of entrants (or of an entrant against the field)


@dataclass(frozen=True)
class PairingStats:
    """Win/draw/loss of entrant ``a`` against ``b`` (``b`` None: against the field at N-seat tables).

    For ``a == b`` (self-play) the counts are seat 1's against seat 2. ``pentanomial`` (length 5,
    pairs in which ``a`` scored 0, .5, 1, 1.5, 2) is set when seat-swapped lineups were played.
    """

    a: str
    b: str | None
    wins: int
    draws: int
    losses: int
    pentanomial: tuple[int, int, int, int, int] | None = None

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def name(self) -> str:
        if self.b is None:
            return f"{self.a} vs field"
        if self.a == self.b:
            return f"{self.a} (seat 1) vs {self.b} (seat 2)"
        return f"{self.a} vs {self.b}"


def _pair_seat_swaps(lineups: Sequence[tuple[str, ...]]) -> list[tuple[int, int]]:
    """Lineup index pairs ((A,B), (B,A)) with A != B, each lineup used at most once."""
    used: set[int] = set()
    out = []
    for i, lu in enumerate(lineups):
        if len(lu) != 2 or lu[0] == lu[1] or i in used:
            continue
        for j in range(i + 1, len(lineups)):
            if j not in used and lineups[j] == (lu[1], lu[0]):
                used |= {i, j}
                out.append((i, j))
                break
    return out


class PairingSection(Section):
    """W/D/L per pairing of entrants (two-seat tables) or per entrant against the field (N seats)."""

    key = "pairings"

    def __init__(self, info: RunInfo, confidence: float) -> None:
        super().__init__(info, confidence)
        # key (a, b) entrant indices, b = -1 for the field at N-seat tables
        self.wdl: dict[tuple[int, int], np.ndarray] = {}
        self.swaps = _pair_seat_swaps(info.lineups)
        self.penta: dict[tuple[int, int], np.ndarray] = {}
        self.stats: tuple[PairingStats, ...] = ()

    def columns(self) -> list[str]:
        return ["outcome"]

    def _key(self, li: int) -> tuple[tuple[int, int], bool]:
        e0, e1 = self.eidx[li]
        flip = e1 < e0
        return ((e1, e0) if flip else (e0, e1)), flip

    def add(self, w: Window) -> None:
        for li, d in enumerate(w.data):
            row, outc = self.eidx[li], d["outcome"]
            if len(row) == 2:
                key, flip = self._key(li)
                self.wdl.setdefault(key, np.zeros(3, np.int64))[:] += wdl_counts(outc[:, 1 if flip else 0])
            elif len(row) > 2:
                for s, e in enumerate(row):
                    self.wdl.setdefault((e, -1), np.zeros(3, np.int64))[:] += wdl_counts(outc[:, s])
        for li, lj in self.swaps:
            key, flip = self._key(li)
            # outcome is 2/1/0 = twice the game's points, so the pair's points x2 is their sum (0..4)
            seat_i, seat_j = (1, 0) if flip else (0, 1)
            pts = w.data[li]["outcome"][:, seat_i].astype(np.int64) + w.data[lj]["outcome"][:, seat_j]
            self.penta.setdefault(key, np.zeros(5, np.int64))[:] += np.bincount(pts, minlength=5)[:5]

    def finish(self) -> None:
        out = []
        names = self.info.entrants
        for (ea, eb), c in sorted(self.wdl.items(), key=lambda kv: (kv[0][0], kv[0][1] if kv[0][1] >= 0 else 1 << 30)):
            pen = self.penta.get((ea, eb))
            out.append(PairingStats(names[ea], names[eb] if eb >= 0 else None, int(c[0]), int(c[1]), int(c[2]),
                                    tuple(int(x) for x in pen) if pen is not None else None))
        self.stats = tuple(out)

    def to_dict(self) -> dict[str, Any]:
        return {"pairings": [pairing_dict(p, self.confidence) for p in self.stats]}

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        if not d["pairings"]:
            return []
        conf = ci_level(d["confidence"])
        rows = []
        for p in d["pairings"]:
            rows.append([p["name"], count(p["games"]), pct(p["win_rate"], ci=p["win_ci"]),
                         pct(p["draw_rate"], ci=p["draw_ci"]), pct(p["loss_rate"], ci=p["loss_ci"]),
                         num(p["elo"], 1, ci=p["elo_ci"])])
        return [Table(f"Pairings (Wilson {conf} intervals; Elo interval from game pairs when seats were swapped)",
                      ["pairing", "games", "win", "draw", "loss", "Elo"], rows)]


def pairing_dict(p: PairingStats, confidence: float) -> dict[str, Any]:
    """One pairing's JSON summary: W/D/L with Wilson intervals, score, Elo (pentanomial CI if paired)."""
    n = p.games
    w, d, l = (rate(x, n, confidence) for x in (p.wins, p.draws, p.losses))
    score = (p.wins + 0.5 * p.draws) / n if n else math.nan
    out: dict[str, Any] = {
        "a": p.a, "b": p.b, "name": p.name, "games": n, "wins": p.wins, "draws": p.draws, "losses": p.losses,
        "win_rate": w.rate, "win_ci": [w.lo, w.hi], "draw_rate": d.rate, "draw_ci": [d.lo, d.hi],
        "loss_rate": l.rate, "loss_ci": [l.lo, l.hi], "score": score,
        # against the field of an N-seat table, par is 1/N, not 1/2: an Elo figure would mislead
        "elo": elo_from_score(score) if n and p.b is not None else math.nan, "elo_ci": None, "pentanomial": None,
    }
    if p.pentanomial is not None and sum(p.pentanomial):
        elo, lo, hi = elo_ci_from_pentanomial(p.pentanomial, confidence)
        out.update(elo=elo, elo_ci=[lo, hi], pentanomial=list(p.pentanomial))
    return out


# ---------------------------------------------------------------------------------------------
# head to head and ratings


class HeadToHeadSection(Section):
    """Points of every entrant against every other (seat against seat) and Bradley-Terry ratings.

    ``points[i, j]`` = points of entrant i against j (win 1, draw ½), ``games[i, j]`` = comparisons
    between them (float64 / int64, shape (K, K), over the entrants present).
    """

    key = "head_to_head"

    def __init__(self, info: RunInfo, confidence: float) -> None:
        super().__init__(info, confidence)
        self.rcol = rank_column(info.rules)
        self.pts = np.zeros((self.k, self.k))
        self.n = np.zeros((self.k, self.k), np.int64)
        self.present = sorted({e for row in self.eidx for e in row})
        self.ratings: Ratings | None = None
        self.points = self.games = np.zeros((0, 0))

    def columns(self) -> list[str]:
        return [self.rcol]

    def add(self, w: Window) -> None:
        for li, d in enumerate(w.data):
            row, rank = self.eidx[li], d[self.rcol]
            for s in range(len(row)):
                for t in range(s + 1, len(row)):
                    es, et = row[s], row[t]
                    if es == et:
                        continue
                    win, draw, loss = pair_points(rank[:, s], rank[:, t])
                    self.pts[es, et] += win + 0.5 * draw
                    self.pts[et, es] += loss + 0.5 * draw
                    self.n[es, et] += w.games
                    self.n[et, es] += w.games

    def finish(self) -> None:
        ix = np.ix_(self.present, self.present)
        self.points, self.games = self.pts[ix], self.n[ix]
        if len(self.present) >= 2 and self.games.sum() > 0:
            self.ratings = bradley_terry([self.info.entrants[e] for e in self.present], self.points, self.confidence)

    def to_dict(self) -> dict[str, Any]:
        names = [self.info.entrants[e] for e in self.present]
        out: dict[str, Any] = {"head_to_head": None, "ratings": None}
        if len(names) >= 2:
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(self.games > 0, self.points / np.maximum(self.games, 1), np.nan)
            out["head_to_head"] = {"names": names, "score": share, "points": self.points, "games": self.games}
        if self.ratings is not None:
            out["ratings"] = self.ratings.table()
        return out

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        out = []
        conf = ci_level(d["confidence"])
        if d["ratings"]:
            rows = [[str(r["rank"]), r["name"], _bound(r), interval((r["lo"], r["hi"]), 1),
                     r["note"] or ""] for r in d["ratings"]]
            out.append(Table(f"Bradley-Terry ratings (Elo scale, mean 0, {conf} intervals; prior: one virtual draw "
                             "per pair; >= / <= : a bound, the entrant won or lost every game against another)",
                             ["rank", "entrant", "Elo", "interval", "note"], rows))
        if d["head_to_head"] and len(d["head_to_head"]["names"]) >= 3:
            h = d["head_to_head"]
            rows = [[n] + [pct(x) for x in r] for n, r in zip(h["names"], h["score"])]
            out.append(Table("Head to head (row's score against column: win 1, draw ½)", ["entrant"] + h["names"],
                             rows))
        return out


def _bound(r: Mapping[str, Any]) -> str:
    mark = {"lower": ">= ", "upper": "<= ", "both": "~ "}.get(r.get("bound") or "", "")
    return mark + num(r["elo"], 1)


# ---------------------------------------------------------------------------------------------
# luck and skill (runs played with --analyse)


class LuckSection(Section):
    """Per entrant, from the rows' exact ``luck`` and ``regret`` (runs played with ``--analyse``):
    the luck-adjusted mean (total − luck: unbiased for the expected score whatever the policy,
    :mod:`harness.decisions.analysis`) with its CI over games, the variance-reduction factor against the
    plain per-game mean, and the regret per game and per decision, the error rate; the regret per
    decision split by kind (keeps, upper boxes, lower boxes) and the rating of
    :data:`harness.decisions.skill.SCALE`; the :attr:`WORST` seat-games holding the costliest decisions (each
    decision named when the run was also recorded, ``--record``); the distribution of the regret
    per game and the first :attr:`SCATTER` seat-games' (luck, total) for the plots."""

    key = "luck"
    #: Seat-games listed per entrant for their costliest decision.
    WORST = 5
    #: Seat-games per entrant kept for the luck-against-score plot (the first ones, in game order).
    SCATTER = 5000
    #: Bins of the regret per game (points): 1 point wide; the last bin holds everything above.
    REGRET_BINS = np.arange(0.0, 401.0)

    @staticmethod
    def applies(info: RunInfo) -> bool:
        return bool((info.manifest.get("config") or {}).get("analyse"))

    def __init__(self, info: RunInfo, confidence: float) -> None:
        super().__init__(info, confidence)
        k = self.k
        self.slots = np.zeros(k, dtype=np.int64)
        for row in self.eidx:
            for e in row:
                self.slots[e] += 1
        self.plain = [Moments.empty() for _ in range(k)]
        self.adjusted = [Moments.empty() for _ in range(k)]
        self.luck = np.zeros(k)
        self.regret = np.zeros(k)
        self.decisions = np.zeros(k, np.int64)
        self.errors = np.zeros(k, np.int64)
        self.rows = np.zeros(k, np.int64)
        self.keep_decisions = np.zeros(k, np.int64)
        self.keep_regret = np.zeros(k)
        self.upper_regret = np.zeros(k)
        self.hist = np.zeros((k, self.REGRET_BINS.size - 1), np.int64)
        self.scatter: list[list[np.ndarray]] = [[] for _ in range(k)]  # (n, 2) arrays of (luck, total)
        self.worst: list[list[tuple[float, int, int, int]]] = [[] for _ in range(k)]  # heaps
        self.split = self._has_split(info)

    @staticmethod
    def _has_split(info: RunInfo) -> bool:
        """Whether the rows carry the split columns (runs analysed before they existed do not)."""
        return "max_regret" in chunk_columns(info)

    def columns(self) -> list[str]:
        more = ["keep_decisions", "keep_regret", "upper_regret", "max_regret"] if self.split else []
        return ["total", "luck", "regret", "decisions", "errors", *more]

    def add(self, w: Window) -> None:

        k = self.k
        tot, adj = np.zeros((k, w.games)), np.zeros((k, w.games))
        for li, d in enumerate(w.data):
            for s, e in enumerate(self.eidx[li]):
                t, lk = d["total"][:, s].astype(np.float64), d["luck"][:, s]
                reg = d["regret"][:, s]
                tot[e] += t
                adj[e] += t - lk
                self.luck[e] += float(lk.sum())
                self.regret[e] += float(reg.sum())
                self.decisions[e] += int(d["decisions"][:, s].sum(dtype=np.int64))
                self.errors[e] += int(d["errors"][:, s].sum(dtype=np.int64))
                self.rows[e] += w.games
                i = np.clip(np.searchsorted(self.REGRET_BINS, reg, side="right") - 1, 0, self.hist.shape[1] - 1)
                self.hist[e] += np.bincount(i, minlength=self.hist.shape[1])
                have = sum(len(x) for x in self.scatter[e])
                if have < self.SCATTER:
                    self.scatter[e].append(np.column_stack([lk, t])[: self.SCATTER - have])
                if not self.split:
                    continue
                self.keep_decisions[e] += int(d["keep_decisions"][:, s].sum(dtype=np.int64))
                self.keep_regret[e] += float(d["keep_regret"][:, s].sum())
                self.upper_regret[e] += float(d["upper_regret"][:, s].sum())
                mx = d["max_regret"][:, s]
                heap = self.worst[e]
                for g in np.argsort(-mx, kind="stable")[: self.WORST].tolist():
                    item = (float(mx[g]), -li, -(w.a + g), s)  # ties: the earlier lineup and game first
                    if len(heap) < self.WORST:
                        heapq.heappush(heap, item)
                    elif item > heap[0]:
                        heapq.heapreplace(heap, item)
        for e in range(k):
            if self.slots[e]:
                self.plain[e] = self.plain[e].merge(Moments.of(tot[e] / self.slots[e]))
                self.adjusted[e] = self.adjusted[e].merge(Moments.of(adj[e] / self.slots[e]))

    def finish(self) -> None:
        self._worst_rows = self._worst_decisions() if self.split else []

    def scatter_points(self, e: int) -> np.ndarray:
        """(n, 2) (luck, total) of entrant ``e``'s first :attr:`SCATTER` seat-games."""
        return np.concatenate(self.scatter[e]) if self.scatter[e] else np.zeros((0, 2))

    def _worst_decisions(self) -> list[list[dict[str, Any]]]:
        """Per entrant, its worst seat-games (costliest decision first); each decision named from
        the run's records when it has them."""
        # the analysis (numba kernels, the solver) loads only for a run that was analysed: the
        # luck section's methods import it, so that compare (and `compare --help`) does not
        from harness.decisions.analysis import ERROR

        out: list[list[dict[str, Any]]] = []
        named = self._name_decisions()
        for e in range(self.k):
            rows = []
            for mx, nli, ng, s in sorted(self.worst[e], reverse=True):
                if mx <= ERROR:
                    continue
                li, g = -nli, -ng
                rows.append({"lineup": li, "game": g, "seat": s, "regret": mx} | named.get((li, g, s), {}))
            out.append(rows)
        return out

    def _name_decisions(self) -> dict[tuple[int, int, int], dict[str, Any]]:
        """{(lineup, game, seat): the costliest decision as :class:`harness.decisions.skill.Worst` JSON} for
        the listed seat-games, when the run was recorded (else empty)."""
        from harness.decisions.analysis import ERROR

        wanted = {(-nli, -ng, s) for heap in self.worst for mx, nli, ng, s in heap if mx > ERROR}
        if not wanted or not (self.info.path / "records").is_dir():
            return {}
        from harness.decisions.analysis import Analyser, worst_of
        from harness.records.codec import records_of_run

        an = Analyser(self.info.rules)
        out = {}
        for li in sorted({x[0] for x in wanted}):
            games = sorted({g for lu, g, _ in wanted if lu == li})
            for _, rec in records_of_run(self.info.path, lineup=li, games=games):
                for lu, g, s in (x for x in wanted if x[0] == li and x[1] == rec.game):
                    turns = [t for t in rec.turns if t.seat == s]
                    a = an.seat(turns, s, details=True)
                    d = max(a.details, key=lambda x: x.regret)
                    out[(lu, g, s)] = worst_of(d, turns, s, g, lu).to_json()
        return out

    def to_dict(self) -> dict[str, Any]:
        from harness.decisions.analysis import rating

        rules = self.info.rules
        upper = rules.columns * sum(b.is_upper for b in rules.boxes)
        worst = self._worst_rows if self.split else [[] for _ in range(self.k)]
        out = []
        for e in range(self.k):
            n = int(self.rows[e])
            if not n:
                continue
            ci = mean_ci(self.adjusted[e], self.confidence)
            pci = mean_ci(self.plain[e], self.confidence)
            var_a = self.adjusted[e].var
            per_dec = self.regret[e] / max(1, self.decisions[e])
            x = {
                "strategy": self.info.entrants[e], "games": n,
                "mean": self.plain[e].mean, "mean_ci": [pci.lo, pci.hi],
                "mean_luck": self.luck[e] / n,
                "adjusted_mean": ci.mean, "adjusted_ci": [ci.lo, ci.hi],
                # the optimal bot's adjusted score is V(start) in every game: float noise, not variance
                "variance_reduction": (self.plain[e].var / var_a if var_a > 1e-12 * max(1.0, self.plain[e].var)
                                       else math.inf),
                "regret_per_game": self.regret[e] / n,
                "decisions_per_game": self.decisions[e] / n,
                "regret_per_decision": per_dec,
                "error_rate": self.errors[e] / max(1, self.decisions[e]),
                "rating": rating(per_dec),
                "regret_histogram": {"edges": self.REGRET_BINS.tolist(), "counts": self.hist[e].tolist()},
            }
            if self.split:
                nk = int(self.keep_decisions[e])
                nbox = int(self.decisions[e]) - nk
                box_reg = self.regret[e] - self.keep_regret[e]
                x["by_kind"] = {
                    "keep": {"decisions": nk, "regret_per_decision": self.keep_regret[e] / max(1, nk)},
                    "upper": {"decisions": upper * n, "regret_per_decision": self.upper_regret[e] / max(1, upper * n)},
                    "lower": {"decisions": nbox - upper * n,
                              "regret_per_decision": (box_reg - self.upper_regret[e]) / max(1, nbox - upper * n)},
                }
                x["worst"] = worst[e]
            out.append(x)
        return {"luck": out}

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        if not d.get("luck"):
            return []
        conf = ci_level(d["confidence"])
        rows, kinds, worst, links = [], [], [], []
        for x in d["luck"]:
            vr = x["variance_reduction"]
            rows.append([x["strategy"], count(x["games"]), num(x["mean"]), num(x["mean_luck"]),
                         num(x["adjusted_mean"], ci=x["adjusted_ci"]), "exact" if vr is None else times(vr),
                         num(x["regret_per_game"]), num(x["regret_per_decision"], 3), pct(x["error_rate"]),
                         x.get("rating", "")])
            if "by_kind" in x:
                bk = x["by_kind"]
                kinds.append([x["strategy"], *(num(bk[k]["regret_per_decision"], 3)
                                               for k in ("keep", "upper", "lower")),
                              num(bk["keep"]["decisions"] / x["games"], 2)])
            for w in x.get("worst", []):
                lu = f"lineup {w['lineup']} " if len(d["run"]["lineups"]) > 1 else ""
                where = f"{lu}game {w['game']} seat {w['seat']}"
                if "turn" in w:
                    from harness.decisions.analysis import keep_text

                    what = f"{' '.join(map(str, w['dice']))} {keep_text(w['played'])}, best {keep_text(w['best'])}"
                    where += f" column {w['column']} turn {w['turn']} roll {w['roll']}"
                else:
                    what = "(record the run with --record to name the decision)"
                worst.append([x["strategy"], where, what, num(w["regret"], 2)])
                links.append([None, w.get("review"), None, None])  # the game's review page (report.py)
        tabs = [Table(f"Luck and skill (exact; adjusted = total - luck, unbiased; {conf} CI over games; "
                      "variance reduction = var(mean) / var(adjusted mean); exact = zero variance; "
                      "rating: the scale of `yatzy-harness analyse`)",
                      ["entrant", "games", "mean", "mean luck", "adjusted mean", "variance reduction",
                       "regret/game", "regret/decision", "errors", "rating"], rows)]
        if kinds:
            tabs.append(Table("Regret per decision by kind (keeps include stopping; boxes in the upper or lower "
                              "section)", ["entrant", "keep", "upper box", "lower box", "keeps/game"], kinds))
        if worst:
            tabs.append(Table("Costliest decisions (per entrant, the seat-games holding the largest single regret)",
                              ["entrant", "where", "dice, played, best", "regret"], worst,
                              links=links if any(h for _, h, _, _ in links) else ()))
        return tabs


# ---------------------------------------------------------------------------------------------
# game quality: skill share, upsets, first-mover edge, lead changes, decisive round, close games, comebacks


@dataclass(frozen=True)
class SummaryOptions:
    """What :func:`summarize` passes to the sections that take options: the game-quality
    thresholds, and whether to compute the exact column (:class:`ExactSection`: "off", "on" or
    "auto")."""

    quality: QualityOptions | None = None
    exact: str = "off"
    depth: str = "off"


# ---------------------------------------------------------------------------------------------
# exact values beside the sampled ones (runs whose every entrant is solitaire)

#: ``exact`` modes of :func:`summarize` (``report --exact`` / ``--no-exact`` / neither).
EXACT_MODES = ("auto", "on", "off")
#: With ``auto``, evaluations not yet cached are computed only on rule sets of at most this many
#: solver states (seconds there; on scandinavian's 1.4 M states a bot takes from half a minute of
#: CPU, greedy or solver, to several minutes, a softmax solver: benchmarks/BENCHMARKS.md).
EXACT_AUTO_STATES = 100_000


class ExactSection(Section):
    """Each figure's exact value beside the sampled one when every entrant is solitaire
    (:mod:`harness.exact.figures`): per entrant the mean, std, percentiles, P(upper bonus), P(yatzy) and
    its win, draw and loss rates; per pairing its win, draw and loss rates. A sampled mean, rate or
    percentile whose :data:`harness.exact.figures.ALARM_CONFIDENCE` interval over games misses its exact
    value is flagged (a t interval of the per-game mean, Wilson intervals with the games as the
    trials, order-statistic intervals of the percentiles with the games as the observations:
    :meth:`harness.stats.IntHistogram.quantile_interval`), and the flags are named in the notes.

    ``mode``: "on" computes the evaluations (cached for next time), "auto" only when each is
    cached or the rule set has at most :data:`EXACT_AUTO_STATES` solver states (else a note says
    how to ask for it), "off" leaves the section out. A run that cannot be evaluated exactly (a
    bot that is not solitaire, saved rolls) gets one note saying why, and no column.
    """

    key = "exact"

    def __init__(self, info: RunInfo, confidence: float, mode: str = "on",
                 entrants: EntrantSection | None = None, pairings: PairingSection | None = None) -> None:
        super().__init__(info, confidence)
        if mode not in EXACT_MODES:
            raise ValueError(f"exact mode must be one of {EXACT_MODES}, got {mode!r}")
        self.mode, self.entrant_sec, self.pairing_sec = mode, entrants, pairings
        self.why: str | None = None
        self.result: dict[str, Any] | None = None

    @classmethod
    def build(cls, info: RunInfo, confidence: float, options: SummaryOptions,
              built: Sequence[Section]) -> Section | None:
        if options.exact == "off":
            return None
        ent = next((s for s in built if isinstance(s, EntrantSection)), None)
        pair = next((s for s in built if isinstance(s, PairingSection)), None)
        return cls(info, confidence, options.exact, ent, pair)

    def columns(self) -> list[str]:
        return []

    def add(self, w: Window) -> None:
        pass

    def finish(self) -> None:
        # the exact evaluation (numba kernels, the solver) loads only when a report asks for it
        from harness.exact import evaluate as E
        from harness.exact.solver import build_plan

        rules = self.info.rules
        labels = [e.label for e in (self.entrant_sec.stats if self.entrant_sec else ())]
        self.why = E.refusal(rules, labels)
        if self.why:
            return
        if self.mode == "auto":
            missing = [x for x in labels if not E.is_cached(rules, x)]
            states = build_plan(rules).n_states
            if missing and states > EXACT_AUTO_STATES:
                self.why = (f"{len(missing)} of the {len(labels)} exact evaluations are not cached and {rules.name} has "
                            f"{states:,} solver states (half a minute to minutes of CPU each): `report --exact` computes them "
                            f"(cached for next time), `report --no-exact` silences this note")
                return
        self.result = self._compare()

    def _compare(self) -> dict[str, Any]:
        from harness.exact.figures import ALARM_CONFIDENCE, ExactTables, outside
        from harness.stats.proportions import wilson_share

        info, conf = self.info, ALARM_CONFIDENCE
        tables = ExactTables.of(info.rules, info.lineups)
        ybox = yatzy_box(info.rules)
        flags: list[str] = []

        def fig(name: str, exact: float, sampled: float, ci: tuple[float, float] | None) -> dict[str, Any]:
            out = outside(exact, ci)
            if out:
                flags.append(name)
            return {"exact": exact, "sampled": sampled, "ci": list(ci) if ci else None, "outside": out}

        def share(name: str, exact: float, k: int, n: int, games: int) -> dict[str, Any]:
            p = k / n
            return fig(name, exact, p, wilson_share(p, games, conf))

        def outcomes(prefix: str, exact: tuple[float, float, float] | None, counts: tuple[int, int, int],
                     games: int) -> dict[str, Any]:
            n = sum(counts)
            if exact is None or not n:
                return {}
            return {k: share(f"{prefix} {k}", x, c, n, games)
                    for k, x, c in zip(("win", "draw", "loss"), exact, counts)}

        entrants = []
        for e in self.entrant_sec.stats if self.entrant_sec else ():
            ev = tables.evaluations[e.label]
            games = e.per_game.n  # the independent unit: a game index, whatever seats the entrant holds there
            ci = mean_ci(e.per_game, conf)
            pc = {str(q): fig(f"{e.label} p{q}", ev.percentiles[str(q)], e.hist.percentiles(q),
                              e.hist.quantile_interval(q / 100, conf, games)) for q in PERCENTILES}
            slots = [(li, s) for li, row in enumerate(info.lineups) for s, x in enumerate(row) if x == e.label]
            entrants.append({
                "strategy": e.label, "games": games,
                "mean": fig(f"{e.label} mean", ev.mean, e.hist.mean, (ci.lo, ci.hi)),
                "std": {"exact": ev.std, "sampled": e.hist.std},
                "percentiles": pc,
                "bonus_rate": share(f"{e.label} upper bonus", ev.p_bonus_row, e.bonus, e.rows, games),
                "yatzy_rate": (share(f"{e.label} yatzy", ev.box_scored_row(ev.box_names.index(ybox)), e.yatzy,
                                     e.rows, games) if ybox else None),
                "outcomes": outcomes(e.label, tables.pooled(slots), (e.wins, e.draws, e.losses), games),
            })
        pairings = []
        for p in self.pairing_sec.stats if self.pairing_sec else ():
            slots = _pairing_slots(info.lineups, p)
            pairings.append({"name": p.name, "a": p.a, "b": p.b,
                             **outcomes(p.name, tables.pooled(slots), (p.wins, p.draws, p.losses), info.games)})
        return {"confidence": conf, "entrants": entrants, "pairings": pairings, "outside": flags,
                "evaluations": {x: {"cached": ev.cached, "seconds": ev.seconds}
                                for x, ev in tables.evaluations.items()}}

    def to_dict(self) -> dict[str, Any]:
        return {"exact": self.result if self.result is not None else {"available": False, "why": self.why}}

    def notes(self) -> list[str]:
        if self.result is None:
            return [f"no exact column: {self.why}"] if self.why else []
        flags = self.result["outside"]
        level = ci_level(self.result["confidence"])
        if not flags:
            return [f"exact check: every sampled mean, rate and percentile holds its exact value in its {level} "
                    "interval"]
        return [f"EXACT CHECK: {len(flags)} sampled figure(s) whose {level} interval misses the exact value "
                f"(an engine or bot bug, or a 1-in-1000 chance each): {', '.join(flags)}"]

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        x = d.get("exact")
        if not x or x.get("available") is False:
            return []
        level = ci_level(x["confidence"])

        def two(f: Mapping[str, Any] | None, fmt: Any, fmt_exact: Any) -> str:
            if not f:
                return "–"
            return f"{fmt_exact(f['exact'])} / {fmt(f['sampled'])}{' !' if f.get('outside') else ''}"

        def rate(f: Mapping[str, Any] | None) -> str:
            return two(f, lambda v: pct(v, 2), lambda v: pct(v, 3))

        rows = []
        for e in x["entrants"]:
            pc = e["percentiles"]
            oc = e["outcomes"]
            rows.append([e["strategy"], two(e["mean"], num, lambda v: num(v, 6)),
                         two(e["std"], num, lambda v: num(v, 4)),
                         " / ".join(str(pc[str(q)]["exact"]) for q in PERCENTILES),
                         " / ".join(f"{pc[str(q)]['sampled']}{'!' if pc[str(q)]['outside'] else ''}"
                                    for q in PERCENTILES),
                         rate(e["bonus_rate"]), rate(e["yatzy_rate"]), rate(oc.get("win")), rate(oc.get("draw"))])
        out = [Table(f"Exact / sampled (exact: each bot's own choice probabilities, no sampling; ! = the sampled "
                     f"value's {level} interval over games misses the exact value)",
                     ["entrant", "mean", "std", "percentiles 1/5/25/50/75/95/99 exact", "sampled", "upper bonus",
                      "yatzy", "win", "draw"], rows)]
        prs = [[p["name"], rate(p.get("win")), rate(p.get("draw")), rate(p.get("loss"))]
               for p in x["pairings"] if p.get("win")]
        if prs:
            out.append(Table(f"Pairings, exact / sampled (independent finals; ! = outside the {level} interval)",
                             ["pairing", "win", "draw", "loss"], prs))
        return out


def _pairing_slots(lineups: Sequence[Sequence[str]], p: PairingStats) -> list[tuple[int, int]]:
    """The (lineup, seat) places whose outcomes a pairing counts (:class:`PairingSection`): entrant
    a's seat at the two-seat tables of a and b (self-play: seat 1), or a's seats at tables of three
    or more (against the field)."""
    if p.b is None:
        return [(li, s) for li, lu in enumerate(lineups) if len(lu) > 2 for s, x in enumerate(lu) if x == p.a]
    return [(li, list(lu).index(p.a)) for li, lu in enumerate(lineups)
            if len(lu) == 2 and sorted(lu) == sorted((p.a, p.b))]


class QualitySection(Section):
    """The game-quality metrics of :mod:`harness.reports.quality` (definitions there), each with its
    interval over games; ``options`` holds the report-time thresholds (close margin, comeback
    deficit). Metrics a run cannot give (skill share without ``--analyse``, the per-run ones
    without a table of two seats) are listed with the reason, never silently left out."""

    key = "quality"

    def __init__(self, info: RunInfo, confidence: float, options: QualityOptions | None = None) -> None:
        super().__init__(info, confidence)
        self.acc = QualityAccumulator(QualityModel(info, options or QualityOptions()))

    @classmethod
    def build(cls, info: RunInfo, confidence: float, options: SummaryOptions,
              built: Sequence[Section]) -> Section | None:
        return cls(info, confidence, options.quality)

    def columns(self) -> list[str]:
        return self.acc.model.columns()

    def add(self, w: Window) -> None:
        self.acc.add(w.data, w.games)

    def to_dict(self) -> dict[str, Any]:
        return {"quality": self.acc.summary(self.confidence)}

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        return quality.tables(d)


#: The report's sections, in the order their tables appear (each applies when its ``applies``
#: says so: the luck section only to runs played with ``--analyse``; and when its ``build`` does
#: with the summary's options: the exact column only when asked for). Each is finished in this
#: order, after the sections before it (the exact column reads the entrants' and pairings').
class DepthSection(Section):
    """The exact depth of skill of the run's rule set (:func:`harness.exact.depth.depth_if_cheap`): the
    steps of its chains at 60 % and 75 % along the solver's temperature dial from ``random``, a
    property of the rules, whatever bots the run played. ``mode`` as :data:`harness.exact.depth.MODES`:
    "auto" only when every evaluation is cached or the rule set is small, else a note."""

    key = "depth"

    def __init__(self, info: RunInfo, confidence: float, mode: str = "on") -> None:
        super().__init__(info, confidence)
        self.mode = mode
        self.result: dict[str, Any] | None = None
        self.why: str | None = None

    @classmethod
    def build(cls, info: RunInfo, confidence: float, options: SummaryOptions,
              built: Sequence[Section]) -> Section | None:
        return None if options.depth == "off" else cls(info, confidence, options.depth)

    def columns(self) -> list[str]:
        return []

    def add(self, w: Window) -> None:
        pass

    def finish(self) -> None:
        # the exact evaluations (numba kernels) load only when a report asks for the depth of skill
        from harness.exact.depth import depth_if_cheap

        d, self.why = depth_if_cheap(self.info.rules, self.mode)
        self.result = d.to_json() if d is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {"depth": self.result if self.result is not None else {"available": False, "why": self.why}}

    def notes(self) -> list[str]:
        return [self.why] if self.why else []

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        from harness.exact.depth import steps_table

        x = d.get("depth")
        if not x or x.get("available") is False:
            return []
        return [steps_table([(x["rules"], x)])]


class FaultSection(Section):
    """The referee's fault table of a run with external engines (:mod:`harness.play.protocol.referee`):
    per refereed entrant, its seat-games, the decisions asked of it, the faulty ones by kind (each
    answered by the time-out policy) and its corrupted seat-games. A game with faults stays in
    every figure of the report: both sides played the same dice, so pairings stay paired."""

    key = "faults"
    KINDS = ("time", "illegal", "crash", "stall")

    @staticmethod
    def applies(info: RunInfo) -> bool:
        return bool(info.manifest.get("engines"))

    def __init__(self, info: RunInfo, confidence: float) -> None:
        super().__init__(info, confidence)
        self.engines = [e for e in info.entrants if e in info.manifest.get("engines", {})]
        self.counts = {e: np.zeros(3 + len(self.KINDS), np.int64) for e in self.engines}
        self.corrupted_games = np.zeros(0, np.int64)
        self.games = 0
        self.corrupted_any = 0

    def columns(self) -> list[str]:
        return ["engine_decisions", *(f"faults_{k}" for k in self.KINDS), "corrupted"]

    def add(self, w: Window) -> None:
        for li, d in enumerate(w.data):
            any_bad = np.zeros(w.games, dtype=bool)
            for s, label in enumerate(self.info.lineups[li]):
                if label not in self.counts:
                    continue
                acc = self.counts[label]
                acc[0] += w.games
                acc[1] += int(d["engine_decisions"][:, s].sum())
                for i, k in enumerate(self.KINDS):
                    acc[2 + i] += int(d[f"faults_{k}"][:, s].sum())
                bad = d["corrupted"][:, s].astype(bool)
                acc[-1] += int(bad.sum())
                any_bad |= bad
            self.games += w.games
            self.corrupted_any += int(any_bad.sum())

    def to_dict(self) -> dict[str, Any]:
        engines = self.info.manifest.get("engines", {})
        rows = []
        for label in self.engines:
            c = self.counts[label]
            faults = int(c[2:2 + len(self.KINDS)].sum())
            ref = engines.get(label, {}).get("referee", {})
            rows.append({"engine": label, "seat_games": int(c[0]), "decisions": int(c[1]),
                         **{k: int(c[2 + i]) for i, k in enumerate(self.KINDS)}, "faulty": faults,
                         "faulty_share": faults / c[1] if c[1] else 0.0, "corrupted": int(c[-1]),
                         "max_faulty": ref.get("max_faulty"), "max_corrupted": ref.get("max_corrupted"),
                         "time_control": engines.get(label, {}).get("time")})
        return {"faults": {"engines": rows, "games": self.games, "games_with_corrupted_seat": self.corrupted_any}}

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        f = d.get("faults")
        if not f or not f["engines"]:
            return []
        rows = []
        for e in f["engines"]:
            tc = e.get("time_control") or {}
            rows.append((e["engine"], count(e["decisions"]), *(count(e[k]) for k in FaultSection.KINDS),
                         pct(e["faulty_share"]), f"{count(e['corrupted'])} of {count(e['seat_games'])}",
                         f"{tc.get('move_ms', 0):g} ms + {tc.get('margin_ms', 0):g} ms margin" if tc else ""))
        limits = {(e.get("max_faulty"), e.get("max_corrupted")) for e in f["engines"]}
        lim = ", ".join(f"more than {100 * a:g} % of its decisions faulty; disqualified past {100 * b:g} % "
                        f"corrupted games" for a, b in limits if a is not None and b is not None)
        notes = (f"A faulty decision (late, illegal or unreadable, lost to a crash or a stall) was answered by the "
                 f"time-out policy (keep every die; the box with the largest immediate gain); the game went on.",
                 f"Every game stays in every figure above, faults or not: both seats played the same dice, so the "
                 f"pairings, ratings and SPRT count a game with faults like any other.",
                 f"{count(f['games_with_corrupted_seat'])} of {count(f['games'])} games have a corrupted seat"
                 + (f" (corrupted: {lim})." if lim else "."))
        return [Table("Referee: faults of the external engines",
                      ("engine", "decisions", "time", "illegal", "crash", "stall", "faulty", "corrupted games",
                       "budget per decision"), rows, notes)]


SECTIONS: tuple[type[Section], ...] = (EntrantSection, LuckSection, PairingSection, ExactSection, HeadToHeadSection,
                                       QualitySection, DepthSection, FaultSection)


# ---------------------------------------------------------------------------------------------
# the summary

SectionT = TypeVar("SectionT", bound=Section)


@dataclass(frozen=True, eq=False)
class RunSummary:
    """Every section of a run's report, folded in one pass over its chunks."""

    info: RunInfo
    sections: tuple[Section, ...]
    confidence: float = 0.95
    notes: tuple[str, ...] = field(default=())

    def section(self, cls: type[SectionT]) -> SectionT:
        """The summary's section of type ``cls``."""
        return next(s for s in self.sections if isinstance(s, cls))

    @property
    def entrants(self) -> tuple[EntrantStats, ...]:
        return self.section(EntrantSection).stats

    @property
    def pairings(self) -> tuple[PairingStats, ...]:
        return self.section(PairingSection).stats

    @property
    def h2h_points(self) -> np.ndarray:
        return self.section(HeadToHeadSection).points

    @property
    def h2h_games(self) -> np.ndarray:
        return self.section(HeadToHeadSection).games

    @property
    def ratings(self) -> Ratings | None:
        return self.section(HeadToHeadSection).ratings

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able summary written to ``summary.json`` (NaN becomes null)."""
        info = self.info
        out: dict[str, Any] = {
            "run": {
                "path": str(info.path), "kind": info.kind, "complete": info.complete,
                "games": info.games, "games_planned": info.games_planned, "seed": info.seed,
                "rules": {"name": info.rules.name, "settings": dict(info.rules.settings),
                          "settings_changed": settings_changed(info.rules), "digest": info.rules.digest},
                "lineups": [list(lu) for lu in info.lineups],
                "yatzy_box": yatzy_box(info.rules), "rank_by": rank_column(info.rules),
                "outcomes": DEFINITION,
            },
            "confidence": self.confidence,
            "notes": list(self.notes) + [n for s in self.sections for n in s.notes()],
        }
        for s in self.sections:
            out.update(s.to_dict())
        return jsonable(out)

    def tables(self, d: Mapping[str, Any]) -> list[Table]:
        return [t for s in self.sections for t in s.tables(d)]


def summarize(run: str | Path | RunInfo, confidence: float = 0.95,
              sections: Sequence[type[Section]] = SECTIONS,
              quality_options: QualityOptions | None = None, exact: str = "off",
              depth: str = "off") -> RunSummary:
    """Stream every chunk of a run once through ``sections`` and build its :class:`RunSummary`
    (``quality_options``: the thresholds of :class:`QualitySection`; ``exact``: whether the
    exact column is computed, :class:`ExactSection`'s mode; ``depth``: :class:`DepthSection`'s).

    Memory: one chunk per lineup (only the columns the sections use), plus the accumulators.
    """
    info = run if isinstance(run, RunInfo) else load_run(run)
    options = SummaryOptions(quality_options, exact, depth)
    built: list[Section] = []
    for cls in sections:
        if cls.applies(info):
            sec = cls.build(info, confidence, options, built)
            if sec is not None:
                built.append(sec)
    secs = tuple(built)
    cols = list(dict.fromkeys(c for s in secs for c in s.columns()))
    streams = [(info, li) for li in range(len(info.lineups))]
    for a, b, datas in iter_windows(streams, cols, info.games):
        w = Window(a, b, datas)
        for s in secs:
            s.add(w)
    for s in secs:
        s.finish()
    return RunSummary(info, secs, confidence, info.warnings)
