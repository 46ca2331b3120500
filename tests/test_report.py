"""Tests for harness.reports.summary and harness.reports.report: streamed statistics against a plain pandas computation on the same rows,
the report files, and the ``report`` command end to end (with the real runner)."""

from __future__ import annotations

import json
import math
import re
import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats as sps

from harness.cli import main
from harness.util.errors import UserError
from harness.game.outcome import rank_column
from harness.reports.report import summary_markdown, write_report
from harness.records.rundir import load_run
from harness.stats import PERCENTILES
from harness.reports.summary import LuckSection, summarize, yatzy_box
from harness.game.rules import load_rules

try:  # tests/ as a package or as a plain directory on sys.path
    from tests.html_check import assert_numbers_unbreakable
    from tests.report_helpers import errorbars, inside, layout_problems, rechunk, write_run
except ModuleNotFoundError:
    from html_check import assert_numbers_unbreakable
    from report_helpers import errorbars, inside, layout_problems, rechunk, write_run

ENTRANTS = ["timeout", "greedy", "random"]
LINEUPS = [[a, b] for i, a in enumerate(ENTRANTS) for b in ENTRANTS[i + 1 :]]
LINEUPS = [x for ab in LINEUPS for x in (ab, ab[::-1])]  # each pairing with seats swapped


@pytest.fixture(scope="module")
def tourney(tmp_path_factory):
    """A 3-entrant round robin (6 lineups), 240 games per lineup in chunks of 100 (last one short)."""
    return write_run(tmp_path_factory.mktemp("t") / "run", "scandinavian", LINEUPS, 240, 11, 100)


@pytest.fixture(scope="module")
def tsummary(tourney):
    return summarize(tourney[0])


def _entrant_rows(rows: pd.DataFrame, label: str) -> pd.DataFrame:
    return rows[rows["strategy"] == label]


def test_entrant_statistics_match_pandas(tourney, tsummary):
    _, rows = tourney
    d = tsummary.to_dict()
    boxes = load_rules("scandinavian").box_names
    assert [e["strategy"] for e in d["entrants"]] == ENTRANTS
    for e in d["entrants"]:
        r = _entrant_rows(rows, e["strategy"])
        x = r["total"].to_numpy()
        assert e["games"] == len(r) == 4 * 240
        assert e["mean"] == pytest.approx(x.mean(), rel=1e-12)
        assert e["std"] == pytest.approx(x.std(ddof=1), rel=1e-10)
        assert e["min"] == x.min() and e["max"] == x.max()
        want = np.percentile(x, PERCENTILES, method="inverted_cdf")
        assert [e["percentiles"][str(p)] for p in PERCENTILES] == want.tolist()
        assert e["bonus_rate"] == pytest.approx((r["bonus"] > 0).mean())
        assert e["yatzy_rate"] == pytest.approx((r["yatzy"] > 0).mean())
        for b in boxes:
            assert e["box_means"][b] == pytest.approx(r[b].mean(), rel=1e-12)
            assert e["box_std"][b] == pytest.approx(r[b].std(ddof=1), rel=1e-9)
        out = r["outcome"].value_counts()
        assert (e["wins"], e["draws"], e["losses"]) == (out.get(2, 0), out.get(1, 0), out.get(0, 0))
        assert e["win_rate"] == pytest.approx(out.get(2, 0) / len(r))
        # the mean's CI is over games: each game's mean over the entrant's 4 seats, then a t interval
        per_game = r.groupby("game")["total"].mean().to_numpy()
        half = sps.t.ppf(0.975, len(per_game) - 1) * per_game.std(ddof=1) / math.sqrt(len(per_game))
        assert e["mean_ci"] == pytest.approx([per_game.mean() - half, per_game.mean() + half], rel=1e-10)


