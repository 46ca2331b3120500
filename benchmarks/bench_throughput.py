"""Games per second: the engine alone and the whole runner (chunks, workers, Parquet), per bot pairing.

For each bot B in ``--bots`` (those not registered are skipped): B vs B at a two-seat table on
``--rules`` (scandinavian), through :func:`harness.runner.run` with each worker count in
``--workers``, plus one engine-only batch in this process (``--engine-batch`` games) to separate
the engine's speed from the runner's overhead. Prints a Markdown table row per measurement.

    python benchmarks/bench_throughput.py                       # 200,000 games per row
    python benchmarks/bench_throughput.py --games 1000000 --bots random,greedy --workers 2
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.engine import play  # noqa: E402
from harness.registry import available, make  # noqa: E402
from harness.rules import load_rules  # noqa: E402
from harness.runconfig import DEFAULT_CHUNK_SIZE, RunConfig  # noqa: E402
from harness.runner import run  # noqa: E402


def engine_rate(rules_name: str, bot: str, batch: int, seed: int) -> float:
    rules = load_rules(rules_name)
    seats = [make(bot, rules), make(bot, rules)]
    for s in seats:
        s.prepare()
    play(rules, seats, np.arange(64), seed)  # compile / warm caches
    t = time.perf_counter()
    play(rules, seats, np.arange(batch, dtype=np.int64), seed)
    return batch / (time.perf_counter() - t)


def runner_rate(rules_name: str, bot: str, games: int, workers: int, chunk: int, seed: int) -> tuple[float, float]:
    """(games/s, wall seconds) of a whole ``run`` including set-up and the final manifest."""
    cfg = RunConfig(seats=(bot, bot), rules=rules_name, games=games, seed=seed, chunk_size=chunk, workers=workers)
    tmp = Path(tempfile.mkdtemp(prefix="bench-throughput-"))
    try:
        t = time.perf_counter()
        run(cfg, tmp / "run")
        dt = time.perf_counter() - t
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return games / dt, dt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--bots", default="random,timeout,greedy,bonus,solver")
    ap.add_argument("--games", type=int, default=200_000, help="games per runner measurement")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE)
    ap.add_argument("--engine-batch", type=int, default=50_000, help="games in the engine-only batch (0: skip)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    workers = [int(w) for w in args.workers.split(",")]
    reg = available()
    print(f"# {time.strftime('%Y-%m-%d')} {platform.node()} python {platform.python_version()} "
          f"cores {os.cpu_count()} rules {args.rules} chunk {args.chunk_size}")
    print("| seats | engine only, 1 core (games/s) | workers | games | wall (s) | runner (games/s) |")
    print("|---|---:|---:|---:|---:|---:|")
    for bot in args.bots.split(","):
        if bot not in reg:
            print(f"| {bot} vs {bot} | not registered | | | | |")
            continue
        eng = f"{engine_rate(args.rules, bot, args.engine_batch, args.seed):,.0f}" if args.engine_batch else "-"
        for w in workers:
            rate, dt = runner_rate(args.rules, bot, args.games, w, args.chunk_size, args.seed)
            print(f"| {bot} vs {bot} | {eng} | {w} | {args.games:,} | {dt:.1f} | {rate:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
