"""Game records: the engine's games validate, bad games are named and skipped, the text form round-trips."""

from __future__ import annotations

import dataclasses
import gzip
import json
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.util.errors import UserError
from harness.records.record import (
    FORMAT,
    GameRecord,
    RecordError,
    Seat,
    Turn,
    format_game,
    format_turn,
    parse_turn,
    read_records,
    record_from_trace,
    validate_record,
    write_records_jsonl,
    write_records_parquet,
)
from harness.play.replay import replay
from harness.game.rules import load_rules

BOTS = ["random", "timeout", "greedy", "bonus", "solver"]
#: (rules, settings, bots): every built-in bot on these; the solver is left out of maxi (a solve
#: of maxi takes minutes, and it does not model saved rolls)
CASES = [
    ("scandinavian", [], BOTS),
    ("yahtzee", [], BOTS),
    ("generala", [], BOTS),
    ("forced", [], BOTS),
    ("scandinavian", ["columns=2"], BOTS),
    ("maxi", [], BOTS[:4]),
    ("maxi", ["saved_rolls=true"], BOTS[:4]),
    ("standard", ["saved_rolls=true", "columns=2"], ["timeout", "greedy"]),
]


@cache
def engine_record(
    rules_name: str, settings: tuple[str, ...], seats: tuple[str, ...], game: int, seed: int = 7
) -> tuple:
    """(record, engine totals) of one replayed game."""
    trace, res = replay(rules_name, list(settings), list(seats), seed, game)
    rec = record_from_trace(
        trace, rules_name=rules_name, rules=res.rules, seats=seats, game=game, seed=seed, totals=res.total[0].tolist()
    )
    return rec, tuple(res.total[0].tolist())


def _games(rules_name, settings, bots):
    """Three games: every bot in a seat, four seats at a time."""
    out = []
    for game in range(3):
        seats = tuple(bots[(game + i) % len(bots)] for i in range(min(4, len(bots))))
        out.append(engine_record(rules_name, tuple(settings), seats, game))
    return out


@pytest.mark.parametrize("rules_name,settings,bots", CASES, ids=lambda v: ",".join(v) if isinstance(v, list) else v)
def test_every_engine_game_gives_a_valid_record_with_the_engine_totals(rules_name, settings, bots):
    for rec, totals in _games(rules_name, settings, bots):
        assert rec.complete and rec.totals == totals
        assert validate_record(rec) == totals
        again = GameRecord.from_json(rec.to_json())
        assert again == rec and validate_record(again) == totals
        rules = load_rules(rules_name, settings)
        assert len(rec.turns) == len(rec.seats) * rules.n_boxes * rules.columns
        assert all(len(t.keeps) == len(t.rolls) - 1 for t in rec.turns)


def test_engine_records_exercise_saved_rolls_servida_and_the_extra_bonus():
    """The cases above include turns that only the special rules allow (else the test proves little)."""
    maxi = [r for r, _ in _games("maxi", ["saved_rolls=true"], BOTS[:4])]
    assert any(len(t.rolls) > 3 for r in maxi for t in r.turns)
    # find, in a batch, a yahtzee game with the +100 and a generala game with a servida box; replay them
    import numpy as np

    from harness.game import registry
    from harness.game.loop import play

    yz = load_rules("yahtzee")
    res = play(yz, [registry.make("greedy", yz)], np.arange(400), 7)
    game = int(np.flatnonzero(res.extra[:, 0] > 0)[0])
    rec, totals = engine_record("yahtzee", (), ("greedy",), game)
    found_extra = any(t.extra for t in rec.turns) and validate_record(rec) == totals
    found_servida = False
    for game in range(40):
        rec, _ = engine_record("generala", (), ("greedy",), game)
        found_servida = any(
            t.first_roll and (t.box, t.score) in (("straight", 25), ("full_house", 35), ("poker", 45))
            for t in rec.turns
        )
        if found_servida:
            break
    assert found_servida and found_extra


def test_replay_json_prints_the_record(capsys):
    from harness.cli import main

    assert (
        main(["replay", "--rules", "yahtzee", "--seats", "greedy,random", "--seed", "9", "--game", "17", "--json"]) == 0
    )
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    rec = GameRecord.from_json(out)
    _, res = replay("yahtzee", [], ["greedy", "random"], 9, 17)
    assert rec.game == 17 and rec.seed == 9 and rec.rules == "yahtzee"
    assert rec.seats == (Seat(spec="greedy"), Seat(spec="random"))
    assert validate_record(rec) == tuple(res.total[0].tolist()) == rec.totals
    main(
        [
            "replay",
            "--rules",
            "scandinavian",
            "--seats",
            "timeout",
            "--seed",
            "1",
            "--game",
            "0",
            "--set",
            "upper_bonus_threshold=62",
            "--json",
        ]
    )
    rec = GameRecord.from_json(capsys.readouterr().out)
    assert rec.settings == {"upper_bonus_threshold": 62} and validate_record(rec) == rec.totals


# ---------------------------------------------------------------------------------------------
# errors: one line naming the game, seat, column and turn


def _named(rec: GameRecord) -> GameRecord:
    return dataclasses.replace(
        rec, seats=tuple(Seat(name=n, spec=s.spec) for n, s in zip(["bob", "alice", "carol", "dave"], rec.seats))
    )


def _with_turn(rec: GameRecord, i: int, **change) -> GameRecord:
    turns = list(rec.turns)
    turns[i] = dataclasses.replace(turns[i], **change)
    return dataclasses.replace(rec, turns=tuple(turns))


