"""The command line: JSON outputs, and bad input as one clear line with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.cli import main


def screen(text: str) -> list[str]:
    """The lines a terminal shows for ``text``: a carriage return goes back to the line's start and
    what follows overwrites what was there (how a progress bar redraws itself, and is erased)."""
    shown = []
    for raw in text.split("\n"):
        line = ""
        for part in raw.split("\r"):
            line = part + line[len(part) :]
        shown.append(line)
    return shown


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
    _, out, _ = run(
        capsys, "score", "scandinavian", "6", "6", "6", "6", "6", "--set", "yatzy_scoring=flat_plus_sum", "--json"
    )
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


@pytest.mark.parametrize(
    "argv,message",
    [
        (["score", "nope", "1", "2", "3", "4", "5"], "unknown rule set 'nope'"),
        (["score", "scandinavian", "1", "2", "3", "4"], "plays 5 dice, got 4"),
        (["score", "scandinavian", "1", "2", "3", "4", "9"], "dice must be 1..6"),
        (["score", "scandinavian", "1", "2", "x", "4", "5"], "whole numbers"),
        (["rules", "show", "standard", "--set", "upper_bonus_value=3"], "step 5"),
        (["rules", "show", "standard", "--set", "bogus=1"], "unknown setting 'bogus'"),
        (
            ["replay", "--rules", "standard", "--seats", "nobot", "--seed", "1", "--game", "0"],
            "unknown strategy 'nobot'",
        ),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv,line",
    [
        (["run", "--games", "1e6"], "yatzy-harness: error: run: argument --games: invalid int value: '1e6'"),
        (["rules", "show", "standard", "--bogus"], "yatzy-harness: error: unrecognized arguments: --bogus"),
        (["review", "games.jsonl"], "yatzy-harness: error: review: the following arguments are required: --game"),
    ],
)
def test_a_commands_usage_error_names_the_program_once(capsys, argv, line):
    """argparse's errors in a command (issue 37: `run --games 1e6` said "yatzy-harness: error:
    yatzy-harness run: ..."): the program once, then the command, on one line."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err == line + "\n"


