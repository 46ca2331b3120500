"""A comparison's settings and its paired statistics: which seats of the two runs are compared, the
per-game paired accumulator of every metric, the SPRT verdict and the helpers of their JSON form.

The method (pairing, focus, intervals, luck adjustment, SPRT) is described once, in
:mod:`harness.reports.compare`, which gives every public name of this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from harness.util.errors import UserError
from harness.game.outcome import DRAW, WIN
from harness.game.rules import RuleSet
from harness.records.rundir import RunInfo
from harness.reports.quality import QualityOptions
from harness.stats import (
    CoMoments,
    ControlVariateMean,
    IntHistogram,
    Moments,
    PairedDiff,
    VecMoments,
    SPRTResult,
    control_variate_mean,
    mean_ci,
    paired_difference_from_moments,
    sprt_mean,
)
from harness.stats.moments import rare_interval


EXIT_NO_CHANGE, EXIT_CHANGE, EXIT_INCONCLUSIVE = 0, 1, 2

#: Default SPRT hypotheses, in points of final score per game.
DEFAULT_MU0, DEFAULT_MU1 = 0.0, 1.0

#: Fewest games whose totals differ between the runs for an SPRT verdict (the docstring of
#: :mod:`harness.reports.compare`, "inconclusive").
MIN_MOVED = 5

#: Fewest paired games for a verdict. The SPRT estimates the variance from the data; a rule change
#: that only matters in rare games (e.g. yatzy scoring) can show zero variance in a small sample,
#: which would make any LLR look decisive.
DEFAULT_MIN_GAMES = 100


@dataclass(frozen=True)
class Slot:
    """One compared (lineup, seat) and the entrant it holds in each run."""

    lineup: int
    seat: int
    base: str
    candidate: str


def match_slots(
    base: Sequence[Sequence[str]], cand: Sequence[Sequence[str]], entrant: str | None = None
) -> tuple[list[Slot], list[Slot]]:
    """(every matched slot, the focus slots) of the two runs' lineups (labels per seat) per the
    rules of :mod:`harness.reports.compare`; UserError if unmatched."""
    if len(base) != len(cand):
        raise UserError(
            f"cannot pair the runs: BASE has {len(base)} lineups, CANDIDATE "
            f"{len(cand)} (lineups are matched by position)"
        )
    slots = []
    for li, (lb, lc) in enumerate(zip(base, cand)):
        if len(lb) != len(lc):
            raise UserError(f"cannot pair the runs: lineup {li} has {len(lb)} seats in BASE, {len(lc)} in CANDIDATE")
        slots += [Slot(li, s, a, b) for s, (a, b) in enumerate(zip(lb, lc))]
    if entrant is not None:
        focus = [s for s in slots if entrant in (s.base, s.candidate)]
        if not focus:
            names = sorted({s.base for s in slots} | {s.candidate for s in slots})
            raise UserError(f"--entrant {entrant!r} sits in no seat of either run (entrants: {', '.join(names)})")
    else:
        focus = [s for s in slots if s.base != s.candidate] or slots
    return slots, focus


@dataclass
class PairedAccumulator:
    """Streams matched windows of two runs into paired per-game moments (mutable, one pass).

    Metrics (in :attr:`metrics` order): ``total``, ``bonus`` (upper bonus earned, 0/1), ``yatzy``
    (yatzy box > 0, when both rule sets have one), ``win`` and ``draw`` (0/1, as defined in
    :mod:`harness.game.outcome`; tables of 2+ seats), then every box both rule sets share; with
    ``luck`` (both runs analysed) also ``adjusted`` (total - luck) and ``edge`` (the seat's luck
    minus the mean luck of the other seats at its table). For each game the focus rows are averaged per
    side; ``base``/``cand`` hold the moments of those per-game means and ``diff`` of their
    difference (candidate - base). ``cv``: co-moments of the (win, draw, edge) differences, for the
    control-variate estimates. :attr:`groups`: the focus seats' (BASE entrant, CANDIDATE entrant)
    pairs in focus order, and :attr:`hists` each one's histograms of its rows' totals, (BASE,
    CANDIDATE); ``h_base``/``h_cand`` are their sums over the groups (all focus rows).
    """

    focus: list[Slot]
    boxes: list[str]
    ybox: tuple[str | None, str | None]
    wins: bool
    luck: bool = False
    #: per metric whose values are known to lie in [0, hi]: (hi in BASE, hi in CANDIDATE)
    limits: dict[str, tuple[float, float]] = field(default_factory=dict)
    n: int = 0
    metrics: list[str] = field(default_factory=list)
    base: VecMoments = field(init=False)
    cand: VecMoments = field(init=False)
    diff: VecMoments = field(init=False)
    groups: list[tuple[str, str]] = field(init=False)
    hists: list[tuple[IntHistogram, IntHistogram]] = field(init=False)
    cv: CoMoments = field(init=False)

    def __post_init__(self) -> None:
        self.has_yatzy = bool(self.ybox[0] and self.ybox[1])
        self.metrics = (
            ["total", "bonus"]
            + (["yatzy"] if self.has_yatzy else [])
            + (["win", "draw"] if self.wins else [])
            + [f"box:{b}" for b in self.boxes]
            + (["adjusted", "edge"] if self.luck else [])
        )
        m = len(self.metrics)
        self.base, self.cand, self.diff = VecMoments.empty(m), VecMoments.empty(m), VecMoments.empty(m)
        #: per metric, the games whose difference is not 0 (the games that moved it)
        self.moved = np.zeros(m, dtype=np.int64)
        self._cv_cols = [self.metrics.index(k) for k in ("win", "draw", "edge") if k in self.metrics]
        self.cv = CoMoments.empty(len(self._cv_cols))
        self.groups = list(dict.fromkeys((s.base, s.candidate) for s in self.focus))
        self._group_cols = [[f for f, s in enumerate(self.focus) if (s.base, s.candidate) == g] for g in self.groups]
        self.hists = [(IntHistogram.empty(), IntHistogram.empty()) for _ in self.groups]

    @property
    def h_base(self) -> IntHistogram:
        return sum((hb for hb, _ in self.hists), IntHistogram.empty())

    @property
    def h_cand(self) -> IntHistogram:
        return sum((hc for _, hc in self.hists), IntHistogram.empty())

    def columns(self) -> list[str]:
        extra = [y for y in self.ybox if y]
        return list(dict.fromkeys(["total", "bonus", "outcome"] + self.boxes + extra + (["luck"] if self.luck else [])))

    def _side(
        self, data: Sequence[dict[str, np.ndarray]], ybox: str | None, rows: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(B, M) per-game means of every metric over the focus rows, and the focus totals (B, F)."""
        k = len(self.focus)
        out = np.zeros((rows, len(self.metrics)))
        totals = np.empty((rows, k), dtype=np.int64)
        for f, s in enumerate(self.focus):
            d = data[s.lineup]
            tot = d["total"][:, s.seat]
            totals[:, f] = tot
            cols = [tot, d["bonus"][:, s.seat] > 0]
            if self.has_yatzy:
                cols.append(d[ybox][:, s.seat] > 0)
            if self.wins:
                oc = d["outcome"][:, s.seat]
                cols += [oc == WIN, oc == DRAW]
            cols += [d[b][:, s.seat] for b in self.boxes]
            if self.luck:
                lk = d["luck"]
                seats = lk.shape[1]
                own = lk[:, s.seat]
                others = (lk.sum(axis=1) - own) / (seats - 1) if seats > 1 else np.zeros(rows)
                cols += [tot - own, own - others]
            out += np.column_stack(cols)
        return out / k, totals

    def add(self, base: Sequence[dict[str, np.ndarray]], cand: Sequence[dict[str, np.ndarray]], rows: int) -> None:
        """Fold one window: ``base[l][col]``/``cand[l][col]`` are (rows, S_l) arrays of lineup l."""
        gb, tb = self._side(base, self.ybox[0], rows)
        gc, tc = self._side(cand, self.ybox[1], rows)
        self.base.add(gb)
        self.cand.add(gc)
        dg = gc - gb
        self.diff.add(dg)
        self.moved += np.count_nonzero(dg, axis=0)
        if self.luck and self.wins:
            self.cv.add(dg[:, self._cv_cols])
        self.hists = [
            (hb.add(tb[:, cols]), hc.add(tc[:, cols])) for (hb, hc), cols in zip(self.hists, self._group_cols)
        ]
        self.n += rows

    def moments(self, metric: str) -> tuple[Moments, Moments, Moments]:
        """(difference, base, candidate) moments of one metric."""
        j = self.metrics.index(metric)
        return self.diff.get(j), self.base.get(j), self.cand.get(j)

    def bounds(self, metric: str) -> tuple[tuple[float, float], ...] | None:
        """(difference, base, candidate) bounds of a per-game value, or None (luck terms)."""
        if metric not in self.limits:
            return None
        hb, hc = self.limits[metric]
        return (-hb, hc), (0.0, hb), (0.0, hc)

    def paired(
        self, metric: str, confidence: float
    ) -> tuple[PairedDiff, Moments, Moments, tuple[tuple[float, float], ...] | None]:
        """The paired difference of one metric (bounded where its values are:
        :mod:`harness.reports.compare`), its base and candidate moments, and its bounds."""
        d, b, c = self.moments(metric)
        bounds = self.bounds(metric)
        return (
            paired_difference_from_moments(d, confidence, bounds and bounds[0], self.moved_games(metric)),
            b,
            c,
            bounds,
        )

    def moved_games(self, metric: str) -> int:
        """How many games the metric's difference is not 0 in."""
        return int(self.moved[self.metrics.index(metric)])

    @property
    def score_metric(self) -> str:
        """What the score's interval and the SPRT use: ``adjusted`` when both runs carry luck."""
        return "adjusted" if self.luck else "total"

    def controlled(self, metric: str, confidence: float) -> ControlVariateMean | None:
        """The control-variate estimate of the paired difference of ``win`` or ``draw`` (luck
        edge difference as the control, known mean 0); None without luck or wins."""
        if not (self.luck and self.wins):
            return None
        names = [self.metrics[j] for j in self._cv_cols]
        return control_variate_mean(self.cv, names.index(metric), names.index("edge"), 0.0, confidence)


