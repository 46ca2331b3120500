"""Tests for harness.reports.compare: paired statistics against pandas/scipy on the same rows, the verdict and
exit codes (a real change detected, a no-op change not flagged more often than alpha), and the
``compare`` command end to end on run directories and on run configs played by the runner."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from scipy import stats as sps

from harness.cli import main
from harness.reports.compare import Comparison, CompareSettings, compare_runs, compare_text
from harness.util.errors import UserError

try:  # tests/ as a package or as a plain directory on sys.path
    from tests.report_helpers import MINI_RULES, errorbars, layout_problems, write_run
except ModuleNotFoundError:
    from report_helpers import MINI_RULES, errorbars, layout_problems, write_run

TT = [["timeout", "timeout"]]


@pytest.fixture(scope="module")
def fh_pair(tmp_path_factory):
    """Same bots and seed; the candidate scores full house flat 25 instead of the dice's sum."""
    root = tmp_path_factory.mktemp("fh")
    base = write_run(root / "base", "scandinavian", TT, 400, 1, 150)
    cand = write_run(root / "cand", "scandinavian", TT, 400, 1, 100, settings=["full_house_scoring=flat"])
    return base, cand


def test_figures_few_games_moved_get_the_interval_their_bounds_allow(fh_pair):
    """A flat full house leaves most boxes' scores unchanged in every one of the 400 games and
    moves some in one game: their interval is the Clopper-Pearson bound on the games that move
    them, scaled by the box's highest score (a t interval would have zero width, or follow that
    game's sign; in small comparisons such intervals missed the exact difference most of the time,
    benchmarks/BENCHMARKS.md). A box moved in some games has a t interval whose degrees of
    freedom are those games'."""
    from harness.game.rules import load_rules

    (bdir, brows), (cdir, crows) = fh_pair
    r = compare_runs(bdir, cdir, CompareSettings(mu1=4))
    m = brows.merge(crows, on=["lineup", "game", "seat"], suffixes=("_b", "_c"))
    rules = load_rules("scandinavian")
    q = 1 - 0.025 ** (1 / 400)
    still = [b for b in rules.box_names if (m[f"{b}_c"] == m[f"{b}_b"]).all()]
    assert len(still) >= 5
    boxes = {b["box"]: b for b in r.boxes}
    for b in still:
        top = float(rules.box_max()[rules.box_index(b)])
        assert boxes[b]["diff"] == 0 and boxes[b]["p_value"] == 1
        assert boxes[b]["diff_ci"] == pytest.approx([-top * q, top * q], rel=1e-12)
    # boxes that moved in 1..4 games: the Clopper-Pearson bound for that many games, p = 1
    moved = {
        b: int((m.groupby("game")[f"{b}_c"].sum() != m.groupby("game")[f"{b}_b"].sum()).sum()) for b in rules.box_names
    }
    once = [b for b, k in moved.items() if k == 1]
    assert once
    q1 = sps.beta.ppf(0.975, 2, 399)
    for b in once:
        top = float(rules.box_max()[rules.box_index(b)])
        assert boxes[b]["diff_ci"] == pytest.approx([-top * q1, top * q1], rel=1e-9) and boxes[b]["p_value"] == 1
    # full house moved in some games, not all: a t interval with (games moved - 1) degrees of freedom
    d = m.assign(d=m["full_house_c"] - m["full_house_b"]).groupby("game")["d"].mean()
    assert 1 < moved["full_house"] < 400
    half = sps.t.ppf(0.975, moved["full_house"] - 1) * d.std(ddof=1) / math.sqrt(400)
    assert boxes["full_house"]["diff_ci"] == pytest.approx([d.mean() - half, d.mean() + half], rel=1e-9)
    assert boxes["full_house"]["diff_ci"][0] > 0
    lines = {ln.split()[0]: ln for ln in compare_text(r).splitlines() if ln.startswith("  ")}
    assert not any(lines[b].endswith("*") for b in still) and lines["full_house"].endswith("*")


