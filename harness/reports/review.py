"""A game review: every roll, decision, expected final and chance to win of one game, as one HTML page.

For one game record (:class:`harness.records.notation.GameRecord`), per turn of each seat: the dice of every
roll, the dice kept, the box written; per decision (each keep, ``stop`` included, and each box)
the best option, its value, the chosen option's value and the regret, classed by its size in
points (:data:`CLASSES`); per roll its luck. Every number is the analysis's
(:meth:`harness.decisions.analysis.Analyser.seat`, exact): a seat's **expected final** after a step is the
points on its sheet plus the exact value of its position under optimal play (columns still to
play at V(start) each), so it starts at V(start) and ends at the final score, rising by each
roll's luck and falling by each decision's regret.

With two or more seats, each seat's **chance to win** after every step, exact under a stated
model: every seat plays the rest of the game EV-optimally from where it stands (the solver bot's
policy, as :mod:`strategies.winprob` models its opponents), the seats independently. A seat
between turns has the distribution of its points still to come of the "ev" target table
(:func:`harness.exact.target.target_table`: P(points still to come >= y) under EV-optimal play); the
seat in the middle of its turn has the mixture over the rest of the turn under the same policy
(:class:`harness.reports.win_chance.WinModel`). The chance to win is P(sole best final) plus, for a top shared by k seats,
1/k (½ for two): the chances add up to 1, the first step gives equal seats equal chances (½ each
for two) and the last is 1, ½ or 0 by the final scores. The **decisive moments** are the steps
with the largest swings of the mover's chance. A rule set whose "ev" table is not in the solver
cache and too large to build (maxi: 67 GiB) gets a page without win chances that says so.

The page (:func:`review_html`) is one self-contained file: the data as JSON, the script
(``review.js``) and the style sheet (``review.css``) inline, no network and no external font.

Public API::

    from harness.reports.review import Reviewer, review_html, write_review
    rv = Reviewer(rules, cache_dir=None)         # the analyser and (for >= 2 seats) the win model
    rev = rv.review(record)                      # -> GameReview
    rev.steps, rev.turns, rev.seats, rev.moments, rev.win_note
    write_review(rev, "game-17.html")            # review_html(rev) written atomically
    write_reviews(games_of(read_result, [(lineup, game), ...]), out_dir)   # several pages
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from harness.decisions.analysis import ERROR, Analyser, Decision, Rated, keep_text
from harness.records.codec import GameId, GameRecord, Turn
from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.records.record import ReadResult, RecordStream, validate_record
from harness.util.render import Table, count, html_table, num, pct
from harness.game.rules import RuleSet
from harness.records.rundir import write_bytes_atomic
from harness.util.sums import convolve
from harness.reports.win_chance import WinModel, win_model

#: Decision classes by regret in points, worst first: a decision takes the first class whose
#: threshold its regret reaches; a regret within :data:`harness.decisions.analysis.ERROR` of 0 is ``best``.
CLASSES: tuple[tuple[str, float], ...] = (("blunder", 12.0), ("mistake", 4.0), ("inaccuracy", 1.0), ("good", ERROR))
#: The decisive moments listed: the steps with the largest swings of the mover's chance to win.
MOMENTS = 5
#: ``"ev"`` tables up to this size are built when missing by the callers that only add pages to
#: other output (``report``): generala's is 2.1 MiB, scandinavian's 999 MiB.
QUICK_TABLE_BYTES = 64 << 20
#: What a page without win chances suggests (``yatzy-harness review`` has the limit as an option).
LIMIT_HINT = " (`yatzy-harness review SOURCE --game ID --max-memory GIB` builds it, up to GIB)"


def decision_class(regret: float) -> str:
    """The :data:`CLASSES` name of a decision of this regret (``best`` at 0)."""
    for name, at in CLASSES:
        if regret > at if at == ERROR else regret >= at:
            return name
    return "best"


def classes_text() -> str:
    """``best (regret 0), good (< 1), inaccuracy (1 to 4), mistake (4 to 12), blunder (12 or more points)``."""
    (b, hb), (m, hm), (i, hi), (g, _) = CLASSES
    return (
        f"best (regret 0), {g} (below {hi:g}), {i} ({hi:g} to {hm:g}), {m} ({hm:g} to {hb:g}), "
        f"{b} ({hb:g} points or more)"
    )


# ---------------------------------------------------------------------------------------------
# the review of one game


@dataclass(frozen=True)
class ReviewDecision:
    """One decision of a turn: its roll (from 1), kind (``keep``, ``stop`` or ``box``), what was
    chosen and what was best (``keep 6 6``, ``stop``, a box's name), their values,
    the regret and its class (:func:`decision_class`)."""

    roll: int
    kind: str
    chosen: str
    best: str
    value: float
    best_value: float
    regret: float
    cls: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "roll": self.roll,
            "kind": self.kind,
            "chosen": self.chosen,
            "best": self.best,
            "value": self.value,
            "best_value": self.best_value,
            "regret": self.regret,
            "class": self.cls,
        }


@dataclass(frozen=True)
class ReviewTurn:
    """One turn of one seat, in play order: the dice of each roll (sorted) with the dice kept
    before the next one marked (``kept``), the box, its score and the extra bonus, whether it
    crossed the upper bonus, the sheet after it (``upper``, ``total``: the column's points, bonus
    and extra bonuses included), each roll's luck, its decisions and its steps (``steps[0]`` to
    ``steps[1]``, of :attr:`GameReview.steps`)."""

    seat: int
    column: int
    turn: int
    rolls: tuple[tuple[int, ...], ...]
    kept: tuple[tuple[bool, ...], ...]
    box: str
    score: int
    extra: int
    bonus: int
    upper: int
    total: int
    luck: tuple[float, ...]
    decisions: tuple[ReviewDecision, ...]
    steps: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "column": self.column,
            "turn": self.turn,
            "rolls": [list(r) for r in self.rolls],
            "kept": [[int(k) for k in r] for r in self.kept],
            "box": self.box,
            "score": self.score,
            "extra": self.extra,
            "bonus": self.bonus,
            "upper": self.upper,
            "total": self.total,
            "luck": list(self.luck),
            "decisions": [d.to_dict() for d in self.decisions],
            "steps": list(self.steps),
        }


@dataclass(frozen=True)
class ReviewStep:
    """One step of the game: the start (``turn`` -1), a roll (its ``luck``) or a decision (its
    ``regret`` and class), at roll ``roll`` of its turn (from 1); ``expected`` every seat's
    expected final after it, ``win`` every seat's chance to win (None without the win model);
    ``where`` (seat and turn) and ``what`` (the dice rolled, or the choice) say what happened."""

    turn: int
    seat: int
    kind: str
    where: str
    what: str
    expected: tuple[float, ...]
    win: tuple[float, ...] | None = None
    luck: float | None = None
    regret: float | None = None
    cls: str | None = None
    roll: int = 0

    @property
    def text(self) -> str:
        return f"{self.where} · {self.what}" if self.where else self.what

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "turn": self.turn,
            "seat": self.seat,
            "kind": self.kind,
            "text": self.text,
            "expected": list(self.expected),
            "win": None if self.win is None else list(self.win),
        }
        for k in ("luck", "regret"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        if self.cls is not None:
            d["class"] = self.cls
        return d


@dataclass(frozen=True)
class SeatReview(Rated):
    """One seat's summary: its final, V(start) of its columns, luck and regret (sums; final =
    start + luck - regret), decisions, regret per decision and rating band, decisions per class,
    and its chance to win at the start and the end (None without the win model)."""

    seat: int
    label: str
    final: int
    start: float
    luck: float
    regret: float
    decisions: int
    classes: Mapping[str, int]
    win_start: float | None
    win_end: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "label": self.label,
            "final": self.final,
            "start": self.start,
            "luck": self.luck,
            "regret": self.regret,
            "decisions": self.decisions,
            "regret_per_decision": self.regret_per_decision,
            "rating": self.rating,
            "classes": dict(self.classes),
            "win_start": self.win_start,
            "win_end": self.win_end,
        }


@dataclass(frozen=True)
class Moment:
    """A decisive moment: step ``step``, its mover's chance to win before and after, the swing."""

    step: int
    seat: int
    before: float
    after: float

    @property
    def swing(self) -> float:
        return self.after - self.before


