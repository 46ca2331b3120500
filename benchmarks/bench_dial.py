"""Difficulty-dial benchmark: mean score of the solver bot against its temperature and blunder rate.

Run from the repository root::

    python benchmarks/bench_dial.py                       # scandinavian, 20,000 games per setting
    python benchmarks/bench_dial.py --rules standard --games 5000

Each setting plays the same games (same seed: identical dice), one seat, so the differences between
rows are paired; the interval is the 95 % confidence interval of the mean. ``random`` and
``greedy`` rows give the scale. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from harness.game import registry
from harness.game.loop import play
from harness.game.rules import load_rules
from harness.stats import mean_ci

TEMPERATURES = (0, 0.5, 1, 2, 5, 10, 20)
BLUNDERS = (0, 0.05, 0.1, 0.2, 0.5, 1)


def mean_of(spec: str, rules, games: int, seed: int, chunk: int) -> tuple[float, float, float, float]:
    bot = registry.make(spec, rules)
    bot.prepare()
    t = time.perf_counter()
    totals = np.concatenate(
        [play(rules, [bot], np.arange(a, min(a + chunk, games)), seed).total[:, 0] for a in range(0, games, chunk)]
    )
    ci = mean_ci(totals.astype(np.float64), confidence=0.95)
    return ci.mean, ci.lo, ci.hi, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--games", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=5000)
    args = ap.parse_args()
    rules = load_rules(args.rules)
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {args.rules}, {args.games:,} games per row (seed {args.seed}), "
        f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}\n"
    )
    print("| bot | mean score | 95 % CI | seconds |")
    print("|---|---:|---:|---:|")
    specs = [f"solver:temperature={t}" if t else "solver" for t in TEMPERATURES]
    specs += [f"solver:blunder={p}" for p in BLUNDERS if p]
    specs += ["solver:temperature=2,blunder=0.1", "greedy", "random"]
    for spec in specs:
        m, lo, hi, sec = mean_of(spec, rules, args.games, args.seed, args.chunk)
        print(f"| `{spec}` | {m:.2f} | {lo:.2f} .. {hi:.2f} | {sec:.0f} |", flush=True)


if __name__ == "__main__":
    main()
