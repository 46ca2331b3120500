"""Game-quality metrics (harness.reports.quality): the course of a game as the engine follows it, each metric
on hand-made runs with known answers, the report and compare outputs, and two statistical checks
(seat 0 of equal bots has no edge; the optimal bot's skill share is exactly 0)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.cli import main
from harness.reports.compare import compare_runs
from harness.game.loop import Leads, play
from harness.util.errors import UserError
from harness.game.outcome import deficit_round, outcomes
from harness.reports.quality import QualityOptions, pair_name
from harness.game.registry import make
from harness.game.rules import load_rules
from harness.stats import holm
from harness.reports.summary import QualitySection, summarize

try:  # tests/ as a package or as a plain directory on sys.path
    from tests.report_helpers import MINI_RULES, write_run
except ModuleNotFoundError:
    from report_helpers import MINI_RULES, write_run


# ---------------------------------------------------------------------------------------------
# the course of a game


def test_leads_count_changes_behind_rounds_and_deficit():
    """Scores after rounds 1..4 of one game: A leads, shared, B leads, A leads = 2 lead changes
    (the shared lead is skipped, the first leader is no change); A was last behind after round 3,
    B after round 4; the deficit is taken after round 3 of a 4-round game."""
    rounds = [[10, 5], [10, 10], [10, 15], [20, 15]]
    lead = Leads(1, 2, rounds=4)
    assert lead.at == 3 == deficit_round(4)
    for r in rounds:
        lead.update(np.array([r], dtype=np.int32))
    assert lead.changes.tolist() == [2]
    assert lead.last_behind.tolist() == [[3, 4]]
    assert lead.deficit.tolist() == [[5, 0]]
    # A, shared, A: no change; a seat never behind has last_behind 0
    lead = Leads(1, 3, rounds=15)
    for r in ([3, 1, 1], [3, 3, 1], [5, 3, 1]):
        lead.update(np.array([r], dtype=np.int32))
    assert lead.changes.tolist() == [0] and lead.last_behind.tolist() == [[0, 3, 3]]
    assert lead.deficit.tolist() == [[0, 0, 0]]  # round 10 not played yet
    assert deficit_round(15) == 10 and deficit_round(11) == 10 and deficit_round(8) == 7


def _course_from_trace(trace: list[dict], seats: int, rounds: int) -> tuple[int, list[int], list[int]]:
    """Lead changes, last_behind and deficit of one game, recomputed in plain Python from its trace."""
    total = [0] * seats
    leader, changes, last, deficit = None, 0, [0] * seats, [0] * seats
    at = deficit_round(rounds)
    boxes = [e for e in trace if e["event"] == "box"]
    for r in range(rounds):
        for e in boxes[r * seats : (r + 1) * seats]:
            total[e["seat"]] = e["total"]
        top = max(total)
        for s in range(seats):
            if total[s] < top:
                last[s] = r + 1
            if r + 1 == at:
                deficit[s] = top - total[s]
        if total.count(top) == 1:
            now = total.index(top)
            changes += leader is not None and now != leader
            leader = now
    return changes, last, deficit


def test_engine_course_matches_the_trace_and_does_not_depend_on_the_batch():
    rules = load_rules("scandinavian")
    bots = [make("greedy", rules), make("random", rules), make("greedy", rules)]
    games = np.arange(40, dtype=np.int64)
    res = play(rules, bots, games, 9)
    for g in range(0, 40, 5):
        trace: list[dict] = []
        play(rules, bots, games[g : g + 1], 9, trace=trace)
        changes, last, deficit = _course_from_trace(trace, 3, rules.n_boxes)
        assert res.lead_changes[g] == changes
        assert res.last_behind[g].tolist() == last and res.deficit[g].tolist() == deficit
    # the same games in two batches: the same course (dice depend on the game only)
    half = [play(rules, bots, games[a:b], 9) for a, b in ((0, 17), (17, 40))]
    for name in ("lead_changes", "last_behind", "deficit"):
        assert np.array_equal(np.concatenate([getattr(h, name) for h in half]), getattr(res, name))
    assert res.lead_changes.max() > 0
    frame = res.to_frame()
    assert list(frame.columns[-3:]) == ["lead_changes", "last_behind", "deficit"]
    assert (frame["lead_changes"].to_numpy().reshape(-1, 3) == res.lead_changes[:, None]).all()
    assert play(rules, bots, games[:3], 9, leads=False).lead_changes is None


def test_best_column_rules_follow_the_ranking_score():
    """Columns not added (the best column wins): the course follows each seat's best column so
    far, so after the last round exactly the winners are not behind."""
    rules = load_rules("scandinavian", {"columns": 2, "add_columns": False})
    bots = [make("greedy", rules), make("random", rules)]
    res = play(rules, bots, np.arange(200), 4)
    rank = res.column_totals.max(axis=2)
    won = outcomes(rank) > 0
    rounds = 2 * rules.n_boxes
    assert (res.last_behind[won] < rounds).all() and (res.last_behind[~won] == rounds).all()
    assert not np.array_equal(rank, res.total)  # the test means something: best column != total


# ---------------------------------------------------------------------------------------------
# hand-made runs


def _write_rows(out: Path, lineups: list[list[str]], rows: list[dict], analyse: bool = False) -> Path:
    """A run directory of one chunk per lineup holding exactly ``rows`` (dicts with lineup, game,
    seat and the columns the quality metrics read)."""
    rules = load_rules("scandinavian")
    out = Path(out)
    (out / "chunks").mkdir(parents=True)
    frame = pd.DataFrame(rows)
    labels = sorted({x for lu in lineups for x in lu})
    games = int(frame["game"].max()) + 1
    chunks = []
    for li in range(len(lineups)):
        part = frame[frame["lineup"] == li].sort_values(["game", "seat"]).copy()
        part["lineup"] = part["lineup"].astype(np.int16)
        part["seat"] = part["seat"].astype(np.int8)
        part["strategy"] = pd.Categorical([lineups[li][s] for s in part["seat"]], categories=labels)
        for c in ("total", "lead_changes", "last_behind", "deficit"):
            if c in part:
                part[c] = part[c].astype(np.int16)
        name = f"chunks/part-L{li:04d}-G{0:012d}.parquet"
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), out / name)
        chunks.append({"lineup": li, "start": 0, "stop": games, "file": name})
    manifest = {
        "format": 1,
        "kind": "run" if len(lineups) == 1 else "tournament",
        "complete": True,
        "rules": {"name": rules.name, "source": rules.source, "settings": dict(rules.settings), "digest": rules.digest},
        "entrants": [{"label": x, "spec": x} for x in labels],
        "lineups": lineups,
        "games": games,
        "seed": 1,
        "chunk_size": games,
        "chunks": chunks,
        "config": {"analyse": analyse},
    }
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def _game(
    g: int, totals: list[int], changes: int, last: list[int], deficit: list[int], li: int = 0, **extra: list[float]
) -> list[dict]:
    return [
        {
            "lineup": li,
            "game": g,
            "seat": s,
            "total": totals[s],
            "lead_changes": changes,
            "last_behind": last[s],
            "deficit": deficit[s],
            **{k: v[s] for k, v in extra.items()},
        }
        for s in range(len(totals))
    ]


def _quality(run: Path, **options: int) -> dict:
    return summarize(run, sections=[QualitySection], quality_options=QualityOptions(**options)).to_dict()["quality"]


@pytest.fixture
def known(tmp_path):
    """Three games of x vs x with known course (the same bot twice: seat order is balanced):

    game 0: seat 1 wins 203-200 after trailing by 35 after round 10 (last behind after round 12);
            two lead changes;
    game 1: a 210-210 draw; seat 0 trailed by 40 (last behind after round 10), seat 1 never by 30
            (last behind after round 3); one lead change;
    game 2: seat 0 wins 250-200, never behind; no lead change.
    """
    rows = (
        _game(0, [200, 203], 2, [15, 12], [0, 35])
        + _game(1, [210, 210], 1, [10, 3], [40, 0])
        + _game(2, [250, 200], 0, [0, 15], [0, 12])
    )
    return _write_rows(tmp_path / "known", [["x", "x"]], rows)


def test_known_answers_lead_changes_decisive_round_close_games_comebacks(known):
    q = _quality(known)
    assert q["lead_changes"]["value"] == pytest.approx(3 / 3)
    # decisive round = the winner's last_behind + 1; the draw splits between its co-winners
    assert q["decisive_round"]["value"] == pytest.approx((13 + (11 + 4) / 2 + 1) / 3)
    # margins 3, 0 (a draw counts as close), 50
    assert q["close_games"]["value"] == pytest.approx(2 / 3)
    # a comeback counted (game 0), a tie split (game 1: one of two co-winners had trailed by 40)
    assert q["comeback_rate"]["value"] == pytest.approx((1 + 0.5 + 0) / 3)
    # seat 0: lost, half a draw, won = 1.5 / 3 of the wins, its fair share exactly
    assert q["first_mover_edge"]["value"] == pytest.approx(0.0)
    lo, hi = q["lead_changes"]["ci"]
    # Student t on 2 degrees of freedom, sd 1 over 3 games; a count is never below 0
    assert lo == 0.0 and hi == pytest.approx(1 + 4.302653 / np.sqrt(3), rel=1e-6)
    # thresholds are report-time options
    q = _quality(known, close_margin=2, comeback_deficit=36)
    assert q["close_games"]["value"] == pytest.approx(1 / 3) and q["comeback_rate"]["value"] == pytest.approx(0.5 / 3)
    assert q["options"] == {"close_margin": 2, "comeback_deficit": 36, "deficit_round": 10, "rounds": 15}
    assert q["why"] == {
        "skill_share": "needs luck and regret: play the run with --analyse",
        "upset_rate": "no two different entrants meet at a table",
    }
    assert q["applies"]["skill_share"] is False and q["entrants"][0]["skill_share"] is None


def test_skill_share_and_upset_rate_known_answers(tmp_path):
    """Two entrants, four games, luck and regret given: a's luck has variance 4 (population) and
    regret variance 1, so its skill share is 1 / 5; b never errs, so its share is exactly 0. b's
    adjusted mean is higher, so a is the underdog: a wins game 3 and draws game 2, an upset rate of
    1.5 / 4 (ties half)."""
    luck_a, reg_a = [2.0, -2.0, 2.0, -2.0], [0.0, 2.0, 0.0, 2.0]
    luck_b = [1.0, 0.0, -1.0, 0.0]
    totals = [(150, 200), (180, 200), (200, 200), (230, 200)]
    rows = []
    for g in range(4):
        rows += _game(g, list(totals[g]), 0, [0, 0], [0, 0], luck=[luck_a[g], luck_b[g]], regret=[reg_a[g], 0.0])
    run = _write_rows(tmp_path / "sk", [["a", "b"]], rows, analyse=True)
    q = _quality(run)
    ent = {e["strategy"]: e for e in q["entrants"]}
    assert ent["a"]["skill_share"] == pytest.approx(0.2)
    assert ent["a"]["var_luck"] == pytest.approx(4.0) and ent["a"]["var_regret"] == pytest.approx(1.0)
    assert ent["b"]["skill_share"] == 0.0 and ent["b"]["skill_share_ci"] == [0.0, 0.0]
    assert ent["a"]["adjusted_mean"] == pytest.approx(np.mean([148, 182, 198, 232]))
    assert ent["b"]["adjusted_mean"] == pytest.approx(200.0)
    (p,) = q["pairings"]
    assert p["name"] == pair_name("b", "a") == "a vs b" and p["weaker"] == "a" and p["stronger"] == "b"
    assert p["upset_rate"] == pytest.approx(1.5 / 4)
    assert p["upset_ci"][0] < 1.5 / 4 < p["upset_ci"][1]
    assert q["why"]["first_mover_edge"].startswith("no lineup of equal bots")


def test_runs_without_the_course_columns_say_what_does_not_apply(tmp_path):
    rows = [
        {k: v for k, v in r.items() if k not in ("lead_changes", "last_behind", "deficit")}
        for r in _game(0, [200, 203], 0, [0, 0], [0, 0]) + _game(1, [200, 190], 0, [0, 0], [0, 0])
    ]
    q = _quality(_write_rows(tmp_path / "old", [["x", "x"]], rows))
    for m in ("lead_changes", "decisive_round", "comeback_rate"):
        assert q[m] is None and "no lead_changes/last_behind/deficit columns" in q["why"][m]
    assert q["close_games"]["value"] == pytest.approx(0.5)
    solo = write_run(tmp_path / "solo", "scandinavian", [["greedy"]], 20, 1, 20)[0]
    q = _quality(solo)
    assert q["why"]["lead_changes"] == "no table of two or more seats" and q["lead_changes"] is None


# ---------------------------------------------------------------------------------------------
# statistics on played runs


def test_first_mover_edge_of_equal_bots_is_zero_within_its_interval(tmp_path):
    """greedy vs greedy ignores the other seat: seat 0 has no edge, and 6,000 games put the interval
    within about +-1.3 points of a share. The run also holds a seat-swapped pair (greedy, random) +
    (random, greedy), a balanced unit too."""
    run, rows = write_run(
        tmp_path / "eq",
        "scandinavian",
        [["greedy", "greedy"], ["greedy", "random"], ["random", "greedy"]],
        6000,
        21,
        3000,
    )
    q = _quality(run)
    fm = q["first_mover_edge"]
    assert fm["ci"][0] < 0 < fm["ci"][1] and fm["ci"][1] - fm["ci"][0] < 0.03
    # the same figure from the rows: seat 0's share of each balanced unit, averaged per game
    share = []
    for li in range(3):
        r = rows[rows["lineup"] == li].sort_values(["game", "seat"])
        oc = r["outcome"].to_numpy().reshape(-1, 2)
        share.append(np.where(oc[:, 0] == 2, 1.0, np.where(oc[:, 0] == 1, 0.5, 0.0)))
    per_game = (share[0] - 0.5 + (share[1] + share[2]) / 2 - 0.5) / 2
    assert fm["value"] == pytest.approx(per_game.mean(), abs=1e-12)
    assert q["lead_changes"]["value"] > 0.1 and 1 <= q["decisive_round"]["value"] <= 15


@pytest.fixture(scope="module")
def mini_rules(tmp_path_factory):
    root = tmp_path_factory.mktemp("mini")
    mp = pytest.MonkeyPatch()
    mp.setenv("YATZY_HARNESS_CACHE", str(root / "cache"))
    path = root / "mini.toml"
    path.write_text(MINI_RULES)
    yield path
    mp.undo()


def _analysed(out: Path, rules: Path, seats: list[str], games: int, seed: int, settings: dict | None = None) -> Path:
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    cfg = RunConfig(
        mode="run",
        rules=str(rules),
        seats=tuple(seats),
        games=games,
        seed=seed,
        chunk_size=max(1, games // 2),
        workers=1,
        analyse=True,
        settings=settings or {},
    )
    return run(cfg, out, quiet=True)


def test_skill_share_of_the_optimal_bot_is_exactly_zero(mini_rules, tmp_path, capsys):
    run = _analysed(tmp_path / "opt", mini_rules, ["solver", "greedy"], 300, 3)
    rows = pd.concat([pd.read_parquet(f) for f in sorted((run / "chunks").glob("*.parquet"))])
    assert main(["report", str(run), "--json", "--no-plots"]) == 0
    q = json.loads(capsys.readouterr().out)["quality"]
    ent = {e["strategy"]: e for e in q["entrants"]}
    assert ent["solver"]["skill_share"] == 0.0 and ent["solver"]["skill_share_ci"] == [0.0, 0.0]
    g = rows[rows["strategy"] == "greedy"]
    want = g["regret"].var() / (g["luck"].var() + g["regret"].var())
    assert ent["greedy"]["skill_share"] == pytest.approx(want, rel=1e-9)
    lo, hi = ent["greedy"]["skill_share_ci"]
    assert 0 < lo < want < hi < 1
    assert ent["greedy"]["adjusted_mean"] == pytest.approx((g["total"] - g["luck"]).mean(), rel=1e-12)
    (p,) = q["pairings"]
    assert p["weaker"] == "greedy"
    md = (run / "summary.md").read_text()
    assert "## Game quality" in md and "## Skill share per entrant" in md and "## Upsets" in md
    assert "Game quality" in (run / "report.html").read_text()


# ---------------------------------------------------------------------------------------------
# compare


def test_compare_prints_quality_side_by_side_with_holm(mini_rules, tmp_path, capsys):
    """Two analysed runs of the mini rules, the bonus at 63 and at 30 (a large change): every
    quality metric of both runs, the differences' intervals, Holm-adjusted p-values that are
    Holm's of the raw ones, and the skill share difference of the optimal bot exactly 0."""
    a = _analysed(tmp_path / "a", mini_rules, ["solver", "greedy"], 400, 7)
    b = _analysed(tmp_path / "b", mini_rules, ["solver", "greedy"], 400, 7, {"upper_bonus_threshold": 30})
    r = compare_runs(a, b)
    q = r.quality
    assert q["correction"].startswith("Holm") and q["games"] == 400
    rows = {(m["metric"], m["scope"]): m for m in q["metrics"]}
    assert set(rows) == {
        ("lead_changes", "run"),
        ("decisive_round", "run"),
        ("close_games", "run"),
        ("comeback_rate", "run"),
        ("skill_share", "solver"),
        ("skill_share", "greedy"),
        ("upset_rate", "solver vs greedy"),
    }
    assert "first_mover_edge" in q["why"]
    assert [m["p_holm"] for m in q["metrics"]] == pytest.approx(holm([m["p_value"] for m in q["metrics"]]))
    for m in q["metrics"]:
        assert m["significant"] == (m["p_holm"] < 0.05)
        assert m["diff"] == pytest.approx(m["candidate"] - m["base"], abs=1e-12)
    s = rows[("skill_share", "solver")]
    assert s["base"] == s["candidate"] == s["diff"] == 0.0
    # each side's value is what report says for that run
    for run, side in ((a, "base"), (b, "candidate")):
        own = _quality(run)
        assert rows[("lead_changes", "run")][side] == pytest.approx(own["lead_changes"]["value"], abs=1e-12)
        assert rows[("lead_changes", "run")][f"{side}_ci"] == pytest.approx(own["lead_changes"]["ci"], abs=1e-12)
    assert main(["compare", str(a), str(b), "--comeback-deficit", "20"]) in (0, 1, 2)
    out = capsys.readouterr().out
    assert "game quality (paired on the same games" in out and "Holm-corrected for 7 tests" in out
    assert "comeback = 20+ behind after round 7" in out  # mini rules: 8 rounds, deficit after the 7th
    assert "first_mover_edge: does not apply" in out