def test_paired_statistics_match_pandas(fh_pair):
    (bdir, brows), (cdir, crows) = fh_pair
    r = compare_runs(bdir, cdir, CompareSettings(mu1=4))
    m = brows.merge(crows, on=["lineup", "game", "seat"], suffixes=("_b", "_c"))
    assert len(m) == 800
    # the unit is the game: the mean over both seats of each game's difference
    per_game = m.assign(d=m["total_c"] - m["total_b"]).groupby("game")["d"].mean()
    # the t statistic of the paired differences, with k - 1 degrees of freedom for the k games the
    # change moved (the other games' differences are exact zeros)
    k = int((per_game != 0).sum())
    assert 1 < k < 400 and r.sprt["moved"] == k
    t = sps.ttest_1samp(per_game, 0.0).statistic
    half = sps.t.ppf(0.975, k - 1) * per_game.std(ddof=1) / math.sqrt(400)
    sc = r.score
    assert r.games == 400 and r.rows_per_game == 2
    assert sc["diff"] == pytest.approx(per_game.mean(), rel=1e-12)
    assert sc["diff_ci"] == pytest.approx([per_game.mean() - half, per_game.mean() + half], rel=1e-9)
    assert sc["p_value"] == pytest.approx(2 * sps.t.sf(abs(t), k - 1), rel=1e-6, abs=1e-300)
    assert sc["base"] == pytest.approx(brows["total"].mean()) and sc["candidate"] == pytest.approx(
        crows["total"].mean()
    )
    ks = sps.ks_2samp(brows["total"], crows["total"])
    assert r.distribution["statistic"] == pytest.approx(ks.statistic, abs=1e-12)
    boxes = {b["box"]: b for b in r.boxes}
    fh = m.assign(d=m["full_house_c"] - m["full_house_b"]).groupby("game")["d"].mean()
    assert boxes["full_house"]["diff"] == pytest.approx(fh.mean())
    # total = boxes + upper bonus (50): the paired differences add up the same way
    assert sc["diff"] == pytest.approx(sum(b["diff"] for b in r.boxes) + 50 * r.bonus_rate["diff"])
    win = m.assign(d=(m["outcome_c"] - m["outcome_b"]) / 2).groupby("game")["d"].mean()
    assert r.win_rate["diff"] == pytest.approx(win.mean(), abs=1e-15)
    assert r.settings_changed == {"full_house_scoring": ["sum", "flat"]}


