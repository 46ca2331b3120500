"""Difficulty levels against the players of game logs: ``calibrate --levels FILE --against-records LOGS``.

A solitaire bot needs no model of the players it will meet: its exact final-score distribution
(:func:`harness.exact.evaluate.evaluate`) against the finals of the logged games gives its score rate
against those players directly. For a logged game whose player finished with ``s``, the level's
score against it is exactly ``P(bot > s) + 1/2 P(bot = s)`` (win 1, draw 1/2: the bot plays its own
independent game on the logs' rule set); the level's **score rate against the logs** is the mean of
that over the logged games (every complete seat-game of the logs is one game; a game of several
seats is one game per seat). Levels are tuned on it:

* ``target_win_rate = X``: the score rate against the logs' games (all players, or with
  ``band = "NAME"`` only the games of the players of that skill band) equals X.
* ``target_beats = P``: the level beats a share P of the players (a player is beaten when the
  level's mean score rate over that player's logged games is above 1/2, that is, the player's own
  mean score rate against the level is below 1/2). The response is the k-th largest of the
  players' mean score rates, k = ceil(P x players): continuous in the dial, and it is 1/2 at the
  dial where the level ties with the k-th weakest player, so that just inside it the level beats k
  of the players (k / players >= P). With ``band``, a share of that band's players.
* ``target_mean = X``: the exact mean score (the players play no part).

Each dial is found by exact root-finding (:func:`harness.players.calibrate.calibrate_exact`, Brent's
method) on its exact response, to :data:`LOGS_XTOL` in the dial so that the response at the answer
equals the target to about 1e-10. Every dial value evaluated is kept (its exact distribution) for
every level: a level's search starts from the narrowest pair of evaluated values that straddle its
target. Monotone in the dial: every evaluated value's response is checked (a note says when the
evaluated responses are not monotone), and the bot's exact distributions at the evaluated values
are checked for first-order stochastic dominance in dial order (:func:`dominance`): where each CDF
lies below the next's, every response to any logs is monotone over those values.

**The interval** of a level's score rate is about the population the logged players come from: the
logged games are the sample. Several games of one player are not independent draws of that
population, so the interval clusters games by player (:func:`harness.stats.clustered_mean`: a
cluster-robust CR1 variance of the mean of per-game scores, Student t on players - 1 degrees of
freedom). Its variance is reduced with each game's exact luck (:mod:`harness.decisions.analysis`: mean zero
whatever the player's policy) as a control variate: per game y = the level's score against the
game, x = the player's luck, and the regression estimator ``mean(y) - beta mean(x)``; the
variance-reduction factor (cluster-robust variance of the plain mean over that of the controlled
one) is reported. The dial's interval is the rate's, divided by the exact response's slope at the
answer (within the levels file's bracket), the rate's within [0, 1]. A ``target_beats`` level's share
has a Wilson interval over players.

The skill band of a player is :func:`harness.decisions.analysis.rating` of its regret per decision over its
logged games (:mod:`harness.decisions.skill`, exact).

**Held-out check** (:func:`held_out`): the players are split (seeded) into a tuning half and a
checking half; the levels are tuned on the first, and each level's score rate (against all
players, and per band) is predicted from the tuning half and measured on the checking half, each
with its interval.

Public API::

    from harness.players.logged import read_logged
    from harness.players.opponents import tune, held_out
    logs = read_logged(RecordStream("games.jsonl"), rules)   # -> LoggedGames
    res = tune(levels, logs)                                 # -> LogLevels (res.to_dict(): levels.json)
    chk = held_out(levels, logs, seed=1)                     # -> HeldOut
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from harness.players.calibrate import EXACT, Point, Problem, calibrate_exact, spec_with
from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.players.levels import Level, Levels
from harness.exact.evaluate import evaluate, refusal
from harness.util.render import MISSING, Table, ci_level, count, num, pct, sig, table_lines, times
from harness.game.rules import RuleSet
from harness.stats import ClusteredMean, clustered_mean, wilson
from harness.players.logged import LoggedGames, beats_rank, dominance, per_game, player_means

#: Tolerance of a level's search in the dial (absolute): the response at the answer is then the
#: target to about |slope| x 1e-10.
LOGS_XTOL = 1e-10
#: Largest number of exact evaluations of one level's search (Brent's method needs about 12).
LOGS_MAX_EVALS = 40
#: What a level's score rate against the logs is, and how its interval is made (printed).
ESTIMATOR = (
    "score rate = mean over the logged games of P(bot > s) + 1/2 P(bot = s), s the logged final, "
    "from the bot's exact distribution"
)
INTERVAL = (
    "interval: games clustered by player (cluster-robust CR1 variance of the mean of per-game scores, "
    "t on players - 1 df), each game's exact luck as control variate (known mean 0)"
)
#: A player whose mean score rate against a level is within this of 1/2 counts as beaten: the
#: marginal player of a ``target_beats`` level, tied at its root (beaten just inside it).
TIE = 1e-9


# ---------------------------------------------------------------------------------------------
# the responses


class Dial:
    """The bot's exact evaluation at each dial value asked for (each once; also cached on disk by
    :func:`harness.exact.evaluate.evaluate`)."""

    def __init__(self, lv: Levels, rules: RuleSet, cache_dir: Any = None) -> None:
        self.lv, self.rules, self.cache_dir = lv, rules, cache_dir
        why = refusal(rules, [spec_with(lv.strategy, lv.param, v, None) for v in (lv.lo, lv.hi)])
        if why:
            raise UserError(f"no levels against game logs: {why}")
        self.seen: dict[float, Any] = {}

    def spec(self, v: float) -> str:
        return spec_with(self.lv.strategy, self.lv.param, v, None)

    def __call__(self, v: float) -> Any:  # -> harness.exact.evaluate.Evaluation
        v = float(v)
        if v not in self.seen:
            self.seen[v] = evaluate(self.rules, self.spec(v), self.cache_dir)
        return self.seen[v]


def _target(level: Level) -> float:
    return float(level.target_mean if level.kind == "mean" else 0.5 if level.kind == "beats" else level.target_win_rate)


class Response:
    """One level's exact response f(v) against ``logs``: the score rate against the level's games,
    the k-th largest player's mean score rate (``target_beats``), or the mean score."""

    def __init__(self, level: Level, logs: LoggedGames, dial: Dial) -> None:
        self.level, self.dial = level, dial
        self.group = logs.subset(logs.in_band(level.band)) if level.band else logs
        beats = level.kind == "beats" and self.group.players
        self.k = beats_rank(level.target_beats, self.group.players) if beats else 0

    def __call__(self, v: float) -> float:
        ev = self.dial(v)
        if self.level.kind == "mean":
            return float(ev.mean)
        y = per_game(ev.ranking, self.group.final)
        if self.level.kind == "win_rate":
            return float(y.mean())
        return float(np.sort(player_means(y, self.group))[::-1][self.k - 1])


