"""Exact answers where compare, calibrate and report need them (issue 19, item 3): ``compare --exact``
against two evaluations, its flags on run directories; ``calibrate --exact`` (plain and levels) to its
tolerance; report's exact column, its alarm and its absence with a reason. Tiny rule sets only."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.cli import main
from harness.util.errors import UserError
from harness.exact.evaluate import evaluate, seats, versus
from harness.players.levels import calibrate_levels, check_levels, load_levels
from harness.reports.report import summary_text
from harness.game.rules import load_rules
from harness.stats import IntHistogram
from harness.reports.summary import summarize
from tests.report_helpers import write_run
from tests.test_solver import TINY


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny rule files, with the solver cache in a directory of the module's own."""
    root = tmp_path_factory.mktemp("tiny")
    mp = pytest.MonkeyPatch()
    mp.setenv("YATZY_HARNESS_CACHE", str(root / "cache"))
    for name, text in TINY.items():
        (root / f"{name}.toml").write_text(text)
    yield root
    mp.undo()


def _shift_totals(run_dir: Path, label: str, by: int) -> None:
    """Make a run's sampled scores wrong: ``by`` points added to every total of ``label``'s rows."""
    for f in sorted((run_dir / "chunks").glob("*.parquet")):
        t = pq.read_table(f).to_pandas()
        rows = t["strategy"].astype(str) == label
        t.loc[rows, "total"] = (t.loc[rows, "total"] + by).astype(t["total"].dtype)
        pq.write_table(pa.Table.from_pandas(t, preserve_index=False), f)


# ---------------------------------------------------------------------------------------------
# compare --exact


def test_compare_exact_is_the_difference_of_two_evaluations(tiny, capsys):
    path = str(tiny / "tiny_bonus.toml")
    code = main(
        [
            "compare",
            "--exact",
            path,
            path,
            "--entrants",
            "greedy,solver",
            "--candidate-set",
            "upper_bonus_threshold=5",
            "--json",
        ]
    )
    d = json.loads(capsys.readouterr().out)
    rb, rc = load_rules(path), load_rules(path, ["upper_bonus_threshold=5"])
    assert d["settings_changed"] == {"upper_bonus_threshold": [6, 5]}
    ev = {(r, b): evaluate(r, b) for r in (rb, rc) for b in ("greedy", "solver")}
    for k, (blk, bot) in enumerate(zip(d["bots"], ("greedy", "solver"))):
        eb, ec = ev[rb, bot], ev[rc, bot]
        assert (blk["base"], blk["candidate"]) == (bot, bot)
        # to the last digit: the JSON floats are the evaluations' own
        assert blk["score"] == {"base": eb.mean, "candidate": ec.mean, "diff": ec.mean - eb.mean}
        assert blk["std"] == {"base": eb.std, "candidate": ec.std, "diff": ec.std - eb.std}
        assert blk["bonus_rate"]["diff"] == ec.p_bonus - eb.p_bonus
        assert blk["percentiles"]["base"] == eb.percentiles
        assert blk["percentiles"]["diff"] == {q: ec.percentiles[q] - eb.percentiles[q] for q in eb.percentiles}
        assert [b["box"] for b in blk["boxes"]] == list(eb.box_names)
        assert blk["boxes"][0]["diff"] == float(ec.box_mean[0]) - float(eb.box_mean[0])
        # the table is (greedy, solver): each seat's exact win and draw at it, on each side
        wb = seats([ev[rb, "greedy"], ev[rb, "solver"]])[k]
        wc = seats([ev[rc, "greedy"], ev[rc, "solver"]])[k]
        assert blk["win_rate"] == {"base": wb[0], "candidate": wc[0], "diff": wc[0] - wb[0]}
        assert blk["draw_rate"]["base"] == wb[1]
        assert blk["sampled"] is None
    assert d["bots"][0]["win_rate"]["base"] == pytest.approx(versus(ev[rb, "greedy"], ev[rb, "solver"])[0], abs=1e-15)
    diffs = [abs(b["score"]["diff"]) for b in d["bots"]]
    assert code == d["exit_code"] == (1 if max(diffs) > 0.5 else 0)
    assert d["verdict"] == ("change" if code else "no change")


