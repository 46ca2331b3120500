"""``serve`` as production meets it (issue 48): a cheap level beside expensive work, clients that
close their connection after each request, a soak with bad requests, a worker's memory.

Every phase starts its own ``yatzy-harness serve`` on a free loopback port, serving a levels file
written here (``casual``: ``solver:temperature=1`` on scandinavian) and the bot ``solver``, and
drives it open-loop from this process: requests leave on a fixed schedule whatever the answers'
timing, and a latency runs from the scheduled time to the answer (no coordinated omission). The
client shares the machine's cores with the server.

    python benchmarks/bench_serve_production.py mix --seconds 20     # 200 single decisions/s of casual,
                                                                     # alone, then with one batch of 10,000 a second
    python benchmarks/bench_serve_production.py close --seconds 20   # Connection: close at 200/s: casual vs an
                                                                     # empty Starlette endpoint, same client
    python benchmarks/bench_serve_production.py soak --seconds 600   # 200/s, 1 bad request in 20: no 500,
                                                                     # resident memory after the first minute
    python benchmarks/bench_serve_production.py memory               # a worker's resident memory, by part

``--json`` prints the figures as one JSON object (tests/test_serve_production.py runs a 20-second
soak this way, for correctness only).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.game.rules import load_rules  # noqa: E402
from harness.play.protocol import messages as msgs  # noqa: E402
from harness.play.protocol.http import free_port, launch_server  # noqa: E402
from harness.service.serve import sample_request  # noqa: E402

LEVELS = {
    "format": "yatzy-levels/1",
    "rules": "scandinavian",
    "settings": [],
    "levels": [{"name": "casual", "spec": "solver:temperature=1"}],
}


def smaps(pid: int) -> dict[str, float]:
    """/proc/PID/smaps_rollup in MiB: Rss, Pss, Shared_*, Private_*, Anonymous."""
    out = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        k, v = line.split(":", 1)
        if v.strip().endswith("kB"):
            out[k] = int(v.split()[0]) / 1024
    return out


#: ``--server-args``: more options for every server a phase starts (``--expensive-lane threads``, say).
SERVER_ARGS: list[str] = []


def start(extra: list[str], workdir: Path) -> tuple[subprocess.Popen, str]:
    (workdir / "levels.json").write_text(json.dumps(LEVELS))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return launch_server(
        ["--levels", str(workdir / "levels.json"), "--bot", "solver", *extra, *SERVER_ARGS],
        env=env,
        stderr=subprocess.DEVNULL,
    )


def tree_pss(pid: int) -> float:
    """The proportional set size (MiB) of a server and its descendants (its compute process): each
    shared page counted once over the tree."""
    return sum(smaps(p).get("Pss", 0.0) for p in [pid, *descendants(pid)])


def descendants(pid: int) -> list[int]:
    """A process's children, their children, and so on (a worker's compute process too)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for kid in (task / "children").read_text().split():
            out += [int(kid), *descendants(int(kid))]
    return out


def bodies(kind: str, n: int, count: int, seed: int, **extra: Any) -> list[bytes]:
    rules = load_rules("scandinavian")
    gen = np.random.default_rng(seed)
    out = []
    for i in range(count):
        msg = sample_request(rules, kind if kind != "mixed" else ("keep", "box")[i % 2], n, gen)
        out.append(msgs.dumps({**msg, **extra}))
    return out


def summary(lat: list[float]) -> dict[str, float]:
    a = np.array(lat) * 1000
    return {
        "n": len(a),
        "p50_ms": round(float(np.percentile(a, 50)), 2),
        "p99_ms": round(float(np.percentile(a, 99)), 2),
        "max_ms": round(float(a.max()), 1),
    }


async def open_loop(
    url: str, streams: list[tuple[str, list[bytes], float]], seconds: float, status: dict[int, int] | None = None
) -> dict[str, list[float]]:
    """Each stream (name, bodies, rate/s) POSTed to /decide on schedule for ``seconds``, over
    kept-alive connections: each stream's latencies (seconds)."""
    import httpx

    # a client drops an idle connection before the server's --idle-timeout (5 s) would, as a proxy
    # should: else a request sent on it as the server closes it is lost (ReadError)
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256, keepalive_expiry=2.0)
    status = status if status is not None else {}
    # the client's own garbage collections (httpx's objects) stalled its event loop up to 50-70 ms,
    # which its latencies counted as the server's: the client collects between phases, not during
    gc.collect()
    gc.disable()
    try:
        return await _open_loop(url, streams, seconds, status, limits)
    finally:
        gc.enable()


