"""Luck and skill per player over many game records: the ``analyse`` command, with a rating on a named scale.

Every seat-game of the records goes through :class:`harness.decisions.analysis.Analyser` (exact:
``final = V(start) + luck - regret``), decision by decision, and is folded into one
:class:`PlayerTally` per player (a seat's :attr:`harness.records.notation.Seat.label`: a person's name or a
bot's spec; with several rule sets in one source, per player and rule set). Per player:

* ``mean`` (final score), ``mean_luck`` and the luck-adjusted mean ``adjusted = final - luck``
  (= V(start) - regret: unbiased for the player's expected score whatever the policy, because each
  luck term has mean zero given the past) with a Student-t interval. The unit of the interval is a
  *game*: a player's seat-games that share dice (same seed and game index: the same seat of every
  lineup of a run, or two seats of one player) are averaged first, as in the run report
  (:mod:`harness.reports.summary`); a record without a seed is its own game. ``variance_reduction`` is
  var(final) / var(final - luck) over those games; ``None`` (shown ``exact``) when the adjusted score
  does not vary (the optimal bot: V(start) every game).
* decisions per game, regret per decision and per game, the error rate (decisions with regret >
  :data:`harness.decisions.analysis.ERROR`, 1e-9 points), and the same split by decision kind: ``keep`` (every
  reroll choice, ``stop`` included) and ``box``, itself ``upper`` and ``lower`` by the box written.
* a rating: the band of :data:`SCALE` that holds the mean regret per decision, and the ``worst``
  decisions (game, lineup, seat, column, turn, roll, the dice, what was played, what was best, the
  cost in points), costliest first, earliest first on ties.

The rating scale, in mean regret per decision (points given away per decision against optimal
play: the skill part of ``final = V(start) + luck - regret``). Its thresholds sit between the
built-in bots' figures on scandinavian, measured with ``python benchmarks/bench_skill.py``
(2,000 games per bot, seed 1, each bot alone on the same dice; a turn is three decisions - two
keeps, ``stop`` included, and a box - or two for a bot that never rerolls)::

    bot                      regret/decision  regret/game  errors   adjusted mean  rating
    solver                   0.000            0.00          0.0 %   248.44         perfect
    solver:temperature=0.25  0.047            2.09         10.9 %   246.35         expert
    solver:temperature=0.5   0.197            8.80         22.3 %   239.64         strong
    bonus                    0.215            9.57         14.6 %   238.87         strong
    solver:temperature=1     0.589            26.28        38.2 %   222.16         intermediate
    solver:blunder=0.1       0.784            34.94         8.8 %   213.50         intermediate
    greedy                   1.140            50.76        32.8 %   197.68         casual
    solver:temperature=2     1.323            59.08        54.1 %   189.36         casual
    random                   4.466            198.86       90.3 %    49.58         random
    timeout                  5.060            151.80       75.6 %    96.64         random

    perfect < 0.001 <= expert < 0.1 <= strong < 0.4 <= intermediate < 1 <= casual < 2
            <= beginner < 4 <= random

``perfect`` is optimal play up to float rounding; ``beginner`` (no built-in bot) lies between
greedy play and random play. ``timeout`` rates below ``random`` per decision although it loses
fewer points a game: it makes fewer decisions (it never rerolls), each a costly one.

Games of a rule set with ``saved_rolls`` cannot be valued (the solved table does not value banked
rolls): each is listed with the :class:`~harness.decisions.positions.Advisor`'s one-line reason and skipped,
and the other games are analysed. Partial games (``"complete": false``) are listed and skipped:
their scores are not final.

Public API::

    from harness.decisions.skill import analyse_records, rating, SCALE
    rep = analyse_records(read_records("games.jsonl"), worst=5)   # -> SkillReport
    for p in rep.players: p.label, p.adjusted_mean, p.adjusted_ci, p.rating, p.worst
    rep.to_dict()                                                 # what --json prints
"""

from __future__ import annotations