def test_the_documented_error_line():
    rec, _ = engine_record("scandinavian", (), ("greedy", "bonus"), 17)
    rec = dataclasses.replace(_named(rec), game=17)
    i = 2 * 3 + 1  # seat 1, turn 4
    rec = _with_turn(rec, i, rolls=((6, 6, 2, 4, 1), (6, 6, 6, 3, 5), (6, 6, 6, 6, 2)), keeps=((6, 6, 6), (6, 6, 6)))
    with pytest.raises(RecordError) as info:
        validate_record(rec)
    assert str(info.value) == "game 17, seat 1 (alice), column 1 turn 4: kept 6 6 6 but roll 1 was 6 6 2 4 1"


def _check(rec: GameRecord, *needles: str) -> str:
    with pytest.raises(RecordError) as info:
        validate_record(rec)
    msg = str(info.value)
    assert "\n" not in msg
    for n in needles:
        assert n in msg, msg
    return msg


@pytest.fixture(scope="module")
def sc_game() -> GameRecord:
    rec, _ = engine_record("scandinavian", (), ("greedy", "timeout"), 3)
    return _named(rec)


def _at(rec, i):
    t = rec.turns[i]
    return f"game {rec.game}, seat {t.seat} ({rec.seats[t.seat].name}), column {t.column} turn {t.turn}: "


def test_each_kind_of_error_is_named(sc_game):
    rec = sc_game
    # turn 5 of seat 0 (index 8) with its rerolls, whichever it is
    i = next(j for j, t in enumerate(rec.turns) if len(t.rolls) == 3)
    t = rec.turns[i]
    at = _at(rec, i)
    _check(_with_turn(rec, i, score=t.score + 1), at, f"{t.box} scores {t.score} for", f"says {t.score + 1}")
    _check(_with_turn(rec, i, rolls=(t.rolls[0][:4], *t.rolls[1:])), at, "roll 1 has 4 dice")
    _check(_with_turn(rec, i, rolls=(t.rolls[0], (7, *t.rolls[1][1:]), t.rolls[2])), at, "roll 2 has face 7")
    _check(_with_turn(rec, i, keeps=t.keeps[:1]), at, "3 roll(s) need 2 keep(s)")
    _check(_with_turn(rec, i, rolls=(*t.rolls, t.rolls[2]), keeps=(*t.keeps, ())), at, "4 rolls, but the turn allows 3")
    _check(_with_turn(rec, i, keeps=(t.rolls[0], t.keeps[1])), at, "kept every die of roll 1")
    missing = next(f for f in range(1, 7) if f not in t.rolls[1])
    _check(_with_turn(rec, i, keeps=(t.keeps[0], (missing,))), at, f"kept {missing} but roll 2 was")
    # the next roll must hold the kept dice
    bad_next = tuple(sorted(f % 6 + 1 for f in t.rolls[1]))
    kept = t.keeps[0]
    if kept and not all(bad_next.count(f) >= kept.count(f) for f in kept):
        _check(_with_turn(rec, i, rolls=(t.rolls[0], bad_next, t.rolls[2])), at, "does not hold the kept")
    _check(_with_turn(rec, i, box="sevens"), at, "unknown box 'sevens'")
    earlier = next(e.box for e in rec.turns[:i] if e.seat == t.seat)
    _check(_with_turn(rec, i, box=earlier), at, f"box {earlier} is already filled in column 1")
    # order: swap two seats' turns
    turns = list(rec.turns)
    turns[i], turns[i + 1] = turns[i + 1], turns[i]
    _check(dataclasses.replace(rec, turns=tuple(turns)), "out of play order")
    _check(
        dataclasses.replace(rec, turns=rec.turns[:-1]),
        f"game {rec.game}: incomplete: 29 of 30 turns",
        'complete": false',
    )
    assert validate_record(dataclasses.replace(rec, turns=rec.turns[:-1], complete=False, totals=None))
    _check(
        dataclasses.replace(rec, totals=(rec.totals[0], rec.totals[1] + 1)),
        f"game {rec.game}, seat 1 (alice): total {rec.totals[1] + 1} but the turns add up to {rec.totals[1]}",
    )
    _check(dataclasses.replace(rec, turns=rec.turns + rec.turns[:1]), "past the end of the game")


def test_a_partial_game_is_checked_as_far_as_it_goes(sc_game):
    part = dataclasses.replace(sc_game, turns=sc_game.turns[:7], complete=False, totals=None)
    assert len(validate_record(part)) == 2
    _check(_with_turn(part, 6, score=part.turns[6].score + 1), "turn 4")
    # running totals may be given
    ok = validate_record(part)
    assert validate_record(dataclasses.replace(part, totals=ok)) == ok