# ---------------------------------------------------------------------------------------------
# one meaning of "games", one pairing order (hardening issue items 11 and 15)


def test_quality_games_are_the_games_played_in_every_lineup(tmp_path):
    """Two lineups of three games each: the run played 6 games, as every other table says; the
    intervals' unit (one observation per game index) is named apart, and the header says both."""
    rows = []
    for li in range(2):
        for g in range(3):
            rows += _game(g, [200 + g, 190 + li], 0, [0, 0], [0, 0], li=li)
    run = _write_rows(tmp_path / "two", [["a", "b"], ["b", "a"]], rows)
    d = summarize(run, sections=[QualitySection]).to_dict()
    q = d["quality"]
    assert q["games"] == 6 and q["game_indices"] == 3  # the pairings table's games of a vs b: 6 too
    assert q["lineups"] == 2 and q["close_games"]["game_indices"] == 3
    from harness.reports.quality import tables

    head = tables(d)[0].title
    assert "6 games" in head and "3 per lineup x 2 lineups" in head


def test_pairings_are_named_in_the_entrants_order_in_every_table(tmp_path):
    """Entrants random, greedy (the run's order): the pairings table and the upsets table both say
    "random vs greedy" (the upsets used to sort the labels: "greedy vs random")."""
    run, _ = write_run(tmp_path / "ord", "scandinavian", [["random", "greedy"], ["greedy", "random"]], 200, 3, 200)
    d = summarize(run).to_dict()
    assert [e["strategy"] for e in d["entrants"]] == ["random", "greedy"]
    assert [p["name"] for p in d["pairings"]] == ["random vs greedy"]
    assert [p["name"] for p in d["quality"]["pairings"]] == ["random vs greedy"]


