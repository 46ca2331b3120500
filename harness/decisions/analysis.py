"""Luck and skill, exact: every roll's luck and every decision's regret of a recorded game.

For one seat and one column of a game, with V the optimal values of :class:`harness.decisions.positions.Advisor`
(points on the sheet + the expected rest under optimal play)::

    final = V(start) + sum of luck - sum of regret        (exactly, up to float rounding)

* Before a turn's first roll the position is worth ``turn_start_value``; the roll moves it to the
  value of the dice in hand (``roll_value``): that difference is the roll's **luck**.
* A keep is worth ``keep_value`` (its expectation over the reroll); the best option of the
  position is worth ``roll_value``: the difference is the keep's **regret**. The reroll's luck is
  the value of the new dice minus that expectation.
* Stopping with rerolls left is a keep decision too (worth the best box), then the box decision:
  its regret is the best box's value minus the chosen box's; the box's value is the next turn's
  ``turn_start_value``, and a full sheet's is the column's final points.

Each luck term has mean zero given everything before it, whatever the player's policy (it is a
value minus its own expectation over the dice), so ``final - luck`` is an unbiased estimate of a
player's expected score with a much smaller variance; for the optimal bot every regret is 0 and
``final - luck`` is V(start) exactly. Several columns add up their own V(start). Rule sets with
``saved_rolls`` are refused (the table does not value banked rolls; :class:`Advisor` says so).

Two implementations of the same walk: :meth:`Analyser.seat` in Python, decision by decision
through the advisor (the reference, and the one that names each decision for people), and
:meth:`Analyser.walk`, the numba kernel :func:`harness.decisions.kernels.walk` over whole batches
(what ``run --analyse``, ``analyse`` and ``fit`` use; tests hold the two equal to 1e-12 on every
rule set). :func:`decision_table` also gives every decision's option values as the solver bot's
softmax sees them: the likelihood of a choice under a bot model (:mod:`harness.players.fit`).

Public API::

    from harness.decisions.analysis import analyse_record, Analyser, decision_table
    an = Analyser(rules)                            # one advisor (solved table, plan cache) per rule set
    seats = an.record(record)                       # -> [SeatAnalysis] for a harness.records.notation.GameRecord
    s.start, s.luck, s.regret, s.final, s.decisions, s.errors, s.worst   # per seat
    sums, table = an.walk(rolls, keeps, boxes, decisions=True)  # (N, T, R) arrays, kernel speed
    an.recording(res.recording)                     # -> {"luck": (B, S), "regret", ...}: run --analyse
    table = decision_table(records)                 # -> DecisionTable of every decision of the records
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

import numpy as np

from harness.decisions import kernels as AK
from harness.game import pace
from harness.records.codec import (
    GameId,
    GameRecord,
    KernelArrays,
    RunRecords,
    Turn,
    arrays_of_recording,
    arrays_of_records,
    records_of_run,
)
from harness.util.errors import UserError
from harness.decisions.positions import Advisor, Position
from harness.records.record import RecordStream
from harness.game.rules import RuleSet
from harness.exact.solver import n_threads, run_blocks, split_range
from harness.decisions.scale import ERROR, SCALE, Band, Rated, Worst, keep_text, rating, worst_of  # noqa: F401

if TYPE_CHECKING:  # the engine (~0.03 s to import) only gives this method its argument
    from harness.game.loop import Recording

#: The kinds of decision, by their code in :attr:`DecisionTable.kind`: 0 keep (stop included), 1 box.
DECISION_KINDS = ("keep", "box")


@dataclass(frozen=True)
class Decision:
    """One decision of a seat: where (column, turn from 1, roll from 1), what kind ("keep" or
    "box"), what was chosen and what was best (faces kept, ``"stop"``, or a box name), their
    values and the regret (best - chosen, >= 0)."""

    column: int
    turn: int
    roll: int
    kind: str
    chosen: Any
    best: Any
    value: float
    best_value: float
    regret: float
    upper: bool = False  # a box decision that wrote an upper box

    def to_json(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "turn": self.turn,
            "roll": self.roll,
            "kind": self.kind,
            "chosen": self.chosen,
            "best": self.best,
            "value": self.value,
            "best_value": self.best_value,
            "regret": self.regret,
        }


@dataclass(frozen=True)
class SeatAnalysis:
    """One seat of one game: ``start`` (V at the start, columns added), ``luck`` and ``regret``
    (sums), ``final`` (points scored), ``decisions`` and ``errors`` (regret > :data:`ERROR`), the
    regret split by kind (``keep_regret``, ``box_regret``, of which ``upper_regret`` on upper
    boxes) and every decision when asked (``details``)."""

    seat: int
    label: str
    start: float
    luck: float
    regret: float
    final: int
    decisions: int
    errors: int
    keep_decisions: int
    box_decisions: int
    keep_regret: float
    box_regret: float
    upper_regret: float
    details: tuple[Decision, ...] = field(default=())

    @property
    def adjusted(self) -> float:
        """``final - luck`` (= ``start - regret``): the luck-adjusted score."""
        return self.final - self.luck

    @property
    def residual(self) -> float:
        """``final - (start + luck - regret)``: zero up to float rounding (the identity's check)."""
        return self.final - (self.start + self.luck - self.regret)


@dataclass(frozen=True)
class DecisionTable:
    """Every decision of a set of seat-games of one rule set, with the values of all its options.

    values: (D, W) float64 each legal option's value exactly as the solver bot's softmax sees it
    (keeps: the roll's sub-keeps in ``dice.sub_keep`` order, the last = keep all = stop; boxes: the
    allowed boxes in sheet order; the sheet's points and the roll's extra bonus, common to every
    option, left out), -inf past ``n[d]``; n: (D,) int16 legal options; chosen: (D,) int16 the
    column played; kind: (D,) int8 0 keep (stop included), 1 box; seatgame: (D,) int32 row of the
    seat-game in ``labels``/``games``/``seats``; turn: (D,) int16 the seat's turn (column x NB + t,
    from 0); roll: (D,) int8 the roll of the turn (from 0); upper: (D,) bool a box decision that
    wrote an upper box; regret: (D,) float64 best value - chosen value (as the sums count it);
    myopic: (D, W) float64 or None, each option's myopic value in the columns of ``values`` (the
    best box score reachable this turn from the option, what ``greedy`` maximises; defined in
    :func:`harness.decisions.kernels.walk`), when the walk was asked for it; paced: (D, W) float64
    or None likewise, each option's paced value (the value to a player who plays for the upper
    bonus as the ``bonus`` bot does, :mod:`harness.game.pace`; defined in the walk too).
    """

    values: np.ndarray
    n: np.ndarray
    chosen: np.ndarray
    kind: np.ndarray
    seatgame: np.ndarray
    turn: np.ndarray
    roll: np.ndarray
    upper: np.ndarray
    regret: np.ndarray
    labels: tuple[str, ...]
    games: tuple[GameId, ...]
    seats: np.ndarray
    myopic: np.ndarray | None = None
    paced: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.n)

    @property
    def player(self) -> np.ndarray:
        """(D,) the label of each decision's player."""
        return np.asarray(self.labels, dtype=object)[self.seatgame] if len(self.labels) else np.empty(0, object)