import heapq
import json
from decimal import Decimal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from harness.decisions.analysis import ERROR, SCALE, Analyser, Band, Rated, Worst, keep_text, rating, worst_of
from harness.records.codec import KernelArrays, RunRecords, arrays_of_records, record_rules
from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.records.record import BadGame, GameRecord, NoUsableGame, ReadResult, RecordStream
from harness.util.render import Table, ci_level, count, num, pct, pm, sig, times
from harness.util.render import markdown as md_document, text as render_text
from harness.game.rules import RuleSet
from harness.stats import Moments, mean_ci


#: Decision kinds of the split: keeps (stop included), and boxes written on upper / lower boxes.
REGRET_KINDS = ("keep", "upper", "lower")
#: Edges of the regret histogram (points, log-spaced, 10 bins a decade); regrets outside are
#: counted in the first / last bin. Regrets <= ERROR are counted apart (``zero_regret``).
#: 10^(k/10) by decimal arithmetic, rounded once to a float: numpy's power picks a vector kernel
#: by CPU (AVX-512 or not), which moved four edges by a unit in the last place.
REGRET_EDGES = np.array([float(Decimal(10) ** (Decimal(k) / 10)) for k in range(-60, 31)])


@dataclass(frozen=True, eq=False)
class PlayerSkill(Rated):
    """One player's figures (see the module docstring). ``kinds[k]`` is ``(decisions, regret,
    errors)`` of kind ``k`` of :data:`REGRET_KINDS`; ``regret_hist`` counts the non-zero regrets per bin of
    :data:`REGRET_EDGES`; ``finals`` and ``lucks``: per seat-game (float64), for the scatter."""

    label: str
    rules: str
    games: int
    clusters: int
    mean: float
    mean_ci: tuple[float, float]
    adjusted_mean: float
    adjusted_ci: tuple[float, float]
    variance_reduction: float | None
    decisions: int
    regret: float
    errors: int
    kinds: Mapping[str, tuple[int, float, int]]
    worst: tuple[Worst, ...]
    zero_regret: int
    regret_hist: np.ndarray
    finals: np.ndarray = field(repr=False)
    lucks: np.ndarray = field(repr=False)

    @property
    def mean_luck(self) -> float:
        """``mean - adjusted_mean``: so that the table's adjusted mean is its mean minus its luck."""
        return self.mean - self.adjusted_mean

    def to_dict(self, confidence: float) -> dict[str, Any]:
        n = max(1, self.games)

        def kind(nd: int, reg: float, err: int) -> dict[str, Any]:
            return {
                "decisions": nd,
                "per_game": nd / n,
                "regret": reg,
                "regret_per_game": reg / n,
                "regret_per_decision": reg / nd if nd else None,
                "error_rate": err / nd if nd else None,
            }

        k = {name: kind(*self.kinds[name]) for name in REGRET_KINDS}
        box = tuple(sum(x) for x in zip(self.kinds["upper"], self.kinds["lower"]))
        return {
            "player": self.label,
            "rules": self.rules,
            "games": self.games,
            "independent_games": self.clusters,
            "mean": self.mean,
            "mean_ci": list(self.mean_ci),
            "mean_luck": self.mean_luck,
            "adjusted_mean": self.adjusted_mean,
            "adjusted_ci": list(self.adjusted_ci),
            "confidence": confidence,
            "variance_reduction": self.variance_reduction,
            "decisions_per_game": self.decisions / n,
            "regret_per_decision": self.regret_per_decision,
            "regret_per_game": self.regret / n,
            "error_rate": self.errors / max(1, self.decisions),
            "rating": self.rating,
            "by_kind": {"keep": k["keep"], "box": kind(*box), "upper": k["upper"], "lower": k["lower"]},
            "zero_regret_decisions": self.zero_regret,
            "regret_histogram": {"edges": REGRET_EDGES.tolist(), "counts": self.regret_hist.tolist()},
            "worst": [w.to_json() for w in self.worst],
        }