# ---------------------------------------------------------------------------------------------
# exact metrics of two solitaire players, against a sampled run


def test_exact_close_games_draws_and_upsets_are_the_enumerated_ones_and_lie_in_a_sampled_runs_intervals(
    tmp_path, monkeypatch
):
    from harness.exact import evaluate as E
    from harness.reports.quality_exact import exact_pair
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run
    from tests.test_solver import TINY

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tiny_bonus.toml"
    path.write_text(TINY["tiny_bonus"])
    rules = load_rules(str(path))
    a, b = E.evaluate(rules, "solver"), E.evaluate(rules, "greedy")
    ex = exact_pair(a, b)
    pa, pb = a.ranking, b.ranking
    cells = [(pa[i] * pb[j], i - j) for i in range(len(pa)) for j in range(len(pb))]
    assert ex.close_games == pytest.approx(sum(p for p, d in cells if abs(d) <= 5), abs=1e-14)
    assert ex.draw_rate == pytest.approx(sum(p for p, d in cells if d == 0), abs=1e-14)
    assert ex.weaker == "greedy" and b.mean < a.mean
    assert ex.upset_rate == pytest.approx(sum(p for p, d in cells if d < 0) + ex.draw_rate / 2, abs=1e-14)
    assert exact_pair(b, a).upset_rate == pytest.approx(ex.upset_rate, abs=1e-15)  # the order does not matter
    assert exact_pair(a, b, QualityOptions(close_margin=0)).close_games == ex.draw_rate
    # a seeded run of the two bots: every exact value inside the sampled 99.9 % interval
    out = run(
        RunConfig(mode="run", rules=str(path), seats=("solver", "greedy"), games=6000, seed=5, workers=1),
        tmp_path / "run",
        quiet=True,
    )
    s = summarize(out, confidence=0.999).to_dict()
    q, pair = s["quality"], s["pairings"][0]
    lo, hi = q["close_games"]["ci"]
    assert lo < ex.close_games < hi
    lo, hi = pair["draw_ci"]
    assert lo < ex.draw_rate < hi
    (up,) = q["pairings"]
    assert up["weaker"] == "greedy" and up["upset_ci"][0] < ex.upset_rate < up["upset_ci"][1]


