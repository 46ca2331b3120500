"""Paired comparison of two runs (a rule change, or bot A against bot B) with a CI-friendly exit code.

Pairing: BASE and CANDIDATE are matched row by row on (lineup, game, seat). Lineups are matched by
position (lineup 0 with lineup 0, ...), so both runs need the same number of lineups and seats per
lineup; with the same seed, every matched row saw the same dice (common random numbers), and the
comparison measures the change alone. Runs with different seeds are refused unless
``--unpaired`` (the differences are then between independent games: valid, only noisier, and
the output says so). Boxes present in one rule set only are listed, not silently dropped.

Which rows are compared ("focus"): the seats whose entrant label differs between the runs (bot A
in a seat of BASE against bot B in the same seat of CANDIDATE); if no label differs (same bots,
e.g. a rule change), every seat. ``--entrant LABEL`` picks the seats that hold LABEL in either run.

The unit of every interval and test is the *game index*: for game g the focus rows' differences
are averaged into one number d_g (in a tournament all lineups share game g's dice, so their rows
are correlated; games are independent). Reported: the mean paired difference of final scores with
a t interval and p-value, both runs' means, a two-sample KS test on the focus rows' score
histograms (the histograms themselves are in ``score_histograms``, per group of focus seats), the
per-box mean differences, the change of win and draw rates (:mod:`harness.game.outcome`), of
upper-bonus rate and of yatzy rate, each paired with its interval; and the SPRT verdict.

Intervals are Student t intervals over games, with two exceptions for rare figures (a box, the
draw rate) in small runs, where the t interval was measured to miss the exact value far more
often than stated (benchmarks/BENCHMARKS.md, "Sampled statistics against the exact truth"). A
paired difference whose per-game value is 0 in most games takes its variance from the k games
that moved it, so its t quantile has k - 1 degrees of freedom (n - 1 when every game moved). A
figure whose per-game value is bounded (a total, a box's score, a 0/1 rate: :func:`value_limits`)
and that no game or one game moved gets the interval the bounds allow,
:func:`harness.stats.moments.rare_interval` (about ±3.7 / n of the range at 95 % when no game of n
moved it), and p = 1; so does a side whose every game gave the same value (no draw at all).

Luck adjustment: when both runs were played with ``analyse = true`` (rows carry each seat-game's
exact ``luck``, :mod:`harness.decisions.analysis`), the score's interval, p-value and SPRT use the paired
difference of luck-adjusted scores ``total - luck`` instead of the plain totals. Each luck term has
mean zero given the past whatever the policy, so each run's adjusted mean is an unbiased estimate
of its expected score, also across a rule change (each run is adjusted with its own rule set's
table); only the variance shrinks (the output gives the factor, var(plain) / var(adjusted), of
the per-game difference). The plain difference stays in the output (``score_plain``). Win and
draw rates use the luck difference as a control variate: per game x_g = candidate - base of the
focus seats' luck edge (the seat's luck minus the mean luck of the other seats at its table; mean
zero), and the regression estimator :func:`harness.stats.control_variate_mean` with the
coefficient fitted on the same games. When only one run has luck, the comparison is plain, with
a note. ``compare`` turns the analysis on for the configs it plays (``--no-analyse`` to play
without it) unless a rule set cannot be analysed (``saved_rolls``: then plain, with a note).

Game quality (:mod:`harness.reports.quality`): skill share, upset rate, first-mover edge, lead changes,
decisive round, close games and comebacks of each run over all its seats, side by side, with
the paired difference of each (delta method on the joint per-game means), its p-value and the
Holm-adjusted one (family-wise error rate at 1 - confidence over the metrics compared); JSON under
``quality``. They inform and do not enter the verdict.

SPRT: :func:`harness.stats.sprt_mean` on the d_g, H0: delta = mu0 (default 0) against H1: delta =
mu1 (default 1 point). Two-sided by default: the mirrored H1' delta = 2*mu0 - mu1 is tested too,
each side at alpha/2. Verdict and exit code:

* 0 "no change": every side accepts H0 (the change is nearer mu0 than mu1, at the requested
  error rates);
* 1 "change": a side accepts H1;
* 2 "inconclusive": no decision with the games played (or fewer than ``--min-games`` paired
  games, default 100: the SPRT's variance comes from the data, and a change that only shows in
  rare games can look like zero variance in a small sample; or fewer than :data:`MIN_MOVED`
  games whose totals differ between the runs: a variance from so few games made the SPRT decide
  wrongly at its first looks, measured against the exact difference in
  benchmarks/BENCHMARKS.md). When the totals differ in no game at all (identical play so far),
  the verdict is "no change" once the bound on a change that none of n games showed
  (:func:`harness.stats.moments.rare_interval` of the total, at confidence 1 - 2 beta) lies
  nearer mu0 than mu1 (and its mirror): e.g. with mu1 = 1, after about 2,240 scandinavian
  games. A usage error also exits 2 (through
  :class:`~harness.util.errors.UserError`, one line on stderr, no JSON on stdout): in CI, treat 2 as
  "not proven either way" and read stderr/the JSON to tell the two apart.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from harness.util.errors import UserError
from harness.game.outcome import DEFINITION, DRAW, WIN
from harness.util.jsonable import jsonable
from harness.game.rules import RuleSet, load_rules
from harness.play.runconfig import RunConfig, resolve_config_path
from harness.records.rundir import RunInfo, chunk_columns, iter_windows, load_manifest, load_run
from harness.reports.quality import (
    QualityComparison,
    QualityModel,
    QualityOptions,
    compare_lines,
)
from harness.util.render import ci_level, count, factor, interval, num, p_value, pct, pts, sig
from harness.reports.summary import yatzy_box
from harness.stats import (
    CoMoments,
    ControlVariateMean,
    IntHistogram,
    Moments,
    PairedDiff,
    VecMoments,
    SPRTResult,
    control_variate_mean,
    ks_2samp_counts,
    mean_ci,
    paired_difference_from_moments,
    sprt_mean,
)
from harness.stats.moments import rare_interval

EXIT_NO_CHANGE, EXIT_CHANGE, EXIT_INCONCLUSIVE = 0, 1, 2

#: Default SPRT hypotheses, in points of final score per game.
DEFAULT_MU0, DEFAULT_MU1 = 0.0, 1.0

#: Fewest games whose totals differ between the runs for an SPRT verdict (module docstring,
#: "inconclusive").
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


def match_slots(base: Sequence[Sequence[str]], cand: Sequence[Sequence[str]], entrant: str | None = None
                ) -> tuple[list[Slot], list[Slot]]:
    """(every matched slot, the focus slots) of the two runs' lineups (labels per seat) per the
    module docstring's rules; UserError if unmatched."""
    if len(base) != len(cand):
        raise UserError(f"cannot pair the runs: BASE has {len(base)} lineups, CANDIDATE "
                        f"{len(cand)} (lineups are matched by position)")
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
        self.metrics = (["total", "bonus"] + (["yatzy"] if self.has_yatzy else [])
                        + (["win", "draw"] if self.wins else [])
                        + [f"box:{b}" for b in self.boxes]
                        + (["adjusted", "edge"] if self.luck else []))
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
        return list(dict.fromkeys(["total", "bonus", "outcome"] + self.boxes + extra
                                  + (["luck"] if self.luck else [])))

    def _side(self, data: Sequence[dict[str, np.ndarray]], ybox: str | None, rows: int) -> tuple[np.ndarray, np.ndarray]:
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
        self.hists = [(hb.add(tb[:, cols]), hc.add(tc[:, cols]))
                      for (hb, hc), cols in zip(self.hists, self._group_cols)]
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

    def paired(self, metric: str, confidence: float) -> tuple[PairedDiff, Moments, Moments,
                                                               tuple[tuple[float, float], ...] | None]:
        """The paired difference of one metric (bounded where its values are: module docstring),
        its base and candidate moments, and its bounds."""
        d, b, c = self.moments(metric)
        bounds = self.bounds(metric)
        return paired_difference_from_moments(d, confidence, bounds and bounds[0], self.moved_games(metric)), b, c, bounds

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
    out |= {k: (1.0, 1.0) for k in ("bonus", "yatzy", "win", "draw")}
    bm, cm = base.box_max(), cand.box_max()
    for b in boxes:
        out[f"box:{b}"] = (base.columns * float(bm[base.box_index(b)]), cand.columns * float(cm[cand.box_index(b)]))
    return out