def test_compare_exact_text_has_the_layout_of_compare(tiny, capsys):
    path = str(tiny / "tiny_bonus.toml")
    main(["compare", "--exact", path, path, "--entrants", "greedy", "--candidate-entrants", "solver"])
    out = capsys.readouterr().out
    g, s = evaluate(load_rules(path), "greedy"), evaluate(load_rules(path), "solver")
    assert "== greedy -> solver (1 seat per game)" in out
    assert f"score  {g.mean:.6f} -> {s.mean:.6f}   diff {s.mean - g.mean:+.6f} (exact)" in out
    assert "upper bonus rate" in out and "per box (mean points, candidate - base, exact):" in out
    assert "win rate" not in out  # one seat per table: no outcome


def test_compare_exact_refusals_are_one_line(tiny, capsys):
    path = str(tiny / "tiny_bonus.toml")
    cases = [
        (["--entrants", "winprob"], "not solitaire"),
        (["--entrants", "greedy", "--set", "saved_rolls=true"], "saved rolls"),
        ([], "is a rule set: name the bots"),
        (["--entrants", "greedy", "--candidate-entrants", "greedy,solver"], "paired seat by seat"),
        (["--entrants", "greedy", "--games", "100"], "--exact plays no games"),
    ]
    for extra, message in cases:
        assert main(["compare", "--exact", path, path, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err, (extra, err)
    assert main(["compare", path, path, "--entrants", "greedy"]) == 2
    assert "options of --exact" in capsys.readouterr().err


@pytest.fixture(scope="module")
def rule_change(tiny, tmp_path_factory):
    """Solver bots at threshold 6 (BASE) and 5 (CANDIDATE) on the same dice, as run directories."""
    root = tmp_path_factory.mktemp("change")
    path = str(tiny / "tiny_bonus.toml")
    base, _ = write_run(root / "base", path, [["solver", "solver"]], 3000, 7, 1500)
    cand, _ = write_run(
        root / "cand", path, [["solver", "solver"]], 3000, 7, 1500, settings=["upper_bonus_threshold=5"]
    )
    return base, cand


def test_compare_exact_puts_the_exact_values_beside_a_sampled_comparison(rule_change, capsys, tmp_path):
    base, cand = rule_change
    main(["compare", "--exact", str(base), str(cand), "--confidence", "0.999", "--json"])
    d = json.loads(capsys.readouterr().out)
    (blk,) = d["bots"]
    smp = blk["sampled"]
    assert smp["games"] == 3000 and smp["rows_per_game"] == 2
    assert smp["score"]["exact"] == blk["score"] and smp["bonus_rate"]["exact"] == blk["bonus_rate"]
    assert {b["box"]: b["exact"]["diff"] for b in smp["boxes"]} == {b["box"]: b["diff"] for b in blk["boxes"]}
    # every 99.9 % interval of this honest pair of runs holds its exact value
    assert d["outside"] == [] and all(not x["outside"] for x in [smp["score"], *smp["boxes"]])
    main(["compare", "--exact", str(base), str(cand), "--confidence", "0.999"])
    text = capsys.readouterr().out
    assert "sampled (3,000 paired games), the exact value beside each figure:" in text
    assert f"| exact {blk['score']['base']:.6f} -> {blk['score']['candidate']:.6f}" in text
    assert "every sampled interval holds its exact value" in text
    # a wrong sampled figure (CANDIDATE's totals 2 points too high) is flagged, and only the score
    wrong = tmp_path / "wrong"
    shutil.copytree(cand, wrong)
    _shift_totals(wrong, "solver", 2)
    main(["compare", "--exact", str(base), str(wrong), "--confidence", "0.999", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["outside"] == ["solver: score candidate", "solver: score diff"]
    main(["compare", "--exact", str(base), str(wrong), "--confidence", "0.999"])
    assert "OUTSIDE: candidate, diff" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# calibrate --exact


def _calibrated(argv, capsys, tmp_path) -> dict:
    assert main(["calibrate", "--exact", *argv, "--out", str(tmp_path / "cal"), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_calibrate_exact_hits_the_target_to_the_stated_tolerance(tiny, capsys, tmp_path):
    path = str(tiny / "tiny_bonus.toml")
    rules = load_rules(path)
    d = _calibrated(
        [
            "--rules",
            path,
            "--strategy",
            "solver",
            "--param",
            "temperature",
            "--target-mean",
            "31",
            "--lo",
            "0",
            "--hi",
            "10",
        ],
        capsys,
        tmp_path,
    )
    assert d["exact"] and d["converged"] and d["games"] is None and d["xtol"] == 1e-6
    lo, hi = d["value_ci"]
    assert lo <= d["value"] <= hi and hi - lo <= 1e-6
    # the bracket holds the root: an independent evaluation of its ends straddles the target
    f = {v: evaluate(rules, f"solver:temperature={v!r}").mean - 31 for v in (lo, hi)}
    assert f[lo] * f[hi] <= 0
    at = evaluate(rules, d["spec"]).mean
    assert at == d["response"] and abs(at - 31) <= abs(d["slope"]) * 1e-6 * 1.01
    assert all(e["ci"] == [e["response"], e["response"]] for e in d["evaluations"])
    # a looser tolerance stops sooner, its bracket within it
    loose = _calibrated(
        [
            "--rules",
            path,
            "--strategy",
            "solver",
            "--param",
            "temperature",
            "--target-mean",
            "31",
            "--lo",
            "0",
            "--hi",
            "10",
            "--xtol",
            "0.01",
        ],
        capsys,
        tmp_path / "loose",
    )
    assert loose["value_ci"][1] - loose["value_ci"][0] <= 0.01 < hi - lo + 0.01
    assert len(loose["evaluations"]) < len(d["evaluations"])


def test_calibrate_exact_win_rate_finds_the_reference_itself(tiny, capsys, tmp_path):
    """Against solver:temperature=1 the exact score rate is 1/2 at temperature 1 and nowhere else."""
    path = str(tiny / "tiny_joker.toml")
    d = _calibrated(
        [
            "--rules",
            path,
            "--strategy",
            "solver",
            "--param",
            "temperature",
            "--target-win-rate",
            "0.5",
            "--against",
            "solver:temperature=1",
            "--lo",
            "0",
            "--hi",
            "5",
        ],
        capsys,
        tmp_path,
    )
    assert abs(d["value"] - 1.0) <= 1e-6 and d["value_ci"][0] <= 1.0 <= d["value_ci"][1]
    assert d["response"] == pytest.approx(0.5, abs=1e-6)
    main(
        [
            "calibrate",
            "--exact",
            "--rules",
            path,
            "--strategy",
            "solver",
            "--param",
            "temperature",
            "--target-mean",
            "40",
            "--lo",
            "0",
            "--hi",
            "5",
            "--out",
            str(tmp_path / "text"),
        ]
    )
    out = capsys.readouterr().out
    assert "response: exact" in out and "(exact)" in out and "(within 1e-06)" in out


def test_calibrate_exact_refusals(tiny, capsys, tmp_path):
    path = str(tiny / "tiny_bonus.toml")
    base = ["calibrate", "--exact", "--rules", path, "--strategy", "solver", "--param", "temperature", "--lo", "0"]
    for extra, message in (
        (
            ["--hi", "5", "--target-win-rate", "0.5", "--against", "winprob"],
            "no exact calibration: strategy 'winprob' is not solitaire",
        ),
        (["--hi", "5", "--target-mean", "30", "--set", "saved_rolls=true"], "saved rolls"),
        (["--hi", "5", "--target-mean", "30", "--games", "1000"], "--exact plays no games: drop --games"),
        (["--hi", "10", "--target-mean", "99"], "is not bracketed"),
    ):
        assert main([*base, *extra, "--out", str(tmp_path / str(len(extra)) / message[:5])]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err, (extra, err)


LEVELS = """rules = "{rules}"
strategy = "solver"
param = "temperature"
lo = 0.0
hi = 5.0
against = "solver:temperature=1"
{exact}
[[level]]
name = "weak"
target_win_rate = 0.3

[[level]]
name = "par"
target_win_rate = 0.5

[[level]]
name = "mean"
target_mean = 31
"""


def test_levels_file_round_trips_its_exactness(tiny, tmp_path, capsys):
    rules = str(tiny / "tiny_bonus.toml")
    exact = tmp_path / "exact.toml"
    exact.write_text(LEVELS.format(rules=rules, exact="exact = true"))
    plain = tmp_path / "plain.toml"
    plain.write_text(LEVELS.format(rules=rules, exact=""))
    lv = load_levels(exact)
    assert lv.exact and not load_levels(plain).exact
    d = calibrate_levels(lv, lv.against, tmp_path / "out")
    assert d["exact"] is True and d["games"] is None and d["estimators"]["win_rate"].startswith("exact")
    r = load_rules(rules)
    ref = evaluate(r, "solver:temperature=1")
    for row in d["levels"]:
        assert row["check"] is None and row["converged"]
        lo, hi = row["value_ci"]
        assert hi - lo <= 1e-6
        ev = evaluate(r, row["spec"])
        got = ev.mean if row["target"]["kind"] == "mean" else versus(ev, ref)[0] + versus(ev, ref)[1] / 2
        assert got == pytest.approx(row["exact_response"], abs=1e-12)
        assert abs(row["difference"]) < 1e-4
    assert d["levels"][1]["value"] == pytest.approx(1.0, abs=1e-6)
    # the same through the command: the file's exact = true, or --exact on a plain file; levels.json says so
    for path, flags in ((exact, []), (plain, ["--exact"])):
        out = tmp_path / f"cli-{path.stem}"
        assert main(["calibrate", "--levels", str(path), *flags, "--out", str(out)]) == 0
        text = capsys.readouterr().out
        assert "exact responses (no games)" in text and "exact response" in text
        saved = json.loads((out / "levels.json").read_text())
        assert saved["exact"] is True and [x["value"] for x in saved["levels"]] == [x["value"] for x in d["levels"]]


def test_check_levels_understands_exact_levels(tiny, tmp_path, capsys):
    rules = str(tiny / "tiny_bonus.toml")
    path = tmp_path / "lv.toml"
    path.write_text(LEVELS.format(rules=rules, exact='exact = "yes"'))
    with pytest.raises(UserError, match=r"exact = 'yes' is not true or false"):
        load_levels(path)
    path.write_text(LEVELS.format(rules=rules, exact="exact = true"))
    lv = load_levels(path)
    with pytest.raises(UserError, match=r"^level 'weak': no exact calibration: strategy 'winprob' is not solitaire"):
        check_levels(lv, "winprob")
    check_levels(lv, "greedy")  # a solitaire reference: fine
    path.write_text(LEVELS.format(rules=rules, exact="exact = true\n[settings]\nsaved_rolls = true"))
    with pytest.raises(UserError, match=r"^level 'weak': no exact calibration: rule set .*saved rolls"):
        check_levels(load_levels(path), "greedy")
    path.write_text(LEVELS.format(rules=rules, exact="exact = true"))
    assert main(["calibrate", "--levels", str(path), "--games", "100", "--out", str(tmp_path / "x")]) == 2
    assert "--exact plays no games: drop --games" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# report's exact column


@pytest.fixture(scope="module")
def solitaire_run(tiny, tmp_path_factory):
    """greedy against solver, both seatings, on tiny_bonus (every entrant solitaire)."""
    out, _ = write_run(
        tmp_path_factory.mktemp("rr") / "run",
        str(tiny / "tiny_bonus.toml"),
        [["greedy", "solver"], ["solver", "greedy"]],
        2000,
        3,
        1000,
    )
    return out


def test_report_shows_each_figure_exact_beside_the_sampled_one(solitaire_run, tiny):
    d = summarize(solitaire_run, exact="on").to_dict()
    x = d["exact"]
    rules = load_rules(str(tiny / "tiny_bonus.toml"))
    g, s = evaluate(rules, "greedy"), evaluate(rules, "solver")
    (eg, es) = x["entrants"]
    assert eg["strategy"] == "greedy" and eg["games"] == 2000
    assert eg["mean"]["exact"] == g.mean and eg["mean"]["sampled"] == d["entrants"][0]["mean"]
    assert eg["std"]["exact"] == g.std and es["bonus_rate"]["exact"] == s.p_bonus
    assert {q: v["exact"] for q, v in eg["percentiles"].items()} == g.percentiles
    assert eg["outcomes"]["win"]["exact"] == pytest.approx(versus(g, s)[0], abs=1e-15)
    assert eg["outcomes"]["win"]["sampled"] == d["entrants"][0]["win_rate"]
    (pair,) = x["pairings"]
    assert pair["name"] == "greedy vs solver" and pair["win"]["exact"] == pytest.approx(versus(g, s)[0], abs=1e-15)
    assert pair["win"]["sampled"] == d["pairings"][0]["win_rate"]
    # an honest run: nothing flagged, and the report says so
    assert x["outside"] == []
    text = summary_text(d)
    assert "Exact / sampled" in text and "Pairings, exact / sampled" in text
    assert (
        "Note: exact check: every sampled mean, rate and percentile holds its exact value in its 99.9 % interval"
        in text
    )


def test_report_exact_column_with_two_columns_counts_what_a_run_counts(tiny, tmp_path):
    """A run's bonus and yatzy columns count a seat-game with the bonus (a yatzy) in any column, its
    total the sum of both columns: the exact values are those of the row, and an honest run holds them."""
    run, rows = write_run(
        tmp_path / "two", str(tiny / "tiny_joker.toml"), [["greedy", "timeout"]], 3000, 2, 1500, settings=["columns=2"]
    )
    x = summarize(run, exact="on").to_dict()["exact"]
    one = evaluate(load_rules(str(tiny / "tiny_joker.toml")), "greedy")
    e = x["entrants"][0]
    assert e["mean"]["exact"] == pytest.approx(2 * one.mean, abs=1e-9)
    assert e["bonus_rate"]["exact"] == pytest.approx(1 - (1 - one.p_bonus) ** 2, abs=1e-12)
    assert x["outside"] == []


def test_report_flags_a_sampled_figure_made_wrong(solitaire_run, tmp_path):
    wrong = tmp_path / "wrong"
    shutil.copytree(solitaire_run, wrong)
    _shift_totals(wrong, "greedy", 2)
    d = summarize(wrong, exact="on").to_dict()
    flags = d["exact"]["outside"]
    assert "greedy mean" in flags and any(f.startswith("greedy p") for f in flags)
    # the shift moved scores only: solver's figures, the rates and outcomes still hold
    assert not any(f.startswith(("solver", "greedy vs")) or "bonus" in f or " win" in f for f in flags)
    e = d["exact"]["entrants"][0]
    assert e["mean"]["outside"] and e["mean"]["sampled"] == pytest.approx(e["mean"]["exact"] + 2, abs=1.0)
    text = summary_text(d)
    assert f"EXACT CHECK: {len(flags)} sampled figure(s)" in text and f"{e['mean']['sampled']:.2f} !" in text


def test_report_without_exactness_says_why_in_one_line(tiny, tmp_path, monkeypatch, capsys):
    path = str(tiny / "tiny_bonus.toml")
    saved, _ = write_run(tmp_path / "saved", path, [["greedy"]], 200, 1, 200, settings=["saved_rolls=true"])
    d = summarize(saved, exact="auto").to_dict()
    assert d["exact"]["available"] is False and "saved rolls" in d["exact"]["why"]
    (note,) = [n for n in d["notes"] if "exact" in n]
    assert note.startswith("no exact column: rule set") and "\n" not in note
    assert "Exact / sampled" not in summary_text(d)
    assert "exact" not in summarize(saved).to_dict()  # the library's default: no exact section at all
    # auto on a rule set counted as large, the evaluations not cached: a note instead of the cost
    import harness.reports.summary.exact as SM

    monkeypatch.setattr(SM, "EXACT_AUTO_STATES", 0)
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "empty-cache"))
    run, _ = write_run(tmp_path / "run", path, [["greedy", "timeout"]], 200, 1, 200)
    d = summarize(run, exact="auto").to_dict()
    assert (
        "2 of the 2 exact evaluations are not cached" in d["exact"]["why"] and "`report --exact`" in d["exact"]["why"]
    )
    assert main(["report", str(run), "--exact", "--no-plots", "--json"]) == 0  # computes them (and caches them)
    assert json.loads(capsys.readouterr().out)["exact"]["outside"] == []
    assert summarize(run, exact="auto").to_dict()["exact"]["evaluations"]["greedy"]["cached"]
    assert main(["report", str(run), "--no-exact", "--no-plots", "--json"]) == 0
    assert "exact" not in json.loads(capsys.readouterr().out)


def test_quantile_interval_holds_the_quantile_with_the_stated_confidence():
    """The order-statistic interval of an integer sample covers the population quantile at least
    as stated, discrete ties included (exact binomial bound, here checked by simulation)."""
    rng = np.random.default_rng(5)
    p = np.array([0.1, 0.3, 0.05, 0.25, 0.3])
    cdf = np.cumsum(p)
    for q in (0.05, 0.5, 0.9):
        xi = int(np.searchsorted(cdf, q - 1e-12))
        hits = 0
        for _ in range(400):
            h = IntHistogram.of(rng.choice(5, size=200, p=p))
            lo, hi = h.quantile_interval(q, 0.9)
            hits += lo <= xi <= hi
        assert hits / 400 >= 0.9 - 3 * math.sqrt(0.09 / 400)
    h = IntHistogram.of(np.arange(100))
    assert h.quantile_interval(0.5, 0.95) == (39.0, 60.0)  # ranks 40 and 61 of 100 (binomial 100, 1/2)
    assert h.quantile_interval(0.5, 0.95, n=25)[1] - h.quantile_interval(0.5, 0.95, n=25)[0] > 20