def value_limits(base: RuleSet, cand: RuleSet, boxes: Sequence[str]) -> dict[str, tuple[float, float]]:
    """The largest per-game value of each bounded metric in each rule set (the lowest is 0): the
    total, the 0/1 rates and each shared box's score; luck terms have no such bound."""
    out: dict[str, tuple[float, float]] = {"total": (base.max_total(), cand.max_total())}
    out |= dict.fromkeys(("bonus", "yatzy", "win", "draw"), (1.0, 1.0))
    bm, cm = base.box_max(), cand.box_max()
    for b in boxes:
        out[f"box:{b}"] = (base.columns * float(bm[base.box_index(b)]), cand.columns * float(cm[cand.box_index(b)]))
    return out


def sprt_verdict(
    d: Moments, s: CompareSettings, moved: int | None = None, bounds: tuple[float, float] | None = None
) -> tuple[str, list[SPRTResult]]:
    """Verdict ("change" / "no change" / "inconclusive") and the SPRT(s) behind it, under the test's
    parameters ``s`` (``mu0``, ``mu1``, ``alpha``, ``beta``, ``two_sided``, ``min_games``); ``moved``: the
    games whose totals differ, ``bounds`` those of a game's total difference (:mod:`harness.reports.compare`)."""
    mu0, mu1, alpha, beta, two_sided, min_games = s.mu0, s.mu1, s.alpha, s.beta, s.two_sided, s.min_games
    if two_sided:
        tests = [sprt_mean(d, mu0, mu1, alpha / 2, beta), sprt_mean(d, mu0, 2 * mu0 - mu1, alpha / 2, beta)]
    else:
        tests = [sprt_mean(d, mu0, mu1, alpha, beta)]
    if d.n < min_games:
        return "inconclusive", tests
    if moved == 0 and bounds is not None:  # identical play so far: the bound on an unseen change
        lo, hi = rare_interval(0.0, 0, d.n, bounds, 1.0 - 2.0 * beta)
        half = abs(mu1 - mu0) / 2
        return ("no change" if mu0 - half < lo and hi < mu0 + half else "inconclusive"), tests
    if moved is not None and moved < MIN_MOVED:
        return "inconclusive", tests
    if any(t.decision == "H1" for t in tests):
        return "change", tests
    if all(t.decision == "H0" for t in tests):
        return "no change", tests
    return "inconclusive", tests


