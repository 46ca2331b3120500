"""Games per second: the engine alone and the whole runner (chunks, workers, Parquet), per bot pairing.

For each bot B in ``--bots`` (those not registered are skipped): B vs B at a two-seat table on
``--rules`` (scandinavian), through :func:`harness.play.runner.run` with each worker count in
``--workers``, plus one engine-only batch (``--engine-batch`` games, one core, cold caches) to
separate the engine's speed from the runner's. Every measurement runs in a fresh Python process,
so no bot cache warmed by one row speeds up the next; imports are not timed, the runner's set-up
(bot ``prepare()``, warm-up game, process pool) is. Prints one Markdown table row per measurement.

    python benchmarks/bench_throughput.py                       # 200,000 games per row
    python benchmarks/bench_throughput.py --games 1000000 --bots random,greedy --workers 2 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def engine_rate(rules_name: str, bot: str, batch: int, seed: int) -> float:
    """Games/s of one ``engine.play`` batch of ``batch`` games, fresh bots (their caches cold)."""
    import numpy as np

    from harness.game.loop import play
    from harness.game.registry import make
    from harness.game.rules import load_rules

    rules = load_rules(rules_name)
    seats = [make(bot, rules), make(bot, rules)]
    for s in seats:
        s.prepare()
    play(rules, seats[:1] * 2, np.arange(1), seed)  # compile kernels (not the point here)
    seats = [make(bot, rules), make(bot, rules)]
    for s in seats:
        s.prepare()
    t = time.perf_counter()
    play(rules, seats, np.arange(10**7, 10**7 + batch, dtype=np.int64), seed)
    return batch / (time.perf_counter() - t)


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def runner_rate(rules_name: str, bot: str, games: int, workers: int, chunk: int, seed: int) -> list[float]:
    """[wall seconds, CPU seconds of this process and its workers] of a whole ``run``, set-up included.

    CPU seconds do not depend on how many cores other jobs leave us: on an idle machine with W
    cores the wall time approaches CPU / W (plus the serial set-up).
    """
    from harness.play.runconfig import RunConfig
    from harness.play.runner import run

    cfg = RunConfig(seats=(bot, bot), rules=rules_name, games=games, seed=seed, chunk_size=chunk, workers=workers)
    tmp = Path(tempfile.mkdtemp(prefix="bench-throughput-"))
    try:
        t, c = time.perf_counter(), _cpu()
        run(cfg, tmp / "run")
        return [time.perf_counter() - t, _cpu() - c]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fresh(args: argparse.Namespace, what: str, bot: str, workers: int = 0) -> Any:
    """Run one measurement in a new interpreter; returns its figure(s)."""
    cmd = [
        sys.executable,
        __file__,
        "--one",
        what,
        "--bots",
        bot,
        "--rules",
        args.rules,
        "--games",
        str(args.games),
        "--workers",
        str(workers),
        "--chunk-size",
        str(args.chunk_size),
        "--engine-batch",
        str(args.engine_batch),
        "--seed",
        str(args.seed),
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    from harness.play.runconfig import DEFAULT_CHUNK_SIZE

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--bots", default="random,timeout,greedy,bonus,solver")
    ap.add_argument("--games", type=int, default=200_000, help="games per runner measurement")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE)
    ap.add_argument("--engine-batch", type=int, default=50_000, help="games in the engine-only batch (0: skip)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--repeat", type=int, default=1, help="runs per row; the fastest counts (a shared machine is noisy)"
    )
    ap.add_argument("--one", choices=["engine", "runner"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one == "engine":
        print(json.dumps(engine_rate(args.rules, args.bots, args.engine_batch, args.seed)))
        return 0
    if args.one == "runner":
        print(json.dumps(runner_rate(args.rules, args.bots, args.games, int(args.workers), args.chunk_size, args.seed)))
        return 0

    from harness.game.registry import available

    reg = available()
    load = os.getloadavg()[0]
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.node()} python {platform.python_version()} "
        f"cores {os.cpu_count()} rules {args.rules} chunk {args.chunk_size} repeat {args.repeat} "
        f"(load average {load:.1f} at start)"
    )
    print(
        "| seats | engine only, 1 core (games/s) | workers | games | wall (s) | runner (games/s) "
        "| CPU (s) | games per CPU-s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    for bot in args.bots.split(","):
        if bot not in reg:
            print(f"| {bot} vs {bot} | not registered | | | | | | |")
            continue
        eng = "-"
        if args.engine_batch:
            eng = f"{max(_fresh(args, 'engine', bot) for _ in range(args.repeat)):,.0f}"
        for w in (int(x) for x in args.workers.split(",")):
            dt, cpu = min(_fresh(args, "runner", bot, w) for _ in range(args.repeat))
            print(
                f"| {bot} vs {bot} | {eng} | {w} | {args.games:,} | {dt:.1f} | {args.games / dt:,.0f} "
                f"| {cpu:.1f} | {args.games / cpu:,.0f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