class PlayerTally:
    """Streaming accumulator of one player's seat-games (memory: a few numbers per game, the
    ``worst`` heap and the histogram; decisions are not kept)."""

    def __init__(self, label: str, rules: str, worst: int = 5) -> None:
        self.label, self.rules, self.n_worst = label, rules, worst
        self.finals: list[float] = []
        self.lucks: list[float] = []
        self.clusters: dict[Hashable, list[float]] = {}  # game -> [sum final, sum adjusted, seat-games]
        self.kinds = {k: [0, 0.0, 0] for k in REGRET_KINDS}
        self.hist = np.zeros(REGRET_EDGES.size - 1, dtype=np.int64)
        self.zero = 0
        self.heap: list[tuple[float, int, Worst]] = []
        self.seq = 0

    def add(
        self,
        final: float,
        luck: float,
        adjusted: float,
        cluster: Hashable,
        regrets: np.ndarray,
        kinds: np.ndarray,
        where: Callable[[int], Worst],
    ) -> None:
        """Fold one seat-game: its final score, luck and adjusted score, ``cluster`` (its dice, see
        the module docstring), and its decisions in play order: ``regrets``, ``kinds`` (index into
        :data:`REGRET_KINDS`), and ``where(i)``, the :class:`Worst` of decision i (asked only of the few
        that enter the heap)."""
        self.finals.append(float(final))
        self.lucks.append(float(luck))
        c = self.clusters.setdefault(cluster, [0.0, 0.0, 0])
        c[0] += final
        c[1] += adjusted
        c[2] += 1
        err = regrets > ERROR
        nonzero = regrets[err]
        self.zero += regrets.size - nonzero.size
        if nonzero.size:
            i = np.clip(np.searchsorted(REGRET_EDGES, nonzero, side="right") - 1, 0, self.hist.size - 1)
            np.add.at(self.hist, i, 1)
        for j, name in enumerate(REGRET_KINDS):
            sel = kinds == j
            k = self.kinds[name]
            k[0] += int(sel.sum())
            k[1] += float(regrets[sel].sum())
            k[2] += int((sel & err).sum())
        first = self.seq
        self.seq += regrets.size
        if self.n_worst <= 0 or not nonzero.size:
            return
        for i in np.flatnonzero(err).tolist():  # in play order: ties keep the earlier decision
            r = float(regrets[i])
            if len(self.heap) < self.n_worst or r > self.heap[0][0]:
                item = (r, -(first + i), where(i))
                if len(self.heap) < self.n_worst:
                    heapq.heappush(self.heap, item)
                else:
                    heapq.heapreplace(self.heap, item)

    def result(self, confidence: float = 0.95) -> PlayerSkill:
        """The player's figures; intervals at ``confidence`` over independent games."""
        cl = np.array([(a / n, b / n) for a, b, n in self.clusters.values()], dtype=np.float64).reshape(-1, 2)
        plain, adj = Moments.of(cl[:, 0]), Moments.of(cl[:, 1])
        pci, aci = mean_ci(plain, confidence), mean_ci(adj, confidence)
        # the optimal bot's adjusted score is V(start) every game: float noise, not variance
        vr = plain.var / adj.var if adj.n > 1 and adj.var > 1e-12 * max(1.0, plain.var) else None
        kinds = {k: (int(v[0]), float(v[1]), int(v[2])) for k, v in self.kinds.items()}
        worst = tuple(w for _, _, w in sorted(self.heap, key=lambda x: (-x[0], -x[1])))
        return PlayerSkill(
            self.label,
            self.rules,
            len(self.finals),
            len(self.clusters),
            pci.mean,
            (pci.lo, pci.hi),
            aci.mean,
            (aci.lo, aci.hi),
            vr,
            sum(v[0] for v in kinds.values()),
            sum(v[1] for v in kinds.values()),
            sum(v[2] for v in kinds.values()),
            kinds,
            worst,
            self.zero,
            self.hist.copy(),
            np.array(self.finals),
            np.array(self.lucks),
        )


