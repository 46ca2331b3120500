"""Depth of skill, exact: every step of a chain scores p to 1e-9 by fresh exact evaluations; the
chain does not depend on the order of computation, the cache or the workers; the partial first and
last steps; the refusals."""

from __future__ import annotations

import json
import math

import pytest

from harness.studies import depth as D
from harness.exact import evaluate as E
from harness.util.backends import open_backend
from harness.util.errors import UserError
from harness.util.jsonable import jsonable
from harness.game.rules import load_rules
from tests.test_evaluate import cache, tiny_dir  # noqa: F401  (fixtures)


def _without_time(d: D.DepthOfSkill) -> str:
    j = d.to_json()
    j.pop("seconds")
    return json.dumps(j, sort_keys=True)


@pytest.mark.parametrize("name", ["tiny_bonus", "tiny_generala"])
def test_every_step_scores_p_against_the_level_below(name, tiny_dir, cache):
    rules = load_rules(str(tiny_dir / f"{name}.toml"))
    d = D.depth_of_skill(rules)
    assert [c.p for c in d.chains] == [0.60, 0.75]
    for c in d.chains:
        assert c.levels[0].bot == "random" and c.first_fraction is None
        assert c.full_steps == len(c.levels) - 1 >= 1
        # fresh evaluations (no cache) of each level, pitted against the level below
        evs = [
            E.evaluate(
                rules, lv.bot if lv.value is None else D.DIALS["solver:temperature"].spec(lv.value), use_cache=False
            )
            for lv in c.levels
        ]
        for lo, hi, lv in zip(evs, evs[1:], c.levels[1:]):
            win, draw, _ = E.versus(hi, lo)
            assert abs(win + 0.5 * draw - c.p) <= 1e-9
            assert lv.rate == win + 0.5 * draw and lv.mean == hi.mean
        values = [lv.value for lv in c.levels[1:]]
        assert values == sorted(values, reverse=True) and values[-1] > 0  # stronger and stronger, never the top
        top = E.evaluate(rules, "solver")
        r = D.score_rate(top, evs[-1])
        assert r < c.p and c.top_rate == r
        assert c.last_fraction == math.log(r / (1 - r)) / math.log(c.p / (1 - c.p))
        assert c.steps == c.full_steps + c.last_fraction
    # a 75 % step is longer than a 60 % step: fewer of them
    assert d.chains[1].steps < d.chains[0].steps


def test_the_chain_is_the_same_in_any_order_from_the_cache_and_on_workers(tiny_dir, cache, tmp_path, monkeypatch):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    both = D.depth_of_skill(rules, (0.75, 0.6))
    monkeypatch.setenv("YATZY_HARNESS_CACHE", str(tmp_path / "other"))
    alone = [D.depth_of_skill(rules, (p,)).chains[0] for p in (0.6, 0.75)]
    assert [c.to_json() for c in alone] == [c.to_json() for c in both.chains[::-1]]
    again = D.depth_of_skill(rules, (0.75, 0.6))  # every evaluation from the cache now
    assert _without_time(again) == _without_time(both)
    with open_backend("local", 2, None) as backend:
        pooled = D.depth_of_skill(rules, (0.75, 0.6), evaluator=D.Evaluator(backend.executor))
    assert _without_time(pooled) == _without_time(both)


