"""The batched game engine: B games at a table of S seats, played in lockstep as array operations.

Every game of a batch is at the same turn, so each step (roll, keep, reroll, fill a box) is one
numpy operation over the batch, and each seat's strategy answers for all B games at once. The dice
come from :mod:`harness.game.rng`, keyed by (root seed, game index), so results do not depend on the
batch a game is played in (DESIGN.md decision 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from harness.game import rng
from harness.util import jit
from harness.game.loop_kernels import follow_leads, reroll, throw
from harness.util.errors import interrupted
from harness.game.outcome import deficit_round, outcomes, ranking_scores
from harness.game.rules import RuleSet
from harness.game.scoring import context, score_options_batch
from harness.game.strategy import CHOOSE_STEP, Strategy, TurnView, keep_error, validate_choice, validate_keep
from harness.game.tournament import MAX_SEATS

if TYPE_CHECKING:
    import pandas as pd


class StrategyError(RuntimeError):
    """A strategy raised or answered illegally; names the bot, seat, turn and the games involved.

    Numbered as ``replay`` prints a game: ``turn`` counts from 1 within its ``column`` (from 1;
    named only when the rules play more than one), ``roll`` is the roll a keep answered (1 for the
    first) or 0 for the choice of a box. Seats and games are indices from 0, as everywhere.
    """

    def __init__(
        self,
        label: str,
        seat: int,
        turn: int,
        games: np.ndarray,
        cause: BaseException,
        *,
        roll: int = 0,
        column: int = 1,
        columns: int = 1,
    ) -> None:
        self.label, self.seat, self.turn, self.roll = label, seat, turn, roll
        self.column, self.columns = column, columns
        self.games = np.asarray(games)
        self.cause = cause
        first = int(self.games[0]) if self.games.size else -1
        span = f"game {first}" if self.games.size == 1 else f"games {first}..{int(self.games[-1])}"
        super().__init__(
            f"strategy {label} (seat {seat}) failed at {self.at} in {span}: {type(cause).__name__}: {cause}"
        )

    @property
    def at(self) -> str:
        """``turn 4 (keep after roll 1)``, ``column 2 turn 3 (box choice)``: where replay shows it."""
        col = f"column {self.column} " if self.columns > 1 else ""
        what = f"keep after roll {self.roll}" if self.roll else "box choice"
        return f"{col}turn {self.turn} ({what})"


@dataclass(frozen=True)
class Recording:
    """Every roll and decision of B games with S seats: what records, luck and regret are made of.

    ``T = columns x NB`` turns per seat (turn index ``column * NB + t``); ``R`` the most rolls a
    turn can have (``rolls_per_turn``, more with ``saved_rolls``). Indices are the rule set's
    dice indices (:class:`harness.game.dice.Dice`: ``roll_faces``, ``keep_counts``):

    rolls: (B, S, T, R) int16 the roll after roll r (r = 0: the turn's first), -1 once the turn stopped;
    keeps: (B, S, T, R) int16 the keep chosen after roll r (keeping the whole roll = stop), -1 where
    no keep was asked (no rerolls left, or the turn had stopped);
    boxes: (B, S, T) int8 the box written; scores: (B, S, T) int16 its points; extras: (B, S, T)
    int16 extra yatzy bonus points earned by that turn; first: (B, S, T) bool the box was written on
    the turn's first roll (servida).
    """

    rolls: np.ndarray
    keeps: np.ndarray
    boxes: np.ndarray
    scores: np.ndarray
    extras: np.ndarray
    first: np.ndarray

    @classmethod
    def empty(cls, rules: RuleSet, b: int, s: int) -> Recording:
        t = rules.columns * rules.n_boxes
        r = max_rolls(rules)
        return cls(
            np.full((b, s, t, r), -1, np.int16),
            np.full((b, s, t, r), -1, np.int16),
            np.full((b, s, t), -1, np.int8),
            np.zeros((b, s, t), np.int16),
            np.zeros((b, s, t), np.int16),
            np.zeros((b, s, t), bool),
        )


def max_rolls(rules: RuleSet) -> int:
    """The most rolls one turn can have: ``rolls_per_turn``, plus every reroll saved earlier in
    the column with ``saved_rolls``."""
    r = rules.rolls_per_turn
    return r + (r - 1) * (rules.n_boxes - 1) if rules.saved_rolls else r


@dataclass(frozen=True)
class Results:
    """Outcome of B games with S seats (C columns, NB boxes).

    games: (B,) int64; total, upper, bonus, extra: (B, S) int32 summed over columns;
    boxes: (B, S, NB) int16 summed over columns; column_totals: (B, S, C) int32;
    outcome: (B, S) int8 (2 win, 1 draw = shared win, 0 loss; :mod:`harness.game.outcome`).
    The course of each game (:class:`Leads`, when :func:`play` followed it):
    lead_changes: (B,) int16; last_behind, deficit: (B, S) int16.
    """

    rules: RuleSet
    labels: tuple[str, ...]
    games: np.ndarray
    total: np.ndarray
    upper: np.ndarray
    bonus: np.ndarray
    extra: np.ndarray
    boxes: np.ndarray
    column_totals: np.ndarray
    outcome: np.ndarray
    #: every roll and decision, when :func:`play` was asked to record
    recording: Recording | None = None
    lead_changes: np.ndarray | None = None
    last_behind: np.ndarray | None = None
    deficit: np.ndarray | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per (game, seat): game, seat, strategy, total, upper, bonus, outcome, then boxes,
        then (when tracked) the game's ``lead_changes`` (on every seat's row), the seat's
        ``last_behind`` and ``deficit`` (int16; :class:`Leads`)."""
        # pandas here, not at the top: every command that plays or analyses imports this module,
        # and pandas is 0.4 s of CPU of start-up that `review`, `advise` and `analyse` never use
        # (benchmarks/BENCHMARKS.md "Game review")
        import pandas as pd

        b, s = self.total.shape
        cats = sorted(set(self.labels))
        cols: dict[str, Any] = {
            "game": np.repeat(self.games, s).astype(np.int64),
            "seat": np.tile(np.arange(s, dtype=np.int8), b),
            "strategy": pd.Categorical.from_codes(
                np.tile(np.array([cats.index(x) for x in self.labels]), b), categories=cats
            ),
            "total": self.total.reshape(-1).astype(np.int16),
            "upper": self.upper.reshape(-1).astype(np.int16),
            "bonus": self.bonus.reshape(-1).astype(np.int16),
            "outcome": self.outcome.reshape(-1).astype(np.int8),
        }
        if self.rules.extra_yatzy_bonus:
            cols["extra_bonus"] = self.extra.reshape(-1).astype(np.int16)
        if self.rules.columns > 1:
            cols["best_column"] = self.column_totals.max(axis=2).reshape(-1).astype(np.int16)
        flat = self.boxes.reshape(b * s, -1)
        for j, name in enumerate(self.rules.box_names):
            cols[name] = flat[:, j].astype(np.int16)
        if self.lead_changes is not None:
            cols["lead_changes"] = np.repeat(self.lead_changes, s).astype(np.int16)
            cols["last_behind"] = self.last_behind.reshape(-1).astype(np.int16)
            cols["deficit"] = self.deficit.reshape(-1).astype(np.int16)
        return pd.DataFrame(cols)


class Leads:
    """The course of B games at S seats, folded round by round (definitions: :mod:`harness.game.outcome`).

    Call :meth:`update` with the (B, S) ranking scores so far after every round, in order; then
    ``changes`` (B,) int16 lead changes, ``last_behind`` (B, S) int16 the last round after which
    each seat was behind (0: never), ``deficit`` (B, S) int16 the points behind the highest score
    after round ``at`` (:func:`harness.game.outcome.deficit_round`; 0 until that round is played).
    One numba pass per round (:func:`harness.game.loop_kernels.follow_leads`).
    """

    def __init__(self, b: int, s: int, rounds: int) -> None:
        self.at = deficit_round(rounds)
        self.round = 0
        self.leader = np.full(b, -1, dtype=np.int16)
        self.changes = np.zeros(b, dtype=np.int16)
        self.last_behind = np.zeros((b, s), dtype=np.int16)
        self.deficit = np.zeros((b, s), dtype=np.int16)

    def update(self, score: np.ndarray) -> None:
        """Fold the (B, S) ranking scores after the next round."""
        self.round += 1
        follow_leads(
            np.ascontiguousarray(score, dtype=np.int32),
            self.round,
            self.at,
            self.leader,
            self.changes,
            self.last_behind,
            self.deficit,
        )


class _Seat:
    """Per-seat sheet state of one column for B games."""

    def __init__(self, b: int, nb: int) -> None:
        self.sheet = np.zeros((b, nb), dtype=np.int16)
        self.filled = np.zeros(b, dtype=np.int64)
        self.upper = np.zeros(b, dtype=np.int16)
        self.flag = np.zeros(b, dtype=bool)
        self.extra = np.zeros(b, dtype=np.int32)


@dataclass(frozen=True)
class Written:
    """A box written in every game of a batch, all (B,): ``box`` with ``got`` points and ``extra``
    bonus points on ``roll`` (made on the turn's first roll: ``first``), leaving the column's upper
    subtotal ``upper`` and the running total ``total``."""

    box: np.ndarray
    got: np.ndarray
    extra: np.ndarray
    first: np.ndarray
    roll: np.ndarray
    upper: np.ndarray
    total: np.ndarray


class _Table:
    """Every seat's sheets of B games as :func:`play` fills them: the column being played, the
    running and ranking scores, the rolls saved, the sums over the columns played; and what a seat
    sees of it all at a decision (:meth:`view`)."""

    def __init__(self, rules: RuleSet, n_seats: int, games: np.ndarray, seed: int) -> None:
        b, nb, n_cols = len(games), rules.n_boxes, rules.columns
        self.rules, self.n_seats, self.b, self.games = rules, n_seats, b, games
        self.keys = rng.game_keys(seed, games)
        self.ctx = context(rules)
        self.upper_of = rules.upper_face > 0
        self.all = np.arange(b)
        self.col = 0
        self.sheets: list[_Seat] = []  # the column's, from :meth:`start_column`
        self.col_tot = np.zeros((b, n_seats, n_cols), dtype=np.int32)
        self.upper_t = np.zeros((b, n_seats), dtype=np.int32)
        self.bonus_t = np.zeros((b, n_seats), dtype=np.int32)
        self.extra_t = np.zeros((b, n_seats), dtype=np.int32)
        self.boxes_t = np.zeros((b, n_seats, nb), dtype=np.int16)
        self.running = np.zeros((b, n_seats), dtype=np.int32)
        self.saved = np.zeros((b, n_seats), dtype=np.int16)
        # ranking score so far = running total, or the best column so far when columns are not added
        self.best_of_columns = n_cols > 1 and not rules.add_columns
        self.col_now = np.zeros((b, n_seats), dtype=np.int32) if self.best_of_columns else self.running

    def start_column(self, col: int) -> None:
        """Fresh sheets: each column is a fresh game, and rolls saved in one do not carry into the next."""
        self.col = col
        self.sheets = [_Seat(self.b, self.rules.n_boxes) for _ in range(self.n_seats)]
        self.saved[:] = 0

    def view(
        self,
        s: int,
        strat: Strategy,
        turn: int,
        step: int,
        idx: np.ndarray,
        roll: np.ndarray,
        left: np.ndarray,
        first: np.ndarray,
        **fields: Any,
    ) -> TurnView:
        """What seat ``s`` sees of games ``idx`` at this decision (``fields``: those of a box choice)."""
        st, every_game = self.sheets[s], len(idx) == self.b
        if strat.sees_table:
            every = [
                np.stack([x.filled for x in self.sheets], 1),
                np.stack([x.upper for x in self.sheets], 1),
                np.stack([x.flag for x in self.sheets], 1),
            ]
            fields["seats"] = tuple(a if every_game else a[idx] for a in every)
        if every_game:  # no copies (strategies must not write into a view)
            return TurnView(
                self.rules,
                s,
                turn,
                self.col,
                step,
                self.games,
                self.keys,
                roll,
                left,
                first,
                st.filled,
                st.upper,
                st.flag,
                st.sheet,
                self.running,
                self.saved[:, s],
                **fields,
            )
        return TurnView(
            self.rules,
            s,
            turn,
            self.col,
            step,
            self.games[idx],
            self.keys[idx],
            roll,
            left,
            first,
            st.filled[idx],
            st.upper[idx],
            st.flag[idx],
            st.sheet[idx],
            self.running[idx],
            self.saved[idx, s],
            **fields,
        )

    def write(self, s: int, box: np.ndarray, got: np.ndarray, extra: np.ndarray) -> None:
        """Seat ``s`` writes ``got`` points in ``box`` and earns ``extra`` bonus points, in every game."""
        rules, st, allv = self.rules, self.sheets[s], self.all
        st.sheet[allv, box] = got
        st.filled |= np.int64(1) << box
        is_up = self.upper_of[box]
        st.upper += np.where(is_up, got, 0).astype(np.int16)
        if rules.key_box >= 0:
            hit = box == rules.key_box
            st.flag = np.where(hit, got > 0, st.flag)
        st.extra += extra
        bonus_now = np.where(st.upper >= rules.threshold, rules.bonus_value, 0)
        col_total = st.sheet.sum(axis=1, dtype=np.int32) + bonus_now + st.extra
        self.running[:, s] = self.col_tot[:, s, : self.col].sum(axis=1) + col_total
        if self.best_of_columns:
            self.col_now[:, s] = col_total

    def ranking_so_far(self) -> np.ndarray:
        """(B, S) every seat's ranking score so far (:mod:`harness.game.outcome`)."""
        if self.best_of_columns and self.col:
            return np.maximum(self.col_now, self.col_tot[:, :, : self.col].max(axis=2))
        return self.col_now

    def end_column(self) -> None:
        """Fold the column's sheets into the sums over the columns."""
        rules, col = self.rules, self.col
        for s, st in enumerate(self.sheets):
            bonus = np.where(st.upper >= rules.threshold, rules.bonus_value, 0)
            self.col_tot[:, s, col] = st.sheet.sum(axis=1, dtype=np.int32) + bonus + st.extra
            self.upper_t[:, s] += st.upper
            self.bonus_t[:, s] += bonus
            self.extra_t[:, s] += st.extra
            self.boxes_t[:, s, :] += st.sheet

    def results(self, labels: tuple[str, ...], rec: Recording | None, course: Leads | None) -> Results:
        total = self.col_tot.sum(axis=2)
        outcome = outcomes(ranking_scores(total, self.col_tot, self.rules.add_columns))
        sums = (
            self.rules,
            labels,
            self.games,
            total,
            self.upper_t,
            self.bonus_t,
            self.extra_t,
            self.boxes_t,
            self.col_tot,
            outcome,
            rec,
        )
        if course is None:
            return Results(*sums)
        return Results(*sums, course.changes, course.last_behind, course.deficit)


class _Watcher:
    """What :func:`play` tells of a batch as it goes (the seat ``s``, its column ``col`` and turn
    ``t`` from 0 within the column). Subclasses: :class:`_Recorder`, :class:`_Tracer`."""

    def rolled(self, s: int, col: int, t: int, roll: np.ndarray) -> None:
        """The turn's first roll (B,) of every game."""

    def kept(
        self, s: int, col: int, t: int, step: int, idx: np.ndarray, keep: np.ndarray, held: np.ndarray, roll: np.ndarray
    ) -> None:
        """Games ``idx`` kept ``keep`` of ``held`` (their dice after roll ``step``); ``roll`` (B,) the
        dice of every game after the reroll."""

    def wrote(self, s: int, col: int, t: int, w: Written) -> None:
        """A box written in seat ``s``'s column ``col`` at turn ``t`` of every game (:class:`Written`)."""


class _Recorder(_Watcher):
    """Writes every roll and decision into a :class:`Recording` (``play(record=True)``)."""

    def __init__(self, rec: Recording, rules: RuleSet) -> None:
        self.rec, self.nb, self.roll_as_keep = rec, rules.n_boxes, rules.dice.roll_as_keep

    def rolled(self, s: int, col: int, t: int, roll: np.ndarray) -> None:
        self.rec.rolls[:, s, col * self.nb + t, 0] = roll

    def kept(
        self, s: int, col: int, t: int, step: int, idx: np.ndarray, keep: np.ndarray, held: np.ndarray, roll: np.ndarray
    ) -> None:
        turn = col * self.nb + t
        self.rec.keeps[idx, s, turn, step] = keep
        go = keep != self.roll_as_keep[held]
        self.rec.rolls[idx[go], s, turn, step + 1] = roll[idx[go]]

    def wrote(self, s: int, col: int, t: int, w: Written) -> None:
        turn = col * self.nb + t
        self.rec.boxes[:, s, turn] = w.box
        self.rec.scores[:, s, turn] = w.got
        self.rec.extras[:, s, turn] = w.extra
        self.rec.first[:, s, turn] = w.first


class _Tracer(_Watcher):
    """Appends one dict per roll, keep and box of the batch's first game to ``trace`` (replay)."""

    def __init__(self, trace: list[dict[str, Any]], rules: RuleSet) -> None:
        self.trace, self.rules, self.d = trace, rules, rules.dice

    def _roll(self, s: int, col: int, t: int, step: int, roll: np.ndarray) -> None:
        self.trace.append(
            {
                "event": "roll",
                "seat": s,
                "column": col,
                "turn": t,
                "roll": step,
                "dice": self.d.roll_faces[roll[0]].tolist(),
            }
        )

    def rolled(self, s: int, col: int, t: int, roll: np.ndarray) -> None:
        self._roll(s, col, t, 0, roll)

    def kept(
        self, s: int, col: int, t: int, step: int, idx: np.ndarray, keep: np.ndarray, held: np.ndarray, roll: np.ndarray
    ) -> None:
        d = self.d
        stop = bool(keep[0] == d.roll_as_keep[held[0]])
        self.trace.append(
            {
                "event": "keep",
                "seat": s,
                "column": col,
                "turn": t,
                "roll": step,
                "keep": np.repeat(np.arange(1, 7), d.keep_counts[keep[0]]).tolist(),
                "stop": stop,
            }
        )
        if not stop:
            self._roll(s, col, t, step + 1, roll)

    def wrote(self, s: int, col: int, t: int, w: Written) -> None:
        self.trace.append(
            {
                "event": "box",
                "seat": s,
                "column": col,
                "turn": t,
                "box": self.rules.box_names[int(w.box[0])],
                "score": int(w.got[0]),
                "extra": int(w.extra[0]),
                "dice": self.d.roll_faces[w.roll[0]].tolist(),
                "first_roll": bool(w.first[0]),
                "upper": int(w.upper[0]),
                "total": int(w.total[0]),
            }
        )


def sample_views(rules: RuleSet, n_seats: int = 1) -> tuple[TurnView | None, TurnView]:
    """A keep (None when a turn has no reroll) and a box choice of game 0's first turn at seat 0,
    made as :func:`play` makes its views (the same arrays, dtypes and layouts) but without running
    any engine kernel: a bot answering them compiles its own kernels for exactly the signatures
    play passes (:meth:`harness.game.strategy.Strategy.warm_kernels`); the answers mean nothing."""
    table = _Table(rules, n_seats, np.zeros(1, dtype=np.int64), 0)
    table.start_column(0)
    roll, first = np.zeros(1, dtype=np.int16), np.ones(1, dtype=bool)
    left = np.full(1, rules.rolls_per_turn - 1, dtype=np.int16)
    keep = None
    if rules.rolls_per_turn > 1:
        idx = np.flatnonzero(left > 0)
        keep = table.view(0, _NoSeat(), 0, 0, idx, roll[idx], left[idx], first[idx])
    scores = np.ascontiguousarray(rules.table_first[roll], dtype=np.int16)
    allowed = np.full(1, (1 << rules.n_boxes) - 1 if not rules.forced else 1, dtype=np.int64)
    box = table.view(
        0,
        _NoSeat(),
        0,
        CHOOSE_STEP,
        table.all,
        roll,
        np.zeros(1, dtype=np.int16),
        first,
        options=scores,
        allowed=allowed,
        extra=np.zeros(1, dtype=np.int16),
    )
    return keep, box


def answer_samples(bot: Strategy) -> None:
    """Compile ``bot``'s kernels by answering :func:`sample_views` (the answers are discarded): what
    the built-in bots' :meth:`~harness.game.strategy.Strategy.warm_kernels` do."""
    keep, box = sample_views(bot.rules)
    if keep is not None:
        bot.keep(keep)
    bot.choose(box)


def engine_cached() -> bool:
    """Whether the engine's kernels are in numba's cache (else a first run compiles them)."""
    return all(jit.in_cache(k) for k in (throw, reroll, follow_leads, score_options_batch))


class _StandIn(Strategy):
    """Stops at once and writes the lowest allowed box: a seat for :func:`warm_engine` that runs no
    bot kernel (numpy only)."""

    name = "stand-in"

    def keep(self, view: TurnView) -> np.ndarray:
        return self.rules.dice.roll_as_keep[view.roll]

    def choose(self, view: TurnView) -> np.ndarray:
        return np.argmax(view.allowed_matrix(), axis=1)


def warm_engine(rules: RuleSet, n_seats: int = 2) -> None:
    """Compile the engine's kernels (one game of stand-ins that run no bot kernel), e.g. while a
    helper process compiles the bots' (:meth:`~harness.game.strategy.Strategy.warm_kernels`)."""
    play(rules, [_StandIn(rules)] * n_seats, np.zeros(1, dtype=np.int64), 0)


class _NoSeat:
    """What :meth:`_Table.view` asks of a strategy, for :func:`sample_views`."""

    sees_table = True


def play(
    rules: RuleSet,
    seats: Sequence[Strategy],
    games: np.ndarray,
    seed: int,
    trace: list[dict[str, Any]] | None = None,
    record: bool = False,
    leads: bool = True,
    seat_players: bool = True,
) -> Results:
    """Play games ``games`` (B,) int64 with one strategy per seat; returns :class:`Results`.

    ``trace``, when given, receives one dict per roll and per filled box (meant for B = 1: replay).
    ``record``: also return every roll and decision (:class:`Recording`, ``Results.recording``).
    ``leads``: follow the lead after every round (:class:`Leads`; the rows'
    ``lead_changes``, ``last_behind`` and ``deficit``); off only to measure what it costs.
    ``seat_players``: when every seat offers a whole-game player (:meth:`Strategy.seat_player`),
    play each seat's games with it (the same games); off, every decision goes through ``keep``
    and ``choose`` (what a test of those methods watches).
    """
    n_seats = len(seats)
    if not 1 <= n_seats <= MAX_SEATS:
        raise ValueError(f"a table seats 1..{MAX_SEATS} players, got {n_seats}")
    games = np.ascontiguousarray(games, dtype=np.int64)
    labels = tuple(s.label for s in seats)
    if seat_players and trace is None and not record and rules.columns == 1 and not rules.saved_rolls:
        players = [s.seat_player() for s in seats]
        if all(p is not None for p in players):
            return _play_seats(rules, players, labels, games, seed, leads)
    table = _Table(rules, n_seats, games, seed)
    rec = Recording.empty(rules, len(games), n_seats) if record else None
    course = Leads(len(games), n_seats, rules.columns * rules.n_boxes) if leads else None
    watchers: list[_Watcher] = []
    if rec is not None:
        watchers.append(_Recorder(rec, rules))
    if trace is not None:
        watchers.append(_Tracer(trace, rules))

    d, keys, allv, b, nb = rules.dice, table.keys, table.all, len(games), rules.n_boxes
    for col in range(rules.columns):
        table.start_column(col)
        for t in range(nb):
            turn = col * nb + t
            for s, strat in enumerate(seats):
                st = table.sheets[s]
                # the rolls: the first, then keeps and rerolls until every game stopped or has no reroll left
                roll = throw(keys, s, turn, d.n, d.roll_lookup, d.radix)
                first = np.ones(b, dtype=bool)
                left = np.full(b, rules.rolls_per_turn - 1, dtype=np.int16)
                if rules.saved_rolls:
                    left += table.saved[:, s]
                for w in watchers:
                    w.rolled(s, col, t, roll)
                active = left > 0
                step = 0
                while True:
                    idx = np.flatnonzero(active)
                    if idx.size == 0:
                        break
                    v = table.view(s, strat, turn, step, idx, roll[idx], left[idx], first[idx])
                    try:
                        keep = validate_keep(v, strat.keep(v), strat.label)
                        bad = reroll(
                            keys,
                            idx,
                            s,
                            turn,
                            step,
                            d.n,
                            roll,
                            keep,
                            d.keep_counts,
                            d.keep_size,
                            d.roll_counts,
                            d.roll_as_keep,
                            d.roll_lookup,
                            d.radix,
                            first,
                            left,
                            active,
                        )
                        if bad >= 0:
                            raise keep_error(rules, v, keep, strat.label, bad)
                    except Exception as exc:
                        if interrupted(exc):
                            raise KeyboardInterrupt from None
                        raise StrategyError(
                            strat.label, s, t + 1, games[idx], exc, roll=step + 1, column=col + 1, columns=rules.columns
                        ) from exc
                    for w in watchers:
                        w.kept(s, col, t, step, idx, keep, v.roll, roll)
                    step += 1
                if rules.saved_rolls:
                    table.saved[:, s] = left
                # the box: the strategy writes the dice in hand in one of the boxes they may go in
                scores, allowed, extra = score_options_batch(table.ctx, roll, first, st.flag, st.filled)
                v = table.view(
                    s,
                    strat,
                    turn,
                    CHOOSE_STEP,
                    allv,
                    roll,
                    np.zeros(b, dtype=np.int16),
                    first,
                    options=scores,
                    allowed=allowed,
                    extra=extra,
                )
                try:
                    box = validate_choice(v, strat.choose(v), strat.label)
                except Exception as exc:
                    if interrupted(exc):
                        raise KeyboardInterrupt from None
                    raise StrategyError(
                        strat.label, s, t + 1, games, exc, column=col + 1, columns=rules.columns
                    ) from exc
                got = scores[allv, box]
                table.write(s, box, got, extra)
                for w in watchers:
                    w.wrote(s, col, t, Written(box, got, extra, first, roll, st.upper, table.running[:, s]))
            if course is not None:
                course.update(table.ranking_so_far())
        table.end_column()
    return table.results(labels, rec, course)


def _play_seats(
    rules: RuleSet, players: Sequence[Any], labels: tuple[str, ...], games: np.ndarray, seed: int, leads: bool
) -> Results:
    """:func:`play` when every seat offers a whole-game player (:meth:`Strategy.seat_player`):
    each seat's games in one call, then the sums, outcomes and course of the games as the loop's
    :class:`_Table` and :class:`Leads` make them from the same sheets."""
    b, s, nb = len(games), len(players), rules.n_boxes
    keys = rng.game_keys(seed, games)
    boxes_t = np.zeros((b, s, nb), dtype=np.int16)
    upper_t = np.zeros((b, s), dtype=np.int32)
    extra_t = np.zeros((b, s), dtype=np.int32)
    running = np.zeros((b, s, nb), dtype=np.int32)
    for seat, player in enumerate(players):
        sheet, upper = np.zeros((b, nb), dtype=np.int16), np.zeros(b, dtype=np.int16)
        extra, run = np.zeros(b, dtype=np.int32), np.zeros((b, nb), dtype=np.int32)
        player(keys, seat, sheet, upper, extra, run)
        boxes_t[:, seat] = sheet
        upper_t[:, seat] = upper
        extra_t[:, seat] = extra
        running[:, seat] = run
    bonus_t = np.where(upper_t >= rules.threshold, rules.bonus_value, 0).astype(np.int32)
    col_tot = running[:, :, nb - 1 : nb].copy()
    total = col_tot.sum(axis=2)
    outcome = outcomes(ranking_scores(total, col_tot, rules.add_columns))
    sums = (rules, labels, games, total, upper_t, bonus_t, extra_t, boxes_t, col_tot, outcome, None)
    if not leads:
        return Results(*sums)
    course = Leads(b, s, nb)
    for t in range(nb):
        course.update(running[:, :, t])
    return Results(*sums, course.changes, course.last_behind, course.deficit)
