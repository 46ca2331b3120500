"""The report's ``quality`` section: the game-quality metrics of :mod:`harness.reports.quality`
(skill share, upsets, first-mover edge, lead changes, decisive round, close games, comebacks),
each with its interval over games."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.records.rundir import RunInfo
from harness.reports import quality
from harness.reports.quality import QualityAccumulator, QualityModel, QualityOptions
from harness.reports.summary.base import Section, SummaryOptions, Window
from harness.util.render import Table


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
    def build(
        cls, info: RunInfo, confidence: float, options: SummaryOptions, built: Sequence[Section]
    ) -> Section | None:
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
