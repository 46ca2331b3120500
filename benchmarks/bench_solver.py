"""Exact-solver benchmark: solve time cold (compilation included) and warm, cache load time, and
the exact-figures forward pass, for each rule set; optionally a maxi estimate from a partial solve.

Run from the repository root::

    python benchmarks/bench_solver.py                      # the 5-dice built-in rule sets
    python benchmarks/bench_solver.py --rules scandinavian --threads 1
    python benchmarks/bench_solver.py --maxi-estimate      # per-layer cost of maxi from sampled items

"Cold" runs a fresh Python process with an empty numba cache (``NUMBA_CACHE_DIR`` in a temporary
directory) and an empty solver cache, and times import + compile + solve, as a first user would see
it. "Warm" solves again in the same process (compiled, table not cached). "Keep policy" computes
the whole T=0 keep policy (compiled) and writes it to the cache. "Load" reads the table (and the
policy) back from the disk cache in a fresh process. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from harness.game.rules import load_rules
from harness.exact import solver
name, threads, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rules = load_rules(name)
out = {}
if mode == "cold":
    t = time.perf_counter()
    solver.solve(rules)  # compiles, solves, writes the cache
    out["cold"] = time.perf_counter() - t0
    out["cold_solve_call"] = time.perf_counter() - t
    solver.clear_memo()
    t = time.perf_counter()
    v = solver.solve_values(rules, threads=threads)
    out["warm"] = time.perf_counter() - t
    out["expected"] = float(v[0]) + solver.build_plan(rules).bonus0
    out["states"] = solver.build_plan(rules).n_states
    t = time.perf_counter()
    fig = solver.exact_distribution(rules, use_cache=False)
    out["figures_first"] = time.perf_counter() - t
    t = time.perf_counter()
    fig = solver.exact_distribution(rules, use_cache=False)
    out["figures"] = time.perf_counter() - t
    out["std"] = fig.std
    sol = solver.solve(rules)
    t = time.perf_counter()
    codes = solver.policy_table(sol)  # first call compiles; the second is timed
    solver._POLICY.clear()
    sol.path.with_suffix(".policy.bin").unlink()
    t = time.perf_counter()
    codes = solver.policy_table(sol)  # computes and writes the cache
    out["policy"] = time.perf_counter() - t
    out["policy_mib"] = codes.nbytes / 2**20
else:
    t = time.perf_counter()
    sol = solver.solve(rules)
    out["load"] = time.perf_counter() - t
    out["cached"] = sol.cached
    t = time.perf_counter()
    out["policy_cached"] = solver.policy_table(sol, compute=False) is not None
    out["policy_load"] = time.perf_counter() - t
print(json.dumps(out))
"""


def run_child(name: str, threads: int, mode: str, env: dict[str, str]) -> dict:
    res = subprocess.run(
        [sys.executable, "-c", _CHILD, name, str(threads), mode],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench(names: list[str], threads: int) -> None:
    print(
        "| rule set | states | expected score | cold (import+compile+solve) | warm solve | "
        "exact figures | cache load | keep policy (size) | policy load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        with tempfile.TemporaryDirectory() as numba_dir, tempfile.TemporaryDirectory() as cache_dir:
            env = {**os.environ, "NUMBA_CACHE_DIR": numba_dir, "YATZY_HARNESS_CACHE": cache_dir}
            cold = run_child(name, threads, "cold", env)
            load = run_child(name, threads, "load", env)
        assert load["cached"] and load["policy_cached"]
        print(
            f"| {name} | {cold['states']:,} | {cold['expected']:.6f} | {cold['cold']:.1f} s | "
            f"{cold['warm']:.2f} s | {cold['figures']:.1f} s | {load['load']:.3f} s | "
            f"{cold['policy']:.1f} s ({cold['policy_mib']:.0f} MiB) | {load['policy_load']:.2f} s |",
            flush=True,
        )


def maxi_estimate(samples: int) -> None:
    """Solve a random sample of the items of each maxi layer (on random values: the cost does not
    depend on them) and extrapolate the full solve."""
    import numpy as np

    from harness.exact import solver
    from harness.exact.kernels import solver as K
    from harness.game.rules import load_rules
    from harness.game.scoring import context

    rules = load_rules("maxi")
    plan = solver.build_plan(rules)
    ctx = context(rules)
    V = np.random.default_rng(0).random(plan.n_states) * 100
    ro = V.view()
    ro.setflags(write=False)
    K.solve_items(ctx, plan.layout, plan.dice, ro, V, plan.item_mask, plan.item_flag, 0, 1, plan.full_mask)
    rng = np.random.default_rng(1)
    total = 0.0
    print(f"maxi: {plan.n_states:,} states, {len(plan.item_mask):,} items, values {plan.n_states * 8 / 2**20:.0f} MiB")
    print("| layer | items | states | CPU per item | layer CPU (extrapolated) |")
    print("|---:|---:|---:|---:|---:|")
    for k in range(rules.n_boxes + 1):
        lo, hi = int(plan.layer_items[k]), int(plan.layer_items[k + 1])
        pick = np.sort(rng.choice(np.arange(lo, hi), min(hi - lo, samples), replace=False))
        t = time.process_time()
        K.solve_items(
            ctx, plan.layout, plan.dice, ro, V, plan.item_mask[pick], plan.item_flag[pick], 0, len(pick), plan.full_mask
        )
        per = (time.process_time() - t) / len(pick)
        total += per * (hi - lo)
        states = int(plan.layer_states[k + 1] - plan.layer_states[k])
        print(f"| {k} | {hi - lo:,} | {states:,} | {per * 1e3:.2f} ms | {per * (hi - lo):.0f} s |", flush=True)
    print(f"\nestimated full solve: {total:.0f} s of CPU ({total / 60:.1f} min on one core)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", nargs="*", default=["standard", "yahtzee", "scandinavian", "forced", "generala"])
    ap.add_argument("--threads", type=int, default=0, help="solver threads (0 = every core)")
    ap.add_argument("--maxi-estimate", action="store_true", help="estimate maxi from a partial solve")
    ap.add_argument("--samples", type=int, default=40, help="items sampled per maxi layer")
    args = ap.parse_args()
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
        f"load average {os.getloadavg()[0]:.2f}\n"
    )
    if args.maxi_estimate:
        maxi_estimate(args.samples)
    else:
        bench(args.rules, args.threads or (os.cpu_count() or 1))


if __name__ == "__main__":
    main()
