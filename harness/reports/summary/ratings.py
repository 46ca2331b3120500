"""The report's ``head_to_head`` section: the points of every entrant against every other (seat
against seat) and the Bradley-Terry ratings with their intervals."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from harness.game.outcome import pair_points, rank_column
from harness.records.rundir import RunInfo
from harness.reports.summary.base import Section, Window
from harness.stats import Ratings, bradley_terry
from harness.util.render import Table, ci_level, interval, num, pct


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
            rows = [
                [str(r["rank"]), r["name"], _bound(r), interval((r["lo"], r["hi"]), 1), r["note"] or ""]
                for r in d["ratings"]
            ]
            out.append(
                Table(
                    f"Bradley-Terry ratings (Elo scale, mean 0, {conf} intervals; prior: one virtual draw "
                    "per pair; >= / <= : a bound, the entrant won or lost every game against another)",
                    ["rank", "entrant", "Elo", "interval", "note"],
                    rows,
                )
            )
        if d["head_to_head"] and len(d["head_to_head"]["names"]) >= 3:
            h = d["head_to_head"]
            rows = [[n] + [pct(x) for x in r] for n, r in zip(h["names"], h["score"])]
            out.append(
                Table("Head to head (row's score against column: win 1, draw ½)", ["entrant"] + h["names"], rows)
            )
        return out


def _bound(r: Mapping[str, Any]) -> str:
    mark = {"lower": ">= ", "upper": "<= ", "both": "~ "}.get(r.get("bound") or "", "")
    return mark + num(r["elo"], 1)
