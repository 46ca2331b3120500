"""Option values of positions: brute force, the value identities, the solver bot's choices and numbers, advise."""

from __future__ import annotations

import json
import math
from functools import lru_cache, cache
from itertools import combinations, product
from pathlib import Path

import numpy as np
import pytest

from harness.exact.kernels import solver as K
from harness.cli import main as cli_main
from harness.util.errors import UserError
from harness.commands.advise import parse_filled
from harness.decisions.positions import TIE, Advisor, Position, State
from harness.game.rules import load_rules
from harness.game.scoring import context, score_options
from harness.game.strategy import Strategy
from tests.test_solver import TINY, brute_force

BUILTIN = ["scandinavian", "yahtzee", "generala", "forced"]
TINY_NAMES = ["tiny_bonus", "tiny_joker", "tiny_generala", "tiny_forced"]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("rules")
    for name, text in TINY.items():
        (d / f"{name}.toml").write_text(text)
    return d


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("solver-cache")


_ADVISORS: dict[str, Advisor] = {}


def advisor(name: str, tiny_dir: Path, cache_dir: Path) -> Advisor:
    """Built-in rule sets from the user cache (solved once per machine), tiny ones from a test cache."""
    if name not in _ADVISORS:
        if name in TINY:
            _ADVISORS[name] = Advisor(load_rules(str(tiny_dir / f"{name}.toml")), cache_dir)
        else:
            _ADVISORS[name] = Advisor(load_rules(name))
    return _ADVISORS[name]


def random_sheet(adv: Advisor, rng: np.random.Generator, turns: int) -> tuple[State, dict[str, int], int]:
    """A sheet after ``turns`` turns of random legal play: (state, {box: score}, extra points)."""
    rules = adv.rules
    rr = rules.rolls_per_turn - 1
    st, scores, extra = adv.state({}), {}, 0
    ctx = context(rules)
    row = np.empty(rules.n_boxes, dtype=np.int16)
    for _ in range(turns):
        roll = int(rng.integers(rules.dice.n_rolls))
        first = bool(rng.random() < 0.5) or rr == 0
        allowed, ext = score_options(ctx, roll, first, st.flag, st.filled, row)
        b = int(rng.choice([i for i in range(rules.n_boxes) if (allowed >> i) & 1]))
        scores[rules.box_names[b]] = int(row[b])
        extra += int(ext)
        st = adv.after_box(st, roll, b, first)
    return st, scores, extra


def random_position(adv: Advisor, rng: np.random.Generator, st: State) -> Position:
    rr = adv.rules.rolls_per_turn - 1
    j = int(rng.integers(rr + 1))
    first = (j == rr) if j > 0 else (rr == 0 or bool(rng.random() < 0.5))
    return adv.position(st, int(rng.integers(adv.rules.dice.n_rolls)), j, first)


# ---------------------------------------------------------------------------------------------
# the identities of the analysis, on many random positions


