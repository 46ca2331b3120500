"""The report's ``entrants`` section: per entrant, its score distribution, mean (its interval
over games), upper bonus and yatzy rates, win/draw/loss, and mean score per box."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from harness.game.outcome import DEFINITION, wdl_counts
from harness.records.rundir import RunInfo
from harness.reports.summary.base import Section, Window, yatzy_box
from harness.stats import PERCENTILES, IntHistogram, Moments, mean_ci, rate
from harness.util.render import Table, ci_level, count, num, pct


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
            EntrantStats(
                self.info.entrants[e],
                self.hists[e],
                self.per_game[e],
                int(self.bonus[e]),
                int(self.yatzy[e]),
                int(self.played[e]),
                int(self.wdl[e, 0]),
                int(self.wdl[e, 1]),
                int(self.wdl[e, 2]),
                self.box_sum[e].copy(),
                self.box_sq[e].copy(),
            )
            for e in range(self.k)
            if self.slots[e] > 0
        )

    def to_dict(self) -> dict[str, Any]:
        boxes = self.info.box_names
        return {"entrants": [entrant_dict(e, boxes, self.confidence) for e in self.stats]}

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        conf = ci_level(d["confidence"])
        rows = []
        for e in d["entrants"]:
            p = e["percentiles"]
            rows.append(
                [
                    e["strategy"],
                    count(e["games"]),
                    num(e["mean"], ci=e["mean_ci"]),
                    num(e["std"]),
                    " / ".join(str(p[str(k)]) for k in PERCENTILES),
                    pct(e["bonus_rate"], ci=e["bonus_ci"]),
                    pct(e["yatzy_rate"], ci=e["yatzy_ci"]),
                    pct(e["win_rate"]),
                    pct(e["draw_rate"]),
                    pct(e["loss_rate"]),
                ]
            )
        out = [
            Table(
                f"Entrants (mean with {conf} CI over games; {DEFINITION})",
                [
                    "entrant",
                    "games",
                    "mean score",
                    "std",
                    "percentiles 1/5/25/50/75/95/99",
                    "upper bonus",
                    "yatzy",
                    "win",
                    "draw",
                    "loss",
                ],
                rows,
            )
        ]
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
        "bonus_rate": br.rate,
        "bonus_ci": [br.lo, br.hi],
        "yatzy_rate": yr.rate,
        "yatzy_ci": [yr.lo, yr.hi],
        "played": e.played,
        "wins": e.wins,
        "draws": e.draws,
        "losses": e.losses,
        "win_rate": w.rate,
        "win_ci": [w.lo, w.hi],
        "draw_rate": d.rate,
        "draw_ci": [d.lo, d.hi],
        "loss_rate": l.rate,
        "loss_ci": [l.lo, l.hi],
        "box_means": {b: float(m) for b, m in zip(boxes, e.box_means())},
        "box_std": {b: float(s) for b, s in zip(boxes, e.box_stds())},
    }
