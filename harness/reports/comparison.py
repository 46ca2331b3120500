"""The comparison of two run directories: :class:`Comparison` streams their paired games into the
statistics of :mod:`harness.reports.paired`, and :class:`ComparisonResult` is what it found (the
fields of ``compare --json``).

The method is described in :mod:`harness.reports.compare`, which gives every public name of this
module.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Sequence

from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.records.rundir import chunk_columns, iter_windows, load_run
from harness.reports.paired import (
    ADJUSTED,
    CONTROL,
    EXIT_CHANGE,
    EXIT_INCONCLUSIVE,
    EXIT_NO_CHANGE,
    MIN_MOVED,
    CompareSettings,
    PairedAccumulator,
    Slot,
    diff_dict,
    match_slots,
    run_has_luck,
    score_histograms,
    sprt_verdict,
    value_limits,
    variance_reduction,
)
from harness.reports.quality import QualityComparison, QualityModel
from harness.reports.summary import yatzy_box
from harness.stats import SPRTResult, ks_2samp_counts


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

    def __init__(
        self, base: str | Path, candidate: str | Path, settings: CompareSettings, focus: Sequence[Slot] | None = None
    ) -> None:
        self.base_dir, self.cand_dir, self.settings = Path(base), Path(candidate), settings
        self.base, self.cand = load_run(base), load_run(candidate)
        if self.base.seed != self.cand.seed and not settings.unpaired:
            raise UserError(
                f"BASE and CANDIDATE were played on different seeds ({self.base.seed} and "
                f"{self.cand.seed}): their games are not on the same dice, so they cannot be paired. "
                "Replay one with the other's --seed, or pass --unpaired to compare them as "
                "independent samples (valid, much noisier)"
            )
        self.slots, self.focus = match_slots(self.base.lineups, self.cand.lineups, settings.entrant)
        if focus is not None:  # the caller's own choice of seats (``compare --exact``: one bot's)
            self.focus = list(focus)
        cboxes, bboxes = set(self.cand.box_names), set(self.base.box_names)
        boxes = [b for b in self.base.box_names if b in cboxes]
        #: boxes present on one side only: not compared box by box (their points are in the totals)
        self.boxes_only = {
            "base": [b for b in self.base.box_names if b not in cboxes],
            "candidate": [b for b in self.cand.box_names if b not in bboxes],
        }
        wins = all(len(lu) >= 2 for lu in self.base.lineups)
        #: notes added by the caller (e.g. why the played runs were not analysed)
        self.extra_notes: list[str] = []
        (lb, why_b), (lc, why_c) = run_has_luck(self.base), run_has_luck(self.cand)
        self.luck = lb and lc and settings.adjust
        self.luck_note = None
        if lb and lc and not settings.adjust:
            self.luck_note = "plain comparison (--no-analyse): the runs' luck columns are not used"
        elif lb != lc:
            self.luck_note = (
                f"plain comparison (no luck adjustment): only {'BASE' if lb else 'CANDIDATE'} carries "
                f"luck ({why_c or why_b}); play both with analyse = true (run --analyse) to adjust"
            )
        self.acc = PairedAccumulator(
            self.focus,
            boxes,
            (yatzy_box(self.base.rules), yatzy_box(self.cand.rules)),
            wins,
            self.luck,
            limits=value_limits(self.base.rules, self.cand.rules, boxes),
        )
        # game quality over every seat of both runs (not only the focus), on the columns both carry
        common = chunk_columns(self.base) & chunk_columns(self.cand)
        self.quality = QualityComparison(
            QualityModel(self.base, settings.quality, common, self.luck),
            QualityModel(self.cand, settings.quality, common, self.luck),
        )

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
        return sprt_verdict(
            self.acc.moments(self.acc.score_metric)[0], s, self.acc.moved_games("total"), self.acc.bounds("total")[0]
        )

    def result(self) -> ComparisonResult:
        """What the games folded so far show (``exit_code`` included)."""
        s, acc, conf = self.settings, self.acc, self.settings.confidence
        verdict, tests = self.verdict()
        code = {"no change": EXIT_NO_CHANGE, "change": EXIT_CHANGE, "inconclusive": EXIT_INCONCLUSIVE}[verdict]

        def paired(metric: str) -> dict[str, Any] | None:
            if metric not in acc.metrics:
                return None
            p, b, c, bounds = acc.paired(metric, conf)
            return diff_dict(p, b, c, conf, bounds)

        def controlled(metric: str) -> dict[str, Any] | None:
            base = paired(metric)
            cvm = acc.controlled(metric, conf)
            if base is None or cvm is None:
                return base
            if cvm.beta == 0.0 and cvm.variance_reduction == 1.0:
                # every seat of each table is compared: their luck edges cancel, there is no control
                return base | {"estimator": "plain", "why": "every seat is compared: the seats' luck edges cancel"}
            return base | {
                "estimator": CONTROL,
                "plain_diff": base["diff"],
                "plain_diff_ci": base["diff_ci"],
                "diff": cvm.mean,
                "diff_ci": [cvm.lo, cvm.hi],
                "diff_std": cvm.std,
                "p_value": cvm.p_value,
                "beta": cvm.beta,
                "variance_reduction": cvm.variance_reduction,
            }

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
            notes.append(
                f"UNPAIRED: seeds differ ({self.base.seed} vs {self.cand.seed}), so games are not on the "
                "same dice: the differences are between independent games (valid, much noisier)"
            )
        for side, only in self.boxes_only.items():
            if only:
                notes.append(
                    f"boxes only in {side.upper()}: {', '.join(only)} (not compared box by box; "
                    "their points are in the totals)"
                )
        for side, info in (("base", self.base), ("candidate", self.cand)):
            faults = info.manifest.get("faults") or {}
            for label, f in faults.items():
                bad = sum(int(f.get(k, 0)) for k in ("faults_time", "faults_illegal", "faults_crash", "faults_stall"))
                if bad:
                    notes.append(
                        f"{side.upper()}: engine {label} had {bad:,} faulty decisions of "
                        f"{int(f.get('engine_decisions', 0)):,} (answered by the time-out policy) and "
                        f"{int(f.get('corrupted', 0)):,} corrupted games; every game is counted, "
                        f"paired on the same dice, in the difference and the SPRT"
                    )
        if self.base.games != self.cand.games:
            notes.append(f"runs have {self.base.games:,} and {self.cand.games:,} games: the first {acc.n:,} are paired")
        dist = ks_2samp_counts(acc.h_base, acc.h_cand) if acc.n else None
        out: dict[str, Any] = {
            "base": {
                "path": str(self.base_dir),
                "rules": self.base.rules.name,
                "settings": dict(self.base.rules.settings),
                "seed": self.base.seed,
                "games": self.base.games,
            },
            "candidate": {
                "path": str(self.cand_dir),
                "rules": self.cand.rules.name,
                "settings": dict(self.cand.rules.settings),
                "seed": self.cand.seed,
                "games": self.cand.games,
            },
            "settings_changed": {
                k: [self.base.rules.settings.get(k), v]
                for k, v in self.cand.rules.settings.items()
                if self.base.rules.settings.get(k) != v
            },
            "games": acc.n,
            "focus": [
                {"lineup": f.lineup, "seat": f.seat, "base": f.base, "candidate": f.candidate} for f in self.focus
            ],
            "rows_per_game": len(self.focus),
            "paired": self.base.seed == self.cand.seed,
            "boxes_only": self.boxes_only,
            "confidence": conf,
            "score": score,
            "score_plain": plain,
            "luck": luck,
            "distribution": None
            if dist is None
            else {"test": "ks_2samp", "statistic": dist.statistic, "p_value": dist.p_value, "method": dist.method},
            "score_histograms": score_histograms(acc),
            "boxes": [{"box": b} | paired(f"box:{b}") for b in acc.boxes],
            "bonus_rate": paired("bonus"),
            "yatzy_rate": paired("yatzy"),
            "win_rate": controlled("win"),
            "draw_rate": controlled("draw"),
            "sprt": {
                "mu0": s.mu0,
                "mu1": s.mu1,
                "alpha": s.alpha,
                "beta": s.beta,
                "two_sided": s.two_sided,
                "min_games": s.min_games,
                "min_moved": MIN_MOVED,
                "moved": acc.moved_games("total"),
                "tests": [
                    {
                        "h0": t.h0,
                        "h1": t.h1,
                        "llr": t.llr,
                        "lower": t.lower,
                        "upper": t.upper,
                        "decision": t.decision,
                        "alpha": t.alpha,
                        "beta": t.beta,
                    }
                    for t in tests
                ],
            },
            "quality": self.quality.result(conf),
            "verdict": verdict,
            "exit_code": code,
            "notes": notes,
        }
        return ComparisonResult(**jsonable(out))


def compare_runs(
    base: str | Path,
    candidate: str | Path,
    settings: CompareSettings | None = None,
    notes: Sequence[str] = (),
    focus: Sequence[Slot] | None = None,
) -> ComparisonResult:
    """Compare two finished run directories (one streaming pass); returns :meth:`Comparison.result`
    (``notes``: extra lines for its notes; ``focus``: the slots compared, instead of the choice
    of :mod:`harness.reports.compare`)."""
    c = Comparison(base, candidate, settings or CompareSettings(), focus)
    c.extra_notes = list(notes)
    c.update()
    return c.result()
