"""Tests for harness.players.calibrate: the bracketing search on known response curves, the uncertainty it
reports, usage errors, and the ``calibrate`` command end to end with solver bots on a small rule set."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from harness.players.calibrate import Point, Problem, calibrate, spec_with
from harness.cli import main
from harness.util.errors import UserError

try:  # tests/ as a package or as a plain directory on sys.path
    from tests.report_helpers import MINI_RULES
except ModuleNotFoundError:
    from report_helpers import MINI_RULES


@pytest.fixture()
def mini(tmp_path, monkeypatch):
    """A rule-set file solved in about a second, with the solver cache in a temporary directory."""
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "mini.toml"
    path.write_text(MINI_RULES)
    return path


def _problem(**kw) -> Problem:
    base = dict(
        rules="scandinavian",
        settings=(),
        strategy="solver",
        param="temperature",
        lo=0.0,
        hi=20.0,
        target_mean=200.0,
        games=1000,
    )
    return Problem(**(base | kw))


def _curve(f, half: float = 0.5):
    calls = []

    def evaluate(v: float) -> Point:
        calls.append(v)
        y = f(v)
        return Point(v, y, y - half, y + half, 1000, None)

    return evaluate, calls


def test_linear_response_is_solved_by_the_first_secant():
    ev, calls = _curve(lambda v: 250.0 - 5.0 * v)
    cal = calibrate(_problem(), ev)
    assert calls == [0.0, 20.0, 10.0]
    assert cal.value == pytest.approx(10.0) and cal.converged
    # uncertainty: the CI half-width of the response (0.5 points) over the slope (5 points per unit)
    assert cal.slope == pytest.approx(-5.0)
    assert cal.sampling_error == pytest.approx(0.1) and cal.search_error == pytest.approx(0.0)
    assert cal.value_ci == pytest.approx((9.9, 10.1))


@pytest.mark.parametrize(
    "estimator,label",
    [
        ("luck-adjusted mean (total − luck)", "luck-adjusted mean final score (points; total − luck)"),
        ("plain", "mean final score (points)"),
    ],
)
def test_calibration_picture_names_its_response_and_draws_it_over_every_point(estimator, label):
    """calibration.png (issue 37): the y axis names what was measured (the luck-adjusted mean when
    the runs were analysed, which the label called the mean score), and the response's line runs
    over every evaluated value, solid where they are dense, dotted across the far-apart ones (it
    stopped at the last dense one, short of the points beyond)."""
    from harness.players.picture import plot_response

    def evaluate(v: float) -> Point:
        y = 250.0 - 60.0 * math.sqrt(v)
        return Point(v, y, y - 0.5, y + 0.5, 1000, None, estimator=estimator)

    cal = calibrate(_problem(), evaluate)
    xs = sorted(p.value for p in cal.points)
    assert xs[-1] - xs[-2] > 0.1 * (xs[-1] - xs[0])  # the search left far-apart values: a sparse stretch
    ax = plot_response(cal).axes[0]
    assert ax.get_ylabel() == label
    drawn = [
        ln
        for ln in ax.get_lines()
        if ln.get_linestyle() not in ("None", "") and len(set(np.atleast_1d(ln.get_ydata()))) > 1
    ]  # not the markers, not the target line
    assert min(min(ln.get_xdata()) for ln in drawn) == xs[0] and max(max(ln.get_xdata()) for ln in drawn) == xs[-1]
    assert {ln.get_linestyle() for ln in drawn} == {"-", ":"}


def test_curved_response_converges_with_illinois():
    # a saturating curve like mean score against temperature; root where 250 - 200(1 - e^{-v/3}) = 120
    f = lambda v: 250.0 - 200.0 * (1.0 - math.exp(-v / 3.0))  # noqa: E731
    root = -3.0 * math.log(1.0 - 130.0 / 200.0)
    ev, calls = _curve(f, half=0.4)
    cal = calibrate(_problem(target_mean=120.0, hi=30.0, tol=0.01), ev)
    assert cal.converged and len(calls) <= 10
    assert abs(f(cal.value) - 120.0) < 0.05
    assert cal.value_ci[0] < root < cal.value_ci[1]
    assert cal.value_ci[1] - cal.value_ci[0] < 0.1
    assert cal.bracket[0] <= root <= cal.bracket[1]


def test_unbracketed_target_is_a_usage_error():
    ev, _ = _curve(lambda v: 250.0 - 5.0 * v)
    with pytest.raises(UserError, match="target 300 is not bracketed.*at --lo 0 is 250.*widen --lo/--hi"):
        calibrate(_problem(target_mean=300.0), ev)


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(param="speed"), "strategy 'solver' has no parameter 'speed'"),
        (dict(target_mean=None), "exactly one of --target-mean"),
        (dict(target_mean=None, target_win_rate=0.4), "--target-win-rate needs --against"),
        (dict(target_mean=None, target_win_rate=1.5, against="solver"), "must be in \\(0, 1\\)"),
        (dict(lo=5.0, hi=1.0), "need --lo < --hi"),
        (dict(param="blunder", hi=2.0), "--hi 2.0 is outside solver:blunder's range 0.0..1.0"),
    ],
)
def test_problem_errors(kw, message):
    ev, _ = _curve(lambda v: v)
    with pytest.raises(UserError, match=message):
        calibrate(_problem(**kw), ev)


def test_spec_with_keeps_other_parameters():
    assert spec_with("solver:blunder=0.1", "temperature", 2.5) == "solver:blunder=0.1,temperature=2.5"
    assert spec_with("solver", "temperature", 1 / 3) == "solver:temperature=0.333333"


def test_calibrate_mean_end_to_end(mini, tmp_path, capsys):
    out = tmp_path / "cal"
    code = main(
        [
            "calibrate",
            "--rules",
            str(mini),
            "--strategy",
            "solver",
            "--param",
            "temperature",
            "--target-mean",
            "80",
            "--lo",
            "0",
            "--hi",
            "20",
            "--games",
            "600",
            "--seed",
            "3",
            "--workers",
            "1",
            "--tol",
            "1.0",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("value", "value_ci", "spec", "bracket", "evaluations", "slope", "sampling_error", "target"):
        assert key in d
    assert d["target"] == {"kind": "mean", "value": 80.0, "against": None}
    assert d["estimator"] == "luck-adjusted mean (total − luck)"
    assert all(e["estimator"] == d["estimator"] for e in d["evaluations"])
    # the optimal bot (temperature 0) scores V(start) luck-adjusted in every game: zero variance
    # (an infinite reduction, null in JSON) and the exact expected score
    from harness.game.rules import load_rules
    from harness.exact.solver import solve

    t0 = d["evaluations"][0]
    assert t0["variance_reduction"] is None
    assert t0["response"] == pytest.approx(solve(load_rules(str(mini))).expected_score, abs=1e-9)
    # near the target (temperature ~3) the adjustment pays; at temperature 20 (near-random play) the
    # regret's variance dominates and total - luck is noisier than total (factor ~0.55 here)
    near = min(d["evaluations"], key=lambda e: abs(e["response"] - 80))
    assert near["variance_reduction"] > 4
    assert d["value_ci"][0] < d["value"] < d["value_ci"][1]
    ev = d["evaluations"]
    assert [e["value"] for e in ev[:2]] == [0.0, 20.0]
    assert ev[0]["response"] > 110 > 50 > ev[1]["response"]  # optimal play ~124, temperature 20 ~41
    best = min(ev, key=lambda e: abs(e["response"] - 80))
    assert abs(best["response"] - 80) <= 1.0 or not d["converged"]
    # every evaluation played the same games: same seed, same number of games
    assert all(e["games"] == 600 for e in ev)
    assert all(json.loads((Path(e["run_dir"]) / "manifest.json").read_text())["seed"] == 3 for e in ev)
    assert (out / "calibration.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "calibration.json").read_text())["value"] == d["value"]


def test_calibrate_win_rate_against_the_optimal_bot(mini, tmp_path, capsys):
    out = tmp_path / "cal"
    code = main(
        [
            "calibrate",
            "--rules",
            str(mini),
            "--strategy",
            "solver",
            "--param",
            "temperature",
            "--target-win-rate",
            "0.3",
            "--against",
            "solver",
            "--lo",
            "0",
            "--hi",
            "10",
            "--games",
            "300",
            "--workers",
            "1",
            "--max-evals",
            "6",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "temperature = " in text and "-> solver:temperature=" in text
    assert "response: score rate, control variate luck difference (regression estimator over game pairs)" in text
    assert ", beta = +" in text
    d = json.loads((out / "calibration.json").read_text())
    ev = d["evaluations"]
    # at temperature 0 the bot is the reference itself: exactly 1/2 without playing
    assert {k: ev[0][k] for k in ("value", "response", "ci", "games", "run_dir")} == {
        "value": 0.0,
        "response": 0.5,
        "ci": [0.5, 0.5],
        "games": 0,
        "run_dir": None,
    }
    assert ev[1]["response"] < 0.3 and 0 < d["value"] < 10
    assert len(ev) <= 6


def test_unknown_parameter_is_named_before_the_bracket(capsys):
    # without --lo/--hi the command used to ask for a bracket instead of naming the bad parameter
    assert main(["calibrate", "--strategy", "solver", "--param", "nosuch", "--target-mean", "200"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "yatzy-harness: error: strategy 'solver' has no parameter 'nosuch' "
        "(parameters: temperature, blunder, target, table)"
    )


def test_slope_is_not_taken_from_a_bracket_narrower_than_the_noise():
    """A noisy response (sd 1 point) around a smooth curve: the search ends in a bracket so narrow
    that its two responses differ by noise, whose secant slope can be off by 10x (seen with
    1,000-game evaluations). The slope must come from points that differ by far more than the noise."""
    true_slope = -35.0

    def f(v: float) -> float:
        noise = np.random.default_rng(int(round(v * 1e6))).normal(0.0, 1.0)
        return 250.0 + true_slope * v + 2.0 * v * v + noise

    ev, calls = _curve(f, half=1.96)
    cal = calibrate(_problem(lo=0.0, hi=5.0, tol=0.01, max_evals=12), ev)
    a, b = cal.bracket
    fa, fb = f(a), f(b)
    final_secant = (fb - fa) / (b - a)
    root = (35 - math.sqrt(35**2 - 4 * 2 * 50)) / 4  # 2v^2 - 35v + 50 = 0
    local = true_slope + 4.0 * root
    assert abs(final_secant - local) > 0.5 * abs(local)  # this case does make the old secant wrong
    assert cal.slope == pytest.approx(local, rel=0.35)
    assert cal.value_ci[0] <= root <= cal.value_ci[1]


def _rows(run_dir: str):
    import pandas as pd

    files = sorted((Path(run_dir) / "chunks").glob("*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True).sort_values(["lineup", "game", "seat"])


def test_evaluations_are_luck_adjusted_unless_no_analyse(mini, tmp_path):
    """The same games measured three ways: the plain mean (--no-analyse), the luck-adjusted mean
    (total - luck over the same rows) and, against the optimal bot, the score rate with the luck
    difference as control variate (the least-squares intercept over game pairs)."""
    import dataclasses

    from harness.players.calibrate import ADJUSTED_MEAN, CONTROLLED_RATE, PLAIN
    from harness.players.responses import RunnerEvaluator

    p = Problem(
        rules=str(mini),
        settings=(),
        strategy="solver",
        param="temperature",
        lo=0.0,
        hi=20.0,
        target_mean=80.0,
        games=400,
        seed=3,
        workers=1,
    )
    adj = RunnerEvaluator(p, tmp_path / "a")(2.0)
    plain = RunnerEvaluator(dataclasses.replace(p, analyse=False), tmp_path / "p")(2.0)
    assert (adj.estimator, plain.estimator) == (ADJUSTED_MEAN, PLAIN)
    r = _rows(adj.run_dir)
    t, a = r["total"].to_numpy(float), (r["total"] - r["luck"]).to_numpy()
    assert plain.f == pytest.approx(t.mean(), rel=1e-12)  # the analysis does not change the games
    assert adj.f == pytest.approx(a.mean(), rel=1e-12)
    assert adj.variance_reduction == pytest.approx(t.var(ddof=1) / a.var(ddof=1), rel=1e-9)
    # the interval shrinks by the square root of that factor
    assert (plain.hi - plain.lo) / (adj.hi - adj.lo) == pytest.approx(math.sqrt(adj.variance_reduction), rel=1e-9)
    assert adj.variance_reduction > 4

    pw = dataclasses.replace(p, target_mean=None, target_win_rate=0.3, against="solver", games=300)
    w = RunnerEvaluator(pw, tmp_path / "w")(2.0)
    assert w.estimator == CONTROLLED_RATE and w.beta > 0 and w.variance_reduction > 1
    r = _rows(w.run_dir)
    y, x = np.zeros(300), np.zeros(300)
    for li in (0, 1):  # lineups (bot, ref) and (ref, bot): the bot's seat is li
        part = r[r["lineup"] == li]
        oc, lk = part["outcome"].to_numpy().reshape(-1, 2), part["luck"].to_numpy().reshape(-1, 2)
        y += oc[:, li] / 2 / 2
        x += (lk[:, li] - lk[:, 1 - li]) / 2
    design = np.column_stack([np.ones(300), x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    assert w.f == pytest.approx(coef[0], rel=1e-10) and w.beta == pytest.approx(coef[1], rel=1e-10)
    assert w.lo < w.f < w.hi


# ---------------------------------------------------------------------------------------------
# difficulty levels (calibrate --levels)


def _levels_file(tmp_path: Path, rules: Path, body: str = "") -> Path:
    path = tmp_path / "levels.toml"
    path.write_text(
        f'rules = "{rules}"\nstrategy = "solver"\nparam = "temperature"\nlo = 0.0\nhi = 20.0\n'
        f"games = 300\nseed = 3\n"
        + (body or '[[level]]\nname = "weak"\ntarget_win_rate = 0.3\n\n[[level]]\nname = "fair"\ntarget_mean = 120\n')
    )
    return path


def test_levels_are_tuned_checked_and_reproducible(mini, tmp_path, capsys):
    """Each level's spec, its interval and a check on other dice; the same seed gives the same file."""
    levels = _levels_file(tmp_path, mini)
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert (
            main(
                [
                    "calibrate",
                    "--levels",
                    str(levels),
                    "--against",
                    "solver:temperature=1",
                    "--out",
                    str(out),
                    "--workers",
                    "1",
                ]
            )
            == 0
        )
        outs.append(out)
    text = capsys.readouterr().out
    assert "weak" in text and "fair" in text and "levels.json" in text
    # a line per evaluation while it plays (the same value may serve two levels: counted once a level)
    d0 = json.loads((outs[0] / "levels.json").read_text())
    evals = [ln for ln in text.splitlines() if ln.startswith("    temperature=") and "response" in ln]
    assert len(evals) == 2 * sum(lv["search"]["evaluations"] for lv in d0["levels"]) > 2
    a, b = ((o / "levels.json").read_bytes() for o in outs)
    assert a == b
    d = json.loads(a)
    assert (outs[0] / "levels.png").stat().st_size > 10_000
    weak, fair = d["levels"]
    assert weak["spec"].startswith("solver:temperature=") and weak["target"]["against"] == "solver:temperature=1"
    assert weak["value"] > 1.0 and fair["value"] > 0  # weaker than the reference to win only 30 %
    for lv in (weak, fair):
        lo, hi = lv["value_ci"]
        assert lo <= lv["value"] <= hi
        ck = lv["check"]
        assert ck["seed"] == 4 and ck["games"] == 300
        # the check (other dice) measures the target within a few of its own intervals
        assert abs(ck["response"] - lv["target"]["value"]) < 2.5 * (ck["ci"][1] - ck["ci"][0])