@dataclass(frozen=True, eq=False)
class GameReview:
    """The review of one game (see the module docstring)."""

    game: GameId
    lineup: int | None
    rules: RuleSet
    seats: tuple[SeatReview, ...]
    turns: tuple[ReviewTurn, ...]
    steps: tuple[ReviewStep, ...]
    moments: tuple[Moment, ...]
    win_note: str | None
    source: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        lu = f"lineup {self.lineup} " if self.lineup else ""
        return f"Game review: {lu}game {self.game} ({self.rules.name})"

    def decisions(self) -> list[tuple[int, ReviewDecision]]:
        """Every decision that gave points away (regret above :data:`harness.decisions.analysis.ERROR`), in play
        order, with its turn's index."""
        return [(i, d) for i, t in enumerate(self.turns) for d in t.decisions if d.regret > ERROR]

    def to_dict(self) -> dict[str, Any]:
        """The page's data (JSON)."""
        r = self.rules
        return {
            "title": self.title,
            "game": self.game,
            "lineup": self.lineup,
            "source": self.source,
            "rules": r.name,
            "columns": r.columns,
            "threshold": r.threshold,
            "bonus": r.bonus_value,
            "boxes": [{"name": b.name, "label": b.label, "upper": b.is_upper} for b in r.boxes],
            "seats": [s.to_dict() for s in self.seats],
            "turns": [t.to_dict() for t in self.turns],
            "steps": [s.to_dict() for s in self.steps],
            "moments": [{"step": m.step, "seat": m.seat, "before": m.before, "after": m.after} for m in self.moments],
            "decisions": [i for i, _ in self.decisions()],
            "classes": [{"name": n, "from": a} for n, a in CLASSES],
            "classes_text": classes_text(),
            "win_note": self.win_note,
        }