def _sprt(d: Moments, mu0: float, mu1: float, alpha: float, beta: float, two_sided: bool, min_games: int = 0,
          moved: int | None = None, bounds: tuple[float, float] | None = None) -> tuple[str, list[SPRTResult]]:
    """Verdict ("change" / "no change" / "inconclusive") and the SPRT(s) behind it; ``moved``: the
    games whose totals differ, ``bounds`` those of a game's total difference (module docstring)."""
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
        counts = [np.pad(h.counts, (0, max(0, hi + 1 - h.counts.size)))[lo:hi + 1].tolist() for h in (hb, hc)]
        out.append({"base": b, "candidate": c, "rows": hb.n, "min": lo, "base_counts": counts[0],
                    "candidate_counts": counts[1], "base_mean": hb.mean, "candidate_mean": hc.mean})
    return out


def _diff_dict(p: PairedDiff, base: Moments, cand: Moments, confidence: float,
               bounds: tuple[tuple[float, float], ...] | None = None) -> dict[str, Any]:
    cb, cc = mean_ci(base, confidence, bounds and bounds[1]), mean_ci(cand, confidence, bounds and bounds[2])
    return {"base": cb.mean, "base_ci": [cb.lo, cb.hi], "candidate": cc.mean, "candidate_ci": [cc.lo, cc.hi],
            "diff": p.mean, "diff_ci": [p.lo, p.hi], "diff_std": p.std, "p_value": p.p_value, "games": p.n}


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
    """The test's parameters (see the module docstring)."""

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


