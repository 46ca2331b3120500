"""The game review: expected finals moved by luck and regret, exact win chances, the page and the commands."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from harness.exact.kernels import target as TK
from harness.decisions.analysis import Analyser
from harness.cli import main
from harness.records.codec import GameRecord, Seat
from harness.play.replay import record_of_replay, replay
from harness.reports.win_chance import WinModel
from harness.reports.review import (
    CLASSES,
    Reviewer,
    decision_class,
    page_data,
    page_name,
    review_html,
    turn_anchor,
    write_review,
)
from harness.game.rules import load_rules
from tests.html_check import assert_numbers_unbreakable
from tests.test_solver import cache_dir, tiny_dir  # noqa: F401

SEATS = ["greedy", "random", "solver:temperature=2", "timeout"]


def game(rules_path, seats, seed=5, g=2, settings=()) -> GameRecord:
    trace, res = replay(str(rules_path), list(settings), seats, seed, g)
    return record_of_replay(trace, res, str(rules_path), seats, seed, g)


@pytest.fixture(scope="module")
def reviewer(tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / "tiny_bonus.toml"))
    return Reviewer(rules, cache_dir)


def mirrored(rec: GameRecord) -> GameRecord:
    """A two-person game (no bot) in which bob plays alice's dice and choices: a tie."""
    turns = [t for t in rec.turns if t.seat == 0]
    both = [replace(t, seat=s) for t in turns for s in (0, 1)]
    return GameRecord("kitchen-1", rec.rules, (Seat(name="alice"), Seat(name="bob")), tuple(both))


@pytest.mark.parametrize(
    "name,settings",
    [("tiny_bonus", []), ("tiny_joker", []), ("tiny_generala", []), ("tiny_forced", []), ("tiny_bonus", ["columns=2"])],
)
def test_expected_final_moves_by_luck_and_regret(name, settings, tiny_dir, cache_dir):
    rules = load_rules(str(tiny_dir / f"{name}.toml"), settings)
    rec = game(tiny_dir / f"{name}.toml", SEATS[:3], settings=settings)
    rev = Reviewer(rules, cache_dir).review(rec)
    an = Analyser(rules, cache_dir)
    ref = an.record(rec)
    v0 = an.adv.turn_start_value(an.adv.state({}))
    assert rev.steps[0].expected == pytest.approx([v0 * rules.columns] * 3, abs=1e-12)
    assert rev.steps[0].win == pytest.approx((1 / 3,) * 3, abs=1e-12)
    top = [s.final == max(x.final for x in rev.seats) for s in rev.seats]
    assert rev.steps[-1].win == pytest.approx([t / sum(top) for t in top], abs=1e-12)
    for prev, st in zip(rev.steps, rev.steps[1:]):
        moved = st.expected[st.seat] - prev.expected[st.seat]
        assert moved == pytest.approx(st.luck if st.kind == "roll" else -st.regret, abs=1e-9), st
        others = [x for s, x in enumerate(st.expected) if s != st.seat]
        assert others == [x for s, x in enumerate(prev.expected) if s != st.seat]  # only the mover moves
    assert rev.steps[-1].expected == pytest.approx([float(x) for x in rec.totals], abs=1e-9)
    for s, a in zip(rev.seats, ref):
        assert (s.final, s.decisions) == (a.final, a.decisions)
        assert s.luck == pytest.approx(a.luck, abs=1e-9) and s.regret == pytest.approx(a.regret, abs=1e-9)
        assert sum(t.luck[i] for t in rev.turns if t.seat == s.seat for i in range(len(t.rolls))) == pytest.approx(
            a.luck, abs=1e-9
        )
        assert sum(s.classes.values()) == a.errors
    # the turns are the record's, in play order, with the sheet (its column's) after each
    assert [(t.seat, t.box, t.score) for t in rev.turns] == [(t.seat, t.box, t.score) for t in rec.turns]
    columns = {(t.seat, t.column): t.total for t in rev.turns}
    assert [sum(v for (s, _), v in columns.items() if s == seat) for seat in range(3)] == list(rec.totals)


