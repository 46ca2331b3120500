"""Target play's evaluation split over Dask workers (issue 39's second goal): measured at N = 1, 2, 3
workers, then projected.

* ``run``: ``--bot`` (default ``solver:target=250``) on ``--rules`` (default scandinavian) evaluated
  cold (the rule set's solver tables linked into an empty cache, as ``bench_evaluate.py rows`` does)
  with its pass's blocks (:mod:`harness.exact.target_pass`) on a Dask LocalCluster of N
  single-threaded workers, for each N; the wall time of the evaluation (the cluster's start apart),
  every block's CPU seconds, each worker's set-up, the client's packing and summing per layer, the
  cells sent and the partials' cells; the figures' bytes must be equal at every N, and to the run in
  this process with ``--local``. JSON to ``--out``::

      python benchmarks/bench_target_split.py run --workers 1,2,3 --local --out results/target-split.json

* ``project``: replays each run's layers through a simulation of the schedule (the client cuts and
  packs a layer's blocks; the workers take them in block order, a worker's first block paying the
  set-up the N = 1 run measured; the client sums the partials in block order as they come; a
  layer's blocks wait for the layer before; the running workers and the client share ``--cores``
  cores) with each block's CPU seconds from the N = 1 run and a per-block overhead fitted to the
  N = 1 run alone; it checks the N = 2 and 3 runs against their measured walls, then projects 8,
  16 and 32 workers with a core each (the client on a core of its own), and states the critical
  path (every block of a layer at once)::

      python benchmarks/bench_target_split.py project --runs results/target-split.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench_dask  # noqa: E402  (this directory's: the uptime line)
from bench_evaluate import _cold_cache  # noqa: E402  (this directory's: a cache with the tables only)


def load() -> str:
    """The load averages now (bench_dask.py's uptime line, its figures only)."""
    return bench_dask.load().split("load average:")[1].strip()


def _figures(ev: Any) -> str:
    import hashlib

    import numpy as np

    h = hashlib.sha256()
    for x in (
        ev.column,
        ev.distribution,
        np.asarray(ev.box_mean),
        np.asarray(ev.box_scored),
        np.array([ev.mean, ev.std, ev.p_bonus, ev.extra_mean]),
    ):
        h.update(np.ascontiguousarray(x).tobytes())
    return h.hexdigest()[:16]


def run(args: argparse.Namespace) -> None:
    from harness.exact import solver as S
    from harness.exact import target_pass as T
    from harness.jobs.cluster import open_tasks
    from harness.exact.evaluate import evaluate, solitaire_bot
    from harness.game.rules import load_rules

    rules = load_rules(args.rules)
    solitaire_bot(rules, args.bot).target_play()  # the target table solved (or found) in the real cache
    tables = S.cache_path(rules).parent  # (before any run points the cache elsewhere)
    out: list[dict[str, Any]] = []
    if args.local:  # in a process of its own, as a user runs it
        res = subprocess.run(
            [sys.executable, __file__, "local", "--rules", args.rules, "--bot", args.bot],
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(json.loads(res.stdout))
        print(f"in one process: {out[0]['wall']:.1f} s wall, figures {out[0]['figures']}", flush=True)
    for n in [] if args.workers == "none" else args.workers.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            cache = _cold_cache(rules, Path(tmp) / "cache", tables)
            os.environ["YATZY_HARNESS_CACHE"] = str(cache)
            timing = T.Timing()
            at_start = load()
            if n == "local":
                t0 = time.perf_counter()
                ev = evaluate(rules, args.bot, timing=timing)
                wall, start = time.perf_counter() - t0, 0.0
            else:
                t_open = time.perf_counter()
                with open_tasks("dask", int(n)) as tasks:
                    t0 = time.perf_counter()
                    ev = evaluate(rules, args.bot, tasks=tasks, timing=timing)
                    wall, start = time.perf_counter() - t0, t0 - t_open
                    rss = tasks.client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        blocks = [c for layer in timing.blocks for c in layer]
        row = {
            "workers": n,
            "wall": wall,
            "cluster_start": start,
            "mean": ev.mean,
            "figures": _figures(ev),
            "blocks_cpu": sum(blocks),
            "n_blocks": len(blocks),
            "load_start": at_start,
            "load_end": load(),
            "block_rows": T.BLOCK_ROWS,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            **timing.to_json(),
        }
        if n == "local":
            print(json.dumps(row))
            return
        row["workers_peak_rss_mib"] = max(rss.values()) / 1024
        out.append(row)
        print(
            f"N={n}: {wall:.1f} s wall ({len(blocks)} blocks, {sum(blocks):.1f} CPU-s in them; the client packed "
            f"{sum(timing.pack):.1f} s and summed {sum(map(sum, timing.sums)):.1f} s; set-up "
            f"{sum(map(sum, timing.setup)):.1f} s); cells sent {timing.sent_cells:,}, partial cells "
            f"{timing.partial_cells:,} ({timing.partial_cells * 16 / 2**30:.2f} GiB as index + value); mean "
            f"{ev.mean:.6f}, figures {row['figures']}; peak RSS: client {row['peak_rss_mib']:,.0f} MiB, a worker "
            f"{row['workers_peak_rss_mib']:,.0f} MiB; load {at_start} -> {row['load_end']}",
            flush=True,
        )
    same = len({r["figures"] for r in out}) == 1
    print(f"the figures are {'the same bytes' if same else 'DIFFERENT'} in every run")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1))


