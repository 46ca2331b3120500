"""A fit's report: every player's fit, the pooled fit, the median player, the model choice and the
population picture (:class:`FitReport`), made from a decision table (:func:`fit_table`) or from game
records of any size, a batch at a time (:func:`fit_records`), through the players' store of a
fit (:class:`_Store`); and :func:`play_table`, the decision table of bots playing (tests and
benchmarks)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from harness.decisions.analysis import SCALE, Analyser, DecisionTable, decision_batches
from harness.game import registry
from harness.game.loop import play
from harness.players.fit.choice import ModelChoice, fold, holdout
from harness.players.fit.models import MODELS, mixes, parse_models
from harness.players.fit.player import (
    MAX_HALF_WIDTH,
    MIN_DECISIONS,
    RESOLUTION,
    STEPS,
    FitOptions,
    PlayerCounts,
    PlayerFit,
    fit_choices,
)
from harness.players.fit.store import MAX_MEMORY, DecisionStore
from harness.records.codec import arrays_of_recording
from harness.records.record import GameRecord, ReadResult, RecordStream
from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.util.progress import bar

#: Games walked per batch when a fit reads its records (the per-option table of a batch only).
BATCH_GAMES = 2000


@dataclass(frozen=True)
class FitOrigin:
    """Where a fit's decisions came from, as its report says: the ``source`` (a file or run
    directory), the ``rules`` (name and settings), the ``games`` read and the ``bad`` ones skipped
    (their messages)."""

    source: str = ""
    rules: str = ""
    games: int = 0
    bad: Sequence[str] = ()


@dataclass(frozen=True)
class FitReport:
    """Every player's fit, the pooled fit, the median player, and the games skipped; with several
    models, the other models' reports (``alternatives``), each player's :class:`ModelChoice` and
    the held-out split's seed."""

    source: str
    rules: str
    model: str
    confidence: float
    games: int
    players: tuple[PlayerFit, ...]
    pooled: PlayerFit | None
    median: str | None
    bad: tuple[str, ...] = field(default=())
    min_decisions: int = MIN_DECISIONS
    max_half_width: float = MAX_HALF_WIDTH
    alternatives: tuple[FitReport, ...] = field(default=())
    choice: tuple[ModelChoice, ...] = field(default=())
    holdout_seed: int | None = None

    def player(self, name: str) -> PlayerFit:
        for p in self.players:
            if p.player == name:
                return p
        raise UserError(f"no player {name!r} in the fit (players: {', '.join(p.player for p in self.players)})")

    def model_fit(self, model: str) -> FitReport:
        """The report of ``model`` (this one or an alternative)."""
        for r in (self, *self.alternatives):
            if r.model == model:
                return r
        known = ", ".join(r.model for r in (self, *self.alternatives))
        raise UserError(f"no model {model!r} in the fit (models: {known})")

    def population(self) -> dict[str, Any]:
        """The skill bands of the players (:data:`harness.decisions.analysis.SCALE`, each player's band the
        :func:`harness.decisions.analysis.rating` of its :attr:`PlayerFit.regret_per_decision`) that have
        players, best first, each with its range of regret per decision [from, below) (the last band's
        below: inf, null in the JSON), its players, their regret per decision and their fitted parameters under each model."""
        ps = [p for p in self.players if p.all_decisions]
        out = []
        for lo, b in zip((0.0, *(x.below for x in SCALE)), SCALE):
            mine = [p for p in ps if p.band == b.name]
            if not mine:
                continue
            models = {}
            for r in (self, *self.alternatives):
                fits = [r.player(p.player) for p in mine]
                models[r.model] = {k: [f.params[k].value for f in fits] for k in MODELS[r.model]}
            out.append(
                {
                    "band": b.name,
                    "from": lo,
                    "below": b.below,
                    "players": [p.player for p in mine],
                    "regret_per_decision": [p.regret_per_decision for p in mine],
                    "params": models,
                }
            )
        return {
            "definition": "the rating scale of analyse (harness.decisions.analysis.SCALE) of the players' regret per "
            "decision (exact regret summed over every decision / every decision)",
            "scale": [{"band": b.name, "below": b.below} for b in SCALE],
            "bands": out,
        }

    def to_dict(self) -> dict[str, Any]:

        d = {
            "format": "yatzy-fit/1",
            "source": self.source,
            "rules": self.rules,
            "model": self.model,
            "confidence": self.confidence,
            "games": self.games,
            "median_player": self.median,
            "evidence": {
                "min_decisions": self.min_decisions,
                "max_half_width": self.max_half_width,
                "resolution": RESOLUTION,
            },
            "players": [p.to_dict() for p in self.players],
            "pooled": None if self.pooled is None else self.pooled.to_dict(),
            "bad_games": list(self.bad),
        }
        if len(self.players) > 1:
            pop = self.population()
            d["population"] = pop
            for p, f in zip(d["players"], self.players):
                p["band"] = f.band
        if self.alternatives or self.choice:
            d["alternatives"] = [r.to_dict() for r in self.alternatives]
            d["model_choice"] = {"seed": self.holdout_seed, "players": [c.to_dict() for c in self.choice]}
        return jsonable(d)