def test_win_chance_starts_at_the_seats_chances_and_ends_by_the_scores(reviewer, tiny_dir):
    rev = reviewer.review(game(tiny_dir / "tiny_bonus.toml", SEATS[:2], seed=9))
    assert rev.steps[0].win == pytest.approx((0.5, 0.5), abs=1e-12)
    a, b = rev.seats[0].final, rev.seats[1].final
    assert rev.steps[-1].win == ((1.0, 0.0) if a > b else (0.0, 1.0) if b > a else (0.5, 0.5))
    for st in rev.steps:
        assert sum(st.win) == pytest.approx(1.0, abs=1e-9) and min(st.win) >= -1e-12
    # a tie of two people: 1/2 each at the end, and 1/2 each at the start
    tie = reviewer.review(mirrored(rev_record := game(tiny_dir / "tiny_bonus.toml", SEATS[:2], seed=9)))
    assert tie.steps[0].win == pytest.approx((0.5, 0.5), abs=1e-12)
    assert tie.steps[-1].win == (0.5, 0.5) and tie.seats[0].final == tie.seats[1].final
    assert [s.label for s in tie.seats] == ["alice", "bob"] and rev_record.seats[0].spec == "greedy"
    # four seats: a quarter each at the start, then 1, 0, 0, 0 (or the shares of a shared top)
    four = reviewer.review(game(tiny_dir / "tiny_bonus.toml", SEATS, seed=3))
    assert four.steps[0].win == pytest.approx((0.25,) * 4, abs=1e-12)
    finals = [s.final for s in four.seats]
    top = [f == max(finals) for f in finals]
    assert four.steps[-1].win == pytest.approx([t / sum(top) for t in top], abs=1e-12)
    # the decisive moments are the largest swings of the mover's chance, largest first
    swings = sorted((abs(st.win[st.seat] - p.win[st.seat]) for p, st in zip(four.steps, four.steps[1:])), reverse=True)
    assert [abs(m.swing) for m in four.moments] == pytest.approx(swings[: len(four.moments)], abs=1e-15)
    assert four.moments and four.steps[four.moments[0].step].seat == four.moments[0].seat


def test_mid_turn_distributions_are_the_ev_tables_own(reviewer):
    """From a turn's start the mixture over the first roll is the table's vector; after a keep it
    is the mixture over the reroll; and each distribution's mean is the solver's value there."""
    m, adv = reviewer.win()[0], reviewer.adv
    d, rr = adv.rules.dice, adv.rules.rolls_per_turn - 1
    st = adv.after_box(adv.state({}), [1, 1], "ones", True)  # ones = 2
    start = m.at_start(st)
    mix = sum(d.roll_prob[r] * np.pad(m.after_roll(st, r, rr, True), (0, 40))[: len(start)] for r in range(d.n_rolls))
    assert mix == pytest.approx(start, abs=1e-6)
    for r in range(d.n_rolls):
        for left in range(rr + 1):
            pmf = m.after_roll(st, r, left, left == rr)
            assert pmf.sum() == pytest.approx(1.0, abs=1e-6)
            mean = float(np.arange(len(pmf)) @ pmf)
            assert mean == pytest.approx(adv.roll_value(adv.position(st, r, left, left == rr)) - st.points, abs=1e-4)
    for k in range(d.n_keeps):
        if d.keep_size[k] == d.n:
            continue
        pmf = m.after_keep(st, k, rr - 1)
        assert float(np.arange(len(pmf)) @ pmf) == pytest.approx(adv.keep_value(st, k, rr - 1) - st.points, abs=1e-4)


def test_two_seat_chances_are_winprobs_model(reviewer):
    """At a turn's start, P(win) + 1/2 P(tie) against the best other final as strategies.winprob
    computes it (harness.exact.kernels.target.best_final_weights over the "ev" table)."""
    m, adv = reviewer.win()[0], reviewer.adv
    me = adv.after_box(adv.state({}), [2, 2], "twos", True)
    other = adv.after_box(adv.state({}), [1, 2], "chance", True)
    tab = m.tab
    W, lo, nws = np.zeros((1, tab.tmax + 1)), np.zeros(1, np.int64), np.zeros(1, np.int64)
    one = lambda x: np.array([[x]], dtype=np.int64)  # noqa: E731
    TK.best_final_weights(
        tab.plan.layout,
        tab.values,
        tab.off,
        one(other.filled),
        np.array([[other.flag]]),
        one(other.upper),
        one(other.points),
        W,
        lo,
        nws,
    )
    mine = m.at_start(me)
    p = 0.0
    for k in range(int(nws[0])):
        b = int(lo[0]) + k - me.points  # the best other final, in my points still to come
        p += W[0, k] * (mine[b + 1 :].sum() + 0.5 * (mine[b] if 0 <= b < len(mine) else 0.0))
    got = WinModel.shares([(me.points, mine), (other.points, m.at_start(other))])
    assert got[0] == pytest.approx(p, abs=1e-9) and got.sum() == pytest.approx(1.0, abs=1e-12)