@pytest.mark.parametrize("k", [2, 3])
def test_k_candidates_ask_k_values_in_a_levels_first_round_and_one_a_round_after(k, tiny_dir, cache, monkeypatch):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    asked: list[int] = []
    orig = D.chain

    def recording(p, *a, **kw):
        gen = orig(p, *a, **kw)
        specs = next(gen)  # W and the grid
        try:
            while True:
                specs = gen.send((yield specs))
                asked.append(len(specs))
        except StopIteration as stop:
            return stop.value

    monkeypatch.setattr(D, "chain", recording)
    got = D.depth_of_skill(rules, (0.6,), candidates=k).chains[0]
    monkeypatch.setattr(D, "chain", orig)
    one = D.depth_of_skill(rules, (0.6,)).chains[0]
    assert len(got.levels) == len(one.levels)
    rounds = [lv.rounds for lv in got.levels[1:]]
    assert sum(rounds) == len(asked) and sum(lv.iterations for lv in got.levels[1:]) == sum(asked)
    i = 0
    for r in rounds:  # each level: k values, then one a round (k again only to cut the bracket)
        level, i = asked[i : i + r], i + r
        assert level[0] == k and all(n in (1, k) for n in level[1:])
    assert 1 in asked and sum(asked) < k * len(asked)  # not k every round
    for lv in got.levels[1:]:
        assert abs(lv.rate - 0.6) <= D.RATE_TOL and abs(lv.value - one.levels[lv.index].value) < 1e-6
    assert sum(rounds) < sum(lv.iterations for lv in one.levels[1:])  # fewer rounds in a row than K = 1


def test_a_ladder_whose_weakest_end_is_far_above_the_weakest_bot_counts_that_gap_by_its_logit(
    tiny_dir, cache, monkeypatch
):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    short = D.Dial("solver", "temperature", (0.0, 0.5, 1.0, 2.0), 0.5)
    monkeypatch.setitem(D.DIALS, "short", short)
    d = D.depth_of_skill(rules, (0.6,), dial="short")
    c = d.chains[0]
    r = D.score_rate(E.evaluate(rules, short.spec(2.0)), E.evaluate(rules, "random"))
    assert r > 0.6 and c.first_fraction == D.step_fraction(r, 0.6) > 1
    assert c.levels[1].value == 2.0 and not c.levels[1].exact and c.levels[1].rate == r
    assert all(abs(lv.rate - 0.6) <= 1e-9 for lv in c.levels[2:])
    # the first level counts by its logit, not as a full step (the sum in Chain.steps's order)
    assert c.full_steps == len(c.levels) - 2 and c.steps == c.full_steps + c.last_fraction + c.first_fraction
    assert "counted as" in "\n".join(d.tables()[0].notes)


def test_the_blunder_dial_and_a_weakest_bot_at_the_top(tiny_dir, cache):
    rules = load_rules(str(tiny_dir / "tiny_joker.toml"))
    c = D.depth_of_skill(rules, (0.6,), dial="solver:blunder").chains[0]
    assert c.full_steps >= 1 and all(abs(lv.rate - 0.6) <= 1e-9 for lv in c.levels[1:])
    assert all(0 < lv.value < 1 for lv in c.levels[1:])
    top = D.depth_of_skill(rules, (0.6,), weakest="solver").chains[0]
    assert top.steps == 0 and len(top.levels) == 1 and top.last_fraction == 0


def test_refusals(tiny_dir, cache):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    for rates in [(0.5,), (1.0,), ()]:
        with pytest.raises(UserError, match="score rate"):
            D.depth_of_skill(rules, rates)
    with pytest.raises(UserError, match="unknown dial"):
        D.depth_of_skill(rules, dial="solver:target")
    with pytest.raises(UserError, match="winprob"):
        D.depth_of_skill(rules, weakest="winprob")


