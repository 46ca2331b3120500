"""Levels against the players of game logs (harness.players.opponents, ``calibrate --against-records``): the
exact score rate against logged finals by brute force, the roots, the held-out split, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.records.codec import records_of_run
from harness.util.errors import UserError
from harness.exact.evaluate import evaluate
from harness.players.levels import load_levels
from harness.players.logged import dominance, read_logged
from harness.players.opponents import Response, against, held_out, tune
from harness.records.record import RecordStream, validate_record, write_records_jsonl
from harness.game.rules import load_rules
from harness.play.runconfig import RunConfig
from harness.play.runner import run
from tests.test_solver import TINY

SEATS = ("solver:temperature=0.5", "solver:blunder=0.3", "greedy", "random")


@pytest.fixture(scope="module")
def logs_dir(tmp_path_factory) -> Path:
    """tiny_bonus (2 dice, 5 boxes) and four players' recorded games, with a solver cache of its own."""
    d = tmp_path_factory.mktemp("logs")
    mp = pytest.MonkeyPatch()
    mp.setenv("YATZY_HARNESS_CACHE", str(d / "cache"))
    (d / "tiny_bonus.toml").write_text(TINY["tiny_bonus"])
    (d / "tiny_joker.toml").write_text(TINY["tiny_joker"])
    run(RunConfig(seats=SEATS, rules=str(d / "tiny_bonus.toml"), games=6, seed=3, workers=1, record=True), d / "run")
    yield d
    mp.undo()


def _levels(d: Path, body: str, rules: str = "tiny_bonus") -> Path:
    path = d / f"levels-{abs(hash(body))}.toml"
    path.write_text(
        f'rules = "{d / (rules + ".toml")}"\nstrategy = "solver"\nparam = "temperature"\nlo = 0.0\nhi = 10.0\n{body}'
    )
    return path


def _logs(d: Path):
    return read_logged(RecordStream(str(d / "run")), load_rules(str(d / "tiny_bonus.toml")))


def test_the_score_rate_against_logged_games_is_the_brute_force_sum(logs_dir):
    logs = _logs(logs_dir)
    rules = logs.rules
    finals = [
        (rec.seats[s].label, t)
        for _, rec in records_of_run(logs_dir / "run")
        for s, t in enumerate(validate_record(rec, rules))
    ]
    assert logs.games == 24 and logs.players == 4 and sorted(logs.labels) == sorted(SEATS)
    assert sorted((logs.labels[p], int(f)) for p, f in zip(logs.player, logs.final)) == sorted(finals)
    ev = evaluate(rules, "solver:temperature=1.5")
    brute = np.mean(
        [sum(p * (1.0 if b > s else 0.5 if b == s else 0.0) for b, p in enumerate(ev.ranking)) for _, s in finals]
    )
    a = against(ev.ranking, logs)
    assert a.rate.raw_mean == pytest.approx(brute, abs=1e-12)
    lv = load_levels(_levels(logs_dir, '[[level]]\nname = "x"\ntarget_win_rate = 0.5\n'))
    from harness.players.opponents import Dial

    assert Response(lv.levels[0], logs, Dial(lv, rules))(1.5) == pytest.approx(brute, abs=1e-12)
    # one player's mean, and the control variate's estimate stays within its interval of the plain mean
    who = logs.labels.index("greedy")
    mine = [s for label, s in finals if label == "greedy"]
    assert a.per_player[who] == pytest.approx(
        np.mean([sum(p * (1.0 if b > s else 0.5 if b == s else 0.0) for b, p in enumerate(ev.ranking)) for s in mine])
    )
    assert a.rate.clusters == 4 and a.rate.lo < a.rate.mean < a.rate.hi and a.rate.beta < 0  # luckier player, lower y


def test_each_level_is_the_root_of_its_exact_response(logs_dir):
    lv = load_levels(
        _levels(
            logs_dir,
            '[[level]]\nname = "even"\ntarget_win_rate = 0.5\n'
            '[[level]]\nname = "half"\ntarget_beats = 0.5\n'
            '[[level]]\nname = "weak"\ntarget_win_rate = 0.6\nband = "casual"\n'
            '[[level]]\nname = "mean"\ntarget_mean = 20\n',
        )
    )
    logs = _logs(logs_dir)
    res = tune(lv, logs)
    by = {t.level.name: t for t in res.tuned}
    for name, target in (("even", 0.5), ("half", 0.5), ("weak", 0.6)):
        assert by[name].response == pytest.approx(target, abs=1e-9), name
    assert by["mean"].response == pytest.approx(20.0, abs=1e-9)
    ev = evaluate(logs.rules, by["even"].spec)
    assert against(ev.ranking, logs).rate.raw_mean == pytest.approx(0.5, abs=1e-9)
    # beating half of 4 players: the second weakest player ties with the level at its root
    ev = evaluate(logs.rules, by["half"].spec)
    means = np.sort(against(ev.ranking, logs).per_player)[::-1]
    assert means[1] == pytest.approx(0.5, abs=1e-9) and means[2] < 0.5 and by["half"].against.beaten == 2
    # the band level counts only the casual player's games (random, on tiny_bonus)
    assert by["weak"].against.rate.n == 6 and by["weak"].against.players == 1
    d = res.to_dict()
    assert d["levels"][0]["against_logs"]["players"] == 4 and d["monotone"]["dominance"] is True
    assert json.loads(json.dumps(d)) == d