def fit_table(
    table: DecisionTable,
    model: str,
    *,
    player: str | None = None,
    origin: FitOrigin = FitOrigin(),
    options: FitOptions = FitOptions(),
) -> FitReport:
    """Fit ``model`` (or several: :func:`parse_models`) to every player of a
    :class:`harness.decisions.analysis.DecisionTable` (or ``player`` alone), and to all of them pooled (when
    more than one and ``options.pooled``); several models are also compared player by player on
    held-out games. ``origin``: where the table came from, as the report says;
    ``options.max_memory``: bytes of decisions kept in memory (:class:`DecisionStore`)."""
    models = parse_models(model)
    store = _Store.for_models(models, options)
    try:
        store.add(table)
        return store.fit(models, player=player, origin=origin, options=options)
    finally:
        store.close()


class _Store:
    """The players' decisions of a fit, added a :class:`~harness.decisions.analysis.DecisionTable` (a batch
    of games) at a time: a :class:`DecisionStore` (with the myopic values when a model needs
    them; at most ``max_memory`` bytes of it in memory, the rest in scratch files that
    :meth:`close` removes) and the players' seat-games. Player number c's decisions are stored
    under two codes, 2c for its seat-games in the training half of the held-out split of ``seed``
    (:func:`fold`), 2c + 1 for the others; without a seed (one model: no held-out comparison) all
    under 2c, so that a player's identical decisions merge into one row as before."""

    def __init__(
        self, myopic: bool = False, seed: int | None = 1, paced: bool = False, max_memory: int = MAX_MEMORY
    ) -> None:
        self.b = DecisionStore(myopic=myopic, paced=paced, max_bytes=max_memory)
        self.code: dict[str, int] = {}
        self.seat_games: dict[str, int] = {}
        self.all_decisions: dict[str, int] = {}  # every decision, one legal option included
        self.seed = seed

    @classmethod
    def for_models(cls, models: Sequence[str], options: FitOptions) -> _Store:
        """The store ``models`` need (their mixes' values; a held-out split when there are several)."""
        need = mixes(models)
        return cls(
            myopic="myopic" in need,
            paced="paced" in need,
            seed=options.holdout_seed if len(models) > 1 else None,
            max_memory=options.max_memory,
        )

    def add(self, table: DecisionTable) -> None:
        for x in table.labels:
            self.code.setdefault(x, len(self.code))
            self.seat_games[x] = self.seat_games.get(x, 0) + 1
        codes = np.array(
            [
                2 * self.code[x] + (0 if self.seed is None else fold(self.seed, g, int(s)))
                for x, g, s in zip(table.labels, table.games, table.seats)
            ],
            dtype=np.int32,
        )
        who = codes[np.asarray(table.seatgame)] if len(codes) else np.zeros(len(table), np.int32)
        per_seat_game = (
            np.bincount(np.asarray(table.seatgame), minlength=len(table.labels))
            if len(table)
            else np.zeros(len(table.labels), np.int64)
        )
        for x, k in zip(table.labels, per_seat_game.tolist()):
            self.all_decisions[x] = self.all_decisions.get(x, 0) + k
        for what, wanted, got in (("myopic", self.b.myopic, table.myopic), ("paced", self.b.paced, table.paced)):
            if wanted and got is None:
                raise ValueError(f"the decision table has no {what} values (walk it with {what}=True)")
        self.b.add(
            table.values,
            table.n,
            table.chosen,
            table.kind,
            who,
            table.myopic if self.b.myopic else None,
            table.paced if self.b.paced else None,
        )

    def codes(self, names: Sequence[str]) -> list[int]:
        return [2 * self.code[x] + f for x in names for f in (0, 1)]

    def close(self) -> None:
        self.b.close()

    def fit(self, models: Sequence[str], *, player: str | None, origin: FitOrigin, options: FitOptions) -> FitReport:

        confidence, min_decisions, max_half_width = options.confidence, options.min_decisions, options.max_half_width
        names = list(self.code)
        if player is not None:
            if player not in names:
                raise UserError(f"no player {player!r} in the records (players: {', '.join(names)})")
            names = [player]
        pool = options.pooled and len(names) > 1
        per_game = {x: self.b.regret_sum(self.codes([x])) / self.seat_games[x] for x in names}
        several = len(models) > 1
        reports = []
        with bar(
            STEPS * (len(names) * len(models) + pool) + several * len(names) * len(models),
            "fitting",
            "step",
            quiet=options.quiet,
        ) as shown:
            mine = {x: self.b.blocks([self.code[x]]) for x in names}
            for model in models:
                fits = []
                for name in names:
                    shown.set_postfix_str(f"{name} {model}", refresh=False)
                    counts = PlayerCounts(self.seat_games[name], per_game[name], self.all_decisions[name])
                    fits.append(fit_choices(mine[name], model, name, counts=counts, options=options, step=shown.update))
                together = None
                if pool and model == models[0]:  # the pool of the first model only
                    shown.set_postfix_str(f"(pooled) {model}", refresh=False)
                    codes = self.codes(names)
                    sgs = sum(self.seat_games[x] for x in names)
                    counts = PlayerCounts(
                        sgs, self.b.regret_sum(codes) / sgs, sum(self.all_decisions[x] for x in names)
                    )
                    together = fit_choices(
                        self.b.blocks([self.code[x] for x in names]),
                        model,
                        "(pooled)",
                        counts=counts,
                        options=options,
                        step=shown.update,
                    )
                # the median player: among the players with enough evidence (a fit below it is no answer)
                ranked = sorted((f.player for f in fits if f.enough), key=lambda x: (per_game[x], x))
                median = ranked[(len(ranked) - 1) // 2] if ranked else None
                reports.append(
                    FitReport(
                        origin.source,
                        origin.rules,
                        model,
                        confidence,
                        origin.games,
                        tuple(fits),
                        together,
                        median,
                        tuple(origin.bad),
                        min_decisions,
                        max_half_width,
                    )
                )
            choice = []
            if several:
                for name in names:
                    train, test = mine[name].where(half=0), mine[name].where(half=1)
                    rows = []
                    for model in models:
                        shown.set_postfix_str(f"{name} {model} held out", refresh=False)
                        rows.append(holdout(train, test, model))
                        shown.update()
                    choice.append(ModelChoice(name, train.decisions, test.decisions, tuple(rows)))
        first = reports[0]
        if not several:
            return first
        return dataclasses.replace(first, alternatives=tuple(reports[1:]), choice=tuple(choice), holdout_seed=self.seed)


def fit_records(
    source: ReadResult | RecordStream | Iterable[GameRecord],
    model: str,
    *,
    player: str | None = None,
    cache_dir: Any = None,
    options: FitOptions = FitOptions(),
) -> FitReport:
    """Fit ``model`` (or several, :func:`parse_models`: then compared player by player on the
    held-out half of each player's games, split by ``options.holdout_seed``) to game records: a
    :class:`harness.records.record.ReadResult`, a :class:`harness.records.record.RecordStream` (a log of any size,
    read a batch at a time) or records of one rule set. The records are walked :data:`BATCH_GAMES`
    games at a time and only what the likelihood needs is kept (:class:`DecisionStore`: the
    distinct decisions, about 110 bytes each, 4 bytes more an option with the myopic values the
    ``mixed`` model needs, 4 more with the paced values of ``paced``; at most ``options.max_memory`` bytes of them in
    memory, the rest in a scratch file, read a block at a time, removed when the fit ends or fails: memory does not
    grow with the log); ``options.quiet=False`` shows progress bars on stderr (a stream draws its own while it is
    read). Every player is fitted (or ``player`` alone) and, with ``options.pooled`` (the default), all of them
    pooled too."""
    models = parse_models(model)
    stream = RecordStream.of(source)
    held = stream.held
    if held is not None and not len(held.games):
        raise UserError(f"{held.source}: no game records to fit")
    need = mixes(models)
    store = _Store.for_models(models, options)
    quiet = options.quiet
    games = 0
    try:
        with bar(
            None if held is None else len(held.games), "decisions", "game", quiet=quiet or held is None, unit_scale=True
        ) as shown:
            for n, table in decision_batches(
                stream, BATCH_GAMES, cache_dir=cache_dir, myopic="myopic" in need, paced="paced" in need
            ):
                store.add(table)
                games += n
                shown.update(n)
        assert stream.named is not None
        rules_name, settings = stream.named
        rules = rules_name + "".join(f" {k}={v}" for k, v in sorted(settings.items()))
        origin = FitOrigin(stream.source, rules, games, tuple(b.message for b in stream.errors))
        return store.fit(models, player=player, origin=origin, options=options)
    finally:
        store.close()


def play_table(
    analyser: Analyser,
    specs: Sequence[str],
    games: int | np.ndarray,
    seed: int,
    myopic: bool = True,
    paced: bool = False,
) -> DecisionTable:
    """The :class:`~harness.decisions.analysis.DecisionTable` of bots ``specs`` playing ``games`` games (a
    count, or the game indices) at one table with ``seed``, straight from the engine's recording
    (no records written; for tests and benchmarks), with the options' myopic values unless not
    ``myopic`` and with their paced values if ``paced``. Each seat-game is labelled with its bot's
    label."""

    rules = analyser.rules
    idx = np.arange(games, dtype=np.int64) if np.isscalar(games) else np.asarray(games, dtype=np.int64)
    bots = [registry.make(s, rules) for s in specs]
    rec = play(rules, bots, idx, seed, record=True).recording
    b, s = rec.boxes.shape[:2]
    _, d = analyser.walk(*arrays_of_recording(rec), decisions=True, myopic=myopic, paced=paced)
    return DecisionTable(
        **d,
        labels=tuple(bot.label for _ in range(b) for bot in bots),
        games=tuple(int(g) for g in idx for _ in range(s)),
        seats=np.tile(np.arange(s, dtype=np.int16), b),
    )