@dataclass(frozen=True)
class ComparisonResult:
    """What a comparison found: the fields of ``compare --json``, in its order.

    Nested parts are JSON-able dicts documented by docs/rule-change.md ("Compare a rule change"); ``score``
    is the headline (luck-adjusted when both runs carry luck, else ``score_plain``), ``verdict``
    the SPRT's word and ``exit_code`` the command's exit status for it (0 no change, 1 change, 2
    inconclusive). :meth:`to_dict` is the JSON form.
    """

    base: dict[str, Any]
    candidate: dict[str, Any]
    settings_changed: dict[str, list[Any]]
    games: int
    focus: list[dict[str, Any]]
    rows_per_game: int
    paired: bool
    boxes_only: dict[str, list[str]]
    confidence: float
    score: dict[str, Any]
    score_plain: dict[str, Any]
    luck: dict[str, Any]
    distribution: dict[str, Any] | None
    score_histograms: list[dict[str, Any]]
    boxes: list[dict[str, Any]]
    bonus_rate: dict[str, Any] | None
    yatzy_rate: dict[str, Any] | None
    win_rate: dict[str, Any] | None
    draw_rate: dict[str, Any] | None
    sprt: dict[str, Any]
    quality: dict[str, Any]
    verdict: str
    exit_code: int
    notes: list[str]
    #: with ``Playing(sequential=True)``: the step, the limit and every look at the data
    sequential: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        if self.sequential is None:
            del d["sequential"]
        return d