def test_dominance_finds_crossing_distributions():
    a, b, c = np.array([0.5, 0.5, 0.0]), np.array([0.2, 0.5, 0.3]), np.array([0.4, 0.1, 0.5])
    assert dominance([a, b]) is None and dominance([b, a]) is None
    assert dominance([a, b, c]) == 1  # b and c cross


def test_the_held_out_split_is_by_player_and_seeded(logs_dir):
    logs = _logs(logs_dir)
    t1, c1 = logs.split(7)
    t2, c2 = logs.split(7)
    assert t1.labels == t2.labels and c1.labels == c2.labels
    assert sorted(t1.labels + c1.labels) == sorted(logs.labels) and t1.games + c1.games == logs.games
    lv = load_levels(_levels(logs_dir, '[[level]]\nname = "even"\ntarget_win_rate = 0.5\n'))
    ho = held_out(lv, logs, seed=7)
    (first, *_) = ho.checks
    assert first.band is None and first.predicted.rate.raw_mean == pytest.approx(0.5, abs=1e-9)
    assert first.measured.players == 2 and first.measured.rate.n == c1.games


@pytest.mark.parametrize(
    "body, rules, message",
    [
        (
            '[[level]]\nname = "x"\ntarget_win_rate = 0.999\n',
            "tiny_bonus",
            "level 'x': target_win_rate = 0.999 against the players of the logs is out of reach",
        ),
        ('[[level]]\nname = "x"\ntarget_beats = 1.0\nband = "perfect"\n', "tiny_bonus", "no player of band 'perfect'"),
        ('[[level]]\nname = "x"\ntarget_win_rate = 0.5\n', "tiny_joker", "but the levels are for tiny_joker"),
    ],
)
def test_refusals_are_one_line(logs_dir, body, rules, message):
    lv = load_levels(_levels(logs_dir, body, rules))
    with pytest.raises(UserError, match=message) as exc:
        tune(lv, read_logged(RecordStream(str(logs_dir / "run")), load_rules(lv.rules)))
    assert "\n" not in str(exc.value)


def test_command_against_records_with_held_out_and_its_refusals(logs_dir, tmp_path, capsys):
    f = _levels(
        logs_dir, '[[level]]\nname = "even"\ntarget_win_rate = 0.5\n[[level]]\nname = "half"\ntarget_beats = 0.5\n'
    )
    out = tmp_path / "out"
    assert (
        main(
            [
                "calibrate",
                "--levels",
                str(f),
                "--against-records",
                str(logs_dir / "run"),
                "--held-out",
                "--split-seed",
                "7",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "Levels against the players of" in text and "Held-out check (players split with seed 7" in text
    assert "games clustered by player (cluster-robust CR1" in text and "control variate" in text
    d = json.loads((out / "levels.json").read_text())
    assert d["held_out"]["seed"] == 7 and (out / "held_out.png").exists() and (out / "levels.png").exists()
    # no games: a file whose only game is partial
    rec = next(iter(records_of_run(logs_dir / "run")))[1]
    partial = tmp_path / "partial.jsonl"
    write_records_jsonl(
        partial, [rec.__class__(**{**rec.__dict__, "turns": rec.turns[:3], "complete": False, "totals": None})]
    )
    assert main(["calibrate", "--levels", str(f), "--against-records", str(partial), "--rules-dir", str(logs_dir)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith('game 0: a partial game ("complete": false), not analysed')
    assert err[-1].endswith("no game to analyse (1 skipped, listed above)") and len(err) == 2
    assert main(["calibrate", "--levels", str(f), "--against-records", str(logs_dir / "run"), "--games", "10"]) == 2
    assert "--against-records plays no games: drop --games" in capsys.readouterr().err
    assert main(["calibrate", "--levels", str(f), "--against", "greedy"]) == 2
    assert "aims at the players of game logs: give --against-records LOGS" in capsys.readouterr().err


@pytest.mark.parametrize(
    "body, message",
    [
        ('[[level]]\nname = "x"\ntarget_beats = 1.5\n', "target_beats = 1.5 must be in (0, 1]"),
        ('[[level]]\nname = "x"\ntarget_beats = 0.5\ntarget_win_rate = 0.5\n', "needs exactly one of"),
        ('[[level]]\nname = "x"\ntarget_win_rate = 0.5\nband = "pro"\n', "band = 'pro' is not a skill band (perfect, "),
        ('[[level]]\nname = "x"\ntarget_mean = 20\nband = "casual"\n', "a target_mean does not depend on the players"),
    ],
)
def test_levels_file_targets_of_logs_are_checked(logs_dir, body, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_levels(_levels(logs_dir, body))