@dataclass(frozen=True, eq=False)
class SkillReport:
    """The analysis of one source: every player, the rule sets (name, settings, V(start) of a
    column, columns, the rule set's digest), the games analysed and every game skipped (``bad``)."""

    source: str
    players: tuple[PlayerSkill, ...]
    rules: tuple[dict[str, Any], ...]
    games: int
    bad: tuple[BadGame, ...]
    confidence: float = 0.95
    files: tuple[str, ...] = ()

    @property
    def regret_edges(self) -> np.ndarray:
        """:data:`REGRET_EDGES`: the bins of every player's ``regret_hist``."""
        return REGRET_EDGES

    def to_dict(self) -> dict[str, Any]:

        return jsonable(
            {
                "source": self.source,
                "games": self.games,
                "bad_games": [{"game": b.game, "message": b.message} for b in self.bad],
                "rules": list(self.rules),
                "confidence": self.confidence,
                "identity": "final = start + luck - regret (exact, per seat-game)",
                "scale": [
                    {"rating": b.name, "regret_per_decision_below": b.below, "example": b.example} for b in SCALE
                ],
                "players": [p.to_dict(self.confidence) for p in self.players],
                "files": list(self.files),
            }
        )


#: Games analysed per kernel call (memory: their decisions' option values, ~25 KB a game).
BATCH = 2000


def _worst_at(
    an: Analyser, rec: GameRecord, seat: int, lineup: int | None, turn: int, roll: int, kind: str, memo: dict[Any, Any]
) -> Worst:
    """The :class:`Worst` of one decision (the seat's ``turn`` and ``roll`` from 0, as the kernel
    counts them), named by the Python walk of that seat (walked once: ``memo``)."""
    nb = an.rules.n_boxes
    key = (id(rec), seat)
    if key not in memo:
        turns = [t for t in rec.turns if t.seat == seat]
        memo[key] = (turns, an.seat(turns, seat, details=True).details)
    turns, details = memo[key]
    col, tt = turn // nb + 1, turn % nb + 1
    d = next(x for x in details if (x.column, x.turn, x.roll, x.kind) == (col, tt, roll + 1, kind))
    return worst_of(d, turns, seat, rec.game, lineup)


def _rules_key(rules: str, settings: Mapping[str, Any], spec: Mapping[str, Any] | None = None) -> str:
    return json.dumps([rules, dict(settings), spec], sort_keys=True, default=str)


class _Game(NamedTuple):
    """What the analysis needs of a game before its turns: its place ``i`` in the source, lineup,
    id, seed, seat labels, whether it is complete, its rules and settings (and the rule set it
    carries, ``spec``), the rule set reading loaded (``ruleset``, None when not read), and
    ``record()``, the :class:`GameRecord` (built only for a game whose decisions are named)."""

    i: int
    lineup: int | None
    game: Any
    seed: int | None
    labels: tuple[str, ...]
    complete: bool
    rules: str
    settings: Mapping[str, Any]
    record: Callable[[], GameRecord]
    spec: Mapping[str, Any] | None = None
    ruleset: RuleSet | None = None


def _games(
    records: Sequence[GameRecord],
    lineups: Sequence[int | None],
    run: RunRecords | None,
    rule_sets: Sequence[RuleSet] | None = None,
) -> Iterator[_Game]:
    """The games of a source: records, or a run's arrays (no record built until asked, then kept)."""
    if run is None:
        for i, (rec, lu) in enumerate(zip(records, lineups)):
            yield _Game(
                i,
                lu,
                rec.game,
                rec.seed,
                tuple(s.label for s in rec.seats),
                rec.complete,
                rec.rules,
                rec.settings,
                lambda rec=rec: rec,
                rec.rules_spec,
                rule_sets[i] if rule_sets is not None else None,
            )
        return
    built: dict[int, GameRecord] = {}

    def record(i: int) -> GameRecord:
        if i not in built:
            built[i] = run.record(i)
        return built[i]

    labels: dict[int, tuple[str, ...]] = {}
    for i, (g, lu) in enumerate(zip(run.game.tolist(), run.lineup.tolist())):
        if lu not in labels:
            labels[lu] = run.labels(i)
        yield _Game(
            i,
            lu,
            g,
            run.seed,
            labels[lu],
            True,
            run.rules_name,
            run.settings,
            lambda i=i: record(i),
            None,
            run.load_rules(),
        )