@pytest.mark.parametrize("name", BUILTIN + ["tiny_joker", "tiny_generala"])
def test_value_identities(name, tiny_dir, cache_dir):
    adv = advisor(name, tiny_dir, cache_dir)
    rules, d = adv.rules, adv.rules.dice
    rr = rules.rolls_per_turn - 1
    rng = np.random.default_rng(sum(map(ord, name)))
    n_keep_checks = 0
    for _ in range(12):
        st, scores, extra = random_sheet(adv, rng, int(rng.integers(rules.n_boxes)))
        assert adv.state(scores, extra) == st  # the sheet as a user gives it is the same state
        assert adv.turn_start_value(st) == st.points + adv.sol.value(st.filled, st.upper, st.flag)
        # the start of a turn is the expectation of the first roll's value
        first_rolls = [adv.roll_value(Position(st, r, rr, True)) for r in range(d.n_rolls)]
        assert float(d.roll_prob @ first_rolls) == pytest.approx(adv.turn_start_value(st), abs=1e-9)
        for _ in range(4):
            pos = random_position(adv, rng, st)
            advice = adv.advise(pos)
            vals = np.array([o.value for o in advice.options])
            assert advice.value == adv.roll_value(pos) == vals.max()
            assert all(o.regret >= 0 for o in advice.options) and advice.options[0].regret == 0.0
            assert [o.best for o in advice.options] == [bool(advice.value - v <= TIE) for v in vals]
            if advice.decision == "box":
                for o in advice.options:
                    assert o.value == adv.box_value(st, pos.roll, o.box, pos.first)
                    nxt = adv.after_box(st, pos.roll, o.box, pos.first)
                    assert o.value == pytest.approx(adv.turn_start_value(nxt), abs=1e-9)
                continue
            j = pos.rolls_left
            for o in advice.options:
                if o.stop:  # stopping is worth the box decision on the same dice
                    assert o.value == adv.roll_value(Position(st, pos.roll, 0, pos.first))
                    continue
                assert o.value == adv.keep_value(st, o.keep, j - 1) == adv.keep_value(st, o.index, j - 1)
            # a keep is the expectation over its reroll of the value after it
            for o in rng.choice([o for o in advice.options if not o.stop], size=3):
                lo, hi = d.trans_ptr[o.index], d.trans_ptr[o.index + 1]
                after = [adv.roll_value(Position(st, int(r), j - 1, False)) for r in d.trans_roll[lo:hi]]
                assert float(d.trans_prob[lo:hi] @ after) == pytest.approx(o.value, abs=1e-9)
                n_keep_checks += 1
    assert n_keep_checks > 10


# ---------------------------------------------------------------------------------------------
# brute force over ordered dice and kept positions (tiny rule sets)


def brute_options(rules, memo, st: State, pos: Position) -> dict[tuple, float]:
    """{("box", name) or ("keep", faces high first) or ("stop",): value} of one position, by
    enumeration; memo holds the brute force's state values, the final bonus included."""
    ctx = context(rules)
    n, nbx = rules.n_dice, rules.n_boxes
    row = np.empty(nbx, dtype=np.int16)
    upper_of = rules.upper_face > 0
    base = st.points - (rules.bonus_value if st.upper >= rules.threshold else 0)
    d = rules.dice

    def boxes(dice: tuple[int, ...], first: bool) -> dict[str, float]:
        r = int(d.roll_index_of_faces(np.array(dice)))
        allowed, extra = score_options(ctx, r, first, st.flag, st.filled, row)
        out = {}
        for b in range(nbx):
            if (allowed >> b) & 1:
                s = int(row[b])
                nf = (s > 0) if b == rules.key_box else st.flag
                out[rules.box_names[b]] = (
                    s + extra + memo[(st.filled | (1 << b), st.upper + (s if upper_of[b] else 0), bool(nf))]
                )
        return out

    @cache
    def best(dice: tuple[int, ...], j: int, first: bool) -> float:
        v = max(boxes(dice, first).values())
        if j == 0:
            return v
        for size in range(n):
            for kept in combinations(range(n), size):
                v = max(v, reroll(tuple(sorted(dice[i] for i in kept)), j))
        return v

    @cache
    def reroll(kept: tuple[int, ...], j: int) -> float:
        m = n - len(kept)
        return sum(best(tuple(sorted(kept + o)), j - 1, False) for o in product(range(1, 7), repeat=m)) / 6**m

    dice = tuple(int(x) for x in d.roll_faces[pos.roll])
    if pos.rolls_left == 0:
        return {("box", k): base + v for k, v in boxes(dice, pos.first).items()}
    out = {("stop",): base + max(boxes(dice, pos.first).values())}
    for size in range(n):
        for kept in combinations(range(n), size):
            faces = tuple(sorted((dice[i] for i in kept), reverse=True))
            out[("keep", faces)] = base + reroll(tuple(sorted(faces)), pos.rolls_left)
    return out


