"""``serve`` as an operator and a hostile client meet it (issue 48): real processes and sockets.

Each test states a failure of the server before issue 48 and checks its fix: budgets refused
before any work, cheap requests beside expensive ones, the closed set of bots, readiness apart
from liveness, slow bodies and idle connections, tokens, request ids and access logs, metrics,
a reload under load, proxy headers. Nothing here asserts a latency: a refusal is checked by its
stable error id, which says it was decided before any work.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from harness.cli import main as cli
from harness.game.rules import load_rules
from harness.play.protocol import messages as msgs
from harness.play.protocol.http import free_port
from harness.service.serve import RequestError, Service, sample_request

ROOT = Path(__file__).resolve().parent.parent
TOKENS = ("first-token-0123456789", "second-token-9876543210")
AUTH = {"Authorization": f"Bearer {TOKENS[0]}"}
LEVELS = {
    "format": "yatzy-levels/1",
    "rules": "scandinavian",
    "settings": [],
    "levels": [{"name": "casual", "spec": "solver:temperature=2"}, {"name": "expert", "spec": "solver"}],
}


class Server:
    """``yatzy-harness serve ARGS`` on a free port, its stderr in a file; what /health and /ready
    answered while it started."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "serve", *args, "--port", str(self.port)],
            env=env,
            stderr=log.open("wb"),
        )
        self.seen: list[tuple[str, int]] = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"serve exited: {log.read_text()[-2000:]}"
            for path in ("/health", "/ready"):
                try:
                    st = raw_get(self.port, path)
                except OSError:
                    continue
                if not self.seen or self.seen[-1] != (path, st):
                    self.seen.append((path, st))
            if ("/ready", 200) in self.seen:
                return
            time.sleep(0.02)
        raise AssertionError("serve was not ready in 300 s")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)

    def text(self) -> str:
        return self.log.read_text(errors="replace")