class Comparison:
    """A streaming paired comparison of two run directories; :meth:`update` reads new games only."""

    def __init__(self, base: str | Path, candidate: str | Path, settings: CompareSettings,
                 focus: Sequence[Slot] | None = None) -> None:
        self.base_dir, self.cand_dir, self.settings = Path(base), Path(candidate), settings
        self.base, self.cand = load_run(base), load_run(candidate)
        if self.base.seed != self.cand.seed and not settings.unpaired:
            raise UserError(f"BASE and CANDIDATE were played on different seeds ({self.base.seed} and "
                            f"{self.cand.seed}): their games are not on the same dice, so they cannot be paired. "
                            "Replay one with the other's --seed, or pass --unpaired to compare them as "
                            "independent samples (valid, much noisier)")
        self.slots, self.focus = match_slots(self.base.lineups, self.cand.lineups, settings.entrant)
        if focus is not None:  # the caller's own choice of seats (``compare --exact``: one bot's)
            self.focus = list(focus)
        cboxes, bboxes = set(self.cand.box_names), set(self.base.box_names)
        boxes = [b for b in self.base.box_names if b in cboxes]
        #: boxes present on one side only: not compared box by box (their points are in the totals)
        self.boxes_only = {"base": [b for b in self.base.box_names if b not in cboxes],
                           "candidate": [b for b in self.cand.box_names if b not in bboxes]}
        wins = all(len(lu) >= 2 for lu in self.base.lineups)
        #: notes added by the caller (e.g. why the played runs were not analysed)
        self.extra_notes: list[str] = []
        (lb, why_b), (lc, why_c) = run_has_luck(self.base), run_has_luck(self.cand)
        self.luck = lb and lc and settings.adjust
        self.luck_note = None
        if lb and lc and not settings.adjust:
            self.luck_note = "plain comparison (--no-analyse): the runs' luck columns are not used"
        elif lb != lc:
            self.luck_note = (f"plain comparison (no luck adjustment): only {'BASE' if lb else 'CANDIDATE'} carries "
                              f"luck ({why_c or why_b}); play both with analyse = true (run --analyse) to adjust")
        self.acc = PairedAccumulator(self.focus, boxes, (yatzy_box(self.base.rules), yatzy_box(self.cand.rules)), wins,
                                     self.luck, limits=value_limits(self.base.rules, self.cand.rules, boxes))
        # game quality over every seat of both runs (not only the focus), on the columns both carry
        common = chunk_columns(self.base) & chunk_columns(self.cand)
        self.quality = QualityComparison(QualityModel(self.base, settings.quality, common, self.luck),
                                         QualityModel(self.cand, settings.quality, common, self.luck))

    def update(self, until: int | None = None) -> int:
        """Re-read both manifests and fold the newly available paired games (up to game ``until``,
        exclusive, if given); returns the number of games paired so far."""
        if self.acc.n:
            self.base, self.cand = load_run(self.base_dir), load_run(self.cand_dir)
        games = min(self.base.games, self.cand.games)
        if until is not None:
            games = min(games, until)
        if games <= self.acc.n:
            return self.acc.n
        nl = len(self.base.lineups)
        streams = [(self.base, li) for li in range(nl)] + [(self.cand, li) for li in range(nl)]
        columns = list(dict.fromkeys(self.acc.columns() + self.quality.columns()))
        for a, b, datas in iter_windows(streams, columns, games, start=self.acc.n):
            self.acc.add(datas[:nl], datas[nl:], b - a)
            self.quality.add(datas[:nl], datas[nl:], b - a)
        return self.acc.n

    def verdict(self) -> tuple[str, list[SPRTResult]]:
        s = self.settings
        return _sprt(self.acc.moments(self.acc.score_metric)[0], s.mu0, s.mu1, s.alpha, s.beta, s.two_sided, s.min_games,
                     self.acc.moved_games("total"), self.acc.bounds("total")[0])

    def result(self) -> ComparisonResult:
        """What the games folded so far show (``exit_code`` included)."""
        s, acc, conf = self.settings, self.acc, self.settings.confidence
        verdict, tests = self.verdict()
        code = {"no change": EXIT_NO_CHANGE, "change": EXIT_CHANGE, "inconclusive": EXIT_INCONCLUSIVE}[verdict]

        def paired(metric: str) -> dict[str, Any] | None:
            if metric not in acc.metrics:
                return None
            p, b, c, bounds = acc.paired(metric, conf)
            return _diff_dict(p, b, c, conf, bounds)

        def controlled(metric: str) -> dict[str, Any] | None:
            base = paired(metric)
            cvm = acc.controlled(metric, conf)
            if base is None or cvm is None:
                return base
            if cvm.beta == 0.0 and cvm.variance_reduction == 1.0:
                # every seat of each table is compared: their luck edges cancel, there is no control
                return base | {"estimator": "plain", "why": "every seat is compared: the seats' luck edges cancel"}
            return base | {"estimator": CONTROL, "plain_diff": base["diff"], "plain_diff_ci": base["diff_ci"],
                           "diff": cvm.mean, "diff_ci": [cvm.lo, cvm.hi], "diff_std": cvm.std,
                           "p_value": cvm.p_value, "beta": cvm.beta, "variance_reduction": cvm.variance_reduction}

        plain = paired("total")
        score = plain
        luck: dict[str, Any] = {"adjusted": self.luck, "estimator": ADJUSTED if self.luck else "plain"}
        if self.luck:
            score = paired("adjusted") | {"estimator": ADJUSTED}
            vr = variance_reduction(acc.moments("total")[0], acc.moments("adjusted")[0])
            score["variance_reduction"] = vr
            luck["variance_reduction"] = vr
        notes = list(self.base.warnings) + list(self.cand.warnings) + list(self.extra_notes)
        if self.luck_note:
            notes.append(self.luck_note)
        if self.base.seed != self.cand.seed:
            notes.append(f"UNPAIRED: seeds differ ({self.base.seed} vs {self.cand.seed}), so games are not on the "
                         "same dice: the differences are between independent games (valid, much noisier)")
        for side, only in self.boxes_only.items():
            if only:
                notes.append(f"boxes only in {side.upper()}: {', '.join(only)} (not compared box by box; "
                             "their points are in the totals)")
        for side, info in (("base", self.base), ("candidate", self.cand)):
            faults = info.manifest.get("faults") or {}
            for label, f in faults.items():
                bad = sum(int(f.get(k, 0)) for k in ("faults_time", "faults_illegal", "faults_crash", "faults_stall"))
                if bad:
                    notes.append(f"{side.upper()}: engine {label} had {bad:,} faulty decisions of "
                                 f"{int(f.get('engine_decisions', 0)):,} (answered by the time-out policy) and "
                                 f"{int(f.get('corrupted', 0)):,} corrupted games; every game is counted, "
                                 f"paired on the same dice, in the difference and the SPRT")
        if self.base.games != self.cand.games:
            notes.append(f"runs have {self.base.games:,} and {self.cand.games:,} games: the first "
                         f"{acc.n:,} are paired")
        dist = ks_2samp_counts(acc.h_base, acc.h_cand) if acc.n else None
        out: dict[str, Any] = {
            "base": {"path": str(self.base_dir), "rules": self.base.rules.name,
                     "settings": dict(self.base.rules.settings), "seed": self.base.seed, "games": self.base.games},
            "candidate": {"path": str(self.cand_dir), "rules": self.cand.rules.name,
                          "settings": dict(self.cand.rules.settings), "seed": self.cand.seed,
                          "games": self.cand.games},
            "settings_changed": {k: [self.base.rules.settings.get(k), v] for k, v in self.cand.rules.settings.items()
                                 if self.base.rules.settings.get(k) != v},
            "games": acc.n,
            "focus": [{"lineup": f.lineup, "seat": f.seat, "base": f.base, "candidate": f.candidate}
                      for f in self.focus],
            "rows_per_game": len(self.focus),
            "paired": self.base.seed == self.cand.seed,
            "boxes_only": self.boxes_only,
            "confidence": conf,
            "score": score,
            "score_plain": plain,
            "luck": luck,
            "distribution": None if dist is None else {"test": "ks_2samp", "statistic": dist.statistic,
                                                       "p_value": dist.p_value, "method": dist.method},
            "score_histograms": score_histograms(acc),
            "boxes": [{"box": b} | paired(f"box:{b}") for b in acc.boxes],
            "bonus_rate": paired("bonus"),
            "yatzy_rate": paired("yatzy"),
            "win_rate": controlled("win"),
            "draw_rate": controlled("draw"),
            "sprt": {"mu0": s.mu0, "mu1": s.mu1, "alpha": s.alpha, "beta": s.beta, "two_sided": s.two_sided,
                     "min_games": s.min_games, "min_moved": MIN_MOVED, "moved": acc.moved_games("total"),
                     "tests": [{"h0": t.h0, "h1": t.h1, "llr": t.llr, "lower": t.lower, "upper": t.upper,
                                "decision": t.decision, "alpha": t.alpha, "beta": t.beta} for t in tests]},
            "quality": self.quality.result(conf),
            "verdict": verdict,
            "exit_code": code,
            "notes": notes,
        }
        return ComparisonResult(**jsonable(out))