@pytest.mark.parametrize("name", TINY_NAMES)
def test_option_values_match_brute_force(name, tiny_dir, cache_dir):
    adv = advisor(name, tiny_dir, cache_dir)
    rules = adv.rules
    _, memo = brute_force(rules)
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(25):
        st, _, _ = random_sheet(adv, rng, int(rng.integers(rules.n_boxes)))
        pos = random_position(adv, rng, st)
        ref = brute_options(rules, memo, st, pos)
        got = {
            ("box", o.box) if o.box else ("stop",) if o.stop else ("keep", o.keep): o.value
            for o in adv.advise(pos).options
        }
        assert got.keys() == ref.keys()
        for k, v in ref.items():
            assert got[k] == pytest.approx(v, abs=1e-9), (pos, k)
        checked += len(ref)
        if pos.rolls_left == rules.rolls_per_turn - 1:
            bonus = rules.bonus_value if st.upper >= rules.threshold else 0
            assert adv.turn_start_value(st) == pytest.approx(
                st.points - bonus + memo[(st.filled, st.upper, st.flag)], abs=1e-9
            )
    assert checked > 50


# ---------------------------------------------------------------------------------------------
# the solver bot plays the best option, and its softmax draws from these values


class Recorder(Strategy):
    """Plays as the wrapped bot and records every decision: (state, roll, rolls left, first, answer)."""

    name = "recorder"

    def __init__(self, rules, bot) -> None:
        super().__init__(rules)
        self.bot = bot
        self.seen: list[tuple[State, int, int, bool, int]] = []

    def prepare(self) -> None:
        self.bot.prepare()

    def _record(self, view, answer, left) -> None:
        for i in range(len(view)):
            st = State(int(view.filled[i]), int(view.upper[i]), bool(view.flag[i]), int(view.totals[i, view.seat]))
            self.seen.append((st, int(view.roll[i]), int(left[i]), bool(view.first[i]), int(answer[i])))

    def keep(self, view):
        out = self.bot.keep(view)
        self._record(view, out, view.rolls_left)
        return out

    def choose(self, view):
        out = self.bot.choose(view)
        self._record(view, out, np.zeros(len(view), dtype=np.int64))
        return out


@pytest.mark.parametrize("name", BUILTIN + TINY_NAMES)
def test_solver_bot_plays_the_best_option(name, tiny_dir, cache_dir, monkeypatch):
    from harness.game.loop import play
    from strategies.solver import SolverBot

    adv = advisor(name, tiny_dir, cache_dir)
    if name in TINY:
        monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache_dir))
    rec = Recorder(adv.rules, SolverBot(adv.rules))
    rec.prepare()
    res = play(adv.rules, [rec], np.arange(40, dtype=np.int64), seed=11)
    assert len(rec.seen) > 40 * adv.rules.n_boxes
    keeps = 0
    for st, roll, left, first, answer in rec.seen:
        advice = adv.advise(Position(st, roll, left, first))
        assert advice.options[0].index == answer and advice.options[0].regret == 0.0
        keeps += advice.decision == "keep"
    assert keeps > 0
    # the sheet's points as the engine counts them: a full sheet's value is the final score
    finals = [
        adv.turn_start_value(adv.after_box(st, roll, answer, first))
        for st, roll, left, first, answer in rec.seen
        if left == 0 and st.filled | (1 << answer) == (1 << adv.rules.n_boxes) - 1
    ]
    assert finals == res.total[:, 0].tolist()