def _batch_arrays(
    an: Analyser, batch: Sequence[_Game], run: RunRecords | None, whole: tuple[int, KernelArrays | None] = (0, None)
) -> KernelArrays:
    """The kernel's arrays of ``batch``: a run's straight from its arrays, records through the codec
    (or ``whole`` = (games, arrays) of the stream's batch they were read in, when they are all of it)."""
    if run is None:
        if whole[1] is not None and len(batch) == whole[0]:
            return whole[1]
        return arrays_of_records([x.record() for x in batch], an.rules)
    lo, hi = batch[0].i, batch[-1].i + 1
    if hi - lo == len(batch):
        return run.arrays(lo, hi)
    parts = [run.arrays(x.i, x.i + 1) for x in batch]
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
        [g for p in parts for g in p[3]],
        np.concatenate([p[4] for p in parts]),
        [x for p in parts for x in p[5]],
    )


def analyse_records(
    source: ReadResult | RecordStream | Iterable[GameRecord],
    *,
    player: str | None = None,
    worst: int = 5,
    confidence: float = 0.95,
    cache_dir: Any = None,
) -> SkillReport:
    """Analyse every complete game of ``source`` (a :func:`harness.records.record.read_records` result, a
    :class:`harness.records.record.RecordStream`, walked a batch at a time, or records), every seat or
    only ``player``'s. Partial games are skipped into ``bad``. A run directory's games go from its
    arrays (``ReadResult.arrays``) to the kernel: only the games whose decisions enter a ``worst``
    list become records. Memory: a few numbers per seat-game (the tallies), besides a batch.

    The games of a rule set the advisor refuses (``saved_rolls``: the solver's table does not
    value banked rolls) are skipped into ``bad``, each named, and the others analysed.
    :class:`UserError`: ``player`` not in the source; :class:`harness.records.record.NoUsableGame` (every
    game skipped in its ``bad``): no game left to analyse.
    """
    stream = RecordStream.of(source)
    name = stream.source
    run: RunRecords | None = None
    places: Sequence[str] | None = None
    bad: list[BadGame] = []  # the games the analysis skips (after the reading's bad games)
    offset = 0  # games of the batches before this one
    whole: tuple[int, KernelArrays | None] = (0, None)  # this batch's games and their arrays, if read
    analysers: dict[str, Analyser] = {}
    refused: dict[str, str] = {}  # rules key -> why its games cannot be analysed
    names: dict[str, str] = {}
    tallies: dict[tuple[str, str], PlayerTally] = {}
    labels: dict[str, None] = {}
    games = 0
    pending: dict[str, list[_Game]] = {}

    def here(g: _Game) -> str:
        at = f" {places[g.i]}" if places is not None else f" lineup {g.lineup}" if g.lineup is not None else ""
        return f"{name}{at}: game {g.game}"

    def flush(key: str) -> None:
        nonlocal games
        batch, pending[key] = pending.get(key, []), []
        if not batch:
            return
        an = analysers[key]
        try:
            sums, table = an.arrays(_batch_arrays(an, batch, run, whole), decisions=True)
        except UserError:  # name the bad game(s): one at a time
            for item in batch:
                try:
                    an.arrays(_batch_arrays(an, [item], run))
                except UserError as exc:
                    bad.append(BadGame(item.game, f"{here(item)}: {exc}"))
                else:
                    pending[key].append(item)
            if len(pending[key]) < len(batch):
                flush(key)
            return
        assert table is not None
        kind = np.where(table.kind == 0, 0, np.where(table.upper, 1, 2))
        memo: dict[Any, Any] = {}
        cut = np.searchsorted(table.seatgame, np.arange(len(table.labels) + 1))
        row = 0
        for g in batch:
            games += 1
            cluster = (key, g.seed, g.game, "seeded") if g.seed is not None else (key, offset + g.i, "record")
            for seat, label in enumerate(g.labels):
                n, row = row, row + 1
                if player is not None and label != player:
                    continue
                t = tallies.get((key, label))
                if t is None:
                    t = tallies[(key, label)] = PlayerTally(label, names[key], worst)
                lo, hi = cut[n], cut[n + 1]

                def where(j: int, g: _Game = g, seat: int = seat, d: int = int(lo)) -> Worst:
                    return _worst_at(
                        an,
                        g.record(),
                        seat,
                        g.lineup,
                        int(table.turn[d + j]),
                        int(table.roll[d + j]),
                        "keep" if table.kind[d + j] == 0 else "box",
                        memo,
                    )

                t.add(
                    sums["final"][n],
                    sums["luck"][n],
                    sums["final"][n] - sums["luck"][n],
                    cluster,
                    table.regret[lo:hi],
                    kind[lo:hi],
                    where,
                )

    def take(g: _Game) -> None:
        for label in g.labels:
            labels[label] = None
        if not g.complete:
            bad.append(BadGame(g.game, f'{here(g)}: a partial game ("complete": false), not analysed'))
            return
        key = _rules_key(g.rules, g.settings, g.spec)
        if key not in analysers and key not in refused:
            try:
                # the rule set reading loaded (a record read from a file names only what it may)
                rules = g.ruleset or record_rules(g.rules, g.settings, g.game, spec=g.spec)
                analysers[key] = Analyser(rules, cache_dir)
            except UserError as exc:  # saved_rolls: the solver's table cannot value these games
                refused[key] = str(exc)
            st = ", ".join(f"{k}={v}" for k, v in g.settings.items())
            names[key] = f"{g.rules} ({st})" if st else str(g.rules)
        if key in refused:
            bad.append(BadGame(g.game, f"{here(g)}: not analysed: {refused[key]}"))
            return
        pending.setdefault(key, []).append(g)
        if len(pending[key]) >= BATCH:
            flush(key)

    for part in stream:
        run, places, whole = part.arrays, part.places, (len(part.games), part.kernel)
        for g in _games(part.games, part.lineups, run, part.rules):
            take(g)
        for key in list(pending):  # a batch's games are indexed in it: analysed before the next
            flush(key)
        offset += len(part.games)
    bad = [*stream.errors, *bad]
    if player is not None and not tallies:
        have = ", ".join(labels) or "none"
        raise UserError(f"player {player!r} is not in {name} (players: {have})")
    if not tallies:
        raise NoUsableGame(f"{name}: no game to analyse ({len(bad):,} skipped)", bad)
    several = len(analysers) > 1
    players = []
    for (key, label), t in tallies.items():
        p = t.result(confidence)
        if several:  # one player under two rule sets is two rows
            p = PlayerSkill(**{**p.__dict__, "label": f"{label} [{names[key]}]"})
        players.append(p)
    rules = tuple(
        {
            "rules": names[k],
            "start_value": an.adv.turn_start_value(an.adv.state({})),
            "columns": an.rules.columns,
            "digest": an.rules.digest,
        }
        for k, an in analysers.items()
    )
    return SkillReport(name, tuple(players), rules, games, tuple(bad), confidence)


