"""The one pass: :func:`summarize` streams every chunk of a run once through the report's
sections (:data:`SECTIONS`) into a :class:`RunSummary`, which gives ``summary.json`` and the tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence, TypeVar

import numpy as np

from harness.game.outcome import DEFINITION, rank_column
from harness.records.rundir import RunInfo, iter_windows, load_run, settings_changed
from harness.reports.quality import QualityOptions
from harness.reports.summary.base import Section, SummaryOptions, Window, yatzy_box
from harness.reports.summary.entrants import EntrantSection, EntrantStats
from harness.reports.summary.exact import DepthSection, ExactSection
from harness.reports.summary.faults import FaultSection
from harness.reports.summary.game_quality import QualitySection
from harness.reports.summary.luck import LuckSection
from harness.reports.summary.pairings import PairingSection, PairingStats
from harness.reports.summary.ratings import HeadToHeadSection
from harness.stats import Ratings
from harness.util.jsonable import jsonable
from harness.util.render import Table


#: The report's sections, in the order their tables appear (each applies when its ``applies``
#: says so: the luck section only to runs played with ``--analyse``; and when its ``build`` does
#: with the summary's options: the exact column only when asked for). Each is finished in this
#: order, after the sections before it (the exact column reads the entrants' and pairings').
SECTIONS: tuple[type[Section], ...] = (
    EntrantSection,
    LuckSection,
    PairingSection,
    ExactSection,
    HeadToHeadSection,
    QualitySection,
    DepthSection,
    FaultSection,
)


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
                "path": str(info.path),
                "kind": info.kind,
                "complete": info.complete,
                "games": info.games,
                "games_planned": info.games_planned,
                "seed": info.seed,
                "rules": {
                    "name": info.rules.name,
                    "settings": dict(info.rules.settings),
                    "settings_changed": settings_changed(info.rules),
                    "digest": info.rules.digest,
                },
                "lineups": [list(lu) for lu in info.lineups],
                "yatzy_box": yatzy_box(info.rules),
                "rank_by": rank_column(info.rules),
                "outcomes": DEFINITION,
                **{k: info.manifest[k] for k in ("disqualified", "continued") if info.manifest.get(k)},
            },
            "confidence": self.confidence,
            "notes": list(self.notes) + [n for s in self.sections for n in s.notes()],
        }
        for s in self.sections:
            out.update(s.to_dict())
        return jsonable(out)

    def tables(self, d: Mapping[str, Any]) -> list[Table]:
        return [t for s in self.sections for t in s.tables(d)]


def summarize(
    run: str | Path | RunInfo,
    confidence: float = 0.95,
    sections: Sequence[type[Section]] = SECTIONS,
    quality_options: QualityOptions | None = None,
    exact: str = "off",
    depth: str = "off",
) -> RunSummary:
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