# ---------------------------------------------------------------------------------------------
# the levels


@dataclass(frozen=True)
class Against:
    """A level's score rate against a group of logged games at its dial: the clustered,
    luck-controlled estimate (:class:`harness.stats.ClusteredMean`), the share of the group's
    players it beats (``beaten`` of ``players``) with its Wilson interval, and each player's mean
    score rate (``per_player``, by index into the group)."""

    rate: ClusteredMean
    beaten: int
    players: int
    share_ci: tuple[float, float]
    per_player: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        r = self.rate
        return {
            "score_rate": r.mean,
            "ci": [r.lo, r.hi],
            "plain_mean": r.raw_mean,
            "beta": r.beta,
            "variance_reduction": r.variance_reduction,
            "games": r.n,
            "players": r.clusters,
            "beaten": self.beaten,
            "share_beaten": self.beaten / self.players if self.players else None,
            "share_ci": list(self.share_ci),
        }


def against(distribution: np.ndarray, logs: LoggedGames, confidence: float = 0.95) -> Against:
    """The score rate of a bot of exact ``distribution`` against ``logs`` (module docstring)."""
    y = per_game(distribution, logs.final)
    rate = clustered_mean(y, logs.player, control=logs.luck, known_mean=0.0, confidence=confidence)
    rate = replace(rate, lo=max(rate.lo, 0.0), hi=min(rate.hi, 1.0))  # a rate: the interval within [0, 1]
    means = player_means(y, logs)
    beaten = int(np.sum(means > 0.5 - TIE))
    ci = wilson(beaten, logs.players, confidence) if logs.players else (math.nan, math.nan)
    return Against(rate, beaten, logs.players, ci, means)


