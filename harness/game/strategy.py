"""The strategy contract: a bot answers keep and box decisions for a whole batch of games at once.

A :class:`Strategy` gets a :class:`TurnView` of B games (numpy arrays, one row per game) and returns
one decision per game. :class:`PerGameStrategy` adapts a plain one-game-at-a-time Python bot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, ClassVar

import numpy as np

from harness.game.dice import counts_of_faces
from harness.game.loop_kernels import uniforms
from harness.util import jit
from harness.util.errors import UserError
from harness.game.rules import RuleSet
from harness.util.specs import parse_spec as parse_spec  # public here since the first plugins
from harness.util.specs import split_specs as split_specs

#: rng step used for box choices (keep decisions use the roll number 0, 1, ...).
CHOOSE_STEP = 255


def range_text(lo: float | None, hi: float | None) -> str:
    """An inclusive range as people write it: ``0..1``, ``>= 0``, ``<= 1``, or "" when unbounded."""
    if lo is None and hi is None:
        return ""
    if lo is not None and hi is not None:
        return f"{lo}..{hi}"
    return f">= {lo}" if hi is None else f"<= {hi}"


@dataclass(frozen=True)
class Param:
    """A strategy parameter: name, type, default, and an optional inclusive range."""

    name: str
    type: type
    default: Any
    description: str
    lo: float | None = None
    hi: float | None = None

    def parse(self, raw: Any, strategy: str) -> Any:
        where = f"strategy {strategy!r}: parameter {self.name}"
        try:
            if self.type is bool and isinstance(raw, str):
                if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value: Any = raw.lower() in ("true", "1", "yes")
            else:
                value = self.type(raw)
        except (TypeError, ValueError):
            raise UserError(f"{where} must be {self.type.__name__}, got {raw!r}") from None
        if self.type in (int, float) and not np.isfinite(value):
            raise UserError(f"{where} must be finite, got {raw!r}")
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise UserError(f"{where}={value} is out of range: must be {range_text(self.lo, self.hi)}")
        return value

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type.__name__,
            "default": self.default,
            "description": self.description,
            "min": self.lo,
            "max": self.hi,
        }


@dataclass
class TurnView:
    """What a seat sees of B games at one decision. Shapes: B games, NB boxes.

    games: (B,) int64 game indices; keys: (B,) uint64 their random keys.
    roll: (B,) int16 roll index into ``rules.dice`` (the dice in hand).
    rolls_left: (B,) int16 rerolls still allowed this turn (0 when choosing a box).
    first: (B,) bool the dice in hand were made on the turn's first roll.
    filled: (B,) int64 bit mask of filled boxes of the current column.
    upper: (B,) int16 upper subtotal of the current column.
    flag: (B,) bool the key box (yatzy/generala) holds a non-zero score.
    sheet: (B, NB) int16 scores written in the current column (0 where open).
    options, allowed, extra: only for box choices: (B, NB) int16 score of each box for this roll,
        (B,) int64 bit mask of boxes that may be chosen, (B,) int16 extra bonus earned whatever box.
    saved: (B,) int16 saved rolls (with ``saved_rolls``; rolls_left already includes them).
    totals: (B, S) int32 running totals of every seat (column totals included), for match-aware bots.
    seats: only for a bot whose class sets ``sees_table``: (filled (B, S) int64, upper (B, S) int16,
        flag (B, S) bool) of every seat's current column, this seat's included.
    """

    rules: RuleSet
    seat: int
    turn: int
    column: int
    step: int
    games: np.ndarray
    keys: np.ndarray
    roll: np.ndarray
    rolls_left: np.ndarray
    first: np.ndarray
    filled: np.ndarray
    upper: np.ndarray
    flag: np.ndarray
    sheet: np.ndarray
    totals: np.ndarray
    saved: np.ndarray
    options: np.ndarray | None = None
    allowed: np.ndarray | None = None
    extra: np.ndarray | None = None
    seats: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.games)

    def uniform(self, width: int = 1) -> np.ndarray:
        """(B, width) float64 uniforms for this decision, a pure function of (seed, game, seat, turn, step)."""
        out: np.ndarray = uniforms(self.keys, self.seat, self.turn, self.step, width)
        return out

    def allowed_matrix(self) -> np.ndarray:
        """(B, NB) bool: which boxes may be chosen."""
        assert self.allowed is not None, "allowed is only set for box choices"
        return ((self.allowed[:, None] >> np.arange(self.rules.n_boxes)) & 1).astype(bool)


@dataclass
class Sheets:
    """A batch of B sheet states of one column, and the scores of every roll in each, for :meth:`Strategy.policy`.

    masks (B,) int64 filled boxes; flags (B,) bool key box holds a score; uppers (B,) int64 upper
    subtotal capped at the threshold (0 once every upper box is filled or when the subtotal cannot
    matter: the solver's state, see :mod:`harness.exact.solver`). The states of one sheet (mask, flag)
    share its scores: ``sheet`` (B,) int64 is each state's row in ``sheet_options`` (U, 2, R, NB)
    int16, ``sheet_allowed`` (U, 2, R) int64 and ``sheet_extra`` (U, 2, R) int16, what a box choice
    with roll r in hand would see (:class:`TurnView`), index 1 when the dice were made on the turn's
    first roll, 0 after a reroll. ``options``, ``allowed`` and ``extra`` are the same per state
    ((B, 2, R, NB), ...; made on first use: a bot that works per sheet never pays for them).
    """

    rules: RuleSet
    masks: np.ndarray
    flags: np.ndarray
    uppers: np.ndarray
    sheet: np.ndarray
    sheet_options: np.ndarray
    sheet_allowed: np.ndarray
    sheet_extra: np.ndarray

    def __len__(self) -> int:
        return len(self.masks)

    @cached_property
    def options(self) -> np.ndarray:
        out: np.ndarray = self.sheet_options[self.sheet]
        return out

    @cached_property
    def allowed(self) -> np.ndarray:
        out: np.ndarray = self.sheet_allowed[self.sheet]
        return out

    @cached_property
    def extra(self) -> np.ndarray:
        out: np.ndarray = self.sheet_extra[self.sheet]
        return out


@dataclass
class Policy:
    """A solitaire bot's choices at every position of a batch of B sheet states (R rolls, NB boxes,
    rr = rolls per turn - 1 rerolls, K = rules.dice.n_keeps, S = len(rules.dice.sub_keep)).

    keep, with j rerolls left (row j - 1; row rr - 1 is the turn's first roll) and roll r in hand:
        (N, rr, R) integers, the keep index chosen (``dice.roll_as_keep[r]`` stops); or, with
        ``temperature`` 0, (N, rr, S) float64, the probability of each sub-keep
        ``dice.sub_keep[dice.sub_ptr[r] + i]`` of roll r at column ``dice.sub_ptr[r] + i`` (each
        roll's row sums to 1); or, with ``temperature`` > 0, (N, rr, K) float64, the value of each
        keep (at ``roll_as_keep[r]``: of stopping with r), a sub-keep drawn with probability
        proportional to exp(value / temperature).
    box, with roll r in hand (index 1: made on the first roll, 0: after a reroll; a second axis of
        length 1 serves both): (N, 2 or 1, R) integers, the box chosen; or, with ``temperature``
        0, (N, 2 or 1, R, NB) float64, the probability of each box; or, with ``temperature`` > 0,
        (N, NB, W) float64, the value of writing score s in box b at [b, s] (W above every score
        the state's rolls can write), an allowed box drawn with probability proportional to
        exp(value / temperature).
    blunder: chosen keeps and boxes (integers) and drawn ones (values) are replaced by a uniformly
        random sub-keep / allowed box with this probability (probabilities are taken as given).
    keep_row, box_row: (B,) integers, the row of ``keep`` / ``box`` that holds each state's choices
        (states that choose alike share a row). Without them the leading axis N is B (one row per
        state) or 1 (the same for every state).
    """

    keep: np.ndarray
    box: np.ndarray
    keep_row: np.ndarray | None = None
    box_row: np.ndarray | None = None
    temperature: float = 0.0
    blunder: float = 0.0


@dataclass(frozen=True)
class TargetPlay:
    """What a solitaire bot that plays for a target decides from (see :meth:`Strategy.target_play`):
    at every decision it needs ``target`` - (its column's running total) more points and takes the
    option maximising ``table``'s P(points >= that) + ``lam`` x (points added + ``values`` of the
    next state) (:class:`harness.exact.target.Player` with one target), drawn by a softmax over 100 x
    value at ``temperature`` > 0, mixed with a uniform legal action at the ``blunder`` rate."""

    table: Any  # harness.exact.target.TargetTable
    values: np.ndarray
    lam: float
    target: int
    temperature: float = 0.0
    blunder: float = 0.0


def not_solitaire(label: str) -> str:
    """The refusal of a bot that does not give its choice probabilities."""
    return (
        f"strategy {label!r} does not give its choice probabilities (Strategy.policy): it can be "
        f"sampled with `run` but not evaluated exactly"
    )


#: Seat-games from which a heuristic bot's whole-game player pays for compiling its kernel (3 to 5 s
#: of CPU once per machine, against 1 to 4 us saved a seat-game): below, and until a longer run
#: has compiled it, games go decision by decision (benchmarks/BENCHMARKS.md, "Seat players").
SEAT_PLAYER_GAMES = 1_000_000


def seat_player_pays(games: int, kernel: Any) -> bool:
    """Whether a bot announced ``games`` seat-games should play whole games with ``kernel`` (a numba
    dispatcher): the run is long enough, or the kernel is compiled already (in this process or in
    numba's cache), so a short run (a first run's quick tournament) compiles nothing more."""
    return games >= SEAT_PLAYER_GAMES or bool(kernel.signatures) or jit.in_cache(kernel)


def own_decisions(bot: Any, cls: type, *methods: str) -> bool:
    """Whether ``bot`` decides with ``cls``'s own ``keep``, ``choose`` and ``methods``: a subclass
    (or an instance) that overrides any of them is not played by ``cls``'s whole-game player."""
    return all(getattr(type(bot), m) is getattr(cls, m) and m not in vars(bot) for m in ("keep", "choose", *methods))


class Strategy:
    """Base of every bot. Subclasses set the class attributes and implement keep and choose.

    Class attributes: ``name`` (registry key), ``description`` (one line), ``params``
    (tuple of :class:`Param`), ``classifier`` (``stochastic``, ``lookahead``, ``long_run_time``).
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    classifier: ClassVar[dict[str, Any]] = {"stochastic": False, "lookahead": "none", "long_run_time": False}
    #: the engine fills :attr:`TurnView.seats` (every seat's sheet state) for a bot that sets this
    sees_table: ClassVar[bool] = False
    #: an external engine under the referee (:mod:`harness.play.protocol.referee`): the runner tallies
    #: its faults per seat-game through ``begin_batch``/``end_batch``/``corrupted``/``disqualified``
    refereed: ClassVar[bool] = False

    def __init__(self, rules: RuleSet, **params: Any) -> None:
        self.rules = rules
        known = {p.name: p for p in self.params}
        for key in params:
            if key not in known:
                names = ", ".join(known) or "none"
                raise UserError(f"strategy {self.name!r}: unknown parameter {key!r} (parameters: {names})")
        self.config: dict[str, Any] = {
            p.name: p.parse(params[p.name], self.name) if p.name in params else p.default for p in self.params
        }

    @property
    def label(self) -> str:
        """``name`` or ``name:key=value,...`` with the non-default parameters, sorted."""
        changed = [
            f"{k}={v}"
            for k, v in sorted(self.config.items())
            if v != next(p.default for p in self.params if p.name == k)
        ]
        return self.name + (":" + ",".join(changed) if changed else "")

    def expect_games(self, games: int) -> None:
        """Hint from the runner, before :meth:`prepare`: about how many games this bot will play in
        the run, all workers together (a bot may precompute what only pays off in long runs)."""

    def prepare(self) -> None:
        """Heavy set-up (tables, compilation) done once in the parent before workers fork."""

    def background_kernels(self) -> Callable[[], None] | None:
        """After :meth:`prepare`: work that compiles kernels a long run gains from but must never
        wait for (a whole-game player whose compile is longer than the first-use budget), which
        the runner runs in a process of its own, nobody waiting for it; the bot takes the kernels
        once they are in numba's cache. None (the default) when there is nothing of the kind."""
        return None

    def prepare_policy(self) -> None:
        """The set-up the exact evaluation needs (:meth:`policy`, :meth:`target_play`), done before
        it asks: :meth:`prepare` unless a bot can leave out what only playing needs (compiling
        the kernels of :meth:`keep` and :meth:`choose`, as the solver bot does)."""
        self.prepare()

    def slow_prepare(self) -> bool:
        """Whether :meth:`prepare` will take long for a reason other than compiling (solving a
        table): the runner then compiles the bots' kernels in a helper process meanwhile."""
        return False

    def warm_kernels(self) -> None:
        """In the runner's helper process: get this bot's kernels compiled into numba's cache
        without its heavy set-up (the helper then plays one game with every bot and exits)."""

    def seat_player(self) -> Callable[..., None] | None:
        """A player of whole games for this bot's seat, or None (the default: the engine asks
        :meth:`keep` and :meth:`choose` for every decision). Offered by a bot whose decisions
        depend on its own sheet and dice only and are table look-ups (the solver at T = 0 with
        its decision tables); the engine then plays each seat's games in one call,
        ``player(keys, seat, sheet, upper, extra, running)`` (see
        :func:`harness.exact.kernels.play.play_seat`), when the rules have one column without
        saved rolls and nothing records or traces the games. The games must be those
        :meth:`keep` and :meth:`choose` would play, to the byte."""
        return None

    def keep(self, view: TurnView) -> np.ndarray:
        """Keep decision: (B,) int keep indices into ``rules.dice``; keeping every die stops rolling."""
        raise NotImplementedError

    def choose(self, view: TurnView) -> np.ndarray:
        """Box decision: (B,) int box indices, each allowed for its game."""
        raise NotImplementedError

    # -- exact evaluation (solitaire bots) ---------------------------------------------------------

    def solitaire_refusal(self) -> str | None:
        """None when this bot is *solitaire* (its choices depend only on its own sheet and dice, so
        :meth:`policy` gives them exactly); else one line saying why it cannot be evaluated exactly."""
        if type(self).policy is Strategy.policy and type(self).target_play is Strategy.target_play:
            return not_solitaire(self.label)
        return None

    def policy(self, sheets: Sheets) -> Policy:
        """The bot's choices (or choice probabilities) at every position of a batch of sheet states,
        exactly the distribution of what :meth:`keep` and :meth:`choose` answer there, ties broken as
        they break them. Only for a solitaire bot (see :meth:`solitaire_refusal`)."""
        raise UserError(not_solitaire(self.label))

    def target_play(self) -> TargetPlay | None:
        """For a solitaire bot whose choices also depend on its own points so far, through what it
        still needs for a target: what it plays from (its chain is over (state, score), and
        :func:`harness.exact.evaluate.evaluate` walks it instead of asking :meth:`policy`). None for
        every other bot."""
        return None


@dataclass
class GameState:
    """One game's view for a :class:`PerGameStrategy`: plain Python values."""

    rules: RuleSet
    game: int
    seat: int
    turn: int
    dice: list[int]
    rolls_left: int
    open_boxes: list[str]
    sheet: dict[str, int | None]
    upper: int
    options: dict[str, int] = field(default_factory=dict)
    random: Callable[[], float] = field(default=lambda: 0.0, repr=False)


def _constant(x: float) -> Callable[[], float]:
    """A state's ``random``: the uniform of its decision, the same at every call."""
    return lambda: x


class PerGameStrategy(Strategy):
    """Adapter for a one-game-at-a-time bot written in plain Python (slow, but simple).

    Implement ``keep_dice(state) -> list of faces to keep`` (a sub-multiset of ``state.dice``; all
    of them to stop) and ``choose_box(state) -> box name`` (one of ``state.options``).
    """

    def keep_dice(self, state: GameState) -> list[int]:
        raise NotImplementedError

    def choose_box(self, state: GameState) -> str:
        raise NotImplementedError

    def _states(self, view: TurnView) -> list[GameState]:
        rules, d = self.rules, self.rules.dice
        names = rules.box_names
        allowed = view.allowed_matrix() if view.allowed is not None else None
        u = view.uniform(1)[:, 0]
        out = []
        for i in range(len(view)):
            filled = int(view.filled[i])
            sheet = {n: (int(view.sheet[i, b]) if (filled >> b) & 1 else None) for b, n in enumerate(names)}
            opts = (
                {}
                if allowed is None or view.options is None
                else {n: int(view.options[i, b]) for b, n in enumerate(names) if allowed[i, b]}
            )
            out.append(
                GameState(
                    rules,
                    int(view.games[i]),
                    view.seat,
                    view.turn,
                    d.roll_faces[view.roll[i]].tolist(),
                    int(view.rolls_left[i]),
                    [n for n, v in sheet.items() if v is None],
                    sheet,
                    int(view.upper[i]),
                    opts,
                    random=_constant(float(u[i])),
                )
            )
        return out

    def keep(self, view: TurnView) -> np.ndarray:
        d = self.rules.dice
        faces = np.zeros((len(view), d.n), dtype=np.int8)
        for i, state in enumerate(self._states(view)):
            kept = list(self.keep_dice(state))
            faces[i, : len(kept)] = kept
        return d.keep_index(counts_of_faces(faces))

    def choose(self, view: TurnView) -> np.ndarray:
        names = self.rules.box_names
        return np.array([names.index(self.choose_box(s)) for s in self._states(view)], dtype=np.int64)


def keep_error(rules: RuleSet, view: TurnView, keep: np.ndarray, who: str, i: int) -> RuntimeError:
    """The error for game i of a view whose keep is not a sub-multiset of its dice."""
    d = rules.dice
    return RuntimeError(
        f"strategy {who} kept dice it does not have in game {int(view.games[i])} "
        f"(keep {int(keep[i])}, dice {d.roll_faces[view.roll[i]].tolist()})"
    )


def validate_keep(view: TurnView, keep: np.ndarray, who: str) -> np.ndarray:
    """Check a keep answer's shape; (B,) int32. Sub-multiset legality is checked as keeps are applied."""
    keep = np.asarray(keep)
    if keep.shape != (len(view),) or keep.dtype.kind not in "iu":
        raise RuntimeError(
            f"strategy {who} returned keeps of shape {keep.shape} ({keep.dtype}), expected ({len(view)},) integers"
        )
    return keep.astype(np.int32)


def validate_choice(view: TurnView, box: np.ndarray, who: str) -> np.ndarray:
    """Check a box answer: right shape and an allowed (open) box for every game."""
    box = np.asarray(box)
    if box.shape != (len(view),):
        raise RuntimeError(f"strategy {who} returned boxes of shape {box.shape}, expected ({len(view)},)")
    nbx = view.rules.n_boxes
    ok = (box >= 0) & (box < nbx)
    ok &= ((view.allowed >> np.where(ok, box, 0)) & 1).astype(bool)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise RuntimeError(
            f"strategy {who} chose box {int(box[i])} which is filled or not allowed in game {int(view.games[i])}"
        )
    return box.astype(np.int64)
