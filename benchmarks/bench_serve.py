"""``serve`` under load on loopback: requests/s and latency of /decide, single and batched.

Starts ``yatzy-harness serve`` (one worker process) on a free port, warms it up, then drives it
open-loop at a fixed rate from an async client (httpx) in this process: requests are sent on a
schedule whatever the answers' timing, so a slow answer cannot hide queueing (no coordinated
omission), and each latency runs from the request's scheduled time to its answer. Two phases:

- single: one position per request (a keep or a box of a random mid-game sheet) at ``--rate``;
- batch: ``--batch`` positions per request at ``--batch-rate``.

Reports p50/p99/max latency, the rate achieved, errors, the server's resident memory before and
after, and the client's own CPU per request (it shares the 2 cores with the server).

    python benchmarks/bench_serve.py                          # 200 req/s for 20 s; batches of 1,000 at 5/s
    python benchmarks/bench_serve.py --rate 400 --seconds 30 --bot greedy
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.play.protocol import messages as msgs  # noqa: E402
from harness.play.protocol.http import launch_server  # noqa: E402
from harness.play.protocol.check import random_sheets, view_of  # noqa: E402
from harness.game.rules import load_rules  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bodies(rules_name: str, bot: str, n: int, per: int, seed: int) -> list[bytes]:
    """``n`` request bodies of ``per`` positions each: keeps and boxes of random mid-game sheets."""
    rules = load_rules(rules_name)
    gen = np.random.default_rng(seed)
    out = []
    for i in range(n):
        k = int(gen.integers(0, rules.n_boxes))
        sheets = random_sheets(rules, gen, per, k)
        rolls = gen.integers(rules.dice.n_rolls, size=per)
        left = int(gen.integers(0, rules.rolls_per_turn))
        view = view_of(
            rules,
            sheets,
            rolls,
            rolls_left=left,
            first=left == rules.rolls_per_turn - 1,
            games=np.arange(i * per, (i + 1) * per),
        )
        msg = msgs.loads(msgs.request(i, view, "box" if left == 0 else "keep", budget_ms=1.0))
        msg["bot"] = bot
        out.append(msgs.dumps(msg))
    return out


async def phase(url: str, payloads: list[bytes], rate: float, seconds: float) -> dict[str, float]:
    import httpx

    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    lat: list[float] = []
    errors = 0
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30.0) as client:

        async def one(body: bytes, due: float) -> None:
            nonlocal errors
            try:
                r = await client.post("/decide", content=body, headers={"Content-Type": "application/json"})
                if r.status_code != 200:
                    errors += 1
            except httpx.HTTPError:
                errors += 1
            lat.append(time.perf_counter() - due)

        n = int(rate * seconds)
        c0 = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter() + 0.05
        tasks = []
        for i in range(n):
            due = start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(payloads[i % len(payloads)], due)))
        await asyncio.gather(*tasks)
        took = time.perf_counter() - start
        c1 = resource.getrusage(resource.RUSAGE_SELF)
    a = np.array(lat) * 1000
    cpu = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
    return {
        "requests": n,
        "rate": n / took,
        "p50": float(np.percentile(a, 50)),
        "p99": float(np.percentile(a, 99)),
        "max": float(a.max()),
        "errors": errors,
        "client_cpu_ms": 1000 * cpu / n,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--bot", default="solver:temperature=1", help="the bot every request names")
    ap.add_argument("--rate", type=float, default=200.0, help="single-position requests per second")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--batch-rate", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds of single requests not counted")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc, url = launch_server(["--rules", args.rules, "--bot", args.bot], env=env, stderr=subprocess.DEVNULL)
    try:
        singles = bodies(args.rules, args.bot, 2000, 1, 1)
        batches = bodies(args.rules, args.bot, 20, args.batch, 2)
        asyncio.run(phase(url, singles, args.rate, args.warmup))
        asyncio.run(phase(url, batches[:2], 1.0, 2.0))
        mem0 = rss_mib(proc.pid)
        single = asyncio.run(phase(url, singles, args.rate, args.seconds))
        batch = asyncio.run(phase(url, batches, args.batch_rate, args.seconds))
        mem1 = rss_mib(proc.pid)
        print(
            json.dumps(
                {
                    "rules": args.rules,
                    "bot": args.bot,
                    "single": single,
                    "batch": batch,
                    "batch_positions": args.batch,
                    "server_rss_mib": [round(mem0, 1), round(mem1, 1)],
                    "load": os.getloadavg(),
                },
                indent=1,
            )
        )
        print(
            "| requests | positions each | rate offered | rate served | p50 | p99 | max | errors | client CPU / request |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for _what, per, rate, r in (("single", 1, args.rate, single), ("batch", args.batch, args.batch_rate, batch)):
            print(
                f"| {r['requests']:,} | {per:,} | {rate:g}/s | {r['rate']:.1f}/s | {r['p50']:.2f} ms | {r['p99']:.2f} ms "
                f"| {r['max']:.1f} ms | {r['errors']} | {r['client_cpu_ms']:.2f} ms |"
            )
        print(f"server resident memory: {mem0:.0f} MiB after warm-up, {mem1:.0f} MiB after both phases")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
