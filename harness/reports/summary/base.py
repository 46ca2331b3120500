"""What every report section shares: the :class:`Section` contract (an accumulator over
windows, then its JSON and its tables), the :class:`Window` of games the one pass hands each
section, the :class:`SummaryOptions` some sections take, and the rule set's yatzy box."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from harness.game.rules import RuleSet
from harness.records.rundir import RunInfo
from harness.reports.quality import QualityOptions
from harness.util.render import Table


def yatzy_box(rules: RuleSet) -> str | None:
    """Name of the rule set's yatzy-kind box (not one that needs the key box), or None."""
    for b in rules.boxes:
        if b.kind == "yatzy" and not b.requires_key:
            return b.name
    return None


@dataclass(frozen=True)
class Window:
    """Games ``a..b-1`` of every lineup: ``data[l][column]`` is a (b-a, S_l) array of lineup l."""

    a: int
    b: int
    data: list[dict[str, np.ndarray]]

    @property
    def games(self) -> int:
        return self.b - self.a


class Section:
    """One part of a report: an accumulator over windows, then its JSON and its tables."""

    #: Key of the section's pictures in :data:`harness.reports.plot.PLOTS`.
    key: ClassVar[str]

    def __init__(self, info: RunInfo, confidence: float) -> None:
        self.info, self.confidence = info, confidence
        self.eidx = info.entrant_index()
        self.k = len(info.entrants)

    @staticmethod
    def applies(info: RunInfo) -> bool:
        """Whether this section has something to say about the run (its columns exist)."""
        return True

    def columns(self) -> list[str]:
        """Row columns this section reads."""
        raise NotImplementedError

    def add(self, w: Window) -> None:
        """Fold one window of games."""
        raise NotImplementedError

    def finish(self) -> None:
        """Called once after the last window (fits, final objects)."""

    def to_dict(self) -> dict[str, Any]:
        """This section's keys of ``summary.json``."""
        raise NotImplementedError

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        """This section's tables, rendered from the whole summary dict."""
        return []

    def notes(self) -> list[str]:
        """Lines for the report's notes (after :meth:`finish`)."""
        return []

    @classmethod
    def build(
        cls, info: RunInfo, confidence: float, options: SummaryOptions, built: Sequence[Section]
    ) -> Section | None:
        """The section of a run given the summary's options and the sections built before it
        (None: it does not apply with these options)."""
        return cls(info, confidence)


@dataclass(frozen=True)
class SummaryOptions:
    """What :func:`~harness.reports.summary.summarize` passes to the sections that take options: the
    game-quality thresholds, and whether to compute the exact column
    (:class:`~harness.reports.summary.ExactSection`: "off", "on" or "auto") and the depth of skill."""

    quality: QualityOptions | None = None
    exact: str = "off"
    depth: str = "off"
