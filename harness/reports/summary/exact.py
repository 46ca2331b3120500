"""The report's exact sections: each sampled figure's exact value beside it when every entrant is
solitaire (``exact``, :mod:`harness.exact.figures`), and the rule set's exact depth of skill
(``depth``, :mod:`harness.studies.depth`). Both compute only when the summary's options ask."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.studies.steps import steps_table
from harness.records.rundir import RunInfo
from harness.reports.summary.base import Section, SummaryOptions, Window, yatzy_box
from harness.reports.summary.entrants import EntrantSection
from harness.reports.summary.pairings import PairingSection, PairingStats
from harness.stats import PERCENTILES, mean_ci
from harness.stats.proportions import wilson_share
from harness.util.render import Table, ci_level, num, pct


#: ``exact`` modes of :func:`~harness.reports.summary.summarize` (``report --exact`` / ``--no-exact`` / neither).
EXACT_MODES = ("auto", "on", "off")
#: With ``auto``, evaluations not yet cached are computed only on rule sets of at most this many
#: solver states (seconds there; on scandinavian's 1.4 M states a bot takes from half a minute of
#: CPU, greedy or solver, to several minutes, a softmax solver: benchmarks/BENCHMARKS.md).
EXACT_AUTO_STATES = 100_000


class ExactSection(Section):
    """Each figure's exact value beside the sampled one when every entrant is solitaire
    (:mod:`harness.exact.figures`): per entrant the mean, std, percentiles, P(upper bonus), P(yatzy) and
    its win, draw and loss rates; per pairing its win, draw and loss rates. A sampled mean, rate or
    percentile whose :data:`harness.exact.figures.ALARM_CONFIDENCE` interval over games misses its exact
    value is flagged (a t interval of the per-game mean, Wilson intervals with the games as the
    trials, order-statistic intervals of the percentiles with the games as the observations:
    :meth:`harness.stats.IntHistogram.quantile_interval`), and the flags are named in the notes.

    ``mode``: "on" computes the evaluations (cached for next time), "auto" only when each is
    cached or the rule set has at most :data:`EXACT_AUTO_STATES` solver states (else a note says
    how to ask for it), "off" leaves the section out. A run that cannot be evaluated exactly (a
    bot that is not solitaire, saved rolls) gets one note saying why, and no column.
    """

    key = "exact"

    def __init__(
        self,
        info: RunInfo,
        confidence: float,
        mode: str = "on",
        entrants: EntrantSection | None = None,
        pairings: PairingSection | None = None,
    ) -> None:
        super().__init__(info, confidence)
        if mode not in EXACT_MODES:
            raise ValueError(f"exact mode must be one of {EXACT_MODES}, got {mode!r}")
        self.mode, self.entrant_sec, self.pairing_sec = mode, entrants, pairings
        self.why: str | None = None
        self.result: dict[str, Any] | None = None

    @classmethod
    def build(
        cls, info: RunInfo, confidence: float, options: SummaryOptions, built: Sequence[Section]
    ) -> Section | None:
        if options.exact == "off":
            return None
        ent = next((s for s in built if isinstance(s, EntrantSection)), None)
        pair = next((s for s in built if isinstance(s, PairingSection)), None)
        return cls(info, confidence, options.exact, ent, pair)

    def columns(self) -> list[str]:
        return []

    def add(self, w: Window) -> None:
        pass

    def finish(self) -> None:
        # the exact layer (numba kernels, the solver: ~0.45 s) loads only when a report asks for it
        from harness.exact import evaluate as E, figures, solver

        rules = self.info.rules
        labels = [e.label for e in (self.entrant_sec.stats if self.entrant_sec else ())]
        engines = [x for x in labels if x in (self.info.manifest.get("engines") or {})]
        if engines:  # its label names no bot of the harness: a program whose policy the harness does not know
            self.why = (
                f"{engines[0]} is an external engine (the harness knows its play only from its answers), "
                f"so this run's figures are sampled only"
            )
            return
        self.why = E.refusal(rules, labels)
        if self.why:
            return
        if self.mode == "auto":
            missing = [x for x in labels if not E.is_cached(rules, x)]
            states = solver.build_plan(rules).n_states
            if missing and states > EXACT_AUTO_STATES:
                self.why = (
                    f"{len(missing)} of the {len(labels)} exact evaluations are not cached and {rules.name} has "
                    f"{states:,} solver states (half a minute to minutes of CPU each): `report --exact` computes them "
                    f"(cached for next time), `report --no-exact` silences this note"
                )
                return
        self.result = self._compare(figures)

    def _compare(self, figures: Any) -> dict[str, Any]:
        """The exact figures beside the sampled ones (``figures``: :mod:`harness.exact.figures`)."""
        outside = figures.outside
        info, conf = self.info, figures.ALARM_CONFIDENCE
        tables = figures.ExactTables.of(info.rules, info.lineups)
        ybox = yatzy_box(info.rules)
        flags: list[str] = []

        def fig(name: str, exact: float, sampled: float, ci: tuple[float, float] | None) -> dict[str, Any]:
            out = outside(exact, ci)
            if out:
                flags.append(name)
            return {"exact": exact, "sampled": sampled, "ci": list(ci) if ci else None, "outside": out}

        def share(name: str, exact: float, k: int, n: int, games: int) -> dict[str, Any]:
            p = k / n
            return fig(name, exact, p, wilson_share(p, games, conf))

        def outcomes(
            prefix: str, exact: tuple[float, float, float] | None, counts: tuple[int, int, int], games: int
        ) -> dict[str, Any]:
            n = sum(counts)
            if exact is None or not n:
                return {}
            return {
                k: share(f"{prefix} {k}", x, c, n, games) for k, x, c in zip(("win", "draw", "loss"), exact, counts)
            }

        entrants = []
        for e in self.entrant_sec.stats if self.entrant_sec else ():
            ev = tables.evaluations[e.label]
            games = e.per_game.n  # the independent unit: a game index, whatever seats the entrant holds there
            ci = mean_ci(e.per_game, conf)
            pc = {
                str(q): fig(
                    f"{e.label} p{q}",
                    ev.percentiles[str(q)],
                    e.hist.percentiles(q),
                    e.hist.quantile_interval(q / 100, conf, games),
                )
                for q in PERCENTILES
            }
            slots = [(li, s) for li, row in enumerate(info.lineups) for s, x in enumerate(row) if x == e.label]
            entrants.append(
                {
                    "strategy": e.label,
                    "games": games,
                    "mean": fig(f"{e.label} mean", ev.mean, e.hist.mean, (ci.lo, ci.hi)),
                    "std": {"exact": ev.std, "sampled": e.hist.std},
                    "percentiles": pc,
                    "bonus_rate": share(f"{e.label} upper bonus", ev.p_bonus_row, e.bonus, e.rows, games),
                    "yatzy_rate": (
                        share(f"{e.label} yatzy", ev.box_scored_row(ev.box_names.index(ybox)), e.yatzy, e.rows, games)
                        if ybox
                        else None
                    ),
                    "outcomes": outcomes(e.label, tables.pooled(slots), (e.wins, e.draws, e.losses), games),
                }
            )
        pairings = []
        for p in self.pairing_sec.stats if self.pairing_sec else ():
            slots = _pairing_slots(info.lineups, p)
            pairings.append(
                {
                    "name": p.name,
                    "a": p.a,
                    "b": p.b,
                    **outcomes(p.name, tables.pooled(slots), (p.wins, p.draws, p.losses), info.games),
                }
            )
        return {
            "confidence": conf,
            "entrants": entrants,
            "pairings": pairings,
            "outside": flags,
            "evaluations": {x: {"cached": ev.cached, "seconds": ev.seconds} for x, ev in tables.evaluations.items()},
        }

    def to_dict(self) -> dict[str, Any]:
        return {"exact": self.result if self.result is not None else {"available": False, "why": self.why}}

    def notes(self) -> list[str]:
        if self.result is None:
            return [f"no exact column: {self.why}"] if self.why else []
        flags = self.result["outside"]
        level = ci_level(self.result["confidence"])
        if not flags:
            return [
                f"exact check: every sampled mean, rate and percentile holds its exact value in its {level} interval"
            ]
        return [
            f"EXACT CHECK: {len(flags)} sampled figure(s) whose {level} interval misses the exact value "
            f"(an engine or bot bug, or a 1-in-1000 chance each): {', '.join(flags)}"
        ]

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        x = d.get("exact")
        if not x or x.get("available") is False:
            return []
        level = ci_level(x["confidence"])

        def two(f: Mapping[str, Any] | None, fmt: Any, fmt_exact: Any) -> str:
            if not f:
                return "–"
            return f"{fmt_exact(f['exact'])} / {fmt(f['sampled'])}{' !' if f.get('outside') else ''}"

        def rate(f: Mapping[str, Any] | None) -> str:
            return two(f, lambda v: pct(v, 2), lambda v: pct(v, 3))

        rows = []
        for e in x["entrants"]:
            pc = e["percentiles"]
            oc = e["outcomes"]
            rows.append(
                [
                    e["strategy"],
                    two(e["mean"], num, lambda v: num(v, 6)),
                    two(e["std"], num, lambda v: num(v, 4)),
                    " / ".join(str(pc[str(q)]["exact"]) for q in PERCENTILES),
                    " / ".join(f"{pc[str(q)]['sampled']}{'!' if pc[str(q)]['outside'] else ''}" for q in PERCENTILES),
                    rate(e["bonus_rate"]),
                    rate(e["yatzy_rate"]),
                    rate(oc.get("win")),
                    rate(oc.get("draw")),
                ]
            )
        out = [
            Table(
                f"Exact / sampled (exact: each bot's own choice probabilities, no sampling; ! = the sampled "
                f"value's {level} interval over games misses the exact value)",
                [
                    "entrant",
                    "mean",
                    "std",
                    "percentiles 1/5/25/50/75/95/99 exact",
                    "sampled",
                    "upper bonus",
                    "yatzy",
                    "win",
                    "draw",
                ],
                rows,
            )
        ]
        prs = [
            [p["name"], rate(p.get("win")), rate(p.get("draw")), rate(p.get("loss"))]
            for p in x["pairings"]
            if p.get("win")
        ]
        if prs:
            out.append(
                Table(
                    f"Pairings, exact / sampled (independent finals; ! = outside the {level} interval)",
                    ["pairing", "win", "draw", "loss"],
                    prs,
                )
            )
        return out


def _pairing_slots(lineups: Sequence[Sequence[str]], p: PairingStats) -> list[tuple[int, int]]:
    """The (lineup, seat) places whose outcomes a pairing counts (:class:`PairingSection`): entrant
    a's seat at the two-seat tables of a and b (self-play: seat 1), or a's seats at tables of three
    or more (against the field)."""
    if p.b is None:
        return [(li, s) for li, lu in enumerate(lineups) if len(lu) > 2 for s, x in enumerate(lu) if x == p.a]
    return [
        (li, list(lu).index(p.a)) for li, lu in enumerate(lineups) if len(lu) == 2 and sorted(lu) == sorted((p.a, p.b))
    ]


class DepthSection(Section):
    """The exact depth of skill of the run's rule set (:func:`harness.studies.depth.depth_if_cheap`): the
    steps of its chains at 60 % and 75 % along the solver's temperature dial from ``random``, a
    property of the rules, whatever bots the run played. ``mode`` as :data:`harness.studies.depth.MODES`:
    "auto" only when every evaluation is cached or the rule set is small, else a note."""

    key = "depth"

    def __init__(self, info: RunInfo, confidence: float, mode: str = "on") -> None:
        super().__init__(info, confidence)
        self.mode = mode
        self.result: dict[str, Any] | None = None
        self.why: str | None = None

    @classmethod
    def build(
        cls, info: RunInfo, confidence: float, options: SummaryOptions, built: Sequence[Section]
    ) -> Section | None:
        return None if options.depth == "off" else cls(info, confidence, options.depth)

    def columns(self) -> list[str]:
        return []

    def add(self, w: Window) -> None:
        pass

    def finish(self) -> None:
        # the exact evaluations (numba kernels) load only when a report asks for the depth of skill
        from harness.studies.depth import depth_if_cheap

        d, self.why = depth_if_cheap(self.info.rules, self.mode)
        self.result = d.to_json() if d is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {"depth": self.result if self.result is not None else {"available": False, "why": self.why}}

    def notes(self) -> list[str]:
        return [self.why] if self.why else []

    @staticmethod
    def tables(d: Mapping[str, Any]) -> list[Table]:
        x = d.get("depth")
        if not x or x.get("available") is False:
            return []
        return [steps_table([(x["rules"], x)])]
