"""The batched engine: reproducible dice per game, common random numbers, match scoring, replay."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness.game import registry
from harness.game.loop import StrategyError, play
from harness.game.outcome import DRAW, WIN
from harness.records.record import validate_record
from harness.play.replay import record_of_replay, replay
from harness.game.rules import load_rules
from strategies.greedy import GreedyBot


class FirstRollRecorder(GreedyBot):
    """Greedy play that records the first roll it sees at every (game, turn)."""

    name = "first-roll-recorder"

    def __init__(self, rules, **params):
        super().__init__(rules, **params)
        self.seen: dict[tuple[int, int], int] = {}

    def keep(self, view):
        if view.step == 0:
            for g, r in zip(view.games.tolist(), view.roll.tolist()):
                self.seen[(g, view.turn)] = r
        return super().keep(view)


def frame(rules, seats, games, seed, batch):
    parts = [play(rules, seats, games[i : i + batch], seed).to_frame() for i in range(0, len(games), batch)]
    return pd.concat(parts, ignore_index=True)


def test_same_seed_same_rows_whatever_the_batch_size():
    rules = load_rules("scandinavian")
    seats = [registry.make("random", rules), registry.make("greedy", rules)]
    games = np.arange(100, 220)
    a = frame(rules, seats, games, 42, 120)
    b = frame(rules, seats, games, 42, 37)
    pd.testing.assert_frame_equal(a, b)
    c = frame(rules, seats, games, 43, 120)
    assert not a["total"].equals(c["total"])


def test_different_bots_see_the_same_first_rolls():
    rules = load_rules("scandinavian")
    a = [FirstRollRecorder(rules), FirstRollRecorder(rules)]
    b = [FirstRollRecorder(rules), FirstRollRecorder(rules)]
    games = np.arange(60)
    play(rules, [a[0], registry.make("random", rules)], games, 5)
    play(rules, [b[0], registry.make("bonus", rules)], games, 5)
    play(rules, [registry.make("timeout", rules), a[1]], games, 5)
    play(rules, [registry.make("greedy", rules), b[1]], games, 5)
    for seat in (0, 1):
        assert a[seat].seen == b[seat].seen and len(a[seat].seen) == 60 * 15
    # seats draw separate streams
    assert a[0].seen != a[1].seen


def test_rerolled_dice_take_the_first_values_of_the_fresh_draw():
    from harness.game import rng

    trace, _ = replay("scandinavian", [], ["greedy"], 11, 4)
    keys = rng.game_keys(11, np.array([4]))
    keep = next(e for e in trace if e["event"] == "keep" and not e["stop"])
    after = next(
        e for e in trace if e["event"] == "roll" and e["roll"] == keep["roll"] + 1 and e["turn"] == keep["turn"]
    )
    fresh = rng.draw_faces(keys, 0, keep["turn"], keep["roll"] + 1, 5)[0]
    expected = sorted(keep["keep"] + fresh[: 5 - len(keep["keep"])].tolist())
    assert after["dice"] == expected


def test_replay_matches_the_batch_row():
    rules = load_rules("yahtzee")
    seats = ["greedy", "random"]
    df = play(rules, [registry.make(s, rules) for s in seats], np.arange(30), 9).to_frame()
    trace, res = replay("yahtzee", [], seats, 9, 17)
    row = df[df.game == 17].reset_index(drop=True)
    assert res.total[0].tolist() == row["total"].tolist()
    assert res.to_frame().drop(columns="game").equals(row.drop(columns="game"))


@pytest.mark.parametrize("name", ["yahtzee", "generala", "scandinavian", "maxi"])
def test_engine_totals_agree_with_the_trace_scored_again(name):
    """The record validator scores every box of the trace again from its dice; the sums agree."""
    rules = load_rules(name)
    upper_box = {b.name for b in rules.boxes if b.is_upper}
    for game in range(6):
        trace, res = replay(name, [], ["greedy"], 3, game)
        rec = record_of_replay(trace, res, name, ["greedy"], 3, game)
        assert rec.complete and validate_record(rec) == (int(res.total[0, 0]),)
        upper = sum(t.score for t in rec.turns if t.box in upper_box)
        bonus = rules.bonus_value if upper >= rules.threshold else 0
        assert (upper, bonus, sum(t.extra or 0 for t in rec.turns)) == (
            int(res.upper[0, 0]),
            int(res.bonus[0, 0]),
            int(res.extra[0, 0]),
        )


@pytest.mark.parametrize("n_seats", [2, 3, 8])
def test_outcomes_follow_totals(n_seats):
    rules = load_rules("standard")
    seats = [registry.make("timeout", rules) for _ in range(n_seats)]
    res = play(rules, seats, np.arange(300), 2)
    top = res.total.max(axis=1, keepdims=True)
    winners = res.total == top
    assert ((res.outcome > 0) == winners).all()
    single = winners.sum(axis=1) == 1
    assert (res.outcome[single].max(axis=1) == WIN).all()
    assert (res.outcome[~single][winners[~single]] == DRAW).all()
    assert (~single).any()  # timeout bots tie now and then: the shared-win path is exercised


def test_columns_add_up_or_best_column_wins():
    rules = load_rules("scandinavian", ["columns=3"])
    seats = [registry.make("greedy", rules), registry.make("timeout", rules)]
    res = play(rules, seats, np.arange(40), 4)
    assert (res.total == res.column_totals.sum(axis=2)).all()
    df = res.to_frame()
    assert (df["best_column"].to_numpy() == res.column_totals.max(axis=2).reshape(-1)).all()
    assert (res.boxes.sum(axis=2) + res.bonus == res.total).all()
    best = play(rules.with_settings(["columns=3", "add_columns=false"]), seats, np.arange(40), 4)
    assert (best.total == res.total).all()
    score = best.column_totals.max(axis=2)
    assert ((best.outcome > 0) == (score == score.max(axis=1, keepdims=True))).all()


def test_forced_fills_top_to_bottom():
    trace, _ = replay("forced", [], ["greedy"], 1, 0)
    order = [e["box"] for e in trace if e["event"] == "box"]
    assert order == load_rules("forced").box_names


def test_saved_rolls_carry_over():
    trace, _ = replay("maxi", ["saved_rolls=true"], ["timeout", "greedy"], 1, 0)
    # the timeout bot never rerolls, so it banks two rolls a turn; greedy can roll more than 3 times
    assert max(e["roll"] for e in trace if e["event"] == "roll" and e["seat"] == 1) >= 3
    rules = load_rules("maxi", ["saved_rolls=true"])
    res = play(rules, [registry.make("random", rules)], np.arange(20), 1)
    plain = play(load_rules("maxi"), [registry.make("random", rules)], np.arange(20), 1)
    assert not np.array_equal(res.total, plain.total)


def test_saved_rolls_do_not_carry_into_the_next_column():
    """Each column is a fresh game (RULES: columns): a bot that never rerolls banks two rolls a turn,
    and starts the second column with none banked."""
    from strategies.greedy import TimeoutBot

    seen: dict[tuple[int, int], int] = {}

    class Banker(TimeoutBot):
        def keep(self, view):
            seen[(view.column, view.turn)] = int(view.saved.max())
            return super().keep(view)

    rules = load_rules("scandinavian", ["saved_rolls=true", "columns=2"])
    play(rules, [Banker(rules)], np.arange(5), 1)
    nb = rules.n_boxes
    assert seen[(0, 0)] == 0 and seen[(0, nb - 1)] == 2 * (nb - 1)
    assert seen[(1, nb)] == 0  # first turn of the second column: nothing carried over
    assert seen[(1, 2 * nb - 1)] == 2 * (nb - 1)


class Cheater(GreedyBot):
    name = "cheater"

    def choose(self, view):
        return np.zeros(len(view), dtype=np.int64)  # always "ones", filled or not


class Thief(GreedyBot):
    name = "thief"

    def keep(self, view):
        return np.full(len(view), self.rules.dice.keep_index(np.array([5, 0, 0, 0, 0, 0])))


def test_illegal_answers_name_the_bot():
    rules = load_rules("scandinavian")
    # turns count from 1, as replay shows them: "ones" is filled on turn 1, refused on turn 2
    with pytest.raises(StrategyError, match=r"strategy cheater \(seat 1\) failed at turn 2 \(box choice\).*filled"):
        play(rules, [registry.make("greedy", rules), Cheater(rules)], np.arange(5), 1)
    with pytest.raises(StrategyError, match=r"turn 1 \(keep after roll 1\).*kept dice it does not have"):
        play(rules, [Thief(rules)], np.arange(5), 1)
    two = load_rules("scandinavian", ["columns=2"])
    with pytest.raises(StrategyError, match=r"failed at column 1 turn 2 \(box choice\)"):
        play(two, [Cheater(two)], np.arange(5), 1)


def test_one_game_rows_have_the_documented_columns():
    rules = load_rules("yahtzee")
    df = play(rules, [registry.make("greedy", rules), registry.make("random", rules)], np.arange(3), 1).to_frame()
    assert list(df.columns[:8]) == ["game", "seat", "strategy", "total", "upper", "bonus", "outcome", "extra_bonus"]
    assert list(df.columns[8:-3]) == rules.box_names
    assert list(df.columns[-3:]) == ["lead_changes", "last_behind", "deficit"]
    assert df["game"].dtype == np.int64 and df["total"].dtype == np.int16


@pytest.mark.parametrize(
    "rules_name,settings,bots",
    [
        ("scandinavian", [], ["greedy", "random"]),
        ("yahtzee", [], ["greedy", "bonus"]),
        ("generala", [], ["greedy", "timeout"]),
        ("maxi", ["saved_rolls=true"], ["timeout", "greedy"]),
        ("scandinavian", ["columns=2"], ["random"]),
    ],
)
def test_recording_holds_every_roll_and_decision(rules_name, settings, bots):
    """play(record=True) returns what the single-game trace shows, for every game of a batch, and
    changes nothing else."""
    rules = load_rules(rules_name, settings)
    seats = [registry.make(b, rules) for b in bots]
    games = np.arange(12, dtype=np.int64)
    res = play(rules, seats, games, 5, record=True)
    plain = play(rules, [registry.make(b, rules) for b in bots], games, 5)
    assert (res.total == plain.total).all() and (res.boxes == plain.boxes).all()
    rec, d = res.recording, rules.dice
    nb = rules.n_boxes
    # points written + bonus + extra bonuses = the totals
    assert (rec.scores.sum(axis=2) + res.bonus + res.extra == res.total).all()
    assert (rec.extras.sum(axis=2) == res.extra).all()
    for g in games:
        trace: list = []
        play(rules, [registry.make(b, rules) for b in bots], np.array([g]), 5, trace=trace)
        for s in range(len(bots)):
            for e in (x for x in trace if x["seat"] == s):
                turn = e["column"] * nb + e["turn"]
                if e["event"] == "roll":
                    assert d.roll_faces[rec.rolls[g, s, turn, e["roll"]]].tolist() == e["dice"]
                elif e["event"] == "keep":
                    k = rec.keeps[g, s, turn, e["roll"]]
                    assert np.repeat(np.arange(1, 7), d.keep_counts[k]).tolist() == e["keep"]
                else:
                    assert rules.box_names[rec.boxes[g, s, turn]] == e["box"]
                    assert rec.scores[g, s, turn] == e["score"] and rec.first[g, s, turn] == e["first_roll"]
            # nothing recorded that the trace does not show
            n_rolls = sum(1 for x in trace if x["seat"] == s and x["event"] == "roll")
            n_keeps = sum(1 for x in trace if x["seat"] == s and x["event"] == "keep")
            assert (rec.rolls[g, s] >= 0).sum() == n_rolls and (rec.keeps[g, s] >= 0).sum() == n_keeps
