"""The solver-backed bot: exact optimal play from the solved value table, with a difficulty dial.

``solver`` maximises the expected final score of its own column (solitaire-optimal): every keep and
box is the argmax of the exact action values of :mod:`harness.exact.solver`, ties broken by the solver's
fixed rule, so play is deterministic. Two knobs make it weaker for the site's difficulty levels:

* ``temperature=T`` (points): each action (keep or box) is drawn with probability proportional
  to ``exp(value / T)`` over the exact values of the legal actions; T = 0 is optimal, a large T
  approaches uniformly random play.
* ``blunder=P``: with probability P the decision is a uniformly random legal action instead.

``target=T`` plays for a score instead: every keep and box maximises P(final score >= T), from the
exact target table of :mod:`harness.exact.target` (a "beat this score" opponent); ``blunder`` works as
above, and ``temperature`` is then in percentage points of that probability (the action values
are probabilities, not points).

Per-state turn decisions are worked out in numba the first time a state is met and kept in a
direct-mapped cache for the life of the process (a state recurs across thousands of games), shared
by every solver bot of the process on the same rule set (at a temperature, long runs play whole
games in one kernel call that draws each game's turn from its state's line, the missing states
planned 16 at a time: :func:`harness.exact.kernels.play.soft_seat`). For long runs (at least
``FULL_POLICY_GAMES`` games announced by the runner) the T=0 keeps of every state are worked out
once, before the workers fork, and cached on disk beside the value table
(:func:`harness.exact.solver.policy_table`); once that file exists every T=0 solver bot uses it (the
same keeps, looked up instead of worked out). Randomness comes only from ``view.uniform`` (two
uniforms per decision), so a game replays identically. With ``columns`` > 1
each column is played as a fresh game. With ``saved_rolls`` the table still values ordinary
three-roll turns; a turn with extra rolls in hand is planned optimally against those values (ties
as in :func:`harness.game.turn.turn_policy`; the bot never deliberately stops early to save rolls).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.util import jit
from harness.exact.kernels import solver as K
from harness.exact.kernels import policy as EK
from harness.exact.kernels.rows import exp_ieee
from harness.util.errors import UserError
from harness.game.rules import RuleSet
from harness.game.scoring import context
from harness.exact.kernels import play as PK
from harness.exact.solver import Solution, box_table, build_plan, is_solved, policy_table, solve
from harness.exact.compact import load_export, read_manifest
from harness.exact.target import Aims, Player, cached_tmax, target_table
from harness.game.strategy import (
    CHOOSE_STEP,
    Param,
    Policy,
    Sheets,
    Strategy,
    TargetPlay,
    TurnView,
    SEAT_PLAYER_GAMES,
    own_decisions,
)
from harness.game.loop import play
from harness.game.turn import keep_expectations, turn_policy

#: Cache lines of per-state keep tables (T = 0) and of per-state action values (T > 0: a line holds
#: the keeps smaller than a roll at each reroll stage and the stop values, 5.25 KiB on Scandinavian,
#: so 352 MB for 2^16 lines, each process its own).
POLICY_LINES = 1 << 19
VALUE_LINES = 1 << 16
#: Seat-games from which a run is worth the whole keep policy (about a solve's time, once per
#: machine): below, the per-state caches warm up in less time.
FULL_POLICY_GAMES = 300_000


_SHARED: dict[tuple[str, str], tuple[np.ndarray, ...]] = {}


def _table_sha(path: str) -> str:
    """The sha256 of an export directory's table (its manifest's, checked when the table loads)."""
    return "-" + str(read_manifest(path)["table"]["sha256"])


def _lines(wanted: int, n_states: int) -> int:
    return 1 << min(int(np.ceil(np.log2(max(n_states, 2)))), int(np.log2(wanted)))


def soft_seat_compiled() -> bool:
    """Whether the whole-game player at a temperature is compiled, in this process or in numba's cache."""
    return bool(PK.soft_seat.signatures) or jit.in_cache(PK.soft_seat)