def score_histograms(acc: PairedAccumulator) -> list[dict[str, Any]]:
    """``compare --json``'s ``score_histograms``: per group of focus seats (one BASE entrant and
    one CANDIDATE entrant, in focus order) the final scores of its rows in both runs, as counts per
    point from ``min`` to the highest score of either (``base_counts[i]`` rows scored ``min + i``
    in BASE), with each side's mean; ``rows`` = games x the group's seats, the same in both runs."""
    out = []
    for (b, c), (hb, hc) in zip(acc.groups, acc.hists):
        if not hb.n:
            continue
        lo, hi = min(hb.min, hc.min), max(hb.max, hc.max)
        counts = [np.pad(h.counts, (0, max(0, hi + 1 - h.counts.size)))[lo : hi + 1].tolist() for h in (hb, hc)]
        out.append(
            {
                "base": b,
                "candidate": c,
                "rows": hb.n,
                "min": lo,
                "base_counts": counts[0],
                "candidate_counts": counts[1],
                "base_mean": hb.mean,
                "candidate_mean": hc.mean,
            }
        )
    return out


def diff_dict(
    p: PairedDiff,
    base: Moments,
    cand: Moments,
    confidence: float,
    bounds: tuple[tuple[float, float], ...] | None = None,
) -> dict[str, Any]:
    """A paired figure's JSON form: both sides' means with their intervals, the difference, its
    interval and p-value."""
    cb, cc = mean_ci(base, confidence, bounds and bounds[1]), mean_ci(cand, confidence, bounds and bounds[2])
    return {
        "base": cb.mean,
        "base_ci": [cb.lo, cb.hi],
        "candidate": cc.mean,
        "candidate_ci": [cc.lo, cc.hi],
        "diff": p.mean,
        "diff_ci": [p.lo, p.hi],
        "diff_std": p.std,
        "p_value": p.p_value,
        "games": p.n,
    }