def test_decision_classes():
    assert [decision_class(x) for x in (0.0, 1e-10, 0.5, 1.0, 3.99, 4.0, 11.9, 12.0, 50.0)] == [
        "best",
        "best",
        "good",
        "inaccuracy",
        "inaccuracy",
        "mistake",
        "mistake",
        "blunder",
        "blunder",
    ]
    assert [c for c, _ in CLASSES] == ["blunder", "mistake", "inaccuracy", "good"]


def test_the_page_is_one_self_contained_file(reviewer, tiny_dir, tmp_path):
    rev = reviewer.review(game(tiny_dir / "tiny_bonus.toml", SEATS[:2], seed=9))
    page = write_review(rev, tmp_path / "r" / page_name(rev.game)).read_text()
    assert (tmp_path / "r" / "game-2.html").exists()
    # nothing is fetched: no link, no src, no url(), no import; the only URI is SVG's namespace
    assert not re.search(r"<link|\bsrc=|url\(|@import|@font-face", page)
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    data = json.loads(re.search(r"<script type='application/json' id='review-data'>(.*?)</script>", page).group(1))
    assert data == page_data(rev) and data["steps"][5]["expected"] == pytest.approx(rev.steps[5].expected, abs=1e-6)
    assert len(data["turns"]) == len(rev.turns) and data["steps"][0]["win"] == [0.5, 0.5]
    for part in (
        "id='summary'",
        "id='board'",
        "id='expected-chart'",
        "id='win-chart'",
        "id='decisions'",
        "id='moments'",
        "inaccuracy (1 to 4)",
    ):
        assert part in page, part
    assert assert_numbers_unbreakable(page) > 10
    assert "</script>" not in data["title"] and page.count("</script>") == 2


def test_a_rule_set_without_its_table_says_so(tiny_dir, cache_dir, tmp_path):
    rules = load_rules(str(tiny_dir / "tiny_forced.toml"))
    rv = Reviewer(rules, tmp_path / "empty-cache", win_tables_up_to=1)
    rev = rv.review(game(tiny_dir / "tiny_forced.toml", SEATS[:2]))
    assert rev.steps[0].win is None and rev.moments == ()
    assert re.fullmatch(
        r"win chances are not shown: tiny_forced's EV-play table \(the 'ev' target table, "
        r"[\d.]+ KiB\) is not in the solver cache, and tables above 1 bytes are not built here "
        r"\(`yatzy-harness review SOURCE --game ID --max-memory GIB` builds it, up to GIB\)",
        rev.win_note,
    ), rev.win_note
    page = review_html(rev)
    assert rev.win_note in page and "id='win-chart'" not in page
    assert "<h2>Chance to win</h2><p class='missing'>Win chances are not shown: tiny_forced" in page


def test_a_game_alone_has_no_win_chances(reviewer, tiny_dir):
    rev = reviewer.review(game(tiny_dir / "tiny_bonus.toml", ["greedy"]))
    assert rev.win_note is None and rev.moments == () and all(st.win is None for st in rev.steps)
    page = review_html(rev)
    assert "id='expected-chart'" in page and "id='win-chart'" not in page and "win: start" not in page


def test_anchors_and_names():
    assert turn_anchor(2, 15, 1, 1, 8) == "#turn=16" and turn_anchor(3, 15, 0, 2, 1) == "#turn=46"
    assert page_name(17) == "game-17.html" and page_name("a b/c", 2) == "lineup-2-game-a_b_c.html"


# ---------------------------------------------------------------------------------------------
# the commands


def data_of(path) -> dict:
    page = path.read_text()
    return json.loads(re.search(r"id='review-data'>(.*?)</script>", page).group(1))


