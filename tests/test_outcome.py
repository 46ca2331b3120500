"""The win rule, defined once (harness.game.outcome) and used alike by the engine, run's summary, report and compare."""

from __future__ import annotations

import numpy as np

from harness.game.outcome import DRAW, LOSS, WIN, outcomes, pair_points, ranking_scores, wdl_counts
from harness.play.runconfig import RunConfig
from harness.play.runner import run
from harness.play.summary import summary_lines
from harness.records.rundir import load_manifest
from harness.reports.summary import summarize


def test_outcomes_sole_win_draw_loss_at_any_table_size():
    rank = np.array([[5, 5, 5], [7, 5, 5], [5, 7, 7], [1, 2, 3]])
    assert outcomes(rank).tolist() == [[DRAW] * 3, [WIN, LOSS, LOSS], [LOSS, DRAW, DRAW], [LOSS, LOSS, WIN]]
    # every seat's win + draw + loss is one game; the game has at most one sole winner
    oc = outcomes(rank)
    assert wdl_counts(oc).sum() == oc.size
    assert ((oc == WIN).sum(axis=1) <= 1).all()


def test_ranking_scores_best_column_when_columns_are_not_added():
    total = np.array([[30, 40]])
    cols = np.array([[[10, 20], [35, 5]]])
    assert ranking_scores(total, cols, add_columns=True).tolist() == [[30, 40]]
    assert ranking_scores(total, cols, add_columns=False).tolist() == [[20, 35]]


def test_pair_points():
    assert pair_points(np.array([3, 2, 2, 1]), np.array([1, 2, 5, 0])) == (2, 1, 1)


def _manifest(totals: dict[str, list[int]], lineups: list[list[str]]) -> dict:
    return {"entrants": [{"label": k} for k in totals], "totals": totals, "lineups": lineups}


def test_run_summary_rates_never_pass_100_percent_with_three_way_ties():
    # 10 three-seat games: 4 three-way ties (a draw for everyone), 6 sole wins of "a"
    m = _manifest(
        {"a": [10, 500, 25000, 6, 4], "b": [10, 400, 16000, 0, 4], "c": [10, 400, 16000, 0, 4]}, [["a", "b", "c"]]
    )
    lines = summary_lines(m)
    assert "win  60.0 %  draw 40.0 %" in lines[0]
    assert "win   0.0 %  draw 40.0 %" in lines[1]
    assert lines[-1].strip() == "(win = sole highest score, draw = highest score shared, loss = otherwise)"


def test_one_seat_run_shows_no_win_rate(tmp_path):
    out = run(RunConfig(seats=("greedy",), games=50, seed=3, workers=1), tmp_path / "solo")
    lines = summary_lines(load_manifest(out))
    assert len(lines) == 1 and "win" not in lines[0]
    e = summarize(out).to_dict()["entrants"][0]
    assert e["played"] == 0 and e["win_rate"] is None


def test_report_and_run_summary_agree_on_wins_and_draws(tmp_path):
    out = run(
        RunConfig(
            mode="tournament",
            entrants=("timeout", "random", "greedy"),
            table=3,
            games=400,
            seed=5,
            workers=1,
            chunk_size=200,
        ),
        tmp_path / "t3",
    )
    m = load_manifest(out)
    d = summarize(out).to_dict()
    for e in d["entrants"]:
        n, _, _, wins, draws = m["totals"][e["strategy"]]
        assert (e["wins"], e["draws"], e["played"]) == (wins, draws, n)
        assert abs(e["win_rate"] + e["draw_rate"] + e["loss_rate"] - 1) < 1e-12
