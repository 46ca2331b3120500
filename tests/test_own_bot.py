"""An external engine's option is a dial like the built-in ones (issue 50).

The proof runs against the built-in dial: ``tests/engines/solver_dial.py`` plays exactly
``solver:temperature=T`` with T its option ``temperature``. Its sampled calibration must equal the
in-process one point for point (same values, responses, intervals and answer: the same seeded
games per value, the luck adjustment from the harness's exact values, the engine kept across
values with each value sent in a newgame), and the exact answer of ``calibrate --exact`` must lie
in its 99.9 % interval on two rule sets (forced, and the tests' mini rule set) for a mean and for a
score rate against ``solver``. Then the options' declaration and checks, ``engine check``'s
option row, integer dials, and values over the referee's limits.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.play.protocol import options as opts
from harness.players.calibrate import Point, Problem, calibrate
from harness.util.errors import UserError

try:  # tests/ as a package or as a plain directory on sys.path
    from tests.report_helpers import MINI_RULES
except ModuleNotFoundError:
    from report_helpers import MINI_RULES

ROOT = Path(__file__).resolve().parent.parent
DIAL = ROOT / "tests" / "engines" / "solver_dial.py"
NULL = ROOT / "tests" / "engines" / "null_engine.py"


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """The solver cache in a temporary folder (the engine's processes inherit it)."""
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _engine(rules_file: Path | None = None) -> str:
    extra = f" --rules {rules_file}" if rules_file else ""
    return f'engine:cmd="{sys.executable} {DIAL}{extra}"'


def _calibrate(capsys, *args: str) -> dict:
    code = main(["calibrate", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _points(d: dict) -> list[tuple]:
    return [(e["value"], e["response"], *e["ci"], e["games"], e["variance_reduction"]) for e in d["evaluations"]]


def test_the_engine_calibration_equals_the_in_process_one_point_for_point(cache, capsys):
    common = [
        "--rules",
        "forced",
        "--target-mean",
        "120",
        "--lo",
        "0",
        "--hi",
        "20",
        "--games",
        "300",
        "--seed",
        "7",
        "--workers",
        "2",
    ]
    built_in = _calibrate(capsys, "--strategy", "solver", "--param", "temperature", *common, "--out", str(cache / "in"))
    engine = _calibrate(
        capsys, "--strategy", _engine(), "--param", "opt.temperature", *common, "--out", str(cache / "engine")
    )
    assert len(built_in["evaluations"]) >= 4  # the values differ: each reached the kept engine in a newgame
    assert _points(engine) == _points(built_in)
    assert (engine["value"], engine["value_ci"]) == (built_in["value"], built_in["value_ci"])
    assert engine["spec"].endswith(f",opt.temperature={built_in['spec'].split('=')[-1]}")
    assert all(e["faults"]["faults_time"] == e["faults"]["faults_illegal"] == 0 for e in engine["evaluations"])
    assert all(e["faults"]["engine_decisions"] > 0 for e in engine["evaluations"])


@pytest.mark.parametrize("rules", ["forced", "mini"])
@pytest.mark.parametrize("target", [("--target-mean", "110"), ("--target-win-rate", "0.3", "--against", "solver")])
def test_the_exact_answer_lies_in_the_engine_calibrations_999_interval(cache, capsys, rules, target):
    rules_arg, rules_file = rules, None
    if rules == "mini":
        rules_file = cache / "mini.toml"
        rules_file.write_text(MINI_RULES)
        rules_arg = str(rules_file)
    common = ["--rules", rules_arg, *target, "--lo", "0", "--hi", "10"]
    exact = _calibrate(
        capsys, "--exact", "--strategy", "solver", "--param", "temperature", *common, "--out", str(cache / "exact")
    )
    sampled = _calibrate(
        capsys,
        "--strategy",
        _engine(rules_file),
        "--param",
        "opt.temperature",
        *common,
        "--games",
        "300",
        "--workers",
        "1",
        "--confidence",
        "0.999",
        "--out",
        str(cache / "sampled"),
    )
    lo, hi = sampled["value_ci"]
    assert lo <= exact["value"] <= hi, (exact["value"], sampled["value_ci"])
    assert hi - lo < 2.0  # an interval that says something


def test_an_undeclared_option_or_a_value_out_of_range_is_refused_in_one_line(cache, capsys):
    spec = _engine()
    for bad, says in (
        (",opt.temp=1", "no option 'temp' (its hello declares: temperature)"),
        (",opt.temperature=500", "option temperature = '500' is out of range: float in [0, 100]"),
    ):
        code = main(
            [
                "run",
                "--rules",
                "forced",
                "--seats",
                spec + bad,
                "--games",
                "2",
                "--workers",
                "1",
                "--out",
                str(cache / f"run{len(bad)}"),
            ]
        )
        errors = [x for x in capsys.readouterr().err.splitlines() if x.startswith("yatzy-harness: error")]
        assert code != 0 and len(errors) == 1 and says in errors[0], errors
    code = main(
        [
            "calibrate",
            "--rules",
            "forced",
            "--strategy",
            spec,
            "--param",
            "opt.temp",
            "--target-mean",
            "100",
            "--out",
            str(cache / "cal"),
        ]
    )
    err = capsys.readouterr().err
    assert code != 0 and "has no option 'temp' (its hello declares: temperature)" in err, err
    code = main(
        [
            "calibrate",
            "--rules",
            "forced",
            "--strategy",
            spec,
            "--param",
            "opt.temperature",
            "--target-mean",
            "100",
            "--lo",
            "0",
            "--hi",
            "200",
            "--out",
            str(cache / "cal2"),
        ]
    )
    err = capsys.readouterr().err
    assert code != 0 and "--hi 200.0 is outside engine:opt.temperature's range 0.0..100.0" in err, err


def test_declarations_are_read_and_checked():
    got = opts.declared(
        {
            "options": [
                {"name": "mistakes", "type": "float", "default": 0, "min": 0, "max": 1, "differ": [0, 0.5]},
                {"name": "depth", "type": "integer", "min": 1, "max": 4},
                {"name": "style", "type": "choice", "values": ["calm", "bold", "wild"]},
            ]
        }
    )
    assert got["depth"].parse("3") == 3 and got["style"].parse("bold") == "bold"
    assert got["mistakes"].differ == (0.0, 0.5)
    assert opts.declared({"options": {}}) == {}
    for bad, says in (
        ([{"name": "x", "type": "choice", "values": ["a"]}], "at least two"),
        ([{"name": "x", "type": "float", "min": 2, "max": 1}], "min 2 > max 1"),
        ([{"name": "x", "type": "weird"}], "is not one of"),
        ({"x": 1}, "must be a list"),
    ):
        with pytest.raises(opts.OptionError, match=says):
            opts.declared({"options": bad})
    with pytest.raises(opts.OptionError, match="not a whole number"):
        got["depth"].parse("2.5")
    with pytest.raises(opts.OptionError, match="is not one of calm, bold, wild"):
        got["style"].parse("tame")


def test_engine_check_fails_an_engine_that_ignores_the_option_it_declares(tmp_path):
    from harness.play.protocol.check import check_engine

    ok = check_engine(f'engine:cmd="{sys.executable} {DIAL}"', rules=["forced"], games=0)
    row = next(r for r in ok.rows if r.check.startswith("option temperature"))
    assert row.passed, row.detail
    deaf = check_engine(f'engine:cmd="{sys.executable} {NULL} --declare mistakes"', rules=["forced"], games=0)
    row = next(r for r in deaf.rows if r.check.startswith("option mistakes"))
    assert not row.passed and "the same answers" in row.detail


def _curve(f, half=0.5, bad=()):
    calls = []

    def evaluate(v: float) -> Point:
        calls.append(v)
        if v in bad:
            return Point(v, math.nan, math.nan, math.nan, 100, None, usable=False, why="disqualified")
        y = f(v)
        return Point(v, y, y - half, y + half, 100, None)

    return evaluate, calls


def test_an_integer_dial_answers_the_adjacent_pair_that_brackets_the_target():
    p = Problem(
        rules="scandinavian",
        settings=(),
        strategy="solver",
        param="target",
        lo=0.0,
        hi=300.0,
        target_mean=201.5,
        dial="integer",
    )
    ev, calls = _curve(lambda v: 250.0 - 0.37 * v)
    cal = calibrate(p, ev)
    a, b = cal.pair
    assert b.value - a.value == 1 and (a.f - 201.5) * (b.f - 201.5) < 0
    assert all(v == int(v) for v in calls) and cal.converged
    assert cal.spec == f"solver:target={int(cal.value)}" and cal.value in (a.value, b.value)


def test_a_value_over_the_referees_limits_is_not_used_for_the_root():
    p = Problem(
        rules="scandinavian", settings=(), strategy="solver", param="temperature", lo=0.0, hi=20.0, target_mean=200.0
    )
    ev, calls = _curve(lambda v: 250.0 - 5.0 * v, bad={10.0})
    cal = calibrate(p, ev)
    assert calls[:4] == [0.0, 20.0, 10.0, 5.0] and calls.count(10.0) == 1
    assert cal.value == pytest.approx(10.0, abs=0.5)
    assert any("is not used for the root" in n for n in cal.notes)
    ev, _ = _curve(lambda v: 250.0 - 5.0 * v, bad={20.0})
    with pytest.raises(UserError, match="--hi 20 broke the referee's limits"):
        calibrate(p, ev)


def test_precision_stops_the_search_once_the_interval_is_narrow_enough():
    p = Problem(
        rules="scandinavian",
        settings=(),
        strategy="solver",
        param="temperature",
        lo=0.0,
        hi=20.0,
        target_mean=200.0,
        precision=0.5,
    )
    ev, calls = _curve(lambda v: 250.0 - 0.05 * v * v * v, half=0.5)
    cal = calibrate(p, ev)
    assert cal.half_width <= 0.5 and cal.converged
    wide = calibrate(Problem(**{**p.__dict__, "precision": 1e-4}), _curve(lambda v: 250.0 - 5 * v, half=0.5)[0])
    assert any("wider than --precision" in n and "games per evaluation" in n for n in wide.notes)