async def _open_loop(
    url: str, streams: list[tuple[str, list[bytes], float]], seconds: float, status: dict[int, int], limits: Any
) -> dict[str, list[float]]:
    import httpx

    lat: dict[str, list[float]] = {name: [] for name, _, _ in streams}
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60.0) as client:

        async def one(name: str, body: bytes, due: float) -> None:
            try:
                r = await client.post("/decide", content=body, headers={"Content-Type": "application/json"})
                status[r.status_code] = status.get(r.status_code, 0) + 1
                if r.status_code >= 500:  # which refusal: 503 busy, queue_full, deadline, ...
                    key = f"{r.status_code} {r.json()['error']['id'] if r.headers.get('content-type') == 'application/json' else r.text[:40]}"
                    status[key] = status.get(key, 0) + 1  # type: ignore[index]
            except httpx.HTTPError as exc:  # no answer: counted by the exception's name
                key = type(exc).__name__
                status[key] = status.get(key, 0) + 1  # type: ignore[index]
            lat[name].append(time.perf_counter() - due)

        async def stream(name: str, payloads: list[bytes], rate: float, t0: float) -> None:
            tasks = []
            for i in range(int(rate * seconds)):
                due = t0 + i / rate
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(one(name, payloads[i % len(payloads)], due)))
            await asyncio.gather(*tasks)

        t0 = time.perf_counter() + 0.05
        await asyncio.gather(*(stream(n, p, r, t0) for n, p, r in streams))
    return lat


async def closing_client(port: int, request: bytes, rate: float, seconds: float) -> tuple[list[float], int]:
    """Open-loop raw sockets: one connection per request (``Connection: close``), read to EOF."""
    lat: list[float] = []
    bad = 0

    async def one(due: float) -> None:
        nonlocal bad
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            data = await reader.read()
            writer.close()
            if not data.startswith(b"HTTP/1.1 200"):
                bad += 1
        except OSError:
            bad += 1
        lat.append(time.perf_counter() - due)

    t0 = time.perf_counter() + 0.05
    tasks = []
    for i in range(int(rate * seconds)):
        due = t0 + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(due)))
    await asyncio.gather(*tasks)
    return lat, bad


def empty_app() -> Any:
    """An empty Starlette endpoint: what a served decision is compared with."""
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def empty(request: Any) -> Response:
        await request.body()
        return Response(b"{}", media_type="application/json")

    return Starlette(routes=[Route("/decide", empty, methods=["POST"])])


# ---------------------------------------------------------------------------------------------