MUTATIONS = ["score", "face", "dice", "box", "order", "keep", "rolls", "totals"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.sampled_from(CASES[:5]),
    game=st.integers(0, 2),
    pick=st.integers(0, 10_000),
    mutation=st.sampled_from(MUTATIONS),
)
def test_any_single_change_to_a_valid_game_is_caught(case, game, pick, mutation):
    """Change one thing in one turn of a valid engine game: validation refuses it, naming that turn;
    and reading it refuses it with that line (whether the vectorised checks or validate_record
    found it), while the original passes the vectorised checks alone."""
    from unittest import mock

    import harness.records.record as R

    rec, _ = _games(*case)[game]
    rec = _named(rec)
    i = pick % len(rec.turns)
    t = rec.turns[i]
    at = _at(rec, i)

    def check(bad: GameRecord, *needles: str) -> None:
        msg = _check(bad, *needles)
        with mock.patch.object(R, "validate_record", side_effect=AssertionError("validate_record of a valid game")):
            assert R.read_records([rec.to_json()]).games == [rec]
        with pytest.raises(R.NoUsableGame) as info:
            R.read_records([bad.to_json()])
        assert [b.message for b in info.value.bad] == [f"<lines> line 1: {msg}"]

    if mutation == "score":
        check(_with_turn(rec, i, score=t.score + 1 + pick % 3), at, "scores")
    elif mutation == "face":
        check(_with_turn(rec, i, rolls=((0, *t.rolls[0][1:]), *t.rolls[1:])), at, "face 0")
    elif mutation == "dice":
        check(_with_turn(rec, i, rolls=(t.rolls[0] + (1,), *t.rolls[1:])), at, "roll 1 has")
    elif mutation == "box":
        # a box this seat already filled in this column, or (first turn) one that does not exist
        earlier = [e.box for e in rec.turns[:i] if e.seat == t.seat and e.column == t.column]
        check(
            _with_turn(rec, i, box=earlier[pick % len(earlier)] if earlier else "nope"),
            at,
            "already filled" if earlier else "unknown box 'nope'",
        )
    elif mutation == "order":
        j = (i + 1 + pick % (len(rec.turns) - 1)) % len(rec.turns)
        turns = list(rec.turns)
        turns[i], turns[j] = turns[j], turns[i]
        check(dataclasses.replace(rec, turns=tuple(turns)), "out of play order")
    elif mutation == "keep":
        if not t.keeps:
            check(_with_turn(rec, i, keeps=((),)), at, "need 0 keep(s)")
        else:
            check(_with_turn(rec, i, keeps=((9,), *t.keeps[1:])), at, "kept 9 but roll 1 was")
    elif mutation == "rolls":
        rules = load_rules(case[0], case[1])
        extra = tuple((t.rolls[-1],) * rules.rolls_per_turn)
        check(_with_turn(rec, i, rolls=t.rolls + extra, keeps=t.keeps + ((),) * len(extra)), at, "the turn allows")
    else:
        seat = pick % len(rec.seats)
        totals = list(rec.totals)
        totals[seat] -= 1 + pick % 5
        check(dataclasses.replace(rec, totals=tuple(totals)), f"seat {seat} ({rec.seats[seat].name}): total")


def test_a_stated_number_the_vectorised_checks_cannot_take_is_left_to_validate_record(sc_game):
    """An extra bonus stated 0 is checked (not read as "not stated"), a negative one or a negative
    total is named as validate_record names it, and a partial game marked so is valid."""
    rec = sc_game
    totals = validate_record(rec)
    cases = [
        _with_turn(rec, 0, extra=0),
        _with_turn(rec, 0, extra=-5),
        _with_turn(rec, 0, extra=50),
        dataclasses.replace(rec, totals=(-1, totals[1])),
        dataclasses.replace(rec, totals=None),
        dataclasses.replace(rec, turns=rec.turns[:7], complete=False, totals=None),
        dataclasses.replace(rec, turns=rec.turns[:7], totals=None),
    ]
    got = read_records([dataclasses.replace(c, game=i).to_json() for i, c in enumerate(cases)])
    want_ok, want_bad = [], []
    for i, c in enumerate(cases):
        c = dataclasses.replace(c, game=i)
        try:
            validate_record(c)
        except RecordError as exc:
            want_bad.append(f"<lines> line {i + 1}: {exc}")
        else:
            want_ok.append(c)
    assert got.games == want_ok and [m for _, m in got.errors] == want_bad
    assert [g.game for g in got.games] == [0, 4, 5]  # extra 0 where none was earned, no totals, partial


# ---------------------------------------------------------------------------------------------
# hand-made games: the special rules, and a human game from a site's log


