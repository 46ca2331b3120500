"""Variance reduction by the exact luck adjustment: per bot, in compare, in calibrate, and its cost.

Five parts, each one command (each under ~10 minutes on the 2-core machine):

* ``factors``: per bot, one-seat runs of ``--games`` games on scandinavian, played with and
  without ``--analyse`` (2 workers, a fresh process each, set-up included): the variance-reduction
  factor var(total) / var(total - luck) per game, the plain and adjusted means with their CIs, and
  games/s with and without the analysis.
* ``compare``: greedy bots, upper_bonus_threshold 63 -> 62: per-game variance of the paired
  difference plain and luck-adjusted (same seed, and on different seeds, ``--unpaired``), then
  ``compare --sequential`` with and without the adjustment for several seeds: games at decision.
* ``calibrate``: ``calibrate`` solver temperature for a mean of 200 and for a score of 0.4 against
  the optimal bot, with and without the adjustment, same games: the sampling half-width of the
  value and the games either needs for a given half-width (it shrinks like 1 / sqrt(games)).
* ``kernel``: per bot, in one process, the seat-games per second of the analysis kernel and of
  the Python reference walk on the same recorded games (both warm): what ``--analyse`` adds.

    python benchmarks/bench_variance.py factors --games 20000
    python benchmarks/bench_variance.py compare --seeds 1,2,3,4,5 --step 100
    python benchmarks/bench_variance.py calibrate --games 2000
    python benchmarks/bench_variance.py kernel --games 5000
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BOTS = ("greedy", "bonus", "solver:temperature=1", "solver:blunder=0.1")


def _cli(args: list[str], json_out: bool = True) -> tuple[dict | None, int, float]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 1, 2) or (json_out and not p.stdout.strip().startswith("{")):
        raise RuntimeError(f"{args} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return (json.loads(p.stdout) if json_out else None), p.returncode, dt


def _rows(run: Path) -> pd.DataFrame:
    files = sorted((run / "chunks").glob("*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True).sort_values(["lineup", "game", "seat"])


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in __import__("os").getloadavg())
    except OSError:
        return "?"


def factors(args: argparse.Namespace, root: Path) -> None:
    print(
        "| bot | games | mean [95 % CI] | luck-adjusted mean [95 % CI] | sd total | sd total − luck | "
        "factor | games/s plain | games/s --analyse | cost |"
    )
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for bot in args.bots.split(","):
        safe = bot.replace(":", "_").replace("=", "")
        speeds = []
        for analyse in (False, True):
            out = root / f"{safe}-{'a' if analyse else 'p'}"
            cmd = [
                "run",
                "--rules",
                "scandinavian",
                "--seats",
                bot,
                "--games",
                str(args.games),
                "--seed",
                "1",
                "--workers",
                str(args.workers),
                "--chunk-size",
                str(args.chunk_size),
                "--out",
                str(out),
                "--quiet",
            ]
            _, _, dt = _cli(cmd + (["--analyse"] if analyse else []), json_out=False)
            speeds.append(args.games / dt)
        r = _rows(out)
        t = r["total"].to_numpy(np.float64)
        a = t - r["luck"].to_numpy()
        n = len(t)
        z = 1.96

        def ci(x: np.ndarray) -> str:
            half = z * x.std(ddof=1) / math.sqrt(n)
            return f"{x.mean():.2f} [{x.mean() - half:.2f}, {x.mean() + half:.2f}]"

        print(
            f"| {bot} | {n:,} | {ci(t)} | {ci(a)} | {t.std(ddof=1):.2f} | {a.std(ddof=1):.2f} | "
            f"{t.var(ddof=1) / a.var(ddof=1):.1f} | {speeds[0]:,.0f} | {speeds[1]:,.0f} | "
            f"{speeds[0] / speeds[1]:.1f}x |",
            flush=True,
        )


def _config(path: Path, threshold: int, bots: str, seed: int, games: int, chunk: int) -> Path:
    seats = ", ".join(f'"{b}"' for b in bots.split(","))
    path.write_text(
        f'rules = "scandinavian"\nseats = [{seats}]\ngames = {games}\nseed = {seed}\n'
        f"chunk_size = {chunk}\nworkers = 2\n[settings]\nupper_bonus_threshold = {threshold}\n"
    )
    return path


def compare(args: argparse.Namespace, root: Path) -> None:
    bots = args.compare_bots
    # 1. the per-game variance of the difference, from fixed samples
    g = args.fixed_games
    runs = {}
    for name, thr, seed in (("b", 63, 1), ("c", 62, 1), ("u", 62, 2)):
        out = root / f"fixed-{name}"
        _cli(
            [
                "run",
                "--rules",
                "scandinavian",
                "--set",
                f"upper_bonus_threshold={thr}",
                "--seats",
                bots,
                "--games",
                str(g),
                "--seed",
                str(seed),
                "--workers",
                str(args.workers),
                "--chunk-size",
                str(max(500, g // 4)),
                "--out",
                str(out),
                "--quiet",
                "--analyse",
            ],
            json_out=False,
        )
        r = _rows(out)
        s = r["seat"].max() + 1
        runs[name] = (
            r["total"].to_numpy(np.float64).reshape(-1, s).mean(1),
            (r["total"] - r["luck"]).to_numpy().reshape(-1, s).mean(1),
        )
    print(f"per-game variance of the difference, {bots} at threshold 63 -> 62, {g:,} games:")
    print("| pairing | var plain | var luck-adjusted | factor | games for a ±0.1-point 95 % CI, plain | adjusted |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, other in (("same seed (paired)", "c"), ("different seeds (--unpaired)", "u")):
        dp = runs[other][0] - runs["b"][0]
        da = runs[other][1] - runs["b"][1]
        vp, va = dp.var(ddof=1), da.var(ddof=1)
        need = lambda v: math.ceil(v * (1.96 / 0.1) ** 2)  # noqa: E731
        print(f"| {label} | {vp:.2f} | {va:.2f} | {vp / va:.2f} | {need(vp):,} | {need(va):,} |", flush=True)
    # 2. compare --sequential, with and without the adjustment
    print(
        f"\ncompare --sequential, {bots}, 63 -> 62, H0 0 vs H1 ±{args.mu1:g} point, alpha = beta = 0.05, "
        f"step {args.step}, limit {args.max_games:,}:"
    )
    print(
        "| seed | plain: games at decision | verdict | s | luck-adjusted: games at decision | verdict | s | "
        "variance factor |"
    )
    print("|---:|---:|---|---:|---:|---|---:|---:|")
    for seed in (int(x) for x in args.seeds.split(",")):
        cells = []
        vr = None
        for adjust in (False, True):
            d = root / f"seq-{seed}-{'a' if adjust else 'p'}"
            chunk = max(1, args.step // 2)
            base = _config(root / f"b{seed}.toml", 63, bots, seed, args.max_games, chunk)
            cand = _config(root / f"c{seed}.toml", 62, bots, seed, args.max_games, chunk)
            res, code, dt = _cli(
                [
                    "compare",
                    str(base),
                    str(cand),
                    "--sequential",
                    "--games",
                    str(args.step),
                    "--max-games",
                    str(args.max_games),
                    "--mu1",
                    str(args.mu1),
                    "--out",
                    str(d),
                    "--quiet",
                    "--json",
                ]
                + ([] if adjust else ["--no-analyse"])
            )
            cells.append(f"{res['games']:,} | {res['verdict']} | {dt:.0f}")
            if adjust:
                vr = res["score"].get("variance_reduction")
        print(f"| {seed} | {cells[0]} | {cells[1]} | {vr if vr is None else f'{vr:.2f}'} |", flush=True)


def calibrate(args: argparse.Namespace, root: Path) -> None:
    print(
        f"calibrate solver temperature on scandinavian, {args.games:,} games (pairs) per evaluation, seed 1, "
        f"same games with and without the adjustment:"
    )
    print(
        "| target | estimator | value [95 % CI] | sampling ± | response half-width at the best point | "
        "evaluations | s | games for sampling ±0.01 |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    targets = (
        ["--target-mean", "200", "--lo", "0", "--hi", "20"],
        ["--target-win-rate", "0.4", "--against", "solver", "--lo", "0", "--hi", "10"],
    )
    for tgt in targets:
        for adjust in (False, True):
            out = root / f"cal-{tgt[0][9:]}-{'a' if adjust else 'p'}"
            res, _, dt = _cli(
                [
                    "calibrate",
                    "--rules",
                    "scandinavian",
                    "--strategy",
                    "solver",
                    "--param",
                    "temperature",
                    *tgt,
                    "--games",
                    str(args.games),
                    "--workers",
                    str(args.workers),
                    "--out",
                    str(out),
                    "--json",
                ]
                + ([] if adjust else ["--no-analyse"])
            )
            ev = res["evaluations"]
            target = res["target"]["value"]
            best = min((e for e in ev if e["games"]), key=lambda e: abs(e["response"] - target))
            half = (best["ci"][1] - best["ci"][0]) / 2
            samp = res["sampling_error"]
            need = math.ceil(args.games * (samp / 0.01) ** 2)
            unit = " points" if tgt[0] == "--target-mean" else ""
            print(
                f"| {' '.join(tgt[:2])} | {res['estimator']} | {res['value']:.4f} [{res['value_ci'][0]:.4f}, "
                f"{res['value_ci'][1]:.4f}] | {samp:.4f} | {half:.4g}{unit} | {len(ev)} | {dt:.0f} | {need:,} |",
                flush=True,
            )


def kernel(args: argparse.Namespace, root: Path) -> None:
    """Per bot, one process: seat-games/s of the analysis kernel (Analyser.recording) and of the
    Python reference (Analyser.seat) on the same recorded games, warm (compiled, table loaded)."""
    from harness.game import registry
    from harness.decisions.analysis import Analyser
    from harness.records.codec import turns_of_recording
    from harness.game.loop import play
    from harness.game.rules import load_rules

    an = Analyser(load_rules("scandinavian"))
    print("| bot | seat-games | kernel seat-games/s | Python seat-games/s | speed-up |")
    print("|---|---:|---:|---:|---:|")
    for spec in args.bots.split(","):
        bot = registry.make(spec, an.rules)
        bot.prepare()
        res = play(an.rules, [bot], np.arange(args.games, dtype=np.int64), 1, record=True)
        an.recording(res.recording)  # warm
        t = time.perf_counter()
        an.recording(res.recording)
        fast = args.games / (time.perf_counter() - t)
        few = min(args.games, 500)
        t = time.perf_counter()
        for g in range(few):
            an.seat(turns_of_recording(res.recording, an.rules, g, 0), 0)
        slow = few / (time.perf_counter() - t)
        print(f"| {spec} | {args.games:,} | {fast:,.0f} | {slow:,.0f} | {fast / slow:.1f}x |", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="part", required=True)
    f = sub.add_parser("factors")
    f.add_argument("--games", type=int, default=20_000)
    f.add_argument("--bots", default=",".join(BOTS))
    f.add_argument("--chunk-size", type=int, default=5_000)
    c = sub.add_parser("compare")
    c.add_argument("--compare-bots", default="greedy,greedy")
    c.add_argument("--fixed-games", type=int, default=10_000)
    c.add_argument("--seeds", default="1,2,3,4,5")
    c.add_argument("--step", type=int, default=100)
    c.add_argument("--max-games", type=int, default=20_000)
    c.add_argument("--mu1", type=float, default=1.0)
    k = sub.add_parser("calibrate")
    k.add_argument("--games", type=int, default=2_000)
    n = sub.add_parser("kernel")
    n.add_argument("--games", type=int, default=5_000)
    n.add_argument("--bots", default=",".join(BOTS))
    for p in (f, c, k, n):
        p.add_argument("--workers", type=int, default=2)
        p.add_argument("--dir", default="results/bench-variance")
    args = ap.parse_args(argv)
    root = Path(args.dir) / args.part
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    print(
        f"# {platform.node()}, Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"load average {_load()}; {' '.join(sys.argv)}",
        flush=True,
    )
    {"factors": factors, "compare": compare, "calibrate": calibrate, "kernel": kernel}[args.part](args, root)
    print(f"# done {time.strftime('%H:%M')}, load average {_load()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