def costliest_decisions(
    run: Path, rules: RuleSet, wanted: Iterable[tuple[int, int, int]]
) -> dict[tuple[int, int, int], Worst]:
    """{(lineup, game, seat): its costliest decision} for the ``wanted`` seat-games of a recorded
    run, each seat-game analysed again from the run's records (the run's rows hold its regret, not
    where it was: the luck section of a report names them)."""
    wanted = set(wanted)
    an = Analyser(rules)
    out = {}
    for li in sorted({x[0] for x in wanted}):
        games = sorted({g for lu, g, _ in wanted if lu == li})
        for _, rec in records_of_run(run, lineup=li, games=games):
            for lu, g, s in sorted(x for x in wanted if x[0] == li and x[1] == rec.game):
                turns = [t for t in rec.turns if t.seat == s]
                a = an.seat(turns, s, details=True)
                d = max(a.details, key=lambda x: x.regret)
                out[(lu, g, s)] = worst_of(d, turns, s, g, lu)
    return out


def _faces_key(faces: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted((int(f) for f in faces), reverse=True))


class Analyser:
    """Analyses the games of one rule set (one :class:`Advisor`, so turn plans are shared)."""

    #: From this many seat-games a walk is split between the cores (a forked worker has one).
    PARALLEL_SEAT_GAMES = 256
    #: A box's myopic value is lowered by this many points per place in the boxes sorted by their
    #: highest score (stable), so that boxes of equal gain rank as ``greedy`` breaks their tie: the
    #: cheapest to give up first (``strategies.greedy.cheapest_first``); 20 boxes stay within 0.2
    #: points, the gains being whole points.
    MYOPIC_TIE = 0.01
    #: A box tied (within :data:`ERROR`) with the ``bonus`` bot's box in paced value, the first
    #: best in the same order, is lowered by this many points (the bot's tie rule; the paced values
    #: are not whole points, so only ties are moved).
    PACED_TIE = 0.01

    def __init__(self, rules: RuleSet, cache_dir: Any = None, advisor: Advisor | None = None) -> None:
        self.rules = rules
        self.adv = advisor or Advisor(rules, cache_dir)
        self.order = np.argsort(rules.box_max(), kind="stable").astype(np.int64)  # cheapest to give up first
        rank = np.empty(rules.n_boxes)
        rank[self.order] = np.arange(rules.n_boxes)
        self.box_tie = self.MYOPIC_TIE * rank
        self._pace: tuple[np.ndarray, np.ndarray] | None = None

    def pace(self) -> tuple[np.ndarray, np.ndarray]:
        """The bonus pace's tables (:func:`harness.game.pace.bonus_chance_table`, :func:`harness.game.pace.opportunity`),
        made on first use (the chance table imports scipy.stats)."""
        if self._pace is None:
            self._pace = (pace.bonus_chance_table(self.rules), pace.opportunity(self.rules))
        return self._pace

    def walk(
        self,
        rolls: np.ndarray,
        keeps: np.ndarray,
        boxes: np.ndarray,
        decisions: bool = False,
        myopic: bool = False,
        paced: bool = False,
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
        """The kernel over N seat-games: rolls, keeps (N, T, R) int16 and boxes (N, T) as
        :class:`harness.game.loop.Recording` holds them (one seat's slice). Returns the per-seat-game
        sums {name: (N,)} (:data:`harness.decisions.kernels.SUMS`) and, with ``decisions``, the
        per-decision arrays of :class:`DecisionTable` (without its labels); ``myopic`` adds
        each option's myopic value (:attr:`DecisionTable.myopic`; a second turn plan per turn),
        ``paced`` its paced value (:attr:`DecisionTable.paced`; a turn plan more)."""
        rules = self.rules
        rr = rules.rolls_per_turn - 1
        rolls = np.ascontiguousarray(rolls, dtype=np.int16)
        if rolls.ndim != 3 or rolls.shape[1] != rules.columns * rules.n_boxes:
            raise ValueError(f"rolls must be (N, {rules.columns * rules.n_boxes}, R), got {rolls.shape}")
        if rolls.shape[2] > rr + 1 and (rolls[:, :, rr + 1 :] >= 0).any():
            n, t = np.argwhere((rolls[:, :, rr + 1 :] >= 0).any(axis=2))[0]
            raise UserError(
                f"seat-game {n} turn {t % rules.n_boxes + 1}: more than {rules.name}'s "
                f"{rr + 1} rolls (saved rolls are not analysed)"
            )
        keeps = np.ascontiguousarray(keeps, dtype=np.int16)
        boxes = np.ascontiguousarray(boxes, dtype=np.int8)
        n = rolls.shape[0]
        sums = np.zeros((n, len(AK.SUMS)))
        sol = self.adv.sol
        dk = sol.plan.dice
        width = max(int(np.diff(dk.sub_ptr).max()), rules.n_boxes) if decisions else 1
        turns = (rolls[:, :, 0] >= 0).sum(axis=1)
        p_table, opp = self.pace() if paced and decisions else (np.zeros((1, 1)), np.zeros(rules.n_boxes))
        parts: dict[int, dict[str, np.ndarray]] = {}

        def block(a: int, b: int) -> None:  # seat-games a..b-1, into arrays of their own
            most = (b - a) * int(turns[a:b].max(initial=0)) * (rr + 1) if decisions else 0
            d = {
                "values": np.empty((most, width)),
                "n": np.empty(most, np.int16),
                "chosen": np.empty(most, np.int16),
                "kind": np.empty(most, np.int8),
                "seatgame": np.empty(most, np.int32),
                "turn": np.empty(most, np.int16),
                "roll": np.empty(most, np.int8),
                "regret": np.empty(most),
                "upper": np.empty(most, np.bool_),
                "myopic": np.empty((most if myopic else 0, width)),
                "paced": np.empty((most if paced else 0, width)),
            }
            got = AK.walk(
                self.adv.ctx,
                sol.plan.layout,
                dk,
                sol.values,
                (rules.n_boxes, rules.threshold, rules.bonus_value, ERROR),
                (rolls[a:b], keeps[a:b], boxes[a:b]),
                sums[a:b],
                decisions,
                (
                    d["values"],
                    d["n"],
                    d["chosen"],
                    d["kind"],
                    d["seatgame"],
                    d["turn"],
                    d["roll"],
                    d["regret"],
                    d["upper"],
                ),
                (d["myopic"], self.box_tie),
                (d["paced"], p_table, opp, rules.upper_face, pace.WEIGHT, self.order, self.PACED_TIE),
            )
            d["seatgame"] += a
            if not myopic:
                del d["myopic"]
            if not paced:
                del d["paced"]
            parts[a] = {k: v[:got] for k, v in d.items()}

        # the seat-games are independent and the kernel releases the GIL: split between the cores
        threads = n_threads() if n >= self.PARALLEL_SEAT_GAMES else 1
        run_blocks(block, split_range(0, n, threads) or [(0, 0)], threads)
        out = {name: sums[:, i] for i, name in enumerate(AK.SUMS)}
        if not decisions:
            return out, None
        if len(parts) == 1:
            return out, parts[0]
        return out, {k: np.concatenate([parts[a][k] for a in sorted(parts)]) for k in parts[0]}

    def recording(self, rec: Recording) -> dict[str, np.ndarray]:
        """Every seat-game of an engine :class:`~harness.game.loop.Recording` (B games, S seats):
        {name: (B, S)} of :data:`harness.decisions.kernels.SUMS` (``run --analyse``)."""
        b, s = rec.boxes.shape[:2]
        sums, _ = self.walk(*arrays_of_recording(rec))
        return {k: v.reshape(b, s) for k, v in sums.items()}

    def records(
        self, records: Sequence[GameRecord], decisions: bool = False, myopic: bool = False, paced: bool = False
    ) -> tuple[dict[str, np.ndarray], DecisionTable | None]:
        """Every seat of every (valid) game record of this rule set, a row per (game, seat) in that
        order: the sums, and with ``decisions`` the :class:`DecisionTable` (``myopic``, ``paced``:
        with its options' myopic, paced values)."""
        return self.arrays(arrays_of_records(records, self.rules), decisions, myopic, paced)

    def arrays(
        self, arrays: KernelArrays, decisions: bool = False, myopic: bool = False, paced: bool = False
    ) -> tuple[dict[str, np.ndarray], DecisionTable | None]:
        """:meth:`records` of games already in the kernel's arrays (:func:`harness.records.convert.arrays_of_records`,
        :meth:`harness.records.runs.RunRecords.arrays`)."""
        rolls, keeps, boxes, games, seats, labels = arrays
        sums, d = self.walk(rolls, keeps, boxes, decisions, myopic, paced)
        if d is None:
            return sums, None
        return sums, DecisionTable(**d, labels=tuple(labels), games=tuple(games), seats=seats)

    def record(self, record: GameRecord, details: bool = False) -> list[SeatAnalysis]:
        """Every seat of a (valid, complete) game record; ``details`` keeps each decision."""
        out = []
        labels = [s.label for s in record.seats]
        for seat in range(len(record.seats)):
            turns = [t for t in record.turns if t.seat == seat]
            out.append(self.seat(turns, seat, labels[seat], details))
        return out

    def seat(self, turns: Sequence[Turn], seat: int = 0, label: str = "", details: bool = False) -> SeatAnalysis:
        """One seat's turns (every column, in play order)."""
        adv, rules = self.adv, self.rules
        rr = rules.rolls_per_turn - 1
        start = luck = regret = 0.0
        final = 0
        n_keep = n_box = errors = 0
        keep_regret = box_regret = upper_regret = 0.0
        kept: list[Decision] = []
        columns = sorted({t.column for t in turns})
        for col in columns:
            state = adv.state({})
            v = adv.turn_start_value(state)
            start += v
            for t in (x for x in turns if x.column == col):
                if len(t.rolls) > rr + 1:
                    raise UserError(
                        f"seat {seat}, column {col} turn {t.turn}: {len(t.rolls)} rolls, more than "
                        f"{rules.name}'s {rr + 1} (saved rolls are not analysed)"
                    )
                for i, dice in enumerate(t.rolls):
                    left = rr - i
                    first = i == 0
                    pos = adv.position(state, dice, left, first)
                    after = adv.roll_value(pos)
                    luck += after - v
                    if i < len(t.rolls) - 1:  # a keep, then the reroll
                        chosen = adv.keep_value(state, t.keeps[i], left - 1)
                        d = self._keep(pos, col, t, i, chosen, after, t.keeps[i]) if details else None
                        reg = after - chosen
                        v = chosen
                        n_keep += 1
                        keep_regret += reg
                    else:
                        if left > 0:  # stopped with rerolls left: a keep ("stop") decision first
                            stop = adv.roll_value(Position(state, pos.roll, 0, first))
                            reg = after - stop
                            if details:
                                kept.append(self._keep(pos, col, t, i, stop, after, "stop"))
                            regret += reg
                            errors += reg > ERROR
                            n_keep += 1
                            keep_regret += reg
                            after = stop
                        chosen = adv.box_value(state, pos.roll, t.box, first)
                        reg = after - chosen
                        b = rules.box_index(t.box)
                        is_upper = rules.boxes[b].is_upper
                        d = None
                        if details:
                            best = adv.advise(Position(state, pos.roll, 0, first)).options[0].box
                            d = Decision(col, t.turn, i + 1, "box", t.box, best, chosen, after, reg, is_upper)
                        n_box += 1
                        box_regret += reg
                        upper_regret += reg if is_upper else 0.0
                        state = adv.after_box(state, pos.roll, t.box, first)
                        v = adv.turn_start_value(state)  # = chosen (box_value is the next turn's start)
                    regret += reg
                    errors += reg > ERROR
                    if d is not None:
                        kept.append(d)
            final += state.points
        return SeatAnalysis(
            seat,
            label,
            start,
            luck,
            regret,
            final,
            n_keep + n_box,
            int(errors),
            n_keep,
            n_box,
            keep_regret,
            box_regret,
            upper_regret,
            tuple(kept),
        )

    def _keep(self, pos: Position, col: int, t: Turn, i: int, chosen: float, best_value: float, what: Any) -> Decision:
        best = self.adv.advise(pos).options[0]
        shown = "stop" if what == "stop" else list(_faces_key(what))
        return Decision(
            col,
            t.turn,
            i + 1,
            "keep",
            shown,
            "stop" if best.stop else list(best.keep or ()),
            chosen,
            best_value,
            best_value - chosen,
        )


def analyse_record(record: GameRecord, details: bool = False, cache_dir: Any = None) -> list[SeatAnalysis]:
    """:meth:`Analyser.record` with the record's own rule set."""
    return Analyser(record.load_rules(), cache_dir).record(record, details)


def decision_batches(
    records: Sequence[GameRecord] | RunRecords | RecordStream,
    games: int,
    cache_dir: Any = None,
    analyser: Analyser | None = None,
    rules: RuleSet | None = None,
    myopic: bool = False,
    paced: bool = False,
) -> Iterator[tuple[int, DecisionTable]]:
    """:func:`decision_table` of ``records`` ``games`` games at a time: (games in the batch, its
    table) per batch, in order (a big log walked in bounded memory; the same checks; ``myopic``:
    the tables carry the options' myopic values, :attr:`DecisionTable.myopic`; ``paced``, their
    paced values). A
    :class:`harness.records.record.RecordStream` is walked batch by batch with one analyser (a batch of
    another rule set than those before is the same :class:`UserError` as a mix)."""
    if isinstance(records, RecordStream):
        an, keys = analyser, set()
        for part in records:
            if part.arrays is not None:
                an = an or Analyser(part.arrays.load_rules(), cache_dir)
                yield from decision_batches(part.arrays, games, analyser=an, myopic=myopic, paced=paced)
                continue
            recs = list(part.games)
            keys |= _rules_keys(recs)
            an = _analyser_of(recs, cache_dir, an, part.rules[0] if part.rules else None, keys)
            if part.kernel is not None and len(recs) <= games:  # the arrays the reading checked
                _, table = an.arrays(part.kernel, decisions=True, myopic=myopic, paced=paced)
                assert table is not None
                yield len(recs), table
                continue
            yield from decision_batches(recs, games, analyser=an, myopic=myopic, paced=paced)
        return
    if isinstance(records, RunRecords):
        if not len(records):
            raise UserError("no game records to analyse")
        an = analyser or Analyser(records.load_rules(), cache_dir)
        for lo in range(0, len(records), games):
            hi = min(lo + games, len(records))
            _, table = an.arrays(records.arrays(lo, hi), decisions=True, myopic=myopic, paced=paced)
            assert table is not None
            yield hi - lo, table
        return
    recs = list(records)
    an = _analyser_of(recs, cache_dir, analyser, rules)
    for lo in range(0, len(recs), games):
        part = recs[lo : lo + games]
        _, table = an.records(part, decisions=True, myopic=myopic, paced=paced)
        assert table is not None
        yield len(part), table


def _rules_keys(recs: Sequence[GameRecord]) -> set[tuple[Any, ...]]:
    """The rule sets and settings of ``recs``, each as a key (inline rule sets by their content)."""
    return {
        (
            r.rules,
            tuple(sorted((k, str(v)) for k, v in r.settings.items())),
            None if r.rules_spec is None else json.dumps(r.rules_spec, sort_keys=True, default=str),
        )
        for r in recs
    }


def _analyser_of(
    recs: Sequence[GameRecord],
    cache_dir: Any,
    analyser: Analyser | None,
    rules: RuleSet | None = None,
    keys: set[tuple[Any, ...]] | None = None,
) -> Analyser:
    """The analyser of records of one rule set and settings (a mix, or none, is a :class:`UserError`);
    ``rules``: their rule set as reading loaded it, else loaded from what they name; ``keys``: the
    rule sets of the records before them too (:func:`_rules_keys`)."""
    if not recs:
        raise UserError("no game records to analyse")
    keys = _rules_keys(recs) if keys is None else keys
    if len(keys) > 1:
        shown = "; ".join(
            f"{name}{' (inline)' if spec else ''} {dict(s) or ''}".strip() for name, s, spec in sorted(keys, key=str)
        )
        raise UserError(f"the records mix rule sets ({shown}): give the games of one rule set")
    return analyser or Analyser(rules or recs[0].load_rules(), cache_dir)


def decision_table(
    records: Iterable[GameRecord] | RunRecords,
    cache_dir: Any = None,
    analyser: Analyser | None = None,
    rules: RuleSet | None = None,
    myopic: bool = False,
    paced: bool = False,
) -> DecisionTable:
    """Every decision of ``records`` (valid game records of one rule set and settings; a mix is a
    :class:`UserError`; or a run's :class:`harness.records.runs.RunRecords`, straight from its arrays)
    with its options' values: :meth:`Analyser.records`. ``rules``: the records' rule set as
    reading loaded it (:attr:`harness.records.record.ReadResult.rules`), else loaded from what they name;
    ``myopic``, ``paced``: with the options' myopic, paced values (:attr:`DecisionTable.myopic`,
    :attr:`DecisionTable.paced`)."""
    if isinstance(records, RunRecords):
        if not len(records):
            raise UserError("no game records to analyse")
        an = analyser or Analyser(records.load_rules(), cache_dir)
        _, table = an.arrays(records.arrays(), decisions=True, myopic=myopic, paced=paced)
        assert table is not None
        return table
    recs = list(records)
    an = _analyser_of(recs, cache_dir, analyser, rules)
    _, table = an.records(recs, decisions=True, myopic=myopic, paced=paced)
    assert table is not None
    return table