class Reviewer:
    """Reviews the games of one rule set: one analyser (solved table, turn plans) and, for tables of
    two or more seats, one :class:`~harness.reports.win_chance.WinModel` (built on first need, see
    :func:`~harness.reports.win_chance.win_model`)."""

    def __init__(
        self,
        rules: RuleSet,
        cache_dir: Any = None,
        *,
        analyser: Analyser | None = None,
        win_tables_up_to: int = 3 << 30,
        win_hint: str = LIMIT_HINT,
    ) -> None:
        self.rules = rules
        self.cache_dir = cache_dir
        self.an = analyser or Analyser(rules, cache_dir)
        self.adv = self.an.adv
        self.build_up_to = win_tables_up_to
        self.hint = win_hint
        self._win: tuple[WinModel | None, str | None] | None = None

    def win(self) -> tuple[WinModel | None, str | None]:
        """The win model and, without it, why not (:func:`win_model`), made once."""
        if self._win is None:
            self._win = win_model(self.adv, self.cache_dir, build_up_to=self.build_up_to, hint=self.hint)
        return self._win

    def review(self, record: GameRecord, lineup: int | None = None, source: str = "") -> GameReview:
        """The review of a complete, valid game ``record`` of this rule set (:class:`UserError`
        naming the game otherwise)."""
        rules, adv = self.rules, self.adv
        if not record.complete:
            raise UserError(f'game {record.game} is a partial game ("complete": false): its scores are not final')
        validate_record(record, rules)
        n = len(record.seats)
        labels = [s.label for s in record.seats]
        cols = rules.columns
        rr = rules.rolls_per_turn - 1
        v0 = adv.turn_start_value(adv.state({}))
        model, note = self.win() if n > 1 else (None, None)
        by_seat = [[t for t in record.turns if t.seat == s] for s in range(n)]
        details = [self.an.seat(by_seat[s], s, labels[s], details=True) for s in range(n)]
        decided: dict[tuple[int, int, int], list[Decision]] = {}
        for s, a in enumerate(details):
            for d in a.details:
                decided.setdefault((s, d.column, d.turn), []).append(d)

        # per seat: points of finished columns, the column's state, its value, its rest's pmf
        done = [0] * n
        state = [adv.state({}) for _ in range(n)]
        value = [v0] * n
        column = [1] * n
        rest: list[np.ndarray | None] = [model.fresh if model else None for _ in range(n)]

        def expected() -> tuple[float, ...]:
            return tuple(done[s] + value[s] + (cols - column[s]) * v0 for s in range(n))

        def chances() -> tuple[float, ...] | None:
            if model is None:
                return None
            finals = [
                (done[s] + state[s].points, convolve(rest[s], model.fresh_columns(cols - column[s]))) for s in range(n)
            ]
            return tuple(float(x) for x in model.shares(finals))

        steps = [ReviewStep(-1, -1, "start", "", "start of the game", expected(), chances())]
        turns: list[ReviewTurn] = []
        for t in record.turns:
            s = t.seat
            if t.column != column[s]:  # a new column: the last one's points are final
                done[s] += state[s].points
                state[s], value[s], column[s] = adv.state({}), v0, t.column
                rest[s] = model.fresh if model else None
            st = state[s]
            ds = decided[(s, t.column, t.turn)]
            first_step = len(steps)
            lucks, out = [], []
            where = f"{labels[s]}, {'column ' + str(t.column) + ' ' if cols > 1 else ''}turn {t.turn}"
            for i, dice in enumerate(t.rolls):
                mine = [d for d in ds if d.roll == i + 1]
                roll = int(rules.dice.roll_index_of_faces(np.array(dice)))
                luck = mine[0].best_value - value[s]
                value[s] = mine[0].best_value
                lucks.append(luck)
                if model:
                    rest[s] = model.after_roll(st, roll, rr - i, i == 0)
                steps.append(
                    ReviewStep(
                        len(turns),
                        s,
                        "roll",
                        where,
                        f"roll {i + 1}: {_faces(sorted(dice))}",
                        expected(),
                        chances(),
                        luck=luck,
                        roll=i + 1,
                    )
                )
                for d in mine:
                    kind = "stop" if d.chosen == "stop" else d.kind
                    cls = decision_class(d.regret)
                    shown = ReviewDecision(
                        i + 1, kind, _option(d.chosen), _option(d.best), d.value, d.best_value, d.regret, cls
                    )
                    out.append(shown)
                    value[s] = d.value
                    if model and kind == "keep":
                        rest[s] = model.after_keep(st, adv.keep_index(t.keeps[i]), rr - i - 1)
                    elif model and kind == "stop":
                        rest[s] = model.after_roll(st, roll, 0, i == 0)
                    elif kind == "box":
                        state[s] = adv.after_box(st, roll, t.box, i == 0)
                        if model:
                            rest[s] = model.at_start(state[s])
                    what = f"→ {t.box} {t.score}" if kind == "box" else shown.chosen
                    steps.append(
                        ReviewStep(
                            len(turns),
                            s,
                            kind,
                            where,
                            what,
                            expected(),
                            chances(),
                            regret=d.regret,
                            cls=cls,
                            roll=i + 1,
                        )
                    )
            after = state[s]
            bonus = rules.bonus_value if st.upper < rules.threshold <= after.upper else 0
            turns.append(
                ReviewTurn(
                    s,
                    t.column,
                    t.turn,
                    tuple(tuple(sorted(r)) for r in t.rolls),
                    _kept(t),
                    t.box,
                    t.score,
                    after.points - st.points - t.score - bonus,
                    bonus,
                    after.upper,
                    after.points,
                    tuple(lucks),
                    tuple(out),
                    (first_step, len(steps) - 1),
                )
            )
        finals = [done[s] + state[s].points for s in range(n)]
        first, last = steps[0].win, steps[-1].win
        seats = tuple(
            SeatReview(
                s,
                labels[s],
                finals[s],
                details[s].start,
                details[s].luck,
                details[s].regret,
                details[s].decisions,
                {c: sum(d.cls == c for t in turns if t.seat == s for d in t.decisions) for c, _ in CLASSES},
                None if first is None else first[s],
                None if last is None else last[s],
            )
            for s in range(n)
        )
        return GameReview(
            record.game,
            lineup,
            rules,
            seats,
            tuple(turns),
            tuple(steps),
            _moments(steps),
            note,
            source,
            dict(record.meta or {}),
        )


