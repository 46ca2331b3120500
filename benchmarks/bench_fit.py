"""Player-model benchmark: how many decisions a fit needs for a given precision, and its coverage.

Run from the repository root::

    python benchmarks/bench_fit.py                       # scandinavian, 20 blocks of 25 games per bot
    python benchmarks/bench_fit.py --blocks 40 --games 50

Each bot of :data:`BOTS` plays ``--blocks`` x ``--games`` games alone (seed 1; blocks are disjoint
game indices, so independent), recorded by the engine; the decisions of each block are fitted with
the bot's own model (:func:`harness.fit.fit_table`, the same code as ``yatzy-harness fit``). Prints a Markdown table per bot and
parameter: decisions per block, the median relative half-width of the 95 % profile-likelihood
interval (half-width / true value), the coverage of the true value over the blocks, the median
estimate, and the decisions needed for +-10 % and +-5 % (the half-width shrinks as 1/sqrt(decisions):
extrapolated from the block size), plus the fit time per block.

``power``: how many decisions the goodness-of-fit tests need to flag a player outside the family::

    python benchmarks/bench_fit.py power                  # greedy, 1, 2, 5, 10, 20, 50 games, 10 seeds each
    python benchmarks/bench_fit.py power --bot greedy --games 1,2,5,10,20,50 --seeds 10

``--bot`` plays each number of games alone once per seed (seeds 1..``--seeds``); each record is
fitted with both default models and the script prints, per model and number of games, the mean
informative decisions, how many of the fits are flagged POOR (either test at p < 0.001, whatever
the evidence verdict) and the median p-value of each test. "Reliably" is every seed flagged.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from harness.analysis import Analyser  # noqa: E402
from harness.fit import fit_table, play_table  # noqa: E402
from harness.rules import load_rules  # noqa: E402

#: bot spec -> (model fitted, {parameter: true value})
BOTS = {
    "solver:temperature=0.5": ("solver:temperature", {"temperature": 0.5}),
    "solver:temperature=1": ("solver:temperature", {"temperature": 1.0}),
    "solver:temperature=2": ("solver:temperature", {"temperature": 2.0}),
    "solver:blunder=0.05": ("solver:blunder", {"blunder": 0.05}),
    "solver:blunder=0.1": ("solver:blunder", {"blunder": 0.1}),
    "solver:temperature=1,blunder=0.05": ("solver:temperature,blunder", {"temperature": 1.0, "blunder": 0.05}),
}


def power(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_fit.py power", description="decisions needed to flag a bot POOR")
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--bot", default="greedy")
    ap.add_argument("--games", default="1,2,5,10,20,50", help="games per record, comma-separated")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--models", default="solver:temperature;solver:blunder;solver:temperature,blunder", help="';'-separated")
    args = ap.parse_args(argv)
    an = Analyser(load_rules(args.rules))
    sizes = [int(x) for x in args.games.split(",")]
    models = args.models.split(";")
    print(f"rules {args.rules}, bot {args.bot}, seeds 1..{args.seeds} per size\n")
    print("| model | games | decisions (mean) | flagged POOR | median p (LR vs per-kind) | median p (regret X2) |")
    print("|---|---:|---:|---:|---:|---:|")
    for model in models:
        for g in sizes:
            dec, flagged, p_lr, p_rt = [], 0, [], []
            for seed in range(1, args.seeds + 1):
                f = fit_table(play_table(an, [args.bot], g, seed), model, pooled=False).players[0]
                dec.append(f.decisions)
                flagged += f.poor
                p_lr.append(f.lr.p if f.lr is not None else math.nan)
                p_rt.append(f.regret_test.p if f.regret_test is not None else math.nan)
            print(f"| {model} | {g} | {np.mean(dec):,.0f} | {flagged}/{args.seeds} | {np.nanmedian(p_lr):.2g} | "
                  f"{np.nanmedian(p_rt):.2g} |", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["power"]:
        return power(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="scandinavian")
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--games", type=int, default=25, help="games per block")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    an = Analyser(load_rules(args.rules))
    print(f"rules {args.rules}, {args.blocks} blocks x {args.games} games per bot, seed {args.seed}\n")
    print("| bot | model | parameter | decisions per block | median half-width (rel.) | coverage | "
          "median estimate | decisions for ±10 % | for ±5 % | fit time per block |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for spec, (model, truth) in BOTS.items():
        table = play_table(an, [spec], args.blocks * args.games, args.seed)
        block = np.asarray(table.games)[table.seatgame] // args.games
        rel: dict[str, list[float]] = {k: [] for k in truth}
        est: dict[str, list[float]] = {k: [] for k in truth}
        hits = {k: 0 for k in truth}
        sizes, secs = [], []
        for b in range(args.blocks):
            sub = _rows(table, block == b)
            t = time.perf_counter()
            f = fit_table(sub, model, pooled=False).players[0]
            secs.append(time.perf_counter() - t)
            sizes.append(f.decisions)
            for k, v in truth.items():
                e = f.params[k]
                hi = e.hi if math.isfinite(e.hi) else math.nan
                rel[k].append((hi - e.lo) / 2 / v)
                est[k].append(e.value)
                hits[k] += e.lo <= v <= e.hi
        d = float(np.mean(sizes))
        for k, v in truth.items():
            h = float(np.nanmedian(rel[k]))
            need10, need5 = d * (h / 0.10) ** 2, d * (h / 0.05) ** 2
            print(f"| `{spec}` | {model} | {k} = {v:g} | {d:,.0f} | ±{100 * h:.1f} % | "
                  f"{hits[k]}/{args.blocks} | {np.median(est[k]):.4g} | {need10:,.0f} | {need5:,.0f} | "
                  f"{np.median(secs):.2f} s |")
        sys.stdout.flush()
    return 0


def _rows(table, mask):  # a DecisionTable restricted to some decisions (labels kept)
    from harness.analysis import DecisionTable

    cols = {k: getattr(table, k)[mask] for k in ("values", "n", "chosen", "kind", "seatgame", "turn", "roll",
                                                 "upper", "regret")}
    return DecisionTable(**cols, labels=table.labels, games=table.games, seats=table.seats)


if __name__ == "__main__":
    sys.exit(main())