# ---------------------------------------------------------------------------------------------
# tables (terminal, Markdown)


def tables(d: Mapping[str, Any]) -> list[Table]:
    """The analysis's tables (:class:`harness.util.render.Table`), from :meth:`SkillReport.to_dict`."""
    conf = ci_level(d["confidence"])
    main, kinds, worst = [], [], []
    lineups = any(w["lineup"] for p in d["players"] for w in p["worst"])  # a run's lineup 0 alone is noise
    for p in d["players"]:
        vr = p["variance_reduction"]
        lo, hi = p["adjusted_ci"]
        main.append(
            [
                p["player"],
                count(p["games"]),
                num(p["mean"]),
                num(p["mean_luck"]),
                pm(p["adjusted_mean"], (hi - lo) / 2 if lo is not None else None),
                "exact" if vr is None else times(vr),
                num(p["decisions_per_game"], 1),
                num(p["regret_per_decision"], 3),
                num(p["regret_per_game"]),
                pct(p["error_rate"]),
                p["rating"],
            ]
        )
        row = [p["player"]]
        for k in ("keep", "box", "upper", "lower"):
            x = p["by_kind"][k]
            row.append(f"{num(x['regret_per_game'])} ({num(x['regret_per_decision'], 3)}, {pct(x['error_rate'])})")
        kinds.append(row)
        for w in p["worst"]:
            lu = [str(w["lineup"])] if lineups else []
            worst.append(
                [
                    p["player"],
                    *lu,
                    str(w["game"]),
                    str(w["seat"]),
                    str(w["column"]),
                    str(w["turn"]),
                    str(w["roll"]),
                    " ".join(map(str, w["dice"])),
                    keep_text(w["played"]),
                    keep_text(w["best"]),
                    num(w["regret"]),
                ]
            )
    out = [
        Table(
            f"Luck and skill per player (exact: final = start + luck - regret; adjusted = final - luck, "
            f"± {conf} CI over games; variance reduction = var(final) / var(adjusted))",
            [
                "player",
                "games",
                "mean",
                "luck",
                "adjusted",
                "var. red.",
                "decisions/game",
                "regret/decision",
                "regret/game",
                "errors",
                "rating",
            ],
            main,
        ),
        Table(
            "Regret by decision kind: points per game (per decision, error rate)",
            ["player", "keep", "box", "upper box", "lower box"],
            kinds,
        ),
    ]
    if worst:
        out.append(
            Table(
                "Worst decisions (cost in points against the best option)",
                [
                    "player",
                    *(["lineup"] if lineups else []),
                    "game",
                    "seat",
                    "column",
                    "turn",
                    "roll",
                    "dice",
                    "played",
                    "best",
                    "cost",
                ],
                worst,
            )
        )
    return out


