"""``serve`` and ``engine play``: the harness's levels as engines, checked in a closed loop."""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from harness.cli import main as cli
from harness.play.protocol import messages as msgs
from harness.service.app import ServeApp, build
from harness.play.protocol.http import launch_server
from harness.play.runner import RunConfig, run

ROOT = Path(__file__).resolve().parent.parent
LEVELS_TOML = """
rules = "forced"
strategy = "solver"
param = "temperature"
lo = 0.0
hi = 10.0
against = "solver:temperature=1"
exact = true

[[level]]
name = "casual"
target_win_rate = 0.4

[[level]]
name = "expert"
target_mean = 140
"""


@pytest.fixture(scope="module")
def levels(tmp_path_factory) -> Path:
    """A levels.json of two exact levels on Forced Yatzy (calibrate --levels, seconds)."""
    d = tmp_path_factory.mktemp("levels")
    (d / "levels.toml").write_text(LEVELS_TOML)
    assert cli(["calibrate", "--levels", str(d / "levels.toml"), "--out", str(d / "out")]) == 0
    return d / "out" / "levels.json"


@pytest.fixture(scope="module")
def server(levels, tmp_path_factory):
    """A real server process on a free port (the levels and scandinavian), stopped after."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc, url = launch_server(["--levels", str(levels), "--rules", "scandinavian"], env=env)
    yield url, proc
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)


def level_spec(levels: Path, name: str) -> str:
    return next(lv["spec"] for lv in json.loads(levels.read_text())["levels"] if lv["name"] == name)


def rows(out: Path) -> pd.DataFrame:
    r = pd.read_parquet(out / "chunks").sort_values(["game", "seat"]).reset_index(drop=True)
    return r.drop(
        columns=[
            c
            for c in r.columns
            if c in ("strategy", "lineup") or c.startswith(("faults_", "engine_")) or c == "corrupted"
        ]
    )


# ---------------------------------------------------------------------------------------------
# the closed loop: served play equals in-process play, to the bit


@pytest.mark.parametrize(
    "rules,query,spec_of",
    [
        ("forced", "level=casual", lambda lv: level_spec(lv, "casual")),  # a randomised level (softmax)
        ("scandinavian", "bot=solver", lambda lv: "solver"),  # the solver, another rule set
    ],
)
def test_a_served_level_plays_the_in_process_games_to_the_bit(server, levels, tmp_path, rules, query, spec_of):
    url, _ = server
    spec = spec_of(levels)
    served = run(
        RunConfig(
            seats=(f"engine:url={url}/decide?{query},name=served", spec),
            rules=rules,
            games=600,
            seed=8,
            chunk_size=200,
            workers=2,
        ),
        tmp_path / "served",
    )
    local = run(
        RunConfig(seats=(spec, spec), rules=rules, games=600, seed=8, chunk_size=200, workers=2), tmp_path / "local"
    )
    pd.testing.assert_frame_equal(rows(served), rows(local))
    f = json.loads((served / "manifest.json").read_text())["faults"]["served"]
    assert f["engine_decisions"] > 600 * 15 and sum(f[k] for k in f if k.startswith("faults_")) == 0


def test_a_served_level_lies_within_its_interval_of_its_exact_mean(server, levels, tmp_path, capsys):
    url, _ = server
    spec = level_spec(levels, "expert")
    assert cli(["evaluate", "forced", "--entrants", spec, "--json"]) == 0
    exact = json.loads(capsys.readouterr().out)["bots"][0]["mean"]
    out = run(
        RunConfig(
            seats=(f"engine:url={url}/decide?level=expert,name=served",),
            rules="forced",
            games=20_000,
            seed=21,
            chunk_size=10_000,
            workers=2,
        ),
        tmp_path / "r",
    )
    t = pd.read_parquet(out / "chunks")["total"].to_numpy(dtype=float)
    half = 3.29 * t.std(ddof=1) / math.sqrt(len(t))  # 99.9 %
    assert abs(t.mean() - exact) <= half, (t.mean(), exact, half)
    assert abs(exact - 140) < 1e-4  # the level's target mean, exactly


def test_engine_play_is_an_engine_that_passes_engine_check(levels, capsys):
    cmd = f"{sys.executable} -m harness.cli engine play --level casual --levels {levels}"
    assert cli(["engine", "check", cmd, "--games", "3"]) == 0, capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# the HTTP surface


def test_health_levels_openapi_and_docs_work_offline(server):
    url, _ = server
    h = httpx.get(f"{url}/health").json()
    assert h["status"] == "ok" and h["levels"] == ["casual", "expert"]
    prov = h["provenance"]
    assert prov["harness"] and len(prov["levels_sha256"]) == 64
    lv = httpx.get(f"{url}/levels").json()
    assert [x["name"] for x in lv["levels"]] == ["casual", "expert"] and "engine" not in lv["bots"]
    doc = httpx.get(f"{url}/openapi.json").json()
    assert doc["openapi"].startswith("3.1") and "/decide" in doc["paths"] and "decide" in doc["components"]["schemas"]
    page = httpx.get(f"{url}/docs").text
    assert "/decide" in page and "<script" not in page and "src=" not in page and "<link" not in page


def test_decide_answers_with_provenance(server):
    url, _ = server
    body = {
        "type": "decide",
        "id": 4,
        "kind": "keep",
        "bot": "solver",
        "rules": {"name": "scandinavian"},
        "game": [1, 2],
        "seed": 5,
        "seat": 0,
        "turn": 1,
        "step": 1,
        "rolls_left": 2,
        "dice": ["66612", "12345"],
        "sheet": [[-1] * 15, [-1] * 15],
    }
    r = httpx.post(f"{url}/decide", json=body)
    assert r.status_code == 200
    a = r.json()
    assert a["type"] == "answer" and a["game"] == [1, 2] and a["keep"][1] == "12345"
    assert a["provenance"]["table"].startswith(a["provenance"]["rules_digest"][:16]) or a["provenance"]["table"]
    assert r.headers["x-yatzy-harness"] == a["provenance"]["harness"]
    adv = httpx.post(f"{url}/advise", json=body).json()
    opts = adv["positions"][1]["options"]
    assert opts[0]["regret"] == 0 and opts[0]["keep"] == [5, 4, 3, 2, 1] and all(o["regret"] >= 0 for o in opts)


BAD = [
    (b"{not json", 400, "bad_json"),
    (b"[1, 2]", 400, "bad_request"),
    (b'{"type": "bogus"}', 400, "bad_type"),
    (b'{"bot": "greedy", "rules": "scandinavian", "dice": ["11111"]}', 400, "bad_request"),
    (
        b'{"type": "decide", "bot": "greedy", "rules": {"name": "../../etc/passwd"}, "dice": ["11111"]}',
        422,
        "unknown_rules",
    ),
    (b'{"type": "decide", "bot": "greedy", "rules": {"name": "yahtzee"}, "dice": ["11111"]}', 422, "rules_not_served"),
    (b'{"type": "decide", "bot": "engine:cmd=ls", "rules": "scandinavian", "dice": ["11111"]}', 422, "not_served"),
    (b'{"type": "decide", "bot": "winprob", "rules": "scandinavian", "dice": ["11111"]}', 422, "not_served"),
    # the closed set: a bot the server was not started with is refused, never made (no table solved)
    (b'{"type": "decide", "bot": "solver:target=200", "rules": "scandinavian", "dice": ["11111"]}', 422, "not_served"),
    (
        b'{"type": "decide", "bot": "solver:temperature=1", "rules": "scandinavian", "dice": ["11111"]}',
        422,
        "not_served",
    ),
    (b'{"type": "decide", "level": "nope", "rules": "forced", "dice": ["11111"]}', 422, "unknown_level"),
    (b'{"type": "decide", "level": "casual", "rules": "scandinavian", "dice": ["11111"]}', 422, "level_rules"),
    (
        b'{"type": "decide", "bot": "greedy", "rules": {"name": "scandinavian", "settings": {"columns": 99}}, '
        b'"dice": ["11111"]}',
        422,
        "bad_settings",
    ),
    (
        b'{"type": "decide", "kind": "box", "bot": "greedy", "rules": "scandinavian", "dice": ["1111"], "game": [0], '
        b'"seat": 0, "turn": 1, "sheet": [[-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1]]}',
        422,
        "bad_positions",
    ),
    (
        b'{"type": "decide", "kind": "box", "bot": "greedy", "rules": "scandinavian", "dice": ["11111"], "game": [0], '
        b'"seat": 0, "turn": 3, "sheet": [[-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1]]}',
        422,
        "bad_positions",
    ),
]


@pytest.mark.parametrize("body,status,error", BAD)
def test_every_bad_request_gets_a_4xx_with_a_one_line_json_error(server, body, status, error):
    url, _ = server
    r = httpx.post(f"{url}/decide", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status, r.text
    assert r.json()["error"]["id"] == error and "\n" not in r.text and "Traceback" not in r.text
    assert r.headers["x-yatzy-harness"] and len(r.headers["x-levels-sha256"]) == 64  # provenance, errors too


def test_size_limits_and_methods(server):
    url, _ = server
    r = httpx.post(f"{url}/decide", content=b"x" * (9 << 20))
    assert r.status_code == 413 and r.json()["error"]["id"] == "too_large"
    n = 10_001
    body = {
        "type": "decide",
        "kind": "box",
        "bot": "greedy",
        "rules": "scandinavian",
        "dice": ["11111"] * n,
        "game": list(range(n)),
        "seat": 0,
        "turn": 1,
        "sheet": [[-1] * 15] * n,
    }
    r = httpx.post(f"{url}/decide", json=body, timeout=30)
    assert r.status_code == 413 and "at most 10,000" in r.json()["error"]["message"]
    assert httpx.get(f"{url}/decide").status_code == 405
    assert httpx.get(f"{url}/nowhere").json()["error"]["id"] == "not_found"


def _app(levels: Path, **conf) -> ServeApp:
    served = build({"levels": str(levels), "rules": ["scandinavian"], **conf})
    served.warm()
    return served


def test_a_token_is_needed_when_the_server_has_one(levels, tmp_path):
    tok = tmp_path / "token"
    tok.write_text("s3cret-s3cret-s3cret\n")
    app = _app(levels, token_file=str(tok)).app
    with TestClient(app) as c:
        assert c.post("/decide", json={"type": "ping", "id": 1}).status_code == 401
        assert c.get("/levels").status_code == 401
        assert c.get("/health").status_code == 200
        ok = c.post("/decide", json={"type": "ping", "id": 1}, headers={"Authorization": "Bearer s3cret-s3cret-s3cret"})
        assert ok.json() == {"type": "pong", "id": 1}


def test_an_internal_fault_is_a_logged_500_without_a_traceback(levels, caplog):
    served = _app(levels)

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the service")

    served.service.handle = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, logger="harness.serve"):
        with TestClient(served.app, raise_server_exceptions=False) as c:
            r = c.post("/decide", json={"type": "ping", "id": 1})
    assert r.status_code == 500 and r.json()["error"]["id"] == "internal"
    assert "Traceback" not in r.text and "a bug in the service" not in r.text
    assert any("a bug in the service" in str(rec.exc_info[1]) for rec in caplog.records if rec.exc_info)


def _decide_bodies() -> st.SearchStrategy:
    """Bodies shaped by the schema's decide message: every property, each either well-formed or
    not (wrong types, wrong lengths, out-of-range values, missing)."""
    props = msgs.schema()["$defs"]["decide"]["properties"]
    junk = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=True),
        st.text(max_size=8),
        st.lists(st.integers(-5, 70), max_size=4),
        st.lists(st.lists(st.integers(-3, 60), max_size=16), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    )
    good = {
        "type": st.just("decide"),
        "kind": st.sampled_from(["keep", "box", "x"]),
        "rules": st.sampled_from([{"name": "scandinavian"}, {"name": "forced"}, "scandinavian", {"name": 3}]),
        "bot": st.sampled_from(["greedy", "solver", "solver:temperature=-1", "random", "nope"]),
        "dice": st.lists(st.text(alphabet="1234567", min_size=4, max_size=6), min_size=1, max_size=3),
        "sheet": st.lists(st.lists(st.integers(-2, 60), min_size=14, max_size=16), min_size=1, max_size=3),
        "game": st.lists(st.integers(-1, 5), min_size=1, max_size=3),
        "key": st.lists(st.text(alphabet="0123456789abcdefg", min_size=15, max_size=17), min_size=1, max_size=3),
    }
    fields = {k: st.one_of(good.get(k, junk), junk) for k in props}
    return st.fixed_dictionaries({}, optional=fields)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(body=_decide_bodies())
def test_fuzzed_request_bodies_never_get_a_500(fuzz_client, body):
    r = fuzz_client.post(
        "/decide", content=json.dumps(body, allow_nan=True), headers={"Content-Type": "application/json"}
    )
    assert r.status_code < 500, (body, r.text)
    if r.status_code >= 400:
        assert set(r.json()) == {"error"}


@pytest.fixture(scope="module")
def fuzz_client(levels):
    app = _app(levels).app
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def test_sigterm_lets_the_request_in_flight_finish(levels, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc, url = launch_server(["--rules", "scandinavian"], env=env, stderr=subprocess.DEVNULL)
    try:
        n = 1000  # /advise on a thousand positions: long enough to be in flight when SIGTERM comes
        gen = np.random.default_rng(1)
        dice = ["".join(sorted(str(x) for x in gen.integers(1, 7, 5))) for _ in range(n)]
        body = {
            "type": "decide",
            "kind": "keep",
            "rules": "scandinavian",
            "dice": dice,
            "game": list(range(n)),
            "seat": 0,
            "turn": 1,
            "step": 1,
            "rolls_left": 2,
            "sheet": [[-1] * 15] * n,
        }
        import threading

        got: dict = {}
        t = threading.Thread(target=lambda: got.update(r=httpx.post(f"{url}/advise", json=body, timeout=60)))
        t.start()
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        t.join(60)
        assert got["r"].status_code == 200 and len(got["r"].json()["positions"]) == n
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once drained
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_first_start_compiles_the_bots_kernels_in_a_helper_while_it_solves(monkeypatch, levels):
    """serve forks a kernel helper only on a first start: where a served bot's set-up will solve a
    table (every player's kernels; the tables solved first), or where levels are served beside
    bots, nothing is cached and a core is free (the bots' kernels; the levels made first); prepare waits for it
    before the first player it compiles for."""
    from harness.service import serve as S
    from harness.util import jit, progress

    forked: list[Any] = []
    said: list[str] = []
    monkeypatch.setattr(jit, "fork_helper", lambda target, *a, **k: forked.append(target) or "proc")
    monkeypatch.setattr(
        jit, "await_helper", lambda: jit.has_helper() and (said.append("await") or jit.set_helper(None))
    )
    monkeypatch.setattr(S, "engine_cached", lambda: True)
    svc = S.Service(rules=("forced",))
    assert not svc.kernel_helper() and forked == []  # forced's table ships with the package
    bot = next(s.bot for s in svc.players() if s.spec == "solver")
    monkeypatch.setattr(type(bot), "slow_prepare", lambda self: self._sol is None)
    assert svc.kernel_helper() and len(forked) == 1
    svc.prepare(said.append, measure=False)
    assert said == ["bot solver on forced", "await", "bot greedy on forced"]
    assert not jit.has_helper()
    monkeypatch.undo()

    monkeypatch.setattr(jit, "fork_helper", lambda target, *a, **k: forked.append(target) or "proc")
    monkeypatch.setattr(
        jit, "await_helper", lambda: jit.has_helper() and (said.append("await") or jit.set_helper(None))
    )
    svc = S.Service(str(levels))
    monkeypatch.setattr(S, "engine_cached", lambda: True)
    assert not svc.kernel_helper()  # the kernels are cached
    monkeypatch.setattr(S, "engine_cached", lambda: False)
    monkeypatch.setattr(jit, "core_free", lambda: False)
    assert not svc.kernel_helper()  # no core free: a helper would only add its CPU
    monkeypatch.setattr(jit, "core_free", lambda: True)
    assert svc.kernel_helper()
    said.clear()
    svc.prepare(said.append, measure=False)
    levels_first = [f"level {name}" for name in svc.levels]
    assert levels_first and [x.split(":")[0] for x in said] == [*levels_first, "await", *said[-2:]]
    assert said[-2:] == ["bot greedy on forced", "bot solver on forced"]

    was = progress.enabled()
    try:  # what the helper runs (here its kernels load from numba's cache)
        forked[-1]()
    finally:
        progress.enable(was)