@pytest.mark.parametrize("name", ["scandinavian", "generala", "tiny_joker"])
def test_softmax_bot_uses_these_values(name, tiny_dir, cache_dir, monkeypatch):
    """temperature > 0: the bot's cached keep values are the option values bit for bit (points 0),
    and its box draw is a softmax over the box values."""
    from strategies.solver import SolverBot

    adv = advisor(name, tiny_dir, cache_dir)
    rules = adv.rules
    if name in TINY:
        monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache_dir))
    bot = SolverBot(rules, temperature=1.5)
    bot.prepare()
    rng = np.random.default_rng(5)
    rr = rules.rolls_per_turn - 1
    temp = 1.5
    for _ in range(30):
        st, _, _ = random_sheet(adv, rng, int(rng.integers(rules.n_boxes)))
        st = State(st.filled, st.upper, st.flag, 0)
        pos = random_position(adv, rng, st)
        if pos.rolls_left == 0:
            pos = Position(st, pos.roll, rr, True)
        one = lambda v: np.array([v], dtype=np.int64)  # noqa: E731
        bot._table_keeps(
            one(st.filled),
            np.array([st.flag]),
            one(st.upper),
            one(pos.roll).astype(np.int16),
            np.array([pos.rolls_left], dtype=np.int16),
            np.array([pos.first]),
            np.full((1, 2), 0.5),
        )
        idx = adv.sol.index(st.filled, st.upper, st.flag)
        line = idx & (len(bot._tags) - 1)
        assert bot._tags[line] == idx
        for o in adv.advise(pos).options:
            first = int(pos.first) if bot._sv.shape[1] > 1 else 0  # one row of stop values without servida
            used = bot._sv[line, first, pos.roll] if o.stop else bot._ev[line, pos.rolls_left - 1, o.index]
            assert o.value == used
        # the box decision: the kernel's softmax draw over the allowed boxes, against these values
        boxes = adv.advise(Position(st, pos.roll, 0, pos.first))
        ctx = context(rules)
        row = np.empty(rules.n_boxes, dtype=np.int16)
        allowed, extra = score_options(ctx, pos.roll, pos.first, st.flag, st.filled, row)
        if extra:
            continue
        order = sorted(boxes.options, key=lambda o: o.index)
        vals = np.array([o.value for o in order])
        w = np.exp((vals - vals.max()) / temp)
        c = np.cumsum(w)
        for u in rng.random(8):
            out = np.empty(1, dtype=np.int64)
            K.choose_boxes(
                adv._lay,
                adv.sol.values,
                one(st.filled),
                np.array([st.flag]),
                one(st.upper),
                row[None, :].copy(),
                one(allowed),
                temp,
                0.0,
                np.array([[0.9, u]]),
                out,
            )
            assert out[0] == order[int(np.searchsorted(c, u * c[-1], side="right"))].index


TWINS = """
name = "twins"
dice = 2
rolls = 2
[settings]
upper_bonus_threshold = 12
upper_bonus_value = 0
[[boxes]]
name = "sixes"
kind = "upper"
face = 6
[[boxes]]
name = "chance_a"
kind = "chance"
[[boxes]]
name = "chance_b"
kind = "chance"
"""


def test_ties_are_marked_and_the_bot_breaks_them(tmp_path):
    """Two identical boxes: every roll ties them exactly; both are best, the bot's (sheet order) first."""
    path = tmp_path / "twins.toml"
    path.write_text(TWINS)
    adv = Advisor(load_rules(str(path)), tmp_path)
    st = adv.state({"sixes": 6})
    for r in range(adv.rules.dice.n_rolls):
        advice = adv.advise(adv.position(st, r, 0))
        assert [(o.box, o.regret, o.best) for o in advice.options] == [("chance_a", 0.0, True), ("chance_b", 0.0, True)]
        assert adv._bot_box(st, np.zeros(3, dtype=np.int16), 0b110) == 1
        keeps = adv.advise(adv.position(st, r, 1)).options
        assert keeps[0].best and all(o.best == (o.regret <= TIE) for o in keeps)


# ---------------------------------------------------------------------------------------------
# states, positions and their errors