def compare_runs(base: str | Path, candidate: str | Path, settings: CompareSettings | None = None,
                 notes: Sequence[str] = (), focus: Sequence[Slot] | None = None) -> ComparisonResult:
    """Compare two finished run directories (one streaming pass); returns :meth:`Comparison.result`
    (``notes``: extra lines for its notes; ``focus``: the slots compared, instead of the module
    docstring's choice)."""
    c = Comparison(base, candidate, settings or CompareSettings(), focus)
    c.extra_notes = list(notes)
    c.update()
    return c.result()


# ---------------------------------------------------------------------------------------------
# playing configs


@dataclass(frozen=True)
class Playing:
    """How :func:`compare` plays BASE or CANDIDATE when it is a run config (both on one seed).

    ``games``: games per lineup (with ``sequential``: games per step; default the config's games,
    or its chunk size per step); ``seed``: both sides' root seed (default BASE's); ``out``: where
    the played runs go (``out/base``, ``out/candidate``; default ``results/compare-<time>``);
    ``sequential``: play a step at a time until the SPRT decides or ``max_games``.
    """

    games: int | None = None
    seed: int | None = None
    chunk_size: int | None = None
    workers: int | None = None
    out: Path | None = None
    quiet: bool = True
    sequential: bool = False
    max_games: int | None = None


