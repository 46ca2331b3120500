"""The command line: JSON outputs, and bad input as one clear line with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_score_json(capsys):
    code, out, _ = run(capsys, "score", "scandinavian", "6", "6", "4", "4", "1", "--json")
    assert code == 0
    s = json.loads(out)
    assert s["one_pair"] == 12 and s["two_pairs"] == 20 and s["chance"] == 21 and s["fours"] == 8
    assert list(s)[:6] == ["ones", "twos", "threes", "fours", "fives", "sixes"]


def test_score_with_settings_and_servida(capsys):
    _, out, _ = run(capsys, "score", "scandinavian", "6", "6", "6", "6", "6", "--set", "yatzy_scoring=flat_plus_sum", "--json")
    assert json.loads(out)["yatzy"] == 80
    _, out, _ = run(capsys, "score", "generala", "1", "2", "3", "4", "5", "--first-roll", "--json")
    assert json.loads(out)["straight"] == 25
    _, out, _ = run(capsys, "score", "maxi", "1", "2", "3", "4", "5", "6", "--json")
    assert json.loads(out)["full_straight"] == 21


def test_rules_list_and_show(capsys):
    code, out, _ = run(capsys, "rules", "--json")
    names = [r["name"] for r in json.loads(out)]
    assert code == 0 and names == ["forced", "generala", "maxi", "scandinavian", "standard", "yahtzee"]
    code, out, _ = run(capsys, "rules", "show", "scandinavian", "--set", "upper_bonus_threshold=62", "--json")
    sheet = json.loads(out)
    assert sheet["bonus"] == {"threshold": 62, "value": 50} and sheet["perfect_score"] == 374
    code, out, _ = run(capsys, "rules", "show", "maxi")
    assert "castle" in out and "perfect sheet" in out


def test_strategies_json(capsys):
    _, out, _ = run(capsys, "strategies", "--json")
    items = {s["name"]: s for s in json.loads(out)}
    assert {"random", "timeout", "greedy", "bonus"} <= set(items)
    assert items["bonus"]["params"][0]["name"] == "weight"


@pytest.mark.parametrize("argv,message", [
    (["score", "nope", "1", "2", "3", "4", "5"], "unknown rule set 'nope'"),
    (["score", "scandinavian", "1", "2", "3", "4"], "plays 5 dice, got 4"),
    (["score", "scandinavian", "1", "2", "3", "4", "9"], "dice must be 1..6"),
    (["score", "scandinavian", "1", "2", "x", "4", "5"], "whole numbers"),
    (["rules", "show", "standard", "--set", "upper_bonus_value=3"], "step 5"),
    (["rules", "show", "standard", "--set", "bogus=1"], "unknown setting 'bogus'"),
    (["replay", "--rules", "standard", "--seats", "nobot", "--seed", "1", "--game", "0"], "unknown strategy 'nobot'"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_unreadable_toml_through_the_real_console_script(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("dice = = 5")
    p = subprocess.run([sys.executable, "-m", "harness.cli", "rules", "show", str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and "not valid TOML" in p.stderr and "Traceback" not in p.stderr


def test_replay_trace(capsys):
    code, out, _ = run(capsys, "replay", "--rules", "scandinavian", "--seats", "greedy,timeout", "--seed", "7",
                       "--game", "3")
    assert code == 0
    assert "turn  1 seat 0 greedy: roll 1:" in out and "seat 1 timeout: total" in out
    code, out, _ = run(capsys, "replay", "--rules", "scandinavian", "--seats", "greedy", "--seed", "7", "--game", "3",
                       "--json")
    data = json.loads(out)
    assert sum(1 for e in data["trace"] if e["event"] == "box") == 15