def test_pairings_pentanomial_and_head_to_head_match_pandas(tourney, tsummary):
    _, rows = tourney
    d = tsummary.to_dict()
    assert [p["name"] for p in d["pairings"]] == ["timeout vs greedy", "timeout vs random", "greedy vs random"]
    for p in d["pairings"]:
        a, b = p["a"], p["b"]
        li = [i for i, lu in enumerate(LINEUPS) if set(lu) == {a, b}]
        sub = rows[rows["lineup"].isin(li) & (rows["strategy"] == a)]
        out = sub["outcome"].value_counts()
        assert (p["wins"], p["draws"], p["losses"]) == (out.get(2, 0), out.get(1, 0), out.get(0, 0))
        assert p["games"] == 480
        lo, hi = sps.binomtest(p["wins"], 480).proportion_ci(0.95, method="wilson")
        assert p["win_ci"] == pytest.approx([lo, hi], abs=1e-12)
        # pentanomial: a's points in game g of (a, b) plus in game g of (b, a), in halves
        pts = sub.groupby("game")["outcome"].sum()
        assert p["pentanomial"] == np.bincount(pts, minlength=5).tolist()
        assert sum(p["pentanomial"]) == 240
    h = d["head_to_head"]
    assert h["names"] == ENTRANTS
    for i, a in enumerate(ENTRANTS):
        for j, b in enumerate(ENTRANTS):
            if i == j:
                assert h["games"][i][j] == 0
                continue
            li = [k for k, lu in enumerate(LINEUPS) if set(lu) == {a, b}]
            sub = rows[rows["lineup"].isin(li) & (rows["strategy"] == a)]
            assert h["points"][i][j] == pytest.approx((sub["outcome"] / 2).sum())
            assert h["games"][i][j] == 480
    names = [r["name"] for r in d["ratings"]]
    assert names[0] == "greedy" and names[-1] == "random"
    for r in d["ratings"]:
        assert r["lo"] < r["elo"] < r["hi"]


def test_summary_does_not_depend_on_chunking(tmp_path, tourney, tsummary):
    other = rechunk(tourney[0], tmp_path / "run", 37)
    a, b = tsummary.to_dict(), summarize(other).to_dict()
    a["run"].pop("path"), b["run"].pop("path")
    assert_close(a, b)