def is_run_dir(p: str | Path) -> bool:
    return (Path(p) / "manifest.json").is_file()


def config_of(arg: str | Path) -> RunConfig:
    """A run config for BASE/CANDIDATE: a run directory's own config, or a TOML (or config name)."""
    if is_run_dir(arg):
        m = load_manifest(arg)
        if not m.get("config"):
            raise UserError(f"{arg}: its manifest holds no run config, so no more games can be played into it")
        return RunConfig.from_dict(m["config"], source=f"{arg}/manifest.json")
    return RunConfig.from_toml(resolve_config_path(str(arg)))


def _play(cfg: RunConfig, out: Path, games: int, quiet: bool) -> Path:
    # the engine is loaded only when configs are played: comparing two run directories (and
    # `compare --help`, which reads this module's defaults) does not pay for numba
    from harness.play import runner

    cfg = cfg.with_overrides(games=games, out=str(out))
    return runner.run(cfg, out, quiet=quiet, resume=(out / "manifest.json").is_file())


def _unanalysable(cfg: RunConfig) -> str | None:
    """Why a config's rule set cannot be analysed (``saved_rolls``), or None."""
    rules = load_rules(cfg.rules, dict(cfg.settings))
    if rules.saved_rolls:
        return (f"rule set {rules.name} has saved_rolls, which the solver's table does not value: "
                "played without analyse, plain comparison (no luck adjustment)")
    return None


def compare(base: str | Path, candidate: str | Path, settings: CompareSettings | None = None,
            playing: Playing | None = None) -> ComparisonResult:
    """Compare CANDIDATE with BASE, each a run directory or a run config; returns
    :meth:`Comparison.result`.

    Configs are played first (on one seed, as ``playing`` says) with ``analyse = true``
    (luck-adjusted comparison) unless ``settings.adjust`` is off, a rule set cannot be analysed,
    or an existing run directory on the other side was played without it (its identity cannot
    change when more games are played into it). With ``playing.sequential`` both sides are played
    a step at a time until the SPRT decides.
    """
    settings = settings or CompareSettings()
    playing = playing or Playing()
    specs = [base, candidate]
    dirs = [is_run_dir(x) for x in specs]
    if all(dirs) and not playing.sequential:
        if playing.games or playing.seed is not None:
            raise UserError("--games/--seed apply when BASE/CANDIDATE are run configs (or with --sequential)")
        return compare_runs(base, candidate, settings)
    if playing.sequential and not playing.max_games:
        raise UserError("--sequential needs --max-games N (the most games to play per lineup)")
    cfg_b, cfg_c = config_of(base), config_of(candidate)
    # common random numbers: both sides play the same seed (BASE's unless given)
    over: dict[str, Any] = {"seed": playing.seed if playing.seed is not None else cfg_b.seed}
    if playing.chunk_size:
        over["chunk_size"] = playing.chunk_size
    if playing.workers is not None:
        over["workers"] = playing.workers
    cfg_b, cfg_c = cfg_b.with_overrides(**over), cfg_c.with_overrides(**over)
    notes: list[str] = []
    if settings.adjust:
        why = _unanalysable(cfg_b) or _unanalysable(cfg_c)
        existing = [c.analyse for c, d in ((cfg_b, dirs[0]), (cfg_c, dirs[1])) if d]
        if why:
            notes.append(why)
        elif all(existing):
            cfg_b = cfg_b if dirs[0] else cfg_b.with_overrides(analyse=True)
            cfg_c = cfg_c if dirs[1] else cfg_c.with_overrides(analyse=True)
    root = playing.out if playing.out else Path("results") / f"compare-{time.strftime('%Y%m%d-%H%M%S')}"
    ob = Path(base) if dirs[0] else root / "base"
    oc = Path(candidate) if dirs[1] else root / "candidate"
    if playing.sequential:
        return _sequential(ob, oc, cfg_b, cfg_c, settings, playing, notes)
    games = playing.games or cfg_b.games
    _play(cfg_b, ob, games, playing.quiet)
    _play(cfg_c, oc, games, playing.quiet)
    return compare_runs(ob, oc, settings, notes)


