"""Sweeps of rule settings: a cell's figures are evaluate's at its settings to the last digit, the
optimal bot's mean is solve's, order / cache / workers change nothing, the refusals."""

from __future__ import annotations

import csv
import json

import pytest

from harness.studies import depth as D
from harness.exact import solver
from harness.cli import main
from harness.util.errors import UserError
from harness.game.rules import load_rules
from harness.studies.sweep import parse_settings, sweep
from tests.test_evaluate import cache, tiny_dir  # noqa: F401  (fixtures)


def _json(argv, capsys) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_cell_is_what_evaluate_gives_at_its_settings_and_the_optimal_mean_is_solves(tiny_dir, cache, capsys):
    path = str(tiny_dir / "tiny_bonus.toml")
    got = _json(
        [
            "sweep",
            path,
            "--set",
            "upper_bonus_threshold=4..8:2",
            "--set",
            "upper_bonus_value=5",
            "--entrants",
            "greedy,solver",
            "--workers",
            "1",
        ],
        capsys,
    )
    assert [c["settings"] for c in got["cells"]] == [{"upper_bonus_threshold": t} for t in (4, 6, 8)]
    for cell in got["cells"]:
        t = cell["settings"]["upper_bonus_threshold"]
        one = _json(
            [
                "evaluate",
                path,
                "--entrants",
                "greedy,solver",
                "--set",
                f"upper_bonus_threshold={t}",
                "--set",
                "upper_bonus_value=5",
            ],
            capsys,
        )
        assert cell["digest"] == one["bots"][0]["digest"]
        for b in one["bots"]:
            mine = cell["bots"][b["bot"]]
            assert {k: mine[k] for k in ("mean", "std", "p_bonus", "percentiles")} == {
                k: b[k] for k in ("mean", "std", "p_bonus", "percentiles")
            }
        assert cell["pairs"] == one["pairs"]
        rules = load_rules(path, [f"upper_bonus_threshold={t}", "upper_bonus_value=5"])
        best = solver.solve(rules).expected_score
        assert abs(cell["bots"]["solver"]["mean"] - best) < 1e-9
        assert f"{cell['bots']['solver']['mean']:.6f}" == f"{best:.6f}"
    means = [c["bots"]["solver"]["mean"] for c in got["cells"]]
    assert means == sorted(means, reverse=True)  # a higher threshold earns the bonus less often


def test_order_cache_and_workers_change_nothing_and_depth_is_the_cells(tiny_dir, cache, tmp_path, monkeypatch):
    path = str(tiny_dir / "tiny_joker.toml")
    axes, fixed = parse_settings(["upper_bonus_threshold=3..5"])
    first = sweep(path, axes, fixed, ["greedy", "solver:temperature=1"], D.DepthRequest((0.75,)))
    assert first.from_cache < first.evaluated
    again = sweep(path, axes, fixed, ["greedy", "solver:temperature=1"], D.DepthRequest((0.75,)))
    assert again.from_cache == again.evaluated == first.evaluated  # a rerun evaluates nothing
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "fresh"))
    back, _ = parse_settings(["upper_bonus_threshold=5,4,3"])
    from harness.util.backends import open_backend

    with open_backend("local", 2, None) as backend:
        rev = sweep(
            path,
            back,
            fixed,
            ["greedy", "solver:temperature=1"],
            D.DepthRequest((0.75,)),
            evaluator=D.Evaluator(backend.executor),
        )
    assert rev.from_cache == 0
    assert [c.to_json() for c in rev.cells[::-1]] == [c.to_json() for c in first.cells]
    for c in first.cells:
        alone = D.depth_of_skill(load_rules(path, dict(c.settings)), (0.75,))
        assert c.depth.to_json()["chains"] == alone.to_json()["chains"]


def test_two_settings_make_a_grid_with_heat_maps_csv_and_markdown(tiny_dir, cache, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(D.DIALS, "short", D.Dial("solver", "temperature", (0.0, 1.0, 4.0), 0.5))  # a cheap ladder
    path = str(tiny_dir / "tiny_bonus.toml")
    out = tmp_path / "out"
    assert (
        main(
            [
                "sweep",
                path,
                "--set",
                "upper_bonus_threshold=5,6",
                "--set",
                "include_pairs=true,false",
                "--entrants",
                "greedy,solver",
                "--depth",
                "--rates",
                "0.75",
                "--dial",
                "short",
                "--workers",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "Sweep of upper_bonus_threshold x include_pairs on tiny_bonus" in text
    assert "bots: A = greedy, B = solver" in text
    assert {p.name for p in out.iterdir()} == {
        "sweep.json",
        "sweep.csv",
        "sweep.md",
        "sweep_means.png",
        "sweep_p_bonus.png",
        "sweep_head_to_head.png",
        "sweep_depth.png",
    }
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    assert [(r["upper_bonus_threshold"], r["include_pairs"]) for r in rows] == [
        ("5", "True"),
        ("5", "False"),
        ("6", "True"),
        ("6", "False"),
    ]
    data = json.loads((out / "sweep.json").read_text(), parse_constant=pytest.fail)  # strict JSON: no NaN
    for r, cell in zip(rows, data["cells"]):
        assert float(r["greedy mean"]) == cell["bots"]["greedy"]["mean"]  # the CSV keeps every digit
        assert float(r["steps at 0.75"]) == cell["depth"]["chains"][0]["steps"]
        rules = load_rules(path, cell["settings"])
        assert cell["digest"] == rules.digest and (rules.n_boxes == 5) == cell["settings"]["include_pairs"]


@pytest.mark.parametrize(
    "sets, message",
    [
        (["saved_rolls=true,false"], "saved rolls carry between turns"),
        (["upper_bonus_threshold=5", "saved_rolls=true"], "saved rolls carry between turns"),
        (["upper_bonus_threshold=5"], "give a setting to sweep"),
        (["upper_bonus_threshold=8..5"], "LO <= HI"),
        (["upper_bonus_threshold=5..x"], "whole numbers"),
        (["include_pairs=true..false"], "a range LO..HI is for whole-number settings"),
        (["upper_bonus_threshold=5,5"], "listed twice"),
        (["upper_bonus_threshold=5..6", "upper_bonus_threshold=7"], "more than once"),
        (["upper_bonus_threshold=5..6", "upper_bonus_value=0,5", "columns=1,2"], "at most 2 settings"),
        (["nonsense=1,2"], "unknown setting"),
    ],
)
def test_refusals(sets, message):
    with pytest.raises(UserError, match=message):
        parse_settings(sets)


def test_a_value_the_rule_set_refuses_is_named_before_any_evaluation(tiny_dir, cache, capsys):
    path = str(tiny_dir / "tiny_bonus.toml")
    assert main(["sweep", path, "--set", "upper_bonus_value=0..10:3", "--entrants", "greedy"]) == 2
    assert "upper_bonus_value=3 is out of range 0..100, step 5" in capsys.readouterr().err
    assert not list(cache.glob("evaluate-*"))  # refused before any evaluation
    assert main(["sweep", path, "--set", "upper_bonus_value=0,5"]) == 2
    assert "give bots to evaluate" in capsys.readouterr().err
    assert main(["sweep", path, "--set", "upper_bonus_value=0,5", "--entrants", "greedy,winprob"]) == 2
    assert "'winprob'" in capsys.readouterr().err
    assert not list(cache.glob("evaluate-*"))  # refused before greedy was evaluated
