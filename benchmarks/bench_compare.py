"""The site's rule-change check at full size: scandinavian upper_bonus_threshold 63 -> 62, solver bots.

1. Exact: ``solve`` both rule sets; the expected difference is the difference of the two exact
   expected scores.
2. Fixed sample: play ``--games`` solver-vs-solver games per side on the same seed (common random
   numbers) and ``compare`` them; the measured paired difference must have the exact figure inside
   its 99.9 % interval.
3. Sequential: ``compare --sequential`` from scratch with the default SPRT (H0: 0, H1: +/-1 point,
   alpha = beta = 0.05), playing ``--step`` games at a time: how many games it needs to decide.

    python benchmarks/bench_compare.py --games 200000 > /tmp/bench_compare.txt 2>&1 &
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.game.rules import load_rules  # noqa: E402
from harness.exact.solver import solve  # noqa: E402


def _cli(args: list[str]) -> tuple[dict, int, float]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 1, 2) or not p.stdout.strip().startswith("{"):
        raise RuntimeError(f"{args} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout), p.returncode, dt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200_000)
    ap.add_argument("--step", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dir", default="results/bench-compare")
    args = ap.parse_args(argv)
    root = Path(args.dir)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    print(f"# {platform.node()}, Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}", flush=True)

    e63 = solve(load_rules("scandinavian")).expected_score
    e62 = solve(load_rules("scandinavian", ["upper_bonus_threshold=62"])).expected_score
    exact = e62 - e63
    print(f"exact expected score: threshold 63 {e63:.6f}, 62 {e62:.6f}, difference {exact:+.6f}", flush=True)

    for name, t in (("base", 63), ("candidate", 62)):
        (root / f"{name}.toml").write_text(
            f'rules = "scandinavian"\nseats = ["solver", "solver"]\ngames = {args.games}\nseed = 1\n'
            f"chunk_size = {args.step}\nworkers = {args.workers}\n[settings]\nupper_bonus_threshold = {t}\n"
        )
    d, code, dt = _cli(
        [
            "compare",
            str(root / "base.toml"),
            str(root / "candidate.toml"),
            "--confidence",
            "0.999",
            "--out",
            str(root / "fixed"),
            "--quiet",
            "--json",
        ]
    )
    lo, hi = d["score"]["diff_ci"]
    print(
        f"fixed sample: {d['games']:,} games per side x 2 seats in {dt:.0f} s (play + compare): "
        f"diff {d['score']['diff']:+.4f} [{lo:+.4f}, {hi:+.4f}] (99.9 % CI), exact {exact:+.4f} "
        f"{'inside' if lo < exact < hi else 'OUTSIDE'}; verdict {d['verdict']} (exit {code}); "
        f"per-game sd of the paired difference {d['score']['diff_std']:.2f} points",
        flush=True,
    )
    t0 = time.perf_counter()
    d, code, _ = _cli(["compare", str(root / "fixed" / "base"), str(root / "fixed" / "candidate"), "--json"])
    print(
        f"compare alone on the two runs: {time.perf_counter() - t0:.1f} s (a fresh process: start-up and imports included)",
        flush=True,
    )

    d, code, dt = _cli(
        [
            "compare",
            str(root / "base.toml"),
            str(root / "candidate.toml"),
            "--sequential",
            "--games",
            str(args.step),
            "--max-games",
            str(args.games),
            "--out",
            str(root / "seq"),
            "--quiet",
            "--json",
        ]
    )
    looks = d["sequential"]["looks"]
    print(
        f"sequential (H0 0, H1 +/-1 point, alpha=beta=0.05, step {args.step:,}): verdict {d['verdict']} "
        f"(exit {code}) after {d['games']:,} games per side, {len(looks)} look(s), {dt:.0f} s; "
        f"diff {d['score']['diff']:+.4f} [{d['score']['diff_ci'][0]:+.4f}, {d['score']['diff_ci'][1]:+.4f}]",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