def _sequential(ob: Path, oc: Path, cfg_b: RunConfig, cfg_c: RunConfig, settings: CompareSettings,
                playing: Playing, notes: Sequence[str] = ()) -> ComparisonResult:
    """Play both sides a step of games at a time until the SPRT decides or ``playing.max_games``."""
    max_games = int(playing.max_games or 0)
    step = playing.games or cfg_b.chunk_size
    step = max(1, min(step, max_games))
    played = 0
    comp: Comparison | None = None
    looks = []
    while True:
        target = min(max_games, played + step)
        _play(cfg_b, ob, target, playing.quiet)
        _play(cfg_c, oc, target, playing.quiet)
        played = target
        if comp is None:
            comp = Comparison(ob, oc, settings)
            comp.extra_notes = list(notes)
        comp.update()
        verdict, tests = comp.verdict()
        looks.append({"games": comp.acc.n, "verdict": verdict, "llr": [t.llr for t in tests]})
        if verdict != "inconclusive" or played >= max_games:
            break
    return replace(comp.result(), sequential={"max_games": max_games, "step": step, "looks": jsonable(looks)})


# ---------------------------------------------------------------------------------------------
# text


def compare_text(res: ComparisonResult) -> str:
    """The terminal rendering: one dense headline, the SPRT line, the verdict, then the details."""
    r = res.to_dict()
    return "\n".join(header_lines(r) + body_lines(r))


def header_lines(r: Mapping[str, Any]) -> list[str]:
    """What is compared: both runs, the settings that changed, the seats (and the pairing)."""
    changed = ", ".join(f"{k} {a} -> {b}" for k, (a, b) in r["settings_changed"].items()) or "none"
    focus = sorted({(f["base"], f["candidate"]) for f in r["focus"]})
    return [
        f"BASE      {r['base']['path']}  ({r['base']['rules']}, seed {r['base']['seed']})",
        f"CANDIDATE {r['candidate']['path']}  ({r['candidate']['rules']}, seed {r['candidate']['seed']})",
        f"settings changed: {changed}",
        "seats compared: " + ", ".join(a if a == b else f"{a} -> {b}" for a, b in focus)
        + f" ({r['rows_per_game']} per game)",
        *([] if r.get("paired", True) else
          ["pairing: NONE: the runs have different seeds, games are independent (--unpaired)"]),
        "",
    ]


#: How a sampled figure's line shows the exact value beside it (``compare --exact`` on run directories).
EXACT_MARK = "  | exact "


def exact_beside(x: Mapping[str, Any], one: Any, diff: Any) -> str:
    """The exact values beside a sampled figure ``x`` (its ``exact`` key, set by ``compare --exact``),
    each end formatted by ``one`` and the difference by ``diff``, then which of them lie outside the
    sampled intervals (``outside``); "" when ``x`` has no exact values."""
    ex = x.get("exact")
    if not ex:
        return ""
    out = f"{EXACT_MARK}{one(ex['base'])} -> {one(ex['candidate'])}  diff {diff(ex['diff'])}"
    if x.get("outside"):
        out += "  OUTSIDE: " + ", ".join(x["outside"])
    return out


def _exact_score(v: float) -> str:
    return f"{v:.6f}"


def _exact_diff(v: float) -> str:
    return f"{v:+.6f}"