# ---------------------------------------------------------------------------------------------
# the exact course of a game of two solitaire players (harness.exact.course), against enumeration


#: Three rounds (the deficit round is the second): small enough to enumerate every pair of courses
COURSE_RULES = (
    'name = "tiny_course"\ndice = 2\nrolls = 2\n[settings]\nupper_bonus_threshold = 4\n'
    "upper_bonus_value = 5\n"
    + "".join(f'[[boxes]]\nname = "{n}"\nkind = "upper"\nface = {f}\n' for f, n in ((1, "ones"), (2, "twos")))
    + '[[boxes]]\nname = "chance"\nkind = "chance"\n'
)


def _enumerated_course(pa: dict, pb: dict, d: int, deficit: int) -> tuple[float, float, float, float]:
    """(lead changes, lead changes between consecutive rounds, decisive round, comeback rate) of two
    independent players, from every pair of their courses (running totals after each round) with
    the engine's definitions (:class:`harness.game.loop.Leads`, :class:`harness.reports.quality.QualityModel`)."""
    a_paths = np.array(list(pa), dtype=np.int64)
    b_paths = np.array(list(pb), dtype=np.int64)
    sg = np.sign(a_paths[:, None, :] - b_paths[None, :, :])
    w = np.array(list(pa.values()))[:, None] * np.array(list(pb.values()))[None, :]
    leader, changes = np.zeros(w.shape, np.int64), np.zeros(w.shape)
    behind_a, behind_b = np.zeros(w.shape), np.zeros(w.shape)
    for r in range(sg.shape[2]):
        s = sg[:, :, r]
        changes += (s != 0) & (leader != 0) & (s != leader)
        leader = np.where(s != 0, s, leader)
        behind_a, behind_b = np.where(s < 0, r + 1, behind_a), np.where(s > 0, r + 1, behind_b)
    adjacent = ((sg[:, :, 1:] * sg[:, :, :-1]) < 0).sum(axis=2)
    f = sg[:, :, -1]
    a_won, b_won = np.where(f > 0, 1.0, np.where(f == 0, 0.5, 0.0)), np.where(f < 0, 1.0, np.where(f == 0, 0.5, 0.0))
    dd = a_paths[:, None, d - 1] - b_paths[None, :, d - 1]
    return (
        (w * changes).sum(),
        (w * adjacent).sum(),
        (w * (a_won * (behind_a + 1) + b_won * (behind_b + 1))).sum(),
        (w * (a_won * (-dd >= deficit) + b_won * (dd >= deficit))).sum(),
    )