def mix(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    proc, url = start([], work)
    try:
        singles = bodies("mixed", 1, 2000, 1, level="casual")
        batches = bodies("keep", args.batch, 5, 2, bot="solver")
        asyncio.run(open_loop(url, [("cheap", singles, args.rate)], 3.0))  # warm-up, not counted
        alone = asyncio.run(open_loop(url, [("cheap", singles, args.rate)], args.seconds))
        st: dict[int, int] = {}
        both = asyncio.run(
            open_loop(url, [("cheap", singles, args.rate), ("expensive", batches, 1.0)], args.seconds, st)
        )
        return {
            "cheap_alone": summary(alone["cheap"]),
            "cheap_beside_expensive": summary(both["cheap"]),
            "expensive": summary(both["expensive"]),
            "statuses": st,
            "batch": args.batch,
            "rate": args.rate,
        }
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def close(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    proc, url = start([], work)
    port = free_port()
    empty = subprocess.Popen(
        [sys.executable, __file__, "_empty", str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(3)
        body = bodies("keep", 1, 1, 1, level="casual")[0]
        head = (
            f"POST /decide HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        served_port = int(url.rsplit(":", 1)[1])
        out = {}
        for name, p in (("warm-up", served_port), ("empty", port), ("served", served_port), ("empty again", port)):
            lat, bad = asyncio.run(
                closing_client(p, head + body, args.rate, 3.0 if name == "warm-up" else args.seconds)
            )
            out[name] = summary(lat) | {"failed": bad}
        del out["warm-up"]
        return out | {"rate": args.rate}
    finally:
        empty.terminate()
        proc.terminate()
        proc.wait(timeout=60)


def soak(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    proc, url = start([], work)
    try:
        good = bodies("mixed", 1, 1900, 3, level="casual")
        bad = [
            b"{not json",
            b'{"type": "decide", "bot": "solver:target=200", "rules": "scandinavian", "dice": ["11111"]}',
            b'{"type": "decide", "level": "casual", "rules": "scandinavian", "dice": ["1111"]}',
            b"[]",
            b'{"type": "bogus"}',
        ]
        payloads = [bad[(i // 20) % len(bad)] if i % 20 == 19 else good[i % len(good)] for i in range(2000)]
        st: dict[int, int] = {}
        rss = [(0.0, tree_pss(proc.pid))]
        t0 = time.monotonic()
        chunk = min(10.0, args.seconds)
        while time.monotonic() - t0 < args.seconds - 0.5:
            asyncio.run(open_loop(url, [("soak", payloads, args.rate)], chunk, st))
            rss.append((round(time.monotonic() - t0, 1), tree_pss(proc.pid)))
        after_minute = next((m for t, m in rss if t >= 60), rss[1][1] if len(rss) > 1 else rss[0][1])
        return {
            "seconds": args.seconds,
            "rate": args.rate,
            "statuses": st,
            "status_500": st.get(500, 0),
            "no_answer": sum(v for k, v in st.items() if isinstance(k, str) and not k[:1].isdigit()),
            "pss_mib": [(t, round(m, 1)) for t, m in rss],
            "growth_after_first_minute_pct": round(100 * (rss[-1][1] - after_minute) / after_minute, 2),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def memory(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The parts of one worker's resident memory (in a process of its own, step by step), then a
    server of one worker and one of two, after the same load."""
    (work / "levels.json").write_text(json.dumps(LEVELS))
    step = subprocess.run(
        [sys.executable, "-c", _STEPS, str(work / "levels.json")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        cwd=ROOT,
    )
    out: dict[str, Any] = {"steps_mib": json.loads(step.stdout.strip().splitlines()[-1])}
    for workers in (1, 2):
        proc, url = start(["--workers", str(workers)], work)
        try:
            singles = bodies("mixed", 1, 1000, 4, level="casual")
            asyncio.run(open_loop(url, [("load", singles, 200.0)], 10.0))
            # the server process and its compute process; with --workers N, the parent (which serves
            # nothing), its forked workers and theirs
            pids = [proc.pid, *descendants(proc.pid)]
            out[f"workers_{workers}"] = {
                str(p): {
                    k: round(v, 1)
                    for k, v in smaps(p).items()
                    if k
                    in ("Rss", "Pss", "Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty", "Anonymous")
                }
                for p in pids
            }
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    return out


_STEPS = r"""
import json, sys, gc
from pathlib import Path
def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
out = {"python": rss()}
import numpy, numba, starlette, uvicorn
from harness.service.app import build
out["imports"] = rss()
served = build({"levels": sys.argv[1], "rules": [], "bots": ["solver"]})
out["service made"] = rss()
for s in served.service.players():
    s.bot.prepare()
out["tables loaded, kernels compiled"] = rss()
served.service.prepare()
out["warm, costs measured, advisor"] = rss()
from harness.service.serve import sample_request
import numpy as np
g = np.random.default_rng(5)
r = served.service.players()[0].rules
for i in range(200):
    served.service.handle(sample_request(r, ("keep", "box")[i % 2], 50, g) | {"level": "casual"})
out["after 10,000 fresh positions"] = rss()
print(json.dumps(out))
"""


def main() -> None:
    if sys.argv[1:2] == ["_empty"]:
        import uvicorn

        uvicorn.run(empty_app(), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", http="h11")
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("mix", "close", "soak", "memory"))
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--rate", type=float, default=200.0, help="cheap requests per second")
    ap.add_argument("--batch", type=int, default=10_000, help="positions of each expensive request (mix)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--server-args", default="", help="more options for every server started, e.g. '--expensive-lane threads'"
    )
    args = ap.parse_args()
    SERVER_ARGS[:] = shlex.split(args.server_args)
    with tempfile.TemporaryDirectory() as d:
        load0 = os.getloadavg()
        out = {"mix": mix, "close": close, "soak": soak, "memory": memory}[args.what](args, Path(d))
    out = {
        "what": args.what,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_at_start": load0,
        "cpus": os.cpu_count(),
        "server_args": args.server_args,
        **out,
    }
    print(json.dumps(out) if args.json else json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