@pytest.mark.parametrize(
    "body,extra,message",
    [
        ('[[level]]\nname = "x"\n', [], "needs exactly one of target_win_rate or target_mean"),
        ('[[level]]\nname = "x"\ntarget_win_rate = 0.3\n', [], "give --against REF"),
        ('[[level]]\nname = "x"\ntarget_mean = 100\ncolour = 1\n', [], "unknown key 'colour'"),
        ('[[level]]\nname = "x"\ntarget_mean = 100\n', ["--target-mean", "100"], "drop --target-mean"),
        (
            '[[level]]\nname = "x"\ntarget_win_rate = 0.3\n',
            ["--against", "nofile.json"],
            "cannot read the fitted model",
        ),
    ],
)
def test_levels_errors_are_one_line(mini, tmp_path, capsys, body, extra, message):
    levels = _levels_file(tmp_path, mini, body)
    assert main(["calibrate", "--levels", str(levels), "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_far_bracket_end_does_not_leave_the_levels_picture_empty():
    """The exact ladder's mean panel had its points between temperature 0 and 1.2 and one at 10: that
    axis runs linearly to 1.2 and logarithmically beyond, and says so; the win-rate panel, spread
    over its range, stays linear."""
    import matplotlib

    matplotlib.use("Agg")
    from harness.players.picture import plot_levels

    def pts(xs, ys):
        return [{"value": x, "response": y, "ci": [y, y]} for x, y in zip(xs, ys)]

    d = {
        "curves": {
            "win_rate": pts([0, 0.7, 1.6, 2, 3, 3.5, 7, 10], [0.66, 0.56, 0.4, 0.36, 0.26, 0.23, 0.11, 0.08]),
            "mean": pts([0, 0.42, 0.55, 1.18, 10], [150, 142.8, 138.7, 122.3, 63.9]),
        },
        "levels": [],
        "exact": True,
        "param": "temperature",
        "strategy": "solver",
        "against": "solver:temperature=1",
        "rules": "forced",
    }
    fig = plot_levels(d)
    win, mean = fig.axes
    assert win.get_xscale() == "linear" and "logarithmic" not in win.get_xlabel()
    assert mean.get_xscale() == "symlog" and "(axis linear to 1.18, logarithmic beyond)" in mean.get_xlabel()
