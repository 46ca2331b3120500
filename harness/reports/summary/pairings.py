"""The report's ``pairings`` section: win/draw/loss of each pair of entrants at two-seat tables
(or of an entrant against the field at larger ones), with Wilson intervals, and the Elo interval
of the game pairs on the same dice when seats were swapped."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from harness.game.outcome import wdl_counts
from harness.records.rundir import RunInfo
from harness.reports.summary.base import Section, Window
from harness.stats import elo_ci_from_pentanomial, elo_from_score, rate
from harness.util.render import Table, ci_level, count, num, pct


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
            out.append(
                PairingStats(
                    names[ea],
                    names[eb] if eb >= 0 else None,
                    int(c[0]),
                    int(c[1]),
                    int(c[2]),
                    tuple(int(x) for x in pen) if pen is not None else None,
                )
            )
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
            rows.append(
                [
                    p["name"],
                    count(p["games"]),
                    pct(p["win_rate"], ci=p["win_ci"]),
                    pct(p["draw_rate"], ci=p["draw_ci"]),
                    pct(p["loss_rate"], ci=p["loss_ci"]),
                    num(p["elo"], 1, ci=p["elo_ci"]),
                ]
            )
        return [
            Table(
                f"Pairings (Wilson {conf} intervals; Elo interval from game pairs when seats were swapped)",
                ["pairing", "games", "win", "draw", "loss", "Elo"],
                rows,
            )
        ]


def pairing_dict(p: PairingStats, confidence: float) -> dict[str, Any]:
    """One pairing's JSON summary: W/D/L with Wilson intervals, score, Elo (pentanomial CI if paired)."""
    n = p.games
    w, d, l = (rate(x, n, confidence) for x in (p.wins, p.draws, p.losses))
    score = (p.wins + 0.5 * p.draws) / n if n else math.nan
    out: dict[str, Any] = {
        "a": p.a,
        "b": p.b,
        "name": p.name,
        "games": n,
        "wins": p.wins,
        "draws": p.draws,
        "losses": p.losses,
        "win_rate": w.rate,
        "win_ci": [w.lo, w.hi],
        "draw_rate": d.rate,
        "draw_ci": [d.lo, d.hi],
        "loss_rate": l.rate,
        "loss_ci": [l.lo, l.hi],
        "score": score,
        # against the field of an N-seat table, par is 1/N, not 1/2: an Elo figure would mislead
        "elo": elo_from_score(score) if n and p.b is not None else math.nan,
        "elo_ci": None,
        "pentanomial": None,
    }
    if p.pentanomial is not None and sum(p.pentanomial):
        elo, lo, hi = elo_ci_from_pentanomial(p.pentanomial, confidence)
        out.update(elo=elo, elo_ci=[lo, hi], pentanomial=list(p.pentanomial))
    return out