def _moments(steps: Sequence[ReviewStep]) -> tuple[Moment, ...]:
    """The :data:`MOMENTS` steps with the largest swings of their mover's chance to win, largest first."""
    if not steps or steps[0].win is None:
        return ()
    swings = [
        Moment(i, st.seat, steps[i - 1].win[st.seat], st.win[st.seat])  # type: ignore[index]
        for i, st in enumerate(steps)
        if i and st.seat >= 0
    ]
    swings.sort(key=lambda m: (-abs(m.swing), m.step))
    return tuple(m for m in swings[:MOMENTS] if abs(m.swing) > 1e-9)


def _option(x: Any) -> str:
    """A keep as :func:`harness.decisions.analysis.keep_text` shows it (``keep 6 6``, ``stop``), a box by its name."""
    return x if isinstance(x, str) and x != "stop" else keep_text(x)


def _faces(faces: Iterable[int]) -> str:
    return " ".join(map(str, faces))


def _kept(t: Turn) -> tuple[tuple[bool, ...], ...]:
    """Per roll (sorted), which dice the next roll kept (the last roll: none)."""
    out = []
    for i, roll in enumerate(t.rolls):
        left = list(t.keeps[i]) if i < len(t.keeps) else []
        marks = []
        for f in sorted(roll):
            marks.append(f in left)
            if f in left:
                left.remove(f)
        out.append(tuple(marks))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# the page


