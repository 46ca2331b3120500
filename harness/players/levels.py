"""Difficulty levels: a levels file (``configs/difficulty/*.toml``) read and checked, and every level
tuned by :func:`harness.players.calibrate.calibrate` on one shared response, each checked on independent dice.

The result (:func:`calibrate_levels`) is what ``levels.json`` holds: no paths, no times, so the
same seed gives the same file byte for byte; :func:`levels_table` is its table and
:func:`harness.players.picture.plot_levels` its picture.

Levels against the players of game logs (``calibrate --against-records LOGS``; ``target_beats``
and ``band`` keys of a level) are tuned by :mod:`harness.players.opponents`, from the same file.

Exact levels (``exact = true`` in the file, or ``calibrate --exact``): the bot and the reference
are solitaire, every response is exact (:class:`harness.players.responses.ExactEvaluator`) and each level
is the root of its response to ``xtol`` in the dial (:func:`harness.players.calibrate.calibrate_exact`);
no game is played, so ``games``, ``seed`` and the independent check do not apply. ``levels.json``
then says ``"exact": true``, gives each level's exact response at its value, and its ``value_ci``
is the final bracket (the value that hits the target exactly lies in it).
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from harness.players.calibrate import (
    DEFAULT_MAX_EVALS,
    EXACT,
    Point,
    Problem,
    calibrate,
    calibrate_exact,
    check_problem,
    declared_param,
    round_value,
)
from harness.players.responses import ExactEvaluator, RunnerEvaluator, sampling_session
from harness.decisions.scale import SCALE
from harness.exact.evaluate import refusal
from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.util.render import Table, ci_level, num, pct, sig, table_lines
from harness.game.rules import check_toml_settings, load_rules, read_toml
from harness.game.registry import get
from harness.util.specs import parse_spec


@dataclass(frozen=True)
class Level:
    """A named difficulty level: a target mean score, a target score rate against the reference
    (a bot, a fitted player, or the players of game logs), or (against game logs only) a share of
    the logs' players to beat; ``band``: against the logs' players of that skill band only
    (:data:`harness.decisions.analysis.SCALE`; :mod:`harness.players.opponents`)."""

    name: str
    target_mean: float | None = None
    target_win_rate: float | None = None
    target_beats: float | None = None
    band: str | None = None

    @property
    def kind(self) -> str:
        return "mean" if self.target_mean is not None else "beats" if self.target_beats is not None else "win_rate"

    @property
    def needs_records(self) -> bool:
        """The target is about the players of game logs (``calibrate --against-records``)."""
        return self.kind == "beats" or self.band is not None


@dataclass(frozen=True)
class Levels:
    """A levels file (``configs/difficulty/*.toml``): the bot and parameter to tune, the search
    bracket, the games, the reference player for win-rate levels, and the levels in order."""

    path: str
    rules: str
    settings: tuple[str, ...]
    strategy: str
    param: str
    lo: float
    hi: float
    games: int
    seed: int
    against: str | None
    levels: tuple[Level, ...]
    #: the values are exact (solitaire bots; module docstring)
    exact: bool = False
    #: the dial's kind (float, integer, choice: :mod:`harness.players.dials`) and a choice's values
    dial: str = "float"
    values: tuple[Any, ...] = ()

    @property
    def external(self) -> bool:
        """The levels are played by an external engine (served by its own program, not the harness)."""
        return bool(getattr(get(parse_spec(self.strategy)[0]), "refereed", False))


#: A level's target keys: exactly one each.
_TARGETS = ("target_mean", "target_win_rate", "target_beats")
_LEVELS_KEYS = {"rules", "settings", "strategy", "param", "lo", "hi", "games", "seed", "against", "exact", "level"}


def load_levels(path: str | os.PathLike[str]) -> Levels:
    """Read and check a levels file; every mistake is a one-line :class:`UserError` naming the key."""

    where = str(path)
    raw = read_toml(path, "levels file")
    unknown = sorted(set(raw) - _LEVELS_KEYS)
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(_LEVELS_KEYS))})")

    def need(key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        v = raw.get(key, default)
        if v is None:
            raise UserError(f"{where}: missing key {key!r}")
        if not isinstance(v, kind) or isinstance(v, bool):
            raise UserError(f"{where}: {key} = {v!r} is not a {getattr(kind, '__name__', 'number')}")
        return v

    settings = raw.get("settings", {})
    if not isinstance(settings, dict):
        raise UserError(f"{where}: settings must be a table (settings = {{ upper_bonus_threshold = 62 }})")
    check_toml_settings(settings, lambda key: f"{where}: settings.{key}")
    levels = []
    items = raw.get("level")
    if not isinstance(items, list) or not items:
        raise UserError(f"{where}: no [[level]] (each: name and target_win_rate or target_mean)")
    for i, lv in enumerate(items, 1):
        if not isinstance(lv, dict) or not isinstance(lv.get("name"), str):
            raise UserError(f"{where}: level {i} has no name")
        extra = sorted(set(lv) - {"name", *_TARGETS, "band"})
        if extra:
            raise UserError(f"{where}: level {lv['name']!r}: unknown key {extra[0]!r}")
        if sum(k in lv for k in _TARGETS) != 1:
            raise UserError(
                f"{where}: level {lv['name']!r} needs exactly one of target_win_rate or target_mean "
                "(or, against game logs, target_beats)"
            )
        for k in _TARGETS:
            if k in lv and (not isinstance(lv[k], (int, float)) or isinstance(lv[k], bool)):
                raise UserError(f"{where}: level {lv['name']!r}: {k} = {lv[k]!r} is not a number")
        band = lv.get("band")
        if band is not None:
            names = [b.name for b in SCALE]
            if band not in names:
                raise UserError(
                    f"{where}: level {lv['name']!r}: band = {band!r} is not a skill band ({', '.join(names)})"
                )
            if "target_mean" in lv:
                raise UserError(
                    f"{where}: level {lv['name']!r}: a target_mean does not depend on the players: drop band"
                )
        levels.append(Level(lv["name"], lv.get("target_mean"), lv.get("target_win_rate"), lv.get("target_beats"), band))
    names = [lv.name for lv in levels]
    if len(set(names)) != len(names):
        raise UserError(f"{where}: two levels named {next(n for n in names if names.count(n) > 1)!r}")
    against = raw.get("against")
    if against is not None and not isinstance(against, str):
        raise UserError(f"{where}: against = {against!r} is not a strategy spec or a fit file")
    for lv in levels:  # each value is named as the file gives it, not as the flag it stands for
        at = f"{where}: level {lv.name!r}"
        if lv.target_win_rate is not None and not 0.0 < lv.target_win_rate < 1.0:
            raise UserError(f"{at}: target_win_rate = {lv.target_win_rate!r} must be in (0, 1)")
        if lv.target_mean is not None and not math.isfinite(lv.target_mean):
            raise UserError(f"{at}: target_mean = {lv.target_mean!r} is not a finite number")
        if lv.target_beats is not None and not 0.0 < lv.target_beats <= 1.0:
            raise UserError(f"{at}: target_beats = {lv.target_beats!r} must be in (0, 1] (a share of the players)")
    strategy = need("strategy", str, "solver")
    param = need("param", str, "temperature")
    rules = need("rules", str, "scandinavian")
    try:
        declared = declared_param(strategy, param, rules, tuple(f"{k}={v}" for k, v in settings.items()))
    except UserError as exc:
        raise UserError(f"{where}: strategy = {strategy!r}, param = {param!r}: {exc}") from None
    dlo, dhi = declared.lo, declared.hi
    if declared.kind == "choice" and ("lo" in raw or "hi" in raw):
        raise UserError(
            f"{where}: param = {param!r} is a choice of {', '.join(map(str, declared.values))}: "
            "its bracket is every value in order (drop lo and hi)"
        )
    lo, hi = float(need("lo", (int, float), dlo)), float(need("hi", (int, float), dhi))
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise UserError(f"{where}: lo = {lo:g}, hi = {hi:g}: need lo < hi")
    for key, v in (("lo", lo), ("hi", hi)):
        if (declared.lo is not None and v < declared.lo) or (declared.hi is not None and v > declared.hi):
            raise UserError(
                f"{where}: {key} = {v:g} is outside {strategy}:{param}'s range {declared.lo}..{declared.hi}"
            )
    games, seed = need("games", int, 2000), need("seed", int, 1)
    if games < 2:
        raise UserError(f"{where}: games = {games} must be at least 2")
    if not 0 <= seed < 2**64:
        raise UserError(f"{where}: seed = {seed} must be 0..2**64-1")
    exact = raw.get("exact", False)
    if not isinstance(exact, bool):
        raise UserError(f"{where}: exact = {exact!r} is not true or false")

    try:  # the rule set and its settings, as the evaluations will load them
        load_rules(rules, dict(settings), origin=f"{where}: settings")
    except UserError as exc:
        msg = str(exc)
        raise UserError(msg if msg.startswith(f"{where}:") else f"{where}: rules = {rules!r}: {msg}") from None
    return Levels(
        where,
        rules,
        tuple(f"{k}={v}" for k, v in settings.items()),
        strategy,
        param,
        lo,
        hi,
        games,
        seed,
        against,
        tuple(levels),
        exact,
        declared.kind,
        declared.values,
    )


@dataclass(frozen=True)
class LevelSearch:
    """How every level's dial is searched: on ``workers`` runner workers (0: one per core), the
    luck-adjusted response (``analyse``), intervals at ``confidence``, at most ``max_evals``
    evaluations a level, and ``xtol``, exact levels' tolerance in the dial (None: the default)."""

    workers: int = 0
    analyse: bool = True
    confidence: float = 0.95
    max_evals: int = DEFAULT_MAX_EVALS
    xtol: float | None = None


def check_levels(lv: Levels, against: str | None, search: LevelSearch = LevelSearch()) -> list[Problem]:
    """The calibration problem of every level of ``lv`` (win-rate levels against ``against``),
    each checked (:func:`check_problem`) before anything is played; :class:`UserError` naming the
    level for the first that is not good. Exact levels (``lv.exact``) are also checked to be
    evaluable exactly (the bot at both ends of the bracket and the reference solitaire, the rule
    set without saved rolls)."""
    for level in lv.levels:
        if level.needs_records:
            what = "target_beats" if level.kind == "beats" else f"band = {level.band!r}"
            raise UserError(
                f"level {level.name!r} ({what}) aims at the players of game logs: give --against-records LOGS"
            )
    problems = [_problem(lv, level, against, lv.lo, lv.hi, search) for level in lv.levels]
    if lv.exact:
        rules = load_rules(lv.rules, list(lv.settings))
        for level, p in zip(lv.levels, problems):
            bots = [p.spec_at(v) for v in (p.lo, p.hi)] + ([p.against] if p.against else [])
            why = refusal(rules, bots)
            if why:
                raise UserError(f"level {level.name!r}: no exact calibration: {why}")
    return problems


def _problem(lv: Levels, level: Level, against: str | None, lo: float, hi: float, search: LevelSearch) -> Problem:
    """The checked calibration problem of one level searched in [lo, hi]; a mistake names the level."""
    if level.kind == "win_rate" and not against:
        raise UserError(f"level {level.name!r} aims at a win rate: give --against REF (or against = in {lv.path})")
    p = Problem(
        rules=lv.rules,
        settings=lv.settings,
        strategy=lv.strategy,
        param=lv.param,
        lo=lo,
        hi=hi,
        target_mean=level.target_mean,
        target_win_rate=level.target_win_rate,
        against=against if level.kind == "win_rate" else None,
        games=lv.games,
        seed=lv.seed,
        exact=lv.exact,
        dial=lv.dial,
        values=lv.values,
        workers=search.workers,
        analyse=search.analyse,
        confidence=search.confidence,
        max_evals=search.max_evals,
        xtol=search.xtol,
    )
    try:
        check_problem(p)
    except UserError as exc:
        raise UserError(f"level {level.name!r}: {exc}") from None
    return p


class _Memo:
    """An evaluator that plays each value once (levels sharing a response share its points)."""

    def __init__(self, evaluate: Callable[[float], Point]) -> None:
        self.evaluate = evaluate
        self.seen: dict[float, Point] = {}

    def __call__(self, value: float) -> Point:
        if value not in self.seen:
            self.seen[value] = self.evaluate(value)
        return self.seen[value]


def _bracket(memo: _Memo | None, level: Level, lv: Levels) -> tuple[float, float]:
    """The search bracket of a level: the file's, or the narrowest pair of adjacent points already
    measured on the same response (same games) whose responses straddle the level's target."""
    target = level.target_mean if level.target_mean is not None else level.target_win_rate
    if memo is None or len(memo.seen) < 2:
        return lv.lo, lv.hi
    pts = sorted(memo.seen.values(), key=lambda q: q.value)
    pairs = [(a.value, b.value) for a, b in zip(pts, pts[1:]) if (a.f - target) * (b.f - target) < 0]
    return min(pairs, key=lambda ab: ab[1] - ab[0]) if pairs else (lv.lo, lv.hi)


#: The independent check of each level plays this seed offset (other dice than the search's).
CHECK_SEED_OFFSET = 1


def _evaluation_line(param: str, kind: str, pt: Point) -> str:
    """One evaluation of a level's search: the value tried and the response with its interval."""
    scale, unit = (1.0, " points") if kind == "mean" else (100.0, " %")
    if pt.estimator == EXACT:
        return f"    {param}={pt.value:<16.10g} response {scale * pt.f:12.6f}{unit} (exact)"
    shown = pt.played if pt.played is not None else f"{pt.value:<10.6g}"
    if not pt.usable:
        return f"    {param}={shown} not used for the root: {pt.why}"
    faults = ""
    if pt.faults is not None:  # an engine: its faults at this value
        f = pt.faults
        bad = ", ".join(
            f"{k} {f.get('faults_' + k, 0):,}" for k in ("time", "illegal", "crash", "stall") if f.get("faults_" + k, 0)
        )
        faults = f"  faults: {bad or 'none'}"
    return f"    {param}={shown} response {scale * pt.f:8.3f}{unit} [{scale * pt.lo:.3f}, {scale * pt.hi:.3f}]" + faults


def calibrate_levels(
    lv: Levels,
    against: str | None,
    out: Path,
    settings: LevelSearch = LevelSearch(),
    *,
    progress: Callable[[str], None] | None = None,
    quiet: bool = True,
    evaluator: Any = None,
) -> dict[str, Any]:
    """Tune every level of ``lv`` (win-rate levels against ``against``, a spec), then play each
    level's spec once more on an independent seed (``seed + CHECK_SEED_OFFSET``) as a check: the
    check is on target when |check - target| is within the hypot of the check's CI half-width and
    the search's (the response's half-width at the point nearest the target).
    Returns the levels result (what ``levels.json`` holds: no paths, no times, so the same seed
    gives the same file); every evaluation's run goes under ``out``. ``progress`` gets a line per
    level, per evaluation and per check; ``quiet=False`` shows each evaluation's progress bar.
    Exact levels (``lv.exact``, module docstring) play nothing and have no check: each level's
    row gives its exact response at its value; ``xtol`` is their tolerance in the dial; ``evaluator``
    (a :class:`harness.jobs.driver.Evaluator`) evaluates them on its tasks (:mod:`harness.jobs.cluster`)."""
    with contextlib.nullcontext() if lv.exact else sampling_session(settings.workers):
        # sampled levels: every evaluation and check on one set of workers and engine processes
        say = progress or (lambda _: None)
        memos: dict[str, _Memo] = {}
        evaluators: dict[str, RunnerEvaluator | ExactEvaluator] = {}
        rows, cals = [], []
        check_levels(lv, against, settings)
        for level in lv.levels:
            lo, hi = _bracket(memos.get(level.kind), level, lv)
            p = _problem(lv, level, against, lo, hi, settings)
            if level.kind not in memos:
                evaluators[level.kind] = (
                    ExactEvaluator(p, evaluator=evaluator)
                    if lv.exact
                    else RunnerEvaluator(p, out / level.kind, quiet=quiet)
                )
                memos[level.kind] = _Memo(evaluators[level.kind])
            say(
                f"level {level.name}: "
                + (
                    f"mean {level.target_mean:g} points"
                    if level.kind == "mean"
                    else f"score {level.target_win_rate:g} against {against}"
                )
            )
            search = calibrate_exact if lv.exact else calibrate
            try:
                cal = search(p, memos[level.kind], progress=lambda pt: say(_evaluation_line(lv.param, level.kind, pt)))
            except UserError as exc:
                raise UserError(f"level {level.name!r}: {exc}") from None
            if lv.exact:
                at = cal.answer
                spec = p.spec_at(cal.value)
                shown = (
                    f"{100 * at.f:.6f} % (target {100 * p.target:g} %)"
                    if level.kind == "win_rate"
                    else f"{at.f:.6f} points (target {p.target:g})"
                )
                say(f"  {spec}: exact response {shown}")
                rows.append(
                    {
                        "name": level.name,
                        "target": {"kind": level.kind, "value": p.target, "against": p.against},
                        "spec": spec,
                        "value": cal.value,
                        "value_ci": list(cal.value_ci),
                        "converged": cal.converged,
                        "search": {
                            "evaluations": len(cal.points),
                            "bracket": list(cal.bracket),
                            "xtol": p.v_tol,
                            "search_error": cal.search_error,
                            "slope": cal.slope,
                        },
                        "exact_response": at.f,
                        "difference": at.f - p.target,
                        "check": None,
                        "notes": list(cal.notes),
                    }
                )
                continue
            # the check: the calibrated spec played on other dice than the search's
            cp = Problem(**{**p.__dict__, "seed": lv.seed + CHECK_SEED_OFFSET})
            check = RunnerEvaluator(cp, out / "check" / level.name, quiet=quiet)(
                cal.value if lv.dial != "float" else round_value(cal.value)
            )
            cals.append((level, cal, check))
            # the check and the search measured on independent dice: their difference has both errors
            h_cal = cal.sampling_error * abs(cal.slope) if math.isfinite(cal.sampling_error * cal.slope) else 0.0
            allowed = math.hypot((check.hi - check.lo) / 2, h_cal)
            inside = abs(check.f - p.target) <= allowed
            say(
                f"  {p.spec_at(cal.value)}: check {check.f:.4g} [{check.lo:.4g}, {check.hi:.4g}]"
                + ("" if inside else " (the target is outside the check's interval combined with the search's)")
            )
            rows.append(
                {
                    "name": level.name,
                    "target": {"kind": level.kind, "value": p.target, "against": p.against},
                    "spec": p.spec_at(cal.value),
                    "value": cal.value,
                    "value_ci": list(cal.value_ci),
                    "converged": cal.converged,
                    "search": {
                        "evaluations": len(cal.points),
                        "bracket": list(cal.bracket),
                        "sampling_error": cal.sampling_error,
                        "search_error": cal.search_error,
                        "slope": cal.slope,
                    },
                    "check": {
                        "response": check.f,
                        "ci": [check.lo, check.hi],
                        "games": check.games,
                        "seed": lv.seed + CHECK_SEED_OFFSET,
                        "target_inside": inside,
                        "difference": check.f - p.target,
                        "difference_halfwidth": allowed,
                        "variance_reduction": check.variance_reduction,
                    },
                    "notes": list(cal.notes),
                }
            )
        curves = {
            kind: [
                {k: v for k, v in pt.to_dict().items() if k != "run_dir"}
                for pt in sorted(m.seen.values(), key=lambda q: q.value)
            ]
            for kind, m in memos.items()
        }
        est = {kind: e.estimator for kind, e in evaluators.items()}
        external = lv.external
        for row in rows:  # who plays each level: the harness (serve, engine play), or the engine's own program
            row["external"] = external
        return jsonable(
            {
                "format": "yatzy-levels/1",
                "levels_file": lv.path,
                "rules": lv.rules,
                "external": external,
                "settings": list(lv.settings),
                "strategy": lv.strategy,
                "param": lv.param,
                "bracket": [lv.lo, lv.hi],
                "against": against,
                "exact": lv.exact,
                "games": None if lv.exact else lv.games,
                "seed": None if lv.exact else lv.seed,
                "confidence": settings.confidence,
                "estimators": est,
                "levels": rows,
                "curves": curves,
            }
        )


def levels_table(d: dict[str, Any]) -> Table:
    """The levels (untitled): each level's target, spec, value with its interval and the check
    (exact levels: the final bracket and the exact response at the value)."""
    conf = ci_level(d["confidence"])
    exact = bool(d.get("exact"))
    head = (
        ["level", "target", "spec", f"{d['param']} [bracket]", "exact response"]
        if exact
        else [
            "level",
            "target",
            "spec",
            f"{d['param']} [{conf}]",
            f"check, seed {d['seed'] + CHECK_SEED_OFFSET} [{conf}]",
        ]
    )
    rows = []
    for lv in d["levels"]:
        t = lv["target"]
        win = t["kind"] == "win_rate"
        tgt = f"score {sig(100 * t['value'], 6)} % vs ref" if win else f"mean {sig(t['value'], 6)}"
        if exact:
            r = lv["exact_response"]
            rows.append(
                [lv["name"], tgt, lv["spec"], sig(lv["value"], 10, ci=lv["value_ci"]), pct(r, 6) if win else num(r, 6)]
            )
            continue
        ck = lv["check"]
        check = pct(ck["response"], 2, ci=ck["ci"]) if win else num(ck["response"], ci=ck["ci"])
        rows.append(
            [
                lv["name"],
                tgt,
                lv["spec"],
                sig(lv["value"], 4, ci=lv["value_ci"]),
                check + ("" if ck["target_inside"] else "  (off target)"),
            ]
        )
    return Table("", head, rows)


def levels_text(d: dict[str, Any]) -> list[str]:
    """The levels as an aligned table."""
    return table_lines(levels_table(d))
