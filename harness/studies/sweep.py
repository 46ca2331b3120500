"""Sweep rule settings: at every value (or every cell of a two-setting grid) the exact figures of
solitaire bots, their exact head-to-heads and, when asked, the exact depth of skill::

    from harness.studies.sweep import parse_settings, sweep
    axes, fixed = parse_settings(["upper_bonus_threshold=55..70", "upper_bonus_value=50"])
    res = sweep("scandinavian", axes, fixed, ["greedy", "solver"])   # -> Sweep
    res.table(), res.rows(), res.to_json()

An axis is ``KEY=LO..HI`` or ``KEY=LO..HI:STEP`` (whole-number settings) or a list ``KEY=A,B,C``
(any setting: ``include_pairs=true,false``); any other ``KEY=VALUE`` holds for every cell. Every
cell's rule set is compiled (and so checked) before anything is evaluated. Settings whose play is
not evaluated exactly are refused with the reason (:data:`REFUSED`).

Everything is exact (:mod:`harness.exact.evaluate`, :mod:`harness.studies.depth`) and cached per rule-set
digest and bot; all cells' evaluations, head-to-heads and chains go through one
:class:`harness.jobs.driver.Evaluator` (:func:`harness.jobs.driver.drive`), so they share its workers and a
rerun evaluates only what the cache lacks. A cell's figures are those ``evaluate`` gives at its
settings, whatever the order of the values, the cache or the workers.
"""

from __future__ import annotations

import csv
import io
import itertools
import time
from dataclasses import dataclass
from typing import Any, Sequence

from harness.util import render as R
from harness.studies.depth import (
    DepthOfSkill,
    DepthRequest,
    Dial,
    Evaluator,
    chain,
    check_rates,
    dial_of,
    drive,
    expected_rounds,
    fetch,
)
from harness.util.errors import UserError
from harness.exact.evaluate import SAVED_ROLLS, Evaluation, HeadToHead
from harness.game.rules import SETTINGS, RuleSet, load_rules, parse_overrides, parse_setting

#: Settings a sweep refuses, and why.
REFUSED = {"saved_rolls": SAVED_ROLLS}
#: At most this many axes (a table's rows and a heat map's two sides) and cells.
MAX_AXES = 2
MAX_CELLS = 400


@dataclass(frozen=True)
class Axis:
    """A swept setting and its values (parsed to the setting's type), in the order given."""

    key: str
    values: tuple[Any, ...]

    @property
    def numeric(self) -> bool:
        return SETTINGS[self.key][0] is int


def _axis(key: str, raw: str) -> Axis:
    kind = SETTINGS[key][0]
    if ".." in raw:
        if kind is not int:
            raise UserError(
                f"--set {key}={raw}: a range LO..HI is for whole-number settings; list the values instead ({key}=A,B)"
            )
        span, _, step_text = raw.partition(":")
        lo_text, _, hi_text = span.partition("..")
        try:
            lo, hi, step = int(lo_text), int(hi_text), int(step_text) if step_text else 1
        except ValueError:
            raise UserError(f"--set {key}={raw}: expected LO..HI or LO..HI:STEP with whole numbers") from None
        if step < 1 or hi < lo:
            raise UserError(f"--set {key}={raw}: expected LO <= HI and STEP >= 1")
        values: list[Any] = list(range(lo, hi + 1, step))
    else:
        values = [v.strip() for v in raw.split(",")]
        if any(not v for v in values):
            raise UserError(f"--set {key}={raw}: an empty value in the list")
    parsed = [parse_setting(key, v) for v in values]
    if len(set(map(str, parsed))) != len(parsed):
        raise UserError(f"--set {key}={raw}: a value is listed twice")
    return Axis(key, tuple(parsed))


def shown(v: Any) -> str:
    """A setting's value as written in ``--set`` (``true``, ``62``, ``flat``)."""
    return str(v).lower() if isinstance(v, bool) else str(v)