def tables(rev: GameReview) -> list[Table]:
    """The page's tables: the summary, the decisions that gave points away, the decisive moments."""
    win = rev.seats[0].win_end is not None
    named = [c for c, _ in CLASSES[:3]]  # blunder, mistake, inaccuracy
    head = (
        ["player", "final", "rating", "luck", "regret", "regret/decision"]
        + (["win: start / end"] if win else [])
        + ["decisions", "inacc. / mistakes / blunders"]
    )
    rows = [
        [s.label, count(s.final), s.rating, num(s.luck, sign=True), num(s.regret), num(s.regret_per_decision, 3)]
        + ([f"{pct(s.win_start)} / {pct(s.win_end)}"] if win else [])
        + [count(s.decisions), " / ".join(count(s.classes[c]) for c in reversed(named))]
        for s in rev.seats
    ]
    start = rev.seats[0].start
    out = [Table(f"Summary (final = start {num(start)} + luck - regret, exact)", head, rows)]
    labels = [s.label for s in rev.seats]
    dec = [
        [
            str(i + 1),
            labels[rev.turns[i].seat],
            _where(rev, rev.turns[i], d.roll),
            _faces(rev.turns[i].rolls[d.roll - 1]),
            d.chosen,
            d.best,
            num(d.best_value),
            num(d.regret),
            d.cls,
        ]
        for i, d in rev.decisions()
    ]
    out.append(
        Table(
            "Decisions that gave points away (#: the page's turn; value: the best option's; regret: what "
            "the choice cost)",
            ["#", "player", "where", "dice", "played", "best", "value", "regret", "class"],
            dec,
        )
    )
    if rev.moments:
        mom = []
        for m in rev.moments:
            st = rev.steps[m.step]
            cause = (
                f"dice (luck {num(st.luck, sign=True)})"
                if st.kind == "roll"
                else f"choice (regret {num(st.regret)}, {st.cls})"
            )
            t = rev.turns[st.turn]
            what = _faces(t.rolls[st.roll - 1]) if st.kind == "roll" else st.what
            mom.append(
                [
                    str(st.turn + 1),
                    labels[m.seat],
                    _where(rev, t, st.roll),
                    what,
                    cause,
                    pct(m.before),
                    pct(m.after),
                    f"{100 * m.swing:+.1f} pts",
                ]
            )
        out.append(
            Table(
                "Decisive moments (the largest swings of the mover's chance to win)",
                ["#", "player", "where", "what", "cause", "before", "after", "swing"],
                mom,
            )
        )
    return out