#: How the score line names the luck-adjusted estimator (text and JSON).
ADJUSTED = "luck-adjusted: total − luck"
#: How the win and draw lines name their estimator with luck.
CONTROL = "control variate luck difference"


def variance_reduction(plain: Moments, adjusted: Moments) -> float:
    """var(plain) / var(adjusted) of the per-game difference; inf when the adjusted variance is zero
    up to float rounding (optimal bots: total - luck is V(start) in every game)."""
    va, vp = adjusted.var, plain.var
    if not (math.isfinite(va) and math.isfinite(vp)):
        return math.nan
    return vp / va if va > 1e-12 * max(1.0, vp) else math.inf


def run_has_luck(info: RunInfo) -> tuple[bool, str]:
    """(True, "") when every row of the run carries ``luck`` (played with ``analyse = true``), else
    (False, why)."""
    import pyarrow.parquet as pq

    if not (info.manifest.get("config") or {}).get("analyse"):
        return False, f"{info.path} was played without analyse"
    for refs in info.chunks:
        if refs:
            names = set(pq.read_schema(refs[0].path).names)
            if "luck" not in names:
                return False, f"{refs[0].path} has no luck column"
    return True, ""


@dataclass(frozen=True)
class CompareSettings:
    """The test's parameters (see :mod:`harness.reports.compare`)."""

    mu0: float = DEFAULT_MU0
    mu1: float = DEFAULT_MU1
    alpha: float = 0.05
    beta: float = 0.05
    two_sided: bool = True
    confidence: float = 0.95
    entrant: str | None = None
    min_games: int = DEFAULT_MIN_GAMES
    #: compare runs on different seeds (independent games) instead of refusing
    unpaired: bool = False
    #: use the rows' luck when both runs carry it (``--no-analyse``: plain totals only)
    adjust: bool = True
    #: thresholds of the game-quality metrics (:mod:`harness.reports.quality`)
    quality: QualityOptions = field(default_factory=QualityOptions)

    def __post_init__(self) -> None:
        if self.min_games < 2:
            raise UserError(f"--min-games must be >= 2, got {self.min_games}")
        if self.mu0 == self.mu1:
            raise UserError(f"--mu0 and --mu1 must differ, both are {self.mu0}")
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not 0.0 < v < 0.5:
                raise UserError(f"--{name} must be in (0, 0.5), got {v}")
        if not 0.0 < self.confidence < 1.0:
            raise UserError(f"--confidence must be in (0, 1), got {self.confidence}")