def parse_settings(items: Sequence[str]) -> tuple[list[Axis], dict[str, Any]]:
    """``--set`` items: the axes (``KEY=LO..HI[:STEP]``, ``KEY=A,B,...``) and the fixed settings."""
    raw = list(items)
    keys = [t.split("=", 1)[0].strip() for t in raw if "=" in t]
    parse_overrides(raw)  # KEY=VALUE and known keys, the rule compiler's messages
    for key in keys:
        if key in REFUSED:
            raise UserError(f"--set {key}: cannot be swept or set here: {REFUSED[key]}")
        if keys.count(key) > 1:
            raise UserError(f"--set {key} is given more than once")
    axes, fixed = [], {}
    for text in raw:
        key, value = (x.strip() for x in text.split("=", 1))
        if ".." in value or "," in value:
            axes.append(_axis(key, value))
        else:
            fixed[key] = value
    if not axes:
        raise UserError("give a setting to sweep: --set KEY=LO..HI[:STEP] or --set KEY=A,B,...")
    if len(axes) > MAX_AXES:
        raise UserError(
            f"at most {MAX_AXES} settings are swept at once, got {len(axes)} ({', '.join(a.key for a in axes)})"
        )
    n = 1
    for a in axes:
        n *= len(a.values)
    if n > MAX_CELLS:
        raise UserError(f"{n} cells to evaluate: at most {MAX_CELLS} in one sweep")
    return axes, fixed


@dataclass(frozen=True)
class Cell:
    """One value (or grid cell) of a sweep: its settings, the bots' exact evaluations there, and
    its depth of skill (None when not asked)."""

    settings: tuple[tuple[str, Any], ...]
    rules: str
    digest: str
    evaluations: tuple[Evaluation, ...]
    depth: DepthOfSkill | None

    def head_to_head(self) -> HeadToHead:
        return HeadToHead(self.rules, self.evaluations)

    def pairs(self) -> list[tuple[str, str, float, float, float]]:
        """(A, B, P(A wins), P(draw), P(B wins)) of every pair, as ``evaluate`` gives them."""
        return self.head_to_head().pairs()

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": dict(self.settings),
            "digest": self.digest,
            "bots": {
                e.bot: {"mean": e.mean, "std": e.std, "p_bonus": e.p_bonus, "percentiles": e.percentiles}
                for e in self.evaluations
            },
            "pairs": self.head_to_head().to_json()["pairs"],
            "depth": None if self.depth is None else self.depth.to_json(),
        }


@dataclass(frozen=True)
class Sweep:
    """A sweep's cells in the order of the axes' values (the first axis the outer loop)."""

    rules: str
    axes: tuple[Axis, ...]
    fixed: tuple[tuple[str, Any], ...]
    bots: tuple[str, ...]
    rates: tuple[float, ...]
    cells: tuple[Cell, ...]
    evaluated: int
    from_cache: int
    seconds: float

    @property
    def ladder(self) -> str | None:
        d = next((c.depth for c in self.cells if c.depth is not None), None)
        return None if d is None else d.ladder()

    def describe(self) -> str:
        """One line: the rule set, the cells and how many evaluations they took."""
        return f"{self.rules}, {len(self.cells)} cells, {self.evaluated} evaluations ({self.from_cache} from the cache)"

    def rows(self) -> list[dict[str, Any]]:
        """One flat record per cell (the CSV's rows): settings, each bot's figures, each pair's
        rates, each chain's steps."""
        out = []
        for c in self.cells:
            row: dict[str, Any] = dict(c.settings)
            for e in c.evaluations:
                row.update(
                    {
                        f"{e.bot} mean": e.mean,
                        f"{e.bot} std": e.std,
                        f"{e.bot} P(bonus)": e.p_bonus,
                        **{f"{e.bot} p{q}": v for q, v in e.percentiles.items()},
                    }
                )
            for a, b, w, d, lo in c.pairs():
                row.update(
                    {
                        f"{a} vs {b} P(win)": w,
                        f"{a} vs {b} P(draw)": d,
                        f"{a} vs {b} P(loss)": lo,
                        f"{a} vs {b} score rate": w + 0.5 * d,
                    }
                )
            for ch in c.depth.chains if c.depth else ():
                row.update({f"steps at {ch.p:g}": ch.steps, f"full steps at {ch.p:g}": ch.full_steps})
            out.append(row)
        return out

    def csv(self) -> str:
        rows = self.rows()
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows({k: repr(v) if isinstance(v, float) else v for k, v in r.items()} for r in rows)
        return buf.getvalue()

    def table(self) -> R.Table:
        """One row per cell: each bot's mean and P(bonus), each pair's score rate, each chain's
        steps; the bots named by letter (A, B, ...) in the header, spelled out in the notes."""
        keys = [a.key for a in self.axes]
        tag = {b: chr(ord("A") + i) if len(self.bots) <= 26 else b for i, b in enumerate(self.bots)}
        pairs = [(a, b) for a, b, *_ in self.cells[0].pairs()]
        header = [
            *keys,
            *[f"mean {tag[b]}" for b in self.bots],
            *[f"P(bonus) {tag[b]}" for b in self.bots],
            *[f"{tag[a]} vs {tag[b]}" for a, b in pairs],
            *[f"steps at {R.pct(p, 0)}" for p in self.rates],
        ]
        rows = []
        for c in self.cells:
            rates = [w + 0.5 * d for _, _, w, d, _ in c.pairs()]
            steps = [f"{ch.steps:.2f}" for ch in c.depth.chains] if c.depth else []
            rows.append(
                [
                    *[shown(v) for _, v in c.settings],
                    *[f"{e.mean:.3f}" for e in c.evaluations],
                    *[R.pct(e.p_bonus, 1) for e in c.evaluations],
                    *[R.pct(r, 2) for r in rates],
                    *steps,
                ]
            )
        notes = []
        if self.bots:
            notes.append(
                "bots: " + ", ".join(f"{t} = {b}" for b, t in tag.items()) + "; exact (no sampling), each "
                "bot's forward pass at the cell's settings; X vs Y is X's score rate (win 1, draw 1/2) "
                "against Y at two seats"
            )
        if self.rates:
            notes.append(
                f"steps: the depth of skill along {self.ladder}, each step scoring p against the one "
                "below, the last step fractional"
            )
        if self.fixed:
            notes.append("every cell also: " + ", ".join(f"{k}={shown(v)}" for k, v in self.fixed))
        return R.Table(f"Sweep of {' x '.join(keys)} on {self.rules}", header, rows, notes)

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "axes": [{"key": a.key, "values": list(a.values)} for a in self.axes],
            "fixed": dict(self.fixed),
            "bots": list(self.bots),
            "rates": list(self.rates),
            "ladder": self.ladder,
            "evaluated": self.evaluated,
            "from_cache": self.from_cache,
            "seconds": self.seconds,
            "cells": [c.to_json() for c in self.cells],
        }