def test_review_of_a_records_file_of_people(tiny_dir, cache_dir, tmp_path, capsys):
    """A game of two people (no bot seat) from a records file: the summary printed, the page
    written beside the file by default, or where --out says; a game not in the file named."""
    from harness.records.record import validate_record, write_records_jsonl

    rec = mirrored(game(tiny_dir / "tiny_bonus.toml", SEATS[:2], seed=9))
    src = write_records_jsonl(tmp_path / "kitchen.jsonl", [rec])
    args = ["review", str(src), "--game", "kitchen-1", "--rules-dir", str(tiny_dir), "--cache-dir", str(cache_dir)]
    assert main(args) == 0
    out = capsys.readouterr().out
    page = tmp_path / "kitchen.jsonl.reviews" / "game-kitchen-1.html"
    total = validate_record(rec)[0]
    assert out.splitlines()[0] == f"Game review: game kitchen-1 (tiny_bonus): alice {total} vs bob {total}"
    assert re.search(rf"^  alice +{total} .* 50\.0 % / 50\.0 % +\d+ +\d+ / \d+ / \d+$", out, re.M), out
    assert out.rstrip().endswith(
        f"wrote {page} ({page.stat().st_size / 1024:.0f} KB): open it in a browser; ← → step through the turns"
    )
    d = data_of(page)
    assert [s["label"] for s in d["seats"]] == ["alice", "bob"] and d["steps"][-1]["win"] == [0.5, 0.5]
    assert main([*args, "--out", str(tmp_path / "x.html"), "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["page"] == str(tmp_path / "x.html") and js["steps"][-1]["win"] == [0.5, 0.5]
    played = [[(t["seat"], t["box"], t["rolls"]) for t in x["turns"]] for x in (js, d)]
    assert played[0] == played[1]
    assert main([*args[:3], "nope", *args[4:]]) == 2
    assert "game nope is not in" in capsys.readouterr().err


def test_pages_from_report_analyse_and_replay(tiny_dir, cache_dir, tmp_path, capsys):
    """A run played with --analyse --record: `report` writes the costliest decisions' games' pages
    and links each decision to its turn; `analyse --review` writes the worst decisions' games;
    `replay --review` writes a replayed game's page, the same numbers as `review`'s."""
    rules = str(tiny_dir / "tiny_bonus.toml")
    run = tmp_path / "run"
    cache = ["--cache-dir", str(cache_dir)]
    assert (
        main(
            [
                "run",
                "--rules",
                rules,
                "--seats",
                "greedy,random",
                "--games",
                "12",
                "--seed",
                "4",
                "--record",
                "--analyse",
                "--quiet",
                "--workers",
                "1",
                "--out",
                str(run),
                *cache,
            ]
        )
        == 0
    )
    assert main(["report", str(run), "--no-plots"]) == 0
    assert re.search(
        r"^wrote summary\.json, summary\.md, report\.html, reviews/ \(\d+ review pages\) to ",
        capsys.readouterr().out,
        re.M,
    )
    html = (run / "report.html").read_text()
    links = re.findall(
        r"<a href='(reviews/game-(\d+)\.html#turn=(\d+))'>game (\d+) seat (\d) column 1 turn (\d+)", html
    )
    assert len(links) >= 5
    for _, g, anchor, g2, seat, turn in links:
        assert g == g2 and int(anchor) == (int(turn) - 1) * 2 + int(seat) + 1
        d = data_of(run / "reviews" / f"game-{g}.html")
        t = d["turns"][int(anchor) - 1]
        assert (t["seat"], t["turn"]) == (int(seat), int(turn))
        assert any(x["regret"] > 1e-9 for x in t["decisions"])  # the costliest decision is on that turn
    assert main(["analyse", str(run), "--worst", "2", "--no-plots", "--review", str(tmp_path / "worst"), *cache]) == 0
    out = capsys.readouterr().out
    worst = set(re.findall(r"^  (?:greedy|random) +(\d+) +\d ", out, re.M))
    assert sorted(p.name for p in (tmp_path / "worst").iterdir()) == sorted(f"game-{g}.html" for g in worst)
    assert f"wrote {len(worst)} review pages to {tmp_path / 'worst'}: " in out
    g = sorted(worst)[0]
    assert main(["replay", "--run", str(run), "--game", g, "--review", str(tmp_path / "replayed.html"), *cache]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"wrote the review page {tmp_path / 'replayed.html'}")
    a, b = data_of(tmp_path / "replayed.html"), data_of(tmp_path / "worst" / f"game-{g}.html")
    assert a["steps"] == b["steps"] and a["turns"] == b["turns"] and a["seats"] == b["seats"]


def test_review_of_a_run_without_records_names_replay_review(tiny_dir, cache_dir, tmp_path, capsys):
    """A run played without --record has no game records to review, but any of its games can be
    replayed (same dice, same bots) into a review page: the error names that command (issue 37),
    which then works as given."""
    run, cache = tmp_path / "plain", ["--cache-dir", str(cache_dir)]
    assert (
        main(
            [
                "run",
                "--rules",
                str(tiny_dir / "tiny_bonus.toml"),
                "--seats",
                "greedy,random",
                "--games",
                "4",
                "--seed",
                "3",
                "--quiet",
                "--workers",
                "1",
                "--out",
                str(run),
                *cache,
            ]
        )
        == 0
    )
    assert main(["review", str(run), "--game", "2", *cache]) == 2
    err = capsys.readouterr().err
    page = run / "reviews" / "game-2.html"
    command = f"yatzy-harness replay --run {run} --game 2 --review {page}"
    assert err == (
        f"yatzy-harness: error: {run} was played without --record, so it has no game records to "
        f"review; replay the game into a review page: {command} (or play the run again with --record)\n"
    )
    assert main(command.split()[1:] + cache) == 0 and page.is_file()
    capsys.readouterr()
    assert main(["review", str(run), "--game", "2", "--lineup", "0", "--out", str(tmp_path / "p.html"), *cache]) == 2
    assert f"replay --run {run} --lineup 0 --game 2 --review {tmp_path / 'p.html'} (" in capsys.readouterr().err


#: What `review` of a recorded run must not load (benchmarks/BENCHMARKS.md, "Game review": its
#: start-up is most of its time): pandas, plots, scipy's statistics and linear algebra (numba's start
#: loads scipy's BLAS module alone: harness.util.jit), pyarrow's datasets, progress bars, the engine and
#: the bots, the reports' modules.
NOT_LOADED = (
    "pandas",
    "matplotlib",
    "scipy.stats",
    "scipy.optimize",
    "scipy.linalg",
    "pyarrow.dataset",
    "tqdm",
    "harness.game.loop",
    "harness.game.strategy",
    "strategies",
    "harness.stats",
    "harness.reports.summary",
    "harness.reports.report",
    "harness.reports.plot",
)


def test_review_of_a_run_in_a_fresh_process_loads_only_what_it_needs(tiny_dir, cache_dir, tmp_path):
    """`review RUN --game G` as a user runs it: the page is the one this process writes, and the
    modules it loaded hold none of NOT_LOADED (numpy, numba and pyarrow, which it needs, are there)."""
    run, cache = tmp_path / "run", ["--cache-dir", str(cache_dir)]
    assert (
        main(
            [
                "run",
                "--rules",
                str(tiny_dir / "tiny_bonus.toml"),
                "--seats",
                "greedy,random",
                "--games",
                "2",
                "--seed",
                "3",
                "--record",
                "--quiet",
                "--workers",
                "1",
                "--out",
                str(run),
                *cache,
            ]
        )
        == 0
    )
    assert main(["review", str(run), "--game", "1", "--out", str(tmp_path / "here.html"), *cache]) == 0
    probe = (
        "import json, sys\nfrom harness.cli import main\nrc = main(sys.argv[1:])\n"
        "print(json.dumps([rc, sorted(sys.modules)]))"
    )
    root = str(Path(__file__).resolve().parent.parent)  # this tree's code, installed or not
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-c", probe, "review", str(run), "--game", "1", "--out", str(tmp_path / "there.html"), *cache],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.stdout.strip(), proc.stderr
    rc, loaded = json.loads(proc.stdout.splitlines()[-1])
    assert rc == 0, proc.stderr
    assert (tmp_path / "there.html").read_bytes() == (tmp_path / "here.html").read_bytes()
    assert {"numpy", "numba", "pyarrow", "harness.reports.review"} <= set(loaded)
    assert [m for m in NOT_LOADED if m in loaded] == []
