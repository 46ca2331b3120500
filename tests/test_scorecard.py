"""Scorecards keep dice, derive totals, re-score under new settings; seed 003's worked example."""

from __future__ import annotations

import pytest

from harness.errors import UserError
from harness.rules import load_rules
from harness.scorecard import Scorecard, standings

# seed 003: Anna 321, Ben 160 on scandinavian defaults; the dice are one way to make each box.
ANNA = {
    "ones": [1, 1, 1, 4, 6], "twos": [2, 2, 2, 2, 5], "threes": [3, 3, 3, 1, 6], "fours": [4, 4, 4, 2, 1],
    "fives": [5, 5, 5, 5, 3], "sixes": [6, 6, 6, 1, 2], "one_pair": [6, 6, 1, 2, 3], "two_pairs": [6, 6, 5, 5, 1],
    "three_of_a_kind": [5, 5, 5, 1, 2], "four_of_a_kind": [4, 4, 4, 4, 1], "small_straight": [1, 2, 3, 4, 5],
    "large_straight": [2, 3, 4, 5, 6], "full_house": [5, 5, 5, 6, 6], "chance": [6, 6, 6, 3, 3],
    "yatzy": [2, 2, 2, 2, 2],
}
BEN = {
    "ones": [1, 1, 3, 4, 6], "twos": [2, 2, 2, 5, 6], "threes": [3, 3, 3, 1, 6], "fours": [4, 4, 4, 2, 1],
    "fives": [5, 5, 5, 1, 3], "sixes": [6, 6, 6, 1, 2], "one_pair": [5, 5, 1, 2, 3], "two_pairs": [5, 5, 4, 4, 1],
    "three_of_a_kind": [4, 4, 4, 1, 2], "four_of_a_kind": [1, 2, 3, 5, 6], "small_straight": [1, 2, 3, 4, 5],
    "large_straight": [1, 1, 2, 3, 4], "full_house": [3, 3, 3, 6, 6], "chance": [6, 5, 5, 3, 3],
    "yatzy": [1, 2, 3, 4, 6],
}
ANNA_POINTS = {"ones": 3, "twos": 8, "threes": 9, "fours": 12, "fives": 20, "sixes": 18, "one_pair": 12,
               "two_pairs": 22, "three_of_a_kind": 15, "four_of_a_kind": 16, "small_straight": 15,
               "large_straight": 20, "full_house": 27, "chance": 24, "yatzy": 50}
BEN_POINTS = {"ones": 2, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18, "one_pair": 10,
              "two_pairs": 18, "three_of_a_kind": 12, "four_of_a_kind": 0, "small_straight": 15,
              "large_straight": 0, "full_house": 21, "chance": 22, "yatzy": 0}


def card(rules, sheet):
    c = Scorecard(rules)
    for box, dice in sheet.items():
        c.write(box, dice)
    return c


def test_seed_003_worked_example():
    rules = load_rules("scandinavian")
    anna, ben = card(rules, ANNA), card(rules, BEN)
    a, b = anna.totals(), ben.totals()
    assert dict(a.boxes) == ANNA_POINTS and dict(b.boxes) == BEN_POINTS
    assert (a.upper, a.bonus, a.upper + a.bonus, a.lower, a.total) == (70, 50, 120, 201, 321)
    # the bonus boundary: 62 is one short of 63
    assert (b.upper, b.bonus, b.upper + b.bonus, b.lower, b.total) == (62, 0, 62, 98, 160)
    assert a.complete and b.complete
    # scratched zeros are filled boxes, not empty ones
    assert b.boxes["four_of_a_kind"] == 0 and b.boxes["yatzy"] == 0
    ranks = standings(rules, {"Anna": [anna], "Ben": [ben]})
    assert [(s.player, s.score, s.rank) for s in ranks] == [("Anna", 321, 1), ("Ben", 160, 2)]


def test_rescore_under_changed_settings():
    rules = load_rules("scandinavian")
    ben = card(rules, BEN)
    assert ben.rescore(rules.with_settings(["upper_bonus_threshold=62"])).totals().total == 210
    anna = card(rules, ANNA)
    flat = anna.rescore(rules.with_settings(["full_house_scoring=flat", "yatzy_scoring=flat_plus_sum"])).totals()
    assert flat.boxes["full_house"] == 25 and flat.boxes["yatzy"] == 60
    assert flat.total == 321 - 27 + 25 + 10


def test_equal_totals_share_the_win():
    rules = load_rules("scandinavian")
    ranks = standings(rules, {"A": [card(rules, ANNA)], "B": [card(rules, ANNA)], "C": [card(rules, BEN)]})
    assert [(s.player, s.rank) for s in ranks] == [("A", 1), ("B", 1), ("C", 3)]


def test_columns_combined_or_best():
    rules = load_rules("scandinavian", ["columns=2"])
    a = [card(rules, ANNA), card(rules, BEN)]  # 321 + 160 = 481, best 321
    b = [card(rules, BEN), card(rules, ANNA)]
    c = [card(rules, ANNA), card(rules, ANNA)]
    assert [s.score for s in standings(rules, {"a": a, "b": b, "c": c})] == [642, 481, 481]
    best = rules.with_settings(["add_columns=false"])
    assert {s.player: s.rank for s in standings(best, {"a": a, "b": b, "c": c})} == {"a": 1, "b": 1, "c": 1}


def test_bad_writes_are_refused():
    rules = load_rules("scandinavian")
    c = Scorecard(rules)
    c.write("ones", [1, 1, 2, 3, 4])
    with pytest.raises(UserError, match="already filled"):
        c.write("ones", [1, 1, 1, 1, 1])
    with pytest.raises(UserError, match="no box 'sevens'"):
        c.write("sevens", [1, 1, 1, 1, 1])
    with pytest.raises(UserError, match="faces 1..6"):
        c.write("twos", [1, 2, 7, 1, 1])
    forced = Scorecard(load_rules("forced"))
    with pytest.raises(UserError, match="may not take"):
        forced.write("sixes", [6, 6, 6, 6, 6])
    assert c.totals().total == 2


def test_yahtzee_extra_bonus_follows_write_order():
    rules = load_rules("yahtzee")
    c = Scorecard(rules)
    c.write("yatzy", [3, 3, 3, 3, 3])
    assert c.write("threes", [3, 3, 3, 3, 3]) == 15  # joker forces the matching upper box
    assert c.totals().extra == 100
    scratched = Scorecard(rules)
    scratched.write("yatzy", [1, 2, 3, 4, 6])
    scratched.write("fours", [4, 4, 4, 4, 4])
    assert scratched.totals().extra == 0
    assert scratched.write("full_house", [4, 4, 4, 4, 4]) == 25  # joker: fours filled, lower box open