class SolverBot(Strategy):
    name = "solver"
    description = (
        "exact optimal play (maximises its expected score); temperature and blunder weaken it for difficulty levels"
    )
    params = (
        Param(
            "temperature", float, 0.0, "softmax temperature in points over exact action values (0 = optimal)", lo=0.0
        ),
        Param("blunder", float, 0.0, "probability of a uniformly random legal action at each decision", lo=0.0, hi=1.0),
        Param(
            "target",
            int,
            0,
            "play to maximise P(final score >= target) instead of the expected score "
            "(0 = off; exact target table of harness.exact.target)",
            lo=0,
        ),
        Param(
            "table",
            str,
            "",
            "play from the value table of an export directory (yatzy-harness export; "
            "'' = the solved table at full precision)",
        ),
    )
    classifier = {"stochastic": False, "lookahead": "game", "long_run_time": False}

    def __init__(self, rules: RuleSet, **params: Any) -> None:
        super().__init__(rules, **params)
        self.temperature = float(self.config["temperature"])
        self.blunder = float(self.config["blunder"])
        self.classifier = {**type(self).classifier, "stochastic": self.temperature > 0 or self.blunder > 0}
        self.target = int(self.config["target"])
        self.table = str(self.config["table"])
        if self.table and self.target:
            raise UserError("strategy 'solver': table= plays an exported value table, target= a target table: not both")
        if self.target and (rules.columns > 1 or rules.saved_rolls):
            raise UserError(
                f"strategy 'solver': target play needs one column without saved rolls (rule set {rules.name})"
            )
        self._player = None
        self._sol: Solution | None = None
        self._extra_plans: dict[tuple[int, int, bool], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._games = 0
        self._policy: np.ndarray | None = None
        self._boxes: np.ndarray | None = None
        self._warm = False  # the playing kernels compiled (or loaded) in this process
        self._soft_seat_now = False  # compile the whole-game player at a temperature now (its background process)

    # -- set-up ---------------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        # the table and the decision caches are rebuilt by prepare(), not pickled (hundreds of MB)
        keep = ("rules", "config", "temperature", "blunder", "classifier", "target", "table")
        return {k: v for k, v in self.__dict__.items() if k in keep}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._sol = None
        self._extra_plans = {}
        self._games = 0
        self._policy = None
        self._boxes = None
        self._player = None
        self._soft_seat_now = False
        self._warm = False

    def expect_games(self, games: int) -> None:
        self._games = max(self._games, int(games))

    def prepare(self) -> None:
        """Load (or solve) the value table and compile the decision kernels before workers fork;
        with T = 0, take the whole keep policy if it is cached on disk or the run is long enough.
        With a target, load (or solve) the target table instead."""
        self.prepare_policy()
        if not self._warm:
            self._warm = True
            jit.await_helper()  # a first run's helper may be compiling these kernels: load them instead
            self._warm_up()

    def prepare_policy(self) -> None:
        """:meth:`prepare` without compiling the playing kernels (:meth:`keep`, :meth:`choose`): the
        exact evaluation asks :meth:`policy` or :meth:`target_play` only, whose kernels are others
        (a first exact ``calibrate`` compiled about 16 s of CPU it never ran otherwise)."""
        if self.target:
            if self._player is None:
                tab = target_table(self.rules, "target", cached_tmax(self.rules, "target", self.target))
                self._player = Player(tab, self.temperature)
            return
        if self._sol is None:
            self._set_up(load_export(self.table, self.rules).solution if self.table else solve(self.rules))
        # asked again only when the announced run grows past the threshold; an exported table's
        # bot keeps to its per-state caches (the same keeps: the whole policy is cached per rule set)
        want = int(self._games >= FULL_POLICY_GAMES)
        if self.temperature == 0 and self._policy is None and want > self._asked and not self.table:
            self._asked = want
            self._policy = policy_table(self._sol, compute=bool(want))
            if self._policy is not None:
                self._boxes = box_table(self._sol, compute=bool(want))

    def slow_prepare(self) -> bool:
        """Whether :meth:`prepare` will solve the value table (not cached on disk yet): seconds in
        which a helper process can compile this bot's decision kernels (:meth:`warm_kernels`)."""
        return not self.target and not self.table and self._sol is None and not is_solved(self.rules)

    def warm_kernels(self) -> None:
        """Compile the decision kernels into numba's cache without the value table (on a table of
        zeros, whose answers are thrown away): the runner's helper does this while the parent
        solves. Only in a process that plays nothing afterwards."""
        if self.target or self._sol is not None:
            return
        plan = build_plan(self.rules)
        zeros = np.zeros(plan.n_states)
        zeros.setflags(write=False)  # as a solved table is: the kernels' signature says readonly
        self._set_up(Solution(self.rules, plan, zeros, 0.0, 0.0, False))
        self._warm_up()

    def _set_up(self, sol: Solution) -> None:
        """Take a solved table: the decision caches shared with this process's other solver bots,
        and the decision kernels compiled on a one-game batch."""
        self._sol = sol
        self._ctx = context(self.rules)
        self._lay = sol.plan.layout
        self._dk = sol.plan.dice
        self._rr = self.rules.rolls_per_turn - 1
        # every solver bot of this process and rule set shares the decision caches (the seats of
        # solver-vs-solver meet the same states); their contents do not depend on the parameters
        d = self.rules.dice
        # (an exported table's values differ from the solved table's: caches of their own)
        key = (
            self.rules.digest + (_table_sha(self.table) if self.table else ""),
            "values" if self.temperature > 0 else "policy",
        )
        if key not in _SHARED:
            lines = _lines(VALUE_LINES if self.temperature > 0 else POLICY_LINES, sol.states)
            # np.zeros maps pages lazily: only lines in use take memory
            _SHARED[key] = (
                (
                    np.full(lines, -1, dtype=np.int64),
                    np.zeros((lines, max(self._rr, 1), self._dk.n_small)),
                    np.zeros((lines, 2 if self._lay.servida else 1, d.n_rolls)),
                )
                if self.temperature > 0
                else (
                    np.full(lines, -1, dtype=np.int64),
                    np.zeros((lines, max(self._rr, 1), d.n_rolls), dtype=np.uint8),
                )
            )
        if self.temperature > 0:
            self._tags, self._ev, self._sv = _SHARED[key]
        else:
            self._tags, self._codes = _SHARED[key]
        self._asked = -1

    def _warm_up(self) -> None:
        """Compile the kernels on a one-game batch (the empty sheet) so forked workers start at once."""
        one = np.zeros(1, dtype=np.int64)
        if self._player is not None:
            if self._rr_of() > 0:
                self._player.keeps(one, one, one, one, np.full(1, self._rr_of()), Aims.target(one))
            self._player.boxes(
                one, one, one, np.zeros((1, self.rules.n_boxes), np.int16), np.ones(1, np.int64), one, Aims.target(one)
            )
            return
        if self._rr > 0:
            # the dtypes keep() passes (rolls int64): a kernel compiled for others would be compiled twice
            self._table_keeps(
                one,
                np.zeros(1, dtype=bool),
                one,
                one,
                np.full(1, self._rr, dtype=np.int16),
                np.ones(1, dtype=bool),
                np.full((1, 2), 0.5),
            )
        opts = np.zeros((1, self.rules.n_boxes), dtype=np.int16)
        K.choose_boxes(
            self._lay,
            self._sol.values,
            one,
            np.zeros(1, dtype=bool),
            one,
            opts,
            np.ones(1, dtype=np.int64),
            self.temperature,
            self.blunder,
            np.full((1, 2), 0.5),
            np.empty(1, dtype=np.int64),
        )

    def _rr_of(self) -> int:
        return self.rules.rolls_per_turn - 1

    @property
    def solution(self) -> Solution:
        self.prepare()
        assert self._sol is not None
        return self._sol

    # -- decisions ------------------------------------------------------------------------------

    def seat_player(self) -> Any:
        """At T = 0 without blunders, once both decision tables are in hand (a long run's, or
        cached): whole games in one kernel call (:func:`harness.exact.kernels.play.play_seat`),
        the keeps and boxes :meth:`keep` and :meth:`choose` would look up or work out. At T > 0
        (any blunder rate) :meth:`_soft_seat_player`."""
        if self.target or not own_decisions(self, SolverBot):
            return None
        if self.temperature > 0:
            return self._soft_seat_player()
        if self.blunder > 0:
            return None
        self.prepare()
        if self._policy is None or self._boxes is None:
            return None
        r, d, lay, ctx = self.rules, self.rules.dice, self._lay, self._ctx
        codes, boxes = self._policy, self._boxes

        def player(
            keys: np.ndarray, seat: int, sheet: np.ndarray, upper: np.ndarray, extra: np.ndarray, running: np.ndarray
        ) -> None:
            PK.play_seat(
                ctx,
                lay,
                keys,
                seat,
                d.n,
                r.rolls_per_turn,
                d.roll_lookup,
                d.radix,
                d.keep_counts,
                d.keep_size,
                d.roll_as_keep,
                d.sub_ptr,
                d.sub_keep,
                codes,
                boxes,
                int(r.threshold),
                int(r.bonus_value),
                sheet,
                upper,
                extra,
                running,
            )

        return player

    def _soft_seat_fits(self) -> bool:
        """Whether the whole-game player at a temperature plays these rules: its states planned side
        by side need plain score rows (:func:`harness.exact.kernels.solver.plan_group`)."""
        c = context(self.rules)
        plain = c.key_box < 0 and not c.forced and not self.rules.has_servida and not c.requires_key.any()
        return plain and self.rules.rolls_per_turn >= 2

    def background_kernels(self) -> Any:
        """At a temperature, a long run (``SEAT_PLAYER_GAMES`` announced) whose whole-game player is
        not compiled yet: compiling it (about 18 s of CPU, over the first-use budget of 15 s) is a
        background process's work; the run plays decision by decision meanwhile, and its workers
        take the player once numba's cache holds it (the same games either way)."""
        if (
            self.temperature <= 0
            or self.target
            or not own_decisions(self, SolverBot)
            or self._games < SEAT_PLAYER_GAMES
            or not self._soft_seat_fits()
            or soft_seat_compiled()
        ):
            return None

        def compile_player() -> None:
            self._soft_seat_now = True
            play(self.rules, [self], np.arange(1, dtype=np.int64), 0)

        return compile_player

    def _soft_seat_player(self) -> Any:
        """With temperature > 0, once compiled (a long run compiles it in the background:
        :meth:`background_kernels`), on rule sets without a key box, forced order or servida: whole
        games in one kernel call (:func:`harness.exact.kernels.play.soft_seat`), the draws
        :meth:`keep` and :meth:`choose` make on the same uniforms."""
        if not self._soft_seat_fits() or not (self._soft_seat_now or soft_seat_compiled()):
            return None
        self.prepare()
        r, d = self.rules, self.rules.dice
        tags, ev, sv, V = self._tags, self._ev, self._sv, self._sol.values
        temperature, blunder = self.temperature, self.blunder

        def player(
            keys: np.ndarray, seat: int, sheet: np.ndarray, upper: np.ndarray, extra: np.ndarray, running: np.ndarray
        ) -> None:
            PK.soft_seat(
                self._ctx,
                self._lay,
                self._dk,
                V,
                tags,
                ev,
                sv,
                keys,
                seat,
                d.n,
                r.rolls_per_turn,
                d.roll_lookup,
                d.radix,
                d.keep_counts,
                d.keep_size,
                temperature,
                blunder,
                CHOOSE_STEP,
                int(r.threshold),
                int(r.bonus_value),
                sheet,
                upper,
                extra,
                running,
            )

        return player

    def _table_keeps(self, masks, flags, uppers, rolls, stage, first, unif) -> np.ndarray:
        """Keeps for turns of the table's length (stage = rerolls left)."""
        out = np.empty(len(masks), dtype=np.int32)
        V = self._sol.values
        if self.temperature > 0:
            K.soft_keeps(
                self._ctx,
                self._lay,
                self._dk,
                V,
                self._tags,
                self._ev,
                self._sv,
                masks,
                flags,
                uppers,
                rolls,
                stage.astype(np.int64),
                first,
                self.temperature,
                self.blunder,
                unif,
                out,
            )
            return out
        if self._policy is not None:
            K.table_keeps(self._lay, self._dk, self._policy, masks, flags, uppers, rolls, stage.astype(np.int64), out)
        else:
            K.policy_keeps(
                self._ctx,
                self._lay,
                self._dk,
                V,
                self._tags,
                self._codes,
                masks,
                flags,
                uppers,
                rolls,
                stage.astype(np.int64),
                out,
            )
        if self.blunder > 0:
            hit = unif[:, 0] < self.blunder
            if hit.any():
                out[hit] = self.random_keeps(rolls[hit], unif[hit, 1])
        return out

    def random_keeps(self, rolls: np.ndarray, u: np.ndarray) -> np.ndarray:
        """A uniformly random sub-keep (stop included) of each roll."""
        d = self.rules.dice
        lo = d.sub_ptr[rolls]
        n = d.sub_ptr[rolls + 1] - lo
        return d.sub_keep[lo + np.minimum((u * n).astype(np.int64), n - 1)]

    def _aims(self, view: TurnView) -> Aims:
        return Aims.target(self.target - view.totals[:, view.seat].astype(np.int64))

    def _target_keep(self, view: TurnView) -> np.ndarray:
        unif = view.uniform(2) if (self.temperature > 0 or self.blunder > 0) else None
        out = self._player.keeps(view.filled, view.flag, view.upper, view.roll, view.rolls_left, self._aims(view), unif)
        if self.blunder > 0:
            hit = unif[:, 0] < self.blunder
            if hit.any():
                out[hit] = self.random_keeps(view.roll[hit].astype(np.int64), unif[hit, 1])
        return out

    def _target_choose(self, view: TurnView) -> np.ndarray:
        unif = view.uniform(2) if (self.temperature > 0 or self.blunder > 0) else None
        out = self._player.boxes(
            view.filled, view.flag, view.upper, view.options, view.allowed, view.extra, self._aims(view), unif
        )
        if self.blunder > 0:
            out = random_boxes(view, out, self.blunder)
        return out

    def keep(self, view: TurnView) -> np.ndarray:
        self.prepare()
        if self.target:
            return self._target_keep(view)
        b = len(view)
        masks = view.filled.astype(np.int64)
        uppers = view.upper.astype(np.int64)
        flags = view.flag.astype(bool)
        left = view.rolls_left.astype(np.int64)
        first = view.first.astype(bool)
        rolls = view.roll.astype(np.int64)
        rr = self._rr
        table = np.where(first, left == rr, (left >= 1) & (left < rr))
        unif = view.uniform(2) if (self.temperature > 0 or self.blunder > 0) else np.zeros((b, 2))
        if table.all():
            return self._table_keeps(masks, flags, uppers, rolls, left, first, unif)
        out = np.empty(b, dtype=np.int32)
        if table.any():
            out[table] = self._table_keeps(
                masks[table], flags[table], uppers[table], rolls[table], left[table], first[table], unif[table]
            )
        for i in np.flatnonzero(~table):
            out[i] = self._long_turn_keep(
                int(masks[i]), bool(flags[i]), int(uppers[i]), int(rolls[i]), int(left[i]), bool(first[i]), unif[i]
            )
        return out

    def _long_turn_keep(
        self, mask: int, flag: bool, upper: int, roll: int, left: int, first: bool, unif: np.ndarray
    ) -> int:
        """A keep in a turn longer than the table's (saved rolls): optimal against the table's values."""
        d = self.rules.dice
        if self.blunder > 0 and unif[0] < self.blunder:
            return int(self.random_keeps(np.array([roll]), np.array([unif[1]]))[0])
        sol = self.solution
        key = (sol.index(mask, upper, flag), left, first)
        plan = self._extra_plans.get(key)
        if plan is None:
            u = min(upper, self._lay.threshold)
            sf, sl = K.state_stops(self._ctx, self._lay, sol.values, mask, int(flag), u)
            v_first, k_first, values, keeps = turn_policy(d, sf, sl, left)
            ek = np.empty(d.n_keeps)
            keep_expectations(values[left - 1], d.trans_ptr, d.trans_roll, d.trans_prob, ek)
            plan = (k_first if first else keeps[left], ek, sf if first else sl)
            self._extra_plans[key] = plan
        best, ek, stop = plan
        if self.temperature <= 0:
            return int(best[roll])
        subs = d.sub_keep[d.sub_ptr[roll] : d.sub_ptr[roll + 1]]
        vals = np.append(ek[subs[:-1]], stop[roll])
        w = np.array([exp_ieee(x) for x in (vals - vals.max()) / self.temperature])  # numpy's exp varies by CPU
        c = np.cumsum(w)
        return int(subs[min(int(np.searchsorted(c, unif[1] * c[-1], side="right")), len(subs) - 1)])

    def choose(self, view: TurnView) -> np.ndarray:
        self.prepare()
        if self.target:
            return self._target_choose(view)
        b = len(view)
        unif = view.uniform(2) if (self.temperature > 0 or self.blunder > 0) else np.zeros((b, 2))
        out = np.empty(b, dtype=np.int64)
        K.choose_boxes(
            self._lay,
            self._sol.values,
            view.filled.astype(np.int64),
            view.flag.astype(bool),
            view.upper.astype(np.int64),
            np.ascontiguousarray(view.options, dtype=np.int16),
            view.allowed.astype(np.int64),
            self.temperature,
            self.blunder,
            unif,
            out,
        )
        return out

    # -- exact evaluation ---------------------------------------------------------------------------

    def target_play(self) -> TargetPlay | None:
        """Target play decides from the target table, the solver's values and the tie weight of
        :class:`harness.exact.target.Player` (None without a target)."""
        if not self.target:
            return None
        self.prepare_policy()
        p = self._player
        return TargetPlay(p.tab, p.V, p.LAM, self.target, self.temperature, self.blunder)

    def policy(self, sheets: Sheets) -> Policy:
        """The bot's keeps and boxes from the very kernels and arithmetic of :meth:`keep` and
        :meth:`choose`: T = 0 the first-strict-maximum plans, T > 0 the values its softmax draws
        from, each mixed with a uniform legal action at the blunder rate."""
        if self.target:
            raise UserError(
                f"strategy {self.label!r}: target play depends on the points scored so far; "
                f"its exact evaluation walks (state, score) from target_play(), not policy()"
            )
        self.prepare_policy()
        d = self.rules.dice
        rr = max(self._rr, 1)
        b, nbx = len(sheets), self.rules.n_boxes
        soft = self.temperature > 0
        codes = np.zeros((1, 1, 1) if soft else (b, rr, d.n_rolls), dtype=np.uint8)
        keep_vals = np.empty((b, rr, d.n_keeps) if soft else (1, 1, 1))
        boxes = np.empty((1, 1, 1) if soft else (b, 2 if self.rules.has_servida else 1, d.n_rolls), dtype=np.int64)
        # a column for every score any open box can take (the kernel writes each one; a key box's
        # partner, e.g. double generala, can score more than any option of these sheets offers)
        width = max(int(sheets.sheet_options.max(initial=0)), int(self._lay.box_vals.max(initial=0))) + 1
        box_vals = np.empty((b, nbx, width) if soft else (1, 1, 1))
        EK.solver_policy(
            self._ctx,
            self._lay,
            self._dk,
            self._sol.values,
            sheets.masks.astype(np.int64),
            sheets.flags.astype(bool),
            sheets.uppers.astype(np.int64),
            soft,
            codes,
            keep_vals,
            boxes,
            box_vals,
        )
        if self._rr == 0:  # no reroll: every roll stops (the keeps are never asked)
            keep = np.broadcast_to(d.roll_as_keep.astype(np.int32), (1, 1, d.n_rolls))
        elif soft:
            keep = keep_vals
        else:  # a keep's position among its roll's sub-keeps -> the keep
            keep = d.sub_keep[d.sub_ptr[:-1][None, None, :] + codes]
        return Policy(keep, box_vals if soft else boxes, temperature=self.temperature, blunder=self.blunder)


def random_boxes(view: TurnView, boxes: np.ndarray, blunder: float) -> np.ndarray:
    """``boxes`` with a uniformly random allowed box where the decision's first uniform is below ``blunder``."""
    unif = view.uniform(2)
    hit = unif[:, 0] < blunder
    if hit.any():
        allowed = view.allowed_matrix()[hit]
        n = allowed.sum(axis=1)
        pick = np.minimum((unif[hit, 1] * n).astype(np.int64), n - 1)
        # the pick-th allowed box of each game
        boxes = boxes.copy()
        boxes[hit] = np.argmax(np.cumsum(allowed, axis=1) > pick[:, None], axis=1)
    return boxes