def test_exact_course_is_the_enumerated_one_and_lies_in_a_sampled_runs_intervals(tmp_path, monkeypatch):
    from harness.exact.course import course
    from harness.reports.quality_exact import SAMPLED_METRICS, exact_course
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run
    from tests.test_evaluate import enumerate_play

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tiny_course.toml"
    path.write_text(COURSE_RULES)
    rules = load_rules(str(path))
    opts = QualityOptions(comeback_deficit=4)
    courses, paths = [], []
    for bot in ("greedy", "solver"):
        c = course(rules, bot)
        p, _ = enumerate_play(rules, make(bot, rules), paths=True)
        # each joint is the enumerated one: (X_r, next round's points) and (X_d, the rest)
        steps, rest = np.zeros_like(c.steps), np.zeros_like(c.rest)
        for totals, w in p.items():
            full = (0,) + totals
            for r in range(rules.n_boxes):
                steps[r, full[r], full[r + 1] - full[r]] += w
            rest[full[c.deficit_round], full[-1] - full[c.deficit_round]] += w
        np.testing.assert_allclose(c.steps, steps, atol=1e-15, rtol=0)
        np.testing.assert_allclose(c.rest, rest, atol=1e-15, rtol=0)
        again = course(rules, bot)  # from the cache, the same to the last bit
        assert again.cached and not c.cached and np.array_equal(again.steps, c.steps)
        courses.append(c)
        paths.append(p)
    assert c.deficit_round == deficit_round(rules.n_boxes) == 2
    ex = exact_course(*courses, opts)
    changes, adjacent, decisive, comebacks = _enumerated_course(*paths, 2, opts.comeback_deficit)
    assert ex.comeback_rate == pytest.approx(comebacks, abs=1e-14) and 0.05 < comebacks < 0.5
    assert ex.lead_changes_lo == pytest.approx(adjacent, abs=1e-14)
    assert ex.lead_changes_lo < changes < ex.lead_changes_hi  # a change across a tied round lies between
    rev = exact_course(courses[1], courses[0], opts)
    assert (rev.comeback_rate, rev.lead_changes_hi) == pytest.approx((ex.comeback_rate, ex.lead_changes_hi), abs=1e-15)
    assert set(SAMPLED_METRICS) == {"lead_changes", "decisive_round"}
    # a seeded run of the two bots: the exact comeback rate inside its 99.9 % interval, the exact
    # bounds of the lead changes meeting theirs, the enumerated decisive round inside its interval
    out = run(
        RunConfig(mode="run", rules=str(path), seats=("greedy", "solver"), games=6000, seed=5, workers=1),
        tmp_path / "run",
        quiet=True,
    )
    q = summarize(out, confidence=0.999, quality_options=opts).to_dict()["quality"]
    lo, hi = q["comeback_rate"]["ci"]
    assert lo < ex.comeback_rate < hi
    lo, hi = q["lead_changes"]["ci"]
    assert lo < changes < hi and ex.lead_changes_lo < hi and lo < ex.lead_changes_hi
    lo, hi = q["decisive_round"]["ci"]
    assert lo < decisive < hi