def test_evaluate_prints_the_depth_of_skill(tiny_dir, cache, capsys, tmp_path, monkeypatch):
    from harness.cli import main

    monkeypatch.setitem(D.DIALS, "short", D.Dial("solver", "temperature", (0.0, 0.5, 1.0, 4.0, 16.0), 0.5))
    path = str(tiny_dir / "tiny_bonus.toml")
    assert main(["evaluate", path, "--depth", "--rates", "0.75", "--dial", "short", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["depth"]
    want = D.depth_of_skill(load_rules(path), (0.75,), dial="short").to_json()
    assert got["chains"] == jsonable(want["chains"])
    assert got["ladder"] == "random, then solver:temperature from 16 (weakest) to 0 (solver, the top)"
    out = tmp_path / "out"
    assert (
        main(
            [
                "evaluate",
                path,
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
    # progress: a line per evaluation computed, none for those the first command cached
    assert "evaluated greedy: mean" in text and "evaluated solver" not in text
    c = D.depth_of_skill(load_rules(path), (0.75,), dial="short").chains[0]
    row = next(line.split() for line in text.splitlines() if line.startswith("  75 %"))
    assert row[2:4] == [f"{c.steps:.2f}", str(c.full_steps)] and "Chain at p = 75 %" in text
    assert "Game quality at two seats (exact" in text
    assert {p.name for p in out.iterdir()} == {"evaluate.json", "evaluate.md", "distributions.png", "depth.png"}
    saved = json.loads((out / "evaluate.json").read_text(), parse_constant=pytest.fail)  # strict JSON: no NaN
    assert saved["depth"]["chains"][0]["steps"] == c.steps and saved["quality"][0]["b"] == "solver"
    assert main(["evaluate", path]) == 2
    assert "give --entrants" in capsys.readouterr().err
    assert main(["evaluate", path, "--depth", "--rates", "0.4"]) == 2
    assert main(["evaluate", path, "--depth", "--dial", "greedy:x"]) == 2


def test_the_help_defaults_are_the_librarys():
    from harness.commands import options

    assert options.DEPTH_RATES == ",".join(f"{p:g}" for p in D.DEFAULT_RATES)
    assert options.DEPTH_WEAKEST == D.DEFAULT_WEAKEST and options.DEPTH_DIAL == D.DEFAULT_DIAL
    assert options.DEPTH_DIALS == tuple(D.DIALS)


def test_report_and_compare_show_the_depth_of_skill_when_cached_or_small(cache, capsys, tmp_path, monkeypatch):
    from harness.cli import main
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run
    from tests.test_quality import COURSE_RULES

    # a short dial keeps the chains to a few evaluations; the rule set counts as big: auto needs the cache
    monkeypatch.setitem(D.DIALS, D.DEFAULT_DIAL, D.Dial("solver", "temperature", (0.0, 0.5, 1.0, 4.0, 16.0), 0.5))
    monkeypatch.setattr(D, "AUTO_STATES", 0)
    path = tmp_path / "tiny_course.toml"
    path.write_text(COURSE_RULES)
    rules = load_rules(str(path))
    got, why = D.depth_if_cheap(rules, "auto")
    assert got is None and "depth of skill not cached" in why and "--depth computes it" in why
    assert D.depth_if_cheap(rules, "off") == (None, None)
    want = D.depth_of_skill(rules)  # computed, and cached
    got, why = D.depth_if_cheap(rules, "auto")  # now from the cache alone: the same chains
    assert why is None and _without_time(got) == _without_time(want)
    steps = [c.steps for c in want.chains]
    # report: the run's rule set, whatever bots it played
    out = run(
        RunConfig(mode="run", rules=str(path), seats=("greedy", "timeout"), games=100, seed=1, workers=1),
        tmp_path / "run",
        quiet=True,
    )
    assert main(["report", str(out), "--no-plots", "--no-exact", "--json"]) == 0
    assert [c["steps"] for c in json.loads(capsys.readouterr().out)["depth"]["chains"]] == steps
    assert main(["report", str(out), "--no-plots", "--no-exact"]) == 0
    text = capsys.readouterr().out
    assert next(line.split() for line in text.splitlines() if line.startswith("  75 %"))[2] == f"{steps[1]:.2f}"
    assert main(["report", str(out), "--no-plots", "--no-exact", "--no-depth", "--json"]) == 0
    assert "depth" not in json.loads(capsys.readouterr().out)
    # compare: both rule sets side by side; CANDIDATE's threshold is not cached: a note, until --depth
    args = [
        "compare",
        "--exact",
        str(path),
        str(path),
        "--entrants",
        "greedy",
        "--candidate-set",
        "upper_bonus_threshold=3",
    ]
    main(args + ["--json"])
    d = json.loads(capsys.readouterr().out)["depth"]
    assert [c["steps"] for c in d["base"]["chains"]] == steps and d["candidate"]["available"] is False
    main(args + ["--depth"])
    text = capsys.readouterr().out
    cand = D.depth_if_cheap(load_rules(str(path), ["upper_bonus_threshold=3"]), "auto")[0]
    row = next(line.split() for line in text.splitlines() if line.startswith("  60 %"))
    assert row[2:] == [f"{steps[0]:.2f}", f"{cand.chains[0].steps:.2f}", f"{cand.chains[0].steps - steps[0]:+.2f}"]
    assert f"BASE ({rules.name})" in text and f"CANDIDATE ({rules.name})" in text
    # two runs of one rule set: one depth, shown for both
    main(["compare", str(out), str(out), "--json"])
    d = json.loads(capsys.readouterr().out)["depth"]
    assert d["base"] == d["candidate"] and [c["steps"] for c in d["base"]["chains"]] == steps


def test_the_not_cached_note_is_said_once_with_the_command_that_computes_it(cache, capsys, tmp_path, monkeypatch):
    """A depth of skill that is not cached (issue 37): report and compare say so in one line, both
    sides of a compare together, naming the command that computes it and caches it for every later
    report and compare; said once in a process, not again on every report; and that command does
    what the note says."""
    from harness.cli import main
    from harness.commands import options
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run
    from tests.test_quality import COURSE_RULES

    monkeypatch.setitem(D.DIALS, D.DEFAULT_DIAL, D.Dial("solver", "temperature", (0.0, 0.5, 1.0, 4.0, 16.0), 0.5))
    monkeypatch.setattr(D, "AUTO_STATES", 0)  # counted as big: auto needs the cache
    monkeypatch.setattr(options, "_SAID", set())  # this test's process starts with nothing said
    path = tmp_path / "tiny_course.toml"
    path.write_text(COURSE_RULES)
    out = run(
        RunConfig(mode="run", rules=str(path), seats=("greedy", "timeout"), games=60, seed=1, workers=1),
        tmp_path / "run",
        quiet=True,
    )
    other = run(
        RunConfig(
            mode="run",
            rules=str(path),
            settings={"upper_bonus_threshold": 3},
            seats=("greedy", "timeout"),
            games=60,
            seed=1,
            workers=1,
        ),
        tmp_path / "other",
        quiet=True,
    )
    here = f"yatzy-harness evaluate {path} --depth"
    there = f"yatzy-harness evaluate {path} --set upper_bonus_threshold=3 --depth"

    def noted(argv):
        assert main(argv) in (0, 1, 2)  # compare's exit code is its verdict
        return [line for line in capsys.readouterr().out.splitlines() if "depth of skill not cached" in line]

    (line,) = noted(["compare", str(out), str(other)])
    assert line.startswith("BASE and CANDIDATE: depth of skill not cached (")
    assert line.endswith(
        f"--depth computes it, or once for every later report and compare: {here}; {there} (--no-depth silences this)"
    )
    assert noted(["compare", str(out), str(other)]) == []  # said once in this process
    (line,) = noted(["report", str(out), "--no-plots", "--no-exact"])
    assert line.startswith("Note: depth of skill not cached (") and line.endswith(
        f"--depth computes it, or once for every later report and compare: {here} (--no-depth silences this)"
    )
    assert noted(["report", str(out), "--no-plots", "--no-exact"]) == []
    assert "depth of skill not cached" in (out / "summary.md").read_text()  # the report's files keep it
    assert main(here.split()[1:]) == 0  # the command named computes (and caches) it
    capsys.readouterr()
    assert main(["report", str(out), "--no-plots", "--no-exact", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["depth"]["chains"]