@dataclass(frozen=True)
class LogLevel:
    """One tuned level: its dial ``value`` (the root, with the final ``bracket``), the exact
    ``response`` there, the interval of the dial (``value_ci``: the rate's interval over the slope;
    the bracket for a mean level), the score rate against its games (``against``, None for a mean
    level), the search's evaluations and notes."""

    level: Level
    spec: str
    value: float
    value_ci: tuple[float, float]
    bracket: tuple[float, float]
    response: float
    slope: float
    evaluations: int
    converged: bool
    against: Against | None
    #: the level's mean score rate over each player's games, every player of the logs (None: a mean level)
    per_player: np.ndarray | None = field(default=None, repr=False)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        lv = self.level
        return {
            "name": lv.name,
            "target": {
                "kind": lv.kind,
                "value": lv.target_mean
                if lv.kind == "mean"
                else lv.target_beats
                if lv.kind == "beats"
                else lv.target_win_rate,
                "band": lv.band,
                "against": "records",
            },
            "spec": self.spec,
            "value": self.value,
            "value_ci": list(self.value_ci),
            "bracket": list(self.bracket),
            "response": self.response,
            "difference": self.response - _target(lv),
            "slope": self.slope,
            "evaluations": self.evaluations,
            "converged": self.converged,
            "against_logs": self.against.to_dict() if self.against else None,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class LogLevels:
    """Every level of a levels file tuned against ``logs``; ``curves``: each level's exact response
    at every dial value evaluated; ``monotone``: the dominance check (:func:`dominance`) over them."""

    levels_file: Levels
    logs: LoggedGames
    tuned: tuple[LogLevel, ...]
    curves: dict[str, list[tuple[float, float]]]
    dominance_break: tuple[float, float] | None
    evaluated: int
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        lv, logs = self.levels_file, self.logs
        bands = {b: int(sum(x == b for x in logs.bands)) for b in dict.fromkeys(logs.bands)}
        players = []
        for i, label in enumerate(logs.labels):
            players.append(
                {
                    "player": label,
                    "games": int(np.sum(logs.player == i)),
                    "regret_per_decision": float(logs.regret_per_decision[i]),
                    "band": logs.bands[i],
                    "score_rate_of_level": {
                        t.level.name: None if t.per_player is None else float(t.per_player[i]) for t in self.tuned
                    },
                }
            )
        mono = (
            "the bot's exact distributions at the evaluated values are ordered by stochastic dominance: every "
            "response is monotone over them"
            if self.dominance_break is None
            else f"the bot's exact distributions at {self.dominance_break[0]:.10g} and {self.dominance_break[1]:.10g} "
            "are not ordered by stochastic dominance: each level's monotony is checked on its evaluations only"
        )
        return jsonable(
            {
                "format": "yatzy-levels/1",
                "levels_file": lv.path,
                "rules": lv.rules,
                "settings": list(lv.settings),
                "strategy": lv.strategy,
                "param": lv.param,
                "bracket": [lv.lo, lv.hi],
                "against": None,
                "exact": True,
                "games": None,
                "seed": None,
                "confidence": self.confidence,
                "against_records": {
                    "source": logs.source,
                    "games": logs.games,
                    "players": logs.players,
                    "bad_games": len(logs.bad),
                    "bands": bands,
                    "estimator": ESTIMATOR,
                    "interval": INTERVAL,
                    "xtol": LOGS_XTOL,
                },
                "monotone": {
                    "dominance": self.dominance_break is None,
                    "note": mono,
                    "values": sorted(v for v, _ in next(iter(self.curves.values()), [])),
                },
                "evaluations": self.evaluated,
                "levels": [t.to_dict() for t in self.tuned],
                "players": players,
                "curves": {name: [{"value": v, "response": f} for v, f in pts] for name, pts in self.curves.items()},
            }
        )


def _bracket(resp: Response, seen: Sequence[float], lo: float, hi: float, target: float) -> tuple[float, float]:
    """The narrowest pair of adjacent evaluated values whose responses straddle ``target``."""
    vals = sorted(seen)
    fs = [resp(v) - target for v in vals]
    pairs = [(a, b) for (a, fa), (b, fb) in zip(zip(vals, fs), zip(vals[1:], fs[1:])) if fa * fb < 0]
    return min(pairs, key=lambda ab: ab[1] - ab[0]) if pairs else (lo, hi)


def _out_of_reach(level: Level, resp: Response, lv: Levels, f_lo: float, f_hi: float) -> UserError:
    at = f"level {level.name!r}"
    ends = f"{lv.param}={lv.lo:g} and {lv.param}={lv.hi:g}"
    whom = f"the {level.band} players" if level.band else "the players"
    if level.kind == "mean":
        return UserError(
            f"{at}: target_mean = {level.target_mean:g} is out of reach: the exact mean is "
            f"{f_lo:.6g} and {f_hi:.6g} at {ends}"
        )
    if level.kind == "win_rate":
        return UserError(
            f"{at}: target_win_rate = {level.target_win_rate:g} against {whom} of the logs is out of "
            f"reach: the score rate is {100 * f_lo:.4g} % and {100 * f_hi:.4g} % at {ends}"
        )
    g = resp.group
    counts = []
    for v in (lv.lo, lv.hi):
        y = per_game(resp.dial(v).ranking, g.final)
        counts.append(int(np.sum(player_means(y, g) > 0.5 - TIE)))
    return UserError(
        f"{at}: target_beats = {level.target_beats:g} ({resp.k} of {g.players} of {whom}) is out of "
        f"reach: the level beats {counts[0]} and {counts[1]} of them at {ends}"
    )


def tune(
    lv: Levels,
    logs: LoggedGames,
    *,
    confidence: float = 0.95,
    cache_dir: Any = None,
    progress: Callable[[str], None] | None = None,
    xtol: float = LOGS_XTOL,
    max_evals: int = LOGS_MAX_EVALS,
) -> LogLevels:
    """Every level of ``lv`` tuned against ``logs`` (module docstring), each to ``xtol`` in the dial
    in at most ``max_evals`` evaluations of its search. :class:`UserError` naming the level for a
    band without players in the logs and for a target out of reach of the dial's bracket
    (``lo``..``hi`` of the levels file), both before any search."""
    say = progress or (lambda _: None)
    dial = Dial(lv, logs.rules, cache_dir)
    if logs.games == 0:
        raise UserError(f"{logs.source}: no logged game to tune the levels against")
    responses = []
    for level in lv.levels:
        resp = Response(level, logs, dial)
        if level.band and resp.group.players == 0:
            have = ", ".join(dict.fromkeys(logs.bands))
            raise UserError(f"level {level.name!r}: no player of band {level.band!r} in {logs.source} (bands: {have})")
        responses.append(resp)
    for level, resp in zip(lv.levels, responses):  # every target in reach before the first search
        t = _target(level)
        f_lo, f_hi = resp(lv.lo), resp(lv.hi)
        if (f_lo - t) * (f_hi - t) > 0:
            raise _out_of_reach(level, resp, lv, f_lo, f_hi)
    tuned = []
    for level, resp in zip(lv.levels, responses):
        t = _target(level)
        a, b = _bracket(resp, list(dial.seen), lv.lo, lv.hi, t)
        say(f"level {level.name}: {_target_text(level)}; search in [{a:.10g}, {b:.10g}]")
        p = Problem(
            rules=lv.rules,
            settings=lv.settings,
            strategy=lv.strategy,
            param=lv.param,
            lo=a,
            hi=b,
            target_mean=t if level.kind == "mean" else None,
            target_win_rate=None if level.kind == "mean" else t,
            against=f"records {logs.source}",
            xtol=xtol,
            max_evals=max_evals,
            confidence=confidence,
            exact=True,
        )
        before = len(dial.seen)

        def point(v: float, resp: Response = resp) -> Point:
            f = resp(v)
            return Point(v, f, f, f, 0, None, EXACT)

        cal = calibrate_exact(p, point, progress=lambda pt: say(_evaluation_line(lv.param, level, pt)))
        ev = dial(cal.value)
        resp_at = resp(cal.value)
        everyone = None
        if level.kind == "mean":
            ag, ci = None, cal.value_ci
        else:
            everyone = player_means(per_game(ev.ranking, logs.final), logs)
            ag = against(ev.ranking, resp.group, confidence)
            if level.kind == "win_rate":
                half = (ag.rate.hi - ag.rate.lo) / 2
                # within the file's bracket (a dial outside it is not searched)
                ci = (
                    (max(lv.lo, cal.value - half / abs(cal.slope)), min(lv.hi, cal.value + half / abs(cal.slope)))
                    if math.isfinite(half) and cal.slope
                    else (math.nan, math.nan)
                )
            else:
                ci = cal.value_ci
        tuned.append(
            LogLevel(
                level,
                dial.spec(cal.value),
                cal.value,
                ci,
                cal.bracket,
                resp_at,
                cal.slope,
                len(dial.seen) - before,
                cal.converged,
                ag,
                everyone,
                cal.notes,
            )
        )
        say(f"  {dial.spec(cal.value)}: exact response {_shown(level, resp_at)}")
    values = sorted(dial.seen)
    curves = {level.name: [(v, resp(v)) for v in values] for level, resp in zip(lv.levels, responses)}
    br = dominance([dial(v).ranking for v in values])
    return LogLevels(
        lv, logs, tuple(tuned), curves, None if br is None else (values[br], values[br + 1]), len(values), confidence
    )


def _target_text(level: Level) -> str:
    whom = f"the {level.band} players" if level.band else "the players"
    if level.kind == "mean":
        return f"mean {level.target_mean:g} points"
    if level.kind == "beats":
        return f"beat {100 * level.target_beats:g} % of {whom}"
    return f"score rate {100 * level.target_win_rate:g} % against {whom}"


def _shown(level: Level, f: float) -> str:
    if level.kind == "mean":
        return f"{f:.6f} points (target {level.target_mean:g})"
    if level.kind == "beats":
        return f"{100 * f:.6f} % against the marginal player (target 50 %)"
    return f"{100 * f:.6f} % (target {100 * level.target_win_rate:g} %)"


def _evaluation_line(param: str, level: Level, pt: Point) -> str:
    if level.kind == "mean":
        return f"    {param}={pt.value:<18.12g} response {pt.f:12.6f} points (exact)"
    return f"    {param}={pt.value:<18.12g} response {100 * pt.f:12.6f} % (exact)"


# ---------------------------------------------------------------------------------------------
# the held-out check


@dataclass(frozen=True)
class Check:
    """One level against one group (``band``: None for every player) of the two halves: the score
    rate predicted on the tuning half and measured on the checking half (``None`` where the half
    has no player of the band)."""

    level: str
    band: str | None
    predicted: Against | None
    measured: Against | None

    @property
    def inside(self) -> bool | None:
        """Whether the two intervals overlap (the difference is within the noise of both halves)."""
        p, m = self.predicted, self.measured
        if p is None or m is None or not (math.isfinite(p.rate.se) and math.isfinite(m.rate.se)):
            return None
        z = 1.959963984540054  # two-sided 95 % normal quantile: the two estimates are independent
        return abs(p.rate.mean - m.rate.mean) <= z * math.hypot(p.rate.se, m.rate.se)

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "band": self.band,
            "predicted": self.predicted.to_dict() if self.predicted else None,
            "measured": self.measured.to_dict() if self.measured else None,
            "within_noise": self.inside,
        }