def _where(rev: GameReview, t: ReviewTurn, roll: int) -> str:
    col = f"column {t.column} " if rev.rules.columns > 1 else ""
    return f"{col}turn {t.turn} roll {roll}"


def _asset(name: str) -> str:
    return (Path(__file__).with_name(name)).read_text(encoding="utf-8")


#: Decimals of the numbers in a page's data (it shows two at most; ``review --json`` keeps them all).
PAGE_DECIMALS = 6


def page_data(rev: GameReview) -> Any:
    """The data a page holds: :meth:`GameReview.to_dict`, JSON-safe, numbers to :data:`PAGE_DECIMALS`."""

    def short(x: Any) -> Any:
        if isinstance(x, float):
            return round(x, PAGE_DECIMALS)
        if isinstance(x, list):
            return [short(v) for v in x]
        if isinstance(x, dict):
            return {k: short(v) for k, v in x.items()}
        return x

    return short(jsonable(rev.to_dict()))


def _json_in_html(d: Any) -> str:
    """JSON safe inside ``<script>``: no ``</`` (nor ``<!--``) can end or open anything."""
    return json.dumps(d, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


def review_html(rev: GameReview) -> str:
    """The self-contained page (see the module docstring)."""
    import html

    esc = html.escape
    seats = " vs ".join(f"{s.label} {s.final}" for s in rev.seats)
    model = (
        "Win chance: exact, with every seat playing the rest of the game EV-optimally from where it stands "
        "(the solver's policy), the seats independently; a top shared by k seats counts 1/k."
        if rev.win_note is None and len(rev.seats) > 1
        else rev.win_note or ""
    )
    notes = [
        f"Expected final: the points on the sheet plus the exact value of the position under optimal play "
        f"(V(start) = {num(rev.seats[0].start / rev.rules.columns)} a column); a roll's luck is the change "
        f"it made, a decision's regret what it gave away against the best option.",
        f"Decision classes by regret: {classes_text()}.",
    ] + ([model] if model else [])
    t = tables(rev)
    data = _json_in_html(page_data(rev))
    return "\n".join(
        [
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
            "<meta name='viewport' content='width=device-width, initial-scale=1'>",
            f"<title>{esc(rev.title)}</title><style>{_asset('review.css')}</style></head><body>",
            f"<header><h1>{esc(rev.title)}</h1><p class='sub'>{esc(seats)}"
            f"{' · ' + esc(rev.source) if rev.source else ''}</p></header>",
            f"<section id='summary'>{html_table(t[0])}</section>",
            "<section id='board'><div id='turn'></div><div id='sheet'></div>"
            "<div id='charts'><h2>Expected final</h2><div id='expected-chart' class='chart'></div>"
            + (
                "<h2>Chance to win</h2><div id='win-chart' class='chart'></div>"
                if rev.steps[0].win is not None
                else f"<h2>Chance to win</h2><p class='missing'>{esc(rev.win_note[0].upper() + rev.win_note[1:])}.</p>"
                if rev.win_note
                else ""
            )
            + "</div></section>",
            *(f"<section id='{k}'>{html_table(x)}</section>" for k, x in zip(("decisions", "moments"), t[1:])),
            "<section id='notes'><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>"
            "<p class='keys'>Keys: ← → previous / next turn, Home / End first / last; click a chart, a row or "
            "a button to go there.</p></section>",
            f"<script type='application/json' id='review-data'>{data}</script>",
            f"<script>{_asset('review.js')}</script></body></html>",
        ]
    )


def page_name(game: GameId, lineup: int | None = None) -> str:
    """``game-17.html`` (``lineup-2-game-17.html`` for a lineup after the first); unsafe
    characters of a game id become ``_``."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", str(game))
    return f"{f'lineup-{lineup}-' if lineup else ''}game-{safe}.html"


def turn_anchor(seats: int, n_boxes: int, seat: int, column: int, turn: int) -> str:
    """The fragment that opens a page at a seat's turn: ``#turn=K``, K the turn's place in play order from 1."""
    return f"#turn={((column - 1) * n_boxes + turn - 1) * seats + seat + 1}"


def write_review(rev: GameReview, path: str | os.PathLike[str]) -> Path:
    """Write :func:`review_html` to ``path`` (its directory made); :class:`UserError` naming it
    when it cannot be written."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(p, review_html(rev).encode("utf-8"))
    except OSError as exc:
        raise UserError(f"cannot write the review page {p}: {exc.strerror or exc}") from None
    return p


def write_reviews(
    games: Iterable[tuple[GameRecord, int | None, RuleSet]],
    out_dir: str | os.PathLike[str],
    *,
    cache_dir: Any = None,
    source: str = "",
    win_tables_up_to: int = 3 << 30,
    win_hint: str = LIMIT_HINT,
) -> list[tuple[GameReview, Path]]:
    """One page per (record, lineup, rule set) of ``games`` into ``out_dir``, named by
    :func:`page_name` (a game met twice is written once), one :class:`Reviewer` per rule set;
    returns each review and its page."""
    reviewers: dict[str, Reviewer] = {}
    out, seen = [], set()
    for rec, lu, rules in games:
        name = page_name(rec.game, lu)
        if name in seen:
            continue
        seen.add(name)
        if rules.digest not in reviewers:
            reviewers[rules.digest] = Reviewer(rules, cache_dir, win_tables_up_to=win_tables_up_to, win_hint=win_hint)
        rev = reviewers[rules.digest].review(rec, lu, source)
        out.append((rev, write_review(rev, Path(out_dir) / name)))
    return out


def games_of(
    source: RecordStream | ReadResult, wanted: Iterable[tuple[int | None, GameId]]
) -> list[tuple[GameRecord, int | None, RuleSet]]:
    """The (record, lineup, rule set) of each (lineup, game id) of ``wanted`` in a source read by
    :func:`harness.records.record.read_records` or walked by a :class:`harness.records.record.RecordStream` (a batch
    at a time: only the wanted games are kept; a run's records are built only for these games)."""
    wanted = list(wanted)
    keys = set(wanted)
    found: dict[tuple[int | None, GameId], tuple[GameRecord, int | None, RuleSet]] = {}
    stream = RecordStream.of(source)
    for part in stream:
        run = part.arrays
        ids = (
            list(zip(run.lineup.tolist(), run.game.tolist()))
            if run is not None
            else [(lu, g.game) for lu, g in zip(part.lineups, part.games)]
        )
        for i, key in enumerate(ids):
            if key in keys and key not in found:
                rules = part.rules[i] if part.rules is not None else part.games[i].load_rules()
                found[key] = (part.games[i], key[0], rules)
    for key in wanted:
        if key not in found:
            lu, g = key
            raise UserError(f"game {g}{f' of lineup {lu}' if lu is not None else ''} is not in {stream.source}")
    return [found[key] for key in wanted]


__all__ = [
    "CLASSES",
    "MOMENTS",
    "QUICK_TABLE_BYTES",
    "GameReview",
    "Moment",
    "ReviewDecision",
    "ReviewStep",
    "ReviewTurn",
    "Reviewer",
    "SeatReview",
    "classes_text",
    "decision_class",
    "games_of",
    "page_data",
    "page_name",
    "review_html",
    "tables",
    "turn_anchor",
    "write_review",
    "write_reviews",
]