def _header(d: Mapping[str, Any]) -> list[str]:
    def one(r: Mapping[str, Any]) -> str:
        cols = f" a column, {r['columns']} columns" if r["columns"] > 1 else ""
        return f"{r['rules']} (start value {num(r['start_value'])}{cols})"

    bands = ", ".join(f"{b['rating']} < {sig(b['regret_per_decision_below'], 6)}" for b in d["scale"][:-1])
    n = d["games"]
    return [
        f"Source: {d['source']} ({count(n)} game{'s' * (n != 1)} analysed, {count(len(d['bad_games']))} skipped)",
        f"Rules: {'; '.join(one(r) for r in d['rules'])}",
        f"Rating (mean regret per decision, points): {bands}, {d['scale'][-1]['rating']} above",
    ]


def text(d: Mapping[str, Any]) -> str:
    """The terminal form: the header, then each table with aligned columns (one line per player)."""
    return render_text(tables(d), _header(d))


def markdown(d: Mapping[str, Any]) -> str:
    """``analysis.md``: the header and every table as GitHub Markdown."""
    return md_document(tables(d), "Luck and skill", _header(d))


# ---------------------------------------------------------------------------------------------
# files and the command line


def default_out(source: str | Path) -> Path:
    """Where ``analyse`` writes by default: the run directory itself, else ``<file>.analysis/``."""
    p = Path(source)
    return p if p.is_dir() else p.with_name(p.name + ".analysis")


__all__ = [
    "REGRET_KINDS",
    "SCALE",
    "Band",
    "PlayerSkill",
    "PlayerTally",
    "SkillReport",
    "Worst",
    "analyse_records",
    "default_out",
    "rating",
    "tables",
    "text",
]