@dataclass(frozen=True)
class HeldOut:
    """The held-out check: the levels tuned on ``tuning`` (a :class:`LogLevels`) and each level's
    :class:`Check` per group; ``seed`` split the players."""

    seed: int
    tuning: LogLevels
    checking: LoggedGames
    checks: tuple[Check, ...]

    def to_dict(self) -> dict[str, Any]:
        c = self.checking
        return jsonable(
            {
                "seed": self.seed,
                "tuning_players": list(self.tuning.logs.labels),
                "checking_players": list(c.labels),
                "tuning_games": self.tuning.logs.games,
                "checking_games": c.games,
                "checks": [x.to_dict() for x in self.checks],
                "within_noise": "the difference measured - predicted is within 1.96 x the hypot of the "
                "two standard errors (independent halves)",
            }
        )


def held_out(
    lv: Levels,
    logs: LoggedGames,
    seed: int = 1,
    *,
    confidence: float = 0.95,
    cache_dir: Any = None,
    progress: Callable[[str], None] | None = None,
    **search: Any,
) -> HeldOut:
    """Split the players of ``logs`` with ``seed``, tune the levels on the first half, and check
    every level (but mean levels) against every player and each band, predicted on the tuning half
    and measured on the checking half. :class:`UserError` when there are fewer than 4 players (two
    a half: an interval needs two clusters). ``search``: :func:`tune`'s ``xtol`` and ``max_evals``."""
    if logs.players < 4:
        raise UserError(f"{logs.source}: {logs.players} player(s); a held-out check needs at least 4 (two a half)")
    tune_half, check_half = logs.split(seed)
    tuned = tune(lv, tune_half, confidence=confidence, cache_dir=cache_dir, progress=progress, **search)
    dial = Dial(lv, logs.rules, cache_dir)
    bands = [None, *dict.fromkeys(b for b in logs.bands)]
    checks = []
    for t in tuned.tuned:
        if t.level.kind == "mean":
            continue
        dist = dial(t.value).ranking
        for band in bands:
            halves = [h.subset(h.in_band(band)) if band else h for h in (tune_half, check_half)]
            pred, meas = (against(dist, h, confidence) if h.players else None for h in halves)
            checks.append(Check(t.level.name, band, pred, meas))
    return HeldOut(seed, tuned, check_half, tuple(checks))


