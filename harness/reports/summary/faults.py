"""The report's ``faults`` section (runs with external engines): the referee's fault table, per
refereed entrant its decisions, faulty ones by kind and corrupted seat-games."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from harness.records.rundir import RunInfo
from harness.reports.summary.base import Section, Window
from harness.util.render import Table, count, pct


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
            faults = int(c[2 : 2 + len(self.KINDS)].sum())
            ref = engines.get(label, {}).get("referee", {})
            rows.append(
                {
                    "engine": label,
                    "seat_games": int(c[0]),
                    "decisions": int(c[1]),
                    **{k: int(c[2 + i]) for i, k in enumerate(self.KINDS)},
                    "faulty": faults,
                    "faulty_share": faults / c[1] if c[1] else 0.0,
                    "corrupted": int(c[-1]),
                    "max_faulty": ref.get("max_faulty"),
                    "max_corrupted": ref.get("max_corrupted"),
                    "time_control": engines.get(label, {}).get("time"),
                }
            )
        return {"faults": {"engines": rows, "games": self.games, "games_with_corrupted_seat": self.corrupted_any}}

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        f = d.get("faults")
        if not f or not f["engines"]:
            return []
        rows = []
        for e in f["engines"]:
            tc = e.get("time_control") or {}
            rows.append(
                (
                    e["engine"],
                    count(e["decisions"]),
                    *(count(e[k]) for k in FaultSection.KINDS),
                    pct(e["faulty_share"]),
                    f"{count(e['corrupted'])} of {count(e['seat_games'])}",
                    f"{tc.get('move_ms', 0):g} ms + {tc.get('margin_ms', 0):g} ms margin" if tc else "",
                )
            )
        limits = {(e.get("max_faulty"), e.get("max_corrupted")) for e in f["engines"]}
        lim = ", ".join(
            f"more than {100 * a:g} % of its decisions faulty; disqualified past {100 * b:g} % corrupted games"
            for a, b in limits
            if a is not None and b is not None
        )
        notes = (
            "A faulty decision (late, illegal or unreadable, lost to a crash or a stall) was answered by the "
            "time-out policy (keep every die; the box with the largest immediate gain); the game went on.",
            "Every game stays in every figure above, faults or not: both seats played the same dice, so the "
            "pairings, ratings and SPRT count a game with faults like any other.",
            f"{count(f['games_with_corrupted_seat'])} of {count(f['games'])} games have a corrupted seat"
            + (f" (corrupted: {lim})." if lim else "."),
        )
        return [
            Table(
                "Referee: faults of the external engines",
                (
                    "engine",
                    "decisions",
                    "time",
                    "illegal",
                    "crash",
                    "stall",
                    "faulty",
                    "corrupted games",
                    "budget per decision",
                ),
                rows,
                notes,
            )
        ]