def test_sheet_validation(tiny_dir, cache_dir):
    scand = advisor("scandinavian", tiny_dir, cache_dir)
    with pytest.raises(UserError, match=r"box sixes cannot score 7 in scandinavian \(possible: 0, 6, 12"):
        scand.state({"sixes": 7})
    with pytest.raises(UserError, match="has no box 'sevens'"):
        scand.state({"sevens": 7})
    with pytest.raises(UserError, match="no extra yatzy bonus"):
        scand.state({"ones": 3}, extra=50)
    st = scand.state({"ones": 4, "twos": 8, "threes": 12, "fours": 16, "fives": 20, "sixes": 6})
    assert (st.upper, st.points) == (66, 66 + 50)  # the bonus is on the sheet once earned
    assert scand.turn_start_value(st) == pytest.approx(66 + 50 + scand.sol.value(st.filled, 66), abs=0)
    with pytest.raises(UserError, match="plays 5 dice, got 4"):
        scand.position(st, [6, 6, 4, 4], 2)
    with pytest.raises(UserError, match="whole numbers 1..6"):
        scand.position(st, [6, 6, 4, 4, 0], 2)
    with pytest.raises(UserError, match="rolls left must be 0..2"):
        scand.position(st, [6, 6, 4, 4, 1], 3)
    with pytest.raises(UserError, match="1 of 2 rerolls left the dice come from a reroll"):
        scand.position(st, [6, 6, 4, 4, 1], 1, first=True)
    with pytest.raises(UserError, match="all 2 rerolls left the dice come from the turn.s first roll"):
        scand.position(st, [6, 6, 4, 4, 1], 2, first=False)
    full = scand.state(dict.fromkeys(scand.rules.box_names, 0))
    with pytest.raises(UserError, match="every box is filled"):
        scand.position(full, [6, 6, 4, 4, 1], 0)
    assert scand.turn_start_value(full) == 0.0

    gen = advisor("generala", tiny_dir, cache_dir)
    with pytest.raises(UserError, match="scores only once generala holds a score"):
        gen.state({"double_generala": 100})
    assert gen.state({"generala": 50}).flag and not gen.state({"generala": 0}).flag
    forced = advisor("forced", tiny_dir, cache_dir)
    with pytest.raises(UserError, match="top to bottom, but ones is still open"):
        forced.state({"twos": 4})
    yz = advisor("yahtzee", tiny_dir, cache_dir)
    assert yz.state({"yatzy": 50, "ones": 1}, extra=100).points == 151
    with pytest.raises(UserError, match="at most 0 on this sheet"):
        yz.state({"yatzy": 0, "ones": 1}, extra=100)
    with pytest.raises(UserError, match="steps of 100"):
        yz.state({"yatzy": 50, "ones": 1}, extra=50)


def test_saved_rolls_are_refused():
    with pytest.raises(UserError, match="saved_rolls is on, and the solver's table does not model"):
        Advisor(load_rules("scandinavian", ["saved_rolls=true"]))


def test_parse_filled():
    assert parse_filled(["ones=3,twos=6", "chance=20"]) == {"ones": 3, "twos": 6, "chance": 20}
    for bad, msg in [(["ones"], "expected BOX=SCORE"), (["ones=x"], "whole number"), (["ones=1,ones=2"], "twice")]:
        with pytest.raises(UserError, match=msg):
            parse_filled(bad)


def test_plan_cache_is_bounded(tiny_dir, cache_dir):
    adv = Advisor(advisor("tiny_bonus", tiny_dir, cache_dir).rules, cache_dir, plans=3)
    rng = np.random.default_rng(1)
    for _ in range(20):
        st, _, _ = random_sheet(adv, rng, int(rng.integers(adv.rules.n_boxes)))
        adv.advise(random_position(adv, rng, st))
    assert len(adv._plans) == 3


# ---------------------------------------------------------------------------------------------
# the advise command


