"""Luck and skill per player (``analyse``): the figures add up to the analysis of every seat-game, the
optimal bot is rated perfect with zero variance, games sharing dice are one unit of the interval,
bad games are listed and skipped, and a run directory reads like the same games' records."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from harness.decisions.analysis import ERROR, Analyser
from harness.cli import main
from harness.util.errors import UserError
from harness.records.record import GameRecord, read_records, write_records_jsonl
from harness.play.replay import record_of_replay, replay
from harness.game.rules import load_rules
from harness.reports.analysis_files import write_analysis
from harness.decisions.skill import (
    REGRET_KINDS,
    REGRET_EDGES,
    SCALE,
    PlayerTally,
    analyse_records,
    default_out,
    rating,
    tables,
    text,
)

SEATS = ["solver", "greedy"]
SEED = 5


def records(n: int, seats=SEATS, settings=(), seed: int = SEED, rules: str = "scandinavian") -> list[GameRecord]:
    out = []
    for g in range(n):
        trace, res = replay(rules, list(settings), list(seats), seed, g)
        out.append(record_of_replay(trace, res, rules, list(seats), seed, g))
    return out


@pytest.fixture(scope="module")
def recs() -> list[GameRecord]:
    return records(12)


@pytest.fixture(scope="module")
def analyser() -> Analyser:
    return Analyser(load_rules("scandinavian"))


def test_each_player_adds_up_to_its_seat_games(recs, analyser):
    rep = analyse_records(recs, worst=4)
    assert [p.label for p in rep.players] == SEATS and rep.games == 12 and not rep.bad
    v0 = analyser.adv.turn_start_value(analyser.adv.state({}))
    assert rep.rules[0]["start_value"] == pytest.approx(v0)
    for seat, p in enumerate(rep.players):
        seats = [analyser.seat([t for t in r.turns if t.seat == seat], seat, p.label, details=True) for r in recs]
        decisions = [d for s in seats for d in s.details]
        assert p.games == p.clusters == 12
        assert p.mean == pytest.approx(np.mean([s.final for s in seats]))
        assert p.adjusted_mean == pytest.approx(np.mean([s.adjusted for s in seats]))
        assert p.mean_luck == pytest.approx(np.mean([s.luck for s in seats]))  # adjusted = mean - luck
        assert p.decisions == len(decisions) and p.regret == pytest.approx(sum(s.regret for s in seats))
        assert p.errors == sum(d.regret > ERROR for d in decisions)
        assert p.zero_regret + int(p.regret_hist.sum()) == p.decisions
        assert sum(p.kinds[k][0] for k in REGRET_KINDS) == p.decisions
        assert p.kinds["keep"][1] == pytest.approx(sum(s.keep_regret for s in seats), abs=1e-9)
        assert p.kinds["upper"][1] == pytest.approx(sum(s.upper_regret for s in seats), abs=1e-9)
        assert p.kinds["upper"][1] + p.kinds["lower"][1] == pytest.approx(sum(s.box_regret for s in seats), abs=1e-9)
        # the worst decisions are the costliest, costliest first, each where the record says
        top = sorted((d.regret for d in decisions if d.regret > ERROR), reverse=True)[:4]
        assert [w.regret for w in p.worst] == top
        for w in p.worst:
            rec = next(r for r in recs if r.game == w.game)
            turn = next(t for t in rec.turns if t.seat == seat and t.turn == w.turn and t.column == w.column)
            assert w.dice == turn.rolls[w.roll - 1] and w.seat == seat
    solver, greedy = rep.players
    assert solver.regret == 0.0 and solver.errors == 0 and solver.rating == "perfect" and solver.worst == ()
    assert solver.variance_reduction is None  # final - luck is V(start) in every game
    assert solver.adjusted_mean == pytest.approx(v0, abs=1e-9) and solver.adjusted_ci[1] - solver.adjusted_ci[0] < 1e-9
    assert greedy.regret_per_decision > 0.4 and greedy.rating not in ("perfect", "expert")
    assert greedy.variance_reduction > 2 and greedy.adjusted_ci[0] < greedy.adjusted_mean < greedy.adjusted_ci[1]


def test_the_rating_scale():
    assert [b.below for b in SCALE] == sorted(b.below for b in SCALE) and SCALE[-1].below == math.inf
    assert rating(0.0) == "perfect" and rating(1e-6) == "perfect"
    for lower, upper in zip(SCALE, SCALE[1:]):
        assert rating(lower.below) == upper.name and rating(math.nextafter(lower.below, 0)) == lower.name
    assert rating(1e6) == SCALE[-1].name


def test_seat_games_on_the_same_dice_are_one_game_of_the_interval(recs):
    # the same games twice (as two lineups of a run would give them): twice the seat-games, the
    # same games for the interval, so the same mean and interval
    once = analyse_records(recs).players[1]
    twice = analyse_records(recs + recs).players[1]
    assert twice.games == 24 and twice.clusters == 12
    assert twice.adjusted_mean == pytest.approx(once.adjusted_mean)
    assert twice.adjusted_ci == pytest.approx(once.adjusted_ci)
    # without a seed, each record is a game of its own: the interval narrows
    unseeded = [GameRecord(r.game, r.rules, r.seats, r.turns, r.settings, None, r.totals) for r in recs]
    apart = analyse_records(unseeded + unseeded).players[1]
    assert apart.clusters == 24
    assert apart.adjusted_ci[1] - apart.adjusted_ci[0] < once.adjusted_ci[1] - once.adjusted_ci[0]


def test_one_player_only_and_unknown_players(recs):
    rep = analyse_records(recs[:3], player="greedy")
    assert [p.label for p in rep.players] == ["greedy"]
    with pytest.raises(UserError, match=r"player 'alice' is not in <records> \(players: solver, greedy\)"):
        analyse_records(recs[:3], player="alice")


def test_several_rule_sets_are_told_apart(recs):
    rep = analyse_records(recs[:2] + records(2, settings=["upper_bonus_threshold=62"]))
    assert [p.label for p in rep.players] == [
        "solver [scandinavian]",
        "greedy [scandinavian]",
        "solver [scandinavian (upper_bonus_threshold=62)]",
        "greedy [scandinavian (upper_bonus_threshold=62)]",
    ]
    assert len(rep.rules) == 2 and all(p.games == 2 for p in rep.players)


def test_saved_rolls_are_refused_with_the_advisors_line():
    with pytest.raises(UserError, match="saved_rolls is on"):
        analyse_records(records(1, seats=["greedy"], settings=["saved_rolls=true"]))


def test_tables_and_text_one_line_per_player(recs):
    d = analyse_records(recs, worst=2).to_dict()
    json.dumps(d)  # JSON-safe (None for the optimal bot's variance reduction)
    assert d["players"][0]["variance_reduction"] is None and d["players"][0]["rating"] == "perfect"
    assert d["players"][1]["by_kind"]["box"]["decisions"] == 15 * 12
    main_table, kinds, worst = tables(d)
    assert [r[0] for r in main_table.rows] == SEATS and main_table.rows[0][5] == "exact"
    assert len(worst.rows) == 2 and all(r[0] == "greedy" for r in worst.rows)
    lines = text(d).splitlines()
    assert sum(line.lstrip().startswith("greedy ") for line in lines) == 1 + 1 + 2  # skill, kinds, 2 worst


def test_plots_and_files(tmp_path, recs):
    rep = write_analysis(analyse_records(recs[:4]), tmp_path / "out")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["analysis.json", "analysis.md", "luck_vs_score.png", "regret_per_decision.png"]
    assert all((tmp_path / "out" / n).stat().st_size > 1000 for n in names if n.endswith(".png"))
    assert json.loads((tmp_path / "out" / "analysis.json").read_text())["files"] == list(rep.files)
    assert default_out(tmp_path / "g.jsonl") == tmp_path / "g.jsonl.analysis" and default_out(tmp_path) == tmp_path


def test_regret_histogram_bins():
    t = PlayerTally("x", "scandinavian")
    assert REGRET_EDGES[0] == pytest.approx(1e-6) and REGRET_EDGES[-1] == pytest.approx(1e3)
    regrets = np.array([0.0, 1e-12, 1e-8, 0.5, 2e3])
    t.add(0.0, 0.0, 0.0, 0, regrets, np.zeros(5, np.int64), lambda j: None)
    p = t.result()
    assert p.zero_regret == 2 and p.regret_hist.sum() == 3
    assert p.regret_hist[0] == 1 and p.regret_hist[-1] == 1  # below and above the edges: the end bins
    assert p.regret_hist[np.searchsorted(REGRET_EDGES, 0.5, side="right") - 1] == 1


# ---------------------------------------------------------------------------------------------
# the command


def test_analyse_command_lists_bad_games_and_analyses_the_rest(tmp_path, capsys, recs):
    path = write_records_jsonl(tmp_path / "games.jsonl", recs[:3])
    lines = path.read_text().splitlines()
    partial = json.loads(lines[2])
    partial["turns"] = partial["turns"][:4]
    partial["complete"] = False
    partial.pop("totals")
    bad = json.loads(lines[1])
    bad["turns"][0]["score"] += 1
    path.write_text("\n".join([lines[0], json.dumps(bad), json.dumps(partial), "{not json"]) + "\n")
    assert main(["analyse", str(path), "--json", "--worst", "1"]) == 0
    out, err = capsys.readouterr()
    d = json.loads(out)
    assert d["games"] == 1 and len(d["bad_games"]) == 3 and [p["games"] for p in d["players"]] == [1, 1]
    err_lines = err.strip().splitlines()
    assert len(err_lines) == 3 and err_lines[0].startswith(f"{path} line 2: game 1, seat 0 (solver)")
    assert "line 4: not valid JSON" in err_lines[1] and "game 2: a partial game" in err_lines[2]
    assert sorted(p.name for p in default_out(path).iterdir())[-1] == "regret_per_decision.png"
    assert len(d["players"][1]["worst"]) == 1

    path.write_text("{not json\n")
    assert main(["analyse", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()  # every bad game, then the error
    assert len(err) == 2 and "line 1: not valid JSON" in err[0] and "no usable game (1 bad, listed above)" in err[1]
    write_records_jsonl(path, records(1, seats=["greedy"], settings=["saved_rolls=true"]))
    assert main(["analyse", str(path), "--no-plots"]) == 2
    assert capsys.readouterr().err.count("saved_rolls is on") == 1
    write_records_jsonl(path, recs[:1])
    assert main(["analyse", str(path), "--player", "bob", "--no-plots"]) == 2
    assert "player 'bob' is not in" in capsys.readouterr().err


def test_analyse_command_text(tmp_path, capsys, recs):
    path = write_records_jsonl(tmp_path / "games.jsonl.gz", recs[:2])
    assert main(["analyse", str(path), "--no-plots", "--out", str(tmp_path / "o"), "--player", "greedy"]) == 0
    out = capsys.readouterr().out
    assert "Source: " in out and "greedy" in out and "solver " not in out
    assert out.rstrip().endswith(f"wrote analysis.json, analysis.md to {tmp_path / 'o'}")


def test_a_run_directory_reads_like_the_records_of_its_games(tmp_path, recs, capsys):
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    out = run(
        RunConfig(seats=tuple(SEATS), games=12, seed=SEED, chunk_size=5, workers=1, record=True), tmp_path / "run"
    )
    from_run = analyse_records(read_records(out), worst=3)
    from_replays = analyse_records(recs, worst=3)
    for a, b in zip(from_run.players, from_replays.players):
        assert a.games == b.games == 12 and a.decisions == b.decisions
        assert a.regret == pytest.approx(b.regret, abs=1e-9) and a.mean == b.mean
        assert a.adjusted_mean == pytest.approx(b.adjusted_mean, abs=1e-9)
        assert [(w.game, w.turn, w.roll, w.regret) for w in a.worst] == [
            (w.game, w.turn, w.roll, w.regret) for w in b.worst
        ]
        assert all(w.lineup == 0 for w in a.worst)
    assert main(["analyse", str(out), "--no-plots", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["files"] == [str(out / "analysis.json"), str(out / "analysis.md")]


def test_a_stream_is_analysed_as_the_file_read_whole(tmp_path, recs):
    """analyse_records of a RecordStream (batches of 5 games; each batch's arrays those the reading
    checked) gives the report of the same file read whole."""
    from harness.records.record import RecordStream, write_records_jsonl

    path = write_records_jsonl(tmp_path / "games.jsonl", recs)
    assert [p.kernel is not None for p in RecordStream(path, batch=5)] == [True, True, True]
    whole = analyse_records(read_records(path), worst=3).to_dict()
    assert json.dumps(analyse_records(RecordStream(path, batch=5), worst=3).to_dict()) == json.dumps(whole)