def raw_get(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def raw_exchange(port: int, data: bytes, timeout: float = 30) -> bytes:
    """Send raw bytes; everything the server sends back until it closes (or ``timeout``)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
                if b"\r\n\r\n" in out and _complete(out):
                    break
        except TimeoutError:
            pass
        return out


def _complete(resp: bytes) -> bool:
    head, _, body = resp.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def decide_body(kind: str, n: int, bot: str | None = None, level: str | None = None, seed: int = 1) -> dict:
    msg = sample_request(load_rules("scandinavian"), kind, n, np.random.default_rng(seed))
    msg = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in msg.items()}
    if bot:
        msg["bot"] = bot
    if level:
        msg["level"] = level
    return msg


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("prod")
    (d / "tokens").write_text("\n".join(TOKENS) + "\n")
    (d / "levels.json").write_text(json.dumps(LEVELS))
    return d


@pytest.fixture(scope="module")
def server(files):
    """Levels and two bots, two tokens, a queue of 2 a lane, 1 s for a body and for a request's head."""
    srv = Server(
        [
            "--levels",
            str(files / "levels.json"),
            "--bot",
            "greedy",
            "--bot",
            "solver",
            "--token-file",
            str(files / "tokens"),
            "--queue",
            "2",
            "--body-timeout",
            "1",
            "--idle-timeout",
            "1",
            "--access-log",
        ],
        files / "serve.log",
    )
    yield srv
    srv.stop()


# ---------------------------------------------------------------------------------------------
# readiness: the port answers at once, /ready says when the tables are warm


def test_health_answers_while_warming_up_and_ready_only_once_warm(server):
    # before: the port opened only after warm-up, so /health was never seen answering 503 or "starting"
    seen = server.seen
    assert seen[0] == ("/health", 200), seen
    assert ("/ready", 503) in seen and seen.index(("/ready", 503)) < seen.index(("/ready", 200)), seen
    h = httpx.get(f"{server.url}/health").json()
    assert h["status"] == "ok" and httpx.get(f"{server.url}/ready").json() == {"status": "ready"}


# ---------------------------------------------------------------------------------------------
# the closed set of bots


def test_a_bot_outside_the_closed_set_is_refused_at_once(server):
    # before: solver:target=200 solved its table inside the request (40.7 s) while every other request timed out
    for bot in ("solver:target=200", "solver:temperature=0.5", "bonus", "engine:cmd=ls"):
        r = httpx.post(f"{server.url}/decide", json=decide_body("keep", 1, bot=bot), headers=AUTH)
        assert r.status_code == 422 and r.json()["error"]["id"] == "not_served", (bot, r.text)
    # another spelling of a served bot's parameters is that bot
    r = httpx.post(f"{server.url}/decide", json=decide_body("keep", 1, bot="solver:temperature=0.0"), headers=AUTH)
    assert r.status_code == 200 and r.json()["provenance"]["bot"] == "solver"


# ---------------------------------------------------------------------------------------------
# lanes: a cheap request never waits behind an expensive one; the app's own queue cap


def test_cheap_requests_are_answered_while_expensive_ones_run(server):
    # before: one thread (CapacityLimiter(1)) took requests in turn, so a single decision waited for
    # every batch ahead of it
    big = decide_body("keep", 10_000, bot="greedy", seed=3)
    singles = [decide_body("keep", 1, level="expert", seed=10 + i) for i in range(5)]
    done: dict[str, float] = {}
    statuses: list[int] = []

    def expensive(i: int) -> None:
        r = httpx.post(f"{server.url}/decide", json=big, headers=AUTH, timeout=120)
        statuses.append(r.status_code)
        done[f"expensive{i}"] = time.monotonic()

    threads = [threading.Thread(target=expensive, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.2)  # both batches sent: over a second of greedy work on the expensive lane's thread
    cheap = []
    with httpx.Client(headers=AUTH, timeout=60) as c:
        for body in singles:
            r = c.post(f"{server.url}/decide", json=body)
            cheap.append((r.status_code, time.monotonic()))
    for t in threads:
        t.join(120)
    assert statuses == [200, 200] and all(st == 200 for st, _ in cheap), (statuses, cheap)
    assert cheap[0][1] < max(done.values()), "the single decisions waited for the batches"


def test_a_full_lane_answers_503_with_retry_after(server):
    big = decide_body("box", 10_000, bot="greedy", seed=4)
    got: list[httpx.Response] = []
    lock = threading.Lock()

    def send() -> None:
        r = httpx.post(f"{server.url}/decide", json=big, headers=AUTH, timeout=120)
        with lock:
            got.append(r)

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    full = [r for r in got if r.status_code == 503]
    assert full and all(r.json()["error"]["id"] == "queue_full" and int(r.headers["retry-after"]) >= 1 for r in full)
    assert sum(r.status_code == 200 for r in got) >= 2  # the lane holds two


# ---------------------------------------------------------------------------------------------
# connections and bodies


def test_a_slow_body_gets_a_json_408_and_one_log_line(server):
    # before: a body never finished held its request until the compute timeout, and an abandoned
    # upload was logged as a 500 with two tracebacks
    head = (
        f"POST /decide?bot=greedy HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKENS[0]}\r\n"
        f"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    ).encode()
    resp = raw_exchange(server.port, head + b'{"type": "decide", ', timeout=30)
    assert resp.startswith(b"HTTP/1.1 408"), resp[:200]
    assert json.loads(resp.partition(b"\r\n\r\n")[2])["error"]["id"] == "body_timeout"
    with socket.create_connection(("127.0.0.1", server.port)) as s:  # an upload abandoned half-way
        s.sendall(head + b'{"type": ')
        time.sleep(0.2)
    time.sleep(1.5)
    log = server.text()
    assert log.count("body not received in 1 s") == 1 and log.count("client left before sending") == 1, log[-3000:]
    assert "Traceback" not in log and '"status":500' not in log


@pytest.mark.parametrize("sent", [b"", b"POST /decide HTTP/1.1\r\nHost: x\r\n"], ids=["idle", "dripped head"])
def test_an_idle_connection_or_a_slowly_sent_head_is_closed(server, sent):
    # before: neither was ever closed (2,000 held for 20 s); a header line every 0.3 s kept a
    # connection open for good
    with socket.create_connection(("127.0.0.1", server.port), timeout=0.3) as s:
        s.sendall(sent)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20:
            try:
                if s.recv(1024) == b"":
                    return
            except TimeoutError:
                try:
                    if sent:
                        s.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    return
            except OSError:
                return
        pytest.fail("the connection was not closed in 20 s")


def test_what_uvicorn_answers_itself_is_never_a_500(server):
    for bad in (
        b"GARBAGE\r\n\r\n",
        b"POST /decide HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
    ):
        resp = raw_exchange(server.port, bad, timeout=10)
        assert resp.startswith(b"HTTP/1.1 400"), (bad, resp[:100])


# ---------------------------------------------------------------------------------------------
# authentication


@pytest.mark.parametrize(
    "content,why",
    [
        (b"", "empty"),
        (b"  \n\t\n", "empty or only whitespace"),
        (b"short-token\n", "under the 16"),
        (b"\xff\xfe-not-utf-8-at-all-here\n", "not UTF-8"),
    ],
)
def test_a_token_file_that_would_turn_authentication_off_refuses_to_start(tmp_path, capsys, content, why):
    # before: a whitespace-only file stripped to "" and the server ran with no authentication
    f = tmp_path / "token"
    f.write_bytes(content)
    assert cli(["serve", "--token-file", str(f), "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and why in err and "Traceback" not in err


@pytest.mark.parametrize(
    "header",
    [
        b"Authorization: Bearer \xc3\xa9\r\n",  # non-ASCII (a 500 before)
        b"Authorization: Bearer " + b"x" * 8000 + b"\r\n",  # huge
        b"Authorization: Bearer " + TOKENS[0].encode() + b"\r\nAuthorization: Bearer x\r\n",  # repeated
        b"Authorization: Basic Zm9vOmJhcg==\r\n",
        b"Authorization: Bearer \x80\xff\xfe\r\n",
        b"Authorization: \x01\x02\r\n",
        b"",
    ],
    ids=["non-ascii", "huge", "repeated", "basic", "not-utf-8", "control", "missing"],
)
def test_any_bad_authorization_header_gets_a_401(server, header):
    req = b"GET /levels HTTP/1.1\r\nHost: x\r\n" + header + b"Connection: close\r\n\r\n"
    resp = raw_exchange(server.port, req)
    assert resp.startswith(b"HTTP/1.1 401"), resp[:200]
    assert json.loads(resp.partition(b"\r\n\r\n")[2])["error"]["id"] == "unauthorised"


def test_every_route_but_health_and_ready_needs_the_token_and_both_tokens_work(server):
    # before: /openapi.json and /docs answered without the token
    for path in ("/openapi.json", "/docs", "/metrics", "/levels", "/nowhere"):
        assert httpx.get(f"{server.url}{path}").status_code == 401, path
    for path in ("/health", "/ready"):
        assert httpx.get(f"{server.url}{path}").status_code == 200
    for tok in TOKENS:  # rotation: either token of the file
        assert httpx.get(f"{server.url}/openapi.json", headers={"Authorization": f"Bearer {tok}"}).status_code == 200


# ---------------------------------------------------------------------------------------------
# request ids, access logs, metrics


def test_every_response_has_a_request_id_which_the_log_lines_carry(server):
    r = httpx.get(f"{server.url}/levels", headers={**AUTH, "X-Request-ID": "trace-42"})
    assert r.headers["x-request-id"] == "trace-42"
    made = httpx.get(f"{server.url}/nowhere").headers["x-request-id"]  # a 401: made here
    assert len(made) == 32
    assert (
        httpx.get(f"{server.url}/health", headers={"X-Request-ID": "bad id; drop"}).headers["x-request-id"]
        != "bad id; drop"
    )
    time.sleep(0.2)
    lines = [json.loads(x) for x in server.text().splitlines() if x.startswith("{")]
    mine = [x for x in lines if x["request_id"] == "trace-42"]
    assert mine and mine[0]["path"] == "/levels" and mine[0]["status"] == 200 and mine[0]["client"] == "127.0.0.1"
    assert any(x["request_id"] == made and x["status"] == 401 for x in lines)


def test_metrics_are_labelled_by_served_name_never_by_the_requests_spec(server):
    body = decide_body("keep", 3, bot="solver:temperature=0.000")
    assert httpx.post(f"{server.url}/decide", json=body, headers=AUTH).status_code == 200
    text = httpx.get(f"{server.url}/metrics", headers=AUTH).text
    assert 'yatzy_serve_positions_total{served="bot:solver"}' in text
    assert "temperature=0.000" not in text and "yatzy_serve_ready 1.0" in text
    assert 'yatzy_serve_refused_total{error="unauthorised"}' in text


# ---------------------------------------------------------------------------------------------
# the compute process: expensive requests and large bodies off the cheap lane's GIL


def children(pid: int) -> list[int]:
    """A process's living children (not the dead ones it has yet to reap), whichever of its threads forked them."""
    kids = [int(k) for task in Path(f"/proc/{pid}/task").iterdir() for k in (task / "children").read_text().split()]
    return [k for k in kids if Path(f"/proc/{k}/stat").read_text().rpartition(")")[2].split()[0] != "Z"]


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_a_batch_is_worked_out_by_the_compute_process_with_the_same_answers(server):
    # before: the server's own threads parsed a batch's body and read its positions holding the GIL
    # (9-14 ms and about 14 ms for 10,000 positions), stalling the cheap lane's every request
    (kid,) = children(server.proc.pid)
    big = decide_body("keep", 10_000, bot="solver", seed=21)
    before = cpu_ticks(kid)
    r = httpx.post(f"{server.url}/decide", json=big, headers=AUTH, timeout=120)
    assert r.status_code == 200, r.text
    assert cpu_ticks(kid) > before  # the compute process read and worked it out
    s = Service(None, ("scandinavian",), bots=("solver",))
    s.prepare(measure=False)
    assert r.json()["keep"] == s.handle(big)["keep"]
    assert r.headers["x-levels-sha256"] == httpx.get(f"{server.url}/levels", headers=AUTH).headers["x-levels-sha256"]


def test_a_compute_process_killed_holding_a_request_answers_503_and_is_forked_again(server):
    (kid,) = children(server.proc.pid)
    big = msgs.dumps(decide_body("box", 10_000, bot="greedy"))
    os.kill(kid, signal.SIGSTOP)  # it holds the request, unread, when it dies
    got: list[httpx.Response] = []
    t = threading.Thread(
        target=lambda: got.append(httpx.post(f"{server.url}/decide", content=big, headers=AUTH, timeout=60))
    )
    t.start()
    held = 'yatzy_serve_lane_requests{lane="expensive"} 1.0'
    deadline = time.monotonic() + 30
    while held not in httpx.get(f"{server.url}/metrics", headers=AUTH).text and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(kid, signal.SIGKILL)
    t.join(60)
    (r,) = got
    assert r.status_code == 503 and r.json()["error"]["id"] == "compute_lost", r.text
    assert r.headers["retry-after"] == "1"
    ok = httpx.post(f"{server.url}/decide", content=big, headers=AUTH, timeout=60)
    assert ok.status_code == 200
    (new,) = children(server.proc.pid)
    assert new != kid
    assert f"compute process {kid} ended; forking another" in server.text() and "Traceback" not in server.text()


def test_a_large_body_is_read_by_the_compute_process_never_by_the_servers(monkeypatch):
    from starlette.testclient import TestClient

    from harness.service.app import build

    served = build(
        {"rules": ["scandinavian"], "bots": ["greedy"], "expensive_process": True, "warm_before_serving": True}
    )
    with TestClient(served.app) as c:
        assert served.compute is not None and served.compute.current is not None
        big = msgs.dumps(decide_body("box", 2_000, bot="greedy", seed=23))
        single, small = decide_body("box", 1, bot="greedy"), decide_body("box", 40, bot="greedy")
        assert len(big) > 64 << 10
        read: list[int] = []
        loads = msgs.loads
        monkeypatch.setattr(msgs, "loads", lambda raw: read.append(len(raw)) or loads(raw))
        r = c.post("/decide", content=big)
        assert r.status_code == 200 and len(r.json()["box"]) == 2_000 and read == []
        hops: list[str] = []
        submit = served.lanes.submit
        monkeypatch.setattr(served.lanes, "submit", lambda lane, *a: hops.append(lane.name) or submit(lane, *a))
        r = c.post("/decide", json=single)  # a single decision: read here, and worked out on the event loop
        assert r.status_code == 200 and len(read) == 1 and hops == []
        r = c.post("/decide", json=small)  # a small batch: the cheap lane's thread
        assert r.status_code == 200 and len(read) == 2 and hops == ["cheap"]
        r = c.post("/decide", content=b'{"type": "decide", ' + b" " * (70 << 10))
        assert r.status_code == 400 and r.json()["error"]["id"] == "bad_json" and len(read) == 2


# ---------------------------------------------------------------------------------------------
# reload under load, then SIGTERM with requests in flight


def test_sighup_reloads_the_levels_file_under_load_without_a_failed_request(server, files):
    # before: a new levels file needed a restart
    old = httpx.get(f"{server.url}/levels", headers=AUTH).headers["x-levels-sha256"]
    new_levels = {**LEVELS, "levels": [*LEVELS["levels"], {"name": "strong", "spec": "solver:temperature=0.5"}]}
    (files / "levels.json").write_text(json.dumps(new_levels))
    stop = threading.Event()
    seen: list[tuple[int, str]] = []

    def load() -> None:
        with httpx.Client(headers=AUTH, timeout=60) as c:
            i = 0
            while not stop.is_set():
                r = c.post(f"{server.url}/decide", json=decide_body("keep", 4, level="casual", seed=i))
                seen.append((r.status_code, r.headers.get("x-levels-sha256", "")))
                i += 1

    t = threading.Thread(target=load)
    t.start()
    time.sleep(0.5)
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (seen and seen[-1][1] != old):
        time.sleep(0.1)
    time.sleep(0.3)
    stop.set()
    t.join(60)
    assert all(st == 200 for st, _ in seen), [s for s in seen if s[0] != 200][:3]
    shas = [sha for _, sha in seen]
    assert shas[0] == old and shas[-1] != old and len(shas[-1]) == 64
    assert shas.index(shas[-1]) > 0 and old not in shas[shas.index(shas[-1]) :]  # swapped once, atomically
    assert [lv["name"] for lv in httpx.get(f"{server.url}/levels", headers=AUTH).json()["levels"]] == [
        "casual",
        "expert",
        "strong",
    ]


def test_zz_sigterm_drains_the_requests_in_flight(server):
    big = decide_body("box", 10_000, bot="greedy", seed=5)
    got: list[int] = []

    def send(body: dict) -> None:
        got.append(httpx.post(f"{server.url}/decide", json=body, headers=AUTH, timeout=120).status_code)

    threads = [threading.Thread(target=send, args=(b,)) for b in (big, decide_body("keep", 1, level="expert"))]
    for t in threads:
        t.start()
    time.sleep(0.5)
    server.proc.send_signal(signal.SIGTERM)
    for t in threads:
        t.join(120)
    assert got == [200, 200] or sorted(got) == [200, 200], got
    assert server.proc.wait(timeout=60) in (0, -signal.SIGTERM)


# ---------------------------------------------------------------------------------------------
# budgets (their own server: a 50 ms budget)


def test_a_batch_over_its_budget_is_refused_before_any_work(tmp_path):
    # before: serve --timeout 0.05 answered a 10,000-position batch with a 200 after 289-463 ms
    srv = Server(["--rules", "scandinavian", "--bot", "solver", "--timeout", "0.05"], tmp_path / "serve.log")
    try:
        with httpx.Client(timeout=60) as c:
            r = c.post(f"{srv.url}/decide", json=decide_body("keep", 10_000, bot="solver"))
            assert r.status_code == 503 and r.json()["error"]["id"] == "over_budget", r.text
            ok = c.post(f"{srv.url}/decide", json=decide_body("keep", 1, bot="solver"))
            assert ok.status_code == 200
            text = c.get(f"{srv.url}/metrics").text
        assert 'yatzy_serve_refused_total{error="over_budget"} 1.0' in text
        assert 'yatzy_serve_positions_total{served="bot:solver"} 1.0' in text  # the refused batch did no work
        # the backstop: a compute process that overruns a deadline by seconds is broken, and killed
        (kid,) = children(srv.proc.pid)
        os.kill(kid, signal.SIGSTOP)
        pad = {"type": "ping", "id": 1, "pad": "x" * (70 << 10)}  # a large body: the compute process's
        r = httpx.post(f"{srv.url}/decide", json=pad, timeout=60)
        assert r.status_code == 503 and r.json()["error"]["id"] == "deadline", r.text
        r = httpx.post(f"{srv.url}/decide", json=pad, timeout=60)
        assert r.status_code == 200 and r.json() == {"type": "pong", "id": 1}
        assert children(srv.proc.pid) != [kid] and "ran 5 s past a request's deadline: killed" in srv.text()
    finally:
        srv.stop()


def test_a_request_under_way_stops_at_its_deadline():
    s = Service(None, ("scandinavian",), bots=("solver:temperature=1",))
    s.prepare(measure=False)
    msg = decide_body("keep", 600, bot="solver:temperature=1", seed=9)
    whole = s.handle(msg)
    blocked = s.handle(msg, deadline=time.monotonic() + 3600)  # worked through in blocks
    assert blocked["keep"] == whole["keep"]  # a position's answer does not depend on its block
    with pytest.raises(RequestError) as exc:
        s.handle(msg, deadline=time.monotonic())
    assert (exc.value.status, exc.value.error) == (503, "deadline")


def test_the_warm_service_is_frozen_out_of_the_collectors_reach():
    """A full collection walked every object of the warm service (0.2-0.35 s on this machine) and
    stalled the requests in flight: the tail of clients that open a connection per request. Warm-up
    ends by freezing what it made (``gc.freeze``), so a collection no longer visits it."""
    import gc

    from harness.service.app import build

    served = build({"levels": None, "rules": ["forced"], "bots": ["greedy"]})
    assert any(o is served.service for o in gc.get_objects())  # before: the collector walks it
    served.warm()
    assert served.ready and gc.get_freeze_count() > 0
    assert not any(o is served.service or o is served.service.players()[0].bot for o in gc.get_objects())
    gc.unfreeze()


# ---------------------------------------------------------------------------------------------
# proxy headers


def test_proxy_headers_are_believed_only_from_trusted_addresses(tmp_path):
    # before: uvicorn's default believed X-Forwarded-For from 127.0.0.1
    fwd = {"X-Forwarded-For": "203.0.113.9"}
    for trusted, client in (([], "127.0.0.1"), (["--trusted-proxy", "127.0.0.1"], "203.0.113.9")):
        srv = Server(
            ["--rules", "forced", "--bot", "greedy", "--access-log", *trusted], tmp_path / f"s{len(trusted)}.log"
        )
        try:
            httpx.get(f"{srv.url}/health", headers={**fwd, "X-Request-ID": "proxy-check"})
            time.sleep(0.2)
            line = next(json.loads(x) for x in srv.text().splitlines() if '"proxy-check"' in x)
            assert line["client"] == client, (trusted, line)
        finally:
            srv.stop()


# ---------------------------------------------------------------------------------------------
# workers forked after warm-up


def test_forked_workers_share_the_port_the_metrics_a_reload_and_drain(tmp_path):
    # before: --workers N spawned fresh interpreters, each loading and warming its own tables
    (tmp_path / "levels.json").write_text(json.dumps(LEVELS))
    srv = Server(["--levels", str(tmp_path / "levels.json"), "--bot", "greedy", "--workers", "2"], tmp_path / "s.log")
    try:
        assert srv.seen[0] == ("/health", 200) and ("/ready", 503) in srv.seen  # the parent answered while warming
        kids = Path(f"/proc/{srv.proc.pid}/task/{srv.proc.pid}/children")
        deadline = time.monotonic() + 60
        while len(kids.read_text().split()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # the parent, warm, hands the port over to the workers it forks
        time.sleep(0.5)
        pids = {httpx.get(f"{srv.url}/health").json()["pid"] for _ in range(40)}
        children = {int(p) for p in kids.read_text().split()}
        assert pids <= children and len(children) == 2, (pids, children)
        r = httpx.post(f"{srv.url}/decide", json=decide_body("keep", 2, level="casual"))
        assert r.status_code == 200
        text = httpx.get(f"{srv.url}/metrics").text
        got = next(
            float(x.split()[-1])
            for x in text.splitlines()
            if x.startswith('yatzy_serve_requests_total{route="/health",status="200"}')
        )
        assert got >= 40  # every worker's requests, summed
        assert 'yatzy_serve_positions_total{served="casual"} 2.0' in text
        old = r.headers["x-levels-sha256"]
        (tmp_path / "levels.json").write_text(json.dumps({**LEVELS, "levels": LEVELS["levels"][:1]}))
        srv.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            # a loaded machine: the parent prepares the new levels on the cores the workers serve from
            r = httpx.post(f"{srv.url}/decide", json=decide_body("keep", 1, level="casual"), timeout=60)
            assert r.status_code == 200, r.text
            if r.headers["x-levels-sha256"] != old:
                break
            time.sleep(0.1)
        assert r.headers["x-levels-sha256"] != old
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the old generation drains, then exits
            new_children = {
                int(p) for p in Path(f"/proc/{srv.proc.pid}/task/{srv.proc.pid}/children").read_text().split()
            }
            if not new_children & children:
                break
            time.sleep(0.2)
        assert len(new_children) == 2 and not new_children & children
    finally:
        assert srv.stop() == 0
    assert "Traceback" not in srv.text()


# ---------------------------------------------------------------------------------------------
# the soak, in its 20-second form (the 10-minute one is a benchmark: benchmarks/BENCHMARKS.md)


def test_a_20_second_soak_with_one_bad_request_in_20_has_no_server_error():
    # 50 requests/s: correctness only, on a CI machine whose cores the suite shares
    res = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_serve_production.py"),
            "soak",
            "--seconds",
            "20",
            "--rate",
            "50",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["status_500"] == 0 and out["no_answer"] == 0, out["statuses"]
    st = {int(k): v for k, v in out["statuses"].items() if k.isdigit()}
    assert set(st) <= {200, 400, 422}, st
    bad = st.get(400, 0) + st.get(422, 0)
    assert bad == sum(st.values()) // 20 and st[200] > 0, st  # exactly the bad ones refused, every good one answered


def test_the_cheap_lane_takes_a_rule_sets_lock_before_a_batch_waiting_for_it():
    # before: a plain lock, which a thread working through a batch block by block took straight
    # back after each block, so a single decision on the same rule set waited for the whole batch
    from harness.service.locks import TurnLock

    lock, order = TurnLock(), []

    def take(name: str, urgent: bool) -> None:
        with lock.hold(urgent):
            order.append(name)

    with lock.hold():
        plain = threading.Thread(target=take, args=("batch", False))
        plain.start()
        time.sleep(0.2)  # the batch's next block is waiting
        urgent = threading.Thread(target=take, args=("single", True))
        urgent.start()
        while lock._urgent == 0:
            time.sleep(0.01)
    plain.join(10)
    urgent.join(10)
    assert order == ["single", "batch"]


def test_uvicorns_own_connection_limit_answers_503_never_500(tmp_path):
    srv = Server(["--rules", "forced", "--bot", "greedy", "--max-connections", "2"], tmp_path / "s.log")
    held = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(3)]
    try:
        time.sleep(0.3)
        resp = raw_exchange(srv.port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert resp.startswith(b"HTTP/1.1 503"), resp[:100]
    finally:
        for s in held:
            s.close()
        srv.stop()
    assert "Traceback" not in srv.text()


def test_a_fault_in_the_compute_process_is_that_requests_500_and_the_process_goes_on(monkeypatch):
    from starlette.testclient import TestClient

    from harness.service.app import build

    plan = Service.plan

    def faulty(self, msg, **kw):
        if isinstance(msg, dict) and "boom" in msg:
            raise ZeroDivisionError("a bug")
        return plan(self, msg, **kw)

    monkeypatch.setattr(Service, "plan", faulty)  # before the fork: the compute process has it too
    served = build(
        {"rules": ["scandinavian"], "bots": ["greedy"], "expensive_process": True, "warm_before_serving": True}
    )
    body = decide_body("box", 2_000, bot="greedy", seed=24)
    with TestClient(served.app) as c:
        pid = served.compute.current.proc.pid
        r = c.post("/decide", json={**body, "boom": 1})
        assert r.status_code == 500 and r.json()["error"]["id"] == "internal", r.text
        r = c.post("/decide", json=body)
        assert r.status_code == 200 and served.compute.current.proc.pid == pid