def test_evaluate_course_prints_the_exact_course_or_why_not(tmp_path, monkeypatch, capsys):
    from harness.exact.course import course
    from harness.reports.quality_exact import exact_course

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tiny_course.toml"
    path.write_text(COURSE_RULES)
    rules = load_rules(str(path))
    args = ["evaluate", str(path), "--entrants", "greedy,solver", "--course", "--comeback-deficit", "4"]
    assert main(args + ["--json"]) == 0
    (got,) = json.loads(capsys.readouterr().out)["course"]
    ex = exact_course(course(rules, "greedy"), course(rules, "solver"), QualityOptions(comeback_deficit=4))
    assert got["comeback_rate"] == ex.comeback_rate and got["deficit_round"] == 2
    assert got["lead_changes_bounds"] == [ex.lead_changes_lo, ex.lead_changes_hi]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "comeback rate (4+ behind after round 2)" in text and f"{100 * ex.comeback_rate:.3f} %" in text
    assert "decisive round: the last round the final winner trails" in text
    assert main(["evaluate", str(path), "--entrants", "greedy,solver", "--set", "columns=2", "--course", "--json"]) == 0
    assert "2 columns" in json.loads(capsys.readouterr().out)["course_refused"]
    assert main(["evaluate", str(path), "--entrants", "greedy", "--course"]) == 2
    assert "--course: give two --entrants" in capsys.readouterr().err


def test_the_course_is_refused_where_it_cannot_be_followed(tmp_path):
    from harness.exact.course import course, refusal

    path = tmp_path / "tiny_course.toml"
    path.write_text(COURSE_RULES)
    rules = load_rules(str(path))
    assert refusal(rules, "greedy") is None
    assert "plays for a target" in refusal(rules, "solver:target=20")
    two = load_rules(str(path), {"columns": 2})
    assert "2 columns" in refusal(two, "greedy")
    with pytest.raises(UserError, match="2 columns"):
        course(two, "greedy", tmp_path)
    assert "not solitaire" in refusal(rules, "winprob") or "winprob" in refusal(rules, "winprob")