# ---------------------------------------------------------------------------------------------
# tables


def _target_cell(t: dict[str, Any]) -> str:
    whom = f" ({t['band']})" if t.get("band") else ""
    if t["kind"] == "mean":
        return f"mean {sig(t['value'], 6)}"
    if t["kind"] == "beats":
        return f"beats {sig(100 * t['value'], 6)} % of players{whom}"
    return f"score {sig(100 * t['value'], 6)} % vs logs{whom}"


def _rate_cell(a: dict[str, Any] | None) -> str:
    return MISSING if a is None else pct(a["score_rate"], 2, ci=a["ci"])


def tables(d: dict[str, Any]) -> list[Table]:
    """The tables of ``levels.json`` tuned against logs (:meth:`LogLevels.to_dict`, with
    ``held_out`` when checked): the levels, the players, and the held-out check."""
    conf = ci_level(d["confidence"])
    rows = []
    for lv in d["levels"]:
        a = lv["against_logs"]
        exact = num(lv["response"], 6) + " (exact)" if lv["target"]["kind"] == "mean" else _rate_cell(a)
        rows.append(
            [
                lv["name"],
                _target_cell(lv["target"]),
                lv["spec"],
                sig(lv["value"], 6, ci=lv["value_ci"]),
                exact,
                MISSING if a is None else times(a["variance_reduction"]),
                MISSING if a is None else f"{a['beaten']} of {a['players']}",
            ]
        )
    src = d["against_records"]
    out = [
        Table(
            f"Levels against the players of {src['source']} ({count(src['games'])} games, "
            f"{count(src['players'])} players)",
            [
                "level",
                "target",
                "spec",
                f"{d['param']} [{conf}]",
                f"population's score rate (luck-controlled) [{conf}]",
                "var. red.",
                "beats",
            ],
            rows,
            [
                ESTIMATOR + ": each level's is its target against the logged games exactly; the column is the "
                "estimate of its rate against the population they come from (new dice)",
                INTERVAL + "; var. red. = the plain mean's variance / the controlled one's",
                f"{d['param']} interval: the score rate's over the exact slope (a mean or beats level: the "
                "final bracket); beats = players whose mean score rate against the level is below 1/2 (a beats "
                "level's marginal player, tied at 1/2 at its root, counted)",
            ],
        )
    ]
    names = [lv["name"] for lv in d["levels"] if lv["target"]["kind"] != "mean"]
    prow = [
        [
            p["player"],
            count(p["games"]),
            num(p["regret_per_decision"], 3),
            p["band"],
            *[pct(p["score_rate_of_level"][n], 1) for n in names],
        ]
        for p in d["players"]
    ]
    out.append(
        Table(
            "Each level's score rate against each player (mean over the player's games)",
            ["player", "games", "regret/decision", "band", *names],
            prow,
        )
    )
    ho = d.get("held_out")
    if ho:
        crow = []
        for c in ho["checks"]:
            p, m = c["predicted"], c["measured"]
            ok = c["within_noise"]
            crow.append(
                [
                    c["level"],
                    c["band"] or "all",
                    f"{p['players'] if p else 0} / {m['players'] if m else 0}",
                    _rate_cell(p),
                    _rate_cell(m),
                    MISSING if ok is None else "yes" if ok else "NO",
                ]
            )
        out.append(
            Table(
                f"Held-out check (players split with seed {ho['seed']}: {len(ho['tuning_players'])} tune, "
                f"{len(ho['checking_players'])} check): each level's score rate against each group",
                [
                    "level",
                    "players",
                    "players tune / check",
                    f"predicted (tuning half) [{conf}]",
                    f"measured (checking half) [{conf}]",
                    "within noise",
                ],
                crow,
                ["within noise: |measured - predicted| <= 1.96 x hypot of their standard errors"],
            )
        )
    return out


def text(d: dict[str, Any]) -> list[str]:
    """The terminal form: every table, then the monotony check and each level's notes."""
    lines: list[str] = []
    for t in tables(d):
        lines += table_lines(t) + [""]
    lines.append(f"monotone: {d['monotone']['note']} ({len(d['monotone']['values'])} values)")
    for lv in d["levels"]:
        lines += [f"note: level {lv['name']}: {n}" for n in lv["notes"]]
    return lines
