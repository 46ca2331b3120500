"""The engine protocol and its referee, with real engine subprocesses (tests/engines/)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

from harness.cli import main as cli
from harness.game.loop import play
from harness.util.errors import UserError
from harness.play.protocol import messages as msgs
from harness.play.protocol.check import check_engine, scenarios, view_of
from harness.game.registry import make
from harness.game.rules import load_rules
from harness.play.runner import RunConfig, run
from harness.util.specs import parse_spec, split_specs
from tests.engines import null_engine
from tests.engines.twin import NullTwin

ENGINES = Path(__file__).resolve().parent / "engines"
NULL = f"{sys.executable} {ENGINES / 'null_engine.py'}"


def misbehave(mode: str, at: int = 3, marker: Path | None = None) -> str:
    return f"{sys.executable} {ENGINES / 'misbehave.py'} {mode} {at}" + (f" {marker}" if marker else "")


def engine_spec(cmd: str, **extra: object) -> str:
    params = ",".join(f"{k}={v}" for k, v in extra.items())
    return f'engine:cmd="{cmd}",name=bot' + ("," + params if params else "")


def rows(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "chunks").sort_values(["lineup", "game", "seat"]).reset_index(drop=True)


def faults(out: Path) -> dict[str, int]:
    return json.loads((out / "manifest.json").read_text())["faults"]["bot"]


# ---------------------------------------------------------------------------------------------
# specs and messages


def test_one_spec_parser_for_every_list_of_bots_keeps_quotes_and_parameters_together():
    assert split_specs('engine:cmd="node bot.js --x,y",move_ms=5,greedy,solver:temperature=2,blunder=0.05') == [
        'engine:cmd="node bot.js --x,y",move_ms=5',
        "greedy",
        "solver:temperature=2,blunder=0.05",
    ]
    assert parse_spec('engine:cmd="node bot.js --x,y",move_ms=5') == (
        "engine",
        {"cmd": "node bot.js --x,y", "move_ms": "5"},
    )
    with pytest.raises(UserError, match="unbalanced"):
        split_specs('engine:cmd="node bot.js,greedy')


def test_evaluate_and_sweep_read_entrants_with_the_same_parser(tmp_path, capsys):
    # the snag of issue 37: `evaluate --entrants solver:temperature=2,blunder=0.05` made two bots
    from tests.test_solver import TINY

    path = tmp_path / "tiny_bonus.toml"
    path.write_text(TINY["tiny_bonus"])
    entrants = "solver:temperature=2,blunder=0.05,greedy"
    assert cli(["evaluate", str(path), "--entrants", entrants, "--json", "--cache-dir", str(tmp_path / "c")]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [b["bot"] for b in got["bots"]] == ["solver:blunder=0.05,temperature=2.0", "greedy"]
    assert (
        cli(
            [
                "sweep",
                str(path),
                "--set",
                "upper_bonus_threshold=4,6",
                "--entrants",
                entrants,
                "--json",
                "--cache-dir",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["bots"] == ["solver:blunder=0.05,temperature=2.0", "greedy"]


def test_requests_and_rules_follow_the_schema():
    validator = jsonschema.Draft202012Validator(msgs.schema())
    for name in ("scandinavian", "yahtzee", "generala", "maxi"):
        rules = load_rules(name)
        newgame = json.loads(
            msgs.dumps(
                {
                    "type": "newgame",
                    "id": 0,
                    "rules": msgs.describe_rules(rules),
                    "options": {},
                    "time": {"move_ms": 5.0, "game_ms": 0.0, "margin_ms": 100.0},
                }
            )
        )
        assert not list(validator.iter_errors(newgame))
        for what, view in scenarios(rules, np.random.default_rng(1)):
            kind = "box" if view.options is not None else "keep"
            req = json.loads(msgs.request(5, view, kind, budget_ms=10.0))
            assert not list(validator.iter_errors(req)), what
            assert req["n"] == len(view) and len(req["dice"]) == len(view)
    for good in (
        {"type": "answer", "id": 1, "game": [3], "keep": ["66"]},
        {"type": "answer", "id": 1, "game": [3], "box": [2]},
        {"type": "hello", "protocol": "yatzy-engine/1", "name": "x", "rules": ["*"]},
    ):
        assert not list(validator.iter_errors(good))
    assert list(validator.iter_errors({"type": "answer", "id": 1, "game": [3]}))
    # hello's options: a list of declarations (or {} for none); error and ready echo the id
    declares = {
        "type": "hello",
        "protocol": "yatzy-engine/1",
        "name": "x",
        "rules": ["*"],
        "options": [
            {"name": "mistakes", "type": "float", "default": 0, "min": 0, "max": 1, "differ": [0, 0.5]},
            {"name": "style", "type": "choice", "values": ["a", "b"]},
        ],
    }
    for good in (
        declares,
        {**declares, "options": {}},
        {"type": "ready", "id": 3},
        {"type": "error", "id": None, "message": "not JSON"},
    ):
        assert not list(validator.iter_errors(good)), good
    for bad in (
        {**declares, "options": {"mistakes": 0}},
        {**declares, "options": [{"name": "m", "type": "real"}]},
        {"type": "ready"},
        {"type": "error", "message": "no id"},
        {"type": "hello", "name": "x", "rules": ["*"]},
    ):
        assert list(validator.iter_errors(bad)), bad


def test_answers_are_checked_entry_by_entry_against_the_rules():
    rules = load_rules("yahtzee")
    c = msgs.codec(rules)
    sheets = np.full((3, rules.n_boxes), -1, dtype=np.int16)
    view = view_of(rules, sheets, np.array([c.roll_of("11234"), c.roll_of("66666"), c.roll_of("12345")]), rolls_left=2)
    ans = msgs.read_answer({"type": "answer", "id": 9, "game": [0, 1, 2], "keep": ["11", "6666", "7"]}, 9, view, "keep")
    assert ans.choice[0] == c.keep_index["11"] and ans.choice[1] == c.keep_index["6666"]
    assert list(ans.illegal) == [False, False, True] and "'7' is not a legal keep" in ans.problem
    ans = msgs.read_answer({"type": "answer", "id": 9, "game": [0, 1, 2], "keep": ["21", "", "54321"]}, 9, view, "keep")
    assert not ans.illegal.any() and ans.choice[2] == rules.dice.roll_as_keep[view.roll[2]]
    with pytest.raises(msgs.Unreadable, match="other games"):
        msgs.read_answer({"type": "answer", "id": 9, "game": [0, 2, 1], "keep": ["", "", ""]}, 9, view, "keep")
    with pytest.raises(msgs.Unreadable, match="request 8"):
        msgs.read_answer({"type": "answer", "id": 8, "game": [0, 1, 2], "keep": ["", "", ""]}, 9, view, "keep")
    with pytest.raises(msgs.Unreadable, match="an error"):
        msgs.read_answer({"type": "error", "id": 9, "message": "oops"}, 9, view, "keep")
    box = view_of(rules, sheets, view.roll, rolls_left=0, first=False)
    ans = msgs.read_answer({"type": "answer", "id": 2, "game": [0, 1, 2], "box": ["ones", 11, 99]}, 2, box, "box")
    assert list(ans.choice[:2]) == [0, 11] and list(ans.illegal) == [False, False, True]


def test_a_request_reads_back_into_the_positions_it_was_made_of():
    rules = load_rules("scandinavian")
    gen = np.random.default_rng(3)
    for _, view in scenarios(rules, gen)[:6]:
        kind = "box" if view.options is not None else "keep"
        pos = msgs.read_positions(msgs.loads(msgs.request(1, view, kind, budget_ms=1.0)), rules)
        assert np.array_equal(pos.game, view.games) and np.array_equal(pos.keys, view.keys)
        assert np.array_equal(pos.roll, view.roll) and np.array_equal(pos.sheet, msgs.sheet_columns(view))
    with pytest.raises(UserError, match="dice"):
        msgs.read_positions(
            {"kind": "box", "dice": ["1234"], "game": [0], "seat": 0, "turn": 1, "sheet": [[-1] * rules.n_boxes]}, rules
        )


# ---------------------------------------------------------------------------------------------
# the referee, with real subprocesses


def test_a_null_engine_plays_the_games_its_in_process_twin_plays_to_the_bit(tmp_path, monkeypatch):
    import harness.game.registry as registry

    registry.register(NullTwin)
    cfg = RunConfig(seats=(engine_spec(NULL), "greedy"), rules="yahtzee", games=300, seed=11, chunk_size=100, workers=2)
    a = run(cfg, tmp_path / "engine")
    b = run(cfg.with_overrides(seats=("null-twin", "greedy"), workers=1), tmp_path / "twin")
    ra, rb = rows(a), rows(b)
    cols = [c for c in rb.columns if c != "strategy"]
    pd.testing.assert_frame_equal(ra[cols], rb[cols])
    assert faults(a) == {
        "games": 300,
        "engine_decisions": 300 * 26,
        "faults_time": 0,
        "faults_illegal": 0,
        "faults_crash": 0,
        "faults_stall": 0,
        "corrupted": 0,
    }
    m = json.loads((a / "manifest.json").read_text())
    eng = m["engines"]["bot"]
    assert eng["handshake"]["name"] == "null" and eng["command"][-1].endswith("null_engine.py")
    assert eng["files"] == {
        str(ENGINES / "null_engine.py"): __import__("hashlib")
        .sha256((ENGINES / "null_engine.py").read_bytes())
        .hexdigest()
    }
    assert (a / "engines").is_dir() and list((a / "engines").glob("bot.*.stderr.log"))


FAULT_CASES = [
    # mode, the kind every decision of request 3 (10 games' first keep of turn 2) is counted as
    ("sleep", "time"),
    ("hang", "stall"),
    ("exit", "crash"),
    ("garbage", "illegal"),
    ("illegal", "illegal"),
    ("wronggame", "illegal"),
    ("flood", "illegal"),
]


@pytest.mark.parametrize("mode,kind", FAULT_CASES)
def test_each_fault_is_counted_by_kind_and_answered_by_the_time_out_policy(tmp_path, mode, kind):
    # 10 games in one batch: request 3 of the engine's process is turn 2's first keep of all 10
    stall = 600 if mode == "hang" else 5000
    # the marker: the bug happens once, not again in the engine the referee restarts
    spec = engine_spec(misbehave(mode, 3, tmp_path / "marker"), move_ms=1, margin_ms=300, stall_ms=stall)
    out = run(
        RunConfig(seats=(spec, "greedy"), rules="scandinavian", games=10, seed=5, chunk_size=10, workers=1),
        tmp_path / "r",
    )
    got = faults(out)
    expect = dict.fromkeys(("faults_time", "faults_illegal", "faults_crash", "faults_stall"), 0)
    expect[f"faults_{kind}"] = 10
    assert {k: got[k] for k in expect} == expect
    assert got["engine_decisions"] == 300 and got["corrupted"] == 0
    r = rows(out)
    assert (r.loc[r.seat == 0, f"faults_{kind}"] == 1).all() and r.loc[r.seat == 1, "engine_decisions"].eq(0).all()
    # the fallback of a keep is "keep every die": the null engine's own answer, so the games equal
    # the well-behaved engine's game for game
    ok = run(
        RunConfig(
            seats=(engine_spec(NULL), "greedy"), rules="scandinavian", games=10, seed=5, chunk_size=10, workers=1
        ),
        tmp_path / "ok",
    )
    assert rows(ok)["total"].tolist() == r["total"].tolist()
    if kind in ("time", "crash", "stall"):
        journal = (out / "engines" / "faults.jsonl").read_text().splitlines()
        assert len(journal) == 10 and all(json.loads(x)["kind"] == kind for x in journal)


def test_a_report_of_a_run_with_an_engine_says_why_it_has_no_exact_figures(tmp_path, capsys):
    out = run(
        RunConfig(seats=(engine_spec(NULL), "greedy"), rules="forced", games=20, seed=5, chunk_size=10, workers=1),
        tmp_path / "run",
    )
    capsys.readouterr()
    assert cli(["report", str(out), "--json", "--no-plots"]) == 0
    exact = json.loads(capsys.readouterr().out)["exact"]
    assert exact == {
        "available": False,
        "why": "bot is an external engine (the harness knows its play only from "
        "its answers), so this run's figures are sampled only",
    }


def test_a_batch_over_the_engines_maximum_goes_in_parts(tmp_path):
    # the engine refuses more than 3 positions a request (its hello says so): 10 games, no fault
    out = run(
        RunConfig(
            seats=(engine_spec(f"{NULL} --max-batch 3"), "greedy"),
            rules="scandinavian",
            games=10,
            seed=5,
            chunk_size=10,
            workers=1,
        ),
        tmp_path / "r",
    )
    assert faults(out)["faults_illegal"] == 0 and faults(out)["engine_decisions"] == 300
    out = run(
        RunConfig(
            seats=(engine_spec(NULL, max_batch=4), "greedy"),
            rules="scandinavian",
            games=10,
            seed=5,
            chunk_size=10,
            workers=1,
        ),
        tmp_path / "r2",
    )
    assert rows(out)["total"].tolist() == rows(tmp_path / "r")["total"].tolist()


def test_a_box_fault_is_answered_with_the_largest_immediate_gain(tmp_path):
    # request 2 is turn 1's box: the time-out bot's box replaces the null engine's first allowed box
    spec = engine_spec(misbehave("illegal", 2))
    out = run(
        RunConfig(seats=(spec,), rules="scandinavian", games=10, seed=5, chunk_size=10, workers=1), tmp_path / "r"
    )
    assert faults(out)["faults_illegal"] == 10
    rules = load_rules("scandinavian")
    trace: list[dict] = []
    play(rules, [make("timeout", rules)], np.array([3]), 5, trace=trace)
    first_box = next(e for e in trace if e["event"] == "box")
    assert rows(out).loc[3, first_box["box"]] == first_box["score"]


def test_a_game_past_its_clock_plays_time_out_without_asking(tmp_path):
    # 30 ms an answer, 200 ms a game: after about 7 decisions the game's clock is spent, and every
    # later decision of that game is a time fault the engine is not asked (1 game a batch)
    spec = engine_spec(misbehave("slow", 0), game_ms=200, move_ms=100)
    out = run(RunConfig(seats=(spec,), rules="scandinavian", games=2, seed=1, chunk_size=1, workers=1), tmp_path / "r")
    f, r = faults(out), rows(out)
    assert f["engine_decisions"] == 60 and f["faults_illegal"] == f["faults_crash"] == f["faults_stall"] == 0
    asked = 30 - r["faults_time"]
    assert ((asked >= 5) & (asked <= 9)).all(), r["faults_time"].tolist()
    assert r["corrupted"].all()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux enforces it")
def test_an_engine_over_its_memory_cap_crashes_and_is_restarted(tmp_path):
    spec = engine_spec(misbehave("hog", 3, tmp_path / "marker"), memory_mb=400)
    out = run(
        RunConfig(seats=(spec,), rules="scandinavian", games=10, seed=1, chunk_size=10, workers=1), tmp_path / "r"
    )
    f = faults(out)
    assert f["faults_crash"] == 10 and f["faults_time"] == f["faults_illegal"] == f["faults_stall"] == 0
    log = "".join(p.read_text() for p in (out / "engines").glob("bot.*.stderr.log"))
    assert "MemoryError" in log


def test_stderr_is_logged_and_capped(tmp_path):
    spec = engine_spec(misbehave("stderr"), stderr_kb=64)
    out = run(RunConfig(seats=(spec,), rules="scandinavian", games=4, seed=1, chunk_size=4, workers=1), tmp_path / "r")
    logs = list((out / "engines").glob("bot.*.stderr.log"))
    assert len(logs) == 1
    text = logs[0].read_text()
    assert "stderr capped at 65,536 bytes" in text and len(text) < 70_000
    assert faults(out)["faults_illegal"] == 0


def test_an_engine_over_its_share_of_corrupted_games_is_disqualified_in_one_line(tmp_path, capsys):
    spec = engine_spec(misbehave("illegal", 0), min_games=5)
    code = cli(
        [
            "run",
            "--seats",
            f"{spec},greedy",
            "--games",
            "40",
            "--chunk-size",
            "10",
            "--workers",
            "1",
            "--quiet",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    line = next(x for x in err.splitlines() if "disqualified" in x)
    n = int(re.search(r"disqualified: (\d+) of \1 games corrupted \(100.0 % > 10 %", line).group(1))
    assert n in (10, 20) and f"illegal {30 * n}" in line
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert not m["complete"] and len(m["chunks"]) >= 1


def test_an_engine_that_cannot_start_fails_the_run_at_once_in_one_line(tmp_path, capsys):
    code = cli(
        [
            "run",
            "--seats",
            'engine:cmd="no-such-engine-binary --x",greedy',
            "--games",
            "10",
            "--quiet",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "cannot start 'no-such-engine-binary --x'" in err and len(err.strip().splitlines()) == 1
    code = cli(
        [
            "run",
            "--rules",
            "maxi",
            "--seats",
            f'engine:cmd="{misbehave("none")}",greedy',
            "--games",
            "10",
            "--quiet",
            "--out",
            str(tmp_path / "r2"),
        ]
    )
    assert code == 0  # claims "*"


def test_a_resumed_run_replays_the_journalled_timing_faults(tmp_path):
    # the first invocation sleeps past the budget once (the marker), the chunk's faults are journalled
    marker = tmp_path / "slept"
    spec = engine_spec(misbehave("sleep", 3, marker), move_ms=1, margin_ms=300, stall_ms=5000)
    cfg = RunConfig(seats=(spec, "greedy"), rules="scandinavian", games=20, seed=9, chunk_size=10, workers=1)
    out = run(cfg, tmp_path / "r")
    assert faults(out)["faults_time"] == 10
    whole = rows(out)
    # as if the run had been killed before its first chunk was recorded: it plays again on resume,
    # with an engine that no longer sleeps (the marker), and the journal makes it fault the same
    m = json.loads((out / "manifest.json").read_text())
    lost = next(c for c in m["chunks"] if c["start"] == 0)
    (out / "chunks" / Path(lost["file"]).name).unlink() if "file" in lost else None
    for f in (out / "chunks").glob("*00000000*"):
        f.unlink()
    m["chunks"] = [c for c in m["chunks"] if c["start"] != 0]
    m["complete"] = False
    m.pop("totals")
    m.pop("faults")
    (out / "manifest.json").write_text(json.dumps(m))
    run(cfg, out, resume=True)
    assert faults(out)["faults_time"] == 10
    pd.testing.assert_frame_equal(rows(out), whole)


def _engine_pids(tag: str) -> list[int]:
    got = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout.split()
    return [int(x) for x in got]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_run_with_engines_resumes_after_sigkill_and_leaves_no_engine_behind(tmp_path):
    tag = f"tag{os.getpid()}x{time.time_ns() % 10**6}"
    cmd = f"{sys.executable} {ENGINES / 'null_engine.py'} {tag}"
    argv = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        "--rules",
        "scandinavian",
        "--seats",
        f'engine:cmd="{cmd}",name=bot,greedy',
        "--games",
        "3000",
        "--chunk-size",
        "100",
        "--workers",
        "2",
        "--seed",
        "4",
        "--quiet",
    ]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.Popen([*argv, "--out", str(tmp_path / "killed")], env=env, start_new_session=True)
    chunks = tmp_path / "killed" / "chunks"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(chunks.glob("*.parquet")) if chunks.is_dir() else []) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)
    assert not _engine_pids(tag), "engine processes outlived the run"
    assert subprocess.run([*argv, "--resume", str(tmp_path / "killed")], env=env).returncode == 0
    assert subprocess.run([*argv, "--out", str(tmp_path / "whole")], env=env).returncode == 0
    pd.testing.assert_frame_equal(rows(tmp_path / "killed"), rows(tmp_path / "whole"))
    assert not _engine_pids(tag)


# ---------------------------------------------------------------------------------------------
# HTTP


class _NullHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - the standard library's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        try:
            msg = json.loads(body)
            t = msg.get("type")
            reply = (
                null_engine.HELLO
                if t == "hello"
                else {"type": "ready", "id": msg.get("id")}
                if t == "newgame"
                else null_engine.answer(msg)
                if t == "decide"
                else {"type": "pong", "id": msg.get("id")}
                if t == "ping"
                else {"type": "error", "message": f"unknown type {t!r}"}
            )
        except (ValueError, KeyError, AttributeError, StopIteration) as exc:
            reply = {"type": "error", "message": repr(exc)}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_the_same_messages_over_http(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NullHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/decide"
        cfg = RunConfig(
            seats=(f"engine:url={url},name=bot", "greedy"),
            rules="scandinavian",
            games=50,
            seed=2,
            chunk_size=50,
            workers=1,
        )
        a = run(cfg, tmp_path / "http")
        b = run(cfg.with_overrides(seats=(engine_spec(NULL), "greedy")), tmp_path / "stdio")
        pd.testing.assert_frame_equal(rows(a).drop(columns="strategy"), rows(b).drop(columns="strategy"))
        assert faults(a)["faults_crash"] == 0
        report = check_engine(f"engine:url={url}", rules=["yahtzee"], games=2)
        assert report.passed, report.failures
    finally:
        server.shutdown()
        server.server_close()
    # nobody there now: every decision is a crash fault, the run still ends (and the engine is out)
    cfg = RunConfig(
        seats=(f"engine:url={url},name=bot,min_games=100",),
        rules="scandinavian",
        games=5,
        seed=2,
        chunk_size=5,
        workers=1,
    )
    with pytest.raises(UserError, match="cannot reach"):
        run(cfg, tmp_path / "gone")


# ---------------------------------------------------------------------------------------------
# engine check


def test_engine_check_passes_a_conforming_engine(capsys):
    code = cli(
        ["engine", "check", str(ENGINES / "null_engine.py"), "--rules", "yahtzee,maxi,generala,forced", "--games", "3"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "maxi (saved_rolls)  keep with saved rolls (5 rerolls left)" in out
    assert "box, all alike with the key box scratched (face box filled: the joker)" in out
    assert "box on the turn's first roll (servida)" in out and "box, forced order (one box allowed)" in out
    assert out.strip().splitlines()[-1].endswith("passed, 0 failed")


@pytest.mark.parametrize(
    "mode,found",
    [
        ("badjoker", "all alike with the key box holding its score (face box open)"),
        ("illegal", "is not a legal keep"),
        ("wronggame", "an answer for other games"),
        ("sleep", "budget 24.0 + margin 100 ms"),
        ("random", "answers must depend on the position only"),
    ],
)
def test_engine_check_fails_an_engine_with_one_bug(capsys, mode, found):
    code = cli(["engine", "check", misbehave(mode, 0), "--rules", "yahtzee", "--games", "0", "--move-ms", "1"])
    out = capsys.readouterr().out
    assert code == 1
    assert found in "\n".join(x for x in out.splitlines() if "FAIL" in x), out