def assert_close(a, b, path="$"):
    """Equal structures; floats equal up to merge-order rounding (1e-9 relative)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), path
        for k in a:
            assert_close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-9, abs=1e-12), path
    else:
        assert a == b, path


def test_report_files(tmp_path, tourney, tsummary):
    d = write_report(tsummary, tmp_path)
    names = sorted(Path(f).name for f in d["files"])
    assert names == sorted(
        [
            "summary.json",
            "summary.md",
            "report.html",
            "score_histogram.png",
            "score_cdf.png",
            "score_violin.png",
            "box_means.png",
            "head_to_head.png",
            "ratings.png",
            "quality.png",
        ]
    )
    js = json.loads((tmp_path / "summary.json").read_text())
    for e in js["entrants"]:
        assert {"strategy", "games", "mean", "mean_ci", "std", "win_rate", "draw_rate", "loss_rate"} <= set(e)
        assert len(e["mean_ci"]) == 2 and e["mean_ci"][0] < e["mean"] < e["mean_ci"][1]
    for f in names:
        if f.endswith(".png"):
            assert (tmp_path / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (tmp_path / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 7
    assert not re.search(r"(src|href)=['\"](?!data:)", html), "report.html must be self-contained"
    # no number, percentage or interval of any table can wrap: "32.8 %" and "198.30 [196.63,
    # 199.97]" used to break onto two lines with width to spare
    assert assert_numbers_unbreakable(html) > 60
    md = (tmp_path / "summary.md").read_text()
    assert "| greedy vs random | 480 |" in md
    assert summary_markdown(js) == md


def test_report_cli_on_a_real_run(tmp_path, capsys):
    run_dir = tmp_path / "r"
    assert (
        main(
            [
                "run",
                "--seats",
                "timeout,random",
                "--games",
                "300",
                "--chunk-size",
                "120",
                "--seed",
                "5",
                "--workers",
                "1",
                "--quiet",
                "--out",
                str(run_dir),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["report", str(run_dir), "--json", "--no-plots"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [e["strategy"] for e in d["entrants"]] == ["timeout", "random"]
    assert all(e["games"] == 300 for e in d["entrants"])
    assert d["run"]["complete"] and d["run"]["games"] == 300
    assert not list(run_dir.glob("*.png"))
    rows = pd.concat([pq.read_table(f).to_pandas() for f in sorted((run_dir / "chunks").glob("*.parquet"))])
    assert d["entrants"][0]["mean"] == pytest.approx(rows.loc[rows["seat"] == 0, "total"].mean())
    assert d["pairings"][0]["wins"] == int((rows.loc[rows["seat"] == 0, "outcome"] == 2).sum())
    assert main(["report", str(run_dir)]) == 0
    text = capsys.readouterr().out
    assert "timeout vs random" in text and "wrote summary.json" in text
    assert (run_dir / "report.html").is_file() and (run_dir / "score_cdf.png").is_file()


def test_report_usage_errors(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "run directory not found" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert "no manifest.json" in capsys.readouterr().err


def test_incomplete_run_uses_the_common_prefix(tmp_path):
    run_dir, rows = write_run(
        tmp_path / "run", "scandinavian", [["timeout", "random"], ["random", "timeout"]], 300, 2, 100
    )
    (run_dir / "chunks" / "part-L0001-G000000000200.parquet").unlink()  # lineup 1 stops at game 200
    info = load_run(run_dir)
    assert info.games == 200 and not info.complete
    d = summarize(info).to_dict()
    assert any("incomplete run: 200 of 300" in n for n in d["notes"])
    r = rows[(rows["game"] < 200) & (rows["strategy"] == "timeout")]
    assert d["entrants"][0]["games"] == 400
    assert d["entrants"][0]["mean"] == pytest.approx(r["total"].mean())


def test_corrupt_chunk_order_is_refused(tmp_path):
    run_dir, _ = write_run(tmp_path / "run", "scandinavian", [["timeout", "random"]], 50, 2, 50)
    f = run_dir / "chunks" / "part-L0000-G000000000000.parquet"
    t = pq.read_table(f).to_pandas().iloc[::-1]
    pq.write_table(pa.Table.from_pandas(t, preserve_index=False), f)
    with pytest.raises(UserError, match="not games 0..49 in \\(game, seat\\) order"):
        summarize(run_dir)


def test_three_seat_tables_field_pairings(tmp_path):
    lus = [["timeout", "greedy", "random"], ["greedy", "random", "timeout"], ["random", "timeout", "greedy"]]
    run_dir, rows = write_run(tmp_path / "run", "scandinavian", lus, 80, 4, 80)
    d = summarize(run_dir).to_dict()
    assert [p["name"] for p in d["pairings"]] == ["timeout vs field", "greedy vs field", "random vs field"]
    for p in d["pairings"]:
        out = rows.loc[rows["strategy"] == p["a"], "outcome"].value_counts()
        assert (p["wins"], p["draws"], p["losses"]) == (out.get(2, 0), out.get(1, 0), out.get(0, 0))
        assert p["pentanomial"] is None
        assert p["elo"] is None  # par against a 2-player field is 1/3, not 1/2: no Elo figure
    # head to head from every pair of seats: a scores 1 when its total beats b's in the same game
    wide = rows.pivot_table(index=["lineup", "game"], columns="strategy", values="total")
    h = d["head_to_head"]
    i, j = h["names"].index("greedy"), h["names"].index("timeout")
    want = ((wide["greedy"] > wide["timeout"]) + 0.5 * (wide["greedy"] == wide["timeout"])).sum()
    assert h["points"][i][j] == pytest.approx(want)
    assert h["games"][i][j] == 240


def test_yatzy_box_and_rank_column_per_rule_set():
    assert yatzy_box(load_rules("maxi")) == "maxi_yatzy"
    assert yatzy_box(load_rules("generala")) == "generala"
    assert yatzy_box(load_rules("standard")) == "yatzy"
    assert rank_column(load_rules("scandinavian")) == "total"
    assert rank_column(load_rules("scandinavian", ["columns=3", "add_columns=false"])) == "best_column"


def test_yatzy_rate_on_generala(tmp_path):
    run_dir, rows = write_run(tmp_path / "run", "generala", [["timeout"]], 200, 9, 200)
    d = summarize(run_dir).to_dict()
    e = d["entrants"][0]
    assert e["yatzy_rate"] == pytest.approx((rows["generala"] > 0).mean()) and e["yatzy_rate"] > 0
    assert e["win_rate"] is None and e["played"] == 0  # a one-seat table has no outcomes to rate
    assert d["pairings"] == [] and d["ratings"] is None


def _synthetic_run(tmp_path: Path, chunks: int, chunk_games: int) -> Path:
    """A run directory whose chunks repeat one played chunk with shifted game numbers (fast to write)."""
    base, _ = write_run(tmp_path / "seed", "scandinavian", [["timeout", "random"]], chunk_games, 3, chunk_games)
    frame = pq.read_table(base / "chunks" / "part-L0000-G000000000000.parquet").to_pandas()
    out = tmp_path / f"run{chunks}"
    (out / "chunks").mkdir(parents=True)
    m = json.loads((base / "manifest.json").read_text())
    m["games"], m["chunks"] = chunks * chunk_games, []
    for c in range(chunks):
        f = frame.copy()
        f["game"] += c * chunk_games
        name = f"chunks/part-L0000-G{c * chunk_games:012d}.parquet"
        pq.write_table(pa.Table.from_pandas(f, preserve_index=False), out / name, compression="zstd")
        m["chunks"].append({"lineup": 0, "start": c * chunk_games, "stop": (c + 1) * chunk_games, "file": name})
    (out / "manifest.json").write_text(json.dumps(m))
    shutil.rmtree(base)
    return out


def test_memory_does_not_grow_with_games(tmp_path):
    """Streaming: 10x the games (240,000 rows) in the same chunk size peaks at the same memory."""
    small = _synthetic_run(tmp_path, 3, 4000)
    large = _synthetic_run(tmp_path, 30, 4000)
    summarize(small)  # warm caches (rule tables, imports) outside the measurement

    def peak(run: Path) -> tuple[int, dict]:
        tracemalloc.start()
        s = summarize(run).to_dict()
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top, s

    p_small, s_small = peak(small)
    p_large, s_large = peak(large)
    assert s_large["entrants"][0]["games"] == 120_000
    assert s_large["entrants"][0]["mean"] == pytest.approx(s_small["entrants"][0]["mean"])
    # 10x the rows, same chunk size: the peak may not grow by more than a few percent
    assert p_large < 1.1 * p_small, (p_small, p_large)


def test_an_entrant_that_wins_every_game_still_gets_ratings(tmp_path, capsys):
    """Perfect separation (random never beats greedy or bonus): the report comes out, the ratings are
    finite thanks to the prior, and the bounds are said, not hidden. This used to raise
    'Bradley-Terry MM did not converge'."""
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    out = run(
        RunConfig(
            mode="gauntlet",
            candidate="random",
            entrants=("greedy", "bonus"),
            games=200,
            seed=4,
            chunk_size=100,
            workers=1,
        ),
        tmp_path / "sweep",
    )
    assert main(["report", str(out), "--no-plots"]) == 0
    text = capsys.readouterr().out
    assert "won every game against random" in text and ">= " in text and "<= " in text
    d = json.loads((out / "summary.json").read_text())
    rows = {r["name"]: r for r in d["ratings"]}
    assert rows["random"]["bound"] == "upper" and rows["random"]["note"] == "lost every game against bonus, greedy"
    assert rows["greedy"]["bound"] == rows["bonus"]["bound"] == "lower"
    assert all(math.isfinite(r["elo"]) and r["lo"] < r["elo"] < r["hi"] for r in d["ratings"])
    assert rows["random"]["elo"] < -300 < 300 < rows["greedy"]["elo"]


def test_analysed_runs_get_a_luck_section(tmp_path):
    """Rows with exact luck: the report shows the luck-adjusted mean (checked against pandas on the
    same rows), the variance-reduction factor ("exact" for the optimal bot) and the regret figures;
    a run without --analyse has no such section."""
    import pyarrow.parquet as pq

    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    out = run(
        RunConfig(seats=("greedy", "solver"), games=300, seed=2, chunk_size=100, workers=1, analyse=True),
        tmp_path / "an",
    )
    d = write_report(summarize(out), plots=True)
    rows = pd.concat(pq.read_table(p).to_pandas() for p in sorted((out / "chunks").iterdir()))
    luck = {x["strategy"]: x for x in d["luck"]}
    g = rows[rows["strategy"] == "greedy"]
    adj = g["total"] - g["luck"]
    assert luck["greedy"]["adjusted_mean"] == pytest.approx(adj.mean(), abs=1e-9)
    assert luck["greedy"]["variance_reduction"] == pytest.approx(g["total"].var() / adj.var(), rel=1e-9)
    assert luck["greedy"]["variance_reduction"] > 3
    assert luck["greedy"]["error_rate"] == pytest.approx(g["errors"].sum() / g["decisions"].sum())
    assert luck["solver"]["variance_reduction"] is None  # infinite: exact, shown as such
    assert luck["solver"]["adjusted_ci"][1] - luck["solver"]["adjusted_ci"][0] < 1e-9
    text = (out / "summary.md").read_text()
    assert "## Luck and skill" in text and "| exact |" in text
    assert (out / "luck_adjusted.png").is_file()
    plain = run(RunConfig(seats=("greedy",), games=50, seed=2, workers=1), tmp_path / "plain")
    assert "luck" not in summarize(plain).to_dict()


def test_an_analysed_recorded_run_reports_the_split_by_kind_and_names_its_costliest_decisions(tmp_path):
    """The report's luck section on a run played with --analyse --record: the regret split by kind
    adds up to the regret, the rating follows the scale, and the costliest decisions are the ones
    `yatzy-harness analyse` finds in the same run (named from its records); without records the
    seat-games are listed, unnamed."""
    from harness.records.record import read_records
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run
    from harness.decisions.skill import analyse_records, rating

    cfg = RunConfig(
        seats=("greedy", "solver:temperature=2"), games=120, seed=8, chunk_size=50, workers=1, analyse=True, record=True
    )
    out = run(cfg, tmp_path / "rec")
    d = write_report(summarize(out), plots=True)
    skill = {p.label: p for p in analyse_records(read_records(out), worst=LuckSection.WORST).players}
    for x in d["luck"]:
        bk = x["by_kind"]
        total = sum(bk[k]["decisions"] * bk[k]["regret_per_decision"] for k in bk)
        assert total == pytest.approx(x["regret_per_game"] * x["games"], rel=1e-9)
        assert sum(bk[k]["decisions"] for k in bk) == pytest.approx(x["decisions_per_game"] * x["games"])
        assert x["rating"] == rating(x["regret_per_decision"]) == skill[x["strategy"]].rating
        mine = [(w["game"], w["seat"], w["turn"], w["roll"], w["regret"]) for w in x["worst"]]
        theirs = [(w.game, w.seat, w.turn, w.roll, w.regret) for w in skill[x["strategy"]].worst]
        # analyse lists the costliest decisions, the report the costliest decision of each seat-game
        assert mine[0] == pytest.approx(theirs[0]) and len(mine) == LuckSection.WORST
        assert all(a[-1] >= b[-1] for a, b in zip(mine, mine[1:]))
    assert "Costliest decisions" in (out / "summary.md").read_text()
    assert assert_numbers_unbreakable((out / "report.html").read_text()) > 40  # luck, quality, named decisions
    assert {"regret_per_game.png", "luck_vs_score.png"} <= {p.name for p in out.iterdir()}
    bare = run(cfg.with_overrides(record=False), tmp_path / "bare")
    b = write_report(summarize(bare), plots=False)
    for x, y in zip(b["luck"], d["luck"]):
        assert [(w["game"], w["seat"], w["regret"]) for w in x["worst"]] == [
            (w["game"], w["seat"], pytest.approx(w["regret"])) for w in y["worst"]
        ]
        assert all("turn" not in w for w in x["worst"])
    assert "record the run with --record" in (bare / "summary.md").read_text()


def test_the_costliest_decisions_of_a_run_with_several_lineups_name_their_lineup(tmp_path):
    """Game g of lineup 0 and game g of lineup 1 are different games: the table must say which."""
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    cfg = RunConfig(
        mode="gauntlet", candidate="greedy", entrants=("timeout",), games=30, seed=3, workers=1, analyse=True
    )
    out = run(cfg, tmp_path / "g")
    write_report(summarize(out), plots=False)
    text = (out / "summary.md").read_text()
    assert "Costliest decisions" in text and "lineup 0 game" in text and "lineup 1 game" in text


# ---------------------------------------------------------------------------------------------
# the pictures' data and layout (hardening issue item 14; properties of the figures, not pixels)


@pytest.fixture(scope="module")
def analysed_tournament(tmp_path_factory):
    """An analysed round robin whose entrants (run order random, solver, greedy) are not in rating
    order, with the optimal bot (regret 0 in every game)."""
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    cfg = RunConfig(
        mode="tournament",
        entrants=("random", "solver", "greedy"),
        games=60,
        seed=4,
        chunk_size=60,
        workers=1,
        analyse=True,
    )
    return summarize(run(cfg, tmp_path_factory.mktemp("pics") / "rr"))


def test_ratings_and_luck_adjusted_list_the_entrants_in_one_order(analysed_tournament):
    from harness.reports.plot import plot_luck_adjusted, plot_ratings

    def labels(fig):
        ax = fig.axes[0]
        ticks = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())))
        top_first = [t for _, t in ticks]  # both invert the y axis: the smallest y is on top
        return [t.replace(" (bound)", "") for t in top_first]

    order = list(analysed_tournament.info.entrants)
    assert labels(plot_luck_adjusted(analysed_tournament)) == order
    assert labels(plot_ratings(analysed_tournament)) == order


def test_regret_per_game_shows_the_optimal_spike_whole_from_zero(analysed_tournament):
    from harness.reports.plot import plot_run_regret

    fig = plot_run_regret(analysed_tournament)
    ax = fig.axes[0]
    luck = {r["strategy"]: r for r in analysed_tournament.to_dict()["luck"]}
    counts = np.array(luck["solver"]["regret_histogram"]["counts"])
    assert counts[0] == counts.sum()  # every game of the optimal bot in the bin at 0
    share, edges, _ = ax.patches[list(luck).index("solver")].get_data()
    assert edges[0] == 0.0 and share[0] == 100.0  # drawn as the bin [0, 1), not at x = 1
    assert ax.get_ylim()[1] >= 100.0  # its spike (100 % of its games) is not cut off
    assert ax.get_xlim()[0] < 0  # and it is drawn from x = 0, clear of the axis, not seen at x = 1
    assert ax.get_yscale() == "log"  # the others' tails stay visible under it
    assert inside(fig, ax.get_legend())


def test_regret_per_decision_legend_is_inside_the_figure():
    from types import SimpleNamespace

    from harness.reports.plot import plot_regret_distribution

    edges = 10.0 ** np.arange(-3, 2.01, 0.1)
    hist = np.zeros(edges.size - 1)
    hist[10:30] = 5
    players = [
        SimpleNamespace(
            label=f"solver:temperature={t},blunder=0.0{t}",
            decisions=123_456_789,
            regret_hist=hist,
            zero_regret=100_000_000,
            regret_per_decision=0.123,
        )
        for t in (1, 2)
    ]
    report = SimpleNamespace(
        players=players,
        regret_edges=edges,
        rules=[{"rules": "scandinavian"}],
        games=1_000_000,
        source="results/some-long-run-name",
    )
    fig = plot_regret_distribution(report)
    assert inside(fig, fig.legends[0])


def test_levels_curve_is_drawn_only_where_it_was_measured_densely():
    from harness.players.picture import dense_segments, plot_levels

    assert dense_segments([0.0, 5.0, 10.0]) == []  # three far-apart points: no straight lines between them
    assert dense_segments([0.0, 0.5, 1.0, 1.5, 10.0]) == [(0, 4)]

    def d(values):
        pts = [{"value": v, "response": 240 - 3 * v * v, "ci": [239 - 3 * v * v, 241 - 3 * v * v]} for v in values]
        lv = {
            "name": "easy",
            "target": {"kind": "mean", "value": 200.0},
            "value": 3.6,
            "value_ci": [3.5, 3.7],
            "check": {"response": 200.5, "ci": [199.0, 202.0]},
        }
        return {
            "curves": {"mean": pts},
            "levels": [lv],
            "games": 100,
            "seed": 1,
            "param": "temperature",
            "strategy": "solver",
            "against": None,
            "rules": "scandinavian",
        }

    def joined(fig):  # drawn lines through more than two x (the targets are horizontal; markers have none)
        return [
            ln
            for ln in fig.axes[0].get_lines()
            if ln.get_linestyle() not in ("None", "") and len(set(np.atleast_1d(ln.get_xdata()))) > 2
        ]

    sparse = plot_levels(d([0.0, 2.0, 5.0]))
    assert joined(sparse) == []
    assert {0.0, 2.0, 5.0} <= {x for x, *_ in errorbars(sparse.axes[0])}  # the evaluated points are drawn
    dense = joined(plot_levels(d(list(np.linspace(0, 5, 21)))))
    assert len(dense) == 1 and len(dense[0].get_xdata()) == 21


def test_quality_picture_draws_each_metric_with_its_interval(analysed_tournament):
    """quality.png: one panel per game-quality metric that applies, each marker and interval the
    summary's figure (shares in %), the rows labelled; nothing drawn outside the figure, no panel
    running into another."""
    from harness.reports.plot import plot_quality
    from harness.reports.quality import RUN_METRICS, SHARES

    q = analysed_tournament.to_dict()["quality"]
    fig = plot_quality(analysed_tournament)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    metrics = [ax.get_title(loc="left").split(":")[0] for ax in panels]
    assert metrics == [m for m in RUN_METRICS if q[m]] + ["skill_share", "upset_rate"]
    for ax, m in zip(panels, metrics):
        if m in RUN_METRICS:
            want, labels = [(q[m]["value"], *q[m]["ci"])], ["the run"]
        elif m == "skill_share":
            want = [(e["skill_share"], *e["skill_share_ci"]) for e in q["entrants"]]
            labels = [e["strategy"] for e in q["entrants"]]
        else:
            want = [(p["upset_rate"], *p["upset_ci"]) for p in q["pairings"]]
            labels = [f"{p['name']} (weaker: {p['weaker']})" for p in q["pairings"]]
        scale = 100.0 if m in SHARES else 1.0
        got = np.array([(x, lo, hi) for x, _, lo, hi in errorbars(ax)])
        assert got == pytest.approx(scale * np.array(want), abs=1e-9)
        assert [t.get_text() for t in ax.get_yticklabels()] == labels
    assert len(q["entrants"]) == 3 and len(q["pairings"]) == 3
    assert layout_problems(fig) == []


def test_quality_panels_not_from_zero_say_they_are_zoomed(analysed_tournament):
    """quality.png: a panel whose axis is far from 0 magnifies its interval; its axis label says so
    and gives the axis's ends (issue 37: 1.66 to 1.78 lead changes looked like a wide interval);
    a panel showing 0, or nearly from 0, says nothing of the kind."""
    from harness.reports.plot import QUALITY_UNITS, ZOOM, plot_quality

    fig = plot_quality(analysed_tournament)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    zoomed = 0
    for ax in panels:
        metric = ax.get_title(loc="left").split(":")[0]
        lo, hi = ax.get_xlim()
        label = ax.get_xlabel()
        assert label.startswith(QUALITY_UNITS[metric])
        if (lo > 0 or hi < 0) and max(abs(lo), abs(hi)) > ZOOM * (hi - lo):
            zoomed += 1
            assert label.endswith(f"\n(zoomed: axis {lo:.3g} to {hi:.3g}, not from 0)"), label
        else:
            assert "zoomed" not in label
    assert 0 < zoomed < len(panels)
    assert layout_problems(fig) == []


def test_ratings_of_two_entrants_draw_their_one_pairing(tmp_path):
    """ratings.png of two entrants (issue 37): their two ratings are one number mirrored (mean 0),
    so the picture draws that number, the pairing's Elo difference with its interval (the pairing
    named as the pairings table names it), not two points saying the same thing."""
    from harness.reports.plot import plot_ratings

    run_dir, _ = write_run(tmp_path / "gb", "scandinavian", [["greedy", "bonus"]], 300, 5, 300)
    summary = summarize(run_dir)
    rows = {x["name"]: x for x in summary.ratings.table()}
    fig = plot_ratings(summary)
    (ax,) = fig.axes
    ((x, _, lo, hi),) = errorbars(ax)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["greedy vs bonus"]
    assert x == pytest.approx(rows["greedy"]["elo"] - rows["bonus"]["elo"])
    assert (lo, hi) == pytest.approx((2 * rows["greedy"]["lo"], 2 * rows["greedy"]["hi"]))  # mirrored ratings
    assert x < 0 and "Elo difference, greedy − bonus" in ax.get_xlabel()
    assert layout_problems(fig) == []