def test_real_change_is_detected_exit_1(fh_pair, capsys):
    (bdir, _), (cdir, _) = fh_pair
    assert main(["compare", str(bdir), str(cdir), "--mu1", "1"]) == 1
    out = capsys.readouterr().out
    assert "verdict: CHANGE (exit 1)" in out and "full_house_scoring sum -> flat" in out
    # swapping the roles flips the sign; still a change
    assert main(["compare", str(cdir), str(bdir), "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "change" and d["score"]["diff"] < -3
    assert [t["decision"] for t in d["sprt"]["tests"]] == ["H0", "H1"]


def test_identical_runs_no_change_exit_0(fh_pair, capsys):
    """No game differs: "no change" once the bound on a change none of the games showed (the
    total's range times 1 - beta ** (1 / n)) lies nearer mu0 than mu1; before, inconclusive (400
    games bound the difference to ±2.8 points only, more than half of mu1 = 4; 0 of 100 games was
    seen to precede a change in the coverage benchmark)."""
    from harness.game.rules import load_rules

    (bdir, _), _ = fh_pair
    assert main(["compare", str(bdir), str(bdir), "--mu1", "4", "--json"]) == 2
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "inconclusive" and d["sprt"]["moved"] == 0
    bound = load_rules("scandinavian").max_total() * (1 - 0.05 ** (1 / 400))
    assert bound == pytest.approx(2.79, abs=0.01)
    assert main(["compare", str(bdir), str(bdir), "--mu1", "8", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "no change" and d["score"]["diff"] == 0 and d["exit_code"] == 0
    assert main(["compare", str(bdir), str(bdir), "--mu1", "8"]) == 0
    assert "the totals differ in no game" in capsys.readouterr().out
    for key in (
        "base",
        "candidate",
        "games",
        "focus",
        "score",
        "distribution",
        "boxes",
        "bonus_rate",
        "yatzy_rate",
        "win_rate",
        "sprt",
        "verdict",
        "exit_code",
        "notes",
    ):
        assert key in d


def test_too_few_games_is_inconclusive_exit_2(tmp_path, capsys):
    a, _ = write_run(tmp_path / "a", "scandinavian", TT, 30, 1, 30)
    b, _ = write_run(tmp_path / "b", "scandinavian", TT, 30, 2, 30)
    assert main(["compare", str(a), str(b), "--mu1", "1", "--unpaired"]) == 2
    out = capsys.readouterr().out
    assert "verdict: INCONCLUSIVE (exit 2)" in out and "seeds differ (1 vs 2)" in out


def test_runs_on_different_seeds_are_refused_unless_unpaired(tmp_path, capsys):
    a, _ = write_run(tmp_path / "a", "scandinavian", TT, 30, 1, 30)
    b, _ = write_run(tmp_path / "b", "scandinavian", TT, 30, 2, 30)
    assert main(["compare", str(a), str(b)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "different seeds (1 and 2)" in err[0] and "--unpaired" in err[0]
    assert main(["compare", str(a), str(b), "--unpaired"]) == 2  # inconclusive on 30 games, but compared
    out = capsys.readouterr().out
    assert "pairing: NONE" in out and "UNPAIRED" in out


def test_boxes_on_one_side_only_are_listed(tmp_path, capsys):
    """Scandinavian has pair boxes that standard lacks: they are listed, not silently dropped."""
    a, _ = write_run(tmp_path / "a", "scandinavian", TT, 200, 1, 200)
    b, _ = write_run(tmp_path / "b", "standard", TT, 200, 1, 200)
    r = compare_runs(a, b)
    assert r.boxes_only == {"base": ["one_pair", "two_pairs"], "candidate": []}
    assert (
        "boxes only in BASE: one_pair, two_pairs (not compared box by box; their points are in the totals)" in r.notes
    )
    assert not {x["box"] for x in r.boxes} & {"one_pair", "two_pairs"}
    r = compare_runs(b, a)
    assert r.boxes_only == {"base": [], "candidate": ["one_pair", "two_pairs"]}
    assert any(n.startswith("boxes only in CANDIDATE: one_pair, two_pairs") for n in r.notes)


def test_no_op_change_is_not_flagged_more_often_than_alpha(tmp_path):
    """20 independent no-op comparisons (same config, different seeds), each a sequential SPRT.

    Each comparison plays 600 timeout-vs-timeout games per side and looks at the two-sided SPRT
    (alpha = beta = 0.05, H1: |diff| = 6 points; sd of a per-game difference is ~20 points) every
    25 games from the 100th until it decides: exactly how `compare --sequential` uses it. Under H0
    each comparison flags a change with probability <= alpha (Wald's bound; a simulation of this
    design with normal differences gives 1.6 %). The 20 comparisons use disjoint seeds, so the number of
    false alarms X is Binomial(20, p <= 0.05): a correct test gives X <= 3 except with probability
    <= 1.6 %, while a test whose variance or bounds were wrong by a useful factor flags far more
    often. The seeds are fixed, so the outcome is deterministic. The same comparisons must also
    reach "no change" (the test has power against a 6-point change at this sample size).
    """
    settings = CompareSettings(mu1=6.0)
    verdicts = []
    for k in range(20):
        a, _ = write_run(tmp_path / f"a{k}", "scandinavian", TT, 600, 1000 + 2 * k, 600)
        b, _ = write_run(tmp_path / f"b{k}", "scandinavian", TT, 600, 1001 + 2 * k, 600)
        c = Comparison(a, b, dataclasses.replace(settings, unpaired=True))
        for look in range(25, 601, 25):
            c.update(until=look)
            verdict, _ = c.verdict()
            if verdict != "inconclusive":
                break
        verdicts.append(verdict)
    assert verdicts.count("change") <= 3, verdicts
    assert verdicts.count("no change") >= 16, verdicts


def test_bot_against_bot_focuses_on_the_changed_seat(tmp_path):
    a, arows = write_run(tmp_path / "a", "scandinavian", [["timeout", "random"]], 200, 3, 200)
    b, brows = write_run(tmp_path / "b", "scandinavian", [["random", "random"]], 200, 3, 200)
    r = compare_runs(a, b, CompareSettings(mu1=5))
    assert r.focus == [{"lineup": 0, "seat": 0, "base": "timeout", "candidate": "random"}]
    assert r.rows_per_game == 1
    want = brows.loc[brows["seat"] == 0, "total"].mean() - arows.loc[arows["seat"] == 0, "total"].mean()
    assert r.score["diff"] == pytest.approx(want)
    assert r.verdict == "change" and r.exit_code == 1
    # the random bot in seat 1 saw the same dice and uniforms in both runs: identical play
    assert (
        arows.loc[arows["seat"] == 1, "total"].to_numpy() == brows.loc[brows["seat"] == 1, "total"].to_numpy()
    ).all()
    r2 = compare_runs(a, b, CompareSettings(mu1=5, entrant="timeout"))
    assert r2.focus == r.focus
    with pytest.raises(UserError, match="--entrant 'greedy' sits in no seat"):
        compare_runs(a, b, CompareSettings(entrant="greedy"))


def test_unpairable_runs_are_a_usage_error(tmp_path, capsys):
    a, _ = write_run(tmp_path / "a", "scandinavian", [["timeout", "random"]], 20, 3, 20)
    b, _ = write_run(tmp_path / "b", "scandinavian", [["timeout", "random", "random"]], 20, 3, 20)
    assert main(["compare", str(a), str(b)]) == 2
    assert "lineup 0 has 2 seats in BASE, 3 in CANDIDATE" in capsys.readouterr().err
    with pytest.raises(UserError, match="--mu0 and --mu1 must differ"):
        CompareSettings(mu0=1, mu1=1)


def _config(path: Path, settings: dict[str, str]) -> Path:
    lines = [
        'mode = "run"',
        'rules = "scandinavian"',
        'seats = ["timeout", "timeout"]',
        "games = 5000",
        "seed = 7",
        "chunk_size = 100",
        "workers = 1",
    ]
    if settings:
        lines.append("[settings]")
        lines += [f'{k} = "{v}"' for k, v in settings.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_compare_configs_played_on_common_random_numbers(tmp_path, capsys):
    base = _config(tmp_path / "base.toml", {})
    cand = _config(tmp_path / "cand.toml", {"full_house_scoring": "flat"})
    out = tmp_path / "cmp"
    code = main(
        ["compare", str(base), str(cand), "--games", "300", "--seed", "9", "--out", str(out), "--quiet", "--json"]
    )
    d = json.loads(capsys.readouterr().out)
    assert code == 1 and d["verdict"] == "change"
    assert d["base"]["seed"] == d["candidate"]["seed"] == 9 and d["games"] == 300
    assert (out / "base" / "manifest.json").is_file() and (out / "candidate" / "manifest.json").is_file()
    # configs played by compare are analysed: the score is luck-adjusted, the plain figure kept
    assert d["luck"]["adjusted"] and d["score"]["estimator"] == "luck-adjusted: total − luck"
    assert json.loads((out / "base" / "manifest.json").read_text())["config"]["analyse"] is True
    # both seats of each table are compared: their luck edges cancel, so the win rate stays plain
    assert d["win_rate"]["estimator"] == "plain" and "cancel" in d["win_rate"]["why"]
    plain = d["score_plain"]
    assert plain["diff"] == pytest.approx(sum(b["diff"] for b in d["boxes"]) + 50 * d["bonus_rate"]["diff"])
    full_house = next(b for b in d["boxes"] if b["box"] == "full_house")
    assert full_house["diff"] > 3 and full_house["p_value"] < 1e-6


def test_sequential_stops_when_the_sprt_decides(tmp_path, capsys):
    base = _config(tmp_path / "base.toml", {})
    cand = _config(tmp_path / "cand.toml", {"yatzy_scoring": "flat_plus_sum"})
    out = tmp_path / "seq"
    code = main(
        [
            "compare",
            str(base),
            str(cand),
            "--sequential",
            "--games",
            "40",
            "--max-games",
            "400",
            "--mu1",
            "1",
            "--out",
            str(out),
            "--quiet",
            "--json",
        ]
    )
    d = json.loads(capsys.readouterr().out)
    looks = d["sequential"]["looks"]
    # yatzies score their dice on top: ~ +0.2 points a game, nearer 0 than 1: H0 at the first look
    # with at least --min-games (100) paired games and 5 games whose totals differ (a yatzy in
    # either run: fewer than 5 of the first 120 games here); before that the verdict waits
    assert code == 0 and d["verdict"] == "no change"
    assert [x["games"] for x in looks] == [40, 80, 120, 160]
    assert [x["verdict"] for x in looks] == ["inconclusive", "inconclusive", "inconclusive", "no change"]
    assert d["games"] == 160 and d["sprt"]["moved"] >= d["sprt"]["min_moved"] == 5
    c = Comparison(out / "base", out / "candidate", CompareSettings(mu1=1))
    c.update(until=120)
    assert c.verdict()[0] == "inconclusive" and 0 < c.acc.moved_games("total") < 5
    assert "the totals differ in only" in compare_text(c.result())
    m = json.loads((out / "base" / "manifest.json").read_text())
    assert m["games"] == d["games"]
    assert main(["compare", str(base), str(cand), "--sequential", "--out", str(tmp_path / "x")]) == 2
    assert "--sequential needs --max-games" in capsys.readouterr().err


def test_bonus_threshold_62_vs_63_with_solver_bots_matches_the_exact_difference(tmp_path, monkeypatch, capsys):
    """The site's check of a rule change, on a rule set small enough to solve in a test: solver bots
    at threshold 63 (BASE) and 62 (CANDIDATE) on the same dice. The change must be detected, and the
    measured paired difference must agree with the difference of the two exact expected scores (its
    99.9 % interval contains it). The full scandinavian version is benchmarks/bench_compare.py."""
    from harness.game.rules import load_rules
    from harness.exact.solver import solve

    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "cache"))
    rules = tmp_path / "mini.toml"
    rules.write_text(MINI_RULES)
    exact = (
        solve(load_rules(str(rules), ["upper_bonus_threshold=62"])).expected_score
        - solve(load_rules(str(rules))).expected_score
    )
    assert exact == pytest.approx(2.773041, abs=1e-6)
    for name, t in (("base", 63), ("cand", 62)):
        (tmp_path / f"{name}.toml").write_text(
            f'rules = "{rules}"\nseats = ["solver", "solver"]\ngames = 3000\nseed = 1\nchunk_size = 1500\n'
            f"workers = 1\n[settings]\nupper_bonus_threshold = {t}\n"
        )
    code = main(
        [
            "compare",
            str(tmp_path / "base.toml"),
            str(tmp_path / "cand.toml"),
            "--confidence",
            "0.999",
            "--out",
            str(tmp_path / "cmp"),
            "--quiet",
            "--json",
        ]
    )
    d = json.loads(capsys.readouterr().out)
    assert code == 1 and d["verdict"] == "change"
    lo, hi = d["score_plain"]["diff_ci"]
    assert lo < exact < hi
    assert d["bonus_rate"]["diff"] > 0.02 and d["bonus_rate"]["diff_ci"][0] > 0
    # luck-adjusted, an optimal bot scores V(start) in every game: the paired difference is the
    # exact difference of the two expected scores, game by game (variance zero up to rounding)
    assert d["luck"]["adjusted"]
    assert d["score"]["diff"] == pytest.approx(exact, abs=1e-9)
    assert d["score"]["diff_ci"] == pytest.approx([exact, exact], abs=1e-9)
    assert d["score"]["variance_reduction"] is None  # infinite: JSON null
    assert d["score"]["base"] == pytest.approx(solve(load_rules(str(rules))).expected_score, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# luck-adjusted comparisons (runs played with analyse = true)


def _played(
    out: Path, rules: Path, seats: list[str], games: int, seed: int, analyse: bool = True, settings: dict | None = None
):
    """Play a run with the runner (analysed by default); returns (dir, rows sorted by game, seat)."""
    import pandas as pd

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
        analyse=analyse,
        settings=settings or {},
    )
    run(cfg, out, quiet=True)
    rows = pd.concat([pd.read_parquet(f) for f in sorted((out / "chunks").glob("*.parquet"))], ignore_index=True)
    return out, rows.sort_values(["game", "seat"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def mini_rules(tmp_path_factory):
    root = tmp_path_factory.mktemp("mini")
    mp = pytest.MonkeyPatch()
    mp.setenv("YATZY_HARNESS_CACHE", str(root / "cache"))
    path = root / "mini.toml"
    path.write_text(MINI_RULES)
    yield path
    mp.undo()


@pytest.fixture(scope="module")
def bot_change(mini_rules, tmp_path_factory):
    """BASE timeout vs greedy, CANDIDATE greedy vs greedy, same seed, both analysed (mini rules)."""
    root = tmp_path_factory.mktemp("botchange")
    base = _played(root / "base", mini_rules, ["timeout", "greedy"], 800, 5)
    cand = _played(root / "cand", mini_rules, ["greedy", "greedy"], 800, 5)
    return base, cand


def test_luck_adjusted_score_and_controlled_win_rate_match_numpy(bot_change, capsys):
    """The adjusted score difference is the paired t analysis of (total - luck); the win-rate
    difference is the least-squares intercept of y = win difference on x = luck-edge difference
    (the regression estimator at x's known mean 0), with the textbook standard error."""
    import numpy as np

    (bdir, b), (cdir, c) = bot_change
    r = compare_runs(bdir, cdir)
    assert r.focus == [{"lineup": 0, "seat": 0, "base": "timeout", "candidate": "greedy"}]
    bs, cs = b[b["seat"] == 0], c[c["seat"] == 0]
    d_plain = cs["total"].to_numpy() - bs["total"].to_numpy()
    d_adj = (cs["total"] - cs["luck"]).to_numpy() - (bs["total"] - bs["luck"]).to_numpy()
    n = len(d_adj)
    t = sps.ttest_1samp(d_adj, 0.0)
    half = sps.t.ppf(0.975, n - 1) * d_adj.std(ddof=1) / math.sqrt(n)
    sc = r.score
    assert r.luck == {
        "adjusted": True,
        "estimator": "luck-adjusted: total − luck",
        "variance_reduction": pytest.approx(d_plain.var(ddof=1) / d_adj.var(ddof=1), rel=1e-9),
    }
    assert sc["diff"] == pytest.approx(d_adj.mean(), rel=1e-12)
    assert sc["diff_ci"] == pytest.approx([d_adj.mean() - half, d_adj.mean() + half], rel=1e-9)
    assert sc["p_value"] == pytest.approx(t.pvalue, rel=1e-6, abs=1e-300)
    assert r.score_plain["diff"] == pytest.approx(d_plain.mean(), rel=1e-12)
    # the adjustment pays: greedy and timeout play different games on the same dice, so most of
    # the plain difference's variance is luck
    assert sc["variance_reduction"] > 3
    # the SPRT reads the adjusted difference
    llr = r.sprt["tests"][0]["llr"]
    assert llr == pytest.approx(n * 1.0 * (2 * d_adj.mean() - 1.0) / (2 * d_adj.var(ddof=1)), rel=1e-9)

    def edge(rows):
        lk = rows["luck"].to_numpy().reshape(-1, 2)
        return lk[:, 0] - lk[:, 1]

    y = (cs["outcome"].to_numpy() == 2).astype(float) - (bs["outcome"].to_numpy() == 2).astype(float)
    x = edge(c) - edge(b)
    design = np.column_stack([np.ones(n), x])
    coef, rss, *_ = np.linalg.lstsq(design, y, rcond=None)
    s2 = float(rss[0]) / (n - 2)
    se = math.sqrt(s2 * np.linalg.inv(design.T @ design)[0, 0])
    w = r.win_rate
    assert w["estimator"] == "control variate luck difference"
    assert w["beta"] == pytest.approx(coef[1], rel=1e-9) and w["beta"] > 0
    assert w["diff"] == pytest.approx(coef[0], rel=1e-9)
    tq = sps.t.ppf(0.975, n - 2)
    assert w["diff_ci"] == pytest.approx([coef[0] - tq * se, coef[0] + tq * se], rel=1e-9)
    assert w["plain_diff"] == pytest.approx(y.mean(), abs=1e-15)
    assert w["variance_reduction"] == pytest.approx(y.var(ddof=1) / s2, rel=1e-9) and w["variance_reduction"] > 1.2

    assert main(["compare", str(bdir), str(cdir)]) == 1
    out = capsys.readouterr().out
    assert f"score (luck-adjusted: total − luck, variance / {sc['variance_reduction']:.3g})" in out
    assert "score (plain)  " in out
    assert f"(control variate luck difference, beta = {w['beta']:+.4f}, variance / " in out


def test_luck_on_one_side_only_falls_back_to_plain(bot_change, mini_rules, tmp_path, capsys):
    (bdir, _), (cdir, _) = bot_change
    plain_dir, _ = _played(tmp_path / "plain", mini_rules, ["greedy", "greedy"], 800, 5, analyse=False)
    r = compare_runs(bdir, plain_dir)
    assert not r.luck["adjusted"] and "estimator" not in r.score
    assert r.score == r.score_plain
    assert any(n.startswith("plain comparison (no luck adjustment): only BASE carries luck") for n in r.notes)
    assert "estimator" not in r.win_rate
    # and the same rows give the same plain figures as the analysed candidate's plain line
    assert r.score["diff"] == pytest.approx(compare_runs(bdir, cdir).score_plain["diff"], rel=1e-12)
    # --no-analyse: plain even when both runs carry luck
    assert main(["compare", str(bdir), str(cdir), "--no-analyse", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert not d["luck"]["adjusted"] and "plain comparison (--no-analyse)" in " ".join(d["notes"])


def test_compare_no_analyse_plays_plain_and_saved_rolls_fall_back(mini_rules, tmp_path, capsys):
    base = _config(tmp_path / "base.toml", {})
    cand = _config(tmp_path / "cand.toml", {"full_house_scoring": "flat"})
    out = tmp_path / "plain"
    assert (
        main(
            ["compare", str(base), str(cand), "--games", "200", "--out", str(out), "--quiet", "--json", "--no-analyse"]
        )
        == 1
    )
    d = json.loads(capsys.readouterr().out)
    assert not d["luck"]["adjusted"]
    assert json.loads((out / "candidate" / "manifest.json").read_text())["config"].get("analyse") in (None, False)
    # banked rolls (saved_rolls): the solver's table cannot value them, so no analysis, a plain
    # comparison and a note instead of a failure
    for name in ("mb", "mc"):
        (tmp_path / f"{name}.toml").write_text(
            f'rules = "{mini_rules}"\nseats = ["timeout", "timeout"]\n'
            "games = 200\nseed = 3\nchunk_size = 100\nworkers = 1\n"
            "[settings]\nsaved_rolls = true\n"
        )
    code = main(
        ["compare", str(tmp_path / "mb.toml"), str(tmp_path / "mc.toml"), "--out", str(tmp_path / "saved"), "--quiet"]
    )
    text = capsys.readouterr().out
    # the same config twice: identical play, but 200 games cannot bound a change none showed to ±0.5
    assert code == 2 and "the totals differ in no game" in text
    assert "note: rule set mini has saved_rolls" in text and "plain comparison (no luck adjustment)" in text
    assert "luck-adjusted" not in text.split("note:")[0]


# ---------------------------------------------------------------------------------------------
# the pictures: compare.png and compare_quality.png (issue 18, item 14)

PNG = b"\x89PNG\r\n\x1a\n"


def _intervals(ax, scale: float = 1.0):
    """The (value, low, high) drawn on ``ax``, and the ones to compare them with, as arrays."""
    import numpy as np

    return np.array([(x, lo, hi) for x, _, lo, hi in errorbars(ax)]) / scale


def test_compare_out_writes_the_pictures_and_no_plots_none(fh_pair, tmp_path, capsys):
    (bdir, _), (cdir, _) = fh_pair
    out = tmp_path / "pics"
    assert main(["compare", str(bdir), str(cdir), "--mu1", "4", "--out", str(out)]) == 1
    assert capsys.readouterr().out.rstrip().endswith(f"wrote compare.png, compare_quality.png to {out}")
    assert sorted(p.name for p in out.iterdir()) == ["compare.png", "compare_quality.png"]
    assert all(p.read_bytes()[:8] == PNG for p in out.iterdir())
    none = tmp_path / "none"
    assert main(["compare", str(bdir), str(cdir), "--mu1", "4", "--out", str(none), "--no-plots"]) == 1
    assert "wrote" not in capsys.readouterr().out and not list(none.glob("*.png"))
    # a directory that cannot be written: one line, nothing on stdout
    assert main(["compare", str(bdir), str(cdir), "--out", "/proc/yatzy-harness-x"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("yatzy-harness: error: cannot write the pictures to /proc/")
    assert len(captured.err.strip().splitlines()) == 1


def test_compare_picture_draws_the_score_distributions_and_every_difference(fh_pair):
    """compare.png: both runs' score distributions (from the result's counts per point, which are
    the rows' own) and each paired difference the result gives an interval for, at its value with
    its interval; solid where the interval excludes 0."""
    import numpy as np

    from harness.reports.plot import plot_comparison

    (bdir, brows), (cdir, crows) = fh_pair
    r = compare_runs(bdir, cdir, CompareSettings(mu1=4))
    (h,) = r.score_histograms
    assert (h["base"], h["candidate"], h["rows"]) == ("timeout", "timeout", 800)
    assert h["min"] == min(brows["total"].min(), crows["total"].min())
    for side, rows in (("base", brows), ("candidate", crows)):
        n = len(h[f"{side}_counts"])
        assert h[f"{side}_counts"] == np.bincount(rows["total"], minlength=h["min"] + n)[h["min"] :].tolist()
        assert h[f"{side}_mean"] == pytest.approx(rows["total"].mean(), rel=1e-12)
    fig = plot_comparison(r)
    hist_ax, points_ax, rates_ax = fig.axes
    for patch, side in zip(hist_ax.patches, ("base", "candidate"), strict=True):
        share, edges, _ = patch.get_data()
        scores = h["min"] + np.arange(len(h[f"{side}_counts"]))
        counts = np.array(h[f"{side}_counts"])
        per_bin = [counts[(scores >= a) & (scores < b)].sum() for a, b in zip(edges, edges[1:])]
        assert share == pytest.approx(100 * np.array(per_bin) / 800) and sum(per_bin) == 800
    assert [t.get_text() for t in hist_ax.get_legend().get_texts()] == [
        f"BASE (mean {h['base_mean']:.2f})",
        f"CANDIDATE (mean {h['candidate_mean']:.2f})",
    ]
    points = [("score", r.score)] + [(f"box {b['box'].replace('_', ' ')}", b) for b in r.boxes]
    rates = [
        ("upper bonus rate", r.bonus_rate),
        ("yatzy rate", r.yatzy_rate),
        ("win rate", r.win_rate),
        ("draw rate", r.draw_rate),
    ]
    for ax, rows, scale in ((points_ax, points, 1.0), (rates_ax, rates, 100.0)):
        assert [t.get_text() for t in ax.get_yticklabels()] == [label for label, _ in rows]
        assert _intervals(ax, scale) == pytest.approx(
            np.array([(x["diff"], *x["diff_ci"]) for _, x in rows]), abs=1e-12
        )
    solid = {
        t.get_text(): c.lines[0].get_markerfacecolor()
        for t, c in zip(points_ax.get_yticklabels(), points_ax.containers)
    }
    assert solid["box full house"] == solid["score"] == "black" and solid["box ones"] == "white"
    assert layout_problems(fig) == []


def test_compare_pictures_of_a_luck_adjusted_bot_change(bot_change):
    """A bot change (timeout -> greedy in seat 0) compared luck-adjusted: the distributions of the
    changed seat, the adjusted and the plain score difference; compare_quality.png draws each
    metric both runs have, BASE's and CANDIDATE's value with its interval, a change significant
    family-wise marked with *."""
    import numpy as np

    from harness.reports.plot import plot_compare_quality, plot_comparison
    from harness.reports.quality import SHARES

    (bdir, b), (cdir, c) = bot_change
    r = compare_runs(bdir, cdir)
    (h,) = r.score_histograms
    assert (h["base"], h["candidate"], h["rows"]) == ("timeout", "greedy", 800)
    assert h["base_mean"] == pytest.approx(b.loc[b["seat"] == 0, "total"].mean())
    fig = plot_comparison(r)
    assert fig.axes[0].get_title(loc="left") == "timeout -> greedy: 800 seat-games a run"
    points_ax = fig.axes[1]
    assert [t.get_text() for t in points_ax.get_yticklabels()][:2] == ["score, luck-adjusted", "score, plain"]
    assert _intervals(points_ax)[:2] == pytest.approx(
        np.array([(x["diff"], *x["diff_ci"]) for x in (r.score, r.score_plain)]), abs=1e-12
    )
    assert layout_problems(fig) == []

    q = plot_compare_quality(r)
    rows = r.quality["metrics"]
    panels = [ax for ax in q.axes if ax.get_visible()]
    metrics = list(dict.fromkeys(x["metric"] for x in rows))
    assert [ax.get_title(loc="left").split(":")[0] for ax in panels] == metrics
    assert "skill_share" in metrics and any(x["significant"] for x in rows)
    for ax, m in zip(panels, metrics):
        mine = [x for x in rows if x["metric"] == m]
        want = [(x["base"], *x["base_ci"]) for x in mine] + [(x["candidate"], *x["candidate_ci"]) for x in mine]
        assert _intervals(ax, 100.0 if m in SHARES else 1.0) == pytest.approx(np.array(want), abs=1e-12)
        labels = [t.get_text().split("\n")[0] for t in ax.get_yticklabels()]
        assert labels == [
            ("the run" if x["scope"] == "run" else x["scope"]) + (" *" if x["significant"] else "") for x in mine
        ]
    assert [t.get_text() for t in q.legends[0].get_texts()] == [f"BASE {bdir}", f"CANDIDATE {cdir}"]
    assert layout_problems(q) == []