def test_unreadable_toml_through_the_real_console_script(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("dice = = 5")
    p = subprocess.run([sys.executable, "-m", "harness.cli", "rules", "show", str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and "not valid TOML" in p.stderr and "Traceback" not in p.stderr


def test_replay_trace(capsys):
    code, out, _ = run(
        capsys, "replay", "--rules", "scandinavian", "--seats", "greedy,timeout", "--seed", "7", "--game", "3"
    )
    assert code == 0
    assert "turn  1 seat 0 greedy: roll 1:" in out and "seat 1 timeout: total" in out
    code, out, _ = run(
        capsys, "replay", "--rules", "scandinavian", "--seats", "greedy", "--seed", "7", "--game", "3", "--json"
    )
    data = json.loads(out)  # the game record (harness.records.record, README "Game records")
    assert data["format"] == "yatzy-record/1" and len(data["turns"]) == 15


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """A 2-lineup run of 20 games (a gauntlet of one against one)."""
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run as play_run

    cfg = RunConfig(mode="gauntlet", candidate="greedy", entrants=("timeout",), games=20, seed=3, workers=1)
    return play_run(cfg, tmp_path_factory.mktemp("run") / "r")


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--game", "20"], "--game 20 is not in run {run}: it plays games 0..19 of each lineup"),
        (["--game", "5000"], "--game 5000 is not in run {run}: it plays games 0..19 of each lineup"),
        (["--game", "-1"], "--game -1 is not in run {run}: it plays games 0..19 of each lineup"),
        (["--game", "3", "--lineup", "2"], "--lineup 2 is not in run {run}: it has lineups 0..1"),
        (["--game", "3", "--seed", "4"], "--run takes the rules, seats and seed from the run: leave out --seed"),
    ],
)
def test_replay_refuses_a_game_the_run_does_not_have(capsys, small_run, extra, message):
    code, out, err = run(capsys, "replay", "--run", str(small_run), *extra)
    assert code == 2 and out == ""
    assert err == f"yatzy-harness: error: {message.format(run=small_run)}\n"


def test_replay_of_a_run_game_matches_the_run(capsys, small_run):
    import pandas as pd

    code, out, _ = run(capsys, "replay", "--run", str(small_run), "--lineup", "1", "--game", "19", "--json")
    assert code == 0
    rows = pd.concat(pd.read_parquet(p) for p in sorted((small_run / "chunks").iterdir()))
    game = rows[(rows["lineup"] == 1) & (rows["game"] == 19)].sort_values("seat")
    assert json.loads(out)["totals"] == game["total"].tolist()


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["replay", "--rules", "standard", "--seats", "greedy", "--seed", "-1", "--game", "0"],
            "--seed must be 0..18446744073709551615, got -1",
        ),
        (
            ["replay", "--rules", "standard", "--seats", "greedy", "--seed", "1", "--game", "-2"],
            "--game must be 0..999999999998, got -2",
        ),
        (
            ["replay", "--rules", "standard", "--seats", "greedy", "--seed", "1", "--game", "0", "--lineup", "1"],
            "--lineup 1 needs --run",
        ),
        (["solve", "scandinavian", "--max-memory", "-1"], "argument --max-memory: must be more than 0, got -1"),
        (["run", "--seats", "greedy", "--games", "-5"], "--games must be 1..999999999999, got -5"),
    ],
)
def test_negative_numbers_are_refused(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "command,shown",
    [
        ("run", ["examples:\n  yatzy-harness run ", "--verbose", "--cache-dir DIR", "(no CONFIG: 50,000)"]),
        ("replay", ["examples:\n  yatzy-harness replay --run ", "--game N", "--cache-dir DIR", "(default: 0)"]),
        ("solve", ["examples:\n  yatzy-harness solve ", "--max-memory GIB", "(default: 3.0)", "--cache-dir DIR"]),
        ("odds", ["examples:\n  yatzy-harness odds ", "RULES"]),
    ],
)
def test_help_has_examples_and_defaults(capsys, command, shown):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    for text in shown:
        assert text in out, text
    assert "(default 3)" not in out and "default 0)" not in out  # said once, by the formatter


def test_one_seat_says_it_is_a_solitaire_run(capsys, tmp_path):
    """`run --seats greedy` plays one bot alone: allowed (solitaire runs are a use: exact figures,
    calibration), but said on stderr, once, so that a forgotten second bot is not a silent surprise
    (issue 37); two seats say nothing of the kind, and --help says what one seat does."""
    code, out, err = run(
        capsys,
        "run",
        "--seats",
        "greedy",
        "--games",
        "10",
        "--workers",
        "1",
        "--quiet",
        "--out",
        str(tmp_path / "solo"),
    )
    assert code == 0 and "greedy  mean" in out
    assert (
        err
        == "note: one seat: greedy plays alone (solitaire); give two specs for a match, e.g. --seats greedy,random\n"
    )
    code, out, err = run(
        capsys,
        "run",
        "--seats",
        "greedy,random",
        "--games",
        "10",
        "--workers",
        "1",
        "--quiet",
        "--out",
        str(tmp_path / "pair"),
    )
    assert code == 0 and err == ""
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "with one bot, that bot plays alone" in " ".join(capsys.readouterr().out.split())


def test_ctrl_c_leaves_no_progress_bar_under_its_line(capsys, monkeypatch):
    """A step stopped by Ctrl-C may leave its progress bar drawn (the solver's, say): the
    "interrupted" line starts a line of its own, not the end of the bar's (issue 37)."""
    from harness.commands import score
    from harness.util.progress import bar

    def stopped(args):
        shown = bar(10, "forward pass", "layer", quiet=False)
        shown.update(3)
        raise KeyboardInterrupt

    monkeypatch.setattr(score, "run", stopped)
    code, out, err = run(capsys, "score", "scandinavian", "1", "2", "3", "4", "5")
    assert code == 130 and "forward pass" in err
    assert [line.rstrip() for line in screen(err) if "interrupted" in line] == ["yatzy-harness: interrupted"]