def _game(rules: str, lines: list[str], settings=None, seats=("ann",), complete=False, totals=None) -> GameRecord:
    n = len(seats)
    turns = tuple(parse_turn(line, seat=i % n, turn=i // n + 1) for i, line in enumerate(lines))
    return GameRecord("h1", rules, tuple(Seat(name=s) for s in seats), turns, settings or {}, None, totals, complete)


def test_servida_is_scored_on_the_first_roll_only():
    assert validate_record(_game("generala", ["2 3 4 5 6 -> straight 25"])) == (25,)
    assert validate_record(_game("generala", ["2 3 4 5 1 keep 2 3 4 5 | 2 3 4 5 6 -> straight 20"])) == (20,)
    _check(_game("generala", ["2 3 4 5 6 -> straight 20"]), "straight scores 25 for 2 3 4 5 6 made on the first roll")


def test_yahtzee_joker_and_extra_bonus():
    base = ["6 6 6 6 6 -> yatzy 50"]
    # a second yahtzee: +100, and the joker sends it to sixes while sixes is open
    assert validate_record(_game("yahtzee", base + ["6 6 6 6 6 -> sixes 30 +100"])) == (180,)
    assert validate_record(_game("yahtzee", base + ["6 6 6 6 6 -> sixes 30"])) == (180,)  # extra not stated
    _check(_game("yahtzee", base + ["6 6 6 6 6 -> sixes 30 +0"]), "extra bonus 100 for 6 6 6 6 6, the record says 0")
    _check(
        _game("yahtzee", base + ["6 6 6 6 6 -> chance 30"]),
        "chance may not take 6 6 6 6 6 now: the joker rule allows sixes",
    )
    # with sixes filled, a joker full house scores 25
    lines = base + ["6 6 6 6 1 -> sixes 24", "6 6 6 6 6 -> full_house 25 +100"]
    assert validate_record(_game("yahtzee", lines)) == (24 + 50 + 25 + 100,)
    # a scratched yatzy box keeps the joker but never pays the +100
    assert validate_record(_game("yahtzee", ["1 2 3 4 6 -> yatzy 0", "5 5 5 5 5 -> fives 25 +0"])) == (25,)


def test_forced_order():
    _check(_game("forced", ["1 1 2 3 4 -> twos 2"]), "forced order: ones comes next, not twos")
    assert validate_record(_game("forced", ["1 1 2 3 4 -> ones 2", "2 2 2 3 4 -> twos 6"])) == (8,)


def test_settings_are_checked_by_the_rules():
    plus = {"yatzy_scoring": "flat_plus_sum"}
    assert validate_record(_game("scandinavian", ["6 6 6 6 6 -> yatzy 80"], plus)) == (80,)
    _check(
        _game("standard", ["1 1 2 3 4 -> ones 2"], {"include_pairs": False}),
        "game h1: rules standard:",
        "include_pairs",
        "does not apply",
    )
    _check(_game("scandinavian", ["1 1 2 3 4 -> ones 2"], {"nonsense": 1}), "unknown setting 'nonsense'")
    _check(_game("no_such_rules", ["1 1 2 3 4 -> ones 2"]), "unknown rule set 'no_such_rules'")


def test_saved_rolls_mirror_the_engine_and_reset_each_column(tmp_path):
    """A two-box house rule read from a file path: rolls left unused are banked within a column only."""
    path = tmp_path / "two.toml"
    path.write_text(
        'name = "two"\n[settings]\nsaved_rolls = true\ncolumns = 2\n'
        '[[boxes]]\nname = "chance"\nkind = "chance"\n'
        '[[boxes]]\nname = "sixes"\nkind = "upper"\nface = 6\n'
    )
    first = "1 2 3 4 5 -> chance 15"  # banks 2 rolls
    five = "1 1 1 1 1 keep nothing | " * 3 + "2 2 2 2 2 keep nothing | 6 6 6 6 6 -> sixes 30"
    ok = _game(str(path), [first, five], complete=False)
    assert validate_record(ok) == (45,)
    six = five.replace("keep nothing | 6 6", "keep nothing | 1 1 1 1 1 keep nothing | 6 6")
    _check(_game(str(path), [first, six], complete=False), "6 rolls, but the turn allows 5 (3 + 2 saved)")
    # column 2 starts with nothing saved, whatever column 1 left
    col2 = [
        first,
        "6 6 6 6 6 -> sixes 30",
        "1 1 1 1 1 keep nothing | 1 1 1 1 1 keep nothing | 1 1 1 1 1 keep nothing | 1 2 3 4 5 -> chance 15",
    ]
    rec = _game(str(path), col2, complete=False)
    rec = dataclasses.replace(rec, turns=rec.turns[:2] + (dataclasses.replace(rec.turns[2], column=2, turn=1),))
    _check(rec, "column 2 turn 1: 4 rolls, but the turn allows 3 (3 + 0 saved)")


def test_a_human_game_without_bots(tmp_path):
    """Two people, names only, a rule set by name: as a site's log would be written."""
    lines = ["6 6 2 4 1 keep 6 6 | 6 6 6 3 5 keep 6 6 6 | 6 6 6 6 2 -> sixes 24", "1 2 3 4 5 -> small_straight 15"]
    rec = _game("scandinavian", lines, seats=("alice", "bob"))
    rec = dataclasses.replace(rec, meta={"site": "example", "date": "2026-01-02"})
    assert validate_record(rec) == (24, 15)
    again = GameRecord.from_json(rec.to_json())
    assert again == rec and json.loads(rec.to_json())["seats"] == [{"name": "alice"}, {"name": "bob"}]
    text = format_game(rec)
    assert "seat 1 bob    1 2 3 4 5 -> small_straight 15" in text and "(partial game)" in text


# ---------------------------------------------------------------------------------------------
# the JSON shape


def test_the_json_shape_is_the_documented_one():
    rec, _ = engine_record("scandinavian", ("upper_bonus_threshold=62",), ("greedy", "solver"), 17)
    d = json.loads(rec.to_json())
    assert list(d) == ["format", "game", "rules", "seats", "seed", "turns", "totals"]
    assert d["format"] == FORMAT == "yatzy-record/1"
    assert d["rules"] == {"name": "scandinavian", "settings": {"upper_bonus_threshold": 62}}
    assert list(d["turns"][0]) == ["seat", "column", "turn", "rolls", "keeps", "box", "score"]
    assert [(t["seat"], t["turn"]) for t in d["turns"][:4]] == [(0, 1), (1, 1), (0, 2), (1, 2)]


@pytest.mark.parametrize(
    "change,message",
    [
        ({"format": "yatzy-record/2"}, "format must be 'yatzy-record/1'"),
        ({"game": None}, "'game' must be a string or a number"),
        ({"rules": "scandinavian"}, "rules must be"),
        ({"seats": [{}]}, "seat 0 must be"),
        ({"seats": []}, "seats must be a list of 1..8 seats"),
        ({"turns": {}}, "turns must be a list"),
        ({"totals": 3}, "totals must be a list"),
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"seed": "x"}, "seed must be a whole number"),
        ({"totals": [10**30]}, "totals is out of range"),  # held as int64: refused, not an OverflowError later
    ],
)
def test_a_malformed_record_is_refused_in_one_line(change, message):
    rec, _ = engine_record("scandinavian", (), ("greedy",), 0)
    d = {**rec.to_dict(), **change}
    with pytest.raises(RecordError) as info:
        GameRecord.from_dict(d)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "change,message",
    [
        ({"score": "24"}, "seat 0 (greedy), column 1 turn 1: score must be a whole number"),
        ({"score": -(10**30)}, "seat 0 (greedy), column 1 turn 1: score is out of range"),
        ({"rolls": [[1, 2, "3", 4, 5]]}, "seat 0 (greedy), column 1 turn 1: rolls: faces must be whole numbers"),
        ({"box": 3}, "seat 0 (greedy), column 1 turn 1: box must be a box name"),
        ({"turn": None}, "turns[0]: turn must be a whole number"),
        ({"when": 3}, "turns[0]: unknown key 'when'"),
    ],
)
def test_a_malformed_turn_is_refused_in_one_line(change, message):
    rec, _ = engine_record("scandinavian", (), ("greedy",), 0)
    d = rec.to_dict()
    d["turns"][0] = {**d["turns"][0], **change}
    with pytest.raises(RecordError) as info:
        GameRecord.from_dict(d)
    assert f"game 0, {message}" in str(info.value)