# ---------------------------------------------------------------------------------------------
# the simulation


def simulate(
    run: dict[str, Any], workers: int, cores: float, overhead: float, warm: float, client_core: bool = False
) -> float:
    """The wall time of ``run``'s layers on ``workers`` workers sharing ``cores`` cores (with the
    client, unless ``client_core``: its own), each block costing its recorded CPU seconds plus
    ``overhead``, a worker's first block ``warm`` more."""
    total = 0.0
    started = [False] * workers
    for k, costs in enumerate(run["blocks"]):
        total += run["pack"][k]
        sums = run["sums"][k]
        queue = list(range(len(costs)))
        left: dict[int, float] = {}  # worker -> work left on its block
        block_of: dict[int, int] = {}
        done_at: dict[int, float] = {}  # block -> when its partial is in
        free = list(range(workers))
        client_left, summing, next_sum = 0.0, None, 0
        t = 0.0
        while next_sum < len(costs):
            while free and queue:
                w = free.pop(0)
                i = queue.pop(0)
                left[w] = costs[i] + overhead + (0.0 if started[w] else warm)
                started[w] = True
                block_of[w] = i
            if summing is None and next_sum in done_at:
                summing, client_left = next_sum, sums[next_sum]
            active = len(left) + (0 if client_core or summing is None else 1)
            rate = min(1.0, cores / active) if active else 1.0
            steps = [x / rate for x in left.values()]
            c_rate = 1.0 if client_core else rate
            if summing is not None:
                steps.append(client_left / c_rate)
            dt = min(steps)
            t += dt
            for w in list(left):
                left[w] -= dt * rate
                if left[w] <= 1e-12:
                    done_at[block_of[w]] = t
                    del left[w]
                    free.append(w)
            if summing is not None:
                client_left -= dt * c_rate
                if client_left <= 1e-12:
                    summing, next_sum = None, next_sum + 1
        total += t
    return total


def project(args: argparse.Namespace) -> None:
    runs = [r for r in json.loads(Path(args.runs).read_text()) if r["workers"] != "local"]
    one = next(r for r in runs if r["workers"] == "1")
    # a worker's first block: its set-up and the kernels' first call, measured in N = 1's first block
    warm = one["setup"][0][0] + one["blocks"][0][0]
    base = dict(one, blocks=[list(layer) for layer in one["blocks"]])
    base["blocks"][0][0] = 0.0
    n_blocks = one["n_blocks"]
    # the per-block overhead that makes the N = 1 replay its measured wall
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if simulate(base, 1, args.cores, mid, warm) < one["wall"]:
            lo = mid
        else:
            hi = mid
    overhead = lo
    print(
        f"blocks: {n_blocks}, {one['blocks_cpu']:.1f} CPU-s in them (N = 1); a worker's first block: {warm:.2f} s "
        f"more; the client's packing {sum(one['pack']):.1f} s and summing {sum(map(sum, one['sums'])):.1f} s; per-block "
        f"overhead fitted to N = 1: {1000 * overhead:.1f} ms"
    )
    print("\n| workers | measured wall | simulated | error | load average start -> end |")
    print("|---:|---:|---:|---:|---|")
    for r in runs:
        n = int(r["workers"])
        sim = simulate(base, n, args.cores, overhead, warm)
        print(
            f"| {n} | {r['wall']:.1f} s | {sim:.1f} s | {100 * (sim - r['wall']) / r['wall']:+.1f} % | "
            f"{r['load_start']} -> {r['load_end']} |"
        )
    print(f"\nprojected, a core per worker and one for the client ({args.contention:.2f} x every block's CPU):")
    scaled = dict(base, blocks=[[c * args.contention for c in layer] for layer in base["blocks"]])
    print("| workers | projected wall |")
    print("|---:|---:|")
    for n in (8, 16, 32):
        print(f"| {n} | {simulate(scaled, n, n, overhead, warm, client_core=True):.1f} s |")
    # every block of a layer at once: the layers' longest block, then the sums behind it
    crit = (
        sum(
            run_pack + max(layer) * args.contention + overhead + sum(s)
            for run_pack, layer, s in zip(base["pack"], base["blocks"], base["sums"])
        )
        + warm
    )
    print(
        f"\ncritical path (every block of a layer on its own worker, the sums in order): {crit:.1f} s; of it the "
        f"client's packing and summing {sum(base['pack']) + sum(map(sum, base['sums'])):.1f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--rules", default="scandinavian")
    r.add_argument("--bot", default="solver:target=250")
    r.add_argument("--workers", default="1,2,3")
    r.add_argument("--local", action="store_true", help="also the run in one process (on every core), first")
    r.add_argument("--out", default=None)
    lo = sub.add_parser("local", help="(for run --local) one run in this process, its figures as JSON")
    lo.add_argument("--rules", default="scandinavian")
    lo.add_argument("--bot", default="solver:target=250")
    p = sub.add_parser("project")
    p.add_argument("--runs", required=True)
    p.add_argument("--cores", type=float, default=2.0, help="the cores of the machine the runs were measured on")
    p.add_argument(
        "--contention",
        type=float,
        default=1.0,
        help="factor on every block's CPU in the projection (memory bandwidth shared by more cores)",
    )
    args = ap.parse_args()
    if args.cmd == "local":
        args.local, args.workers, args.out = False, "local", None
    {"run": run, "local": run, "project": project}[args.cmd](args)


if __name__ == "__main__":
    main()