def body_lines(r: Mapping[str, Any]) -> list[str]:
    """The figures of a sampled comparison (and, with ``compare --exact``, the exact ones beside)."""
    conf = ci_level(r["confidence"])
    sc = r["score"]
    sp = r["sprt"]
    lines: list[str] = []
    adjusted = bool((r.get("luck") or {}).get("adjusted"))
    label = (f"score (luck-adjusted: total − luck, variance / {factor(sc['variance_reduction'], sc['diff_std'])})  "
             if adjusted else "score  ")
    lines.append(f"{label}{num(sc['base'])} -> {num(sc['candidate'])}   diff "
                 f"{num(sc['diff'], 3, sign=True, ci=sc['diff_ci'])} ({conf} CI)  p={p_value(sc['p_value'])}  "
                 f"n={count(r['games'])} games" + exact_beside(sc, _exact_score, _exact_diff))
    if adjusted:
        pl = r["score_plain"]
        lines.append(f"score (plain)  {num(pl['base'])} -> {num(pl['candidate'])}   diff "
                     f"{num(pl['diff'], 3, sign=True, ci=pl['diff_ci'])}  p={p_value(pl['p_value'])}"
                     + exact_beside(pl, _exact_score, _exact_diff))
    mu_alt = [sig(t["h1"], 6, sign=True) for t in sp["tests"]]
    llrs = "  ".join(f"LLR {num(t['llr'], sign=True)} {interval((t['lower'], t['upper']))} ({t['decision']})"
                     for t in sp["tests"])
    lines.append(f"SPRT   H0 diff={sig(sp['mu0'], 6)} vs H1 diff={' or '.join(mu_alt)} points, "
                 f"alpha={sig(sp['alpha'], 6)}, beta={sig(sp['beta'], 6)}:  {llrs}")
    short = r["games"] < sp["min_games"]
    why = []
    if short:
        why.append(f"fewer than --min-games {sp['min_games']} paired games")
    if sp["moved"] == 0:
        why.append("the totals differ in no game" + ("" if r["verdict"] != "inconclusive" else
                                                     ", too few games to bound a change none showed within H0"))
    elif sp["moved"] < sp["min_moved"] and r["verdict"] == "inconclusive":
        why.append(f"the totals differ in only {sp['moved']} games (the SPRT waits for {sp['min_moved']})")
    lines.append(f"verdict: {r['verdict'].upper()} (exit {r['exit_code']})" + (": " + "; ".join(why) if why else ""))
    lines.append("")
    if r["distribution"]:
        d = r["distribution"]
        lines.append(f"distribution (KS two-sample): D={num(d['statistic'], 4)} p={p_value(d['p_value'])}")
    for key, label in RATE_LINES:
        x = r.get(key)
        if x:
            cv = ""
            if x.get("estimator") == CONTROL:
                cv = (f"  ({CONTROL}, beta = {num(x['beta'], 4, sign=True)}, variance / "
                      f"{factor(x['variance_reduction'], x['diff_std'])}; plain {pts(x['plain_diff'])})")
            lines.append(f"{label:<17}{pct(x['base'], 2)} -> {pct(x['candidate'], 2)}  diff "
                         f"{pts(x['diff'], ci=x['diff_ci'])}{cv}" + exact_beside(x, _exact_pct, _exact_pts))
    if r.get("win_rate"):
        lines.append(f"({DEFINITION})")
    if r["boxes"]:
        lines += ["", f"per box (mean points, candidate - base, {conf} CI; * = the interval excludes 0):"]
        w = max(len(b["box"]) for b in r["boxes"])
        for b in r["boxes"]:
            flag = " *" if b["p_value"] is not None and b["p_value"] < 1 - r["confidence"] else ""
            lines.append(f"  {b['box']:<{w}} {num(b['base']):>6} -> {num(b['candidate']):>6}  "
                         f"{num(b['diff'], 3, sign=True):>7} {interval(b['diff_ci'], 3, sign=True)}{flag}"
                         + exact_beside(b, _exact_box, _exact_box_diff))
    lines += compare_lines(r.get("quality") or {})
    if "sequential" in r:
        s = r["sequential"]
        lines += ["", f"sequential: {len(s['looks'])} look(s), step {count(s['step'])} games, "
                      f"limit {count(s['max_games'])}"]
    lines += [f"note: {n}" for n in r["notes"]]
    return lines


#: The rate lines of a comparison: (key of the result, label).
RATE_LINES = (("bonus_rate", "upper bonus rate"), ("yatzy_rate", "yatzy rate"), ("win_rate", "win rate"),
              ("draw_rate", "draw rate"))


def _exact_pct(v: float) -> str:
    return pct(v, 3)


def _exact_pts(v: float) -> str:
    return pts(v, 3)


def _exact_box(v: float) -> str:
    return num(v, 4)


def _exact_box_diff(v: float) -> str:
    return num(v, 4, sign=True)