# ---------------------------------------------------------------------------------------------
# files


def _some_records():
    """Four games of ids 0..3 (a file's game ids are its games: a second line with one is a duplicate)."""
    return [engine_record("scandinavian", (), ("greedy", "timeout"), g)[0] for g in range(3)] + [
        dataclasses.replace(engine_record("generala", (), ("random",), 0)[0], game=3)
    ]


@pytest.mark.parametrize("name", ["games.jsonl", "games.jsonl.gz", "games.parquet"])
def test_files_round_trip(tmp_path, name):
    recs = _some_records()
    path = tmp_path / name
    if name.endswith(".parquet"):
        write_records_parquet(path, recs, lineups=[0, 0, 0, 5])
    else:
        write_records_jsonl(path, recs)
    res = read_records(path)
    assert res.games == recs and res.errors == []
    assert res.lineups == ([0, 0, 0, 5] if name.endswith(".parquet") else [None] * 4)
    assert res.summary == f"{path}: 4 games read, 0 bad games skipped"
    if name.endswith(".gz"):
        assert gzip.open(path, "rt").read().count("\n") == 4


def test_parquet_has_the_documented_columns(tmp_path):
    import pyarrow.parquet as pq

    recs = _some_records()
    write_records_parquet(tmp_path / "a.parquet", recs)
    t = pq.read_table(tmp_path / "a.parquet")
    assert t.column_names == ["game", "record"] and str(t.schema.field("game").type) == "int64"
    assert GameRecord.from_json(t.column("record")[0].as_py()) == recs[0]
    write_records_parquet(tmp_path / "b.parquet", [dataclasses.replace(recs[0], game="site-17")])
    assert pq.read_table(tmp_path / "b.parquet").column("game").to_pylist() == ["site-17"]


