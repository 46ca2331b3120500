"""Exact evaluation of the built-in solitaire bots on a rule set: time from a cached value table, time
from the evaluation cache, and a sampled one-seat run of each bot checked against the exact figures.

    python benchmarks/bench_evaluate.py --rules scandinavian --games 200000 --bots random,timeout,greedy,bonus,solver

Peak memory of one evaluation: ``/usr/bin/time -v python benchmarks/bench_evaluate.py --bots greedy --games 0``.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from harness import evaluate as E
from harness.rules import load_rules
from harness.solver import solve


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--bots", default="random,timeout,greedy,bonus,solver")
    ap.add_argument("--games", type=int, default=200_000, help="sampled games per bot (0: none)")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    rules = load_rules(a.rules)
    solve(rules)  # the value table from the cache (solved once per machine)
    print("| bot | exact mean | std | evaluation (s) | from cache (s) | sampled games | sampled mean | z | chi-square p | run (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for bot in a.bots.split(","):
        t0 = time.perf_counter()
        ev = E.evaluate(rules, bot, use_cache=False)
        t_eval = time.perf_counter() - t0
        E.evaluate(rules, bot)  # writes the cache
        t0 = time.perf_counter()
        E.evaluate(rules, bot)
        t_cache = time.perf_counter() - t0
        row = [bot, f"{ev.mean:.6f}", f"{ev.std:.4f}", f"{t_eval:.1f}", f"{t_cache:.3f}"]
        if a.games:
            import glob

            import pyarrow.parquet as pq

            from harness.runconfig import RunConfig
            from harness.runner import run
            from tests.test_evaluate import chi_square_p

            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                d = run(RunConfig(seats=(bot,), rules=a.rules, games=a.games, workers=a.workers, seed=11),
                        Path(tmp) / "run")
                t_run = time.perf_counter() - t0
                s = np.concatenate([pq.read_table(f, columns=["total"]).column("total").to_numpy()
                                    for f in sorted(glob.glob(str(d / "chunks" / "*.parquet")))])
            z = (s.mean() - ev.mean) / (ev.std / math.sqrt(len(s)))
            row += [f"{len(s):,}", f"{s.mean():.3f}", f"{z:+.2f}", f"{chi_square_p(s, ev.distribution):.3f}",
                    f"{t_run:.1f}"]
        else:
            row += ["", "", "", "", ""]
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