def test_advise_command_text_and_json(capsys):
    argv = [
        "advise",
        "scandinavian",
        "--filled",
        "ones=3,twos=6",
        "--dice",
        "6",
        "6",
        "4",
        "4",
        "1",
        "--rolls-left",
        "2",
    ]
    assert cli_main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("scandinavian: sheet ones=3 twos=6; 9 points")
    rows = [ln.split() for ln in lines[3:-1]]
    assert len(rows) == 18 and rows[0][-1] == "best"  # 3 x 3 x 2 sub-multisets of 6 6 4 4 1
    assert cli_main(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["decision"] == "keep" and out["position"]["points"] == 9 and out["position"]["first_roll"]
    opts = out["options"]
    assert len(opts) == 18 and opts[0]["best"] and opts[0]["regret"] == 0.0
    assert sum(o["stop"] for o in opts) == 1
    values = [o["value"] for o in opts]
    assert values == sorted(values, reverse=True)
    assert all(math.isclose(o["regret"], values[0] - o["value"], abs_tol=1e-9) for o in opts)

    assert cli_main(argv[:-1] + ["0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["decision"] == "box" and not out["position"]["first_roll"]
    assert {o["box"] for o in out["options"]} == set(load_rules("scandinavian").box_names) - {"ones", "twos"}


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--filled", "sixes=7"], "box sixes cannot score 7"),
        (["--filled", "sixes"], "--filled: expected BOX=SCORE"),
        (["--rolls-left", "5"], "rolls left must be 0..2"),
        (["--dice", "6", "6"], "plays 5 dice, got 2"),
        (["--set", "saved_rolls=true"], "saved_rolls is on"),
    ],
)
def test_advise_errors_are_one_line(extra, message, capsys):
    argv = ["advise", "scandinavian", "--dice", "6", "6", "4", "4", "1", "--rolls-left", "2"]
    # a later option replaces the earlier one (argparse), so the faulty value wins
    assert cli_main(argv + extra) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_advise_help_has_examples(capsys):
    with pytest.raises(SystemExit):
        cli_main(["advise", "--help"])
    assert "yatzy-harness advise scandinavian --filled ones=3,twos=6" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# decisions of a game record (advise --record)


def _replayed(rules_name: str, settings: list[str], seats: list[str], seed: int, game: int):
    from harness.play.replay import record_of_replay, replay

    trace, res = replay(rules_name, settings, seats, seed, game)
    return record_of_replay(trace, res, rules_name, seats, seed, game)


def _decisions(adv: Advisor, rec, seat: int):
    """Every decision of a seat: (RecordPosition, advice, option played), and after a stop with
    rerolls left the box decision that followed too."""
    from harness.decisions.positions import position_from_record

    for t in (t for t in rec.turns if t.seat == seat):
        for r in range(1, len(t.rolls) + 1):
            rp = position_from_record(rec, seat, t.column, t.turn, r, adv)
            advice = adv.advise(rp.position)
            yield rp, advice, rp.played(advice)
            if advice.decision == "keep" and rp.keep is None:
                boxes = adv.advise(rp.box_position)
                yield rp, boxes, rp.played(boxes)


@pytest.mark.parametrize("name, settings", [("scandinavian", []), ("yahtzee", []), ("tiny_joker", ["columns=2"])])
def test_the_solver_plays_the_best_option_at_every_decision_of_its_record(
    name, settings, tiny_dir, cache_dir, monkeypatch
):
    adv = advisor(name, tiny_dir, cache_dir)
    rules_name = name
    if name in TINY:
        monkeypatch.setenv("YATZY_HARNESS_CACHE", str(cache_dir))
        rules_name = str(tiny_dir / f"{name}.toml")
        adv = Advisor(load_rules(rules_name, settings), cache_dir)
    rr = adv.rules.rolls_per_turn - 1
    greedy_regret, kinds = [], set()
    for game in range(3):
        rec = _replayed(rules_name, settings, ["solver", "greedy"], 1, game)
        for seat in (0, 1):
            for rp, advice, o in _decisions(adv, rec, seat):
                pos = rp.position
                # the sheet rebuilt from the record is the one advise --filled/--extra builds
                assert pos.state == adv.state(rp.scores, rp.extra)
                assert (pos.rolls_left, pos.first) == (rr - (rp.roll - 1), rp.roll == 1)
                assert o.regret == pytest.approx(advice.options[0].value - o.value, abs=1e-9)
                if seat == 0:
                    assert o.best and o.regret == 0.0 and o is advice.options[0]
                else:
                    greedy_regret.append(o.regret)
                kinds.add((advice.decision, o.stop, rp.column))
                if rp.turn == 1:  # each column starts from an empty sheet
                    assert pos.state == adv.state({}) and not rp.scores
    assert max(greedy_regret) > 0.5 and min(greedy_regret) == 0.0
    assert {("keep", False, 1), ("box", False, 1)} <= kinds
    if name == "tiny_joker":
        assert {("keep", False, 2), ("box", False, 2)} <= kinds


def test_a_record_position_names_what_is_not_there():
    from harness.decisions.positions import position_from_record

    rec = _replayed("scandinavian", [], ["solver", "greedy"], 1, 0)
    adv = Advisor(load_rules("scandinavian"))
    for args, message in [
        ((2, 1, 1, 1), r"^seat 2 is not in game 0: it has seats 0\.\.1 \(solver, greedy\)$"),
        ((0, 2, 1, 1), r"^column 2 is not in game 0: scandinavian plays 1 column$"),
        (
            (1, 1, 16, 1),
            r"^turn 16 is not in game 0, seat 1 \(greedy\), column 1: the record has "
            r"turns 1\.\.15 there$",
        ),
        (
            (1, 1, 3, 4),
            r"^roll 4 is not in game 0, seat 1 \(greedy\), column 1 turn 3: the turn "
            r"has 3 rolls$",
        ),
    ]:
        with pytest.raises(UserError, match=message):
            position_from_record(rec, *args, advisor=adv)
    partial = type(rec)(rec.game, rec.rules, rec.seats, rec.turns[:5], complete=False)
    with pytest.raises(UserError, match="turn 4 is not in game 0, seat 1 .*: the record has turns 1..2 there"):
        position_from_record(partial, 1, 1, 4, 1, advisor=adv)
    assert position_from_record(partial, 0, 1, 3, 2, advisor=adv).roll == 2
    with pytest.raises(UserError, match="saved_rolls is on"):
        position_from_record(_replayed("scandinavian", ["saved_rolls=true"], ["greedy"], 1, 0), 0, 1, 1, 1)


@pytest.fixture(scope="module")
def game0(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("records") / "game0.jsonl"
    path.write_text(_replayed("scandinavian", [], ["solver", "greedy"], 1, 0).to_json() + "\n")
    return path


def _advise_record(path, *extra: str) -> list[str]:
    return ["advise", "--record", str(path), *extra]


def test_advise_record_prints_the_plain_form_and_what_was_played(game0, capsys):
    from harness.records.record import read_records

    rec = read_records(game0).games[0]
    adv = Advisor(load_rules("scandinavian"))
    seen_stop = seen_regret = False
    for seat, turn, roll in [(1, 2, 1), (1, 7, 3), (0, 1, 1)] + [
        (t.seat, t.turn, len(t.rolls)) for t in rec.turns if len(t.rolls) < 3
    ][:2]:
        argv = _advise_record(game0, "--game", "0", "--seat", str(seat), "--turn", str(turn), "--roll", str(roll))
        assert cli_main(argv) == 0
        lines = capsys.readouterr().out.splitlines()
        # everything but the last line is the plain advise of the rebuilt position
        from harness.decisions.positions import position_from_record

        rp = position_from_record(rec, seat, 1, turn, roll, adv)
        plain = [
            "advise",
            "scandinavian",
            "--dice",
            *map(str, rp.dice),
            "--rolls-left",
            str(rp.position.rolls_left),
            "--first-roll" if rp.position.first else "--not-first",
        ]
        if rp.scores:
            plain += ["--filled", ",".join(f"{k}={v}" for k, v in rp.scores.items())]
        if rp.extra:
            plain += ["--extra", str(rp.extra)]
        assert cli_main(plain) == 0
        assert lines[:-1] == capsys.readouterr().out.splitlines()
        advice = adv.advise(rp.position)
        o = rp.played(advice)
        label = rec.seats[seat].label
        head = f"game 0, seat {seat} ({label}), column 1 turn {turn}, roll {roll}: played "
        assert lines[-1].startswith(head) and f"regret {o.regret:.4f} " in lines[-1]
        assert cli_main(argv + ["--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        chosen = out["chosen"]
        assert (chosen["seat"], chosen["turn"], chosen["roll"], chosen["label"]) == (seat, turn, roll, label)
        assert chosen["regret"] == o.regret and chosen["value"] == o.value
        assert [
            x
            for x in out["options"]
            if x.get("keep", x.get("box")) == chosen.get("keep", chosen.get("box"))
            and x.get("stop") == chosen.get("stop")
        ] == [{k: chosen[k] for k in out["options"][0]}]
        if rp.keep is None and rp.position.rolls_left:
            seen_stop = True
            assert chosen["stop"] and chosen["then"]["box"] == rp.box
            assert "played stop, regret" in lines[-1] and f"; then {rp.box}, regret" in lines[-1]
        else:
            assert "then" not in chosen
        seen_regret |= o.regret > 0 and f"(best: {_name(advice.options[0])})" in lines[-1]
    assert seen_stop and seen_regret


def _name(o) -> str:
    if o.box is not None:
        return o.box
    return "stop" if o.stop else "keep " + (" ".join(map(str, o.keep)) or "nothing")


def test_advise_record_reads_a_run_directory(tmp_path, capsys):
    from harness.records.record import records_of_run
    from harness.records.rundir import load_manifest
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    out = run(
        RunConfig(mode="tournament", entrants=("greedy", "bonus", "random"), games=6, seed=3, workers=1, record=True),
        tmp_path / "run",
    )
    ((_, rec),) = records_of_run(out, lineup=2, games=[4])
    turn = rec.turns[2 * 5 + 1]  # seat 1's sixth turn
    assert (
        cli_main(
            [
                "advise",
                "--record",
                str(out),
                "--lineup",
                "2",
                "--game",
                "4",
                "--seat",
                "1",
                "--turn",
                str(turn.turn),
                "--roll",
                "1",
                "--json",
            ]
        )
        == 0
    )
    chosen = json.loads(capsys.readouterr().out)["chosen"]
    assert (turn.seat, chosen["seat"], chosen["turn"], chosen["game"]) == (1, 1, 6, 4)
    assert chosen["label"] == rec.seats[1].label == load_manifest(out)["lineups"][2][1]
    if len(turn.rolls) > 1:
        assert (chosen["keep"], chosen["stop"]) == (sorted(turn.keeps[0], reverse=True), False)
    else:
        assert chosen["stop"] and chosen["then"]["box"] == turn.box
    assert cli_main(["advise", "--record", str(out), "--game", "6", "--seat", "0", "--turn", "1", "--roll", "1"]) == 2
    assert capsys.readouterr().err == f"yatzy-harness: error: game 6 is not in run {out}: lineup 0 has games 0..5\n"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--game", "1", "--seat", "0", "--turn", "1", "--roll", "1"], "game 1 is not in {f} (1 game: 0)"),
        (["--game", "0", "--seat", "2", "--turn", "1", "--roll", "1"], "seat 2 is not in game 0: it has seats 0..1"),
        (["--game", "0", "--seat", "0", "--turn", "16", "--roll", "1"], "turn 16 is not in game 0, seat 0 (solver)"),
        (["--game", "0", "--seat", "0", "--turn", "1", "--roll", "0"], "roll 0 is not in game 0, seat 0 (solver)"),
        (["--game", "0", "--seat", "0", "--turn", "1", "--column", "2", "--roll", "1"], "column 2 is not in game 0"),
        (
            ["--game", "0", "--seat", "0", "--turn", "1"],
            "--record needs --game, --seat, --turn and --roll; missing --roll",
        ),
        (
            ["--game", "0", "--seat", "0", "--turn", "1", "--roll", "1", "--dice", "1", "2", "3", "4", "5"],
            "--record takes the rules and the position from the record: leave out --dice",
        ),
        (["--game", "0", "--seat", "0", "--turn", "1", "--roll", "1", "--lineup", "1"], "{f} has no lineups"),
    ],
)
def test_advise_record_errors_are_one_line(extra, message, game0, capsys):
    assert cli_main(_advise_record(game0, *extra)) == 2
    err = capsys.readouterr().err
    assert message.format(f=game0) in err and err.count("\n") == 1


def test_advise_needs_a_position_or_a_record(capsys):
    for argv, message in [
        (["advise", "scandinavian", "--dice", "6", "6", "4", "4", "1"], "missing --rolls-left"),
        (["advise", "--dice", "6", "6", "4", "4", "1", "--rolls-left", "2"], "missing RULES"),
        (
            ["advise", "scandinavian", "--dice", "6", "6", "4", "4", "1", "--rolls-left", "2", "--turn", "3"],
            "--turn needs --record FILE",
        ),
    ]:
        assert cli_main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