def test_bad_games_are_listed_and_skipped_never_dropped(tmp_path):
    good = _some_records()
    bad_score = _with_turn(_named(good[1]), 4, score=good[1].turns[4].score + 2)
    lines = [
        good[0].to_json(),
        "{not json",
        bad_score.to_json(),
        "",
        good[2].to_json(),
        json.dumps({"format": FORMAT, "game": "x9"}),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = read_records(path)
    assert res.games == [good[0], good[2]]
    assert [g for g, _ in res.errors] == [None, 1, "x9"]
    msgs = [m for _, m in res.errors]
    assert msgs[0].startswith(f"{path} line 2: not valid JSON")
    assert msgs[1].startswith(f"{path} line 3: game 1, seat 0 (bob), column 1 turn 3: ")
    assert msgs[2].startswith(f"{path} line 6: game x9: rules must be")
    assert res.summary == f"{path}: 2 games read, 3 bad games skipped"
    # the same from lines in memory
    assert read_records(lines).games == res.games


def test_a_line_cut_off_mid_record_is_named_as_cut_off(tmp_path):
    """A file whose writer stopped mid-line (a truncated log, one still being written): the cut line
    is named as cut off, wherever in the record the cut falls (issue 37: it said "Expecting ','
    delimiter"); JSON that is wrong rather than short keeps the reader's own reason."""
    good = _some_records()
    whole = good[2].to_json()
    cuts = [
        1,
        whole.index('"turns"') + 3,
        whole.index('"rolls"') + 9,
        whole.index('"box"') + 7,
        whole.index('"score"') + 8,
        len(whole) - 1,
    ]
    for cut in cuts:
        path = tmp_path / f"cut{cut}.jsonl"
        path.write_text(good[0].to_json() + "\n" + good[1].to_json() + "\n" + whole[:cut])
        res = read_records(path)
        assert res.games == good[:2]
        (msg,) = [m for _, m in res.errors]
        said = f"not valid JSON: cut off after column {cut}, in the middle of the record"
        assert msg == f"{path} line 3: {said}", whole[:cut]
        with pytest.raises(RecordError, match=f"^{said}$"):
            GameRecord.from_json(whole[:cut])
    wrong = whole.replace('"turns":', '"turns"', 1)
    (msg,) = [m for _, m in read_records([good[0].to_json(), wrong]).errors]
    assert msg.startswith("<lines> line 2: not valid JSON (Expecting ':' delimiter at column")


def test_a_source_with_nothing_usable_is_a_user_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(UserError, match="no game records"):
        read_records(empty)
    with pytest.raises(UserError, match=r"no usable game \(2 bad; the first: <lines> line 1: not valid JSON"):
        read_records(["{", "[]"])
    with pytest.raises(UserError, match="cannot read game records"):
        read_records(tmp_path / "missing.jsonl")
    (tmp_path / "x.parquet").write_text("not parquet")
    with pytest.raises(UserError, match="cannot read game records"):
        read_records(tmp_path / "x.parquet")


def test_a_stream_reads_a_batch_at_a_time_and_finds_what_read_records_finds(tmp_path):
    """RecordStream: batches of up to ``batch`` games, each with the bad games of its stretch of lines, in
    the file's order; the games, bad games and summary of read_records; read once."""
    from harness.records.record import NoUsableGame, RecordStream

    good = _some_records()
    bad_score = _with_turn(_named(good[1]), 4, score=good[1].turns[4].score + 2)
    lines = [
        good[0].to_json(),
        "{not json",
        bad_score.to_json(),
        good[2].to_json(),
        good[3].to_json(),
        "[]",
        dataclasses.replace(good[0], game=9).to_json(),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    seen = []
    stream = RecordStream(path, batch=2, on_bad=seen.append)
    parts = list(stream)
    # up to 2 games a batch: the second record read (line 3) is no game
    assert [[g.game for g in p.games] for p in parts] == [[0], [2, 3], [9]]
    assert [[m.split(":")[0] for _, m in p.errors] for p in parts] == [
        [f"{path} line 2", f"{path} line 3"],
        [],
        [f"{path} line 6"],
    ]
    whole = read_records(path)
    assert [g for p in parts for g in p.games] == whole.games and stream.errors == whole.errors == seen
    assert [x for p in parts for x in p.places] == whole.places and stream.summary == whole.summary
    assert stream.named == ("scandinavian", {})
    with pytest.raises(RuntimeError, match="read once"):
        list(stream)
    # nothing usable: the walk ends with every bad game, each told to on_bad as its batch was read
    seen.clear()
    with pytest.raises(NoUsableGame) as info:
        list(RecordStream(["{", "[]", "x"], batch=1, on_bad=seen.append))
    assert len(info.value.bad) == 3 and info.value.bad == seen


def test_a_stream_reads_its_next_batch_on_a_thread_while_this_one_is_walked():
    """The batches come in order; what the reading raises is raised in its place; a walk that
    stops early stops the reading (the reader's generator is closed, so is its file)."""
    from harness.records.record import _ahead

    closed = []

    def parts(n, fail=None):
        try:
            for i in range(n):
                if i == fail:
                    raise UserError(f"batch {i} cannot be read")
                yield i
        finally:
            closed.append(n)

    assert list(_ahead(parts(5))) == [0, 1, 2, 3, 4]
    got = []
    with pytest.raises(UserError, match="batch 3 cannot be read"):
        for i in _ahead(parts(6, fail=3)):
            got.append(i)
    assert got == [0, 1, 2]
    walk = _ahead(parts(1000))
    assert next(walk) == 0
    walk.close()
    assert closed == [5, 6, 1000]


def test_a_streams_progress_bar_moves_with_the_lines_and_batches(tmp_path, monkeypatch):
    """quiet=False: the bar's position is the bytes read, moved every few hundred lines and at each
    batch, up to the file's size (a run directory's: its games)."""
    import tqdm as tqdm_module

    import harness.records.record as R

    moves: list[tuple[str, int, int | None]] = []

    class Recording(tqdm_module.tqdm):
        def update(self, n=1):
            super().update(n)
            if not self.disable:
                moves.append((self.desc, self.n, self.total))

    monkeypatch.setattr(tqdm_module, "tqdm", Recording)  # harness.util.progress.bar imports it when it draws
    monkeypatch.setattr(R, "_BAR_ROWS", 4)
    recs = [dataclasses.replace(r, game=g) for g, r in enumerate(_some_records()[:3] * 20)]
    path = write_records_jsonl(tmp_path / "many.jsonl", recs)
    size = path.stat().st_size
    stream = R.RecordStream(path, batch=25, quiet=False)
    assert [len(p.games) for p in stream] == [25, 25, 10]
    n = [m[1] for m in moves]
    assert moves and all(m[0] == "reading records" and m[2] == size for m in moves)
    assert n == sorted(n) and n[-1] == size and len(set(n)) >= 60 // 4
    moves.clear()
    assert len(list(R.RecordStream(path, quiet=True))) == 1 and not moves  # one batch of 60, no bar


def test_records_command(tmp_path, capsys):
    from harness import cli

    good = _some_records()
    path = tmp_path / "g.jsonl"
    path.write_text(good[0].to_json() + "\n" + _with_turn(good[1], 0, box="nope").to_json() + "\n")
    assert cli.main(["records", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == f"{path}: 1 game read, 1 bad game skipped\n" and "unknown box 'nope'" in err
    write_records_jsonl(path, good[:1])
    assert cli.main(["records", str(path), "--text"]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("game 0, rules scandinavian, seed 7: greedy vs timeout\ncolumn 1 turn  1 seat 0 greedy ")


# ---------------------------------------------------------------------------------------------
# the text form

faces = st.lists(st.integers(1, 6), min_size=1, max_size=8).map(tuple)


@st.composite
def turns(draw):
    n = draw(st.integers(1, 8))
    roll = st.lists(st.integers(1, 6), min_size=n, max_size=n).map(tuple)
    rolls = draw(st.lists(roll, min_size=1, max_size=6))
    keeps = tuple(tuple(draw(st.lists(st.sampled_from(r), max_size=n - 1))) for r in rolls[:-1])
    box = draw(st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True))
    return Turn(
        draw(st.integers(0, 7)),
        draw(st.integers(1, 6)),
        draw(st.integers(1, 30)),
        tuple(rolls),
        keeps,
        box,
        draw(st.integers(-5, 500)),
        draw(st.none() | st.integers(0, 1000)),
    )


@given(turns())
def test_text_form_round_trips(t):
    text = format_turn(t)
    assert "\n" not in text
    assert parse_turn(text, seat=t.seat, column=t.column, turn=t.turn) == t


def test_text_form_reads_as_documented():
    t = parse_turn("6 6 2 4 1 keep 6 6 | 6 6 6 3 5 keep 6 6 6 | 6 6 6 6 2 -> sixes 24", seat=1, turn=4)
    assert t == Turn(1, 1, 4, ((6, 6, 2, 4, 1), (6, 6, 6, 3, 5), (6, 6, 6, 6, 2)), ((6, 6), (6, 6, 6)), "sixes", 24)
    assert parse_turn("1 2 3 4 5 keep - | 2 2 2 2 2->yatzy 50 +100").keeps == ((),)
    assert (
        format_turn(parse_turn("1 2 3 4 5 keep - | 2 2 2 2 2 -> yatzy 50"))
        == "1 2 3 4 5 keep nothing | 2 2 2 2 2 -> yatzy 50"
    )


@pytest.mark.parametrize(
    "text,part",
    [
        ("6 6 2 4 1 -> ", "'6 6 2 4 1 ->'"),
        ("6 6 2 4 1 hold 6 6 | 6 6 6 3 5 -> sixes 18", "'6 6 2 4 1 hold 6 6'"),
        ("6 6 2 4 1 keep 6 6 | 6 6 6 3 5 sixes 18", "'6 6 6 3 5 sixes 18'"),
    ],
)
def test_unreadable_turn_text_is_one_line(text, part):
    with pytest.raises(UserError) as info:
        parse_turn(text)
    assert part in str(info.value) and "\n" not in str(info.value)


def test_the_readme_example_is_a_valid_record_of_the_replayed_game():
    """The manual's "Game records" (docs/records.md): its JSON example validates and is the start of the replayed game."""
    import re
    from pathlib import Path

    section = (Path(__file__).resolve().parent.parent / "docs" / "records.md").read_text(encoding="utf-8")
    example = GameRecord.from_json(re.search(r"```json\n(.*?)```", section, re.S).group(1))
    assert validate_record(example) == (25, 19)
    full, totals = engine_record("scandinavian", ("upper_bonus_threshold=62",), ("greedy", "timeout"), 17, 11)
    assert dataclasses.replace(full, turns=full.turns[:2], totals=None, complete=False) == example
    assert f'"totals": {list(totals)}' in section and f"has {len(full.turns)} turns" in section
    shown = re.findall(r"```\n(2 2 4 6 6 keep.*?)```", section, re.S)[0].splitlines()
    assert shown == [format_turn(t) for t in full.turns[:2]]


def test_the_readme_error_lines_are_what_reading_prints(tmp_path, monkeypatch):
    import re
    from pathlib import Path

    section = (Path(__file__).resolve().parent.parent / "docs" / "records.md").read_text(encoding="utf-8")
    shown = re.findall(r"```\n(games\.jsonl line .*?)```", section, re.S)[0].splitlines()
    r, _ = engine_record("scandinavian", ("upper_bonus_threshold=62",), ("greedy", "timeout"), 17, 11)
    bad = dataclasses.replace(r, seats=(Seat(name="alice", spec="greedy"), Seat(name="bob")))
    bad = _with_turn(bad, 2, keeps=((6, 6, 6),) + bad.turns[2].keeps[1:])
    wrong_score = _with_turn(dataclasses.replace(r, game=18), 5, score=r.turns[5].score + 1)
    wrong_total = dataclasses.replace(r, game=20, totals=(r.totals[0] + 1, r.totals[1]))
    # the valid game of line 1 is game 16: game 17 is line 2's (one id, one game)
    lines = [
        dataclasses.replace(r, game=16).to_json(),
        bad.to_json(),
        wrong_score.to_json(),
        '{"format": "yatzy-record/1", "game": 19',
        wrong_total.to_json(),
    ]
    monkeypatch.chdir(tmp_path)
    Path("games.jsonl").write_text("\n".join(lines) + "\n")
    res = read_records("games.jsonl")
    assert [m for _, m in res.errors] + [res.summary] == shown


# ---------------------------------------------------------------------------------------------
# a run's records (run --record)

#: a tournament of three bots (six lineups: both seat orders) with a changed setting, in chunks of 10
RECORDED = dict(
    mode="tournament",
    entrants=("greedy", "bonus", "solver:temperature=2"),
    table=2,
    rules="scandinavian",
    settings={"upper_bonus_threshold": 62},
    games=24,
    chunk_size=10,
    seed=7,
    workers=1,
    record=True,
)


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory):
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    return run(RunConfig(**RECORDED), tmp_path_factory.mktemp("recorded") / "run")


def _chunk_totals(run_dir) -> dict[tuple[int, int], tuple[int, ...]]:
    """(lineup, game) -> each seat's total, from the run's own rows (chunks/)."""
    import pyarrow.parquet as pq

    out: dict[tuple[int, int], list[int]] = {}
    for path in sorted((run_dir / "chunks").glob("*.parquet")):
        t = pq.read_table(path, columns=["lineup", "game", "seat", "total"]).to_pydict()
        for lu, g, s, total in zip(t["lineup"], t["game"], t["seat"], t["total"]):
            seats = out.setdefault((lu, g), [])
            assert s == len(seats)
            seats.append(total)
    return {k: tuple(v) for k, v in out.items()}


def test_a_recorded_run_reads_back_as_valid_records_with_the_runs_totals(recorded_run):
    from harness.records.record import records_of_run
    from harness.records.rundir import load_manifest

    manifest = load_manifest(recorded_run)
    specs = {e["label"]: e["spec"] for e in manifest["entrants"]}
    got = list(records_of_run(recorded_run))
    rows = _chunk_totals(recorded_run)
    assert len(got) == len(rows) == len(manifest["lineups"]) * 24 == 6 * 24
    assert [(lu, rec.game) for lu, rec in got] == sorted(rows)  # lineup by lineup, games in order
    rules = load_rules("scandinavian", ["upper_bonus_threshold=62"])
    stops = 0
    for lu, rec in got:
        assert (rec.rules, dict(rec.settings), rec.seed, rec.complete) == (
            "scandinavian",
            {"upper_bonus_threshold": 62},
            7,
            True,
        )
        assert [s.spec for s in rec.seats] == [specs[lab] for lab in manifest["lineups"][lu]]
        assert validate_record(rec, rules) == rows[(lu, rec.game)] == rec.totals
        stops += sum(len(t.rolls) < 3 for t in rec.turns)
    assert stops > 0  # turns that kept every die: that keep is dropped, and they still validate
    # the label is the seat's name when it is not the spec itself
    named = {s for _, rec in got for s in rec.seats if s.name}
    assert named == {Seat(name=lab, spec=spec) for lab, spec in specs.items() if lab != spec} != set()


def test_run_records_are_the_records_replay_prints(recorded_run, capsys):
    from harness import cli
    from harness.records.record import records_of_run

    for lineup, game in [(0, 0), (3, 13), (5, 23)]:
        ((lu, rec),) = records_of_run(recorded_run, lineup=lineup, games=[game])
        assert (
            cli.main(["replay", "--run", str(recorded_run), "--lineup", str(lineup), "--game", str(game), "--json"])
            == 0
        )
        replayed = GameRecord.from_json(capsys.readouterr().out)
        assert lu == lineup and rec.game == replayed.game == game
        assert rec.turns == replayed.turns and len(rec.turns) == 2 * 15
        assert (rec.rules, rec.settings, rec.seed, rec.totals) == (
            replayed.rules,
            replayed.settings,
            replayed.seed,
            replayed.totals,
        )


def test_read_records_and_the_records_command_take_a_run_directory(recorded_run, capsys):
    from harness import cli

    res = read_records(recorded_run)
    assert len(res.games) == 144 and not res.errors and sorted(set(res.lineups)) == list(range(6))
    assert res.summary == f"{recorded_run}: 144 games read, 0 bad games skipped"
    assert cli.main(["records", str(recorded_run), "--text"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("game 0, rules scandinavian (upper_bonus_threshold=62), seed 7: ")
    assert out.count("\ntotals: ") == 144 and err.strip() == res.summary


def test_picking_lineups_and_games_of_a_run(recorded_run):
    from harness.records.record import records_of_run

    got = [(lu, rec.game) for lu, rec in records_of_run(recorded_run, lineup=1, games=[15, 3, 3])]
    assert got == [(1, 3), (1, 15)]
    with pytest.raises(UserError, match=r"^lineup 6 is not in run .*: it has lineups 0\.\.5$"):
        list(records_of_run(recorded_run, lineup=6))
    with pytest.raises(UserError, match=r"^game 24 is not in run .*: lineup 0 has games 0\.\.23$"):
        list(records_of_run(recorded_run, games=[2, 24]))


def test_a_damaged_records_file_is_named_and_resume_repairs_it(recorded_run, tmp_path):
    import shutil

    from harness.records.record import records_of_run
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    copy = tmp_path / "run"
    shutil.copytree(recorded_run, copy)
    victim = copy / "records" / "part-L0002-G000000000010.parquet"
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    assert len(list(records_of_run(copy, lineup=2, games=[9]))) == 1  # other chunks still read
    with pytest.raises(UserError) as err:
        list(records_of_run(copy, lineup=2, games=[10]))
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{victim}: damaged")
    assert msg.endswith(f"replay it with: yatzy-harness run --resume {copy}")
    victim.unlink()
    with pytest.raises(UserError, match="part-L0002-G000000000010.parquet: cannot read"):
        read_records(copy)
    run(RunConfig(**RECORDED), copy, resume=True)
    assert [r.to_json() for r in read_records(copy).games] == [r.to_json() for r in read_records(recorded_run).games]


def test_a_run_without_records_says_how_to_get_them(tmp_path):
    from harness.records.record import records_of_run
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    out = run(RunConfig(seats=("greedy", "bonus"), games=5, seed=1, workers=1), tmp_path / "plain")
    with pytest.raises(
        UserError,
        match=r"^.*plain was played without --record, so it has no game records "
        r"\(play it again with: yatzy-harness run \.\.\. --record\)$",
    ):
        read_records(out)
    with pytest.raises(UserError, match="is not a run directory"):
        list(records_of_run(tmp_path))
