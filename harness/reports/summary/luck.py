"""The report's ``luck`` section (runs played with ``--analyse``): per entrant the luck-adjusted
mean, the regret per game and per decision and its rating, the regret by kind of decision, and the
costliest decisions, folded from the analysis columns of the run's rows."""

from __future__ import annotations

import heapq
import math
from typing import Any, Mapping

import numpy as np

from harness.decisions.scale import ERROR, keep_text, rating
from harness.records.rundir import RunInfo, chunk_columns
from harness.reports.summary.base import Section, Window
from harness.stats import Moments, mean_ci
from harness.util.render import Table, ci_level, count, num, pct, times


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
        wanted = {(-nli, -ng, s) for heap in self.worst for mx, nli, ng, s in heap if mx > ERROR}
        if not wanted or not (self.info.path / "records").is_dir():
            return {}
        # the analysis (numba kernels, the solver) and the records' reader load only to name a
        # recorded run's worst decisions, so that a report of other runs, and compare, do not load them
        from harness.decisions.analysis import costliest_decisions

        return {k: w.to_json() for k, w in costliest_decisions(self.info.path, self.info.rules, wanted).items()}

    def to_dict(self) -> dict[str, Any]:
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
                "strategy": self.info.entrants[e],
                "games": n,
                "mean": self.plain[e].mean,
                "mean_ci": [pci.lo, pci.hi],
                "mean_luck": self.luck[e] / n,
                "adjusted_mean": ci.mean,
                "adjusted_ci": [ci.lo, ci.hi],
                # the optimal bot's adjusted score is V(start) in every game: float noise, not variance
                "variance_reduction": (
                    self.plain[e].var / var_a if var_a > 1e-12 * max(1.0, self.plain[e].var) else math.inf
                ),
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
                    "lower": {
                        "decisions": nbox - upper * n,
                        "regret_per_decision": (box_reg - self.upper_regret[e]) / max(1, nbox - upper * n),
                    },
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
            rows.append(
                [
                    x["strategy"],
                    count(x["games"]),
                    num(x["mean"]),
                    num(x["mean_luck"]),
                    num(x["adjusted_mean"], ci=x["adjusted_ci"]),
                    "exact" if vr is None else times(vr),
                    num(x["regret_per_game"]),
                    num(x["regret_per_decision"], 3),
                    pct(x["error_rate"]),
                    x.get("rating", ""),
                ]
            )
            if "by_kind" in x:
                bk = x["by_kind"]
                kinds.append(
                    [
                        x["strategy"],
                        *(num(bk[k]["regret_per_decision"], 3) for k in ("keep", "upper", "lower")),
                        num(bk["keep"]["decisions"] / x["games"], 2),
                    ]
                )
            for w in x.get("worst", []):
                lu = f"lineup {w['lineup']} " if len(d["run"]["lineups"]) > 1 else ""
                where = f"{lu}game {w['game']} seat {w['seat']}"
                if "turn" in w:
                    what = f"{' '.join(map(str, w['dice']))} {keep_text(w['played'])}, best {keep_text(w['best'])}"
                    where += f" column {w['column']} turn {w['turn']} roll {w['roll']}"
                else:
                    what = "(record the run with --record to name the decision)"
                worst.append([x["strategy"], where, what, num(w["regret"], 2)])
                links.append([None, w.get("review"), None, None])  # the game's review page (report.py)
        tabs = [
            Table(
                f"Luck and skill (exact; adjusted = total - luck, unbiased; {conf} CI over games; "
                "variance reduction = var(mean) / var(adjusted mean); exact = zero variance; "
                "rating: the scale of `yatzy-harness analyse`)",
                [
                    "entrant",
                    "games",
                    "mean",
                    "mean luck",
                    "adjusted mean",
                    "variance reduction",
                    "regret/game",
                    "regret/decision",
                    "errors",
                    "rating",
                ],
                rows,
            )
        ]
        if kinds:
            tabs.append(
                Table(
                    "Regret per decision by kind (keeps include stopping; boxes in the upper or lower section)",
                    ["entrant", "keep", "upper box", "lower box", "keeps/game"],
                    kinds,
                )
            )
        if worst:
            tabs.append(
                Table(
                    "Costliest decisions (per entrant, the seat-games holding the largest single regret)",
                    ["entrant", "where", "dice, played, best", "regret"],
                    worst,
                    links=links if any(h for _, h, _, _ in links) else (),
                )
            )
        return tabs