def cell_rules(
    rules: str, axes: Sequence[Axis], fixed: dict[str, Any]
) -> list[tuple[tuple[tuple[str, Any], ...], RuleSet]]:
    """Every cell's settings and compiled rule set (each compiled, and so checked, here)."""
    out = []
    for values in itertools.product(*(a.values for a in axes)):
        settings = tuple(zip((a.key for a in axes), values))
        out.append((settings, load_rules(rules, {**fixed, **dict(settings)})))
    return out


def sweep(
    rules: str,
    axes: Sequence[Axis],
    fixed: dict[str, Any],
    bots: Sequence[str],
    depth: DepthRequest = DepthRequest(),
    evaluator: Evaluator | None = None,
) -> Sweep:
    """Evaluate ``bots`` (and, with ``depth.rates``, the depth of skill along ``depth.weakest`` then
    ``depth.dial``) at every cell of ``axes``, with ``fixed`` settings everywhere;
    ``depth.candidates``: dial values a chain's root-finding evaluates at once in a level's first
    round (:func:`harness.studies.chain.chain`)."""
    t0 = time.perf_counter()
    rates, weakest, dial, candidates = depth.rates, depth.weakest, depth.dial, depth.candidates
    if not bots and not rates:
        raise UserError("give bots to evaluate (--entrants) or ask for the depth of skill (--depth)")
    rates = check_rates(rates) if rates else ()
    d: Dial = dial_of(dial)
    cells = cell_rules(rules, axes, fixed)
    ev = evaluator or Evaluator()
    seen = len(ev.memo)
    tasks: list[tuple[RuleSet, Any]] = []
    lengths: list[float] = []  # each task's expected rounds: its priority on a cluster
    for _, rs in cells:
        tasks.append((rs, fetch(list(bots))))
        tasks += [(rs, chain(p, weakest, d, candidates=candidates)) for p in rates]
        lengths += [1.0] + [expected_rounds(p, candidates) for p in rates]
    results = drive(tasks, ev, lengths)
    per = 1 + len(rates)
    out = []
    for i, (settings, rs) in enumerate(cells):
        evs, chains = results[i * per], results[i * per + 1 : (i + 1) * per]
        depth = DepthOfSkill(rs.name, chains[0].weakest, d, tuple(chains)) if chains else None
        out.append(Cell(settings, rs.name, rs.digest, tuple(evs), depth))
    new = list(ev.memo.values())[seen:]
    labels = tuple(e.bot for e in out[0].evaluations)
    return Sweep(
        cells[0][1].name,
        tuple(axes),
        tuple(fixed.items()),
        labels,
        tuple(rates),
        tuple(out),
        len(new),
        sum(e.cached for e in new),
        time.perf_counter() - t0,
    )
